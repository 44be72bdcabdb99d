"""The library functions that are REST/MCP operations, as Memory methods of the same names:
edit_message (message_edit), clear_session (session_clear), set_max_turns (session_limit),
forget_namespace (namespace_forget), handover, vacuum and gc(vacuum=True), files(limit=),
pin(session_id=) (message_pin) and compact(instructions=); and the parameters those operations take
as REST and the CLI take them, with the same meaning and the same refusals: context's rag /
memories (False: off whatever the setting), rag_min_similarity=0 (no threshold), detail, fold and
no_fold; search's metadata; recall's include_closed and pinned; export([]) refused; and the
ranges of history, events, search, context, list_sessions, files, fork, prune, handover,
create_session, set_max_turns, append_batch, remember and the message ids checked with the API's
messages (an integer parameter refuses a bool, a float or a string, a time a float, a boolean
parameter anything but True or False); relevant_context, embed_pending and budget_split, which
REST does not have, with the library's ranges in the same words."""
import asyncio
import json

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
        mem.edit_message("not\ta-key", a["id"], "x")
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
        mem.clear_session("not\ta-key")
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
    # a turn is any message (seed 002): the newest two are a question and its answer
    assert [m["content"] for m in mem.history(s["id"])] == ["q3", "a3"]
    everything = mem.history(s["id"], all=True)
    assert len(everything) == 8
    assert [m["active"] for m in everything] == [False] * 6 + [True] * 2
    # raising or removing the limit brings nothing back
    assert mem.set_max_turns(s["id"], 0)["max_turns"] == 0
    assert len(mem.history(s["id"])) == 2
    with pytest.raises(mnemo.Invalid):
        mem.set_max_turns(s["id"], -1)
    with pytest.raises(mnemo.Invalid):
        mem.set_max_turns(s["id"], 1000001)
    with pytest.raises(mnemo.Invalid):
        mem.set_max_turns("not\ta-key", 2)
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
        mem.handover("not\ta-key")
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


# -- the options of context, search, recall, export and the limits, as REST and the CLI take them --
def project_settings(tmp_path, **settings):
    """Writes .mnemo/config.yaml in the working directory (the test's tmp_path), which both
    mnemo.Memory and the `mnemo` command read (the cli fixture's environment is fixed before the
    test runs, so MNEMO_* variables set in a test would not reach the command)."""
    (tmp_path / ".mnemo").mkdir()
    (tmp_path / ".mnemo" / "config.yaml").write_text("".join("%s: %s\n" % kv for kv in settings.items()))


@pytest.mark.parametrize("how", ["config", "environment"])
def test_context_rag_and_memories_false_turn_the_settings_off(db_path, cli, monkeypatch, tmp_path, how):
    """rag=False / memories=False mean off whatever memory.rag.enabled / memory.context.enabled say
    (REST {"rag": false}, CLI --no-rag: mn_context_opts.rag -1), None (the default) the setting."""
    if how == "config":
        project_settings(tmp_path, **{"memory.rag.enabled": "true", "memory.context.enabled": "true"})
    else:
        monkeypatch.setenv("MNEMO_RAG", "true")
        monkeypatch.setenv("MNEMO_MEMORY_CONTEXT", "true")
    with mnemo.Memory(db_path) as mem:
        old = mem.create_session()
        mem.append(old["id"], "user", "we decided to keep the parser small")
        mem.remember("The user likes a small parser")
        s = mem.create_session()
        mem.append(s["id"], "user", "what about the parser?")
        default = mem.context(s["id"]).report
        assert default["rag"]["enabled"] is True and default["rag"]["source"] == "memory.rag.enabled"
        assert default["memories"]["enabled"] is True and default["memories"]["source"] == "memory.context.enabled"
        on = mem.context(s["id"], rag=True, memories=True).report
        assert on["rag"]["enabled"] is True and "source" not in on["rag"] and "source" not in on["memories"]
        off = mem.context(s["id"], rag=False, memories=False)
        assert off.report.get("rag") is None and off.report.get("memories") is None
        assert off.messages == [{"role": "user", "content": "what about the parser?"}]
        cli_off = json.loads(cli("context", s["id"], "--no-rag", "--no-memories", "--report", "--json"))
        assert cli_off["report"] == off.report and cli_off["messages"] == off.messages
        if how == "config":  # the command reads the same settings
            assert json.loads(cli("context", s["id"], "--report", "--json"))["report"] == default
        with pytest.raises(mnemo.Invalid, match="^rag:"):
            mem.context(s["id"], rag="no")
        with pytest.raises(mnemo.Invalid, match="^memories:"):
            mem.context(s["id"], memories=0)


