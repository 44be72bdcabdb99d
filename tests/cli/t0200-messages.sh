#!/bin/sh
# t0200-messages.sh — `mnemo add` (every role and option, content from stdin), `mnemo history`
# (human and --json, --limit, --after), idempotency keys, and the message a title came from (which
# alone clears or re-derives it on delete or edit; after a fork, an import, an upgrade).
. "$TESTS_DIR/cli/lib.sh"

ok mn session new --title messages
S=$OUT

CALLS='[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lisbon\"}"}},{"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{}"}}]'

# --- add: one message per role ----------------------------------------------------------------
ok mn add "$S" system "You are a helpful assistant."
eq "$OUT" "#1" "add prints the message's position in the session (#N, as history shows it)"
ok mn add "$S" user "What's the weather in Lisbon, and the time?" --name alice --model human --tool claude-code \
    --files '["src/a.c","docs/b.md"]' --metadata '{"lang":"en","n":[1,2]}' --pin
eq "$OUT" "#2" "positions increase"
ok mn add "$S" assistant --tool-calls "$CALLS" --model gpt-4o --json
J3=$OUT
eq "$(jget "$J3" '[j["role"], j["content"], j["seq"], j["model"]]')" '["assistant", null, 3, "gpt-4o"]' \
    "assistant message with tool calls and no content"
eq "$(jget "$J3" 'j["tool_calls"]')" "$(jget "$CALLS" 'j')" "tool_calls come back as the same JSON array"
ok mn add "$S" tool '{"high_c":17}' --tool-call-id call_a --name get_weather
ok mn add "$S" tool "12:00" --tool-call-id call_b --name get_time
ok mn add "$S" assistant "It is 17 °C and noon in Lisbon." --model gpt-4o
M6=$OUT

# --- history --json ---------------------------------------------------------------------------
ok mn history "$S" --json
H=$OUT
check "history --json is a JSON array" python3 -c 'import json,sys; assert isinstance(json.loads(sys.argv[1]), list)' "$H"
eq "$(jget "$H" 'len(j)')" 6 "history has 6 messages"
for f in id session_id seq role content tool_calls tool_call_id name tokens created_at metadata; do
    check "history --json: every message has field $f" \
        python3 -c 'import json,sys; assert all(sys.argv[2] in m for m in json.loads(sys.argv[1]))' "$H" "$f"
done
eq "$(jget "$H" '[m["seq"] for m in j]')" "[1, 2, 3, 4, 5, 6]" "seq is 1..6, oldest to newest"
eq "$(jget "$H" '[m["role"] for m in j]')" '["system", "user", "assistant", "tool", "tool", "assistant"]' "roles in order"
eq "$(jget "$H" 'sorted(set(m["session_id"] for m in j))')" "[\"$S\"]" "session_id on every message"
eq "$(jget "$H" '[m["id"] for m in j] == sorted(m["id"] for m in j)')" true "ids increase with seq"
eq "#$(jget "$H" 'j[5]["seq"]')" "$M6" "add printed the position history shows of the last message"
eq "$(jget "$H" '[type(m["tool_calls"]).__name__ for m in j]')" \
    '["NoneType", "NoneType", "list", "NoneType", "NoneType", "NoneType"]' "tool_calls: an array on the calling message, null elsewhere"
