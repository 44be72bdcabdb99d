#!/bin/sh
# t1716-serve-mem0-async.sh — Mem0's add with async_mode: the messages are stored when it answers
# {event_id, status: PENDING}, the extraction runs on the background worker, and GET
# /v1/event/{event_id}/ reports it until SUCCEEDED (with the memories it changed) or FAILED (the
# llm extractor unreachable); an unknown id is 404, a malformed one 400 naming event_id, another
# namespace's event 404; the event is in the database, so its status survives a restart.
# async_mode false (the default) keeps the synchronous list. Also as pg/cli/t1716-serve-mem0-async.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

KA=mem0-key-alpha KB=mem0-key-beta
hash() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
MNEMO_SERVER_API_KEYS="$(hash $KA):alpha,$(hash $KB):beta"
export MNEMO_SERVER_API_KEYS
# as KEY METHOD PATH [BODY]: req with Mem0's `Authorization: Token KEY`
as() {
    _k=$1
    shift
    [ $# -ge 3 ] || set -- "$1" "$2" ""
    req "$@" -H "Authorization: Token $_k"
}
# final KEY ID: the event's status once it is neither PENDING nor RUNNING
final() { as "$1" GET "/v1/event/$2/"; [ "$CODE" = 200 ] && ! jget "$OUT" 'j["status"]' | grep -qE 'PENDING|RUNNING'; }
UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'

serve_start
as $KA POST /v3/memories/add/ '{"messages":[{"role":"user","content":"Hi, numbat here. My city is Oslo."}],"user_id":"kim","async_mode":true}'
eq "$CODE $(jget "$OUT" '[j["status"], sorted(j)]')" '200 ["PENDING", ["event_id", "message", "status"]]' \
    "async add: Mem0's event shape"
EID=$(jget "$OUT" 'j["event_id"]')
check "the event id is a UUID" sh -c "printf '%s' '$EID' | grep -Eq '$UUID_RE'"
as $KA GET "/v1/search?q=numbat&mode=keyword"
eq "$(jget "$OUT" 'len(j["hits"])')" 1 "the messages are stored when add answers"
wait_until 120 "the event to end" final $KA "$EID"
eq "$(jget "$OUT" '[j["id"] == "'"$EID"'", j["event_type"], j["status"], [(m["event"], m["memory"]) for m in j["results"]]]')" \
    "[true, \"ADD\", \"SUCCEEDED\", [[\"ADD\", \"User's city is Oslo\"]]]" "polled: SUCCEEDED, with the memory it added"
eq "$(jget "$OUT" '[j["payload"]["user_id"], j["created_at"] is not None, j["completed_at"] is not None, j["latency"] >= 0, j["error"]]')" \
    '["kim", true, true, true, null]' "its times, and the scope it was added in"
MID=$(jget "$OUT" 'j["results"][0]["id"]')
as $KA POST /v3/memories/ '{"filters":{"user_id":"kim"}}'
eq "$(jget "$OUT" '[m["id"] for m in j["results"]]')" "[\"$MID\"]" "the memory exists"

# the route's refusals
as $KA GET /v1/event/0190a000-0000-7000-8000-000000000000/
eq "$CODE" 404 "an unknown event id: 404"
as $KA GET /v1/event/not-an-event/
eq "$CODE $(jget "$OUT" '"event_id" in j["error"]["message"]')" "400 true" "a malformed event id: 400 naming event_id"
as $KB GET "/v1/event/$EID/"
eq "$CODE" 404 "another namespace's event looks missing"
as $KB POST /v3/memories/add/ '{"messages":[{"role":"user","content":"My city is Rome."}],"user_id":"kim","async_mode":true}'
EB=$(jget "$OUT" 'j["event_id"]')
wait_until 120 "beta's event to end" final $KB "$EB"
eq "$(jget "$OUT" 'j["status"]')" SUCCEEDED "beta's own event"
as $KA GET "/v1/event/$EB/"
eq "$CODE" 404 "and alpha cannot see it"

# async_mode false, and no async_mode: the synchronous list, as before
as $KA POST /v3/memories/add/ '{"messages":[{"role":"user","content":"My team is infra."}],"user_id":"kim","async_mode":false}'
eq "$CODE $(jget "$OUT" '[(m["event"], m["memory"]) for m in j]')" "200 [[\"ADD\", \"User's team is infra\"]]" \
    "async_mode false: the memories it changed"
as $KA POST /v3/memories/add/ '{"messages":[{"role":"user","content":"My dog is Rex."}],"user_id":"kim"}'
eq "$CODE $(jget "$OUT" '[m["memory"] for m in j]')" "200 [\"User's dog is Rex\"]" "the default is synchronous"
as $KA POST /v3/memories/add/ '{"messages":[{"role":"user","content":"x"}],"user_id":"kim","async_mode":"yes"}'
eq "$CODE" 400 "async_mode must be a boolean"

# the event is durable: the same answer from a new process
as $KA GET "/v1/event/$EID/"
BEFORE=$OUT
serve_stop
serve_start
as $KA GET "/v1/event/$EID/"
eq "$CODE $OUT" "200 $BEFORE" "after a restart the event answers the same"
serve_stop

# the llm extractor unreachable: the event fails (not pending forever), and stays failed
MNEMO_MEMORY_EXTRACT=llm MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:9 MNEMO_SUMMARIZER_RETRIES=0 serve_start
as $KA POST /v3/memories/add/ '{"messages":[{"role":"user","content":"My city is Bergen."}],"user_id":"lea","async_mode":true}'
eq "$CODE" 200 "async add with the llm extractor: queued"
EF=$(jget "$OUT" 'j["event_id"]')
wait_until 120 "the failing event to end" final $KA "$EF"
eq "$(jget "$OUT" '[j["status"], bool(j["error"]), j["results"], j["completed_at"] is not None]')" \
    '["FAILED", true, [], true]' "FAILED, saying why"
FAILED=$OUT
serve_stop
serve_start
as $KA GET "/v1/event/$EF/"
eq "$CODE $OUT" "200 $FAILED" "after a restart the event is still FAILED"
serve_stop
eq "$(integrity "$DB")" ok "the database passes its integrity check"
finish
