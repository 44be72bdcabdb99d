#!/usr/bin/env python3
"""seeds.py MNEMO PAGE [--seeds DIR] — checks docs/seeds.md (the page mapping each seed's
behaviours to mnemo) against the code: every backticked item in the mnemo and difference columns
of its tables must exist, and every seed 000-004 must have its section with rows. tests/CMakeLists.txt
runs it as docs/seeds; the convention is stated at the top of the page.

Kinds of item, told apart by their shape:
  `mnemo WORDS [ARGS] [--flag ...]`  WORDS (leading lower-case words) is a command whose --help
                                     exits 0 and names it; every --flag appears in that help
  `/name ...`                        a command of `mnemo chat` (its /help lists it)
  `GET /v1/...` (any HTTP method)    a route of `mnemo api --json`, method and path
  MCP `name`                         (the word MCP right before the span) an MCP tool of `mnemo api --json`
  `mnemo.x.y`                        a Python name defined in python/mnemo/ (module, class, method, function)
  `mn_x`, `MN_X`                     declared in include/mnemo.h (outside comments)
  `a.b` or `a.b=value`               a key of `mnemo config show --json`; with =value, a config file
                                     setting it to value is accepted
Anything else is an error, unless its row holds the comment <!-- prose -->. With --seeds DIR,
the seed files NNN_*.txt of DIR must be exactly the files the sections name. Exit 0 when all
holds, else one line per problem (PAGE:LINE) and status 1.
"""
import ast
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

SEEDS = ("000", "001", "002", "003", "004")
SECTION_RE = re.compile(r"^## Seed (\d{3})\b.*`(\d{3}_[0-9a-f]+\.txt)`")
SPAN_RE = re.compile(r"(MCP\s+)?`([^`]+)`")
ROUTE_RE = re.compile(r"^(GET|POST|PUT|PATCH|DELETE) (/\S*)$")
CONFIG_RE = re.compile(r"^([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+)(?:=(\S+))?$")
C_RE = re.compile(r"^(mn_[a-z0-9_]+|MN_[A-Z0-9_]+)(?:\(.*\))?$")
PY_RE = re.compile(r"^mnemo(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*\))?$")
WORD_RE = re.compile(r"^[a-z][a-z0-9-]*$")
PROSE = "<!-- prose -->"


class Code:
    """What the checks ask of the built mnemo and the source tree, each asked once."""

    def __init__(self, mnemo, root):
        self.mnemo, self.root = mnemo, root
        self.tmpdir = tempfile.TemporaryDirectory(prefix="mnemo-seeds-")
        self.tmp = self.tmpdir.name
        # no settings of the caller: a fresh HOME, no MNEMO_* variables
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        self.env.update(HOME=self.tmp, XDG_CONFIG_HOME=self.tmp, XDG_DATA_HOME=self.tmp)
        self.helps, self.values = {}, {}
        self._ops = self._config = self._chat = self._header = None

    def run(self, args, stdin=None, extra_env=None):
        env = dict(self.env, **(extra_env or {}))
        p = subprocess.run([self.mnemo] + args, input=stdin, capture_output=True, text=True, env=env,
                           cwd=self.tmp, timeout=60)
        return p.returncode, p.stdout + p.stderr

    def must(self, args, **kw):
        """The output of a command every check of a kind needs: without it, nothing of that kind
        could be checked, so it ends the run."""
        rc, out = self.run(args, **kw)
        if rc != 0:
            sys.exit(f"seeds: `mnemo {' '.join(args)}` failed (status {rc}): {out.strip()}")
        return out

    def help(self, words):
        if words not in self.helps:
            self.helps[words] = self.run(list(words) + ["--help"])
        return self.helps[words]

    def ops(self):
        if self._ops is None:
            self._ops = json.loads(self.must(["api", "--json"]))
        return self._ops

    def config(self):
        if self._config is None:
            self._config = json.loads(self.must(["config", "show", "--json"]))
        return self._config

    def config_file(self, pairs, name):
        """(status, output) of `config show` over a file setting each (key, value) of pairs."""
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(f"{k}: {v}\n" for k, v in pairs)
        return self.run(["--config", path, "config", "show", "--json"])

    def config_value_ok(self, key, value):
        if (key, value) not in self.values:
            self.values[(key, value)] = self.config_file([(key, value)], "value.yaml")
        return self.values[(key, value)]

    def prefetch(self, commands, pairs):
        """Asks for the helps and settings the page needs at once: a few processes at a time, and
        the settings in as few files as hold each key once (a refused file is asked again value
        by value when its pairs are checked). The page needs dozens; one by one they take long."""
        rounds = []
        for pair in sorted(set(pairs)):
            r = next((r for r in rounds if all(k != pair[0] for k, _ in r)), None)
            if r is None:
                rounds.append([pair])
            else:
                r.append(pair)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            helps = {w: pool.submit(self.run, list(w) + ["--help"]) for w in set(commands) - set(self.helps)}
            files = [(r, pool.submit(self.config_file, r, f"round{i}.yaml")) for i, r in enumerate(rounds)]
            for job in (pool.submit(self.ops), pool.submit(self.config), pool.submit(self.chat_commands)):
                job.result()
            for w, job in helps.items():
                self.helps[w] = job.result()
            for r, job in files:
                rc, out = job.result()
                if rc == 0:
                    self.values.update((pair, (rc, out)) for pair in r)

    def chat_commands(self):
        """The /commands that `mnemo chat` lists at /help (a model is named so that it starts;
        nothing is sent to it)."""
        if self._chat is None:
            out = self.must(["--db", os.path.join(self.tmp, "chat.db"), "chat"], stdin="/help\n",
                            extra_env={"MNEMO_CHAT_MODEL": "m", "MNEMO_CHAT_BASE_URL": "http://127.0.0.1:9"})
            self._chat = {m.group(1) for m in re.finditer(r"^(/[a-z-]+)", out, re.M)}
        return self._chat

    def header(self):
        if self._header is None:
            with open(os.path.join(self.root, "include", "mnemo.h"), encoding="utf-8") as f:
                text = f.read()
            text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
            self._header = re.sub(r"//[^\n]*", " ", text)
        return self._header


