"""Contexts (every strategy, format and option of mn_context_build), compaction, search and RAG."""
import json
import os

import pytest

import mnemo

CALLS = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]


def fill(mem, turns=12, **session):
    s = mem.create_session(system_prompt="You are concise.", **session)
    for i in range(turns):
        mem.append(s["id"], "user", "Question %d about the parser and the file src/p%d.c" % (i, i))
        mem.append(s["id"], "assistant", "Answer %d: we decided to keep the parser small." % i)
    return s["id"]


@pytest.fixture
def gov(db_path):
    """A database whose summary strategies fold after a few messages."""
    with mnemo.Memory(db_path, {"memory.durability": "normal", "context.max_history_messages": 6,
                                "context.tail_turns": 2, "context.chunk_threshold_tokens": 50}) as m:
        yield m


def test_openai_messages_ready_for_the_client(mem):
    s = mem.create_session(system_prompt="Be brief.")
    mem.append(s["id"], "user", "What is in the repo?")
    mem.append(s["id"], "assistant", None, tool_calls=CALLS)
    mem.append(s["id"], "tool", "README.md", tool_call_id="c1")
    ctx = mem.context(s["id"], max_tokens=4096)
    assert ctx.format == "openai" and ctx.kept == 3 and ctx.dropped == 0 and ctx.tokens > 0
    assert ctx.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is in the repo?"},
        {"role": "assistant", "content": None, "tool_calls": CALLS},
        {"role": "tool", "content": "README.md", "tool_call_id": "c1"},
    ]
    assert ctx.kwargs() == {"messages": ctx.messages}
    assert json.loads(ctx.rendered) == ctx.messages
    r = ctx.report
    assert r["strategy"] == "window" and r["max_tokens"] == 4096 and r["messages"]["kept"] == 3


def test_anthropic_and_text_formats(mem):
    s = mem.create_session(system_prompt="Be brief.")
    mem.append(s["id"], "user", "hi")
    a = mem.context(s["id"], format="anthropic")
    assert a.system == "Be brief."
    assert a.messages == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert a.kwargs() == {"messages": a.messages, "system": "Be brief."}
    t = mem.context(s["id"], format="text")
    assert t.text == "system: Be brief.\n\nuser: hi\n\n" and t.messages == []
    with pytest.raises(mnemo.Misuse):
        t.kwargs()
    with pytest.raises(mnemo.Invalid, match="format"):
        mem.context(s["id"], format="xml")
    n = mem.create_session()
    mem.append(n["id"], "user", "x")
    assert "system" not in mem.context(n["id"], format="anthropic").kwargs()


def test_budget_drops_oldest(mem):
    sid = fill(mem, 10)
    ctx = mem.context(sid, max_tokens=80)
    assert ctx.dropped > 0 and ctx.report["dropped"]["budget"] > 0 and ctx.tokens <= 80
    with pytest.raises(mnemo.Invalid, match="max_tokens"):
        mem.context(sid, max_tokens=100000001)


@pytest.mark.parametrize("strategy", ["window", "summary", "chunked", "hybrid"])
def test_every_strategy(gov, strategy):
    sid = fill(gov)
    ctx = gov.context(sid, strategy=strategy, max_tokens=2000)
    assert ctx.report["strategy"] == strategy
    assert ctx.messages[0] == {"role": "system", "content": "You are concise."}
    if strategy != "window":
        # the fold ran; hybrid keeps pinned and recent messages, and a summary that would not
        # shrink its context is rolled back (docs/context.md)
        assert ctx.report["fold"]["outcome"] in ("ok", "rolled_back")
        if ctx.report["fold"]["outcome"] == "ok":
            assert ctx.report["summary"]["shown"] is True
            # the room the summary leaves holds the newest messages it stands for, verbatim
            assert gov.summary(sid)["covers_upto"] > 0 and ctx.tokens <= 2000
        assert ctx.report["messages"]["total"] == 24


def test_unknown_strategy_is_invalid(mem):
    sid = fill(mem, 1)
    with pytest.raises(mnemo.Invalid, match="strategy"):
        mem.context(sid, strategy="magic")


def test_fold_false_uses_the_stored_summary(gov):
    sid = fill(gov)
    ctx = gov.context(sid, strategy="summary", fold=False)
    assert ctx.report["fold"] is None or ctx.report["fold"]["outcome"] in ("none", "disabled")
    with pytest.raises(mnemo.NotFound, match="summary"):
        gov.summary(sid)
    assert gov.events(sid) == []


def test_model_window_fills_preflight(mem):
    sid = fill(mem, 2)
    assert mem.context(sid).report["preflight"] is None
    pf = mem.context(sid, model_window=8000).report["preflight"]
    assert pf["model_window"] == 8000 and pf["fits"] is True


def test_compact_summary_events(gov):
    sid = fill(gov, 40)  # enough folded text that the summary is shorter (else the fold is rolled back)
    ev = gov.compact(sid)
    assert ev["kind"] == "compaction" and ev["outcome"] == "ok"
    s = gov.summary(sid)
    assert s["summarizer"] == "extractive" and s["text"] and s["folded"] > 0
    evs = gov.events(sid)
    assert evs[0]["kind"] == "compaction" and evs[0]["data"]["outcome"] == "ok"
    assert mnemo.compaction_counts()["ok"] >= 1


