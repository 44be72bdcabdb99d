#!/bin/sh
# t0100-sessions.sh — `mnemo session new|list|show|delete`, derived titles, lazy creation.
. "$TESTS_DIR/cli/lib.sh"

UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
is_uuid() { printf '%s\n' "$1" | grep -Eq "$UUID_RE"; }

# --- session new ---------------------------------------------------------------------------
ok mn session new
S1=$OUT
check "session new prints a canonical UUID (got '$S1')" is_uuid "$S1"
eq "$(printf '%s\n' "$S1" | cut -c15)" 7 "session new makes a UUIDv7 (version nibble)"
eq "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 1 "session new prints exactly one line"

ok mn session new --title "Trip planning" --system "You are terse." --metadata '{"team":"blue","n":3}' \
    --namespace acme --tool claude-code --json
J=$OUT
check "session new --json prints a JSON object" python3 -c 'import json,sys; assert isinstance(json.loads(sys.argv[1]), dict)' "$J"
S2=$(jget "$J" 'j["id"]')
check "session new --json: id is a UUID" is_uuid "$S2"
eq "$(jget "$J" 'j["title"]')" "Trip planning" "--title stored"
eq "$(jget "$J" 'j["system_prompt"]')" "You are terse." "--system stored"
eq "$(jget "$J" 'j["metadata"]')" '{"team": "blue", "n": 3}' "--metadata stored as a JSON object"
eq "$(jget "$J" 'j["namespace"]')" acme "--namespace stored"
eq "$(jget "$J" 'j["tool_name"]')" claude-code "--tool stored"
eq "$(jget "$J" 'j["message_count"]')" 0 "new session has no messages"
eq "$(jget "$J" 'j["token_count"]')" 0 "new session has no tokens"
eq "$(jget "$J" 'j["created_at"] == j["updated_at"] and j["created_at"] > 1600000000000')" true \
    "created_at = updated_at, in milliseconds"

FIXED=0190abcd-1234-7abc-8def-0123456789ab
ok mn session new --id "$FIXED"
eq "$OUT" "$FIXED" "--id: the given id is used"
ok mn session new --id 0190ABCD-1234-7ABC-8DEF-0123456789AC
eq "$OUT" 0190abcd-1234-7abc-8def-0123456789ac "--id: an upper-case UUID is stored in canonical lower case"
fails 1 "already exists|exists|conflict" mn session new --id "$FIXED"
fails 1 "not a UUID|UUID" mn session new --id not-a-uuid
fails 1 "metadata" mn session new --metadata '[1,2]'
fails 1 "metadata" mn session new --metadata '{"a":'
fails 1 "namespace" mn session new --namespace 'has space'
fails 2 "unknown option" mn session new --colour red
fails 2 "needs a value" mn session new --title

# --- session show --------------------------------------------------------------------------
ok mn session show "$S2"
H=$OUT
for want in "id: *$S2" "namespace: *acme" "title: *Trip planning" "messages: *0" "tokens: *0" \
    'metadata: *\{"team": ?"blue", ?"n": ?3\}' "system prompt:" "You are terse\\." "created: *[0-9]{4}-[0-9]{2}-[0-9]{2} " \
    "updated: *[0-9]{4}-"; do
    check "session show (human) has /$want/" sh -c 'printf "%s\n" "$1" | grep -Eq -- "$2"' - "$H" "$want"
done
ok mn session show "$S2" --json
J=$OUT
for f in id title system_prompt metadata message_count token_count created_at updated_at; do
    check "session show --json has field $f" python3 -c 'import json,sys; assert sys.argv[2] in json.loads(sys.argv[1])' "$J" "$f"
done
eq "$(jget "$J" '[j["id"], j["title"], j["system_prompt"], j["message_count"], j["token_count"]]')" \
    "[\"$S2\", \"Trip planning\", \"You are terse.\", 0, 0]" "session show --json values"
fails 1 "not found" mn session show 0190abcd-0000-7000-8000-00000000dead
fails 1 "'nope' not found" mn session show nope
fails 2 "usage" mn session show

# --- title derived from the first user message -----------------------------------------------
ok mn session new
ST=$OUT
ok mn add "$ST" assistant "An assistant greeting is not a title."
ok mn session show "$ST" --json
eq "$(jget "$OUT" 'j["title"]')" null "an assistant message does not set the title"
E150=$(python3 -c 'print("é" * 150)')
ok mn add "$ST" user "$E150"
ok mn add "$ST" user "a later user message does not replace the title"
ok mn session show "$ST" --json
J=$OUT
eq "$(jget "$J" 'len(j["title"])')" 100 "title from 150 × 'é' has exactly 100 characters"
eq "$(jget "$J" 'j["title"] == "é" * 100')" true "title is the first 100 characters of the first user message"
eq "$(jget "$J" 'len(j["title"].encode())')" 200 "title cut on a UTF-8 boundary (200 bytes)"
eq "$(jget "$J" 'j["message_count"]')" 3 "message_count counts every message"
check "token_count is positive" test "$(jget "$J" 'j["token_count"]')" -gt 0