def command_words(text):
    """The command of `mnemo WORDS …`: its words end at the first placeholder (ID, N…) or option."""
    words = []
    for t in text.split()[1:]:
        if not WORD_RE.match(t):
            break
        words.append(t)
    return tuple(words)


def check_command(code, text):
    words = command_words(text)
    tokens = text.split()[1:]
    flags = [t.split("=", 1)[0] for t in tokens if t.startswith("--")]
    rc, out = code.help(words)
    name = " ".join(("mnemo",) + words)
    if rc != 0 or (words and not re.search(re.escape(name) + r"(?![\w-])", out)):
        return f"`{name} --help` does not describe the command (status {rc})"
    missing = [f for f in flags if not re.search(r"(?<![\w-])" + re.escape(f) + r"(?![\w-])", out)]
    return f"`{name} --help` has no {', '.join(missing)}" if missing else None


def check_python(code, text):
    parts = text.split("(", 1)[0].split(".")[1:]
    pkg = os.path.join(code.root, "python", "mnemo")
    path, mod = os.path.join(pkg, "__init__.py"), pkg
    while parts and (os.path.isdir(os.path.join(mod, parts[0])) or os.path.isfile(os.path.join(mod, parts[0] + ".py"))):
        if os.path.isdir(os.path.join(mod, parts[0])):
            mod = os.path.join(mod, parts[0])
            path = os.path.join(mod, "__init__.py")
        else:
            path = os.path.join(mod, parts[0] + ".py")
        parts = parts[1:]
    if not parts:
        return None
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    body = tree.body
    for imp in tree.body:  # a name a package re-exports: look in the module it comes from
        if isinstance(imp, ast.ImportFrom) and imp.level == 1 and any(a.name == parts[0] for a in imp.names):
            path = os.path.join(os.path.dirname(path), imp.module + ".py")
            with open(path, encoding="utf-8") as f:
                body = ast.parse(f.read()).body
            break
    for name in parts:
        found = [n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.name == name]
        if not found:
            return f"{name} is not defined in {os.path.relpath(path, code.root)}"
        body = found[0].body if isinstance(found[0], ast.ClassDef) else []
    return None


def check_c(code, name):
    h = code.header()
    status = re.match(r"MN_([A-Z0-9_]+)$", name)  # the status codes come from an X-macro table
    if re.search(r"\b" + re.escape(name) + r"\b", h) or (status and re.search(r"\bX\(" + status.group(1) + ",", h)):
        return None
    return f"{name} is not declared in include/mnemo.h"


