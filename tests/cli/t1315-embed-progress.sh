#!/bin/sh
# t1315-embed-progress.sh — what `mnemo embed --backfill` and `reindex --embeddings` show on
# standard error (docs/cli.md, embed): on a terminal (a pseudo-terminal made by script(1)) a bar
# redrawn at most five times a second, not once a batch; off a terminal a line every 2 s and at
# the end; both then say that the vector index is being updated, unless nothing was embedded.
# The clock is held still (MNEMO_TEST_NOW_MS), so what is shown depends on no timing: the first
# draw, then the end.
. "$TESTS_DIR/cli/lib.sh"

N=30
python3 -c "import json; print(json.dumps([{'role': 'user', 'content': 'walrus note %d' % i} for i in range($N)]))" >"$T/batch.json"
ok mn session new
ok mn append "$OUT" --messages "$T/batch.json"

export MNEMO_EMBEDDER=hash MNEMO_EMBEDDER_BATCH=1 MNEMO_TEST_NOW_MS=1795467792018

# --- off a terminal: lines ---------------------------------------------------------------------------------
ok mn embed --backfill
eq "$ERR" "embedded $N/$N (0/s, ETA 0s)
updating the vector index" "off a terminal: the last line and the index line only (the clock stands still)"
eq "$OUT" "embedded $N messages ($N with a vector, 0 queued)" "the result on stdout"
ok mn embed --backfill
eq "$ERR" "embedded 0/0 (0/s, ETA 0s)" "nothing left to embed: no index line"

# --- on a terminal: a bar, not redrawn for each of the $N batches -----------------------------------------------
if ! command -v script >/dev/null 2>&1; then
    pass "script(1) is not installed: the terminal is not tested"
    finish
fi
# on_tty CMD...: runs CMD with stdin, stdout and stderr on a new pseudo-terminal; the terminal's
# output goes to $T/tty (CR LF for each newline)
on_tty() {
    _cmd=
    for _a in "$@"; do _cmd="$_cmd '$_a'"; done
    run script -q -e -c "$_cmd" /dev/null
    printf '%s' "$OUT" | tr -d '\n' | tr '\r' '\n' >"$T/tty"
}
on_tty "$MNEMO" --db "$DB" reindex --embeddings
eq "$RC" 0 "reindex --embeddings on a terminal"
eq "$(grep -c '^embedding \[' "$T/tty")" 2 "the bar is drawn twice: at the start and at the end, not after every batch"
check "the first draw is 0/$N" grep -q "^embedding \[ *\] 0/$N 0/s ETA 0s" "$T/tty"
check "the last draw is $N/$N, full" grep -q "^embedding \[##############################\] $N/$N " "$T/tty"
check "then the vector index" grep -q "^updating the vector index$" "$T/tty"
check "and the result" grep -q "^embedded $N messages ($N with a vector, 0 queued)$" "$T/tty"
finish
