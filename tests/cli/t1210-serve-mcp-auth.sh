#!/bin/sh
# t1210-serve-mcp-auth.sh — MCP over HTTP (/mcp) and stdio (`mnemo mcp`): initialize and version
# negotiation, tools/list, tools/call (structuredContent, isError, unknown tool -32602), resources,
# Origin and MCP-Protocol-Version checks; bearer API keys and a key bound to a namespace.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

rpc() {
    _b=$1
    shift
    req POST /mcp "$_b" -H 'Accept: application/json, text/event-stream' "$@"
}

serve_start
rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
eq "$CODE $(jget "$OUT" '[j["result"]["protocolVersion"], j["result"]["serverInfo"]["name"], "tools" in j["result"]["capabilities"]]')" \
    '200 ["2025-06-18", "mnemo", true]' "initialize 2025-06-18"
rpc '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}'
eq "$(jget "$OUT" 'j["result"]["protocolVersion"]')" 2025-11-25 "an unknown revision gets the latest"
rpc '{"jsonrpc":"2.0","method":"notifications/initialized"}'
eq "$CODE $OUT" "202 " "a notification: 202, no body"
rpc '{"jsonrpc":"2.0","id":"p","method":"ping"}'
eq "$OUT" '{"jsonrpc":"2.0","id":"p","result":{}}' "ping"
rpc '{"jsonrpc":"2.0","id":3,"method":"tools/list"}'
eq "$(jget "$OUT" 'sorted(t["name"] for t in j["result"]["tools"])')" \
    '["append", "checkpoint_delete_thread", "checkpoint_get", "checkpoint_list", "checkpoint_put", "checkpoint_put_writes", "compact", "context_build", "document_delete", "document_get", "document_paths", "document_put", "document_search", "file_should_include", "history", "memory_add", "memory_extract_job", "memory_extract_queue", "memory_forget", "memory_search", "memory_update", "message_delete", "message_edit", "message_pin", "namespace_forget", "search", "session_clear", "session_create", "session_delete", "session_files", "session_fork", "session_get", "session_list", "session_resume", "session_set_max_turns", "session_update", "state_clear", "state_get", "state_merge_params", "state_set_plan", "state_set_result", "state_set_waiting", "state_unwait", "summary_get", "thread_summary_get"]' \
    "tools/list"
eq "$(jget "$OUT" '[(t["annotations"]["readOnlyHint"], t["annotations"]["destructiveHint"], "outputSchema" in t) for t in j["result"]["tools"] if t["name"] in ("context_build", "session_delete")]')" \
    '[[false, true, true], [true, false, true]]' "annotations and output schemas"

S=0190a000-0000-7000-8000-0000000000a1
rpc "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"append\",\"arguments\":{\"session_id\":\"$S\",\"create\":true,\"role\":\"user\",\"content\":\"remember the milk\"}}}"
eq "$(jget "$OUT" '[j["result"]["isError"], j["result"]["structuredContent"]["messages"][0]["seq"], json.loads(j["result"]["content"][0]["text"]) == j["result"]["structuredContent"]]')" \
    '[false, 1, true]' "tools/call append: structuredContent and its text copy"
