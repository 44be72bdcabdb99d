#!/bin/sh
# t0110-help-api.sh — one table drives the surface: `mnemo api --json` is the operation table
# (the routes /openapi.json serves and the MCP tools), and the help of each command bound to an
# operation shows that operation's summary, route and parameters, word for word.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

ok "$MNEMO" api --json
cp "$T/.out" "$T/api.json"
check "every operation has a name, method, path and summary" python3 -c '
import json, sys
ops = json.load(open(sys.argv[1]))
assert len(ops) >= 20, len(ops)
assert all(o["name"] and o["method"] in ("GET", "POST", "PUT", "PATCH", "DELETE") and o["summary"] for o in ops)
# /v3/: the Mem0-shaped routes (docs/memory.md)
assert all(o["path"].startswith("/v1/") or o["name"].startswith("mem0_") and o["path"].startswith("/v3/") for o in ops)
names = [o["name"] for o in ops]
assert len(set(names)) == len(names), "duplicate names"
for n in ("append", "history", "context", "search", "compact", "summary_get", "session_update"):
    assert n in names, n
' "$T/api.json"

serve_start
req GET /openapi.json
printf '%s' "$OUT" >"$T/openapi.json"
check "the OpenAPI document has exactly the table's routes" python3 -c '
import json, sys
ops = json.load(open(sys.argv[1])); doc = json.load(open(sys.argv[2]))
want = sorted((o["path"], o["method"].lower()) for o in ops)
got = sorted((p, m) for p, item in doc["paths"].items() for m in item if m in ("get", "post", "put", "patch", "delete"))
assert want == got, (want, got)
' "$T/api.json" "$T/openapi.json"
req POST /mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' -H 'MCP-Protocol-Version: 2025-11-25'
req POST /mcp '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' -H 'MCP-Protocol-Version: 2025-11-25'
printf '%s' "$OUT" >"$T/tools.json"
check "the MCP tools are the table's tool operations, with its summaries" python3 -c '
import json, sys
ops = json.load(open(sys.argv[1])); tools = json.load(open(sys.argv[2]))["result"]["tools"]
want = sorted((o["name"], o["summary"]) for o in ops if o["mcp_tool"])
got = sorted((t["name"], t["description"]) for t in tools)
assert want == got, (want, got)
' "$T/api.json" "$T/tools.json"
serve_stop

# each bound command's help: the table's summary, route and parameter names
for pair in "session new:session_create" "add:append" "history:history" "context:context" "search:search" \
    "compact:compact" "summary show:summary_get"; do
    cmd=${pair%%:*} op=${pair#*:}
    # shellcheck disable=SC2086
    ok "$MNEMO" $cmd --help
    cp "$T/.out" "$T/help.txt"
    check "'mnemo $cmd --help' shows operation $op" python3 -c '
import json, sys
op = [o for o in json.load(open(sys.argv[1])) if o["name"] == sys.argv[2]][0]
h = open(sys.argv[3]).read()
assert op["summary"] in h, "summary"
assert "API: %s %s" % (op["method"], op["path"]) in h, "route"
for p in op["params"].get("properties", {}):
    assert p == "session_id" or "\n  " + p + " " in h, p
' "$T/api.json" "$op" "$T/help.txt"
done
ok "$MNEMO" --help
check "the command list uses the table's summaries" grep -qF "$(python3 -c '
import json, sys
print([o for o in json.load(open(sys.argv[1])) if o["name"] == "history"][0]["summary"])' "$T/api.json")" "$T/.out"
fails 2 'unknown option' "$MNEMO" api --bogus
finish