def test_context_rag_min_similarity_zero_means_no_threshold(db_path, cli, tmp_path):
    """rag_min_similarity=0 is "none", as REST and --rag-min-similarity 0 (the C struct's 0 is the
    0.7 default: the package passes -1, as REST does); None is the setting."""
    project_settings(tmp_path, **{"embedder.name": "hash", "embedder.mode": "inline"})
    with mnemo.Memory(db_path) as mem:
        old = mem.create_session()
        mem.append(old["id"], "user", "the parser decision was to keep it small")
        s = mem.create_session()
        mem.append(s["id"], "user", "what about the parser?")
        # with the threshold the semantic half finds nothing; the keyword half does
        dflt = mem.context(s["id"], rag=True, rag_scope="all").report["rag"]
        assert dflt["min_similarity"] == 0.7 and dflt["mode"] == "hybrid"
        zero = mem.context(s["id"], rag=True, rag_scope="all", rag_min_similarity=0)
        assert zero.report["rag"]["min_similarity"] == 0 and len(zero.report["rag"]["injected"]) == 1
        assert mem.context(s["id"], rag=True, rag_scope="all", rag_min_similarity=-1).report == zero.report
        c = json.loads(cli("context", s["id"], "--rag", "--rag-scope", "all", "--rag-min-similarity", "0",
                           "--report", "--json"))
        assert c["messages"] == zero.messages
    # compared with a handle as fresh as the command's: on PostgreSQL the handle that embedded the
    # messages gives a score whose last digits differ from a fresh handle's (0.3601801097 there,
    # 0.3601801395 here), a library matter this test is not about
    with mnemo.Memory(db_path) as mem:
        fresh = mem.context(s["id"], rag=True, rag_scope="all", rag_min_similarity=0)
        assert c["report"] == fresh.report and c["messages"] == fresh.messages
    with mnemo.Memory(db_path) as mem:
        with pytest.raises(mnemo.Invalid) as e:
            mem.context(s["id"], rag=True, rag_min_similarity=2)
        assert e.value.message == "rag_min_similarity: 2 is out of range -1..1"


def test_context_detail_and_fold_modes(mem):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello")
    mem.append(s["id"], "assistant", "hi")
    plain = mem.context(s["id"]).report
    assert "detail" not in plain and plain["fold"]["mode"] == "background"
    detail = mem.context(s["id"], detail=True).report["detail"]
    assert [(d["seq"], d["fate"]) for d in detail] == [(1, "kept"), (2, "kept")]
    for fold in ("background", "sync", "off"):
        assert mem.context(s["id"], fold=fold).report["fold"]["mode"] == fold
    assert mem.context(s["id"], no_fold=True).report["fold"]["mode"] == "off"
    assert mem.context(s["id"], no_fold=True, fold="off").report["fold"]["mode"] == "off"
    with pytest.raises(mnemo.Invalid) as e:
        mem.context(s["id"], no_fold=True, fold="sync")
    assert e.value.message == "no_fold: the same as fold off; it does not go with fold sync"
    with pytest.raises(mnemo.Invalid, match="^fold: 'later' is not one of background, sync, off"):
        mem.context(s["id"], fold="later")
    for misspelt in ("details", "nofold", "folding"):
        with pytest.raises(TypeError, match=misspelt):
            mem.context(s["id"], **{misspelt: True})