eq "$(jget "$H" '[c["id"] for c in j[2]["tool_calls"]]')" '["call_a", "call_b"]' "tool call ids kept"
eq "$(jget "$H" 'j[2]["tool_calls"][0]["function"]["arguments"]')" '{"city":"Lisbon"}' "tool call arguments kept verbatim"
eq "$(jget "$H" '[m["tool_call_id"] for m in j]')" '[null, null, null, "call_a", "call_b", null]' "tool_call_id"
eq "$(jget "$H" '[m["name"] for m in j]')" '[null, "alice", null, "get_weather", "get_time", null]' "name"
eq "$(jget "$H" 'j[1]["metadata"]')" '{"lang": "en", "n": [1, 2]}' "--metadata kept as an object"
eq "$(jget "$H" '[m["metadata"] for m in j if m["seq"] != 2]')" '[{}, {}, {}, {}, {}]' "metadata defaults to {}"
eq "$(jget "$H" 'j[1]["files"]')" '["src/a.c", "docs/b.md"]' "--files kept as an array"
eq "$(jget "$H" '[j[1]["model"], j[2]["model"], j[5]["model"]]')" '["human", "gpt-4o", "gpt-4o"]' "--model"
eq "$(jget "$H" 'j[1]["tool_name"]')" claude-code "--tool stored as tool_name"
eq "$(jget "$H" '[m["pinned"] for m in j]')" '[false, true, false, false, false, false]' "--pin"
eq "$(jget "$H" 'all(isinstance(m["tokens"], int) and m["tokens"] > 0 for m in j)')" true "every message has a token count"
eq "$(jget "$H" 'all(isinstance(m["created_at"], int) and m["created_at"] > 1600000000000 for m in j)')" true "created_at in ms"
eq "$(jget "$H" '[m["created_at"] for m in j] == sorted(m["created_at"] for m in j)')" true "created_at non-decreasing"
eq "$(jget "$H" 'j[0]["content"]')" "You are a helpful assistant." "content kept"
eq "$(jget "$H" 'j[5]["content"]')" "It is 17 °C and noon in Lisbon." "UTF-8 content kept"
ok mn session show "$S" --json
eq "$(jget "$OUT" 'j["message_count"]')" 6 "session message_count"
eq "$(jget "$OUT" 'j["token_count"]')" "$(jget "$H" 'sum(m["tokens"] for m in j)')" "session token_count = sum of message tokens"

# --- history (human) --------------------------------------------------------------------------
ok mn history "$S"
HH=$OUT
for want in '^#1 .*system' '^#2 .*user \(alice\) via claude-code, [0-9]+ tokens, pinned' '^#3 .*assistant' \
    'tool calls: .*call_a' '^#4 .*tool \(get_weather\) \[result of call_a\]' '^\{"high_c":17\}$' \
    '^It is 17 °C and noon in Lisbon\.$' '^#6 '; do
    check "history (human) has /$want/" sh -c 'printf "%s\n" "$1" | grep -Eq -- "$2"' - "$HH" "$want"
done

# --- --limit and --after ----------------------------------------------------------------------
ok mn history "$S" --limit 2 --json
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[5, 6]" "--limit 2: the newest two, oldest first"
ok mn history "$S" --limit 1 --json
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[6]" "--limit 1: the newest"
ok mn history "$S" --limit 100 --json
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[1, 2, 3, 4, 5, 6]" "--limit larger than the history"
ok mn history "$S" --after 4 --json
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[5, 6]" "--after 4"
ok mn history "$S" --after 0 --json
eq "$(jget "$OUT" 'len(j)')" 6 "--after 0: everything"
ok mn history "$S" --after 6 --json
eq "$OUT" "[]" "--after the last seq: empty array"
ok mn history "$S" --after 1 --limit 2 --json
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[2, 3]" "--after 1 --limit 2: the first two after seq 1 (a page)"
ok mn history "$S" --limit 2
check "human history --limit 2 shows #5 and #6 only" sh -c \
    'printf "%s\n" "$1" | grep -q "^#5 " && printf "%s\n" "$1" | grep -q "^#6 " && ! printf "%s\n" "$1" | grep -q "^#4 "' - "$OUT"
fails 2 "limit" mn history "$S" --limit 0
fails 2 "limit" mn history "$S" --limit abc
fails 2 "after" mn history "$S" --after -1
fails 1 "not found" mn history 0190abcd-0000-7000-8000-0000000000ff
ok mn session new
ok mn history "$OUT" --json
eq "$OUT" "[]" "history of an empty session is []"

# --- content from standard input ---------------------------------------------------------------
ok mn session new
SI=$OUT
printf 'line one\nline "two" with \\ backslash\ttab\nüñïçødé ✓\n' >"$T/in.txt"
ok mn add "$SI" user - <"$T/in.txt"
ok mn history "$SI" --json
eq "$(jget "$OUT" 'j[0]["content"]')" "$(cat "$T/in.txt")" "content from - equals the input"
check "content from - is byte-exact (trailing newline kept)" python3 -c \
    'import json,sys; assert json.loads(sys.argv[1])[0]["content"].encode() == open(sys.argv[2], "rb").read()' "$OUT" "$T/in.txt"
