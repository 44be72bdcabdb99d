/*
 * pg_int.h — what the files of the PostgreSQL backend share: the handle with its connection
 * pool, the per-connection prepared-statement cache, parameter lists, the transaction runner
 * (retries on deadlock and serialization failure, one reconnect after a dropped connection),
 * error mapping, row readers and the shapes most statements take (one statement, one integer,
 * a walk over rows, a paged read). Only src/store/postgres/ includes it.
 *
 * Why a pool and a runner: several server threads (and several nodes) share one database, so
 * each call borrows a connection of its own instead of serialising on one handle lock, and every
 * operation is a body function the runner can run again when PostgreSQL asks for a retry.
 */
#ifndef MN_STORE_PG_INT_H
#define MN_STORE_PG_INT_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "store/store.h"
#include "store/store_append.h"
#include "store/store_search.h"

#define MN_PG_MAX_STMTS 256 /* distinct SQL texts one connection prepares (the backend has ~140) */
#define MN_PG_MAX_PARAMS 24
/* Connections per handle unless the URL says pool_size=N: one per call `mnemo serve` runs at once
 * (server.workers 16, two committers, a background job or two). With 8, a node's context builds
 * (3-4 round trips each, holding a connection) waited for connections while the database idled:
 * one node made 0.09x of SQLite's contexts/s and two nodes 3.4x one node (issue 43). */
#define MN_PG_DEFAULT_POOL 20

/* Advisory lock keys (pg_advisory_xact_lock): schema migrations, and the writers of embed_log
 * (see schema.h: holding it from the first log write to commit makes seq order commit order). */
#define MN_PG_LOCK_MIGRATE "120320915472385"   /* 0x6D6E656D0001, "mnem" 1 */
#define MN_PG_LOCK_EMBED_LOG "120320915472386" /* 0x6D6E656D0002 */
/* The writers of memory_vector_log (memory writes with a vector, forget, import), likewise. */
#define MN_PG_LOCK_MEMORY_LOG "120320915472387" /* 0x6D6E656D0003 */

struct pg_conn {
    PGconn *pg;
    struct pg_pool *pool;      /* where it goes back to */
    struct pg_conn *next_free; /* in the idle list, or in the list of pinned connections */
    pthread_t pin_owner;       /* pinned: the thread between its begin() and commit() */
    int broken;  /* the connection failed: dropped when released */
    int visible; /* the current body has handed rows to a callback: it must not be run again */
    int retry;   /* the last error asks for the transaction to be run again (deadlock, …) */
    int committed; /* the answer to this run's COMMIT came back: committed, whatever follows */
    char token_key[48]; /* its row in meta, "commit:<uuid>", for the tokens of its runs (pg.c) */
    int64_t runs;       /* PG_PIPELINE runs on it: the number in each token */
    /* Pipeline mode (PG_PIPELINE, an append group): mn__pg_send queues a statement without
     * waiting; any mn__pg_query sends a sync and reads everything queued before its own result, so a
     * group's writes cost no round trip of their own (see mn__pg_run). */
    int pipe;    /* in libpq pipeline mode now */
    int nopipe;  /* a queued statement failed: this run's next tries go without the pipeline */
    size_t n_owed, owed_cap;
    struct pg_owed {
        const char *what; /* for the message of its failure */
        PGresult **keep;  /* NULL: the result is dropped */
        int commit;       /* the COMMIT: its success sets committed */
    } *owed;      /* results of queued statements, in order, not read yet */
    size_t n_ids, next_id, ids_cap;
    int64_t *ids; /* message ids drawn for this transaction (mn__pg_reserve_ids), next_id the next unused */
    struct pg_rows *rows; /* appends' messages waiting to go as one statement (append_rows.c) */
    size_t n_stmts;
    const char *stmts[MN_PG_MAX_STMTS]; /* prepared as "s<index>", identity: the SQL's address */
};

