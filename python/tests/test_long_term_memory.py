"""Long-term memory through mnemo.Memory (mn_memory_*; docs/memory.md, docs/python.md#long-term-memory)
on a real database (a SQLite file; a PostgreSQL database in pg/python/pytest): remember and get,
versions and history, as-of reads, delete (close) and forget (erase), recall with scope filters,
extraction, refusals naming the field, and the AsyncMemory coroutines."""
import asyncio
import datetime as dt

import pytest

import mnemo

UTC = dt.timezone.utc
JAN = dt.datetime(2024, 1, 1, tzinfo=UTC)
FEB = dt.datetime(2024, 2, 1, tzinfo=UTC)
MAR = dt.datetime(2024, 3, 1, tzinfo=UTC)
MISSING = "0190a5b4-0000-7000-8000-0000000000ff"


def ms(d):
    return int(d.timestamp() * 1000)


def test_remember_then_get(mem):
    # provenance names messages of the memory's namespace (docs/memory.md)
    s = mem.create_session(namespace="acme")
    said = [mem.append(s["id"], "user", t)["id"] for t in ("I eat no meat", "none at all")]
    m = mem.remember("The user is vegetarian", kind="preference", namespace="acme", user_id="alex",
                     agent_id="bot", session_id="run-1", metadata={"topic": "food"}, sources=said,
                     pinned=True, token_cap=200, valid_from=JAN, reason="told us")
    assert m["version"] == 1 and m["change"] == "add" and m["actor"] == "python" and m["reason"] == "told us"
    assert (m["text"], m["kind"], m["namespace"], m["user_id"], m["agent_id"], m["session_id"]) == (
        "The user is vegetarian", "preference", "acme", "alex", "bot", "run-1")
    assert m["metadata"] == {"topic": "food"} and m["sources"] == said
    assert m["pinned"] is True and m["token_cap"] == 200
    assert m["valid_from"] == ms(JAN) and m["valid_to"] is None and m["superseded_at"] is None
    assert mem.memory_get(m["id"]) == m

    # the defaults, and metadata given as JSON text
    d = mem.remember("Deploys happen on Fridays", metadata='{"team": "ops"}')
    assert (d["kind"], d["namespace"], d["user_id"], d["pinned"], d["token_cap"]) == ("fact", "default", None,
                                                                                        False, 0)
    assert d["metadata"] == {"team": "ops"} and d["sources"] == []


def test_update_makes_a_version_and_the_history_keeps_both(mem):
    m = mem.remember("User's city is Lisbon", valid_from=JAN)
    u = mem.memory_update(m["id"], text="User's city is Porto", valid_from=MAR, reason="moved")
    assert u["id"] == m["id"] and u["version"] == 2 and u["change"] == "update" and u["actor"] == "python"
    assert u["text"] == "User's city is Porto" and u["valid_from"] == ms(MAR) and u["reason"] == "moved"
    assert mem.memory_get(m["id"])["version"] == 2

    h = mem.memory_history(m["id"])
    assert [(v["version"], v["change"], v["text"]) for v in h] == [
        (1, "add", "User's city is Lisbon"), (2, "update", "User's city is Porto")]
    assert h[0]["valid_to"] == ms(MAR) and h[0]["superseded_at"] is not None and h[1]["superseded_at"] is None

    # what was true in February is the old text; now, the new one
    assert [x["text"] for x in mem.memory_list(as_of=FEB)] == ["User's city is Lisbon"]
    assert [x["text"] for x in mem.memory_list(as_of=ms(FEB))] == ["User's city is Lisbon"]
    assert [x["text"] for x in mem.memory_list()] == ["User's city is Porto"]

    # None keeps a field; an update that changes nothing writes nothing
    same = mem.memory_update(m["id"], text="User's city is Porto")
    assert same["version"] == 2 and len(mem.memory_history(m["id"])) == 2
    said = mem.append(mem.create_session()["id"], "user", "I moved to Porto")["id"]
    p = mem.memory_update(m["id"], pinned=True, token_cap=50, metadata={"k": 1}, sources=[said])
    assert p["version"] == 3 and p["text"] == "User's city is Porto" and p["pinned"] is True
    assert p["token_cap"] == 50 and p["metadata"] == {"k": 1} and p["sources"] == [said]
    assert mem.memory_update(m["id"], sources=[])["sources"] == []