python3 -c 'import sys; sys.stdout.write("x" * 200000)' >"$T/big.txt"
ok mn add "$SI" assistant - <"$T/big.txt"
ok mn history "$SI" --limit 1 --json
eq "$(jget "$OUT" 'len(j[0]["content"])')" 200000 "a 200 kB content from stdin is stored whole"
ok mn add "$SI" user -- "--looks-like-an-option"
ok mn history "$SI" --limit 1 --json
eq "$(jget "$OUT" 'j[0]["content"]')" "--looks-like-an-option" "content after -- is taken literally"

# --- idempotency keys -------------------------------------------------------------------------
ok mn session new
SK=$OUT
ok mn add "$SK" user "retry me" --key k-1
eq "$OUT" "#1" "add --key prints the position"
ok mn add "$SK" user "retry me" --key k-1
eq "$OUT" "#1" "the same --key twice prints the same message's position"
ok mn add "$SK" user "retry me" --key k-1 --json
K1=$(jget "$OUT" 'j["id"]')
eq "$(jget "$OUT" '[j["idempotency_key"], j["seq"]]')" '["k-1", 1]' "the retry returns the stored message"
ok mn history "$SK" --json
eq "$(jget "$OUT" 'len(j)')" 1 "history has one copy"
eq "$(jget "$OUT" 'j[0]["idempotency_key"]')" k-1 "idempotency_key shown in history"
ok mn add "$SK" user "another" --key k-2
eq "$OUT" "#2" "a different key stores a new message"
ok mn add "$SK" user "no key"
ok mn add "$SK" user "no key"
ok mn history "$SK" --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" '["retry me", "another", "no key", "no key"]' \
    "without --key every add stores a message"
ok mn session show "$SK" --json
eq "$(jget "$OUT" 'j["message_count"]')" 4 "message_count not inflated by the retry"
ok mn session new
SK2=$OUT
ok mn add "$SK2" user "retry me" --key k-1 --json
check "the same key in another session is another message" test "$(jget "$OUT" 'j["id"]')" != "$K1"
ok mn history "$SK2" --json
eq "$(jget "$OUT" 'len(j)')" 1 "the other session has its own copy"
fails 1 "idempotency|key" mn add "$SK" user "x" --key ""
LONGKEY=$(python3 -c 'print("k" * 201)')
# a key over 200 bytes is refused with a message naming the field and the limit
fails 1 "idempotency_key.*200" mn add "$SK" user "x" --key "$LONGKEY"
LONGNAME=$(python3 -c 'print("n" * 257)')
fails 1 "name.*256" mn add "$SK" user "x" --name "$LONGNAME"
ok mn history "$SK" --json
eq "$(jget "$OUT" 'len(j)')" 4 "refused keys store nothing"

# --- role rules -------------------------------------------------------------------------------
fails 2 "role|system|user|assistant|tool" mn add "$S" robot "hi"
fails 2 "role|user" mn add "$S" USER "hi"
fails 1 "tool_call_id" mn add "$S" tool "result without an id"
fails 1 "content" mn add "$S" user
fails 1 "content" mn add "$S" assistant
fails 1 "tool_calls" mn add "$S" user "x" --tool-calls "$CALLS"
fails 1 "tool_calls" mn add "$S" assistant "x" --tool-calls '[]'
fails 1 "files" mn add "$S" user "x" --files '{"a":1}'
fails 1 "files" mn add "$S" user "x" --files '[1]'
fails 1 "metadata" mn add "$S" user "x" --metadata '"str"'
fails 2 "usage" mn add "$S"
fails 2 "usage|too many" mn add "$S" user a b
ok mn history "$S" --json
eq "$(jget "$OUT" 'len(j)')" 6 "refused adds stored nothing"

