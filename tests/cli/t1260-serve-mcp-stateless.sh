#!/bin/sh
# t1260-serve-mcp-stateless.sh — the stateless MCP revision 2026-07-28 beside the `initialize`
# revisions, on /mcp (curl) and on `mnemo mcp` (stdio): server/discover at any time, tools/list
# and tools/call with the version in params._meta and no handshake, the result shape (resultType,
# _meta serverInfo, ttlMs/cacheScope), the Streamable HTTP header rules (MCP-Protocol-Version,
# Mcp-Method, Mcp-Name incl. its base64 form → -32020 / 400), unsupported versions (-32022 with
# the supported list), old and new clients mixed on one server. Notes: docs/mcp.md.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

V=2026-07-28
META="\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"$V\",\"io.modelcontextprotocol/clientInfo\":{\"name\":\"t1260\",\"version\":\"1\"},\"io.modelcontextprotocol/clientCapabilities\":{}}"
S=0190a000-0000-7000-8000-0000000000b1

# rpc BODY [CURL ARGS...]: a POST to /mcp as an older client sends it
rpc() {
    _b=$1
    shift
    req POST /mcp "$_b" -H 'Accept: application/json, text/event-stream' "$@"
}
# mrpc BODY METHOD [NAME]: a POST with the headers 2026-07-28 asks for (version, Mcp-Method, Mcp-Name)
mrpc() {
    if [ $# -ge 3 ]; then
        rpc "$1" -H "MCP-Protocol-Version: $V" -H "Mcp-Method: $2" -H "Mcp-Name: $3"
    else
        rpc "$1" -H "MCP-Protocol-Version: $V" -H "Mcp-Method: $2"
    fi
}

serve_start

# ---- server/discover: no handshake, no headers needed, answered in any era
rpc '{"jsonrpc":"2.0","id":1,"method":"server/discover"}'
eq "$CODE $(jget "$OUT" '[j["result"]["supportedVersions"], j["result"]["resultType"], j["result"]["serverInfo"]["name"], sorted(j["result"]["capabilities"]), j["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], j["result"]["ttlMs"] > 0, j["result"]["cacheScope"], len(j["result"]["instructions"]) > 0]')" \
    '200 [["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"], "complete", "mnemo", ["resources", "tools"], "mnemo", true, "public", true]' \
    "server/discover with no _meta and no headers"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":\"d2\",\"method\":\"server/discover\",\"params\":{$META}}" server/discover
eq "$CODE $(jget "$OUT" '[j["id"], j["result"]["supportedVersions"][0]]')" '200 ["d2", "2026-07-28"]' \
    "server/discover the 2026-07-28 way"

# ---- stateless requests: no initialize, no session header, each one on its own
mrpc "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{$META}}" tools/list
eq "$CODE $(jget "$OUT" '["append" in [t["name"] for t in j["result"]["tools"]], j["result"]["resultType"], j["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], j["result"]["ttlMs"] > 0, j["result"]["cacheScope"]]')" \
    '200 [true, "complete", "mnemo", true, "public"]' "a stateless tools/list"
check "no Mcp-Session-Id is issued" sh -c "! curl -s -D - -o /dev/null -X POST -H 'Content-Type: application/json' \
    -H 'MCP-Protocol-Version: $V' -H 'Mcp-Method: tools/list' --data-binary '{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{$META}}' \
    '$URL/mcp' | grep -qi '^mcp-session-id'"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"append\",\"arguments\":{\"session_id\":\"$S\",\"create\":true,\"role\":\"user\",\"content\":\"stateless hello\"},$META}}" tools/call append
eq "$CODE $(jget "$OUT" '[j["result"]["isError"], j["result"]["resultType"], j["result"]["structuredContent"]["messages"][0]["seq"]]')" \
    '200 [false, "complete", 1]' "a stateless tools/call append"
# Mcp-Name in the transport's base64 form ("history")
mrpc "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{\"session_id\":\"$S\"},$META}}" tools/call '=?base64?aGlzdG9yeQ==?='
eq "$CODE $(jget "$OUT" '[m["content"] for m in j["result"]["structuredContent"]["messages"]]')" '200 ["stateless hello"]' \
    "Mcp-Name as =?base64?…?= is decoded"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{\"uri\":\"mnemo://sessions/$S\",$META}}" resources/read "mnemo://sessions/$S"
eq "$CODE $(jget "$OUT" '[j["result"]["cacheScope"], j["result"]["ttlMs"], json.loads(j["result"]["contents"][0]["text"])["messages"][0]["content"]]')" \
    '200 ["private", 0, "stateless hello"]' "a stateless resources/read (private, not cached)"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":\"file:///etc/passwd\",$META}}" resources/read file:///etc/passwd
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '200 -32602' "2026-07-28: an unknown resource is -32602"
mrpc "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":9,$META}}" notifications/cancelled
eq "$CODE $OUT" '202 ' "a 2026-07-28 notification: 202, no body"
rpc '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":[]}}'
eq "$CODE $(jget "$OUT" '[j["id"], j["error"]["code"]]')" '400 [null, -32602]' "a notification refused: 400 and an error without id"