def check_item(code, text, mcp):
    """None when the item exists; a reason when it does not; 'unknown' when it is no known kind."""
    if mcp:
        tools = {o["name"] for o in code.ops() if o.get("mcp_tool")}
        return None if text in tools else f"no MCP tool {text} in `mnemo api --json`"
    if text == "mnemo" or text.startswith("mnemo "):
        return check_command(code, text)
    if text.startswith("/"):
        name = text.split()[0]
        return None if name in code.chat_commands() else f"`mnemo chat` has no {name} at /help"
    m = ROUTE_RE.match(text)
    if m:
        ok = any(o["method"] == m.group(1) and o["path"] == m.group(2) for o in code.ops())
        return None if ok else f"no route {text} in `mnemo api --json`"
    if PY_RE.match(text):
        return check_python(code, text)
    m = C_RE.match(text)
    if m:
        return check_c(code, m.group(1))
    m = CONFIG_RE.match(text)
    if m:
        if m.group(1) not in code.config():
            return f"no key {m.group(1)} in `mnemo config show --json`"
        if m.group(2) is not None:
            rc, out = code.config_value_ok(m.group(1), m.group(2))
            if rc != 0:
                return f"a config file setting {m.group(1)}: {m.group(2)} is refused: {out.strip()}"
        return None
    return "unknown"


def cells(line):
    """The cells of a table row; a | inside a code span does not split."""
    out, cur, in_code = [], "", False
    for ch in line.strip().strip("|"):
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def parse(path):
    """{seed: (file, line, [(line, cells)])} of the page's seed sections."""
    sections, seed, in_table = {}, None, False
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        m = SECTION_RE.match(line)
        if m:
            seed = m.group(1)
            sections[seed] = (m.group(2), n, [])
        elif line.startswith("## "):
            seed = None
        table = seed is not None and line.startswith("|")
        if table and not in_table:  # a table's first line is its header
            c = cells(line)
            if len(c) != 3 or c[1] != "mnemo" or not c[2].startswith("difference"):
                sys.exit(f"{path}:{n}: a seed table's header is | seed … | mnemo | difference … |")
        elif table and not set(line) <= set("|-: "):
            c = cells(line)
            if len(c) != 3:
                sys.exit(f"{path}:{n}: a row has {len(c)} cells, not 3")
            sections[seed][2].append((n, c))
        in_table = table
    return sections


def main():
    args = sys.argv[1:]
    seeds_dir = None
    if "--seeds" in args:
        i = args.index("--seeds")
        seeds_dir = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit("usage: seeds.py MNEMO PAGE [--seeds DIR]")
    mnemo, page = args
    root = os.path.dirname(os.path.dirname(os.path.abspath(page)))
    code = Code(os.path.abspath(mnemo), root)
    sections = parse(page)
    problems = []
    for seed in SEEDS:
        if seed not in sections:
            problems.append(f"{page}: no section '## Seed {seed} … (`{seed}_….txt`)'")
        elif not sections[seed][0].startswith(seed + "_"):
            problems.append(f"{page}:{sections[seed][1]}: seed {seed}'s section names {sections[seed][0]}")
        elif not sections[seed][2]:
            problems.append(f"{page}:{sections[seed][1]}: seed {seed} has no rows")
    if seeds_dir:
        files = sorted(f for f in os.listdir(seeds_dir) if re.match(r"\d{3}_.*\.txt$", f))
        named = sorted(s[0] for s in sections.values())
        if files != named:
            problems.append(f"{page}: the sections name {named}, {seeds_dir} holds {files}")
    items = [(n, m.group(2), bool(m.group(1)), any(PROSE in x for x in c))
             for _, (_, _, rows) in sorted(sections.items()) for n, c in rows
             for cell in c[1:] for m in SPAN_RE.finditer(cell.replace(PROSE, ""))]
    commands, pairs = [], []
    for _, text, mcp, _ in items:
        setting = None if mcp or PY_RE.match(text) else CONFIG_RE.match(text)
        if not mcp and (text == "mnemo" or text.startswith("mnemo ")):
            commands.append(command_words(text))
        elif setting and setting.group(2) is not None:
            pairs.append(setting.groups())
    code.prefetch(commands, pairs)
    checked = 0
    for n, text, mcp, prose in items:
        why = check_item(code, text, mcp)
        if why == "unknown" and prose:
            continue
        checked += 1
        if why == "unknown":
            why = "not a kind of mnemo item this page checks (mark the row <!-- prose --> if it is prose)"
        if why:
            problems.append(f"{page}:{n}: `{text}`: {why}")
    code.tmpdir.cleanup()
    for p in problems:
        print(p)
    counts = ", ".join(f"{s} {len(sections[s][2])}" for s in SEEDS if s in sections)
    print(f"seeds: rows per seed: {counts}; {checked} items checked; {len(problems)} problems")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
