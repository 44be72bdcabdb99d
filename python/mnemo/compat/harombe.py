"""harombe's MemoryManager (seed 000) over mnemo: swap the import and keep the code.

    # from harombe.memory.manager import MemoryManager
    from mnemo.compat.harombe import MemoryManager
    mm = MemoryManager("~/.harombe/memory.db", max_history_tokens=4096)

Same methods, arguments, defaults and return types as harombe's manager.py, and the seed's own
signatures beside them: `load_session(session_id)` (the whole history) and
`get_recent_messages(session_id, max_tokens=N)` (a token budget, where the real project's
positional `count` is a number of messages). What changes:
storage is libmnemo (durable appends, exact token counts, keyword search with no setup);
`embedding_client` / `vector_store` are accepted and ignored: search uses mnemo's configured
embedder (`embedder.name`, e.g. {"embedder.name": "hash"} through `config`, or a harombe file's
`memory.vector_store.embedding_provider`) and falls back to keyword search without one, where
harombe raised RuntimeError; `backfill_embeddings` embeds every
message without a vector (mnemo embed --backfill). Messages come back as `Message` objects with
harombe's fields (role, content, tool_calls, tool_call_id, name); harombe's own Message objects
and plain dicts are accepted by save_message.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import json
import os
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

from ..errors import Invalid, NotFound
from ..memory import HISTORY_MAX_LIMIT, Memory


@dataclass
class ToolCall:
    """A tool call as harombe's Message carries it."""
    id: str
    name: str
    arguments: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Message:
    """harombe.llm.client.Message's fields."""
    role: str
    content: Optional[str] = None
    tool_calls: Optional[List[ToolCall]] = None
    tool_call_id: Optional[str] = None
    name: Optional[str] = None


@dataclass
class SessionMetadata:
    user: Optional[str] = None
    tags: List[str] = field(default_factory=list)
    title: Optional[str] = None
    custom: Dict[str, Any] = field(default_factory=dict)


@dataclass
class SessionRecord:
    id: str
    created_at: _dt.datetime
    updated_at: _dt.datetime
    system_prompt: str
    metadata: SessionMetadata = field(default_factory=SessionMetadata)


def _metadata_dict(metadata: Any) -> Dict[str, Any]:
    if metadata is None:
        return {}
    if hasattr(metadata, "model_dump"):  # harombe's pydantic SessionMetadata
        return metadata.model_dump()
    if isinstance(metadata, dict):
        return dict(metadata)
    return {k: getattr(metadata, k) for k in ("user", "tags", "title", "custom") if hasattr(metadata, k)}


def _time(ms: int) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)


def _record(s: Dict[str, Any]) -> SessionRecord:
    md = s.get("metadata") or {}
    known = {k: md[k] for k in ("user", "tags", "title", "custom") if k in md}
    return SessionRecord(id=s["id"], created_at=_time(s["created_at"]), updated_at=_time(s["updated_at"]),
                         system_prompt=s.get("system_prompt") or "", metadata=SessionMetadata(**known))


def _to_message(m: Dict[str, Any]) -> Message:
    calls = None
    if m.get("tool_calls"):
        calls = []
        for c in m["tool_calls"]:
            fn = c.get("function", {})
            args = fn.get("arguments") or "{}"
            try:
                parsed = json.loads(args) if isinstance(args, str) else args
            except ValueError:
                parsed = {"arguments": args}
            calls.append(ToolCall(id=c.get("id", ""), name=fn.get("name", ""),
                                  arguments=parsed if isinstance(parsed, dict) else {"arguments": parsed}))
    return Message(role=m["role"], content=m.get("content"), tool_calls=calls, tool_call_id=m.get("tool_call_id"),
                   name=m.get("name"))


def _newest_within(msgs: List[Dict[str, Any]], budget: int) -> List[Dict[str, Any]]:
    """The newest of msgs whose stored token counts add up to at most budget, oldest first; never
    starting with a tool result cut off from the call that asked for it."""
    if sum(m["tokens"] for m in msgs) <= budget:
        return msgs
    out: List[Dict[str, Any]] = []
    used = 0
    for m in reversed(msgs):
        if used + m["tokens"] > budget:
            break
        out.insert(0, m)
        used += m["tokens"]
    while out and out[0]["role"] == "tool":
        out.pop(0)
    return out


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _from_message(message: Any) -> Dict[str, Any]:
    calls = _get(message, "tool_calls")
    openai_calls = None
    if calls:
        openai_calls = []
        for c in calls:
            if isinstance(c, dict) and "function" in c:  # already the OpenAI shape
                openai_calls.append(c)
                continue
            args = _get(c, "arguments")
            openai_calls.append({"id": _get(c, "id"), "type": "function",
                                 "function": {"name": _get(c, "name"),
                                              "arguments": args if isinstance(args, str) else json.dumps(args or {})}})
    return {"role": _get(message, "role"), "content": _get(message, "content"), "tool_calls": openai_calls,
            "tool_call_id": _get(message, "tool_call_id"), "name": _get(message, "name")}


