"""mnemo.AsyncMemory: the same operations as coroutines, run in a thread executor so the event
loop keeps running while libmnemo works."""
import asyncio
import concurrent.futures
import threading

import pytest

import mnemo


def test_async_round_trip(db_path):
    async def main():
        async with mnemo.AsyncMemory(db_path) as mem:
            s = await mem.create_session(system_prompt="Be brief.")
            await mem.append(s["id"], "user", "hello")
            await mem.append_batch(s["id"], [{"role": "assistant", "content": "hi"}])
            ctx = await mem.context(s["id"], max_tokens=100)
            with pytest.raises(mnemo.NotFound):
                await mem.get_session("0190a5b4-0000-7000-8000-0000000000ff")
            return ctx, await mem.history(s["id"])

    ctx, hist = asyncio.run(main())
    assert [m["role"] for m in ctx.messages] == ["system", "user", "assistant"]
    assert [m["content"] for m in hist] == ["hello", "hi"]


def test_async_methods_keep_the_sync_docstrings():
    assert mnemo.AsyncMemory.context.__doc__ == mnemo.Memory.context.__doc__
    assert asyncio.iscoroutinefunction(mnemo.AsyncMemory.append)


def test_calls_run_off_the_event_loop(db_path):
    """A call whose progress callback waits for the event loop finishes: were the call running on
    the loop's thread, the loop could not set the event and the wait would time out."""

    async def main():
        pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="mnemo-test")
        mem = await mnemo.AsyncMemory.open(db_path, executor=pool)
        s = await mem.create_session()
        await mem.append(s["id"], "user", "x")
        loop_thread = threading.get_ident()
        released = threading.Event()
        seen = []

        def progress(done, total):
            seen.append(threading.current_thread().name)
            assert released.wait(60), "the event loop did not run while the call was in progress"

        call = asyncio.ensure_future(mem.reindex_tokens(progress=progress))
        while not seen:
            await asyncio.sleep(0.01)
        released.set()  # the loop runs while the call waits in its executor thread
        n = await call
        await mem.close()
        pool.shutdown()
        return n, seen, loop_thread

    n, seen, loop_thread = asyncio.run(main())
    assert n == 1 and seen[0].startswith("mnemo-test")


def test_concurrent_async_appends(db_path):
    async def main():
        async with mnemo.AsyncMemory(db_path, {"memory.durability": "normal"}) as mem:
            s = await mem.create_session()
            await asyncio.gather(*(mem.append(s["id"], "user", str(i)) for i in range(40)))
            return await mem.history(s["id"])

    h = asyncio.run(main())
    assert sorted(int(m["content"]) for m in h) == list(range(40))
    assert [m["seq"] for m in h] == list(range(1, 41))
