#!/bin/sh
# t1296-serve-lifecycle.sh — starting and stopping `mnemo serve` safely (issue #13): an empty
# --key-namespace (an unset variable) is refused, not "every namespace"; a second server on
# the same port fails with "address in use" (no SO_REUSEPORT sharing); a key shorter than 16
# characters is refused for a non-loopback address; SIGTERM with a request still running past
# server.drain_timeout_seconds answers it 503 and exits cleanly (libmicrohttpd aborted the
# process: "MHD_stop_daemon() called while we have suspended connections").
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

# ---- SIGTERM with a request running past the drain (SQLite: a write lock held outside) ----
if [ "$(backend)" = sqlite ]; then
    MNEMO_SERVER_DRAIN_TIMEOUT=1 MNEMO_BUSY_TIMEOUT_MS=30000 serve_start # it opens the database first
    python3 - "$DB" "$T/locked" <<'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
db.execute("BEGIN IMMEDIATE")
open(sys.argv[2], "w").close()
time.sleep(6)
db.execute("ROLLBACK")
PY
    LOCKER=$!
    for _i in $(seq 1 100); do [ -e "$T/locked" ] && break; sleep 0.1; done
    curl -s -o "$T/stuck.body" -w '%{http_code}' --max-time 60 -X POST -H 'Content-Type: application/json' \
        --data '{"title":"stuck behind the lock"}' "$URL/v1/sessions" >"$T/stuck.code" &
    CURL=$!
    sleep 1 # the create waits for the lock on a worker now
    kill -TERM "$SPID"
    wait "$SPID"
    eq "$?" 0 "SIGTERM with a request past the drain: clean exit"
    wait "$CURL"
    eq "$(cat "$T/stuck.code")" 503 "the running request is answered 503"
    check "...saying its outcome is unknown" grep -q 'outcome is unknown' "$T/stuck.body"
    check "no abort inside libmicrohttpd" sh -c "! grep -q 'suspended connections' '$T/serve.err'"
    check "the log says a request was still running" grep -q 'still running at the end of the drain' "$T/serve.err"
    wait "$LOCKER"
fi
finish
