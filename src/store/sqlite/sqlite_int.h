/*
 * sqlite_int.h — what the files of the SQLite backend share: the handle, the prepared-statement
 * cache, error mapping and row readers. Only src/store/sqlite/ includes it.
 */
#ifndef MN_STORE_SQLITE_INT_H
#define MN_STORE_SQLITE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <sqlite3.h>
#include <stdint.h>

#include "store/store.h"
#include "store/store_append.h"
#include "store/store_rows.h"
#include "store/store_search.h"

#define MN_SQLITE_CORE_STMTS 48
#define MN_SQLITE_READERS 4

/* Messages are keyed by pos = session_sid * 2^32 + seq (schema.h, version 10), so a session's
 * messages are one range of the table's key: every query finds them through these (SQL
 * expressions of parameters or columns). */
#define MN_SQLITE_POS(sid, seq) "((" sid ") * 4294967296 + (" seq "))"
#define MN_SQLITE_IN_SESSION(col, sid)                                                                          \
    col " BETWEEN (" sid ") * 4294967296 AND (" sid ") * 4294967296 + 4294967295"
/* the session's messages with a seq above `seq`, and with a seq up to `seq` (any integer: it is
 * clamped into the session's range first) */
#define MN_SQLITE_SEQ_CLAMP(seq) "max(min(" seq ", 4294967296), -1)"
#define MN_SQLITE_AFTER_SEQ(col, sid, seq)                                                                      \
    col " BETWEEN (" sid ") * 4294967296 + " MN_SQLITE_SEQ_CLAMP(seq) " + 1 AND (" sid ") * 4294967296 + 4294967295"
#define MN_SQLITE_UPTO_SEQ(col, sid, seq)                                                                       \
    col " BETWEEN (" sid ") * 4294967296 AND (" sid ") * 4294967296 + min(" MN_SQLITE_SEQ_CLAMP(seq) ", 4294967295)"

