#!/bin/sh
# t1500-nodes.sh — two `mnemo serve` nodes on one PostgreSQL database (pg/ variant only):
# appends through both at once, interleaved (node A with one group committer, node B with
# PostgreSQL's default of two), end up as one history that reads the same from either node,
# gapless and in each writer's order; a message appended on node A is found by node B's semantic
# search (its own in-memory index, kept in step through the database's embedding log) and
# keyword search.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }

export MNEMO_EMBEDDER=hash
# node A runs one group committer (server.committers), node B the default on PostgreSQL, two:
# both paths, side by side
MNEMO_SERVER_COMMITTERS=1
export MNEMO_SERVER_COMMITTERS
node_start A
unset MNEMO_SERVER_COMMITTERS
node_start B
at A req GET /metrics
check "node A runs the one committer it was given" grep -qx 'mnemo_commit_committers 1' "$T/.body"
at B req GET /metrics
check "node B runs PostgreSQL's default of two committers" grep -qx 'mnemo_commit_committers 2' "$T/.body"
at A req POST /v1/sessions '{"title":"shared"}'
eq "$CODE" 201 "create a session on node A"
S=$(jget "$OUT" 'j["session"]["id"]')
at B req GET "/v1/sessions/$S"
eq "$CODE" 200 "node B sees the session at once"

# four writers, two per node, 25 appends each with idempotency keys, all at the same time
N=25
writer() { # writer W NODE_URL
    i=1
    while [ $i -le $N ]; do
        code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
            -H "Idempotency-Key: w$1-$i" --data-binary "{\"role\":\"user\",\"content\":\"writer $1 message $i\"}" \
            "$2/v1/sessions/$S/messages")
        [ "$code" = 201 ] || echo "writer $1 message $i: HTTP $code" >>"$T/writer.err"
        i=$((i + 1))
    done
}
: >"$T/writer.err"
writer 1 "$A_URL" &
p1=$!
writer 2 "$B_URL" &
p2=$!
writer 3 "$A_URL" &
p3=$!
writer 4 "$B_URL" &
p4=$!
wait $p1 $p2 $p3 $p4
eq "$(cat "$T/writer.err")" "" "every append through either node answered 201"

at A req GET "/v1/sessions/$S/messages?limit=1000"
HA=$OUT
at B req GET "/v1/sessions/$S/messages?limit=1000"
HB=$OUT
eq "$HB" "$HA" "the history reads the same from both nodes"
eq "$(jget "$HA" 'len(j["messages"])')" $((4 * N)) "no append lost or doubled"
eq "$(jget "$HA" '[m["seq"] for m in j["messages"]] == list(range(1, len(j["messages"]) + 1))')" true \
    "seq 1..n without gaps"
eq "$(jget "$HA" 'all([int(m["content"].split()[3]) for m in j["messages"] if m["content"].startswith("writer %d " % w)] == list(range(1, 26)) for w in (1, 2, 3, 4))')" true \
    "each writer's messages in the order it sent them"
eq "$(jget "$HA" 'all([int(m["content"].split()[3]) for m in j["messages"] if m["content"].split()[1] == str(w)] == list(range(1, '$N' + 1)) for w in (1, 2, 3, 4))')" \
    true "each writer's messages in its order"
at B req POST "/v1/sessions/$S/messages" '{"role":"user","content":"writer 1 message 1"}' -H 'Idempotency-Key: w1-1'
eq "$CODE $(jget "$OUT" 'j["messages"][0]["seq"]')" "201 $(jget "$HA" '[m["seq"] for m in j["messages"] if m["content"] == "writer 1 message 1"][0]')" \
    "a retry on the other node returns the message stored first"

# search: node B finds what node A stored (a generous deadline only ends a hung test; the time
# taken is printed, not asserted)
at A req POST "/v1/sessions/$S/messages" '{"role":"assistant","content":"the kafka consumer lag alarm fires at ninety seconds"}'
eq "$CODE" 201 "append the needle on node A"
NEEDLE=$(jget "$OUT" 'j["messages"][0]["id"]')
found_kw=
found_sem=
t0=$(date +%s%N)
give_up=$(($(date +%s) + $(deadline 120)))
while [ "$(date +%s)" -lt "$give_up" ]; do
    if [ -z "$found_kw" ]; then
        at B req GET '/v1/search?q=kafka+consumer+lag&mode=keyword&top_k=1'
        [ "$(jget "$OUT" 'j["hits"][0]["message"]["id"] if j.get("hits") else 0' 2>/dev/null)" = "$NEEDLE" ] &&
            found_kw=$((($(date +%s%N) - t0) / 1000000))
    fi
    if [ -z "$found_sem" ]; then
        at B req GET '/v1/search?q=kafka+consumer+lag+alarm&mode=semantic&top_k=1'
        [ "$(jget "$OUT" 'j["hits"][0]["message"]["id"] if j.get("hits") else 0' 2>/dev/null)" = "$NEEDLE" ] &&
            found_sem=$((($(date +%s%N) - t0) / 1000000))
    fi
    [ -n "$found_kw" ] && [ -n "$found_sem" ] && break
    sleep 0.1
done
check "node B's keyword search finds node A's message (gave up after $(deadline 120) s)" test -n "$found_kw"
check "node B's semantic search finds node A's message (gave up after $(deadline 120) s)" test -n "$found_sem"
echo "delay: keyword ${found_kw:-none} ms, semantic ${found_sem:-none} ms (node A append -> node B search)"

node_stop A
node_stop B
finish
