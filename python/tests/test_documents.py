"""Documents (LangGraph's store; docs/documents.md) through Memory.document_put, document_get,
document_delete, document_search and document_paths, the API operations of the same names:
keyword arguments named as REST's parameters, dicts shaped as its document objects (the same the
CLI prints with --json), its refusals; time to live, export and import."""
import asyncio
import json
import time

import pytest

import mnemo

DOC_KEYS = ["namespace", "path", "key", "value", "created_at", "updated_at", "expires_at", "score"]


def keys(docs):
    return [d["path"] + "/" + d["key"] for d in docs]


@pytest.fixture
def filled(mem, monkeypatch):
    """Four documents of the default namespace, written a second apart in this order (the
    library's clock fixed by the test), and one of team-a."""
    for i, (path, key, value) in enumerate([("users.bob", "prefs", {"theme": "light", "age": 12}),
                                            ("users.alice", "prefs", {"theme": "dark", "age": 32}),
                                            ("usersx.carol", "prefs", {"theme": "dark", "age": 40}),
                                            ("teams.core", "members", {"size": 3})]):
        monkeypatch.setenv("MNEMO_TEST_NOW_MS", str(1700000000000 + 1000 * i))
        mem.document_put(path, key, value)
    mem.document_put("users.alice", "prefs", {"theme": "team"}, namespace="team-a")
    monkeypatch.delenv("MNEMO_TEST_NOW_MS")
    return mem


def test_put_and_get_give_the_document_object(mem):
    d = mem.document_put("users.alice", "prefs", {"theme": "dark", "age": 31})
    assert list(d) == DOC_KEYS
    assert d == {"namespace": "default", "path": "users.alice", "key": "prefs", "value": {"theme": "dark", "age": 31},
                 "created_at": d["created_at"], "updated_at": d["updated_at"], "expires_at": None, "score": None}
    assert d["updated_at"] >= d["created_at"] > 0
    assert mem.document_get("users.alice", "prefs") == d
    # a put replaces; a JSON object's text is a value too
    again = mem.document_put("users.alice", "prefs", '{"theme": "light"}')
    assert mem.document_get("users.alice", "prefs")["value"] == again["value"] == {"theme": "light"}
    # another namespace: another document at the same address
    mem.document_put("users.alice", "prefs", {"theme": "team"}, namespace="team-a")
    assert mem.document_get("users.alice", "prefs", namespace="team-a")["value"] == {"theme": "team"}
    assert mem.document_get("users.alice", "prefs")["value"] == {"theme": "light"}
    with pytest.raises(mnemo.NotFound, match="'prefs' at path 'users.bob' not found"):
        mem.document_get("users.bob", "prefs")


def test_search_scopes_by_prefix_filters_and_pages(filled):
    mem = filled
    assert keys(mem.document_search("users")) == ["users.alice/prefs", "users.bob/prefs"]  # not usersx
    assert keys(mem.document_search()) == ["teams.core/members", "usersx.carol/prefs", "users.alice/prefs",
                                           "users.bob/prefs"]  # newest updated first
    assert [d["value"] for d in mem.document_search("users", namespace="team-a")] == [{"theme": "team"}]
    assert keys(mem.document_search(filter={"theme": "dark"})) == ["usersx.carol/prefs", "users.alice/prefs"]
    assert keys(mem.document_search(filter={"age": {"$gte": 18, "$lt": 40}})) == ["users.alice/prefs"]
    assert keys(mem.document_search("users", filter='{"theme": {"$ne": "dark"}}')) == ["users.bob/prefs"]
    assert keys(mem.document_search(filter={"age": {"$in": [12, 40]}})) == ["usersx.carol/prefs", "users.bob/prefs"]
    assert keys(mem.document_search(limit=2, offset=1)) == ["usersx.carol/prefs", "users.alice/prefs"]
    assert mem.document_search("nobody.here") == []
    assert all(list(d) == DOC_KEYS and d["score"] is None for d in mem.document_search())
    with pytest.raises(mnemo.Unavailable, match="query"):
        mem.document_search(query="dark theme")  # no embedder


def test_search_ranks_by_meaning(db_path):
    with mnemo.Memory(db_path, {"embedder.name": "hash"}) as mem:
        mem.document_put("notes", "n1", {"text": "the cat sat on the mat"}, index=["text"])
        mem.document_put("notes", "n2", {"text": "quarterly revenue report"})
        mem.document_put("notes", "n3", {"text": "cat mat"}, index=False)
        got = mem.document_search("notes", query="a cat on a mat")
        assert [d["key"] for d in got] == ["n1", "n2", "n3"]
        assert isinstance(got[0]["score"], float) and got[0]["score"] > got[1]["score"]
        assert got[2]["score"] is None  # no vector: after the others


def test_paths(mem):
    for p in ("a.b.c", "a.b.d", "a.e", "x.b.c"):
        mem.document_put(p, "k", {}, namespace="tree")
    assert mem.document_paths(namespace="tree") == ["a.b.c", "a.b.d", "a.e", "x.b.c"]
    assert mem.document_paths(prefix="a", namespace="tree") == ["a.b.c", "a.b.d", "a.e"]
    assert mem.document_paths(prefix="*.b", namespace="tree") == ["a.b.c", "a.b.d", "x.b.c"]
    assert mem.document_paths(suffix="c", namespace="tree") == ["a.b.c", "x.b.c"]
    assert mem.document_paths(max_depth=2, namespace="tree") == ["a.b", "a.e", "x.b"]
    assert mem.document_paths(limit=2, offset=1, namespace="tree") == ["a.b.d", "a.e"]
    assert mem.document_paths() == []