# --- the API's names (tests/cli/t0110 checks every one): the older spellings still work ----------
ok mn session new --json
S2=$(jget "$OUT" 'j["id"]')
ok mn add "$S2" user "first" --tool-name chat --pinned --idempotency-key k1 --json
eq "$(jget "$OUT" '[j["tool_name"], j["pinned"]]')" '["chat", true]' "add --tool-name --pinned"
ok mn add "$S2" user "first" --tool chat --pin --key k1 --json
eq "$(jget "$OUT" 'j["seq"]')" 1 "the older spellings --tool --pin --key: the same key stores nothing new"
ok mn session new --json
S3=$(jget "$OUT" 'j["id"]')
ok mn add "$S3" user "second" --tool other --pin --key k2 --json
eq "$(jget "$OUT" '[j["tool_name"], j["pinned"], j["idempotency_key"]]')" '["other", true, "k2"]' \
    "--tool --pin --key set the fields"
ok mn add "$S3" user "third"
ok mn history "$S3" --limit=5 --limit=1 --json
eq "$(jget "$OUT" 'len(j)')" 1 "one option given twice in one spelling: the last wins"
fails 2 "--pin and --pinned are one option" mn add "$S2" user x --pin --pinned
fails 2 "--idempotency-key and --key are one option" mn add "$S2" user x --idempotency-key a --key=b

# --- add --messages: a batch, one transaction, checked as the API checks it ----------------------------
printf '[{"role":"user","content":"two"},{"role":"assistant","content":"three","pinned":true},{"role":"user","content":"four","metadata":{"n":4}}]' >batch.json
ok mn add "$S2" --messages batch.json
eq "$OUT" "$(printf '#2\n#3\n#4')" "add --messages prints one position a line"
ok mn history "$S2" --json
eq "$(jget "$OUT" '[(m["seq"], m["content"], m["pinned"]) for m in j]')" \
    '[[1, "first", true], [2, "two", false], [3, "three", true], [4, "four", false]]' "the batch is stored in order"
fails 1 "not valid UTF-8" mn add "$(printf 'x\377')" --messages batch.json
ok sh -c '"$0" --db "$1" add "$2" --messages - --json <"$3"' "$MNEMO" "$DB" "$S2" batch.json
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[5, 6, 7]" "--messages - reads standard input; --json prints the array"
printf '[{"role":"user","content":"five"},{"role":"user","content":"six","pined":true}]' >bad.json
fails 1 'messages\[1\]\.pined' mn add "$S2" --messages bad.json
printf '[{"role":"user","content":"five"},{"rol":"user","content":"six"}]' >bad.json
fails 1 'messages\[1\]' mn add "$S2" --messages bad.json
printf '[]' >empty.json
fails 1 "messages: 0 items is under the minimum of 1" mn add "$S2" --messages empty.json
printf '{"role":"user"' >notjson.json
fails 1 "not JSON" mn add "$S2" --messages notjson.json
printf '[{"role":"user","content":"a","content":"b"}]' >twice.json
fails 1 "not JSON .*duplicate" mn add "$S2" --messages twice.json
fails 1 "nope.json" mn add "$S2" --messages nope.json
ok mn history "$S2" --json
eq "$(jget "$OUT" 'len(j)')" 7 "a refused batch stores none of its messages"
fails 2 "give no ROLE or TEXT" mn add "$S2" user --messages batch.json
fails 2 "--metadata is a field of each message" mn add "$S2" --messages batch.json --metadata '{}'
fails 2 "usage: mnemo append" mn add "$S2"
NEW=0190a9c1-7ab7-7cc1-8f6e-6b0ea1d2c3f4
ok mn add "$NEW" --messages batch.json --create
ok mn history "$NEW" --json
eq "$(jget "$OUT" 'len(j)')" 3 "--messages --create makes the session"

# --- history pages forward from --after; the newest N without it ---------------------------------------
ok mn history "$S2" --json --limit 2
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[6, 7]" "history --limit 2: the newest two"
ok mn history "$S2" --json --after 1 --limit 2
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[2, 3]" "history --after 1 --limit 2: the first two after seq 1"
ok mn history "$S2" --json --after 3 --limit 2
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[4, 5]" "the next page"
ok mn history "$S2" --json --after 1 --limit 2 --tail
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[6, 7]" "history --after 1 --limit 2 --tail: the newest two after seq 1"


