#!/bin/sh
# bench/backfill.sh [SIZE] [ROUNDS] — `mnemo embed --backfill` with the `hash` embedder against
# building the vector index alone, on the same store in the same minutes (issue 43's goal:
# the backfill within 1.2x of the build). The store (SIZE messages, default 200000, in SIZE/1000
# sessions, made by `mnemo-bench build`, nothing embedded) is copied afresh for each round;
# the backfill embeds every message, stores the vectors and builds the index; then the index
# file is removed and `mnemo embed --pending` (nothing left to embed) builds it alone from the
# stored vectors. BEFORE=path/to/other/build times that build's backfill too, alternately.
# BUILD (default build) and BEFORE hold mnemo and mnemo-bench (`make bench`, or cmake with
# -DMNEMO_BENCH=ON).
set -eu
SIZE=${1:-200000}
ROUNDS=${2:-3}
BUILD=${BUILD:-build}
DATA=${DATA:-/tmp/mnemo-backfill-data}
mkdir -p "$DATA"
SRC="$DATA/store_$SIZE.db"
if [ ! -f "$SRC" ]; then
  "$BUILD/mnemo-bench" build --db "$SRC" --sessions $((SIZE / 1000)) --messages 1000 >&2
fi
DB="$DATA/run.db"
export MNEMO_EMBEDDER=hash

# secs CMD...: runs CMD, prints its wall time in seconds
secs() {
  _t0=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  _t1=$(date +%s.%N)
  echo "$_t0 $_t1" | awk '{ printf "%.2f", $2 - $1 }'
}

fresh() {
  rm -f "$DB" "$DB"-* "$DB".*
  for f in "$SRC" "$SRC".*; do
    [ -e "$f" ] && cp "$f" "$DB${f#"$SRC"}"
  done
}

echo "# bench/backfill.sh $SIZE $ROUNDS, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ)"
r=1
while [ "$r" -le "$ROUNDS" ]; do
  for b in ${BEFORE:+"$BEFORE"} "$BUILD"; do
    fresh
    backfill=$(secs "$b/mnemo" --db "$DB" embed --backfill)
    rm -f "$DB.hnsw" "$DB.hnsw.state"
    build=$(secs "$b/mnemo" --db "$DB" embed --pending)
    echo "round=$r build=$b load=$(cut -d' ' -f1 /proc/loadavg) backfill_s=$backfill index_build_s=$build" \
      "ratio=$(echo "$backfill $build" | awk '{ printf "%.2f", $1 / $2 }')"
  done
  r=$((r + 1))
done
