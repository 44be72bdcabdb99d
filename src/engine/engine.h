/*
 * engine.h — the use-case layer (src/engine/, docs/ARCHITECTURE.md): the database handle, the
 * checks every entry point starts with, and the use cases the public functions of src/mnemo*.c
 * call. Nothing here calls up into src/mnemo*.c; the public files call down into it and never
 * each other.
 */
#ifndef MN_ENGINE_H
#define MN_ENGINE_H

#include <stddef.h>

#include "mnemo.h"
#include "config/settings.h"
#include "store/store.h"
#include "token/token.h"
#include "util/uuid.h"

#define DB_MAGIC 0x6D6E6462u /* "mndb" */

struct mn_db {
    unsigned magic;
    mn_config *cfg;              /* the handle's own copy, never changed after open */
    struct mn_settings settings; /* typed snapshot of cfg, filled at open (config/settings.h) */
    mn_store *store;
    mn_tokenizer *tk; /* shared; see shared_tokenizer in mnemo.c */
    char *path;
    size_t max_message_bytes;
    struct mn_search_state *search; /* engine/search.c */
    mn_fold_queue_fn fold_queue;    /* background folds (mn_fold_queue_set), NULL: none */
    void *fold_queue_user;
    struct mn_memory_bg *memory_bg; /* engine/memory_bg.c */
};

/* ---- open.c: the handle's life ---- */

/* mn_open_path after its argument check: a new handle on path (NULL: memory.storage_path). */
mn_status mn__open_db(const char *path, const mn_config *cfg, mn_db **out);
/* mn_close: NULL or a closed handle is a no-op. */
void mn__close_db(mn_db *db);
/* mn_upgrade after clearing the error: opens the store alone (opening migrates the schema,
 * reporting its longest step), then closes it; *from_version (may be NULL) gets the version
 * found, 0 on failure. */
mn_status mn__upgrade_db(const char *path, const mn_config *cfg, mn_progress_fn progress, void *user,
                         int *from_version);
/* "~/x" as "$HOME/x" (malloc'd; NULL on OOM). */
char *mn__expand_path(const char *path);
/* The store options a configuration asks for. */
mn_store_opts mn__store_opts(const mn_config *cfg, mn_progress_fn progress, void *user);
/* The tokenizer for a configured name ("auto": cl100k_base when its rank file is found, else the
 * heuristic), shared by every handle of the process. */
mn_status mn__resolve_tokenizer(const char *name, const char *configured_dir, mn_tokenizer **out);

/* ---- backup.c ---- */

/* mn_backup after its handle and argument checks: the database copied online, with its keyword
 * index, saved vector indexes and offloaded tool outputs, into the new file dest. */
mn_status mn__backup_db(mn_db *db, const char *dest, mn_progress_fn progress, void *user);

/* ---- mask.c ---- */

/* The value of setting key as `mnemo config show` prints it, its secrets as *** (malloc'd; NULL
 * on OOM). */
char *mn__mask_setting(const char *key, const char *value);

/* ---- handle.c: the checks every entry point starts with ---- */

/* Clears the thread's error and checks the handle (MN_MISUSE). */
mn_status mn__check_db(const mn_db *db);
/* Checks a session id and writes its canonical form (MN_INVALID). */
mn_status mn__check_id(const char *id, char canon[MN_UUID_LEN + 1]);
/* A session reference — its UUID, or its key in namespace ns (NULL: "default") — as the
 * canonical id (MN_INVALID, MN_NOTFOUND for a key that names no session). Keys never change, so
 * the id stays right for the rest of the call. */
mn_status mn__session_ref(mn_db *db, const char *ns, const char *ref, char canon[MN_UUID_LEN + 1]);
/* Reads a session that exists and has not expired (MN_NOTFOUND, MN_EXPIRED with the time).
 * out may be NULL to only check; else the caller frees *out with mn_session_free. */