# mixed widths: 99 ASCII characters then 3-byte characters: the cut must not split one
ok mn session new
SM=$OUT
MIX=$(python3 -c 'print("a" * 99 + "€€€€")')
ok mn add "$SM" user "$MIX"
ok mn session show "$SM" --json
eq "$(jget "$OUT" 'j["title"] == "a" * 99 + "€"')" true "title: 99 ASCII + 1 three-byte character"
ok mn session new
SS=$OUT
ok mn add "$SS" user "short question?"
ok mn session show "$SS" --json
eq "$(jget "$OUT" 'j["title"]')" "short question?" "a short first message is the whole title"
ok mn session new
SN=$OUT
ok mn add "$SN" user "first line
second line"
ok mn session show "$SN" --json
eq "$(jget "$OUT" 'j["title"]')" "first line second line" "line breaks in the title become spaces"
ok mn session new --title "Kept"
SK=$OUT
ok mn add "$SK" user "not the title"
ok mn session show "$SK" --json
eq "$(jget "$OUT" 'j["title"]')" Kept "an explicit --title is not replaced by the first user message"

# --- lazy creation ----------------------------------------------------------------------------
LAZY=0190abcd-0000-7000-8000-00000000beef
fails 1 "$LAZY" mn add "$LAZY" user "hello"
fails 1 "not found" mn add "$LAZY" user "hello"
fails 1 "not found" mn session show "$LAZY"
ok mn add "$LAZY" user "hello, lazily" --create
ok mn session show "$LAZY" --json
eq "$(jget "$OUT" '[j["id"], j["message_count"], j["title"]]')" "[\"$LAZY\", 1, \"hello, lazily\"]" \
    "add --create creates the session with that id"
ok mn add "$LAZY" user "second" --create
ok mn session show "$LAZY" --json
eq "$(jget "$OUT" 'j["message_count"]')" 2 "add --create on an existing session appends to it"
# any other string is a session key: --create makes the session under it (default namespace)
ok mn add not-a-uuid user "x" --create
ok mn session show not-a-uuid --json
eq "$(jget "$OUT" '[j["key"], j["message_count"], len(j["id"])]')" '["not-a-uuid", 1, 36]' \
    "add --create with a key makes a keyed session with a UUID id"
fails 1 "control character" mn add "$(printf 'a\tb')" user "x" --create

# --- session list -----------------------------------------------------------------------------
# A fresh database so that the order is fully known: A, B, C created in that order, then A
# updated by a message: most recently updated first = A, C, B.
DB=$(new_db list)
ok mn session list
eq "$OUT" "" "session list on an empty database prints nothing"
ok mn session list --json
eq "$OUT" "[]" "session list --json on an empty database is []"
ok mn session new --title A
A=$OUT
sleep 0.02
ok mn session new --title B --namespace other
B=$OUT
sleep 0.02
ok mn session new --title C
C=$OUT
sleep 0.02
ok mn add "$A" user "bump A"
ok mn session list --json
L=$OUT
eq "$(jget "$L" '[s["id"] for s in j]')" "[\"$A\", \"$C\", \"$B\"]" "list: most recently updated first"
eq "$(jget "$L" 'all(j[i]["updated_at"] >= j[i+1]["updated_at"] for i in range(len(j)-1))')" true \
    "list: updated_at is non-increasing"
for f in id namespace title system_prompt metadata created_at updated_at message_count token_count; do
    check "session list --json: every element has $f" \
        python3 -c 'import json,sys; assert all(sys.argv[2] in s for s in json.loads(sys.argv[1]))' "$L" "$f"
done
eq "$(jget "$L" '[s["message_count"] for s in j]')" "[1, 0, 0]" "list: message counts"
ok mn session list
H=$OUT
eq "$(printf '%s\n' "$H" | sed -n 1p | awk '{print $1}')" ID "human list has a header line"
eq "$(printf '%s\n' "$H" | sed -n '2,$p' | awk '{print $1}' | tr '\n' ' ')" "$A $C $B " "human list order"
check "human list shows the title" sh -c 'printf "%s\n" "$1" | grep -q "bump A\|  A$"' - "$H"
ok mn session list --limit 2 --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$A\", \"$C\"]" "list --limit 2"
ok mn session list --limit 2 --offset 1 --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$C\", \"$B\"]" "list --limit 2 --offset 1"
ok mn session list --offset 3 --json
eq "$OUT" "[]" "list --offset past the end is empty"
ok mn session list --namespace other --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$B\"]" "list --namespace other"
ok mn session list --namespace default --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$A\", \"$C\"]" "list --namespace default"
ok mn session list --namespace nobody --json
eq "$OUT" "[]" "list --namespace with no sessions"
fails 2 "limit" mn session list --limit 0
fails 2 "limit" mn session list --limit ten
fails 2 "offset" mn session list --offset -1
# default limit is 20
i=0
while [ $i -lt 22 ]; do
    "$MNEMO" --db "$DB" session new >/dev/null || fail "session new #$i"
    i=$((i + 1))
