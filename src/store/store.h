/*
 * store.h — the storage backend interface. Everything above src/store/ talks to a database only
 * through these operations; sqlite/ and postgres/ implement them. Policy — validation,
 * titles, token counts, timestamps — is decided above; the store persists it atomically.
 *
 * Records in and out are the public types of mnemo.h. A backend handle serialises its own
 * calls (it may be shared by threads). Callbacks run while the backend holds its lock and must
 * not call back into the store.
 */
#ifndef MN_STORE_H
#define MN_STORE_H

#include <stdint.h>

#include "mnemo.h"

typedef struct mn_store mn_store;

typedef struct mn_store_opts {
    int64_t busy_timeout_ms; /* total backoff before MN_BUSY */
    int sync_full;           /* 1: an acknowledged commit survives power loss */
    int64_t fts_drain_rows;  /* search.fts_drain: keyword index chunk (rows; 0 = drain at search only) */
    /* Schema migration progress (rows of its longest step), or NULL (mn_upgrade). */
    void (*progress)(void *user, int64_t done, int64_t total);
    void *progress_user;
    int *found_version; /* when set: the schema version the open found (0: a new database) */
    int64_t pg_statement_timeout_ms, pg_idle_timeout_ms; /* postgres.* bounds (0: none) */
    const char *pg_replicas;       /* postgres.replicas: hot standbys' URLs, whitespace-separated */
    int64_t pg_replica_max_lag_ms; /* postgres.replica_max_lag_ms */
} mn_store_opts;

/* One append request (src/engine/append.c): the message rows to store (id, seq and session_id
 * are assigned by the append), the session to create when missing (NULL: MN_NOTFOUND), and the
 * title its messages give a session that has none (NULL: none), from msgs[title_at]. */
typedef struct mn_store_append {
    mn_message *msgs;
    size_t n;
    const mn_session *create;
    const char *title;
    size_t title_at;
    int64_t now_ms;
    int trim_delete; /* past the turn limit: 1 deletes the oldest turns, 0 keeps them inactive */
    int defer;       /* MN_APPEND_DEFER: MN_BUSY instead of waiting for another writer's lock */
    const char *ns;  /* the namespace the session must be in (NULL: any); another's is MN_NOTFOUND */
} mn_store_append;

typedef struct mn_store_stats {
    int64_t sessions, messages, tokens;
    int64_t threads, turns, expired_pending;
    int64_t db_bytes, wal_bytes;
    int schema_version;
} mn_store_stats;

/* What a backend's read replicas did (mn_store_replica_ops.stats). */
typedef struct mn_store_replica_stats {
    int64_t replicas, replicas_up;    /* configured; reachable when last tried */
    int64_t on_replica, on_primary;   /* reads served by a replica; reads the primary served instead */
    int64_t waited, lagging, down;    /* reads that waited for a replay; skips for lag; falls */
} mn_store_replica_stats;

/* Reads on hot standbys (postgres/replicas.c; docs/scale-out.md). Positions are opaque tokens
 * (a PostgreSQL WAL position, "16/B374D848"). */
struct mn_store_replica_ops {
    /* From now on (on 1) this thread's reads may go to a replica, until reads(st, 0). */
    void (*reads)(mn_store *st, int on);
    /* The position after every commit this handle made (for a client to read its writes on
     * another node); "" when it made none. */
    void (*position)(mn_store *st, char out[32]);
    /* This thread's reads see everything up to position token (NULL or "": only this handle's
     * own commits); MN_INVALID for a token that is not a position. */
    mn_status (*read_after)(mn_store *st, const char *token);
    void (*stats)(mn_store *st, mn_store_replica_stats *out);
};

/* Visitor for scans: return 0 to go on, 1 to stop early. The record is callback-scoped. */
typedef int (*mn_store_message_fn)(void *user, const mn_message *m);
typedef int (*mn_store_session_fn)(void *user, const mn_session *s);

