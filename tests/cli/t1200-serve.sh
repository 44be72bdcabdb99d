#!/bin/sh
# t1200-serve.sh — `mnemo serve` end to end with curl on an ephemeral loopback port: health,
# sessions, messages (idempotency, batches, paging), context, state, fork, delete, export/import,
# errors (bad JSON, unknown route, wrong method, body limit, bad input), metrics, OpenAPI.
. "$TESTS_DIR/cli/lib.sh"

. "$TESTS_DIR/cli/serve.sh"

serve_start
req GET /healthz
eq "$CODE $OUT" '200 {"status":"ok"}' "healthz"

# sessions
req POST /v1/sessions '{"system_prompt":"You are terse.","metadata":{"k":1},"namespace":"alice"}'
eq "$CODE" 201 "create session"
S=$(jget "$OUT" 'j["session"]["id"]')
eq "$(jget "$OUT" 'j["session"]["namespace"]')" alice "namespace kept"
req GET "/v1/sessions/$S"
eq "$(jget "$OUT" 'j["session"]["system_prompt"]')" "You are terse." "get session"
for n in 1 2 3; do req POST /v1/sessions '{"namespace":"bob"}'; done
req GET '/v1/sessions?namespace=bob&limit=2'
eq "$(jget "$OUT" '[len(j["sessions"]), j["has_more"], j["next_offset"]]')" "[2, true, 2]" "list page 1"
req GET '/v1/sessions?namespace=bob&limit=2&offset=2'
eq "$(jget "$OUT" '[len(j["sessions"]), j["has_more"]]')" "[1, false]" "list page 2"
req GET '/v1/sessions?limit=0'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 invalid" "limit 0 refused"

# messages: one with an idempotency key (header), retried; a batch; paging
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"What is in the repo?"}' -H 'Idempotency-Key: turn-1'
eq "$CODE" 201 "append"
M1=$(jget "$OUT" 'j["messages"][0]["id"]')
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"What is in the repo?"}' -H 'Idempotency-Key: turn-1'
eq "$(jget "$OUT" 'j["messages"][0]["id"]')" "$M1" "idempotent retry returns the stored message"
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"What is in the box?"}' -H 'Idempotency-Key: turn-1'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "409 conflict" "the key of another message: 409 (http-api.md)"
req POST "/v1/sessions/$S/messages" '{"messages":[
  {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},
  {"role":"tool","content":"README.md src/","tool_call_id":"c1"},
  {"role":"assistant","content":"A README and sources.","idempotency_key":"turn-2"}]}'
eq "$CODE $(jget "$OUT" '[m["seq"] for m in j["messages"]]')" "201 [2, 3, 4]" "batch append"
req POST "/v1/sessions/$S/messages" '{"messages":[{"role":"user","content":"ok"},{"role":"tool","content":"x"}]}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 invalid" "a bad batch is refused"
check "error names the message index" grep -Eq 'messages\[1\]|index 1|message 1' "$T/.body"
req GET "/v1/sessions/$S"
eq "$(jget "$OUT" 'j["session"]["message_count"]')" 4 "nothing of the bad batch was written"
req GET "/v1/sessions/$S/messages?limit=3"
eq "$(jget "$OUT" '[[m["seq"] for m in j["messages"]], j["has_more"], j["next_after"]]')" "[[1, 2, 3], true, 3]" "history page 1"
req GET "/v1/sessions/$S/messages?limit=3&after=3"
eq "$(jget "$OUT" '[[m["seq"] for m in j["messages"]], j["has_more"]]')" "[[4], false]" "history page 2"
req GET "/v1/sessions/$S/messages?limit=2&tail=true"
eq "$(jget "$OUT" '[m["seq"] for m in j["messages"]]')" "[3, 4]" "history tail"
req POST "/v1/sessions/$S/messages" '{"role":"wizard","content":"x"}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 invalid" "unknown role"
req POST "/v1/sessions/0190a000-0000-7000-8000-00000000abcd/messages" '{"role":"user","content":"x"}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "404 not_found" "append to a missing session"
req POST "/v1/sessions/0190a000-0000-7000-8000-00000000abcd/messages" '{"role":"user","content":"x","create":true}'
eq "$CODE" 201 "append with create"

# context: messages + report, same as the CLI's
req POST "/v1/sessions/$S/context" '{"max_tokens":4096}'
eq "$CODE $(jget "$OUT" '[j["format"], len(j["messages"]), j["kept"], j["report"]["strategy"]]')" \
    '200 ["openai", 5, 4, "window"]' "context"
REST=$OUT
ok mn context "$S" --max-tokens 4096
eq "$(jget "$REST" 'json.dumps(j["messages"], ensure_ascii=False, separators=(",", ":"))')" "$(cat "$T/.out")" \
    "REST context = CLI context, byte for byte"
req POST "/v1/sessions/$S/context" '{"max_tokens":4096}'
CTX1=$OUT
req POST "/v1/sessions/$S/context" '{"max_tokens":4096}'
eq "$OUT" "$CTX1" "the same data gives the same context"
req POST "/v1/sessions/$S/context" '{"max_tokens":40}'
eq "$(jget "$OUT" '[j["dropped"] > 0, j["tokens"] <= 40]')" "[true, true]" "a small budget drops messages"
req POST "/v1/sessions/$S/context" '{"format":"anthropic"}'
eq "$(jget "$OUT" '[j["format"], j["system"], j["messages"][0]["role"], j["tokens"] > 0, "report" in j]')" \
    '["anthropic", "You are terse.", "user", true, true]' "anthropic format"
