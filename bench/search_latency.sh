#!/bin/sh
# bench/search_latency.sh SIZE [RUNS] [DATADIR] — keyword (no filter, namespace, session) search
# latency, top 10, on a store of SIZE messages made by `mnemo-bench build` (SIZE/1000 sessions of
# 1000 interleaved messages, built once and kept in DATADIR), RUNS times (default 3); with
# EMBEDDER=hash also semantic and hybrid (the store is then embedded once: slow at 1M).
# BEFORE=path/to/other/build runs that build's search-latency alternately with this one's, on
# the same store in the same minutes. Builds with `make bench` (folder $BUILD, default build).
set -eu
SIZE=${1:?usage: search_latency.sh SIZE [RUNS] [DATADIR]}
RUNS=${2:-3}
DATA=${3:-/tmp/mnemo-search-data}
BUILD=${BUILD:-build}
EMBEDDER=${EMBEDDER:-none}
QUERIES=${QUERIES:-200}
make -s bench BUILD="$BUILD" >/dev/null
mkdir -p "$DATA"
DB="$DATA/search_$SIZE.db"
if [ ! -f "$DB" ]; then
  "$BUILD/mnemo-bench" build --db "$DB" --sessions $((SIZE / 1000)) --messages 1000 >&2
fi
if [ "$EMBEDDER" != none ] && [ ! -f "$DB.embedded" ]; then
  MNEMO_EMBEDDER="$EMBEDDER" "$BUILD/mnemo" --db "$DB" embed --backfill >&2 && touch "$DB.embedded"
fi
i=1
while [ "$i" -le "$RUNS" ]; do
  for b in ${BEFORE:+"$BEFORE"} "$BUILD"; do
    echo "run=$i build=$b size=$SIZE load=$(cut -d' ' -f1 /proc/loadavg)"
    "$b/search-latency" --db "$DB" --queries "$QUERIES" --embedder "$EMBEDDER"
  done
  i=$((i + 1))
done
