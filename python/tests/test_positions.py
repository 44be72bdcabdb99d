"""Positions for read-your-writes (docs/scale-out.md#read-your-writes): what Memory.position,
read_after and replica_stats give on each backend. The reads through a real standby are the C
suite's (pgr/api/…) and tests/cli/t1560-nodes-replicas.sh; here, the Python surface."""
import re

import pytest

import mnemo


def test_position_moves_with_commits(mem, db_path, backend, tmp_path):
    sid = mem.session_create()["id"]
    mem.append(sid, "user", "hello")
    # no replicas: nothing to wait for, and no write pays to learn its position
    assert mem.position() == ""
    if backend == "sqlite":
        return
    # with a replica named (here the primary itself, which answers as one that is never behind)
    with mnemo.Memory(db_path, {"postgres.replicas": db_path}) as m:
        m.append(sid, "user", "one")
        first = m.position()
        m.append(sid, "user", "two")
        second = m.position()
        assert re.fullmatch(r"[0-9A-F]+/[0-9A-F]+", first)
        as_int = lambda p: tuple(int(x, 16) for x in p.split("/"))
        assert as_int(second) > as_int(first)
        assert [x["content"] for x in m.history(sid)] == ["hello", "one", "two"]
        st = m.replica_stats()
        assert st["replicas"] == 1 and st["replicas_up"] == 1 and st["on_replica"] >= 1


def test_read_after_another_handles_position(mem, db_path):
    sid = mem.session_create()["id"]
    mem.append(sid, "user", "written by the first handle")
    with mnemo.Memory(db_path) as other:
        other.read_after(mem.position())
        assert [m["content"] for m in other.history(sid)] == ["written by the first handle"]
        other.read_after(None)  # cleared: reads go on as before
        other.read_after("")
        assert len(other.history(sid)) == 1


@pytest.mark.parametrize("bad", ["bogus", "1/2/3", "G/0", "0/" + "F" * 40])
def test_read_after_refuses_what_is_not_a_position(mem, backend, bad):
    if backend == "sqlite" and len(bad) < 32:
        mem.read_after(bad)  # SQLite has no positions: nothing to check a token against
        return
    with pytest.raises(mnemo.Invalid, match="position"):
        mem.read_after(bad)


def test_read_after_type(mem):
    with pytest.raises(mnemo.Invalid, match="position: expected a string"):
        mem.read_after(5)


def test_replica_stats_without_replicas(mem):
    sid = mem.session_create()["id"]
    mem.history(sid)
    assert mem.replica_stats() == {"replicas": 0, "replicas_up": 0, "on_replica": 0, "on_primary": 0,
                                   "waited": 0, "lagging": 0, "down": 0}
