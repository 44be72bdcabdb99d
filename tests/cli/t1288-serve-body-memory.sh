#!/bin/sh
# t1288-serve-body-memory.sh — request bodies are parsed within a memory budget: JSON costs the
# parser many times its size, so the bodies in progress are held to 4 x --max-body at once
# (more are answered 503 with Retry-After, before the body when the client asks first) and the
# memory goes back to the system after large requests. 16 clients at once send a 285 KB body
# (--max-body 300000) that parses into 95,000 arrays, retrying on 503: all are answered; the
# server's peak RSS (VmHWM) grows by less than 8 bodies parsed at once would take (16 did
# before, one on each worker thread), measured against one body alone; its RSS falls back
# afterwards. No timing is asserted.
# pg variant: none — the HTTP body memory budget.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

# the sanitizer's quarantine would keep freed memory (256 MB) in the RSS: measure the allocator
ASAN_OPTIONS="$ASAN_OPTIONS:quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
export ASAN_OPTIONS
status_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$SPID/status"; }
rss_near() { [ "$(status_kb VmRSS)" -lt $((BASE + $1)) ]; }
bodies() { python3 "$TESTS_DIR/cli/rawhttp.py" "$URL" bodies "$1" /v1/sessions "$T/body.json"; }
# grown CMD...: runs CMD, sets GROWN to how many kB the server's peak RSS rose over its RSS before
# (_base)
grown() {
    _base=$(status_kb VmRSS)
    echo 5 >"/proc/$SPID/clear_refs" # VmHWM starts again from the RSS now
    "$@"
    GROWN=$(($(status_kb VmHWM) - _base))
}

python3 -c 'import sys; sys.stdout.write("{\"metadata\":[" + ",".join(["[]"] * 95000) + "]}")' >"$T/body.json"
serve_start --max-body 300000
bodies 4 >/dev/null # the first requests map the allocator's arenas
grown bodies 1 >/dev/null
ONE=$GROWN
grown bodies 16 >"$T/many.json"
J=$(cat "$T/many.json")
echo "# $J; one body alone: +$((ONE / 1024)) MB peak, 16 at once: +$((GROWN / 1024)) MB"
eq "$(jget "$J" 'j["final"]')" '{"400": 16}' "every body was parsed and answered (400: metadata is not an object)"
check "bodies waited their turn ($(jget "$J" 'j["retried"]') x 503)" test "$(jget "$J" 'j["retried"]')" -gt 0
check "peak RSS grew by $((GROWN / 1024)) MB: under 8 x one body's $((ONE / 1024)) MB" test "$GROWN" -lt $((8 * ONE))
BASE=$_base # the RSS before the 16
wait_until 60 "the RSS to fall back near where it was before" rss_near $((ONE / 2))
req GET /metrics
check "/metrics counts the waits" sh -c 'printf "%s\n" "$1" | grep -q "^mnemo_http_body_budget_waits_total [1-9]"' - "$OUT"
serve_stop
finish
