#!/bin/sh
# t1292-serve-origin.sh — the browser-origin policy (docs/security.md), issue #13: on loopback
# without keys only loopback Host values are served (DNS rebinding; server.allowed_hosts adds
# more); a foreign Origin is refused on every route with data (REST, Conversations, MCP) and a
# browser's cross-site fetch without Origin too; bodies must be JSON (text/plain, forms: 415).
# Also: a Conversations `after` near INT64_MAX is answered (it spun a worker forever), too many
# query parameters get a 400 naming the limit, 405 carries the route's real methods, /metrics
# is refused to a namespace-bound key.
# pg variant: none — the browser-origin policy in the HTTP layer.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

S=0190a000-0000-7000-8000-0000000013a1
ok mn session new --id "$S"
ok mn add "$S" user "the secret plan"
serve_start
PORT=${URL##*:}

# code_of ARGS...: the HTTP status curl gets (body in $T/.body)
code_of() { curl -s -o "$T/.body" -w '%{http_code}' --max-time 30 "$@"; }
error_code() { jget "$(cat "$T/.body")" 'j["error"]["code"]'; }

# ---- DNS rebinding: Host ----
for path in "/v1/export?session_id=$S" "/v1/search?q=secret" "/v1/sessions/$S/messages" /mcp /openapi.json /; do
    eq "$(code_of -H 'Host: evil.example' "$URL$path")" 403 "Host: evil.example on $path: 403"
done
eq "$(error_code)" forbidden "the error has the documented shape"
eq "$(code_of -H "Host: evil.example:$PORT" -X POST -H 'Content-Type: application/json' \
    --data '{"role":"user","content":"planted"}' "$URL/v1/sessions/$S/messages")" 403 "a write under a rebound Host: 403"
check "the message names server.allowed_hosts" grep -q 'server.allowed_hosts' "$T/.body"
for h in "127.0.0.1:$PORT" "localhost:$PORT" "localhost" "[::1]:$PORT" "LOCALHOST:$PORT"; do
    eq "$(code_of -H "Host: $h" "$URL/v1/sessions/$S")" 200 "Host: $h is served"
done
eq "$(code_of -H 'Host: evil.example' "$URL/healthz")" 200 "/healthz answers any Host (it holds no data)"
ok mn history "$S" --json
eq "$(jget "$OUT" 'len(j)')" 1 "nothing was written through the rebound Host"
serve_stop
MNEMO_SERVER_ALLOWED_HOSTS="mnemo.internal, proxy.example:8080" serve_start
PORT=${URL##*:}
eq "$(code_of -H 'Host: mnemo.internal:9999' "$URL/v1/sessions/$S")" 200 "server.allowed_hosts: a listed host (any port)"
eq "$(code_of -H 'Host: proxy.example:8080' "$URL/v1/sessions/$S")" 200 "server.allowed_hosts: a listed host:port"
eq "$(code_of -H 'Host: proxy.example:8081' "$URL/v1/sessions/$S")" 403 "server.allowed_hosts: another port of it is not"
serve_stop

# ---- cross-site requests: Origin, Sec-Fetch-Site, Content-Type ----
serve_start
PORT=${URL##*:}
post_text() { # PATH BODY [CURL ARGS]: what a no-cors fetch sends: text/plain and the page's Origin
    _p=$1 _b=$2
    shift 2
    code_of -X POST -H 'Content-Type: text/plain;charset=UTF-8' --data-binary "$_b" "$@" "$URL$_p"
}
eq "$(post_text /v1/prune '{"days":0}' -H 'Origin: http://evil.example')" 403 "prune from a foreign Origin: 403"
eq "$(post_text /v1/prune '{"days":0}')" 415 "prune with a text/plain body: 415"
eq "$(error_code)" unsupported_media_type "415 has the documented error shape"
eq "$(post_text /v1/import '{"kind":"header"}')" 415 "import with text/plain: 415"
eq "$(code_of -X POST --data-binary '{"kind":"header"}' "$URL/v1/import")" 415 \
    "import as a form (curl's default Content-Type): 415"
eq "$(post_text /v1/sessions '{}')" 415 "session create with text/plain: 415"
eq "$(post_text "/v1/sessions/$S/messages" '{"role":"user","content":"planted"}')" 415 "append with text/plain: 415"
eq "$(post_text /v1/conversations '{}')" 415 "Conversations API create with text/plain: 415"
eq "$(code_of -X POST -H 'Content-Type: multipart/form-data; boundary=x' --data-binary 'x' "$URL/mcp")" 415 \
    "MCP with a multipart body: 415"
eq "$(code_of -X DELETE -H 'Origin: http://evil.example' "$URL/v1/sessions/$S")" 403 "delete from a foreign Origin: 403"
eq "$(code_of -H 'Origin: http://evil.example' "$URL/v1/export?session_id=$S")" 403 "export read from a foreign Origin: 403"
eq "$(code_of -H 'Origin: http://127.0.0.1:1' "$URL/v1/sessions/$S")" 403 "a page on another local port is foreign"
eq "$(code_of -H 'Origin: null' "$URL/v1/sessions/$S")" 403 "Origin: null is foreign"
eq "$(code_of -H "Origin: http://localhost:$PORT@evil.com" "$URL/v1/sessions/$S")" 403 "userinfo in an Origin: 403"
eq "$(code_of -H "Origin: http://localhost:$PORT/x" "$URL/v1/sessions/$S")" 403 "a path in an Origin: 403"
eq "$(code_of -H 'Sec-Fetch-Site: cross-site' "$URL/v1/export?session_id=$S")" 403 \
    "a browser's cross-site no-cors GET (no Origin, Sec-Fetch-Site): 403"
eq "$(code_of -H 'Sec-Fetch-Site: same-site' "$URL/v1/sessions/$S")" 403 "same-site (another local port) too"
eq "$(code_of -H 'Sec-Fetch-Site: cross-site' "$URL/")" 200 "the web page itself opens from a link"
for o in "http://127.0.0.1:$PORT" "http://localhost:$PORT" "http://[::1]:$PORT"; do
    eq "$(code_of -X POST -H "Origin: $o" -H 'Content-Type: application/json; charset=utf-8' --data '{}' \
        "$URL/v1/sessions")" 201 "the server's own origin $o with JSON: 201"
done
eq "$(code_of -X POST -H 'Content-Type: application/json' "$URL/v1/sessions/$S/compact")" 200 \
    "a POST without a body needs no more than its JSON type"
eq "$(code_of -X POST "$URL/v1/sessions/$S/compact")" 200 "a POST without a body and without Content-Type is taken"
ok mn history "$S" --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" '["the secret plan"]' "nothing foreign was written"
ok mn session list --json
check "no session was pruned or planted" test "$(jget "$OUT" 'len(j)')" -eq 4
serve_stop
serve_start --allow-origin 'https://ui.example'
eq "$(code_of -X POST -H 'Origin: https://ui.example' -H 'Content-Type: application/json' --data '{}' \
    "$URL/v1/sessions")" 201 "--allow-origin: a listed Origin may write"
serve_stop
MNEMO_SERVER_ALLOWED_ORIGINS='https://proxy.example' serve_start
eq "$(code_of -H 'Origin: https://proxy.example' "$URL/v1/sessions/$S")" 200 "server.allowed_origins: a listed Origin"
eq "$(code_of -H 'Origin: https://proxy.example.evil' "$URL/v1/sessions/$S")" 403 "...and only it"

# ---- Conversations paging: an `after` near INT64_MAX is answered (it spun forever) ----
for a in msg_9000000000000000000 msg_9223372036854775807 msg_4611686018427387904; do
    eq "$(code_of "$URL/v1/conversations/conv_$S/items?after=$a&order=desc&limit=20")" 200 "items after=$a answers"
done
eq "$(jget "$(cat "$T/.body")" '[i["content"][0]["text"] for i in j["data"]]')" '["the secret plan"]' \
    "...with the items below it"

# ---- query parameters and methods ----
Q=$(python3 -c 'print("&".join("p%d=1" % i for i in range(500)))')
eq "$(code_of "$URL/v1/sessions?$Q")" 400 "500 query parameters: 400 (was no answer at all)"
check "the error names the limit" grep -q 'server.max_query_params' "$T/.body"
# libmicrohttpd kept each parameter in the connection's 64 KiB pool and, once that was full,
# answered nothing until server.header_timeout_ms: from ~1,000 short ones, or 400 of 100 bytes
Q=$(python3 -c 'print("&".join("p%d=1" % i for i in range(1000)))')
eq "$(code_of --max-time 5 "$URL/v1/sessions?$Q")" 400 "1,000 query parameters (7 KB): 400 (was no answer)"
check "...naming the count and the limit" grep -q '1000 parameters, over the limit of 100' "$T/.body"
Q=$(python3 -c 'print("&".join("p%d=%s" % (i, "x" * 100) for i in range(400)))')
eq "$(code_of --max-time 5 "$URL/v1/sessions?$Q")" 400 "400 parameters of 100 bytes (42 KB): 400 (was no answer)"
Q=$(python3 -c 'print("&".join("p%d=%s" % (i, "x" * 60) for i in range(1500)))')
c=$(code_of "$URL/v1/sessions?$Q")
check "a 96 KB query gets an answer (got $c)" sh -c "[ '$c' = 400 ] || [ '$c' = 414 ] || [ '$c' = 431 ]"
# the header limit (64 KiB a connection, docs/security.md): 60,000 bytes of header pass, 66,000 do not
H=$(python3 -c 'print("x" * 60000)')
eq "$(code_of -H "X-Big: $H" "$URL/v1/sessions")" 200 "a 60,000-byte header is read"
H=$(python3 -c 'print("x" * 66000)')
eq "$(code_of -H "X-Big: $H" "$URL/v1/sessions")" 431 "a 66,000-byte header: 431"
serve_stop
# raised to its maximum, the limit is what holds: 5,000 parameters (40 KB) are read and parsed
ok mn session new --id 0190a000-0000-7000-8000-0000000013a2
MNEMO_SERVER_MAX_QUERY_PARAMS=10000 serve_start
PORT=${URL##*:}
Q=$(python3 -c 'print("&".join(["limit=1"] + ["p%d=2" % i for i in range(4999)]))')
eq "$(code_of --max-time 5 "$URL/v1/sessions?$Q")" 400 "5,000 parameters under server.max_query_params=10000: answered"
eq "$(jget "$(cat "$T/.body")" 'j["error"]["message"].split(" (")[0]')" "p0: not a parameter of session_list" \
    "...and the query was read whole (the names are checked once all are parsed)"
Q=$(python3 -c 'print("&".join(["limit=2"] * 4999 + ["limit=1"]))')
eq "$(code_of --max-time 5 "$URL/v1/sessions?$Q")" 400 "5,000 of one name: 400 (which to take would be a guess)"
eq "$(jget "$(cat "$T/.body")" 'j["error"]["message"]')" "limit: given twice in the query" "...naming it"
# mnemo's own parse: names and values percent-decoded, empty pieces skipped
eq "$(code_of "$URL/v1/sessions?&&li%6Dit=%31&")" 200 "an encoded name and value, empty pieces: 200"
eq "$(jget "$(cat "$T/.body")" 'len(j["sessions"])')" 1 "...read as limit=1"
eq "$(code_of "$URL/v1/sessions?limit=1&bogus")" 400 "a name without a value is still a parameter: 400"
check "...naming it" grep -q 'bogus' "$T/.body"
# a NUL byte before the '?' hid the query from mnemo's parse while libmicrohttpd still read it
got=$(python3 -c '
import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
c.sendall(b"GET /v1/sessions\0?limit=1 HTTP/1.1\r\nHost: 127.0.0.1:" + sys.argv[1].encode() + b"\r\nConnection: close\r\n\r\n")
print(c.recv(65536).split(b" ")[1].decode())' "$PORT")
eq "$got" 400 "a NUL byte before the '?': 400 (0266314 answered 200 without the query)"
# names and values that are not UTF-8 were left out, which widened a filter to everything
eq "$(code_of "$URL/v1/sessions?namespace=%ff")" 400 "a value that is not UTF-8: 400 (was every namespace)"
check "...naming the parameter" grep -q 'parameter 1 is not UTF-8' "$T/.body"
eq "$(code_of "$URL/v1/sessions?limit=1&%ff=1")" 400 "a name that is not UTF-8: 400"
eq "$(code_of "$URL/v1/sessions?namespace=a%00b")" 400 "a %00 in a value: 400"
eq "$(code_of "$URL/v1/sessions/%00abc/state")" 400 "a %00 in the path: 400 (was routed as /v1/sessions: the list)"
check "...saying why" grep -q 'NUL byte' "$T/.body"
IK=$(printf 'Idempotency-Key: \377\376')
eq "$(code_of -X POST -H "$IK" -H 'Content-Type: application/json' --data '{"role":"user","content":"x"}' \
    "$URL/v1/sessions/$S/messages")" 400 "an Idempotency-Key that is not UTF-8: 400 (was dropped: a retry stored twice)"
# an error message that quotes a client's text cut inside a character was an empty body
E=$(python3 -c 'print("a" + "\u00e9" * 40)')
eq "$(code_of "$URL/v1/sessions?limit=$E")" 400 "limit=aéé…: 400"
eq "$(error_code)" invalid "...with its JSON error (was an empty body)"
# metadata nested ~2,040 deep was stored, then every search filtered on metadata was a 500
D=$(python3 -c 'print("{\"role\":\"user\",\"content\":\"deep\",\"metadata\":" + "{\"a\":" * 65 + "1" + "}" * 65 + "}")')
eq "$(code_of -X POST -H 'Content-Type: application/json' --data "$D" "$URL/v1/sessions/$S/messages")" 400 \
    "metadata nested 65 deep: 400"
check "...naming the limit" grep -q 'nested deeper than 64 levels' "$T/.body"
D=$(python3 -c 'print("{\"role\":\"user\",\"content\":\"deep\",\"metadata\":" + "{\"a\":" * 64 + "1" + "}" * 64 + "}")')
eq "$(code_of -X POST -H 'Content-Type: application/json' --data "$D" "$URL/v1/sessions/$S/messages")" 201 \
    "metadata nested 64 deep: stored"
eq "$(code_of "$URL/v1/search?q=deep&mode=keyword&metadata=%7B%22b%22%3A1%7D")" 200 "a metadata-filtered search still answers"
M=$(python3 -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":1,"method":"a" + "\u00e9" * 60}))')
curl -s -o "$T/.body" -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    --data "$M" "$URL/mcp"
check "MCP: an unknown method of 60 'é' gets its JSON-RPC error (was neither result nor error)" python3 -c '
import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if "error" in j else 1)' "$T/.body"
curl -s -D "$T/h405" -o /dev/null -X PUT "$URL/v1/sessions/$S"
check "405 on /v1/sessions/{id} allows its real methods" grep -qi '^allow: GET, DELETE, PATCH' "$T/h405"
curl -s -D "$T/h405" -o /dev/null -X PUT "$URL/v1/sessions"
check "405 on /v1/sessions allows POST, GET" grep -qi '^allow: POST, GET' "$T/h405"
curl -s -D "$T/h405" -o /dev/null "$URL/mcp"
check "405 on /mcp allows POST" grep -qi '^allow: POST' "$T/h405"
serve_stop

# ---- /metrics: a key bound to a namespace does not see every tenant's counters ----
export KA=key-of-tenant-a-0123456789 KR=key-of-the-operator-0123456789
H_R=$(printf %s "$KR" | sha256sum | cut -c1-64)
MNEMO_SERVER_API_KEYS="$H_R:*" MNEMO_API_KEY=$KA serve_start --key-namespace tenant-a
eq "$(code_of -H "Authorization: Bearer $KA" "$URL/metrics")" 403 "/metrics with a namespace-bound key: 403"
eq "$(code_of -H "Authorization: Bearer $KR" "$URL/metrics")" 200 "/metrics with a key for every namespace: 200"
eq "$(code_of -H 'Host: evil.example' -H "Authorization: Bearer $KR" "$URL/v1/sessions/$S")" 200 \
    "with keys, the Host is not checked (the key is the guard)"
serve_stop
finish
