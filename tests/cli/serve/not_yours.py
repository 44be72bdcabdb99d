"""not_yours.py — a key bound to namespace beta, walking every route of /openapi.json and every
MCP tool with namespace alpha's ids (sessions, conversations, messages, items, memories, Mem0
memories) in each state they can be in (live, expired, deleted, closed, forgotten), gets one
answer: 404 (MCP: isError, not_found), never 410 and never alpha's data or times. A route the
walk does not know how to call fails the test, so a new route must be classified here.
Also: provenance (memory_add / memory_update `sources` and `session_id`, Mem0's run_id) naming alpha's
messages or sessions is refused as not found, exactly as a missing id is.
Usage: python3 not_yours.py URL KEY_ALPHA KEY_BETA EXPIRED_SESSION_ID EXPIRED_MESSAGE_ID
(alpha's thread, made with a 60 s time to live at 2023-11-14T22:13:20Z, long expired)."""
import http.client
import json
import sys
import urllib.parse

URL = urllib.parse.urlparse(sys.argv[1])
KA, KB, EXPIRED, EXPIRED_MSG = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
ALPHA_TIMES = ("2023-11-14", "17000000")  # the expired thread's times, as text and in ms
SECRET = "zanzibar"  # in every text alpha stores: never in an answer to beta
MISSING_SID = "0190a000-0000-7000-8000-00000000dead"
failures, checks = [], 0


def call(method, path, body=None, key=None, query=None):
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=60)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    data = None
    if body is not None:
        data = json.dumps(body)
        headers["Content-Type"] = "application/json"
    if query:
        path += "?" + urllib.parse.urlencode(query)
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    text = r.read().decode("utf-8", "replace")
    conn.close()
    try:
        return r.status, json.loads(text) if text else None, text
    except ValueError:
        return r.status, None, text


def alpha(method, path, body=None):
    status, j, text = call(method, path, body, KA)
    if status // 100 != 2:
        sys.exit(f"setup: {method} {path} answered {status}: {text[:300]}")
    return j


def check(ok, what, detail=""):
    global checks
    checks += 1
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}\n    {detail[:400]}")


def no_leak(what, text):
    low = text.lower()
    check("expired" not in low, f"{what}: says nothing of expiry", text)
    check(SECRET not in low, f"{what}: holds none of alpha's text", text)
    check(not any(t in text for t in ALPHA_TIMES), f"{what}: holds none of alpha's times", text)


# ---- alpha's things, in every state ------------------------------------------------------------

def new_session():
    return alpha("POST", "/v1/sessions", {})["session"]["id"]


def add(sid, text):
    return alpha("POST", f"/v1/sessions/{sid}/messages", {"role": "user", "content": text})["messages"][0]["id"]


LIVE = new_session()
LIVE_MSG = add(LIVE, f"{SECRET} live words")
GONE_MSG = add(LIVE, f"{SECRET} words deleted")
alpha("DELETE", f"/v1/sessions/{LIVE}/messages/{GONE_MSG}")
DELETED = new_session()
DELETED_MSG = add(DELETED, f"{SECRET} in a deleted session")
alpha("DELETE", f"/v1/sessions/{DELETED}")

CONV = alpha("POST", "/v1/conversations", {"items": [{"role": "user", "content": f"{SECRET} conversation"}]})["id"]
gone_item = alpha("POST", f"/v1/conversations/{CONV}/items",
                  {"items": [{"role": "user", "content": f"{SECRET} item deleted"}]})["data"][0]["id"]
alpha("DELETE", f"/v1/conversations/{CONV}/items/{gone_item}")
CONV_DELETED = alpha("POST", "/v1/conversations", {"items": [{"role": "user", "content": f"{SECRET} gone"}]})["id"]
alpha("DELETE", f"/v1/conversations/{CONV_DELETED}")


def remember(text):
    return alpha("POST", "/v1/memory", {"text": text, "sources": [LIVE_MSG]})["memory"]["id"]


MEM_LIVE = remember(f"{SECRET} live memory")
MEM_CLOSED = remember(f"{SECRET} closed memory")
alpha("DELETE", f"/v1/memory/{MEM_CLOSED}")
MEM_UPDATED = remember(f"{SECRET} memory before")
alpha("PATCH", f"/v1/memory/{MEM_UPDATED}", {"text": f"{SECRET} memory after"})
MEM_FORGOTTEN = remember(f"{SECRET} forgotten memory")
# a document: alpha's path and key, which beta names as its own (documents are kept per namespace)
alpha("PUT", "/v1/documents", {"path": "users.kim", "key": "prefs", "value": {"city": SECRET}})
alpha("POST", f"/v1/memory/{MEM_FORGOTTEN}/forget")
M0_LIVE = alpha("POST", "/v3/memories/add", {"messages": [{"role": "user", "content": f"{SECRET} is my city"}],
                                            "user_id": "kim", "infer": False})[0]["id"]
