#!/bin/sh
# append_cpu.sh — the CPU a served durable append costs, for builds side by side: each round runs
# every build once, in turn, on a fresh copy of STORE (server on CPU 0, memory.durability=full,
# `wrk -t1 -c64` append.lua on CPU 1, 3 s of warm-up, then DUR seconds measured). Per run: req/s,
# the server's CPU time (utime+stime of /proc/PID/stat) per append, appends per group commit
# (/metrics) and the CPU of its busiest threads; then medians per build. CPU per append is the
# figure to compare: on this shared 2-core host the req/s of one run moves by 20-40%.
# usage: sh bench/server/append_cpu.sh ROUNDS STORE LABEL=MNEMO [LABEL=MNEMO ...]
#   env: DUR (8 seconds measured), PORT (8799)
# e.g.   sh bench/server/append_cpu.sh 3 /tmp/w1m.db before=/tmp/mnemo.old after=build/rel/mnemo
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROUNDS=$1 STORE=$2
shift 2
DUR=${DUR:-8}
PORT=${PORT:-8799}
W=/tmp/srvbench/cpu
mkdir -p "$W"
: >"$W/runs.txt"

one() { # LABEL MNEMO: one run; appends its line to runs.txt
    cp "$STORE" "$W/run.db"
    rm -f "$W/run.db-wal" "$W/run.db-shm" "$W/run.db.keywords"*
    if [ -f "$STORE.keywords" ]; then cp "$STORE.keywords" "$W/run.db.keywords"; fi
    : >"$W/url"
    MNEMO_DURABILITY=full MNEMO_TOKENIZER=heuristic taskset -c 0 "$2" --db "$W/run.db" serve \
        --listen 127.0.0.1:$PORT >"$W/url" 2>"$W/serve.err" &
    pid=$!
    for _ in $(seq 1 3000); do [ -s "$W/url" ] && break; sleep 0.1; done
    url=$(head -n1 "$W/url")
    curl -s "$url/v1/sessions?limit=1000" | python3 -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]: print(s["id"])' >"$W/ids.txt"
    export IDS_FILE="$W/ids.txt" BENCH_DIR="$HERE"
    taskset -c 1 wrk -t1 -c64 -d3s -s "$HERE/append.lua" "$url" >/dev/null
    cpu0=$(awk '{print $14 + $15}' /proc/$pid/stat)
    g0=$(curl -s "$url/metrics" | awk '/^mnemo_commit_groups_total/ {print $2}')
    taskset -c 1 wrk -t1 -c64 -d"${DUR}s" --latency -s "$HERE/append.lua" "$url" >"$W/wrk.txt"
    cpu1=$(awk '{print $14 + $15}' /proc/$pid/stat)
    g1=$(curl -s "$url/metrics" | awk '/^mnemo_commit_groups_total/ {print $2}')
    threads=$(for t in /proc/$pid/task/*; do echo "$(cat "$t/comm"):$(awk '{print $14 + $15}' "$t/stat")"; done |
        sort -t: -k2 -n -r | head -6 | tr '\n' ' ')
    kill $pid
    wait $pid 2>/dev/null || true
    n=$(awk '/requests in/ {print $1}' "$W/wrk.txt")
    hz=$(getconf CLK_TCK)
    echo "$1 rps=$(awk '/Requests\/sec/ {print $2}' "$W/wrk.txt") p99=$(awk '/ 99%/ {print $2}' "$W/wrk.txt")" \
        "cpu_us_per_append=$(( (cpu1 - cpu0) * 1000000 / hz / n )) appends_per_group=$(( n / (g1 - g0) ))" \
        "load=$(cut -d' ' -f1 /proc/loadavg) threads(ticks, warm-up included): $threads" | tee -a "$W/runs.txt"
}

for _ in $(seq 1 "$ROUNDS"); do
    for lb in "$@"; do one "${lb%%=*}" "${lb#*=}"; done
done
for lb in "$@"; do
    grep "^${lb%%=*} " "$W/runs.txt" | python3 -c '
import re, statistics, sys
runs = [dict(re.findall(r"(\w+)=([\d.]+)", line)) for line in sys.stdin]
med = lambda k: statistics.median(float(r[k]) for r in runs)
print("%s: median of %d runs: %.0f appends/s, %.0f us CPU per append, %.0f appends per group"
      % (sys.argv[1], len(runs), med("rps"), med("cpu_us_per_append"), med("appends_per_group")))' "${lb%%=*}"
done
