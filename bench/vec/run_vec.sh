#!/bin/sh
# mnemo's vector index against hnswlib on the shared data set (100k x 384), side by side in one
# run: every round runs hnswlib, mnemo (f32) and mnemo_int8, each as its own process with the same
# harness and flags; then the filtered-search runs. usage, from the repository root:
#   sh bench/vec/run_vec.sh [RUNS] [DATADIR]
# Environment: BUILD (default build/bench-vec), OUT (default bench/vec/results), PEERS (where
# the read-only shared folder is copied to build hnswlib; default /tmp/mnemo-vec-peers),
# CMAKE_FLAGS (extra configure flags). Needs libhnswlib-dev.
set -e
RUNS=${1:-3}
DATA=${2:-/tmp/peers-data}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SHARED=$ROOT/../shared/bench/vec
BUILD=${BUILD:-$ROOT/build/bench-vec}
OUT=${OUT:-$HERE/results}
PEERS=${PEERS:-/tmp/mnemo-vec-peers}
[ -d "$SHARED" ] || { echo "run_vec.sh: $SHARED not found" >&2; exit 1; }
mkdir -p "$OUT/filter" "$DATA"

# the peers' harness and hnswlib backend, built in a writable copy
rm -rf "$PEERS" && mkdir -p "$PEERS" && cp "$SHARED"/* "$PEERS"/ && chmod -R u+w "$PEERS"
make -s -C "$PEERS" gen_dataset vecbench_brute vecbench_hnswlib
[ -f "$DATA/base.f32" ] || "$PEERS/gen_dataset" -n 100000 -q 1000 -d 384 -c 1000 -t 100 -s 42 -a 1.0 -b 1.5 "$DATA"
[ -f "$DATA/gt.i32" ] || "$PEERS/vecbench_brute" -G -D "$DATA"

# mnemo's binaries (bench/vec/CMakeLists.txt)
# shellcheck disable=SC2086
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON -DMNEMO_TESTS=OFF $CMAKE_FLAGS >/dev/null
cmake --build "$BUILD" -j 2 --target vecbench_mnemo vecbench_mnemo_int8 vecfilter_mnemo >/dev/null
BIN=$BUILD/bench/vec

export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
EFS=10,12,14,16,20,24,28,32,40,48,64,96,128,256
for i in $(seq 1 "$RUNS"); do
  for b in hnswlib mnemo mnemo_int8; do
    exe=$BIN/vecbench_$b
    [ "$b" = hnswlib ] && exe=$PEERS/vecbench_hnswlib
    echo "$b run $i: $(uptime)" >> "$OUT/load.txt"
    if [ "$b" = mnemo ] && [ "$i" = 1 ]; then
      MNEMO_VB_SAVE=$DATA/mnemo.idx "$exe" -D "$DATA" -k 10 -M 16 -e 200 -T 1 -r 3 -E $EFS > "$OUT/$b.run$i.txt"
    else
      "$exe" -D "$DATA" -k 10 -M 16 -e 200 -T 1 -r 3 -E $EFS > "$OUT/$b.run$i.txt"
    fi
  done
done
# filtered search (our own mode, see README): loads the index saved by mnemo's first run
for i in $(seq 1 "$RUNS"); do
  echo "filter run $i: $(uptime)" >> "$OUT/load.txt"
  "$BIN/vecfilter_mnemo" -D "$DATA" -I "$DATA/mnemo.idx" -k 10 -r 3 -e 64 > "$OUT/filter/filter.run$i.txt"
done
python3 "$SHARED/summarize.py" "$OUT" > "$OUT/summary.txt"
python3 "$HERE/summarize_filter.py" "$OUT/filter" >> "$OUT/summary.txt"
cat "$OUT/summary.txt"
