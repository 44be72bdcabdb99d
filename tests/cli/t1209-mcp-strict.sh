#!/bin/sh
# t1209-mcp-strict.sh — the strict edges of MCP and of append, on stdio and REST: a stdio line over
# the 8 MiB limit is refused (-32600) and skipped, the next lines served; a misspelt key inside
# messages[i], and the single-message form sent with messages, are refused naming them; JSON
# arguments and bodies of the wrong type are refused naming the parameter (only query-string and
# path values are converted from text); tools/call with a name that is not a string.
# pg variant: none — MCP and JSON framing in the server, before the store.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

S=0190a000-0000-7000-8000-0000000000b1
LIMIT=8388608 # the HTTP default body limit (mnemo serve --max-body), also the stdio line limit

# mcp JSON...: each argument one line to `mnemo mcp`; OUT gets the replies, one a line.
mcp() {
    printf '%s\n' "$@" >"$T/mcp.in"
    run sh -c "'$MNEMO' --db '$DB' mcp <'$T/mcp.in'"
}
# call TOOL ARGS: one tools/call over stdio; OUT gets its reply.
call() {
    mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"
}
# err_of: "code message" of the JSON-RPC error in OUT, or "result …" when it is a result.
err_of() { jget "$OUT" '"%s %s" % (j["error"]["code"], j["error"]["message"]) if "error" in j else "result %s" % j["result"].get("isError")'; }

# ---- 1. stdio: a line over the limit is skipped up to its newline, answered, and serving goes on
python3 - "$T/long.jsonl" "$LIMIT" <<'EOF'
import sys
path, limit = sys.argv[1], int(sys.argv[2])
head, tail = '{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"', '"}}'
with open(path, "w") as f:
    f.write("a" * (limit + 1) + "\n")                                   # one byte over: refused
    f.write(head + "b" * (limit - len(head) - len(tail)) + tail + "\n")  # exactly the limit: served
    f.write("c" * (3 * limit) + "\r\n")                                 # far over, CRLF: refused
    f.write('{"jsonrpc":"2.0","id":3,"method":"ping"}\n')
EOF
run sh -c "'$MNEMO' --db '$DB' mcp <'$T/long.jsonl'"
eq "$RC" 0 "stdio: exits 0 after lines over the limit"
eq "$(printf '%s\n' "$OUT" | python3 -c '
import sys, json
print([(m.get("id"), m["error"]["code"] if "error" in m else "ok") for m in map(json.loads, sys.stdin)])')" \
    "[(None, -32600), (2, 'ok'), (None, -32600), (3, 'ok')]" "stdio: a line over $LIMIT bytes is -32600 and skipped; the rest are served"
check "stdio: the error names the limit" sh -c "printf '%s\n' \"\$1\" | sed -n 1p | grep -q 'over the limit of $LIMIT bytes'" _ "$OUT"

# ---- 2. misspelt keys inside messages[i] are refused, naming the key and the index
call append "{\"session_id\":\"$S\",\"create\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\",\"metdata\":{\"k\":1}}]}"
eq "$(err_of)" "-32602 messages[0].metdata: not a field of a message (its fields: role, content, tool_calls, tool_call_id, name, tool_name, model, files, metadata, pinned, idempotency_key)" \
    "MCP append: a misspelt key in messages[0] is -32602 naming it"
call append "{\"session_id\":\"$S\",\"create\":true,\"messages\":[{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":\"b\",\"pined\":true}]}"
eq "$(err_of | cut -d: -f1)" "-32602 messages[1].pined" "MCP append: a misspelt key in messages[1] is -32602 naming it"
call history "{\"session_id\":\"$S\"}"
eq "$(jget "$OUT" 'j["result"]["content"][0]["text"].split(":")[0]')" not_found "a refused batch stores nothing (not even the session)"
# every field a message has is still accepted in a batch
A='{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}],"model":"m","name":"bot"}'
B='{"role":"tool","content":"42","tool_call_id":"c1","tool_name":"f","files":["a.c"],"metadata":{"k":1},"pinned":true,"idempotency_key":"i1"}'
call append "{\"session_id\":\"$S\",\"create\":true,\"messages\":[$A,$B]}"
eq "$(jget "$OUT" '[j["result"]["isError"], [m["seq"] for m in j["result"]["structuredContent"]["messages"]]]')" \
    '[false, [1, 2]]' "MCP append: every field of a message is accepted in a batch"

# ---- 3. the single form together with messages: refused, not silently dropped
call append "{\"session_id\":\"$S\",\"role\":\"user\",\"content\":\"lost\",\"messages\":[{\"role\":\"user\",\"content\":\"kept\"}]}"
eq "$(err_of)" "-32602 messages: does not go with the single-message form (role, content): send one message or a batch, not both" \
    "MCP append: single form and messages together is -32602"

