"""mnemo.compat.harombe.MemoryManager: harombe's manager.py API (seed 000) over mnemo."""
import asyncio
import datetime

import pytest

import mnemo
from mnemo.compat.harombe import Message, MemoryManager, SessionRecord, ToolCall


@pytest.fixture
def mm(db_path):
    m = MemoryManager(db_path)
    yield m
    m.close()


def test_defaults_are_harombes(mm):
    import inspect
    assert mm.max_history_tokens == 4096
    sig = lambda f: {k: v.default for k, v in inspect.signature(f).parameters.items()}  # noqa: E731
    assert sig(MemoryManager.__init__)["max_history_tokens"] == 4096
    assert sig(mm.load_history)["max_tokens"] is None
    # count: the real project's (None: 10, unless max_tokens is given); max_tokens: the seed's
    assert sig(mm.get_recent_messages) == {"session_id": inspect.Parameter.empty, "count": None, "max_tokens": None}
    assert inspect.signature(mm.get_recent_messages).parameters["max_tokens"].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(sig(mm.load_session)) == ["session_id"]
    assert sig(mm.list_sessions) == {"limit": 10, "offset": 0}
    assert sig(mm.prune_old_sessions)["days"] == 30
    assert sig(mm.search_similar)["top_k"] == 5 and sig(mm.search_similar)["min_similarity"] is None
    assert sig(mm.get_relevant_context)["max_tokens"] == 2048
    assert sig(mm.backfill_embeddings)["batch_size"] == 100
    assert mm.semantic_search_enabled is False


def test_sessions(mm):
    sid = mm.create_session("You are helpful.", {"user": "ann", "tags": ["x"], "title": "T"})
    rec = mm.get_session(sid)
    assert isinstance(rec, SessionRecord) and rec.system_prompt == "You are helpful."
    assert rec.metadata.user == "ann" and rec.metadata.tags == ["x"] and rec.metadata.title == "T"
    assert isinstance(rec.created_at, datetime.datetime)
    custom = "0190a5b4-0000-4000-8000-000000000abc"
    assert mm.get_or_create_session(custom, "p") == (custom, True)
    assert mm.get_or_create_session(custom, "p") == (custom, False)
    assert [s.id for s in mm.list_sessions()] == [custom, sid]
    assert mm.session_exists(sid)
    assert mm.delete_session(sid) is True and mm.delete_session(sid) is False
    assert mm.get_session(sid) is None
    assert mm.prune_old_sessions() == 0


def test_save_and_load_history_with_a_token_limit(mm):
    sid = mm.create_session("p")
    ids = [mm.save_message(sid, Message(role="user", content="word " * 40)),
           mm.save_message(sid, Message(role="assistant", content=None,
                                        tool_calls=[ToolCall(id="c1", name="ls", arguments={"d": "."})])),
           mm.save_message(sid, {"role": "tool", "content": "out " * 40, "tool_call_id": "c1"}),
           mm.save_message(sid, Message(role="assistant", content="done"))]
    assert ids == sorted(ids)
    full = mm.load_history(sid, max_tokens=100000)
    assert [m.role for m in full] == ["user", "assistant", "tool", "assistant"]
    assert full[1].tool_calls[0] == ToolCall(id="c1", name="ls", arguments={"d": "."})
    assert full[2].tool_call_id == "c1"
    tail = mm.load_history(sid, max_tokens=60)
    assert [m.content for m in tail] == ["done"]  # the tool result is never first
    assert len(mm.load_history(sid)) == 4  # default budget 4096
    assert [m.content for m in mm.get_recent_messages(sid, count=1)] == ["done"]
    assert mm.get_recent_messages(sid, count=0) == []
    assert len(mm.get_recent_messages(sid, count=20000)) == 4  # past history()'s largest limit (10000)
    assert mm.get_message_count(sid) == 4
    assert mm.clear_history(sid) == 4 and mm.load_history(sid) == [] and mm.session_exists(sid)