mn_status mn__live_session(mn_db *db, const char *canon_id, mn_session **out);
/* MN_EXPIRED (with the time) when a session's expires_at (0: none) has passed, else MN_OK. */
mn_status mn__session_unexpired(const char *canon_id, int64_t expires_at);
/* The store of a checked handle: its label (the database's path, a URL's secrets as ***), how
 * many appends it runs at once and whether its reads are local (mn_db_path,
 * mn_db_append_writers, mn_db_reads_local). */
const char *mn__get_db_label(const mn_db *db);
int mn__get_append_writers(const mn_db *db);
int mn__get_reads_local(const mn_db *db);
/* Read replicas (mn_db_position, mn_db_read_after, mn_replica_stats_get): on 1 this thread's
 * reads may go to a replica until on 0 (the public read functions wrap their work in it); the
 * position after this handle's commits; the position this thread's reads must see. */
void mn__replica_reads(mn_db *db, int on);
void mn__get_position(mn_db *db, char out[MN_POSITION_MAX]);
mn_status mn__set_read_after(mn_db *db, const char *position);
void mn__get_replica_stats(mn_db *db, mn_replica_stats *out);
/* rc = call, with the thread's reads open to a replica meanwhile (rc: the caller's status). */
#define MN__ON_REPLICA(db, call) (mn__replica_reads((db), 1), rc = (call), mn__replica_reads((db), 0), rc)

/* ---- session.c: sessions, created, read and changed ---- */

/* mn_session_create after its handle and ABI checks (opts: the caller's, loaded; never NULL):
 * the fields checked, the thread defaults of the configuration, the insert; a taken key or id
 * says which (MN_CONFLICT), an id of another namespace is not found. *out (may be NULL) gets the
 * session, made before the insert so that a stored session never answers with an error. */
mn_status mn__create_session(mn_db *db, const mn_session_opts *opts, mn_session **out);
/* mn_session_get_in for session canon: one of another namespace (ns not NULL) is not found, and
 * that is checked before its expiry. */
mn_status mn__get_session_in(mn_db *db, const char *ns, const char *canon, mn_session **out);
/* A page of the sessions (of namespace ns when not NULL), most recently updated first. */
mn_status mn__list_sessions(mn_db *db, const char *ns, size_t limit, size_t offset, mn_sessions **out);
/* mn_history after its argument checks: session canon live, then its messages. */
mn_status mn__read_history(mn_db *db, const char *canon, const mn_history_opts *opts, mn_messages **out);
/* mn_session_update for session canon (a canonical id): title and metadata checked, the session
 * live; a metadata opting in to memory extraction is noted. */
mn_status mn__update_session(mn_db *db, const char *canon, const char *title, const char *metadata);
/* The frees of the records the store hands out (mn_session_free, …); each takes NULL. */
void mn__free_session(mn_session *s);
void mn__free_sessions(mn_sessions *list);
void mn__free_message(mn_message *m);
void mn__free_messages(mn_messages *list);

/* ---- threads.c: resume, files, the hand-over summary ---- */

/* The newest live session (in namespace ns when not NULL; checked by the caller). */
mn_status mn__resume_session(mn_db *db, const char *ns, mn_session **out);
/* The unique files session canon's messages list (mn_session_files's order), the first
 * max_files of them (0: all); freed with mn_strings_free. */
mn_status mn__list_session_files(mn_db *db, const char *canon, size_t max_files, mn_strings **out);
/* mn_file_should_include after its checks (session canon live): the content's SHA-256 noted
 * under path, the first path it was seen under kept; *include is 0 only for that content again
 * under that first path. */
mn_status mn__record_file(mn_db *db, const char *canon, const char *path, const char *content, size_t len,
                          int *include);
/* mn_thread_summary_get after its checks (session canon: a canonical id), and its free. */
mn_status mn__get_thread_summary(mn_db *db, const char *canon, size_t max_files, mn_thread_summary **out);
void mn__free_thread_summary(mn_thread_summary *p);

/* ---- state.c: a session's state ---- */

/* One change (memory/state.h) of session canon's state (live, checked by the caller). */
struct mn_state_change;
mn_status mn__change_state(mn_db *db, const char *canon, struct mn_state_change *c);
/* The state as mn_state_get shows it: secrets redacted unless reveal; *out malloc'd. */
mn_status mn__get_state(mn_db *db, const char *canon, int reveal, char **out);

