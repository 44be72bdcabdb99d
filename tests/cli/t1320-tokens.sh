#!/bin/sh
# t1320-tokens.sh — `mnemo tokens`: a regular file (read in one go while the encoding loads on a
# second thread), standard input and a named pipe give the same count; --json and --ids; a NUL
# byte and a missing file are refused; a text over 1 MiB counts the same on any number of threads
# (--threads). cl100k_base when its ranks file is installed
# (scripts/fetch-ranks), the heuristic otherwise.
. "$TESTS_DIR/cli/lib.sh"

E=heuristic
run "$MNEMO" tokens --encoding cl100k_base /dev/null
[ "$RC" -eq 0 ] && E=cl100k_base
printf 'Hello, world! The quick brown fox jumps over the lazy dog.\n' > "$T/a.txt"
i=0
while [ $i -lt 200 ]; do cat "$T/a.txt"; i=$((i + 1)); done > "$T/big.txt"

ok "$MNEMO" tokens --encoding $E "$T/big.txt"
FILE=$OUT
ok sh -c "\"$MNEMO\" tokens --encoding $E < \"$T/big.txt\""
eq "$OUT" "$FILE" "standard input counts as the file ($E)"
mkfifo "$T/pipe"
(cat "$T/big.txt" > "$T/pipe") &
ok timeout 60 "$MNEMO" tokens --encoding $E "$T/pipe"
eq "$OUT" "$FILE" "a named pipe is read to its end like standard input"
wait
ok "$MNEMO" tokens --encoding $E --json "$T/a.txt"
eq "$(jget "$OUT" '[j["encoding"], j["bytes"]]')" "[\"$E\", 59]" "--json names the encoding and the bytes"
if [ "$E" = cl100k_base ]; then
    ok "$MNEMO" tokens --ids "$T/a.txt" --encoding cl100k_base
    eq "$(echo "$OUT" | wc -w)" 14 "--ids: one id a token"
    ok "$MNEMO" tokens --encoding cl100k_base "$T/a.txt"
    eq "$OUT" 14 "the count matches the ids"
fi
# a text over 1 MiB counts on several threads with the one-thread count; --threads is checked
i=0
while [ $i -lt 24 ]; do cat "$T/big.txt"; printf '12345 ab\r\n\n/x \n'; i=$((i + 1)); done > "$T/huge.txt"
cat "$T/huge.txt" "$T/huge.txt" "$T/huge.txt" "$T/huge.txt" "$T/huge.txt" "$T/huge.txt" > "$T/huge2.txt"
cat "$T/huge2.txt" "$T/huge2.txt" "$T/huge2.txt" "$T/huge2.txt" "$T/huge2.txt" > "$T/huge.txt"
check "the text is over 1 MiB" test "$(wc -c < "$T/huge.txt")" -gt 1048576
ok "$MNEMO" tokens --encoding $E --threads 1 "$T/huge.txt"
ONE=$OUT
for n in 0 2 3 7; do
    ok "$MNEMO" tokens --encoding $E --threads $n "$T/huge.txt"
    eq "$OUT" "$ONE" "--threads $n counts as one thread ($E)"
done
fails 2 "threads" "$MNEMO" tokens --encoding $E --threads -1 "$T/a.txt"
fails 2 "threads" "$MNEMO" tokens --encoding $E --threads many "$T/a.txt"
printf 'a\000b' > "$T/nul.txt"
fails 1 "NUL byte" "$MNEMO" tokens --encoding $E "$T/nul.txt"
fails 1 "cannot read" "$MNEMO" tokens --encoding $E "$T/missing.txt"
finish
