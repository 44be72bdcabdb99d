#!/bin/sh
# t1281-serve-bodies.sh — request bodies cannot hold `mnemo serve`'s memory or connections, nor
# be read two ways, nor be kept when the request is refused anyway: a body declared over --max-body is refused before it is sent when the client
# asks first (Expect: 100-continue), and so is a request past server.max_inflight, without the
# API key or from a foreign Origin; a refused request's body is read and dropped, not kept; a body trickling in is closed at twice
# server.request_timeout_ms; a request whose length is declared two ways (two Content-Length
# values, or Content-Length with Transfer-Encoding) or with a transfer coding the server cannot
# read is refused and stores nothing. Raw sockets (tests/cli/rawbody.py); no timing is asserted,
# only outcomes within generous deadlines.
# pg variant: none — request bodies in the HTTP layer.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

raw() { python3 "$TESTS_DIR/cli/rawbody.py" "$URL" "$@"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$SPID/status"; }
# hold N: N connections each declare 8 MB and send 7 MB of it, then wait (in the background:
# HOLD is its pid); sets GREW to how many kB the server's RSS grew once they are sent
held() { [ -e "$1" ]; }
hold() {
    rm -f "$T/ready"
    _before=$(rss_kb)
    python3 "$TESTS_DIR/cli/rawbody.py" "$URL" hold "$P" "$1" 8000000 7000000 "$T/ready" &
    HOLD=$!
    wait_until 120 "$1 connections to send 7 MB each" held "$T/ready"
    sleep 1
    GREW=$(($(rss_kb) - _before))
    echo "# RSS grew by $GREW kB with $1 bodies of 7 MB arriving"
}

ok mn session new --json
S=$(jget "$OUT" 'j["id"]')
P="/v1/sessions/$S/messages"
MSG='{"role":"user","content":"framed once"}'

serve_start
# asked first: 413 instead of "100 Continue", so the client never sends the 100 MB
eq "$(raw expect "$P" 100000000 | cut -d' ' -f2)" 413 "a declared body over --max-body with Expect: 413 before it is sent"
eq "$(raw expect "$P" 100 | cut -d' ' -f2)" 100 "a declared body within the limit with Expect: 100 Continue"

# framing: one length, read one way
eq "$(printf '%s' "$MSG" | raw send "$P" "Content-Length: ${#MSG}" "Content-Length: 5" | cut -d' ' -f2)" 400 \
    "two different Content-Length values: 400"
eq "$(printf '5\r\nhello\r\n0\r\n\r\n' | raw send "$P" "Content-Length: 5" "Transfer-Encoding: chunked" | cut -d' ' -f2)" \
    400 "Content-Length with Transfer-Encoding: 400"
eq "$(printf '%s' "$MSG" | raw send "$P" "Transfer-Encoding: gzip" | cut -d' ' -f2)" 501 \
    "a transfer coding other than chunked: 501"
req GET "$P"
eq "$(jget "$OUT" 'len(j["messages"])')" 0 "the refused requests stored nothing"
eq "$(printf '%s' "$MSG" | raw send "$P" "Content-Length: ${#MSG}" "Content-Length: ${#MSG}" | cut -d' ' -f2)" 400 \
    "the same Content-Length twice: refused (a proxy in front may read either)"
eq "$(printf '%s' "$MSG" | raw send "$P" "Content-Length: ${#MSG}" | cut -d' ' -f2)" 201 \
    "one Content-Length: read"
LEN=$(printf '%x' ${#MSG})
eq "$(printf '%s\r\n%s\r\n0\r\n\r\n' "$LEN" "$MSG" | raw send "$P" "Transfer-Encoding: chunked" | cut -d' ' -f2)" 201 \
    "a chunked body: read"
req GET "$P"
eq "$(jget "$OUT" 'len(j["messages"])')" 2 "the two well-framed appends stored"
serve_stop

# past server.max_inflight: the first of 9 connections is in progress (its 7 MB body half
# sent), the other 8 are refused and their bodies dropped as they come, not kept until the 429
MNEMO_SERVER_MAX_INFLIGHT=1 serve_start
hold 9
check "refused bodies are not kept: RSS grew by $((GREW / 1024)) MB, under 40 MB (8 kept: 56+)" test "$GREW" -lt 40960
eq "$(raw expect "$P" 50 | cut -d' ' -f2)" 429 "past server.max_inflight with Expect: 429 before the body is sent"
eq "$(printf '%s' "$MSG" | raw send "$P" "Content-Length: ${#MSG}" | cut -d' ' -f2)" 429 \
    "past server.max_inflight without Expect: 429 after the body"
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
wait_until 120 "the held request to end" sh -c 'curl -s -o /dev/null -w "%{http_code}" "$1" | grep -q 200' - "$URL$P"
serve_stop

# with an API key, a request without it is refused on its headers: at once when it asks first,
# else after its body, which is dropped as it comes (not kept: no key, no memory)
KEY=key-bodies-0123456789
MNEMO_SERVER_API_KEYS="$(printf '%s' "$KEY" | sha256sum | cut -d' ' -f1):*" serve_start
eq "$(raw expect "$P" 100 | cut -d' ' -f2)" 401 "no key, with Expect: 401 before the body"
eq "$(raw expect "$P" 100 "Authorization: Bearer $KEY" | cut -d' ' -f2)" 100 "the key, with Expect: 100 Continue"
eq "$(raw expect "$P" 100 "Authorization: Bearer $KEY" "Origin: http://evil.example" | cut -d' ' -f2)" 403 \
    "a foreign Origin, with Expect: 403 before the body"
hold 8
check "bodies without a key are not kept: RSS grew by $((GREW / 1024)) MB, under 24 MB (kept: 56+)" test "$GREW" -lt 24576
kill "$HOLD" 2>/dev/null
wait "$HOLD" 2>/dev/null
eq "$(printf '%s' "$MSG" | raw send "$P" "Content-Length: ${#MSG}" | cut -d' ' -f2)" 401 "no key, without Expect: 401 after the body"
eq "$(printf '%s' "$MSG" | raw send "$P" "Content-Length: ${#MSG}" "Authorization: Bearer $KEY" | cut -d' ' -f2)" 201 \
    "the key: stored"
serve_stop

# a body sent a byte every 0.25 s: each byte used to keep the connection (the idle timeout
# restarts); now it is closed at twice server.request_timeout_ms
MNEMO_SERVER_REQUEST_TIMEOUT_MS=500 MNEMO_SERVER_IDLE_TIMEOUT=600 serve_start
eq "$(raw trickle "$P" 60)" closed "a trickling body is closed (server.request_timeout_ms 500, idle 600 s)"
req GET /healthz
eq "$CODE" 200 "served after"
serve_stop
finish