struct sqlite_store {
    struct mn_store base;
    sqlite3 *db;
    char *path;
    pthread_mutex_t lock;
    int64_t busy_timeout_ms;
    int64_t busy_started_ns;
    /* The write-ahead log's checkpoints (wal_hook, sqlite.c): its frames after the last commit
     * and the frames a commit adds, averaged. */
    int wal_frames;
    double wal_commit_frames;
    sqlite3_stmt *stmt[MN_SQLITE_CORE_STMTS]; /* sqlite.c's statements, by enum stmt_id */
    struct {
        const char *sql; /* identity: the address of a static SQL string */
        sqlite3_stmt *st;
    } extra[256]; /* statements of the other files of this backend (~140 in all) */
    size_t n_extra;
    /* Read-only connections for reads that find the write connection busy (a commit waiting
     * for its fsync must not hold up history reads). WAL lets them read beside the writer;
     * each sees every commit made before its read began. Opened on demand, at most
     * MN_SQLITE_READERS; none for a reader itself or an in-memory database. */
    struct sqlite_store *readers[MN_SQLITE_READERS];
    size_t n_readers;
    unsigned next_reader;
    int no_readers; /* a reader itself, or an in-memory database */
    pthread_mutex_t readers_lock;
    /* Keyword index upkeep (search.c, docs/search.md): the chunk size (search.fts_drain; 0 =
     * the rest waits for the next search), the messages this handle wrote since its last drain
     * (an estimate of the work waiting that needs no COUNT), and whether appends leave
     * the drain to the caller (mnemo serve's committer). */
    int64_t fts_drain_rows, fts_logged;
    int fts_drain_deferred;
    int erase_after_commit; /* a row primitive removed text (store_rows.h erased) */
    /* The keyword index lives in a file of its own, "<db>.keywords" (schema.h, version 11),
     * attached as "kw" only on `kw`, the indexer handle (its own connection, lock, statements and
     * phrase counts), which applies the log and indexes new messages while appends go on, on the
     * thread below, and runs keyword searches (search.c). This connection attaches it only at
     * open (the migration, the check): attached, every write transaction here would open one
     * there too. NULL for a private database (":memory:", a "file:" URI): its index is in
     * memory, attached read-write here, and drained inline. */
    struct sqlite_store *kw;
    int kw_own;          /* this handle is an indexer: its write transactions need not lock the database */
    pthread_t kw_thread; /* started when kw is */
    pthread_mutex_t kw_sig;
    pthread_cond_t kw_cond;   /* the thread waits on it for work */
    pthread_cond_t kw_caught; /* appends wait on it while the thread is too far behind */
    int kw_wake, kw_stop, kw_started;
    /* Under kw_sig: the messages this handle handed to the thread (a running total), and of
     * them at most how many it has not indexed yet (0 after a failure: appends never wait for
     * work that cannot be done). */
    int64_t kw_asked, kw_behind;
    /* On the indexer handle: the rows the thread was asked to drain and has not taken yet (each
     * appends' drain asks for what it logged and a chunk more, as an inline drain takes). */
    _Atomic int64_t kw_budget;
    /* Document counts of keyword-query phrases (search.c, "Keyword search at scale"): a phrase
     * matched n rows among the indexed rows up to message id upto; valid while the index had no
     * row deleted (the meta key fts.deletes, read as `gen`). At most MN_SQLITE_DF_CACHE entries. */
    struct mn_sqlite_df {
        char *phrase;
        size_t len; /* strlen(phrase) */
        int64_t n, upto;
        struct mn_sqlite_tops *tops; /* its best rows, once it was ranked as a common phrase (fts_tops.c) */
        struct mn_sqlite_dense *dense; /* its rows in memory, once it was very common (fts_dense.c) */
        int64_t dense_used;            /* the keyword search (fts_searches) that last used them */
    } * df;
    struct mn_sqlite_sizes { /* each indexed row's size in tokens, d[id], up to message id upto (fts_dense.c) */
        uint32_t *d;
        size_t n;
        int64_t upto;
    } sizes;
    size_t n_df, next_tops;
    struct mn_sqlite_counts *counts; /* the rarer phrases' counts (fts_counts.c), kept as df is */
    int64_t df_gen;
    int64_t fts_searches; /* keyword searches this handle made (phrases are held from its second) */
    int fts_given; /* mnemo_bm25 is registered on this connection */
    /* On the indexer handle, the messages the index does not hold yet that searches scan
     * (fts_tail.c): the TEMP table kw_tail holds those with an id in (lo, hi], `rows` of them,
     * as msg_log left them at seq `log`. */
    struct mn_sqlite_tail {
        int made;
        int64_t lo, hi, log, rows;
    } tail;
    /* The tokens of the sessions this connection searched last (fts_set.c; NULL: none yet). */
    struct mn_sqlite_set_text *kwset;
    /* Under kw_sig: the thread was asked to rebuild the index in the background (fts_sync): a
     * close stops it after its step rather than waiting for the rest (the next open goes on),
     * and searches meanwhile run on kw_searcher (fts_file.c). */
    int kw_background;
    struct sqlite_store *kw_searcher;
};

/* Evaluates expr with the handle's lock held and returns its status. */
#define LOCKED(s, expr)                                                                                              \
    do {                                                                                                             \
        pthread_mutex_lock(&(s)->lock);                                                                              \
        mn_status rc_ = (expr);                                                                                      \
        pthread_mutex_unlock(&(s)->lock);                                                                            \
        return rc_;                                                                                                  \
    } while (0)

/* Operations implemented in erase.c (deletes that erase; docs/erasure.md). */
mn_status mn__sqlite_op_session_delete(mn_store *st, const char *id);
mn_status mn__sqlite_op_session_prune(mn_store *st, int64_t before_ms, int64_t *deleted, mn_strings **ids);
mn_status mn__sqlite_op_session_gc(mn_store *st, int64_t now_ms, int64_t *purged, mn_strings **ids);
mn_status mn__sqlite_op_vacuum(mn_store *st);
/* After a commit that deleted text: truncates the WAL (best effort: readers may hold it). */
void mn__sqlite_wal_truncate(struct sqlite_store *s);
/* After a commit that deleted or changed text (lock held): mn__sqlite_fts_erase, then the WAL
 * truncated, so that the old text is in neither file nor either log. */
void mn__sqlite_erased(struct sqlite_store *s);
/* The write transaction of the append and row primitives (the handle under its lock): begin,
 * body, commit; after a commit, the erasure a body asked for (store_rows.h erased) and the
 * keyword index's chunk. */