M0_DELETED = alpha("POST", "/v3/memories/add", {"messages": [{"role": "user", "content": f"{SECRET} was my dog"}],
                                               "user_id": "kim", "infer": False})[0]["id"]
alpha("DELETE", f"/v1/memories/{M0_DELETED}")
M0_EVENT = alpha("POST", "/v3/memories/add", {"messages": [{"role": "user", "content": f"My city is {SECRET}."}],
                                             "user_id": "kim", "async_mode": True})["event_id"]

SESSIONS = {"live": LIVE, "expired": EXPIRED, "deleted": DELETED}
MESSAGES = {"live": LIVE_MSG, "expired": EXPIRED_MSG, "deleted": GONE_MSG, "of a deleted session": DELETED_MSG}
CONVS = {"live": CONV, "expired": f"conv_{EXPIRED}", "bare expired": EXPIRED, "deleted": CONV_DELETED}
ITEMS = {"live": (CONV, "msg_1"), "expired": (f"conv_{EXPIRED}", "msg_1"), "deleted": (CONV, gone_item)}
MEMORIES = {"live": MEM_LIVE, "closed": MEM_CLOSED, "updated": MEM_UPDATED, "forgotten": MEM_FORGOTTEN,
            "mem0 live": M0_LIVE, "mem0 deleted": M0_DELETED}

# beta's own session, message and memory: alpha's ids next to beta's own
status, j, _ = call("POST", "/v1/sessions", {}, KB)
BETA = j["session"]["id"]
status, j, _ = call("POST", f"/v1/sessions/{BETA}/messages", {"role": "user", "content": "beta words"}, KB)
BETA_MSG = j["messages"][0]["id"]
status, j, _ = call("POST", "/v1/memory", {"text": "beta memory"}, KB)
BETA_MEM = j["memory"]["id"]

# ---- parameters that pass the declarations, so that the handler runs ---------------------------

BODIES = {
    "append": {"role": "user", "content": "x"},
    "message_edit": {"content": "x"},
    "file_should_include": {"path": "a.c", "content": "x"},
    "state_merge_params": {"params": {"k": 1}},
    "state_set_waiting": {"param": "k"},
    "state_set_result": {"intent_id": "i"},
    "session_set_max_turns": {"max_turns": 5},
    "conversation_update": {"metadata": {"k": "v"}},
    "conversation_items_create": {"items": [{"role": "user", "content": "x"}]},
    "mem0_update": {"text": "x"},
}


def filled(op, schema_props, required):
    body = dict(BODIES.get(op, {}))
    for name in required:
        if name in body:
            continue
        s = schema_props.get(name, {})
        t = s.get("type")
        t = t[0] if isinstance(t, list) else t
        body[name] = (s["enum"][0] if "enum" in s else
                      max(s.get("minimum", 1), 1) if t == "integer" else
                      1 if t == "number" else False if t == "boolean" else {} if t == "object" else
                      [] if t == "array" else "x")
    return body


def run_route(op, method, path, params, body, what):
    query = None
    if method in ("GET", "DELETE"):
        query, body = body or None, None
    status, _, text = call(method, path.format(**params), body, KB, query)
    check(status == 404, f"{op} {what}: 404 (got {status})", text)
    no_leak(f"{op} {what}", text)


def id_cases(path):
    """(params, description) for a path's ids: each of alpha's ids in each state."""
    if "{conversation_id}" in path and "{item_id}" in path:
        return [({"conversation_id": c, "item_id": i}, f"alpha's {s} item") for s, (c, i) in ITEMS.items()]
    if "{conversation_id}" in path:
        return [({"conversation_id": c}, f"alpha's {s} conversation") for s, c in CONVS.items()]
    if "{session_id}" in path and "{message_id}" in path:
        cases = [({"session_id": LIVE, "message_id": m}, f"alpha's session, its {s} message")
                 for s, m in MESSAGES.items()]
        cases += [({"session_id": s, "message_id": LIVE_MSG}, f"alpha's {k} session") for k, s in SESSIONS.items()]
        cases += [({"session_id": BETA, "message_id": m}, f"beta's session, alpha's {s} message")
                  for s, m in MESSAGES.items()]
        return cases
    if "{session_id}" in path:
        return [({"session_id": s}, f"alpha's {k} session") for k, s in SESSIONS.items()]
    if "{memory_id}" in path:
        return [({"memory_id": m}, f"alpha's {k} memory") for k, m in MEMORIES.items()]
    if "{event_id}" in path:
        return [({"event_id": M0_EVENT}, "alpha's Mem0 event")]
    if "{job_id}" in path:  # an async add's event is an extraction job
        return [({"job_id": M0_EVENT}, "alpha's extraction job")]
    return None


