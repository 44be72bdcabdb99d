#!/bin/sh
# t1710-serve-memory.sh — long-term memory over `mnemo serve`: the REST routes of the operation
# table (memory_add, memory_search, memory_list/get/history, memory_update, memory_delete,
# memory_forget), a misspelt parameter refused by name, a key bound to a namespace kept inside it,
# and the MCP tools over stdio, called by their older names remember / recall / update / forget
# (docs/names.md). Also as pg/cli/t1710-serve-memory.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
# provenance names messages of the memory's namespace (docs/memory.md): messages 1 and 2
req POST /v1/sessions/0190a000-0000-7000-8000-000000001710/messages \
    '{"messages":[{"role":"user","content":"I eat no meat"},{"role":"assistant","content":"Noted"}],"create":true}'
req POST /v1/memory '{"text":"The user is vegetarian","kind":"preference","user_id":"u1","sources":[1,2],"metadata":{"topic":"food"}}'
eq "$CODE" 200 "remember: 200"
ID=$(jget "$OUT" 'j["memory"]["id"]')
eq "$(jget "$OUT" '[j["memory"]["version"], j["memory"]["sources"], j["memory"]["actor"]]')" '[1, [1, 2], "api"]' \
    "remember returns the memory with its provenance"
req POST /v1/memory '{"text":"Deploys go through staging first","kind":"instruction","agent_id":"ops"}'
req POST /v1/memory '{"text":"x","colour":"red"}'
eq "$CODE $(jget "$OUT" 'j["error"]["message"].split(" (")[0]')" "400 colour: not a parameter of memory_add" \
    "a misspelt parameter is refused by name"
req POST /v1/memory '{"text":""}'
eq "$CODE" 400 "empty text: 400"
req GET "/v1/memory/search?q=vegetarian&user_id=u1"
eq "$CODE $(jget "$OUT" '[m["id"] for m in j["memories"]]')" "200 [\"$ID\"]" "recall finds it in its scope"
req GET "/v1/memory/search?q=vegetarian&user_id=u2"
eq "$(jget "$OUT" 'len(j["memories"])')" 0 "another user's scope: nothing"
req GET "/v1/memory/search?q=vegetarian&usr_id=u2"
eq "$CODE" 400 "a misspelt filter is refused, never ignored"
req GET "/v1/memory?kind=instruction"
eq "$(jget "$OUT" '[m["text"] for m in j["memories"]]')" '["Deploys go through staging first"]' "memory_list by kind"
# pinned: true is blocks only, false no blocks (false read as "any"), absent any
req POST /v1/memory '{"text":"Answer in British English","kind":"instruction","agent_id":"ops","pinned":true}'
for p in '&pinned=true' '&pinned=false' ''; do
    req GET "/v1/memory?kind=instruction$p"
    printf '%s ' "$(jget "$OUT" 'sorted(m["text"] for m in j["memories"])')"
done >"$T/pinned.txt"
eq "$(cat "$T/pinned.txt")" '["Answer in British English"] ["Deploys go through staging first"] ["Answer in British English", "Deploys go through staging first"] ' \
    "memory_list pinned true / false / absent"
req PATCH "/v1/memory/$ID" '{"text":"The user is vegan","reason":"corrected by the user"}'
eq "$CODE $(jget "$OUT" 'j["memory"]["version"]')" "200 2" "update makes version 2"
req PATCH "/v1/memory/$ID" '{"user_id":"u9"}'
eq "$CODE" 400 "the scope cannot change"
req GET "/v1/memory/$ID/history"
eq "$(jget "$OUT" '[(v["version"], v["text"], v["reason"]) for v in j["versions"]]')" \
    '[[1, "The user is vegetarian", null], [2, "The user is vegan", "corrected by the user"]]' "history"
req DELETE "/v1/memory/$ID"
eq "$CODE" 200 "memory_delete closes it"
req GET "/v1/memory/$ID"
eq "$(jget "$OUT" '[j["memory"]["change"], j["memory"]["valid_to"] is not None]')" '["delete", true]' \
    "the current version is the closing one"
req POST "/v1/memory/$ID/forget"
eq "$CODE" 200 "forget"
req GET "/v1/memory/$ID/history"
eq "$CODE" 404 "forgotten: 404"

# query-string booleans are written as JSON writes them: true or false, nothing else
for q in 'pinned=1' 'pinned=0' 'pinned=' 'include_closed=1' 'include_closed='; do
    req GET "/v1/memory?$q"
    printf '%s %s; ' "$CODE" "$(jget "$OUT" 'j["error"]["message"]')"
done >"$T/bools.txt"
eq "$(cat "$T/bools.txt")" "$(for n in pinned pinned pinned include_closed include_closed; do
    printf '400 %s: must be true or false; ' $n; done)" "query booleans 1, 0 and empty are refused"