/* ---- turns.c: the turn limit, clearing and its undo ---- */

/* threads.trim: 1 when the turn limit deletes the messages it moves out (else they go inactive). */
int mn__trim_delete(const mn_db *db);
struct mn_store_row_ops;
struct mn_store_tx;
/* The turn limit inside the caller's write transaction tx (append, a new limit): the messages
 * before the session's newest max_turns (> 0) active turns leave the active history, or are
 * deleted (trim_delete); the session's counters follow. Nothing to trim costs one statement (no
 * more turns than the limit) or two (an update that finds the older messages inactive). */
mn_status mn__turns_trim(const struct mn_store_row_ops *o, struct mn_store_tx *tx, int64_t sid, int64_t max_turns,
                         int trim_delete, int64_t now_ms);
/* mn_session_clear after its checks (canon: a live session's canonical id): a clear, with the
 * state when with_state, or its undo; *changed gets the messages moved. */
mn_status mn__clear_session(mn_db *db, const char *canon, int undo, int with_state, int64_t *changed);
/* mn_session_set_max_turns after its checks: the new limit (0: none), applied now. */
mn_status mn__session_set_turns(mn_db *db, const char *canon, int64_t max_turns);

/* ---- edit.c ---- */

/* mn_message_edit after its argument checks (canon: a live session's canonical id). */
mn_status mn__edit_message(mn_db *db, const char *canon, int64_t message_id, const char *content,
                           const char *metadata, mn_message **out);
/* Deletes one message of session canon with everything that kept its text (the erasure
 * included). MN_NOTFOUND when the session has no such message. */
mn_status mn__delete_message(mn_db *db, const char *canon, int64_t message_id);

/* ---- fork.c ---- */

/* mn_session_fork after its argument checks (canon: the source's canonical id): the copy, in
 * one transaction; *out (may be NULL) gets the new session. */
mn_status mn__fork_session(mn_db *db, const char *canon, int64_t upto_seq, mn_session **out);

/* ---- erase.c ---- */

/* Erasure ( docs/erasure.md): after the store deleted a message (seq) or sessions,
 * removes their offloaded tool outputs and the saved vector index. */
void mn__erased_message(mn_db *db, const char *session_id, int64_t seq);
void mn__erased_sessions(mn_db *db, const mn_strings *ids);
/* Deletes session canon and everything kept of it: the extraction watermark, the rows (the store
 * erases them), then the files above. */
mn_status mn__delete_session(mn_db *db, const char *canon);
/* mn_gc and mn_prune after their checks: deletes the expired sessions, or those not updated for
 * `days` days, and everything kept of them as mn__delete_session does; *n gets how many. */
mn_status mn__sessions_gc(mn_db *db, int64_t *n);
mn_status mn__sessions_prune(mn_db *db, int days, int64_t *n);
/* After memories were forgotten: the memory vector index (this handle's and the saved file)
 * goes, as it keeps their vectors as tombstones; the next writer builds it again. */
void mn__erased_memories(mn_db *db);
/* mn_namespace_forget after its checks: every session, long-term memory and document of ns;
 * st counts the sessions and memories erased, failure or not. */
mn_status mn__forget_namespace(mn_db *db, const char *ns, mn_forget_stats *st);

/* ---- sources.c ---- */

/* mn_memory_erase_sources for session canon: its messages that memory_id names (NULL: all), those
 * no live memory of its namespace names erased; *erased (may be NULL) counts them. */
mn_status mn__erase_memory_sources(mn_db *db, const char *canon, const char *memory_id, int64_t *erased);

/* ---- io.c: export and import ---- */

/* mn_export after its argument checks: sessions ids[0..n) (references: UUIDs or keys; each
 * written once), or the whole database (n 0); nothing is written unless every named session
 * exists. */
mn_status mn__export_sessions(mn_db *db, const char *const *ids, size_t n, mn_write_fn write, void *user);
/* mn_import after its argument checks: every line in one transaction; *st counts what was added
 * and skipped (the caller zeroes it and hands it on only after success). */