def test_search_metadata_filter(mem):
    s = mem.create_session()
    a = mem.append(s["id"], "user", "the parser for the database", metadata={"topic": "db", "n": 1})
    mem.append(s["id"], "user", "the parser for the web page", metadata={"topic": "web"})
    mem.append(s["id"], "user", "the parser again")
    assert len(mem.search("parser", mode="keyword")) == 3
    assert [h["message"]["id"] for h in mem.search("parser", metadata={"topic": "db"})] == [a["id"]]
    assert [h["message"]["id"] for h in mem.search("parser", metadata='{"topic":"db","n":1}')] == [a["id"]]
    assert mem.search("parser", metadata={"topic": "db", "n": 2}) == []
    with pytest.raises(mnemo.Invalid, match="^metadata: must be an object"):  # REST's words
        mem.search("parser", metadata=[1, 2])
    for bad in ({"nested": {"a": 1}}, "[1]", "{not json"):  # the library's check: filter.metadata
        with pytest.raises(mnemo.Invalid, match="metadata"):
            mem.search("parser", metadata=bad)
    with pytest.raises(TypeError, match="meta"):
        mem.search("parser", meta={"topic": "db"})


def test_recall_include_closed_and_pinned(mem):
    tea = mem.remember("The user drinks green tea")
    block = mem.remember("Persona: the tea expert", pinned=True)
    gone = mem.remember("The user drank black tea")
    mem.memory_delete(gone["id"])
    assert {m["id"] for m in mem.recall("tea", mode="keyword")} == {tea["id"], block["id"]}
    assert {m["id"] for m in mem.recall("tea", mode="keyword", include_closed=True)} == {
        tea["id"], block["id"], gone["id"]}
    assert [m["id"] for m in mem.recall("tea", mode="keyword", pinned=True)] == [block["id"]]
    assert [m["id"] for m in mem.recall("tea", mode="keyword", pinned=False)] == [tea["id"]]
    with pytest.raises(TypeError, match="closed"):
        mem.recall("tea", closed=True)


def test_export_of_an_empty_list_is_refused(mem):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello")
    everything = mem.export()
    assert mem.export(None) == everything and s["id"] in everything
    with pytest.raises(mnemo.Invalid) as e:
        mem.export([])
    assert e.value.message == "ids: an empty list (leave ids out to export every session)"
    with pytest.raises(mnemo.Invalid):
        mem.export([""])
    with pytest.raises(mnemo.Invalid):
        mem.export([s["id"], ""])
    assert mem.export([s["id"]]) == everything
    # one string: comma-separated ids, as REST's ids=A,B
    t = mem.create_session()
    assert mem.export(s["id"]) == everything
    assert mem.export("%s,%s" % (s["id"], t["id"])) == mem.export([s["id"], t["id"]])
    with pytest.raises(mnemo.Invalid) as e:
        mem.export("%s,,%s" % (s["id"], t["id"]))
    assert e.value.message == "ids: entry 2 is empty (a comma-separated list of session ids)"
    with pytest.raises(mnemo.Invalid, match="^ids: entry 1 is empty"):
        mem.export("")
    with pytest.raises(mnemo.Invalid, match=r"^ids\[1\]: must be a string"):
        mem.export([s["id"], 7])