# MCP (over HTTP) writes are recorded as the mcp surface's
mcp_call() { # NAME ARGS: sets OUT to the tools/call result
    req POST /mcp "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}" \
        -H 'Accept: application/json, text/event-stream'
    OUT=$(jget "$OUT" 'json.dumps(j["result"]) if "result" in j else json.dumps(j["error"])')
}
mcp_call remember '{"text":"Likes jazz","user_id":"u3"}'
JID=$(jget "$OUT" 'j["structuredContent"]["memory"]["id"]')
eq "$(jget "$OUT" 'j["structuredContent"]["memory"]["actor"]')" mcp "MCP remember: actor mcp"
mcp_call update "{\"memory_id\":\"$JID\",\"text\":\"Likes jazz and blues\"}"
eq "$(jget "$OUT" 'j["structuredContent"]["memory"]["actor"]')" mcp "MCP update: actor mcp"

# an empty scope filter is refused on reads as on writes
req POST /v1/memory '{"text":"x","user_id":""}'
WRITE_MSG=$(jget "$OUT" 'j["error"]["message"]')
eq "$WRITE_MSG" "user_id: must not be empty (leave it unset instead)" "remember: an empty user_id is refused"
req GET "/v1/memory?namespace="
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 namespace: must not be empty (leave it unset instead)" \
    "memory_list: an empty namespace is refused"
req GET "/v1/memory?user_id="
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 $WRITE_MSG" "memory_list: an empty user_id is refused"
req GET "/v1/memory/search?q=jazz&agent_id="
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 agent_id: must not be empty (leave it unset instead)" \
    "recall: an empty agent_id is refused"
mcp_call recall '{"q":"jazz","session_id":""}'
eq "$(jget "$OUT" '[j["isError"], j["content"][0]["text"]]')" \
    '[true, "invalid: session_id: must not be empty (leave it unset instead)"]' "MCP recall: an empty session_id is refused"

# errors name the parameter as each surface spells it
req GET "/v1/memory/search?q="
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 q: must not be empty" "recall: an empty q is named q"
mcp_call recall '{"q":""}'
eq "$(jget "$OUT" 'j["content"][0]["text"]')" "invalid: q: must not be empty" "MCP recall: an empty q is named q"
req GET /v1/memory/xyz
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 memory_id: 'xyz' is not a memory id (a UUID)" \
    "a bad memory id in the path is named memory_id"
# a delete names at only when at was given: without it, a memory not yet begun never becomes true
req POST /v1/memory '{"text":"Moves to Oslo","valid_from":4102444800000}'
FID=$(jget "$OUT" 'j["memory"]["id"]')
req DELETE "/v1/memory/$FID?at=1000"
eq "$CODE $(jget "$OUT" 'j["error"]["message"]')" "400 at: must be after the memory's valid_from" \
    "memory_delete: an at before valid_from is named at"
req DELETE "/v1/memory/$FID"
eq "$CODE" 200 "memory_delete without at before valid_from: closed, never true"
mcp_call forget '{"memory_id":"xyz"}'
eq "$(jget "$OUT" 'j["content"][0]["text"]')" "invalid: memory_id: 'xyz' is not a memory id (a UUID)" \
    "MCP forget: a bad memory id is named memory_id"
serve_stop

# a key bound to a namespace stays inside it
KEY=k-ns-a
export KEY
serve_start --api-key-env KEY --key-namespace team-a
req POST /v1/memory '{"text":"Team A uses Go"}' -H "Authorization: Bearer $KEY"
AID=$(jget "$OUT" 'j["memory"]["id"]')
eq "$(jget "$OUT" 'j["memory"]["namespace"]')" team-a "remember takes the key's namespace"
req POST /v1/memory '{"text":"x","namespace":"team-b"}' -H "Authorization: Bearer $KEY"
eq "$CODE" 403 "another namespace: 403"
serve_stop
ok mn memory add "Team B uses Rust" --namespace team-b
BID=$OUT
serve_start --api-key-env KEY --key-namespace team-a
req GET "/v1/memory/$BID" "" -H "Authorization: Bearer $KEY"
eq "$CODE" 404 "another namespace's memory is not found"
req GET "/v1/memory/search?q=uses" "" -H "Authorization: Bearer $KEY"
eq "$(jget "$OUT" '[m["id"] for m in j["memories"]]')" "[\"$AID\"]" "recall stays in the key's namespace"
serve_stop