/* The connections to one server: the primary's, or a read replica's (replicas.c). */
struct pg_pool {
    char *url;    /* the connection string as given, pool_size taken out (never logged: masked) */
    char *masked; /* the URL with any password replaced by *** — for messages */
    size_t size, n_open;
    struct pg_conn *free_list;
    pthread_cond_t freed;
};

/* A hot standby that serves reads (postgres.replicas; replicas.c, docs/scale-out.md). */
struct pg_replica {
    struct pg_pool pool;
    uint64_t replayed;     /* the WAL position it had replayed when last asked (under the lock) */
    int64_t down_until_ms; /* it could not be reached: reads skip it until then */
    int64_t stalled_until_ms; /* it did not replay a position in time: reads do not wait for it */
    int down_logged;       /* down since it last served a read: its fall was logged, its return will be */
};

/* What the replicas did for this handle's reads (mn_store_replica_stats). */
struct pg_replica_counts {
    _Atomic int64_t on_replica, on_primary, waited, lagging, down;
};

struct pg_store {
    struct mn_store base;
    struct pg_pool primary;
    char claimer[40]; /* this handle's name on embed_queue claims */
    int64_t busy_timeout_ms;
    /* The bounds of every transaction of this handle (conn_open): a statement runs at most
     * statement_timeout_ms; a transaction left idle between statements longer than
     * idle_timeout_ms is ended by the server, with its locks (0: no bound). */
    int64_t statement_timeout_ms, idle_timeout_ms;
    int sync_full;
    pthread_mutex_t lock; /* the pools, the replicas' state, the marks */
    struct pg_conn *pinned; /* connections of open begin()…commit()s, one per thread */
    /* Read replicas (replicas.c): none unless postgres.replicas names some. */
    struct pg_replica *replicas;
    size_t n_replicas, next_replica;
    int64_t max_lag_ms;
    _Atomic uint64_t position; /* the primary's WAL position after this handle's latest commit */
    /* The primary's position now and then (ms, lsn), oldest first: what a replica must have
     * replayed to be at most max_lag_ms behind. */
    struct pg_mark { int64_t ms; uint64_t lsn; } marks[64];
    size_t n_marks;
    int marking; /* a thread is asking the primary its position */
    struct pg_replica_counts counts;
};

#define PG(st) ((struct pg_store *)(st))

/* Parameters of one statement, as text (or binary where noted); values must outlive the call. */
struct pg_params {
    int n;
    const char *v[MN_PG_MAX_PARAMS];
    int len[MN_PG_MAX_PARAMS];
    int fmt[MN_PG_MAX_PARAMS];
    char num[MN_PG_MAX_PARAMS][24];
};

void mn__pg_params_init(struct pg_params *p);
void mn__pg_text(struct pg_params *p, const char *v); /* NULL binds SQL NULL */
void mn__pg_i64(struct pg_params *p, int64_t v);
void mn__pg_bin(struct pg_params *p, const void *data, int len);
void mn__pg_size(struct pg_params *p, size_t v); /* a count or limit: INT64_MAX when larger */
/* Appends n values of one type, as mn__pg_text / mn__pg_i64 one by one. */
void mn__pg_texts(struct pg_params *p, int n, const char *const *v);
void mn__pg_i64s(struct pg_params *p, int n, const int64_t *v);
/* Appends the n ids to out as a bigint[] literal: {1,2,3}. */
struct mn_buf;
mn_status mn__pg_id_array(struct mn_buf *out, const int64_t *ids, size_t n);

/* Runs a static SQL text (prepared once per connection, cached by its address) with params p
 * (NULL: none). binary: results in binary format. *out (may be NULL) gets the result, which
 * the caller PQclears; on failure nothing is returned and the status carries "what: …". */
mn_status mn__pg_query(struct pg_conn *c, const char *sql, const struct pg_params *p, int binary, const char *what,
                      PGresult **out);
/* Queues a statement whose result nobody waits for (no rows wanted; an error surfaces at the next
 * read or at commit, and then the runner runs the body again without the pipeline). keep (may be
 * NULL) gets the result once it is read: by the next mn__pg_query or the commit. Outside pipeline
 * mode it runs the statement at once, as mn__pg_query. */
