/*
 * search.c — the SQLite side of search: the FTS5 keyword index (kept from the messages past its
 * watermark and from msg_log), stored vectors (little-endian f32 blobs with their embedder
 * identity), the embedding queue and the vector change log. Tables: schema.h versions 4 and 7.
 * Design notes: docs/search.md.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/fts_rank.h"
#include "store/sqlite/sqlite_int.h"
#include "store/store_search.h"
#include "store/vecblob.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

#define S(st) ((struct sqlite_store *)(st))

/* ---- helpers --------------------------------------------------------------------------------- */

/* Whether f has a role, time or metadata condition (besides a session or namespace). */
static int filter_narrows(const mn_search_filter *f)
{
    return f->role >= 0 || f->since || f->until || f->metadata;
}

/* Appends the filter's conditions (parameters ?10 … ?15). */
static mn_status filter_sql(const mn_search_filter *f, struct mn_buf *b)
{
    mn_status rc = MN_OK;
    if (!f)
        return MN_OK;
    if (f->session_id)
        rc = mn__buf_adds(b, " AND s.id = ?10");
    if (!rc && f->ns)
        rc = mn__buf_adds(b, " AND s.namespace = ?11");
    if (!rc && f->role >= 0)
        rc = mn__buf_adds(b, " AND m.role = ?12");
    if (!rc && f->since)
        rc = mn__buf_adds(b, " AND m.created_at >= ?13");
    if (!rc && f->until)
        rc = mn__buf_adds(b, " AND m.created_at < ?14");
    /* each key of the JSON object ?15 is in the message's metadata with an equal value: the
     * same JSON type (integer and real count as one, as PostgreSQL's jsonb does) and value */
    if (!rc && f->metadata)
        rc = mn__buf_adds(b, " AND NOT EXISTS (SELECT 1 FROM json_each(?15) j WHERE"
                            " coalesce(json_type(m.metadata, '$.\"' || j.key || '\"'), 'missing') NOT IN (j.type,"
                            " CASE WHEN j.type IN ('integer', 'real') THEN 'integer' ELSE j.type END,"
                            " CASE WHEN j.type IN ('integer', 'real') THEN 'real' ELSE j.type END)"
                            " OR json_extract(m.metadata, '$.\"' || j.key || '\"') IS NOT j.value)");
    return rc;
}

static void filter_bind(sqlite3_stmt *st, const mn_search_filter *f)
{
    if (!f)
        return;
    if (f->session_id)
        sqlite3_bind_text(st, 10, f->session_id, -1, SQLITE_STATIC);
    if (f->ns)
        sqlite3_bind_text(st, 11, f->ns, -1, SQLITE_STATIC);
    if (f->role >= 0)
        sqlite3_bind_text(st, 12, mn_role_name((mn_role)f->role), -1, SQLITE_STATIC);
    if (f->since)
        sqlite3_bind_int64(st, 13, f->since);
    if (f->until)
        sqlite3_bind_int64(st, 14, f->until);
    if (f->metadata)
        sqlite3_bind_text(st, 15, f->metadata, -1, SQLITE_STATIC);
}

static mn_status prepare_dynamic(struct sqlite_store *s, const char *sql, sqlite3_stmt **st)
{
    int r = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
    return r == SQLITE_OK ? MN_OK : mn__sqlite_fail(s, r, "search");
}

/* head + the filter's conditions + tail, prepared, with the filter's values bound (the caller
 * binds its own parameters, numbered below the filter's). Caller finalizes *st. */
mn_status mn__sqlite_prepare_filtered(struct sqlite_store *s, const char *head, const mn_search_filter *f,
                                     const char *tail, sqlite3_stmt **st)
{
    struct mn_buf sql = MN_BUF_INIT;
    mn_status rc = mn__buf_adds(&sql, head);
    if (!rc)
        rc = filter_sql(f, &sql);
    if (!rc && tail)
        rc = mn__buf_adds(&sql, tail);
    *st = NULL;
    if (!rc)
        rc = prepare_dynamic(s, sql.data, st);
    mn__buf_release(&sql);
    if (!rc)
        filter_bind(*st, f);
    return rc;
}

/* ---- keyword index --------------------------------------------------------------------------- */
/*
 * The keyword index (messages_fts, contentless, in its own file: schema.h, versions 7 and 11)
 * follows two sources. Messages with an id above the watermark (fts_meta 'fts.indexed_upto', in
 * the index's file) are not indexed yet: ids only grow (one writer; the id counter never reuses an
 * id, schema.h), so an append writes nothing for the index. msg_log (in the database) holds every
 * delete (with the old text, which a contentless delete needs), edit and import. Rows of the log
 * above the watermark are dropped when the watermark passes them: indexing a message reads its
 * text as it is then.
 *
 * The index is written by the indexer handle (s->kw, its own connection; sqlite_int.h). While
 * the log is empty, a step reads the messages past the watermark from one snapshot of the
 * database and indexes them in a transaction that locks only the index's file, so appends go on
 * beside it, on the other core: a log row written after the snapshot is of a message the step
 * indexed as it was before (or not at all, when it is past the step's last id), so the next step
 * applies it (or drops it) correctly. A step with log rows locks both files, as every write of
 * the log does, and marks the rows it applied in the index's file (fts_applied) rather than
 * deleting them: they leave msg_log after it committed (log_cleanup). The TEMP view
 * fts_log_pending (fts_file.c) is msg_log less those rows.
 */
static const char SQL_WATERMARK[] = MN_SQLITE_KW_WATERMARK;
static const char SQL_WATERMARK_SET[] = "INSERT INTO fts_meta (key, value) VALUES ('fts.indexed_upto', ?1)"
                                        " ON CONFLICT (key) DO UPDATE SET value = excluded.value";
/* The first statement of a step's write half: a write to the index's file alone takes that
 * file's lock (a deferred transaction locks what it writes first), not the database's. */
static const char SQL_INDEX_LOCK[] = "UPDATE fts_meta SET value = value WHERE key = 'fts.indexed_upto'";
static const char SQL_LOG_ANY[] = "SELECT EXISTS (SELECT 1 FROM fts_log_pending)";
static const char SQL_LAST_ID[] = "SELECT " MN_SQLITE_LAST_ID;
static const char SQL_PENDING_ANY[] =
    "SELECT EXISTS (SELECT 1 FROM fts_log_pending) OR EXISTS (SELECT 1 FROM messages WHERE id > ?1)";
static const char SQL_PENDING_COUNT[] = /* log rows above the watermark are dropped, not applied */
    "SELECT (SELECT count(*) FROM fts_log_pending WHERE message_id <= ?1) + (SELECT count(*) FROM messages WHERE id > ?1"
    " AND content IS NOT NULL)";
static const char SQL_LOG_SPAN[] = "SELECT coalesce(max(seq) - min(seq) + 1, 0) FROM msg_log";

/* Runs a cached one-value query with ?1 = arg (when arg_set) into *out (0 when no row). */
static mn_status value_of(struct sqlite_store *s, const char *sql, int arg_set, int64_t arg, int64_t *out)
{
    return mn__sqlite_int(s, sql, "keyword index", out, NULL, arg_set ? 1 : 0, &ARG_INT(arg));
}

/* Runs a cached statement with ?1 = a, ?2 = b (when it has a ?2); *changed (optional) gets the
 * rows it changed. */
static mn_status exec_bound(struct sqlite_store *s, const char *sql, int64_t a, int64_t b, int64_t *changed)
{
    mn_status rc = mn__sqlite_run(s, sql, "keyword index drain", ARGS(ARG_INT(a), ARG_INT(b)));
    if (!rc && changed)
        *changed = sqlite3_changes(s->db);
    return rc;
}

/* Whether anything waits for the index: log rows, or messages past the watermark. */
static mn_status pending_any(struct sqlite_store *s, int *any)
{
    int64_t w = 0, n = 0;
    mn_status rc = value_of(s, SQL_WATERMARK, 0, 0, &w);
    if (!rc)
        rc = value_of(s, SQL_PENDING_ANY, 1, w, &n);
    *any = n != 0;
    return rc;
}

/*
 * One step, inside the caller's write transaction: about `chunk` rows of the log (at or below the
 * watermark), then about `chunk` messages past it (chunk INT64_MAX: everything). The log rows of
 * a message go together, in message id order (a range of msg_log_by_message), so insert-then-
 * delete pairs cancel exactly and the index ends with the same content, hence the same bm25
 * scores, however the work is cut. After the cancel a message has at most one delete (of the text
 * indexed before) and one insert (its current text) left. *consumed gets the log rows and messages
 * taken, *last whether nothing is left.
 */
static const char SQL_CHUNK_BOUND[] =
    "SELECT message_id FROM fts_log_pending WHERE message_id <= ?2 ORDER BY message_id LIMIT 1 OFFSET ?1";
static const char SQL_CHUNK_CANCEL[] =
    "DELETE FROM msg_log WHERE seq IN ("
    " SELECT a.seq FROM fts_log_pending a JOIN fts_log_pending b ON b.message_id = a.message_id AND b.op = 0"
    "  AND b.seq > a.seq"
    "  WHERE a.op = 1 AND a.message_id <= ?1"
    " UNION SELECT b.seq FROM fts_log_pending a JOIN fts_log_pending b ON b.message_id = a.message_id AND b.op = 0"
    "  AND b.seq > a.seq"
    "  WHERE a.op = 1 AND a.message_id <= ?1)";
static const char SQL_CHUNK_DELETES[] =
    "INSERT INTO messages_fts (messages_fts, rowid, content)"
    " SELECT 'delete', message_id, content FROM fts_log_pending WHERE message_id <= ?1 AND op = 0"
    " AND content IS NOT NULL"
    " ORDER BY message_id";
static const char SQL_CHUNK_INSERTS[] =
    "INSERT INTO messages_fts (rowid, content) SELECT m.id, m.content FROM fts_log_pending l JOIN messages m"
    " ON m.id = l.message_id WHERE l.message_id <= ?1 AND l.op = 1 AND m.content IS NOT NULL ORDER BY l.message_id";
/* The rows applied are marked in the index's file, in its transaction; they leave msg_log only after
 * it committed (log_cleanup): the two files commit one after the other, and a crash between them
 * must neither lose a removal (the log emptied, the index not changed) nor apply one twice. */
static const char SQL_CHUNK_CLEAR[] = "INSERT INTO fts_applied (seq) SELECT seq FROM fts_log_pending WHERE message_id <= ?1";
static const char SQL_LOG_CLEANUP[] = "DELETE FROM msg_log WHERE seq IN (SELECT seq FROM fts_applied)";
static const char SQL_APPLIED_CLEANUP[] = "DELETE FROM fts_applied";
static const char SQL_RANGE_BOUND[] = "SELECT id FROM messages WHERE id > ?1 ORDER BY id LIMIT 1 OFFSET ?2";
static const char SQL_RANGE_DROP_LOG[] = "DELETE FROM msg_log WHERE message_id > ?1 AND message_id <= ?2";
static const char SQL_RANGE_INSERT[] = "INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages"
                                       " WHERE id > ?1 AND id <= ?2 AND content IS NOT NULL ORDER BY id";

/* The row at `offset` of a bound query (?1 = a, ?2 = b), or *found = 0 past the end (*out 0). */
static mn_status bound_at(struct sqlite_store *s, const char *sql, int64_t a, int64_t b, int64_t *out, int *found)
{
    return mn__sqlite_int(s, sql, "keyword index drain", out, found, ARGS(ARG_INT(a), ARG_INT(b)));
}

/* The document counts a handle keeps for ranking (search.c, "Bounded top-k") hold while rows only
 * enter the index in id order. Rows applied from the log break that: a delete, an edit (delete and
 * insert) or an import below the watermark. Before applying the log rows of messages up to
 * `bound`, when there are any, meta fts.deletes is counted up: every handle then drops its kept
 * counts. */
static const char SQL_LOG_ROWS_ANY[] = "SELECT EXISTS (SELECT 1 FROM fts_log_pending WHERE message_id <= ?1)";
static const char SQL_DELETES_BUMP[] = "INSERT INTO fts_meta (key, value) VALUES ('fts.deletes', '1')"
                                       " ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1";

static mn_status note_out_of_order(struct sqlite_store *s, int64_t bound)
{
    int64_t any = 0;
    mn_status rc = value_of(s, SQL_LOG_ROWS_ANY, 1, bound, &any);
    if (!rc && any)
        rc = mn__sqlite_exec_stmt(s, SQL_DELETES_BUMP, "keyword index sync");
    return rc;
}