def test_rag_in_context_keyword(mem):
    old = fill(mem, 3)
    s = mem.create_session()
    mem.append(s["id"], "user", "What did we decide about the parser?")
    ctx = mem.context(s["id"], rag=True, rag_scope="all", rag_top_k=2, rag_min_similarity=-1)
    rag = ctx.report["rag"]
    assert rag["enabled"] is True and rag["mode"] == "keyword"
    assert rag["injected"] and all(i["session_id"] == old for i in rag["injected"])
    # a message of its own right before the question, which is sent as it was said
    assert "RELEVANT CONTEXT FROM PAST CONVERSATIONS" in ctx.messages[-2]["content"]
    assert ctx.messages[-1]["content"] == "What did we decide about the parser?"
    assert mem.history(s["id"])[0]["content"] == "What did we decide about the parser?"
    with pytest.raises(mnemo.Invalid, match="rag_scope"):
        mem.context(s["id"], rag=True, rag_scope="everywhere")


def test_keyword_search_with_filters(mem):
    a = fill(mem, 3, namespace="ns-a")
    b = mem.create_session(namespace="ns-b")
    mem.append(b["id"], "user", "the parser again")
    hits = mem.search("parser", mode="keyword")
    assert hits.mode == "keyword" and len(hits) == 7
    assert hits[0]["rank"] == 1 and set(hits[0]) >= {"score", "bm25", "namespace", "message"}
    assert {h["message"]["session_id"] for h in mem.search("parser", namespace="ns-b")} == {b["id"]}
    assert {h["message"]["session_id"] for h in mem.search("parser", session_id=a)} == {a}
    assert {h["message"]["role"] for h in mem.search("parser", role="assistant")} == {"assistant"}
    assert len(mem.search("parser", top_k=2)) == 2
    assert mem.search("parser", until=1) == []
    assert mem.relevant_context("zzzqqq", 200) == ""
    assert mem.relevant_context("parser", 200, namespace="ns-b") == (
        "RELEVANT CONTEXT FROM PAST CONVERSATIONS:\n---\n[USER]: the parser again\n---")
    import datetime
    assert len(mem.search("parser", since=datetime.datetime(2000, 1, 1))) == 7
    with pytest.raises(mnemo.Unavailable):
        mem.search("parser", mode="semantic")
    with pytest.raises(mnemo.Invalid):
        mem.search("")


def test_semantic_and_hybrid_search_with_the_hash_embedder(db_path):
    with mnemo.Memory(db_path, {"embedder.name": "hash", "embedder.mode": "inline"}) as m:
        sid = fill(m, 3)
        assert m.embed_counts()["embedded"] == 6
        hits = m.search("parser decision", mode="semantic", session_id=sid)
        assert hits.mode == "semantic" and hits[0]["similarity"] > 0
        h = m.search("parser", mode="hybrid")
        assert h.mode == "hybrid" and h[0]["semantic_rank"] >= 1 and h[0]["keyword_rank"] >= 1
        assert m.search("parser").mode == "hybrid"  # auto with an embedder
        block = m.relevant_context("parser", 200)
        assert block.startswith("RELEVANT CONTEXT FROM PAST CONVERSATIONS:\n---\n")
        seen = []
        assert m.reindex_embeddings(progress=lambda d, t: seen.append((d, t))) == 6
        assert seen and seen[-1] == (6, 6)


def test_queued_embeddings_and_backfill(db_path):
    with mnemo.Memory(db_path, {"embedder.name": "hash"}) as m:
        fill(m, 2)
        assert m.embed_counts()["queued"] == 4
        assert m.search("postgres", mode="hybrid").not_embedded == 4  # unseen by meaning
        assert m.search("postgres", mode="keyword").not_embedded == 0
        assert m.embed_pending(1) == 1
        assert m.search("postgres", mode="semantic").not_embedded == 3
        assert m.embed_backfill() == 3
        assert m.embed_counts() == {"embedded": 4, "queued": 0}
    with mnemo.Memory(db_path) as m:
        with pytest.raises(mnemo.Unavailable):
            m.embed_pending()


def test_keyword_index_rebuilt_in_the_background(db_path, monkeypatch):
    """A database copied without its keyword index file: the search answers from a scan of the
    newest messages the index does not hold, and Hits says how many (docs/search.md)."""
    with mnemo.Memory(db_path) as m:
        sid = m.create_session()["id"]
        m.append_batch(sid, [{"role": "user", "content": "note %d about plum%d" % (i, i)} for i in range(2100)])
        hits = m.search("plum7", mode="keyword")
        assert (hits.keyword_unindexed, hits.keyword_scanned) == (0, 0)
    for suffix in (".keywords", ".keywords-wal", ".keywords-shm"):
        if os.path.exists(db_path + suffix):
            os.remove(db_path + suffix)
    monkeypatch.setenv("MNEMO_TEST_KEYWORD_HOLD", "1")  # the counts without the thread's pace
    with mnemo.Memory(db_path) as m:
        hits = m.search("plum2099", mode="keyword")
        assert len(hits) == 1
        # PostgreSQL has no index file: each insert indexed its message
        want = (0, 0) if db_path.startswith("postgres") else (2100, 2100)
        assert (hits.keyword_unindexed, hits.keyword_scanned) == want
