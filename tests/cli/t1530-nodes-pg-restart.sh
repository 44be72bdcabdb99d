#!/bin/sh
# t1530-nodes-pg-restart.sh — PostgreSQL goes away under load and comes back (pg/ variant only).
# The test runs its own throwaway server (tests/pg/pgctl.sh, socket in a short /tmp dir) so it can
# stop it: two nodes serve appends; while the database is down every request answers 503
# (Retry-After) promptly — never a hang, a 500 or a crash; once it is back both nodes answer 201
# again without a restart, and every acknowledged message is stored exactly once.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }
PGCTL=$TESTS_DIR/pg/pgctl.sh
pgctl() { (cd / && sh "$PGCTL" "$@"); } # from /: the server runs as postgres, who cannot enter $T

PGDIR=$(mktemp -d /tmp/mnemo-t1530.XXXXXX) || exit 99
rmdir "$PGDIR"
BASE=$(pgctl start "$PGDIR") || { fail "pgctl start"; finish; }
trap 'pgctl stop "$PGDIR"' EXIT
DB=$(pg_url "$BASE" postgres)

node_start A
node_start B
at A req POST /v1/sessions '{"title":"restart"}'
S=$(jget "$OUT" 'j["session"]["id"]')

# one writer per node: key w<node>-<n>, moving on only after a 201; every status is logged
cat >"$T/writer.sh" <<'EOS'
# writer.sh NAME URL SESSION LOG ACK
n=1
while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 120 -X POST -H 'Content-Type: application/json' \
        -H "Idempotency-Key: w$1-$n" --data-binary "{\"role\":\"user\",\"content\":\"w$1 message $n\"}" \
        "$2/v1/sessions/$3/messages")
    echo "$code" >>"$4"
    if [ "$code" = 201 ]; then
        echo "w$1-$n" >>"$5"
        n=$((n + 1))
    else
        sleep 0.05
    fi
done
EOS
: >"$T/codes"
: >"$T/ack"
sh "$T/writer.sh" A "$A_URL" "$S" "$T/codes" "$T/ack" &
wa=$!
sh "$T/writer.sh" B "$B_URL" "$S" "$T/codes" "$T/ack" &
wb=$!
acked_at_least() { [ "$(grep -c . "$T/ack")" -ge "$1" ]; }
wait_until 120 "appends to flow before the restart (a first 201)" acked_at_least 1 && pass

pgctl halt "$PGDIR" || fail "pgctl halt"
# while it is down: requests answer 503 with Retry-After, on both nodes
answers() { at "$1" req GET "/v1/sessions/$S" && [ "$CODE" = "$2" ]; }
wait_until 120 "node A to answer 503 while the database is down" answers A 503 && pass
at B req POST "/v1/sessions/$S/messages" '{"role":"user","content":"while down"}' -D "$T/headers"
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "503 unavailable" "node B: an append while the database is down is refused with 503"
check "503 carries Retry-After" grep -qi '^Retry-After:' "$T/headers"
sleep 2
pgctl resume "$PGDIR" || fail "pgctl resume"

# back: both nodes recover by themselves
for n in A B; do
    wait_until 120 "node $n to serve again (200) after the database came back, without a restart" answers $n 200 && pass
done
after=$(grep -c . "$T/ack")
wait_until 120 "appends to flow again (a 201 after the restart)" acked_at_least $((after + 1)) && pass
kill "$wa" "$wb"
wait "$wa" "$wb" 2>/dev/null

check "no status other than 201 and 503 was seen (no 500, no timeout)" \
    sh -c '! grep -qv "^\(201\|503\)$" "$1"' - "$T/codes"
echo "statuses: $(sort "$T/codes" | uniq -c | tr '\n' ' ')"
# a writer killed between a commit and its 201 may leave one message the ack file lacks: retry
# each writer's next key once, as a client would
for w in A B; do
    last=$(grep -c "^w$w-" "$T/ack")
    next=$((last + 1))
    at B req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"w$w message $next\"}" -H "Idempotency-Key: w$w-$next"
    eq "$CODE" 201 "retry of w$w-$next"
done
at A req GET "/v1/sessions/$S/messages?limit=10000"
eq "$(jget "$OUT" 'sorted(set(m["content"] for m in j["messages"])) == sorted(m["content"] for m in j["messages"])')" true \
    "no message stored twice"
eq "$(jget "$OUT" 'all(sorted(int(m["content"].split()[2]) for m in j["messages"] if m["content"].startswith(w + " ")) == list(range(1, max([int(m["content"].split()[2]) for m in j["messages"] if m["content"].startswith(w + " ")]) + 1)) for w in ("wA", "wB"))')" \
    true "each writer's messages 1..n, none missing"
acked_missing=$(python3 -c '
import json, sys
have = set(m["content"] for m in json.loads(sys.argv[1])["messages"])
acks = [l.strip() for l in open(sys.argv[2]) if l.strip()]
print(sum(1 for a in acks if ("w%s message %s" % (a[1], a.split("-")[1])) not in have))' "$OUT" "$T/ack")
eq "$acked_missing" 0 "every acknowledged append is stored"
node_stop A
node_stop B
finish