static mn_status fts_step(struct sqlite_store *s, int64_t chunk, int64_t *consumed, int *last)
{
    *consumed = 0;
    *last = 1;
    int64_t w = 0, bound = 0, cancelled = 0, cleared = 0, dropped = 0, indexed = 0;
    int found = 0;
    mn_status rc = value_of(s, SQL_WATERMARK, 0, 0, &w);
    /* the log, at or below the watermark */
    bound = w;
    if (!rc && chunk != INT64_MAX && !(rc = bound_at(s, SQL_CHUNK_BOUND, chunk - 1, w, &bound, &found)) && found)
        *last = 0;
    if (!found)
        bound = w;
    if (!rc && !(rc = exec_bound(s, SQL_CHUNK_CANCEL, bound, 0, &cancelled)) && !(rc = note_out_of_order(s, bound)) &&
        !(rc = exec_bound(s, SQL_CHUNK_DELETES, bound, 0, NULL)) && !(rc = exec_bound(s, SQL_CHUNK_INSERTS, bound, 0, NULL)))
        rc = exec_bound(s, SQL_CHUNK_CLEAR, bound, 0, &cleared);
    /* the messages past the watermark: up to the chunk's last id, or to the last id ever given
     * (past deleted ones too, whose log rows go with them) */
    int64_t upto = w;
    found = 0;
    if (!rc && chunk != INT64_MAX && !(rc = bound_at(s, SQL_RANGE_BOUND, w, chunk - 1, &upto, &found)) && found)
        *last = 0;
    if (!rc && !found)
        rc = value_of(s, SQL_LAST_ID, 0, 0, &upto);
    if (!rc && upto > w && !(rc = exec_bound(s, SQL_RANGE_DROP_LOG, w, upto, &dropped)) &&
        !(rc = exec_bound(s, SQL_RANGE_INSERT, w, upto, &indexed)))
        rc = exec_bound(s, SQL_WATERMARK_SET, upto, 0, NULL);
    if (!rc)
        *consumed = cancelled + cleared + dropped + indexed;
    return rc;
}

static const char SQL_LOG_INSERT[] = "INSERT INTO msg_log (message_id, op) VALUES (?1, 1)";

mn_status mn__sqlite_fts_log_insert(struct sqlite_store *s, int64_t id)
{
    return exec_bound(s, SQL_LOG_INSERT, id, 0, NULL);
}

static const char SQL_LOG_REMOVED[] = "SELECT 1 FROM fts_log_pending WHERE op = 0 LIMIT 1";
static const char SQL_FTS_OPTIMIZE[] = "INSERT INTO messages_fts (messages_fts) VALUES ('optimize')";
static const char SQL_BEGIN_DEFERRED[] = "BEGIN";

/* The handle that writes the index, its lock taken (the caller holds s's: s's lock, then the
 * indexer's, the one order); put back with indexer_put. A private database writes its own. */
static struct sqlite_store *indexer_take(struct sqlite_store *s)
{
    if (!s->kw)
        return s;
    pthread_mutex_lock(&s->kw->lock);
    return s->kw;
}

static void indexer_put(struct sqlite_store *s, struct sqlite_store *x)
{
    if (x != s)
        pthread_mutex_unlock(&x->lock);
}

/* The messages of a step while the log is empty: read in a short read transaction, so that the
 * database's write-ahead log can restart meanwhile (a snapshot held for the whole step kept it
 * growing to 50 MB, out of the CPU's cache), then indexed in a transaction of the index's file
 * alone. */
struct range_rows {
    int64_t w, upto, n;
    int64_t *id;
    char **text;
};

static void range_rows_free(struct range_rows *r)
{
    for (int64_t i = 0; i < r->n; i++)
        free(r->text[i]);
    free(r->id);
    free(r->text);
}

static const char SQL_RANGE_ROWS[] =
    "SELECT id, content FROM messages WHERE id > ?1 AND id <= ?2 AND content IS NOT NULL ORDER BY id";
static const char SQL_INDEX_ROW[] = "INSERT INTO messages_fts (rowid, content) VALUES (?1, ?2)";

/* In a read transaction: *log whether the log has rows; else the watermark, the step's last id
 * and its messages (at most `chunk` of them, and about RANGE_STEP_BYTES of text: they are held in
 * memory). */
#define RANGE_STEP_BYTES ((int64_t)16 << 20)
static mn_status range_read(struct sqlite_store *x, int64_t chunk, struct range_rows *r, int64_t *log, int *last)
{
    int found = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = value_of(x, SQL_LOG_ANY, 0, 0, log);
    if (rc || *log || (rc = value_of(x, SQL_WATERMARK, 0, 0, &r->w)))
        return rc;
    r->upto = r->w;
    if (chunk != INT64_MAX && (rc = bound_at(x, SQL_RANGE_BOUND, r->w, chunk - 1, &r->upto, &found)))
        return rc;
    *last = !found;
    if ((!found && (rc = value_of(x, SQL_LAST_ID, 0, 0, &r->upto))) || r->upto <= r->w ||
        (rc = mn__sqlite_query(x, SQL_RANGE_ROWS, &st, ARGS(ARG_INT(r->w), ARG_INT(r->upto)))))
        return rc;
    int64_t cap = 0, bytes = 0;
    int s;
    while (!rc && bytes < RANGE_STEP_BYTES && (s = sqlite3_step(st)) == SQLITE_ROW) {
        if (r->n == cap) {
            cap = cap ? 2 * cap : 256;
            int64_t *id = realloc(r->id, (size_t)cap * sizeof *id);
            char **text = id ? realloc(r->text, (size_t)cap * sizeof *text) : NULL;
            r->id = id ? id : r->id;
            r->text = text ? text : r->text;
            if (!id || !text) {
                rc = mn__nomem();
                break;
            }
        }
        r->id[r->n] = sqlite3_column_int64(st, 0);
        if (!(r->text[r->n] = strdup(mn__sqlite_col_text(st, 1)))) {
            rc = mn__nomem();
        } else {
            bytes += sqlite3_column_bytes(st, 1);
            r->n++;
        }
    }
    if (!rc && bytes >= RANGE_STEP_BYTES) { /* the rest in the next step (s: the row read last) */
        r->upto = r->id[r->n - 1];
        *last = 0;
    }
    return mn__sqlite_finish(x, st, s, rc, "keyword index drain");
}

/* In a write transaction of the index's file: the rows read, the watermark moved past them;
 * nothing when another process moved the watermark meanwhile (*moved). */
static mn_status range_write(struct sqlite_store *x, const struct range_rows *r, int *moved)
{
    int64_t w = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = value_of(x, SQL_WATERMARK, 0, 0, &w);
    *moved = !rc && w != r->w;
    if (rc || *moved || (rc = mn__sqlite_stmt(x, SQL_INDEX_ROW, &st)))
        return rc;
    for (int64_t i = 0; !rc && i < r->n; i++) {
        sqlite3_bind_int64(st, 1, r->id[i]);
        sqlite3_bind_text(st, 2, r->text[i], -1, SQLITE_STATIC);
        rc = mn__sqlite_step_done(x, st, "keyword index drain");
    }
    return rc ? rc : exec_bound(x, SQL_WATERMARK_SET, r->upto, 0, NULL);
}

static int64_t drain_chunk(const struct sqlite_store *s) { return s->fts_drain_rows > 0 ? s->fts_drain_rows : 1000; }

/* A step on the indexer handle while the log is empty (see above); *log set when it is not, and
 * nothing done. */
static mn_status range_step(struct sqlite_store *x, int64_t chunk, int64_t *log, int64_t *consumed, int *last)
{
    struct range_rows r = {0};
    if (chunk == INT64_MAX) /* the messages are held in memory: a chunk at a time, the caller loops */
        chunk = drain_chunk(x);
    int moved = 0;
    x->busy_started_ns = 0;
    mn_status rc = mn__sqlite_exec_stmt(x, SQL_BEGIN_DEFERRED, "keyword index begin");
    if (!rc) {
        rc = range_read(x, chunk, &r, log, last);
        mn__sqlite_rollback(x); /* read only */
    }
    if (!rc && !*log && r.upto > r.w && !(rc = mn__sqlite_exec_stmt(x, SQL_BEGIN_DEFERRED, "keyword index begin"))) {
        if ((rc = mn__sqlite_exec_stmt(x, SQL_INDEX_LOCK, "keyword index lock")) || (rc = range_write(x, &r, &moved)) ||
            moved)
            mn__sqlite_rollback(x);
        else
            rc = mn__sqlite_commit(x);
    }
    if (!rc && !*log && !moved)
        *consumed = r.n;
    if (moved)
        *last = 0; /* read again from where the other process left it */
    range_rows_free(&r);
    return rc;
}

/* After a step applied log rows and committed (the index's file with FULL sync: on disk): they
 * leave msg_log, then fts_applied. A crash between those two leaves seqs in fts_applied that no
 * log row has any more (AUTOINCREMENT: never given again), which hide nothing. */
static mn_status log_cleanup(struct sqlite_store *x)
{
    mn_status rc = mn__sqlite_begin_write(x);
    if (rc)
        return rc;
    if (!(rc = mn__sqlite_exec_stmt(x, SQL_LOG_CLEANUP, "keyword log cleanup")))
        rc = mn__sqlite_exec_stmt(x, SQL_APPLIED_CLEANUP, "keyword log cleanup");
    return mn__sqlite_end_write(x, rc);
}

static const char SQL_APPLIED_ANY[] = "SELECT EXISTS (SELECT 1 FROM fts_applied)";

/* log_cleanup when rows are marked (a step that applied none writes nothing more). */
static mn_status applied_cleanup(struct sqlite_store *x)
{
    int64_t any = 0;
    mn_status rc = value_of(x, SQL_APPLIED_ANY, 0, 0, &any);
    return rc || !any ? rc : log_cleanup(x);
}

mn_status mn__sqlite_fts_recover(struct sqlite_store *s)
{
    struct sqlite_store *x = indexer_take(s);
    mn_status rc = applied_cleanup(x);
    indexer_put(s, x);
    return rc;
}

/* One step of `chunk`, on the indexer x: while the log is empty, one that reads the database
 * briefly and locks the index's file alone (see above); else one transaction over both files. */
static mn_status fts_chunk(struct sqlite_store *x, int64_t chunk, int64_t *consumed, int *last)
{
    *consumed = 0;
    *last = 1;
    int64_t log = 1;
    mn_status rc = x->kw_own ? range_step(x, chunk, &log, consumed, last) : MN_OK;
    if (rc || !log)
        return rc;
    if ((rc = mn__sqlite_begin_write(x)) || (rc = mn__sqlite_end_write(x, fts_step(x, chunk, consumed, last))))
        return rc;
    return applied_cleanup(x);
}

/* Every step until nothing is left (a range step reads at most a chunk's messages at a time). */
static mn_status fts_all(struct sqlite_store *x)
{
    int64_t consumed = 0;
    int last = 0;
    mn_status rc;
    do
        rc = fts_chunk(x, INT64_MAX, &consumed, &last);
    while (!rc && !last);
    return rc;
}