# --- a title follows the message it was taken from, and no other -------------------------------------
# A delete clears the title, an edit re-derives it, only when the title came from that very message:
# not when a message merely starts with the title's text, nor from a later message, nor when the
# user set it (session new --title, session update --title).
title_of() { run mn session show "$1" --json && jget "$OUT" 'j["title"]'; }
ok mn session new --title Fix
TF=$OUT
ok mn add "$TF" user "please fix"
ok mn add "$TF" assistant "Fix applied"
ok mn message delete "$TF" "$OUT"
eq "$(title_of "$TF")" Fix "deleting a message that starts with a user-set title keeps the title"
ok mn add "$TF" assistant "Fix it is"
ok mn session new --title hello
TH=$OUT
ok mn add "$TH" user hello
ok mn message edit "$TH" "$OUT" bye
eq "$(title_of "$TH")" hello "editing a message whose text is a user-set title keeps the title"
ok mn history "$TH" --json
ok mn message delete "$TH" --message-id "$(jget "$OUT" 'j[0]["id"]')"
eq "$(title_of "$TH")" hello "deleting it keeps the title too"
ok mn session new
TD=$OUT
ok mn add "$TD" user hello
TD1=$OUT
ok mn add "$TD" user "hello world, again"
TD2=$OUT
ok mn message edit "$TD" "$TD2" "something else"
eq "$(title_of "$TD")" hello "editing a later user message that starts with the title keeps it"
ok mn message delete "$TD" "$TD2"
eq "$(title_of "$TD")" hello "deleting it keeps it"
ok mn message edit "$TD" "$TD1" "hello there"
eq "$(title_of "$TD")" "hello there" "editing the message the title came from re-derives it"
ok mn message edit "$TD" "$TD1" "hello again"
eq "$(title_of "$TD")" "hello again" "a second edit of it re-derives it again"
ok mn message delete "$TD" "$TD1"
eq "$(title_of "$TD")" null "deleting the message the title came from clears it"
ok mn add "$TD" user "a new question"
TD3=$OUT
eq "$(title_of "$TD")" "a new question" "the next user message gives the title"
ok mn session update "$TD" --title "Named by hand"
ok mn message edit "$TD" "$TD3" "a new question, edited"
eq "$(title_of "$TD")" "Named by hand" "a title set by session update is the user's: an edit keeps it"
ok mn message delete "$TD" "$TD3"
eq "$(title_of "$TD")" "Named by hand" "and a delete keeps it"
# in a batch, the first user message with text gives the title, wherever it stands
printf '[{"role":"system","content":"be brief"},{"role":"user","content":"  \\n "},{"role":"user","content":"batch question"},{"role":"user","content":"batch question too"}]' >titled.json
TB=0190a9c1-7ab7-7cc1-8f6e-6b0ea1d2c3f5
ok mn add "$TB" --messages titled.json --create
ok mn history "$TB" --json
TB3=$(jget "$OUT" 'j[2]["id"]')
TB4=$(jget "$OUT" 'j[3]["id"]')
eq "$(title_of "$TB")" "batch question" "a batch: the title comes from its first user message with text"
ok mn message edit "$TB" --message-id "$TB4" "other"
eq "$(title_of "$TB")" "batch question" "a batch: editing a later message keeps the title"
ok mn message edit "$TB" --message-id "$TB3" "batch answer"
eq "$(title_of "$TB")" "batch answer" "a batch: editing the title's message re-derives it"

