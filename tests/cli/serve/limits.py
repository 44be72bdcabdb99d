"""limits.py — a range is declared once (app/server/ops.c) and every surface keeps it (issue #40).
For each operation bound to a CLI command and each of its integer or number parameters with a
declared minimum or maximum (`mnemo api --json`: the cases come from the table, never by hand),
min-1 and max+1 are refused — the CLI exits 2 naming the value, REST answers 400 and MCP
tools/call a -32602 error naming the parameter, the Python package raises mnemo.Invalid — and
min and max are accepted by all four (a success, or "not found" for an id that names nothing).

The CLI and REST calls are parity.py's rows (one per operation: its argv and REST params): the
value replaces the row's own for the parameter, or goes in as --NAME (the parameter's name with
`-` for `_`); a command without that option does not expose the parameter and is listed. The
Python calls are PY below, by hand: a case without an entry there fails until it gets one.
Usage: python3 limits.py MNEMO DB URL LIBMNEMO PRELOAD   (PRELOAD: what python needs in LD_PRELOAD
to load LIBMNEMO, an ASan runtime or empty); the Python part runs in a child, limits.py --python.
"""
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree

# ---- the Python side: (operation, parameter) -> (the argument's name in the message, the call) ----
# m: an open mnemo.Memory; e: {"S": a session with two messages, "M": a memory}; v: the value.
PY = {
    ("session_create", "ttl_seconds"): ("ttl_ms", lambda m, e, v: m.session_create(ttl_ms=v * 1000 if v > 0 else v)),
    ("session_create", "max_turns"): ("max_turns", lambda m, e, v: m.session_create(max_turns=v)),
    ("session_list", "limit"): ("limit", lambda m, e, v: m.session_list(limit=v)),
    ("checkpoint_list", "limit"): ("limit", lambda m, e, v: m.checkpoint_list(limit=v)),
    ("session_list", "offset"): ("offset", lambda m, e, v: m.session_list(offset=v)),
    ("session_set_max_turns", "max_turns"): ("max_turns", lambda m, e, v: m.session_set_max_turns(e["S"], v)),
    ("message_delete", "message_id"): ("message_id", lambda m, e, v: m.message_delete(e["S"], v)),
    ("message_edit", "message_id"): ("message_id", lambda m, e, v: m.message_edit(e["S"], v, "edited")),
    ("message_pin", "message_id"): ("message_id", lambda m, e, v: m.message_pin(v, session_id=e["S"])),
    ("events", "limit"): ("limit", lambda m, e, v: m.events(e["S"], limit=v)),
    ("session_fork", "upto_seq"): ("upto_seq", lambda m, e, v: m.session_fork(e["S"], upto_seq=v)),
    ("history", "after"): ("after_seq", lambda m, e, v: m.history(e["S"], after_seq=v)),
    ("history", "limit"): ("limit", lambda m, e, v: m.history(e["S"], limit=v)),
    ("session_files", "limit"): ("limit", lambda m, e, v: m.session_files(e["S"], limit=v)),
    ("thread_summary_get", "files"): ("files", lambda m, e, v: m.thread_summary_get(e["S"], files=v)),
    ("prune", "days"): ("days", lambda m, e, v: m.prune(v)),
    ("memory_delete", "at"): ("at", lambda m, e, v: m.memory_delete(e["M"], at=v)),
    ("document_put", "ttl_ms"): ("ttl_ms", lambda m, e, v: m.document_put("limits", "k", {}, ttl_ms=v)),
}
for _p in ("limit", "offset"):
    PY[("document_search", _p)] = (_p, lambda m, e, v, p=_p: m.document_search(**{p: v}))
for _p in ("max_depth", "limit", "offset"):
    PY[("document_paths", _p)] = (_p, lambda m, e, v, p=_p: m.document_paths(**{p: v}))
for _p in ("max_tokens", "model_window", "rag_top_k", "rag_min_similarity", "memories_top_k"):
    PY[("context_build", _p)] = (_p, lambda m, e, v, p=_p: m.context_build(e["S"], **{p: v}))
for _p in ("top_k", "since", "until", "min_similarity"):
    PY[("search", _p)] = (_p, lambda m, e, v, p=_p: m.search("parity", **{p: v}))
