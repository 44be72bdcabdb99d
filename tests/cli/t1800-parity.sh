#!/bin/sh
# t1800-parity.sh — the commands for what the library could do and the CLI could not (issue #14):
# session update, message delete and edit, files --limit and files check, handover (the thread
# summary), search --since/--until/--metadata, namespace forget, the session list limit, and
# unknown options refused by name.
. "$TESTS_DIR/cli/lib.sh"

NOW=1800000000000 # a fixed clock (ms)
MNEMO_TEST_NOW_MS=$NOW
export MNEMO_TEST_NOW_MS

# --- session update ---------------------------------------------------------------------------------
ok mn session new --namespace acme --tool chat --json
S=$(jget "$OUT" 'j["id"]')
ok mn session update "$S" --title "Build failure" --metadata '{"ticket":42}' --json
eq "$(jget "$OUT" '[j["title"], j["metadata"]]')" '["Build failure", {"ticket": 42}]' "session update sets title and metadata"
fails 2 "give --title, --metadata or both" mn session update "$S"
fails 1 "metadata" mn session update "$S" --metadata '[1]'
fails 2 "unknown option --titel" mn session update "$S" --titel x

# --- messages: edit and delete ------------------------------------------------------------------------
ok mn add "$S" user "the zebra password is hunter2" --tool chat --files '["src/a.c"]' --json
M1=$(jget "$OUT" 'j["id"]')
T1=$(jget "$OUT" 'j["tokens"]')
ok mn add "$S" assistant "noted" --tool debug --files '["src/b.c"]' --metadata '{"env":"prod"}'
M2=$OUT
MNEMO_TEST_NOW_MS=$((NOW + 60000))
ok mn add "$S" user "deploy it now" --tool codereview --files '["src/c.c"]' --metadata '{"env":"dev"}'
M3=$OUT
ok mn search hunter2 --json
eq "$(jget "$OUT" 'len(j)')" 1 "the password is found before the edit"
ok mn message edit "$S" --message-id "$M1" "the zebra secret was redacted by its owner, which took some more words" \
    --metadata '{"edited":true}' --json
eq "$(jget "$OUT" '[j["id"], j["seq"], j["content"][:24], j["metadata"], j["tokens"] > '"$T1"']')" \
    "[$M1, 1, \"the zebra secret was red\", {\"edited\": true}, true]" "message edit: same id and seq, new text, recounted"
ok mn search hunter2 --json
eq "$OUT" "[]" "the old text left the search index"
ok mn search redacted --json
eq "$(jget "$OUT" 'len(j)')" 1 "the new text is found"
ok mn events "$S" --json
check "a message_edited event is written" sh -c 'printf "%s" "$1" | grep -q message_edited' - "$OUT"
printf 'from standard input' > edit.txt
ok sh -c '"$0" --db "$1" message edit "$2" "$3" - < edit.txt' "$MNEMO" "$DB" "$S" "$M2"
ok mn history "$S" --json
eq "$(jget "$OUT" '[j[1]["content"], j[1]["metadata"]]')" '["from standard input", {"env": "prod"}]' \
    "edit from stdin; metadata kept when not given"
ok mn session show "$S" --json
SESSION_TOKENS=$(jget "$OUT" 'j["token_count"]')
ok mn history "$S" --json
eq "$(jget "$OUT" 'sum(m["tokens"] for m in j)')" "$SESSION_TOKENS" "the session's token count follows the edits"
fails 2 "'x' is not a position" mn message edit "$S" x "text"
fails 1 "has no message #999999" mn message edit "$S" 999999 "text"
fails 1 "not found" mn message edit "$S" --message-id 999999 "text"
fails 2 "usage: mnemo message edit" mn message edit "$S" "$M1"

# --- search filters ------------------------------------------------------------------------------------
ok mn search "deploy OR noted OR standard" --metadata '{"env":"dev"}' --json
eq "$(jget "$OUT" '[h["message"]["content"] for h in j]')" '["deploy it now"]' "search --metadata"
ok mn search "deploy OR standard" --since $((NOW + 30000)) --json
eq "$(jget "$OUT" '[h["message"]["content"] for h in j]')" '["deploy it now"]' "search --since (ms)"
ok mn search "deploy OR standard" --until $((NOW + 30000)) --json
eq "$(jget "$OUT" '[h["message"]["content"] for h in j]')" '["from standard input"]' "search --until (ms)"
ok mn search "deploy OR standard" --since 2027-01-15 --json
eq "$(jget "$OUT" 'len(j)')" 2 "search --since as an ISO date (2027-01-15 is before the fixed clock)"
ok mn search "deploy OR standard" --until 2027-01-15T00:00:00Z --json
eq "$OUT" "[]" "search --until as an ISO date"
fails 2 "--since: 'yesterday' is not a time" mn search deploy --since yesterday
# a day the month does not have was carried over (2026-02-31 stored as March 3rd); numbers are
# written plainly (strtoll took ' +5')
fails 2 "--since: '2026-02-31' is not a time" mn search deploy --since 2026-02-31
fails 2 "--until: '2025-02-29' is not a time" mn search deploy --until 2025-02-29
ok mn search deploy --since 2024-02-29 --json
fails 2 "--ttl-seconds: ' \+5' is not a whole number" mn session new --ttl-seconds " +5"
fails 2 "--since: '\+5' is not a time" mn search deploy --since +5
fails 2 "--min-similarity: '0x1p-2' is not a number" mn search deploy --min-similarity 0x1p-2
fails 1 "filter.metadata" mn search deploy --metadata '{"a":[1]}'
fails 1 "since < until" mn search deploy --since $((NOW + 1)) --until $NOW
fails 2 "min-similarity: .2. is not a number from -1 to 1" mn search deploy --min-similarity 2
fails 2 "unknown option --meta" mn search deploy --meta '{}'

