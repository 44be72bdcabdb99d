"""mnemo.Memory over a real database (a SQLite file; a PostgreSQL database in pg/python/pytest):
sessions, messages, history, errors, export/import, tokens, state, threads, thread safety."""
import io
import json
import threading

import pytest

import mnemo


def test_open_default_database_is_the_clis(isolated):
    # no target: what mn_open does with the CLI's configuration ($XDG_DATA_HOME/mnemo/memory.db)
    with mnemo.Memory() as m:
        assert m.path == str(isolated / "data" / "mnemo" / "memory.db")
    isolated.joinpath("other.db")
    import os
    os.environ["MNEMO_DB"] = str(isolated / "env.db")
    try:
        with mnemo.Memory() as m:
            assert m.path == str(isolated / "env.db")
    finally:
        del os.environ["MNEMO_DB"]


def test_context_manager_closes_and_later_calls_raise_misuse(db_path):
    with mnemo.Memory(db_path) as m:
        assert not m.closed
        assert repr(m).startswith("<mnemo.Memory")
    assert m.closed
    with pytest.raises(mnemo.Misuse, match="closed"):
        m.list_sessions()
    m.close()  # twice is a no-op


def test_unknown_config_key_is_invalid_naming_it(db_path):
    with pytest.raises(mnemo.Invalid, match="memory.durabilty"):
        mnemo.Memory(db_path, {"memory.durabilty": "normal"})


def test_sessions_crud(mem):
    s = mem.create_session(system_prompt="Be brief.", metadata={"user": "ann"}, namespace="team-a")
    assert s["system_prompt"] == "Be brief." and s["metadata"] == {"user": "ann"} and s["namespace"] == "team-a"
    assert mem.get_session(s["id"]) == s
    u = mem.update_session(s["id"], title="Renamed", metadata={"k": 1})
    assert u["title"] == "Renamed" and u["metadata"] == {"k": 1}
    t = mem.create_session()
    assert [x["id"] for x in mem.list_sessions()] == [t["id"], s["id"]]
    assert [x["id"] for x in mem.list_sessions(namespace="team-a")] == [s["id"]]
    assert [x["id"] for x in mem.list_sessions(limit=1, offset=1)] == [s["id"]]
    mem.delete_session(s["id"])
    with pytest.raises(mnemo.NotFound) as e:
        mem.get_session(s["id"])
    assert e.value.code == "not_found" and e.value.status == 1 and e.value.message


def test_create_with_taken_id_is_conflict(mem):
    s = mem.create_session()
    with pytest.raises(mnemo.Conflict):
        mem.create_session(id=s["id"])


def test_bad_ids_and_roles_are_invalid_naming_the_field(mem):
    with pytest.raises(mnemo.Invalid):
        mem.get_session("not\ta-key")  # a control character: neither a UUID nor a key
    s = mem.create_session()
    with pytest.raises(mnemo.Invalid, match="role"):
        mem.append(s["id"], "robot", "hi")
    with pytest.raises(mnemo.Invalid, match="tool_call_id"):
        mem.append(s["id"], "tool", "out")
    with pytest.raises(mnemo.Invalid, match="colour"):
        mem.append_message(s["id"], {"role": "user", "content": "x", "colour": "red"})
    with pytest.raises(mnemo.Invalid, match="metadata"):
        mem.create_session(metadata="[1]")
    assert mem.history(s["id"]) == []  # nothing written


def test_role_agent_is_stored_as_assistant(mem):
    # seed 003 names the assistant "agent"; the library accepts it on input, so does the package
    s = mem.create_session()
    mem.append(s["id"], "user", "hi")
    mem.append(s["id"], "agent", "hello from the agent")
    mem.append_message(s["id"], {"role": "agent", "content": "again"})
    assert [m["role"] for m in mem.history(s["id"])] == ["user", "assistant", "assistant"]
    assert [h["message"]["content"] for h in mem.search("agent", mode="keyword", role="agent")] == \
        ["hello from the agent"]
    with pytest.raises(mnemo.Invalid, match="Agent"):
        mem.append(s["id"], "Agent", "exact, lower case")


