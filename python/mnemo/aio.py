"""mnemo.AsyncMemory: the Memory API for asyncio. Each call runs in a thread executor (libmnemo
releases the GIL while it works), so a durable append or a context build never blocks the event
loop. Every method of Memory exists here as a coroutine with the same arguments and result.

    async with mnemo.AsyncMemory("chat.db") as mem:
        s = await mem.create_session(system_prompt="Be brief.")
        await mem.append(s["id"], "user", "hello")
        ctx = await mem.context(s["id"], max_tokens=4096)
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
from typing import Any, Mapping, Optional, Union

from .memory import Memory

# The Memory methods that become coroutines (everything that touches the library).
_METHODS = (
    "create_session", "get_session", "resolve_session", "list_sessions", "update_session", "delete_session", "fork", "resume",
    "prune", "gc", "files", "file_should_include", "append", "append_message", "append_batch", "append_many",
    "delete_message", "history", "pin", "unpin", "context", "summary", "compact", "events", "search",
    "relevant_context", "embed_pending", "embed_backfill", "reindex_embeddings", "reindex_tokens",
    "embed_counts", "state", "merge_params", "set_waiting", "set_result", "set_plan", "clear_state", "export",
    "import_", "count_tokens", "stats", "remember", "recall", "memory_list", "memory_get", "memory_update",
    "memory_delete", "forget", "memory_history", "memory_extract", "memory_extract_queue",
    "memory_extract_job", "edit_message", "clear_session",
    "set_max_turns", "forget_namespace", "handover", "vacuum", "checkpoint_put", "checkpoint_put_writes",
    "checkpoint_get", "checkpoint_list", "checkpoint_delete_thread", "document_put", "document_get",
    "document_delete", "document_search", "document_paths",
)


class AsyncMemory:
    """An open mnemo database for asyncio code; see Memory for every method. `executor`: the
    concurrent.futures executor the calls run in (None: the event loop's default executor).
    Opening happens in the constructor (quick); use `await AsyncMemory.open(...)` to open in the
    executor too."""

    def __init__(self, target: Optional[Union[str, os.PathLike]] = None, config: Optional[Mapping[str, Any]] = None,
                 *, config_file: Optional[Union[str, os.PathLike]] = None,
                 executor: Optional[concurrent.futures.Executor] = None, memory: Optional[Memory] = None):
        self.sync = memory if memory is not None else Memory(target, config, config_file=config_file)
        self._executor = executor

    @classmethod
    async def open(cls, target: Optional[Union[str, os.PathLike]] = None, config: Optional[Mapping[str, Any]] = None,
                   *, config_file: Optional[Union[str, os.PathLike]] = None,
                   executor: Optional[concurrent.futures.Executor] = None) -> "AsyncMemory":
        """Opens the database in the executor (opening may migrate a schema or wait on a lock)."""
        loop = asyncio.get_running_loop()
        mem = await loop.run_in_executor(executor, functools.partial(Memory, target, config, config_file=config_file))
        return cls(memory=mem, executor=executor)

    async def _run(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(fn, *args, **kwargs))

    async def close(self) -> None:
        """Closes the database once the calls in flight return (waits in the executor)."""
        await self._run(self.sync.close)

    async def __aenter__(self) -> "AsyncMemory":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @property
    def path(self) -> str:
        return self.sync.path

    @property
    def tokenizer(self) -> str:
        return self.sync.tokenizer

    @property
    def closed(self) -> bool:
        return self.sync.closed

    def __repr__(self) -> str:
        return "<mnemo.AsyncMemory %s>" % ("closed" if self.closed else repr(self.path))


def _make(name: str) -> Any:
    sync = getattr(Memory, name)

    @functools.wraps(sync)
    async def method(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await self._run(getattr(self.sync, name), *args, **kwargs)

    return method


for _name in _METHODS:
    setattr(AsyncMemory, _name, _make(_name))
del _name