mn_status mn__import_sessions(mn_db *db, mn_read_fn read, void *user, mn_import_stats *st);

/* ---- import_rows.c: session and message rows as an export has them (import, migrate) ---- */

/* The session the rows follow: one the import added with a title, until its messages are in. */
struct mn__import_rows {
    char *id, *title;
    int64_t seq; /* the first of its user messages whose title it is (0: none yet) */
};
/* store.h's import_session and import_message, inside the caller's begin…commit; an added
 * session's title_seq is recorded once its messages are in (at the next session row, or at
 * mn__import_rows_end, which a caller runs before its commit). Free with mn__import_rows_free
 * (a failed import). */
mn_status mn__import_session_row(mn_store *st, struct mn__import_rows *r, const mn_session *s, int *added);
mn_status mn__import_message_row(mn_store *st, struct mn__import_rows *r, const mn_message *m, int *added);
mn_status mn__import_rows_end(mn_store *st, struct mn__import_rows *r);
void mn__import_rows_free(struct mn__import_rows *r);

/* ---- admin.c: looking after a whole database ---- */

/* mn_reindex_tokens after its handle check: every message counted again with the handle's
 * tokenizer, whose name is then stored; *n gets how many were recounted. */
mn_status mn__recount_tokens(mn_db *db, mn_progress_fn progress, void *user, int64_t *n);
/* mn_stats_get, mn_stats_json (with path, backend, tokenizer and bytes per message) and
 * mn_vacuum after their checks. */
mn_status mn__read_stats(mn_db *db, mn_stats *out);
mn_status mn__format_stats(mn_db *db, char **out);
mn_status mn__vacuum_db(mn_db *db);
/* After an import or a migration has committed: the store's planner statistics refreshed
 * (store.h analyze), a failure logged, never returned. */
void mn__analyze_after_load(mn_store *st);

/* ---- migrate.c ---- */

/* mn_migrate after its argument checks: database `from` copied into `to` (each a path or URL;
 * the destination empty unless append); *stats gets the counts on success. */
mn_status mn__migrate_db(const char *from, const char *to, const mn_config *cfg, int append, mn_progress_fn progress,
                         void *user, mn_import_stats *stats);

/* ---- context.c: the context pipeline's entry (settings, summariser, offload folder) ---- */

/* The folder offloaded tool outputs go under: the database's, or the user's data folder for a
 * database URL ("" when it cannot be made). */
void mn__offload_dir(const mn_db *db, char *out, size_t cap);
struct mn_built;
/* True for window, summary, chunked, hybrid. */
int mn__strategy_known(const char *strategy);
/* Builds session s's context with the handle's configuration (b zeroed; mn__built_release);
 * detail 1: the report's "detail" member (MN_CONTEXT_DETAIL). */
mn_status mn__assemble_context(mn_db *db, const mn_session *s, const char *strategy, int64_t max_tokens,
                               int64_t model_window, int fold_mode, int detail, struct mn_built *b);
/* The context pipeline for session s (live, checked): assemble, RAG (opts->rag), render; *out is
 * freed with mn__free_context. The arguments are checked by mn__context_for. */
mn_status mn__build_context(mn_db *db, const mn_session *s, const char *strategy, int64_t max_tokens,
                            int64_t model_window, int fold_mode, const mn_context_opts *opts, mn_context **out);
void mn__free_context(mn_context *ctx);
/* mn_context_build for session canon (a canonical id): the options checked and defaulted from
 * the configuration, the session live, then mn__build_context. */
mn_status mn__context_for(mn_db *db, const char *canon, const mn_context_opts *opts, mn_context **out);
struct json_t;
/* A compaction of session s now (mn_compact_ex), with summarizer.model; *event gets the
 * compaction event (caller json_decref). */
mn_status mn__compact_context(mn_db *db, const mn_session *s, const char *instructions, struct json_t **event);
/* model_window split into response, history and files (model_window checked by the caller). */
void mn__split_budget(int64_t model_window, mn_budget *out);

/* ---- governance.c: what context governance keeps for a session ---- */

