#!/bin/sh
# t0110-help-api.sh — one table drives the surface: `mnemo api --json` is the operation table
# (the routes /openapi.json serves and the MCP tools), and the help of each command bound to an
# operation shows that operation's summary, route and parameters, word for word.
# pg variant: none — the help text and the operation table, no store behaviour.
. "$TESTS_DIR/cli/lib.sh"
. "$TESTS_DIR/cli/serve.sh"

ok "$MNEMO" api --json
cp "$T/.out" "$T/api.json"
check "every operation has a name, method, path and summary" python3 -c '
import json, sys
ops = json.load(open(sys.argv[1]))
assert len(ops) >= 20, len(ops)
assert all(o["name"] and o["method"] in ("GET", "POST", "PUT", "PATCH", "DELETE") and o["summary"] for o in ops)
# /v2/ and /v3/: the Mem0-shaped routes, where its client sends them (docs/memory.md)
assert all(o["path"].startswith("/v1/") or o["name"].startswith("mem0_") and o["path"].startswith(("/v2/", "/v3/"))
           for o in ops)
names = [o["name"] for o in ops]
assert len(set(names)) == len(names), "duplicate names"
for n in ("append", "history", "context_build", "search", "compact", "summary_get", "session_update"):
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
for pair in "session create:session_create" "append:append" "history:history" "context build:context_build" \
    "search:search" "compact:compact" "summary get:summary_get"; do
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
# Every parameter of a bound command's operation reaches the command under the same name, with `-`
# for `_` (`system_prompt` is `--system-prompt`), and its help names it. The exceptions are the
# positional arguments (the usage line names them) and one negated flag; each is listed here.
check "every operation parameter is a CLI option of the same name (or a listed positional)" python3 -c '
import json, subprocess, sys
mnemo, db = sys.argv[2], sys.argv[3]
# positional: the required parameters, and these (the usage line names them)
positional = {("session_resume", "session_id"), ("checkpoint_list", "thread_id"), ("export", "ids"), ("append", "role"), ("append", "content"),
              ("state_set_result", "result"), ("state_set_plan", "plan"), ("document_search", "prefix")}
special = {("namespace_forget", "namespace"): "NS", ("session_set_max_turns", "max_turns"): "TURNS",
           ("message_pin", "pinned"): "--unpin", ("document_get", "refresh_ttl"): "--no-refresh-ttl",
           ("document_search", "refresh_ttl"): "--no-refresh-ttl"}
bad = []
for op in json.load(open(sys.argv[1])):
    cmd = op["cli_command"]
    if not cmd:
        continue
    h = subprocess.run([mnemo, "--db", db] + cmd.split() + ["--help"], capture_output=True, text=True).stdout
    for p in op["params"].get("properties", {}):
        if (op["name"], p) in special:
            if special[(op["name"], p)] not in h:
                bad.append("%s: %s is not %s" % (cmd, p, special[(op["name"], p)]))
            continue
        if p in op["params"].get("required", []) or (op["name"], p) in positional:
            continue
        opt = "--" + p.replace("_", "-")
        # the option parses (a value it needs, or a flag given a value, are other errors), and
        # the help names it
        r = subprocess.run([mnemo, "--db", db] + cmd.split() + [opt + "=1", "--zz-not-an-option"],
                           capture_output=True, text=True)
        if "unknown option " + opt in r.stderr or "unknown option --zz" not in r.stderr and "takes no value" not in r.stderr:
            bad.append("%s: %s not accepted (%s)" % (cmd, opt, r.stderr.strip()))
        elif not any(opt + c in h for c in " \n],|"):
            bad.append("%s: help does not name %s" % (cmd, opt))
assert not bad, "\n".join(bad)
' "$T/api.json" "$MNEMO" "$T/names.db"

# And the other way: an option of a bound command is a parameter of its operation, or one of
# these, which shape the CLI's own output or ask for a confirmation, or say false to a boolean.
check "every option of a bound command is a parameter of its operation (or a listed CLI-only one)" python3 -c '
import json, re, subprocess, sys
mnemo = sys.argv[2]
cli_only = {"json", "out", "yes", "report", "embed-first"}
negated = {"no-rag": "rag", "no-memories": "memories", "unpin": "pinned", "unpinned": "pinned",
           "no-refresh-ttl": "refresh_ttl"}
renamed = {("search", "limit"): "top_k"}  # the name of the other listing commands; --top-k stays
bad = []
for op in json.load(open(sys.argv[1])):
    cmd = op["cli_command"]
    if not cmd:
        continue
    usage = subprocess.run([mnemo] + cmd.split() + ["--help"], capture_output=True, text=True).stdout.split("\n\n")[0]
    params = op["params"].get("properties", {})
    for o in sorted(set(re.findall(r"--([a-z][a-z0-9-]*)", usage))):
        if o in cli_only or negated.get(o) in params or o.replace("-", "_") in params:
            continue
        if renamed.get((op["name"], o)) in params:
            continue
        if op["name"].startswith("state_") and o in ("history", "reveal"):
            continue  # every state command prints the state it leaves (--reveal); clear --history
        bad.append("%s: --%s is not a parameter of %s" % (cmd, o, op["name"]))
assert not bad, "\n".join(bad)
' "$T/api.json" "$MNEMO"
ok "$MNEMO" --help
check "the command list uses the table's summaries" grep -qF "$(python3 -c '
import json, sys
print([o for o in json.load(open(sys.argv[1])) if o["name"] == "history"][0]["summary"])' "$T/api.json")" "$T/.out"
fails 2 'unknown option' "$MNEMO" api --bogus
finish