def test_append_one_and_history_shape(mem):
    s = mem.create_session()
    calls = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
    m1 = mem.append(s["id"], "user", "What is in the repo?", name="alice", files=["src/"], metadata={"lang": "en"},
                    model="gpt-4o", tool_name="claude-code", pinned=True)
    m2 = mem.append(s["id"], "assistant", None, tool_calls=calls)
    m3 = mem.append(s["id"], "tool", "README.md src/", tool_call_id="c1")
    assert (m1["seq"], m2["seq"], m3["seq"]) == (1, 2, 3)
    assert m1["files"] == ["src/"] and m1["metadata"] == {"lang": "en"} and m1["pinned"] is True
    assert m2["content"] is None and m2["tool_calls"][0]["function"]["name"] == "ls"
    h = mem.history(s["id"])
    assert h == [m1, m2, m3]
    assert list(h[0]) == ["id", "session_id", "seq", "role", "content", "tool_calls", "tool_call_id", "name",
                          "tool_name", "model", "files", "metadata", "idempotency_key", "tokens", "pinned",
                          "created_at", "active"]
    assert mem.history(s["id"], limit=2, tail=True) == [m2, m3]
    assert mem.history(s["id"], limit=1) == [m1]
    assert mem.history(s["id"], after_seq=2) == [m3]
    assert mem.files(s["id"]) == ["src/"]


def test_append_openai_message_dicts_and_text_parts(mem):
    s = mem.create_session()
    mem.append_message(s["id"], {"role": "user", "content": [{"type": "text", "text": "a"},
                                                             {"type": "text", "text": "b"}], "refusal": None})
    assert mem.history(s["id"])[0]["content"] == "ab"
    with pytest.raises(mnemo.Invalid, match="image_url"):
        mem.append_message(s["id"], {"role": "user", "content": [{"type": "image_url", "image_url": {}}]})


def test_append_unknown_session_needs_create(mem):
    sid = "0190a5b4-0000-7000-8000-000000000001"
    with pytest.raises(mnemo.NotFound):
        mem.append(sid, "user", "hi")
    mem.append(sid, "user", "hi", create=True)
    assert mem.get_session(sid)["title"] == "hi"


def test_idempotency_key(mem):
    s = mem.create_session()
    a = mem.append(s["id"], "user", "once", idempotency_key="k1")
    b = mem.append(s["id"], "user", "once", idempotency_key="k1")
    assert a == b and len(mem.history(s["id"])) == 1
    with pytest.raises(mnemo.Conflict):
        mem.append(s["id"], "user", "different", idempotency_key="k1")


def test_batch_is_all_or_nothing(mem):
    s = mem.create_session()
    out = mem.append_batch(s["id"], [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])
    assert [m["seq"] for m in out] == [1, 2]
    with pytest.raises(mnemo.Invalid, match="message 1"):
        mem.append_batch(s["id"], [{"role": "user", "content": "ok"}, {"role": "tool", "content": "no id"}])
    assert len(mem.history(s["id"])) == 2
    with pytest.raises(mnemo.Invalid):
        mem.append_batch(s["id"], [])


def test_append_many_reports_each_request(mem):
    s = mem.create_session()
    res = mem.append_many([
        {"session_id": s["id"], "messages": [{"role": "user", "content": "x"}]},
        {"session_id": "0190a5b4-0000-7000-8000-0000000000ff", "messages": [{"role": "user", "content": "y"}]},
    ])
    assert res[0][0]["content"] == "x"
    assert isinstance(res[1], mnemo.NotFound) and res[1].message


def test_append_many_namespace(mem):
    new = "0190a5b4-0000-7000-8000-0000000000fe"
    res = mem.append_many([
        {"session_id": new, "messages": [{"role": "user", "content": "x"}], "create": True, "namespace": "team-a"},
        {"session_id": new, "messages": [{"role": "user", "content": "y"}], "namespace": "team-b"},
    ])
    assert res[0][0]["content"] == "x"
    assert isinstance(res[1], mnemo.NotFound)
    assert mem.get_session(new)["namespace"] == "team-a"
    assert [m["content"] for m in mem.history(new)] == ["x"]
    with pytest.raises(mnemo.Invalid) as e:
        mem.append_many([{"session_id": new, "messages": [{"role": "user", "content": "z"}], "namspace": "a"}])
    assert "requests[0].namspace" in e.value.message


