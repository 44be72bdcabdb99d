"""mnemo.agents.MnemoSession: a session store for the OpenAI Agents SDK (openai-agents), the twin
of the TypeScript package's session (js/src/agents.ts): items are stored as that one stores them,
so each reads exactly what the other wrote.

    from agents import Agent, Runner
    from mnemo.agents import MnemoSession
    session = MnemoSession("0190…", db="chat.db", max_tokens=8000)
    await Runner.run(agent, "What did we decide?", session=session)

It implements the SDK's Session protocol (agents.memory.session.Session): `session_id`,
`session_settings`, and the coroutines `get_items(limit=None)`, `add_items(items)`, `pop_item()`,
`clear_session()`. Items are Responses API input items, each stored as one mnemo message (the
table of js/src/items.ts) so the CLI, the context builder and search see a normal conversation:

- a message {"role", "content"} (with or without "type": "message") is a message of its role
  (developer as system; another role an empty assistant message), the text of its content;
- {"type": "function_call", "call_id", "name", "arguments"} an assistant message with one tool
  call; consecutive ones share one assistant message, because the context builder sends tool
  results only right after the message holding all their calls;
- {"type": "function_call_output", "call_id", "output"} a tool message;
- anything else (reasoning, compaction, hosted tool calls, …) an empty assistant message.

The item itself is kept in the message's metadata, as "agents_item" (the key of js/src/items.ts),
or "agents_items" for the calls of one message, and returned from there: ids, reasoning,
compaction and every field come back as added. Messages other front ends wrote (CLI, REST, C), and
the messages of a governed context, are converted to items.

get_items(limit) returns the newest `limit` stored items (limit None: session_settings.limit).
Without either it returns the governed context: mnemo's context for the session within
`max_tokens` (docs/context.md); when that is the stored history as it is (nothing dropped, folded,
trimmed or added), the stored items exactly, as the TypeScript session does.
"""
from __future__ import annotations

import asyncio
import functools
import json
import os
import uuid
from typing import Any, Dict, List, Mapping, Optional, Union

from .errors import NotFound
from .memory import HISTORY_MAX_LIMIT, Context, Memory

Item = Dict[str, Any]
ITEM_KEY = "agents_item"    # js/src/items.ts ITEM_KEY
CALLS_KEY = "agents_items"  # the function_call items of a message with several calls
_OUTPUTS = ("function_call_output", "function_call_result")  # the Python and the TypeScript SDK's


