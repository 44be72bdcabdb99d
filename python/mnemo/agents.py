"""mnemo.agents.MnemoSession: a session store for the OpenAI Agents SDK (openai-agents), whose
get_items() hands the agent a governed, token-budgeted context instead of the raw list.

    from agents import Agent, Runner
    from mnemo.agents import MnemoSession
    session = MnemoSession("0190…", db="chat.db", max_tokens=8000)
    await Runner.run(agent, "What did we decide?", session=session)

It implements the SDK's Session protocol (agents.memory.session.Session): `session_id`,
`session_settings`, and the coroutines `get_items(limit=None)`, `add_items(items)`, `pop_item()`,
`clear_session()`. Items are Responses API input items:

- messages {"role": "user"|"assistant"|"system"|"developer", "content": str | [parts]} (with or
  without "type": "message", "id", "status") are stored as chat messages (developer as system),
  their text parts joined;
- consecutive {"type": "function_call", "call_id", "name", "arguments"} items become one assistant
  message with `tool_calls`; {"type": "function_call_output", "call_id", "output"} a tool message,
  so mnemo's context keeps calls and results together;
- other items (reasoning, …) travel with the next message of the same add_items call.

Every stored message keeps the exact items it came from (metadata "agents_items"), so
get_items(limit=N) returns the latest N items as they were added, and pop_item() removes exactly
the last item. Messages written by other front ends (CLI, REST, C) are converted to items.

get_items() without a limit returns what mnemo's context builder selects for the session within
`max_tokens` (strategy, summaries, trimmed tool outputs, RAG: docs/context.md), converted to input
items: a summary of folded turns, the kept recent turns, never a tool result without its call.
"""
from __future__ import annotations

import asyncio
import functools
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

from .errors import NotFound
from .memory import HISTORY_MAX_LIMIT, Memory

Item = Dict[str, Any]
META_KEY = "agents_items"
_TEXT_PARTS = ("input_text", "output_text", "text")


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content
                       if isinstance(p, Mapping) and p.get("type") in _TEXT_PARTS)
    return json.dumps(content, ensure_ascii=False)


def items_to_messages(items: List[Item]) -> List[Dict[str, Any]]:
    """Responses input items -> mnemo message dicts (each carrying its items in metadata)."""
    out: List[Dict[str, Any]] = []
    pending: List[Item] = []  # items with no chat form, carried by the next message
    for raw in items:
        item = raw.model_dump(exclude_unset=True) if hasattr(raw, "model_dump") else dict(raw)
        kind = item.get("type")
        if kind == "function_call":
            call = {"id": item["call_id"], "type": "function",
                    "function": {"name": item["name"], "arguments": item.get("arguments") or "{}"}}
            last = out[-1] if out else None
            if last is not None and last["role"] == "assistant" and last.get("tool_calls") and not pending \
                    and last["metadata"][META_KEY][-1].get("type") == "function_call":
                last["tool_calls"].append(call)
                last["metadata"][META_KEY].append(item)
                continue
            msg: Dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        elif kind == "function_call_output":
            msg = {"role": "tool", "content": _text(item.get("output")), "tool_call_id": item["call_id"]}
        elif kind in (None, "message") and "role" in item:
            role = "system" if item["role"] == "developer" else item["role"]
            msg = {"role": role, "content": _text(item.get("content"))}
        else:
            pending.append(item)
            continue
        msg["metadata"] = {META_KEY: pending + [item]}
        pending = []
        out.append(msg)
    if pending:
        if out:
            out[-1]["metadata"][META_KEY].extend(pending)
        else:
            out.append({"role": "assistant", "content": "", "metadata": {META_KEY: pending}})
    return out


def message_to_items(m: Mapping[str, Any]) -> List[Item]:
    """A stored message (or a chat message of a built context) -> Responses input items: the
    items it was stored from when it carries them, else converted."""
    md = m.get("metadata") or {}
    if isinstance(md, Mapping) and isinstance(md.get(META_KEY), list):
        return [dict(i) for i in md[META_KEY]]
    role = m["role"]
    if role == "tool":
        return [{"type": "function_call_output", "call_id": m.get("tool_call_id"), "output": m.get("content") or ""}]
    out: List[Item] = []
    if m.get("content") or not m.get("tool_calls"):
        out.append({"role": role, "content": m.get("content") or ""})
    for c in m.get("tool_calls") or []:
        fn = c.get("function") or {}
        out.append({"type": "function_call", "call_id": c.get("id"), "name": fn.get("name"),
                    "arguments": fn.get("arguments") or "{}"})
    return out