mn_status mn__sqlite_tx_write(mn_store *st, mn_store_tx_body body, void *arg);
extern const struct mn_store_row_ops mn_sqlite_row_ops;
/* After a write transaction that deleted or changed text committed (lock held): takes the old text
 * out of the keyword index and its log now (search.c). A failure is logged: the log keeps the
 * text's removal for the next drain. */
void mn__sqlite_fts_erase(struct sqlite_store *s);
/* The keyword index file beside the database (fts_file.c): at open, attaches it read-write as
 * "kw" (creating it), before the migration; after it, checks that the file belongs to this
 * database (else starts it again empty), detaches it and starts the indexer handle and thread. */
mn_status mn__sqlite_kw_attach_rw(struct sqlite_store *s);
mn_status mn__sqlite_kw_start(struct sqlite_store *s);
/* The index's file, named after the database's. */
#define MN_SQLITE_KW_SUFFIX ".keywords"
/* On a read-only connection c (a backup's, backup.c): attaches the index's file as "kw" when it
 * exists (*attached 1), else nothing (*attached 0). */
mn_status mn__sqlite_kw_attach_read(struct sqlite_store *c, int *attached);
/* On a connection that writes the index (the indexer, or a private database's own): the TEMP view
 * fts_log_pending, msg_log less the rows the index already applied (fts_applied; search.c). */
mn_status mn__sqlite_kw_views(struct sqlite_store *c);
/* At open (search.c): log rows an earlier process applied to the index but had not yet removed
 * from msg_log when it stopped leave it now (their text with them). */
mn_status mn__sqlite_fts_recover(struct sqlite_store *s);
/* At close (before the connection): stops the thread (after what it was asked for) and closes
 * the indexer handle. */
void mn__sqlite_kw_stop(struct sqlite_store *s);
/* The background rebuild of the keyword index (search.c, fts_tail.c): whether it runs; its
 * start (1 when this call started it); its end (nothing waits any more, or the thread failed:
 * the next search looks again); and, on the thread, whether it should stop now (a close). */
int mn__sqlite_kw_rebuilding(struct sqlite_store *s);
int mn__sqlite_kw_rebuild_start(struct sqlite_store *s);
void mn__sqlite_kw_rebuilt(struct sqlite_store *s);
int mn__sqlite_kw_quitting(struct sqlite_store *s);
/* The connection keyword searches use during a rebuild (a reader with the index's file attached
 * read-only), opened the first time. */
mn_status mn__sqlite_kw_searcher(struct sqlite_store *s, struct sqlite_store **out);
/* Hands the indexer thread `rows` messages this handle appended (a drain of `budget` rows) and
 * waits while it is more than `bound` messages behind (the thread stopped: no wait). */
void mn__sqlite_kw_ask(struct sqlite_store *s, int64_t rows, int64_t budget, int64_t bound);
/* The thread's bookkeeping around a step (search.c): mn__sqlite_kw_asked before it (the total
 * handed over), mn__sqlite_kw_caught after it, with what it consumed, whether it found nothing
 * more, and its status; wakes the appends waiting, and says whether messages handed over may
 * still wait for the index (an append may be waiting for them). */
int64_t mn__sqlite_kw_asked(struct sqlite_store *s);
int mn__sqlite_kw_caught(struct sqlite_store *s, int64_t asked, int64_t consumed, int last, mn_status rc);
/* The thread's drain (search.c): takes the budget asked for and drains it on s->kw, until none
 * is left and no append waits for it. */
void mn__sqlite_fts_indexer_run(struct sqlite_store *s);
/* sqlite.c: the indexer handle, a read-write connection of its own to w's database with the
 * index's file attached read-write, into *out (MN_BUSY, MN_IO, MN_NOMEM…); and the close of any
 * handle. */
mn_status mn__sqlite_open_indexer(struct sqlite_store *w, struct sqlite_store **out);
/* A read-only connection of its own to w's database (a backup's snapshot, backup.c), into *out;
 * errors as the indexer's. */
mn_status mn__sqlite_open_reader(struct sqlite_store *w, struct sqlite_store **out);
void mn__sqlite_close(struct sqlite_store *s);
/* Inside a write transaction: creates or drops the embedding queue's trigger as meta
 * 'embed.queue' says (search.c; the migration to schema version 9). */
