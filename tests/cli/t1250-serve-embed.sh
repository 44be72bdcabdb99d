#!/bin/sh
# t1250-serve-embed.sh — the service embeds in the background: appends answer at once (queue
# mode), the worker embeds what they queued, and semantic search then finds the messages.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

export MNEMO_EMBEDDER=hash
serve_start
req POST /v1/sessions '{}'
eq "$CODE" 201 "create a session"
S=$(jget "$OUT" 'j["session"]["id"]')
req POST "/v1/sessions/$S/messages" '{"role":"user","content":"the staging database password rotates every friday"}'
eq "$CODE" 201 "append answers without waiting for the embedder"
req POST "/v1/sessions/$S/messages" '{"role":"assistant","content":"noted, rotation on fridays"}'
# the worker runs once a second: wait (on progress, the deadline only ends a hung test) until
# both messages are found
both_found() {
    run mn search "staging database password" --mode semantic --json
    [ "$(jget "$OUT" 'len(j)' 2>/dev/null)" = 2 ]
}
wait_until 120 "the background worker to embed both appended messages" both_found
ok mn search "staging database password" --mode semantic --json
eq "$(jget "$OUT" 'j[0]["message"]["content"]')" "the staging database password rotates every friday" \
    "the background worker embedded the appended messages"
serve_stop
finish
