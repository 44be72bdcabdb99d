#!/bin/sh
# t1570-serve-pg-reads.sh — on PostgreSQL a short read (history, a session, a window context)
# runs on a worker thread, not on the server's event loop (pg/ variant only; mn_db_reads_local):
# a read that waits on the database must not hold the loop and every request behind it. With
# one event loop (server.io_threads 1), reads are made to wait on a lock held in psql; while
# they wait, /healthz (answered on the loop) and another session's history (its own worker)
# answer, and the reads still wait: the answers came while the lock was held, not after. Then
# the lock goes and every read answers 200. No timing is asserted.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }
export MNEMO_TOKENIZER=heuristic
DB=$(new_db reads)

MNEMO_SERVER_IO_THREADS=1 MNEMO_BUSY_TIMEOUT_MS=120000 node_start A # reads wait as long as the test needs
at A req POST /v1/sessions '{"title":"held"}'
S=$(jget "$OUT" 'j["session"]["id"]')
at A req POST "/v1/sessions/$S/messages" '{"role":"user","content":"a message to read"}'
eq "$CODE" 201 "append"
at A req POST /v1/sessions '{"title":"free"}'
F=$(jget "$OUT" 'j["session"]["id"]')

# the lock: the messages of every session, held until the file "release" appears
: >"$T/locker.out"
(
    printf 'BEGIN;\nLOCK TABLE messages IN ACCESS EXCLUSIVE MODE;\nSELECT 1;\n'
    while [ ! -e "$T/release" ]; do sleep 0.05; done
    printf 'COMMIT;\n'
) | psql -X -q -tA "$DB" >"$T/locker.out" 2>&1 &
LOCKER=$!
wait_until 60 "the lock to be held" grep -q '^1$' "$T/locker.out"

waiting() { # how many of this database's backends wait for a lock
    psql -X -q -tA "$DB" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
        AND wait_event_type = 'Lock'"
}
for k in 1 2 3; do
    curl -s -o "$T/hist$k" -w '%{http_code}' "$A_URL/v1/sessions/$S/messages" >"$T/code$k" &
    eval "H$k=\$!"
done
curl -s -o "$T/ctx" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data-binary '{"max_tokens":2000,"strategy":"window"}' "$A_URL/v1/sessions/$S/context" >"$T/ctxcode" &
C=$!
at_least_four() { [ "$(waiting)" -ge 4 ]; }
wait_until 60 "the three histories and the context to wait on the lock" at_least_four

at A req GET /healthz "" --max-time 60 # before the fix: no answer until the lock went
eq "$CODE" 200 "/healthz answers while reads wait on the database"
eq "$(waiting)" 4 "and the reads are still waiting (answered during the lock, not after)"
at A req GET "/v1/sessions/$F" "" --max-time 60
eq "$CODE" 200 "a session read answers meanwhile (it reads no locked table)"
eq "$(waiting)" 4 "the reads still wait"

touch "$T/release"
wait "$LOCKER"
for k in 1 2 3; do
    eval "wait \$H$k"
    eq "$(cat "$T/code$k")" 200 "history $k answers once the lock is gone"
    check "history $k has the message" grep -q 'a message to read' "$T/hist$k"
done
wait "$C"
eq "$(cat "$T/ctxcode")" 200 "the window context answers once the lock is gone"
check "and holds the message" grep -q 'a message to read' "$T/ctx"
node_stop A
finish
