#!/bin/sh
# t1270-serve-web.sh — the web page at GET / of `mnemo serve`: status, Content-Type, the
# Content-Security-Policy (its script and style hashes match the page's inline elements),
# nosniff and framing headers, no key needed even when keys are configured, 405 for other
# methods, and a page that names only same-origin URLs and never writes data as HTML; its icon at
# /favicon.ico (an SVG with the same headers, cacheable, no key) and the empty list's hint on
# how to add data. The page's
# behaviour in a DOM is tests/interop/web.test.mjs; this checks the HTTP surface. Also the REST
# search route the page uses (GET /v1/search).
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

serve_start
CODE=$(curl -s -D "$T/h.txt" -o "$T/page.html" -w '%{http_code}' "$URL/")
eq "$CODE" 200 "GET / answers 200"
hdr() { tr -d '\r' <"$T/h.txt" | sed -n "s/^$1: //Ip" | head -n1; }
eq "$(hdr Content-Type)" "text/html; charset=utf-8" "Content-Type text/html; charset=utf-8"
eq "$(hdr X-Content-Type-Options)" nosniff "X-Content-Type-Options: nosniff"
eq "$(hdr X-Frame-Options)" DENY "X-Frame-Options: DENY"
eq "$(hdr Referrer-Policy)" no-referrer "Referrer-Policy: no-referrer"
hdr Content-Security-Policy >"$T/csp.txt"
# the page checks, in Python (quotes inside would fight the shell's)
cat >"$T/csp.py" <<'EOF'
import base64, hashlib, re, sys
page = open(sys.argv[1], "rb").read().decode("utf-8")
csp = open(sys.argv[2]).read().strip()
d = {p.split()[0]: p.split()[1:] for p in (x.strip() for x in csp.split(";")) if p}
def h(tag):
    found = re.findall(r"<%s>(.*?)</%s>" % (tag, tag), page, re.S)
    assert len(found) == 1, (tag, len(found))
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(found[0].encode("utf-8")).digest()).decode()
assert d["default-src"] == ["'none'"], d
assert d["script-src"] == [h("script")], (d["script-src"], h("script"))
assert d["style-src"] == [h("style")], (d["style-src"], h("style"))
assert d["connect-src"] == ["'self'"], d
assert d["frame-ancestors"] == ["'none'"], d
EOF
cat >"$T/inline.py" <<'EOF'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
tags = re.findall(r"<[a-zA-Z][^>]*>", page)
bad = [t for t in tags if re.search(r"\s(on[a-z]+|style)\s*=", t)]
assert not bad, bad
EOF
cat >"$T/origin.py" <<'EOF'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()
assert not re.search(r"(?i)\b(https?:|wss?:|ftp:)?//[a-z0-9-]+(\.[a-z0-9-]+)+", page), "an absolute URL"
refs = re.findall(r"""(?i)\b(?:src|href|action)\s*=\s*["']([^"']*)["']""", page)
assert refs and all(r.startswith("#") for r in refs if r != "/favicon.ico"), refs
# one <link>: the icon, from this server
assert re.findall(r"<link[^>]*>", page) == ['<link rel="icon" href="/favicon.ico" type="image/svg+xml">'], "links"
calls = re.findall(r"""(?:api|URL)\(\s*["']([^"']+)["']""", page)
assert calls and all(c.startswith("/") and not c.startswith("//") for c in calls), calls
for bad in ("@import", "<iframe", "<img", "url("):
    assert bad not in page, bad
EOF
cat >"$T/text.py" <<'EOF'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
for bad in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
    assert bad not in page, bad
EOF
check "the CSP's script-src and style-src are the SHA-256 of the page's one script and one style" \
    python3 "$T/csp.py" "$T/page.html" "$T/csp.txt"
check "no inline event handlers or style attributes (the CSP would block them)" python3 "$T/inline.py" "$T/page.html"
check "every URL the page names is same-origin (fragments, paths on this server)" python3 "$T/origin.py" "$T/page.html"
check "data goes into the DOM as text: no innerHTML, outerHTML, insertAdjacentHTML, document.write" \
    python3 "$T/text.py" "$T/page.html"