struct mn_store_ops {
    const char *name;
    /* How many append groups pay to commit at once (mn_db_append_writers): SQLite has one writer
     * at a time; on PostgreSQL a second group's statements overlap the first's commit and flush. */
    int append_writers;
    /* 1 when a read is answered in this process from local files, in microseconds (SQLite); 0
     * when it waits on round trips to a server (PostgreSQL): mn_db_reads_local. */
    int reads_local;
    void (*close)(mn_store *st);
    mn_status (*session_insert)(mn_store *st, const mn_session *s);
    mn_status (*session_get)(mn_store *st, const char *id, mn_session **out);
    /* The session whose key (mn_session.key) is `key` in namespace ns; MN_NOTFOUND when none. */
    mn_status (*session_by_key)(mn_store *st, const char *ns, const char *key, mn_session **out);
    mn_status (*session_list)(mn_store *st, const char *ns, size_t limit, size_t offset, mn_sessions **out);
    /* Deletes erase (docs/erasure.md): a session delete, prune, gc or message delete also removes
     * the text from the keyword index and its log in the same transaction, and SQLite overwrites
     * the freed space (secure_delete) and truncates its WAL afterwards. */
    mn_status (*session_delete)(mn_store *st, const char *id);
    /* Deletes the sessions not updated since updated_before_ms; *ids (may be NULL) gets their ids
     * (caller frees with mn_strings_free). What else goes with them is src/engine/erase.c's. */
    mn_status (*session_prune)(mn_store *st, int64_t updated_before_ms, int64_t *deleted, mn_strings **ids);
    /* Appends (store_append.h): transaction and row primitives; the algorithm is src/engine/append.c. */
    const struct mn_store_append_ops *append;
    /* Changes to stored rows (store_rows.h): row primitives; the use cases are src/engine/edit.c,
     * turns.c, fork.c and erase.c. */
    const struct mn_store_row_ops *rows;
    /* Sets a session's title and/or metadata (NULL: unchanged) and updated_at. */
    mn_status (*session_update)(mn_store *st, const char *id, const char *title, const char *metadata,
                                int64_t now_ms);
    /* A session's messages (opts as mn_history's). expires_at, when not NULL, gets the session's
     * expires_at (0: none) as of the same read, so that a caller checking expiry needs no read of
     * its own. MN_NOTFOUND when the session does not exist. */
    mn_status (*history)(mn_store *st, const char *session_id, const mn_history_opts *opts, int64_t *expires_at,
                         mn_messages **out);
    /* Newest to oldest. MN_NOTFOUND when the session does not exist. */
    mn_status (*scan_newest)(mn_store *st, const char *session_id, mn_store_message_fn fn, void *user);
    /* Sessions in creation order (ids NULL: all), each followed by its messages in order. */
    mn_status (*export_scan)(mn_store *st, const char *const *ids, size_t n, mn_store_session_fn on_session,
                             mn_store_message_fn on_message, void *user);
    /* Import runs inside begin/commit (rollback on any failure). *added is 0 when skipped. */
    mn_status (*begin)(mn_store *st);
    mn_status (*commit)(mn_store *st);
    void (*rollback)(mn_store *st);
    mn_status (*import_session)(mn_store *st, const mn_session *s, int *added);
    mn_status (*import_message)(mn_store *st, const mn_message *m, int *added);
    /* Records that imported session id's title came from its message seq (engine/import_rows.c
     * finds it; an import never derives a title). */
    mn_status (*import_title_from)(mn_store *st, const char *id, int64_t seq);
    mn_status (*stats)(mn_store *st, int64_t now_ms, mn_store_stats *out);
    /* Threads. Deletes the sessions whose expires_at (> 0) is now_ms or before; *ids and the rest
     * as session_prune. */
    mn_status (*session_gc)(mn_store *st, int64_t now_ms, int64_t *purged, mn_strings **ids);
    /* Reclaims the space of deleted rows: VACUUM (PostgreSQL: dead tuples stay in the tables
     * until a vacuum; SQLite: the file shrinks, freed pages were already overwritten). */
    mn_status (*vacuum)(mn_store *st);
    /* Refreshes the query planner's statistics after a bulk load (PostgreSQL: ANALYZE). NULL for
     * a backend whose plans do not depend on them (SQLite). */
    mn_status (*analyze)(mn_store *st);
    /* A copy of the database as it is at one moment, while other connections and processes go on
     * writing (mn_backup; src/engine/backup.c): new files, the database's at `to` and each file
     * the backend keeps beside it at `to` plus its suffix (SQLite: the keyword index,
     * "<to>.keywords", from the same moment: current or behind the database, never ahead), made
     * durable (fsync). progress (may be NULL) gets the pages copied and their total. NULL for
     * a backend whose server has its own tools (PostgreSQL). */
    mn_status (*backup)(mn_store *st, const char *to, void (*progress)(void *user, int64_t done, int64_t total),
                        void *user);
    /* Unique paths listed by the session's messages: messages newest first, each message's in the
     * order it lists them; a path at its first occurrence (seed 002's GetFileList). */
    mn_status (*session_files)(mn_store *st, const char *id, mn_strings **out);
    /* Whether to send a file's content (*first, an include flag): 1 for content new to the session
     * (recorded with this path), 0 for known content under the path it was first recorded with,
     * 1 under any other path (nothing recorded). */
    mn_status (*file_seen)(mn_store *st, const char *id, const char *path, const char *sha256, int64_t now_ms,
                           int *first);
    /* Session state. state_update runs fn on the current state text (NULL when none) inside one
     * write transaction and stores what fn returns in *next (malloc'd; the store frees it). */
    mn_status (*state_get)(mn_store *st, const char *id, char **out);
    mn_status (*state_update)(mn_store *st, const char *id,
                              mn_status (*fn)(void *user, const char *current, char **next), void *user);
    /* Sets every message's tokens to count(user, m) — m carries role, content, tool_calls, name
     * and tool_call_id — a batch of messages per transaction, then each session's token_count
     * to the sum; *n gets the messages done. */
    mn_status (*recount_tokens)(mn_store *st, int64_t (*count)(void *user, const mn_message *m), void *user,
                                void (*progress)(void *user, int64_t done, int64_t total), int64_t *n);
    /* Database-wide settings (tokenizer name, …): NULL value when unset; *value caller frees. */
    mn_status (*meta_get)(mn_store *st, const char *key, char **value);
    mn_status (*meta_set)(mn_store *st, const char *key, const char *value);
    /* Context governance (sqlite/summaries.c). The latest summary of a session (MN_NOTFOUND when
     * none; caller frees *out with mn_summary_free); inserting one (session_id and id are set
     * by the store; *id optional). */
    mn_status (*summary_latest)(mn_store *st, const char *session_id, mn_summary **out);
    mn_status (*summary_insert)(mn_store *st, const char *session_id, const mn_summary *s, int64_t *id);
    /* Appends an event (data: a JSON object text); lists a session's events newest first. */
    mn_status (*event_insert)(mn_store *st, const char *session_id, const char *kind, const char *data,
                              int64_t now_ms);
    mn_status (*events_list)(mn_store *st, const char *session_id, size_t limit,
                             int (*fn)(void *user, int64_t id, const char *kind, const char *data, int64_t at),
                             void *user);
    /* The per-session fold claim: sets busy_until = until_ms when it is below now_ms (*claimed 1),
     * else leaves it (*claimed 0, *busy_until gets the holder's time). Release clears it when it
     * is still our until_ms. */
    mn_status (*busy_claim)(mn_store *st, const char *session_id, int64_t now_ms, int64_t until_ms, int *claimed,
                            int64_t *busy_until);
    mn_status (*busy_release)(mn_store *st, const char *session_id, int64_t until_ms);
    /* Sets a message's pinned flag by id; with session_id (not NULL) only a message of that session
     * (MN_NOTFOUND when there is no such message). */
    mn_status (*message_pin)(mn_store *st, const char *session_id, int64_t message_id, int pinned);
    /* Active messages with seq <= upto_seq that are pinned or have role system, each with the
     * whole tool unit around it (the call and all results that follow it), in seq order. */
    mn_status (*pinned_units)(mn_store *st, const char *session_id, int64_t upto_seq, mn_store_message_fn fn,
                              void *user);
    /* Sum of the stored tokens of the active tool results with seq > after_seq. */
    mn_status (*tool_tokens)(mn_store *st, const char *session_id, int64_t after_seq, int64_t *sum);
    /* Search (sqlite/search.c; docs/search.md). */
    const struct mn_store_search_ops *search;
    /* Long-term memories (sqlite/memories.c, postgres/memories.c; store_memory.h). */
    const struct mn_store_memory_ops *memory;
    /* Graph checkpoints (sqlite/checkpoints.c, postgres/checkpoints.c; store_checkpoint.h). */
    const struct mn_store_checkpoint_ops *checkpoint;
    /* Documents (sqlite/documents.c, postgres/documents.c; store_document.h). */
    const struct mn_store_document_ops *document;
    /* Read replicas; NULL for a backend without them (SQLite: one file, every read sees every
     * commit). */
    const struct mn_store_replica_ops *replica;
};

/* Every backend's handle starts with this. */
struct mn_store {
    const struct mn_store_ops *ops;
    const char *label; /* the target for messages and `mnemo stats`: a path, or a URL without its password */
};

/* Opens the backend the target names (target.h: a PostgreSQL URL or keyword/value string →
 * postgres, else a SQLite file, with or without a sqlite: prefix). */
mn_status mn__store_open(const char *target, const mn_store_opts *opts, mn_store **out);

/* Backends. */
mn_status mn__store_sqlite_open(const char *path, const mn_store_opts *opts, mn_store **out);
/* A libpq connection URL; credentials come from it, PGPASSWORD or ~/.pgpass. A pool_size=N query
 * parameter (1-256, default 20; taken out before libpq sees the URL) sets the connections per
 * handle (postgres/pg.c). */
mn_status mn__store_pg_open(const char *url, const mn_store_opts *opts, mn_store **out);

/* The schema version each backend's migrations reach (sqlite/schema.h, postgres/schema.h count
 * their lists; each backend checks its own at compile time). */
#define MN_SCHEMA_VERSION_SQLITE 16
#define MN_SCHEMA_VERSION_PG 17

#endif