def test_message_size_limit_crossed_is_too_big(db_path):
    with mnemo.Memory(db_path, {"memory.max_message_bytes": 100}) as m:
        s = m.create_session()
        m.append(s["id"], "user", "x" * 100)
        with pytest.raises(mnemo.TooBig) as e:
            m.append(s["id"], "user", "x" * 101)
        assert isinstance(e.value, ValueError) and "100" in e.value.message


def test_delete_message_and_pin(mem):
    s = mem.create_session()
    a = mem.append(s["id"], "user", "one")
    b = mem.append(s["id"], "user", "two")
    mem.pin(b["id"])
    assert mem.history(s["id"])[1]["pinned"] is True
    mem.unpin(b["id"])
    mem.delete_message(s["id"], a["id"])
    assert [m["content"] for m in mem.history(s["id"])] == ["two"]
    with pytest.raises(mnemo.NotFound):
        mem.delete_message(s["id"], a["id"])


def test_threads_resume_fork_gc(mem):
    t = mem.create_session(tool_name="claude-code")
    assert t["ttl_ms"] == 10800 * 1000 and t["max_turns"] == 50
    mem.append(t["id"], "user", "a")
    mem.append(t["id"], "assistant", "b")
    assert mem.resume()["id"] == t["id"]
    assert mem.resume(t["id"])["id"] == t["id"]
    f = mem.fork(t["id"], upto_seq=1)
    assert f["parent_id"] == t["id"] and [m["content"] for m in mem.history(f["id"])] == ["a"]
    assert mem.gc() == 0
    short = mem.create_session(tool_name="x", ttl_ms=1000)
    import time
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            mem.get_session(short["id"])
        except mnemo.Expired as e:
            assert "expired" in e.message
            break
        time.sleep(0.2)
    else:
        pytest.fail("a thread with a 1 s TTL did not expire within 30 s")
    assert mem.gc() >= 1


def test_file_should_include(mem):
    s = mem.create_session()
    assert mem.file_should_include(s["id"], "a.py", "print(1)") is True
    assert mem.file_should_include(s["id"], "a.py", b"print(1)") is False
    assert mem.file_should_include(s["id"], "b.py", "print(1)") is True


def test_state(mem):
    s = mem.create_session()
    mem.set_waiting(s["id"], "city")
    assert mem.state(s["id"])["waiting_for_param"] == "city"
    mem.merge_params(s["id"], {"city": "Oslo", "n": 2})
    st = mem.state(s["id"])
    assert st["params"] == {"city": "Oslo", "n": 2} and st["waiting_for_param"] is None
    mem.set_result(s["id"], "weather", {"temp": 3})
    mem.set_plan(s["id"], ["step1", "step2"])
    st = mem.state(s["id"])
    assert st["last_intent_id"] == "weather" and st["last_result"] == {"temp": 3}
    assert st["plan_execution"] == ["step1", "step2"]
    mem.merge_params(s["id"], {"n": None})
    assert mem.state(s["id"])["params"] == {"city": "Oslo"}
    mem.clear_state(s["id"])
    assert mem.state(s["id"])["params"] == {}
    with pytest.raises(mnemo.Invalid):
        mem.merge_params(s["id"], "not json")  # type: ignore[arg-type]


def test_sensitive_params_redacted_unless_revealed(db_path):
    with mnemo.Memory(db_path, {"state.sensitive_params": "token"}) as m:
        s = m.create_session()
        m.merge_params(s["id"], {"token": "secret"})
        assert m.state(s["id"])["params"]["token"] == "[redacted]"
        assert m.state(s["id"], reveal=True)["params"]["token"] == "secret"


def test_export_import_round_trip(mem, tmp_path, new_db):
    s = mem.create_session(system_prompt="p")
    mem.append(s["id"], "user", "héllo")
    text = mem.export()
    assert text.splitlines()[0].startswith("{") and "héllo" in text
    buf = io.BytesIO()
    assert mem.export([s["id"]], file=buf) is None
    assert buf.getvalue().decode() == text
    with mnemo.Memory(new_db("copy")) as other:
        assert other.import_(text) == {"sessions_added": 1, "sessions_skipped": 0, "messages_added": 1,
                                       "messages_skipped": 0}
        assert other.import_(io.StringIO(text))["messages_skipped"] == 1
        p = tmp_path / "x.jsonl"
        p.write_text(text)
        import pathlib
        assert other.import_(pathlib.Path(p))["sessions_skipped"] == 1
        assert other.export() == text
        with pytest.raises(mnemo.Invalid, match="line 1"):
            other.import_("not json\n")
    with pytest.raises(mnemo.NotFound):
        mem.export(["0190a5b4-0000-7000-8000-0000000000ff"])


