"""names.py — docs/names.md against the code (tests/cli/t0111-names.sh): every operation has its
one name on each surface, and every older name listed there still reaches the same operation.

Usage: names.py SURFACE ROOT MNEMO GENERATED_TS WORKDIR, SURFACE one of table, c, mcp, cli,
python, ts. Prints what is wrong and exits 1; exits 0 when the surface matches the page.
"""
import ast
import json
import re
import subprocess
import sys

SURFACE, ROOT, MNEMO, GENERATED, WORK = sys.argv[1:6]


def code_spans(cell):
    return re.findall(r"`([^`]+)`", cell)


def page():
    """The rows of docs/names.md's operation tables: {op: {"mcp", "c", "c_note", "cli", "python",
    "ts", "aliases": {surface: [names]}}} (None where a surface has no name for it)."""
    rows = {}
    for line in open(f"{ROOT}/docs/names.md", encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not cells[0].startswith("`"):
            continue
        op, mcp, c, cli, py, ts, al = cells
        aliases = {}
        for part in al.split(" · ") if al != "—" else []:
            surface, _, names = part.partition(" ")
            aliases[surface] = code_spans(names)
        rows[code_spans(op)[0]] = {
            "mcp": mcp == "tool", "c": (code_spans(c) or [None])[0], "c_note": c,
            "cli": code_spans(cli)[0].removeprefix("mnemo ") if cli != "—" else None,
            "python": code_spans(py)[0] if py != "—" else None, "py_note": py,
            "ts": code_spans(ts)[0] if ts != "—" else None,
            "aliases": aliases}
    return rows


def run(args, stdin=None):
    return subprocess.run([MNEMO, "--db", f"{WORK}/names.db", *args], input=stdin, capture_output=True, text=True)


ROWS = page()
API = json.loads(run(["api", "--json"]).stdout)
BAD = []


def expect(cond, what):
    if not cond:
        BAD.append(what)


def camel(name):
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def check_table():
    """Every operation of the table is on the page once, with its older names and command."""
    ops = {o["name"]: o for o in API}
    expect(sorted(ROWS) == sorted(ops), f"the page's operations {sorted(set(ROWS) ^ set(ops))} differ from mnemo api's")
    for name, o in ops.items():
        row = ROWS.get(name)
        if not row:
            continue
        expect(sorted(o["aliases"]) == sorted(row["aliases"].get("op", [])),
               f"{name}: mnemo api's aliases {o['aliases']} are not the page's")
        expect(o["cli_command"] == row["cli"],
               f"{name}: mnemo api binds command {o['cli_command']!r}, the page {row['cli']!r}")
        expect(row["ts"] == camel(name), f"{name}: TypeScript {row['ts']} is not its camelCase")
        words = name.split("_", 1)
        if row["cli"]:
            expect(row["cli"] == " ".join([words[0], *[w.replace("_", "-") for w in words[1:]]]),
                   f"{name}: command {row['cli']} is not its words")
        if row["python"] and row["python"] != name:
            expect("exception" in row["py_note"], f"{name}: Python {row['python']} differs without a stated exception")


def check_c():
    header = open(f"{ROOT}/include/mnemo.h", encoding="utf-8").read()
    declared = set(re.findall(r"\b(mn_\w+)\s*\(", header))
    for name, row in ROWS.items():
        if row["c"] is None:
            continue
        expect(row["c"] in declared, f"{name}: {row['c']} is not declared in include/mnemo.h")
        expect(row["c"] == f"mn_{name}" or "exception" in row["c_note"],
               f"{name}: C function {row['c']} is not mn_{name} and the page states no exception")


def mcp(requests):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    lines = [json.dumps(init)]
    lines += [json.dumps({"jsonrpc": "2.0", "id": i + 1, **r}) for i, r in enumerate(requests)]
    out = run(["mcp"], "\n".join(lines) + "\n").stdout
    return {m.get("id"): m for m in map(json.loads, out.splitlines())}


def check_mcp():
    tools = mcp([{"method": "tools/list"}])[1]["result"]["tools"]
    listed = sorted(t["name"] for t in tools)
    expect(listed == sorted(n for n, r in ROWS.items() if r["mcp"]),
           f"tools/list {listed} is not the page's MCP column")
    # an older tool name runs the same operation: an undeclared argument is refused in its name
    calls = [(alias, name) for name, r in ROWS.items() for alias in [name, *r["aliases"].get("op", [])] if r["mcp"]]
    answers = mcp([{"method": "tools/call", "params": {"name": a, "arguments": {"names_probe": 1}}} for a, _ in calls])
    for i, (alias, name) in enumerate(calls):
        msg = answers.get(i + 1, {}).get("error", {}).get("message", "")
        expect(f"not a parameter of {name} " in msg, f"tools/call {alias}: {msg!r} does not name {name}")


def help_usage(words):
    r = run([*words, "--help"])
    return r.stdout.splitlines()[0] if r.returncode == 0 and r.stdout else f"exit {r.returncode}: {r.stderr.strip()}"


def check_cli():
    top = run(["--help"]).stdout
    for name, row in ROWS.items():
        if not row["cli"]:
            continue
        line = next((l for l in top.splitlines() if re.match(rf"  {re.escape(row['cli'])}  ", l)), None)
        expect(line is not None, f"{name}: mnemo --help lists no command {row['cli']}")
        shown = row["aliases"].get("CLI", [])
        if line is not None:
            note = re.search(r"\(alias: ([^)]*)\)$", line)
            got = [a.strip() for a in note.group(1).split(",")] if note else []
            expect(sorted(got) == sorted(shown), f"{name}: mnemo --help shows aliases {got}, the page {shown}")
        want = f"usage: mnemo {row['cli']} "
        for words in [row["cli"], *shown]:
            usage = help_usage(words.replace("ID", "names-probe").split())
            expect(usage.startswith(want) or usage == want.strip(), f"mnemo {words} --help: {usage!r}, not {want!r}")


def class_names(path, cls, defs):
    tree = ast.parse(open(path, encoding="utf-8").read())
    body = next(c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == cls).body
    methods = {n.name for n in body if isinstance(n, defs)}
    aliases = {n.targets[0].id: n.value.id for n in body
               if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Name)}
    return methods, aliases