LIMITS = [
    ("history", lambda m, s: m.history(s, limit=-1), "limit: -1 is out of range 1..10000"),
    ("history", lambda m, s: m.history(s, limit=0), "limit: 0 is out of range 1..10000"),
    ("history", lambda m, s: m.history(s, limit=10001), "limit: 10001 is out of range 1..10000"),
    ("history", lambda m, s: m.history(s, after_seq=-1), "after_seq: -1 is below the minimum of 0"),
    ("events", lambda m, s: m.events(s, limit=-1), "limit: -1 is out of range 1..10000"),
    ("events", lambda m, s: m.events(s, limit=0), "limit: 0 is out of range 1..10000"),
    ("events", lambda m, s: m.events(s, limit=10001), "limit: 10001 is out of range 1..10000"),
    ("search", lambda m, s: m.search("hello", top_k=-1), "top_k: -1 is out of range 1..1000"),
    ("search", lambda m, s: m.search("hello", top_k=0), "top_k: 0 is out of range 1..1000"),
    ("search", lambda m, s: m.search("hello", top_k=1001), "top_k: 1001 is out of range 1..1000"),
    ("search", lambda m, s: m.search("hello", min_similarity=1.5), "min_similarity: 1.5 is out of range -1..1"),
    ("context", lambda m, s: m.context(s, max_tokens=-1), "max_tokens: -1 is out of range 0..100000000"),
    ("context", lambda m, s: m.context(s, model_window=0), "model_window: 0 is out of range 1..100000000"),
    ("context", lambda m, s: m.context(s, rag_top_k=0), "rag_top_k: 0 is out of range 1..100"),
    ("context", lambda m, s: m.context(s, rag_top_k=-1), "rag_top_k: -1 is out of range 1..100"),
    ("context", lambda m, s: m.context(s, memories_top_k=-1), "memories_top_k: -1 is out of range 1..50"),
    ("context", lambda m, s: m.context(s, memories_top_k=51), "memories_top_k: 51 is out of range 1..50"),
    ("recall", lambda m, s: m.recall("hello", limit=0), "limit: 0 is out of range 1..1000"),
    ("memory_list", lambda m, s: m.memory_list(limit=1001), "limit: 1001 is out of range 1..1000"),
    ("memory_list", lambda m, s: m.memory_list(offset=-1), "offset: -1 is out of range 0..100000000"),
    ("files", lambda m, s: m.files(s, limit=0), "limit: 0 is out of range 1..1000000"),
    ("files", lambda m, s: m.files(s, limit=-1), "limit: -1 is out of range 1..1000000"),
    ("files", lambda m, s: m.files(s, limit=1000001), "limit: 1000001 is out of range 1..1000000"),
    ("list_sessions", lambda m, s: m.list_sessions(limit=0), "limit: 0 is out of range 1..10000"),
    ("list_sessions", lambda m, s: m.list_sessions(limit=10001), "limit: 10001 is out of range 1..10000"),
    ("list_sessions", lambda m, s: m.list_sessions(offset=-1), "offset: -1 is out of range 0..100000000"),
    ("list_sessions", lambda m, s: m.list_sessions(offset=100000001),
     "offset: 100000001 is out of range 0..100000000"),
    ("search", lambda m, s: m.search("hello", since=-1), "since: -1 is below the minimum of 0"),
    ("search", lambda m, s: m.search("hello", until=-5), "until: -5 is below the minimum of 0"),
    ("fork", lambda m, s: m.fork(s, upto_seq=-1), "upto_seq: -1 is below the minimum of 0"),
    ("prune", lambda m, s: m.prune(0), "days: 0 is out of range 1..36500"),
    ("prune", lambda m, s: m.prune(36501), "days: 36501 is out of range 1..36500"),
    ("delete_message", lambda m, s: m.delete_message(s, 0), "message_id: 0 is below the minimum of 1"),
    ("edit_message", lambda m, s: m.edit_message(s, -1, "x"), "message_id: -1 is below the minimum of 1"),
    ("pin", lambda m, s: m.pin(0), "message_id: 0 is below the minimum of 1"),
    ("pin", lambda m, s: m.pin(-1, session_id=s), "message_id: -1 is below the minimum of 1"),
    ("unpin", lambda m, s: m.unpin(0, session_id=s), "message_id: 0 is below the minimum of 1"),
    # the ranges of handover, session_create, session_limit and remember / update (REST's
    # parameter checks), and of the calls that are the library's only (relevant_context,
    # embed_pending, budget_split: the library's ranges, in REST's words)
    ("handover", lambda m, s: m.handover(s, files=-1), "files: -1 is out of range 0..1000000"),
    ("handover", lambda m, s: m.handover(s, files=1000001), "files: 1000001 is out of range 0..1000000"),
    ("create_session", lambda m, s: m.create_session(max_turns=-2), "max_turns: -2 is out of range -1..1000000"),
    ("create_session", lambda m, s: m.create_session(max_turns=1000001),
     "max_turns: 1000001 is out of range -1..1000000"),
    ("create_session", lambda m, s: m.create_session(ttl_ms=-2), "ttl_ms: -2 is out of range -1..31622400000"),
    ("create_session", lambda m, s: m.create_session(tool_name="codex", ttl_ms=31622400001),
     "ttl_ms: 31622400001 is out of range -1..31622400000"),
    ("set_max_turns", lambda m, s: m.set_max_turns(s, -1), "max_turns: -1 is out of range 0..1000000"),
    ("set_max_turns", lambda m, s: m.set_max_turns(s, 1000001), "max_turns: 1000001 is out of range 0..1000000"),
    ("clear_session", lambda m, s: m.clear_session(s, undo=True, state=True),
     "undo: does not go with state (a reset state cannot come back)"),
    ("append_batch", lambda m, s: m.append_batch(s, []), "messages: 0 items is under the minimum of 1"),
    ("append_batch", lambda m, s: m.append_batch(s, [{"role": "user", "content": "x"}] * 100001),
     "messages: 100001 items is over the limit of 100000"),
    ("relevant_context", lambda m, s: m.relevant_context("hello", 0), "max_tokens: 0 is out of range 1..1000000"),
    ("relevant_context", lambda m, s: m.relevant_context("hello", 1000001),
     "max_tokens: 1000001 is out of range 1..1000000"),
    ("embed_pending", lambda m, s: m.embed_pending(-1), "max: -1 is below the minimum of 0"),
    ("budget_split", lambda m, s: mnemo.budget_split(0), "model_window: 0 is out of range 1..100000000"),
    ("budget_split", lambda m, s: mnemo.budget_split(100000001),
     "model_window: 100000001 is out of range 1..100000000"),
    ("remember", lambda m, s: m.remember("x", token_cap=-1), "token_cap: -1 is out of range 0..100000"),
    ("remember", lambda m, s: m.remember("x", token_cap=100001), "token_cap: 100001 is out of range 0..100000"),
    ("memory_update", lambda m, s: m.memory_update(m.remember("x")["id"], token_cap=-1),
     "token_cap: -1 is out of range 0..100000"),
    ("remember", lambda m, s: m.remember("x", sources=range(1, 258)), "sources: 257 items is over the limit of 256"),
    ("remember", lambda m, s: m.remember("x", valid_from=-5), "valid_from: -5 is below the minimum of 0"),
    ("remember", lambda m, s: m.remember("x", valid_to=-1), "valid_to: -1 is below the minimum of 0"),
    ("memory_list", lambda m, s: m.memory_list(as_of=-1), "as_of: -1 is below the minimum of 0"),
    ("memory_delete", lambda m, s: m.memory_delete(m.remember("x")["id"], at=-1), "at: -1 is below the minimum of 0"),
]


