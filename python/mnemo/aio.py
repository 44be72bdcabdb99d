"""mnemo.AsyncMemory: the Memory API for asyncio. Each call runs in a thread executor (libmnemo
releases the GIL while it works), so a durable append or a context build never blocks the event
loop. Every method of Memory exists here as a coroutine with the same arguments and result.

    async with mnemo.AsyncMemory("chat.db") as mem:
        s = await mem.session_create(system_prompt="Be brief.")
        await mem.append(s["id"], "user", "hello")
        ctx = await mem.context_build(s["id"], max_tokens=4096)
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import os
from typing import Any, Mapping, Optional, Union

from .memory import Memory

# The Memory methods that become coroutines (everything that touches the library), by the names
# of docs/names.md; Memory's older names for them (create_session, context, …) follow below.
_METHODS = (
    "session_create", "session_get", "resolve_session", "session_list", "session_update", "session_delete",
    "session_fork", "session_resume", "prune", "gc", "session_files", "file_should_include", "append",
    "append_message", "append_batch", "append_many", "message_delete", "history", "message_pin", "unpin",
    "context_build", "summary_get", "compact", "events", "search", "relevant_context", "embed_pending",
    "embed_backfill", "reindex_embeddings", "reindex_tokens", "embed_counts", "state_get", "state_merge_params",
    "state_set_waiting", "state_unwait", "state_set_result", "state_set_plan", "state_clear", "export", "import_",
    "count_tokens", "stats", "memory_add", "memory_search", "memory_list", "memory_get", "memory_update",
    "memory_delete", "memory_forget", "memory_history", "memory_extract", "memory_extract_queue",
    "memory_extract_job", "message_edit", "session_clear", "session_set_max_turns", "namespace_forget",
    "thread_summary_get", "vacuum", "checkpoint_put", "checkpoint_put_writes", "checkpoint_get", "checkpoint_list",
    "checkpoint_delete_thread", "document_put", "document_get", "document_delete", "document_search",
    "document_paths",
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
# Memory's older names (docs/names.md: `create_session = session_create` in its class body): the
# same coroutine under each.
for _name, _fn in list(vars(Memory).items()):
    if _name not in _METHODS and getattr(_fn, "__name__", _name) in _METHODS:
        setattr(AsyncMemory, _name, getattr(AsyncMemory, _fn.__name__))
del _name, _fn
