#!/bin/sh
# t1290-serve-summaries.sh — the REST and MCP operations around summaries and session edits:
# PATCH a session's title and metadata, delete one message (counts follow), the global summary
# (404 before any fold), compact (the offline extractive summariser folds older turns), the
# events it leaves, and the same compact and summary (and search) through MCP tools/call.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
req POST /v1/sessions '{"title":"first"}'
S=$(jget "$OUT" 'j["session"]["id"]')
req PATCH "/v1/sessions/$S" '{"title":"renamed","metadata":{"team":"core"}}'
eq "$CODE $(jget "$OUT" '[j["session"]["title"], j["session"]["metadata"]]')" '200 ["renamed", {"team": "core"}]' \
    "PATCH sets title and metadata"
req PATCH "/v1/sessions/$S" '{}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 invalid" "PATCH with nothing to set: 400"
req PATCH "/v1/sessions/00000000-0000-7000-8000-000000000000" '{"title":"x"}'
eq "$CODE" 404 "PATCH of an unknown session: 404"

i=0
while [ $i -lt 12 ]; do
    req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"question $i about the build\"}"
    req POST "/v1/sessions/$S/messages" "{\"role\":\"assistant\",\"content\":\"answer $i: run make\"}"
    i=$((i + 1))
done
LAST=$(jget "$OUT" 'j["messages"][0]["id"]')
req DELETE "/v1/sessions/$S/messages/$LAST"
eq "$CODE $OUT" "200 {\"deleted\":$LAST}" "delete one message"
req GET "/v1/sessions/$S"
eq "$(jget "$OUT" 'j["session"]["message_count"]')" 23 "the session's count follows"
req DELETE "/v1/sessions/$S/messages/$LAST"
eq "$CODE" 404 "deleting it again: 404"

req GET "/v1/sessions/$S/summary"
eq "$CODE" 404 "no summary before a fold: 404"
req POST "/v1/sessions/$S/compact"
eq "$CODE $(jget "$OUT" '[j["event"]["kind"], j["event"]["outcome"]]')" '200 ["compaction", "ok"]' "compact folds"
req GET "/v1/sessions/$S/summary"
eq "$CODE $(jget "$OUT" '[j["summary"]["summarizer"], j["summary"]["covers_upto"] > 0, len(j["summary"]["text"]) > 0]')" \
    '200 ["extractive", true, true]' "the summary it wrote"
req GET "/v1/sessions/$S/events?limit=5"
eq "$CODE $(jget "$OUT" '[e["kind"] for e in j["events"]][:1]')" '200 ["compaction"]' "the compaction event"

# the same through MCP (the 2025-11-25 revision: initialize first)
MCPH="-H Content-Type:application/json -H Accept:application/json,text/event-stream"
rpc() { CODE=$(curl -s -o "$T/.body" -w '%{http_code}' $MCPH -H "MCP-Protocol-Version: 2025-11-25" --data-binary "$1" "$URL/mcp"); OUT=$(cat "$T/.body"); }
rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
eq "$CODE" 200 "initialize"
rpc "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"summary_get\",\"arguments\":{\"session_id\":\"$S\"}}}"
eq "$(jget "$OUT" '[j["result"]["isError"], j["result"]["structuredContent"]["summary"]["summarizer"]]')" \
    '[false, "extractive"]' "MCP summary_get"
rpc "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"compact\",\"arguments\":{\"session_id\":\"$S\"}}}"
eq "$(jget "$OUT" '[j["result"]["isError"], j["result"]["structuredContent"]["event"]["kind"]]')" '[false, "compaction"]' \
    "MCP compact"
rpc "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"search\",\"arguments\":{\"q\":\"build\",\"mode\":\"keyword\",\"session_id\":\"$S\"}}}"
eq "$(jget "$OUT" '[j["result"]["isError"], j["result"]["structuredContent"]["mode"], len(j["result"]["structuredContent"]["hits"]) > 0]')" \
    '[false, "keyword", true]' "MCP search"
req GET /metrics
check "metrics count the compactions" sh -c 'printf %s "$1" | grep -Eq "^mnemo_compactions_total\{outcome=\"ok\"\} [1-9]"' - "$OUT"
check "metrics show the embedding queue" sh -c 'printf %s "$1" | grep -q "^mnemo_embed_queue_depth "' - "$OUT"
rpc "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"compact\",\"arguments\":{\"session_id\":\"nope\"}}}"
eq "$(jget "$OUT" 'j["result"]["isError"]')" true "MCP compact of a bad id: isError"
serve_stop
finish
