"""mnemo.Memory: one open database (a SQLite file or a PostgreSQL URL) and every operation of
libmnemo on it, with Python values in and out: sessions and messages come back as the dicts the
CLI prints with --json (docs/cli.md#json-output), contexts as messages ready for the openai and
anthropic clients.
"""
from __future__ import annotations

import ctypes
import datetime as _dt
import io
import json
import math
import os
import threading
from ctypes import byref, c_char_p, c_int, c_int64, c_size_t, c_uint32, c_void_p
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, TextIO, Union

from . import _lib
from ._lib import (MnReplicaStats, MnAppendRequest, MnAppendResult, MnBudget, MnCheckpoint, MnCheckpointIn, MnCheckpointQuery,
                   MnCheckpoints, MnCheckpointWrite, MnCompactOpts, MnContext, MnContextOpts, MnDocument,
                   MnDocumentIn, MnDocumentPathsQuery, MnDocumentQuery, MnDocuments, MnExtractJob,
                   MnExtractStats, MnForgetStats, MnHistoryOpts, MnImportStats, MnMemories, MnMemory, MnMemoryIn,
                   MnMemoryQuery, MnMessage, MnMessageIn, MnMessages, MnSearchFilter, MnSearchHits, MnSession,
                   MnSessionOpts, MnSessions, MnStrings, MnSummary, MnThreadSummary)
from .errors import Invalid, Misuse, MnemoError, from_status
# The ranges the REST/MCP operations declare (`mnemo api --json`), checked here with the same
# messages before the C call, so that the same input is refused the same way everywhere; made from
# the operation table by scripts/gen-limits (ctest lint/generated-limits fails when they differ).
from ._limits import (APPEND_MAX_BATCH, CHECKPOINT_LIST_MAX_LIMIT, CONTEXT_MAX_MODEL_WINDOW, CONTEXT_MAX_TOKENS,
                      DOCUMENT_MAX_DEPTH, DOCUMENT_MAX_LIMIT, DOCUMENT_MAX_OFFSET, DOCUMENT_MAX_TTL_MS,
                      EVENTS_MAX_LIMIT, FILES_MAX_LIMIT, HANDOVER_MAX_FILES, HISTORY_MAX_LIMIT, MAX_TURNS, MEMORIES_MAX_TOP_K,
                      MEMORY_LIST_MAX_OFFSET, MEMORY_MAX_LIMIT, MEMORY_MAX_SOURCES, MEMORY_MAX_TOKEN_CAP,
                      PRUNE_MAX_DAYS, RAG_MAX_TOP_K, SEARCH_MAX_TOP_K, SESSION_LIST_MAX_LIMIT,
                      SESSION_LIST_MAX_OFFSET, TTL_MAX_MS)

Json = Any
Progress = Optional[Callable[[int, int], None]]

ROLES = {"system": 0, "user": 1, "assistant": 2, "tool": 3}
FORMATS = {"openai": 0, "anthropic": 1, "text": 2}
SEARCH_MODES = {"auto": 0, "semantic": 1, "keyword": 2, "hybrid": 3}
JOB_STATES = ("pending", "running", "done", "failed")  # enum mn_extract_state
SEARCH_MODE_NAMES = {v: k for k, v in SEARCH_MODES.items()}
RAG_SCOPES = {"session": 2, "all": 1}  # 0: memory.rag.scope
APPEND_CREATE = 1
CLEAR_UNDO = 1   # enum mn_clear_flags
CLEAR_STATE = 2
CONTEXT_DETAIL = 2  # enum mn_context_flags (MN_CONTEXT_NO_FOLD is 1: fold="off" sets the fold mode instead)
FOLD_MODES = {"background": 0, "sync": 1, "off": 2}  # enum mn_context_fold
# The calls that are the library's only, in REST's words with the library's ranges: no operation
# declares them, so they stay here.
RELEVANT_MAX_TOKENS = 1000000  # mn_relevant_context's max_tokens
# The actor of the long-term memory versions this package writes (the CLI writes "cli", REST and
# MCP "api", the Mem0 routes "mem0"; docs/memory.md).
ACTOR = b"python"
# The members of a pending write, as checkpoint_put_writes takes them (REST's writes items).
WRITE_KEYS = ("task_id", "task_path", "idx", "channel", "type", "value")
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
# Keys a message dict may carry (the openai chat shape plus mnemo's own fields).
MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "tool_name", "model", "files",
                "metadata", "idempotency_key", "pinned")


def _b(s: Union[None, str, bytes], what: str = "value") -> Optional[bytes]:
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    if not isinstance(s, str):
        raise Invalid("%s: expected a string, got %s" % (what, type(s).__name__))
    return s.encode("utf-8", "surrogatepass")


def _json_arg(v: Any, what: str) -> Optional[bytes]:
    """A JSON argument: dicts and lists are dumped, a string is taken as JSON text already."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):
        return _b(v, what)
    if hasattr(v, "model_dump"):  # pydantic objects (openai / anthropic SDK types)
        v = v.model_dump()
    elif isinstance(v, (list, tuple)):
        v = [x.model_dump() if hasattr(x, "model_dump") else x for x in v]
    try:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as e:
        raise Invalid("%s: not JSON-serialisable: %s" % (what, e)) from None


def _text_content(content: Any) -> Optional[str]:
    """Message content: a string, None, or a list of text parts (openai / Responses style) joined."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = []
        for i, part in enumerate(content):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text"):
                texts.append(part.get("text") or "")
            else:
                kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
                raise Invalid("content[%d]: only text parts can be stored, not %r" % (i, kind))
        return "".join(texts)
    raise Invalid("content: expected a string, a list of text parts or None, got %s" % type(content).__name__)


def _ms(v: Union[None, int, _dt.datetime], what: str) -> int:
    """A time as REST's since, until, as_of, valid_from, valid_to and at: whole milliseconds since
    the epoch, 0 or more (0, like None, "unset"), or a datetime (naive: UTC). A float is refused
    as REST refuses one, never truncated."""
    if v is None:
        return 0
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        ms = int(v.timestamp() * 1000)
    elif isinstance(v, int) and not isinstance(v, bool):
        ms = v
    else:
        raise Invalid("%s: must be an integer or a datetime, got %s" % (what, type(v).__name__))
    return _ranged(ms, what, 0)


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise Invalid("%s: must be an integer, got %s" % (what, type(v).__name__))
    return v


def _ranged(v: Any, what: str, lo: int, hi: Optional[int] = None) -> int:
    """A whole number from lo to hi (no upper bound when hi is None), refused as the REST
    parameter checks refuse one: "limit: 0 is out of range 1..10000"."""
    n = _int(v, what)
    if n < lo or (hi is not None and n > hi):
        if hi is None:
            raise Invalid("%s: %d is below the minimum of %d" % (what, n, lo))
        raise Invalid("%s: %d is out of range %d..%d" % (what, n, lo, hi))
    return n


def _message_id(v: Any) -> int:
    """A message id, 1 or more, as REST's message_id."""
    return _ranged(v, "message_id", 1)


def _fraction(v: Any, what: str) -> float:
    """A number from -1 to 1 (a similarity), refused as REST refuses one."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Invalid("%s: must be a number, got %s" % (what, type(v).__name__))
    if not math.isfinite(v) or not -1 <= v <= 1:
        raise Invalid("%s: %g is out of range -1..1" % (what, v))
    return float(v)


def _flag(v: Any, what: str) -> bool:
    """A boolean parameter: True or False only, as REST's "must be true or false" (a truthy 1 or
    "no" is refused, never read as True)."""
    if not isinstance(v, bool):
        raise Invalid("%s: must be True or False, got %r" % (what, v))
    return v


def _optional_flag(v: Any, what: str) -> int:
    """An optional boolean as mn_memory_query.pinned (None: any) and mn_memory_in.pinned (None:
    unchanged) read it: None -> -1, True -> 1, False -> 0."""
    return -1 if v is None else 1 if _flag(v, what) else 0


def _bytes(v: Any, what: str) -> bytes:
    """Text the library takes with its length: a str (UTF-8) or bytes as they are; anything else
    refused (bytes(5) would be five NUL bytes)."""
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    raise Invalid("%s: must be a string, got %s" % (what, type(v).__name__))


def _batch_size(n: int, what: str) -> None:
    """A batch's size within 1 to APPEND_MAX_BATCH, refused as REST refuses the messages array."""
    if n < 1:
        raise Invalid("%s: %d items is under the minimum of 1" % (what, n))
    if n > APPEND_MAX_BATCH:
        raise Invalid("%s: %d items is over the limit of %d" % (what, n, APPEND_MAX_BATCH))


def _tristate(v: Any, what: str) -> int:
    """An option whose absence means "as configured": None -> 0 (the setting), True -> 1,
    False -> -1 (off whatever the setting says), as mn_context_opts.rag and .memories read it."""
    if v is None:
        return 0
    if not isinstance(v, bool):
        raise Invalid("%s: must be True, False or None (the setting), got %r" % (what, v))
    return 1 if v else -1


def _role(role: Any, what: str = "role") -> int:
    # "agent" (seed 003's name for the assistant) is accepted on input as the library does
    # (mn_role_parse); it is stored, and read back, as "assistant".
    r = ROLES.get("assistant" if role == "agent" else role) if isinstance(role, str) else None
    if r is None:
        raise Invalid("%s: %r is not one of system, user, assistant (or agent), tool" % (what, role))
    return r


def _enum(table: Mapping[str, int], v: str, what: str) -> int:
    r = table.get(v) if isinstance(v, str) else None
    if r is None:
        raise Invalid("%s: %r is not one of %s" % (what, v, ", ".join(table)))
    return r


def _config_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _errmsg(lib) -> str:
    return lib.mn_errmsg().decode("utf-8", "replace")


def _check(rc: int) -> None:
    if rc:
        raise from_status(rc, _errmsg(_lib.load()))


def _take_str(p: c_void_p) -> str:
    """A char * the library handed over: decoded, then freed with mn_free."""
    try:
        return ctypes.string_at(p).decode("utf-8")
    finally:
        _lib.load().mn_free(p)


def _export_ids(session_ids: Union[None, str, Sequence[str]]) -> List[bytes]:
    """The ids to export, checked as REST's export checks its ids parameter."""
    if session_ids is None:
        return []
    if isinstance(session_ids, (str, bytes)):
        parts = _b(session_ids, "ids").split(b",")  # type: ignore[union-attr]
        for i, p in enumerate(parts):
            if not p:
                raise Invalid("ids: entry %d is empty (a comma-separated list of session ids)" % (i + 1))
        return parts
    if isinstance(session_ids, Mapping) or not hasattr(session_ids, "__iter__"):
        raise Invalid("ids: must be a comma-separated string or a list of ids")
    ids = list(session_ids)
    if not ids:
        raise Invalid("ids: an empty list (leave ids out to export every session)")
    out = []
    for i, s in enumerate(ids):
        if not isinstance(s, (str, bytes)):
            raise Invalid("ids[%d]: must be a string" % i)
        out.append(s.encode("utf-8", "surrogatepass") if isinstance(s, str) else s)
    return out


