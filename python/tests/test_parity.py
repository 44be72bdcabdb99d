"""The library functions that are REST/MCP operations, as Memory methods of the same names:
edit_message (message_edit), clear_session (session_clear), set_max_turns (session_limit),
forget_namespace (namespace_forget), handover, vacuum and gc(vacuum=True), files(limit=),
pin(session_id=) (message_pin) and compact(instructions=)."""
import asyncio

import pytest

import mnemo

MISSING = "0190a5b4-0000-7000-8000-0000000000ff"  # a well-formed session id nobody made


def test_edit_message_changes_content_and_metadata_in_place(mem):
    s = mem.create_session()
    a = mem.append(s["id"], "user", "the quick brown fox", metadata={"v": 1})
    b = mem.append(s["id"], "assistant", "noted")
    e = mem.edit_message(s["id"], a["id"], "a much longer replacement text about zebras", metadata={"v": 2})
    assert (e["id"], e["seq"], e["role"], e["created_at"]) == (a["id"], a["seq"], a["role"], a["created_at"])
    assert e["content"] == "a much longer replacement text about zebras" and e["metadata"] == {"v": 2}
    assert e["tokens"] > a["tokens"]
    assert mem.history(s["id"]) == [e, b]
    # without metadata the stored one stays; text parts are joined as append joins them
    e2 = mem.edit_message(s["id"], a["id"], [{"type": "text", "text": "zebras "}, {"type": "text", "text": "again"}])
    assert e2["content"] == "zebras again" and e2["metadata"] == {"v": 2}
    # the keyword index follows, and the edit is an event
    assert [h["message"]["id"] for h in mem.search("zebras", mode="keyword", session_id=s["id"])] == [a["id"]]
    assert mem.search("fox", mode="keyword", session_id=s["id"]) == []
    assert any(ev.get("kind") == "message_edited" for ev in mem.events(s["id"]))
    assert mem.get_session(s["id"])["message_count"] == 2


def test_edit_message_errors(mem):
    s = mem.create_session()
    a = mem.append(s["id"], "user", "hi")
    with pytest.raises(mnemo.Invalid):
        mem.edit_message("not-a-uuid", a["id"], "x")
    with pytest.raises(mnemo.NotFound):
        mem.edit_message(MISSING, a["id"], "x")
    with pytest.raises(mnemo.NotFound):
        mem.edit_message(s["id"], a["id"] + 1000, "x")
    with pytest.raises(mnemo.Invalid):
        mem.edit_message(s["id"], 0, "x")
    with pytest.raises(mnemo.Invalid, match="content"):
        mem.edit_message(s["id"], a["id"], None)
    with pytest.raises(mnemo.Invalid, match="metadata"):
        mem.edit_message(s["id"], a["id"], "x", metadata=[1, 2])
    with pytest.raises(TypeError):
        mem.edit_message(s["id"], a["id"], "x", colour="red")
    assert mem.history(s["id"])[0]["content"] == "hi"  # nothing changed


def test_clear_session_and_undo(mem):
    s = mem.create_session()
    for i in range(3):
        mem.append(s["id"], "user", "q%d" % i)
    assert mem.clear_session(s["id"]) == 3
    assert mem.history(s["id"]) == []
    everything = mem.history(s["id"], all=True)
    assert [m["content"] for m in everything] == ["q0", "q1", "q2"]
    assert [m["active"] for m in everything] == [False, False, False]
    assert mem.context(s["id"]).messages == []
    mem.append(s["id"], "user", "fresh")
    assert [m["content"] for m in mem.history(s["id"])] == ["fresh"]
    assert mem.clear_session(s["id"], undo=True) == 3
    assert [m["content"] for m in mem.history(s["id"])] == ["q0", "q1", "q2", "fresh"]
    assert mem.clear_session(s["id"], undo=True) == 0  # nothing cleared since