mn_status mn__sqlite_queue_trigger_sync(struct sqlite_store *s);
/* The largest message id ever given (an SQL expression; schema.h, version 10): the largest one
 * stored, or the one a delete took away (meta messages.last_id, kept by a trigger), whichever is
 * larger. A new message takes one past it, so ids are never reused, and an append writes no
 * counter. */
#define MN_SQLITE_LAST_ID                                                                                        \
    "max(coalesce((SELECT max(id) FROM messages), 0),"                                                          \
    " coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'messages.last_id'), 0))"
/* Inside a write transaction that inserted message id with its own id (import): logs it for the
 * keyword index, which otherwise takes only ids past its watermark (search.c). */
mn_status mn__sqlite_fts_log_insert(struct sqlite_store *s, int64_t id);
/* After a write transaction committed (lock held, no transaction open), when this handle logged
 * at least fts_drain_rows rows and appends drain themselves: hands them to the indexer thread
 * (waiting while it is more than four chunks behind), or drains them inline without a thread.
 * A failure is logged and dropped: the rows stay in the log for the next drain or search. */
void mn__sqlite_fts_after_commit(struct sqlite_store *s);
/* At open: counts the rows waiting (estimated from the log's first and last seq and the ids past
 * the watermark, B-tree seeks) toward this handle's fts_logged, at most one chunk's worth, so that short-lived
 * handles (one CLI append each) still drain a backlog that reached a chunk. */
mn_status mn__sqlite_fts_backlog(struct sqlite_store *s);
/* At open: registers mnemo_bm25, FTS5's bm25 with the phrases' document counts given (search.c);
 * sets s->fts_given when it could (keyword search falls back to bm25 otherwise). Frees the phrase
 * counts at close. */
void mn__sqlite_fts_register(struct sqlite_store *s);
void mn__sqlite_fts_release(struct sqlite_store *s);

/* The backup op (backup.c; store.h). */
mn_status mn__sqlite_op_backup(mn_store *st, const char *to, void (*progress)(void *user, int64_t done, int64_t total),
                               void *user);

/* Operations implemented in threads.c. */
mn_status mn__sqlite_op_session_files(mn_store *st, const char *id, mn_strings **out);
mn_status mn__sqlite_op_file_seen(mn_store *st, const char *id, const char *path, const char *sha256, int64_t now_ms,
                                 int *first);
mn_status mn__sqlite_op_state_get(mn_store *st, const char *id, char **out);
mn_status mn__sqlite_op_state_update(mn_store *st, const char *id,
                                    mn_status (*fn)(void *user, const char *current, char **next), void *user);

/* Operations implemented in summaries.c (context governance). */
mn_status mn__sqlite_op_summary_latest(mn_store *st, const char *session_id, mn_summary **out);
mn_status mn__sqlite_op_summary_insert(mn_store *st, const char *session_id, const mn_summary *sm, int64_t *id);
mn_status mn__sqlite_op_event_insert(mn_store *st, const char *session_id, const char *kind, const char *data,
                                    int64_t now_ms);
mn_status mn__sqlite_op_events_list(mn_store *st, const char *session_id, size_t limit,
                                   int (*fn)(void *user, int64_t id, const char *kind, const char *data, int64_t at),
                                   void *user);
mn_status mn__sqlite_op_busy_claim(mn_store *st, const char *session_id, int64_t now_ms, int64_t until_ms,
                                  int *claimed, int64_t *busy_until);
mn_status mn__sqlite_op_busy_release(mn_store *st, const char *session_id, int64_t until_ms);
mn_status mn__sqlite_op_message_pin(mn_store *st, const char *session_id, int64_t message_id, int pinned);
mn_status mn__sqlite_op_pinned_units(mn_store *st, const char *session_id, int64_t upto_seq, mn_store_message_fn fn,
                                    void *user);
mn_status mn__sqlite_op_tool_tokens(mn_store *st, const char *session_id, int64_t after_seq, int64_t *sum);

/* Operations implemented in edit.c (single-message delete, session update). */
mn_status mn__sqlite_op_session_update(mn_store *st, const char *id, const char *title, const char *metadata,
                                      int64_t now_ms);

