#!/bin/sh
# t0400-export-import.sh — `mnemo export` (all, by id, --out) and `mnemo import`: exact round
# trip, idempotent re-import, all-or-nothing on a bad line.
. "$TESTS_DIR/cli/lib.sh"

SRC=$(new_db src)
DB=$SRC
CALL='[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"ü\"}"}}]'

ok mn session new --title first --system "Be brief." --metadata '{"k":"v","n":[1,2]}' --namespace team-a --tool codex
S1=$OUT
ok mn add "$S1" user "Hello — ünïcödé, \"quotes\", back\\slash, tab	and
newline" --metadata '{"m":1}' --files '["a.txt"]' --key key-1 --model m1 --tool codex --pin --name alice
ok mn add "$S1" assistant --tool-calls "$CALL"
ok mn add "$S1" tool '{"answer":42}' --tool-call-id c1 --name lookup
ok mn add "$S1" assistant "The answer is 42."
ok mn session new --title second
S2=$OUT
ok mn add "$S2" user "only message of the second session"
ok mn session new --title third
S3=$OUT
ok mn add "$S3" system "a system message"
ok mn add "$S3" user "third session"

# --- export ------------------------------------------------------------------------------------
ok mn export
ALL=$OUT
printf '%s\n' "$ALL" >"$T/all.jsonl"
check "export: every line is a JSON object" python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    assert isinstance(json.loads(line), dict)' "$T/all.jsonl"
eq "$(head -1 "$T/all.jsonl" | python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["format"], j["version"])')" \
    "mnemo-export 1" "export: the first line is the header"
eq "$(python3 -c '
import json, sys
print(" ".join(json.loads(l).get("type", "header") for l in open(sys.argv[1])))' "$T/all.jsonl")" \
    "header session message message message message session message session message message" \
    "export: each session line followed by its messages"
eq "$(python3 -c '
import json, sys
print(" ".join(json.loads(l)["id"] for l in open(sys.argv[1]) if json.loads(l).get("type") == "session"))' "$T/all.jsonl")" \
    "$S1 $S2 $S3" "export: sessions oldest first"
eq "$(wc -l <"$T/all.jsonl" | tr -d ' ')" 11 "export: 11 lines"

ok mn export "$S2"
printf '%s\n' "$OUT" >"$T/s2.jsonl"
eq "$(python3 -c '
import json, sys
print([(json.loads(l).get("type"), json.loads(l).get("content")) for l in open(sys.argv[1])])' "$T/s2.jsonl")" \
    "[(None, None), ('session', None), ('message', 'only message of the second session')]" "export ID: only that session"
ok mn export "$S3" "$S1"
eq "$(printf '%s\n' "$OUT" | grep -c '"type":"session"')" 2 "export ID ID: two sessions"
check "export ID ID: no line of the third session" sh -c '! printf "%s\n" "$1" | grep -q "$2"' - "$OUT" "$S2"

ok mn export --out "$T/out.jsonl"
eq "$OUT" "" "export --out prints nothing on stdout"
check "export --out FILE writes the same bytes as stdout" cmp -s "$T/out.jsonl" "$T/all.jsonl"
check "export --out leaves no temporary file" sh -c '[ -z "$(ls "$1" | grep "out.jsonl.tmp")" ]' - "$T"
ok mn export "$S2" --out "$T/out2.jsonl"
check "export ID --out FILE" cmp -s "$T/out2.jsonl" "$T/s2.jsonl"

fails 1 "not found" mn export 0190abcd-0000-7000-8000-00000000dead
eq "$OUT" "" "export of an unknown id prints nothing"
fails 1 "not found" mn export "$S1" 0190abcd-0000-7000-8000-00000000dead
eq "$OUT" "" "export of a known and an unknown id prints nothing"
fails 1 "not found" mn export 0190abcd-0000-7000-8000-00000000dead --out "$T/none.jsonl"
check "export --out of an unknown id creates no file" sh -c '! ls "$1" | grep -q "none.jsonl"' - "$T"
echo "previous content" >"$T/keep.jsonl"
fails 1 "not found" mn export 0190abcd-0000-7000-8000-00000000dead --out "$T/keep.jsonl"
eq "$(cat "$T/keep.jsonl")" "previous content" "a failed export --out leaves an existing file alone"
fails 1 "." mn export --out "$T/no/such/dir/x.jsonl"

