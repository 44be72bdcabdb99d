"""Graph checkpoints (LangGraph; docs/checkpoints.md) through Memory.checkpoint_put,
checkpoint_put_writes, checkpoint_get, checkpoint_list and checkpoint_delete_thread, the API
operations of the same names: keyword arguments named as REST's parameters, dicts shaped as its
answers (the same the CLI prints with --json), its refusals; export and import carry them."""
import asyncio
import json

import pytest

import mnemo


def put(mem, cid, parent=None, thread="user-42-chat", **kw):
    return mem.checkpoint_put(thread, checkpoint_id=cid, parent_checkpoint_id=parent, type="json",
                              checkpoint="data-" + cid, **kw)


def ids(checkpoints):
    return [c["checkpoint_id"] for c in checkpoints]


def test_put_makes_the_thread_a_session_with_that_key(mem):
    r = put(mem, "0001", metadata={"source": "input", "step": -1})
    assert r == {"thread_id": "user-42-chat", "checkpoint_ns": "", "checkpoint_id": "0001"}
    s = mem.get_session("user-42-chat")
    assert (s["key"], s["namespace"], s["message_count"]) == ("user-42-chat", "default", 0)
    cp = mem.checkpoint_get("user-42-chat")
    assert cp == {"thread_id": "user-42-chat", "session_id": s["id"], "checkpoint_ns": "", "checkpoint_id": "0001",
                  "parent_checkpoint_id": None, "type": "json", "checkpoint": "data-0001",
                  "metadata": {"source": "input", "step": -1}, "created_at": cp["created_at"], "pending_writes": []}
    assert cp["created_at"] > 0
    # another namespace's thread of the same name is another session
    put(mem, "0009", namespace="team-a")
    other = mem.checkpoint_get("user-42-chat", namespace="team-a")
    assert other["checkpoint_id"] == "0009" and other["session_id"] != s["id"]


def test_get_and_list(mem):
    put(mem, "0001", metadata={"source": "input", "step": -1})
    put(mem, "0002", "0001", metadata={"source": "loop", "step": 0})
    put(mem, "0003", "0002", metadata={"source": "loop", "step": 1})
    put(mem, "0004", checkpoint_ns="sub")
    put(mem, "0000", thread="other-thread")
    assert mem.checkpoint_get("user-42-chat")["checkpoint_id"] == "0003"  # the root graph's newest
    named = mem.checkpoint_get("user-42-chat", checkpoint_id="0002")
    assert (named["checkpoint_id"], named["parent_checkpoint_id"]) == ("0002", "0001")
    assert mem.checkpoint_get("user-42-chat", checkpoint_ns="sub")["checkpoint_id"] == "0004"
    assert ids(mem.checkpoint_list("user-42-chat")) == ["0004", "0003", "0002", "0001"]
    assert ids(mem.checkpoint_list("user-42-chat", checkpoint_ns="")) == ["0003", "0002", "0001"]
    assert ids(mem.checkpoint_list("user-42-chat", before="0003")) == ["0002", "0001"]
    assert ids(mem.checkpoint_list("user-42-chat", limit=2)) == ["0004", "0003"]
    assert ids(mem.checkpoint_list("user-42-chat", filter={"source": "loop"})) == ["0003", "0002"]
    assert ids(mem.checkpoint_list("user-42-chat", filter='{"step": -1}')) == ["0001"]
    assert ids(mem.checkpoint_list("user-42-chat", checkpoint_id="0002")) == ["0002"]
    assert [(c["thread_id"], c["checkpoint_id"]) for c in mem.checkpoint_list()][-1] == ("other-thread", "0000")
    assert mem.checkpoint_list("nobody") == []
    with pytest.raises(mnemo.NotFound):
        mem.checkpoint_get("nobody")
    with pytest.raises(mnemo.NotFound):
        mem.checkpoint_get("user-42-chat", checkpoint_id="no-such")


def test_writes_keep_a_non_negative_idx_and_replace_a_negative_one(mem):
    put(mem, "0001")
    first = [{"task_id": "t1", "idx": 0, "channel": "messages", "type": "json", "value": "first"},
             {"task_id": "t1", "idx": -1, "channel": "__error__", "type": "json", "value": "err1"}]
    assert mem.checkpoint_put_writes("user-42-chat", checkpoint_id="0001", writes=first) == {"stored": 2}
    second = [{"task_id": "t1", "idx": 0, "channel": "messages", "type": "json", "value": "second"},
              {"task_id": "t1", "idx": -1, "channel": "__error__", "type": "json", "value": "err2"},
              {"task_id": "t0", "task_path": "a", "idx": 3, "channel": "c", "type": "json", "value": "x"}]
    assert mem.checkpoint_put_writes("user-42-chat", checkpoint_id="0001", writes=iter(second)) == {"stored": 3}
    got = mem.checkpoint_get("user-42-chat")["pending_writes"]
    assert [(w["task_path"], w["task_id"], w["idx"], w["value"]) for w in got] == [
        ("", "t1", -1, "err2"), ("", "t1", 0, "first"), ("a", "t0", 3, "x")]
    assert got[0] == {"task_id": "t1", "task_path": "", "idx": -1, "channel": "__error__", "type": "json",
                      "value": "err2"}
    # a checkpoint put again keeps its writes
    put(mem, "0001")
    assert len(mem.checkpoint_get("user-42-chat")["pending_writes"]) == 3


