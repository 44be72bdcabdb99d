#!/bin/sh
# t1298-serve-browser.sh — the browser-origin policy with a real browser (issue #13): headless
# Chromium loads a hostile page from another local port (tests/cli/browser/attack.html) that
# sends what any website can send to http://127.0.0.1:PORT without a preflight — no-cors POSTs
# with text/plain and form bodies to prune, import, session create, append, the Conversations
# API and MCP, a CORS DELETE, a cross-origin read of the export — and the database is unchanged
# afterwards. Then the server's own web page (same origin) still reads and writes.
# pg variant: none — the browser-origin policy in the HTTP layer.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { fail "chromium is not installed (scripts/install-deps installs it)"; finish; }

S=0190a000-0000-7000-8000-0000000012a8
ok mn session new --id "$S"
ok mn add "$S" user "the only message"
ok mn export --out "$T/before.jsonl"

# chrome URL: dumps the DOM after the page's scripts ran (virtual time lets its fetches finish)
chrome() {
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync --disable-dev-shm-usage \
        --user-data-dir="$T/chrome-profile" --virtual-time-budget=15000 --dump-dom "$1" 2>"$T/chrome.err"
}

serve_start
# the hostile page: a static server on another port of the same machine
mkdir -p "$T/site"
cp "$TESTS_DIR/cli/browser/attack.html" "$T/site/"
python3 -m http.server 0 --bind 127.0.0.1 --directory "$T/site" >"$T/site.out" 2>&1 &
SITE=$!
SITE_URL=
for _i in $(seq 1 100); do
    SITE_URL=$(sed -n 's|.*(http://\([0-9.]*:[0-9]*\)/).*|http://\1|p' "$T/site.out" | head -n1)
    [ -n "$SITE_URL" ] && break
    sleep 0.1
done
check "the hostile site runs ($SITE_URL)" test -n "$SITE_URL"
chrome "$SITE_URL/attack.html?target=$URL&sid=$S" >"$T/dom.html"
check "the page ran every attack to the end" grep -q '^done' "$T/dom.html"
check "the no-cors POSTs left the browser" grep -q 'prune sent opaque' "$T/dom.html"
cat "$T/dom.html" | sed -n '/<pre/,/<\/pre>/p'
ok mn export --out "$T/after.jsonl"
check "the database is unchanged: export before = after" cmp -s "$T/before.jsonl" "$T/after.jsonl"
ok mn session list --json
eq "$(jget "$OUT" '[s["id"] for s in j]')" "[\"$S\"]" "no session planted, none pruned"
check "the server refused them (403 in its counters)" sh -c "curl -s '$URL/metrics' | grep -q 'route=\"forbidden_origin\",status=\"403\"'"

# the server's own web page (same origin) still reads through the policy: it lists the session
chrome "$URL/#/session/$S" >"$T/web.html"
check "the web page at / shows the session's message (its same-origin fetches are served)" \
    grep -q 'the only message' "$T/web.html"
kill "$SITE" 2>/dev/null
wait "$SITE" 2>/dev/null
serve_stop
finish