def test_delete(filled):
    mem = filled
    assert mem.document_delete("users.bob", "prefs") == {"deleted": 1}
    with pytest.raises(mnemo.NotFound):
        mem.document_get("users.bob", "prefs")
    assert mem.document_delete("users.bob", "prefs") == {"deleted": 0}
    assert keys(mem.document_search("users")) == ["users.alice/prefs"]


def test_time_to_live(mem, monkeypatch):
    # the library's clock fixed by the test: reads restart the time unless refresh_ttl=False
    monkeypatch.setenv("MNEMO_TEST_NOW_MS", "1000000")
    assert mem.document_put("cache.r", "k", {}, ttl_ms=5000)["expires_at"] == 1005000
    monkeypatch.setenv("MNEMO_TEST_NOW_MS", "1003000")
    assert mem.document_get("cache.r", "k", refresh_ttl=False)["expires_at"] == 1005000
    assert mem.document_get("cache.r", "k")["expires_at"] == 1008000
    monkeypatch.setenv("MNEMO_TEST_NOW_MS", "1007000")
    assert [d["expires_at"] for d in mem.document_search("cache")] == [1012000]
    assert [d["expires_at"] for d in mem.document_search("cache", refresh_ttl=False)] == [1012000]
    monkeypatch.setenv("MNEMO_TEST_NOW_MS", "1012001")
    with pytest.raises(mnemo.NotFound):
        mem.document_get("cache.r", "k")
    monkeypatch.delenv("MNEMO_TEST_NOW_MS")
    # and on the real clock
    d = mem.document_put("cache.short", "k", {"v": 1}, ttl_ms=50)
    assert d["expires_at"] - d["updated_at"] == 50
    time.sleep(0.2)
    with pytest.raises(mnemo.NotFound):
        mem.document_get("cache.short", "k")
    assert mem.document_search("cache") == [] and mem.document_paths() == []
    mem.gc()
    assert '"type":"document"' not in mem.export()  # gc took the expired rows


def test_refusals_name_the_parameter(mem):
    mem.document_put("a", "k", {"n": 1})
    cases = [
        (lambda: mem.document_put("a..b", "k", {}), "path"),
        (lambda: mem.document_get("a..b", "k"), "path"),
        (lambda: mem.document_put("a", "", {}), "key"),
        (lambda: mem.document_put("a", "k", [1]), "value"),
        (lambda: mem.document_put("a", "k", "[1]"), "value"),
        (lambda: mem.document_put("a", "k", '{"a":'), "value"),
        (lambda: mem.document_put("a", "k", {}, index="title"), "index"),
        (lambda: mem.document_put("a", "k", {}, index=[1]), r"index\[0\]"),
        (lambda: mem.document_put("a", "k", {}, index=[]), "index"),
        (lambda: mem.document_put("a", "k", {}, ttl_ms=-1), "ttl_ms"),
        (lambda: mem.document_put("a", "k", {}, ttl_ms=3153600000001), "ttl_ms"),
        (lambda: mem.document_put("a", "k", {}, ttl_ms=1.5), "ttl_ms"),
        (lambda: mem.document_get("a", "k", refresh_ttl=1), "refresh_ttl"),
        (lambda: mem.document_search(filter={"n": {"$foo": 1}}), r"filter\.n: unknown operator '\$foo'"),
        (lambda: mem.document_search(filter=[1]), "filter"),
        (lambda: mem.document_search(limit=0), "limit"),
        (lambda: mem.document_search(limit=1001), "limit"),
        (lambda: mem.document_search(offset=-1), "offset"),
        (lambda: mem.document_search(offset=100001), "offset"),
        (lambda: mem.document_search(query=""), "query"),
        (lambda: mem.document_paths(max_depth=0), "max_depth"),
        (lambda: mem.document_paths(limit=True), "limit"),
        (lambda: mem.document_paths(prefix="a..b"), "prefix"),
    ]
    for call, field in cases:
        with pytest.raises(mnemo.Invalid, match=field):
            call()
    with pytest.raises(TypeError):
        mem.document_search("a", None)  # keyword arguments, as REST names them
    assert [d["value"] for d in mem.document_search()] == [{"n": 1}]  # nothing else was written


def test_the_cli_prints_the_same_dicts(filled, cli):
    mem = filled
    assert json.loads(cli("document", "get", "users.alice", "prefs", "--json")) == \
        mem.document_get("users.alice", "prefs")
    assert json.loads(cli("document", "search", "users", "--json")) == mem.document_search("users")
    assert json.loads(cli("document", "paths", "--max-depth", "1", "--json")) == mem.document_paths(max_depth=1)
    cli("document", "put", "cli.made", "k", "--value", '{"by": "cli"}')
    assert mem.document_get("cli.made", "k")["value"] == {"by": "cli"}


def test_export_and_import_carry_them(filled, new_db):
    mem = filled
    text = mem.export()
    assert sum(line.startswith('{"type":"document"') for line in text.splitlines()) == 5
    with mnemo.Memory(new_db("copy")) as copy:
        copy.import_(text)
        for ns in ("default", "team-a"):
            assert copy.document_search(namespace=ns, refresh_ttl=False) == \
                mem.document_search(namespace=ns, refresh_ttl=False)


def test_async_memory_has_them(db_path):
    async def main():
        async with mnemo.AsyncMemory(db_path) as amem:
            put = await amem.document_put("a.b", "k", {"v": 1})
            got = await amem.document_get("a.b", "k")
            found = await amem.document_search("a")
            paths = await amem.document_paths()
            deleted = await amem.document_delete("a.b", "k")
        return put, got, found, paths, deleted

    put, got, found, paths, deleted = asyncio.run(main())
    assert got == put and found == [put] and paths == ["a.b"] and deleted == {"deleted": 1}