def test_seed_load_session_and_recent_messages_by_tokens(db_path):
    """Seed 000's own signatures: load_session(session_id) -> list[Message], the whole history;
    get_recent_messages(session_id, max_tokens=N), the newest messages within N tokens (the
    real project's positional count still works beside it)."""
    mm = MemoryManager(db_path, max_history_tokens=10)
    sid = mm.create_session("p")
    for text in ("one " * 30, "two " * 20, "three " * 10, "four"):
        mm.save_message(sid, Message(role="user", content=text))
    mm.save_message(sid, Message(role="assistant", content="five"))
    stored = mm.memory.history(sid)
    tokens = [m["tokens"] for m in stored]
    everything = [m["content"] for m in stored]

    loaded = mm.load_session(sid)
    assert all(isinstance(m, Message) for m in loaded)
    assert [m.content for m in loaded] == everything  # not cut to max_history_tokens
    assert len(mm.load_history(sid)) < len(everything)  # which load_history is

    last_three = sum(tokens[-3:])
    assert [m.content for m in mm.get_recent_messages(sid, max_tokens=last_three)] == everything[-3:]
    assert [m.content for m in mm.get_recent_messages(sid, max_tokens=last_three - 1)] == everything[-2:]
    assert [m.content for m in mm.get_recent_messages(sid, max_tokens=100)] == \
        [m.content for m in mm.load_history(sid, max_tokens=100)]
    assert mm.get_recent_messages(sid, max_tokens=0) == []
    assert [m.content for m in mm.get_recent_messages(sid, max_tokens=sum(tokens))] == everything
    # both limits: within the budget and at most count
    assert [m.content for m in mm.get_recent_messages(sid, 1, max_tokens=last_three)] == everything[-1:]
    # the real project's count: positional or by name, 10 by default
    assert [m.content for m in mm.get_recent_messages(sid, 2)] == everything[-2:]
    assert len(mm.get_recent_messages(sid)) == 5
    with pytest.raises(mnemo.Invalid):
        mm.get_recent_messages(sid, max_tokens=-1)
    with pytest.raises(mnemo.NotFound):  # as load_history: an unknown session is not an empty one
        mm.load_session("0190a5b4-0000-4000-8000-000000000fff")
    mm.close()


def test_save_message_creates_an_unknown_session(mm):
    sid = "0190a5b4-0000-4000-8000-000000000def"
    mm.save_message(sid, Message(role="user", content="hi"))
    assert mm.session_exists(sid)


def test_search_similar_and_relevant_context(db_path):
    mm = MemoryManager(db_path, config={"embedder.name": "hash", "embedder.mode": "inline"})
    assert mm.semantic_search_enabled
    sid = mm.create_session("p")
    mm.save_message(sid, Message(role="user", content="How do I configure the parser?"))
    mm.save_message(sid, Message(role="assistant", content="Set parser.strict in the config file."))
    other = mm.create_session("p")
    mm.save_message(other, Message(role="user", content="Weather in Oslo?"))

    async def go():
        hits = await mm.search_similar("parser config", top_k=2, session_id=sid)
        ctx = await mm.get_relevant_context("parser config", max_tokens=12)
        return hits, ctx

    hits, ctx = asyncio.run(go())
    assert len(hits) == 2 and all(isinstance(h, Message) for h in hits)
    assert {h.role for h in hits} == {"user", "assistant"}
    assert 1 <= len(ctx) < 3
    assert mm.backfill_embeddings() == 0  # inline mode embedded them already
    mm.close()


def test_harombe_vector_store_settings_choose_the_embedder(db_path):
    """memory.vector_store.* (seed 000's config) maps to mnemo's embedder; a provider mnemo does
    not have is refused by name (docs/config.md)."""
    mm = MemoryManager(db_path, config={"memory.vector_store.embedding_model": "nomic-embed-text",
                                        "memory.vector_store.embedding_provider": "ollama"})
    assert mm.semantic_search_enabled
    assert (mm.memory.settings["embedder.name"], mm.memory.settings["embedder.model"]) == ("ollama", "nomic-embed-text")
    mm.close()
    with pytest.raises(mnemo.Invalid, match="memory.vector_store.embedding_provider: 'sentence-transformers'"):
        MemoryManager(db_path, config={"memory.vector_store.embedding_provider": "sentence-transformers"})


def test_keyword_search_without_an_embedder(mm):
    sid = mm.create_session("p")
    mm.save_message(sid, Message(role="user", content="the parser"))
    hits = asyncio.run(mm.search_similar("parser"))
    assert [h.content for h in hits] == ["the parser"]