def test_delete_closes_and_forget_erases(mem):
    keep = mem.remember("Keep me", valid_from=JAN)
    m = mem.remember("The office is on floor 3", valid_from=JAN)
    mem.memory_delete(m["id"], reason="moved out")
    assert [x["id"] for x in mem.memory_list()] == [keep["id"]]
    closed = [x for x in mem.memory_list(include_closed=True) if x["id"] == m["id"]]
    assert len(closed) == 1 and closed[0]["change"] == "delete" and closed[0]["valid_to"] is not None
    assert closed[0]["reason"] == "moved out" and closed[0]["actor"] == "python"
    assert [v["change"] for v in mem.memory_history(m["id"])] == ["add", "delete"]
    assert mem.memory_get(m["id"])["version"] == 2  # get answers a closed memory too
    with pytest.raises(mnemo.Invalid, match="already closed"):
        mem.memory_delete(m["id"])
    with pytest.raises(mnemo.Invalid, match="closed"):
        mem.memory_update(m["id"], text="The office is on floor 4")

    # delete at a given time: true before it, not after
    t = mem.remember("Temporary badge", valid_from=JAN)
    mem.memory_delete(t["id"], at=MAR)
    assert t["id"] in [x["id"] for x in mem.memory_list(as_of=FEB)]
    assert t["id"] not in [x["id"] for x in mem.memory_list()]

    mem.forget(m["id"])
    with pytest.raises(mnemo.NotFound) as e:
        mem.memory_get(m["id"])
    assert e.value.code == "not_found" and m["id"] in e.value.message
    with pytest.raises(mnemo.NotFound):
        mem.memory_history(m["id"])
    with pytest.raises(mnemo.NotFound):
        mem.forget(m["id"])
    assert m["id"] not in [x["id"] for x in mem.memory_list(include_closed=True)]
    assert mem.memory_get(keep["id"])["text"] == "Keep me"


def test_recall_finds_by_words_within_the_scope(mem):
    veg = mem.remember("The user is vegetarian and likes lentil soup", user_id="alex")
    key = mem.remember("The deploy key rotates monthly", user_id="alex", kind="instruction")
    sam = mem.remember("The user is vegetarian too", user_id="sam", namespace="other")

    hits = mem.recall("vegetarian soup", mode="keyword")
    assert [h["id"] for h in hits][0] == veg["id"] and {h["id"] for h in hits} == {veg["id"], sam["id"]}
    assert all(h["score"] > 0 for h in hits)
    assert [h["id"] for h in mem.recall("vegetarian", mode="keyword", user_id="alex")] == [veg["id"]]
    assert [h["id"] for h in mem.recall("vegetarian", user_id="sam")] == [sam["id"]]
    assert [h["id"] for h in mem.recall("vegetarian", namespace="other")] == [sam["id"]]
    assert mem.recall("vegetarian", user_id="nobody") == []
    assert mem.recall("vegetarian", kind="instruction") == []
    assert len(mem.recall("vegetarian", limit=1)) == 1

    # list filters: scope, kind, metadata, pinned, paging
    assert [x["id"] for x in mem.memory_list(user_id="alex")] == [key["id"], veg["id"]]  # newest first
    assert [x["id"] for x in mem.memory_list(kind="instruction")] == [key["id"]]
    mem.remember("Persona: terse", pinned=True, metadata={"block": "persona"})
    assert [x["text"] for x in mem.memory_list(pinned=True)] == ["Persona: terse"]
    assert len(mem.memory_list(pinned=False)) == 3
    assert [x["text"] for x in mem.memory_list(metadata={"block": "persona"})] == ["Persona: terse"]
    assert len(mem.memory_list(limit=2)) == 2 and len(mem.memory_list(limit=2, offset=2)) == 2


def test_extract_adds_then_updates_a_keyed_fact(mem):
    s = mem.create_session()
    mem.append(s["id"], "user", "My city is Lisbon.")
    st = mem.memory_extract(s["id"])
    assert st == {"messages": 1, "candidates": 1, "added": 1, "updated": 0, "unchanged": 0, "invalidated": 0,
                  "rejected": 0}
    assert [x["text"] for x in mem.memory_list()] == ["User's city is Lisbon"]

    mem.append(s["id"], "assistant", "Noted.")
    mem.append(s["id"], "user", "My city is Porto.")
    st = mem.memory_extract(s["id"], "offline")
    assert st["added"] == 0 and st["updated"] == 1
    [m] = mem.memory_list()
    assert m["text"] == "User's city is Porto" and m["version"] == 2 and m["actor"] == "extractor:offline"
    assert mem.memory_extract(s["id"])["messages"] == 0  # the watermark: nothing new to read

    with pytest.raises(mnemo.NotFound):
        mem.memory_extract(MISSING)
    with pytest.raises(mnemo.Invalid, match="extractor"):
        mem.memory_extract(s["id"], "magic")