def check_python():
    for path, cls, defs in ((f"{ROOT}/python/mnemo/memory.py", "Memory", ast.FunctionDef),
                            (f"{ROOT}/python/mnemo/aio.pyi", "AsyncMemory", ast.AsyncFunctionDef)):
        methods, aliases = class_names(path, cls, defs)
        for name, row in ROWS.items():
            if row["python"]:
                expect(row["python"] in methods, f"{cls}: no method {row['python']} ({name})")
            for alias in row["aliases"].get("Python", []):
                expect(aliases.get(alias) == row["python"],
                       f"{cls}.{alias} is {aliases.get(alias)!r}, not an assignment of {row['python']}")


def check_ts():
    text = open(GENERATED, encoding="utf-8").read()
    body = text[text.index("export abstract class Operations"):]
    calls = dict(re.findall(r"\n  (\w+)\([^\n]*\{\n    return this\.call\('(\w+)'", body))
    deprecated = dict(re.findall(r"@deprecated[^\n]*\n  (\w+)\([^\n]*\{\n    return this\.(\w+)\(", body))
    for name, row in ROWS.items():
        expect(calls.get(row["ts"]) == name,
               f"TypeScript: {row['ts']} does not call {name} (it calls {calls.get(row['ts'])})")
        for alias in row["aliases"].get("TS", []):
            expect(deprecated.get(alias) == row["ts"],
                   f"TypeScript: deprecated {alias} calls {deprecated.get(alias)}, not {row['ts']}")


CHECKS = {"table": check_table, "c": check_c, "mcp": check_mcp, "cli": check_cli, "python": check_python, "ts": check_ts}
CHECKS[SURFACE]()
for b in BAD:
    print(f"names.py {SURFACE}: {b}")
sys.exit(1 if BAD else 0)