@pytest.mark.parametrize("call, message", [c[1:] for c in LIMITS],
                         ids=["%s-%s" % (c[0], c[2].split(" is ")[0].replace(": ", "=")) for c in LIMITS])
def test_limits_are_checked_as_the_api_checks_them(mem, call, message):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello")
    with pytest.raises(mnemo.Invalid) as e:
        call(mem, s["id"])
    assert e.value.message == message


def test_limits_at_the_edges_of_their_range(mem):
    s = mem.create_session()
    for i in range(3):
        mem.append(s["id"], "user", "hello %d" % i)
    assert len(mem.history(s["id"])) == 3 and len(mem.history(s["id"], limit=1)) == 1
    assert len(mem.history(s["id"], limit=10000)) == 3
    assert mem.events(s["id"], limit=1) == [] and mem.events(s["id"], limit=10000) == []
    assert len(mem.search("hello", top_k=1)) == 1 and len(mem.search("hello", top_k=1000)) == 3
    assert mem.context(s["id"], max_tokens=0, rag=True, rag_top_k=100, memories=True, memories_top_k=50,
                       model_window=100000000).kept == 3


# an integer parameter given a bool, a float or a string: REST's "must be an integer" (bare int()
# read True as message 1, 1.5 as 1 and "1" as 1; ctypes raised its own ArgumentError for others)
NOT_INTEGERS = [
    ("delete_message", "message_id", lambda m, s, v: m.delete_message(s, v)),
    ("edit_message", "message_id", lambda m, s, v: m.edit_message(s, v, "x")),
    ("pin", "message_id", lambda m, s, v: m.pin(v)),
    ("pin-session", "message_id", lambda m, s, v: m.pin(v, session_id=s)),
    ("unpin", "message_id", lambda m, s, v: m.unpin(v)),
    ("fork", "upto_seq", lambda m, s, v: m.fork(s, upto_seq=v)),
    ("prune", "days", lambda m, s, v: m.prune(v)),
    ("files", "limit", lambda m, s, v: m.files(s, limit=v)),
    ("list_sessions", "limit", lambda m, s, v: m.list_sessions(limit=v)),
    ("list_sessions", "offset", lambda m, s, v: m.list_sessions(offset=v)),
    ("handover", "files", lambda m, s, v: m.handover(s, files=v)),
    ("create_session", "max_turns", lambda m, s, v: m.create_session(max_turns=v)),
    ("create_session", "ttl_ms", lambda m, s, v: m.create_session(tool_name="codex", ttl_ms=v)),
    ("set_max_turns", "max_turns", lambda m, s, v: m.set_max_turns(s, v)),
    ("relevant_context", "max_tokens", lambda m, s, v: m.relevant_context("hello", v)),
    ("embed_pending", "max", lambda m, s, v: m.embed_pending(v)),
    ("budget_split", "model_window", lambda m, s, v: mnemo.budget_split(v)),
    ("remember", "token_cap", lambda m, s, v: m.remember("x", token_cap=v)),
]