void mn__sqlite_fts_erase(struct sqlite_store *s)
{
    struct sqlite_store *x = indexer_take(s);
    int64_t removed = 0;
    mn_status rc = value_of(x, SQL_LOG_REMOVED, 0, 0, &removed);
    /* A contentless delete only adds delete markers; the old terms stay in their segments until a
     * merge reaches them. 'optimize' merges every segment into one, now; then the index's own
     * write-ahead log is emptied of the pages that held them (as the database's is). */
    if (!rc && removed && !(rc = fts_all(x)) &&
        !(rc = mn__sqlite_exec_stmt(x, SQL_FTS_OPTIMIZE, "keyword index erase")) && x->kw_own &&
        sqlite3_wal_checkpoint_v2(x->db, "kw", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        mn__log(MN_LOG_INFO, "%s: keyword index WAL not truncated after a delete: %s", s->path,
                sqlite3_errmsg(x->db));
    if (rc)
        mn__log(MN_LOG_WARN, "%s: keyword index erase: %s (the log keeps the removal for the next drain)", s->path,
                mn_errmsg());
    indexer_put(s, x);
}

/* What waits for the index, estimated without a count (one row per id past the watermark and
 * per log row), and the watermark. */
static mn_status waiting_rows(struct sqlite_store *x, int64_t *waiting)
{
    int64_t span = 0, w = 0, last_id = 0;
    mn_status rc = value_of(x, SQL_LOG_SPAN, 0, 0, &span);
    if (!rc)
        rc = value_of(x, SQL_WATERMARK, 0, 0, &w);
    if (!rc)
        rc = value_of(x, SQL_LAST_ID, 0, 0, &last_id);
    *waiting = span + (last_id > w ? last_id - w : 0);
    return rc;
}

/* More than a search should wait for (tuning.sync_max): the indexer thread is asked for all of
 * it, in the background (a close stops it after its step; the next open goes on), and searches
 * scan the newest of what it has not reached (fts_tail.c). */
static void fts_background(struct sqlite_store *s, int64_t waiting)
{
    if (mn__sqlite_kw_rebuild_start(s))
        mn__log(MN_LOG_INFO, "%s: the keyword index lacks about %lld messages: indexing them in the background;"
                             " searches meanwhile scan the newest %zu of them", s->path, (long long)waiting,
                mn_sqlite_fts_tuning.tail_rows);
    if (!getenv("MNEMO_TEST_KEYWORD_HOLD")) /* tests only: what a search sees, without the thread's pace */
        mn__sqlite_kw_ask(s, 0, waiting, INT64_MAX);
}

static mn_status fts_sync_locked(struct sqlite_store *s, struct sqlite_store *x)
{
    int any = 0;
    int64_t waiting = 0;
    mn_status rc = pending_any(x, &any);
    if (rc || !any)
        return rc;
    if (s->kw_started && !(rc = waiting_rows(x, &waiting)) && waiting > mn_sqlite_fts_tuning.sync_max) {
        fts_background(s, waiting);
        return MN_OK;
    }
    return rc ? rc : fts_all(x);
}

static mn_status op_fts_sync(mn_store *st)
{
    struct sqlite_store *s = S(st);
    if (mn__sqlite_kw_rebuilding(s))
        return MN_OK; /* the thread is on it: no wait for its step */
    pthread_mutex_lock(&s->lock);
    struct sqlite_store *x = indexer_take(s);
    mn_status rc = fts_sync_locked(s, x);
    indexer_put(s, x);
    if (!rc)
        s->fts_logged = 0;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Drains chunks of `chunk` rows on the indexer x until `budget` rows were consumed or nothing is
 * left (x's lock held). */
static mn_status fts_drain_chunks(struct sqlite_store *x, int64_t chunk, int64_t budget, int64_t *applied)
{
    int any = 0;
    mn_status rc = pending_any(x, &any);
    while (!rc && any && budget > 0) {
        int64_t consumed = 0;
        int last = 0;
        rc = fts_chunk(x, chunk, &consumed, &last);
        *applied += consumed;
        budget -= consumed > 0 ? consumed : chunk;
        any = !last;
    }
    return rc;
}

static mn_status fts_drain_locked(struct sqlite_store *s, int64_t budget, int64_t *applied)
{
    struct sqlite_store *x = indexer_take(s);
    mn_status rc = fts_drain_chunks(x, drain_chunk(s), budget, applied);
    indexer_put(s, x);
    if (!rc)
        s->fts_logged = 0;
    if (!rc && budget == INT64_MAX) /* everything: a background rebuild has nothing left */
        mn__sqlite_kw_rebuilt(s);
    return rc;
}

/* Once this handle logged a chunk's worth: the indexer thread is asked to drain it and a chunk
 * more, on the other core; the append waits while the thread is more than four chunks behind
 * (appends outrun it), so the backlog stays bounded. A handle without a thread drains inline. */
void mn__sqlite_fts_after_commit(struct sqlite_store *s)
{
    if (s->fts_drain_deferred || s->fts_drain_rows <= 0 || s->fts_logged < s->fts_drain_rows)
        return;
    int64_t budget = s->fts_logged + s->fts_drain_rows;
    if (s->kw_started) {
        mn__sqlite_kw_ask(s, s->fts_logged, budget, 4 * s->fts_drain_rows);
        s->fts_logged = 0;
        return;
    }
    int64_t applied = 0;
    struct sqlite_store *x = indexer_take(s);
    mn_status rc = fts_drain_chunks(x, drain_chunk(s), budget, &applied);
    indexer_put(s, x);
    s->fts_logged = 0; /* on a failure: try again after another chunk's worth of appends */
    if (rc)
        mn__log(MN_LOG_WARN, "%s: keyword index drain: %s (left for the next drain or search)", s->path,
                mn_errmsg());
}

/* Steps of what waits, up to four chunks each: behind, the thread takes larger bites (fewer
 * transactions and flushes of FTS5's pending terms, one fsync of the index's file each). Past
 * its budget it goes on while an append may wait for it: a step can consume nothing and still
 * not be the last (messages without text, which no budget was asked for; another process that
 * moved the watermark first), and the append that waits holds the handle's lock, so nothing
 * more would be asked. */
void mn__sqlite_fts_indexer_run(struct sqlite_store *s)
{
    struct sqlite_store *x = s->kw;
    int64_t chunk = drain_chunk(s), budget;
    while ((budget = atomic_exchange(&x->kw_budget, 0)) > 0 && !mn__sqlite_kw_quitting(s)) {
        mn_status rc = MN_OK;
        int last = 0, waited_for = 1;
        while (!rc && !last && (budget > 0 || waited_for) && !mn__sqlite_kw_quitting(s)) {
            int64_t step = budget < chunk ? chunk : budget < 4 * chunk ? budget : 4 * chunk, consumed = 0;
            int64_t asked = mn__sqlite_kw_asked(s);
            pthread_mutex_lock(&x->lock);
            rc = fts_chunk(x, step, &consumed, &last);
            pthread_mutex_unlock(&x->lock);
            budget -= consumed > 0 ? consumed : step;
            waited_for = mn__sqlite_kw_caught(s, asked, consumed, last, rc);
        }
        if (rc || last) /* a background rebuild is done (or failed: the next search looks again) */
            mn__sqlite_kw_rebuilt(s);
        if (rc)
            mn__log(MN_LOG_WARN, "%s: keyword index drain: %s (left for the next drain or search)", s->path,
                    mn_errmsg());
    }
}

mn_status mn__sqlite_fts_backlog(struct sqlite_store *s)
{
    int64_t waiting = 0;
    struct sqlite_store *x = indexer_take(s);
    mn_status rc = waiting_rows(x, &waiting);
    indexer_put(s, x);
    if (!rc && s->kw_started && waiting > mn_sqlite_fts_tuning.sync_max)
        fts_background(s, waiting); /* a missing or stale index file: made again from the messages */
    else if (!rc)
        s->fts_logged = waiting < s->fts_drain_rows ? waiting : s->fts_drain_rows;
    return rc;
}

static mn_status fts_drain_op(struct sqlite_store *s, int all, int64_t *applied, int64_t *pending)
{
    mn_status rc = MN_OK;
    int64_t n = 0, w = 0;
    if (all)
        rc = fts_drain_locked(s, INT64_MAX, &n);
    else if (s->fts_drain_rows > 0 && s->fts_logged >= s->fts_drain_rows)
        rc = fts_drain_locked(s, s->fts_logged + s->fts_drain_rows, &n);
    if (applied)
        *applied = n;
    if (!rc && pending) {
        struct sqlite_store *x = indexer_take(s);
        if (!(rc = value_of(x, SQL_WATERMARK, 0, 0, &w)))
            rc = value_of(x, SQL_PENDING_COUNT, 1, w, pending);
        indexer_put(s, x);
    }
    return rc;
}

static mn_status op_fts_drain(mn_store *st, int all, int64_t *applied, int64_t *pending)
{
    LOCKED(S(st), fts_drain_op(S(st), all, applied, pending));
}

static void op_fts_defer(mn_store *st, int defer)
{
    struct sqlite_store *s = S(st);
    pthread_mutex_lock(&s->lock);
    s->fts_drain_deferred = defer != 0;
    pthread_mutex_unlock(&s->lock);
}

/*
 * Keyword search. The ranking is FTS5's bm25 over the whole index (its idf counts every row, not
 * only the rows that pass the filter), ties by smaller rowid: a total order that no filter
 * changes. The filtered top-k is therefore that order with the failing rows left out, and the
 * filter need not be joined to every match (two B-tree seeks per match, the cost that grew with
 * the store: docs/search.md, "Keyword search at scale"). Three plans, one answer:
 *  - small set: a session or a namespace of at most set_max messages; the ids that pass the
 *    filter are read once from the session index and each match is tested against that list
 *    (mnemo_in, fts_idset.c; without mnemo_bm25, `+rowid IN (…)`: the `+` keeps FTS5 from seeking
 *    each id, which would recount the idf);
 *  - rounds: the best L matches of the FTS table alone, each checked against the filter (and that
 *    its message still exists), L grown 8× while fewer than `limit` pass and matches remain;
 *  - joined: when a round would rank more than round_max candidates (a very selective filter
 *    on role, time or metadata), the filter joined to every match, ranking only what passes.
 */
struct mn_sqlite_fts_tuning mn_sqlite_fts_tuning = {20000, 65536, 2000, 4, 32768, 64, 256, 1.0 / 400, 32,
                                                     (size_t)64 << 20, 16, 16, 2000, 5000, 50, 512};

static const char SQL_FTS_TOP[] = "SELECT rowid, bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?1"
                                  " ORDER BY bm25(messages_fts), rowid LIMIT ?2";
static const char SQL_SESSION_SIZE[] = "SELECT message_count FROM sessions WHERE id = ?1";
static const char SQL_NS_SIZE[] = "SELECT coalesce(sum(message_count), 0) FROM sessions WHERE namespace = ?1";
static const char SQL_READ_BEGIN[] = "BEGIN";
static const char SQL_READ_END[] = "COMMIT";
static const char SQL_STORE_SIZE[] = "SELECT coalesce(max(id), 0) FROM messages";

mn_status mn__sqlite_scored_push(struct scored_list *l, int64_t id, double score)
{
    struct scored *r = mn__sqlite_grow(l->r, &l->cap, l->n, sizeof *r, 16);
    if (!r)
        return mn__nomem();
    l->r = r;
    l->r[l->n++] = (struct scored){id, score};
    return MN_OK;
}

static mn_status fts_step_fail(struct sqlite_store *s, int r)
{
    if ((r & 0xFF) == SQLITE_ERROR)
        return mn__err(MN_INVALID, "keyword search: %s", sqlite3_errmsg(s->db));
    return mn__sqlite_fail(s, r, "keyword search");
}

/* One integer from a cached statement with text ?1 (0 when there is no row). */
static mn_status count_one(struct sqlite_store *s, const char *sql, const char *arg, int64_t *out)
{
    return mn__sqlite_int(s, sql, "keyword index", out, NULL, ARGS(ARG_TEXT(arg)));
}

/* Runs a prepared ranked statement (columns rowid, bm25) into out. */
static mn_status fts_collect(struct sqlite_store *s, sqlite3_stmt *st, struct scored_list *out)
{
    mn_status rc = MN_OK;
    int r;
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
        rc = mn__sqlite_scored_push(out, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1));
    if (!rc && r != SQLITE_DONE)
        rc = fts_step_fail(s, r);
    return rc;
}

/*
 * Bounded top-k (docs/search.md, "Keyword search at scale"). FTS5's bm25 costs two things that
 * grow with the store: its idf counts every row of each phrase (a scan of the phrase's doclist at
 * every query), and it scores and sorts every matching row. Both are avoided here without
 * changing a score:
 *  - mnemo_bm25(messages_fts, skip, n…) is bm25 computed as fts5_aux.c computes it (the same
 *    constants, operations and order), over the phrases skip… of the expression, with each
 *    phrase's document count given instead of counted. The counts of phrases that match many
 *    rows are kept per handle (struct mn_sqlite_df): a count holds for the index up to a message
 *    id, and is brought forward by counting the phrase's rows past it (rows enter the index in
 *    id order, past the watermark); applying any log row (a delete, an edit, an import below the
 *    watermark) bumps meta fts.deletes, which drops the kept counts.
 *  - MaxScore: a phrase adds less than 2.2·idf to a row's score (k1 + 1 = 2.2, tf/(tf + x) < 1),
 *    so a row that matches only the commonest phrases scores below the sum B of their bounds.
 *    The rows matching one of the rarer phrases are ranked with the whole query's score
 *    (`(rarer) AND (whole query)`, mnemo_bm25 skipping the first group); when the L-th of them
 *    scores above B no other row can enter the top L, else the next rarer phrase joins the
 *    group, and at the end the whole query is ranked as before.
 */
#define DF_CACHE 512 /* phrase counts kept per handle */
#define TOPS_KEEP 256 /* phrases whose best rows are kept per handle (fts_tops.c) */
#define TOPS_WANT_MAX 1024 /* past this many rows asked for, the best rows do not reach */

/* The row's size in tokens from its messages_fts_docsize record (one column: one SQLite varint,
 * which FTS5's xColumnSize reads too); 0 when there is none (NULL or malformed). */
int mn__sqlite_docsize(sqlite3_value *v, int *ntok)
{
    const unsigned char *p = sqlite3_value_blob(v);
    int len = sqlite3_value_bytes(v);
    uint64_t x = 0;
    for (int i = 0; p && i < len && i < 9; i++) {
        if (i == 8) {
            x = (x << 8) | p[i];
            break;
        }
        x = (x << 7) | (p[i] & 0x7f);
        if (!(p[i] & 0x80)) {
            if (x > INT32_MAX)
                return 0;
            *ntok = (int)x;
            return 1;
        }
    }
    return 0;
}

/* (fts_rank.h: no fused multiply-add, as libsqlite3's bm25) */
static void bm25_given(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                       sqlite3_value **val)
{
    int nphrase = api->xPhraseCount(fts), skip = nval > 0 ? sqlite3_value_int(val[0]) : -1, m = nval - 2;
    if (skip < 0 || m < 1 || m > BM25_MAX_PHRASES || skip + m != nphrase) {
        sqlite3_result_error(ctx, "mnemo_bm25: arguments do not fit the expression", -1);
        return;
    }
    sqlite3_int64 nrow = 0, ntoken = 0;
    int rc = api->xRowCount(fts, &nrow);
    if (rc == SQLITE_OK)
        rc = api->xColumnTotalSize(fts, -1, &ntoken);
    double avgdl = (double)ntoken / (double)nrow, idf[BM25_MAX_PHRASES], freq[BM25_MAX_PHRASES];
    for (int i = 0; i < m; i++) {
        idf[i] = mn_bm25_idf(nrow, sqlite3_value_int64(val[2 + i]));
        freq[i] = 0;
    }
    int ninst = 0;
    if (rc == SQLITE_OK)
        rc = api->xInstCount(fts, &ninst);
    for (int i = 0; rc == SQLITE_OK && i < ninst; i++) {
        int ip, ic, io;
        rc = api->xInst(fts, i, &ip, &ic, &io);
        if (rc == SQLITE_OK && ip >= skip)
            freq[ip - skip] += 1.0; /* bm25() without weights: each column weighs 1.0 */
    }
    double d = 0.0, score = 0.0;
    if (rc == SQLITE_OK) {
        int ntok = 0;
        if (!mn__sqlite_docsize(val[1], &ntok))
            rc = api->xColumnSize(fts, -1, &ntok);
        d = (double)ntok;
    }
    for (int i = 0; rc == SQLITE_OK && i < m; i++)
        score += mn_bm25_term(idf[i], freq[i], d, avgdl);
    if (rc == SQLITE_OK)
        sqlite3_result_double(ctx, -1.0 * score);
    else
        sqlite3_result_error_code(ctx, rc);
}

/* mnemo_tfd(messages_fts, d.sz) for a one-phrase query: the phrase's count in the row times 2³²
 * plus the row's size in tokens (fts_tops.c). */
static void tfd(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval, sqlite3_value **val)
{
    int ninst = 0, ntok = 0;
    int rc = nval == 1 && api->xPhraseCount(fts) == 1 ? api->xInstCount(fts, &ninst) : SQLITE_MISUSE;
    if (rc == SQLITE_OK && !mn__sqlite_docsize(val[0], &ntok))
        rc = api->xColumnSize(fts, -1, &ntok);
    if (rc == SQLITE_OK)
        sqlite3_result_int64(ctx, (sqlite3_int64)ninst * 4294967296 + (ntok & 0xffffffff));
    else
        sqlite3_result_error_code(ctx, rc);
}

/* mnemo_tf(messages_fts) for a one-phrase query: the phrase's count in the row (fts_dense.c). */
static void tf_only(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                    sqlite3_value **val)
{
    (void)val;
    int ninst = 0;
    int rc = nval == 0 && api->xPhraseCount(fts) == 1 ? api->xInstCount(fts, &ninst) : SQLITE_MISUSE;
    if (rc == SQLITE_OK)
        sqlite3_result_int(ctx, ninst);
    else
        sqlite3_result_error_code(ctx, rc);
}

/* mnemo_fts_total(messages_fts, 0 | 1): the rows of the index, or their tokens, as bm25 reads them. */
static void fts_total(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nval,
                      sqlite3_value **val)
{
    sqlite3_int64 n = 0;
    int rc = nval != 1 ? SQLITE_MISUSE
             : sqlite3_value_int(val[0]) ? api->xColumnTotalSize(fts, -1, &n)
                                         : api->xRowCount(fts, &n);
    if (rc == SQLITE_OK)
        sqlite3_result_int64(ctx, n);
    else
        sqlite3_result_error_code(ctx, rc);
}

void mn__sqlite_fts_register(struct sqlite_store *s)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st = NULL;
    s->fts_given = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT fts5(?1)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
        sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (api && api->iVersion >= 2)
        s->fts_given = api->xCreateFunction(api, "mnemo_bm25", NULL, bm25_given, NULL) == SQLITE_OK &&
                       api->xCreateFunction(api, "mnemo_tfd", NULL, tfd, NULL) == SQLITE_OK &&
                       api->xCreateFunction(api, "mnemo_tf", NULL, tf_only, NULL) == SQLITE_OK &&
                       api->xCreateFunction(api, "mnemo_fts_total", NULL, fts_total, NULL) == SQLITE_OK &&
                       mn__sqlite_idset_register(s->db) == SQLITE_OK;
}

void mn__sqlite_fts_release(struct sqlite_store *s)
{
    for (size_t i = 0; i < s->n_df; i++) {
        free(s->df[i].phrase);
        mn__sqlite_tops_free(s->df[i].tops);
        mn__sqlite_dense_free(s->df[i].dense);
    }
    free(s->df);
    s->df = NULL;
    s->n_df = 0;
    mn__sqlite_counts_free(s);
    mn__sqlite_sizes_free(&s->sizes);
}

/* The phrases of a query as mn__fts_query writes it: "a" OR "b" OR …; 0 when it is not so. */
static int phrases_parse(const char *match, struct phrases *p)
{
    const char *c = match;
    p->m = 0;
    while (*c == '"' && p->m < BM25_MAX_PHRASES) {
        const char *end = strchr(c + 1, '"');
        if (!end)
            return 0;
        p->at[p->m] = c;
        p->len[p->m++] = (size_t)(end + 1 - c);
        c = end + 1;
        if (!*c)
            return 1;
        if (strncmp(c, " OR ", 4) != 0)
            return 0;
        c += 4;
    }
    return 0;
}

static const char SQL_DF_GEN[] = "SELECT coalesce((SELECT CAST(value AS INTEGER) FROM fts_meta WHERE key = 'fts.deletes'), 0)";
/* The index holds the messages up to its watermark; -1 while a change below the watermark waits
 * in the log (a delete, an edit, an import: the index is about to change below it, so nothing is
 * kept). */
static const char SQL_DF_UPTO[] =
    "SELECT CASE WHEN EXISTS (SELECT 1 FROM fts_log_pending WHERE message_id <= w) THEN -1 ELSE w END FROM"
    " (SELECT coalesce((SELECT CAST(value AS INTEGER) FROM fts_meta WHERE key = 'fts.indexed_upto'), 0) AS w)";
static const char SQL_DF_COUNT[] = "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?1 AND rowid > ?2";

static mn_status df_count(struct sqlite_store *s, const char *phrase, size_t len, int64_t after, int64_t *n)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_DF_COUNT, &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, phrase, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after);
    int r = sqlite3_step(st);
    *n = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    mn__sqlite_done(st);
    return r == SQLITE_ROW ? MN_OK : fts_step_fail(s, r);
}