# --- files: limit and check ------------------------------------------------------------------------------
ok mn files "$S" --limit 2 --json
eq "$OUT" '["src/c.c","src/b.c"]' "files --limit: the newest N"
ok mn files "$S" --json
eq "$OUT" '["src/c.c","src/b.c","src/a.c"]' "files: all"
fails 2 "limit" mn files "$S" --limit 0
printf 'int main(void) { return 0; }\n' > main.c
ok mn files check "$S" main.c
eq "$OUT" include "files check: the first time, include"
ok mn files check "$S" main.c --json
eq "$OUT" '{"include":false}' "files check: the same content again, skip"
ok sh -c '"$0" --db "$1" files check "$2" other.c - < main.c' "$MNEMO" "$DB" "$S"
eq "$OUT" include "files check: the same content under another path is included"
fails 1 "cannot read missing.c" mn files check "$S" missing.c

# --- handover ----------------------------------------------------------------------------------------------
ok mn handover "$S" --json
eq "$(jget "$OUT" '[j["thread_id"] == "'"$S"'", j["namespace"], j["title"], j["tool"], j["started"], j["turns"], j["messages"], j["tools_used"], j["files"]]')" \
    "[true, \"acme\", \"Build failure\", \"chat\", $NOW, 2, 3, [\"chat\", \"debug\", \"codereview\"], [\"src/c.c\", \"src/b.c\", \"src/a.c\"]]" \
    "handover --json: id, start, tool, turns, tools used, files"
ok mn handover "$S" --files 1
eq "$OUT" "## Conversation Context

**Thread ID:** $S
**Started:** 2027-01-15T08:00:00.000Z
**Tool:** chat
**Turns:** 2
**Tools Used:** chat, debug, codereview
**Files:** src/c.c" "handover prints the Markdown block"
fails 1 "not found" mn handover 0190d7a4-0000-7000-8000-000000000000

# --- message delete ---------------------------------------------------------------------------------------
ok mn history "$S" --json
M3_ID=$(jget "$OUT" 'j[2]["id"]')
ok mn message delete "$S" "$M3" --json
eq "$OUT" "{\"deleted\":$M3_ID}" "message delete (by the position add printed)"
ok mn history "$S" --json
eq "$(jget "$OUT" 'len(j)')" 2 "two messages left"
fails 1 "has no message $M3" mn message delete "$S" "$M3"
fails 1 "not found" mn message delete "$S" --message-id "$M3_ID"

# --- namespace forget ----------------------------------------------------------------------------------------
ok mn session new --namespace other
O=$OUT
ok mn add "$O" user "other zebra"
ok mn memory add "acme likes tea" --namespace acme
fails 2 "add --yes" mn namespace forget acme
ok mn session show "$S"
pass "nothing was erased without --yes"
ok mn namespace forget acme --yes --json
eq "$OUT" '{"sessions":1,"memories":1}' "namespace forget erases the namespace's sessions and memories"
fails 1 "not found" mn session show "$S"
ok mn search zebra --json
eq "$(jget "$OUT" '[h["namespace"] for h in j]')" '["other"]' "only the other namespace is left in the index"
ok mn memory list --namespace acme --all --json
eq "$OUT" "[]" "no memory of acme is left"
ok mn namespace forget acme --yes
eq "$OUT" "erased 0 sessions and 0 memories of acme" "forgetting again finds nothing"
fails 1 "namespace" mn namespace forget 'bad ns!' --yes
fails 2 "needs a subcommand: forget" mn namespace

# --- the session list limit is the library's ---------------------------------------------------------------
ok mn session list --limit 10000
fails 2 "limit" mn session list --limit 10001
ok mn session list --help
check "the help states the limit" sh -c 'printf "%s" "$1" | grep -q "at most 10000"' - "$OUT"

finish