# Operations whose ids travel in the query or body: the calls, each with the status it must get.
def id_params_calls():
    calls = []
    for k, s in SESSIONS.items():
        calls += [("session_resume", "GET", "/v1/resume", {"session_id": s}, 404, f"alpha's {k} session"),
                  ("search", "GET", "/v1/search", {"q": SECRET, "session_id": s}, 404, f"alpha's {k} session"),
                  ("export", "GET", "/v1/export", {"ids": s}, 403, f"alpha's {k} session"),  # any bound key
                  ("memory_add", "POST", "/v1/memory", {"text": "spoof", "session_id": s}, 404, f"alpha's {k} session"),
                  ("mem0_add", "POST", "/v3/memories/add",
                   {"messages": [{"role": "user", "content": "My city is Oslo."}], "run_id": s}, 404,
                   f"run_id: alpha's {k} session"),
                  ("memory_list", "GET", "/v1/memory", {"session_id": s}, 200, f"filter: alpha's {k} session"),
                  ("memory_search", "GET", "/v1/memory/search", {"q": SECRET, "session_id": s}, 200,
                   f"filter: alpha's {k} session"),
                  ("mem0_delete_all", "DELETE", "/v1/memories", {"run_id": s}, 200, f"run_id: alpha's {k} session"),
                  ("mem0_list", "POST", "/v3/memories", {"filters": {"run_id": s}}, 200, f"run_id: alpha's {k}"),
                  ("mem0_search", "POST", "/v3/memories/search", {"query": SECRET, "filters": {"run_id": s}}, 200,
                   f"run_id: alpha's {k}")]
    write = {"task_id": "t", "idx": 0, "channel": "c", "type": "json", "value": "e30="}
    for k, s in SESSIONS.items():  # a graph thread named by alpha's session id: missing
        calls += [("checkpoint_get", "GET", "/v1/checkpoints/latest", {"thread_id": s}, 404, f"alpha's {k} session"),
                  ("checkpoint_list", "POST", "/v1/checkpoints/list", {"thread_id": s}, 200,
                   f"alpha's {k} session: none"),
                  ("checkpoint_delete_thread", "DELETE", "/v1/checkpoints", {"thread_id": s}, 200,
                   f"alpha's {k} session: nothing to delete")]
        if k == "deleted":  # a deleted session's id is free: a thread under it is beta's own, as any new one
            continue
        calls += [("checkpoint_put", "POST", "/v1/checkpoints",
                   {"thread_id": s, "checkpoint_id": "c1", "type": "json", "checkpoint": "e30="}, 404,
                   f"alpha's {k} session: not made"),
                  ("checkpoint_put_writes", "POST", "/v1/checkpoints/writes",
                   {"thread_id": s, "checkpoint_id": "c1", "writes": [write]}, 404, f"alpha's {k} session: not made")]
    doc = {"path": "users.kim", "key": "prefs"}  # alpha's document's address is nothing in beta's
    calls += [("document_get", "GET", "/v1/documents/item", doc, 404, "alpha's document's path and key"),
              ("document_search", "POST", "/v1/documents/search", {"prefix": "users"}, 200, "alpha's path: none"),
              ("document_search", "POST", "/v1/documents/search", {"filter": {"city": SECRET}}, 200,
               "alpha's value: none"),
              ("document_paths", "POST", "/v1/documents/paths", {}, 200, "alpha's paths: none"),
              ("document_delete", "DELETE", "/v1/documents", doc, 200, "alpha's document: nothing to delete"),
              ("document_put", "PUT", "/v1/documents", {**doc, "value": {"beta": 1}}, 200, "beta's own, apart")]
    for k, m in MESSAGES.items():
        calls += [("memory_add", "POST", "/v1/memory", {"text": "spoof", "sources": [BETA_MSG, m]}, 404,
                   f"sources: alpha's {k} message"),
                  ("memory_update", "PATCH", f"/v1/memory/{BETA_MEM}", {"sources": [m]}, 404,
                   f"beta's memory, sources: alpha's {k} message")]
    calls += [("memory_add", "POST", "/v1/memory", {"text": "spoof", "sources": [10 ** 9]}, 404,
               "sources: a missing message"),
              ("memory_add", "POST", "/v1/memory", {"text": "spoof", "session_id": MISSING_SID}, 404,
               "session_id: a missing session"),
              ("memory_add", "POST", "/v1/memory", {"text": "beta's own", "session_id": BETA, "sources": [BETA_MSG]},
               200, "beta's own session and message"),
              ("mem0_add", "POST", "/v3/memories/add",
               {"messages": [{"role": "user", "content": "My city is Oslo."}], "run_id": MISSING_SID}, 404,
               "run_id: a missing session"),
              ("mem0_add", "POST", "/v3/memories/add",
               {"messages": [{"role": "user", "content": "My city is Oslo."}], "run_id": BETA}, 200,
               "run_id: beta's own session"),
              ("mem0_add", "POST", "/v3/memories/add",
               {"messages": [{"role": "user", "content": "My city is Oslo."}], "run_id": "trip-1"}, 200,
               "run_id: a label")]
    for k, m in MEMORIES.items():  # Mem0's batches: every item is checked before any is applied
        calls += [("mem0_batch_update", "PUT", "/v1/batch", {"memories": [{"memory_id": m, "text": "spoof"}]}, 404,
                   f"alpha's {k} memory"),
                  ("mem0_batch_delete", "DELETE", "/v1/batch", {"memories": [{"memory_id": m}]}, 404,
                   f"alpha's {k} memory")]
    for k, s in SESSIONS.items():  # a run of another namespace is no run of ours: nothing to delete
        calls += [("mem0_entity_delete", "DELETE", f"/v2/entities/run/{s}", None, 200, f"run: alpha's {k} session")]
    calls += [("mem0_entities", "GET", "/v1/entities", None, 200, "beta's own entities"),
              ("mem0_entity_delete", "DELETE", "/v2/entities/user/kim", None, 200, "user kim: alpha's user's name"),
              ("mem0_entity_delete", "DELETE", "/v2/entities/app/alpha", None, 403, "app: alpha's namespace")]
    # another namespace named outright: refused alike whether it holds anything or not
    for ns in ("alpha", "never-used"):
        calls += [("session_list", "GET", "/v1/sessions", {"namespace": ns}, 403, f"namespace {ns}"),
                  ("session_create", "POST", "/v1/sessions", {"namespace": ns}, 403, f"namespace {ns}"),
                  ("namespace_forget", "DELETE", f"/v1/namespaces/{ns}", None, 403, f"namespace {ns}"),
                  ("mem0_list", "POST", "/v3/memories", {"filters": {"app_id": ns}}, 403, f"app_id {ns}")]
    return calls


