#!/bin/sh
# run.sh — the PostgreSQL anchor: PostgreSQL's own insert rate (pgbench) next to mnemo serve's
# append / history / context rates (bench/server's wrk scripts) on SQLite, on PostgreSQL with one
# node, and on PostgreSQL with two nodes, all in one run on one machine, printed as a table with
# ratios to SQLite. A throwaway server (tests/pg/pgctl.sh) in /tmp; nothing else is touched.
# usage: sh bench/pg/run.sh
#   env: MNEMO (default build/rel/mnemo), DUR (wrk/pgbench seconds, 10), CONNS (64),
#        SESSIONS (200), MESSAGES (50 per session)
# needs: postgresql (server + pgbench), wrk, curl, python3. Numbers from a shared, noisy machine
# are indicative only: compare columns of the same run, never across runs.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MNEMO=${MNEMO:-$ROOT/build/rel/mnemo}
DUR=${DUR:-10}
CONNS=${CONNS:-64}
SESSIONS=${SESSIONS:-200}
MESSAGES=${MESSAGES:-50}
W=$(mktemp -d /tmp/mnemo-benchpg.XXXXXX)
chmod 755 "$W" # the server runs as postgres under root: it must reach $W/pg
PGDIR=$W/pg
PIDS=
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    (cd / && sh "$ROOT/tests/pg/pgctl.sh" stop "$PGDIR") || true
    rm -rf "$W"
}
trap cleanup EXIT INT TERM
[ -x "$MNEMO" ] || { echo "bench/pg: $MNEMO not found (make, or MNEMO=path)" >&2; exit 1; }
export MNEMO_TOKENIZER=heuristic

BASE=$(cd / && sh "$ROOT/tests/pg/pgctl.sh" start "$PGDIR")
dburl() { printf '%s\n' "$BASE" | sed "s|^\([a-z]*://[^/]*\)/[^?]*|\1/$1|"; }
psql -X -q "$BASE" -c "CREATE DATABASE pgbench" -c "CREATE DATABASE mnemo"
PGB=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pgbench
[ -x "$PGB" ] || PGB=pgbench

# 1. PostgreSQL alone: pgbench's tables, then single-row inserts from CONNS clients
"$PGB" -i -q -s 10 "$(dburl pgbench)" >"$W/pgbench-init.log" 2>&1
echo 'INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:client_id % 100 + 1, 1, 1, 1, now());' >"$W/insert.sql"
"$PGB" -n -f "$W/insert.sql" -c "$CONNS" -j 2 -T "$DUR" "$(dburl pgbench)" >"$W/pgbench.log" 2>&1
PG_INSERT=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$W/pgbench.log" | head -1)

# 2. the same store on both backends: an export made up here, imported into SQLite, migrated to PG
python3 "$HERE/make_store.py" "$SESSIONS" "$MESSAGES" >"$W/store.jsonl"
"$MNEMO" --db "$W/store.sqlite" import "$W/store.jsonl" >/dev/null
"$MNEMO" migrate --from "$W/store.sqlite" --to "$(dburl mnemo)" >/dev/null 2>&1

start_node() { # start_node DB OUTFILE: sets NODE_URL
    "$MNEMO" --db "$1" serve --listen 127.0.0.1:0 >"$2" 2>"$2.err" &
    PIDS="$PIDS $!"
    for _ in $(seq 1 300); do [ -s "$2" ] && break; sleep 0.1; done
    NODE_URL=$(head -n1 "$2")
}
stop_nodes() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
    PIDS=
}
rate() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1"; }
wrk_one() { # wrk_one WORKLOAD URL CONNS OUT
    IDS_FILE=$W/ids.txt BENCH_DIR=$ROOT/bench/server wrk -t1 -c"$3" -d"${DUR}s" -s "$ROOT/bench/server/$1.lua" "$2" >"$4" 2>&1
}
ids() {
    curl -s "$1/v1/sessions?limit=1000" | python3 -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]: print(s["id"])' >"$W/ids.txt"
}

# 3. wrk: one node on SQLite, one node on PostgreSQL, two nodes on PostgreSQL (half the
# connections each, at the same time; the rates add up)
: >"$W/results"
start_node "$W/store.sqlite" "$W/a.url"
ids "$NODE_URL"
for w in append history context; do wrk_one $w "$NODE_URL" "$CONNS" "$W/sqlite.$w"; echo "sqlite $w $(rate "$W/sqlite.$w")" >>"$W/results"; done
stop_nodes
start_node "$(dburl mnemo)" "$W/b.url"
for w in append history context; do wrk_one $w "$NODE_URL" "$CONNS" "$W/pg1.$w"; echo "pg1 $w $(rate "$W/pg1.$w")" >>"$W/results"; done
URL1=$NODE_URL
start_node "$(dburl mnemo)" "$W/c.url"
URL2=$NODE_URL
for w in append history context; do
    wrk_one $w "$URL1" $((CONNS / 2)) "$W/pg2a.$w" &
    p=$!
    wrk_one $w "$URL2" $((CONNS / 2)) "$W/pg2b.$w"
    wait $p
    echo "pg2 $w $(python3 -c 'import sys; print(float(sys.argv[1]) + float(sys.argv[2]))' "$(rate "$W/pg2a.$w")" "$(rate "$W/pg2b.$w")")" >>"$W/results"
done
stop_nodes

python3 - "$W/results" "${PG_INSERT:-0}" "$CONNS" "$DUR" <<'PY'
import sys
r = {}
for line in open(sys.argv[1]):
    k, w, v = line.split()
    r[(k, w)] = float(v or 0)
print(f"mnemo serve, {sys.argv[3]} connections, {sys.argv[4]} s per run (requests/s; ratio to SQLite)")
print(f"{'workload':10} {'sqlite':>10} {'pg 1 node':>18} {'pg 2 nodes':>18}")
for w in ("append", "history", "context"):
    s = r.get(("sqlite", w), 0)
    cell = lambda k: f"{r.get((k, w), 0):10.0f} ({r.get((k, w), 0) / s:4.2f}x)" if s else f"{r.get((k, w), 0):10.0f}"
    print(f"{w:10} {s:10.0f} {cell('pg1'):>18} {cell('pg2'):>18}")
pg = float(sys.argv[2])
print(f"\nPostgreSQL alone, pgbench single-row INSERT, {sys.argv[3]} clients: {pg:.0f} tx/s")
if pg and r.get(("pg1", "append")):
    print(f"mnemo append on PostgreSQL (1 node) / pgbench insert: {r[('pg1', 'append')] / pg:.2f}x")
PY
