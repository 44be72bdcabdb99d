#!/bin/sh
# t1283-serve-session-keys.sh — a session named by the caller's own string (a framework's
# session id: "user-42-chat") over REST, MCP and the CLI: an append with create makes it under
# that key in the caller's namespace, every session route and tool takes the key where the UUID
# goes, two API keys' namespaces each have their own "chat-1", a key naming nothing is 404, and a
# key holding '/' goes in a path percent-encoded.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

KA=key-alpha-0123456789 KB=key-beta-0123456789
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/config.yaml" <<YAML
memory:
  storage_path: $DB
server:
  api_keys: "$(h $KA):alpha, $(h $KB):beta"
YAML
: >"$T/serve.err"
"$MNEMO" --config "$T/config.yaml" serve --listen 127.0.0.1:0 >"$T/serve.out" 2>"$T/serve.err" &
SPID=$!
_await_url "$SPID" "$T/serve.out" "the server" || cat "$T/serve.err" >&2
URL=$(head -n1 "$T/serve.out")
AH="Authorization: Bearer $KA"
BH="Authorization: Bearer $KB"

req POST /v1/sessions/user-42-chat/messages '{"role":"user","content":"hello from alpha"}' -H "$AH"
eq "$CODE" 404 "an append without create to a key naming nothing: 404"
check "the 404 names the key" sh -c 'printf "%s" "$1" | grep -q "user-42-chat"' - "$OUT"
req POST /v1/sessions/user-42-chat/messages '{"role":"user","content":"hello from alpha","create":true}' -H "$AH"
eq "$CODE" 201 "an append with create makes the keyed session"
req POST /v1/sessions/user-42-chat/messages '{"role":"assistant","content":"hi alpha"}' -H "$AH"
eq "$CODE" 201 "the next append finds it by the key"
req POST /v1/sessions/user-42-chat/messages '{"role":"user","content":"hello from beta","create":true}' -H "$BH"
eq "$CODE" 201 "beta's key makes beta's own session under the same key"

req GET /v1/sessions/user-42-chat "" -H "$AH"
eq "$CODE" 200 "GET by the key"
eq "$(jget "$OUT" 'j["session"]["key"]')" user-42-chat "the session shows its key"
eq "$(jget "$OUT" 'j["session"]["namespace"]')" alpha "in alpha's namespace"
eq "$(jget "$OUT" 'j["session"]["message_count"]')" 2 "with alpha's two messages"
AID=$(jget "$OUT" 'j["session"]["id"]')
check "its id is still a UUID" sh -c 'echo "$1" | grep -Eq "^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-"' - "$AID"
req GET "/v1/sessions/$AID/messages" "" -H "$AH"
eq "$(jget "$OUT" '[m["content"] for m in j["messages"]]')" '["hello from alpha", "hi alpha"]' "the UUID reads what the key wrote"
req GET /v1/sessions/user-42-chat/messages "" -H "$BH"
eq "$(jget "$OUT" '[m["content"] for m in j["messages"]]')" '["hello from beta"]' "beta's key reads only beta's session"
req POST /v1/sessions/user-42-chat/context '{"max_tokens":1000}' -H "$AH"
eq "$CODE" 200 "context by the key"
req POST /mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"history","arguments":{"session_id":"user-42-chat"}}}' -H "$BH"
check "MCP history by the key: beta's session" sh -c 'printf "%s" "$1" | grep -q "hello from beta" && ! printf "%s" "$1" | grep -q "hello from alpha"' - "$OUT"

# a session made with a key; the key is unique in its namespace; bad keys are refused by name
req POST /v1/sessions '{"key":"chat-1","title":"made with a key"}' -H "$AH"
eq "$CODE" 201 "session create with a key"
req POST /v1/sessions '{"key":"chat-1"}' -H "$AH"
eq "$CODE" 409 "the same key again in the same namespace: 409"
req POST /v1/sessions '{"key":"chat-1"}' -H "$BH"
eq "$CODE" 201 "the same key in another namespace"
req POST /v1/sessions '{"key":"0190a000-0000-7000-8000-0000000000a1"}' -H "$AH"
eq "$CODE" 400 "a UUID is not a key"
req POST /v1/sessions "{\"key\":\"$(python3 -c 'print("k" * 257)')\"}" -H "$AH"
eq "$CODE" 400 "a key over 256 bytes: 400 (the declared limit)"
req GET /v1/sessions/no-such-chat "" -H "$AH"
eq "$CODE" 404 "a key naming nothing: 404"
req DELETE /v1/sessions/chat-1 "" -H "$AH"
eq "$CODE" 200 "delete by the key"
req GET /v1/sessions/chat-1 "" -H "$BH"
eq "$CODE" 200 "beta's chat-1 stays"

# a key with '/', spaces, '+' and '%' is one path segment once encoded: the route splits the path
# as sent and decodes each segment after
req POST '/v1/sessions/team%2Fa%20chat+1%25/messages' '{"role":"user","content":"slash key","create":true}' -H "$AH"
eq "$CODE" 201 "an append to an encoded key with '/' makes the session"
req GET '/v1/sessions/team%2Fa%20chat+1%25' "" -H "$AH"
eq "$(jget "$OUT" 'j["session"]["key"]')" 'team/a chat+1%' "its key is the decoded segment ('+' stays a plus in a path)"
req GET '/v1/sessions/team%2Fa%20chat+1%25/messages' "" -H "$AH"
eq "$(jget "$OUT" '[m["content"] for m in j["messages"]]')" '["slash key"]' "history by the encoded key"
req GET '/v1/sessions/team/a%20chat+1%25' "" -H "$AH"
eq "$CODE" 404 "an unencoded '/' still separates segments: no such route"
req GET '/v1/sessions/%FF' "" -H "$AH"
eq "$CODE" 400 "a segment that is not UTF-8 once decoded: 400"
serve_stop

# the CLI takes keys in the default namespace
ok mn session new --key cli-chat --json
eq "$(jget "$OUT" 'j["key"]')" cli-chat "session new --key"
ok mn add cli-chat user "from the command line"
ok mn history cli-chat --json
eq "$(jget "$OUT" '[m["content"] for m in j]')" '["from the command line"]' "history by the key"
finish
