#!/bin/sh
# t1280-serve-limits.sh — overload and slow clients: with server.max_inflight requests in
# progress the next one is answered 429 with Retry-After (healthz still answers, and the
# server serves again once they finish); a body trickling in past server.request_timeout_ms
# is answered 408 and stores nothing.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

# slow_post PATH BODY WAIT OUTFILE: python3 opens a connection, sends the headers and half a body, waits, sends
# the rest and prints the status line of the reply. Runs in the background.
slow_post() {
    rm -f "$4.sent"
    python3 - "$URL" "$1" "$2" "$3" "$4.sent" >"$4" 2>&1 <<'PY' &
import socket, sys, time, urllib.parse
url, path, body, wait = sys.argv[1], sys.argv[2], sys.argv[3].encode(), float(sys.argv[4])
u = urllib.parse.urlsplit(url)
s = socket.create_connection((u.hostname, u.port))
s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
          % (path.encode(), len(body)) + body[: len(body) // 2])
open(sys.argv[5], "w").close()  # the request is in progress: the test goes on from here
time.sleep(wait)
s.sendall(body[len(body) // 2 :])
print(s.recv(65536).split(b"\r\n")[0].decode())
PY
}

ok mn session new --json
S=$(jget "$OUT" 'j["id"]')

MNEMO_SERVER_MAX_INFLIGHT=1 MNEMO_SERVER_REQUEST_TIMEOUT_MS=60000 serve_start
slow_post "/v1/sessions/$S/messages" '{"role":"user","content":"slow but on time"}' 10 "$T/slow1.txt"
SLOW=$!
# on progress, not time: once its headers are sent the server counts it (retry for a while)
for _i in $(seq 1 300); do [ -e "$T/slow1.txt.sent" ] && break; sleep 0.1; done
for _i in $(seq 1 20); do
    req GET "/v1/sessions/$S"
    [ "$CODE" = 429 ] && break
    sleep 0.1
done
eq "$CODE" 429 "a request beyond server.max_inflight: 429"
eq "$(jget "$OUT" 'j["error"]["code"]')" rate_limited "the error names it"
check "Retry-After is sent" sh -c 'curl -s -D - -o /dev/null "$1" | grep -qi "^retry-after: 1"' - "$URL/v1/sessions/$S"
req GET /healthz
eq "$CODE" 200 "healthz answers under overload"
wait $SLOW
check "the slow request itself succeeded" grep -q ' 201 ' "$T/slow1.txt"
req GET "/v1/sessions/$S/messages"
eq "$CODE $(jget "$OUT" 'len(j["messages"])')" "200 1" "served again once the load is gone"
serve_stop

MNEMO_SERVER_REQUEST_TIMEOUT_MS=500 serve_start
slow_post "/v1/sessions/$S/messages" '{"role":"user","content":"too slow"}' 1.5 "$T/slow2.txt"
wait $!
check "a body trickling past server.request_timeout_ms: 408" grep -q ' 408 ' "$T/slow2.txt"
req GET "/v1/sessions/$S/messages"
eq "$(jget "$OUT" '[m["content"] for m in j["messages"]]')" '["slow but on time"]' "the late request stored nothing"
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"prompt"}'
eq "$CODE" 201 "a prompt request still succeeds"
serve_stop

fails 1 'server.max_inflight' env MNEMO_SERVER_MAX_INFLIGHT=-1 "$MNEMO" --db "$DB" config show
finish
