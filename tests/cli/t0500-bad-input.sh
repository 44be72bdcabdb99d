#!/bin/sh
# t0500-bad-input.sh — a table of bad inputs: each is refused with the documented exit status
# and a message naming the problem, and leaves the database exactly as it was.
# pg variant: none — the inputs are refused by the CLI's and the library's checks before the store;
# the store's own refusals (a missing session, a message of another) run on PostgreSQL in pg/api/test_api.
. "$TESTS_DIR/cli/lib.sh"

ok mn session new --title victim --system "sys"
S=$OUT
ok mn add "$S" user "hello"
ok mn add "$S" assistant --tool-calls '[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]'
ok mn add "$S" tool "result" --tool-call-id c1
MISSING=0190abcd-0000-7000-8000-00000000dead
CALLS='[{"id":"c9","type":"function","function":{"name":"f","arguments":"{}"}}]'
HUNDRED_AND_ONE=$(python3 -c 'print("x" * 101)')
HUNDRED=$(python3 -c 'print("y" * 100)')

# Files for the --db cases.
printf 'just some text\nnot a database at all\n' >"$T/notes.txt"
python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
c.execute("INSERT INTO invoices (total) VALUES (12.5)")
c.commit()
c.close()' "$T/other-app.sqlite"
: >"$T/a-regular-file"
SHA_TXT=$(sha256 "$T/notes.txt")
SHA_OTHER=$(sha256 "$T/other-app.sqlite")

BEFORE=$(snapshot "$DB")
check "snapshot works" test -n "$BEFORE"

# description | command (eval'd; mn = mnemo --db $DB) | exit status | stderr pattern (grep -E)
TABLE=$(cat <<'EOF'
invalid UTF-8 content (argument)         | mn add "$S" user "$(printf 'caf\303 \377 x')"                  | 1 | UTF-8
invalid UTF-8 content (stdin)            | printf 'bad \377 byte' | mn add "$S" user -                    | 1 | UTF-8
invalid UTF-8 in --name                  | mn add "$S" user ok --name "$(printf '\377')"                 | 1 | name.*UTF-8|UTF-8.*name
invalid UTF-8 in a metadata string       | mn add "$S" user ok --metadata "$(printf '{"a":"\377"}')"     | 1 | metadata|UTF-8
invalid UTF-8 in a system prompt         | mn session new --system "$(printf 'x\377')"                   | 1 | UTF-8
malformed --tool-calls JSON              | mn add "$S" assistant --tool-calls '[{"id":'                  | 1 | tool_calls
--tool-calls not an array                | mn add "$S" assistant --tool-calls '{"id":"c9"}'              | 1 | tool_calls.*array
--tool-calls element without a function  | mn add "$S" assistant --tool-calls '[{"id":"c9","type":"function"}]' | 1 | tool_calls
--tool-calls on a user message           | mn add "$S" user hi --tool-calls "$CALLS"                     | 1 | tool_calls
--tool-calls on a tool message           | mn add "$S" tool hi --tool-call-id c1 --tool-calls "$CALLS"   | 1 | tool_calls
--metadata not an object (array)         | mn add "$S" user hi --metadata '[1,2]'                        | 1 | metadata.*object
--metadata not an object (string)        | mn add "$S" user hi --metadata '"x"'                          | 1 | metadata.*object
--metadata malformed                     | mn add "$S" user hi --metadata '{"a":1'                       | 1 | metadata
session --metadata not an object        | mn session new --metadata 'null'                              | 1 | metadata
--files not an array                     | mn add "$S" user hi --files '"a.txt"'                         | 1 | files
unknown role                             | mn add "$S" wizard hi                                         | 2 | role
tool message without --tool-call-id      | mn add "$S" tool "result"                                     | 1 | tool_call_id
--tool-call-id on a user message         | mn add "$S" user hi --tool-call-id c1                         | 1 | tool_call_id
user message without content             | mn add "$S" user                                              | 1 | content
content over the size limit (101 > 100)  | env MNEMO_MAX_MESSAGE_BYTES=100 "$MNEMO" --db "$DB" add "$S" user "$HUNDRED_AND_ONE" | 1 | exceeds
content over the size limit (stdin)      | printf '%s' "$HUNDRED_AND_ONE" | env MNEMO_MAX_MESSAGE_BYTES=100 "$MNEMO" --db "$DB" add "$S" user - | 1 | exceeds
key that names no session (add)          | mn add not-a-uuid user hi                                     | 1 | 'not-a-uuid' not found
neither a UUID nor a key (--create)      | mn add "$(printf 'a\tb')" user hi --create                    | 1 | control character
key that names no session (history)      | mn history "$S-extra"                                         | 1 | not found
--id that is not a UUID                  | mn session new --id 0190abcd-0000-7000-8000                   | 1 | UUID
unknown session without --create         | mn add "$MISSING" user hi                                     | 1 | 0190abcd-0000-7000-8000-00000000dead.*not found|not found.*0190abcd-0000-7000-8000-00000000dead
NUL byte on stdin                        | printf 'a\000b' | mn add "$S" user -                         | 1 | NUL
--db is a text file                      | "$MNEMO" --db "$T/notes.txt" add "$MISSING" user hi --create  | 1 | not a SQLite database
--db is a text file (read)               | "$MNEMO" --db "$T/notes.txt" stats                            | 1 | notes.txt.*not a SQLite database
--db is another application's SQLite db  | "$MNEMO" --db "$T/other-app.sqlite" add "$MISSING" user hi --create | 1 | not a mnemo database
--db is another application's db (read)  | "$MNEMO" --db "$T/other-app.sqlite" session list              | 1 | other-app.sqlite.*not a mnemo database
--db in a directory that cannot be made  | "$MNEMO" --db "$T/a-regular-file/sub/db.sqlite" session new   | 1 | a-regular-file
--db is a directory                      | "$MNEMO" --db "$T" stats                                      | 1 | cannot open.*t0500|t0500.*(directory|cannot open)
unknown command                          | mn frobnicate                                                 | 2 | unknown command
unknown subcommand                       | mn session rename "$S"                                        | 2 | subcommand|unknown
unknown option                           | mn add "$S" user hi --colour red                              | 2 | unknown option
unknown global option                    | "$MNEMO" --verbose --db "$DB" stats                           | 2 | unknown option
--db without a value                     | "$MNEMO" --db                                                 | 2 | needs a value
option value missing                     | mn history "$S" --limit                                       | 2 | needs a value
flag given a value                       | mn history "$S" --json=yes                                    | 2 | takes no value
--limit not a number                     | mn history "$S" --limit ten                                   | 2 | limit
--limit negative                         | mn session list --limit -3                                    | 2 | limit
--max-tokens not a number                | mn context "$S" --max-tokens 12abc                            | 2 | max-tokens
prune without --days                     | mn prune                                                      | 2 | days
prune --days 0                           | mn prune --days 0                                             | 2 | days
no command at all                        | mn                                                            | 2 | usage
too many arguments                       | mn session show "$S" "$S"                                     | 2 | usage
bad configuration value in environment   | env MNEMO_MAX_MESSAGE_BYTES=lots "$MNEMO" --db "$DB" add "$S" user hi              | 1 | MNEMO_MAX_MESSAGE_BYTES
EOF
)