class MnemoSession:
    """An OpenAI Agents SDK session stored in mnemo.

    session_id: the mnemo session (a UUID; a new one when None). It is created on the first
    add_items with `namespace` and `system_prompt` when it does not exist.
    memory: an open Memory (or AsyncMemory) to share; else `db` (a path or URL, None for the CLI's
    database) and `config` open one that this session owns (close() closes it).
    max_tokens: the budget of get_items() without a limit (None: memory.max_history_tokens);
    context_options: more mn_context_build options for it (strategy, model_window, rag, …).
    """

    session_settings = None  # the SDK's SessionSettings; None: the SDK's defaults

    def __init__(self, session_id: Optional[str] = None, *, memory: Any = None,
                 db: Optional[Union[str, os.PathLike]] = None, config: Optional[Mapping[str, Any]] = None,
                 max_tokens: Optional[int] = None, strategy: Optional[str] = None, namespace: Optional[str] = None,
                 system_prompt: Optional[str] = None, context_options: Optional[Mapping[str, Any]] = None):
        if memory is None:
            self.memory, self._owned = Memory(db, config), True
        else:
            self.memory, self._owned = getattr(memory, "sync", memory), False
        self.namespace = namespace
        self.system_prompt = system_prompt
        self.max_tokens = max_tokens
        self.context_options: Dict[str, Any] = dict(context_options or {})
        if strategy is not None:
            self.context_options["strategy"] = strategy
        if session_id is None:
            session_id = self.memory.create_session(namespace=namespace, system_prompt=system_prompt)["id"]
        self.session_id: str = session_id

    def close(self) -> None:
        if self._owned:
            self.memory.close()

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args))

    # -- the protocol ----------------------------------------------------------------------------
    async def get_items(self, limit: Optional[int] = None) -> List[Item]:
        """limit None: the governed context within max_tokens, as input items. limit N: the
        latest N items as they were added, oldest first."""
        return await self._run(self.get_items_sync, limit)

    async def add_items(self, items: List[Item]) -> None:
        """Appends items in one transaction (all or nothing)."""
        await self._run(self.add_items_sync, items)

    async def pop_item(self) -> Optional[Item]:
        """Removes and returns the most recent item (None when the session is empty)."""
        return await self._run(self.pop_item_sync)

    async def clear_session(self) -> None:
        """Removes every item; the session keeps its id, namespace and system prompt."""
        await self._run(self.clear_session_sync)

    # -- synchronous forms ------------------------------------------------------------------------
    def get_items_sync(self, limit: Optional[int] = None) -> List[Item]:
        try:
            if limit is None:
                ctx = self.memory.context(self.session_id, max_tokens=self.max_tokens, **self.context_options)
                return [i for m in ctx.messages for i in message_to_items(m)]
            if limit <= 0:
                return []
            # each message holds at least one item: the newest `limit` messages are enough (past
            # history's largest limit, every message)
            msgs = self.memory.history(self.session_id, limit=limit if limit <= HISTORY_MAX_LIMIT else None,
                                       tail=True)
        except NotFound:
            return []
        items = [i for m in msgs for i in message_to_items(m)]
        return items[-limit:]

    def add_items_sync(self, items: List[Item]) -> None:
        msgs = items_to_messages(list(items))
        if not msgs:
            return
        try:
            self.memory.append_batch(self.session_id, msgs)
        except NotFound:
            try:
                self.memory.create_session(id=self.session_id, namespace=self.namespace,
                                           system_prompt=self.system_prompt)
            except Exception:
                pass  # created meanwhile by another writer: the retry below appends
            self.memory.append_batch(self.session_id, msgs)

    def pop_item_sync(self) -> Optional[Item]:
        try:
            last = self.memory.history(self.session_id, limit=1, tail=True)
        except NotFound:
            return None
        if not last:
            return None
        m = last[0]
        items = message_to_items(m)
        self.memory.delete_message(self.session_id, m["id"])
        if len(items) > 1:  # the message stood for several items: put back all but the last
            self.memory.append_batch(self.session_id, items_to_messages(items[:-1]))
        return items[-1]

    def clear_session_sync(self) -> None:
        try:
            s = self.memory.get_session(self.session_id)
        except NotFound:
            return
        self.memory.delete_session(self.session_id)
        self.memory.create_session(id=s["id"], namespace=s["namespace"], system_prompt=s["system_prompt"],
                                   metadata=s["metadata"], tool_name=s["tool_name"],
                                   ttl_ms=s["ttl_ms"] or -1, max_turns=s["max_turns"] or -1)