def _text(content: Any) -> str:
    """The text of a content value, as js/src/items.ts contentText: a string, a text part, the
    `text` (else `refusal`) of each part; anything else as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping) and isinstance(content.get("text"), str):
        return content["text"]
    if not isinstance(content, list):
        return "" if content is None else json.dumps(content, ensure_ascii=False, separators=(",", ":"))
    out = []
    for p in content:
        t = (p["text"] if p.get("text") is not None else p.get("refusal", "")) if isinstance(p, Mapping) else p
        if isinstance(t, str):
            out.append(t)
    return "".join(out)


def _call_id(item: Mapping[str, Any]) -> str:
    return str(item["call_id"] if "call_id" in item else item.get("callId", ""))


def _item_message(item: Item) -> Dict[str, Any]:
    """One item as the message to append (js/src/items.ts itemToMessage)."""
    md: Dict[str, Any] = {ITEM_KEY: item}
    kind = "message" if item.get("type") is None else item["type"]
    if kind == "message":
        role = "system" if item.get("role") == "developer" else item.get("role")
        if role not in ("user", "assistant", "system"):
            return {"role": "assistant", "content": "", "metadata": md}
        return {"role": role, "content": _text(item.get("content")), "metadata": md}
    if kind == "function_call":
        args = item.get("arguments")
        call = {"id": _call_id(item), "type": "function",
                "function": {"name": str(item.get("name", "")), "arguments": "" if args is None else str(args)}}
        return {"role": "assistant", "content": None, "tool_calls": [call], "metadata": md}
    if kind in _OUTPUTS:
        msg = {"role": "tool", "tool_call_id": _call_id(item), "content": _text(item.get("output")), "metadata": md}
        if item.get("name"):
            msg["tool_name"] = str(item["name"])
        return msg
    return {"role": "assistant", "content": "", "metadata": md}


def items_to_messages(items: List[Any]) -> List[Dict[str, Any]]:
    """Responses input items (dicts or the SDK's pydantic models) -> the mnemo messages to append."""
    out: List[Dict[str, Any]] = []
    calls: List[Item] = []  # the function calls of out[-1], when it holds calls
    for raw in items:
        item = raw.model_dump(exclude_unset=True) if hasattr(raw, "model_dump") else dict(raw)
        msg = _item_message(item)
        is_call = item.get("type") == "function_call"
        if is_call and calls:
            out[-1]["tool_calls"] += msg["tool_calls"]
            calls.append(item)
            out[-1]["metadata"] = {CALLS_KEY: list(calls)}
            continue
        calls = [item] if is_call else []
        out.append(msg)
    return out


def _stored_items(m: Mapping[str, Any]) -> Optional[List[Item]]:
    """The items a stored message keeps, or None. A calls list that no longer matches the
    message's calls (another client removed one) is not trusted."""
    md = m.get("metadata")
    if not isinstance(md, Mapping):
        return None
    one = md.get(ITEM_KEY)
    if isinstance(one, Mapping):
        return [dict(one)]
    group = md.get(CALLS_KEY)
    if isinstance(group, list) and len(group) == len(m.get("tool_calls") or ()) \
            and all(isinstance(i, Mapping) for i in group):
        return [dict(i) for i in group]
    return None


def message_to_items(m: Mapping[str, Any]) -> List[Item]:
    """A stored message (or a chat message of a built context) -> Responses input items: the
    items it keeps when it has them, else converted from its fields."""
    kept = _stored_items(m)
    if kept is not None:
        return kept
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


def is_governed(ctx: Context) -> bool:
    """Whether a built context differs from the stored history: something dropped, folded or
    trimmed, or something added (a system prompt, the long-term memory block, recalled
    messages). js/src/agents.ts isGoverned."""
    r = ctx.report
    tools = (r.get("governance") or {}).get("tool_outputs") or {}
    added = bool((r.get("memories") or {}).get("included")) or bool((r.get("rag") or {}).get("injected")) \
        or len(ctx.messages) != ctx.kept  # a context message the stored history does not account for
    return added or ctx.dropped > 0 or (r.get("parts") or {}).get("system", 0) > 0 or bool(r.get("summary")) \
        or tools.get("trimmed", 0) > 0 or tools.get("offloaded", 0) > 0


def _settings(value: Any) -> Any:
    """session_settings as the SDK's runner uses it (it calls .resolve() and reads .limit): a
    mapping becomes the SDK's SessionSettings when the SDK is installed."""
    if not isinstance(value, Mapping):
        return value
    try:
        from agents.memory import SessionSettings  # type: ignore[import]
    except ImportError:
        return dict(value)
    return SessionSettings(**value)


def _without_last_call(m: Mapping[str, Any]) -> Dict[str, Any]:
    """A stored assistant message as the message to append again, less its last tool call (and
    that call's item)."""
    out = {k: m[k] for k in ("role", "content", "name", "tool_name", "model", "files", "pinned")
           if m.get(k) is not None}
    out["tool_calls"] = m["tool_calls"][:-1]
    md = dict(m.get("metadata") or {})
    group = md.pop(CALLS_KEY, None)
    if isinstance(group, list) and len(group) == len(m["tool_calls"]):
        rest = group[:-1]
        md.update({ITEM_KEY: rest[0]} if len(rest) == 1 else {CALLS_KEY: rest})
    if md:
        out["metadata"] = md
    return out


def _is_uuid(s: str) -> bool:
    try:
        uuid.UUID(s)
        return len(s) == 36
    except ValueError:
        return False


class MnemoSession:
    """An OpenAI Agents SDK session stored in mnemo.

    session_id: the mnemo session: its UUID, or any other string of yours ("user-42-chat", as the
    SDK's own sessions take), kept as the session's key in `namespace`; a new one when None. It is created on the first
    add_items with `namespace` and `system_prompt` when it does not exist.
    memory: an open Memory (or AsyncMemory) to share; else `db` (a path or URL, None for the CLI's
    database) and `config` open one that this session owns (close() closes it).
    session_settings: the SDK's SessionSettings (or a dict of its fields); its `limit` is
    get_items()'s when no limit is given.
    max_tokens: the budget of get_items() without a limit (None: memory.max_history_tokens);
    context_options: more mn_context_build options for it (strategy, model_window, rag, …).
    """

    session_settings: Any = None  # the SDK's SessionSettings; None: the SDK's defaults

    def __init__(self, session_id: Optional[str] = None, *, memory: Any = None,
                 db: Optional[Union[str, os.PathLike]] = None, config: Optional[Mapping[str, Any]] = None,
                 session_settings: Any = None, max_tokens: Optional[int] = None, strategy: Optional[str] = None,
                 namespace: Optional[str] = None, system_prompt: Optional[str] = None,
                 context_options: Optional[Mapping[str, Any]] = None):
        if memory is None:
            self.memory, self._owned = Memory(db, config), True
        else:
            self.memory, self._owned = getattr(memory, "sync", memory), False
        self.session_settings = _settings(session_settings)
        self.namespace = namespace
        self.system_prompt = system_prompt
        self.max_tokens = max_tokens
        self.context_options: Dict[str, Any] = dict(context_options or {})
        if strategy is not None:
            self.context_options["strategy"] = strategy
        if session_id is None:
            session_id = self.memory.session_create(namespace=namespace, system_prompt=system_prompt)["id"]
        self.session_id: str = session_id

    def close(self) -> None:
        if self._owned:
            self.memory.close()

    async def _run(self, fn: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, functools.partial(fn, *args))

    # -- the protocol ----------------------------------------------------------------------------
    async def get_items(self, limit: Optional[int] = None) -> List[Item]:
        """limit (None: session_settings.limit) N: the newest N items as they were added, oldest
        first (none for 0 or less). No limit: the governed context within max_tokens, which is
        every stored item as added when nothing was dropped, folded, trimmed or added."""
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
    def _limit(self, limit: Any) -> Optional[int]:
        if limit is None:
            s = self.session_settings
            limit = s.get("limit") if isinstance(s, Mapping) else getattr(s, "limit", None)
        # a string or float limit would slip past every comparison below
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError("MnemoSession.get_items: limit must be a whole number, not %r" % (limit,))
        return limit

    def _sid(self) -> str:
        """What the memory calls take: the session id, or a key of the default namespace as it
        is (the library looks those up); a key of another namespace, resolved there."""
        if self.namespace in (None, "default") or _is_uuid(self.session_id):
            return self.session_id
        return self.memory.resolve_session(self.session_id, self.namespace)

    def get_items_sync(self, limit: Optional[int] = None) -> List[Item]:
        limit = self._limit(limit)
        try:
            if limit is not None:
                if limit <= 0:
                    return []
                # each message holds at least one item: the newest `limit` messages are enough (past
                # history's largest limit, every message)
                msgs = self.memory.history(self._sid(), limit=limit if limit <= HISTORY_MAX_LIMIT else None,
                                           tail=True)
                return [i for m in msgs for i in message_to_items(m)][-limit:]
            ctx = self.memory.context_build(self._sid(), max_tokens=self.max_tokens, **self.context_options)
            msgs = ctx.messages if is_governed(ctx) else self.memory.history(self._sid())
        except NotFound:
            return []
        return [i for m in msgs for i in message_to_items(m)]

    def add_items_sync(self, items: List[Item]) -> None:
        msgs = items_to_messages(list(items))
        if not msgs:
            return
        try:
            self.memory.append_batch(self._sid(), msgs)
        except NotFound:
            try:
                keyed = not _is_uuid(self.session_id)  # the app's own id ("user-42-chat"): a key
                self.memory.session_create(id=None if keyed else self.session_id,
                                           key=self.session_id if keyed else None, namespace=self.namespace,
                                           system_prompt=self.system_prompt)
            except Exception:
                pass  # created meanwhile by another writer: the retry below appends
            self.memory.append_batch(self._sid(), msgs)

    def pop_item_sync(self) -> Optional[Item]:
        try:
            last = self.memory.history(self._sid(), limit=1, tail=True)
        except NotFound:
            return None
        if not last:
            return None
        m = last[0]
        items = message_to_items(m)
        self.memory.message_delete(self._sid(), m["id"])
        if len(items) > 1:  # several calls (or another client's text and calls): put back all but the last
            self.memory.append_batch(self._sid(), [_without_last_call(m)])
        return items[-1]

    def clear_session_sync(self) -> None:
        try:
            s = self.memory.session_get(self._sid())
        except NotFound:
            return
        self.memory.session_delete(s["id"])
        self.memory.session_create(id=s["id"], key=s.get("key"), namespace=s["namespace"],
                                   system_prompt=s["system_prompt"],
                                   metadata=s["metadata"], tool_name=s["tool_name"],
                                   ttl_ms=s["ttl_ms"] or -1, max_turns=s["max_turns"] or -1)
