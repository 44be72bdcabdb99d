#!/bin/sh
# t1284-serve-not-yours.sh — one answer for "not yours": a key bound to namespace beta gets 404 for
# every id of namespace alpha on every route of /openapi.json (native, OpenAI Conversations, Mem0)
# and every MCP tool, whatever the state of the thing (live, expired, deleted, closed), never 410
# with alpha's time; provenance naming alpha's messages or sessions is refused as not found
# (tests/cli/serve/not_yours.py). Also as pg/cli/t1284-serve-not-yours.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

KA=key-alpha-0123456789 KB=key-beta-0123456789
h() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }
cat >"$T/config.yaml" <<YAML
memory:
  storage_path: $DB
server:
  api_keys: "$(h $KA):alpha,$(h $KB):beta"
  gc_interval_seconds: 0
YAML

# alpha's thread, alive for 60 s in November 2023: long expired for the server (gc off keeps it)
E=0190a000-0000-7000-8000-0000000000e1
ok env MNEMO_TEST_NOW_MS=1700000000000 "$MNEMO" --db "$DB" session new --id "$E" --namespace alpha --ttl-seconds 60
ok env MNEMO_TEST_NOW_MS=1700000000000 "$MNEMO" --db "$DB" add "$E" user "zanzibar expired words" --json
EMSG=$(jget "$OUT" 'j["id"]')

: >"$T/serve.err"
"$MNEMO" --config "$T/config.yaml" serve --listen 127.0.0.1:0 >"$T/serve.out" 2>"$T/serve.err" &
SPID=$!
_await_url "$SPID" "$T/serve.out" "the server" || cat "$T/serve.err" >&2
URL=$(head -n1 "$T/serve.out")
req GET "/v1/conversations/conv_$E" "" -H "Authorization: Bearer $KA"
eq "$CODE" 410 "alpha itself is told its thread expired"

run python3 "$TESTS_DIR/cli/serve/not_yours.py" "$URL" "$KA" "$KB" "$E" "$EMSG"
printf '%s\n' "$OUT" | grep -A1 FAIL | head -80 >&2
eq "$RC" 0 "beta gets one answer for alpha's ids on every route ($(printf '%s\n' "$OUT" | tail -n1))"

# the CLI (no key: the memory's namespace is the caller's) refuses the same provenance
ok mn session new --namespace beta --json
BS=$(jget "$OUT" 'j["id"]')
ok mn add "$BS" user "beta words" --json
BMSG=$(jget "$OUT" 'j["id"]')
fails 1 "sources: message $EMSG not found" mn memory add "spoof" --namespace beta --sources "$EMSG"
fails 1 "session_id: session $E not found" mn memory add "spoof" --namespace beta --session-id "$E"
ok mn memory add "beta's own" --namespace beta --session-id "$BS" --sources "$BMSG"
ok mn memory add "a label, not a session" --namespace beta --session-id run-1

kill -TERM "$SPID"
wait "$SPID"
eq "$?" 0 "server exits 0 on SIGTERM"
finish