class MemoryManager:
    """High-level memory management with harombe's interface, stored by libmnemo."""

    def __init__(self, storage_path: Union[str, os.PathLike], max_history_tokens: int = 4096,
                 embedding_client: Any = None, vector_store: Any = None, *, config: Optional[Dict[str, Any]] = None):
        self.memory = Memory(os.path.expanduser(os.fspath(storage_path)), config)
        self.max_history_tokens = max_history_tokens
        self.embedding_client = embedding_client
        self.vector_store = vector_store

    @property
    def semantic_search_enabled(self) -> bool:
        """True when mnemo has an embedder configured (search is keyword-only otherwise)."""
        return self.memory.settings.get("embedder.name", "none") != "none"

    def close(self) -> None:
        self.memory.close()

    # -- sessions --------------------------------------------------------------------------------
    def create_session(self, system_prompt: str, metadata: Any = None, session_id: Optional[str] = None) -> str:
        """Creates a session; returns its id (a new UUID unless session_id is given)."""
        md = _metadata_dict(metadata)
        s = self.memory.session_create(id=session_id or str(uuid.uuid4()), system_prompt=system_prompt,
                                       metadata=md, title=md.get("title"))
        return s["id"]

    def get_session(self, session_id: str) -> Optional[SessionRecord]:
        """The session record, or None when there is none."""
        try:
            return _record(self.memory.session_get(session_id))
        except NotFound:
            return None

    def list_sessions(self, limit: int = 10, offset: int = 0) -> List[SessionRecord]:
        """Sessions, most recently active first."""
        return [_record(s) for s in self.memory.session_list(limit=limit, offset=offset)]

    def delete_session(self, session_id: str) -> bool:
        """Deletes a session and its messages; False when there was none."""
        try:
            self.memory.session_delete(session_id)
            return True
        except NotFound:
            return False

    def session_exists(self, session_id: str) -> bool:
        return self.get_session(session_id) is not None

    def get_or_create_session(self, session_id: str, system_prompt: str, metadata: Any = None) -> Tuple[str, bool]:
        if self.session_exists(session_id):
            return session_id, False
        self.create_session(system_prompt=system_prompt, metadata=metadata, session_id=session_id)
        return session_id, True

    def prune_old_sessions(self, days: int = 30) -> int:
        """Deletes sessions not updated for `days` days; returns how many."""
        return self.memory.prune(days)

    # -- messages --------------------------------------------------------------------------------
    def save_message(self, session_id: str, message: Any) -> int:
        """Saves a message (harombe Message, this module's Message or a dict); returns its id.
        An unknown session is created, as harombe's error handling says."""
        return self.memory.append_message(session_id, _from_message(message), create=True)["id"]

    def load_history(self, session_id: str, max_tokens: Optional[int] = None) -> List[Message]:
        """The most recent messages that fit max_tokens (default max_history_tokens), oldest first,
        counted with the tokens mnemo stored for each message. The list never starts with a tool
        result cut off from the call that asked for it."""
        budget = self.max_history_tokens if max_tokens is None else max_tokens
        return [_to_message(m) for m in _newest_within(self.memory.history(session_id), budget)]

    def load_session(self, session_id: str) -> List[Message]:
        """Seed 000's name: the session's whole history, oldest first (load_history cuts it to a
        token budget). An unknown session raises mnemo.NotFound, as load_history does."""
        return [_to_message(m) for m in self.memory.history(session_id)]

    def get_recent_messages(self, session_id: str, count: Optional[int] = None, *,
                            max_tokens: Optional[int] = None) -> List[Message]:
        """The newest messages, oldest first. `count` (the real project's, positional or by name):
        at most that many. `max_tokens` (seed 000's, by name only): those within that many tokens,
        as load_history(session_id, max_tokens) chooses them. With neither, the last 10; with
        both, both limits apply. A negative count or budget is mnemo.Invalid."""
        if max_tokens is None:
            return [_to_message(m) for m in self._tail(session_id, 10 if count is None else count)]
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 0:
            raise Invalid("max_tokens: must be a whole number of tokens, 0 or more")
        msgs = self.memory.history(session_id) if count is None else self._tail(session_id, count)
        return [_to_message(m) for m in _newest_within(msgs, max_tokens)]

    def _tail(self, session_id: str, count: int) -> List[Dict[str, Any]]:
        """The last `count` stored messages, oldest first."""
        if count == 0:  # the newest none (a negative count is Invalid, from history())
            return []
        if count > HISTORY_MAX_LIMIT:  # more than history() takes at once: every message, the newest kept
            return self.memory.history(session_id)[-count:]
        return self.memory.history(session_id, limit=count, tail=True)

    def clear_history(self, session_id: str) -> int:
        """Deletes every message of the session, keeping the session; returns how many."""
        msgs = self.memory.history(session_id, all=True)
        for m in msgs:
            self.memory.message_delete(session_id, m["id"])
        return len(msgs)

    def get_message_count(self, session_id: str) -> int:
        return self.memory.session_get(session_id)["message_count"]

    # -- search ----------------------------------------------------------------------------------
    def _search(self, query: str, top_k: int, session_id: Optional[str], min_similarity: Optional[float]) -> List[Message]:
        hits = self.memory.search(query, top_k=top_k, session_id=session_id, min_similarity=min_similarity or 0.0)
        return [Message(role=h["message"]["role"], content=h["message"]["content"]) for h in hits]

    async def search_similar(self, query: str, top_k: int = 5, session_id: Optional[str] = None,
                             min_similarity: Optional[float] = None) -> List[Message]:
        """Messages similar to query, most relevant first (hybrid with an embedder, else keyword)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, self._search, query, top_k, session_id, min_similarity)

    async def get_relevant_context(self, query: str, max_tokens: int = 2048,
                                   session_id: Optional[str] = None) -> List[Message]:
        """Relevant messages (over-fetching 20) while their stored token counts fit max_tokens."""
        candidates = await self.search_similar(query=query, top_k=20, session_id=session_id)
        out: List[Message] = []
        used = 0
        for m in candidates:
            n = self.memory.count_tokens(m.content or "")
            if used + n > max_tokens:
                break
            out.append(m)
            used += n
        return out

    def backfill_embeddings(self, session_id: Optional[str] = None, batch_size: int = 100) -> int:
        """Embeds every message that has no vector yet (all sessions: mnemo's queue is global;
        session_id and batch_size are accepted for compatibility). Returns how many."""
        return self.memory.embed_backfill()
