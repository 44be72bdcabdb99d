"""params_check.py — the declarations of `mnemo serve` enforced on every operation.

Reads the live operation list from /openapi.json (REST) and MCP tools/list, so an operation added
to the table is covered without touching this file. For each one it sends
  - an unknown parameter: REST 400 / MCP JSON-RPC -32602, the message naming it;
  - for each declared integer or number with a limit: a value past each limit and a value of the
    wrong type: REST 400 / MCP -32602 naming the parameter (and the limit for a range);
  - for each string with an enum: a value outside it, naming the parameter.
Usage: python3 params_check.py URL   (prints one line per failure, "checks N" at the end; exit 1
on any failure)."""
import http.client
import json
import sys
import urllib.parse

URL = urllib.parse.urlparse(sys.argv[1])
UNKNOWN = "zz_unknown_param"
failures = []
checks = 0


def call(method, path, body=None, headers=None):
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=120)
    h = {"Accept": "application/json, text/event-stream"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    conn.request(method, path, body=data, headers=h)
    r = conn.getresponse()
    text = r.read().decode("utf-8", "replace")
    conn.close()
    return r.status, text


def expect(ok, what):
    global checks
    checks += 1
    if not ok:
        failures.append(what)


def sample(schema):
    """A value the declaration accepts (so only the parameter under test is wrong)."""
    t = schema.get("type")
    t = t[0] if isinstance(t, list) else t
    if "enum" in schema:
        return schema["enum"][0]
    if t == "integer":
        return max(schema.get("minimum", 1), 1) if schema.get("maximum", 1) >= 1 else schema.get("minimum", 0)
    if t == "number":
        return schema.get("minimum", 0)
    if t == "boolean":
        return True
    if t == "object":
        return {}
    if t == "array":
        return [sample(schema.get("items", {"type": "object"}))] * schema.get("minItems", 0)
    if t is None:
        return 1
    return "0190a000-0000-7000-8000-00000000beef"


def rest_error_message(text):
    try:
        return json.loads(text)["error"]["message"]
    except Exception:
        return text


def rest_ops():
    status, text = call("GET", "/openapi.json")
    assert status == 200, text
    doc = json.loads(text)
    for path, item in doc["paths"].items():
        for method, op in item.items():
            params = {p["name"]: (p["in"], p["schema"], p.get("required", False)) for p in op.get("parameters", [])}
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body:
                for name, s in body.get("properties", {}).items():
                    params[name] = ("body", s, name in body.get("required", []))
            yield op["operationId"], method.upper(), path, params, body is not None


def rest_send(method, path, params, values, json_body=True):
    """values: name -> value; put each where the declaration says (an undeclared one in the JSON
    body, or in the query when the route takes none: import's body is JSON Lines)."""
    p = path
    query, body = {}, {}
    for name, v in values.items():
        where = params.get(name, ("query" if method in ("GET", "DELETE") or not json_body else "body",))[0]
        if where == "path":
            p = p.replace("{%s}" % name, urllib.parse.quote(str(v), safe=""))
        elif where == "query":
            query[name] = json.dumps(v) if isinstance(v, (dict, list)) else (str(v).lower() if isinstance(v, bool) else str(v))
        else:
            body[name] = v
    if query:
        p += "?" + urllib.parse.urlencode(query)
    return call(method, p, body if method not in ("GET", "DELETE") and json_body else None)


def base_values(params):
    """Every path parameter and every required one, with a valid value."""
    return {n: sample(s) for n, (where, s, req) in params.items() if where == "path" or req}


def check_rest():
    for name, method, path, params, json_body in rest_ops():
        vals = base_values(params)
        vals[UNKNOWN] = 1
        status, text = rest_send(method, path, params, vals, json_body)
        expect(status == 400 and UNKNOWN in rest_error_message(text),
               f"REST {name}: unknown parameter: {status} {text[:200]}")
        for pname, (where, s, _) in params.items():
            if where == "path" and s.get("type") != "integer":
                continue
            for bad, why in violations(s):
                vals = base_values(params)
                vals[pname] = bad
                status, text = rest_send(method, path, params, vals)
                msg = rest_error_message(text)
                expect(status == 400 and msg.startswith(pname + ":") and why(msg),
                       f"REST {name}.{pname}={bad!r}: {status} {text[:200]}")


def violations(s):
    """(bad value, check of the message) for each limit the schema declares."""
    t = s.get("type")
    t = t[0] if isinstance(t, list) else t
    out = []
    if t in ("integer", "number"):
        out.append(("abc", lambda m: True))
        if "minimum" in s:
            lo = s["minimum"] - 1
            out.append((lo, lambda m, s=s: str(s["minimum"]) in m))
        if "maximum" in s:
            hi = s["maximum"] + 1
            out.append((hi, lambda m, s=s: str(s["maximum"]) in m))
    if t == "string" and "enum" in s:
        out.append(("zz_not_one_of_them", lambda m, s=s: all(e in m for e in s["enum"])))
    if t == "string" and "maxLength" in s:
        out.append(("x" * (s["maxLength"] + 1), lambda m, s=s: str(s["maxLength"]) in m))
    if t == "boolean":
        out.append(("maybe", lambda m: True))
    if t == "array" and s.get("minItems", 0) > 0:
        out.append(([], lambda m, s=s: "minimum of %d" % s["minItems"] in m))
    return out


def mcp(method, params, rid=1):
    status, text = call("POST", "/mcp", {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    return status, json.loads(text)


def check_mcp():
    status, r = mcp("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "params_check", "version": "1"}})
    assert status == 200, r
    status, r = mcp("tools/list", {})
    tools = r["result"]["tools"]
    expect(len(tools) > 0, "MCP tools/list is empty")
    for t in tools:
        schema = t["inputSchema"]
        props, req = schema.get("properties", {}), schema.get("required", [])
        expect(schema.get("additionalProperties") is False, f"MCP {t['name']}: inputSchema allows other properties")
        base = {n: sample(props[n]) for n in req}
        args = dict(base, **{UNKNOWN: 1})
        status, r = mcp("tools/call", {"name": t["name"], "arguments": args})
        err = r.get("error", {})
        expect(err.get("code") == -32602 and UNKNOWN in err.get("message", ""),
               f"MCP {t['name']}: unknown parameter: {json.dumps(r)[:200]}")
        for pname, s in props.items():
            for bad, why in violations(s):
                status, r = mcp("tools/call", {"name": t["name"], "arguments": dict(base, **{pname: bad})})
                err = r.get("error", {})
                msg = err.get("message", "")
                expect(err.get("code") == -32602 and msg.startswith(pname + ":") and why(msg),
                       f"MCP {t['name']}.{pname}={bad!r}: {json.dumps(r)[:200]}")


check_rest()
check_mcp()
for f in failures:
    print("FAIL", f)
print("checks", checks, "failures", len(failures))
sys.exit(1 if failures else 0)
