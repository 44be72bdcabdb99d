#!/bin/sh
# cpu_ab.sh — one durable-append run of BIN under wrk, with the server's CPU and context switches
# per append; prints one result line (results/append_cpu_*.txt). Run it alternately for two
# builds (interleaved A/B). The server is on CPU 0, wrk (-c64) on CPU 1, as run.sh does.
# usage: sh bench/server/cpu_ab.sh BIN LABEL [DUR] [PERF]
#   PERF non-empty: perf record the server meanwhile (PERFOPT, default -g) into $W/perf.data
#   env: STORE (a mnemo database to copy, default /tmp/srvbench/store.db), W (work directory),
#        LUA (workload script, default ${LUA:-append.lua})
set -eu
BIN=$1; LABEL=$2; DUR=${3:-10s}; PERF=${4:-}
W=${W:-/tmp/srvbench/cpu}; mkdir -p $W
BENCH=$(cd "$(dirname "$0")" && pwd)
STORE=${STORE:-/tmp/srvbench/store.db}
cp "$STORE" $W/run.db; rm -f $W/run.db-wal $W/run.db-shm $W/run.db.keywords*
# the keyword index's file (schema 11) goes with its database; without it the server indexes anew
if [ -f "$STORE.keywords" ]; then cp "$STORE.keywords" $W/run.db.keywords; fi
sync # the copy's ~900 MB of writeback must not land in the measured window
PORT=8819
: > $W/url
MNEMO_DURABILITY=full MNEMO_TOKENIZER=heuristic taskset -c 0 "$BIN" --db $W/run.db serve --listen 127.0.0.1:$PORT >$W/url 2>$W/serve.err &
SPID=$!
for _ in $(seq 1 3000); do [ -s $W/url ] && break; sleep 0.1; done
URL=$(head -n1 $W/url)
curl -s -o $W/sessions.json "$URL/v1/sessions?limit=1000"
python3 -c '
import json, sys
for s in json.load(open(sys.argv[1]))["sessions"]: print(s["id"])' $W/sessions.json >$W/ids.txt
export IDS_FILE=$W/ids.txt BENCH_DIR=$BENCH
# warm-up 2s
taskset -c 1 wrk -t1 -c64 -d2s -s $BENCH/${LUA:-append.lua} "$URL" >/dev/null 2>&1
load=$(cut -d' ' -f1 /proc/loadavg)
cs0=$(cat /proc/$SPID/task/*/status | awk '/ctxt_switches/{s+=$2} END{print s}')
c0=$(awk '{print $14+$15}' /proc/$SPID/stat)
a0=$(curl -s $URL/metrics | awk '/^mnemo_commit_appends_total/{print $2}')
g0=$(curl -s $URL/metrics | awk '/^mnemo_commit_groups_total/{print $2}')
if [ -n "$PERF" ]; then perf record ${PERFOPT:--g} -p $SPID -o $W/perf.data 2>/dev/null & PP=$!; fi
out=$(taskset -c 1 wrk -t1 -c64 -d$DUR --latency -s $BENCH/${LUA:-append.lua} "$URL" 2>&1)
if [ -n "$PERF" ]; then kill -INT $PP; wait $PP || true; fi
cs1=$(cat /proc/$SPID/task/*/status | awk '/ctxt_switches/{s+=$2} END{print s}')
for t in /proc/$SPID/task/*; do echo "$(cat $t/comm) $(awk "/ctxt_switches/{printf \"%s \", \$2}" $t/status) $(awk "{print \$14+\$15}" $t/stat)"; done > $W/tasks.txt
c1=$(awk '{print $14+$15}' /proc/$SPID/stat)
a1=$(curl -s $URL/metrics | awk '/^mnemo_commit_appends_total/{print $2}')
g1=$(curl -s $URL/metrics | awk '/^mnemo_commit_groups_total/{print $2}')
ut=$(awk '{print $14}' /proc/$SPID/stat)
kill -TERM $SPID; wait $SPID || true
rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
non2xx=$(echo "$out" | awk '/Non-2xx/{print $NF}')
p50=$(echo "$out" | awk '$1=="50%"{print $2}')
p99=$(echo "$out" | awk '$1=="99%"{print $2}')
tck=$(getconf CLK_TCK)
python3 - "$LABEL" "$BIN" "$rps" "$c0" "$c1" "$a0" "$a1" "$g0" "$g1" "$load" "$tck" "${non2xx:-0}" "$p50" "$p99" "$cs0" "$cs1" <<'PY'
import sys
l,b,rps,c0,c1,a0,a1,g0,g1,load,tck,n2,p50,p99,cs0,cs1=sys.argv[1:]
cpu=(int(c1)-int(c0))/int(tck)
na=int(float(a1))-int(float(a0)); ng=int(float(g1))-int(float(g0))
print(f"label={l} bin={b} append_rps={rps} cpu_us_per_append={cpu*1e6/max(na,1):.1f} appends={na} groups={ng} per_group={na/max(ng,1):.1f} cs_per_append={(int(cs1)-int(cs0))/max(na,1):.2f} p50={p50} p99={p99} non2xx={n2} load={load}")
PY