/* The search operations (search.c), store.h's ops->search. */
extern const struct mn_store_search_ops mn_sqlite_search_ops;
/* Keyword search plan thresholds (search.c; tests lower them to reach every plan): a session or
 * namespace of at most set_max messages is filtered as a list of ids; a round ranks at most
 * round_max candidates before the filter is joined to every match; a phrase's document count is
 * kept with the common ones (df, which may earn best rows and bitmaps) when it is at least
 * df_keep, else with the rarer ones (fts_counts.c); the rarer phrases are ranked first
 * (MaxScore) while they match at most 1/group_div of the store. */
struct mn_sqlite_fts_tuning {
    size_t set_max, round_max;
    int64_t df_keep, group_div;
    int64_t seed_max; /* the rarest phrases with this many rows together are ranked, the one or
                       * two left from their best rows (fts_tops.c); -1: never */
    int64_t top_depth; /* rows kept per count of the phrase in a row */
    size_t set_scored; /* a set's rows with a rare group's phrases scored one by one, at most, */
    double set_share;  /* when the set is at most this share of the store */
    int64_t dense_div; /* phrases in at least 1/dense_div of the rows are held in memory (fts_dense.c); 0: none */
    size_t dense_bytes, dense_row_bytes; /* what a connection holds for them at most: this, and
                                          * this much more per message id indexed */
    int64_t rows_div;   /* a query with none held is ranked there too when its phrases' rows
                         * together are at most 1/rows_div of the ids indexed; 0: never */
    /* A search indexes what waits for the index itself up to sync_max messages; past that the
     * indexer thread does it in the background, and searches scan the newest tail_rows
     * messages the index does not hold yet (fts_tail.c). */
    int64_t sync_max;
    size_t tail_rows;
    /* A search in a session is counted from the session's text (fts_set.c) when the phrases not
     * held in memory have more than set_scan rows for each message it would index for that (or
     * for each 16 of the session's, when it has them all); 0: never. */
    int64_t set_scan;
    /* Kept counts are brought forward from the text of the messages indexed since the last
     * search while there are at most recent_step of them (fts_set.c); past that, from their
     * postings (a statement a phrase). */
    int64_t recent_step;
};
extern struct mn_sqlite_fts_tuning mn_sqlite_fts_tuning;
struct scored_list;
/* The keyword index's tokenizer, which the TEMP table scanned beside it (fts_tail.c) and the
 * tokens of fts_set.c use too: a message matches there exactly when it would in the index. */
#define MN_SQLITE_KW_TOKENIZE "tokenize = 'porter unicode61 remove_diacritics 2'"
/* The keyword index's watermark: it holds the messages up to this id (search.c, fts_tail.c). */
#define MN_SQLITE_KW_WATERMARK                                                                                   \
    "SELECT coalesce((SELECT CAST(value AS INTEGER) FROM fts_meta WHERE key = 'fts.indexed_upto'), 0)"
/* On the indexer x, in the search's read transaction: the best `limit` of the messages the
 * index does not hold yet that match and pass the filter, pushed onto out (fts_tail.c); *rep
 * how many the index does not hold and how many of them were searched. */
mn_status mn__sqlite_fts_tail(struct sqlite_store *x, const char *match, const mn_search_filter *f, size_t limit,
                              struct scored_list *out, struct mn_store_fts_report *rep);
/* A session's messages split into tokens apart from the index (fts_set.c): the session's sid
 * (0: none); about how many of its `part` messages the connection lacks for the index at
 * watermark upto while meta fts.deletes is gen; the connection made to hold them; each row of
 * the set (NULL: all held) that has phrase i of p, handed to row with the phrase's count and the
 * row's size in tokens, as the index has them, in the rows' order (the caller sorts), from the
 * session last covered; and what the connection holds, freed. */
mn_status mn__sqlite_set_sid(struct sqlite_store *s, const char *session_id, int64_t *sid);
int64_t mn__sqlite_set_missing(const struct sqlite_store *s, int64_t sid, int64_t upto, int64_t gen, int64_t part);
mn_status mn__sqlite_set_cover(struct sqlite_store *s, int64_t sid, int64_t upto, int64_t gen);
struct phrases;
struct mn_sqlite_idset;
mn_status mn__sqlite_set_rows(struct sqlite_store *s, const struct phrases *p, const struct mn_sqlite_idset *set,
                              mn_status (*row)(void *user, int64_t id, int64_t tf, int phrase, int ntok), void *user);