@pytest.mark.parametrize("value", [True, 1.5, "1"], ids=["bool", "float", "str"])
@pytest.mark.parametrize("what, call", [c[1:] for c in NOT_INTEGERS], ids=["%s-%s" % c[:2] for c in NOT_INTEGERS])
def test_integer_parameters_refuse_other_types_as_the_api(mem, what, call, value):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello")
    with pytest.raises(mnemo.Invalid) as e:
        call(mem, s["id"], value)
    assert e.value.message == "%s: must be an integer, got %s" % (what, type(value).__name__)
    h = mem.history(s["id"])
    assert [(x["content"], x["pinned"]) for x in h] == [("hello", False)]  # nothing changed
    assert [x["max_turns"] for x in mem.list_sessions()] == [0]  # nothing forked, made or limited
    assert mem.memory_list() == []


# a time in ms given a float: REST's since, until, as_of, valid_from, valid_to and at are integers
# (1.5 became 1)
NOT_TIMES = [
    ("search", "since", lambda m, s, v: m.search("hello", since=v)),
    ("search", "until", lambda m, s, v: m.search("hello", until=v)),
    ("memory_list", "as_of", lambda m, s, v: m.memory_list(as_of=v)),
    ("recall", "as_of", lambda m, s, v: m.recall("hello", as_of=v)),
    ("remember", "valid_from", lambda m, s, v: m.remember("x", valid_from=v)),
    ("remember", "valid_to", lambda m, s, v: m.remember("x", valid_to=v)),
    ("memory_delete", "at", lambda m, s, v: m.memory_delete(m.remember("x")["id"], at=v)),
]


@pytest.mark.parametrize("value", [True, 1.5, "1"], ids=["bool", "float", "str"])
@pytest.mark.parametrize("what, call", [c[1:] for c in NOT_TIMES], ids=["%s-%s" % c[:2] for c in NOT_TIMES])
def test_times_refuse_other_types_as_the_api(mem, what, call, value):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello")
    with pytest.raises(mnemo.Invalid) as e:
        call(mem, s["id"], value)
    assert e.value.message == "%s: must be an integer or a datetime, got %s" % (what, type(value).__name__)
    assert [x["text"] for x in mem.memory_list(include_closed=True)] in ([], ["x"])
    assert all(x["change"] == "add" for x in mem.memory_list(include_closed=True))  # none deleted


