#!/bin/sh
# t1560-nodes-replicas.sh — reads on a streaming hot standby (postgres.replicas, --db-replica),
# read-your-writes across nodes (pg/ variant only). The test runs its own primary and standby
# (tests/pg/pgctl.sh start / standby: pg_basebackup -R) so it can pause replay and stop the
# standby: two nodes write to the primary and read through the standby; with replay paused, a
# node reads its own writes (it waits for the replica, then the primary answers), another node
# given the writer's Mnemo-Position token reads them too, never a stale history; a read without
# a token may be stale only within postgres.replica_max_lag_ms; the standby stopped under load
# loses no request; /metrics counts where the reads went. No timing is asserted.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }
PGCTL=$TESTS_DIR/pg/pgctl.sh
pgctl() { (cd / && sh "$PGCTL" "$@"); } # from /: the server runs as postgres, who cannot enter $T

PGDIR=$(mktemp -d /tmp/mnemo-t1560.XXXXXX) || exit 99
rmdir "$PGDIR"
BASE=$(pgctl start "$PGDIR") || { fail "pgctl start"; finish; }
trap 'pgctl stop "$PGDIR-standby"; pgctl stop "$PGDIR"' EXIT
RBASE=$(pgctl standby "$PGDIR" "$PGDIR-standby") || { fail "pgctl standby"; finish; }
DB=$(pg_url "$BASE" postgres)
REPLICA=$(pg_url "$RBASE" postgres)
on_replica() { psql -X -q -tA "$REPLICA" -c "$1"; }
metric() { curl -s "$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }

# the flag and the setting are refused on SQLite, and name what is wrong
"$MNEMO" --db "$T/x.db" --db-replica "$REPLICA" stats >"$T/out" 2>"$T/err"
eq "$?" 1 "--db-replica on a SQLite file fails"
check "and says replicas need PostgreSQL" grep -q "read replicas need a PostgreSQL database" "$T/err"
"$MNEMO" --db "$DB" --db-replica "not-a-url" stats >"$T/out" 2>"$T/err"
eq "$?" 1 "a replica that is not a PostgreSQL URL fails"
check "and the message names the setting" grep -q "postgres.replicas" "$T/err"

MNEMO_PG_REPLICAS=$REPLICA MNEMO_PG_REPLICA_MAX_LAG_MS=300 node_start A
MNEMO_PG_REPLICAS=$REPLICA MNEMO_PG_REPLICA_MAX_LAG_MS=300 node_start B
at A req POST /v1/sessions '{"title":"replicas"}'
S=$(jget "$OUT" 'j["session"]["id"]')
at A req POST "/v1/sessions/$S/messages" '{"role":"user","content":"before the pause"}'
eq "$CODE" 201 "append on node A"
wait_until 30 "node B to read the first message through the replica" \
    sh -c "curl -s '$B_URL/v1/sessions/$S/messages' | grep -q 'before the pause'"
check "reads went to the replica" test "$(metric "$B_URL" 'mnemo_replica_reads_total{target="replica"}')" -gt 0
"$MNEMO" --db "$DB" --db-replica "$REPLICA" history "$S" >"$T/out" 2>"$T/err"
check "the CLI reads through --db-replica" grep -q 'before the pause' "$T/out"

# replay paused: the standby stays behind every write from now on
on_replica "SELECT pg_wal_replay_pause()" >/dev/null
curl -s -D "$T/head" -o /dev/null -X POST -H 'Content-Type: application/json' \
    --data-binary '{"role":"user","content":"while paused"}' "$A_URL/v1/sessions/$S/messages"
POS=$(awk 'tolower($1) == "mnemo-position:" { print $2 }' "$T/head" | tr -d '\r')
check "the append answers with its position ($POS)" test -n "$POS"
at A req GET "/v1/sessions/$S/messages"
check "node A reads its own write (its replica is behind)" echo "$OUT" | grep -q 'while paused'
at B req GET "/v1/sessions/$S/messages" "" -H "Mnemo-Read-After: $POS"
eq "$CODE" 200 "node B with A's token"
check "node B with the token reads A's write, never a stale history" echo "$OUT" | grep -q 'while paused'
at B req POST "/v1/sessions/$S/context" '{"max_tokens":1000}' -H "Mnemo-Read-After: $POS"
check "and its context holds it" echo "$OUT" | grep -q 'while paused'
check "the wait was counted" test "$(metric "$B_URL" mnemo_replica_waits_total)" -gt 0
at B req GET "/v1/sessions/$S/messages" "" -H "Mnemo-Read-After: 0/0/0"
eq "$CODE" 400 "a token that is not a position is refused"
check "naming the header" echo "$OUT" | grep -q 'Mnemo-Read-After'
# a read without a token may be stale only within the bound: later, the primary answers it
sleep 1
at B req GET "/v1/sessions/$S/messages"
check "past replica_max_lag_ms a lagging replica is passed over" echo "$OUT" | grep -q 'while paused'
check "the skip was counted" test "$(metric "$B_URL" 'mnemo_replica_skips_total{reason="lagging"}')" -gt 0
on_replica "SELECT pg_wal_replay_resume()" >/dev/null

# the standby stopped under load: every read is still answered (by the primary), none lost
: >"$T/codes"
i=0
while [ $i -lt 40 ]; do
    [ $i -eq 10 ] && pgctl halt "$PGDIR-standby"
    curl -s -o /dev/null -w '%{http_code}\n' "$B_URL/v1/sessions/$S/messages" >>"$T/codes"
    i=$((i + 1))
done
eq "$(sort -u "$T/codes" | tr '\n' ' ')" "200 " "40 reads, the standby stopped after 10: every one answered 200"
check "the fall was counted" test "$(metric "$B_URL" 'mnemo_replica_skips_total{reason="down"}')" -gt 0
eq "$(metric "$B_URL" 'mnemo_replicas{state="up"}')" 0 "/metrics shows the replica down"
check "and it was logged" grep -q "cannot be reached" "$T/node-B.err"
pgctl resume "$PGDIR-standby"
replica_up() {
    curl -s -o /dev/null "$B_URL/v1/sessions/$S/messages"
    [ "$(metric "$B_URL" 'mnemo_replicas{state="up"}')" = 1 ]
}
wait_until 30 "the replica to serve reads again" replica_up
node_stop A
node_stop B
finish