# ---- header rules of the 2026-07-28 Streamable HTTP transport: 400 and -32020
mrpc "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"context\",\"arguments\":{\"session_id\":\"$S\"},$META}}" tools/call history
eq "$CODE $(jget "$OUT" '[j["id"], j["error"]["code"], "Mcp-Name" in j["error"]["message"]]')" '400 [8, -32020, true]' \
    "Mcp-Name that does not match params.name"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{$META}}" tools/call
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '400 -32020' "Mcp-Method that does not match the method"
rpc "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\",\"params\":{$META}}" -H "MCP-Protocol-Version: $V"
eq "$CODE $(jget "$OUT" '[j["error"]["code"], "Mcp-Method" in j["error"]["message"]]')" '400 [-32020, true]' "Mcp-Method missing"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{\"session_id\":\"$S\"},$META}}" tools/call
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '400 -32020' "Mcp-Name missing on tools/call"
rpc "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\",\"params\":{$META}}" -H 'Mcp-Method: tools/list'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '400 -32020' "_meta says 2026-07-28 but MCP-Protocol-Version is missing"
mrpc '{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{}}' tools/list
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '400 -32020' "the header says 2026-07-28 but _meta has no version"
rpc "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"tools/list\",\"params\":{$META}}" -H 'MCP-Protocol-Version: 2025-06-18' -H 'Mcp-Method: tools/list'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '400 -32020' "header and _meta name different versions"

# ---- unsupported versions: -32022 listing what is supported (400 on HTTP)
BAD="\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"1900-01-01\",\"io.modelcontextprotocol/clientCapabilities\":{}}"
rpc "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"tools/list\",\"params\":{$BAD}}" -H 'MCP-Protocol-Version: 1900-01-01' -H 'Mcp-Method: tools/list'
eq "$CODE $(jget "$OUT" '[j["id"], j["error"]["code"], j["error"]["data"]]')" \
    '400 [15, -32022, {"supported": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"], "requested": "1900-01-01"}]' \
    "an unsupported version: -32022 with the supported list"
rpc '{"jsonrpc":"2.0","id":16,"method":"tools/list"}' -H 'MCP-Protocol-Version: 2024-01-01'
eq "$CODE $(jget "$OUT" '[j["error"]["code"], j["error"]["data"]["requested"]]')" '400 [-32022, "2024-01-01"]' \
    "an unsupported MCP-Protocol-Version header alone: the same error"
rpc "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":\"server/discover\",\"params\":{$BAD}}"
eq "$CODE $(jget "$OUT" 'j["error"]["data"]["supported"][0]')" '400 2026-07-28' \
    "server/discover asking for an unsupported version names the supported ones"

# ---- methods 2026-07-28 removed, and unknown ones: 404 with -32601
mrpc "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"ping\",\"params\":{$META}}" ping
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '404 -32601' "2026-07-28 has no ping"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"$V\",$META}}" initialize
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '404 -32601' "2026-07-28 has no initialize"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"no/such\",\"params\":{$META}}" no/such
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '404 -32601' "an unknown method under 2026-07-28: 404"

# ---- an older client on the same server, interleaved with the stateless one
rpc '{"jsonrpc":"2.0","id":21,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}'
eq "$CODE $(jget "$OUT" '[j["result"]["protocolVersion"], "resultType" in j["result"]]')" '200 ["2025-06-18", false]' \
    "an older client still negotiates with initialize (and gets the old result shape)"
rpc '{"jsonrpc":"2.0","id":"1999","method":"initialize","params":{"protocolVersion":"2026-07-28"}}'
eq "$(jget "$OUT" 'j["result"]["protocolVersion"]')" 2025-11-25 "initialize never negotiates the stateless revision"
rpc '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H 'MCP-Protocol-Version: 2025-06-18'
eq "$CODE" 202 "notifications/initialized"
rpc "{\"jsonrpc\":\"2.0\",\"id\":22,\"method\":\"tools/call\",\"params\":{\"name\":\"append\",\"arguments\":{\"session_id\":\"$S\",\"role\":\"assistant\",\"content\":\"old client reply\"}}}" \
    -H 'MCP-Protocol-Version: 2025-06-18'
eq "$CODE $(jget "$OUT" '[j["result"]["isError"], j["result"]["structuredContent"]["messages"][0]["seq"], "resultType" in j["result"]]')" \
    '200 [false, 2, false]' "the older client appends to the session the stateless client made"
mrpc "{\"jsonrpc\":\"2.0\",\"id\":23,\"method\":\"tools/call\",\"params\":{\"name\":\"context\",\"arguments\":{\"session_id\":\"$S\",\"max_tokens\":1000},$META}}" tools/call context
eq "$(jget "$OUT" 'j["result"]["structuredContent"]["messages"]')" \
    '[{"role": "user", "content": "stateless hello"}, {"role": "assistant", "content": "old client reply"}]' \
    "the stateless client sees both turns"
rpc '{"jsonrpc":"2.0","id":24,"method":"ping"}' -H 'MCP-Protocol-Version: 2025-06-18'
eq "$CODE $OUT" '200 {"jsonrpc":"2.0","id":24,"result":{}}' "ping still works for the older client"
rpc '{"jsonrpc":"2.0","id":25,"method":"resources/read","params":{"uri":"file:///x"}}' -H 'MCP-Protocol-Version: 2025-11-25'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" '200 -32002' "older revisions keep -32002 for an unknown resource"
rpc '{"jsonrpc":"2.0","id":26,"method":"server/discover"}' -H 'MCP-Protocol-Version: 2025-11-25'
eq "$CODE $(jget "$OUT" 'j["result"]["supportedVersions"][0]')" '200 2026-07-28' "server/discover during an older session"
serve_stop

# ---- stdio: the same, one JSON message a line
BADTOOL="{\"jsonrpc\":\"2.0\",\"id\":\"s5\",\"method\":\"tools/list\",\"params\":{$BAD}}"
printf '%s\n' \
    '{"jsonrpc":"2.0","id":"s1","method":"server/discover"}' \
    "{\"jsonrpc\":\"2.0\",\"id\":\"s2\",\"method\":\"tools/list\",\"params\":{$META}}" \
    "{\"jsonrpc\":\"2.0\",\"id\":\"s3\",\"method\":\"tools/call\",\"params\":{\"name\":\"history\",\"arguments\":{\"session_id\":\"$S\"},$META}}" \
    '{"jsonrpc":"2.0","id":"s4","method":"initialize","params":{"protocolVersion":"2025-03-26"}}' \
    "$BADTOOL" \
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1,$BAD}}" \
    "{\"jsonrpc\":\"2.0\",\"id\":\"s6\",\"method\":\"ping\",\"params\":{$META}}" \
    '{"jsonrpc":"2.0","id":"s7","method":"tools/call","params":{"name":"session_list","arguments":{}}}' \
    "{\"jsonrpc\":\"2.0\",\"id\":\"s8\",\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"$V\",\"io.modelcontextprotocol/clientCapabilities\":[]}}}" \
    >"$T/in.jsonl"
run sh -c "'$MNEMO' --db '$DB' mcp <'$T/in.jsonl'"
eq "$RC" 0 "mnemo mcp exits 0"
check "mnemo mcp: nothing on stderr" test -z "$ERR"
# one reply per request, none for the notification with a bad version
printf '%s\n' "$OUT" >"$T/out.jsonl"
eq "$(python3 -c 'import sys,json; print([json.loads(l)["id"] for l in open(sys.argv[1])])' "$T/out.jsonl")" \
    "['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8']" "stdio: one reply per request, in order"
line() { sed -n "$1p" "$T/out.jsonl"; }
eq "$(jget "$(line 1)" '[j["result"]["supportedVersions"][0], j["result"]["resultType"]]')" '["2026-07-28", "complete"]' "stdio server/discover"
eq "$(jget "$(line 2)" '[len(j["result"]["tools"]) > 5, j["result"]["resultType"]]')" '[true, "complete"]' "stdio: a stateless tools/list"
eq "$(jget "$(line 3)" '[m["content"] for m in j["result"]["structuredContent"]["messages"]]')" '["stateless hello", "old client reply"]' \
    "stdio: a stateless tools/call reads what the HTTP clients wrote"
eq "$(jget "$(line 4)" 'j["result"]["protocolVersion"]')" 2025-03-26 "stdio: initialize in the same process"
eq "$(jget "$(line 5)" '[j["error"]["code"], j["error"]["data"]["supported"]]')" '[-32022, ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"]]' \
    "stdio: an unsupported version"
eq "$(jget "$(line 6)" 'j["error"]["code"]')" -32601 "stdio: no ping under 2026-07-28"
eq "$(jget "$(line 7)" '[j["result"]["isError"], "resultType" in j["result"]]')" '[false, false]' \
    "stdio: a request without _meta is served as before"
eq "$(jget "$(line 8)" 'j["error"]["code"]')" -32602 "stdio: clientCapabilities must be an object"
finish