def test_writes_may_come_before_their_checkpoint(mem):
    w = {"task_id": "t", "idx": 0, "channel": "c", "type": "json", "value": "v"}
    assert mem.checkpoint_put_writes("new-thread", checkpoint_id="0002", writes=[w]) == {"stored": 1}
    assert mem.get_session("new-thread")["key"] == "new-thread"  # the thread's session, made as by a put
    with pytest.raises(mnemo.NotFound):
        mem.checkpoint_get("new-thread")
    put(mem, "0002", thread="new-thread")
    assert mem.checkpoint_get("new-thread")["pending_writes"] == [dict(w, task_path="")]


def test_delete_thread_keeps_the_session(mem):
    put(mem, "0001")
    put(mem, "0002", "0001")
    mem.checkpoint_put_writes("user-42-chat", checkpoint_id="0002",
                              writes=[{"task_id": "t", "idx": 0, "channel": "c", "type": "json", "value": "v"}])
    sid = mem.get_session("user-42-chat")["id"]
    assert mem.checkpoint_delete_thread("user-42-chat") == {"deleted": 2}
    assert mem.get_session("user-42-chat")["id"] == sid
    assert mem.checkpoint_list("user-42-chat") == []
    assert mem.checkpoint_delete_thread("user-42-chat") == {"deleted": 0}
    assert mem.checkpoint_delete_thread("nobody") == {"deleted": 0}


def test_refusals_name_the_parameter(mem):
    put(mem, "0001")
    with pytest.raises(mnemo.Invalid, match="metadata"):
        put(mem, "0002", metadata=[1])
    with pytest.raises(mnemo.Invalid, match="metadata"):
        put(mem, "0002", metadata='{"a":')
    with pytest.raises(mnemo.Invalid, match="checkpoint_id"):
        mem.checkpoint_put("user-42-chat", checkpoint_id="", type="json", checkpoint="x")
    with pytest.raises(mnemo.Invalid, match="limit"):
        mem.checkpoint_list(limit=0)
    with pytest.raises(mnemo.Invalid, match="limit"):
        mem.checkpoint_list(limit=10001)
    with pytest.raises(mnemo.Invalid, match="limit"):
        mem.checkpoint_list(limit=True)
    with pytest.raises(mnemo.Invalid, match="filter"):
        mem.checkpoint_list(filter=[1])
    w = {"task_id": "t", "idx": 0, "channel": "c", "type": "json", "value": "v"}
    for writes, field in (([], "writes"), ("[]", "writes"), ([dict(w, colour="red")], r"writes\[0\]\.colour"),
                          ([{k: v for k, v in w.items() if k != "idx"}], r"writes\[0\]\.idx"),
                          ([dict(w, idx=1.0)], r"writes\[0\]\.idx"), ([w, 5], r"writes\[1\]"),
                          ([dict(w, channel=None)], "channel")):
        with pytest.raises(mnemo.Invalid, match=field):
            mem.checkpoint_put_writes("user-42-chat", checkpoint_id="0001", writes=writes)
    with pytest.raises(TypeError):
        mem.checkpoint_put("user-42-chat", "0002", "json", "x")  # keyword arguments, as REST names them
    assert ids(mem.checkpoint_list()) == ["0001"]  # nothing else was written
    assert mem.checkpoint_get("user-42-chat")["pending_writes"] == []


def test_the_cli_prints_the_same_dicts(mem, cli):
    put(mem, "0001", metadata={"step": 1})
    mem.checkpoint_put_writes("user-42-chat", checkpoint_id="0001",
                              writes=[{"task_id": "t", "idx": 0, "channel": "c", "type": "json", "value": "v"}])
    assert json.loads(cli("checkpoint", "show", "user-42-chat", "--json")) == mem.checkpoint_get("user-42-chat")
    assert json.loads(cli("checkpoint", "list", "--json")) == mem.checkpoint_list()
    cli("checkpoint", "put", "cli-thread", "--checkpoint-id", "c1", "--type", "json", "--checkpoint", "e30=")
    assert mem.checkpoint_get("cli-thread")["checkpoint"] == "e30="


def test_export_and_import_carry_them(mem, new_db):
    put(mem, "0001", metadata={"step": 1})
    put(mem, "0002", "0001", checkpoint_ns="sub")
    mem.checkpoint_put_writes("user-42-chat", checkpoint_id="0001",
                              writes=[{"task_id": "t", "idx": -1, "channel": "c", "type": "json", "value": "v"}])
    sid = mem.get_session("user-42-chat")["id"]
    text = mem.export([sid])
    assert sum(line.startswith('{"type":"checkpoint"') for line in text.splitlines()) == 2
    with mnemo.Memory(new_db("copy")) as copy:
        copy.import_(text)
        assert copy.checkpoint_list("user-42-chat") == mem.checkpoint_list("user-42-chat")


def test_async_memory_has_them(db_path):
    async def main():
        async with mnemo.AsyncMemory(db_path) as amem:
            await amem.checkpoint_put("t", checkpoint_id="c1", type="json", checkpoint="x")
            await amem.checkpoint_put_writes("t", checkpoint_id="c1",
                                             writes=[{"task_id": "a", "idx": 0, "channel": "c", "type": "json",
                                                      "value": "v"}])
            got = await amem.checkpoint_get("t")
            listed = await amem.checkpoint_list("t", limit=1)
            deleted = await amem.checkpoint_delete_thread("t")
        return got, listed, deleted

    got, listed, deleted = asyncio.run(main())
    assert got["checkpoint_id"] == "c1" and len(got["pending_writes"]) == 1
    assert listed == [got] and deleted == {"deleted": 1}