def test_clear_session_state_and_errors(mem):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello")
    mem.merge_params(s["id"], {"city": "Lisbon"})
    assert mem.clear_session(s["id"], state=True) == 1
    assert mem.state(s["id"])["params"] == {}
    with pytest.raises(mnemo.Invalid):
        mem.clear_session(s["id"], undo=True, state=True)
    with pytest.raises(mnemo.Invalid):
        mem.clear_session("not-a-uuid")
    with pytest.raises(mnemo.NotFound):
        mem.clear_session(MISSING)
    with pytest.raises(TypeError):
        mem.clear_session(s["id"], everything=True)


def test_set_max_turns_trims_the_active_history(mem):
    s = mem.create_session()
    for i in range(4):
        mem.append(s["id"], "user", "q%d" % i)
        mem.append(s["id"], "assistant", "a%d" % i)
    got = mem.set_max_turns(s["id"], 2)
    assert got["id"] == s["id"] and got["max_turns"] == 2 and got == mem.get_session(s["id"])
    assert [m["content"] for m in mem.history(s["id"])] == ["q2", "a2", "q3", "a3"]
    everything = mem.history(s["id"], all=True)
    assert len(everything) == 8
    assert [m["active"] for m in everything] == [False] * 4 + [True] * 4
    # raising or removing the limit brings nothing back
    assert mem.set_max_turns(s["id"], 0)["max_turns"] == 0
    assert len(mem.history(s["id"])) == 4
    with pytest.raises(mnemo.Invalid):
        mem.set_max_turns(s["id"], -1)
    with pytest.raises(mnemo.Invalid):
        mem.set_max_turns(s["id"], 1000001)
    with pytest.raises(mnemo.Invalid):
        mem.set_max_turns("not-a-uuid", 2)
    with pytest.raises(mnemo.NotFound):
        mem.set_max_turns(MISSING, 2)


def test_forget_namespace_erases_its_sessions_and_memories(mem):
    gone = [mem.create_session(namespace="gone") for _ in range(2)]
    mem.append(gone[0]["id"], "user", "secret plans")
    kept = mem.create_session(namespace="kept")
    mem.append(kept["id"], "user", "public plans")
    mem.remember("the user likes tea", namespace="gone")
    mem.remember("the user likes coffee", namespace="gone")
    mem.remember("the user likes juice", namespace="gone")
    other = mem.remember("the user likes water", namespace="kept")

    assert mem.forget_namespace("gone") == {"sessions": 2, "memories": 3}
    assert mem.list_sessions(namespace="gone") == []
    with pytest.raises(mnemo.NotFound):
        mem.get_session(gone[0]["id"])
    assert mem.memory_list(namespace="gone", include_closed=True) == []
    assert mem.search("secret", mode="keyword") == []
    # another namespace is untouched
    assert [x["id"] for x in mem.list_sessions(namespace="kept")] == [kept["id"]]
    assert [m["id"] for m in mem.memory_list(namespace="kept")] == [other["id"]]
    # again, or an empty namespace: not an error
    assert mem.forget_namespace("gone") == {"sessions": 0, "memories": 0}
    with pytest.raises(mnemo.Invalid):
        mem.forget_namespace("not a namespace!")
    with pytest.raises(mnemo.Invalid):
        mem.forget_namespace(None)


def test_handover(mem):
    t = mem.create_session(tool_name="claude-code", title="Refactor")
    mem.append(t["id"], "user", "look at a.py", files=["a.py"])
    mem.append(t["id"], "assistant", "done", tool_name="claude-code", files=["b.py"])
    mem.append(t["id"], "user", "and c.py", tool_name="codex", files=["c.py"])
    h = mem.handover(t["id"])
    assert h["thread_id"] == t["id"] and h["namespace"] == "default" and h["title"] == "Refactor"
    assert h["tool"] == "claude-code" and h["turns"] == 2 and h["messages"] == 3
    assert h["files"] == ["c.py", "b.py", "a.py"] and h["tools_used"] == ["claude-code", "codex"]
    now = mem.get_session(t["id"])  # a thread's TTL slides with each append
    assert h["started"] == t["created_at"] and (h["updated_at"], h["expires_at"]) == (now["updated_at"],
                                                                                    now["expires_at"])
    assert h["text"].startswith("## Conversation Context") and t["id"] in h["text"]
    assert mem.handover(t["id"], files=1)["files"] == ["c.py"]
    plain = mem.create_session()
    p = mem.handover(plain["id"])
    assert p["tool"] is None and p["expires_at"] is None and p["turns"] == 0 and p["files"] == []
    with pytest.raises(mnemo.Invalid):
        mem.handover(t["id"], files=-1)
    with pytest.raises(mnemo.Invalid):
        mem.handover("not-a-uuid")
    with pytest.raises(mnemo.NotFound):
        mem.handover(MISSING)
    with pytest.raises(TypeError):
        mem.handover(t["id"], max_files=1)


