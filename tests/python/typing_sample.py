"""typing_sample.py — code a user of mnemo.AsyncMemory writes, type-checked by tests/python/typing.sh:
mypy must accept it as written, and must see the result types (the last line is wrong on purpose
when the script appends it)."""
import asyncio

import mnemo


async def main() -> None:
    async with mnemo.AsyncMemory("chat.db") as mem:
        s = await mem.create_session(system_prompt="Be brief.")
        await mem.append(s["id"], "user", "hello")
        ctx = await mem.context(s["id"], max_tokens=4096)
        print(ctx.messages, await mem.history(s["id"], limit=10))
        hits = await mem.search("hello", top_k=3)
        await mem.remember("likes tea", namespace="alice")
        print(len(hits), await mem.recall("tea", namespace="alice"))
        await mem.clear_session(s["id"])


asyncio.run(main())