req POST "/v1/sessions/$S/context" '{"format":"text"}'
REST=$OUT
ok mn context "$S" --format text
cp "$T/.out" "$T/cli-text.txt"
eq "$(jget "$REST" '[j["format"], j["text"] == open("cli-text.txt").read(), j["kept"] > 0]')" '["text", true, true]' \
    "text format = CLI text"
req POST "/v1/sessions/$S/context" '{"format":"yaml"}'
eq "$CODE" 400 "unknown format"
req POST "/v1/sessions/$S/context" '{"strategy":"psychic"}'
eq "$CODE" 400 "unknown strategy"

# state, files, fork, delete
req POST "/v1/sessions/$S/state" '{"params":{"city":"Oslo"}}'
eq "$CODE $(jget "$OUT" 'j["state"]["params"]')" '200 {"city": "Oslo"}' "state merge"
req GET "/v1/sessions/$S/state"
eq "$(jget "$OUT" 'j["state"]["params"]["city"]')" Oslo "state get"
req POST "/v1/sessions/$S/state" '{"params":[1]}'
eq "$CODE" 400 "state params must be an object"
req POST "/v1/sessions/$S/fork" '{"upto_seq":1}'
eq "$CODE $(jget "$OUT" '[j["session"]["parent_id"], j["session"]["message_count"]]')" "201 [\"$S\", 1]" "fork"
F=$(jget "$OUT" 'j["session"]["id"]')
req DELETE "/v1/sessions/$F"
eq "$CODE $(jget "$OUT" 'j["deleted"]')" "200 $F" "delete"
req POST "/v1/sessions/$S/fork" '{"upto_seq":1}'
F=$(jget "$OUT" 'j["session"]["id"]')
req DELETE "/v1/sessions/$(printf '%s' "$F" | tr a-f A-F)"
eq "$CODE $(jget "$OUT" 'j["deleted"]')" "200 $F" "delete by an upper-case id answers the stored id"
req GET "/v1/sessions/$F"
eq "$CODE $(jget "$OUT" 'sorted(j["error"].keys())') $(jget "$OUT" 'j["error"]["code"]')" \
    "404 [\"code\", \"message\"] not_found" "deleted session: 404 with the error shape"
req GET "/v1/sessions/not-a-uuid"
eq "$CODE" 404 "a key that names no session is 404"
req GET "/v1/sessions/not%09a-key"
eq "$CODE" 400 "neither a UUID nor a key (a control character) is 400"

# protocol errors
req POST /v1/sessions '{"title": '
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 bad_json" "bad JSON"
req POST /v1/sessions '[1,2]'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 bad_json" "a body that is not an object"
req GET /v1/nothing
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "404 not_found" "unknown route"
req PUT "/v1/sessions/$S"
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "405 method_not_allowed" "wrong method"

# export (streamed) and import into a second server
CODE=$(curl -s -o "$T/export.jsonl" -w '%{http_code}' "$URL/v1/export")
eq "$CODE" 200 "export"
mn export >"$T/cli-export.jsonl"
check "REST export = CLI export" cmp -s "$T/export.jsonl" "$T/cli-export.jsonl"
req GET "/v1/export?ids=0190a000-0000-7000-8000-00000000ffff"
eq "$CODE" 404 "export of a missing session: 404 before any byte"

# metrics and OpenAPI
req GET /metrics
check "metrics count appends" sh -c "grep -q 'mnemo_http_requests_total{route=\"append\",status=\"201\"}' '$T/.body'"
check "metrics have latency histograms" sh -c "grep -q 'mnemo_http_request_duration_seconds_bucket{route=\"context_build\"' '$T/.body'"
# server.committers 0 (the default): one committer on SQLite (one writer at a time), two on PostgreSQL
if [ "$(backend)" = postgres ]; then committers=2; else committers=1; fi
check "metrics show the backend's default committers ($committers)" grep -qx "mnemo_commit_committers $committers" "$T/.body"
req GET /openapi.json
eq "$(jget "$OUT" '[j["openapi"], "post" in j["paths"]["/v1/sessions/{session_id}/context"], j["paths"]["/v1/sessions"]["get"]["operationId"]]')" \
    '["3.1.0", true, "session_list"]' "OpenAPI document from the operation table"
serve_stop

DB0=$DB
DB=$(new_db second)
serve_start --max-body 2048
CODE=$(curl -s -o "$T/.body" -w '%{http_code}' -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$T/export.jsonl" "$URL/v1/import")
OUT=$(cat "$T/.body")
if [ "$(wc -c <"$T/export.jsonl")" -gt 2048 ]; then
    eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "413 too_big" "body over --max-body: 413"
fi
head -c 1500 "$T/export.jsonl" | head -n 2 >"$T/small.jsonl"
CODE=$(curl -s -o "$T/.body" -w '%{http_code}' -X POST -H 'Content-Type: application/x-ndjson' --data-binary @"$T/small.jsonl" "$URL/v1/import")
eq "$CODE $(jget "$(cat "$T/.body")" 'j["sessions_added"]')" "200 1" "import"
req POST /v1/sessions "{\"title\":\"$(head -c 3000 /dev/zero | tr '\0' x)\"}"
eq "$CODE" 413 "JSON body over the limit"
serve_stop
DB=$DB0

# refusals: a public address without a key
fails 2 'without an API key' mn serve --listen 0.0.0.0:0
fails 2 'port' mn serve --listen 127.0.0.1:99999
finish
