/*
 * rows.c — the SQLite backend's row primitives for changes to stored rows (store_rows.h); the
 * use cases over them are in src/engine/edit.c, turns.c, fork.c and erase.c. Transactions are
 * sqlite.c's (the handle under its lock).
 */
#include <sqlite3.h>
#include <stdint.h>

#include "store/sqlite/sqlite_int.h"
#include "store/store_rows.h"
#include "util/err.h"
#include "util/banned.h"

#define TX(tx) ((struct sqlite_store *)(tx))

static const char SQL_MESSAGE_ROW[] =
    "SELECT tokens, seq, role = 'user', active FROM messages WHERE id = ?1 AND session_sid = ?2";
static const char SQL_MESSAGE_REMOVE[] = "DELETE FROM messages WHERE id = ?1";
/* The keyword index is external-content: a trigger logs deletes only, so a rewrite logs the old
 * text's removal and the new text's insert itself (search.c's fts_step reads the log; for a
 * message past the index's watermark both rows are dropped, its text indexed as it is then). */
static const char SQL_LOG_OLD[] =
    "INSERT INTO msg_log (message_id, op, content) SELECT id, 0, content FROM messages"
    " WHERE id = ?1 AND content IS NOT NULL";
static const char SQL_LOG_NEW[] = "INSERT INTO msg_log (message_id, op) VALUES (?1, 1)";
static const char SQL_MESSAGE_REWRITE[] =
    "UPDATE messages SET content = ?2, metadata = coalesce(?3, metadata), tokens = ?4 WHERE id = ?1";
static const char SQL_TITLE_FOLLOW[] =
    "UPDATE sessions SET title = nullif(?3, ''), title_seq = CASE WHEN ?3 = '' THEN 0 ELSE title_seq END"
    " WHERE sid = ?1 AND title_seq = ?2";
static const char SQL_SESSION_COUNTS[] =
    "UPDATE sessions SET message_count = message_count + ?2, token_count = token_count + ?3,"
    " turn_count = max(turn_count + ?4, 0), inactive_count = max(inactive_count + ?5, 0), updated_at = ?6"
    " WHERE sid = ?1";
/* The embed_log trigger tells every process's index of the dropped vector. */
static const char SQL_VECTOR_DROP[] = "DELETE FROM embeddings WHERE message_id = ?1";
static const char SQL_REQUEUE[] =
    "INSERT OR IGNORE INTO embed_queue (message_id) SELECT ?1 WHERE (SELECT value FROM meta"
    " WHERE key = 'embed.queue') = '1'";
static const char SQL_SUMMARIES_DROP[] = "DELETE FROM summaries WHERE session_sid = ?1 AND covers_upto >= ?2";
static const char SQL_EVENT_ADD[] = "INSERT INTO events (session_sid, kind, data, created_at) VALUES (?1, ?2, ?3, ?4)";
static const char SQL_TURNS_ROW[] =
    "SELECT sid, last_seq, max_turns, cleared_seq, cleared_from FROM sessions WHERE id = ?1";
static const char SQL_TURNS_WRITE[] =
    "UPDATE sessions SET max_turns = ?2, cleared_seq = ?3, cleared_from = ?4, updated_at = ?5 WHERE sid = ?1";
static const char SQL_STATE_DROP[] = "UPDATE sessions SET state = NULL WHERE sid = ?1";
/* Newest first down the session's range of the key: reads n rows (of the kind asked for). */
static const char SQL_TURN_START[] =
    "SELECT seq FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1") " AND role <> 'tool'"
    " ORDER BY pos DESC LIMIT 1 OFFSET ?2";
static const char SQL_TURN_START_ACTIVE[] =
    "SELECT seq FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1") " AND active = 1 AND role <> 'tool'"
    " ORDER BY pos DESC LIMIT 1 OFFSET ?2";
static const char SQL_FIRST_ACTIVE[] =
    "SELECT seq FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1") " AND active = 1 ORDER BY pos LIMIT 1";