/* The kept count to drop for another: the phrase with fewest rows, the cheapest to count again
 * (a long message's many rare words, searched once, would otherwise push out the common ones
 * every query has, and with them their rows held in memory: a context's retrieval at 1M spent
 * 60-350 ms reloading them). */
static size_t df_victim(const struct sqlite_store *s)
{
    size_t v = 0;
    for (size_t j = 1; j < s->n_df; j++)
        if (s->df[j].n < s->df[v].n)
            v = j;
    return v;
}

static struct mn_sqlite_df *df_find(struct sqlite_store *s, const char *phrase, size_t len)
{
    for (size_t j = 0; j < s->n_df; j++)
        if (s->df[j].len == len && memcmp(s->df[j].phrase, phrase, len) == 0)
            return &s->df[j];
    return NULL;
}

/* The document count of each phrase for the index as this read transaction sees it. */
static mn_status df_get(struct sqlite_store *s, struct phrases *p, int64_t *upto)
{
    int64_t gen = 0;
    mn_status rc = count_one(s, SQL_DF_GEN, NULL, &gen);
    if (!rc)
        rc = count_one(s, SQL_DF_UPTO, NULL, upto);
    if (rc)
        return rc;
    if (gen != s->df_gen) {
        mn__sqlite_fts_release(s);
        s->df_gen = gen;
    }
    for (size_t j = 0; j < s->n_df; j++)
        if (*upto < 0 || s->df[j].upto > *upto) { /* message ids reused after a delete another handle made */
            mn__sqlite_fts_release(s);
            break;
        }
    /* each phrase's kept count (df for the common ones, counts for the rarer), the id it is kept
     * up to, and the rows past it from the text of the messages indexed last when the connection
     * holds it (a statement each costs ~45 µs at a million messages) */
    int64_t kept[BM25_MAX_PHRASES], after[BM25_MAX_PHRASES], ahead[BM25_MAX_PHRASES] = {0};
    for (int i = 0; i < p->m; i++) {
        const struct mn_sqlite_df *e = df_find(s, p->at[i], p->len[i]);
        const struct mn_sqlite_count *c = e ? NULL : mn__sqlite_count_find(s, p->at[i], p->len[i]);
        kept[i] = after[i] = e ? e->upto : c ? c->upto : -1;
        if (kept[i] > *upto) { /* (as above) */
            mn__sqlite_fts_release(s);
            for (int j = 0; j <= i; j++)
                kept[j] = after[j] = -1;
        }
    }
    if (*upto > 0)
        rc = mn__sqlite_recent_counts(s, p, *upto, gen, after, ahead);
    for (int i = 0; i < p->m && !rc; i++) {
        struct mn_sqlite_df *e = df_find(s, p->at[i], p->len[i]);
        struct mn_sqlite_count *c = e ? NULL : mn__sqlite_count_find(s, p->at[i], p->len[i]);
        int64_t more = 0, from = e ? e->upto : c ? c->upto : -1;
        if (from >= 0 && from == kept[i] && after[i] < 0)
            more = ahead[i];
        else if (from < *upto) /* (kept up to the watermark: no row to add) */
            rc = df_count(s, p->at[i], p->len[i], from, &more);
        if (rc)
            break;
        if (e) {
            e->n += more;
            e->upto = *upto;
            p->n[i] = e->n;
            continue;
        }
        p->n[i] = more + (c ? c->n : 0);
        if (*upto < 0)
            continue;
        if (c) /* (common enough now, it is kept with the common ones too, which are looked up first) */
            c->n = p->n[i], c->upto = *upto;
        else if (p->n[i] < mn_sqlite_fts_tuning.df_keep)
            mn__sqlite_count_put(s, p->at[i], p->len[i], p->n[i], *upto);
        if (p->n[i] < mn_sqlite_fts_tuning.df_keep)
            continue;
        more = p->n[i];
        if (!s->df && !(s->df = calloc(DF_CACHE, sizeof *s->df)))
            continue; /* nothing kept: counted again next time */
        char *copy = malloc(p->len[i] + 1);
        if (!copy)
            continue;
        memcpy(copy, p->at[i], p->len[i]);
        copy[p->len[i]] = '\0';
        size_t slot = s->n_df;
        if (slot < DF_CACHE)
            s->n_df++;
        else { /* the count of the one let go stays with the rarer ones */
            slot = df_victim(s);
            mn__sqlite_count_put(s, s->df[slot].phrase, s->df[slot].len, s->df[slot].n, s->df[slot].upto);
            free(s->df[slot].phrase);
            mn__sqlite_tops_free(s->df[slot].tops);
            mn__sqlite_dense_free(s->df[slot].dense);
        }
        s->df[slot] = (struct mn_sqlite_df){copy, p->len[i], more, *upto, NULL, NULL, 0};
    }
    return rc;
}

/* fts_rank.h: the row's docsize record d.sz is read beside the match rather than by a statement
 * per row, as xColumnSize does. */
mn_status mn__sqlite_given_sql(struct mn_buf *b, int m)
{
    mn_status rc = mn__buf_adds(b, "mnemo_bm25(messages_fts, ?3, d.sz");
    for (int i = 0; i < m && !rc; i++) {
        char arg[16];
        snprintf(arg, sizeof arg, ", ?%d", 16 + i);
        rc = mn__buf_adds(b, arg);
    }
    return rc ? rc : mn__buf_adds(b, ")");
}

void mn__sqlite_given_bind(sqlite3_stmt *st, const struct phrases *p, int skip)
{
    sqlite3_bind_int(st, 3, skip);
    for (int i = 0; i < p->m; i++)
        sqlite3_bind_int64(st, 16 + i, p->n[i]);
}

static int scored_cmp(const void *a, const void *b)
{
    const struct scored *x = a, *y = b;
    return mn_sqlite_ranks_before(x->score, x->id, y) ? -1 : mn_sqlite_ranks_before(y->score, y->id, x);
}

/* The rows of a set that match `group` are few when its phrases are rare, but ranking them with
 * the whole query, as one statement, makes FTS5 seek every other phrase's postings to each row of
 * the group in the whole store (1M store, a session of 1,000 rows, a phrase of 18,310 rows and one
 * of 375,608: 4.2 ms, 0.23 µs a row of the group). So: the group's rows in the set first (its
 * postings alone, 1.0 ms), then each of them scored with the whole query by rowid (60-70 µs a
 * row: FTS5 looks the phrases up in every segment), when there are at most set_scored of them
 * (*done). Worth it while the set is under about 1/400 of the store (set_share, fts_best). */