/* mn_message_pin (canon NULL: the message by its id alone) and mn_session_message_pin after
 * their checks. */
mn_status mn__pin_message(mn_db *db, const char *canon, int64_t message_id, int pinned);
/* mn_summary_get after its checks (session canon live): MN_NOTFOUND when it has none. */
mn_status mn__get_summary(mn_db *db, const char *canon, mn_summary **out);
/* mn_events_json after its checks: the newest `limit` events of session canon as a JSON array. */
mn_status mn__list_events(mn_db *db, const char *canon, size_t limit, char **out);

/* ---- search.c, rag.c ---- */

/* Search: set up at open (queueing when an embedder is configured), released
 * at close (saving the vector index), auto-embedding after an append (embedder.mode inline),
 * and RAG injection into a built context (opts->rag). */
mn_status mn__search_open(mn_db *db);
void mn__search_close(mn_db *db);
void mn__search_after_append(mn_db *db);
/* The handle's embedder, opened on first use (MN_UNAVAILABLE when none is configured). */
struct mn_embedder;
mn_status mn__search_embedder(mn_db *db, struct mn_embedder **out);
/* The handle's vector index over memory versions ("<db>.memories.hnsw"; search.c). */
struct mn_vsearch;
mn_status mn__memory_vsearch(mn_db *db, struct mn_vsearch **out);
/* The writers' step after memory vectors were stored or removed (`added` of them): the memory
 * index follows (built from scratch when there is none or `rebuild`). A failure is logged,
 * never returned: the memories are stored and searches scan what the index lacks. */
void mn__memory_index_update(mn_db *db, int rebuild, size_t added);
/* The same for a single write (add, update, delete, extraction): left to the handle's background
 * worker (memory_bg.c), so the write never waits for the graph or a save. */
void mn__memory_index_later(mn_db *db, size_t added);
/* Returns when the worker has no index update due or running (tests, benchmarks). */
void mn__memory_index_wait(mn_db *db);
/* Erases deleted vectors from the messages' (memory 0) or memories' (1) index: from this
 * handle's copy in memory (the change log applied now) and from the saved file (erase.c). */
void mn__vector_index_erase(mn_db *db, int memory);
/* Checks mn_search_filter.metadata (engine/filter.c): a JSON object of at most 16 scalar
 * members with keys of [A-Za-z0-9_.-]; MN_INVALID naming the fault. */
mn_status mn__check_filter_metadata(const char *metadata);
/* True when embedder.name is not none. */
int mn__embedder_configured(mn_db *db);
/* Embeds up to max (0: all) queued messages and updates the index; *done counts them. */
mn_status mn__embed_pending_messages(mn_db *db, size_t max, int64_t *done);
/* Queues the messages without a vector (reset: every message) and embeds them. */
mn_status mn__embed_fill(mn_db *db, int reset, mn_progress_fn progress, void *user, int64_t *done);
/* mn_embed_counts: messages with a vector, and queued for one (each may be NULL). */
mn_status mn__count_embeddings(mn_db *db, int64_t *embedded, int64_t *queued);
/* mn_keyword_drain: the keyword index's catch-up step now (all: the whole log, else what this
 * handle logged when it is a chunk); mn_keyword_drain_defer: on, appends stop asking the
 * indexer thread for it and the caller drains. */
mn_status mn__drain_keywords(mn_db *db, int all, int64_t *applied, int64_t *pending);
void mn__defer_keyword_drain(mn_db *db, int on);
/* A search over checked arguments (f complete; mode may be AUTO); *out freed with
 * mn__free_search_hits. */
mn_status mn__search_run(mn_db *db, const char *query, mn_search_mode mode, size_t top_k, const mn_search_filter *f,
                         double min_sim, mn_search_hits **out);
void mn__free_search_hits(mn_search_hits *hits);
/* rag.c: the RAG block for query within max_tokens (mn_relevant_context), and the injection into
 * a built context (opts->rag; the options are checked here, a failing retrieval is reported). */
mn_status mn__find_relevant_context(mn_db *db, const char *query, int64_t max_tokens, const mn_search_filter *f,
                               char **text);
