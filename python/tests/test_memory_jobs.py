"""Extraction jobs through Memory.memory_extract_queue and memory_extract_job, the API operations of
the same names (docs/memory.md, "REST and MCP"): the dict REST answers, the job run by this
Memory's background worker, its refusals, and the coroutines of AsyncMemory."""
import asyncio
import time

import pytest

import mnemo

KEYS = ["data", "error", "finished_at", "id", "namespace", "queued_at", "session_id", "state", "upto_seq"]


def ended(mem, job_id):
    """The job once it is neither pending nor running (the deadline only bounds a hung test)."""
    deadline = time.time() + 120
    while time.time() < deadline:
        job = mem.memory_extract_job(job_id)
        if job["state"] not in ("pending", "running"):
            return job
        time.sleep(0.02)
    pytest.fail("the extraction job did not end")


def test_queue_then_done_with_the_memories(mem):
    s = mem.create_session(key="ada")
    mem.append(s["id"], "user", "My name is Ada")
    mem.append(s["id"], "user", "I live in Paris")
    job = mem.memory_extract_queue("ada", data={"ticket": 7})
    assert sorted(job) == KEYS
    assert (job["session_id"], job["namespace"], job["data"], job["upto_seq"], job["error"]) == \
        (s["id"], "default", {"ticket": 7}, 2, None)
    assert job["state"] in ("pending", "running") and job["queued_at"] > 0
    done = ended(mem, job["id"])
    assert (done["id"], done["state"], done["error"], done["data"]) == (job["id"], "done", None, {"ticket": 7})
    assert done["finished_at"] >= done["queued_at"]
    assert sorted(m["text"] for m in mem.memory_list()) == ["User lives in Paris", "User's name is Ada"]
    # no data: {}; the data may be given as JSON text too
    assert mem.memory_extract_queue(s["id"])["data"] == {}
    assert mem.memory_extract_queue(s["id"], data='{"a": [1]}')["data"] == {"a": [1]}


def test_refusals(mem):
    s = mem.create_session()
    with pytest.raises(mnemo.Invalid, match="not a UUID"):
        mem.memory_extract_job("not-a-job")
    with pytest.raises(mnemo.NotFound):
        mem.memory_extract_job("0190a000-0000-7000-8000-000000000000")
    with pytest.raises(mnemo.NotFound):
        mem.memory_extract_queue("no-such-session")
    with pytest.raises(mnemo.Invalid, match="data"):
        mem.memory_extract_queue(s["id"], data="[1]")
    with pytest.raises(mnemo.TooBig, match="data"):
        mem.memory_extract_queue(s["id"], data={"x": "y" * 5000})


def test_a_job_queued_by_a_closed_memory_runs_when_read(db_path):
    with mnemo.Memory(db_path) as m:
        s = m.create_session()
        m.append(s["id"], "user", "My city is Oslo.")
        job = m.memory_extract_queue(s["id"])
    # closing dropped the run unless it had started; reading the job queues it again here
    with mnemo.Memory(db_path) as m:
        assert ended(m, job["id"])["state"] == "done"
        assert [x["text"] for x in m.memory_list()] == ["User's city is Oslo"]


def test_async(db_path):
    async def main():
        async with mnemo.AsyncMemory(db_path) as m:
            s = await m.create_session()
            await m.append(s["id"], "user", "My name is Bo")
            job = await m.memory_extract_queue(s["id"])
            while job["state"] in ("pending", "running"):
                await asyncio.sleep(0.02)
                job = await m.memory_extract_job(job["id"])
            return job

    assert asyncio.run(main())["state"] == "done"
