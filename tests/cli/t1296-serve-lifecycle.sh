#!/bin/sh
# t1296-serve-lifecycle.sh — starting and stopping `mnemo serve` safely (issue #13): an empty
# --key-namespace (an unset variable) is refused, not "every namespace"; a second server on
# the same port fails with "address in use" (no SO_REUSEPORT sharing); a key shorter than 16
# characters is refused for a non-loopback address; SIGTERM with a request still running past
# server.drain_timeout_seconds (a compact waiting on a summariser) answers it 503 and exits
# cleanly (libmicrohttpd aborted the process: "MHD_stop_daemon() called while we have suspended
# connections").
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

ok mn session new --json

# ---- --key-namespace "" ----
MNEMO_API_KEY=some-key-of-20-chars fails 2 'key-namespace.*empty' mn serve --listen 127.0.0.1:0 --key-namespace ""

# ---- a short key on a public address ----
MNEMO_API_KEY=k fails 2 'at least 16' mn serve --listen 0.0.0.0:0

# ---- a second server on the same port ----
serve_start
PORT=${URL##*:}
run timeout 20 "$MNEMO" --db "$DB" serve --listen "127.0.0.1:$PORT"
check "a second server on port $PORT exits non-zero (rc $RC)" test "$RC" -ne 0 -a "$RC" -ne 124
check "it says the address is in use" sh -c 'printf "%s" "$1" | grep -qi "address already in use"' - "$ERR"
req GET /healthz
eq "$CODE" 200 "the first server still serves"
serve_stop

# ---- SIGTERM with a request running past the drain ----
# A summariser that holds the call until the test releases it (the file $T/release; at most
# 120 s): a compact is then in progress on a worker, known by the file $T/called.
python3 - "$T/port" "$T/called" "$T/release" <<'PY' &
import http.server, json, os, sys, time
port_file, called, release = sys.argv[1:4]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        open(called, "w").close()
        end = time.time() + 120
        while not os.path.exists(release) and time.time() < end:
            time.sleep(0.1)
        body = json.dumps({"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": "the summary"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), H)
open(port_file, "w").write(str(srv.server_address[1]))
srv.handle_request()
PY
LLM=$!
for _i in $(seq 1 300); do [ -s "$T/port" ] && break; sleep 0.1; done
ok mn session new --json
L=$(jget "$OUT" 'j["id"]')
for j in 1 2 3 4 5 6; do
    ok mn add "$L" user "question $j"
    ok mn add "$L" assistant "answer $j"
done
MNEMO_SERVER_DRAIN_TIMEOUT=1 MNEMO_SUMMARIZER=llm MNEMO_SUMMARIZER_BASE_URL="http://127.0.0.1:$(cat "$T/port")" \
    MNEMO_SUMMARIZER_MODEL=m MNEMO_SUMMARIZER_TIMEOUT_MS=200000 MNEMO_SUMMARIZER_RETRIES=0 serve_start
curl -s -o "$T/stuck.body" -w '%{http_code}' --max-time 150 -X POST -H 'Content-Type: application/json' \
    --data '{}' "$URL/v1/sessions/$L/compact" >"$T/stuck.code" &
CURL=$!
for _i in $(seq 1 1200); do [ -e "$T/called" ] && break; sleep 0.1; done
check "the compact is in progress (the summariser was called)" test -e "$T/called"
kill -TERM "$SPID"
wait "$CURL" # answered at the end of the drain, while the summariser still holds the call
eq "$(cat "$T/stuck.code")" 503 "the running request is answered 503"
check "...saying its outcome is unknown" grep -q 'outcome is unknown' "$T/stuck.body"
: >"$T/release" # the worker's compact finishes; then the server exits
wait "$SPID"
eq "$?" 0 "SIGTERM with a request past the drain: clean exit"
check "no abort inside libmicrohttpd" sh -c "! grep -q 'suspended connections' '$T/serve.err'"
check "the log says a request was still running" grep -q 'still running at the end of the drain' "$T/serve.err"
wait "$LLM"
finish