def make_config(settings: Optional[Mapping[str, Any]] = None, config_file: Optional[Union[str, os.PathLike]] = None,
                storage_path: Optional[str] = None) -> c_void_p:
    """An mn_config the way the CLI builds one: defaults, then the user and project files (or
    config_file instead of both), then MNEMO_* variables, then `settings` (dotted keys such as
    "memory.durability"). The caller frees it with mn_config_free."""
    lib = _lib.load()
    cfg = c_void_p()
    _check(lib.mn_config_new(byref(cfg)))
    try:
        _check(lib.mn_config_load(cfg, _b(os.fspath(config_file)) if config_file is not None else None))
        for key, value in (settings or {}).items():
            _check(lib.mn_config_set(cfg, _b(key, "config key"), _b(_config_value(value)), b"python"))
        if storage_path is not None:
            _check(lib.mn_config_set(cfg, b"memory.storage_path", _b(storage_path), b"python"))
    except BaseException:
        lib.mn_config_free(cfg)
        raise
    return cfg


def _settings(cfg: c_void_p) -> Dict[str, str]:
    """Every setting's effective value in cfg, by dotted key."""
    lib = _lib.load()
    out: Dict[str, str] = {}
    value = c_char_p()
    for i in range(lib.mn_config_count()):
        key = lib.mn_config_key(i)
        if key and lib.mn_config_get(cfg, key, byref(value), None) == 0 and value.value is not None:
            out[key.decode()] = value.value.decode("utf-8")
    return out


@dataclass
class Context:
    """What to send the model next (mn_context_build).

    - format "openai": `messages` is the Chat Completions list (system prompt first):
      ``client.chat.completions.create(model=…, messages=ctx.messages)``.
    - format "anthropic": `system` (str or None) and `messages` (content blocks, alternating
      roles): ``client.messages.create(model=…, max_tokens=…, **ctx.kwargs())``.
    - format "text": `text`.

    `report` is the report object (docs/context.md#the-report): what was kept, dropped,
    summarised and why.
    """
    format: str
    messages: List[Dict[str, Any]]
    system: Optional[str]
    text: Optional[str]
    report: Dict[str, Any]
    tokens: int
    kept: int
    dropped: int
    rendered: str = field(repr=False)

    def kwargs(self) -> Dict[str, Any]:
        """The keyword arguments for the provider's client: {"messages"} for openai,
        {"messages", "system"} for anthropic (system left out when there is none)."""
        if self.format == "anthropic":
            out: Dict[str, Any] = {"messages": self.messages}
            if self.system is not None:
                out["system"] = self.system
            return out
        if self.format == "openai":
            return {"messages": self.messages}
        raise Misuse("kwargs(): a text context has no messages; use .text")


class Hits(list):
    """Search hits, best first (a list of dicts: rank, score, similarity, bm25, semantic_rank,
    keyword_rank, namespace, message); `mode` is the mode that ran; `not_embedded` how many
    messages passing the filters wait to be embedded, unseen by a semantic or hybrid search
    (embed_pending() embeds them); `keyword_unindexed` how many messages the keyword index does
    not hold yet while it is rebuilt in the background (its file was missing or stale), and
    `keyword_scanned` how many of the newest of them were searched by a scan instead."""
    mode: str = "keyword"
    not_embedded: int = 0
    keyword_unindexed: int = 0
    keyword_scanned: int = 0


