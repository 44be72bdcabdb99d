#!/bin/sh
# replicas.sh — context builds with reads on the primary vs on one streaming hot standby, in one
# run: a throwaway primary and its standby (tests/pg/pgctl.sh start / standby), one store, one
# `mnemo serve` node at a time, bench/server's context.lua through wrk. For each: contexts/s, and
# the CPU the primary's and the standby's server processes spent per context (from /proc: the
# postmaster, its live children, and the children it has reaped). The figure that matters is the
# primary's CPU per context: what a replica takes off the server every node shares.
# usage: sh bench/pg/replicas.sh
#   env: MNEMO (default build/rel/mnemo), DUR (wrk seconds, 10), CONNS (16), SESSIONS (200),
#        MESSAGES (50 per session), ROUNDS (3, interleaved)
# needs: postgresql, wrk, curl, python3. A shared 2-core machine: compare columns of one run.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MNEMO=${MNEMO:-$ROOT/build/rel/mnemo}
DUR=${DUR:-10}
CONNS=${CONNS:-16}
SESSIONS=${SESSIONS:-200}
MESSAGES=${MESSAGES:-50}
ROUNDS=${ROUNDS:-3}
W=$(mktemp -d /tmp/mnemo-benchrep.XXXXXX)
chmod 755 "$W"
PIDS=
pgctl() { (cd / && sh "$ROOT/tests/pg/pgctl.sh" "$@"); }
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    pgctl stop "$W/standby" || true
    pgctl stop "$W/pg" || true
    rm -rf "$W"
}
trap cleanup EXIT INT TERM
[ -x "$MNEMO" ] || { echo "bench/pg: $MNEMO not found (make, or MNEMO=path)" >&2; exit 1; }
export MNEMO_TOKENIZER=heuristic

BASE=$(pgctl start "$W/pg")
psql -X -q "$BASE" -c "CREATE DATABASE mnemo"
dburl() { printf '%s\n' "$1" | sed "s|^\([a-z]*://[^/]*\)/[^?]*|\1/$2|"; }
python3 "$HERE/make_store.py" "$SESSIONS" "$MESSAGES" >"$W/store.jsonl"
"$MNEMO" --db "$W/store.sqlite" import "$W/store.jsonl" >/dev/null
"$MNEMO" migrate --from "$W/store.sqlite" --to "$(dburl "$BASE" mnemo)" >/dev/null 2>&1
RBASE=$(pgctl standby "$W/pg" "$W/standby")
PRIMARY=$(dburl "$BASE" mnemo)
REPLICA=$(dburl "$RBASE" mnemo)

