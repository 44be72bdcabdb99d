"""mnemo: conversation memory for LLM agents, over libmnemo (ctypes, standard library only).

    import mnemo
    with mnemo.Memory("chat.db") as mem:
        sid = mem.session_create(system_prompt="You are concise.")["id"]
        mem.append(sid, "user", "What is in the repo?")
        ctx = mem.context_build(sid, max_tokens=4096)
        openai_client.chat.completions.create(model="gpt-4o", messages=ctx.messages)

See docs/python.md. Memory is thread-safe; AsyncMemory is the asyncio form; mnemo.agents.MnemoSession
is an OpenAI Agents SDK session; mnemo.compat.harombe.MemoryManager is harombe's API.
"""
from .aio import AsyncMemory
from .errors import (IO, Busy, Conflict, Corrupt, Expired, Internal, Invalid, LibraryError, Misuse, MnemoError,
                     NoMemory, NotFound, TooBig, Unavailable)
from .memory import (Context, Hits, Memory, budget_split, compaction_counts, count_tokens, encode_tokens, migrate,
                     upgrade, version)
from ._lib import library_path

__version__ = "0.1.0"

__all__ = [
    "Memory", "AsyncMemory", "Context", "Hits", "version", "library_path", "count_tokens", "encode_tokens",
    "budget_split", "compaction_counts", "migrate", "upgrade", "MnemoError", "NotFound", "Invalid", "Busy", "Expired", "TooBig",
    "IO", "Corrupt", "Unavailable", "NoMemory", "Misuse", "Conflict", "Internal", "LibraryError",
]