void mn__sqlite_set_free(struct sqlite_store *s);
/* FNV-1a of p[0..n): the hash of the word and phrase tables (fts_set.c, fts_counts.c). */
static inline uint32_t mn__sqlite_hash(const char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)p[i]) * 16777619u;
    return h;
}
/* The counts of phrases under df_keep rows a connection keeps (fts_counts.c): a phrase found in
 * n rows among those up to message id upto. find: NULL when not kept; put: keeps or updates
 * (nothing when memory runs out); free: drops them all. */
struct mn_sqlite_count {
    char *phrase; /* (not NUL-terminated; NULL: an empty slot) */
    size_t len;
    uint32_t hash;
    int64_t n, upto;
};
struct mn_sqlite_count *mn__sqlite_count_find(struct sqlite_store *s, const char *phrase, size_t len);
void mn__sqlite_count_put(struct sqlite_store *s, const char *phrase, size_t len, int64_t n, int64_t upto);
void mn__sqlite_counts_free(struct sqlite_store *s);
/* Kept document counts brought forward from the text of the messages the index took in last
 * (fts_set.c): for each phrase i of p with after[i] (the id its count is kept up to) below upto,
 * adds to more[i] the rows past after[i] up to upto that have it, and sets after[i] to -1, when
 * the connection holds those rows' tokens (it keeps the last few thousand it saw, from its
 * first call on, while meta fts.deletes stays gen); the caller counts the others. */
mn_status mn__sqlite_recent_counts(struct sqlite_store *s, const struct phrases *p, int64_t upto, int64_t gen,
                                   int64_t *after, int64_t *more);
/* head + the filter's conditions (parameters ?10 to ?15, bound here) + tail, prepared (not
 * cached: the caller finalizes *st) (search.c). */
mn_status mn__sqlite_prepare_filtered(struct sqlite_store *s, const char *head, const mn_search_filter *f,
                                     const char *tail, sqlite3_stmt **st);
/* Keyword searches the common phrases' best rows answered (fts_tops.c; tests check the path ran). */
extern long mn_sqlite_fts_tops_ranked;
/* Keyword searches in a session counted from its text, the messages split into tokens for
 * them, and kept counts brought forward from the text of the messages indexed last (fts_set.c;
 * tests check the paths ran and what was kept). */
extern long mn_sqlite_fts_set_scanned, mn_sqlite_fts_set_split, mn_sqlite_fts_recent_counted;
/* Keyword searches ranked from the phrases held in memory, and with none held from the rows of
 * every phrase (fts_dense.c; tests check the paths ran). */
extern long mn_sqlite_fts_dense_ranked, mn_sqlite_fts_rows_ranked;
/* The long-term memory operations (memories.c), store.h's ops->memory; the memory vectors' part
 * shares search.c's vector reads. */
extern const struct mn_store_memory_ops mn_sqlite_memory_ops;
mn_status mn__sqlite_memory_vec_scan(mn_store *st, mn_store_vec_fn fn, void *user, int64_t *log_seq);
mn_status mn__sqlite_memory_vec_changes(mn_store *st, int64_t after, mn_store_change_fn fn, void *user, int64_t *last);
mn_status mn__sqlite_memory_vec_get(mn_store *st, int64_t vid, float *out, uint32_t dim);

/* The graph checkpoint operations (checkpoints.c), store.h's ops->checkpoint. */
extern const struct mn_store_checkpoint_ops mn_sqlite_checkpoint_ops;
/* The document operations (documents.c), store.h's ops->document. */
extern const struct mn_store_document_ops mn_sqlite_document_ops;
/* The connection of `handle` whose lock this thread holds, so that a checkpoint or document
 * operation called there runs on it instead of waiting for that lock (a non-recursive mutex):
 * from begin to commit or rollback (sqlite.c; tx 1, the write transaction that begin opened), and
 * while a checkpoint or document scan hands rows to its callback (scan 1; a checkpoint scan's
 * callback may read their pending writes). As PostgreSQL's connection pinned by begin (pg.c).
 * Per thread; handle NULL: none. Defined in held.c. */
