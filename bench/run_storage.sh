#!/bin/sh
# mnemo's storage figures side by side with the peers of shared/bench/storage, in one run on one
# machine: the seed design in Python (bench_store.py) and the raw sqlite3 C API (sqlite_insert.c).
#   sh bench/run_storage.sh [RUNS] [DATADIR]        (from the repository root; RUNS default 3)
# Environment: BUILD (build folder, default build), CMAKE_FLAGS (extra cmake flags),
#   PEERS (default /work/shared/bench/storage), PY (default /usr/bin/python3), MAXLOAD (default 0.8),
#   WAITS (default 20: how many 30-s waits for a quiet machine before measuring anyway),
#   REUSE=1 (keep the window stores already in DATADIR and their build lines in storage_raw.txt).
# Raw lines go to bench/results/storage_raw.txt, load notes to bench/results/storage_load.txt, the
# table to bench/results/storage_summary.txt. Databases and binaries of the peers live in DATADIR.
set -e
RUNS=${1:-3}
DATA=${2:-/tmp/mnemo-bench-data}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PEERS=${PEERS:-/work/shared/bench/storage}
PY=${PY:-/usr/bin/python3}
MAXLOAD=${MAXLOAD:-0.8}
WAITS=${WAITS:-20}
REUSE=${REUSE:-0}
OUT=$HERE/results
RAW=$OUT/storage_raw.txt; LOAD=$OUT/storage_load.txt
mkdir -p "$OUT" "$DATA"

# ---- build: mnemo-bench as `make bench` does; the peer's C program into DATADIR, never the repo
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DMNEMO_BENCH=ON -DMNEMO_TESTS=OFF $CMAKE_FLAGS >/dev/null
cmake --build "$BUILD" -j 2 --target mnemo-bench >/dev/null
MB=$BUILD/mnemo-bench
CI=$DATA/sqlite_insert
gcc -O2 -Wall -o "$CI" "$PEERS/sqlite_insert.c" -lsqlite3 -lm
# sqlite_insert's `recent` picks among "sess-0000".."sess-0999"; for the 10- and 100-session stores
# the same program is compiled with that one constant changed (nothing else differs)
for s in 10 100; do
  sed "s/rnd() % 1000)/rnd() % $s)/" "$PEERS/sqlite_insert.c" > "$DATA/sqlite_insert_$s.c"
  gcc -O2 -Wall -o "$DATA/sqlite_insert_$s" "$DATA/sqlite_insert_$s.c" -lsqlite3 -lm
done

# ---- quiet machine: wait (up to WAITS x 30 s) until the 1-minute load average is below MAXLOAD
quiet() {
  w=0
  while [ $w -lt "$WAITS" ]; do
    l=$(cut -d' ' -f1 /proc/loadavg)
    if awk -v l="$l" -v m="$MAXLOAD" 'BEGIN{exit !(l < m)}'; then break; fi
    echo "$(date -u +%H:%M:%S) $1: load $l >= $MAXLOAD, waiting 30 s" >> "$LOAD"; sleep 30; w=$((w+1))
  done
  echo "$(date -u +%H:%M:%S) $1: start, loadavg $(cut -d' ' -f1-3 /proc/loadavg), top: $(ps -eo pcpu=,comm= --sort=-pcpu | head -3 | tr -s ' ' | tr '\n' ';')" >> "$LOAD"
}
tag() { sed "s/^/run=$1 /" >> "$RAW"; }
fresh() { rm -f "$DATA/app.db" "$DATA/app.db-wal" "$DATA/app.db-shm" "$DATA/app.db.keywords"*; }

if [ "$REUSE" = 1 ]; then grep '^run=0 ' "$RAW" > "$RAW.keep" || true; mv "$RAW.keep" "$RAW"; else : > "$RAW"; fi
: >> "$LOAD"
sh /work/shared/bench/machine_facts.sh > "$OUT/machine.txt" 2>/dev/null || true

# ---- stores for the window figures: mnemo and Python, 10 x 1000, 100 x 1000, 1000 x 1000
quiet build
for s in 10 100 1000; do
  [ "$REUSE" = 1 ] && [ -f "$DATA/mnemo_$s.db" ] && [ -f "$DATA/peer_$s.db" ] && continue
  $MB build --db "$DATA/mnemo_$s.db" --sessions $s --messages 1000 | tag 0
  $PY "$HERE/peer_build.py" "$PEERS" "$DATA/peer_$s.db" $s 1000 | tag 0
done

for i in $(seq 1 "$RUNS"); do
  quiet "run $i append"
  # one transaction per message, synchronous FULL (2,000) and NORMAL (10,000); then 1,000 per transaction
  fresh; $PY "$PEERS/bench_store.py" append "$DATA/app.db" 2000 FULL                  | tag $i
  fresh; "$CI" append "$DATA/app.db" 2000 1 FULL                                     | tag $i
  fresh; $MB append --db "$DATA/app.db" --n 2000 --per-txn 1 --sync full             | tag $i
  fresh; $PY "$PEERS/bench_store.py" append "$DATA/app.db" 10000 NORMAL               | tag $i
  fresh; "$CI" append "$DATA/app.db" 10000 1 NORMAL                                  | tag $i
  fresh; $MB append --db "$DATA/app.db" --n 10000 --per-txn 1 --sync normal          | tag $i
  fresh; $PY "$PEERS/bench_store.py" batch "$DATA/app.db" 100000 1000 NORMAL          | tag $i
  fresh; "$CI" append "$DATA/app.db" 100000 1000 NORMAL                              | tag $i
  fresh; $MB append --db "$DATA/app.db" --n 100000 --per-txn 1000 --sync normal      | tag $i
  fresh; $MB append --db "$DATA/app.db" --n 100000 --per-txn 1000 --sync full        | tag $i
  fresh
  quiet "run $i build"
  $MB build --db "$DATA/mnemo_b.db" --sessions 100 --messages 1000 | tag $i
  rm -f "$DATA/mnemo_b.db"
  quiet "run $i window"
  for s in 10 100 1000; do
    ci=$DATA/sqlite_insert_$s; [ $s = 1000 ] && ci=$CI
    $MB window --db "$DATA/mnemo_$s.db" --calls 2000 --max-tokens 4096 --read context | tag $i
    $MB window --db "$DATA/mnemo_$s.db" --calls 2000 --max-tokens 4096 --read history | tag $i
    "$ci" recent "$DATA/peer_$s.db" 2000 4096 | sed "s/^store_recent/store_recent rows=${s}000/" | tag $i
    $PY "$PEERS/bench_store.py" recent "$DATA/peer_$s.db" 2000 4096 | sed "s/^store_recent/store_recent rows=${s}000/" | tag $i
  done
done
quiet done
$PY "$HERE/summarize_storage.py" "$RAW" "$LOAD" | tee "$OUT/storage_summary.txt"
