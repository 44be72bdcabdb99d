#!/bin/sh
# t1291-serve-findings.sh — what the library does is reachable through REST and MCP with the CLI's
# names (issue #14): context's rag, model_window (the report's pre-flight) and no_fold; the whole
# ask-user state flow (wait, merge, result, plan, clear); search's min_similarity, since and until;
# file deduplication (files_check); resume as an MCP tool; session clear and limit. A parameter
# the operation does not declare is refused by name, never dropped.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

rpc() { req POST /mcp "$1" -H 'Accept: application/json, text/event-stream'; }
tool() { rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}"; }

export MNEMO_EMBEDDER=hash
S=0190a000-0000-7000-8000-0000000000c1
ok mn session new --id "$S" --namespace findings --json
ok mn add "$S" user "the deploy key lives in the vault under ops" --json
ok mn add "$S" assistant "noted: the deploy key is in the ops vault" --json
ok mn add "$S" user "which vault holds the deploy key" --json
ok mn embed --backfill --json
serve_start

# context: rag, model_window (pre-flight), no_fold
req POST "/v1/sessions/$S/context" '{"model_window":8000,"rag":true,"no_fold":true}'
eq "$CODE $(jget "$OUT" '[j["report"]["preflight"]["model_window"], j["report"]["rag"]["enabled"], j["report"]["fold"]["mode"]]')" \
    '200 [8000, true, "off"]' "REST context: model_window reaches the pre-flight, rag runs, no_fold is fold off"
req POST "/v1/sessions/$S/context" '{"nofold":true}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"].split(" (")[0]')" "400 nofold: not a parameter of context_build" \
    "a misspelt context option is refused by name"
req POST "/v1/sessions/$S/context" '{"rag_top_k":101}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 rag_top_k: 101 is out of range 1..100" "rag_top_k's limit"
tool context "{\"session_id\":\"$S\",\"model_window\":8000,\"rag\":true,\"rag_scope\":\"all\",\"rag_min_similarity\":0}"
eq "$(jget "$OUT" '[j["result"]["structuredContent"]["report"]["preflight"]["fits"], j["result"]["structuredContent"]["report"]["rag"]["scope"]]')" \
    '[true, "all"]' "MCP context: pre-flight and rag scope"

# the state flow of seed 003
req POST "/v1/sessions/$S/state" '{"waiting_for_param":"order_id"}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"].split(" (")[0]')" "400 waiting_for_param: not a parameter of state_merge_params" \
    "state_merge names what it does not take"
req POST "/v1/sessions/$S/state/wait" '{"param":"order_id"}'
eq "$CODE $(jget "$OUT" 'j["state"]["waiting_for_param"]')" "200 order_id" "state_wait"
req POST "/v1/sessions/$S/state" '{"params":{"order_id":42}}'
eq "$(jget "$OUT" '[j["state"]["params"], j["state"]["waiting_for_param"]]')" '[{"order_id": 42}, null]' \
    "the awaited parameter arrives: waiting ends"
tool state_result "{\"session_id\":\"$S\",\"intent_id\":\"lookup_order\",\"result\":{\"status\":\"shipped\"}}"
eq "$(jget "$OUT" '[j["result"]["structuredContent"]["state"]["last_intent_id"], j["result"]["structuredContent"]["state"]["last_result"]]')" \
    '["lookup_order", {"status": "shipped"}]' "MCP state_result"
req POST "/v1/sessions/$S/state/plan" '{"plan":{"steps":["refund","notify"]}}'
eq "$(jget "$OUT" 'j["state"]["plan_execution"]')" '{"steps": ["refund", "notify"]}' "state_plan"
req POST "/v1/sessions/$S/state/wait" '{"param":"email"}'
req POST "/v1/sessions/$S/state/unwait" ''
eq "$(jget "$OUT" 'j["state"]["waiting_for_param"]')" null "state_unwait"
req POST "/v1/sessions/$S/state/clear" ''
eq "$(jget "$OUT" 'j["state"]')" '{"params": {}, "waiting_for_param": null, "last_intent_id": null, "last_result": null, "plan_execution": null}' \
    "state_clear"
ok mn state "$S"
eq "$OUT" '{"params":{},"waiting_for_param":null,"last_intent_id":null,"last_result":null,"plan_execution":null}' \
    "the CLI sees the same state"

# search: min_similarity is honoured, since/until filter by time
req GET "/v1/search?q=deploy%20key%20vault&mode=semantic&min_similarity=-1"
ALL=$(jget "$OUT" 'len(j["hits"])')
LOW=$(jget "$OUT" 'min(h["similarity"] for h in j["hits"])')
check "without a threshold, some hit is below 0.99 ($LOW)" python3 -c "import sys; sys.exit(not $LOW < 0.99)"
req GET "/v1/search?q=deploy%20key%20vault&mode=semantic&min_similarity=0.99"
eq "$CODE $(jget "$OUT" 'all(h["similarity"] >= 0.99 for h in j["hits"]) and len(j["hits"]) < '"$ALL")" "200 true" \
    "min_similarity 0.99 drops the hits below it"
req GET "/v1/search?q=deploy&mode=keyword&until=1"
eq "$(jget "$OUT" 'len(j["hits"])')" 0 "until: nothing was written before 1970"
req GET "/v1/search?q=deploy&mode=keyword&since=1"
eq "$(jget "$OUT" 'len(j["hits"]) > 0')" true "since: everything was written after"
req GET "/v1/search?q=deploy&min_similarty=0.5"
eq "$CODE" 400 "a misspelt search filter is refused"

# file deduplication (seed 002)
req POST "/v1/sessions/$S/files/check" '{"path":"src/app.c","content":"int main(void) { return 0; }"}'
eq "$CODE $(jget "$OUT" 'j["include"]')" "200 true" "files_check: first time: include"
tool files_check "{\"session_id\":\"$S\",\"path\":\"src/app.c\",\"content\":\"int main(void) { return 0; }\"}"
eq "$(jget "$OUT" 'j["result"]["structuredContent"]["include"]')" false "the same content again (MCP): skip"

# resume is an MCP tool; clear and limit exist on the service
tool session_resume '{"namespace":"findings"}'
eq "$(jget "$OUT" 'j["result"]["structuredContent"]["session"]["id"]')" "$S" "MCP session_resume"
req POST "/v1/sessions/$S/clear" ''
eq "$CODE $(jget "$OUT" 'j["cleared"]')" "200 3" "session_clear"
req POST "/v1/sessions/$S/clear" '{"undo":true}'
eq "$(jget "$OUT" 'j["restored"]')" 3 "session_clear undo"
req POST "/v1/sessions/$S/limit" '{"max_turns":1}'
eq "$CODE $(jget "$OUT" 'j["session"]["max_turns"]')" "200 1" "session_limit"

# the session-list limit is the library's, once
req GET "/v1/sessions?limit=10000"
eq "$CODE" 200 "session_list takes the library's limit of 10000"
req GET "/v1/sessions?limit=10001"
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 limit: 10001 is out of range 1..10000" "and refuses one more"
serve_stop
finish