mn_status mn__pg_send(struct pg_conn *c, const char *sql, const struct pg_params *p, const char *what,
                     PGresult **keep);
/* In pipeline mode: draws n more message ids from the messages' sequence for this transaction,
 * after the statements queued before (the session locks; one round trip for both); mn__pg_take_id
 * hands them out in the order drawn, 0 when none is left. Outside pipeline mode it draws nothing.
 * A message that takes its id from the sequence itself (INSERT … RETURNING id) must be followed
 * by mn__pg_drop_ids: an id drawn before it must not go to a later message of the session. */
mn_status mn__pg_reserve_ids(struct pg_conn *c, size_t n);
int64_t mn__pg_take_id(struct pg_conn *c);
void mn__pg_drop_ids(struct pg_conn *c);
/* Rows a command changed (PQcmdTuples). */
int64_t mn__pg_changes(PGresult *r);
/* Maps a failed result (or a connection failure when r is NULL) to a status; sets c->broken
 * or c->retry when the failure asks for it. */
mn_status mn__pg_fail(struct pg_conn *c, PGresult *r, const char *what);

/* An append group's one-statement appends, as one set-based statement (append_rows.c). In
 * pipeline mode mn__pg_rows_add queues message m (id drawn beforehand) with what its append adds
 * to the session's counters (a, as SQL_MESSAGE_INSERT_APPENDED in messages.c); mn__pg_send and
 * mn__pg_query send what is queued (mn__pg_rows_flush) before any other statement, so statements
 * keep their order. mn__pg_rows_clear drops what is queued (a run starts over); mn__pg_rows_free
 * when the connection closes. */
struct mn_store_appended;
mn_status mn__pg_rows_add(struct pg_conn *c, int64_t id, const mn_message *m, const struct mn_store_appended *a);
mn_status mn__pg_rows_flush(struct pg_conn *c);
void mn__pg_rows_clear(struct pg_conn *c);
void mn__pg_rows_free(struct pg_conn *c);

/* Column readers: text (NULL for SQL NULL), integers (text or binary format), doubles. */
const char *mn__pg_col_text(const PGresult *r, int row, int col);
int64_t mn__pg_col_i64(const PGresult *r, int row, int col);
double mn__pg_col_double(const PGresult *r, int row, int col);

/* The shapes most statements take, over mn__pg_query. mn__pg_exec runs a statement that returns
 * no rows; *changed (may be NULL) gets the rows it changed. mn__pg_one_i64: *out gets the
 * integer in the first column of the first row the query returns (0 when none, or on failure). */
mn_status mn__pg_exec(struct pg_conn *c, const char *sql, const struct pg_params *p, const char *what,
                     int64_t *changed);
mn_status mn__pg_one_i64(struct pg_conn *c, const char *sql, const struct pg_params *p, const char *what,
                        int64_t *out);
/* A reader of one row of a result for mn__pg_each: hands the row on, *stop = 1 ends the walk (a
 * caller's callback said stop); a status other than MN_OK ends it too and is the walk's. */
typedef mn_status (*pg_row_fn)(void *arg, PGresult *r, int row, int *stop);
/* Calls fn on each row of r in order, marking c visible first (a row may reach a caller's
 * callback: the body is not run again), until fn fails or sets *stop. */
mn_status mn__pg_rows(struct pg_conn *c, PGresult *r, pg_row_fn fn, void *arg, int *stop);
/* Runs a query (binary: results in binary format) and walks its rows with mn__pg_rows. */
mn_status mn__pg_each(struct pg_conn *c, const char *sql, const struct pg_params *p, int binary, const char *what,
                     pg_row_fn fn, void *arg);
/* A read a page at a time, each page a statement of its own that starts after the last row of
 * the page before (so that a caller that stops early is not sent every row): 16 rows, then 8
 * times more each page up to max_page. page fills p (from its start) for the page of n rows
 * after row `last` of prev (prev NULL: the first page) and names its SQL; row walks the page's
 * rows (mn__pg_rows). Both get arg. */