static mn_status set_group_ranked(struct sqlite_store *s, const char *group, const char *match,
                                  const struct phrases *p, struct mn_sqlite_idset *set, size_t want,
                                  struct scored_list *out, int *done)
{
    struct mn_buf sql = MN_BUF_INIT;
    sqlite3_stmt *st = NULL;
    struct scored_list cand = {0};
    *done = 0;
    mn_status rc = prepare_dynamic(s, "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?1"
                                      " AND mnemo_in(?6, rowid) LIMIT ?2", &st);
    if (!rc) {
        sqlite3_bind_text(st, 1, group, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)mn_sqlite_fts_tuning.set_scored + 1);
        mn__sqlite_idset_bind(st, 6, set);
        int r;
        while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
            rc = mn__sqlite_scored_push(&cand, sqlite3_column_int64(st, 0), 0);
        if (!rc && r != SQLITE_DONE)
            rc = fts_step_fail(s, r);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc || cand.n > mn_sqlite_fts_tuning.set_scored) {
        free(cand.r);
        return rc;
    }
    if (!(rc = mn__buf_adds(&sql, "SELECT ")) && !(rc = mn__sqlite_given_sql(&sql, p->m)) &&
        !(rc = mn__buf_adds(&sql, FROM_SIZED " WHERE messages_fts MATCH ?1 AND messages_fts.rowid = ?4")))
        rc = prepare_dynamic(s, sql.data, &st);
    if (!rc) {
        sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
        mn__sqlite_given_bind(st, p, 0);
    }
    for (size_t i = 0; !rc && i < cand.n; i++) {
        sqlite3_bind_int64(st, 4, cand.r[i].id);
        int r = sqlite3_step(st);
        if (r == SQLITE_ROW)
            cand.r[i].score = sqlite3_column_double(st, 0);
        else
            rc = fts_step_fail(s, r == SQLITE_DONE ? SQLITE_CORRUPT : r); /* it matched the group */
        sqlite3_reset(st);
    }
    if (!rc) {
        if (cand.n > 1)
            qsort(cand.r, cand.n, sizeof *cand.r, scored_cmp);
        if (cand.n > want)
            cand.n = want;
        free(out->r);
        *out = cand;
        cand = (struct scored_list){0};
        *done = 1;
    }
    free(cand.r);
    sqlite3_finalize(st);
    mn__buf_release(&sql);
    return rc;
}

/* The best `want` rows of `match` among those matching `group` (NULL: all) and, with a set, in
 * it (a session's or namespace's ids, see below), scored over the whole of `match` (`skip`
 * phrases of group first), best first, into out (emptied first). */
static mn_status fts_ranked(struct sqlite_store *s, const char *group, const char *match, const struct phrases *p,
                            int skip, struct mn_sqlite_idset *set, size_t want, struct scored_list *out)
{
    if (set && set->by_row && group) {
        int done = 0;
        mn_status rc = set_group_ranked(s, group, match, p, set, want, out, &done);
        if (rc || done)
            return rc;
    }
    struct mn_buf head = MN_BUF_INIT, expr = MN_BUF_INIT;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__buf_adds(&head, "SELECT messages_fts.rowid, ");
    if (!rc)
        rc = mn__sqlite_given_sql(&head, p->m);
    if (!rc)
        rc = mn__buf_adds(&head, FROM_SIZED " WHERE messages_fts MATCH ?1");
    if (!rc && set)
        rc = mn__buf_adds(&head, set->bounded ? " AND messages_fts.rowid BETWEEN ?4 AND ?5 AND mnemo_in(?6, messages_fts.rowid)"
                                             : " AND mnemo_in(?6, messages_fts.rowid)");
    if (!rc && group && !(rc = mn__buf_adds(&expr, "(")) && !(rc = mn__buf_adds(&expr, group)) &&
        !(rc = mn__buf_adds(&expr, ") AND (")) && !(rc = mn__buf_adds(&expr, match)))
        rc = mn__buf_adds(&expr, ")");
    if (!rc)
        rc = mn__buf_adds(&head, " ORDER BY 2, messages_fts.rowid LIMIT ?2");
    if (!rc)
        rc = prepare_dynamic(s, head.data, &st);
    if (!rc) {
        sqlite3_bind_text(st, 1, group ? expr.data : match, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)want);
        mn__sqlite_given_bind(st, p, skip);
        if (set && set->bounded) {
            sqlite3_bind_int64(st, 4, mn__sqlite_idset_lo(set));
            sqlite3_bind_int64(st, 5, mn__sqlite_idset_hi(set));
        }
        if (set)
            mn__sqlite_idset_bind(st, 6, set);
        out->n = 0;
        rc = fts_collect(s, st, out);
    }
    sqlite3_finalize(st);
    mn__buf_release(&head);
    mn__buf_release(&expr);
    return rc;
}

/* MaxScore's steps below up to the group of the rare phrases ord[0..e0-1], which is always
 * ranked: its best `want` rows go to seeds, or to out with *done when the want-th of them scores
 * above bound[e] (what the other phrases can add). */
static mn_status rare_seeds(struct sqlite_store *s, const char *match, const struct phrases *p, const int *ord, int e0,
                            const double *bound, size_t want, struct scored_list *seeds, struct scored_list *out,
                            int *done)
{
    struct mn_buf group = MN_BUF_INIT;
    mn_status rc = MN_OK;
    int64_t rows = 0;
    for (int e = 1; e <= e0 && !rc && !*done; e++) {
        rows += p->n[ord[e - 1]];
        if (!(rc = e > 1 ? mn__buf_adds(&group, " OR ") : MN_OK))
            rc = mn__buf_add(&group, p->at[ord[e - 1]], p->len[ord[e - 1]]);
        if (rc || (rows < (int64_t)want && e < e0))
            continue;
        if (!(rc = fts_ranked(s, group.data, match, p, e, NULL, want, seeds)) && seeds->n == want &&
            -seeds->r[want - 1].score > bound[e]) {
            free(out->r);
            *out = *seeds;
            *seeds = (struct scored_list){0};
            *done = 1;
        }
    }
    mn__buf_release(&group);
    return rc;
}

/* The best `want` rows that have both common phrases c[0] and c[1], added to seeds. */
static mn_status both_seeds(struct sqlite_store *s, const char *match, const struct phrases *p, const int *c,
                            size_t want, struct scored_list *seeds)
{
    struct mn_buf group = MN_BUF_INIT;
    struct scored_list both = {0};
    mn_status rc = mn__buf_add(&group, p->at[c[0]], p->len[c[0]]);
    if (!rc && !(rc = mn__buf_adds(&group, " AND ")) && !(rc = mn__buf_add(&group, p->at[c[1]], p->len[c[1]])))
        rc = fts_ranked(s, group.data, match, p, 2, NULL, want, &both);
    for (size_t i = 0; !rc && i < both.n; i++)
        rc = mn__sqlite_scored_push(seeds, both.r[i].id, both.r[i].score);
    free(both.r);
    mn__buf_release(&group);
    return rc;
}

/* The kept counts of the common phrases c[0..nc-1] (NULL when one is not kept for this index),
 * their best rows brought forward when `build`; *usable = 0 when a phrase's rows cannot be
 * used (a count of the phrase in a row past fts_tops.c's bound). */
static mn_status commons_tops(struct sqlite_store *s, const struct phrases *p, const int *c, int nc, int64_t upto,
                              int build, struct mn_sqlite_tops **tops, int *usable)
{
    *usable = 1;
    mn_status rc = MN_OK;
    for (int j = 0; *usable && !rc && j < nc; j++) {
        struct mn_sqlite_df *e = df_find(s, p->at[c[j]], p->len[c[j]]);
        if (!e || e->upto != upto || mn__sqlite_tops_broken(e->tops))
            *usable = 0;
        else if (build && !(rc = mn__sqlite_tops_update(s, &e->tops, e->phrase, p->len[c[j]], upto)))
            *usable = !mn__sqlite_tops_broken(e->tops);
        if (e)
            tops[j] = e->tops;
    }
    return rc;
}

/* At most TOPS_KEEP phrases keep their best rows (tens of KB each): before `nc` more are built,
 * the lists of others go, oldest kept first (round robin over the count slots). */
static void tops_make_room(struct sqlite_store *s, int nc)
{
    size_t kept = 0;
    for (size_t j = 0; j < s->n_df; j++)
        kept += s->df[j].tops != NULL;
    for (size_t tried = 0; kept + (size_t)nc > TOPS_KEEP && tried < s->n_df; tried++) {
        struct mn_sqlite_df *e = &s->df[s->next_tops++ % s->n_df];
        if (e->tops) {
            mn__sqlite_tops_free(e->tops);
            e->tops = NULL;
            kept--;
        }
    }
}

/* Without a filter: the rarest phrases, as many as have seed_max rows together, as one group
 * ranked first (MaxScore's steps below: done when the want-th scores above what the others can
 * add); when one or two phrases are left (each with its count kept), the rows that have both
 * (when, were the two independent, at most 2·seed_max rows would); then the phrases left from
 * their best rows (fts_tops.c), with the group's and both's best rows as seeds. Three phrases
 * left or more: a row missing one of them can still score near the top, and their best rows
 * seldom reach past that (measured). *done = 0: the caller goes on as before. */
static mn_status fts_commons(struct sqlite_store *s, const char *match, const struct phrases *p, const int *ord,
                             const double *bound, int64_t upto, size_t want, struct scored_list *out, int *done)
{
    *done = 0;
    int64_t seed_max = mn_sqlite_fts_tuning.seed_max, rows = 0;
    if (seed_max < 0 || upto <= 0 || want > TOPS_WANT_MAX || p->m < 1)
        return MN_OK;
    int e0 = 0;
    while (e0 < p->m - 1 && rows + p->n[ord[e0]] <= seed_max)
        rows += p->n[ord[e0++]];
    int nc = p->m - e0, usable = 0;
    if (nc > 2 || (nc == 2 && (double)p->n[ord[e0]] / (double)upto * (double)p->n[ord[e0 + 1]] > 2.0 * (double)seed_max))
        return MN_OK;
    struct mn_sqlite_tops *tops[2];
    mn_status rc = commons_tops(s, p, ord + e0, nc, upto, 0, tops, &usable);
    if (rc || !usable)
        return rc;
    struct scored_list seeds = {0};
    rc = rare_seeds(s, match, p, ord, e0, bound, want, &seeds, out, done);
    if (!rc && !*done) {
        tops_make_room(s, nc);
        rc = commons_tops(s, p, ord + e0, nc, upto, 1, tops, &usable);
    }
    if (!rc && !*done && usable && nc == 2)
        rc = both_seeds(s, match, p, ord + e0, want, &seeds);
    if (!rc && !*done && usable)
        rc = mn__sqlite_tops_rank(s, match, p, ord + e0, tops, nc, &seeds, nc > 1, want, out, done);
    free(seeds.r);
    return rc;
}

/* The query's very common phrases held in memory (fts_dense.c) into dense[] (NULL for the
 * others), with *held, when it has one (a phrase in as many rows as 1/dense_div of the ids
 * indexed, its count kept) and asks for at most TOPS_WANT_MAX rows. Phrases are held from the
 * connection's second keyword search: its first read of every row's size (0.1-0.2 s at a
 * million messages) would make a one-shot `mnemo search` slower than the plans below. A
 * connection holds dense_bytes + dense_row_bytes per id at most (64 MB + 16 bytes: 80 MB at a
 * million messages, where ~30 phrases and the sizes take ~25 MB; each of a handle's readers its
 * own): past that, the phrases used longest ago go first, none this query uses; when it still
 * would not fit (or memory runs out) the plans below answer. */
static mn_status dense_held(struct sqlite_store *s, const struct phrases *p, int64_t upto, size_t want,
                            struct mn_sqlite_dense **dense, int *held, int *balanced)
{
    int64_t div = mn_sqlite_fts_tuning.dense_div;
    struct mn_sqlite_df *e[BM25_MAX_PHRASES];
    size_t need = 0, kept = 0, mine = 0;
    int any = 0;
    *held = *balanced = 0;
    if (div <= 0 || upto <= 0 || want > TOPS_WANT_MAX || s->fts_searches < 2)
        return MN_OK;
    for (int i = 0; i < p->m; i++) {
        dense[i] = NULL;
        e[i] = p->n[i] >= upto / div ? df_find(s, p->at[i], p->len[i]) : NULL;
        if (p->n[i] >= upto / div && (!e[i] || e[i]->upto != upto))
            return MN_OK; /* its count is not kept: the plans below */
        any |= e[i] != NULL;
        if (e[i] && !e[i]->dense)
            need += mn__sqlite_dense_estimate(upto, p->n[i]);
        else if (e[i])
            mine += mn__sqlite_dense_bytes(e[i]->dense);
    }
    /* The phrases not held are read in full here, ~0.15 µs a row, against MaxScore's seeks of
     * the others' postings to every row of the rarest, ~1 µs, which finishes early when the
     * rarest has few rows: *balanced when none of them is much rarer than the rest. None held:
     * still ranked here when balanced and their rows together are few. */
    int64_t rows = 0, least = 0;
    for (int i = 0; i < p->m; i++)
        if (!e[i]) {
            rows += p->n[i];
            least = p->n[i] > 0 && (!least || p->n[i] < least) ? p->n[i] : least;
        }
    *balanced = least * 8 >= rows;
    if (!any && (mn_sqlite_fts_tuning.rows_div <= 0 || rows == 0 || rows > upto / mn_sqlite_fts_tuning.rows_div ||
                 !*balanced))
        return MN_OK;
    for (size_t j = 0; j < s->n_df; j++)
        kept += mn__sqlite_dense_bytes(s->df[j].dense);
    need += mn__sqlite_sizes_bytes(&s->sizes, upto);
    size_t per_id = mn_sqlite_fts_tuning.dense_row_bytes, budget = mn_sqlite_fts_tuning.dense_bytes;
    budget = per_id && (size_t)upto > (SIZE_MAX - budget) / per_id ? SIZE_MAX : budget + per_id * (size_t)upto;
    if (mine + need > budget) /* its own phrases would not fit: the others stay */
        return MN_OK;
    while (kept + need > budget) {
        struct mn_sqlite_df *old = NULL;
        for (size_t j = 0; j < s->n_df; j++) {
            int used = 0;
            for (int i = 0; i < p->m && !used; i++)
                used = e[i] == &s->df[j];
            if (!used && s->df[j].dense && (!old || s->df[j].dense_used < old->dense_used))
                old = &s->df[j];
        }
        if (!old)
            return MN_OK; /* the query's own phrases do not fit */
        kept -= mn__sqlite_dense_bytes(old->dense);
        mn__sqlite_dense_free(old->dense);
        old->dense = NULL;
    }
    mn_status rc = mn__sqlite_sizes_update(s, &s->sizes, upto);
    for (int i = 0; i < p->m && !rc; i++)
        if (e[i] && !(rc = mn__sqlite_dense_update(s, &e[i]->dense, p->at[i], p->len[i], upto))) {
            dense[i] = e[i]->dense;
            e[i]->dense_used = s->fts_searches;
        }
    *held = !rc;
    return rc == MN_NOMEM ? MN_OK : rc; /* out of memory: the plans below, which need none */
}