/* ?1 and ?2: the range's first and last pos (seq_range). */
static const char SQL_ACTIVATE[] = "UPDATE messages SET active = ?3 WHERE pos BETWEEN ?1 AND ?2 AND active <> ?3";
static const char SQL_REMOVE_RANGE[] = "DELETE FROM messages WHERE pos BETWEEN ?1 AND ?2 RETURNING tokens, active";
static const char SQL_SESSION_READ[] =
    "SELECT " MN_SQLITE_SESSION_COLS ", sid, title_seq FROM sessions WHERE id = ?1";
/* ?1 and ?2 as SQL_ACTIVATE's. */
static const char SQL_MESSAGES_READ[] =
    "SELECT " MN_SQLITE_MESSAGE_COLS " FROM messages WHERE pos BETWEEN ?1 AND ?2 AND active = 1 ORDER BY pos LIMIT ?3";
static const char SQL_TITLE_FROM[] = "UPDATE sessions SET title_seq = ?2 WHERE sid = ?1";
static const char SQL_META_DROP[] = "DELETE FROM meta WHERE key = ?1";

/* Runs a statement of int64 parameters ?1..?n. */
static mn_status run_ints(struct sqlite_store *s, const char *sql, const char *what, int n, const int64_t *v)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, sql, &st);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        sqlite3_bind_int64(st, i + 1, v[i]);
    return mn__sqlite_step_done(s, st, what);
}

/* The first and last pos of the session's messages with a seq from `from` to `upto`, each
 * clamped into the session's range of the key (MN_SQLITE_POS). */
static void seq_range(int64_t sid, int64_t from, int64_t upto, int64_t pos[2])
{
    const int64_t span = INT64_C(4294967296);
    from = from < 0 ? 0 : from > span ? span : from;
    upto = upto < -1 ? -1 : upto > span - 1 ? span - 1 : upto;
    pos[0] = sid * span + from;
    pos[1] = sid * span + upto;
}

/* The integer a query of int64 parameters ?1..?n returns (0 when it returns no row). */
static mn_status one_int(struct sqlite_store *s, const char *sql, const char *what, int n, const int64_t *v,
                         int64_t *out)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, sql, &st);
    if (rc)
        return rc;
    for (int i = 0; i < n; i++)
        sqlite3_bind_int64(st, i + 1, v[i]);
    int r = sqlite3_step(st);
    *out = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    mn__sqlite_done(st);
    return r == SQLITE_ROW || r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, what);
}

static mn_status message_row(mn_store_tx *tx, const char *session_id, int64_t message_id, mn_store_message_row *out)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_session_sid(s, session_id, &out->sid, NULL);
    if (rc || (rc = mn__sqlite_stmt(s, SQL_MESSAGE_ROW, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, message_id);
    sqlite3_bind_int64(st, 2, out->sid);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->tokens = sqlite3_column_int64(st, 0);
        out->seq = sqlite3_column_int64(st, 1);
        out->user = sqlite3_column_int(st, 2);
        out->active = sqlite3_column_int(st, 3);
    }
    mn__sqlite_done(st);
    if (r == SQLITE_DONE)
        return mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id, session_id);
    return r == SQLITE_ROW ? MN_OK : mn__sqlite_fail(s, r, "message lookup");
}

static mn_status message_rewrite(mn_store_tx *tx, int64_t message_id, const char *content, const char *metadata,
                                 int64_t tokens)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = run_ints(s, SQL_LOG_OLD, "keyword index log", 1, &message_id);
    if (rc || (rc = mn__sqlite_stmt(s, SQL_MESSAGE_REWRITE, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, message_id);
    mn__sqlite_bind_text(st, 2, content);
    mn__sqlite_bind_text(st, 3, metadata);
    sqlite3_bind_int64(st, 4, tokens);
    if ((rc = mn__sqlite_step_done(s, st, "message edit")))
        return rc;
    return run_ints(s, SQL_LOG_NEW, "keyword index log", 1, &message_id);
}

static mn_status title_follow(mn_store_tx *tx, int64_t sid, int64_t seq, const char *title)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_TITLE_FOLLOW, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, seq);
    mn__sqlite_bind_text(st, 3, title);
    return mn__sqlite_step_done(s, st, "title");
}

