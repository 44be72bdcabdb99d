#!/bin/sh
# t1201-serve-role-agent.sh — role `agent` (seed 003's name for the assistant) is accepted on
# every surface, as docs/cli.md and docs/chat.md say: REST and MCP store it as `assistant`,
# as the CLI and the Python package do; an unknown role is still refused naming it.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
req POST /v1/sessions '{}'
S=$(jget "$OUT" 'j["session"]["id"]')
req POST "/v1/sessions/$S/messages" '{"role":"agent","content":"done: the build is green"}'
eq "$CODE" 201 "REST: role agent accepted"
eq "$(jget "$OUT" 'j["messages"][0]["role"]')" assistant "REST: stored as assistant"
req GET "/v1/search?q=build&mode=keyword&role=agent"
eq "$CODE" 200 "REST: the search filter takes agent too"
eq "$(jget "$OUT" '[h["message"]["role"] for h in j["hits"]]')" '["assistant"]' "REST: agent filters the assistant's messages"
req POST "/v1/sessions/$S/messages" '{"role":"robot","content":"x"}'
eq "$CODE" 400 "REST: an unknown role is refused"
check "REST: the refusal names the value" sh -c "printf '%s' '$OUT' | grep -q robot"
serve_stop

printf '%s\n' "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"append\",\"arguments\":{\"session_id\":\"$S\",\"role\":\"agent\",\"content\":\"noted over MCP\"}}}" >"$T/mcp.in"
run sh -c "'$MNEMO' --db '$DB' mcp <'$T/mcp.in'"
eq "$(jget "$OUT" 'j["result"].get("isError", False)')" false "MCP: role agent accepted"
ok mn history "$S" --json
eq "$(jget "$OUT" '[m["role"] for m in j]')" '["assistant", "assistant"]' "MCP: stored as assistant"
finish