/* MaxScore's steps (see above) over the phrases p, rarest first in ord, bound[e] what the phrases
 * ord[e…] can add to a row; with a set, among its rows only, `share` the set's share of the
 * store. A step whose rows, in that share, would be fewer than `want` is not tried (it could not
 * finish); the last step ranks every match. */
static mn_status fts_maxscore(struct sqlite_store *s, const char *match, const struct phrases *p, const int *ord,
                              const double *bound, int64_t upto, struct mn_sqlite_idset *set, double share,
                              size_t want, struct scored_list *out)
{
    struct mn_buf group = MN_BUF_INIT;
    mn_status rc = MN_OK;
    int64_t rows = 0, div = mn_sqlite_fts_tuning.group_div > 0 ? mn_sqlite_fts_tuning.group_div : 1;
    for (int e = 1; upto > 0 && e < p->m && !rc; e++) {
        rows += p->n[ord[e - 1]];
        if (rows > upto / div) /* about as many candidates as ranking the whole */
            break;
        if (e > 1)
            rc = mn__buf_adds(&group, " OR ");
        if (!rc)
            rc = mn__buf_add(&group, p->at[ord[e - 1]], p->len[ord[e - 1]]);
        if (!rc && (double)rows * share >= (double)want)
            rc = fts_ranked(s, group.data, match, p, e, set, want, out);
        else
            continue;
        if (!rc && out->n == want && -out->r[want - 1].score > bound[e]) {
            mn__buf_release(&group);
            return MN_OK;
        }
    }
    /* Every phrase common (each alone matches too many rows): the rows that match all of them
     * first. A row missing phrase i scores below bound[0] - (the bound of i), so below bound[0]
     * less the smallest bound. Tried when, were the phrases independent, at most 1/group_div of
     * the store would match all of them. */
    double all = 1, least = bound[0];
    for (int i = 0; i < p->m; i++) {
        all *= upto > 0 ? (double)p->n[i] / (double)upto : 1;
        double one = bound[i] - bound[i + 1];
        least = one < least ? one : least;
    }
    mn__buf_reset(&group);
    if (!rc && upto > 0 && p->m > 1 && all <= 1.0 / (double)div && all * (double)upto * share >= (double)want) {
        for (int i = 0; i < p->m && !rc; i++)
            if (!(rc = i ? mn__buf_adds(&group, " AND ") : MN_OK))
                rc = mn__buf_add(&group, p->at[i], p->len[i]);
        if (!rc)
            rc = fts_ranked(s, group.data, match, p, p->m, set, want, out);
        if (!rc && out->n == want && -out->r[want - 1].score > bound[0] - least) {
            mn__buf_release(&group);
            return MN_OK;
        }
    }
    mn__buf_release(&group);
    return rc ? rc : fts_ranked(s, NULL, match, p, 0, set, want, out);
}

/* The ids that pass f (a session or namespace, and any other condition), for mnemo_in. */
static mn_status set_read(struct sqlite_store *s, const mn_search_filter *f, struct mn_sqlite_idset *set)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_prepare_filtered(s,
                                    "SELECT m.id FROM messages m JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid") " WHERE 1",
                                    f, NULL, &st);
    if (!rc)
        rc = mn__sqlite_idset_read(s, st, set);
    sqlite3_finalize(st);
    return rc;
}

/* Whether a search in a session (of `part` messages) is counted from its text (fts_set.c): when
 * the rows of the phrases not held in memory (nor common enough to be), read at ~0.1 µs each,
 * cost more than splitting into tokens what the connection lacks of the session (~5 µs a
 * message; a sixteenth of the session at least, for ranking it) — *sid then names the session. */
static mn_status set_scanned(struct sqlite_store *s, const struct phrases *p, const mn_search_filter *f, int64_t part,
                             int64_t upto, int64_t *sid)
{
    int64_t rows = 0, k = mn_sqlite_fts_tuning.set_scan, least = part / 16 > 0 ? part / 16 : 1;
    *sid = 0;
    if (k <= 0 || !f->session_id || upto <= 0 || part < 0 || !s->fts_given)
        return MN_OK;
    /* the phrases held, or to be (dense_held: from the handle's second search on) */
    int64_t div = s->fts_searches >= 2 ? mn_sqlite_fts_tuning.dense_div : 0;
    for (int i = 0; i < p->m; i++)
        rows += div > 0 && p->n[i] >= upto / div ? 0 : p->n[i];
    if (rows <= k * least) /* not worth even the session's own lookup */
        return MN_OK;
    int64_t id = 0;
    mn_status rc = mn__sqlite_set_sid(s, f->session_id, &id);
    if (rc || id <= 0)
        return rc;
    int64_t missing = mn__sqlite_set_missing(s, id, upto, s->df_gen, part);
    if (rows > k * (missing > least ? missing : least))
        *sid = id;
    return MN_OK;
}

/* The best `want` rows of p among those that pass f, in session sid, counted from the session's
 * text (fts_set.c). */
static mn_status set_scan(struct sqlite_store *s, const struct phrases *p, const mn_search_filter *f, int64_t sid,
                          int64_t upto, size_t want, struct scored_list *out)
{
    struct mn_sqlite_dense *none[BM25_MAX_PHRASES] = {0};
    struct mn_sqlite_rare rows = {.from_set = 1};
    struct mn_sqlite_idset ids = {0};
    int done = 0;
    /* The session alone needs no list of ids: the rows held are the session's messages (they
     * never change sessions, and a delete applied drops them, fts_set.c). */
    int session_only = !f->ns && !filter_narrows(f);
    mn_status rc = session_only ? MN_OK : set_read(s, f, &ids);
    out->n = 0;
    if (!rc && (session_only || ids.n) && !(rc = mn__sqlite_set_cover(s, sid, upto, s->df_gen)) &&
        !(rc = mn__sqlite_dense_rank(s, p, none, &s->sizes, session_only ? NULL : &ids, &rows, want, 1, out, &done)))
        __atomic_fetch_add(&mn_sqlite_fts_set_scanned, 1, __ATOMIC_RELAXED);
    mn__sqlite_rare_free(&rows);
    mn__sqlite_idset_free(&ids);
    return rc;
}

/* The best `want` rows of `match` (with `set`, of those that pass f: `part` messages at most),
 * best first, into out: the best rows of common phrases, else MaxScore over mnemo_bm25 (see
 * above). 0 in *done when mnemo_bm25 is not there or the query is not mn__fts_query's: the
 * caller ranks with bm25. */
static mn_status fts_best(struct sqlite_store *s, const char *match, const mn_search_filter *f, int set,
                          int64_t part, size_t want, struct scored_list *out, int *done)
{
    struct phrases p;
    int64_t upto = 0;
    *done = s->fts_given && phrases_parse(match, &p);
    if (!*done)
        return MN_OK;
    mn_status rc = df_get(s, &p, &upto);
    if (rc)
        return rc;
    /* the phrases, rarest first; bound[e]: what the phrases ord[e…] can add to a row, at most
     * (idf with N = upto ≥ the indexed rows: idf grows with N) */
    int ord[BM25_MAX_PHRASES];
    double bound[BM25_MAX_PHRASES + 1];
    for (int i = 0; i < p.m; i++) {
        int j = i;
        for (; j > 0 && p.n[ord[j - 1]] > p.n[i]; j--)
            ord[j] = ord[j - 1];
        ord[j] = i;
    }
    bound[p.m] = 0;
    for (int e = p.m - 1; e >= 0; e--) {
        int64_t n = p.n[ord[e]];
        double idf = log(((double)upto - (double)n + 0.5) / ((double)n + 0.5));
        bound[e] = bound[e + 1] + 2.2 * (idf > 1e-6 ? idf : 1e-6) * (1 + 1e-9);
    }
    struct mn_sqlite_dense *dense[BM25_MAX_PHRASES] = {0};
    struct mn_sqlite_rare rare = {0};
    int64_t sid = 0;
    if (set && ((rc = set_scanned(s, &p, f, part, upto, &sid)) || sid > 0))
        return rc ? rc : set_scan(s, &p, f, sid, upto, want, out);
    int held = 0, balanced = 0;
    if ((rc = dense_held(s, &p, upto, want, dense, &held, &balanced)))
        return rc;
    if (!set) {
        /* the rows of the rarer phrases first (unless MaxScore would finish with a much rarer
         * one), then the common phrases' best rows, and only then every row of the very common
         * ones */
        if (!(held && balanced &&
              ((rc = mn__sqlite_dense_rank(s, &p, dense, &s->sizes, NULL, &rare, want, 0, out, done)) || *done)) &&
            !(rc = fts_commons(s, match, &p, ord, bound, upto, want, out, done)) && !*done &&
            !(held && ((rc = mn__sqlite_dense_rank(s, &p, dense, &s->sizes, NULL, &rare, want, 1, out, done)) || *done))) {
            *done = 1;
            rc = fts_maxscore(s, match, &p, ord, bound, upto, NULL, 1, want, out);
        }
        mn__sqlite_rare_free(&rare);
        return rc;
    }
    struct mn_sqlite_idset ids;
    if ((rc = set_read(s, f, &ids)))
        return rc;
    double share = upto > 0 && part >= 0 && part < upto ? (double)part / (double)upto : 1;
    /* a session that lived a while among many: FTS5 reads only its stretch of each phrase */
    ids.bounded = ids.n && mn__sqlite_idset_hi(&ids) - mn__sqlite_idset_lo(&ids) < upto / 2;
    ids.by_row = share <= mn_sqlite_fts_tuning.set_share;
    out->n = 0;
    int answered = 0;
    if (ids.n && held)
        rc = mn__sqlite_dense_rank(s, &p, dense, &s->sizes, &ids, &rare, want, 1, out, &answered);
    mn__sqlite_rare_free(&rare);
    if (ids.n && !rc && !answered)
        rc = fts_maxscore(s, match, &p, ord, bound, upto, &ids, share, want, out);
    mn__sqlite_idset_free(&ids);
    return rc;
}

/* The best `want` rows of the FTS table alone (no filter), best first, into out. */
static mn_status fts_top(struct sqlite_store *s, const char *match, size_t want, struct scored_list *out)
{
    int done = 0;
    mn_status rc = fts_best(s, match, NULL, 0, -1, want, out, &done);
    if (rc || done)
        return rc;
    sqlite3_stmt *top = NULL;
    if ((rc = mn__sqlite_query(s, SQL_FTS_TOP, &top, ARGS(ARG_TEXT(match), ARG_INT(want)))))
        return rc;
    out->n = 0;
    rc = fts_collect(s, top, out);
    mn__sqlite_done(top);
    return rc;
}

/* The filter as one statement: joined to every match, or (in_set) as the list of passing ids. */
static mn_status fts_filtered(struct sqlite_store *s, const char *match, const mn_search_filter *f, size_t limit,
                              int in_set, int64_t part, struct scored_list *out)
{
    if (in_set) {
        int done = 0;
        mn_status rc = fts_best(s, match, f, 1, part, limit, out, &done);
        if (rc || done)
            return rc;
    }
    sqlite3_stmt *st;
    mn_status rc = in_set ? mn__sqlite_prepare_filtered(s,
                                             "SELECT rowid, bm25(messages_fts) FROM messages_fts WHERE messages_fts"
                                             " MATCH ?1 AND +rowid IN (SELECT m.id FROM messages m"
                                             " JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid") " WHERE 1",
                                             f, ") ORDER BY bm25(messages_fts), rowid LIMIT ?2", &st)
                          : mn__sqlite_prepare_filtered(s,
                                             "SELECT messages_fts.rowid, bm25(messages_fts) FROM messages_fts"
                                             " JOIN messages m ON m.id = messages_fts.rowid"
                                             " JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid") " WHERE messages_fts MATCH ?1",
                                             f, " ORDER BY bm25(messages_fts), messages_fts.rowid LIMIT ?2", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
    rc = fts_collect(s, st, out);
    sqlite3_finalize(st);
    return rc;
}