struct mn_sqlite_held {
    struct sqlite_store *handle, *conn;
    int tx, scan;
};
extern _Thread_local struct mn_sqlite_held mn_sqlite_held;
/* The body of an operation, run on connection s (held.c's runners). */
typedef mn_status (*mn_sqlite_body)(struct sqlite_store *s, void *arg);
/* Runs body in the transaction of this thread's begin on st, when it is inside one; else in a
 * write transaction of its own under st's lock, then after (may be NULL) once it committed,
 * still under the lock. A write inside a scan's callback would wait for the lock the scan
 * holds: refused (MN_MISUSE). */
mn_status mn__sqlite_run_write(mn_store *st, mn_sqlite_body body, mn_sqlite_body after, void *arg);
/* Runs body on the connection of st this thread holds (begin's, or a scan's), else on a free
 * connection (mn__sqlite_reader) under its lock. */
mn_status mn__sqlite_run_read(mn_store *st, mn_sqlite_body body, void *arg);
/* mn__sqlite_run_read for a read that calls back: while body runs, its connection is this
 * thread's (mn_sqlite_held, scan 1), so the callback may read on it; a read from inside another
 * read's callback is refused (MN_MISUSE: that read's statements are running). */
mn_status mn__sqlite_run_scan(mn_store *st, mn_sqlite_body body, void *arg);
/* mn__sqlite_run_write for a body that removes rows, whose arg starts with an int64_t that the
 * body sets to the rows it removed: that count into *removed (0 on failure). After a commit of
 * its own that removed any, the WAL is truncated, so that the removed data leaves it too, as
 * after a session delete (docs/erasure.md; freed pages are zeroed by secure_delete); not after a
 * remove inside begin…commit: its old pages stay in the WAL until the log's next checkpoint. */
mn_status mn__sqlite_run_remove(mn_store *st, mn_sqlite_body body, void *arg, int64_t *removed);
/* The connection a read should use (sqlite.c): the handle itself when its lock is free, else
 * one of its read-only connections; the op then takes that connection's lock. */
mn_store *mn__sqlite_reader(mn_store *st);

/* Maps a SQLite result code to a status with a message ("what: …"). */
mn_status mn__sqlite_fail(struct sqlite_store *s, int rc, const char *what);
/* The first column of a one-row statement run once, uncached (a pragma, a count at open): 0 when
 * there is no row. */
mn_status mn__sqlite_one_value(struct sqlite_store *s, const char *sql, int64_t *value);
/* The prepared statement for a static SQL string (cached by its address). */
mn_status mn__sqlite_stmt(struct sqlite_store *s, const char *sql, sqlite3_stmt **out);
/* Steps a bound statement that returns no rows, then resets it ("what: …" on failure). */
mn_status mn__sqlite_step_done(struct sqlite_store *s, sqlite3_stmt *st, const char *what);
/* Runs a static SQL statement that returns no rows. */
mn_status mn__sqlite_exec_stmt(struct sqlite_store *s, const char *sql, const char *what);
/* Resets a statement and clears its bindings after use. */
void mn__sqlite_done(sqlite3_stmt *st);
/* Binds text, or NULL when v is NULL (SQLITE_STATIC: v must outlive the step). */
void mn__sqlite_bind_text(sqlite3_stmt *st, int i, const char *v);
/* Write transactions: BEGIN IMMEDIATE, COMMIT (rolled back when it fails), ROLLBACK. */
mn_status mn__sqlite_begin_write(struct sqlite_store *s);
mn_status mn__sqlite_commit(struct sqlite_store *s);
void mn__sqlite_rollback(struct sqlite_store *s);
/* Ends the write transaction a body ran in (held.c): commits when the body's status rc is MN_OK,
 * else rolls back (nothing when none is open) and returns rc. */
mn_status mn__sqlite_end_write(struct sqlite_store *s, mn_status rc);

/* The values of a statement's parameters ?1, ?2, … for the statement helpers below (held.c):
 *     mn__sqlite_run(s, SQL_X, "what", ARGS(ARG_TEXT(id), ARG_INT(now_ms)))
 * A text is bound as mn__sqlite_bind_text binds it (NULL binds NULL; it must outlive the step). */