def test_vacuum_and_gc_with_vacuum(mem):
    s = mem.create_session()
    mem.append(s["id"], "user", "x" * 1000)
    mem.delete_session(s["id"])
    assert mem.vacuum() is None
    assert mem.gc(vacuum=True) == 0
    assert mem.gc() == 0
    with pytest.raises(TypeError):
        mem.gc(True)  # vacuum is keyword-only
    assert mem.stats()["sessions"] == 0


def test_async_has_the_new_methods(db_path):
    async def main():
        async with mnemo.AsyncMemory(db_path) as mem:
            s = await mem.create_session(namespace="a")
            m = await mem.append(s["id"], "user", "one")
            e = await mem.edit_message(s["id"], m["id"], "uno")
            n = await mem.clear_session(s["id"])
            back = await mem.clear_session(s["id"], undo=True)
            lim = await mem.set_max_turns(s["id"], 1)
            h = await mem.handover(s["id"])
            await mem.vacuum()
            purged = await mem.gc(vacuum=True)
            forgot = await mem.forget_namespace("a")
            return e, n, back, lim, h, purged, forgot

    e, n, back, lim, h, purged, forgot = asyncio.run(main())
    assert e["content"] == "uno" and (n, back) == (1, 1) and lim["max_turns"] == 1
    assert h["turns"] == 1 and purged == 0 and forgot == {"sessions": 1, "memories": 0}
    for name in ("edit_message", "clear_session", "set_max_turns", "forget_namespace", "handover", "vacuum"):
        assert asyncio.iscoroutinefunction(getattr(mnemo.AsyncMemory, name))
        assert getattr(mnemo.AsyncMemory, name).__doc__ == getattr(mnemo.Memory, name).__doc__


def test_files_limit_as_the_api(mem):
    s = mem.create_session()
    mem.append(s["id"], "user", "one", files=["a.c", "b.c"])
    mem.append(s["id"], "user", "two", files=["c.c"])
    assert mem.files(s["id"]) == ["c.c", "a.c", "b.c"]
    assert mem.files(s["id"], limit=2) == ["c.c", "a.c"]
    with pytest.raises(mnemo.Invalid):
        mem.files(s["id"], limit=-1)


def test_pin_within_a_session(mem):
    s, t = mem.create_session(), mem.create_session()
    a = mem.append(s["id"], "user", "keep me")
    with pytest.raises(mnemo.NotFound):
        mem.pin(a["id"], session_id=t["id"])  # another session's message
    assert mem.history(s["id"])[0]["pinned"] is False
    mem.pin(a["id"], session_id=s["id"])
    assert mem.history(s["id"])[0]["pinned"] is True
    mem.unpin(a["id"], session_id=s["id"])
    assert mem.history(s["id"])[0]["pinned"] is False


def test_compact_instructions(mem):
    s = mem.create_session()
    for i in range(6):
        mem.append(s["id"], "user" if i % 2 == 0 else "assistant", "turn %d about the release plan" % i)
    ev = mem.compact(s["id"], instructions="keep the API decisions")
    assert ev["kind"] == "compaction"
    with pytest.raises(mnemo.Invalid) as e:
        mem.compact(s["id"], instructions="x" * 4001)
    assert "instructions" in e.value.message
