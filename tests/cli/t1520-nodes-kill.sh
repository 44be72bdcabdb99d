#!/bin/sh
# t1520-nodes-kill.sh — SIGKILL a node in the middle of writes (pg/ variant only): a writer
# appends through node A with idempotency keys and records each 201 it gets; A is killed at a
# random moment, several rounds: once the writer has been answered 201 a random 1..3 more times,
# at a random point of the next request (progress decides, not the clock, so a slow machine
# kills at the same places). Every acknowledged message is there when read through node B,
# the one in flight is retried through B with its key and stored once, and B never stopped.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }
ROUNDS=${MNEMO_CRASH_ROUNDS:-5}

node_start B
at B req POST /v1/sessions '{"title":"kill"}'
S=$(jget "$OUT" 'j["session"]["id"]')
: >"$T/ack"

cat >"$T/writer.sh" <<'EOS'
# writer.sh URL SESSION FIRST-N ACK-FILE: appends k-N, k-N+1, … until killed; records the acks
n=$3
while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 300 -X POST -H 'Content-Type: application/json' \
        -H "Idempotency-Key: k-$n" --data-binary "{\"role\":\"user\",\"content\":\"message $n\"}" \
        "$1/v1/sessions/$2/messages")
    if [ "$code" = 201 ]; then
        echo "k-$n" >>"$4"
        n=$((n + 1))
    fi
done
EOS

acks() { grep -c . "$T/ack"; }
acked_at_least() { [ "$(acks)" -ge "$1" ]; }
random() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; } # 0 .. 65535

next=1
round=1
while [ $round -le $ROUNDS ]; do
    # node A: an ASan build's leak scan at exit is moot for a SIGKILL
    _asan=$ASAN_OPTIONS
    ASAN_OPTIONS=detect_leaks=0
    node_start A
    ASAN_OPTIONS=$_asan
    base=$(acks)
    want=$((1 + $(random) % 3))
    t0=$(date +%s%N)
    sh "$T/writer.sh" "$A_URL" "$S" "$next" "$T/ack" &
    wp=$!
    if wait_until 120 "round $round: $want appends through node A answered 201" acked_at_least $((base + want)); then
        # a random point of the next request: a random fraction of one request's duration
        ms=$((($(date +%s%N) - t0) / want / 1000000 * $(random) / 65536))
        sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
    fi
    kill -9 "$A_PID"
    wait "$A_PID" 2>/dev/null
    kill "$wp" 2>/dev/null
    wait "$wp" 2>/dev/null
    acked=$(wc -l <"$T/ack")
    # the message in flight when A died (committed or not): retried through B with its key
    inflight=$((acked + 1))
    at B req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"message $inflight\"}" \
        -H "Idempotency-Key: k-$inflight"
    eq "$CODE" 201 "round $round: the retry of k-$inflight through node B is accepted"
    echo "k-$inflight" >>"$T/ack"
    next=$((inflight + 1))
    at B req GET "/v1/sessions/$S/messages?limit=10000"
    eq "$(jget "$OUT" '[m["content"] for m in j["messages"]]')" \
        "$(python3 -c 'import sys; print(__import__("json").dumps(["message %d" % i for i in range(1, int(sys.argv[1]) + 1)]))' "$inflight")" \
        "round $round: every acknowledged message is there once, in order ($inflight)"
    round=$((round + 1))
done
check "the writers got acknowledgements" test "$(wc -l <"$T/ack")" -gt "$ROUNDS"
at B req GET /healthz
eq "$CODE" 200 "node B kept serving throughout"
ok integrity "$DB"
eq "$OUT" ok "the database passes pg_amcheck"
node_stop B
finish
