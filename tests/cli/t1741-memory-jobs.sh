#!/bin/sh
# t1741-memory-jobs.sh — extraction jobs as operations of their own (docs/memory.md, "REST and
# MCP"): `mnemo memory queue` records a job and answers it pending; the command's process ends
# with its worker, so `mnemo memory job` runs a job nobody holds and waits for its end; REST's
# POST /v1/sessions/{session_id}/memory/extract/jobs and GET /v1/memory/jobs/{job_id} answer the
# same job object, the server's worker running it. A malformed id names job_id, an unknown one (or
# another namespace's) is not found. Also as pg/cli/t1741-memory-jobs.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
# ended ID: the CLI reads job ID as neither pending nor running
ended() { run mn memory job "$1" --json && [ "$RC" = 0 ] && ! jget "$OUT" 'j["state"]' | grep -qE 'pending|running'; }
# texts NS: the live memories of namespace NS, sorted
texts() {
    ok mn memory list --namespace "$1" --json
    jget "$OUT" 'sorted(m["text"] for m in j)'
}

# --- the CLI: queue, then ask until it has ended ------------------------------------------------------
ok mn session new --key ada
SID=$OUT
ok mn add ada user "My name is Ada"
ok mn add ada user "I live in Paris"
ok mn memory queue ada --data '{"ticket": 7}' --json
eq "$(jget "$OUT" '[sorted(j), j["session_id"] == "'"$SID"'", j["namespace"], j["data"], j["state"] in ("pending", "running"), j["upto_seq"]]')" \
    '[["data", "error", "finished_at", "id", "namespace", "queued_at", "session_id", "state", "upto_seq"], true, "default", {"ticket": 7}, true, 2]' \
    "memory queue: the job object, not ended, up to the session's newest message"
J=$(jget "$OUT" 'j["id"]')
check "the job id is a UUID" sh -c "printf '%s' '$J' | grep -Eq '$UUID_RE'"
wait_until 120 "the job to end" ended "$J"
eq "$(jget "$OUT" '[j["id"] == "'"$J"'", j["state"], j["error"], j["data"], j["finished_at"] >= j["queued_at"]]')" \
    '[true, "done", null, {"ticket": 7}, true]' "memory job: done, with when it finished"
eq "$(texts default)" "[\"User lives in Paris\", \"User's name is Ada\"]" "the job extracted the statements"
ok mn memory job "$J"
eq "$OUT" "job $J: done (session $SID, up to seq 2)" "memory job: one line for people"

# --- the CLI's refusals ---------------------------------------------------------------------------------
fails 1 'job_id' mn memory job not-a-job
fails 1 'not found' mn memory job 0190a000-0000-7000-8000-000000000000
fails 2 'unknown option --bogus' mn memory job "$J" --bogus
fails 2 'unknown option --bogus' mn memory queue ada --bogus
fails 1 'data' mn memory queue ada --data '[1]'
fails 2 'data: malformed JSON' mn memory queue ada --data '{x'
fails 1 'not found' mn memory queue no-such-session

# --- REST: the server's worker runs the job ------------------------------------------------------------
hash() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
KA=jobs-key-alpha KB=jobs-key-beta
MNEMO_SERVER_API_KEYS="$(hash $KA):alpha,$(hash $KB):beta"
export MNEMO_SERVER_API_KEYS
ok mn session new --namespace alpha --key bob
SB=$OUT
ok mn add "$SB" user "My name is Bob"
# as KEY METHOD PATH [BODY]
as() {
    _k=$1
    shift
    [ $# -ge 3 ] || set -- "$1" "$2" ""
    req "$@" -H "Authorization: Bearer $_k"
}
# done_rest KEY ID: GET answers the job as neither pending nor running
done_rest() { as "$1" GET "/v1/memory/jobs/$2"; [ "$CODE" = 200 ] && ! jget "$OUT" 'j["state"]' | grep -qE 'pending|running'; }

serve_start
as $KA POST /v1/sessions/bob/memory/extract/jobs '{"data":{"from":"rest"}}'
eq "$CODE $(jget "$OUT" '[j["session_id"] == "'"$SB"'", j["namespace"], j["data"], j["state"] in ("pending", "running"), j["upto_seq"]]')" \
    '200 [true, "alpha", {"from": "rest"}, true, 1]' "POST .../memory/extract/jobs: the job, by the session's key"
JR=$(jget "$OUT" 'j["id"]')
wait_until 120 "the REST job to end" done_rest $KA "$JR"
eq "$(jget "$OUT" '[j["state"], j["error"], j["finished_at"] is not None]')" '["done", null, true]' \
    "GET /v1/memory/jobs/{job_id}: done"
eq "$(texts alpha)" "[\"User's name is Bob\"]" "the server's worker extracted it"
as $KA POST "/v1/sessions/$SB/memory/extract/jobs"
eq "$CODE $(jget "$OUT" 'j["data"]')" "200 {}" "no data: {}"

as $KA GET /v1/memory/jobs/not-a-job
eq "$CODE $(jget "$OUT" '"job_id" in j["error"]["message"]')" "400 true" "a malformed job id: 400 naming job_id"
as $KA GET /v1/memory/jobs/0190a000-0000-7000-8000-000000000000
eq "$CODE" 404 "an unknown job: 404"
as $KB GET "/v1/memory/jobs/$JR"
eq "$CODE" 404 "another namespace's job looks missing"
as $KB POST "/v1/sessions/$SB/memory/extract/jobs" '{}'
eq "$CODE" 404 "nor can another namespace queue one on the session"
as $KA POST /v1/sessions/bob/memory/extract/jobs '{"data":[1]}'
eq "$CODE $(jget "$OUT" '"data" in j["error"]["message"]')" "400 true" "data must be an object"
serve_stop

# the job is in the database: the CLI reads the server's job too
ok mn memory job "$JR" --json
eq "$(jget "$OUT" '[j["state"], j["namespace"]]')" '["done", "alpha"]' "a job outlives the process that ran it"
finish
