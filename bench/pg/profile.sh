#!/bin/sh
# profile.sh — where an append group's time goes on PostgreSQL: one or two `mnemo serve` nodes
# under bench/server's append.lua, with pg_stat_statements loaded, pg_stat_activity sampled every
# 50 ms during the run (wait events of the mnemo backends) and the group committer's counters
# (/metrics) read before and after. A throwaway server (tests/pg/pgctl.sh) in /tmp.
# usage: sh bench/pg/profile.sh
#   env: MNEMO (default build/rel/mnemo), NODES (1 or 2), WORKLOAD (append; or history, context),
#        DUR (10), CONNS (64),
#        SESSIONS (200), MESSAGES (50)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MNEMO=${MNEMO:-$ROOT/build/rel/mnemo}
NODES=${NODES:-1}
DUR=${DUR:-10}
CONNS=${CONNS:-64}
SESSIONS=${SESSIONS:-200}
MESSAGES=${MESSAGES:-50}
W=$(mktemp -d /tmp/mnemo-pgprof.XXXXXX)
chmod 755 "$W"
PGDIR=$W/pg
PIDS=
cleanup() {
    for p in $PIDS; do kill -TERM "$p" 2>/dev/null || true; done
    (cd / && sh "$ROOT/tests/pg/pgctl.sh" stop "$PGDIR") || true
    rm -rf "$W"
}
trap cleanup EXIT INT TERM
export MNEMO_TOKENIZER=heuristic
BASE=$(cd / && sh "$ROOT/tests/pg/pgctl.sh" start "$PGDIR")
(cd / && sh "$ROOT/tests/pg/pgctl.sh" halt "$PGDIR")
echo "shared_preload_libraries = 'pg_stat_statements'" >>"$PGDIR/data/postgresql.conf"
echo "track_io_timing = on" >>"$PGDIR/data/postgresql.conf"
(cd / && sh "$ROOT/tests/pg/pgctl.sh" resume "$PGDIR")
dburl() { printf '%s\n' "$BASE" | sed "s|^\([a-z]*://[^/]*\)/[^?]*|\1/$1|"; }
psql -X -q "$BASE" -c "CREATE DATABASE mnemo"
psql -X -q "$(dburl mnemo)" -c "CREATE EXTENSION pg_stat_statements"

python3 "$HERE/make_store.py" "$SESSIONS" "$MESSAGES" >"$W/store.jsonl"
"$MNEMO" --db "$W/store.sqlite" import "$W/store.jsonl" >/dev/null
"$MNEMO" migrate --from "$W/store.sqlite" --to "$(dburl mnemo)" >/dev/null 2>&1

URLS=
for k in $(seq 1 "$NODES"); do
    "$MNEMO" --db "$(dburl mnemo)" serve --listen 127.0.0.1:0 >"$W/n$k.url" 2>"$W/n$k.err" &
    PIDS="$PIDS $!"
    for _ in $(seq 1 300); do [ -s "$W/n$k.url" ] && break; sleep 0.1; done
    URLS="$URLS $(head -n1 "$W/n$k.url")"
done
set -- $URLS
curl -s "$1/v1/sessions?limit=1000" | python3 -c '
import json, sys
for s in json.load(sys.stdin)["sessions"]: print(s["id"])' >"$W/ids.txt"
metrics() { for u in $URLS; do curl -s "$u/metrics" | grep "^mnemo_commit_"; done; }
metrics >"$W/m0"
# CPU seconds (utime + stime, clock ticks) of the nodes, of all PostgreSQL processes and of wrk
ticks() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0; done | awk '{s += $1} END {print s + 0}'; }
pgpids() { pgrep -d ' ' -f "postgres: .*mnemo|postgres -D $PGDIR|postgres: (walwriter|checkpointer|background writer)" || true; }
NODE0=$(ticks $PIDS)
PG0=$(ticks $(pgpids))
psql -X -q "$(dburl mnemo)" -c "SELECT pg_stat_statements_reset()" >/dev/null
# wait events of the other backends, every 50 ms
(while :; do
    psql -X -q -At "$(dburl mnemo)" -c "SELECT coalesce(wait_event_type,'CPU') || ':' || coalesce(wait_event,'-') || ' ' || state FROM pg_stat_activity WHERE datname = 'mnemo' AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    sleep 0.05
done) >"$W/waits" 2>/dev/null &
SAMPLER=$!
WRKS=
for u in $URLS; do
    IDS_FILE=$W/ids.txt BENCH_DIR=$ROOT/bench/server wrk -t1 -c$((CONNS / NODES)) -d"${DUR}s" -s "$ROOT/bench/server/${WORKLOAD:-append}.lua" "$u" >"$W/wrk.$(echo "$u" | tr -dc 0-9)" 2>&1 &
    WRKS="$WRKS $!"
done
sleep 1
top -b -n1 -d1 | sed -n '1,5p' >"$W/top"
sleep $((DUR - 2))
NODE1=$(ticks $PIDS)
PG1=$(ticks $(pgpids))
WRK1=$(ticks $WRKS)
for p in $WRKS; do wait "$p" || true; done
kill "$SAMPLER" 2>/dev/null || true
metrics >"$W/m1"
echo "== wrk (requests/s per node)"
grep -h 'Requests/sec' "$W"/wrk.* || true
echo "== group committer: groups, appends, deferrals (after minus before, all nodes)"
python3 - "$W/m0" "$W/m1" <<'PY'
import sys
def load(f):
    d = {}
    for line in open(f):
        k, v = line.split()
        d[k] = d.get(k, 0) + float(v)
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
g = b.get("mnemo_commit_groups_total", 0) - a.get("mnemo_commit_groups_total", 0)
n = b.get("mnemo_commit_appends_total", 0) - a.get("mnemo_commit_appends_total", 0)
d = b.get("mnemo_commit_deferrals_total", 0) - a.get("mnemo_commit_deferrals_total", 0)
print(f"groups {g:.0f}, appends {n:.0f}, appends per group {n / g if g else 0:.1f}, deferred {d:.0f} times")
PY
echo "== CPU in the $((DUR - 1)) s from the start to $((DUR - 1)) s into the run (seconds of CPU; the machine has $(nproc) cores)"
HZ=$(getconf CLK_TCK)
python3 -c "import sys; hz = float(sys.argv[1]); print(f'mnemo nodes {(float(sys.argv[3]) - float(sys.argv[2])) / hz:.1f}, PostgreSQL {(float(sys.argv[5]) - float(sys.argv[4])) / hz:.1f}, wrk {float(sys.argv[6]) / hz:.1f} (wrk: since its start)')" "$HZ" "$NODE0" "$NODE1" "$PG0" "$PG1" "$WRK1"
echo "== pg_stat_statements (top by total time)"
psql -X -q "$(dburl mnemo)" -c "SELECT calls, round(total_exec_time::numeric, 0) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms, rows, left(regexp_replace(query, '\s+', ' ', 'g'), 90) AS query FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 12"
echo "== wait events of the mnemo backends (samples)"
sort "$W/waits" | uniq -c | sort -rn | head -15
echo "== load"
cat "$W/top"
