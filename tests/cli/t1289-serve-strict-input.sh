#!/bin/sh
# t1289-serve-strict-input.sh — what a client sends is taken exactly or refused by name, never
# guessed at: a query parameter given twice, numbers in a query that are not written as JSON
# writes them, an empty batch, an empty entry of an export's ids, a JSON-RPC message that is JSON
# but not an object, and the headers HTTP says to refuse (no Host, two Host). A retried batch with
# an Idempotency-Key stores nothing new; a session named twice is exported once; the auth scheme's
# name is case-insensitive; an allowed origin or host that is not one stops the server at start.
# pg variant: none — query and body parsing in the server, before the store.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

rpc() { req POST /mcp "$1" -H 'Accept: application/json, text/event-stream'; }
err() { jget "$OUT" 'j["error"]["message"]'; }
shown() { printf '%s' "$1" | sed 's/%20/ /g; s/+/ /g'; } # a query's value as the server reads it
S=0190a000-0000-7000-8000-0000000012a9
ok mn session new --id "$S" --json
ok mn add "$S" user "first" --json
ok mn add "$S" assistant "second" --json
ok mn add "$S" user "third" --json
serve_start

# a query parameter twice: which one was meant is a guess (a filter must be exact)
req GET "/v1/sessions/$S/messages?limit=2&limit=3"
eq "$CODE $(err)" "400 limit: given twice in the query" "a query parameter given twice is refused by name"
req GET "/v1/sessions/$S/messages?limit=2"
eq "$CODE $(jget "$OUT" 'len(j["messages"])')" "200 2" "given once it is taken"

# numbers in a query are written as JSON writes them
for v in '%202' '+2' '2%20' '0x2' '2.0' ''; do
    req GET "/v1/sessions/$S/messages?limit=$v"
    eq "$CODE $(err)" "400 limit: '$(shown "$v")' is not a whole number" \
        "limit=$v is not a whole number"
done
req GET "/v1/sessions/$S/messages?limit=-0"
eq "$CODE" 400 "limit=-0 is below the minimum"
for v in '0x1p-2' '%200.5' '+0.5' 'inf' 'nan' '.5' '1.' '1e'; do
    req GET "/v1/search?q=first&mode=keyword&min_similarity=$v"
    eq "$CODE $(err | sed 's/ is not a number$//')" "400 min_similarity: '$(shown "$v")'" \
        "min_similarity=$v is not a number"
done
req GET "/v1/search?q=first&mode=keyword&min_similarity=-0.5e0"
eq "$CODE" 200 "an exponent is a number"

# an empty batch is out of the declared range on both surfaces, with one message
req POST "/v1/sessions/$S/messages" '{"messages":[]}'
eq "$CODE $(err)" "400 messages: 0 items is under the minimum of 1" "REST: an empty batch"
rpc "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"append\",\"arguments\":{\"session_id\":\"$S\",\"messages\":[]}}}"
eq "$(jget "$OUT" '[j["id"], j["error"]["code"], j["error"]["message"]]')" \
    '[7, -32602, "messages: 0 items is under the minimum of 1"]' "MCP: an empty batch is invalid params"
req GET /openapi.json
eq "$(jget "$OUT" 'j["paths"]["/v1/sessions/{session_id}/messages"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]["messages"]["minItems"]')" \
    1 "the schema says so"

# a retried batch with an Idempotency-Key stores nothing new: message i is keyed <key>#<i>
B='{"messages":[{"role":"user","content":"batch one"},{"role":"assistant","content":"batch two","idempotency_key":"own"}]}'
req POST "/v1/sessions/$S/messages" "$B" -H 'Idempotency-Key: B1'
eq "$CODE $(jget "$OUT" '[m["idempotency_key"] for m in j["messages"]]')" '201 ["B1#0", "own"]' \
    "the header keys each message of a batch that has no key of its own"
FIRST=$OUT
req POST "/v1/sessions/$S/messages" "$B" -H 'Idempotency-Key: B1'
eq "$CODE $(jget "$OUT" '[m["seq"] for m in j["messages"]]')" "201 $(jget "$FIRST" '[m["seq"] for m in j["messages"]]')" \
    "the retry returns the messages stored the first time"
ok mn history "$S" --json
eq "$(jget "$OUT" 'len(j)')" 5 "and stores nothing new"