n=0
printf '%s\n' "$TABLE" >"$T/table.txt"
# Columns are separated by " | " (space, bar, space); a command may contain a pipe, so the
# description is the first column, the pattern and the status are the last two.
while IFS= read -r line; do
    n=$((n + 1))
    desc=$(printf '%s' "${line%% | *}" | sed 's/ *$//')
    rest=${line#* | }
    pattern=${rest##* | }
    rest=${rest% | *}
    status=$(printf '%s' "${rest##* | }" | tr -d ' ')
    cmd=$(printf '%s' "${rest% | *}" | sed 's/^ *//; s/ *$//')
    if fails "$status" "$pattern" eval "$cmd"; then :; else
        printf '    case: %s\n' "$desc" >&2
    fi
    eq "$(snapshot "$DB")" "$BEFORE" "$desc: the database is unchanged"
done <"$T/table.txt"
check "the table has all its rows ($n)" test "$n" -ge 45

eq "$(sha256 "$T/notes.txt")" "$SHA_TXT" "the text file given as --db is unmodified"
eq "$(sha256 "$T/other-app.sqlite")" "$SHA_OTHER" "the other application's database is unmodified (sha256)"
check "no -wal/-shm/-journal left next to the other application's database" \
    sh -c '! ls "$1"/other-app.sqlite-* "$1"/notes.txt-* 2>/dev/null | grep -q .' - "$T"
check "the other application's data is intact" python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
assert c.execute("SELECT total FROM invoices").fetchall() == [(12.5,)]
assert [r[0] for r in c.execute("SELECT name FROM sqlite_master")] == ["invoices"]' "$T/other-app.sqlite"
check "nothing was created under the regular file" test -f "$T/a-regular-file"

# The boundary of the size limit: exactly 100 bytes is accepted.
ok env MNEMO_MAX_MESSAGE_BYTES=100 "$MNEMO" --db "$DB" add "$S" user "$HUNDRED"
eq "$(jget "$(mn history "$S" --limit 1 --json)" 'len(j[0]["content"])')" 100 "content of exactly the limit is stored"

# After all that, the database still works.
ok mn add "$S" user "still works"
ok mn add "$MISSING" user "created now" --create
ok mn history "$S" --json
eq "$(jget "$OUT" '[m["content"] for m in j][-1]')" "still works" "add + history succeed after the bad inputs"
eq "$(jget "$OUT" '[m["seq"] for m in j]')" "[1, 2, 3, 4, 5]" "no seq was consumed by a refused add"
ok mn history "$MISSING" --json
eq "$(jget "$OUT" 'len(j)')" 1 "the lazily created session works"
# found by a probe: a database living only as long as the command (file:…?mode=memory acknowledged
# a session the next command could not find), output that could not be written (exit 0 with
# nothing written), a message id past INT64_MAX (clamped to it), NaN similarities (past the range
# check), the message group's help without pin
fails 1 "would live only as long as this command" "$MNEMO" --db "file:$T/mm.db?mode=memory" session new
fails 1 "would live only as long as this command" env MNEMO_DB=:memory: "$MNEMO" session new
fails 1 "history: writing the output failed" sh -c '"$1" --db "$2" history "$3" >/dev/full' - "$MNEMO" "$DB" "$S"
fails 1 "context build: writing the output failed" sh -c '"$1" --db "$2" context "$3" >/dev/full' - "$MNEMO" "$DB" "$S"
# and the texts printed before any command runs (they gave 0 where `version` gave 1)
fails 1 "^mnemo: --version: writing the output failed" sh -c '"$1" --version >/dev/full' - "$MNEMO"
fails 1 "^mnemo: --help: writing the output failed" sh -c '"$1" --help >/dev/full' - "$MNEMO"
fails 1 "^mnemo: --help: writing the output failed" sh -c '"$1" -h >/dev/full' - "$MNEMO"
fails 1 "^mnemo: append --help: writing the output failed" sh -c '"$1" add --help >/dev/full' - "$MNEMO"
fails 1 "^mnemo: session create --help: writing the output failed" sh -c '"$1" session new -h >/dev/full' - "$MNEMO"
fails 1 "^mnemo: session --help: writing the output failed" sh -c '"$1" session --help >/dev/full' - "$MNEMO"
fails 2 "'99999999999999999999' is not a position" mn message edit "$S" 99999999999999999999 x
fails 2 "'99999999999999999999' is not a position" mn message delete "$S" 99999999999999999999
fails 2 "--message-id: '99999999999999999999' is not a message id" mn message delete "$S" --message-id 99999999999999999999
fails 2 "--rag-min-similarity: 'nan' is not a number from -1 to 1" mn context "$S" --rag-min-similarity nan
fails 2 "--min-similarity: 'nan' is not a number from -1 to 1" mn search x --min-similarity nan
fails 2 "needs a subcommand: delete, edit, pin" mn message
fails 2 "unknown command 'session bogus': 'session' takes create, list" mn session bogus
# options that contradict each other, or that the command would not use, said instead of ignored
fails 2 "--pinned and --unpinned contradict each other" mn memory update 1 --pinned --unpinned
fails 2 "--backfill and --pending contradict each other" mn embed --backfill --pending
fails 2 "memory list: unknown option --mode" mn memory list --mode semantic
fails 2 "state get: unknown option --history" mn state "$S" get --history
fails 2 "state merge-params: unknown option --history" mn state "$S" merge '{"a":1}' --history
fails 2 "state merge-params: unknown option --history" mn state merge-params "$S" '{"a":1}' --history
fails 2 "--report is a part of the JSON output" mn search hello --report
ok sh -c 'printf "hello world" | "$1" tokens --encoding cl100k_base --ids --json' - "$MNEMO"
eq "$(jget "$OUT" '[j["tokens"], j["ids"]]')" '[2, [15339, 1917]]' "tokens --ids --json: the ids in JSON"

ok integrity "$DB"
eq "$OUT" ok "integrity check ($(backend)) after the bad inputs"

finish