# a boolean parameter given anything but True or False: REST's "must be true or false" (a truthy
# value was taken as True, so pinned="no" pinned)
def _first(m, s):
    return m.history(s)[0]["id"]


NOT_BOOLEANS = [
    ("pin", "pinned", lambda m, s, v: m.pin(_first(m, s), v)),
    ("pin-session", "pinned", lambda m, s, v: m.pin(_first(m, s), v, session_id=s)),
    ("clear_session", "undo", lambda m, s, v: m.clear_session(s, undo=v)),
    ("clear_session", "state", lambda m, s, v: m.clear_session(s, state=v)),
    ("history", "tail", lambda m, s, v: m.history(s, tail=v)),
    ("history", "all", lambda m, s, v: m.history(s, all=v)),
    ("state", "reveal", lambda m, s, v: m.state(s, reveal=v)),
    ("gc", "vacuum", lambda m, s, v: m.gc(vacuum=v)),
    ("append", "create", lambda m, s, v: m.append(s, "user", "more", create=v)),
    ("append", "message.pinned", lambda m, s, v: m.append(s, "user", "more", pinned=v)),
    ("append_batch", "messages[0].pinned",
     lambda m, s, v: m.append_batch(s, [{"role": "user", "content": "more", "pinned": v}])),
    ("append_many", "requests[0].create",
     lambda m, s, v: m.append_many([{"session_id": s, "messages": [{"role": "user"}], "create": v}])),
    ("append_many", "requests[0].messages[0].pinned",
     lambda m, s, v: m.append_many([{"session_id": s, "messages": [{"role": "user", "pinned": v}]}])),
    ("remember", "pinned", lambda m, s, v: m.remember("x", pinned=v)),
    ("memory_update", "pinned", lambda m, s, v: m.memory_update(m.remember("x")["id"], pinned=v)),
    ("memory_list", "include_closed", lambda m, s, v: m.memory_list(include_closed=v)),
    ("memory_list", "pinned", lambda m, s, v: m.memory_list(pinned=v)),
    ("recall", "include_closed", lambda m, s, v: m.recall("x", include_closed=v)),
    ("recall", "pinned", lambda m, s, v: m.recall("x", pinned=v)),
]


@pytest.mark.parametrize("value", [1, "no"], ids=["int", "str"])
@pytest.mark.parametrize("what, call", [c[1:] for c in NOT_BOOLEANS], ids=["%s-%s" % c[:2] for c in NOT_BOOLEANS])
def test_boolean_parameters_refuse_other_values_as_the_api(mem, what, call, value):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello")
    with pytest.raises(mnemo.Invalid) as e:
        call(mem, s["id"], value)
    assert e.value.message == "%s: must be True or False, got %r" % (what, value)
    h = mem.history(s["id"], all=True)
    assert [(x["content"], x["pinned"], x["active"]) for x in h] == [("hello", False, True)]  # nothing changed
    assert all(not x["pinned"] for x in mem.memory_list())


def test_contents_refuse_what_is_not_text(mem):
    """file_should_include's content is REST's files_check content, a string: bytes(5) made five
    NUL bytes of an int (and count_tokens(5) counted them)."""
    s = mem.create_session()
    for bad in (5, [104, 105], None):
        with pytest.raises(mnemo.Invalid) as e:
            mem.file_should_include(s["id"], "a.c", bad)
        assert e.value.message == "content: must be a string, got %s" % type(bad).__name__
        with pytest.raises(mnemo.Invalid, match=r"^text: must be a string, got "):
            mnemo.count_tokens(bad)
        with pytest.raises(mnemo.Invalid, match=r"^text: must be a string, got "):
            mnemo.encode_tokens(bad)
    assert mem.file_should_include(s["id"], "a.c", "hi") is True
    assert mem.file_should_include(s["id"], "a.c", b"hi") is False  # bytes: the same content
    assert mnemo.count_tokens(b"hello") == mnemo.count_tokens("hello") == 1