done
ok mn session list --json
eq "$(jget "$OUT" 'len(j)')" 20 "list without --limit returns 20"
ok mn session list --limit 10000 --json
eq "$(jget "$OUT" 'len(j)')" 25 "list --limit 10000 returns all 25"

# --- session delete ---------------------------------------------------------------------------
DB=$(new_db delete)
ok mn session new --title keep
KEEP=$OUT
ok mn add "$KEEP" user "keep me"
ok mn session new --title doomed
DEL=$OUT
for n in 1 2 3; do
    ok mn add "$DEL" user "message $n"
done
ok mn stats --json
eq "$(jget "$OUT" '[j["sessions"], j["messages"]]')" "[2, 4]" "before delete: 2 sessions, 4 messages"
ok mn session delete "$DEL"
eq "$OUT" "" "session delete prints nothing"
fails 1 "not found" mn session show "$DEL"
fails 1 "not found" mn history "$DEL"
ok mn stats --json
eq "$(jget "$OUT" '[j["sessions"], j["messages"]]')" "[1, 1]" "after delete: its messages are gone too"
ok mn export
check "export no longer mentions the deleted session" sh -c '! printf "%s\n" "$1" | grep -q "$2"' - "$OUT" "$DEL"
check "export still has the other session's message" sh -c 'printf "%s\n" "$1" | grep -q "keep me"' - "$OUT"
ok mn session list --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$KEEP\"]" "list after delete"
fails 1 "not found" mn session delete "$DEL"
fails 1 "'not-an-id' not found" mn session delete not-an-id
# an upper-case id is accepted; --json names the stored, lower-case id (it echoed the argument)
ok mn session new --title shouting
LOUD=$OUT
ok mn session delete "$(printf '%s' "$LOUD" | tr a-f A-F)" --json
eq "$OUT" "{\"deleted\":\"$LOUD\"}" "session delete --json of an upper-case id prints the stored id"
fails 1 "not found" mn session show "$LOUD"
# the same id can be created again after a delete, and starts empty
ok mn add "$DEL" user "reborn" --create
ok mn history "$DEL" --json
eq "$(jget "$OUT" '[(m["seq"], m["content"]) for m in j]')" '[[1, "reborn"]]' "a re-created session starts at seq 1"

# --- prune: sessions not updated for N days (the clock moved with MNEMO_TEST_NOW_MS) --------------
DB=$(new_db prune)
NOW_MS=$(python3 -c 'import time; print(int(time.time() * 1000))')
DAY_MS=86400000
ok env MNEMO_TEST_NOW_MS=$((NOW_MS - 40 * DAY_MS)) "$MNEMO" --db "$DB" session new --title forty-days-old
OLD=$OUT
ok env MNEMO_TEST_NOW_MS=$((NOW_MS - 40 * DAY_MS)) "$MNEMO" --db "$DB" session new --title old-but-touched
TOUCHED=$OUT
ok mn add "$TOUCHED" user "touched today"
ok env MNEMO_TEST_NOW_MS=$((NOW_MS - 10 * DAY_MS)) "$MNEMO" --db "$DB" session new --title ten-days-old
TEN=$OUT
ok mn session new --title new
NEW=$OUT
ok mn prune --days 30 --json
eq "$OUT" '{"deleted":1}' "prune --days 30 deletes the one session not updated for 40 days"
fails 1 "not found" mn session show "$OLD"
ok mn session list --json
eq "$(jget "$OUT" 'sorted(s["title"] for s in j)')" '["new", "old-but-touched", "ten-days-old"]' \
    "prune keeps recent and recently updated sessions"
ok mn prune --days 5
eq "$OUT" "deleted 1 sessions not updated for 5 days" "prune --days 5 (human)"
fails 1 "not found" mn session show "$TEN"
ok mn prune --days 5 --json
eq "$OUT" '{"deleted":0}' "prune again deletes nothing"
fails 2 "days" mn prune --days 36501
fails 2 "days" mn prune --days soon

finish