struct mn_sqlite_arg {
    const char *text;
    int64_t num;
    int is_text;
};
#define ARG_TEXT(v) ((struct mn_sqlite_arg){(v), 0, 1})
#define ARG_INT(v) ((struct mn_sqlite_arg){NULL, (int64_t)(v), 0})
/* The count and the array of the values given, as two arguments. */
#define ARGS(...)                                                                                                    \
    sizeof((struct mn_sqlite_arg[]){__VA_ARGS__}) / sizeof(struct mn_sqlite_arg), (struct mn_sqlite_arg[]){__VA_ARGS__}
/* The cached statement for a static SQL string, with args[i] bound to ?i+1 (those past its last
 * parameter are left out); the caller steps it, then mn__sqlite_finish. */
mn_status mn__sqlite_query(struct sqlite_store *s, const char *sql, sqlite3_stmt **out, size_t n,
                          const struct mn_sqlite_arg *args);
/* mn__sqlite_query for a statement whose ?1 is a session's sid: the session's (MN_NOTFOUND when
 * there is none) into *sid, args bound to ?2, ?3, … */
mn_status mn__sqlite_session_query(struct sqlite_store *s, const char *session_id, const char *sql,
                                  sqlite3_stmt **out, int64_t *sid, size_t n, const struct mn_sqlite_arg *args);
/* Hands the rows of a bound query of MN_SQLITE_MESSAGE_COLS (of session session_id) to fn until it
 * returns non-zero, then mn__sqlite_finish. */
mn_status mn__sqlite_each_message(struct sqlite_store *s, sqlite3_stmt *st, const char *session_id,
                                 mn_store_message_fn fn, void *user, const char *what);
/* After the steps of a statement (r the last step's result, rc the caller's status so far):
 * resets st and returns rc, or, when rc is MN_OK and r is neither a row nor the end, the step's
 * failure ("what: …"). */
mn_status mn__sqlite_finish(struct sqlite_store *s, sqlite3_stmt *st, int r, mn_status rc, const char *what);
/* A cached statement that returns no rows, run once with args bound ("what: …" on failure). */
mn_status mn__sqlite_run(struct sqlite_store *s, const char *sql, const char *what, size_t n,
                        const struct mn_sqlite_arg *args);
/* The integer in the first column of a cached query's first row, with args bound: 0 when it
 * returns none, and *found (may be NULL) whether it did ("what: …" on failure). */
mn_status mn__sqlite_int(struct sqlite_store *s, const char *sql, const char *what, int64_t *out, int *found, size_t n,
                        const struct mn_sqlite_arg *args);
/* items (an array of *cap items of `size` bytes, n of them used) with room for one more: when it
 * is full, reallocated to twice the items, or `first` items the first time, and *cap updated.
 * NULL when memory ran out (items and *cap are then as they were). */
void *mn__sqlite_grow(void *items, size_t *cap, size_t n, size_t size, size_t first);
const char *mn__sqlite_col_text(sqlite3_stmt *st, int i);
/* Row readers for SESSION_COLS / MESSAGE_COLS selects; strings are borrowed from the statement. */
void mn__sqlite_row_session(sqlite3_stmt *st, mn_session *out);
mn_status mn__sqlite_row_message(struct sqlite_store *s, sqlite3_stmt *st, const char *session_id, mn_message *out);
/* The internal sid and last seq of a session; MN_NOTFOUND when missing. last_seq may be NULL. */
mn_status mn__sqlite_session_sid(struct sqlite_store *s, const char *id, int64_t *sid, int64_t *last_seq);

#define MN_SQLITE_SESSION_COLS                                                                                       \
    "id, namespace, title, system_prompt, metadata, tool_name, parent_id, created_at, updated_at, expires_at,"     \
    " message_count, token_count, ttl_ms, max_turns, turn_count, inactive_count, cleared_seq, cleared_from, key"
#define MN_SQLITE_SESSION_NCOLS 19 /* the columns of MN_SQLITE_SESSION_COLS: a column after them is this one */
#define MN_SQLITE_MESSAGE_COLS                                                                                       \
    "id, seq, role, content, tool_calls, tool_call_id, name, tool_name, model, files, metadata, idem_key, tokens,"  \
    " pinned, created_at, active"

#endif