/* Retrieval in a built context, in two steps around the history's build: plan (the options
 * checked; on by default, memory.rag.*) reads the first build b: when it left history out, it
 * searches with the current turn's user message and sets the share of the budget the history
 * leaves for the block (mn__rag_reserve: the block's cost, at most memory.rag.share_percent);
 * inject puts the hits that are not in the final build in front of that message, within
 * max_tokens, and the report's "rag". *out is NULL when retrieval is off. */
struct mn_ragctx;
/* Over_budget, shortfall and the pre-flight of b's report against max_tokens after `added` tokens. */
void mn__built_fix_budget(struct mn_built *b, int64_t max_tokens, int64_t added);
mn_status mn__rag_plan(mn_db *db, const mn_context_opts *o, const mn_session *s, struct mn_built *b,
                       int64_t max_tokens, struct mn_ragctx **out);
int64_t mn__rag_reserve(const struct mn_ragctx *r);
mn_status mn__rag_inject(mn_db *db, struct mn_ragctx *r, struct mn_built *b, int64_t max_tokens);
void mn__rag_free(struct mn_ragctx *r);

/* memory_search.c: the rows of a store query as a list (freed with mn__memories_list_free); a search
 * over memories with checked arguments (q complete; mode may be AUTO: hybrid with an embedder,
 * else keyword), at most k hits, best first. */
struct mn_store_memory_query;
void mn__memories_list_free(mn_memories *list); /* mn_memories_free */
mn_status mn__memory_query_run(mn_db *db, const struct mn_store_memory_query *sq, mn_memories **out);
mn_status mn__memory_search_run(mn_db *db, const char *query, mn_search_mode mode, const mn_memory_query *q, size_t k,
                                mn_memories **out);

/* ---- memory_search.c, memory_write.c: long-term memories, read and written ---- */

/* The use cases of mn_memory_* after the handle check: each checks the rest of its arguments as
 * the public function documents (ids, the caller's struct through util/abi.h, limits), so that an
 * extractor's answer gets the same checks as an API caller's. *out is NULL on failure; a memory
 * is freed with mn__free_memory, a list with mn__memories_list_free. */
void mn__free_memory(mn_memory *m); /* mn_memory_free */
/* A memory id as its canonical UUID (MN_INVALID). */
mn_status mn__memory_check_id(const char *id, char canon[MN_UUID_LEN + 1]);
/* The current version of memory canon, closed or not (MN_NOTFOUND). */
mn_status mn__memory_current(mn_db *db, const char *canon, mn_memory **out);
/* mn_memory_get (ns NULL) and mn_memory_get_in: one of another namespace is not found. */
mn_status mn__get_memory(mn_db *db, const char *ns, const char *id, mn_memory **out);
mn_status mn__list_memory_versions(mn_db *db, const char *id, mn_memories **out);
mn_status mn__list_memories(mn_db *db, const mn_memory_query *q, mn_memories **out);
mn_status mn__search_memories(mn_db *db, const char *query, mn_search_mode mode, const mn_memory_query *q,
                            mn_memories **out);
/* The versioning (docs/memory.md): add writes version 1; update and delete close the current
 * version by writing the next (an update that changes nothing writes nothing); forget removes
 * every version and the memory vector index. out may be NULL. */
mn_status mn__add_memory(mn_db *db, const mn_memory_in *in, mn_memory **out);
mn_status mn__update_memory(mn_db *db, const char *id, const mn_memory_in *in, mn_memory **out);
mn_status mn__delete_memory(mn_db *db, const char *id, int64_t at, const char *actor, const char *reason);
/* An imported version, stored as it is unless there (*added 0); a version newer than the
 * database had closes the earlier ones as a write does. Inside the import's begin…commit. */
mn_status mn__import_memory_version(mn_store *st, const mn_memory *m, const float *vec, uint32_t dim, int *added);
mn_status mn__forget_memory(mn_db *db, const char *id);
/* text's vector from the handle's embedder (*vec NULL when none is configured; caller frees). */
mn_status mn__memory_embed(mn_db *db, const char *text, float **vec, uint32_t *dim);
/* memories.c: long-term memories in a built context (opts->memories; checked here): the block
 * after the system prompt, fitted into the budget the history left, reported under "memories".
 * planned: the tokens the block asked for before the history was laid out (*planned out of
 * mn__memories_plan), so that the history gets the rest. */