static mn_status message_remove(mn_store_tx *tx, int64_t message_id)
{
    return run_ints(TX(tx), SQL_MESSAGE_REMOVE, "message delete", 1, &message_id);
}

static mn_status session_counts(mn_store_tx *tx, int64_t sid, int64_t messages, int64_t tokens, int64_t users,
                                int64_t inactive, int64_t now_ms)
{
    return run_ints(TX(tx), SQL_SESSION_COUNTS, "session update", 6,
                    (int64_t[]){sid, messages, tokens, users, inactive, now_ms});
}

static mn_status vector_stale(mn_store_tx *tx, int64_t message_id)
{
    mn_status rc = run_ints(TX(tx), SQL_VECTOR_DROP, "vector drop", 1, &message_id);
    return rc ? rc : run_ints(TX(tx), SQL_REQUEUE, "embedding queue", 1, &message_id);
}

static mn_status summaries_drop(mn_store_tx *tx, int64_t sid, int64_t seq, int64_t *dropped)
{
    mn_status rc = run_ints(TX(tx), SQL_SUMMARIES_DROP, "summary delete", 2, (int64_t[]){sid, seq});
    *dropped = rc ? 0 : sqlite3_changes64(TX(tx)->db);
    return rc;
}

static mn_status event_add(mn_store_tx *tx, int64_t sid, const char *kind, const char *data, int64_t now_ms)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_EVENT_ADD, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    mn__sqlite_bind_text(st, 2, kind);
    mn__sqlite_bind_text(st, 3, data);
    sqlite3_bind_int64(st, 4, now_ms);
    return mn__sqlite_step_done(s, st, "event");
}

static mn_status turns_row(mn_store_tx *tx, const char *session_id, mn_store_turns_row *out)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_TURNS_ROW, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, session_id);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW)
        *out = (mn_store_turns_row){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                                    sqlite3_column_int64(st, 4)};
    mn__sqlite_done(st);
    if (r == SQLITE_DONE)
        return mn__err(MN_NOTFOUND, "session %s not found", session_id);
    return r == SQLITE_ROW ? MN_OK : mn__sqlite_fail(s, r, "session lookup");
}

static mn_status turns_write(mn_store_tx *tx, const mn_store_turns_row *row, int64_t now_ms)
{
    return run_ints(TX(tx), SQL_TURNS_WRITE, "session update", 5,
                    (int64_t[]){row->sid, row->max_turns, row->cleared_seq, row->cleared_from, now_ms});
}

static mn_status state_drop(mn_store_tx *tx, int64_t sid)
{
    return run_ints(TX(tx), SQL_STATE_DROP, "state", 1, &sid);
}

static mn_status turn_start(mn_store_tx *tx, int64_t sid, int64_t n, int active_only, int64_t *seq)
{
    *seq = 0; /* n >= 1: the engine asks only with a turn limit (store_rows.h) */
    return one_int(TX(tx), active_only ? SQL_TURN_START_ACTIVE : SQL_TURN_START, "turn limit", 2,
                   (int64_t[]){sid, n - 1}, seq);
}

static mn_status first_active(mn_store_tx *tx, int64_t sid, int64_t *seq)
{
    return one_int(TX(tx), SQL_FIRST_ACTIVE, "active history", 1, &sid, seq);
}

static mn_status messages_activate(mn_store_tx *tx, int64_t sid, int64_t from_seq, int64_t upto_seq, int active,
                                   int64_t *changed)
{
    int64_t v[3] = {0, 0, active != 0};
    seq_range(sid, from_seq, upto_seq, v);
    mn_status rc = run_ints(TX(tx), SQL_ACTIVATE, "active history", 3, v);
    *changed = rc ? 0 : sqlite3_changes64(TX(tx)->db);
    return rc;
}

