#!/bin/sh
# t1230-serve-openai.sh — the OpenAI Conversations API with curl: create with items, the item
# shapes (string content normalised, missing type = message, function_call / _output and other
# types kept), listing order and paging, get and delete of one item, metadata update, the error
# shape, `include` (include[]=…) on items create, list and retrieve (namespace-bound keys on
# conversations: t1240-serve-keys.sh).
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
req POST /v1/conversations '{"metadata":{"k":"v"},"items":[{"role":"user","content":"hello"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"42"},{"type":"web_search_call","status":"completed","action":{"q":"x"}}]}'
eq "$CODE" 200 "create: 200"
C=$(jget "$OUT" 'j["id"]')
eq "$(jget "$OUT" 'j["object"]+" "+j["metadata"]["k"]')" "conversation v" "conversation object"
req GET "/v1/conversations/$C/items?order=asc"
eq "$(jget "$OUT" '[i["id"] for i in j["data"]]')" '["msg_1", "fc_2", "fco_3", "item_4"]' "item ids by type and seq"
eq "$(jget "$OUT" 'j["data"][0]["content"]')" '[{"type": "input_text", "text": "hello"}]' "string content normalised"
eq "$(jget "$OUT" 'j["data"][3]["action"]')" '{"q": "x"}' "other item types kept as they came"
eq "$(jget "$OUT" '[j["first_id"], j["last_id"], j["has_more"]]')" '["msg_1", "item_4", false]' "first_id, last_id, has_more"
req GET "/v1/conversations/$C/items?limit=1"
eq "$(jget "$OUT" '[i["id"] for i in j["data"]] + [j["has_more"]]')" '["item_4", true]' "desc by default, has_more"
req GET "/v1/conversations/$C/items?limit=2&after=fco_3"
eq "$(jget "$OUT" '[i["id"] for i in j["data"]] + [j["has_more"]]')" '["fc_2", "msg_1", false]' "desc after"
req GET "/v1/conversations/$C/items?limit=2&order=asc&after=msg_1"
eq "$(jget "$OUT" '[i["id"] for i in j["data"]] + [j["has_more"]]')" '["fc_2", "fco_3", true]' "asc after"
req GET "/v1/conversations/$C/items?after=zz_3"
eq "$CODE $(jget "$OUT" 'j["error"]["param"]')" "400 after" "after: an id of another form is refused"
for bad in zz_2 msg_2 fc_02 fc_+2 fc_2x _2; do
    req GET "/v1/conversations/$C/items/$bad"
    eq "$CODE" 404 "item $bad: not an id handed out (item 2 is fc_2)"
done
req DELETE "/v1/conversations/$C/items/zz_2"
eq "$CODE" 404 "delete zz_2: 404"
req GET "/v1/conversations/$C/items/fc_2"
eq "$CODE $(jget "$OUT" 'j["call_id"]')" "200 c1" "fc_2 is still there"
req GET "/v1/conversations/$C/items?limit=0"
eq "$CODE $(jget "$OUT" 'j["error"]["param"]+" "+j["error"]["type"]')" "400 limit invalid_request_error" "limit out of range"
req GET "/v1/conversations/$C/items?order=up"
eq "$CODE" 400 "bad order"
req POST "/v1/conversations/$C/items" '{"items":[{"type":"function_call","name":"f"}]}'
eq "$CODE" 400 "function_call without call_id"
req POST "/v1/conversations/$C/items" '{"items":[{"role":"assistant","content":"bye"}]}'
eq "$(jget "$OUT" 'j["data"][0]["content"][0]["type"]+" "+j["data"][0]["id"]')" "output_text msg_5" "assistant text is output_text"
req GET "/v1/conversations/$C/items/msg_5"
eq "$(jget "$OUT" 'j["role"]')" assistant "get one item"
req DELETE "/v1/conversations/$C/items/msg_5"
eq "$CODE $(jget "$OUT" 'j["id"]')" "200 $C" "delete item returns the conversation"
req GET "/v1/conversations/$C/items/msg_5"
eq "$(jget "$OUT" '[j["error"]["type"], j["error"]["code"]]')" '["not_found_error", "not_found"]' "deleted item is gone"
req POST "/v1/conversations/$C" '{"metadata":{"k":"w"}}'
eq "$(jget "$OUT" 'j["metadata"]')" '{"k": "w"}' "metadata updated"
# OpenAI's metadata limits: 16 pairs, keys of 64 characters, string values of 512 (characters,
# not bytes: 512 "é" are 1,024 bytes)
meta() { python3 -c 'import json, sys; print(json.dumps({"metadata": eval(sys.argv[1])}))' "$1"; }
req POST "/v1/conversations/$C" "$(meta '{"k%d" % i: "v" for i in range(16)}')"
eq "$CODE" 200 "16 pairs"
req POST "/v1/conversations/$C" "$(meta '{"k": "\u00e9" * 512, "x" * 64: "v"}')"
eq "$CODE" 200 "a value of 512 characters (1,024 bytes), a key of 64"
for bad in '{"k%d" % i: "v" for i in range(17)}' '{"x" * 65: "v"}' '{"k": "v" * 513}' '{"k": 1}' '{"k": None}'; do
    req POST "/v1/conversations/$C" "$(meta "$bad")"
    eq "$CODE $(jget "$OUT" 'j["error"]["param"]')" "400 metadata" "metadata $bad: 400"
    req POST /v1/conversations "$(meta "$bad")"
    eq "$CODE" 400 "create with metadata $bad: 400"