def test_new_ranges_at_their_edges(mem):
    s = mem.create_session()
    a = mem.append(s["id"], "user", "one", files=["a.c", "b.c"])
    assert mem.files(s["id"], limit=None) == mem.files(s["id"]) == ["a.c", "b.c"]
    assert mem.files(s["id"], limit=1) == ["a.c"] and mem.files(s["id"], limit=1000000) == ["a.c", "b.c"]
    assert [x["id"] for x in mem.list_sessions(limit=10000)] == [s["id"]]
    assert mem.list_sessions(limit=1, offset=100000000) == []
    assert len(mem.search("one", since=0, until=0)) == 1
    assert mem.fork(s["id"], upto_seq=0)["message_count"] == 1
    assert mem.prune(36500) == 0
    mem.pin(a["id"], session_id=s["id"])
    assert mem.history(s["id"])[0]["pinned"] is True


def test_thread_and_memory_ranges_at_their_edges(mem):
    s = mem.create_session()
    mem.append(s["id"], "user", "hello", files=["a.c"])
    assert mem.handover(s["id"], files=1000000)["files"] == ["a.c"]
    longest = mem.create_session(tool_name="codex", ttl_ms=31622400000, max_turns=1000000)
    assert (longest["ttl_ms"], longest["max_turns"]) == (31622400000, 1000000)
    never = mem.create_session(tool_name="codex", ttl_ms=-1, max_turns=-1)
    assert (never["ttl_ms"], never["max_turns"], never["expires_at"]) == (0, 0, 0)
    assert mem.set_max_turns(s["id"], 1000000)["max_turns"] == 1000000
    assert mem.set_max_turns(s["id"], 0)["max_turns"] == 0
    assert "hello" in mem.relevant_context("hello", 1000000) and "hello" not in mem.relevant_context("hello", 1)
    assert mnemo.budget_split(1)["model_window"] == 1 and mnemo.budget_split(100000000)["files"] > 0
    assert mem.remember("a", token_cap=0)["token_cap"] == 0
    said = [m["id"] for m in mem.append_batch(s["id"], [{"role": "user", "content": "x"}] * 256)]
    assert mem.remember("b", token_cap=100000, sources=said)["token_cap"] == 100000
    assert len(mem.append_batch(s["id"], [{"role": "user", "content": "x"}] * 3)) == 3


def test_embed_pending_max(db_path):
    with mnemo.Memory(db_path, {"embedder.name": "hash", "embedder.mode": "queue"}) as mem:
        s = mem.create_session()
        for i in range(3):
            mem.append(s["id"], "user", "message number %d" % i)
        assert mem.embed_pending(1) == 1 and mem.embed_pending(0) == 2 and mem.embed_pending() == 0


def test_methods_are_named_as_their_operations_and_keep_their_older_names():
    # docs/names.md: the method is the operation's name; the older name is the same method, for
    # Memory and AsyncMemory alike (tests/cli/t0111-names.sh checks the whole table)
    older = {"create_session": "session_create", "set_max_turns": "session_set_max_turns", "context": "context_build",
             "handover": "thread_summary_get", "files": "session_files", "remember": "memory_add",
             "recall": "memory_search", "forget": "memory_forget", "merge_params": "state_merge_params"}
    for old, name in older.items():
        assert getattr(mnemo.Memory, old) is getattr(mnemo.Memory, name), old
        assert getattr(mnemo.AsyncMemory, old) is getattr(mnemo.AsyncMemory, name), old
        assert asyncio.iscoroutinefunction(getattr(mnemo.AsyncMemory, name)), name


def test_state_unwait(mem):
    s = mem.session_create()
    mem.state_set_waiting(s["id"], "date")
    mem.state_unwait(s["id"])
    assert mem.state_get(s["id"])["waiting_for_param"] is None