/* Rounds (see above). *gave_up when round_max was reached first: out is then incomplete. */
static mn_status fts_rounds(struct sqlite_store *s, const char *match, const mn_search_filter *f, size_t limit,
                            size_t first, struct scored_list *out, int *gave_up)
{
    sqlite3_stmt *check = NULL;
    struct scored_list cand = {0};
    size_t checked = 0, want = first;
    *gave_up = 0;
    mn_status rc = mn__sqlite_prepare_filtered(s,
                                    "SELECT 1 FROM messages m JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid")
                                    " WHERE m.id = ?9",
                                    f, NULL, &check);
    while (!rc) {
        rc = fts_top(s, match, want, &cand);
        /* the first `checked` candidates are the previous round's, in the same order */
        for (size_t i = checked; !rc && i < cand.n && out->n < limit; i++) {
            sqlite3_bind_int64(check, 9, cand.r[i].id);
            int r = sqlite3_step(check);
            if (r == SQLITE_ROW)
                rc = mn__sqlite_scored_push(out, cand.r[i].id, cand.r[i].score);
            else if (r != SQLITE_DONE)
                rc = mn__sqlite_fail(s, r, "keyword search");
            sqlite3_reset(check);
        }
        checked = cand.n;
        if (rc || out->n >= limit || cand.n < want) /* enough, or every match was seen */
            break;
        if (want >= mn_sqlite_fts_tuning.round_max) {
            *gave_up = 1;
            break;
        }
        want = want * 8 < mn_sqlite_fts_tuning.round_max ? want * 8 : mn_sqlite_fts_tuning.round_max;
    }
    free(cand.r);
    sqlite3_finalize(check);
    return rc;
}

static int filter_empty(const mn_search_filter *f)
{
    return !f || (!f->session_id && !f->ns && !filter_narrows(f));
}

static mn_status fts_plan_run(struct sqlite_store *s, const char *match, const mn_search_filter *f, size_t limit,
                              struct scored_list *out)
{
    mn_status rc = MN_OK;
    size_t first = limit;
    if (!filter_empty(f)) {
        int64_t part = -1, all = 0;
        if (f->session_id)
            rc = count_one(s, SQL_SESSION_SIZE, f->session_id, &part);
        else if (f->ns)
            rc = count_one(s, SQL_NS_SIZE, f->ns, &part);
        if (rc)
            return rc;
        if (part > 0 && (rc = count_one(s, SQL_STORE_SIZE, NULL, &all)))
            return rc;
        /* a small set, unless it holds most of the store: then the rounds' first candidates
         * mostly pass, cheaper than reading every id of it */
        if (part >= 0 && (size_t)part <= mn_sqlite_fts_tuning.set_max && !(part > 0 && part * 2 > all))
            return fts_filtered(s, match, f, limit, 1, part, out);
        if (part > 0) {
            /* q of the store passes: limit/q candidates on average, three standard deviations more
             * (binomial) so that one round mostly suffices; limit itself when all pass. A role,
             * time or metadata condition besides lets fewer pass, by a share not known: 4× that. */
            double q = all > part ? (double)part / (double)all : 1.0;
            double want = ceil(((double)limit + 3.0 * sqrt((double)limit * (1.0 - q))) / q);
            if (filter_narrows(f))
                want *= 4;
            first = want < (double)mn_sqlite_fts_tuning.round_max ? (size_t)want : mn_sqlite_fts_tuning.round_max;
        } else
            first = limit * 4;
        if (first > mn_sqlite_fts_tuning.round_max)
            first = mn_sqlite_fts_tuning.round_max;
        if (first < limit)
            first = limit;
    }
    int gave_up = 0;
    rc = fts_rounds(s, match, f, limit, first, out, &gave_up);
    if (!rc && gave_up) {
        out->n = 0;
        rc = fts_filtered(s, match, f, limit, 0, -1, out);
    }
    return rc;
}

static mn_status fts_search_locked(struct sqlite_store *s, const char *match, const mn_search_filter *f, size_t limit,
                                   mn_store_score_fn fn, void *user, struct mn_store_fts_report *rep)
{
    /* the rounds read several times: one snapshot keeps their order the same */
    int own_txn = sqlite3_get_autocommit(s->db);
    mn_status rc = own_txn ? mn__sqlite_exec_stmt(s, SQL_READ_BEGIN, "keyword search") : MN_OK;
    if (rc)
        return rc;
    struct scored_list out = {0};
    s->fts_searches++;
    rc = fts_plan_run(s, match, f, limit, &out);
    size_t indexed = out.n;
    if (!rc) /* messages the index does not hold yet (most often none: one cheap read) */
        rc = mn__sqlite_fts_tail(s, match, f, limit, &out, rep);
    if (!rc && out.n > indexed)
        qsort(out.r, out.n, sizeof *out.r, scored_cmp);
    if (own_txn && !sqlite3_get_autocommit(s->db))
        mn__sqlite_exec_stmt(s, SQL_READ_END, "keyword search"); /* read only: nothing to lose */
    for (size_t i = 0; !rc && i < out.n && i < limit; i++)
        if (fn(user, out.r[i].id, -out.r[i].score))
            break;
    free(out.r);
    return rc;
}

/* Keyword searches run on the indexer handle, the one connection with the index's file attached:
 * beside appends, not between them. A private database searches on its own handle. */
static mn_status op_fts_search(mn_store *st, const char *match, const mn_search_filter *f, size_t limit,
                               mn_store_score_fn fn, void *user, struct mn_store_fts_report *rep)
{
    struct sqlite_store *s = S(st), *x = s->kw ? s->kw : s;
    if (mn__sqlite_kw_rebuilding(s)) {
        mn_status rc = mn__sqlite_kw_searcher(s, &x);
        if (rc)
            return rc;
    }
    LOCKED(x, fts_search_locked(x, match, f, limit, fn, user, rep));
}

/* ---- vectors --------------------------------------------------------------------------------- */

static mn_status vec_filter_locked(struct sqlite_store *s, const mn_search_filter *f, mn_store_score_fn fn,
                                   void *user)
{
    sqlite3_stmt *st;
    mn_status rc = mn__sqlite_prepare_filtered(s,
                                    "SELECT e.message_id FROM embeddings e JOIN messages m ON m.id = e.message_id"
                                    " JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid") " WHERE 1",
                                    f, NULL, &st);
    if (rc)
        return rc;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(user, sqlite3_column_int64(st, 0), 0))
            break;
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        rc = mn__sqlite_fail(s, r, "search filter");
    sqlite3_finalize(st);
    return rc;
}

static mn_status op_vec_filter(mn_store *st, const mn_search_filter *f, mn_store_score_fn fn, void *user)
{
    LOCKED(S(st), vec_filter_locked(S(st), f, fn, user));
}

/* The SQL of one kind of stored vector, so that one implementation serves both: messages'
 * (embeddings, embed_log) and memory versions' (memory_vectors, memory_vector_log). */
struct vec_sql {
    const char *log_max, *all, *changes, *get, *what;
};

static const struct vec_sql MESSAGE_VECS = {
    "SELECT coalesce(max(seq), 0) FROM embed_log",
    "SELECT message_id, dim, vector FROM embeddings ORDER BY message_id",
    "SELECT l.seq, l.message_id, l.op, e.dim, e.vector FROM embed_log l LEFT JOIN embeddings e"
    " ON e.message_id = l.message_id WHERE l.seq > ?1 ORDER BY l.seq",
    "SELECT dim, vector FROM embeddings WHERE message_id = ?1",
    "message",
};

static const struct vec_sql MEMORY_VECS = {
    "SELECT coalesce(max(seq), 0) FROM memory_vector_log",
    "SELECT vid, dim, vector FROM memory_vectors ORDER BY vid",
    "SELECT l.seq, l.vid, l.op, v.dim, v.vector FROM memory_vector_log l LEFT JOIN memory_vectors v"
    " ON v.vid = l.vid WHERE l.seq > ?1 ORDER BY l.seq",
    "SELECT dim, vector FROM memory_vectors WHERE vid = ?1",
    "memory version",
};

/* Reads row columns (dim, blob) at i, i+1 into buf (grown); NULL when malformed. */
static const float *blob_vec(sqlite3_stmt *st, int i, float **buf, uint32_t *cap, uint32_t *dim)
{
    int64_t d = sqlite3_column_int64(st, i);
    const void *b = sqlite3_column_blob(st, i + 1);
    *dim = (uint32_t)d;
    return mn__vecblob_read(b, (size_t)sqlite3_column_bytes(st, i + 1), d, buf, cap);
}

static mn_status vec_scan_locked(struct sqlite_store *s, const struct vec_sql *q, mn_store_vec_fn fn, void *user,
                                 int64_t *log_seq)
{
    /* the log position first: a vector stored after it is met again as a change (harmless) */
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_int(s, q->log_max, "vector scan", log_seq, NULL, 0, NULL);
    if (rc || (rc = mn__sqlite_stmt(s, q->all, &st)))
        return rc;
    int r;
    float *buf = NULL;
    uint32_t cap = 0, dim = 0;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const float *v = blob_vec(st, 1, &buf, &cap, &dim);
        if (!v) {
            rc = MN_CORRUPT_AT("database %s: the vector of %s %lld is malformed", s->path, q->what,
                               (long long)sqlite3_column_int64(st, 0));
            break;
        }
        if (fn(user, sqlite3_column_int64(st, 0), v, dim))
            break;
    }
    free(buf);
    return mn__sqlite_finish(s, st, r, rc, "vector scan");
}

static mn_status op_vec_scan(mn_store *st, mn_store_vec_fn fn, void *user, int64_t *log_seq)
{
    LOCKED(S(st), vec_scan_locked(S(st), &MESSAGE_VECS, fn, user, log_seq));
}

mn_status mn__sqlite_memory_vec_scan(mn_store *st, mn_store_vec_fn fn, void *user, int64_t *log_seq)
{
    LOCKED(S(st), vec_scan_locked(S(st), &MEMORY_VECS, fn, user, log_seq));
}

static mn_status vec_changes_locked(struct sqlite_store *s, const struct vec_sql *q, int64_t after,
                                    mn_store_change_fn fn, void *user, int64_t *last)
{
    sqlite3_stmt *st = NULL;
    *last = after;
    mn_status rc = mn__sqlite_query(s, q->changes, &st, ARGS(ARG_INT(after)));
    if (rc)
        return rc;
    float *buf = NULL;
    uint32_t cap = 0, dim = 0;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(st, 0), id = sqlite3_column_int64(st, 1);
        int op = sqlite3_column_int(st, 2);
        const float *v = NULL;
        if (op == 1 && sqlite3_column_type(st, 4) != SQLITE_NULL && !(v = blob_vec(st, 3, &buf, &cap, &dim))) {
            rc = MN_CORRUPT_AT("database %s: the vector of %s %lld is malformed", s->path, q->what, (long long)id);
            break;
        }
        if (fn(user, seq, id, v ? 1 : 0, v, v ? dim : 0))
            break;
        *last = seq;
    }
    free(buf);
    return mn__sqlite_finish(s, st, r, rc, "vector changes");
}

static mn_status op_vec_changes(mn_store *st, int64_t after, mn_store_change_fn fn, void *user, int64_t *last)
{
    LOCKED(S(st), vec_changes_locked(S(st), &MESSAGE_VECS, after, fn, user, last));
}

mn_status mn__sqlite_memory_vec_changes(mn_store *st, int64_t after, mn_store_change_fn fn, void *user, int64_t *last)
{
    LOCKED(S(st), vec_changes_locked(S(st), &MEMORY_VECS, after, fn, user, last));
}

static mn_status vec_get_locked(struct sqlite_store *s, const struct vec_sql *q, int64_t id, float *out, uint32_t dim)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, q->get, &st, ARGS(ARG_INT(id)));
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW && sqlite3_column_int64(st, 0) == (int64_t)dim &&
        sqlite3_column_bytes(st, 1) == (int)(dim * 4) && sqlite3_column_blob(st, 1))
        mn__vecblob_decode(sqlite3_column_blob(st, 1), dim, out);
    else if (r == SQLITE_ROW || r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "%s %lld has no vector of %u dimensions", q->what, (long long)id, dim);
    return mn__sqlite_finish(s, st, r, rc, "vector");
}

static mn_status op_vec_get(mn_store *st, int64_t id, float *out, uint32_t dim)
{
    LOCKED(S(st), vec_get_locked(S(st), &MESSAGE_VECS, id, out, dim));
}

