#!/bin/sh
# t0420-export-damaged.sh — an export that cannot read everything fails (issue 13, item 13): a
# damaged index can end a read early without an error, so each session's messages are counted
# against its message_count. Damage is simulated by making the counter disagree with the rows.
# The export exits non-zero naming the database and the session, --out leaves no file, and on
# stdout the error comes after the partial output.
. "$TESTS_DIR/cli/lib.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER

ok mn session new --title whole
A=$OUT
ok mn add "$A" user "first"
ok mn session new --title damaged
B=$OUT
ok mn add "$B" user "one"
ok mn add "$B" assistant "two"
ok mn export --out "$T/good.jsonl"
check "a sound database exports" test -s "$T/good.jsonl"

sql "$DB" "UPDATE sessions SET message_count = message_count + 1 WHERE id = '$B'" >/dev/null
fails 1 "$B.*(2|3) messages.*damaged|damaged.*$B" mn export --out "$T/bad.jsonl"
check "the error names the database" sh -c 'grep -q "$1" "$2"' - "$(basename "$DB")" "$T/.err"
check "no file claims success" test ! -e "$T/bad.jsonl"
check "no temp file left" sh -c '! ls "$1" | grep -q "bad.jsonl"' - "$T"
fails 1 "damaged" mn export
check "stdout got what was read before the error" sh -c 'printf "%s" "$1" | grep -q "\"whole\""' - "$OUT"
finish
