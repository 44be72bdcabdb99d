#!/bin/sh
# t1540-pg-credentials.sh — a password in the database URL never shows (pg/ variant only): not in
# `mnemo stats`, the `serve` banner and logs, /v1/stats, nor in the error when the server is
# unreachable; PGPASSWORD works in place of a password in the URL.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"
[ "$(backend)" = postgres ] || { fail "t15xx tests need PostgreSQL (MNEMO_TEST_PG_URL)"; finish; }

SECRET=pw-Zx81q
# the test server trusts local connections, so any password is accepted: the point is the output
WITHPW=$(printf '%s' "$DB" | sed "s|postgresql://postgres@|postgresql://postgres:$SECRET@|")
case $WITHPW in *"$SECRET"*) ;; *) fail "could not put a password in $DB" ;; esac

ok "$MNEMO" --db "$WITHPW" session new --title creds
ok "$MNEMO" --db "$WITHPW" stats --json
check "stats shows the URL without the password" sh -c '! grep -q "$1" "$2" && grep -q "postgres:\*\*\*@" "$2"' - "$SECRET" "$T/.out"

DB=$WITHPW
serve_start --verbose
req GET /v1/stats
check "/v1/stats has no password" sh -c '! printf %s "$1" | grep -q "$2"' - "$OUT" "$SECRET"
serve_stop
check "the serve log has no password" sh -c '! grep -q "$1" "$2"' - "$SECRET" "$T/serve.err"
check "the serve log names the database" grep -q 'db=postgresql://postgres:\*\*\*@' "$T/serve.err"

BAD=$(printf '%s' "$WITHPW" | sed 's|host=[^&]*|host=/nonexistent-socket-dir|')
fails 1 'unavailable|cannot connect' "$MNEMO" --db "$BAD" stats
check "the connection error has no password" sh -c '! grep -q "$1" "$2"' - "$SECRET" "$T/.err"

# percent-encoded and ssl spellings of the parameter (issue 13, item 9)
ENC=$(printf '%s' "$DB" | sed "s|?|?passwor%64=$SECRET\&sslpassword=$SECRET\&|")
ok "$MNEMO" --db "$ENC" stats --json
check "stats hides passwor%64= and sslpassword=" sh -c '! grep -q "$1" "$2"' - "$SECRET" "$T/.out"
# a libpq keyword/value string is a PostgreSQL target, not a file name
NAME=$(printf '%s' "$DB" | sed 's|^[a-z]*://[^/]*/\([^?]*\).*|\1|')
HOST=$(printf '%s' "$DB" | sed -n 's|.*[?&]host=\([^&]*\).*|\1|p')
KV="host=$HOST dbname=$NAME user=postgres password=$SECRET"
ok "$MNEMO" --db "$KV" session list --json
eq "$(jget "$OUT" '[s["title"] for s in j]')" '["creds"]' "a keyword/value string opens the PostgreSQL database"
ok "$MNEMO" --db "$KV" stats --json
check "stats hides the keyword string's password" sh -c '! grep -q "$1" "$2" && grep -q "password=\*\*\*" "$2"' - "$SECRET" "$T/.out"
check "no file named after the connection string" sh -c '! ls -a "$1" | grep -q "$2"' - "$T" "$SECRET"

ok env PGPASSWORD=$SECRET "$MNEMO" --db "$(printf '%s' "$WITHPW" | sed "s|:$SECRET@|@|")" session list --json
eq "$(jget "$OUT" '[s["title"] for s in j]')" '["creds"]' "PGPASSWORD instead of a password in the URL"
finish