done
# metadata is an object, as its declaration (/openapi.json) says
req POST /v1/conversations '{"metadata":"{\"k\":\"v\"}"}'
eq "$CODE $(jget "$OUT" 'j["error"]["param"]')" "400 metadata" "create with metadata as text: 400"
req GET /openapi.json
eq "$(jget "$OUT" 'j["paths"]["/v1/conversations"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"]["metadata"]["type"]')" \
    object "the declared type of conversation metadata: an object only"
req GET "/v1/conversations/$C"
eq "$(jget "$OUT" 'len(j["metadata"])')" 2 "the refused updates changed nothing"
req POST "/v1/conversations/$C" '{"metadata":{"k":"w"}}'
req POST "/v1/conversations/$C" '{"metadata":'
eq "$(jget "$OUT" 'j["error"]["code"]')" bad_json "bad JSON: OpenAI shape"
SID=${C#conv_}
req GET "/v1/sessions/$SID/messages"
eq "$(jget "$OUT" 'len(j["messages"])')" 4 "the conversation is a session"
req DELETE "/v1/conversations/$C"
eq "$(jget "$OUT" 'j["deleted"]')" true "delete conversation"
req GET "/v1/conversations/$C"
eq "$CODE" 404 "deleted conversation is gone"

# include: the openai SDK sends it on items create, list and retrieve, in the query as
# include%5B%5D=… (include[]), repeated. Each value the API documents is accepted and changes
# nothing (an item is returned as it was stored, whatever it holds); another is refused by name.
INC=
for v in file_search_call.results web_search_call.results web_search_call.action.sources \
    message.input_image.image_url computer_call_output.output.image_url code_interpreter_call.outputs \
    reasoning.encrypted_content message.output_text.logprobs; do
    INC="$INC&include%5B%5D=$v"
done
INC=${INC#&}
req POST /v1/conversations '{}'
C=$(jget "$OUT" 'j["id"]')
req POST "/v1/conversations/$C/items?$INC" '{"items":[{"role":"user","content":"hi"},{"type":"reasoning","summary":[],"encrypted_content":"gAAA"}]}'
eq "$CODE $(jget "$OUT" '[i["id"] for i in j["data"]]')" '200 ["msg_1", "item_2"]' "items create with every include value: 200"
eq "$(jget "$OUT" 'j["data"][1]["encrypted_content"]')" gAAA "...the items as they came"
req GET "/v1/conversations/$C/items?order=asc"
PLAIN=$OUT
req GET "/v1/conversations/$C/items?order=asc&$INC"
eq "$CODE $OUT" "200 $PLAIN" "items list with include: the same page as without"
req GET "/v1/conversations/$C/items/item_2"
PLAIN=$OUT
req GET "/v1/conversations/$C/items/item_2?include[]=reasoning.encrypted_content" '' -g
eq "$CODE $OUT" "200 $PLAIN" "item retrieve with include (brackets unencoded): the same item"
req POST "/v1/conversations/$C/items" '{"items":[{"role":"user","content":"x"}],"include":["message.output_text.logprobs"]}'
eq "$CODE" 200 "include in the JSON body of items create: accepted too"
BAD='include%5B%5D=file_search_call.results&include%5B%5D=zz_nope'
named() { jget "$OUT" '[j["error"]["param"], j["error"]["message"].split(" is not")[0]]'; }
req POST "/v1/conversations/$C/items?$BAD" '{"items":[{"role":"user","content":"not stored"}]}'
eq "$CODE $(named)" "400 [\"include[1]\", \"include[1]: 'zz_nope'\"]" "items create: an unknown include value is refused naming it"
req GET "/v1/conversations/$C/items?$BAD"
eq "$CODE $(named)" "400 [\"include[1]\", \"include[1]: 'zz_nope'\"]" "items list: an unknown include value is refused naming it"
req GET "/v1/conversations/$C/items/msg_1?$BAD"
eq "$CODE $(named)" "400 [\"include[1]\", \"include[1]: 'zz_nope'\"]" "item retrieve: an unknown include value is refused naming it"
req GET "/v1/conversations/$C/items?include=file_search_call.results"
eq "$CODE $(jget "$OUT" 'j["error"]["param"]')" "400 include" "include without [] in a query: refused, not guessed"
req GET "/v1/conversations/$C/items?include%5B%5D=file_search_call.results&include=reasoning.encrypted_content"
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 include: given twice in the query" "include[] and include mixed: refused"
req GET "/v1/conversations/$C/items?order=asc"
eq "$(jget "$OUT" 'len(j["data"])')" 3 "the refused create stored nothing"
req POST "/v1/conversations?include%5B%5D=file_search_call.results" '{}'
eq "$CODE $(jget "$OUT" 'j["error"]["param"]')" "400 include" "conversation create takes no include (neither the API nor the SDK sends one)"
req GET /openapi.json
eq "$(jget "$OUT" '[p["schema"]["items"]["enum"] for p in j["paths"]["/v1/conversations/{conversation_id}/items"]["get"]["parameters"] if p["name"] == "include"]')" \
    '[["file_search_call.results", "web_search_call.results", "web_search_call.action.sources", "message.input_image.image_url", "computer_call_output.output.image_url", "code_interpreter_call.outputs", "reasoning.encrypted_content", "message.output_text.logprobs"]]' \
    "the declaration lists the values (/openapi.json)"
serve_stop
finish