# pcpu PID: CPU seconds of one process so far
pcpu() { python3 -c 'import os,sys; f=open("/proc/%s/stat" % sys.argv[1]).read().rsplit(")",1)[1].split(); print((int(f[11])+int(f[12]))/os.sysconf("SC_CLK_TCK"))' "$1"; }
# cpu DIR: CPU seconds of the server in DIR so far (postmaster + live children + reaped ones)
cpu() {
    python3 - "$(head -n1 "$1/data/postmaster.pid")" <<'PY'
import os, sys
hz = os.sysconf("SC_CLK_TCK")
pm = sys.argv[1]
def fields(pid):
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()
f = fields(pm)
ticks = sum(int(x) for x in f[11:15])  # utime stime cutime cstime
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            g = fields(pid)
        except OSError:
            continue
        if g[1] == pm:  # ppid
            ticks += int(g[11]) + int(g[12])
print(ticks / hz)
PY
}
start_node() { # start_node OUTFILE [env...]: sets NODE_URL
    _out=$1
    shift
    env "$@" "$MNEMO" --db "$PRIMARY" serve --listen 127.0.0.1:0 >"$_out" 2>"$_out.err" &
    NODE_PID=$!
    PIDS="$PIDS $!"
    for _ in $(seq 1 300); do [ -s "$_out" ] && break; sleep 0.1; done
    NODE_URL=$(head -n1 "$_out")
}
stop_nodes() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    PIDS=
}
rate() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1"; }
reqs() { sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$1"; }

: >"$W/results"
r=1
while [ $r -le "$ROUNDS" ]; do
    for mode in primary replica; do
        if [ $mode = replica ]; then start_node "$W/$mode.url" MNEMO_PG_REPLICAS="$REPLICA"; else start_node "$W/$mode.url"; fi
        curl -s "$NODE_URL/v1/sessions?limit=1000" | python3 -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]: print(s["id"])' >"$W/ids.txt"
        p0=$(cpu "$W/pg")
        s0=$(cpu "$W/standby")
        n0=$(pcpu "$NODE_PID")
        IDS_FILE=$W/ids.txt BENCH_DIR=$ROOT/bench/server /usr/bin/time -f "%U %S" -o "$W/wrk.cpu" wrk -t1 \
            -c"$CONNS" -d"${DUR}s" -s "$ROOT/bench/server/context.lua" "$NODE_URL" >"$W/$mode.$r" 2>&1
        p1=$(cpu "$W/pg")
        s1=$(cpu "$W/standby")
        n1=$(pcpu "$NODE_PID")
        wrk_cpu=$(awk '{ print $1 + $2 }' "$W/wrk.cpu")
        curl -s "$NODE_URL/metrics" | grep '^mnemo_replica_reads_total' >"$W/$mode.$r.metrics" || true
        echo "$mode $r $(rate "$W/$mode.$r") $(reqs "$W/$mode.$r") $p0 $p1 $s0 $s1 $n0 $n1 $wrk_cpu" >>"$W/results"
        stop_nodes
    done
    r=$((r + 1))
done

python3 - "$W/results" "$CONNS" "$DUR" "$(nproc)" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, rnd, rate, n, p0, p1, s0, s1, n0, n1, wrk = line.split()
    n = max(int(n), 1)
    per = lambda a, b: (float(b) - float(a)) * 1e6 / n
    rows.setdefault(mode, []).append((float(rate), per(p0, p1), per(s0, s1), per(n0, n1), float(wrk) * 1e6 / n))
cores = int(sys.argv[4])
print(f"context builds, one node, {sys.argv[2]} connections, {sys.argv[3]} s a run; medians of {len(rows['primary'])} interleaved rounds")
print(f"{'reads on':10} {'contexts/s':>11} {'primary':>9} {'standby':>9} {'node':>9} {'wrk':>9}  CPU µs per context; model: {cores} cores / their sum")
med = {}
for mode in ("primary", "replica"):
    med[mode] = [statistics.median(x[i] for x in rows[mode]) for i in range(5)]
    rate, pc, sc, nc, wc = med[mode]
    model = cores * 1e6 / (pc + sc + nc + wc)
    print(f"{mode:10} {rate:11.0f} {pc:9.0f} {sc:9.0f} {nc:9.0f} {wc:9.0f}  model {model:6.0f}/s, measured {rate / model:4.2f}x of it")
p, q = med["primary"], med["replica"]
if p[1] > 0:
    print(f"primary CPU per context with reads on the replica: {q[1] / p[1]:.2f}x of reads on the primary")
# docs/scale-out.md#throughput-model: N nodes of C cores, a primary and R standbys of M cores each
node, prim, rep = p[3], p[1], q[2]
rest = q[1]  # what the primary still spends per context when a replica serves the reads
print("model, contexts/s (node-bound | database-bound), from the CPU above:")
for n_nodes, c, m in ((2, 8, 8), (4, 8, 16), (8, 8, 32)):
    line = f"  {n_nodes} nodes x {c} cores, database servers of {m} cores:"
    for r in (0, 1, 2, 4):
        db = m * 1e6 / prim if r == 0 else min(m * 1e6 / max(rest, 1), r * m * 1e6 / rep)
        line += f"  R={r}: {min(n_nodes * c * 1e6 / node, db):8.0f}"
    print(line)
PY