rpc "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"context_build\",\"arguments\":{\"session_id\":\"$S\",\"max_tokens\":100}}}"
eq "$(jget "$OUT" 'j["result"]["structuredContent"]["messages"]')" '[{"role": "user", "content": "remember the milk"}]' "tools/call context_build"
rpc '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"history","arguments":{"session_id":"0190a000-0000-7000-8000-0000000000ff"}}}'
eq "$(jget "$OUT" '[j["result"]["isError"], j["result"]["content"][0]["text"].startswith("not_found")]')" '[true, true]' "a storage failure is isError"
rpc '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"append","arguments":{"session_id":"x","role":"user"}}}'
eq "$(jget "$OUT" 'j["result"]["isError"]')" true "a validation failure is isError"
rpc '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}'
eq "$(jget "$OUT" 'j["error"]["code"]')" -32602 "unknown tool: -32602"
rpc '{"jsonrpc":"2.0","id":9,"method":"no/such"}'
eq "$(jget "$OUT" 'j["error"]["code"]')" -32601 "unknown method: -32601"
rpc '{"jsonrpc":"2.0","id":10,'
eq "$(jget "$OUT" '[j["id"], j["error"]["code"]]')" '[null, -32700]' "parse error: -32700"
rpc '{"jsonrpc":"2.0","id":11,"method":"resources/list"}'
eq "$(jget "$OUT" '[r["uri"] for r in j["result"]["resources"]]')" "[\"mnemo://sessions/$S\"]" "resources/list"
rpc "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"resources/read\",\"params\":{\"uri\":\"mnemo://sessions/$S\"}}"
eq "$(jget "$OUT" 'json.loads(j["result"]["contents"][0]["text"])["messages"][0]["content"]')" "remember the milk" "resources/read"
rpc '{"jsonrpc":"2.0","id":13,"method":"tools/list"}' -H 'Origin: https://evil.example'
eq "$CODE" 403 "a foreign Origin: 403"
PORT=${URL##*:}
rpc '{"jsonrpc":"2.0","id":14,"method":"tools/list"}' -H "Origin: http://localhost:$PORT"
eq "$CODE" 200 "the server's own loopback Origin is allowed"
rpc '{"jsonrpc":"2.0","id":15,"method":"tools/list"}' -H 'Origin: http://localhost:3000'
eq "$CODE" 403 "a page on another local port is foreign: 403"
rpc '{"jsonrpc":"2.0","id":16,"method":"tools/list"}' -H "Origin: http://localhost:$PORT@evil.com"
eq "$CODE" 403 "userinfo in an Origin is not the server's own: 403"
rpc '{"jsonrpc":"2.0","id":15,"method":"tools/list"}' -H 'MCP-Protocol-Version: 2024-01-01'
eq "$CODE" 400 "an unsupported MCP-Protocol-Version: 400"
rpc '{"jsonrpc":"2.0","id":16,"method":"tools/list"}' -H 'MCP-Protocol-Version: 2025-03-26'
eq "$CODE" 200 "MCP-Protocol-Version 2025-03-26"
req GET /mcp
eq "$CODE" 405 "GET /mcp: 405 (no SSE stream)"
serve_stop

# stdio: stdout carries only protocol messages, one per line
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' '' \
    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{\"session_id\":\"$S\"}}}" \
    'not json' >"$T/in.jsonl"
run sh -c "'$MNEMO' --db '$DB' mcp <'$T/in.jsonl'"
eq "$RC" 0 "mnemo mcp exits 0 at end of input"
eq "$(printf '%s\n' "$OUT" | python3 -c 'import sys,json; print([json.loads(l).get("id") for l in sys.stdin])')" \
    "[1, 2, None]" "stdio: three replies, each a JSON-RPC message on one line"
eq "$(printf '%s\n' "$OUT" | sed -n 2p | python3 -c 'import sys,json; print(json.load(sys.stdin)["result"]["structuredContent"]["messages"][0]["content"])')" \
    "remember the milk" "stdio tools/call"

# API keys
KEY=s3cret-test-key
export KEY
serve_start --api-key-env KEY
req GET /v1/sessions
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "401 unauthorized" "no key: 401"
req GET /v1/sessions '' -H 'Authorization: Bearer wrong'
eq "$CODE" 401 "wrong key: 401"
req GET /v1/sessions '' -H "Authorization: Bearer $KEY"
eq "$CODE" 200 "right key: 200"
req GET /healthz
eq "$CODE" 200 "healthz needs no key"
rpc '{"jsonrpc":"2.0","id":1,"method":"ping"}'
eq "$CODE" 401 "/mcp needs the key"
serve_stop

# a key bound to a namespace never reads another namespace's data
ok mn session new --namespace bob --system "bob's secrets"
BOB=$OUT
serve_start --api-key-env KEY --key-namespace alice
H="Authorization: Bearer $KEY"
req GET "/v1/sessions/$BOB" '' -H "$H"
eq "$CODE" 404 "another namespace's session looks missing"
req GET "/v1/sessions/$BOB/messages" '' -H "$H"
eq "$CODE" 404 "another namespace's history is refused"
req POST "/v1/sessions/$BOB/context" '{}' -H "$H"
eq "$CODE" 404 "another namespace's context is refused"
req GET "/v1/sessions?namespace=bob" '' -H "$H"
eq "$CODE" 403 "listing another namespace: 403"
req GET /v1/export '' -H "$H"
eq "$CODE" 403 "a namespace key cannot export everything"
req POST /v1/sessions '{"title":"mine"}' -H "$H"
eq "$(jget "$OUT" 'j["session"]["namespace"]')" alice "sessions are created in the key's namespace"
req GET /v1/sessions '' -H "$H"
eq "$(jget "$OUT" '[s["namespace"] for s in j["sessions"]]')" '["alice"]' "list shows only the key's namespace"
rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{\"session_id\":\"$BOB\"}}}" -H "$H"
eq "$(jget "$OUT" 'j["result"]["isError"]')" true "MCP: another namespace's history is refused"
serve_stop
finish
