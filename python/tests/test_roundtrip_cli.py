"""Round trip with the `mnemo` command on the same database file: what Python writes the CLI
reads identically, and what the CLI writes Python reads identically."""
import json

import mnemo

CALLS = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{\"d\":\"é\"}"}}]


def test_python_writes_cli_reads(db_path, cli):
    with mnemo.Memory(db_path) as mem:
        s = mem.create_session(system_prompt="Be brief.", metadata={"k": "v"}, namespace="rt")
        mem.append(s["id"], "user", "Héllo — 世界", name="alice", files=["a.c"], metadata={"lang": "fr"},
                   idempotency_key="t1", model="gpt-4o", tool_name="py", pinned=True)
        mem.append(s["id"], "assistant", None, tool_calls=CALLS)
        mem.append(s["id"], "tool", "out\nlines", tool_call_id="c1")
        ours = mem.history(s["id"])
        session = mem.get_session(s["id"])
        ctx = mem.context(s["id"], max_tokens=500)
        export = mem.export()
    assert json.loads(cli("history", s["id"], "--json")) == ours
    assert json.loads(cli("session", "show", s["id"], "--json")) == session
    assert json.loads(cli("context", s["id"], "--max-tokens", "500")) == ctx.messages
    assert json.loads(cli("context", s["id"], "--max-tokens", "500", "--report", "--json"))["report"] == ctx.report
    assert cli("export") == export


def test_cli_writes_python_reads(db_path, cli, new_db):
    sid = cli("session", "new", "--system", "Be brief.").strip()
    cli("add", sid, "user", "What is in the repo?", "--key", "k1")
    cli("add", sid, "assistant", "--tool-calls", json.dumps(CALLS))
    cli("add", sid, "tool", "README.md", "--tool-call-id", "c1")
    cli("state", sid, "merge", "{\"branch\":\"main\"}")
    theirs = json.loads(cli("history", sid, "--json"))
    with mnemo.Memory(db_path) as mem:
        assert mem.history(sid) == theirs
        assert mem.get_session(sid) == json.loads(cli("session", "show", sid, "--json"))
        assert mem.state(sid)["params"] == {"branch": "main"}
        assert mem.context(sid, format="anthropic").rendered == cli("context", sid, "--format", "anthropic").rstrip("\n")
        # and the CLI's export imports into a Python-opened copy byte for byte
        text = cli("export")
    with mnemo.Memory(new_db("copy")) as copy:
        copy.import_(text)
        assert copy.export() == text
