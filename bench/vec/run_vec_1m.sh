#!/bin/sh
# mnemo's vector index against hnswlib at 1,000,000 vectors (issue 43), side by side in one run:
# the shared generator's data set at n = 1M (x 384, 1000 queries, seed 42, the other flags as in
# ../shared/bench/vec/run_vec.sh), exact top-100 by vecbench_brute -G, then ROUNDS rounds of
# hnswlib, mnemo (f32) and mnemo_int8, each its own process with the same harness and flags
# (-k 10 -M 16 -e 200 -T 2 -r 3, ef 16..128). Same approach as run_vec.sh (the 100k run), without
# the filtered runs. usage, from the repository root:
#   sh bench/vec/run_vec_1m.sh [ROUNDS] [DATADIR]        # defaults: 1, /tmp/peers-data-1m
# Writes OUT/<backend>.runN.txt (the harness's stdout as is), OUT/load.txt (`uptime` before each
# process, and the source revision), OUT/time/<backend>.runN.time.txt (`/usr/bin/time -v`: peak
# RSS, CPU; skipped when /usr/bin/time is missing; kept out of OUT itself because summarize.py
# reads every OUT/*.txt as a run) and OUT/summary.txt. Data: base.f32 is 1.5 GB; the ground
# truth is single-threaded (minutes). Each backend needs ~2-3 GB of RAM.
# Environment: BUILD (default build/bench-vec), OUT (default bench/vec/results/1m), PEERS (where
# the read-only shared folder is copied to build hnswlib; default /tmp/mnemo-vec-peers),
# CMAKE_FLAGS (extra configure flags), EFS (ef sweep). Needs libhnswlib-dev.
set -e
ROUNDS=${1:-1}
DATA=${2:-/tmp/peers-data-1m}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SHARED=$ROOT/../shared/bench/vec
BUILD=${BUILD:-$ROOT/build/bench-vec}
OUT=${OUT:-$HERE/results/1m}
PEERS=${PEERS:-/tmp/mnemo-vec-peers}
EFS=${EFS:-16,24,32,40,48,64,96,128}
[ -d "$SHARED" ] || { echo "run_vec_1m.sh: $SHARED not found" >&2; exit 1; }
mkdir -p "$OUT/time" "$DATA"

# the peers' harness and hnswlib backend, built in a writable copy
rm -rf "$PEERS" && mkdir -p "$PEERS" && cp "$SHARED"/* "$PEERS"/ && chmod -R u+w "$PEERS"
make -s -C "$PEERS" gen_dataset vecbench_brute vecbench_hnswlib
if [ ! -f "$DATA/base.f32" ]; then
  echo "run_vec_1m.sh: generating 1M x 384 in $DATA ($(date -u +%H:%M:%S) UTC)" >&2
  "$PEERS/gen_dataset" -n 1000000 -q 1000 -d 384 -c 1000 -t 100 -s 42 -a 1.0 -b 1.5 "$DATA"
fi
if [ ! -f "$DATA/gt.i32" ]; then
  echo "run_vec_1m.sh: exact top-100 ($(date -u +%H:%M:%S) UTC)" >&2
  "$PEERS/vecbench_brute" -G -D "$DATA"
fi

# mnemo's binaries (bench/vec/CMakeLists.txt)
# shellcheck disable=SC2086
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON -DMNEMO_TESTS=OFF $CMAKE_FLAGS >/dev/null
cmake --build "$BUILD" -j 2 --target vecbench_mnemo vecbench_mnemo_int8 >/dev/null
BIN=$BUILD/bench/vec

{
  echo "source: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)," \
       "files changed in src/ against it: $(git -C "$ROOT" status --short -- src 2>/dev/null | wc -l)"
  echo "data: $DATA ($(cd "$DATA" && ls -l base.f32 query.f32 gt.i32 | awk '{printf "%s %s; ", $9, $5}'))"
} >> "$OUT/load.txt"

TIME=
[ -x /usr/bin/time ] && TIME=/usr/bin/time
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
for i in $(seq 1 "$ROUNDS"); do
  for b in hnswlib mnemo mnemo_int8; do
    exe=$BIN/vecbench_$b
    [ "$b" = hnswlib ] && exe=$PEERS/vecbench_hnswlib
    echo "$b run $i: $(uptime)" >> "$OUT/load.txt"
    echo "run_vec_1m.sh: $b run $i ($(date -u +%H:%M:%S) UTC)" >&2
    if [ -n "$TIME" ]; then
      "$TIME" -v -o "$OUT/time/$b.run$i.time.txt" \
        "$exe" -D "$DATA" -k 10 -M 16 -e 200 -T 2 -r 3 -E "$EFS" > "$OUT/$b.run$i.txt"
    else
      "$exe" -D "$DATA" -k 10 -M 16 -e 200 -T 2 -r 3 -E "$EFS" > "$OUT/$b.run$i.txt"
    fi
  done
done
echo "done: $(uptime)" >> "$OUT/load.txt"
python3 "$SHARED/summarize.py" "$OUT" > "$OUT/summary.txt"
cat "$OUT/summary.txt"