ok mn stats --json
SRC_STATS=$(jget "$OUT" '[j["sessions"], j["messages"], j["tokens"]]')
eq "$SRC_STATS" "$(jget "$OUT" '[3, 7, j["tokens"]]')" "source: 3 sessions, 7 messages"

# --- import into an empty database: byte-identical export --------------------------------------
DB=$(new_db copy)
ok mn import "$T/all.jsonl"
check "import prints the counts" sh -c 'printf "%s\n" "$1" | grep -Eq "imported 3 sessions \(0 already present\), 7 messages \(0 already present\)"' - "$OUT"
ok mn export
printf '%s\n' "$OUT" >"$T/copy.jsonl"
check "import into an empty database, then export: byte-identical" cmp -s "$T/all.jsonl" "$T/copy.jsonl"
if [ "$(backend)" = postgres ]; then # the planner's statistics are there at once, not after autovacuum
    eq "$(sql "$DB" "SELECT count(*) FROM pg_stat_user_tables WHERE relname IN ('sessions', 'messages')
        AND last_analyze IS NOT NULL")" 2 "import analyzed the tables it loaded"
fi
for s in "$S1" "$S2" "$S3"; do
    A=$("$MNEMO" --db "$SRC" history "$s" --json)
    B=$("$MNEMO" --db "$DB" history "$s" --json)
    eq "$B" "$A" "history --json identical after the round trip ($s)"
    A=$("$MNEMO" --db "$SRC" session show "$s" --json)
    B=$("$MNEMO" --db "$DB" session show "$s" --json)
    eq "$B" "$A" "session show --json identical after the round trip ($s)"
done
ok mn stats --json
eq "$(jget "$OUT" '[j["sessions"], j["messages"], j["tokens"]]')" "$SRC_STATS" "stats identical after the import"

# --- re-import is idempotent --------------------------------------------------------------------
BEFORE=$(snapshot "$DB")
ok mn import "$T/all.jsonl" --json
eq "$(jget "$OUT" '[j["sessions_added"], j["sessions_skipped"], j["messages_added"], j["messages_skipped"]]')" \
    "[0, 3, 0, 7]" "re-import: everything skipped"
eq "$(snapshot "$DB")" "$BEFORE" "re-import changes nothing (stats and export)"
ok mn import - <"$T/all.jsonl"
check "import from standard input" sh -c 'printf "%s\n" "$1" | grep -q "0 sessions (3 already present), 0 messages (7 already present)"' - "$OUT"
eq "$(snapshot "$DB")" "$BEFORE" "import - changes nothing the second time"
# appending after the import continues the sequence
ok mn add "$S1" user "after the import" --json
eq "$(jget "$OUT" 'j["seq"]')" 5 "add after an import continues at seq 5"
# an import that brings new messages of a known session adds just those
DB=$(new_db partial)
head -4 "$T/all.jsonl" >"$T/head.jsonl"   # header, S1, its first two messages
ok mn import "$T/head.jsonl" --json
eq "$(jget "$OUT" '[j["sessions_added"], j["messages_added"]]')" "[1, 2]" "partial import"
ok mn import "$T/all.jsonl" --json
eq "$(jget "$OUT" '[j["sessions_added"], j["sessions_skipped"], j["messages_added"], j["messages_skipped"]]')" \
    "[2, 1, 5, 2]" "import completes a partial import"
ok mn export
printf '%s\n' "$OUT" >"$T/partial-out.jsonl"
check "partial then full import: export byte-identical to the source" cmp -s "$T/all.jsonl" "$T/partial-out.jsonl"

# --- the counters come along: a turn limit's inactive message stays counted -----------------------
DB=$(new_db turns)
ok mn session new --max-turns 1
S4=$OUT
ok mn add "$S4" user one
ok mn add "$S4" user two
ok mn session show "$S4" --json
TURNS_SHOW=$OUT
eq "$(jget "$OUT" '[j["message_count"], j["inactive_count"]]')" "[2, 1]" "the turn limit left one message inactive"
ok mn export "$S4" --out "$T/turns.jsonl"
DB=$(new_db turns-copy)
ok mn import "$T/turns.jsonl"
ok mn session show "$S4" --json
eq "$OUT" "$TURNS_SHOW" "session show --json identical after the import (inactive_count 1)"

