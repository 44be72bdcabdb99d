"""docs_check.py — docs/http-api.md and docs/mcp.md against the live server, so the pages cannot
drift from the operation table: every route of the http-api.md table exists with that method and
path and mentions each parameter the operation declares (path parameters aside); every session,
search and data operation of /openapi.json has a row; the docs/mcp.md tool table lists exactly the
tools of tools/list. Usage: python3 docs_check.py URL DOCS_DIR"""
import http.client
import json
import re
import sys
import urllib.parse

URL = urllib.parse.urlparse(sys.argv[1])
DOCS = sys.argv[2]
failures = []


def call(method, path, body=None):
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=120)
    h = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    conn.request(method, path, body=json.dumps(body) if body else None, headers=h)
    r = conn.getresponse()
    t = r.read().decode()
    conn.close()
    return json.loads(t)


api = call("GET", "/openapi.json")
ops = {}
for path, item in api["paths"].items():
    for method, op in item.items():
        names = [p["name"] for p in op.get("parameters", []) if p["in"] != "path"]
        body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
        names += list(body.get("properties", {}))
        ops[op["operationId"]] = (method.upper(), path, names)

rows = {}
for line in open(f"{DOCS}/http-api.md", encoding="utf-8"):
    m = re.match(r"^\| `([a-z_]+)` \| `([A-Z]+) ([^ `]+)[^|]*\| ([^|]*)\|", line)
    if m:
        rows[m.group(1)] = (m.group(2), m.group(3), set(re.findall(r"`([a-z_]+)`", m.group(4))))
for name, (method, path, mentioned) in rows.items():
    if name not in ops:
        failures.append(f"http-api.md: {name} is not an operation of /openapi.json")
        continue
    if (method, path) != ops[name][:2]:
        failures.append(f"http-api.md: {name} is {method} {path}, the server has {ops[name][0]} {ops[name][1]}")
    for p in ops[name][2]:
        if p not in mentioned:
            failures.append(f"http-api.md: {name} does not mention its parameter {p}")
for name, (method, path, _) in ops.items():
    if re.match(r"^/v1/(sessions|search|gc|prune|stats|export|import|resume)", path) and name not in rows:
        failures.append(f"http-api.md: no row for {name} ({method} {path})")

call("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "d", "version": "1"}}})
tools = {t["name"] for t in call("POST", "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})["result"]["tools"]}
text = open(f"{DOCS}/mcp.md", encoding="utf-8").read()
section = text[text.index("## Tools"):text.index("## ", text.index("## Tools") + 3)]
listed = set(re.findall(r"^\| `([a-z_]+)` \|", section, re.M))
for t in sorted(tools - listed):
    failures.append(f"mcp.md: the tool {t} is not in the table")
for t in sorted(listed - tools):
    failures.append(f"mcp.md: {t} is in the table but not a tool")

for f in failures:
    print("FAIL", f)
print("rows", len(rows), "tools", len(tools), "failures", len(failures))
sys.exit(1 if failures else 0)