for _p in ("token_cap", "valid_from", "valid_to"):
    PY[("memory_add", _p)] = (_p, lambda m, e, v, p=_p: m.memory_add("a fact", **{p: v}))
    PY[("memory_update", _p)] = (_p, lambda m, e, v, p=_p: m.memory_update(e["M"], **{p: v}))
for _p in ("as_of", "limit"):
    PY[("memory_search", _p)] = (_p, lambda m, e, v, p=_p: m.memory_search("fact", **{p: v}))
for _p in ("as_of", "limit", "offset"):
    PY[("memory_list", _p)] = (_p, lambda m, e, v, p=_p: m.memory_list(**{p: v}))


def python_child(db):
    """Runs the cases on stdin ([op, param, value, "refuse"|"accept"]) through the package on a
    database of its own; prints the failures as a JSON list."""
    import mnemo
    out = []
    with mnemo.Memory(db) as m:
        def fixture():
            s = m.session_create()["id"]
            m.append(s, "user", "the parity check reads README.md", files=["README.md"])
            m.append(s, "assistant", "README.md says hello")
            return {"S": s, "M": m.memory_add("the parity fact")["id"]}
        shared = fixture()
        for op, param, v, want in json.load(sys.stdin):
            if (op, param) not in PY:
                out.append(f"{op}.{param}: no Python call in limits.py's PY (add the method taking it)")
                continue
            arg, call = PY[(op, param)]
            try:
                call(m, shared if want == "refuse" else fixture(), v)
                got = None
            except mnemo.MnemoError as e:
                got = e
            if want == "refuse" and not (isinstance(got, mnemo.Invalid) and arg in str(got)):
                out.append(f"{op}.{param}={v}: Python {'accepted it' if got is None else 'raised ' + repr(got)}, "
                           f"not mnemo.Invalid naming {arg}")
            if want == "accept" and got is not None and not isinstance(got, mnemo.NotFound):
                out.append(f"{op}.{param}={v}: Python refused it: {got!r}")
    json.dump(out, sys.stdout)


if sys.argv[1:2] == ["--python"]:
    python_child(sys.argv[2])
    sys.exit(0)

# ---- the CLI, REST and MCP ---------------------------------------------------------------------
import parity  # noqa: E402  (reads MNEMO DB URL from sys.argv)

MNEMO, DB, LIB, PRELOAD = sys.argv[1], sys.argv[2], sys.argv[4], sys.argv[5]
failures, unexposed = [], []
counts = {"cases": 0, "values": 0, "cli": 0, "rest": 0, "mcp": 0, "python": 0}


