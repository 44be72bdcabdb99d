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
        IDS_FILE=$W/ids.txt BENCH_DIR=$ROOT/bench/server wrk -t1 -c"$CONNS" -d"${DUR}s" \
            -s "$ROOT/bench/server/context.lua" "$NODE_URL" >"$W/$mode.$r" 2>&1
        p1=$(cpu "$W/pg")
        s1=$(cpu "$W/standby")
        curl -s "$NODE_URL/metrics" | grep '^mnemo_replica_reads_total' >"$W/$mode.$r.metrics" || true
        echo "$mode $r $(rate "$W/$mode.$r") $(reqs "$W/$mode.$r") $p0 $p1 $s0 $s1" >>"$W/results"
        stop_nodes
    done
    r=$((r + 1))
done

python3 - "$W/results" "$CONNS" "$DUR" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, rnd, rate, n, p0, p1, s0, s1 = line.split()
    n = max(int(n), 1)
    rows.setdefault(mode, []).append((float(rate), (float(p1) - float(p0)) * 1e6 / n,
                                      (float(s1) - float(s0)) * 1e6 / n))
print(f"context builds, one node, {sys.argv[2]} connections, {sys.argv[3]} s a run; medians of {len(rows['primary'])} interleaved rounds")
print(f"{'reads on':10} {'contexts/s':>11} {'primary CPU/ctx':>16} {'standby CPU/ctx':>16}")
med = {}
for mode in ("primary", "replica"):
    r = rows[mode]
    med[mode] = [statistics.median(x[i] for x in r) for i in range(3)]
    rate, pc, sc = med[mode]
    print(f"{mode:10} {rate:11.0f} {pc:13.0f} µs {sc:13.0f} µs")
p, q = med["primary"], med["replica"]
if p[1] > 0:
    print(f"primary CPU per context with reads on the replica: {q[1] / p[1]:.2f}x of reads on the primary")
PY