class Memory:
    """An open mnemo database. Thread-safe: calls from several threads run at once (the library
    serialises what must be); close() waits for calls in flight. Use it as a context manager::

        with mnemo.Memory("chat.db") as mem:
            sid = mem.session_create(system_prompt="Be brief.")["id"]
            mem.append(sid, "user", "hello")
            ctx = mem.context_build(sid, max_tokens=4096)

    Each method is named as its operation on every surface (docs/names.md); the older names
    (create_session, context, remember, …) stay, as assignments in this class.

    `target` is a SQLite path, "sqlite:PATH", or a postgres:// / postgresql:// URL; None opens the
    same database as the `mnemo` command (MNEMO_DB, then memory.storage_path, then
    $XDG_DATA_HOME/mnemo/memory.db). `config` holds settings by dotted key
    ({"memory.durability": "normal", "embedder.name": "hash"}), applied over the configuration
    files and MNEMO_* variables, exactly as the CLI layers them; `config_file` replaces the user and
    project files as `mnemo --config` does. `settings` holds the effective value of every setting
    the database was opened with (as `mnemo config show` prints them).
    """

    def __init__(self, target: Optional[Union[str, os.PathLike]] = None, config: Optional[Mapping[str, Any]] = None,
                 *, config_file: Optional[Union[str, os.PathLike]] = None):
        self._lib = lib = _lib.load()
        self._cv = threading.Condition(threading.Lock())
        self._inflight = 0
        self._db: Optional[c_void_p] = None
        cfg = make_config(config, config_file)
        try:
            self.settings: Dict[str, str] = _settings(cfg)
            db = c_void_p()
            if target is None:
                _check(lib.mn_open(cfg, byref(db)))
            else:
                _check(lib.mn_open_path(_b(os.fspath(target), "target"), cfg, byref(db)))
        finally:
            lib.mn_config_free(cfg)
        self._db = db

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        """Closes the database after the calls in flight return. Calls after close raise Misuse.
        Closing twice is a no-op."""
        with self._cv:
            db, self._db = self._db, None
            while self._inflight:
                self._cv.wait()
        if db is not None:
            self._lib.mn_close(db)

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if getattr(self, "_db", None) is not None and not self._inflight:
                self._lib.mn_close(self._db)
                self._db = None
        except Exception:
            pass

    @property
    def closed(self) -> bool:
        return self._db is None

    def _call(self, name: str, *args: Any) -> None:
        """Calls mn_<name>(db, *args) and raises the status's exception on failure."""
        with self._cv:
            db = self._db
            if db is None:
                raise Misuse("this Memory is closed")
            self._inflight += 1
        try:
            rc = getattr(self._lib, name)(db, *args)
            if rc:
                raise from_status(rc, _errmsg(self._lib))
        finally:
            with self._cv:
                self._inflight -= 1
                if not self._inflight:
                    self._cv.notify_all()

    def _borrowed(self, name: str) -> str:
        with self._cv:
            if self._db is None:
                raise Misuse("this Memory is closed")
            return getattr(self._lib, name)(self._db).decode("utf-8")

    @property
    def path(self) -> str:
        """The path or URL the database was opened on (a URL's password shown as ***)."""
        return self._borrowed("mn_db_path")

    @property
    def tokenizer(self) -> str:
        """The tokenizer that counts this database's tokens ("cl100k_base", "heuristic", …)."""
        return self._borrowed("mn_db_tokenizer")

    def __repr__(self) -> str:
        return "<mnemo.Memory %s>" % ("closed" if self.closed else repr(self.path))

    # -- conversions ---------------------------------------------------------------------------
    def _session(self, p: "ctypes._Pointer[MnSession]") -> Dict[str, Any]:
        try:
            out = c_void_p()
            _check(self._lib.mn_session_to_json(p, byref(out)))
            return json.loads(_take_str(out))
        finally:
            self._lib.mn_session_free(p)

    def _message(self, p: "ctypes._Pointer[MnMessage]") -> Dict[str, Any]:
        try:
            out = c_void_p()
            _check(self._lib.mn_message_to_json(p, byref(out)))
            return json.loads(_take_str(out))
        finally:
            self._lib.mn_message_free(p)

    def _messages(self, p: "ctypes._Pointer[MnMessages]") -> List[Dict[str, Any]]:
        try:
            out = c_void_p()
            _check(self._lib.mn_messages_to_json(p, 0, p.contents.count, byref(out)))
            return json.loads(_take_str(out))
        finally:
            self._lib.mn_messages_free(p)

    @staticmethod
    def _message_in(m: Mapping[str, Any], what: str = "message") -> MnMessageIn:
        for k, v in m.items():
            if k not in MESSAGE_KEYS and v is not None:
                raise Invalid("%s: unknown field %r (known: %s)" % (what, k, ", ".join(MESSAGE_KEYS)))
        mi = MnMessageIn()
        mi.size = ctypes.sizeof(MnMessageIn)
        mi.role = _role(m.get("role"), what + ".role")
        mi.content = _b(_text_content(m.get("content")), what + ".content")
        tool_calls = m.get("tool_calls")
        mi.tool_calls = _json_arg(tool_calls if tool_calls else None, what + ".tool_calls")
        mi.tool_call_id = _b(m.get("tool_call_id"), what + ".tool_call_id")
        mi.name = _b(m.get("name"), what + ".name")
        mi.tool_name = _b(m.get("tool_name"), what + ".tool_name")
        mi.model = _b(m.get("model"), what + ".model")
        mi.files = _json_arg(m.get("files"), what + ".files")
        mi.metadata = _json_arg(m.get("metadata"), what + ".metadata")
        mi.idempotency_key = _b(m.get("idempotency_key"), what + ".idempotency_key")
        pinned = m.get("pinned")  # None is absent, as REST's null
        mi.pinned = 1 if pinned is not None and _flag(pinned, what + ".pinned") else 0
        return mi

    # -- sessions ------------------------------------------------------------------------------
    def session_create(self, *, id: Optional[str] = None, namespace: Optional[str] = None,
                       title: Optional[str] = None, system_prompt: Optional[str] = None,
                       metadata: Optional[Mapping[str, Any]] = None, tool_name: Optional[str] = None,
                       ttl_ms: int = 0, max_turns: int = 0, key: Optional[str] = None) -> Dict[str, Any]:
        """Creates a session and returns it (the session object of docs/cli.md).

        id: a UUID to use (Conflict if taken), else a new UUIDv7. key: your own name for it (a
        framework's session id such as "user-42-chat": 1-256 bytes, not a UUID), unique in its
        namespace (Conflict if taken); every method then takes it where a session id goes
        (keys of the "default" namespace; resolve_session for another). namespace: 1-128 bytes of
        [A-Za-z0-9._:@-], "default" when None. tool_name makes it a thread (TTL threads.ttl_seconds,
        turn limit threads.max_turns). ttl_ms / max_turns: 0 the default, -1 none; else ttl_ms
        1000 to 31622400000 (REST's ttl_seconds up to 366 days) and max_turns 1 to 1000000,
        Invalid otherwise with REST's message ("max_turns: -2 is out of range -1..1000000")."""
        ttl_ms = _ranged(ttl_ms, "ttl_ms", -1, TTL_MAX_MS)  # 1..999 ms: the library refuses it
        max_turns = _ranged(max_turns, "max_turns", -1, MAX_TURNS)
        o = MnSessionOpts(ctypes.sizeof(MnSessionOpts), _b(id, "id"), _b(namespace, "namespace"),
                          _b(title, "title"), _b(system_prompt, "system_prompt"),
                          _json_arg(metadata, "metadata"), _b(tool_name, "tool_name"), ttl_ms, max_turns,
                          _b(key, "key"))
        out = ctypes.POINTER(MnSession)()
        self._call("mn_session_create", byref(o), byref(out))
        return self._session(out)
    create_session = session_create  # its older name (docs/names.md)

    def resolve_session(self, ref: str, namespace: Optional[str] = None) -> str:
        """The UUID of the session `ref` names: a session id (made canonical), or a key in
        `namespace` (None: "default"); NotFound for a key naming no session."""
        out = ctypes.create_string_buffer(37)
        self._call("mn_session_resolve", _b(namespace, "namespace"), _b(ref, "session_id"), out)
        return out.value.decode()

    def session_get(self, session_id: str) -> Dict[str, Any]:
        """The session (NotFound when there is none, Expired for an expired thread)."""
        out = ctypes.POINTER(MnSession)()
        self._call("mn_session_get", _b(session_id, "session_id"), byref(out))
        return self._session(out)
    get_session = session_get  # its older name (docs/names.md)

    def session_list(self, namespace: Optional[str] = None, limit: int = 20, offset: int = 0) -> List[Dict[str, Any]]:
        """Sessions, most recently updated first; namespace None = every namespace; limit 1 to
        10000, offset 0 to 100000000 (Invalid otherwise, with REST's session_list messages)."""
        limit = _ranged(limit, "limit", 1, SESSION_LIST_MAX_LIMIT)
        offset = _ranged(offset, "offset", 0, SESSION_LIST_MAX_OFFSET)
        out = ctypes.POINTER(MnSessions)()
        self._call("mn_session_list", _b(namespace, "namespace"), limit, offset, byref(out))
        try:
            lst = out.contents
            res = []
            for i in range(lst.count):
                js = c_void_p()
                _check(self._lib.mn_session_to_json(ctypes.byref(lst.items[i]), byref(js)))
                res.append(json.loads(_take_str(js)))
            return res
        finally:
            self._lib.mn_sessions_free(out)
    list_sessions = session_list  # its older name (docs/names.md)

    def session_update(self, session_id: str, *, title: Optional[str] = None,
                       metadata: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Sets the title and/or replaces the metadata object (None leaves a field); returns the session."""
        self._call("mn_session_update", _b(session_id, "session_id"), _b(title, "title"),
                   _json_arg(metadata, "metadata"))
        return self.session_get(session_id)
    update_session = session_update  # its older name (docs/names.md)

    def session_delete(self, session_id: str) -> None:
        """Deletes the session and all its messages (NotFound when there is none)."""
        self._call("mn_session_delete", _b(session_id, "session_id"))
    delete_session = session_delete  # its older name (docs/names.md)

    def session_clear(self, session_id: str, *, undo: bool = False, state: bool = False) -> int:
        """Clears the session's active history in one transaction (like /clear; API op
        session_clear) and returns how many messages it moved. The cleared messages leave every
        context, history() and forks but stay stored and searchable (history(all=True) shows
        them, "active" False); new messages start a fresh history. undo=True brings back every
        message cleared since the last undo (except those the turn limit keeps out) and returns
        how many came back (0 when nothing was cleared); the API answers {"cleared": n} or
        {"restored": n}, this returns n. state=True also resets the session state, in the same
        transaction. Invalid (bad id, undo with state), NotFound, Expired."""
        undo, state = _flag(undo, "undo"), _flag(state, "state")
        if undo and state:  # in REST's words (the library's message names its C flags)
            raise Invalid("undo: does not go with state (a reset state cannot come back)")
        n = c_int64()
        self._call("mn_session_clear", _b(session_id, "session_id"),
                   (CLEAR_UNDO if undo else 0) | (CLEAR_STATE if state else 0), byref(n))
        return n.value
    clear_session = session_clear  # its older name (docs/names.md)

    def session_set_max_turns(self, session_id: str, max_turns: int) -> Dict[str, Any]:
        """Sets the session's turn limit (0: none; at most 1000000) and applies it at once (API op
        session_set_max_turns): the messages before the newest max_turns turns (a message, or a tool call
        with its results) leave the active history (history(all=True) still shows them). Raising
        or removing the limit brings nothing back. Returns the session. Invalid, NotFound, Expired."""
        max_turns = _ranged(max_turns, "max_turns", 0, MAX_TURNS)
        self._call("mn_session_set_max_turns", _b(session_id, "session_id"), max_turns)
        return self.session_get(session_id)
    set_max_turns = session_set_max_turns  # its older name (docs/names.md)

    def namespace_forget(self, namespace: str) -> Dict[str, int]:
        """Erases everything of the namespace for real (API op namespace_forget; docs/erasure.md):
        every session with its messages, summaries, events, state and vectors, expired threads
        included, and every long-term memory of it, every version. Returns {"sessions": n,
        "memories": n}, what was erased; a namespace with nothing in it is not an error (counts
        0). Not one transaction: after a failure part-way (Busy, IO) what was erased stays
        erased, and calling it again finishes the job. Invalid when namespace is not one."""
        stats = MnForgetStats()
        self._call("mn_namespace_forget", _b(namespace, "namespace"), byref(stats))
        return {"sessions": stats.sessions, "memories": stats.memories}
    forget_namespace = namespace_forget  # its older name (docs/names.md)

    def session_fork(self, session_id: str, upto_seq: int = 0) -> Dict[str, Any]:
        """Copies the session's active messages up to seq upto_seq (0: all) into a new session whose
        parent_id is session_id; returns the new session. upto_seq: 0 or more (Invalid otherwise)."""
        upto_seq = _ranged(upto_seq, "upto_seq", 0)
        out = ctypes.POINTER(MnSession)()
        self._call("mn_session_fork", _b(session_id, "session_id"), upto_seq, byref(out))
        return self._session(out)
    fork = session_fork  # its older name (docs/names.md)

    def session_resume(self, session_id: Optional[str] = None, namespace: Optional[str] = None) -> Dict[str, Any]:
        """The live session to continue: session_id when given, else the most recently updated
        session that has not expired (in namespace, when given). NotFound when there is none."""
        out = ctypes.POINTER(MnSession)()
        self._call("mn_session_resume", _b(namespace, "namespace"), _b(session_id, "session_id"), byref(out))
        return self._session(out)
    resume = session_resume  # its older name (docs/names.md)

    def prune(self, days: int) -> int:
        """Deletes sessions not updated for `days` days (1 to 36500); returns how many."""
        days = _ranged(days, "days", 1, PRUNE_MAX_DAYS)
        n = c_int64()
        self._call("mn_prune", days, byref(n))
        return n.value

    def gc(self, *, vacuum: bool = False) -> int:
        """Deletes every expired thread with its messages; returns how many. vacuum=True then
        reclaims the space of deleted rows (vacuum()), as `mnemo gc --vacuum` does."""
        vacuum = _flag(vacuum, "vacuum")
        n = c_int64()
        self._call("mn_gc", byref(n))
        if vacuum:
            self._call("mn_vacuum")
        return n.value

    def vacuum(self) -> None:
        """Reclaims the space of deleted rows now (VACUUM): PostgreSQL keeps a deleted row's text
        in its table files until a vacuum; SQLite already overwrote it and only shrinks the file.
        Busy, IO, Unavailable."""
        self._call("mn_vacuum")

    def thread_summary_get(self, session_id: str, *, files: int = 0) -> Dict[str, Any]:
        """The hand-over summary of a session or thread, for the next tool (API op thread_summary_get):
        {"thread_id", "namespace", "title", "tool", "started", "updated_at", "expires_at",
        "turns", "messages", "tokens", "tools_used", "files", "text"} (times in ms; title, tool
        and a 0 expires_at as None; text the same as Markdown for a prompt). files: at most that
        many files, newest first, 0 to 1000000 (0: all). Reads only. Invalid, NotFound, Expired."""
        files = _ranged(files, "files", 0, HANDOVER_MAX_FILES)
        out = ctypes.POINTER(MnThreadSummary)()
        self._call("mn_thread_summary_get", _b(session_id, "session_id"), files, byref(out))
        try:
            js = c_void_p()
            _check(self._lib.mn_thread_summary_to_json(out, byref(js)))
            return json.loads(_take_str(js))
        finally:
            self._lib.mn_thread_summary_free(out)
    handover = thread_summary_get  # its older name (docs/names.md)

    def session_files(self, session_id: str, *, limit: Optional[int] = None) -> List[str]:
        """The unique file paths the session's messages list, newest first; at most limit of them,
        1 to 1000000 (None: all), as the API's session_files operation (which refuses a limit of 0)."""
        limit = 0 if limit is None else _ranged(limit, "limit", 1, FILES_MAX_LIMIT)
        out = ctypes.POINTER(MnStrings)()
        self._call("mn_session_files_n", _b(session_id, "session_id"), limit, byref(out))
        try:
            return [out.contents.items[i].decode("utf-8") for i in range(out.contents.count)]
        finally:
            self._lib.mn_strings_free(out)
    files = session_files  # its older name (docs/names.md)

    def file_should_include(self, session_id: str, path: str, content: Union[str, bytes]) -> bool:
        """True the first time this (path, content) pair is seen in the session, False after:
        the same content under the same path is sent once. Recorded durably."""
        data = _bytes(content, "content")
        inc = c_int()
        self._call("mn_file_should_include", _b(session_id, "session_id"), _b(path, "path"), data, len(data),
                   byref(inc))
        return bool(inc.value)

    # -- messages ------------------------------------------------------------------------------
    def append(self, session_id: str, role: str, content: Optional[str] = None, *, create: bool = False,
               **fields: Any) -> Dict[str, Any]:
        """Appends one message as one durable transaction and returns the stored message.

        fields: tool_calls (a list of OpenAI tool calls), tool_call_id (required for role tool),
        name, tool_name, model, files (a list of paths), metadata (a dict), idempotency_key (a
        retried append with the same key returns the message stored the first time), pinned.
        create: create the session (with that id) when it does not exist. A bool is True or
        False only (pinned, create), as REST takes them."""
        fields["role"] = role
        fields["content"] = content
        return self.append_message(session_id, fields, create=create)

    def append_message(self, session_id: str, message: Mapping[str, Any], *, create: bool = False) -> Dict[str, Any]:
        """Appends one message given as a dict (the openai chat shape: role, content, tool_calls,
        tool_call_id, name; plus tool_name, model, files, metadata, idempotency_key, pinned).
        Unknown keys with a value are refused (Invalid); keys set to None are ignored."""
        mi = self._message_in(message)
        create = _flag(create, "create")
        out = ctypes.POINTER(MnMessage)()
        self._call("mn_append", _b(session_id, "session_id"), byref(mi), APPEND_CREATE if create else 0, byref(out))
        return self._message(out)

    def append_batch(self, session_id: str, messages: Iterable[Mapping[str, Any]], *,
                     create: bool = False) -> List[Dict[str, Any]]:
        """Appends messages (dicts as append_message takes, 1..100000) in one transaction, all or
        nothing; returns the stored messages in order."""
        messages = list(messages)
        _batch_size(len(messages), "messages")
        ins = [self._message_in(m, "messages[%d]" % i) for i, m in enumerate(messages)]
        create = _flag(create, "create")
        arr = (MnMessageIn * len(ins))(*ins)
        out = ctypes.POINTER(MnMessages)()
        self._call("mn_append_batch", _b(session_id, "session_id"), arr, len(ins), APPEND_CREATE if create else 0,
                   byref(out))
        return self._messages(out)

    def append_many(self, requests: Sequence[Mapping[str, Any]]) -> List[Union[List[Dict[str, Any]], MnemoError]]:
        """Group commit: several batches ({"session_id", "messages", "create"?, "namespace"?}), to
        one session or several, in ONE durable transaction, each in its own savepoint. With
        "namespace", the session must be in it (another's is NotFound) and "create" makes it there.
        Returns, per request, the stored messages or the exception that request failed with (the
        others are still stored)."""
        reqs = (MnAppendRequest * len(requests))()
        keep = []
        for i, r in enumerate(requests):
            unknown = sorted(set(r) - {"session_id", "messages", "create", "namespace"})
            if unknown:
                raise Invalid("requests[%d].%s: not a field of a request (session_id, messages, create, "
                              "namespace)" % (i, unknown[0]))
            msgs = [self._message_in(m, "requests[%d].messages[%d]" % (i, j)) for j, m in enumerate(r["messages"])]
            arr = (MnMessageIn * len(msgs))(*msgs)
            keep.append(arr)
            create = _flag(r.get("create", False), "requests[%d].create" % i)
            reqs[i] = MnAppendRequest(ctypes.sizeof(MnAppendRequest), _b(r["session_id"], "session_id"), arr,
                                      len(msgs), APPEND_CREATE if create else 0,
                                      _b(r.get("namespace"), "namespace"))
        results = (MnAppendResult * len(requests))()
        try:
            self._call("mn_append_many", reqs, len(requests), 1, results)
        except MnemoError:
            for res in results:
                if res.stored:
                    self._lib.mn_messages_free(res.stored)
            raise
        out: List[Union[List[Dict[str, Any]], MnemoError]] = []
        for res in results:
            if res.status == 0:
                out.append(self._messages(res.stored))
            else:
                out.append(from_status(res.status, res.errmsg.decode("utf-8", "replace")))
        return out

    def message_delete(self, session_id: str, message_id: int) -> None:
        """Deletes one message of the session by its id (1 or more)."""
        self._call("mn_message_delete", _b(session_id, "session_id"), _message_id(message_id))
    delete_message = message_delete  # its older name (docs/names.md)

    def message_edit(self, session_id: str, message_id: int, content: Any, *,
                     metadata: Union[None, str, Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Changes one message's content in place, and its metadata when given (a dict or a JSON
        object's text that replaces the stored one), in one transaction (API op message_edit), and
        returns the message as stored after the edit. The id, seq, role and time stay; the tokens
        are recounted, the search index follows, summaries that folded the old text are dropped
        and a message_edited event is written. content (a string or a list of text parts, as
        append takes) is required; a message with tool calls keeps them. Invalid (bad id,
        message_id not positive, content None, metadata not an object), TooBig, NotFound (no such
        session, or no such message in it), Expired."""
        out = ctypes.POINTER(MnMessage)()
        self._call("mn_message_edit", _b(session_id, "session_id"), _message_id(message_id),
                   _b(_text_content(content), "content"), _json_arg(metadata, "metadata"), byref(out))
        return self._message(out)
    edit_message = message_edit  # its older name (docs/names.md)

    def history(self, session_id: str, *, limit: Optional[int] = None, after_seq: int = 0, tail: bool = False,
                all: bool = False) -> List[Dict[str, Any]]:
        """The session's messages, oldest to newest (message objects of docs/cli.md).

        limit: at most this many, 1 to 10000 (the oldest, or with tail=True the newest; None: every
        one); after_seq: only seq > after_seq (0 or more); all: also messages that left the active
        history past the turn limit. Invalid for a limit or after_seq out of range (REST's
        messages: "limit: 0 is out of range 1..10000")."""
        n = 0 if limit is None else _ranged(limit, "limit", 1, HISTORY_MAX_LIMIT)
        o = MnHistoryOpts(ctypes.sizeof(MnHistoryOpts), _ranged(after_seq, "after_seq", 0), n,
                          1 if _flag(tail, "tail") else 0, 1 if _flag(all, "all") else 0)
        out = ctypes.POINTER(MnMessages)()
        self._call("mn_history", _b(session_id, "session_id"), byref(o), byref(out))
        return self._messages(out)

    def message_pin(self, message_id: int, pinned: bool = True, *, session_id: Optional[str] = None) -> None:
        """Pins (or unpins) a message: it stays verbatim in the hybrid strategy whatever its age.
        With session_id, only a message of that session (the API's message_pin): another
        session's message is NotFound. message_id: 1 or more, pinned True or False (Invalid
        otherwise, as REST refuses them)."""
        message_id = _message_id(message_id)
        flag = 1 if _flag(pinned, "pinned") else 0
        if session_id is None:
            self._call("mn_message_pin", message_id, flag)
        else:
            self._call("mn_session_message_pin", _b(session_id, "session_id"), message_id, flag)
    pin = message_pin  # its older name (docs/names.md)

    def unpin(self, message_id: int, *, session_id: Optional[str] = None) -> None:
        self.message_pin(message_id, False, session_id=session_id)

    # -- context -------------------------------------------------------------------------------
    def context_build(self, session_id: str, *, max_tokens: Optional[int] = None, strategy: Optional[str] = None,
                      format: str = "openai", model_window: Optional[int] = None,
                      fold: Union[None, str, bool] = None, no_fold: bool = False, detail: bool = False,
                      rag: Optional[bool] = None, rag_top_k: Optional[int] = None,
                      rag_min_similarity: Optional[float] = None, rag_scope: Optional[str] = None,
                      memories: Optional[bool] = None, memories_top_k: Optional[int] = None) -> Context:
        """Builds what to send the model next (docs/context.md); the parameters are those of the
        REST/MCP operation context_build, with the same meaning and ranges.

        max_tokens: the budget, 0 to 100000000 (None or 0: memory.max_history_tokens, or with a
        model window the history share of budget_split). strategy: "window", "summary",
        "chunked" or "hybrid" (None: memory.strategy). format: "openai", "anthropic" or "text".
        model_window: 1 to 100000000 (None: context.model_window); drives the token trigger of
        summary/hybrid and the report's pre-flight check. fold: what a due fold does,
        "background" (None, the default: queued on a fold queue, else run here within
        context.fold_timeout_ms), "sync" (run before building) or "off" (never summarise during
        this build: the stored summary is used as is); False is "off" and True the default, as
        in earlier versions. no_fold=True: the same as fold "off" (Invalid with "background" or
        "sync"). detail=True: the report's "detail" lists each history message's fate.
        rag: put the most relevant past messages in front of the last user message (None:
        memory.rag.enabled; False: never, whatever the setting); rag_top_k 1 to 100 (None:
        memory.rag.top_k, 5); rag_min_similarity -1 to 1 (None: memory.rag.min_similarity,
        0.7; 0 or less: no threshold); rag_scope "session" or "all" (the session's namespace; None: memory.rag.scope).
        memories: long-term memories after the system prompt, the memory blocks and the
        memories_top_k (1 to 50; None: memory.context.top_k, 5) most relevant to the last user
        message (None: memory.context.enabled; False: never); the report's "memories" lists
        them. Invalid names a parameter out of range as REST does ("rag_top_k: 0 is out of
        range 1..100")."""
        if isinstance(fold, bool):  # the boolean of earlier versions: False never folded
            fold = None if fold else "off"
        if _flag(no_fold, "no_fold") and fold is not None and fold != "off":
            raise Invalid("no_fold: the same as fold off; it does not go with fold %s" % fold)
        o = MnContextOpts()
        o.size = ctypes.sizeof(MnContextOpts)
        o.strategy = _b(strategy, "strategy")
        o.max_tokens = 0 if max_tokens is None else _ranged(max_tokens, "max_tokens", 0, CONTEXT_MAX_TOKENS)
        o.format = _enum(FORMATS, format, "format")
        o.model_window = 0 if model_window is None else _ranged(model_window, "model_window", 1, CONTEXT_MAX_MODEL_WINDOW)
        o.fold = FOLD_MODES["off"] if no_fold else 0 if fold is None else _enum(FOLD_MODES, fold, "fold")
        o.flags = CONTEXT_DETAIL if _flag(detail, "detail") else 0
        o.rag = _tristate(rag, "rag")
        o.rag_top_k = 0 if rag_top_k is None else _ranged(rag_top_k, "rag_top_k", 1, RAG_MAX_TOP_K)
        # the C struct reads 0 as "the setting" and a negative value as "no threshold"; here, as in
        # REST and the CLI, None is the setting and 0 or less none (REST passes -1 for a given 0)
        sim = 0.0 if rag_min_similarity is None else _fraction(rag_min_similarity, "rag_min_similarity")
        o.rag_min_similarity = -1.0 if rag_min_similarity is not None and sim == 0 else sim
        o.rag_scope = 0 if rag_scope is None else _enum(RAG_SCOPES, rag_scope, "rag_scope")
        o.memories = _tristate(memories, "memories")
        o.memories_top_k = 0 if memories_top_k is None else _ranged(memories_top_k, "memories_top_k", 1,
                                                                      MEMORIES_MAX_TOP_K)
        out = ctypes.POINTER(MnContext)()
        self._call("mn_context_build", _b(session_id, "session_id"), byref(o), byref(out))
        try:
            c = out.contents
            rendered = c.rendered.decode("utf-8")
            report = json.loads(c.report.decode("utf-8"))
            tokens, kept, dropped = c.tokens, c.kept, c.dropped
        finally:
            self._lib.mn_context_free(out)
        messages: List[Dict[str, Any]] = []
        system = text = None
        if format == "openai":
            messages = json.loads(rendered)
        elif format == "anthropic":
            obj = json.loads(rendered)
            messages, system = obj["messages"], obj.get("system")
        else:
            text = rendered
        return Context(format, messages, system, text, report, tokens, kept, dropped, rendered)
    context = context_build  # its older name (docs/names.md)

    def summary_get(self, session_id: str) -> Dict[str, Any]:
        """The session's global summary: id, session_id, covers_upto, folded, text, tokens, model,
        summarizer, created_at. NotFound when the session has none yet (the message says which)."""
        out = ctypes.POINTER(MnSummary)()
        self._call("mn_summary_get", _b(session_id, "session_id"), byref(out))
        try:
            s = out.contents
            d = lambda p: p.decode("utf-8") if p is not None else None  # noqa: E731
            return {"id": s.id, "session_id": d(s.session_id), "covers_upto": s.covers_upto, "folded": s.folded,
                    "tokens": s.tokens, "summarizer": d(s.summarizer), "model": d(s.model),
                    "created_at": s.created_at, "text": d(s.text)}
        finally:
            self._lib.mn_summary_free(out)
    summary = summary_get  # its older name (docs/names.md)

    def compact(self, session_id: str, *, instructions: Optional[str] = None) -> Dict[str, Any]:
        """Folds the session now (like /compact) and returns the event written
        ({"kind":"compaction","outcome":"ok"|"rolled_back"|"nothing_to_fold", …}). instructions:
        what the summary must keep ("keep the API decisions"; at most 4000 bytes), passed to the
        summariser. Busy when another fold of the session is in flight; Unavailable when the
        summariser failed."""
        out = c_void_p()
        opts = MnCompactOpts(ctypes.sizeof(MnCompactOpts), _b(instructions, "instructions"))
        self._call("mn_compact_ex", _b(session_id, "session_id"), byref(opts), byref(out))
        return json.loads(_take_str(out)) if out.value else {}

    def events(self, session_id: str, limit: int = 50) -> List[Dict[str, Any]]:
        """The session's events (compactions, failures, fallbacks), newest first; at most limit
        of them, 1 to 10000."""
        limit = _ranged(limit, "limit", 1, EVENTS_MAX_LIMIT)
        out = c_void_p()
        self._call("mn_events_json", _b(session_id, "session_id"), limit, byref(out))
        return json.loads(_take_str(out))

    # -- search and RAG ------------------------------------------------------------------------
    @staticmethod
    def _filter(session_id: Optional[str], namespace: Optional[str], role: Optional[str], since: Any,
                until: Any, metadata: Any = None) -> MnSearchFilter:
        if metadata is not None and not isinstance(metadata, (str, bytes, Mapping)):
            raise Invalid("metadata: must be an object (a dict or a JSON object's text), got %s"
                          % type(metadata).__name__)
        # REST's since and until: 0 or more (0, like None, no bound)
        since_ms, until_ms = _ms(since, "since"), _ms(until, "until")
        return MnSearchFilter(ctypes.sizeof(MnSearchFilter), _b(session_id, "session_id"), _b(namespace, "namespace"),
                              -1 if role is None else _role(role), since_ms, until_ms,
                              _json_arg(metadata, "metadata"))

    def search(self, query: str, *, mode: str = "auto", top_k: int = 10, session_id: Optional[str] = None,
               namespace: Optional[str] = None, role: Optional[str] = None,
               since: Union[None, int, _dt.datetime] = None, until: Union[None, int, _dt.datetime] = None,
               min_similarity: float = 0.0, metadata: Union[None, str, Mapping[str, Any]] = None) -> Hits:
        """Searches stored messages (docs/search.md). mode: "auto" (hybrid with an embedder, else
        keyword), "keyword" (BM25), "semantic", "hybrid" (reciprocal rank fusion). top_k: 1 to
        1000. Filters: session, namespace, role, created_at in [since, until) (ms since the epoch
        or datetimes, 0 or more; None or 0: no bound), metadata (a dict of
        scalars, or a JSON object's text, at most 16 keys: each must be in the message's metadata
        with an equal value). min_similarity (-1 to 1; 0: keep all) drops semantic candidates
        below it. Returns the hits best first; `.mode` says which mode ran. Invalid names a
        parameter out of range as REST does; Unavailable for semantic/hybrid without an
        embedder."""
        top_k = _ranged(top_k, "top_k", 1, SEARCH_MAX_TOP_K)
        min_similarity = _fraction(min_similarity, "min_similarity")
        f = self._filter(session_id, namespace, role, since, until, metadata)
        out = ctypes.POINTER(MnSearchHits)()
        self._call("mn_search", _b(query, "query"), _enum(SEARCH_MODES, mode, "mode"), top_k, byref(f),
                   min_similarity, byref(out))
        try:
            js = c_void_p()
            _check(self._lib.mn_search_hits_to_json(out, byref(js)))
            hits = Hits(json.loads(_take_str(js)))
            hits.mode = SEARCH_MODE_NAMES.get(out.contents.mode, "keyword")
            hits.not_embedded = out.contents.not_embedded
            hits.keyword_unindexed = out.contents.keyword_unindexed
            hits.keyword_scanned = out.contents.keyword_scanned
            return hits
        finally:
            self._lib.mn_search_hits_free(out)

    def relevant_context(self, query: str, max_tokens: int = 2048, *, session_id: Optional[str] = None,
                         namespace: Optional[str] = None, role: Optional[str] = None,
                         metadata: Union[None, str, Mapping[str, Any]] = None) -> str:
        """The RAG block of past messages relevant to query, within max_tokens:
        "RELEVANT CONTEXT FROM PAST CONVERSATIONS:\\n---\\n[ROLE]: …\\n---" ("" when nothing is).
        max_tokens: 1 to 1000000. The filters are search()'s."""
        max_tokens = _ranged(max_tokens, "max_tokens", 1, RELEVANT_MAX_TOKENS)
        f = self._filter(session_id, namespace, role, None, None, metadata)
        out = c_void_p()
        self._call("mn_relevant_context", _b(query, "query"), max_tokens, byref(f), byref(out))
        return _take_str(out)

    def embed_pending(self, max: int = 0) -> int:
        """Embeds up to `max` queued messages (0 or more; 0: all); returns how many."""
        max = _ranged(max, "max", 0)
        n = c_size_t()
        self._call("mn_embed_pending", max, byref(n))
        return n.value

    def embed_backfill(self, progress: Progress = None) -> int:
        """Embeds every message that has no vector yet; progress(done, total) after each batch."""
        return self._progress_call("mn_embed_backfill", progress)

    def reindex_embeddings(self, progress: Progress = None) -> int:
        """Drops every vector and re-embeds all messages with the configured embedder."""
        return self._progress_call("mn_reindex_embeddings", progress)

    def reindex_tokens(self, progress: Progress = None) -> int:
        """Recounts every message's tokens with this database's tokenizer."""
        return self._progress_call("mn_reindex_tokens", progress)

    def embed_counts(self) -> Dict[str, int]:
        """{"embedded": messages with a vector, "queued": messages waiting for one}."""
        e, q = c_int64(), c_int64()
        self._call("mn_embed_counts", byref(e), byref(q))
        return {"embedded": e.value, "queued": q.value}

    def position(self) -> str:
        """The position after every commit this handle made: an opaque token (PostgreSQL: a WAL
        position such as "0/311B3C0"; "" on SQLite and before the first commit). Another handle
        passed it in read_after reads this one's writes, even through a read replica
        (docs/scale-out.md#read-your-writes)."""
        buf = ctypes.create_string_buffer(32)
        self._call("mn_db_position", buf)
        return buf.value.decode("ascii")

    def read_after(self, position: Optional[str]) -> None:
        """From now on, this thread's reads see every commit up to position (a token of
        position(), from any handle on the same database): a replica behind it is waited for, up
        to postgres.replica_max_lag_ms, then the primary answers. None or "" clears it. Raises
        Invalid for a token that is not a position."""
        if position is not None and not isinstance(position, str):
            raise Invalid("position: expected a string, got %s" % type(position).__name__)
        self._call("mn_db_read_after", position.encode("utf-8") if position else None)

    def replica_stats(self) -> Dict[str, int]:
        """What the read replicas (postgres.replicas) did since the handle opened: replicas,
        replicas_up, on_replica, on_primary, waited, lagging, down (zeros without replicas)."""
        st = MnReplicaStats()
        self._call("mn_replica_stats_get", byref(st))
        return {name: getattr(st, name) for name, _ in MnReplicaStats._fields_}

    def _progress_call(self, name: str, progress: Progress) -> int:
        errors: List[BaseException] = []

        def cb(_user, done, total):
            try:
                progress(done, total)  # type: ignore[misc]
            except BaseException as e:  # reported after the call; never raised into C
                errors.append(e)

        fn = _lib.PROGRESS_FN(cb) if progress else _lib.PROGRESS_FN(0)  # 0: no callback (NULL)
        n = c_int64()
        self._call(name, fn, None, byref(n))
        if errors:
            raise errors[0]
        return n.value

    # -- long-term memory ----------------------------------------------------------------------
    def _memory_json(self, p: "ctypes._Pointer[MnMemory]") -> Dict[str, Any]:
        try:
            js = c_void_p()
            _check(self._lib.mn_memory_to_json(p, byref(js)))
            return json.loads(_take_str(js))
        finally:
            self._lib.mn_memory_free(p)

    def _memories_json(self, p: "ctypes._Pointer[MnMemories]") -> List[Dict[str, Any]]:
        try:
            js = c_void_p()
            _check(self._lib.mn_memories_to_json(p, byref(js)))
            return json.loads(_take_str(js))
        finally:
            self._lib.mn_memories_free(p)

    @staticmethod
    def _memory_in(text: Optional[str], kind: Optional[str], metadata: Any, sources: Optional[Iterable[int]],
                   pinned: int, token_cap: int, valid_from: Any, valid_to: Any,
                   reason: Optional[str]) -> MnMemoryIn:
        mi = MnMemoryIn()
        mi.size = ctypes.sizeof(MnMemoryIn)
        mi.text = _b(text, "text")
        mi.kind = _b(kind, "kind")
        mi.metadata = _json_arg(metadata, "metadata")
        if sources is not None:
            if isinstance(sources, (str, bytes, Mapping)) or not hasattr(sources, "__iter__"):
                raise Invalid("sources: expected a list of message ids, got %s" % type(sources).__name__)
            ids = [_int(s, "sources") for s in sources]
            if len(ids) > MEMORY_MAX_SOURCES:  # REST's words; the library's TooBig says the same
                raise Invalid("sources: %d items is over the limit of %d" % (len(ids), MEMORY_MAX_SOURCES))
            # a non-NULL array even when empty: an update with sources=[] clears the provenance
            mi.sources = (c_int64 * max(len(ids), 1))(*ids)
            mi.n_sources = len(ids)
        mi.pinned = pinned
        mi.token_cap = token_cap
        mi.valid_from = _ms(valid_from, "valid_from")
        mi.valid_to = _ms(valid_to, "valid_to")
        mi.actor = ACTOR
        mi.reason = _b(reason, "reason")
        return mi

    @staticmethod
    def _memory_query(namespace: Optional[str], user_id: Optional[str], agent_id: Optional[str],
                      session_id: Optional[str], kind: Optional[str], metadata: Any, as_of: Any,
                      include_closed: bool, pinned: Optional[bool], limit: int, offset: int) -> MnMemoryQuery:
        # the library reads a limit of 0 as its default; here a limit is always explicit
        limit, offset = _ranged(limit, "limit", 1, MEMORY_MAX_LIMIT), _ranged(offset, "offset", 0, MEMORY_LIST_MAX_OFFSET)
        q = MnMemoryQuery()
        q.size = ctypes.sizeof(MnMemoryQuery)
        q.ns = _b(namespace, "namespace")
        q.user_id = _b(user_id, "user_id")
        q.agent_id = _b(agent_id, "agent_id")
        q.session_id = _b(session_id, "session_id")
        q.kind = _b(kind, "kind")
        q.metadata = _json_arg(metadata, "metadata")
        q.as_of = _ms(as_of, "as_of")
        q.include_closed = 1 if _flag(include_closed, "include_closed") else 0
        q.pinned = _optional_flag(pinned, "pinned")
        q.limit = limit
        q.offset = offset
        return q

    def memory_add(self, text: str, *, kind: Optional[str] = None, namespace: Optional[str] = None,
                   user_id: Optional[str] = None, agent_id: Optional[str] = None, session_id: Optional[str] = None,
                   metadata: Union[None, str, Mapping[str, Any]] = None, sources: Optional[Iterable[int]] = None,
                   pinned: bool = False, token_cap: int = 0, valid_from: Union[None, int, _dt.datetime] = 0,
                   valid_to: Union[None, int, _dt.datetime] = 0, reason: Optional[str] = None) -> Dict[str, Any]:
        """Adds a long-term memory and returns it (version 1; docs/memory.md): text (1-8192 bytes),
        kind ("fact" by default, "preference", "instruction", "event" or another a-z_ word), the
        scope (namespace, "default" by default; user_id, agent_id, session_id), metadata (a dict
        or a JSON object's text), sources (the message ids it came from), pinned (a memory block,
        always in a context built with memories) with its token_cap, valid_from (0: now) and
        valid_to (0: still true) in ms since the epoch or as datetimes, and the reason kept in
        its history. Written with actor "python". Invalid / TooBig name the field."""
        token_cap = _ranged(token_cap, "token_cap", 0, MEMORY_MAX_TOKEN_CAP)
        mi = self._memory_in(text, kind, metadata, sources, 1 if _flag(pinned, "pinned") else 0, token_cap,
                             valid_from, valid_to, reason)
        mi.ns = _b(namespace, "namespace")
        mi.user_id = _b(user_id, "user_id")
        mi.agent_id = _b(agent_id, "agent_id")
        mi.session_id = _b(session_id, "session_id")
        out = ctypes.POINTER(MnMemory)()
        self._call("mn_memory_add", byref(mi), byref(out))
        return self._memory_json(out)
    remember = memory_add  # its older name (docs/names.md)

    def memory_search(self, query: str, *, mode: str = "auto", namespace: Optional[str] = None,
                      user_id: Optional[str] = None, agent_id: Optional[str] = None, session_id: Optional[str] = None,
                      kind: Optional[str] = None, metadata: Union[None, str, Mapping[str, Any]] = None,
                      as_of: Union[None, int, _dt.datetime] = 0, include_closed: bool = False,
                      pinned: Optional[bool] = None, limit: int = 10) -> List[Dict[str, Any]]:
        """The memories most relevant to query, best first, each with its "score" (mn_memory_search).
        mode: "auto" (hybrid with an embedder, else keyword), "keyword", "semantic" or "hybrid".
        Filters (applied before ranking): the scope fields, kind, metadata (a dict of scalars each
        memory's metadata must equal), as_of (what was true then; 0: now), include_closed (the
        current versions of deleted memories too) and pinned (None any, True memory blocks only,
        False no blocks), as memory_list() takes them. limit 1-1000."""
        q = self._memory_query(namespace, user_id, agent_id, session_id, kind, metadata, as_of, include_closed,
                               pinned, limit, 0)
        out = ctypes.POINTER(MnMemories)()
        self._call("mn_memory_search", _b(query, "query"), _enum(SEARCH_MODES, mode, "mode"), byref(q), byref(out))
        return self._memories_json(out)
    recall = memory_search  # its older name (docs/names.md)

    def memory_list(self, *, namespace: Optional[str] = None, user_id: Optional[str] = None,
                    agent_id: Optional[str] = None, session_id: Optional[str] = None, kind: Optional[str] = None,
                    metadata: Union[None, str, Mapping[str, Any]] = None,
                    as_of: Union[None, int, _dt.datetime] = 0, include_closed: bool = False,
                    pinned: Optional[bool] = None, limit: int = 100, offset: int = 0) -> List[Dict[str, Any]]:
        """Memories matching the filters, newest recorded first: what is true now (as_of 0), or at
        as_of; include_closed adds the current versions of deleted memories; pinned None any,
        True memory blocks only, False no blocks. limit 1-1000, offset for paging."""
        q = self._memory_query(namespace, user_id, agent_id, session_id, kind, metadata, as_of, include_closed,
                               pinned, limit, offset)
        out = ctypes.POINTER(MnMemories)()
        self._call("mn_memory_list", byref(q), byref(out))
        return self._memories_json(out)

    def memory_get(self, id: str) -> Dict[str, Any]:
        """The current version of memory id, even when closed (NotFound when there is none)."""
        out = ctypes.POINTER(MnMemory)()
        self._call("mn_memory_get", _b(id, "id"), byref(out))
        return self._memory_json(out)

    def memory_update(self, id: str, *, text: Optional[str] = None, kind: Optional[str] = None,
                      metadata: Union[None, str, Mapping[str, Any]] = None, sources: Optional[Iterable[int]] = None,
                      pinned: Optional[bool] = None, token_cap: Optional[int] = None,
                      valid_from: Union[None, int, _dt.datetime] = 0, valid_to: Union[None, int, _dt.datetime] = 0,
                      reason: Optional[str] = None) -> Dict[str, Any]:
        """Writes a new version of memory id with the fields given (None keeps a field; metadata
        replaces the object, sources the list) and returns it; the previous version is closed,
        its validity ending at valid_from (0: now; pass the old valid_from to correct what was
        never true). An update that changes nothing writes nothing and returns the current
        version. The scope cannot change. NotFound; Invalid for a closed memory; Conflict when
        another writer made a version first."""
        cap = -1 if token_cap is None else _ranged(token_cap, "token_cap", 0, MEMORY_MAX_TOKEN_CAP)
        mi = self._memory_in(text, kind, metadata, sources, _optional_flag(pinned, "pinned"), cap, valid_from,
                             valid_to, reason)
        out = ctypes.POINTER(MnMemory)()
        self._call("mn_memory_update", _b(id, "id"), byref(mi), byref(out))
        return self._memory_json(out)

    def memory_delete(self, id: str, *, at: Union[None, int, _dt.datetime] = 0, reason: Optional[str] = None) -> None:
        """Closes memory id: a new version with valid_to = at (0: now) and change "delete". It
        stays in the history and in as-of answers before `at`; list() no longer shows it (but
        include_closed does). NotFound; Invalid when it is already closed."""
        self._call("mn_memory_delete", _b(id, "id"), _ms(at, "at"), ACTOR, _b(reason, "reason"))

    def memory_forget(self, id: str) -> None:
        """Erases memory id for real: every version, its keyword entries and vectors. NotFound
        when there is none."""
        self._call("mn_memory_forget", _b(id, "id"))
    forget = memory_forget  # its older name (docs/names.md)

    def memory_history(self, id: str) -> List[Dict[str, Any]]:
        """Every version of memory id, oldest first ("change": "add", "update" or "delete")."""
        out = ctypes.POINTER(MnMemories)()
        self._call("mn_memory_history", _b(id, "id"), byref(out))
        return self._memories_json(out)

    def memory_extract(self, session_id: str, extractor: Optional[str] = None) -> Dict[str, int]:
        """Extracts memories from the session's user messages not read before (docs/memory.md#extraction)
        with extractor "offline" or "llm" (None: the memory.extract setting, offline when off).
        Returns the counts: messages, candidates, added, updated, unchanged, invalidated, rejected.
        NotFound (session); Invalid (extractor); Unavailable (the LLM is not configured or failed)."""
        stats = MnExtractStats()
        self._call("mn_memory_extract", _b(session_id, "session_id"), _b(extractor, "extractor"), byref(stats))
        return {k: getattr(stats, k) for k, _ in MnExtractStats._fields_}

    def memory_extract_queue(self, session_id: str, data: Union[None, str, Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Queues an extraction job (API op memory_extract_queue): memory_extract over the
        session's turns up to its newest one, on this Memory's background worker, whatever
        memory.extract says; data (a dict or its JSON text, at most 4096 bytes) is kept with the
        job. Returns the job as memory_extract_job does. The worker runs it while this Memory is
        open (close drops what it has not started; a later memory_extract_job queues it again).
        NotFound, Expired (session); Invalid (data not an object); TooBig (data)."""
        job = c_void_p()
        self._call("mn_memory_extract_queue", _b(session_id, "session_id"), _json_arg(data, "data"), byref(job))
        return self.memory_extract_job(_take_str(job))

    def memory_extract_job(self, job_id: str) -> Dict[str, Any]:
        """An extraction job (API op memory_extract_job), the dict REST answers: id, session_id,
        namespace, data (a dict), state ("pending", "running", "done", "failed"), error (why it
        failed, else None), upto_seq, queued_at and finished_at (ms; None until it has ended, or
        when the run that ended it was not the job's own). A pending job no worker holds is
        queued on this Memory's. Invalid (job_id is not a UUID); NotFound."""
        out = ctypes.POINTER(MnExtractJob)()
        self._call("mn_memory_extract_job", None, _b(job_id, "job_id"), byref(out))
        try:
            j = out.contents
            return {"id": j.id.decode(), "session_id": j.session_id.decode(), "namespace": j.ns.decode(),
                    "data": json.loads(j.data.decode("utf-8")), "state": JOB_STATES[j.state],
                    "error": j.error.decode("utf-8") if j.error else None, "upto_seq": j.upto_seq,
                    "queued_at": j.queued_at, "finished_at": j.finished_at or None}
        finally:
            self._lib.mn_extract_job_free(out)

    # -- state ---------------------------------------------------------------------------------
    def state_get(self, session_id: str, *, reveal: bool = False) -> Dict[str, Any]:
        """The session's state object: params, waiting_for_param, last_intent_id, last_result,
        plan_execution. Sensitive parameters show as "[redacted]" unless reveal."""
        out = c_void_p()
        self._call("mn_state_get", _b(session_id, "session_id"), 1 if _flag(reveal, "reveal") else 0, byref(out))
        return json.loads(_take_str(out))
    state = state_get  # its older name (docs/names.md)

    def state_merge_params(self, session_id: str, params: Mapping[str, Any]) -> None:
        """Merges params into state.params (a None value removes the key); clears waiting_for_param
        when the awaited parameter arrives."""
        if not isinstance(params, Mapping):
            raise Invalid("params: expected a dict, got %s" % type(params).__name__)
        self._call("mn_state_merge_params", _b(session_id, "session_id"), _json_arg(dict(params), "params"))
    merge_params = state_merge_params  # its older name (docs/names.md)

    def state_set_waiting(self, session_id: str, param: Optional[str]) -> None:
        """Sets the parameter the flow waits for (None clears it)."""
        self._call("mn_state_set_waiting", _b(session_id, "session_id"), _b(param, "param"))
    set_waiting = state_set_waiting  # its older name (docs/names.md)

    def state_unwait(self, session_id: str) -> None:
        """Stops waiting for a parameter (the API's state_unwait; state_set_waiting with None)."""
        self.state_set_waiting(session_id, None)

    def state_set_result(self, session_id: str, intent_id: Optional[str], result: Any = None) -> None:
        """Records the last intent and its result (any JSON value; None leaves it unchanged)."""
        self._call("mn_state_set_result", _b(session_id, "session_id"), _b(intent_id, "intent_id"),
                   None if result is None else _json_arg(result if not isinstance(result, str) else json.dumps(result),
                                                         "result"))
    set_result = state_set_result  # its older name (docs/names.md)

    def state_set_plan(self, session_id: str, plan: Any) -> None:
        """Stores the plan being executed (any JSON value; None clears it)."""
        self._call("mn_state_set_plan", _b(session_id, "session_id"),
                   None if plan is None else _json_arg(plan if not isinstance(plan, str) else json.dumps(plan), "plan"))
    set_plan = state_set_plan  # its older name (docs/names.md)

    def state_clear(self, session_id: str) -> None:
        """Resets the state to its empty form."""
        self._call("mn_state_clear", _b(session_id, "session_id"))
    clear_state = state_clear  # its older name (docs/names.md)

    # -- graph checkpoints (docs/checkpoints.md) -----------------------------------------------
    @staticmethod
    def _checkpoint(cp: MnCheckpoint) -> Dict[str, Any]:
        """One checkpoint as the REST routes answer it."""
        def text(v: Optional[bytes]) -> Optional[str]:
            return None if v is None else v.decode("utf-8")

        writes = [{"task_id": text(w.task_id), "task_path": text(w.task_path) or "", "idx": w.idx,
                   "channel": text(w.channel), "type": text(w.type), "value": text(w.value)}
                  for w in (cp.writes[i] for i in range(cp.n_writes))]
        return {"thread_id": text(cp.thread), "session_id": text(cp.session_id),
                "checkpoint_ns": text(cp.checkpoint_ns), "checkpoint_id": text(cp.id),
                "parent_checkpoint_id": text(cp.parent_id), "type": text(cp.type), "checkpoint": text(cp.data),
                "metadata": json.loads(cp.metadata or b"{}"), "created_at": cp.created_at, "pending_writes": writes}

    def _checkpoints(self, p: "ctypes._Pointer[MnCheckpoints]") -> List[Dict[str, Any]]:
        try:  # by mn_checkpoints_at: the items are item_size apart, whatever this MnCheckpoint's size
            return [self._checkpoint(self._lib.mn_checkpoints_at(p, i).contents) for i in range(p.contents.count)]
        finally:
            self._lib.mn_checkpoints_free(p)

    def checkpoint_put(self, thread_id: str, *, checkpoint_id: str, type: str, checkpoint: str,
                       checkpoint_ns: Optional[str] = None, parent_checkpoint_id: Optional[str] = None,
                       metadata: Union[None, str, Mapping[str, Any]] = None,
                       namespace: Optional[str] = None) -> Dict[str, Any]:
        """Saves a graph checkpoint (LangGraph) of thread thread_id, replacing one of the same
        thread, checkpoint_ns and checkpoint_id (API op checkpoint_put). The thread is a session's
        id or key in namespace (None: "default"); one naming nothing yet makes the session, with
        thread_id as its key (or its id, when a UUID). type: the serializer's type tag (1-64
        bytes); checkpoint: its text (base64 for bytes, up to 16 MiB); checkpoint_ns: the
        subgraph ("" or None: the root graph); metadata: a dict (or a JSON object's text), what
        checkpoint_list's filter reads. Returns REST's answer {"thread_id", "checkpoint_ns",
        "checkpoint_id"}. Invalid, TooBig, Expired."""
        cp = MnCheckpointIn(ctypes.sizeof(MnCheckpointIn), _b(namespace, "namespace"), _b(thread_id, "thread_id"),
                            _b(checkpoint_ns, "checkpoint_ns"), _b(checkpoint_id, "checkpoint_id"),
                            _b(parent_checkpoint_id, "parent_checkpoint_id"), _b(type, "type"),
                            _b(checkpoint, "checkpoint"), _json_arg(metadata, "metadata"))
        self._call("mn_checkpoint_put", byref(cp))
        return {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns or "", "checkpoint_id": checkpoint_id}

    @staticmethod
    def _write(w: Any, i: int) -> MnCheckpointWrite:
        """One item of checkpoint_put_writes' writes, checked as REST checks it."""
        what = "writes[%d]" % i
        if not isinstance(w, Mapping):
            raise Invalid("%s: must be an object {task_id, task_path, idx, channel, type, value}" % what)
        for k in w:
            if k not in WRITE_KEYS:
                raise Invalid("%s.%s: not a member of a write" % (what, k))
        idx = w.get("idx")
        if isinstance(idx, bool) or not isinstance(idx, int):
            raise Invalid("%s.idx: required, an integer" % what)
        return MnCheckpointWrite(_b(w.get("task_id"), what + ".task_id"),
                                 _b(w.get("task_path"), what + ".task_path"),
                                 _ranged(idx, what + ".idx", INT64_MIN, INT64_MAX),
                                 _b(w.get("channel"), what + ".channel"), _b(w.get("type"), what + ".type"),
                                 _b(w.get("value"), what + ".value"))

    def checkpoint_put_writes(self, thread_id: str, *, checkpoint_id: str, writes: Iterable[Mapping[str, Any]],
                              checkpoint_ns: Optional[str] = None, namespace: Optional[str] = None) -> Dict[str, int]:
        """Saves pending writes for checkpoint checkpoint_id of thread thread_id, in one
        transaction (API op checkpoint_put_writes). writes: 1 to 10000 dicts {"task_id",
        "task_path" (optional), "idx", "channel", "type", "value"}; a write whose (task_id, idx)
        is stored already is ignored when idx >= 0 and replaces it when idx < 0 (LangGraph's
        special channels: errors, interrupts). They may come before their checkpoint (and make
        the thread's session, as checkpoint_put does); checkpoint_get shows them with it once it
        is saved. Returns REST's answer {"stored": n}. Invalid, TooBig, Expired."""
        if isinstance(writes, (str, bytes, Mapping)) or not hasattr(writes, "__iter__"):
            raise Invalid("writes: expected a list of writes, got %s" % type(writes).__name__)
        items = [self._write(w, i) for i, w in enumerate(writes)]
        arr = (MnCheckpointWrite * max(len(items), 1))(*items)
        self._call("mn_checkpoint_put_writes", _b(namespace, "namespace"), _b(thread_id, "thread_id"),
                   _b(checkpoint_ns, "checkpoint_ns"), _b(checkpoint_id, "checkpoint_id"), arr, len(items))
        return {"stored": len(items)}

    def checkpoint_get(self, thread_id: str, *, checkpoint_id: Optional[str] = None,
                       checkpoint_ns: Optional[str] = None, namespace: Optional[str] = None) -> Dict[str, Any]:
        """A checkpoint of thread thread_id with its pending writes (API op checkpoint_get; REST's
        `checkpoint`): checkpoint_id, else the newest (greatest id) of checkpoint_ns (None: the
        root graph's). The dict: thread_id, session_id, checkpoint_ns, checkpoint_id,
        parent_checkpoint_id, type, checkpoint, metadata, created_at (ms) and pending_writes (by
        task_path, task_id, idx). NotFound when the thread or the checkpoint is not there."""
        out = ctypes.POINTER(MnCheckpoints)()
        self._call("mn_checkpoint_get", _b(namespace, "namespace"), _b(thread_id, "thread_id"),
                   _b(checkpoint_ns, "checkpoint_ns"), _b(checkpoint_id, "checkpoint_id"), byref(out))
        return self._checkpoints(out)[0]

    def checkpoint_list(self, thread_id: Optional[str] = None, *, checkpoint_ns: Optional[str] = None,
                        checkpoint_id: Optional[str] = None, before: Optional[str] = None,
                        filter: Union[None, str, Mapping[str, Any]] = None, limit: Optional[int] = None,
                        namespace: Optional[str] = None) -> List[Dict[str, Any]]:
        """Checkpoints with their pending writes, newest (greatest id) first, as checkpoint_get
        gives them (API op checkpoint_list; REST's `checkpoints`): thread_id's (None: every
        thread of namespace), only checkpoint_ns's (None: any), only checkpoint_id, only ids
        below before, only those whose metadata has each key of filter (a dict) with an equal
        JSON value; at most limit, 1 to 10000 (None: all). A thread naming nothing has none."""
        q = MnCheckpointQuery()
        q.size = ctypes.sizeof(MnCheckpointQuery)
        q.ns = _b(namespace, "namespace")
        q.thread = _b(thread_id, "thread_id")
        q.checkpoint_ns = _b(checkpoint_ns, "checkpoint_ns")
        q.id = _b(checkpoint_id, "checkpoint_id")
        q.before = _b(before, "before")
        q.filter = _json_arg(filter, "filter")
        q.limit = 0 if limit is None else _ranged(limit, "limit", 1, CHECKPOINT_LIST_MAX_LIMIT)
        out = ctypes.POINTER(MnCheckpoints)()
        self._call("mn_checkpoint_list", byref(q), byref(out))
        return self._checkpoints(out)

    def checkpoint_delete_thread(self, thread_id: str, *, namespace: Optional[str] = None) -> Dict[str, int]:
        """Deletes every checkpoint and pending write of thread thread_id; its session and
        messages stay (delete_session takes all). Returns REST's answer {"deleted": n}, the
        checkpoints deleted (0 for a thread naming nothing). API op checkpoint_delete_thread."""
        n = c_int64()
        self._call("mn_checkpoint_delete_thread", _b(namespace, "namespace"), _b(thread_id, "thread_id"), byref(n))
        return {"deleted": n.value}

    # -- documents (docs/documents.md) ---------------------------------------------------------
    @staticmethod
    def _document(d: MnDocument) -> Dict[str, Any]:
        """One document as the REST routes answer it (expires_at and score None when unset)."""
        def text(v: Optional[bytes]) -> Optional[str]:
            return None if v is None else v.decode("utf-8")

        return {"namespace": text(d.ns), "path": text(d.path), "key": text(d.key),
                "value": json.loads(d.value or b"{}"), "created_at": d.created_at, "updated_at": d.updated_at,
                "expires_at": d.expires_at or None, "score": d.score if d.scored else None}

    def _documents(self, p: "ctypes._Pointer[MnDocuments]") -> List[Dict[str, Any]]:
        try:  # by mn_documents_at: the items are item_size apart, whatever this MnDocument's size
            return [self._document(self._lib.mn_documents_at(p, i).contents) for i in range(p.contents.count)]
        finally:
            self._lib.mn_documents_free(p)

    @staticmethod
    def _object_arg(v: Any, what: str) -> Optional[bytes]:
        """A JSON object argument (value, filter): a dict, or a JSON object's text (the library
        checks that it is one); anything else refused as REST refuses it."""
        if v is None or isinstance(v, (str, bytes, Mapping)):
            return _json_arg(dict(v) if isinstance(v, Mapping) else v, what)
        raise Invalid("%s: must be an object, got %s" % (what, type(v).__name__))

    @staticmethod
    def _index_arg(index: Any) -> Optional[bytes]:
        """document_put's index: None or True (the whole value), False (none), or a list of field
        paths."""
        if index is None or index is True:
            return None
        if index is False:
            return b"false"
        if isinstance(index, (str, bytes, Mapping)) or not hasattr(index, "__iter__"):
            raise Invalid("index: false, or a list of field paths, got %s" % type(index).__name__)
        paths = list(index)
        for i, f in enumerate(paths):
            if not isinstance(f, str):
                raise Invalid("index[%d]: must be a string" % i)
        return _json_arg(paths, "index")

    def document_put(self, path: str, key: str, value: Union[str, Mapping[str, Any]], *,
                     index: Union[None, bool, Sequence[str]] = None, ttl_ms: Optional[int] = None,
                     namespace: Optional[str] = None) -> Dict[str, Any]:
        """Writes a JSON document at path and key (LangGraph's store), replacing the one there (API
        op document_put). path: labels joined by '.' ("users.alice.prefs"); value: a dict (or a
        JSON object's text), at most 1 MiB as JSON; index: the field paths whose text is embedded
        for document_search's query ("title", "meta.title", "chapters[*].text", "$" for the whole
        value), False for none, None for the whole value (nothing is embedded without an
        embedder); ttl_ms: gone that long after it was written or last read (None or 0: never).
        Returns the stored document, as document_get. Invalid, TooBig, Unavailable (the embedder
        failed: nothing written)."""
        d = MnDocumentIn(ctypes.sizeof(MnDocumentIn), _b(namespace, "namespace"), _b(path, "path"), _b(key, "key"),
                         self._object_arg(value, "value"), self._index_arg(index),
                         0 if ttl_ms is None else _ranged(ttl_ms, "ttl_ms", 0, DOCUMENT_MAX_TTL_MS))
        out = ctypes.POINTER(MnDocuments)()
        self._call("mn_document_put", byref(d), byref(out))
        return self._documents(out)[0]

    def document_get(self, path: str, key: str, *, refresh_ttl: bool = True,
                     namespace: Optional[str] = None) -> Dict[str, Any]:
        """The document at path and key (API op document_get; REST's `document`): a dict with
        namespace, path, key, value (a dict), created_at, updated_at (ms), expires_at (ms, None:
        never) and score (None). refresh_ttl: a document with a time to live starts it again.
        NotFound when there is none, or it has expired."""
        out = ctypes.POINTER(MnDocuments)()
        self._call("mn_document_get", _b(namespace, "namespace"), _b(path, "path"), _b(key, "key"),
                   1 if _flag(refresh_ttl, "refresh_ttl") else 0, byref(out))
        return self._documents(out)[0]

    def document_delete(self, path: str, key: str, *, namespace: Optional[str] = None) -> Dict[str, int]:
        """Deletes the document at path and key (API op document_delete). Returns REST's answer
        {"deleted": 1}, or {"deleted": 0} when there was none (not an error)."""
        n = c_int64()
        self._call("mn_document_delete", _b(namespace, "namespace"), _b(path, "path"), _b(key, "key"), byref(n))
        return {"deleted": n.value}

    def document_search(self, prefix: Optional[str] = None, *, filter: Union[None, str, Mapping[str, Any]] = None,
                        query: Optional[str] = None, limit: int = 10, offset: int = 0, refresh_ttl: bool = True,
                        namespace: Optional[str] = None) -> List[Dict[str, Any]]:
        """Documents that have not expired, as document_get gives them (API op document_search;
        REST's `documents`): those at path prefix and below it (None: every path), whose value
        has each key of filter (a dict) equal to its JSON value or meeting its operators ($eq,
        $ne, $gt, $gte, $lt, $lte, $in, $nin); newest updated first, or with query ranked by
        meaning (score: the cosine similarity; Unavailable without an embedder); a page of limit
        (1 to 1000) after offset. refresh_ttl: those returned start their time to live again."""
        q = MnDocumentQuery()
        q.size = ctypes.sizeof(MnDocumentQuery)
        q.ns = _b(namespace, "namespace")
        q.prefix = _b(prefix, "prefix")
        q.filter = self._object_arg(filter, "filter")
        q.query = _b(query, "query")
        q.limit = _ranged(limit, "limit", 1, DOCUMENT_MAX_LIMIT)
        q.offset = _ranged(offset, "offset", 0, DOCUMENT_MAX_OFFSET)
        q.refresh_ttl = 1 if _flag(refresh_ttl, "refresh_ttl") else 0
        out = ctypes.POINTER(MnDocuments)()
        self._call("mn_document_search", byref(q), byref(out))
        return self._documents(out)

    def document_paths(self, *, prefix: Optional[str] = None, suffix: Optional[str] = None,
                       max_depth: Optional[int] = None, limit: int = 100, offset: int = 0,
                       namespace: Optional[str] = None) -> List[str]:
        """The paths holding documents that have not expired, in byte order (API op
        document_paths; REST's `paths`; LangGraph's list_namespaces): those whose first labels are
        prefix's and last labels suffix's ("*" matches any label), cut to their first max_depth
        labels (merged; None: whole), a page of limit (1 to 1000) after offset."""
        q = MnDocumentPathsQuery()
        q.size = ctypes.sizeof(MnDocumentPathsQuery)
        q.ns = _b(namespace, "namespace")
        q.prefix = _b(prefix, "prefix")
        q.suffix = _b(suffix, "suffix")
        q.max_depth = 0 if max_depth is None else _ranged(max_depth, "max_depth", 1, DOCUMENT_MAX_DEPTH)
        q.limit = _ranged(limit, "limit", 1, DOCUMENT_MAX_LIMIT)
        q.offset = _ranged(offset, "offset", 0, DOCUMENT_MAX_OFFSET)
        out = ctypes.POINTER(MnStrings)()
        self._call("mn_document_paths", byref(q), byref(out))
        try:
            return [out.contents.items[i].decode("utf-8") for i in range(out.contents.count)]
        finally:
            self._lib.mn_strings_free(out)

    # -- export / import -----------------------------------------------------------------------
    def export(self, session_ids: Union[None, str, Sequence[str]] = None,
               file: Optional[Union[BinaryIO, TextIO]] = None) -> Optional[str]:
        """Exports the named sessions (every session when None) as JSON Lines (docs/format.md).
        session_ids: a list of ids, or one string of comma-separated ids, as REST's ids; an
        empty list is Invalid, as it is there (leave it out to export every session). Returns
        the text, or writes it to `file` (binary or text) and returns None."""
        chunks: List[bytes] = []
        errors: List[BaseException] = []
        text_file = isinstance(file, io.TextIOBase)

        def write(_user, data, n):
            try:
                b = ctypes.string_at(data, n)
                if file is None:
                    chunks.append(b)
                else:
                    file.write(b.decode("utf-8") if text_file else b)  # type: ignore[arg-type]
                return 0
            except BaseException as e:
                errors.append(e)
                return 1

        ids = _export_ids(session_ids)
        arr = (c_char_p * len(ids))(*ids) if ids else None
        try:
            self._call("mn_export", arr, len(ids), _lib.WRITE_FN(write), None)
        except MnemoError:
            if errors:
                raise errors[0]
            raise
        return b"".join(chunks).decode("utf-8") if file is None else None

    def import_(self, source: Union[str, bytes, os.PathLike, BinaryIO, TextIO]) -> Dict[str, int]:
        """Imports an export stream in one transaction (all or nothing; sessions and messages
        already present are skipped). source: the JSON Lines as str or bytes, a path (os.PathLike),
        or an open file. Returns {"sessions_added", "sessions_skipped", "messages_added",
        "messages_skipped"}."""
        if isinstance(source, os.PathLike):
            with open(source, "rb") as f:
                return self.import_(f)
        if isinstance(source, str):
            source = source.encode("utf-8")
        reader: Callable[[int], Any] = io.BytesIO(source).read if isinstance(source, bytes) else source.read
        pending = bytearray()
        errors: List[BaseException] = []

        def read(_user, buf, cap):
            try:
                while len(pending) < cap:
                    chunk = reader(65536)
                    if not chunk:
                        break
                    pending.extend(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
                n = min(cap, len(pending))
                ctypes.memmove(buf, bytes(pending[:n]), n)
                del pending[:n]
                return n
            except BaseException as e:
                errors.append(e)
                return -1

        stats = MnImportStats()
        try:
            self._call("mn_import", _lib.READ_FN(read), None, byref(stats))
        except MnemoError:
            if errors:
                raise errors[0]
            raise
        return {k: getattr(stats, k) for k, _ in MnImportStats._fields_}

    # -- tokens and statistics -----------------------------------------------------------------
    def count_tokens(self, text: Union[str, bytes]) -> int:
        """Tokens of text by this database's tokenizer."""
        return count_tokens(text, self.tokenizer)

    def stats(self) -> Dict[str, Any]:
        """Counts (sessions, messages, tokens, threads, …), path, backend, tokenizer (stats --json)."""
        out = c_void_p()
        self._call("mn_stats_json", byref(out))
        return json.loads(_take_str(out))


# -- module-level functions (no database needed) --------------------------------------------------
def version() -> str:
    """The version of the loaded libmnemo, "MAJOR.MINOR.PATCH"."""
    return _lib.load().mn_version().decode()


def count_tokens(text: Union[str, bytes], encoding: str = "cl100k_base", threads: int = 0) -> int:
    """Tokens of text in an encoding ("cl100k_base", "o200k_base" or "heuristic"). A text of
    1 MiB or more counts on `threads` threads (0: every online core; 1: this one), with the same
    result."""
    if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads <= 1024:
        raise ValueError("threads: must be an integer from 0 to 1024")
    data = _bytes(text, "text")
    n = c_size_t()
    _check(_lib.load().mn_count_tokens_threads(_b(encoding, "encoding"), data, len(data), threads, byref(n)))
    return n.value


def encode_tokens(text: Union[str, bytes], encoding: str = "cl100k_base") -> List[int]:
    """The token ids of text (Invalid for "heuristic", which has none)."""
    lib = _lib.load()
    data = _bytes(text, "text")
    ids = ctypes.POINTER(c_uint32)()
    n = c_size_t()
    _check(lib.mn_encode_tokens(_b(encoding, "encoding"), data, len(data), byref(ids), byref(n)))
    try:
        return ids[:n.value]
    finally:
        lib.mn_free(ids)


def budget_split(model_window: int) -> Dict[str, int]:
    """The split of a model window (1 to 100000000, as context's model_window) for a tool-heavy
    call: response, history, files."""
    model_window = _ranged(model_window, "model_window", 1, CONTEXT_MAX_MODEL_WINDOW)
    b = MnBudget()
    _check(_lib.load().mn_budget_split(model_window, byref(b)))
    return {"model_window": model_window, "response": b.response, "history": b.history, "files": b.files}


def compaction_counts() -> Dict[str, int]:
    """Folds this process has run since it started, by outcome: ok, failed, rolled_back."""
    ok, failed, rb = c_int64(), c_int64(), c_int64()
    _lib.load().mn_compaction_counts(byref(ok), byref(failed), byref(rb))
    return {"ok": ok.value, "failed": failed.value, "rolled_back": rb.value}


def _with_progress(progress: Progress, call: Callable[[Any], int]) -> None:
    """Runs call(c_progress) with a C progress callback around `progress`; an exception the callback
    raised is raised again once the call returns."""
    errors: List[BaseException] = []

    def cb(_user, done, total):
        try:
            progress(done, total)  # type: ignore[misc]
        except BaseException as e:
            errors.append(e)

    _check(call(_lib.PROGRESS_FN(cb) if progress else _lib.PROGRESS_FN(0)))
    if errors:
        raise errors[0]


def migrate(source: str, target: str, *, config: Optional[Mapping[str, Any]] = None, append: bool = False,
            progress: Progress = None) -> Dict[str, int]:
    """Copies everything from database `source` into `target`, across backends (mnemo migrate)."""
    lib = _lib.load()
    cfg = make_config(config)
    stats = MnImportStats()
    try:
        _with_progress(progress, lambda fn: lib.mn_migrate(_b(source, "source"), _b(target, "target"), cfg,
                                                           1 if append else 0, fn, None, byref(stats)))
    finally:
        lib.mn_config_free(cfg)
    return {k: getattr(stats, k) for k, _ in MnImportStats._fields_}


def upgrade(path: Optional[str] = None, *, config: Optional[Mapping[str, Any]] = None,
            progress: Progress = None) -> int:
    """Brings the schema of database `path` (default: the configured one) up to this version, as
    opening it does, calling progress(done, total) during the long steps (mnemo upgrade). Returns
    the version the database had (0: new)."""
    lib = _lib.load()
    cfg = make_config(config)
    found = c_int(0)
    try:
        _with_progress(progress, lambda fn: lib.mn_upgrade(_b(path, "path") if path else None, cfg, fn, None,
                                                           byref(found)))
    finally:
        lib.mn_config_free(cfg)
    return found.value