# --- a cleared session: the clear comes along, so that an undo in the copy brings it back --------
DB=$(new_db cleared)
ok mn session new
S5=$OUT
ok mn add "$S5" user one
ok mn add "$S5" assistant two
ok mn session clear "$S5"
ok mn add "$S5" user three
ok mn session show "$S5" --json
CLEARED_SHOW=$OUT
eq "$(jget "$OUT" '[j["inactive_count"], j["cleared_seq"]]')" "[2, 2]" "the clear: two messages out, up to seq 2"
ok mn export "$S5" --out "$T/cleared.jsonl"
eq "$(jget "$(sed -n 2p "$T/cleared.jsonl")" 'j["cleared_seq"]')" "2" "the session line carries cleared_seq"
DB=$(new_db cleared-copy)
ok mn import "$T/cleared.jsonl"
ok mn session show "$S5" --json
eq "$OUT" "$CLEARED_SHOW" "session show --json identical after the import (cleared_seq 2)"
ok mn export
printf '%s\n' "$OUT" >"$T/cleared-again.jsonl"
check "a cleared session: export, import, export byte-identical" cmp -s "$T/cleared.jsonl" "$T/cleared-again.jsonl"
ok mn session clear "$S5" --undo --json
eq "$(jget "$OUT" 'j["restored"]')" "2" "undo in the copy brings the two cleared messages back"
ok mn context "$S5" --format text
check "the context holds the restored messages" sh -c 'printf "%s" "$1" | grep -q one' - "$OUT"
ok mn session show "$S5" --json
eq "$(jget "$OUT" '[j["inactive_count"], j["cleared_seq"]]')" "[0, 0]" "after the undo: nothing inactive, nothing to undo"
printf '{"format":"mnemo-export","version":1}\n{"type":"session","id":"0190a000-0000-7000-8000-00000000000c","created_at":1,"updated_at":1,"expires_at":0,"cleared_seq":-1}\n' >"$T/bad-cleared.jsonl"
fails 1 'import line 2: cleared_seq' mn import "$T/bad-cleared.jsonl"

# --- an import of an earlier version counted no inactive message: opening recounts (v13; PG v10) -
DB=$(new_db recount)
ok mn session new --max-turns 1
S6=$OUT
for text in one two three; do ok mn add "$S6" user "$text"; done
ok mn session new
S7=$OUT
ok mn add "$S7" user alone
case $DB in
postgres://* | postgresql://*) sql "$DB" "UPDATE sessions SET inactive_count = 7" && pg_as_version_9 "$DB" ;;
*) sql "$DB" "UPDATE sessions SET inactive_count = 7; ALTER TABLE sessions DROP COLUMN cleared_from; ALTER TABLE sessions DROP COLUMN title_seq; DROP INDEX sessions_by_key; ALTER TABLE sessions DROP COLUMN key; DROP TABLE checkpoint_writes; DROP TABLE checkpoints; DROP TABLE documents; PRAGMA user_version = 12" ;;
esac
ok mn session show "$S6" --json
eq "$(jget "$OUT" 'j["inactive_count"]')" "2" "a wrong count of a session with inactive messages is recounted"
ok mn session show "$S7" --json
eq "$(jget "$OUT" 'j["inactive_count"]')" "0" "a wrong count of a session with none goes back to 0"

# --- a bad line anywhere: exit 1 naming the line, nothing written -------------------------------
DB=$(new_db target)
ok mn session new --title "already here"
TGT=$OUT
ok mn add "$TGT" user "existing message"
TARGET_BEFORE=$(snapshot "$DB")
# line 7 is the message of the second session (header=1, S1=2, its messages 3-6, S2=7, ...):
# break line 8 so that line 2..7 would have been importable
bad() { # bad NAME LINE SED-EXPR: writes $T/bad-NAME.jsonl from all.jsonl with LINE edited
    sed "$2$3" "$T/all.jsonl" >"$T/bad-$1.jsonl"
    cmp -s "$T/bad-$1.jsonl" "$T/all.jsonl" && fail "bad-$1: the edit changed nothing"
}
bad json 8 's/.*/{"type":"message", "id": 5, oops/'
bad role 8 's/"role":"user"/"role":"wizard"/'
bad toolid 5 's/"tool_call_id":"c1"/"tool_call_id":null/'
bad version 1 's/"version":1/"version":999/'
bad format 1 's/"mnemo-export"/"other-export"/'
bad utf8 8 's/only message/only \\ud800 message/'
bad toolcalls 4 's/"tool_calls":\[/"tool_calls":{"x":[/; s/}}\],"tool_call_id"/}}]},"tool_call_id"/'
bad seq 10 's/"seq":1/"seq":-4/'
sed 1d "$T/all.jsonl" >"$T/bad-noheader.jsonl"
{ sed -n 1,7p "$T/all.jsonl"; echo 'this is not json at all'; sed -n '8,$p' "$T/all.jsonl"; } >"$T/bad-garbage.jsonl"
{ sed -n 1,7p "$T/all.jsonl"; echo '[1,2,3]'; sed -n '8,$p' "$T/all.jsonl"; } >"$T/bad-array.jsonl"

