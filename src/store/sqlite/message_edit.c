/*
 * message_edit.c — the SQLite backend's in-place message edit (store.h message_edit): content,
 * metadata and tokens change in one transaction, with the keyword index, vectors, summaries,
 * title and counters kept in step (a summary that folded the old text goes, as on a delete). The public function is in src/mnemo_edit.c.
 */
#include <sqlite3.h>
#include <stdint.h>

#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

static const char SQL_MESSAGE_FOR_EDIT[] =
    "SELECT tokens, seq, content FROM messages WHERE id = ?1 AND session_sid = ?2";
/* The keyword index is external-content: a trigger logs deletes only, so an edit logs the old
 * text's removal and the new text's insert itself (search.c's fts_step reads the log; for a
 * message past the index's watermark both rows are dropped, its text indexed as it is then). */
static const char SQL_LOG_OLD[] = "INSERT INTO msg_log (message_id, op, content) VALUES (?1, 0, ?2)";
static const char SQL_LOG_NEW[] = "INSERT INTO msg_log (message_id, op) VALUES (?1, 1)";
/* A title taken from this message (title_seq is its seq ?2, as in edit.c's SQL_TITLE_FROM_MESSAGE)
 * becomes the new text's and still comes from it, or goes when that gives no title (''). */
static const char SQL_TITLE_FROM_MESSAGE[] =
    "UPDATE sessions SET title = nullif(?3, ''), title_seq = CASE WHEN ?3 = '' THEN 0 ELSE title_seq END"
    " WHERE sid = ?1 AND title_seq = ?2";
static const char SQL_MESSAGE_EDIT[] =
    "UPDATE messages SET content = ?2, metadata = coalesce(?3, metadata), tokens = ?4 WHERE id = ?1";
static const char SQL_SESSION_TOKENS[] =
    "UPDATE sessions SET token_count = token_count - ?2 + ?3, updated_at = ?4 WHERE sid = ?1";
/* The vector was of the old text: drop it (the embed_log trigger tells every process's index)
 * and queue the message again while the queue is on. */
static const char SQL_VECTOR_DROP[] = "DELETE FROM embeddings WHERE message_id = ?1";
static const char SQL_REQUEUE[] =
    "INSERT OR IGNORE INTO embed_queue (message_id) SELECT ?1 WHERE (SELECT value FROM meta"
    " WHERE key = 'embed.queue') = '1'";
static const char SQL_EDITED_EVENT[] =
    "INSERT INTO events (session_sid, kind, data, created_at) VALUES (?1, 'message_edited',"
    " json_object('message_id', ?2, 'seq', ?3, 'tokens_before', ?4, 'tokens_after', ?5), ?6)";

/* Runs a statement of int64 parameters ?1..?n (n <= 6). */
static mn_status run_ints(struct sqlite_store *s, const char *sql, const char *what, int n, const int64_t *v)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_stmt(s, sql, &st);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        sqlite3_bind_int64(st, i + 1, v[i]);
    return mn_sqlite_step_done(s, st, what);
}

/* Logs the old text's removal from the keyword index (nothing when it had none). */
static mn_status log_old(struct sqlite_store *s, int64_t message_id, const char *old)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = old ? mn_sqlite_stmt(s, SQL_LOG_OLD, &st) : MN_OK;
    if (rc || !old)
        return rc;
    sqlite3_bind_int64(st, 1, message_id);
    mn_sqlite_bind_text(st, 2, old);
    return mn_sqlite_step_done(s, st, "keyword index log");
}

static mn_status retitle(struct sqlite_store *s, int64_t sid, int64_t seq, const char *title)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = title ? mn_sqlite_stmt(s, SQL_TITLE_FROM_MESSAGE, &st) : MN_OK;
    if (rc || !title)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, seq);
    mn_sqlite_bind_text(st, 3, title);
    return mn_sqlite_step_done(s, st, "title");
}

static mn_status write_content(struct sqlite_store *s, const mn_store_edit *e)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_stmt(s, SQL_MESSAGE_EDIT, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, e->message_id);
    mn_sqlite_bind_text(st, 2, e->content);
    mn_sqlite_bind_text(st, 3, e->metadata);
    sqlite3_bind_int64(st, 4, e->tokens);
    return mn_sqlite_step_done(s, st, "message edit");
}

static mn_status edit_in_txn(struct sqlite_store *s, const char *session_id, const mn_store_edit *e, int64_t *seq)
{
    int64_t sid = 0, before = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_session_sid(s, session_id, &sid, NULL);
    if (rc || (rc = mn_sqlite_stmt(s, SQL_MESSAGE_FOR_EDIT, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, e->message_id);
    sqlite3_bind_int64(st, 2, sid);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        before = sqlite3_column_int64(st, 0);
        *seq = sqlite3_column_int64(st, 1);
        rc = log_old(s, e->message_id, mn_sqlite_col_text(st, 2));
    }
    mn_sqlite_done(st);
    if (r == SQLITE_DONE)
        return mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)e->message_id, session_id);
    if (r != SQLITE_ROW)
        return mn_sqlite_fail(s, r, "message lookup");
    if (rc || (rc = retitle(s, sid, *seq, e->title)) || (rc = write_content(s, e)) ||
        (rc = run_ints(s, SQL_LOG_NEW, "keyword index log", 1, &e->message_id)) ||
        (rc = run_ints(s, SQL_SESSION_TOKENS, "session update", 4, (int64_t[]){sid, before, e->tokens, e->now_ms})) ||
        (rc = run_ints(s, SQL_VECTOR_DROP, "vector drop", 1, &e->message_id)) ||
        (rc = run_ints(s, SQL_REQUEUE, "embedding queue", 1, &e->message_id)) ||
        (rc = mn_sqlite_drop_summaries(s, sid, e->message_id, *seq, e->now_ms, "message_edited")) ||
        (rc = run_ints(s, SQL_EDITED_EVENT, "event", 6,
                       (int64_t[]){sid, e->message_id, *seq, before, e->tokens, e->now_ms})))
        return rc;
    return MN_OK;
}

static mn_status edit_locked(struct sqlite_store *s, const char *session_id, const mn_store_edit *e, int64_t *seq)
{
    mn_status rc = mn_sqlite_begin_write(s);
    if (rc)
        return rc;
    if ((rc = edit_in_txn(s, session_id, e, seq)))
        mn_sqlite_rollback(s);
    else if (!(rc = mn_sqlite_commit(s)))
        mn_sqlite_erased(s); /* the old text leaves the index and the logs now (docs/erasure.md) */
    return rc;
}

mn_status mn_sqlite_op_message_edit(mn_store *st, const char *session_id, const mn_store_edit *e, int64_t *seq)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int64_t ignored;
    LOCKED(s, edit_locked(s, session_id, e, seq ? seq : &ignored));
}
