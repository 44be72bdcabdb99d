#!/bin/sh
# t1240-serve-keys.sh — API keys hashed at rest (server.api_keys: SHA-256 + namespace): several
# keys, each bound to its namespace, never reading another's (REST, OpenAI Conversations, MCP);
# the background worker purges expired threads (server.gc_interval_seconds); --log-format json
# writes one JSON object a line and never the message content.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

KA=key-alpha-0123456789 KB=key-beta-0123456789 KR=key-root-0123456789
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/config.yaml" <<YAML
memory:
  storage_path: $DB
server:
  api_keys: "$(h $KA):alpha, $(h $KB):beta,$(h $KR):*"
  gc_interval_seconds: 1
YAML
check "the config holds no key in clear" sh -c '! grep -q key-alpha "$1"' - "$T/config.yaml"

: >"$T/serve.err"
"$MNEMO" --config "$T/config.yaml" serve --listen 127.0.0.1:0 --log-format json --verbose >"$T/serve.out" 2>"$T/serve.err" &
SPID=$!
_await_url "$SPID" "$T/serve.out" "the server" || cat "$T/serve.err" >&2
URL=$(head -n1 "$T/serve.out")

req GET /v1/sessions
eq "$CODE" 401 "no key: 401"
req GET /v1/sessions "" -H "Authorization: Bearer $(h $KA)"
eq "$CODE" 401 "the hash itself is not a key"
req GET /healthz
eq "$CODE" 200 "healthz needs no key"
A=0190a000-0000-7000-8000-0000000000a1
B=0190a000-0000-7000-8000-0000000000b2
req POST "/v1/sessions/$A/messages" '{"role":"user","content":"secret alpha words","create":true}' -H "Authorization: Bearer $KA"
eq "$CODE" 201 "key alpha appends (session made in alpha)"
req POST "/v1/sessions/$B/messages" '{"role":"user","content":"beta words","create":true}' -H "Authorization: Bearer $KB"
eq "$CODE" 201 "key beta appends"
# a batch the declarations refuse, with create, leaves no session behind
C=0190a000-0000-7000-8000-0000000000d4
req POST "/v1/sessions/$C/messages" '{"messages":[{"role":"user","content":"a","pined":true}],"create":true}' -H "Authorization: Bearer $KA"
eq "$CODE" 400 "a misspelt field in a batch with create: 400"
req GET "/v1/sessions/$C" "" -H "Authorization: Bearer $KA"
eq "$CODE" 404 "and no empty session is left behind"
req POST "/v1/sessions/$C/messages" '{"messages":[{"role":"user","content":"a"},{"role":"tool","content":"no call id"}],"create":true}' -H "Authorization: Bearer $KA"
eq "$CODE" 400 "a batch the library refuses (a tool message without tool_call_id), with create: 400"
req GET "/v1/sessions/$C" "" -H "Authorization: Bearer $KA"
eq "$CODE" 404 "nor by one the library refuses: the append makes the session, in its transaction"
# an id another namespace holds is never appended to, even with create
req POST "/v1/sessions/$B/messages" '{"role":"user","content":"alpha secret","create":true}' -H "Authorization: Bearer $KA"
eq "$CODE" 404 "alpha's append with create to beta's session: 404"
req GET "/v1/sessions/$B/messages" "" -H "Authorization: Bearer $KB"
eq "$(jget "$OUT" '[m["content"] for m in j["messages"]]')" '["beta words"]' "beta's session holds only beta's message"
req GET "/v1/sessions/$B/messages" "" -H "Authorization: Bearer $KA"
eq "$CODE" 404 "alpha cannot read beta's session"
req GET "/v1/sessions?namespace=beta" "" -H "Authorization: Bearer $KA"
eq "$CODE" 403 "alpha cannot list beta's namespace"
req GET "/v1/sessions" "" -H "Authorization: Bearer $KA"
eq "$(jget "$OUT" '[s["namespace"] for s in j["sessions"]]')" '["alpha"]' "alpha lists only alpha"
req GET "/v1/conversations/conv_$B/items" "" -H "Authorization: Bearer $KA"
eq "$CODE" 404 "alpha cannot read beta's conversation"
req POST /mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"history","arguments":{"session_id":"'$B'"}}}' -H "Authorization: Bearer $KA"
eq "$(jget "$OUT" 'j["result"]["isError"]')" true "alpha cannot read beta over MCP"
# a model never sees redacted values: reveal works over REST, is refused over MCP
req POST "/v1/sessions/$A/state" '{"params":{"db":{"Password":"hunter2-secret"}}}' -H "Authorization: Bearer $KA"
eq "$CODE" 200 "alpha stores a nested sensitive param"
req GET "/v1/sessions/$A/state?reveal=true" "" -H "Authorization: Bearer $KA"
check "REST reveal shows it" sh -c 'printf "%s" "$1" | grep -q hunter2-secret' - "$OUT"
req POST /mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"state_get","arguments":{"session_id":"'$A'","reveal":true}}}' -H "Authorization: Bearer $KA"
eq "$(jget "$OUT" 'j["result"]["isError"]')" true "MCP state_get with reveal is refused"
check "the refusal names reveal and leaks nothing" sh -c 'printf "%s" "$1" | grep -q reveal && ! printf "%s" "$1" | grep -q hunter2' - "$OUT"
req POST /mcp '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"state_get","arguments":{"session_id":"'$A'"}}}' -H "Authorization: Bearer $KA"
check "MCP state_get shows the param redacted" sh -c '! printf "%s" "$1" | grep -q hunter2' - "$OUT"
req GET "/v1/sessions" "" -H "Authorization: Bearer $KR"
eq "$(jget "$OUT" 'sorted(s["namespace"] for s in j["sessions"])')" '["alpha", "beta"]' "the * key sees every namespace"

# background worker: an expired thread disappears without a gc call
ok mn session new --id 0190a000-0000-7000-8000-0000000000c3 --tool t --ttl 1
cleaned_up() {
    req GET /metrics "" -H "Authorization: Bearer $KR"
    printf '%s' "$OUT" | grep -Eq '^mnemo_cleanup_sessions_total\{reason="expired"\} [1-9]'
}
wait_until 120 "the background worker to clean up the expired session (mnemo_cleanup_sessions_total)" cleaned_up && pass
check "group commit counters" sh -c 'printf "%s" "$1" | grep -Eq "^mnemo_commit_appends_total [1-9]"' - "$OUT"

kill -TERM "$SPID"
wait "$SPID"
eq "$?" 0 "server exits 0 on SIGTERM"
check "every log line is a JSON object with ts and level" python3 -c '
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert len(lines) > 5
for l in lines:
    o = json.loads(l)
    assert "ts" in o and "level" in o, l
' "$T/serve.err"
check "no message content in the logs" sh -c '! grep -q "secret alpha" "$1"' - "$T/serve.err"
check "no key in the logs" sh -c '! grep -q "key-alpha" "$1"' - "$T/serve.err"

# a bad entry is refused at start
printf 'server:\n  api_keys: "abc:alpha"\n' >"$T/bad.yaml"
fails 2 "server.api_keys" "$MNEMO" --db "$DB" --config "$T/bad.yaml" serve --listen 127.0.0.1:0
finish
