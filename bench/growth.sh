#!/bin/sh
# bench/growth.sh — every operation at several store sizes, so that a cliff shows at once
# (bench/README.md "Growth"). For each store DIR/gS.db (S sessions x 1,000 messages, made by
# `mnemo-bench build --sessions S --messages 1000` when missing) it prints, as JSON lines: window
# context and history (`mnemo-bench window`), keyword search three ways (`search-latency`), and
# appends one per transaction into a copy of the store (`mnemo-bench append`; the copy is
# flushed to disk before the run, so the kernel writing it back does not slow the appends).
# Each measurement runs RUNS times (default 3) for a median.
#
#   sh bench/growth.sh BUILD_DIR DIR [SESSIONS...]      e.g. sh bench/growth.sh build/rel /tmp/growth 10 100 1000
#
# BUILD_DIR holds mnemo-bench and search-latency (cmake -DMNEMO_BENCH=ON). Needs the disk for each
# store twice (~1 GB a million messages).
set -eu
B=${1:?usage: growth.sh BUILD_DIR DIR [SESSIONS...]}
D=${2:?usage: growth.sh BUILD_DIR DIR [SESSIONS...]}
shift 2
[ $# -gt 0 ] || set -- 10 100 1000
RUNS=${RUNS:-3}
mkdir -p "$D"
echo "# $(date -u +%FT%TZ) load $(cut -d' ' -f1 /proc/loadavg) commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
for S in "$@"; do
    db="$D/g$S.db"
    [ -f "$db" ] || "$B/mnemo-bench" build --db "$db" --sessions "$S" --messages 1000
    echo "## $S sessions x 1000 messages"
    for r in $(seq "$RUNS"); do
        "$B/mnemo-bench" window --db "$db" --calls 2000 --max-tokens 4096
        "$B/mnemo-bench" window --db "$db" --calls 2000 --max-tokens 4096 --read history
    done
    for r in $(seq "$RUNS"); do
        "$B/search-latency" --db "$db" --queries 200 2>&1 | grep '^{'
    done
    cp "$db" "$D/append.db"
    sync
    for r in $(seq "$RUNS"); do
        "$B/mnemo-bench" append --db "$D/append.db" --n 5000 --per-txn 1 --sync normal
    done
    rm -f "$D/append.db" "$D/append.db-wal" "$D/append.db-shm" "$D/append.db.keywords"*
done
echo "# end $(date -u +%T) load $(cut -d' ' -f1 /proc/loadavg)"
