#!/bin/sh
# t1295-serve-background-folds.sh — folds off the hot path (seed 004 §9.2): through `mnemo serve`
# with an llm summariser that takes seconds (fake "delay") or hangs (fake "hang"), a context whose
# fold is due answers with the stored summary and fold.outcome "queued"; the worker completes the
# fold and the next context uses the new summary; stopping the server mid-fold loses nothing.
# Also: fold "sync" still folds before answering, and an unknown fold mode is refused.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
MNEMO_TOKENIZER=heuristic
export MNEMO_TOKENIZER
if ! command -v node >/dev/null 2>&1; then
    echo "node not installed: the fake summariser cannot run" >&2
    fail "node is required (scripts/install-deps)"
    finish
fi
node "$TESTS_DIR/fake_llm/fake_llm.js" >"$T/llm.port" &
LLM=$!
n=0
while [ ! -s "$T/llm.port" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
LPORT=$(sed -n 's/^PORT //p' "$T/llm.port")
MNEMO_SUMMARIZER=llm MNEMO_SUMMARIZER_BASE_URL=http://127.0.0.1:$LPORT MNEMO_SUMMARIZER_RETRIES=0 \
    MNEMO_MAX_HISTORY_MESSAGES=8 MNEMO_SUMMARIZER_MODEL=delay
export MNEMO_SUMMARIZER MNEMO_SUMMARIZER_BASE_URL MNEMO_SUMMARIZER_RETRIES MNEMO_MAX_HISTORY_MESSAGES \
    MNEMO_SUMMARIZER_MODEL

# wait_for DESC CMD...: runs CMD until it succeeds (up to 90 s; progress, never a time asserted)
wait_for() {
    _d=$1
    shift
    _n=0
    while ! "$@" && [ $_n -lt 900 ]; do sleep 0.1; _n=$((_n + 1)); done
    "$@" || fail "$_d: not reached in 90 s"
}
summary_upto() { req GET "/v1/sessions/$S/summary"; [ "$CODE" = 200 ] && jget "$OUT" 'j["summary"]["covers_upto"]'; }
summary_past() { _u=$(summary_upto) && [ -n "$_u" ] && [ "$_u" -gt "$1" ]; }
hang_started() { curl -s "http://127.0.0.1:$LPORT/stats" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["requests"].get("hang",0) > 0 else 1)'; }

serve_start
req POST /v1/sessions '{}'
S=$(jget "$OUT" 'j["session"]["id"]')
i=0
while [ $i -lt 10 ]; do
    req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"question $i about src/mod$i.c\"}"
    req POST "/v1/sessions/$S/messages" "{\"role\":\"assistant\",\"content\":\"answer $i\"}"
    i=$((i + 1))
done
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"the current question"}'

req POST "/v1/sessions/$S/context" '{"strategy":"summary","max_tokens":2000,"fold":"bogus"}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 invalid" "an unknown fold mode is refused"
req POST "/v1/sessions/$S/context" '{"strategy":"summary","max_tokens":2000}'
eq "$CODE" 200 "context answers while its fold is due"
eq "$(jget "$OUT" 'j["report"]["fold"]["outcome"]')" queued "the due fold is queued, not run in the request"
eq "$(jget "$OUT" 'j["messages"][-1]["content"]')" "the current question" "the current question is last"
wait_for "the background fold stores a summary" summary_past 0
req POST "/v1/sessions/$S/context" '{"strategy":"summary","max_tokens":2000}'
eq "$(jget "$OUT" '[j["report"]["summary"]["shown"], j["report"]["fold"]["outcome"]]')" '[true, "none"]' \
    "the next context uses the new summary"
eq "$(jget "$OUT" 'any("Summary (" in m["content"] for m in j["messages"])')" true "the llm summary is what is sent"
eq "$(jget "$OUT" 'j["messages"][-1]["content"]')" "the current question" "and the current question"
UPTO=$(summary_upto)
serve_stop

# stopped mid-fold: the fold hangs, the server stops anyway, nothing stored changes
MNEMO_SUMMARIZER_MODEL=hang MNEMO_SUMMARIZER_TIMEOUT_MS=4000 serve_start
i=0
while [ $i -lt 8 ]; do
    req POST "/v1/sessions/$S/messages" "{\"role\":\"user\",\"content\":\"more $i\"}"
    i=$((i + 1))
done
req POST "/v1/sessions/$S/context" '{"strategy":"summary","max_tokens":2000}'
eq "$CODE $(jget "$OUT" 'j["report"]["fold"]["outcome"]')" "200 queued" "with a hanging summariser: queued"
wait_for "the hanging fold has started" hang_started
req POST "/v1/sessions/$S/context" '{"strategy":"summary","max_tokens":2000}'
eq "$CODE $(jget "$OUT" 'j["messages"][-1]["content"]')" "200 more 7" "context keeps answering mid-fold"
serve_stop
ok mn history "$S" --json
eq "$(jget "$OUT" 'len(j)')" 29 "no message lost when stopped mid-fold"
ok mn summary show "$S" --json
eq "$(jget "$OUT" 'j.get("covers_upto", (j.get("summary") or {}).get("covers_upto"))')" "$UPTO" "the summary is the one before the interrupted fold"

# fold sync: the old behaviour, the fold runs before the answer (fake "delay": seconds)
MNEMO_SUMMARIZER_MODEL=delay serve_start
req POST "/v1/sessions/$S/context" '{"strategy":"summary","max_tokens":2000,"fold":"sync"}'
eq "$CODE $(jget "$OUT" '[j["report"]["fold"]["mode"], j["report"]["fold"]["outcome"] in ("ok", "cooldown")]')" \
    '200 ["sync", true]' "fold sync runs the fold in the request"
serve_stop
kill "$LLM" 2>/dev/null
wait "$LLM" 2>/dev/null
finish
