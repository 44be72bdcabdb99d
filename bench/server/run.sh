#!/bin/sh
# run.sh — mnemo serve under wrk on loopback, beside redis-benchmark LPUSH / LRANGE_100 in the
# same run (../shared/bench/server's method). Server on CPU 0, load generator on CPU 1 (taskset).
# usage: sh bench/server/run.sh [RUNS] [STORE]
#   RUNS   runs of each workload (default 3; the summary takes medians)
#   STORE  a mnemo database to copy and serve (default /tmp/srvbench/store.db: 1M messages in
#          1,000 sessions, built by `mnemo-bench build --sessions 1000 --messages 1000`)
#   env: MNEMO (default build/rel/mnemo), PORT (8799), DUR (10s per wrk run), CONNS (64)
# needs: wrk, redis-server, redis-tools (apt-get install wrk redis-server redis-tools), curl, python3.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=${1:-3}
STORE=${2:-/tmp/srvbench/store.db}
MNEMO=${MNEMO:-build/rel/mnemo}
PORT=${PORT:-8799}
DUR=${DUR:-10s}
CONNS=${CONNS:-64}
W=/tmp/srvbench/work
OUT=$HERE/results
mkdir -p "$W" "$OUT"
: >"$OUT/wrk.txt"
: >"$OUT/redis.txt"
{ date -u +%FT%TZ; uptime; nproc; "$MNEMO" version; } >"$OUT/env.txt"

cp "$STORE" "$W/run.db"
rm -f "$W/run.db-wal" "$W/run.db-shm" "$W/run.db.keywords"*
# the keyword index's file (schema 11) goes with its database; without it the server indexes anew
if [ -f "$STORE.keywords" ]; then cp "$STORE.keywords" "$W/run.db.keywords"; fi
MNEMO_DURABILITY=full MNEMO_TOKENIZER=${TOKENIZER:-heuristic} taskset -c 0 "$MNEMO" --db "$W/run.db" serve --listen 127.0.0.1:$PORT >"$W/url" 2>"$W/serve.err" &
SPID=$!
for _ in $(seq 1 3000); do [ -s "$W/url" ] && break; sleep 0.1; done  # a schema migration may run first
URL=$(head -n1 "$W/url")
for _ in 1 2 3 4 5; do
    curl -s -o "$W/sessions.json" "$URL/v1/sessions?limit=1000" &&
        python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["sessions"]: print(s["id"])' "$W/sessions.json" >"$W/ids.txt" 2>/dev/null && break
    sleep 1
done
echo "sessions: $(wc -l <"$W/ids.txt")" >>"$OUT/env.txt"
curl -s "$URL/v1/stats" >>"$OUT/env.txt"; echo >>"$OUT/env.txt"
export IDS_FILE="$W/ids.txt" BENCH_DIR="$HERE"
# each workload at CONNS connections; context also at 16 (a fleet of agents each waiting for its
# context; with 64 connections on one core, Little's law puts even the mean latency near 64/rate);
# turn: 64 conversations taking turns, an append then the context (turn.lua)
for i in $(seq 1 "$RUNS"); do
    for wc in append:$CONNS history:$CONNS context:$CONNS context:16 turn:$CONNS; do
        w=${wc%%:*} c=${wc#*:}
        echo "run=$i workload=$w conns=$c load=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/wrk.txt"
        taskset -c 1 wrk -t1 -c"$c" -d"$DUR" --latency -s "$HERE/$w.lua" "$URL" 2>&1 |
            grep -E 'Requests/sec|Latency|^ +(50|99)%|Non-2xx|Socket errors' >>"$OUT/wrk.txt"
    done
done
curl -s "$URL/metrics" | grep -E '^mnemo_commit' >>"$OUT/env.txt"
kill -TERM $SPID
wait $SPID || true

# the same run: Redis lists, in memory, no persistence
taskset -c 0 redis-server --port 6390 --bind 127.0.0.1 --save '' --appendonly no --daemonize no >"$W/redis.log" 2>&1 &
RPID=$!
sleep 1
for i in $(seq 1 "$RUNS"); do
    for d in 3 1000; do
        echo "run=$i value_bytes=$d load=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/redis.txt"
        taskset -c 1 redis-benchmark -h 127.0.0.1 -p 6390 -t lpush,lrange_100 -n 100000 -c 50 -d $d -q 2>&1 |
            tr '\r' '\n' | grep -E '^(LPUSH|LRANGE).*requests per second' >>"$OUT/redis.txt"
        redis-cli -p 6390 flushall >/dev/null
    done
done
kill $RPID
wait $RPID 2>/dev/null || true

# the durable peer (issue 43): every LPUSH written and fsynced before its reply, as mnemo's
# durable append is, 1 KB values at CONNS connections
mkdir -p "$W/aof"
taskset -c 0 redis-server --port 6390 --bind 127.0.0.1 --save '' --dir "$W/aof" --appendonly yes \
    --appendfsync always --daemonize no >"$W/redis-aof.log" 2>&1 &
RPID=$!
sleep 1
for i in $(seq 1 "$RUNS"); do
    echo "run=$i value_bytes=1000-durable load=$(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/redis.txt"
    taskset -c 1 redis-benchmark -h 127.0.0.1 -p 6390 -t lpush -n 100000 -c "$CONNS" -d 1000 -q 2>&1 |
        tr '\r' '\n' | grep -E '^LPUSH.*requests per second' >>"$OUT/redis.txt"
    redis-cli -p 6390 flushall >/dev/null
done
kill $RPID
wait $RPID 2>/dev/null || true
python3 "$HERE/summarize.py" "$OUT"