# export: an empty entry of ids is refused (dropped, ",,," exported everything); a session named
# twice is written once
S2=0190a000-0000-7000-8000-0000000012aa
ok mn session new --id "$S2" --json
for ids in ',,,' '' "$S,," ",$S"; do
    req GET "/v1/export?ids=$ids"
    eq "$CODE $(err | sed 's/ (.*//')" "400 ids: entry $(case $ids in ',,,'|''|",$S") echo 1 ;; *) echo 2 ;; esac) is empty" \
        "export ids='$ids': an empty entry is refused"
done
req GET "/v1/export?ids=$S,$S2,$S"
eq "$CODE $(printf '%s\n' "$OUT" | python3 -c '
import json, sys
print([json.loads(l).get("id") for l in sys.stdin if json.loads(l).get("type") == "session"])')" \
    "200 ['$S', '$S2']" "a session named twice is exported once, where it was first named"
ok mn export "$S2" "$S" "$S2"
eq "$(printf '%s\n' "$OUT" | grep -c '"type":"session"')" 2 "the CLI's export too"

# JSON-RPC: JSON that is not an object is an invalid request, not a parse error
for m in 5 null true '"x"'; do
    rpc "$m"
    eq "$(jget "$OUT" '[j["id"], j["error"]["code"]]')" '[null, -32600]' "MCP message $m: invalid request"
done
rpc '{"jsonrpc":"2.0",'
eq "$(jget "$OUT" 'j["error"]["code"]')" -32700 "what is not JSON is still a parse error"
rpc '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"history","arguments":{"limit":99999999999999999999}}}'
eq "$(jget "$OUT" '[j["error"]["code"], j["error"]["message"].split(" near")[0]]')" '[-32700, "parse error: too big integer"]' \
    "a number beyond 64 bits says so (it read 'not JSON')"

# Host: HTTP/1.1 names it exactly once
raw() { python3 - "$URL" "$@" <<'PY'
import socket, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
s = socket.create_connection((u.hostname, u.port), timeout=30)
s.sendall(("\r\n".join(sys.argv[2:]) + "\r\n\r\n").encode())
got = b""
while b"\r\n\r\n" not in got:
    b = s.recv(4096)
    if not b:
        break
    got += b
print(got.split(b"\r\n")[0].decode())
PY
}
eq "$(raw 'GET /v1/sessions HTTP/1.1' 'Connection: close')" "HTTP/1.1 400 Bad Request" "HTTP/1.1 without Host: 400"
eq "$(raw 'GET /v1/sessions HTTP/1.1' 'Host: 127.0.0.1' 'Host: evil.example' 'Connection: close')" \
    "HTTP/1.1 400 Bad Request" "two Host headers: 400 (the second was never checked)"
eq "$(raw 'GET /v1/sessions HTTP/1.1' 'Host: 127.0.0.1' 'Connection: close')" "HTTP/1.1 200 OK" "one Host: served"
eq "$(raw 'GET /v1/sessions HTTP/1.0' | cut -d" " -f2-)" "200 OK" "HTTP/1.0 without Host: served"
serve_stop

# configured lists: an entry that is not an origin (or a host) stops the server at start
fails 2 "server.allowed_origins: 'http://a.example/path' is not an origin" \
    mn serve --listen 127.0.0.1:0 --allow-origin 'https://ui.example,http://a.example/path'
fails 2 "server.allowed_origins: 'notanorigin' is not an origin" mn serve --listen 127.0.0.1:0 --allow-origin notanorigin
export MNEMO_SERVER_ALLOWED_HOSTS='proxy.example:8080,bad/host'
fails 2 "server.allowed_hosts: 'bad/host' is not a host" mn serve --listen 127.0.0.1:0
unset MNEMO_SERVER_ALLOWED_HOSTS

# the auth scheme's name is case-insensitive (RFC 9110, 11.1)
KEY=0123456789abcdef0123456789abcdef
export MNEMO_API_KEY=$KEY
serve_start --allow-origin 'https://ui.example, *'
for scheme in Bearer bearer BEARER; do
    req GET /v1/sessions '' -H "Authorization: $scheme $KEY"
    eq "$CODE" 200 "Authorization: $scheme"
done
req GET /v1/sessions '' -H "Authorization: Bearer x$KEY"
eq "$CODE" 401 "a wrong key is still refused"
serve_stop
unset MNEMO_API_KEY
finish