def cli_run(argv):
    r = subprocess.run([MNEMO, "--db", DB, *argv], capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    return r.returncode, r.stderr.strip()


def placed(row, param, v, env):
    """The row's CLI argv and REST params with param = v: (argv, params), or None when the row
    carries the value twice in its argv (which one to change is a guess)."""
    method, path, params = row.api
    params = parity.subst(params, env)
    argv = [str(a) for a in parity.subst(row.cli, env)]
    if param in params:
        at = [i for i, a in enumerate(argv) if a == str(params[param])]
        if len(at) != 1:
            return None
        argv[at[0]] = str(v)
    else:
        argv += ["--" + param.replace("_", "-"), str(v)]
    return argv, dict(params, **{param: v})


def not_found(text):
    return "not found" in text or "not_found" in text or " has no message" in text


def check(op, row, param, v, want, shared, surface):
    """One value through one surface; a failure when it disagrees. Returns the surface when it
    made the call (None: the command has no such option)."""
    where = f"{op['name']}.{param}={v}"
    env = shared
    if want == "accept" and row.api[0] == "DELETE" and row.fresh == "memory":
        env = dict(shared, M=parity.make_memory())  # the memory a surface deletes is its own
    p = placed(row, param, v, env)
    if p is None:
        failures.append(f"{where}: parity.py's {op['name']} row holds the value of {param} twice")
        return None
    argv, params = p
    if surface == "cli":
        rc, err = cli_run(argv)
        if rc == 2 and "unknown option" in err:
            if want == "refuse":
                unexposed.append(f"{op['cli_command']} --{param.replace('_', '-')}")
            return None
        if want == "refuse" and not (rc == 2 and f"'{v}'" in err):
            failures.append(f"{where}: the CLI (mnemo {' '.join(argv)}) exits {rc}, not 2 naming '{v}': {err[:200]}")
        if want == "accept" and rc != 0 and not (rc == 1 and not_found(err)):
            failures.append(f"{where}: the CLI (mnemo {' '.join(argv)}) refuses it: exit {rc}: {err[:200]}")
    elif surface == "rest":
        method, path, _ = row.api
        status, text = parity.rest_call(method, path, params)
        if want == "refuse" and not (status == 400 and param in text):
            failures.append(f"{where}: REST answers {status}, not 400 naming {param}: {text[:200]}")
        if want == "accept" and status >= 300 and not (status == 404 and not_found(text)):
            failures.append(f"{where}: REST refuses it: {status} {text[:200]}")
    else:
        r = parity.mcp_call("tools/call", {"name": op["name"], "arguments": params})
        err = r.get("error")
        if want == "refuse" and not (err and err.get("code") == -32602 and param in err.get("message", "")):
            failures.append(f"{where}: MCP tools/call answers {json.dumps(r)[:200]}, not a -32602 error naming {param}")
        if want == "accept":
            text = json.dumps(r.get("result", {}).get("content", ""))
            if err or (r["result"].get("isError") and not not_found(text)):
                failures.append(f"{where}: MCP tools/call refuses it: {json.dumps(r)[:200]}")
    return surface


def main():
    parity.mcp("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "limits", "version": "1"}})
    tools = {t["name"] for t in parity.mcp("tools/list", {})["tools"]}
    shared = {"S": parity.make_session(), "M": parity.make_memory()}
    parity.first_message(shared)
    calls, py_cases = [], []
    for op in parity.cli("api", "--json"):
        if not op.get("cli_command"):
            continue
        row = next((r for r in parity.ROWS if r.op == op["name"]), None)
        for param, schema in op["params"].get("properties", {}).items():
            lo, hi = schema.get("minimum"), schema.get("maximum")
            if schema.get("type") not in ("integer", "number") or (lo is None and hi is None):
                continue
            counts["cases"] += 1
            if row is None:
                failures.append(f"{op['name']}.{param}: parity.py has no row for {op['name']}")
                continue
            values = [(lo - 1, "refuse"), (lo, "accept")] if lo is not None else []
            values += [(hi + 1, "refuse"), (hi, "accept")] if hi is not None else []
            for v, want in values:
                counts["values"] += 1
                surfaces = ("cli", "rest", "mcp") if op["name"] in tools else ("cli", "rest")
                calls += [(op, row, param, v, want, shared, s) for s in surfaces]
                py_cases.append([op["name"], param, v, want])
    env = dict(os.environ, MNEMO_LIBRARY=LIB, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                                       "python"))
    if PRELOAD:  # an ASan libmnemo in an uninstrumented python: the runtime first, no leak report
        env.update(LD_PRELOAD=PRELOAD, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
    child = subprocess.Popen([sys.executable, __file__, "--python", DB + ".python"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # the calls are independent (an accepted value changes nothing another call reads, or only
    # turns it into "not found"): a few at a time, since each `mnemo` is a process of its own
    with ThreadPoolExecutor(max_workers=2) as pool:
        for surface in pool.map(lambda c: check(*c), calls):
            if surface:
                counts[surface] += 1
    out, err = child.communicate(json.dumps(py_cases), timeout=600)
    if child.returncode != 0:
        failures.append(f"the Python part failed: exit {child.returncode}: {err[-800:]}")
    else:
        failures.extend(json.loads(out))
        counts["python"] = len(py_cases)


main()
os.unlink(parity.CHECKED.name)
for f in failures:
    print("FAIL", f)
for u in unexposed:
    print("not a CLI option:", u)
print("limits: {cases} declared ranges, {values} values: {cli} CLI, {rest} REST, {mcp} MCP and {python} Python calls; "
      .format(**counts) + f"{len(failures)} failures")
sys.exit(1 if failures else 0)
