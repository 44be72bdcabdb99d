#!/bin/sh
# t1285-serve-framing.sh — `mnemo serve` reads a request's framing one way only (RFC 9112): a
# header name with whitespace before its colon ("Content-Length : N"), a header folded onto the
# next line (obs-fold, here Transfer-Encoding), Transfer-Encoding given twice or in HTTP/1.0 are
# refused with 400 and the connection closed, so a body smuggled behind them never runs as a
# second request (no session is created); well-framed requests, pipelined, still run. Every
# response says X-Content-Type-Options: nosniff (JSON, errors, the page, export, MCP, metrics).
# Raw sockets: tests/cli/rawhttp.py.
# pg variant: none — HTTP framing.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

raw() { python3 "$TESTS_DIR/cli/rawhttp.py" "$URL" raw; }
CT='Content-Type: application/json'
# smuggled ID: a whole request that creates session ID and asks to close the connection
smuggled() {
    _b="{\"id\":\"$1\"}"
    printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' \
        "$CT" ${#_b} "$_b"
}
# absent ID: the session was not created
absent() { ! "$MNEMO" --db "$DB" session show "$1" >/dev/null 2>&1; }

ok mn session new --json
serve_start

# whitespace before the colon: libmicrohttpd 0.9.75 keeps it in the name, so "Content-Length "
# framed nothing and the body ran as the next request
ID1=0190a000-0000-7000-8000-000000128501
IN=$(smuggled "$ID1")
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Length : %d\r\n\r\n%s' "$CT" ${#IN} "$IN" | raw)" \
    "400 closed" "Content-Length with a space before the colon: 400, connection closed"
check "the body did not run as a request" absent "$ID1"
ID2=0190a000-0000-7000-8000-000000128502
IN=$(smuggled "$ID2")
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Length\t: %d\r\n\r\n%s' "$CT" ${#IN} "$IN" | raw)" \
    "400 closed" "Content-Length with a tab before the colon: 400"
check "the body did not run as a request" absent "$ID2"
ID3=0190a000-0000-7000-8000-000000128503
IN=$(smuggled "$ID3")
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nTransfer-Encoding : chunked\r\n\r\n%s' "$CT" "$IN" | raw)" \
    "400 closed" "Transfer-Encoding with a space before the colon: 400"
check "the body did not run as a request" absent "$ID3"

# obs-fold: a line starting with a space continues the previous header
ID4=0190a000-0000-7000-8000-000000128504
IN=$(smuggled "$ID4")
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nTransfer-Encoding:\r\n chunked\r\n\r\n%s' "$CT" "$IN" | raw)" \
    "400 closed" "a folded Transfer-Encoding: 400"
check "the body did not run as a request" absent "$ID4"
ID5=0190a000-0000-7000-8000-000000128505
IN=$(smuggled "$ID5")
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nX-Note: a\r\n\tb\r\nContent-Length: 2\r\n\r\n{}%s' "$CT" "$IN" | raw)" \
    "400 closed" "any folded header (a tab): 400"
check "the body did not run as a request" absent "$ID5"

# Transfer-Encoding twice, a list, or in HTTP/1.0 (which has none)
ID6=0190a000-0000-7000-8000-000000128506
IN=$(smuggled "$ID6")
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s' "$CT" "$IN" | raw)" \
    "400 closed" "Transfer-Encoding on two lines: 400"
check "the body did not run as a request" absent "$ID6"
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n' "$CT" | raw)" \
    "501 closed" "a coding other than chunked alone: 501"
ID7=0190a000-0000-7000-8000-000000128507
IN=$(smuggled "$ID7")
eq "$(printf 'POST /v1/sessions HTTP/1.0\r\nHost: 127.0.0.1\r\n%s\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n%s' "$CT" "$IN" | raw)" \
    "400 closed" "Transfer-Encoding in HTTP/1.0: 400"
check "the body did not run as a request" absent "$ID7"
ID8=0190a000-0000-7000-8000-000000128508
IN=$(smuggled "$ID8")
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}%s' "$CT" "$IN" | raw)" \
    "400 closed" "two different Content-Length values: 400, connection closed"
check "the body did not run as a request" absent "$ID8"

# well framed, pipelined on one connection: both run
ID9=0190a000-0000-7000-8000-000000128509
B='{"title":"first"}'
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nContent-Length: %d\r\n\r\n%s%s' "$CT" ${#B} "$B" "$(smuggled "$ID9")" | raw)" \
    "201 201 closed" "two well-framed requests on one connection: both answered"
ok mn session show "$ID9"
B='{"title":"chunked"}'
eq "$(printf 'POST /v1/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n' "$CT" ${#B} "$B" | raw)" \
    "201 closed" "a chunked body: read"

# nosniff on every kind of response
nosniff() { curl -s -o /dev/null -D - "$@" | tr -d '\r' | grep -qi '^x-content-type-options: nosniff$'; }
S=$(jget "$(curl -s -X POST -H "$CT" --data '{}' "$URL/v1/sessions")" 'j["session"]["id"]')
check "nosniff: a JSON answer" nosniff "$URL/v1/sessions/$S"
check "nosniff: a 404" nosniff "$URL/v1/nothing"
check "nosniff: a 400" nosniff "$URL/v1/sessions/$S/messages?limit=x"
check "nosniff: a 403 (foreign Origin)" nosniff -H 'Origin: http://evil.example' "$URL/v1/sessions/$S"
check "nosniff: a 415" nosniff -X POST -H 'Content-Type: text/plain' --data x "$URL/v1/sessions"
check "nosniff: the web page" nosniff "$URL/"
check "nosniff: the web page's 405" nosniff -X POST -H "$CT" --data '{}' "$URL/"
check "nosniff: the export stream" nosniff "$URL/v1/export?session_id=$S"
check "nosniff: MCP" nosniff -X POST -H "$CT" -H 'Accept: application/json, text/event-stream' \
    --data '{"jsonrpc":"2.0","id":1,"method":"ping"}' "$URL/mcp"
check "nosniff: /metrics" nosniff "$URL/metrics"
check "nosniff: /healthz" nosniff "$URL/healthz"
check "nosniff: /openapi.json" nosniff "$URL/openapi.json"
serve_stop
finish