# background extraction: an append returns at once; the memory follows
MNEMO_MEMORY_EXTRACT=offline serve_start
# a session that opts out (memory_scope.extract off), queued first: one worker takes the queue in
# order, so once the second session's memory is there, this one's run has finished
req POST /v1/sessions '{"namespace":"bg","metadata":{"memory_scope":{"user_id":"u1","extract":"off"}}}'
OFF=$(jget "$OUT" 'j["session"]["id"]')
req POST "/v1/sessions/$OFF/messages" '{"role":"user","content":"From now on reply in German."}'
eq "$CODE" 201 "append to the session that opted out"
req POST /v1/sessions '{"namespace":"bg"}'
BS=$(jget "$OUT" 'j["session"]["id"]')
req POST "/v1/sessions/$BS/messages" '{"role":"user","content":"From now on reply in French."}'
eq "$CODE" 201 "append"
n=0
while [ $n -lt 300 ]; do
    req GET "/v1/memory?namespace=bg"
    [ "$(jget "$OUT" 'len(j["memories"])')" = 1 ] && break
    sleep 0.1
    n=$((n + 1))
done
eq "$(jget "$OUT" '[(m["text"], m["actor"]) for m in j["memories"]]')" \
    '[["From now on reply in French", "extractor:offline"]]' "extracted in the background after the turn (waited up to 30 s)"
req GET "/v1/memory?namespace=bg&user_id=u1"
eq "$(jget "$OUT" 'len(j["memories"])')" 0 "a session whose memory_scope.extract is off is not extracted in the background"
req POST "/v1/sessions/$OFF/memory/extract" '{}'
eq "$(jget "$OUT" '[j["messages"], j["added"]]')" "[1, 1]" "an explicit memory_extract still reads it (offline)"
req GET "/v1/memory?namespace=bg&user_id=u1"
eq "$(jget "$OUT" '[m["text"] for m in j["memories"]]')" '["From now on reply in German"]' "in the session's memory_scope"
req POST "/v1/sessions/$OFF/memory/extract" '{"extractor":"magic"}'
eq "$CODE" 400 "an unknown extractor is refused"
serve_stop

# MCP tools over stdio
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remember","arguments":{"text":"Prefers answers in Portuguese","kind":"preference","user_id":"u7"}}}' \
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"recall","arguments":{"q":"Portuguese","user_id":"u7"}}}' \
    >"$T/in.jsonl"
run sh -c "'$MNEMO' --db '$DB' mcp <'$T/in.jsonl'"
eq "$RC" 0 "mnemo mcp"
eq "$(printf '%s\n' "$OUT" | sed -n 2p | python3 -c 'import sys,json; t={x["name"]:x for x in json.load(sys.stdin)["result"]["tools"]}; print(all(n in t for n in ("memory_add","memory_search","memory_update","memory_forget")), t["memory_forget"]["annotations"].get("destructiveHint"))')" \
    "True True" "tools/list offers memory_add, memory_search, memory_update, memory_forget (destructive)"
MID=$(printf '%s\n' "$OUT" | sed -n 3p | python3 -c 'import sys,json; print(json.load(sys.stdin)["result"]["structuredContent"]["memory"]["id"])')
eq "$(printf '%s\n' "$OUT" | sed -n 4p | python3 -c 'import sys,json; print([m["id"] for m in json.load(sys.stdin)["result"]["structuredContent"]["memories"]])')" \
    "['$MID']" "recall over MCP finds what remember stored (the older names of memory_search, memory_add)"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}' \
    "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"update\",\"arguments\":{\"memory_id\":\"$MID\",\"text\":\"Prefers answers in English\"}}}" \
    "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"forget\",\"arguments\":{\"memory_id\":\"$MID\"}}}" \
    >"$T/in2.jsonl"
run sh -c "'$MNEMO' --db '$DB' mcp <'$T/in2.jsonl'"
eq "$(printf '%s\n' "$OUT" | sed -n 2p | python3 -c 'import sys,json; print(json.load(sys.stdin)["result"]["structuredContent"]["memory"]["version"])')" \
    2 "update over MCP"
fails 1 "no such memory" mn memory show "$MID"
finish
