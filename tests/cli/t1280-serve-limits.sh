#!/bin/sh
# t1280-serve-limits.sh — overload and slow clients: with server.max_inflight requests in
# progress the next one is answered 429 with Retry-After (healthz still answers, and the
# server serves again once they finish); a body trickling in past server.request_timeout_ms
# is answered 408 and stores nothing.
# pg variant: none — overload and timeouts in the HTTP layer.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

# slow_post PATH BODY HELD RELEASE WAIT OUTFILE: python3 opens a connection and sends the headers
# with "Expect: 100-continue"; the server's "100 Continue" shows it has taken the request in (it
# counts it as in progress, and its request clock is running). Then it sends half the body,
# creates the file HELD, waits until the file RELEASE exists (none: no wait), waits WAIT seconds,
# sends the rest and prints the status line of the reply. Runs in the background. Progress, not
# the clock, decides what is in progress when: only WAIT is a duration, and only a lower bound.
slow_post() {
    python3 - "$URL" "$@" <<'PY' >"$6" 2>&1 &
import os, socket, sys, time, urllib.parse
url, path, body, held, release, wait = sys.argv[1:7]
body = body.encode()
u = urllib.parse.urlsplit(url)
s = socket.create_connection((u.hostname, u.port))
s.settimeout(300)  # only ends a hung test
s.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
          b"Expect: 100-continue\r\n\r\n" % (path.encode(), len(body)))
got = b""
while b"\r\n\r\n" not in got:
    chunk = s.recv(4096)
    if not chunk:
        sys.exit("the server closed the connection before 100 Continue")
    got += chunk
if not got.startswith(b"HTTP/1.1 100"):
    sys.exit("expected 100 Continue, got: %r" % got[:200])
s.sendall(body[: len(body) // 2])
open(held, "w").close()
while release != "none" and not os.path.exists(release):
    time.sleep(0.02)
time.sleep(float(wait))
s.sendall(body[len(body) // 2 :])
print(s.recv(65536).split(b"\r\n")[0].decode())
PY
}

ok mn session new --json
S=$(jget "$OUT" 'j["id"]')

MNEMO_SERVER_MAX_INFLIGHT=1 MNEMO_SERVER_REQUEST_TIMEOUT_MS=600000 serve_start
slow_post "/v1/sessions/$S/messages" '{"role":"user","content":"slow but on time"}' "$T/held1" "$T/release1" 0 "$T/slow1.txt"
SLOW=$!
held() { [ -e "$1" ]; }
wait_until 120 "the slow request to be taken in (100 Continue)" held "$T/held1"
req GET "/v1/sessions/$S"
eq "$CODE" 429 "a request beyond server.max_inflight: 429"
eq "$(jget "$OUT" 'j["error"]["code"]')" rate_limited "the error names it"
check "Retry-After is sent" sh -c 'curl -s -D - -o /dev/null "$1" | grep -qi "^retry-after: 1"' - "$URL/v1/sessions/$S"
req GET /healthz
eq "$CODE" 200 "healthz answers under overload"
: >"$T/release1"
wait $SLOW
check "the slow request itself succeeded ($(cat "$T/slow1.txt"))" grep -q ' 201 ' "$T/slow1.txt"
req GET "/v1/sessions/$S/messages"
eq "$CODE $(jget "$OUT" 'len(j["messages"])')" "200 1" "served again once the load is gone"
serve_stop

# the rest of the body comes 4 s after the server took the request in: past the 3 s however
# slow the machine, and 2 s before the connection would be closed (at twice the timeout:
# t1281-serve-bodies)
MNEMO_SERVER_REQUEST_TIMEOUT_MS=3000 serve_start
slow_post "/v1/sessions/$S/messages" '{"role":"user","content":"too slow"}' "$T/held2" none 4 "$T/slow2.txt"
wait $!
check "a body trickling past server.request_timeout_ms: 408 ($(cat "$T/slow2.txt"))" grep -q ' 408 ' "$T/slow2.txt"
req GET "/v1/sessions/$S/messages"
eq "$(jget "$OUT" '[m["content"] for m in j["messages"]]')" '["slow but on time"]' "the late request stored nothing"
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"prompt"}'
eq "$CODE" 201 "a prompt request still succeeds"
serve_stop

fails 1 'server.max_inflight' env MNEMO_SERVER_MAX_INFLIGHT=-1 "$MNEMO" --db "$DB" config show
finish