struct pg_pages {
    const char *what;
    int binary;
    int64_t max_page;
    const char *(*page)(void *arg, struct pg_params *p, const PGresult *prev, int last, int64_t n);
    pg_row_fn row;
};
mn_status mn__pg_pages(struct pg_conn *c, const struct pg_pages *how, void *arg);
/* Looks up the internal sid of session id (MN_NOTFOUND when missing, as mn__pg_session_sid) and
 * starts p with it as $1: the first step of the statements over one session's rows. */
mn_status mn__pg_sid_params(struct pg_conn *c, const char *id, struct pg_params *p);

/* How the runner wraps a body. */
enum pg_mode {
    PG_AUTOCOMMIT, /* no transaction: reads only (run again after a dropped connection), that
                    * need no snapshot; anything that writes takes PG_WRITE, so that a lost
                    * connection before COMMIT is known not to have committed */
    PG_WRITE,      /* BEGIN … COMMIT (read committed; bodies lock the rows they depend on) */
    PG_PIPELINE,   /* PG_WRITE in libpq pipeline mode: BEGIN, what mn__pg_send queues and COMMIT
                    * go with the next read (libpq 14 or newer; else as PG_WRITE). The
                    * transaction writes a token (its connection's row in meta) in its first round
                    * trip: when the connection drops after COMMIT went out, the runner reads that
                    * row on a new connection to learn whether it committed, instead of running
                    * the body again */
    PG_SNAPSHOT    /* BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY: one consistent view; its
                    * caller may wait on its own client between statements (an export), so it
                    * may stay idle up to statement_timeout_ms, not idle_timeout_ms */
};
typedef mn_status (*pg_body)(struct pg_conn *c, void *arg);
/* Borrows a connection (the caller's pinned one inside begin…commit, where the body just runs
 * in the open transaction), runs body in the mode's transaction, and runs it again (with
 * backoff, up to memory.busy_timeout_ms) when PostgreSQL reports a deadlock or serialization
 * failure, or on a fresh connection (a few times) when the connection dropped before anything
 * was committed or shown to a callback. A PG_PIPELINE body whose COMMIT went out on a
 * connection that then dropped is run again only once the database says that transaction did
 * not commit; when it did, the run succeeds with what the body produced; when the database
 * cannot tell in time, MN_UNAVAILABLE ("the outcome of the commit is unknown"). A PG_WRITE body
 * in that case fails with MN_UNAVAILABLE and is not run again. */
mn_status mn__pg_run(struct pg_store *s, enum pg_mode mode, pg_body body, void *arg);
/* The pools (pg.c): a connection of pool (waiting while all of its are taken), and back (a
 * broken one is closed, with the pool's idle ones). A pool's URL may carry pool_size=N. */
mn_status mn__pg_pool_init(struct pg_pool *pool, const char *url);
void mn__pg_pool_close(struct pg_pool *pool);
mn_status mn__pg_acquire(struct pg_store *s, struct pg_pool *pool, struct pg_conn **out);
void mn__pg_release(struct pg_store *s, struct pg_conn *c);

/* Read replicas (replicas.c; docs/scale-out.md). urls: whitespace-separated (NULL or "": none). */
mn_status mn__pg_replicas_open(struct pg_store *s, const char *urls, int64_t max_lag_ms);
void mn__pg_replicas_close(struct pg_store *s);
/* Whether this thread's reads may go to a replica now (mn_store_replica_ops.reads). */
int mn__pg_replica_reads(struct pg_store *s);
/* A connection of a replica that has replayed everything the read must see (this handle's
 * commits, the thread's read_after position, and all but the last max_lag_ms of the primary's
 * WAL), waiting for one up to max_lag_ms; NULL when none can serve it: the primary does. */
void mn__pg_replica_pick(struct pg_store *s, struct pg_conn **out);
/* The replica of pool could not be reached: skipped for a while. */
void mn__pg_replica_down(struct pg_store *s, struct pg_pool *pool);
/* After a commit on c (the primary): this handle's position moves to the primary's. */
void mn__pg_note_commit(struct pg_store *s, struct pg_conn *c);
extern const struct mn_store_replica_ops mn_pg_replica_ops;