# ---- 4. MCP arguments are JSON: a wrong type is refused, never converted from text
call session_create '{"ttl_seconds":"60"}'
eq "$(err_of)" "-32602 ttl_seconds: must be an integer" "MCP session_create ttl_seconds \"60\": -32602"
call search '{"q":"x","top_k":"5"}'
eq "$(err_of)" "-32602 top_k: must be an integer" "MCP search top_k \"5\": -32602"
call append "{\"session_id\":\"$S\",\"role\":\"user\",\"content\":\"c\",\"pinned\":\"\"}"
eq "$(err_of)" "-32602 pinned: must be true or false" "MCP append pinned \"\": -32602 (it pinned)"
call context "{\"session_id\":\"$S\",\"rag_min_similarity\":\"0.5\"}"
eq "$(err_of)" "-32602 rag_min_similarity: must be a number" "MCP context rag_min_similarity \"0.5\": -32602"
call history "{\"session_id\":\"$S\",\"limit\":1,\"tail\":true}"
eq "$(jget "$OUT" '[m["seq"] for m in j["result"]["structuredContent"]["messages"]]')" '[2]' "MCP typed arguments still served"

# ---- 5. tools/call with a name that is not a string
mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{}}}'
eq "$(err_of)" "-32602 name: must be a string, the tool's name" "tools/call name 5: must be a string"
mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}'
eq "$(err_of)" "-32602 name: required, the tool's name" "tools/call without name: required"

# ---- REST shares append and the validator
serve_start
P=/v1/sessions/$S/messages
req POST "$P" '{"messages":[{"role":"user","content":"a","metdata":{}}]}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]') $(jget "$OUT" 'j["error"]["message"].split(":")[0]')" \
    "400 invalid messages[0].metdata" "REST append: a misspelt key in messages[0] is 400 naming it"
req POST "$P" '{"role":"user","content":"lost","messages":[{"role":"user","content":"kept"}]}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"].split(":")[0]')" "400 messages" "REST append: single form and messages: 400"
req POST "$P" '{"role":"user","content":"c","pinned":""}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 pinned: must be true or false" "REST body pinned \"\": 400"
req POST /v1/sessions '{"ttl_seconds":"60"}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 ttl_seconds: must be an integer" "REST body ttl_seconds \"60\": 400"
# 0 or -1: none, as `mnemo session new --ttl-seconds 0` (t0900); absent or null: the thread default
for v in 0 -1; do
    req POST /v1/sessions '{"tool_name":"chat","ttl_seconds":'$v',"max_turns":'$v'}'
    eq "$CODE $(jget "$OUT" '[j["session"]["ttl_ms"], j["session"]["max_turns"]]')" "201 [0, 0]" "REST ttl_seconds and max_turns $v: none"
done
req POST /v1/sessions '{"tool_name":"chat","ttl_seconds":null}'
eq "$CODE $(jget "$OUT" '[j["session"]["ttl_ms"], j["session"]["max_turns"]]')" "201 [10800000, 50]" "REST absent/null: the thread defaults"
req POST "$P" '{"role":"user","content":"d","idempotency_key":"i2"}' -H 'Idempotency-Key: ignored-body-wins'
eq "$CODE" 201 "REST append: the single form"
req POST "$P" '{"messages":[{"role":"user","content":"e"}]}' -H 'Idempotency-Key: k-batch'
eq "$CODE" 201 "REST append: a batch with an Idempotency-Key header is no conflict"
# the query string arrives as text: still converted, on a POST too (the Mem0 client sends
# POST /v3/memories/?page=1&page_size=50); the same name in the body is JSON and keeps its type
req POST "/v1/sessions/$S/context?max_tokens=100" '{"format":"text"}'
eq "$CODE" 200 "REST POST with query max_tokens=100: converted"
req POST "/v1/sessions/$S/context?max_tokens=100" '{"max_tokens":"100"}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 max_tokens: must be an integer" \
    "REST POST body max_tokens \"100\" (the query's too): the body's wins and is refused"
req GET "$P?limit=1&tail=true"
eq "$CODE $(jget "$OUT" '[m["seq"] for m in j["messages"]]')" "200 [4]" "REST query limit=1&tail=true converted"
req GET "$P?limit=x"
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 limit: 'x' is not a whole number" "REST query limit=x: 400"
req GET "/v1/search?q=kept&top_k=5"
eq "$CODE" 200 "REST query top_k=5 converted"
ID=$(jget "$(curl -s "$URL$P?limit=1")" 'j["messages"][0]["id"]')
req POST "$P/$ID/pin" '{"pinned":false}'
eq "$CODE $(jget "$OUT" 'j["pinned"]')" "200 false" "REST path message_id converted"
serve_stop

call append "{\"session_id\":\"$S\",\"content\":null,\"messages\":[{\"role\":\"user\",\"content\":\"null is absent\"}]}"
eq "$(jget "$OUT" '[j["result"]["isError"], len(j["result"]["structuredContent"]["messages"])]')" '[false, 1]' \
    "MCP append: a null single-form field beside messages is absent, not a conflict"
finish