eq "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' -I "$URL/")" "200 text/html; charset=utf-8" "HEAD /"
req POST / '{}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "405 method_not_allowed" "POST /: 405"
check "405 names the allowed methods" sh -c "curl -s -D - -o /dev/null -X DELETE '$URL/' | tr -d '\r' | grep -qi '^allow: GET, HEAD$'"
req GET /nope.html
eq "$CODE" 404 "other paths are not the page"
# the empty list says how to add data (the browser test sees it shown: tests/web/page.test.mjs)
check "the empty list names mnemo demo, mnemo append and the REST route" \
    sh -c "grep -q 'mnemo demo' '$T/page.html' && grep -q 'mnemo append' '$T/page.html' && grep -q 'POST /v1/sessions' '$T/page.html'"

# the icon the page names, which browsers also ask for on their own: never a 404 on first load
CODE=$(curl -s -D "$T/h.txt" -o "$T/favicon" -w '%{http_code}' "$URL/favicon.ico")
eq "$CODE" 200 "GET /favicon.ico answers 200"
eq "$(hdr Content-Type)" image/svg+xml "the icon is an SVG: Content-Type image/svg+xml"
check "its body is the SVG" grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$T/favicon"
eq "$(hdr X-Content-Type-Options)" nosniff "the icon: X-Content-Type-Options: nosniff"
eq "$(hdr X-Frame-Options)" DENY "the icon: X-Frame-Options: DENY"
eq "$(hdr Referrer-Policy)" no-referrer "the icon: Referrer-Policy: no-referrer"
eq "$(hdr Content-Security-Policy)" "default-src 'none'; frame-ancestors 'none'" \
    "the icon opened as a document may load and run nothing"
eq "$(hdr Cache-Control)" "public, max-age=86400" "the icon is cacheable for a day"
eq "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' -I "$URL/favicon.ico")" "200 image/svg+xml" "HEAD /favicon.ico"
req POST /favicon.ico '{}'
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "405 method_not_allowed" "POST /favicon.ico: 405"
serve_stop

# with API keys, the page loads without one (it holds no data); the API still wants the key
KEY=web-test-key
export KEY
serve_start --api-key-env KEY
req GET /
eq "$CODE" 200 "the page needs no key"
req GET /favicon.ico
eq "$CODE" 200 "nor does its icon"
req GET /v1/sessions
eq "$CODE" 401 "the API it calls does"
serve_stop

# the search route the page uses
ok mn session create --namespace web-a --title "Pool talk"
A=$OUT
ok mn session create --namespace web-b
B=$OUT
ok mn add "$A" user "How do I size the postgres connection pool?"
ok mn add "$A" assistant "Start with a pgbouncer pool in transaction mode."
ok mn add "$B" user "postgres replication lag"
serve_start
req GET "/v1/search?q=postgres%20pool"
eq "$CODE $(jget "$OUT" '[j["mode"], [h["message"]["session_id"] for h in j["hits"]][:1], j["hits"][0]["rank"]]')" \
    "200 [\"keyword\", [\"$A\"], 1]" "GET /v1/search: keyword without an embedder, best first"
eq "$(jget "$OUT" 'j["not_embedded"]')" 0 "a keyword search sees every message (not_embedded 0)"
req GET "/v1/search?q=postgres&namespace=web-b&top_k=5"
eq "$(jget "$OUT" '[(h["namespace"], h["message"]["session_id"]) for h in j["hits"]]')" "[[\"web-b\", \"$B\"]]" "search by namespace"
req GET "/v1/search?q=pool&session_id=$A&role=assistant"
eq "$(jget "$OUT" '[h["message"]["seq"] for h in j["hits"]]')" "[2]" "search by session and role"
req GET "/v1/search?q=postgres&mode=fuzzy"
eq "$CODE $(jget "$OUT" 'j["error"]["code"]')" "400 invalid" "an unknown mode: 400"
req GET "/v1/search"
eq "$CODE" 400 "q is required"
req GET "/v1/search?q=postgres&mode=semantic"
eq "$CODE" 503 "semantic search without an embedder: 503 (unavailable)"
req GET /openapi.json
eq "$(jget "$OUT" '"get" in j["paths"]["/v1/search"]')" true "the search route is in /openapi.json"
serve_stop
serve_start --api-key-env KEY --key-namespace web-b
req GET "/v1/search?q=postgres" '' -H "Authorization: Bearer $KEY"
eq "$(jget "$OUT" '[h["namespace"] for h in j["hits"]]')" '["web-b"]' "a namespace-bound key searches its namespace only"
req GET "/v1/search?q=postgres&namespace=web-a" '' -H "Authorization: Bearer $KEY"
eq "$CODE" 403 "and may not search another"
serve_stop
finish