static mn_status messages_remove(mn_store_tx *tx, int64_t sid, int64_t from_seq, int64_t upto_seq,
                                 mn_store_removed *out)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    int64_t pos[2];
    *out = (mn_store_removed){0, 0, 0};
    mn_status rc = mn__sqlite_stmt(s, SQL_REMOVE_RANGE, &st);
    if (rc)
        return rc;
    seq_range(sid, from_seq, upto_seq, pos);
    sqlite3_bind_int64(st, 1, pos[0]);
    sqlite3_bind_int64(st, 2, pos[1]);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        out->messages++;
        out->tokens += sqlite3_column_int64(st, 0);
        out->inactive += sqlite3_column_int(st, 1) == 0;
    }
    mn__sqlite_done(st);
    if (r != SQLITE_DONE) {
        *out = (mn_store_removed){0, 0, 0};
        return mn__sqlite_fail(s, r, "message delete");
    }
    return MN_OK;
}

/* The write transaction holds the database: the row needs no lock of its own. */
static mn_status session_read(mn_store_tx *tx, const char *session_id, mn_store_session_fn fn, void *user,
                              mn_store_session_row *out)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_SESSION_READ, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, session_id);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        mn_session row;
        mn__sqlite_row_session(st, &row);
        out->sid = sqlite3_column_int64(st, MN_SQLITE_SESSION_NCOLS);
        out->title_seq = sqlite3_column_int64(st, MN_SQLITE_SESSION_NCOLS + 1);
        fn(user, &row);
    }
    mn__sqlite_done(st);
    if (r == SQLITE_DONE)
        return mn__err(MN_NOTFOUND, "session %s not found", session_id);
    return r == SQLITE_ROW ? MN_OK : mn__sqlite_fail(s, r, "session lookup");
}

static mn_status messages_read(mn_store_tx *tx, int64_t sid, const char *session_id, int64_t after_seq,
                               int64_t upto_seq, size_t limit, mn_store_message_fn fn, void *user)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_MESSAGES_READ, &st);
    if (rc)
        return rc;
    int64_t pos[2];
    seq_range(sid, after_seq == INT64_MAX ? after_seq : after_seq + 1, upto_seq, pos);
    sqlite3_bind_int64(st, 1, pos[0]);
    sqlite3_bind_int64(st, 2, pos[1]);
    sqlite3_bind_int64(st, 3, limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        mn_message m;
        if ((rc = mn__sqlite_row_message(s, st, session_id, &m)) || fn(user, &m))
            break;
    }
    mn__sqlite_done(st);
    if (rc || r == SQLITE_ROW || r == SQLITE_DONE)
        return rc;
    return mn__sqlite_fail(s, r, "message read");
}

static mn_status title_from(mn_store_tx *tx, int64_t sid, int64_t seq)
{
    return run_ints(TX(tx), SQL_TITLE_FROM, "title", 2, (int64_t[]){sid, seq});
}

static mn_status meta_drop(mn_store_tx *tx, const char *key)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_META_DROP, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, key);
    return mn__sqlite_step_done(s, st, "meta delete");
}

static void erased(mn_store_tx *tx) { TX(tx)->erase_after_commit = 1; }

const struct mn_store_row_ops mn_sqlite_row_ops = {
    .write = mn__sqlite_tx_write,
    .message_row = message_row,
    .message_rewrite = message_rewrite,
    .message_remove = message_remove,
    .title_follow = title_follow,
    .session_counts = session_counts,
    .vector_stale = vector_stale,
    .summaries_drop = summaries_drop,
    .event_add = event_add,
    .turns_row = turns_row,
    .turns_write = turns_write,
    .state_drop = state_drop,
    .turn_start = turn_start,
    .first_active = first_active,
    .messages_activate = messages_activate,
    .messages_remove = messages_remove,
    .session_read = session_read,
    .messages_read = messages_read,
    .title_from = title_from,
    .meta_drop = meta_drop,
    .erased = erased,
};