# operations that take no id of anything: called plainly, they answer beta's own (no alpha text)
NO_IDS = {"session_create", "session_list", "gc", "prune", "stats", "import", "conversation_create", "mem0_ping",
          "mem0_list", "mem0_search", "mem0_add", "mem0_delete_all", "memory_add", "memory_list", "memory_search",
          "session_resume", "search", "export", "namespace_forget", "mem0_entities", "mem0_entity_delete",
          "mem0_batch_update", "mem0_batch_delete", "checkpoint_get", "checkpoint_put", "checkpoint_put_writes",
          "checkpoint_list", "checkpoint_delete_thread", "document_put", "document_get", "document_delete",
          "document_search", "document_paths"}
JSON_BODY = {"mem0_batch_delete"}  # a DELETE whose client sends a JSON body

doc = call("GET", "/openapi.json", key=KB)[1]
seen = set()
for path, ops in doc["paths"].items():
    for method, o in ops.items():
        if not isinstance(o, dict) or "operationId" not in o:
            continue
        op = o["operationId"]
        schema = o.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
        body = filled(op, schema.get("properties", {}), schema.get("required", []))
        for p in o.get("parameters", []):
            if p["in"] == "query" and p.get("required"):
                body.setdefault(p["name"], "x")
        cases = id_cases(path)
        if cases is None:
            if op not in NO_IDS:
                check(False, f"{op} ({method.upper()} {path}): not classified by not_yours.py")
            continue
        seen.add(op)
        for params, what in cases:
            run_route(op, method.upper(), path, params, body, what)

