/*
 * edit.c — the SQLite backend's in-place edits: deleting one message (an OpenAI Conversations
 * item) with the session's counters kept right, and updating a session's title and metadata.
 * Operations of store.h; the public functions are in src/mnemo_service.c.
 */
#include <sqlite3.h>
#include <stdint.h>

#include "store/sqlite/sqlite_int.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

static const char SQL_MESSAGE_FOR_DELETE[] =
    "SELECT tokens, role = 'user', active, seq FROM messages WHERE id = ?1 AND session_sid = ?2";
/* A summary that folded the message holds its text: it goes too (docs/erasure.md), and the next
 * context folds again from the messages that remain. Every later summary re-folded this one. */
static const char SQL_SUMMARIES_COVERING[] = "DELETE FROM summaries WHERE session_sid = ?1 AND covers_upto >= ?2";
/* A title taken from the message (title_seq is its seq) goes too; the next user message gives
 * the session a new one. A title the user set, or taken from another message, stays (whatever
 * text the message starts with). */
static const char SQL_TITLE_FROM_MESSAGE[] =
    "UPDATE sessions SET title = NULL, title_seq = 0 WHERE sid = ?1 AND title_seq = ?2";
static const char SQL_SUMMARY_DROPPED[] =
    "INSERT INTO events (session_sid, kind, data, created_at) VALUES (?1, 'summary_dropped',"
    " json_object('reason', ?6, 'message_id', ?2, 'seq', ?3, 'summaries', ?4), ?5)";
static const char SQL_MESSAGE_DELETE[] = "DELETE FROM messages WHERE id = ?1";
static const char SQL_SESSION_MESSAGE_GONE[] =
    "UPDATE sessions SET message_count = message_count - 1, token_count = token_count - ?2,"
    " turn_count = max(turn_count - ?3, 0), inactive_count = max(inactive_count - ?4, 0), updated_at = ?5"
    " WHERE sid = ?1";
/* A title given here is the user's: it comes from no message (title_seq 0). */
static const char SQL_SESSION_UPDATE[] =
    "UPDATE sessions SET title = coalesce(?2, title), title_seq = CASE WHEN ?2 IS NULL THEN title_seq ELSE 0 END,"
    " metadata = coalesce(?3, metadata), updated_at = ?4 WHERE id = ?1";

mn_status mn_sqlite_drop_summaries(struct sqlite_store *s, int64_t sid, int64_t message_id, int64_t seq, int64_t now,
                                   const char *reason)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_stmt(s, SQL_SUMMARIES_COVERING, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, seq);
    if ((rc = mn_sqlite_step_done(s, st, "summary delete")))
        return rc;
    int64_t n = sqlite3_changes64(s->db);
    if (n == 0 || (rc = mn_sqlite_stmt(s, SQL_SUMMARY_DROPPED, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, message_id);
    sqlite3_bind_int64(st, 3, seq);
    sqlite3_bind_int64(st, 4, n);
    sqlite3_bind_int64(st, 5, now);
    mn_sqlite_bind_text(st, 6, reason);
    return mn_sqlite_step_done(s, st, "event");
}

static mn_status delete_in_txn(struct sqlite_store *s, const char *session_id, int64_t message_id, int64_t *seq)
{
    int64_t sid = 0, tokens = 0, user = 0, inactive = 0, now = mn_clock_now_ms();
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_session_sid(s, session_id, &sid, NULL);
    if (rc || (rc = mn_sqlite_stmt(s, SQL_MESSAGE_FOR_DELETE, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, message_id);
    sqlite3_bind_int64(st, 2, sid);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        tokens = sqlite3_column_int64(st, 0);
        user = sqlite3_column_int64(st, 1);
        inactive = sqlite3_column_int64(st, 2) == 0;
        *seq = sqlite3_column_int64(st, 3);
    }
    mn_sqlite_done(st);
    if (r == SQLITE_DONE)
        return mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id, session_id);
    if (r != SQLITE_ROW)
        return mn_sqlite_fail(s, r, "message lookup");
    if ((rc = mn_sqlite_stmt(s, SQL_TITLE_FROM_MESSAGE, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, *seq);
    if ((rc = mn_sqlite_step_done(s, st, "title")) || (rc = mn_sqlite_stmt(s, SQL_MESSAGE_DELETE, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, message_id);
    if ((rc = mn_sqlite_step_done(s, st, "message delete")) || (rc = mn_sqlite_stmt(s, SQL_SESSION_MESSAGE_GONE, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, tokens);
    sqlite3_bind_int64(st, 3, user);
    sqlite3_bind_int64(st, 4, inactive);
    sqlite3_bind_int64(st, 5, now);
    if ((rc = mn_sqlite_step_done(s, st, "session update")) ||
        (rc = mn_sqlite_drop_summaries(s, sid, message_id, *seq, now, "message_deleted")))
        return rc;
    return MN_OK;
}

static mn_status delete_locked(struct sqlite_store *s, const char *session_id, int64_t message_id, int64_t *seq)
{
    mn_status rc = mn_sqlite_begin_write(s);
    if (rc)
        return rc;
    if ((rc = delete_in_txn(s, session_id, message_id, seq)))
        mn_sqlite_rollback(s);
    else if (!(rc = mn_sqlite_commit(s)))
        mn_sqlite_erased(s);
    return rc;
}

mn_status mn_sqlite_op_message_delete(mn_store *st, const char *session_id, int64_t message_id, int64_t *seq)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int64_t ignored;
    LOCKED(s, delete_locked(s, session_id, message_id, seq ? seq : &ignored));
}

static mn_status update_locked(struct sqlite_store *s, const char *id, const char *title, const char *metadata,
                               int64_t now_ms)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_stmt(s, SQL_SESSION_UPDATE, &st);
    if (rc)
        return rc;
    mn_sqlite_bind_text(st, 1, id);
    mn_sqlite_bind_text(st, 2, title);
    mn_sqlite_bind_text(st, 3, metadata);
    sqlite3_bind_int64(st, 4, now_ms);
    if ((rc = mn_sqlite_step_done(s, st, "session update")))
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return mn__err(MN_NOTFOUND, "session %s not found", id);
    return MN_OK;
}

mn_status mn_sqlite_op_session_update(mn_store *st, const char *id, const char *title, const char *metadata,
                                      int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, update_locked(s, id, title, metadata, now_ms));
}
