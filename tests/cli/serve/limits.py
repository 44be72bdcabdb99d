"""limits.py — a range is declared once (app/server/ops.c) and every surface keeps it (issue #40).
For each operation bound to a CLI command and each of its integer or number parameters with a
declared minimum or maximum (`mnemo api --json`: the cases come from the table, never by hand),
min-1 and max+1 are refused — the CLI exits 2 naming the value, REST answers 400 and MCP
tools/call a -32602 error naming the parameter, the Python package raises mnemo.Invalid, the
TypeScript client (@mnemo/client) throws InvalidError naming the parameter — and min and max are
accepted by all five (a success, or "not found" for an id that names nothing). The TypeScript
client checks no operation's range itself (only the types of query parameters): its
InvalidError is the server's 400, so what this holds it to is sending the value as given.

The CLI and REST calls are parity.py's rows (one per operation: its argv and REST params): the
value replaces the row's own for the parameter, or goes in as --NAME (the parameter's name with
`-` for `_`); a command without that option does not expose the parameter and is listed. The
Python calls are PY below, by hand: a case without an entry there fails until it gets one. The
TypeScript calls need no table: limits_ts.mjs (one node process for every case) calls the
operation's generated method with the REST call's parameters, path parameters as its arguments.
The ranges the built client was generated with (its RANGES) must be the table's too.
Usage: python3 limits.py MNEMO DB URL LIBMNEMO PRELOAD JSDIR   (PRELOAD: what python needs in
LD_PRELOAD to load LIBMNEMO, an ASan runtime or empty; JSDIR: the built @mnemo/client,
js/test/build.sh's $BUILD_DIR/js); the Python part runs in a child, limits.py --python.
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

# ---- the CLI, REST, MCP and TypeScript ---------------------------------------------------------
import parity  # noqa: E402  (reads MNEMO DB URL from sys.argv)

MNEMO, DB, URL, LIB, PRELOAD, JSDIR = sys.argv[1:7]
failures, unexposed = [], []
counts = {"cases": 0, "values": 0, "cli": 0, "rest": 0, "mcp": 0, "python": 0, "typescript": 0}


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


def case_env(row, want, shared):
    """The ids one surface's call names: the shared ones, but its own memory to delete or update
    (the surfaces' calls run at once, and two updates of one memory race for its next version:
    the later one is refused, "version N is not the current version any more")."""
    if want == "accept" and row.api[0] in ("DELETE", "PATCH") and row.fresh == "memory":
        return dict(shared, M=parity.make_memory())
    return shared


def check(op, row, param, v, want, shared, surface):
    """One value through one surface; a failure when it disagrees. Returns the surface when it
    made the call (None: the command has no such option)."""
    where = f"{op['name']}.{param}={v}"
    p = placed(row, param, v, case_env(row, want, shared))
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


def typescript(cases):
    """The cases ([op, param, value, want, REST params]) through limits_ts.mjs: its lines, one a
    case and then the client's RANGES; None (and a failure) when node or the client fails."""
    argv = ["node", os.path.join(os.path.dirname(__file__), "limits_ts.mjs"), URL, JSDIR]
    try:
        r = subprocess.run(argv, input=json.dumps(cases), capture_output=True, text=True, timeout=600)
    except FileNotFoundError:
        failures.append("TypeScript: node is not installed (scripts/install-deps installs nodejs)")
        return None
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    if r.returncode != 0 or len(lines) != len(cases) + 1:
        failures.append(f"TypeScript: limits_ts.mjs exits {r.returncode} after {len(lines)} lines: {r.stderr[-800:]}")
        return None
    return lines


def check_typescript(case, got):
    """One case's TypeScript result; a failure when it disagrees."""
    op, param, v, want, _ = case
    threw, message = got["threw"], got.get("message", "")
    said = "returned" if threw is None else f"threw {threw}: {message[:200]}"
    if want == "refuse" and not (threw == "InvalidError" and param in message):
        failures.append(f"{op}.{param}={v}: TypeScript {said}, not InvalidError naming {param}")
    if want == "accept" and threw not in (None, "NotFoundError"):
        failures.append(f"{op}.{param}={v}: TypeScript refuses it: {said}")


def check_ranges(ops, ranges):
    """The built client's RANGES (src/generated.ts, from /openapi.json) are the table's: every
    declared minimum and maximum of a parameter outside the URL path, and no other."""
    want = {}
    for op in ops:
        for param, schema in op["params"].get("properties", {}).items():
            if ("minimum" in schema or "maximum" in schema) and "{" + param + "}" not in op["path"]:
                want.setdefault(op["name"], {})[param] = {"minimum": schema.get("minimum"),
                                                          "maximum": schema.get("maximum")}
    for name in sorted(set(want) | set(ranges)):
        if want.get(name, {}) != ranges.get(name, {}):
            failures.append(f"{name}: the TypeScript client's RANGES say {json.dumps(ranges.get(name, {}))}, "
                            f"the table {json.dumps(want.get(name, {}))} (is js/src/generated.ts stale?)")


def main():
    parity.mcp("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "limits", "version": "1"}})
    tools = {t["name"] for t in parity.mcp("tools/list", {})["tools"]}
    shared = {"S": parity.make_session(), "M": parity.make_memory()}
    parity.first_message(shared)
    calls, py_cases, ts_cases = [], [], []
    ops = parity.cli("api", "--json")
    for op in ops:
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
                p = placed(row, param, v, case_env(row, want, shared))
                if p:  # else the CLI's check has said why
                    ts_cases.append([op["name"], param, v, want, p[1]])
    env = dict(os.environ, MNEMO_LIBRARY=LIB, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                                       "python"))
    if PRELOAD:  # an ASan libmnemo in an uninstrumented python: the runtime first, no leak report
        env.update(LD_PRELOAD=PRELOAD, ASAN_OPTIONS="detect_leaks=0:abort_on_error=1")
    child = subprocess.Popen([sys.executable, __file__, "--python", DB + ".python"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    # the calls are independent (an accepted value changes nothing another call reads, or only
    # turns it into "not found"): a few at a time, since each `mnemo` is a process of its own;
    # the TypeScript ones meanwhile, in one node process
    with ThreadPoolExecutor(max_workers=1) as aside, ThreadPoolExecutor(max_workers=2) as pool:
        ts = aside.submit(typescript, ts_cases)
        for surface in pool.map(lambda c: check(*c), calls):
            if surface:
                counts[surface] += 1
        ts_lines = ts.result()
    if ts_lines is not None:
        for case, got in zip(ts_cases, ts_lines):
            check_typescript(case, got)
        check_ranges(ops, ts_lines[-1]["ranges"])
        counts["typescript"] = len(ts_cases)
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
print("limits: {cases} declared ranges, {values} values: {cli} CLI, {rest} REST, {mcp} MCP, {python} Python and "
      "{typescript} TypeScript calls; "
      .format(**counts) + f"{len(failures)} failures")
sys.exit(1 if failures else 0)