for op, method, path, params, want, what in id_params_calls():
    seen.add(op)
    body = query = None
    if method in ("GET", "DELETE") and op not in JSON_BODY:
        query = params
    else:
        body = params
    status, j, text = call(method, path, body, KB, query)
    check(status == want, f"{op} {what}: {want} (got {status})", text)
    no_leak(f"{op} {what}", text)
    if want == 404 and op in ("memory_add", "memory_update"):
        msg = (j or {}).get("error", {}).get("message", "")
        named = "sources" if "sources" in params else "session_id"
        check(named in msg and "not found" in msg, f"{op} {what}: the error names {named} and says not found", text)
for op in sorted(NO_IDS - seen - {"gc", "prune", "stats", "import", "conversation_create", "mem0_ping"}):
    check(False, f"{op}: no call with another namespace's ids")

status, j, text = call("GET", "/v1/entities", key=KB)
check(status == 200 and "kim" not in text and not any(s in text for s in SESSIONS.values()),
      "mem0_entities: none of alpha's users or runs", text)

# alpha's things are as they were: nothing beta did reached them
status, j, text = call("GET", f"/v1/sessions/{LIVE}/messages", key=KA)
check(status == 200 and [m["id"] for m in j["messages"]] == [LIVE_MSG], "alpha's live session is untouched", text)
status, j, text = call("GET", f"/v1/memory/{MEM_LIVE}", key=KA)
check(status == 200 and j["memory"]["version"] == 1, "alpha's live memory is untouched", text)
status, j, text = call("GET", f"/v1/memories/{M0_LIVE}", key=KA)
check(status == 200, "alpha's Mem0 memory is untouched", text)
status, j, text = call("GET", "/v1/documents/item", key=KA, query={"path": "users.kim", "key": "prefs"})
check(status == 200 and j["document"]["value"] == {"city": SECRET}, "alpha's document is untouched", text)

# ---- MCP: every tool that takes an id, and resources/read --------------------------------------

def mcp(method, params, rid=[0]):
    rid[0] += 1
    status, j, text = call("POST", "/mcp", {"jsonrpc": "2.0", "id": rid[0], "method": method, "params": params}, KB)
    return j or {}, text


tools = mcp("tools/list", {})[0]["result"]["tools"]
for t in tools:
    props = t["inputSchema"].get("properties", {})
    args = filled(t["name"], props, t["inputSchema"].get("required", []))
    cases = []
    if "memory_id" in props:
        cases = [({"memory_id": m}, f"alpha's {k} memory") for k, m in MEMORIES.items()]
    elif "message_id" in props:
        cases = [({"session_id": LIVE, "message_id": m}, f"alpha's {k} message") for k, m in MESSAGES.items()]
        cases += [({"session_id": BETA, "message_id": m}, f"beta's session, alpha's {k} message")
                  for k, m in MESSAGES.items()]
    elif "session_id" in props and "session_id" in t["inputSchema"].get("required", []):
        cases = [({"session_id": s}, f"alpha's {k} session") for k, s in SESSIONS.items()]
    elif t["name"] in ("checkpoint_get", "checkpoint_put"):  # put: not under a deleted id (free, see above)
        cases = [({"thread_id": s}, f"alpha's {k} session") for k, s in SESSIONS.items()
                 if k != "deleted" or t["name"] == "checkpoint_get"]
    for params, what in cases:
        j, text = mcp("tools/call", {"name": t["name"], "arguments": {**args, **params}})
        res = j.get("result", {})
        msg = json.dumps(res.get("content", ""))
        check(res.get("isError") is True and "not_found:" in msg, f"MCP {t['name']} {what}: not found", text)
        no_leak(f"MCP {t['name']} {what}", text)
spoofs = [("sources", {"sources": [m]}, f"alpha's {k} message") for k, m in MESSAGES.items()]
spoofs += [("session_id", {"session_id": s}, f"alpha's {k} session") for k, s in SESSIONS.items()]
for named, extra, what in spoofs:
    for tool, args in (("memory_add", {"text": "spoof"}), ("memory_update", {"memory_id": BETA_MEM})):
        if tool == "memory_update" and named == "session_id":
            continue  # a memory's scope never changes
        j, text = mcp("tools/call", {"name": tool, "arguments": {**args, **extra}})
        res = j.get("result", {})
        msg = json.dumps(res.get("content", ""))
        check(res.get("isError") is True and "not_found:" in msg and named in msg,
              f"MCP {tool} {named}: {what}: not found, naming {named}", text)
        no_leak(f"MCP {tool} {what}", text)
for k, s in SESSIONS.items():
    j, text = mcp("resources/read", {"uri": f"mnemo://sessions/{s}"})
    check("error" in j, f"MCP resources/read alpha's {k} session: an error", text)
    no_leak(f"MCP resources/read alpha's {k} session", text)

print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