def test_invalid_input_names_the_field(mem):
    m = mem.remember("Something true")
    cases = [
        (lambda: mem.remember(""), "text"),
        (lambda: mem.remember("x", metadata=[1, 2]), "metadata"),
        (lambda: mem.remember("x", metadata="[1]"), "metadata"),
        (lambda: mem.remember("x", metadata="{not json"), "metadata"),
        (lambda: mem.remember("x", kind="Not A Kind"), "kind"),
        (lambda: mem.remember("x", sources=[0]), "sources"),
        (lambda: mem.remember("x", sources="12"), "sources"),
        (lambda: mem.remember("x", token_cap=-5), "token_cap"),
        (lambda: mem.remember("x", user_id=""), "user_id"),
        (lambda: mem.remember("x", valid_from=MAR, valid_to=JAN), "valid_to"),
        (lambda: mem.memory_update(m["id"], text=""), "text"),
        (lambda: mem.memory_get("not-a-uuid"), "id"),
        (lambda: mem.memory_list(limit=0), "limit"),
        (lambda: mem.memory_list(limit=5000), "limit"),
        (lambda: mem.memory_list(offset=-1), "offset"),
        (lambda: mem.memory_list(metadata={"nested": {"a": 1}}), "metadata"),
        (lambda: mem.recall("x", limit=0), "limit"),
        (lambda: mem.recall("x", limit=5000), "limit"),
        (lambda: mem.recall("x", mode="fuzzy"), "mode"),
        (lambda: mem.recall(""), "query"),
    ]
    for call, field in cases:
        with pytest.raises(mnemo.Invalid) as e:
            call()
        assert e.value.message.startswith(field), (field, e.value.message)
    with pytest.raises(mnemo.TooBig, match="^text"):
        mem.remember("x" * 9000)
    with pytest.raises(mnemo.NotFound):
        mem.memory_update(MISSING, text="y")
    with pytest.raises(TypeError, match="colour"):
        mem.remember("x", colour="red")
    with pytest.raises(TypeError, match="namespace"):
        mem.memory_update(m["id"], namespace="other")  # the scope cannot change
    assert [x["id"] for x in mem.memory_list()] == [m["id"]]  # nothing refused was written


def test_async_memory_methods(db_path):
    async def main():
        async with mnemo.AsyncMemory(db_path) as mem:
            m = await mem.remember("Prefers green tea", kind="preference", user_id="alex", valid_from=JAN)
            u = await mem.memory_update(m["id"], text="Prefers black tea", valid_from=MAR)
            hits = await mem.recall("tea", mode="keyword", user_id="alex")
            old = await mem.memory_list(as_of=FEB)
            hist = await mem.memory_history(m["id"])
            s = await mem.create_session()
            said = await mem.append(s["id"], "user", "Remember that the build uses clang.")
            st = await mem.memory_extract(s["id"])
            await mem.memory_delete(m["id"])
            closed = await mem.memory_get(m["id"])
            await mem.forget(m["id"])
            with pytest.raises(mnemo.NotFound):
                await mem.memory_get(m["id"])
            return u, hits, old, hist, st, closed, await mem.memory_list(), said["id"]

    u, hits, old, hist, st, closed, now, said = asyncio.run(main())
    assert u["version"] == 2 and [h["text"] for h in hits] == ["Prefers black tea"]
    assert [x["text"] for x in old] == ["Prefers green tea"]
    assert [v["change"] for v in hist] == ["add", "update"]
    assert st["added"] == 1 and closed["change"] == "delete"
    assert [(x["text"], x["sources"]) for x in now] == [("The build uses clang", [said])]
    assert asyncio.iscoroutinefunction(mnemo.AsyncMemory.recall)
    assert mnemo.AsyncMemory.remember.__doc__ == mnemo.Memory.remember.__doc__