# a fork: the title follows the copy of its message (renumbered); the source's stays as it is
ok mn session new
TK=$OUT
ok mn add "$TK" assistant "welcome"
ok mn add "$TK" user "fork me"
ok mn add "$TK" user "fork me too"
ok mn session fork "$TK"
FK=$OUT
ok mn history "$FK" --json
FK2=$(jget "$OUT" 'j[1]["id"]')
FK3=$(jget "$OUT" 'j[2]["id"]')
ok mn message edit "$FK" --message-id "$FK3" "changed"
eq "$(title_of "$FK")" "fork me" "a fork: editing a later message keeps the title"
ok mn message edit "$FK" --message-id "$FK2" "forked question"
eq "$(title_of "$FK")" "forked question" "a fork: editing the copy of the title's message re-derives it"
eq "$(title_of "$TK")" "fork me" "a fork: the source keeps its title"
ok mn session new --title "fork me"
TU=$OUT
ok mn add "$TU" user "fork me"
ok mn session fork "$TU"
FU=$OUT
ok mn history "$FU" --json
ok mn message delete "$FU" --message-id "$(jget "$OUT" 'j[0]["id"]')"
eq "$(title_of "$FU")" "fork me" "a fork of a user-set title: the title stays the user's"

# an import finds the message a title came from: the first user message that gives it
ok mn export "$TF" "$TK" "$TU" --out titles.jsonl
DI=$(new_db imported)
ok "$MNEMO" --db "$DI" import titles.jsonl
ok "$MNEMO" --db "$DI" history "$TF" --json
ok "$MNEMO" --db "$DI" message delete "$TF" --message-id "$(jget "$OUT" 'j[1]["id"]')"
ok "$MNEMO" --db "$DI" session show "$TF" --json
eq "$(jget "$OUT" 'j["title"]')" Fix "an import: a message starting with a title it does not give leaves it"
ok "$MNEMO" --db "$DI" history "$TK" --json
IK3=$(jget "$OUT" 'j[2]["id"]')
IK2=$(jget "$OUT" 'j[1]["id"]')
ok "$MNEMO" --db "$DI" message edit "$TK" --message-id "$IK3" "changed"
ok "$MNEMO" --db "$DI" session show "$TK" --json
eq "$(jget "$OUT" 'j["title"]')" "fork me" "an import: editing a later message keeps the title"
ok "$MNEMO" --db "$DI" message delete "$TK" --message-id "$IK2"
ok "$MNEMO" --db "$DI" session show "$TK" --json
eq "$(jget "$OUT" 'j["title"]')" null "an import: deleting the message that gives the title clears it"

# an older database (schema 12; PostgreSQL 9) learns where its titles came from on upgrade
DO=$(new_db older)
ok "$MNEMO" --db "$DO" session new --title Fix
OF=$OUT
ok "$MNEMO" --db "$DO" add "$OF" user "please fix"
ok "$MNEMO" --db "$DO" add "$OF" assistant "Fix applied"
OF2=$OUT
ok "$MNEMO" --db "$DO" session new
OD=$OUT
ok "$MNEMO" --db "$DO" add "$OD" assistant "hello there"
ok "$MNEMO" --db "$DO" add "$OD" user "hello"
OD2=$OUT
ok "$MNEMO" --db "$DO" add "$OD" user "hello"
OD3=$OUT
if [ "$(backend)" = postgres ]; then
    pg_as_version_9 "$DO"
else
    sql "$DO" "ALTER TABLE sessions DROP COLUMN title_seq; ALTER TABLE sessions DROP COLUMN cleared_from;
               DROP INDEX sessions_by_key; ALTER TABLE sessions DROP COLUMN key; DROP TABLE checkpoint_writes; DROP TABLE checkpoints; DROP TABLE documents; PRAGMA user_version = 12" >/dev/null
fi
ok "$MNEMO" --db "$DO" upgrade
ok "$MNEMO" --db "$DO" message delete "$OF" "$OF2"
ok "$MNEMO" --db "$DO" session show "$OF" --json
eq "$(jget "$OUT" 'j["title"]')" Fix "upgraded: a message starting with the title does not take it"
ok "$MNEMO" --db "$DO" message edit "$OD" "$OD3" "bye"
ok "$MNEMO" --db "$DO" session show "$OD" --json
eq "$(jget "$OUT" 'j["title"]')" hello "upgraded: the title is the first user message's that gives it, not a later one's"
ok "$MNEMO" --db "$DO" message edit "$OD" "$OD2" "hello, edited"
ok "$MNEMO" --db "$DO" session show "$OD" --json
eq "$(jget "$OUT" 'j["title"]')" "hello, edited" "upgraded: editing the message it came from re-derives it"

finish