mn_status mn__sqlite_memory_vec_get(mn_store *st, int64_t vid, float *out, uint32_t dim)
{
    LOCKED(S(st), vec_get_locked(S(st), &MEMORY_VECS, vid, out, dim));
}

static const char SQL_IDENTITY_GET[] = "SELECT value FROM meta WHERE key = 'embed.identity'";
static const char SQL_IDENTITY_SET[] = "INSERT OR REPLACE INTO meta (key, value) VALUES ('embed.identity', ?1)";
static const char SQL_VEC_PUT[] =
    "INSERT OR REPLACE INTO embeddings (message_id, embedder, model, dim, vector, created_at)"
    " SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM messages WHERE id = ?1)";
static const char SQL_QUEUE_DEL[] = "DELETE FROM embed_queue WHERE message_id = ?1";

static mn_status check_identity(struct sqlite_store *s, const char *ident)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_IDENTITY_GET, &st);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    int set = 0;
    if (r == SQLITE_ROW) {
        const char *have = mn__sqlite_col_text(st, 0);
        if (have && strcmp(have, ident) != 0)
            rc = mn__err(MN_CONFLICT,
                         "the vectors in %s were made by %s, this handle embeds with %s (mnemo reindex --embeddings"
                         " re-embeds every message)", s->path, have, ident);
    } else if (r == SQLITE_DONE)
        set = 1;
    if (!(rc = mn__sqlite_finish(s, st, r, rc, "embedder identity")) && set)
        rc = mn__sqlite_run(s, SQL_IDENTITY_SET, "embedder identity", ARGS(ARG_TEXT(ident)));
    return rc;
}

static mn_status vec_put_locked(struct sqlite_store *s, const int64_t *ids, size_t n, const float *vecs,
                                const unsigned char *skip, uint32_t dim, const char *embedder, const char *model,
                                int64_t now)
{
    char ident[600];
    snprintf(ident, sizeof ident, "%s/%s/%u", embedder, model, dim);
    unsigned char *blob = malloc((size_t)dim * 4 + 1);
    if (!blob)
        return mn__nomem();
    mn_status rc = mn__sqlite_begin_write(s);
    if (!rc && dim)
        rc = check_identity(s, ident);
    sqlite3_stmt *put = NULL, *del = NULL;
    if (!rc && !(rc = mn__sqlite_stmt(s, SQL_VEC_PUT, &put)))
        rc = mn__sqlite_stmt(s, SQL_QUEUE_DEL, &del);
    for (size_t i = 0; i < n && !rc; i++) {
        int r;
        if (!(skip && skip[i])) {
            mn__vecblob_encode(vecs + i * dim, dim, blob);
            sqlite3_bind_int64(put, 1, ids[i]);
            sqlite3_bind_text(put, 2, embedder, -1, SQLITE_STATIC);
            sqlite3_bind_text(put, 3, model, -1, SQLITE_STATIC);
            sqlite3_bind_int64(put, 4, dim);
            sqlite3_bind_blob(put, 5, blob, (int)(dim * 4), SQLITE_STATIC);
            sqlite3_bind_int64(put, 6, now);
            r = sqlite3_step(put);
            mn__sqlite_done(put);
            if (r != SQLITE_DONE) {
                rc = mn__sqlite_fail(s, r, "store vector");
                break;
            }
        }
        sqlite3_bind_int64(del, 1, ids[i]);
        r = sqlite3_step(del);
        mn__sqlite_done(del);
        if (r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "embedding queue");
    }
    free(blob);
    return mn__sqlite_end_write(s, rc); /* after a failed begin too: nothing is rolled back */
}

static mn_status op_vec_put(mn_store *st, const int64_t *ids, size_t n, const float *vecs, const unsigned char *skip,
                            uint32_t dim, const char *embedder, const char *model, int64_t now_ms)
{
    LOCKED(S(st), vec_put_locked(S(st), ids, n, vecs, skip, dim, embedder, model, now_ms));
}

/* ---- queue ----------------------------------------------------------------------------------- */

static const char SQL_QUEUE_PEEK[] =
    "SELECT q.message_id, m.content FROM embed_queue q JOIN messages m ON m.id = q.message_id"
    " ORDER BY q.message_id LIMIT ?1";

static mn_status queue_peek_locked(struct sqlite_store *s, size_t limit, mn_store_text_fn fn, void *user)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_QUEUE_PEEK, &st, ARGS(ARG_INT(limit)));
    if (rc)
        return rc;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *c = mn__sqlite_col_text(st, 1);
        if (fn(user, sqlite3_column_int64(st, 0), c ? c : ""))
            break;
    }
    return mn__sqlite_finish(s, st, r, rc, "embedding queue");
}

static mn_status op_queue_peek(mn_store *st, size_t limit, mn_store_text_fn fn, void *user)
{
    LOCKED(S(st), queue_peek_locked(S(st), limit, fn, user));
}

/* The queue is on when meta says so and the trigger that fills it exists (schema version 9: the
 * trigger exists only then, so appends pay nothing for a queue no embedder reads). */
static const char SQL_QUEUE_ON[] = "INSERT OR REPLACE INTO meta (key, value) VALUES ('embed.queue', '1')";
static const char SQL_QUEUE_OFF[] = "DELETE FROM meta WHERE key = 'embed.queue'";
static const char SQL_QUEUE_STATE[] =
    "SELECT coalesce((SELECT value FROM meta WHERE key = 'embed.queue'), '0') = '1',"
    " EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = 'messages_embed_queue')";
static const char SQL_QUEUE_TRIGGER[] =
    "CREATE TRIGGER IF NOT EXISTS messages_embed_queue AFTER INSERT ON messages WHEN new.content IS NOT NULL"
    "  BEGIN INSERT OR IGNORE INTO embed_queue (message_id) VALUES (new.id); END";
static const char SQL_QUEUE_TRIGGER_DROP[] = "DROP TRIGGER IF EXISTS messages_embed_queue";

static mn_status queue_state(struct sqlite_store *s, int *meta_on, int *trigger)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_QUEUE_STATE, &st);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    *meta_on = r == SQLITE_ROW && sqlite3_column_int(st, 0);
    *trigger = r == SQLITE_ROW && sqlite3_column_int(st, 1);
    return mn__sqlite_finish(s, st, r, MN_OK, "embedding queue"); /* always a row */
}

/* Inside a write transaction: the trigger as meta says (a migration to version 9 calls it). */
mn_status mn__sqlite_queue_trigger_sync(struct sqlite_store *s)
{
    int meta_on = 0, trigger = 0;
    mn_status rc = queue_state(s, &meta_on, &trigger);
    if (!rc && meta_on != trigger)
        rc = mn__sqlite_exec_stmt(s, meta_on ? SQL_QUEUE_TRIGGER : SQL_QUEUE_TRIGGER_DROP, "embedding queue");
    return rc;
}

static mn_status queue_enable_locked(struct sqlite_store *s, int on)
{
    int meta_on = 0, trigger = 0;
    mn_status rc = queue_state(s, &meta_on, &trigger);
    if (rc || (meta_on == !!on && trigger == !!on)) /* no write when nothing changes: opening stays read-only */
        return rc;
    if ((rc = mn__sqlite_begin_write(s)))
        return rc;
    if (!(rc = mn__sqlite_exec_stmt(s, on ? SQL_QUEUE_ON : SQL_QUEUE_OFF, "embedding queue")))
        rc = mn__sqlite_exec_stmt(s, on ? SQL_QUEUE_TRIGGER : SQL_QUEUE_TRIGGER_DROP, "embedding queue");
    return mn__sqlite_end_write(s, rc);
}

static mn_status op_queue_enable(mn_store *st, int on) { LOCKED(S(st), queue_enable_locked(S(st), on)); }

static const char SQL_VEC_RESET[] = "DELETE FROM embeddings";
static const char SQL_IDENTITY_DEL[] = "DELETE FROM meta WHERE key = 'embed.identity'";
static const char SQL_QUEUE_FILL[] =
    "INSERT OR IGNORE INTO embed_queue (message_id) SELECT id FROM messages m WHERE content IS NOT NULL"
    " AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.message_id = m.id)";
static const char SQL_COUNTS[] = "SELECT (SELECT count(*) FROM embeddings), (SELECT count(*) FROM embed_queue)";

static mn_status counts_locked(struct sqlite_store *s, int64_t *embedded, int64_t *queued)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_COUNTS, &st);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW && embedded)
        *embedded = sqlite3_column_int64(st, 0);
    if (r == SQLITE_ROW && queued)
        *queued = sqlite3_column_int64(st, 1);
    return mn__sqlite_finish(s, st, r, rc, "embedding counts"); /* always a row */
}

static mn_status queue_fill_locked(struct sqlite_store *s, int reset, int64_t *queued)
{
    mn_status rc = mn__sqlite_begin_write(s);
    if (!rc && reset && !(rc = mn__sqlite_exec_stmt(s, SQL_VEC_RESET, "reindex")))
        rc = mn__sqlite_exec_stmt(s, SQL_IDENTITY_DEL, "reindex");
    if (!rc)
        rc = mn__sqlite_exec_stmt(s, SQL_QUEUE_FILL, "backfill");
    if ((rc = mn__sqlite_end_write(s, rc))) /* after a failed begin too: nothing is rolled back */
        return rc;
    return counts_locked(s, NULL, queued);
}

static mn_status op_queue_fill(mn_store *st, int reset, int64_t *queued)
{
    LOCKED(S(st), queue_fill_locked(S(st), reset, queued));
}

static mn_status op_counts(mn_store *st, int64_t *embedded, int64_t *queued)
{
    LOCKED(S(st), counts_locked(S(st), embedded, queued));
}

static mn_status queue_count_locked(struct sqlite_store *s, const mn_search_filter *f, int64_t *n)
{
    sqlite3_stmt *st;
    mn_status rc = mn__sqlite_prepare_filtered(s,
                                    "SELECT count(*) FROM embed_queue q JOIN messages m ON m.id = q.message_id"
                                    " JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid") " WHERE 1",
                                    f, NULL, &st);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    else
        rc = mn__sqlite_fail(s, r, "embedding queue count");
    sqlite3_finalize(st);
    return rc;
}

static mn_status op_queue_count(mn_store *st, const mn_search_filter *f, int64_t *n)
{
    LOCKED(S(st), queue_count_locked(S(st), f, n));
}

/* ---- messages by id -------------------------------------------------------------------------- */

static const char SQL_MSG_BY_ID[] =
    "SELECT m.id, m.seq, m.role, m.content, m.tool_calls, m.tool_call_id, m.name, m.tool_name, m.model, m.files,"
    " m.metadata, m.idem_key, m.tokens, m.pinned, m.created_at, m.active, s.id, s.namespace"
    " FROM messages m JOIN sessions s ON s.sid = m.session_sid AND " MN_SQLITE_IN_SESSION("m.pos", "s.sid") " WHERE m.id = ?1";

static mn_status messages_get_locked(struct sqlite_store *s, const int64_t *ids, size_t n, mn_store_found_fn fn,
                                     void *user)
{
    sqlite3_stmt *st = NULL;
    /* one read transaction for them all: one snapshot, and not one to begin and end per row */
    int own_txn = n > 1 && sqlite3_get_autocommit(s->db);
    mn_status rc = own_txn ? mn__sqlite_exec_stmt(s, SQL_READ_BEGIN, "search results") : MN_OK;
    if (!rc)
        rc = mn__sqlite_stmt(s, SQL_MSG_BY_ID, &st);
    for (size_t i = 0; i < n && !rc; i++) {
        sqlite3_bind_int64(st, 1, ids[i]);
        int r = sqlite3_step(st);
        if (r == SQLITE_ROW) {
            mn_message m;
            rc = mn__sqlite_row_message(s, st, mn__sqlite_col_text(st, 16), &m);
            if (!rc && fn(user, &m, mn__sqlite_col_text(st, 17)))
                i = n;
        } else if (r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "search results");
        mn__sqlite_done(st);
    }
    if (own_txn && !sqlite3_get_autocommit(s->db))
        mn__sqlite_exec_stmt(s, SQL_READ_END, "search results"); /* read only: nothing to lose */
    return rc;
}

static mn_status op_messages_get(mn_store *st, const int64_t *ids, size_t n, mn_store_found_fn fn, void *user)
{
    LOCKED(S(st), messages_get_locked(S(st), ids, n, fn, user));
}

const struct mn_store_search_ops mn_sqlite_search_ops = {
    .fts_sync = op_fts_sync,
    .fts_drain = op_fts_drain,
    .fts_defer = op_fts_defer,
    .fts_search = op_fts_search,
    .vec_filter = op_vec_filter,
    .vec_scan = op_vec_scan,
    .vec_changes = op_vec_changes,
    .vec_get = op_vec_get,
    .vec_put = op_vec_put,
    .queue_peek = op_queue_peek,
    .queue_enable = op_queue_enable,
    .queue_fill = op_queue_fill,
    .counts = op_counts,
    .queue_count = op_queue_count,
    .messages_get = op_messages_get,
};