/* An operation that is one statement, built by the caller (p's values outlive the call): the
 * runner over mn__pg_exec or mn__pg_one_i64 in the mode's transaction (*changed, *out 0 on
 * failure), or over mn__pg_each without one (PG_AUTOCOMMIT: a read whose rows go to the caller,
 * or to its out-parameters). */
mn_status mn__pg_run_exec(struct pg_store *s, enum pg_mode mode, const char *sql, const struct pg_params *p,
                         const char *what, int64_t *changed);
mn_status mn__pg_run_i64(struct pg_store *s, enum pg_mode mode, const char *sql, const struct pg_params *p,
                        const char *what, int64_t *out);
mn_status mn__pg_run_each(struct pg_store *s, const char *sql, const struct pg_params *p, int binary,
                         const char *what, pg_row_fn fn, void *arg);
/* mn__pg_run for a store_append.h / store_rows.h body, whose transaction is the connection
 * (messages.c). */
mn_status mn__pg_tx_run(mn_store *st, enum pg_mode mode, mn_store_tx_body body, void *arg);

/* Connection pinning for store.h's begin/commit/rollback (pg.c). */
mn_status mn__pg_op_begin(mn_store *st);
mn_status mn__pg_op_commit(mn_store *st);
void mn__pg_op_rollback(mn_store *st);

/* The internal sid (and last seq) of a session; MN_NOTFOUND when missing. */
mn_status mn__pg_session_sid(struct pg_conn *c, const char *id, int64_t *sid, int64_t *last_seq);
/* Runs a query of one session's row ($1: its id) into *out, which the caller PQclears; no row is
 * MN_NOTFOUND ("session <id> not found"), with *out NULL. */
mn_status mn__pg_session_row(struct pg_conn *c, const char *sql, const char *id, const char *what, PGresult **out);
/* Row readers for MN_PG_SESSION_COLS / MN_PG_MESSAGE_COLS from column `at`; strings borrowed
 * from the result. */
void mn__pg_row_session(PGresult *r, int row, mn_session *out);
mn_status mn__pg_row_message(PGresult *r, int row, int at, const char *session_id, mn_message *out);

#define MN_PG_SESSION_COLS                                                                                           \
    "id, namespace, title, system_prompt, metadata, tool_name, parent_id, created_at, updated_at, expires_at,"     \
    " message_count, token_count, ttl_ms, max_turns, turn_count, inactive_count, cleared_seq, cleared_from, key"
#define MN_PG_SESSION_NCOLS 19 /* the columns of MN_PG_SESSION_COLS: a column after them is this one */
#define MN_PG_MESSAGE_COLS                                                                                           \
    "id, seq, role, content, tool_calls, tool_call_id, name, tool_name, model, files, metadata, idem_key, tokens,"  \
    " pinned, created_at, active"

/* Operations, by file. messages.c: sessions, appends, history, export/import, edits. */
mn_status mn__pg_op_session_insert(mn_store *st, const mn_session *s);
mn_status mn__pg_op_session_get(mn_store *st, const char *id, mn_session **out);
mn_status mn__pg_op_session_by_key(mn_store *st, const char *ns, const char *key, mn_session **out);
mn_status mn__pg_op_session_list(mn_store *st, const char *ns, size_t limit, size_t offset, mn_sessions **out);
mn_status mn__pg_op_session_delete(mn_store *st, const char *id);
mn_status mn__pg_op_session_prune(mn_store *st, int64_t before_ms, int64_t *deleted, mn_strings **ids);
/* Runs a `DELETE FROM sessions … RETURNING id` with $1 = num; *ids (may be NULL) gets the ids. */
mn_status mn__pg_delete_sessions(struct pg_store *s, const char *sql, int64_t num, int64_t *n, mn_strings **ids);
extern const struct mn_store_append_ops mn_pg_append_ops; /* store_append.h */
extern const struct mn_store_row_ops mn_pg_row_ops;
mn_status mn__pg_op_session_update(mn_store *st, const char *id, const char *title, const char *metadata,
                                  int64_t now_ms);