def test_export_writer_exception_propagates(mem):
    mem.create_session()

    class Broken(io.RawIOBase):
        def write(self, b):
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        mem.export(file=Broken())


def test_tokens_and_stats(mem, backend):
    assert mnemo.count_tokens("hello world", "heuristic") == 3
    big = "alpha beta 12345\ngamma delta\n" * 50000  # 1.4 MB: cut and counted on several threads
    enc = mem.tokenizer  # cl100k_base where the rank files are installed
    assert mnemo.count_tokens(big, enc, threads=3) == mnemo.count_tokens(big, enc, threads=1) > 0
    with pytest.raises(ValueError):
        mnemo.count_tokens("x", "heuristic", threads=-1)
    with pytest.raises(mnemo.Invalid):
        mnemo.count_tokens("x", "nope")
    assert mem.count_tokens("abcdefgh") >= 1
    assert mem.tokenizer in ("heuristic", "cl100k_base", "o200k_base")
    if mem.tokenizer != "heuristic":
        assert mnemo.encode_tokens("hello", mem.tokenizer)
    s = mem.create_session()
    mem.append(s["id"], "user", "hi")
    st = mem.stats()
    assert st["sessions"] == 1 and st["messages"] == 1 and st["backend"] == backend
    assert mem.reindex_tokens() == 1
    assert mnemo.budget_split(128000) == {"model_window": 128000, "response": 16000, "history": 37333,
                                          "files": 74667}
    with pytest.raises(mnemo.Invalid):
        mnemo.budget_split(0)
    assert mnemo.version().count(".") == 2


def test_prune(mem):
    mem.create_session()
    assert mem.prune(1) == 0
    with pytest.raises(mnemo.Invalid):
        mem.prune(0)


def test_threads_share_one_memory(mem):
    s = mem.create_session()
    errors = []

    def worker(n):
        try:
            for i in range(25):
                mem.append(s["id"], "user", "w%d-%d" % (n, i))
                mem.history(s["id"], limit=3, tail=True)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    h = mem.history(s["id"])
    assert [m["seq"] for m in h] == list(range(1, 201))
    assert len({m["content"] for m in h}) == 200


def test_close_waits_for_calls_in_flight(db_path):
    m = mnemo.Memory(db_path)
    s = m.create_session()
    started = threading.Event()
    done = []

    def writer():
        started.set()
        for i in range(50):
            try:
                m.append(s["id"], "user", str(i))
                done.append(i)
            except mnemo.Misuse:
                return

    t = threading.Thread(target=writer)
    t.start()
    started.wait()
    m.close()
    t.join()
    with mnemo.Memory(db_path) as again:
        assert len(again.history(s["id"])) == len(done)


def test_upgrade_migrates_an_older_file_with_progress(tmp_path, backend, test_data):
    if backend != "sqlite":
        pytest.skip("the fixture is a SQLite file of schema version 9")
    import os
    import shutil
    import sqlite3
    src = os.path.join(test_data, "schema9", "mnemo.db")
    path = str(tmp_path / "v9.db")
    shutil.copy(src, path)
    seen = []
    assert mnemo.upgrade(path, config={"embedder.name": "hash"},
                         progress=lambda done, total: seen.append((done, total))) == 9
    assert seen and seen[-1] == (32, 32)
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 16
    assert mnemo.upgrade(path) == 16  # current: nothing to do
    assert mnemo.upgrade(str(tmp_path / "new.db")) == 0
    with mnemo.Memory(path, {"embedder.name": "hash"}) as m:
        assert len(m.history("0190a000-0000-7000-8000-00000000000a")) == 14
    bad = tmp_path / "x.txt"
    bad.write_text("not a database, long enough to have a header of its own" * 10)
    with pytest.raises(mnemo.Corrupt):
        mnemo.upgrade(str(bad))