# name | file | line the message must name | a word the message must contain
while IFS='|' read -r name line word; do
    fails 1 "line $line\b.*($word)|($word).*line $line\b" mn import "$T/bad-$name.jsonl"
    eq "$OUT" "" "import bad-$name prints nothing on stdout"
    eq "$(snapshot "$DB")" "$TARGET_BEFORE" "import bad-$name: the target database is unchanged"
done <<'EOF'
json|8|JSON
role|8|role
toolid|5|tool_call_id
version|1|version
format|1|format|export
utf8|8|UTF-8|utf-8|surrogate|invalid
toolcalls|4|tool_calls
seq|10|seq
noheader|1|header
garbage|8|JSON
array|8|object
EOF
: >"$T/empty.jsonl"
fails 1 "empty|header" mn import "$T/empty.jsonl"
eq "$(snapshot "$DB")" "$TARGET_BEFORE" "import of an empty file: the target database is unchanged"
fails 1 "cannot read|No such file" mn import "$T/no-such-file.jsonl"
eq "$(snapshot "$DB")" "$TARGET_BEFORE" "import of a missing file: unchanged"
# a file that opens but cannot be read names the path and the reason, as a missing one does
# (found by a probe: a directory gave `mnemo: read failed`)
mkdir "$T/a-directory"
fails 1 "^mnemo: cannot read $T/a-directory: Is a directory\$" mn import "$T/a-directory"
eq "$(snapshot "$DB")" "$TARGET_BEFORE" "import of a directory: unchanged"
if [ -r /proc/self/mem ]; then # opens, then every read fails (EIO at address 0)
    fails 1 "^mnemo: cannot read /proc/self/mem: Input/output error\$" mn import /proc/self/mem
fi
if [ "$(id -u)" != 0 ]; then # root reads a file whatever its mode
    echo x >"$T/unreadable.jsonl"
    chmod 000 "$T/unreadable.jsonl"
    fails 1 "^mnemo: cannot read $T/unreadable.jsonl: Permission denied\$" mn import "$T/unreadable.jsonl"
fi
# and the good file still imports afterwards
ok mn import "$T/all.jsonl" --json
eq "$(jget "$OUT" '[j["sessions_added"], j["messages_added"]]')" "[3, 7]" "after the refused imports the good file imports"
ok mn history "$TGT" --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" '["existing message"]' "the target's own session is untouched"

# --out through a symbolic link writes the link's file (renaming over it replaced the link and
# left the file as it was); a pipe or a device is written straight, never replaced; a directory
# is refused
echo old >"$T/target.jsonl"
ln -s target.jsonl "$T/link.jsonl"
ok mn export --out "$T/link.jsonl"
check "the link is still a link" test -L "$T/link.jsonl"
eq "$(head -c 29 "$T/target.jsonl")" '{"format":"mnemo-export","ver' "the link's file holds the export"
mkfifo "$T/pipe"
timeout 60 cat "$T/pipe" >"$T/from-pipe.jsonl" &
ok mn export --out "$T/pipe"
wait
check "the pipe is still a pipe" test -p "$T/pipe"
ok sh -c '"$1" --db "$2" export --out /dev/stdout | head -c 29' - "$MNEMO" "$DB"
eq "$OUT" '{"format":"mnemo-export","ver' "--out /dev/stdout (a link to a pipe): written straight"
ln -s made-through.jsonl "$T/dangling.jsonl"
ok mn export --out "$T/dangling.jsonl"
eq "$(head -c 29 "$T/made-through.jsonl")" '{"format":"mnemo-export","ver' "a dangling link: its file made through it"
eq "$(head -c 29 "$T/from-pipe.jsonl")" '{"format":"mnemo-export","ver' "its reader got the export"
fails 1 "is a directory" mn export --out "$T"
finish
