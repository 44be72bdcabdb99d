"""Finding libmnemo and declaring its C API (include/mnemo.h) for ctypes.

The library is looked for, in order: the file named by MNEMO_LIBRARY; a copy installed next to
this package (pip install copies the built libmnemo.so); the build tree when the package is used
from a source checkout (build/libmnemo.so); the system's library path. The first that loads and is
new enough wins; otherwise LibraryError names every place looked and why each was refused.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int64, c_long,
                    c_size_t, c_uint, c_uint32, c_void_p)
from pathlib import Path
from typing import List, Optional, Tuple

from .errors import LibraryError

#: The oldest library these bindings work with (MN_VERSION_NUMBER: major*10000 + minor*100 + patch).
MIN_VERSION = (0, 1, 0)

_PKG_DIR = Path(__file__).resolve().parent
_NAMES = ("libmnemo.so", "libmnemo.so.0")


class MnSession(Structure):
    _fields_ = [("id", c_char_p), ("ns", c_char_p), ("title", c_char_p), ("system_prompt", c_char_p),
                ("metadata", c_char_p), ("tool_name", c_char_p), ("parent_id", c_char_p),
                ("created_at", c_int64), ("updated_at", c_int64), ("expires_at", c_int64),
                ("message_count", c_int64), ("token_count", c_int64), ("ttl_ms", c_int64),
                ("max_turns", c_int64), ("turn_count", c_int64), ("inactive_count", c_int64),
                ("cleared_seq", c_int64), ("cleared_from", c_int64), ("key", c_char_p)]


class MnSessions(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(MnSession))]


class MnSessionOpts(Structure):
    _fields_ = [("size", c_size_t), ("id", c_char_p), ("ns", c_char_p), ("title", c_char_p),
                ("system_prompt", c_char_p), ("metadata", c_char_p), ("tool_name", c_char_p),
                ("ttl_ms", c_int64), ("max_turns", c_int64), ("key", c_char_p)]


class MnMessageIn(Structure):
    _fields_ = [("size", c_size_t), ("role", c_int), ("content", c_char_p), ("tool_calls", c_char_p),
                ("tool_call_id", c_char_p), ("name", c_char_p), ("tool_name", c_char_p), ("model", c_char_p),
                ("files", c_char_p), ("metadata", c_char_p), ("idempotency_key", c_char_p), ("pinned", c_int)]


class MnMessage(Structure):
    _fields_ = [("id", c_int64), ("session_id", c_char_p), ("seq", c_int64), ("role", c_int),
                ("content", c_char_p), ("tool_calls", c_char_p), ("tool_call_id", c_char_p), ("name", c_char_p),
                ("tool_name", c_char_p), ("model", c_char_p), ("files", c_char_p), ("metadata", c_char_p),
                ("idempotency_key", c_char_p), ("tokens", c_int64), ("pinned", c_int), ("created_at", c_int64),
                ("active", c_int)]


class MnMessages(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(MnMessage))]


class MnHistoryOpts(Structure):
    _fields_ = [("size", c_size_t), ("after_seq", c_int64), ("limit", c_size_t), ("tail", c_int), ("all", c_int)]


class MnContextOpts(Structure):
    _fields_ = [("size", c_size_t), ("strategy", c_char_p), ("max_tokens", c_int64), ("format", c_int),
                ("model_window", c_int64), ("flags", c_uint), ("rag", c_int), ("rag_top_k", c_size_t),
                ("rag_min_similarity", c_double), ("rag_scope", c_int), ("fold", c_int), ("memories", c_int),
                ("memories_top_k", c_size_t)]


class MnContext(Structure):
    _fields_ = [("rendered", c_char_p), ("report", c_char_p), ("tokens", c_int64), ("kept", c_size_t),
                ("dropped", c_size_t)]


class MnBudget(Structure):
    _fields_ = [("response", c_int64), ("history", c_int64), ("files", c_int64)]


class MnSummary(Structure):
    _fields_ = [("id", c_int64), ("session_id", c_char_p), ("covers_upto", c_int64), ("folded", c_int64),
                ("text", c_char_p), ("tokens", c_int64), ("model", c_char_p), ("summarizer", c_char_p),
                ("created_at", c_int64)]


class MnReplicaStats(Structure):
    _fields_ = [("replicas", c_int64), ("replicas_up", c_int64), ("on_replica", c_int64), ("on_primary", c_int64),
                ("waited", c_int64), ("lagging", c_int64), ("down", c_int64)]


class MnImportStats(Structure):
    _fields_ = [("sessions_added", c_int64), ("sessions_skipped", c_int64), ("messages_added", c_int64),
                ("messages_skipped", c_int64)]


class MnCompactOpts(Structure):
    _fields_ = [("size", c_size_t), ("instructions", c_char_p)]


class MnStrings(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(c_char_p))]


class MnSearchFilter(Structure):
    """mn_search_filter; metadata since 0.5 (an older library reads `size` and stops before it)."""
    _fields_ = [("size", c_size_t), ("session_id", c_char_p), ("ns", c_char_p), ("role", c_int),
                ("since", c_int64), ("until", c_int64), ("metadata", c_char_p)]


class MnSearchHit(Structure):
    _fields_ = [("message", MnMessage), ("ns", c_char_p), ("score", c_double), ("similarity", c_double),
                ("bm25", c_double), ("semantic_rank", c_int), ("keyword_rank", c_int)]


class MnSearchHits(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(MnSearchHit)), ("mode", c_int), ("not_embedded", c_int64),
                ("index_indexed", c_int64), ("index_scanned", c_int64), ("index_truncated", c_int),
                ("item_size", c_size_t), ("keyword_unindexed", c_int64), ("keyword_scanned", c_int64)]


class MnAppendRequest(Structure):
    _fields_ = [("size", c_size_t), ("session_id", c_char_p), ("msgs", POINTER(MnMessageIn)), ("n", c_size_t),
                ("flags", c_uint), ("ns", c_char_p)]


class MnAppendResult(Structure):
    _fields_ = [("status", c_int), ("errmsg", c_char * 256), ("stored", POINTER(MnMessages))]


class MnMemory(Structure):
    """mn_memory: one version of a long-term memory (a record the library hands out; read only
    through mn_memory_to_json, so a later library that appends members stays compatible)."""
    _fields_ = [("id", c_char_p), ("version", c_int64), ("text", c_char_p), ("kind", c_char_p), ("ns", c_char_p),
                ("user_id", c_char_p), ("agent_id", c_char_p), ("session_id", c_char_p), ("metadata", c_char_p),
                ("sources", POINTER(c_int64)), ("n_sources", c_size_t), ("pinned", c_int), ("token_cap", c_int64),
                ("valid_from", c_int64), ("valid_to", c_int64), ("recorded_at", c_int64),
                ("superseded_at", c_int64), ("change", c_char_p), ("actor", c_char_p), ("reason", c_char_p),
                ("score", c_double)]


class MnMemories(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(MnMemory)), ("item_size", c_size_t)]


class MnMemoryIn(Structure):
    """mn_memory_in (MN_MEMORY_IN_INIT: pinned and token_cap -1, everything else NULL / 0)."""
    _fields_ = [("size", c_size_t), ("text", c_char_p), ("kind", c_char_p), ("ns", c_char_p), ("user_id", c_char_p),
                ("agent_id", c_char_p), ("session_id", c_char_p), ("metadata", c_char_p),
                ("sources", POINTER(c_int64)), ("n_sources", c_size_t), ("pinned", c_int), ("token_cap", c_int64),
                ("valid_from", c_int64), ("valid_to", c_int64), ("actor", c_char_p), ("reason", c_char_p)]


class MnMemoryQuery(Structure):
    """mn_memory_query (MN_MEMORY_QUERY_INIT: pinned -1, everything else NULL / 0)."""
    _fields_ = [("size", c_size_t), ("ns", c_char_p), ("user_id", c_char_p), ("agent_id", c_char_p),
                ("session_id", c_char_p), ("kind", c_char_p), ("metadata", c_char_p), ("as_of", c_int64),
                ("include_closed", c_int), ("pinned", c_int), ("limit", c_size_t), ("offset", c_size_t)]


class MnExtractStats(Structure):
    _fields_ = [("messages", c_int64), ("candidates", c_int64), ("added", c_int64), ("updated", c_int64),
                ("unchanged", c_int64), ("invalidated", c_int64), ("rejected", c_int64)]


class MnExtractJob(Structure):
    """mn_extract_job: an extraction job as mn_memory_extract_job reads it (freed with
    mn_extract_job_free)."""
    _fields_ = [("id", c_char_p), ("session_id", c_char_p), ("ns", c_char_p), ("data", c_char_p),
                ("error", c_char_p), ("upto_seq", c_int64), ("queued_at", c_int64), ("finished_at", c_int64),
                ("state", c_int)]


class MnForgetStats(Structure):
    _fields_ = [("sessions", c_int64), ("memories", c_int64)]


class MnThreadSummary(Structure):
    """mn_thread_summary: the hand-over summary of a thread (a record the library allocates; read
    only through mn_thread_summary_to_json, so a later library that appends members stays
    compatible)."""
    _fields_ = [("thread_id", c_char_p), ("ns", c_char_p), ("title", c_char_p), ("tool_name", c_char_p),
                ("started", c_int64), ("updated_at", c_int64), ("expires_at", c_int64), ("turns", c_int64),
                ("messages", c_int64), ("tokens", c_int64), ("tools_used", MnStrings), ("files", MnStrings),
                ("text", c_char_p)]


class MnCheckpointWrite(Structure):
    """mn_checkpoint_write: one pending write of a graph checkpoint (docs/checkpoints.md)."""
    _fields_ = [("task_id", c_char_p), ("task_path", c_char_p), ("idx", c_int64), ("channel", c_char_p),
                ("type", c_char_p), ("value", c_char_p)]


class MnCheckpoint(Structure):
    """mn_checkpoint: a list item, read through mn_checkpoints_at (the list's item_size steps
    over members a later library appends)."""
    _fields_ = [("thread", c_char_p), ("session_id", c_char_p), ("checkpoint_ns", c_char_p), ("id", c_char_p),
                ("parent_id", c_char_p), ("type", c_char_p), ("data", c_char_p), ("metadata", c_char_p),
                ("created_at", c_int64), ("n_writes", c_size_t), ("writes", POINTER(MnCheckpointWrite))]


class MnCheckpoints(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(MnCheckpoint)), ("item_size", c_size_t)]


class MnCheckpointIn(Structure):
    _fields_ = [("size", c_size_t), ("ns", c_char_p), ("thread", c_char_p), ("checkpoint_ns", c_char_p),
                ("id", c_char_p), ("parent_id", c_char_p), ("type", c_char_p), ("data", c_char_p),
                ("metadata", c_char_p)]


class MnCheckpointQuery(Structure):
    _fields_ = [("size", c_size_t), ("ns", c_char_p), ("thread", c_char_p), ("checkpoint_ns", c_char_p),
                ("id", c_char_p), ("before", c_char_p), ("filter", c_char_p), ("limit", c_size_t)]


class MnDocument(Structure):
    """mn_document: a list item, read through mn_documents_at (the list's item_size steps over
    members a later library appends)."""
    _fields_ = [("ns", c_char_p), ("path", c_char_p), ("key", c_char_p), ("value", c_char_p),
                ("created_at", c_int64), ("updated_at", c_int64), ("expires_at", c_int64), ("scored", c_int),
                ("score", c_double)]


class MnDocuments(Structure):
    _fields_ = [("count", c_size_t), ("items", POINTER(MnDocument)), ("item_size", c_size_t)]


class MnDocumentIn(Structure):
    _fields_ = [("size", c_size_t), ("ns", c_char_p), ("path", c_char_p), ("key", c_char_p), ("value", c_char_p),
                ("index", c_char_p), ("ttl_ms", c_int64)]


class MnDocumentQuery(Structure):
    _fields_ = [("size", c_size_t), ("ns", c_char_p), ("prefix", c_char_p), ("filter", c_char_p),
                ("query", c_char_p), ("limit", c_size_t), ("offset", c_size_t), ("refresh_ttl", c_int)]


class MnDocumentPathsQuery(Structure):
    _fields_ = [("size", c_size_t), ("ns", c_char_p), ("prefix", c_char_p), ("suffix", c_char_p),
                ("max_depth", c_size_t), ("limit", c_size_t), ("offset", c_size_t)]


WRITE_FN = CFUNCTYPE(c_int, c_void_p, POINTER(c_char), c_size_t)
READ_FN = CFUNCTYPE(c_long, c_void_p, POINTER(c_char), c_size_t)
PROGRESS_FN = CFUNCTYPE(None, c_void_p, c_int64, c_int64)
LOG_FN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)

_P = POINTER
_pp = c_void_p  # an opaque handle (mn_db *, mn_config *)

# name: (restype, argtypes). Every mn_status is returned as c_int.
_PROTOTYPES = {
    "mn_version": (c_char_p, []),
    "mn_version_number": (c_int, []),
    "mn_status_name": (c_char_p, [c_int]),
    "mn_status_str": (c_char_p, [c_int]),
    "mn_errmsg": (c_char_p, []),
    "mn_set_log": (None, [LOG_FN, c_void_p, c_int]),
    "mn_free": (None, [c_void_p]),
    "mn_config_new": (c_int, [_P(c_void_p)]),
    "mn_config_load": (c_int, [c_void_p, c_char_p]),
    "mn_config_set": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p]),
    "mn_config_get": (c_int, [c_void_p, c_char_p, _P(c_char_p), _P(c_char_p)]),
    "mn_config_free": (None, [c_void_p]),
    "mn_config_count": (c_size_t, []),
    "mn_config_key": (c_char_p, [c_size_t]),
    "mn_open": (c_int, [c_void_p, _P(c_void_p)]),
    "mn_open_path": (c_int, [c_char_p, c_void_p, _P(c_void_p)]),
    "mn_close": (None, [c_void_p]),
    "mn_db_path": (c_char_p, [c_void_p]),
    "mn_db_tokenizer": (c_char_p, [c_void_p]),
    "mn_session_create": (c_int, [c_void_p, _P(MnSessionOpts), _P(_P(MnSession))]),
    "mn_session_get": (c_int, [c_void_p, c_char_p, _P(_P(MnSession))]),
    "mn_session_list": (c_int, [c_void_p, c_char_p, c_size_t, c_size_t, _P(_P(MnSessions))]),
    "mn_session_delete": (c_int, [c_void_p, c_char_p]),
    "mn_session_update": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p]),
    "mn_session_resume": (c_int, [c_void_p, c_char_p, c_char_p, _P(_P(MnSession))]),
    "mn_session_fork": (c_int, [c_void_p, c_char_p, c_int64, _P(_P(MnSession))]),
    "mn_session_files": (c_int, [c_void_p, c_char_p, _P(_P(MnStrings))]),
    "mn_session_files_n": (c_int, [c_void_p, c_char_p, c_size_t, _P(_P(MnStrings))]),
    "mn_session_free": (None, [_P(MnSession)]),
    "mn_sessions_free": (None, [_P(MnSessions)]),
    "mn_session_to_json": (c_int, [_P(MnSession), _P(c_void_p)]),
    "mn_session_resolve": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_char)]),
    "mn_strings_free": (None, [_P(MnStrings)]),
    "mn_prune": (c_int, [c_void_p, c_int, _P(c_int64)]),
    "mn_gc": (c_int, [c_void_p, _P(c_int64)]),
    "mn_vacuum": (c_int, [c_void_p]),
    "mn_session_clear": (c_int, [c_void_p, c_char_p, c_uint, _P(c_int64)]),
    "mn_session_set_max_turns": (c_int, [c_void_p, c_char_p, c_int64]),
    "mn_namespace_forget": (c_int, [c_void_p, c_char_p, _P(MnForgetStats)]),
    "mn_thread_summary_get": (c_int, [c_void_p, c_char_p, c_size_t, _P(_P(MnThreadSummary))]),
    "mn_thread_summary_free": (None, [_P(MnThreadSummary)]),
    "mn_thread_summary_to_json": (c_int, [_P(MnThreadSummary), _P(c_void_p)]),
    "mn_file_should_include": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_size_t, _P(c_int)]),
    "mn_role_parse": (c_int, [c_char_p, _P(c_int)]),
    "mn_append": (c_int, [c_void_p, c_char_p, _P(MnMessageIn), c_uint, _P(_P(MnMessage))]),
    "mn_append_batch": (c_int, [c_void_p, c_char_p, _P(MnMessageIn), c_size_t, c_uint, _P(_P(MnMessages))]),
    "mn_append_many": (c_int, [c_void_p, _P(MnAppendRequest), c_size_t, c_int, _P(MnAppendResult)]),
    "mn_message_delete": (c_int, [c_void_p, c_char_p, c_int64]),
    "mn_message_edit": (c_int, [c_void_p, c_char_p, c_int64, c_char_p, c_char_p, _P(_P(MnMessage))]),
    "mn_history": (c_int, [c_void_p, c_char_p, _P(MnHistoryOpts), _P(_P(MnMessages))]),
    "mn_message_free": (None, [_P(MnMessage)]),
    "mn_messages_free": (None, [_P(MnMessages)]),
    "mn_message_to_json": (c_int, [_P(MnMessage), _P(c_void_p)]),
    "mn_messages_to_json": (c_int, [_P(MnMessages), c_size_t, c_size_t, _P(c_void_p)]),
    "mn_format_parse": (c_int, [c_char_p, _P(c_int)]),
    "mn_context_build": (c_int, [c_void_p, c_char_p, _P(MnContextOpts), _P(_P(MnContext))]),
    "mn_context_free": (None, [_P(MnContext)]),
    "mn_budget_split": (c_int, [c_int64, _P(MnBudget)]),
    "mn_message_pin": (c_int, [c_void_p, c_int64, c_int]),
    "mn_session_message_pin": (c_int, [c_void_p, c_char_p, c_int64, c_int]),
    "mn_summary_get": (c_int, [c_void_p, c_char_p, _P(_P(MnSummary))]),
    "mn_summary_free": (None, [_P(MnSummary)]),
    "mn_compact": (c_int, [c_void_p, c_char_p, _P(c_void_p)]),
    "mn_compact_ex": (c_int, [c_void_p, c_char_p, _P(MnCompactOpts), _P(c_void_p)]),
    "mn_compaction_counts": (None, [_P(c_int64), _P(c_int64), _P(c_int64)]),
    "mn_events_json": (c_int, [c_void_p, c_char_p, c_size_t, _P(c_void_p)]),
    "mn_export": (c_int, [c_void_p, _P(c_char_p), c_size_t, WRITE_FN, c_void_p]),
    "mn_import": (c_int, [c_void_p, READ_FN, c_void_p, _P(MnImportStats)]),
    "mn_state_get": (c_int, [c_void_p, c_char_p, c_int, _P(c_void_p)]),
    "mn_state_merge_params": (c_int, [c_void_p, c_char_p, c_char_p]),
    "mn_state_set_waiting": (c_int, [c_void_p, c_char_p, c_char_p]),
    "mn_state_set_result": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p]),
    "mn_state_set_plan": (c_int, [c_void_p, c_char_p, c_char_p]),
    "mn_state_clear": (c_int, [c_void_p, c_char_p]),
    "mn_count_tokens": (c_int, [c_char_p, c_char_p, c_size_t, _P(c_size_t)]),
    "mn_count_tokens_threads": (c_int, [c_char_p, c_char_p, c_size_t, c_uint, _P(c_size_t)]),
    "mn_encode_tokens": (c_int, [c_char_p, c_char_p, c_size_t, _P(_P(c_uint32)), _P(c_size_t)]),
    "mn_reindex_tokens": (c_int, [c_void_p, PROGRESS_FN, c_void_p, _P(c_int64)]),
    "mn_migrate": (c_int, [c_char_p, c_char_p, c_void_p, c_int, PROGRESS_FN, c_void_p, _P(MnImportStats)]),
    "mn_upgrade": (c_int, [c_char_p, c_void_p, PROGRESS_FN, c_void_p, _P(c_int)]),
    "mn_search": (c_int, [c_void_p, c_char_p, c_int, c_size_t, _P(MnSearchFilter), c_double, _P(_P(MnSearchHits))]),
    "mn_search_hits_free": (None, [_P(MnSearchHits)]),
    "mn_search_hits_to_json": (c_int, [_P(MnSearchHits), _P(c_void_p)]),
    "mn_relevant_context": (c_int, [c_void_p, c_char_p, c_int64, _P(MnSearchFilter), _P(c_void_p)]),
    "mn_embed_pending": (c_int, [c_void_p, c_size_t, _P(c_size_t)]),
    "mn_embed_backfill": (c_int, [c_void_p, PROGRESS_FN, c_void_p, _P(c_int64)]),
    "mn_reindex_embeddings": (c_int, [c_void_p, PROGRESS_FN, c_void_p, _P(c_int64)]),
    "mn_embed_counts": (c_int, [c_void_p, _P(c_int64), _P(c_int64)]),
    "mn_db_position": (c_int, [c_void_p, c_char_p]),
    "mn_db_read_after": (c_int, [c_void_p, c_char_p]),
    "mn_replica_stats_get": (c_int, [c_void_p, _P(MnReplicaStats)]),
    "mn_stats_json": (c_int, [c_void_p, _P(c_void_p)]),
    "mn_memory_add": (c_int, [c_void_p, _P(MnMemoryIn), _P(_P(MnMemory))]),
    "mn_memory_get": (c_int, [c_void_p, c_char_p, _P(_P(MnMemory))]),
    "mn_memory_update": (c_int, [c_void_p, c_char_p, _P(MnMemoryIn), _P(_P(MnMemory))]),
    "mn_memory_delete": (c_int, [c_void_p, c_char_p, c_int64, c_char_p, c_char_p]),
    "mn_memory_forget": (c_int, [c_void_p, c_char_p]),
    "mn_memory_history": (c_int, [c_void_p, c_char_p, _P(_P(MnMemories))]),
    "mn_memory_list": (c_int, [c_void_p, _P(MnMemoryQuery), _P(_P(MnMemories))]),
    "mn_memory_search": (c_int, [c_void_p, c_char_p, c_int, _P(MnMemoryQuery), _P(_P(MnMemories))]),
    "mn_memory_extract": (c_int, [c_void_p, c_char_p, c_char_p, _P(MnExtractStats)]),
    "mn_memory_extract_queue": (c_int, [c_void_p, c_char_p, c_char_p, _P(c_void_p)]),
    "mn_memory_extract_job": (c_int, [c_void_p, c_char_p, c_char_p, _P(_P(MnExtractJob))]),
    "mn_extract_job_free": (None, [_P(MnExtractJob)]),
    "mn_memory_free": (None, [_P(MnMemory)]),
    "mn_memories_free": (None, [_P(MnMemories)]),
    "mn_memory_to_json": (c_int, [_P(MnMemory), _P(c_void_p)]),
    "mn_memories_to_json": (c_int, [_P(MnMemories), _P(c_void_p)]),
    "mn_checkpoint_put": (c_int, [c_void_p, _P(MnCheckpointIn)]),
    "mn_checkpoint_put_writes": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_char_p, _P(MnCheckpointWrite),
                                         c_size_t]),
    "mn_checkpoint_get": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_char_p, _P(_P(MnCheckpoints))]),
    "mn_checkpoint_list": (c_int, [c_void_p, _P(MnCheckpointQuery), _P(_P(MnCheckpoints))]),
    "mn_checkpoint_delete_thread": (c_int, [c_void_p, c_char_p, c_char_p, _P(c_int64)]),
    "mn_checkpoints_at": (_P(MnCheckpoint), [_P(MnCheckpoints), c_size_t]),
    "mn_checkpoints_free": (None, [_P(MnCheckpoints)]),
    "mn_document_put": (c_int, [c_void_p, _P(MnDocumentIn), _P(_P(MnDocuments))]),
    "mn_document_get": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, c_int, _P(_P(MnDocuments))]),
    "mn_document_delete": (c_int, [c_void_p, c_char_p, c_char_p, c_char_p, _P(c_int64)]),
    "mn_document_search": (c_int, [c_void_p, _P(MnDocumentQuery), _P(_P(MnDocuments))]),
    "mn_document_paths": (c_int, [c_void_p, _P(MnDocumentPathsQuery), _P(_P(MnStrings))]),
    "mn_documents_at": (_P(MnDocument), [_P(MnDocuments), c_size_t]),
    "mn_documents_free": (None, [_P(MnDocuments)]),
}


def _candidates() -> List[Tuple[str, str]]:
    """(where, path-or-name) pairs in search order."""
    out: List[Tuple[str, str]] = []
    env = os.environ.get("MNEMO_LIBRARY")
    if env:
        out.append(("MNEMO_LIBRARY", env))
    for name in _NAMES:
        out.append(("the package directory", str(_PKG_DIR / name)))
    # A source checkout: python/mnemo/ -> <repo>/build/libmnemo.so (what `make` builds).
    repo = _PKG_DIR.parent.parent
    if (repo / "include" / "mnemo.h").is_file():
        out.append(("the build tree", str(repo / "build" / "libmnemo.so")))
    found = ctypes.util.find_library("mnemo")
    out.append(("the system library path", found or "libmnemo.so.0"))
    return out


def _version_tuple(number: int) -> Tuple[int, int, int]:
    return number // 10000, number // 100 % 100, number % 100


def _try(path: str) -> Tuple[Optional[ctypes.CDLL], str]:
    """Loads one candidate; returns (library, "") or (None, why it was refused)."""
    if os.sep in path and not os.path.exists(path):
        return None, "not found"
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        why = str(e)
        if "ASan runtime" in why or "__asan" in why:
            why += (" (an AddressSanitizer build: run Python with LD_PRELOAD=$(clang -print-file-name="
                    "libclang_rt.asan-x86_64.so) ASAN_OPTIONS=detect_leaks=0, see docs/python.md)")
        return None, why
    if not hasattr(lib, "mn_version_number"):
        return None, "not libmnemo (no mn_version_number)"
    lib.mn_version_number.restype = c_int
    have = _version_tuple(lib.mn_version_number())
    if have[0] != MIN_VERSION[0] or have < MIN_VERSION:
        want = "%d.%d.%d" % MIN_VERSION
        return None, "version %d.%d.%d is older than or incompatible with the %s these bindings need" % (
            have + (want,))
    missing = [n for n in _PROTOTYPES if not hasattr(lib, n)]
    if missing:
        return None, "older library: lacks " + ", ".join(missing[:5])
    return lib, ""


_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None
_log_cb = None  # keeps the ctypes callback alive


def load() -> ctypes.CDLL:
    """The loaded library (loaded on first use). Raises LibraryError naming every place looked."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for where, path in _candidates():
            lib, why = _try(path)
            if lib is None:
                tried.append("  %s: %s: %s" % (where, path, why))
                continue
            for name, (restype, argtypes) in _PROTOTYPES.items():
                fn = getattr(lib, name)
                fn.restype = restype
                fn.argtypes = argtypes
            _install_log(lib)
            _lib, _lib_path = lib, path
            return lib
        raise LibraryError("libmnemo %d.%d.%d or newer was not found; looked in:\n" % MIN_VERSION
                           + "\n".join(tried)
                           + "\nBuild it with `make` and set MNEMO_LIBRARY to build/libmnemo.so, or install"
                           " the package from a tree where it is built (docs/python.md).")


def library_path() -> str:
    """The path (or name) the library was loaded from."""
    load()
    assert _lib_path is not None
    return _lib_path


def _install_log(lib: ctypes.CDLL) -> None:
    """Forwards the library's warnings and errors to the `mnemo` logger."""
    import atexit
    import logging

    global _log_cb
    logger = logging.getLogger("mnemo")
    levels = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}

    def forward(_user, level, message):  # may run on any thread that calls into mnemo
        try:
            logger.log(levels.get(level, logging.WARNING), "%s", message.decode("utf-8", "replace"))
        except Exception:  # a callback must never raise into C
            pass

    _log_cb = LOG_FN(forward)
    lib.mn_set_log(_log_cb, None, 2)
    atexit.register(lambda: lib.mn_set_log(LOG_FN(0), None, 2))  # 0: NULL, no callback
