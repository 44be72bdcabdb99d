"""parity.py — the same operation through the CLI, REST and MCP on one database gives the same
result (issue #14). One row per operation in ROWS; to cover a new operation add a row:

    Row(op, cli=[argv…], api=(METHOD, PATH, {params}), pick_cli=…, pick_api=…, fresh=…)

  - {S} / {M} / {J} in argv, path and parameter values: the session / memory / extraction job
    (set by a before= function) the surface works on.
    fresh="session" (or "memory") gives each surface its own, made the same way through the CLI
    (for operations that change what they touch); otherwise all three share one.
  - pick_cli / pick_api: the comparable part of the CLI's output (JSON when it parses, else the
    text) and of the API result (REST body = MCP structuredContent).
  - the MCP call is made when tools/list offers the operation; the test fails when an operation
    of the table with a CLI command (`mnemo api --json`: the command its words name) has no row.
Values that differ by nature (ids, timestamps, sizes) are normalised before comparing.
Usage: python3 parity.py MNEMO DB URL"""
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.parse

MNEMO, DB, URL = sys.argv[1], sys.argv[2], urllib.parse.urlparse(sys.argv[3])
failures, checks = [], 0
ENV = {}  # the env of the surface being called, for picks that compare against it


def cli(*args, stdin=None):
    r = subprocess.run([MNEMO, "--db", DB, *args], input=stdin, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"mnemo {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    try:
        return json.loads(r.stdout)
    except ValueError:
        return r.stdout.strip()


def http_call(method, path, body=None, raw=None):
    conn = http.client.HTTPConnection(URL.hostname, URL.port, timeout=300)
    headers = {"Accept": "application/json, text/event-stream"}
    if raw is not None:
        headers["Content-Type"] = "application/x-ndjson"
        data = raw.encode()
    elif body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    else:
        data = None
    conn.request(method, path, body=data, headers=headers)
    r = conn.getresponse()
    text = r.read().decode()
    conn.close()
    return r.status, text


def rest_call(method, path, params, raw=None):
    """The REST request of an operation's route and params: (status, body text)."""
    path = path.format(**{k: urllib.parse.quote(str(v)) for k, v in params.items()})
    rest_params = {k: v for k, v in params.items() if "{" + k + "}" not in path}
    if method in ("GET", "DELETE") or raw is not None:
        q = {k: (json.dumps(v) if isinstance(v, (dict, list)) else str(v).lower() if isinstance(v, bool) else v)
             for k, v in rest_params.items()}
        return http_call(method, path + ("?" + urllib.parse.urlencode(q) if q else ""), raw=raw)
    return http_call(method, path, rest_params)


def rest(method, path, params, raw=None):
    status, text = rest_call(method, path, params, raw)
    if status >= 300:
        raise RuntimeError(f"REST {method} {path}: {status} {text[:300]}")
    if text.startswith("{") and "\n{" not in text.strip():
        return json.loads(text)
    return text


_rid = 0


def mcp_call(method, params):
    """One JSON-RPC request to /mcp: the response object (result or error)."""
    global _rid
    _rid += 1
    status, text = http_call("POST", "/mcp", {"jsonrpc": "2.0", "id": _rid, "method": method, "params": params})
    return json.loads(text)


def mcp(method, params):
    r = mcp_call(method, params)
    if "error" in r:
        raise RuntimeError(f"MCP {method}: {r['error']}")
    return r["result"]


def tool(name, args):
    r = mcp("tools/call", {"name": name, "arguments": args})
    if r.get("isError"):
        raise RuntimeError(f"MCP tool {name}: {r['content'][0]['text']}")
    return r["structuredContent"]


UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
VOLATILE = {"id", "session_id", "parent_id", "memory_id", "created_at", "updated_at", "expires_at",
            "last_active_at", "valid_from", "recorded_at", "closed_at", "db_bytes", "wal_bytes",
            "bytes_per_message", "path", "covers_upto", "sources", "at", "ms", "elapsed_ms", "duration_ms",
            "actor"}  # actor: the surface that wrote a memory version (cli, api) by design


def norm(v):
    if isinstance(v, dict):
        return {k: ("<v>" if k in VOLATILE else norm(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, str):
        if UUID.match(v):
            return "<uuid>"
        if "\n" in v and v.lstrip().startswith("{"):  # JSON Lines (export)
            return [norm(json.loads(line)) for line in v.splitlines() if line.strip()]
    return v


class Row:
    def __init__(self, op, cli, api, pick_cli=lambda r: r, pick_api=lambda r: r, fresh=None, before=None,
                 raw=None):
        self.op, self.cli, self.api = op, cli, api
        self.pick_cli, self.pick_api, self.fresh, self.before, self.raw = pick_cli, pick_api, fresh, before, raw


def key(name):
    return lambda r: r[name]


def session_of(r):
    return r["session"]


# a session made the same way for every surface: a title, two turns naming a file, a namespace
def make_session(ns="parity"):
    s = cli("session", "create", "--title", "parity", "--namespace", ns, "--json")["id"]
    cli("append", s, "user", "the parity check reads README.md", "--files", '["README.md"]', "--json")
    cli("append", s, "assistant", "README.md says hello", "--json")
    return s


def make_memory():
    return cli("memory", "add", "the parity fact: tabs over spaces", "--kind", "preference", "--namespace",
               "parity-mem", "--json")["id"]


def extract_ready(env):
    # a statement to extract, and none of its memory yet in the namespace: each surface adds it
    for old in cli("memory", "list", "--namespace", "parity", "--json"):
        cli("memory", "forget", old["id"], "--json")
    cli("append", env["S"], "user", "Remember that parity holds.", "--json")


def job_done(env):
    # a job queued through the CLI and run to its end by `mnemo memory job`: each surface then
    # reads the same finished job (a pending one would be queued again on the reader's worker)
    env["J"] = cli("memory", "extract-queue", env["S"], "--data", '{"ticket": 7}', "--json")["id"]
    cli("memory", "extract-job", env["J"], "--json")


def job_times(r):
    return {k: v for k, v in r.items() if k not in ("queued_at", "finished_at")}


def job_fields(r):
    # and whether the surface's worker has picked the job up yet is not the operation's result
    return {k: v for k, v in job_times(r).items() if k != "state"}


def first_message(env):
    env["MID"] = cli("history", env["S"], "--json")[0]["id"]


def another_file(env):
    cli("append", env["S"], "assistant", "and b.c too", "--files", '["b.c"]', "--json")


def namespace_to_forget(env):
    make_session("parity-forget")
    cli("memory", "add", "a fact to forget", "--namespace", "parity-forget", "--json")


# context --memories: one session of its own namespace with a memory block (cut to its cap) and
# memories, made once and shared by the three surfaces (the block's text names the memory ids)
CTXMEM = {}


def with_memories(env):
    if "S" not in CTXMEM:
        CTXMEM["S"] = make_session("parity-ctxmem")
        cli("memory", "add", "Project rules: the parity check reads README.md first, then every other file "
            "it names, and reports what it found in order.", "--kind", "instruction", "--pinned",
            "--token-cap", "12", "--namespace", "parity-ctxmem", "--json")
        cli("memory", "add", "The parity check lives in tests/cli/serve", "--namespace", "parity-ctxmem", "--json")
        cli("memory", "add", "README.md is short", "--namespace", "parity-ctxmem", "--json")
    env["S"] = CTXMEM["S"]


# the content files_check sends, as a file for the CLI
CHECKED = tempfile.NamedTemporaryFile("w", suffix=".c", delete=False)
CHECKED.write("int parity(void) { return 1; }\n")
CHECKED.close()


def export_then_delete(env):
    s = make_session("parity-import")
    env["export"] = cli("export", s)
    cli("session", "delete", s, "--json")


# long enough turns that the extractive summary is shorter than what it folds (a fold that
# would make the context bigger rolls back and leaves no summary)
FILLER = ("We walked through the build log line by line, compared the compiler flags of both runs, "
          "looked at the linker map, read the release notes of the toolchain and wrote down every "
          "difference we found so that nobody has to repeat the search next week. ")


def compacted(env):
    for i in range(6):
        cli("append", env["S"], "user", f"turn {i}: what did the investigation of step {i} show? " + FILLER * 3,
            "--json")
        cli("append", env["S"], "assistant", f"answer {i}: step {i} is settled. " + FILLER * 3, "--json")
    event = cli("compact", env["S"], "--json")
    assert event["outcome"] == "ok", f"the parity session did not fold: {event}"


# graph checkpoints: a thread of two checkpoints (the second with a pending write), put again the
# same way before each surface, so each reads and deletes the same
CP_WRITE = {"task_id": "t1", "idx": 0, "channel": "messages", "type": "json", "value": "WyJoaSJd"}


def checkpointed(env, thread="parity-cp"):
    cli("checkpoint", "put", thread, "--checkpoint-id", "cp-1", "--type", "json", "--checkpoint", "eyJ2IjoxfQ==",
        "--metadata", '{"step": 1}', "--namespace", "parity-cp", "--json")
    cli("checkpoint", "put", thread, "--checkpoint-id", "cp-2", "--parent-checkpoint-id", "cp-1", "--type", "json",
        "--checkpoint", "eyJ2IjoyfQ==", "--metadata", '{"step": 2}', "--namespace", "parity-cp", "--json")
    cli("checkpoint", "put-writes", thread, "--checkpoint-id", "cp-2", "--writes", json.dumps([CP_WRITE]),
        "--namespace", "parity-cp", "--json")


# documents: two of namespace parity-doc, put again the same way before each surface, so each
# reads and deletes the same
def documented(env):
    cli("document", "put", "parity.docs", "doc-1", "--value", '{"n": 1, "tags": ["a"]}', "--namespace", "parity-doc",
        "--json")
    cli("document", "put", "parity.docs.deep", "doc-2", "--value", '{"n": 2}', "--namespace", "parity-doc", "--json")


def by_key(docs):
    return sorted(docs, key=lambda d: d["key"])  # a tie of updated_at (the same ms) orders by path


SES = "/v1/sessions/{session_id}"
ROWS = [
    Row("session_create", ["session", "create", "--title", "t", "--namespace", "parity-new", "--json"],
        ("POST", "/v1/sessions", {"title": "t", "namespace": "parity-new"}), pick_api=session_of),
    Row("session_list", ["session", "list", "--namespace", "parity-list", "--json"],
        ("GET", "/v1/sessions", {"namespace": "parity-list"}), pick_api=key("sessions")),
    Row("session_get", ["session", "get", "{S}", "--json"], ("GET", SES, {"session_id": "{S}"}),
        pick_api=session_of),
    Row("session_resume", ["session", "resume", "--namespace", "parity"],
        ("GET", "/v1/resume", {"namespace": "parity"}), pick_api=lambda r: r["session"]["id"]),
    Row("session_fork", ["session", "fork", "{S}", "--upto", "1", "--json"],
        ("POST", SES + "/fork", {"session_id": "{S}", "upto_seq": 1}), pick_api=session_of, fresh="session"),
    Row("session_clear", ["session", "clear", "{S}", "--json"], ("POST", SES + "/clear", {"session_id": "{S}"}),
        fresh="session"),
    Row("session_set_max_turns", ["session", "set-max-turns", "{S}", "1", "--json"],
        ("POST", SES + "/limit", {"session_id": "{S}", "max_turns": 1}), pick_api=session_of, fresh="session"),
    Row("session_delete", ["session", "delete", "{S}", "--json"], ("DELETE", SES, {"session_id": "{S}"}),
        fresh="session"),
    Row("append", ["append", "{S}", "user", "one more", "--json"],
        ("POST", SES + "/messages", {"session_id": "{S}", "role": "user", "content": "one more"}),
        pick_api=lambda r: r["messages"][0], fresh="session"),
    Row("history", ["history", "{S}", "--json"], ("GET", SES + "/messages", {"session_id": "{S}"}),
        pick_api=key("messages")),
    Row("context_build", ["context", "build", "{S}", "--max-tokens", "500", "--model-window", "8000", "--rag",
                          "--report", "--json"],
        ("POST", SES + "/context", {"session_id": "{S}", "max_tokens": 500, "model_window": 8000, "rag": True}),
        pick_api=lambda r: {"messages": r["messages"], "report": r["report"]}),
    Row("context_build", ["context", "build", "{S}", "--max-tokens", "120", "--memories", "--memories-top-k", "1",
                          "--report", "--json"],
        ("POST", SES + "/context", {"session_id": "{S}", "max_tokens": 120, "memories": True, "memories_top_k": 1}),
        pick_api=lambda r: {"messages": r["messages"], "report": r["report"]}, before=with_memories),
    Row("compact", ["compact", "{S}", "--instructions", "keep the file names", "--json"],
        ("POST", SES + "/compact", {"session_id": "{S}", "instructions": "keep the file names"}),
        pick_cli=lambda r: r["kind"], pick_api=lambda r: r["event"]["kind"], fresh="session"),
    Row("summary_get", ["summary", "get", "{S}", "--json"], ("GET", SES + "/summary", {"session_id": "{S}"}),
        pick_api=key("summary"), fresh="session", before=compacted),
    Row("events", ["events", "{S}", "--json"], ("GET", SES + "/events", {"session_id": "{S}"}),
        pick_api=key("events")),
    Row("session_files", ["session", "files", "{S}", "--json"], ("GET", SES + "/files", {"session_id": "{S}"}),
        pick_api=key("files")),
    Row("session_files", ["session", "files", "{S}", "--limit", "1", "--json"],
        ("GET", SES + "/files", {"session_id": "{S}", "limit": 1}),
        pick_api=key("files"), fresh="session", before=another_file),
    Row("file_should_include", ["file", "should-include", "{S}", "src/parity.c", CHECKED.name, "--json"],
        ("POST", SES + "/files/check", {"session_id": "{S}", "path": "src/parity.c",
                                          "content": "int parity(void) { return 1; }\n"}),
        pick_cli=key("include"), pick_api=key("include"), fresh="session"),
    Row("thread_summary_get", ["thread", "summary-get", "{S}", "--files", "1", "--json"],
        ("GET", SES + "/handover", {"session_id": "{S}", "files": 1})),
    Row("session_update", ["session", "update", "{S}", "--title", "renamed", "--metadata", '{"k": "v"}', "--json"],
        ("PATCH", SES, {"session_id": "{S}", "title": "renamed", "metadata": {"k": "v"}}), pick_api=session_of,
        fresh="session"),
    Row("message_edit", ["message", "edit", "{S}", "--message-id", "{MID}", "the parity check reads CHANGES.md", "--metadata",
                         '{"edited": true}', "--json"],
        ("PATCH", SES + "/messages/{message_id}", {"session_id": "{S}", "message_id": "{MID}",
                                                   "content": "the parity check reads CHANGES.md",
                                                   "metadata": {"edited": True}}),
        pick_api=key("message"), fresh="session", before=first_message),
    Row("message_pin", ["message", "pin", "{S}", "--message-id", "{MID}", "--json"],
        ("POST", SES + "/messages/{message_id}/pin", {"session_id": "{S}", "message_id": "{MID}"}),
        pick_cli=lambda r: r == {"id": ENV["MID"], "pinned": True} and cli("history", ENV["S"], "--json")[0]["pinned"],
        pick_api=lambda r: r == {"id": ENV["MID"], "pinned": True} and cli("history", ENV["S"], "--json")[0]["pinned"],
        fresh="session", before=first_message),
    Row("message_delete", ["message", "delete", "{S}", "--message-id", "{MID}", "--json"],
        ("DELETE", SES + "/messages/{message_id}", {"session_id": "{S}", "message_id": "{MID}"}),
        pick_cli=lambda r: r["deleted"] == ENV["MID"], pick_api=lambda r: r["deleted"] == ENV["MID"], fresh="session",
        before=first_message),
    Row("namespace_forget", ["namespace", "forget", "parity-forget", "--yes", "--json"],
        ("DELETE", "/v1/namespaces/{namespace}", {"namespace": "parity-forget"}), before=namespace_to_forget),
    Row("state_get", ["state", "get", "{S}"], ("GET", SES + "/state", {"session_id": "{S}"}), pick_api=key("state")),
    Row("state_merge_params", ["state", "merge-params", "{S}", '{"order_id": 42}'],
        ("POST", SES + "/state", {"session_id": "{S}", "params": {"order_id": 42}}), pick_api=key("state"),
        fresh="session"),
    Row("state_set_waiting", ["state", "set-waiting", "{S}", "order_id"],
        ("POST", SES + "/state/wait", {"session_id": "{S}", "param": "order_id"}), pick_api=key("state"),
        fresh="session"),
    Row("state_unwait", ["state", "unwait", "{S}"], ("POST", SES + "/state/unwait", {"session_id": "{S}"}),
        pick_api=key("state"), fresh="session"),
    Row("state_set_result", ["state", "set-result", "{S}", "lookup", '{"found": true}'],
        ("POST", SES + "/state/result", {"session_id": "{S}", "intent_id": "lookup", "result": {"found": True}}),
        pick_api=key("state"), fresh="session"),
    Row("state_set_plan", ["state", "set-plan", "{S}", '{"steps": ["a", "b"]}'],
        ("POST", SES + "/state/plan", {"session_id": "{S}", "plan": {"steps": ["a", "b"]}}), pick_api=key("state"),
        fresh="session"),
    Row("state_clear", ["state", "clear", "{S}", "--history"],
        ("POST", SES + "/state/clear", {"session_id": "{S}", "history": True}), pick_api=key("state"),
        fresh="session"),
    Row("search", ["search", "parity", "--mode", "keyword", "--namespace", "parity", "--json"],
        ("GET", "/v1/search", {"q": "parity", "mode": "keyword", "namespace": "parity"}), pick_api=key("hits")),
    # the filters: metadata (one of two messages matches), since/until around every message
    Row("search", ["search", "invoice", "--mode", "keyword", "--namespace", "parity-meta", "--metadata",
                   '{"topic": "billing"}', "--since", "1", "--until", "4102444800000", "--json"],
        ("GET", "/v1/search", {"q": "invoice", "mode": "keyword", "namespace": "parity-meta",
                               "metadata": {"topic": "billing"}, "since": 1, "until": 4102444800000}),
        pick_api=key("hits")),
    Row("gc", ["gc", "--json"], ("POST", "/v1/gc", {})),
    Row("gc", ["gc", "--vacuum", "--json"], ("POST", "/v1/gc", {"vacuum": True})),
    Row("prune", ["prune", "--days", "3650", "--json"], ("POST", "/v1/prune", {"days": 3650})),
    Row("stats", ["stats", "--json"], ("GET", "/v1/stats", {})),
    Row("export", ["export", "{S}"], ("GET", "/v1/export", {"ids": "{S}"})),
    Row("import", ["import", "-", "--json"], ("POST", "/v1/import", {}), before=export_then_delete, raw="export"),
    Row("memory_add", ["memory", "add", "tabs over spaces", "--kind", "preference", "--namespace", "parity-r",
                       "--json"],
        ("POST", "/v1/memory", {"text": "tabs over spaces", "kind": "preference", "namespace": "parity-r"}),
        pick_api=key("memory")),
    Row("memory_search", ["memory", "search", "tabs", "--namespace", "parity-mem", "--mode", "keyword", "--json"],
        ("GET", "/v1/memory/search", {"q": "tabs", "namespace": "parity-mem", "mode": "keyword"}),
        pick_api=key("memories"), fresh="memory"),
    Row("memory_list", ["memory", "list", "--namespace", "parity-mem", "--json"],
        ("GET", "/v1/memory", {"namespace": "parity-mem"}), pick_api=key("memories"), fresh="memory"),
    Row("memory_get", ["memory", "get", "{M}", "--json"], ("GET", "/v1/memory/{memory_id}", {"memory_id": "{M}"}),
        pick_api=key("memory"), fresh="memory"),
    Row("memory_update", ["memory", "update", "{M}", "--text", "tabs, always", "--json"],
        ("PATCH", "/v1/memory/{memory_id}", {"memory_id": "{M}", "text": "tabs, always"}), pick_api=key("memory"),
        fresh="memory"),
    Row("memory_delete", ["memory", "delete", "{M}", "--json"],
        ("DELETE", "/v1/memory/{memory_id}", {"memory_id": "{M}"}), fresh="memory"),
    Row("memory_history", ["memory", "history", "{M}", "--json"],
        ("GET", "/v1/memory/{memory_id}/history", {"memory_id": "{M}"}), pick_api=key("versions"), fresh="memory"),
    Row("memory_extract", ["memory", "extract", "{S}", "--extractor", "offline", "--json"],
        ("POST", "/v1/sessions/{session_id}/memory/extract", {"session_id": "{S}", "extractor": "offline"}),
        fresh="session", before=extract_ready),
    Row("memory_extract_queue", ["memory", "extract-queue", "{S}", "--data", '{"ticket": 7}', "--json"],
        ("POST", "/v1/sessions/{session_id}/memory/extract/jobs", {"session_id": "{S}", "data": {"ticket": 7}}),
        pick_cli=job_fields, pick_api=job_fields, fresh="session"),
    Row("memory_extract_job", ["memory", "extract-job", "{J}", "--json"],
        ("GET", "/v1/memory/jobs/{job_id}", {"job_id": "{J}"}), pick_cli=job_times, pick_api=job_times,
        fresh="session", before=job_done),
    Row("memory_forget", ["memory", "forget", "{M}", "--json"],
        ("POST", "/v1/memory/{memory_id}/forget", {"memory_id": "{M}"}),
        fresh="memory"),
    Row("checkpoint_put", ["checkpoint", "put", "parity-cp-put", "--checkpoint-id", "cp-1", "--type", "json",
                           "--checkpoint", "eyJ2IjoxfQ==", "--metadata", '{"step": 1}', "--namespace", "parity-cp",
                           "--json"],
        ("POST", "/v1/checkpoints", {"thread_id": "parity-cp-put", "checkpoint_id": "cp-1", "type": "json",
                                     "checkpoint": "eyJ2IjoxfQ==", "metadata": {"step": 1}, "namespace": "parity-cp"})),
    Row("checkpoint_put_writes", ["checkpoint", "put-writes", "parity-cp", "--checkpoint-id", "cp-1", "--writes",
                                  json.dumps([CP_WRITE]), "--namespace", "parity-cp", "--json"],
        ("POST", "/v1/checkpoints/writes", {"thread_id": "parity-cp", "checkpoint_id": "cp-1", "writes": [CP_WRITE],
                                            "namespace": "parity-cp"}), before=checkpointed),
    Row("checkpoint_get", ["checkpoint", "get", "parity-cp", "--namespace", "parity-cp", "--json"],
        ("GET", "/v1/checkpoints/latest", {"thread_id": "parity-cp", "namespace": "parity-cp"}),
        pick_api=key("checkpoint"), before=checkpointed),
    Row("checkpoint_list", ["checkpoint", "list", "parity-cp", "--filter", '{"step": 1}', "--namespace", "parity-cp",
                            "--json"],
        ("POST", "/v1/checkpoints/list", {"thread_id": "parity-cp", "filter": {"step": 1}, "namespace": "parity-cp"}),
        pick_api=key("checkpoints"), before=checkpointed),
    Row("checkpoint_delete_thread", ["checkpoint", "delete-thread", "parity-cp-del", "--namespace", "parity-cp",
                                     "--json"],
        ("DELETE", "/v1/checkpoints", {"thread_id": "parity-cp-del", "namespace": "parity-cp"}),
        before=lambda env: checkpointed(env, "parity-cp-del")),
    Row("document_put", ["document", "put", "parity.docs", "put-1", "--value", '{"n": 1}', "--ttl-ms", "60000",
                         "--namespace", "parity-doc", "--json"],
        ("PUT", "/v1/documents", {"path": "parity.docs", "key": "put-1", "value": {"n": 1}, "ttl_ms": 60000,
                                  "namespace": "parity-doc"}), pick_api=key("document")),
    Row("document_get", ["document", "get", "parity.docs", "doc-1", "--namespace", "parity-doc", "--json"],
        ("GET", "/v1/documents/item", {"path": "parity.docs", "key": "doc-1", "namespace": "parity-doc"}),
        pick_api=key("document"), before=documented),
    Row("document_delete", ["document", "delete", "parity.docs", "doc-1", "--namespace", "parity-doc", "--json"],
        ("DELETE", "/v1/documents", {"path": "parity.docs", "key": "doc-1", "namespace": "parity-doc"}),
        before=documented),
    Row("document_search", ["document", "search", "parity.docs", "--filter", '{"n": {"$gte": 1}}', "--limit", "5",
                            "--namespace", "parity-doc", "--json"],
        ("POST", "/v1/documents/search", {"prefix": "parity.docs", "filter": {"n": {"$gte": 1}}, "limit": 5,
                                          "namespace": "parity-doc"}),
        pick_cli=by_key, pick_api=lambda r: by_key(r["documents"]), before=documented),
    Row("document_paths", ["document", "paths", "--prefix", "parity", "--max-depth", "2", "--namespace", "parity-doc",
                           "--json"],
        ("POST", "/v1/documents/paths", {"prefix": "parity", "max_depth": 2, "namespace": "parity-doc"}),
        pick_api=key("paths"), before=documented),
]


def subst(v, env):
    if v == "{MID}":
        return env["MID"]  # a message id stays a number (the CLI gets it as text below)
    if isinstance(v, str):
        return v.replace("{S}", env.get("S", "")).replace("{M}", env.get("M", "")).replace("{J}", env.get("J", ""))
    if isinstance(v, dict):
        return {k: subst(x, env) for k, x in v.items()}
    if isinstance(v, list):
        return [subst(x, env) for x in v]
    return v


def env_for(row, shared):
    env = dict(shared)
    if row.fresh == "session":
        env["S"] = make_session()
    if row.fresh == "memory":
        # memories of one namespace per surface: what a list or search returns is that surface's
        for old in cli("memory", "list", "--namespace", "parity-mem", "--json"):
            cli("memory", "forget", old["id"], "--json")
        env["M"] = make_memory()
    if row.before:
        row.before(env)
    return env


def surface(row, name, shared):
    global ENV
    env = ENV = env_for(row, shared)
    method, path, params = row.api
    params = subst(params, env)
    if name == "cli":
        stdin = env.get(row.raw) if row.raw else None
        return norm(row.pick_cli(cli(*[str(a) for a in subst(row.cli, env)], stdin=stdin)))
    if name == "rest":
        return norm(row.pick_api(rest(method, path, params, raw=env.get(row.raw) if row.raw else None)))
    return norm(row.pick_api(tool(row.op, params)))


def main():
    global checks
    mcp("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "parity", "version": "1"}})
    tools = {t["name"] for t in mcp("tools/list", {})["tools"]}
    bound = {op["name"] for op in cli("api", "--json") if op.get("cli_command")}
    shared = {"S": make_session()}
    cli("session", "create", "--namespace", "parity-list", "--title", "listed", "--json")
    meta = make_session("parity-meta")
    cli("append", meta, "user", "the invoice is due", "--metadata", '{"topic": "billing"}', "--json")
    cli("append", meta, "user", "an invoice template", "--metadata", '{"topic": "design"}', "--json")
    covered = set()
    for row in ROWS:
        covered.add(row.op)
        results = {}
        for name in ("cli", "rest", "mcp"):
            if name == "mcp" and row.op not in tools:
                continue
            try:
                results[name] = surface(row, name, shared)
            except Exception as e:  # noqa: BLE001 - reported as a failure of this row
                results[name] = f"ERROR {e}"
        checks += 1
        if isinstance(results["cli"], str) and results["cli"].startswith("ERROR"):
            failures.append(f"{row.op}: the CLI call failed: {results['cli'][:500]}")
        for name, got in results.items():
            checks += 1
            if got != results["cli"]:
                failures.append(f"{row.op}: {name} differs from the CLI\n  cli:  {json.dumps(results['cli'])[:700]}\n"
                                f"  {name}: {json.dumps(got)[:700]}")
    for op in sorted(bound - covered):
        failures.append(f"{op}: has a CLI command but no parity row")
    checks += 1


if __name__ == "__main__":  # tests/cli/serve/limits.py imports the rows
    main()
    os.unlink(CHECKED.name)
    for f in failures:
        print("FAIL", f)
    print("checks", checks, "failures", len(failures))
    sys.exit(1 if failures else 0)