mn_status mn__pg_op_history(mn_store *st, const char *session_id, const mn_history_opts *o, int64_t *expires_at,
                            mn_messages **out);
mn_status mn__pg_op_scan_newest(mn_store *st, const char *session_id, mn_store_message_fn fn, void *user);
mn_status mn__pg_op_export_scan(mn_store *st, const char *const *ids, size_t n, mn_store_session_fn on_session,
                               mn_store_message_fn on_message, void *user);
mn_status mn__pg_op_import_session(mn_store *st, const mn_session *in, int *added);
mn_status mn__pg_op_import_title_from(mn_store *st, const char *id, int64_t seq);
mn_status mn__pg_op_import_message(mn_store *st, const mn_message *m, int *added);

/* threads.c */
mn_status mn__pg_op_session_gc(mn_store *st, int64_t now_ms, int64_t *purged, mn_strings **ids);
mn_status mn__pg_op_session_files(mn_store *st, const char *id, mn_strings **out);
mn_status mn__pg_op_file_seen(mn_store *st, const char *id, const char *path, const char *sha256, int64_t now_ms,
                             int *first);
mn_status mn__pg_op_state_get(mn_store *st, const char *id, char **out);
mn_status mn__pg_op_state_update(mn_store *st, const char *id,
                                mn_status (*fn)(void *user, const char *current, char **next), void *user);

/* summaries.c */
/* Adds an event to the log of the session of internal id sid; "what: …" on failure. */
mn_status mn__pg_event_add(struct pg_conn *c, int64_t sid, const char *kind, const char *data, int64_t now_ms,
                          const char *what);
mn_status mn__pg_op_summary_latest(mn_store *st, const char *session_id, mn_summary **out);
mn_status mn__pg_op_summary_insert(mn_store *st, const char *session_id, const mn_summary *sm, int64_t *id);
mn_status mn__pg_op_event_insert(mn_store *st, const char *session_id, const char *kind, const char *data,
                                int64_t now_ms);
mn_status mn__pg_op_events_list(mn_store *st, const char *session_id, size_t limit,
                               int (*fn)(void *user, int64_t id, const char *kind, const char *data, int64_t at),
                               void *user);
mn_status mn__pg_op_busy_claim(mn_store *st, const char *session_id, int64_t now_ms, int64_t until_ms, int *claimed,
                              int64_t *busy_until);
mn_status mn__pg_op_busy_release(mn_store *st, const char *session_id, int64_t until_ms);
mn_status mn__pg_op_message_pin(mn_store *st, const char *session_id, int64_t message_id, int pinned);
mn_status mn__pg_op_pinned_units(mn_store *st, const char *session_id, int64_t upto_seq, mn_store_message_fn fn,
                                void *user);
mn_status mn__pg_op_tool_tokens(mn_store *st, const char *session_id, int64_t after_seq, int64_t *sum);

/* search.c */
extern const struct mn_store_search_ops mn_pg_search_ops;
/* An FTS5-style match expression of quoted terms joined by OR as a text[] literal of the terms
 * (search.c); *n gets the count. */
mn_status mn__pg_match_terms(const char *match, struct mn_buf *out, size_t *n);
/* memories.c */
extern const struct mn_store_memory_ops mn_pg_memory_ops;
/* The memory vectors' part of it shares search.c's vector reads. */
mn_status mn__pg_memory_vec_scan(mn_store *st, mn_store_vec_fn fn, void *user, int64_t *log_seq);
mn_status mn__pg_memory_vec_changes(mn_store *st, int64_t after, mn_store_change_fn fn, void *user, int64_t *last);
mn_status mn__pg_memory_vec_get(mn_store *st, int64_t vid, float *out, uint32_t dim);
/* checkpoints.c */
extern const struct mn_store_checkpoint_ops mn_pg_checkpoint_ops;
/* documents.c */
extern const struct mn_store_document_ops mn_pg_document_ops;

#endif