struct mn_memctx;
mn_status mn__memories_plan(mn_db *db, const mn_context_opts *o, const mn_session *s, int64_t max_tokens,
                            struct mn_memctx **out);
mn_status mn__memories_place(mn_db *db, struct mn_memctx *mc, struct mn_built *b, int64_t max_tokens);
int64_t mn__memories_planned(const struct mn_memctx *mc);
void mn__free_memories(struct mn_memctx *mc);

/* Long-term memory in export, import and migrate (memory_io.c): every version as a
 * {"type":"memory", …} line after the sessions; whether an import line is one (export writes
 * "type" first); storing one (skipped when its (id, version) is there); copying every version
 * from one handle to another (migrate). Vectors come from the receiving handle's embedder. */
mn_status mn__memory_export(mn_db *db, mn_write_fn write, void *user);
int mn__memory_line(const char *line, size_t len);
mn_status mn__memory_import_line(mn_db *db, const char *line, size_t len, int *added);
mn_status mn__memory_copy(mn_db *src, mn_db *dst);
/* Background extraction (memory_bg.c): set up at open, queue a session after a committed
 * append (nothing when memory.extract is off), stop the worker at close. */
mn_status mn__memory_bg_open(mn_db *db);
void mn__memory_after_append(mn_db *db, const char *session_id);
/* After a session was created or its metadata set: when its memory_scope.extract is offline or
 * llm, notes in meta memory.extract.optin that a session opted in, so that appends queue sessions
 * for background extraction even with memory.extract off (docs/memory.md). */
void mn__memory_optin_note(mn_db *db, const char *metadata);
/* Whether session metadata opts in (memory_scope.extract offline or llm); the note itself
 * (import and migrate: after their commit, when a session they stored opted in). */
int mn__memory_optin_wanted(const char *metadata);
void mn__memory_optin_set(mn_db *db);
void mn__memory_bg_close(mn_db *db);
/* The meta key of a session's extraction watermark: the newest seq an extraction has read. */
#define MN_EXTRACT_MARK_KEY_CAP (sizeof "memory.extracted." + MN_UUID_LEN)
void mn__extract_mark_key(const char *session_id, char key[MN_EXTRACT_MARK_KEY_CAP]);
/* The scope of the memories extracted from a session (docs/memory.md, "Scope of extraction"):
 * its namespace, and the user_id, agent_id and session_id of the "memory_scope" object of its
 * metadata when set (NULL otherwise). Extraction writes memories there and compares candidates
 * only with the live memories of that scope. Its "extract" names the session's extractor in
 * place of memory.extract. Strings borrowed from *sc until released. */
struct mn_extract_scope {
    const char *ns, *user_id, *agent_id, *session_id;
    const char *extract; /* memory_scope.extract: "off", "offline", "llm", or NULL (memory.extract) */
    void *hold;          /* the parsed metadata */
};
/* Errors: MN_INVALID (memory_scope is not an object of those keys with scope ids as values). */
mn_status mn__extract_scope(const mn_session *s, struct mn_extract_scope *sc);
void mn__extract_scope_release(struct mn_extract_scope *sc);
/* extract.c: mn_memory_extract; background: the worker's run, which does nothing when the session's (or else
 * the database's) extraction is off. */
mn_status mn__extract_memories(mn_db *db, const char *session_id, const char *extractor, int background,
                             mn_extract_stats *stats);
/* The llm extractor over msgs (extract_llm.c); *malformed is set when an answer was rejected. */
mn_status mn__memory_extract_llm(mn_db *db, const mn_session *s, const struct mn_extract_scope *sc,
                                 const mn_messages *msgs, mn_extract_stats *st, int *malformed);

/* ---- checkpoint.c: graph checkpoints, the public functions after their handle and ABI checks ---- */

