#!/bin/sh
# run_index_open.sh — the vector index's build on 1..T threads and a fresh process's open+search,
# at each size given, into bench/vec/results/index_open.txt. One command re-runs every figure:
#   sh bench/vec/run_index_open.sh [SIZES] [THREADS] [RUNS] [BIN]
#     SIZES    default "10000 100000" (add 1000000 on a quiet machine with ~4 GB free)
#     THREADS  build thread counts, default "1,<all cores>"
#     RUNS     fresh processes per open mode, default 5
#     BIN      default build/rel/bench/vec/index-open-bench
#              (cmake -S . -B build/rel -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON &&
#               cmake --build build/rel --target index-open-bench)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SIZES=${1:-"10000 100000"}
THREADS=${2:-"1,$(nproc)"}
RUNS=${3:-5}
BIN=${4:-$ROOT/build/rel/bench/vec/index-open-bench}
OUT=$ROOT/bench/vec/results/index_open.txt
DIR=${TMPDIR:-/tmp}/mnemo-index-open.$$
mkdir -p "$DIR" "$ROOT/bench/vec/results"
trap 'rm -rf "$DIR"' EXIT
{
    echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    for n in $SIZES; do
        "$BIN" -n "$n" -t "$THREADS" -r "$RUNS" "$DIR"
    done
} | tee "$OUT"