mn_status mn__put_checkpoint(mn_db *db, const mn_checkpoint_in *cp);
mn_status mn__put_checkpoint_writes(mn_db *db, const char *ns, const char *thread, const char *checkpoint_ns,
                                    const char *checkpoint_id, const mn_checkpoint_write *writes, size_t n);
mn_status mn__list_checkpoints(mn_db *db, const mn_checkpoint_query *q, mn_checkpoints **out);
mn_status mn__get_checkpoint(mn_db *db, const char *ns, const char *thread, const char *checkpoint_ns,
                             const char *id, mn_checkpoints **out);
mn_status mn__delete_checkpoint_thread(mn_db *db, const char *ns, const char *thread, int64_t *removed);
void mn__free_checkpoints(mn_checkpoints *list);
/* Pending writes copied into arena a as a store's writes scan hands them over
 * (mn__checkpoint_write_collect is the callback; oom set when a copy failed). */
struct mn_arena;
struct mn__checkpoint_writes {
    struct mn_arena *a;
    mn_checkpoint_write *items;
    size_t n, cap;
    int oom;
};
int mn__checkpoint_write_collect(void *user, const mn_checkpoint_write *w);
/* A store scan callback that sets *(int *)user and stops: whether a checkpoint exists. */
int mn__checkpoint_found(void *user, const mn_checkpoint *cp);
/* The checks of a stored-form checkpoint and its writes (an import's line): MN_INVALID. */
mn_status mn__checkpoint_check_row(const mn_checkpoint *cp);

/* ---- checkpoint_io.c: checkpoints in exports, imports and migrations ---- */

/* The checkpoint lines of an export: of sessions ids[0..n), or of every session (n 0). */
mn_status mn__checkpoint_export(mn_db *db, const char *const *ids, size_t n, mn_write_fn write, void *user);
/* Whether an export line is a checkpoint's; its import (a checkpoint there already: *added 0;
 * added may be NULL). */
int mn__checkpoint_line(const char *line, size_t len);
mn_status mn__checkpoint_import_line(mn_db *db, const char *line, size_t len, int *added);
/* Copies the checkpoints of session_id (NULL: all) from src to dst, those dst lacks. */
mn_status mn__checkpoint_copy(mn_store *src, mn_store *dst, const char *session_id, int64_t *copied);
/* Writes o (consumed; NULL: out of memory) as one compact export line. */
mn_status mn__export_line(mn_write_fn write, void *user, struct json_t *o);

/* ---- document.c: documents, the public functions after their handle and ABI checks ---- */

mn_status mn__put_document(mn_db *db, const mn_document_in *in, mn_documents **out);
mn_status mn__get_document(mn_db *db, const char *ns, const char *path, const char *key, int refresh_ttl,
                           mn_documents **out);
mn_status mn__delete_document(mn_db *db, const char *ns, const char *path, const char *key, int64_t *deleted);
mn_status mn__search_documents(mn_db *db, const mn_document_query *q, mn_documents **out);
mn_status mn__list_document_paths(mn_db *db, const mn_document_paths_query *q, mn_strings **out);
void mn__free_documents(mn_documents *list);
/* The checks mn__put_document makes of in (an import line's): MN_INVALID, MN_TOOBIG. */
mn_status mn__document_check(const mn_document_in *in);
/* Deletes the documents whose time to live ran out (gc), or every document of ns (erasure). */
mn_status mn__document_purge_expired(mn_db *db, int64_t *removed);
mn_status mn__document_forget_ns(mn_db *db, const char *ns, int64_t *removed);

/* ---- document_io.c: documents in exports, imports and migrations ---- */

/* The document lines of a whole-database export, with their vectors. */
mn_status mn__document_export(mn_db *db, mn_write_fn write, void *user);
/* Whether an export line is a document's; its import, as it was (one there already stays). */
int mn__document_line(const char *line, size_t len);
mn_status mn__document_import_line(mn_db *db, const char *line, size_t len);
/* Copies every document of src that dst lacks. */
mn_status mn__document_copy(mn_store *src, mn_store *dst, int64_t *copied);

#endif /* MN_ENGINE_H */
