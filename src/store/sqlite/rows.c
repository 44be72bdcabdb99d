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
    "SELECT tokens, seq, role = 'user', active FROM messages WHERE id = ?2 AND session_sid = ?1";
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

static mn_status message_row(mn_store_tx *tx, const char *session_id, int64_t message_id, mn_store_message_row *out)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_session_query(s, session_id, SQL_MESSAGE_ROW, &st, &out->sid, ARGS(ARG_INT(message_id)));
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->tokens = sqlite3_column_int64(st, 0);
        out->seq = sqlite3_column_int64(st, 1);
        out->user = sqlite3_column_int(st, 2);
        out->active = sqlite3_column_int(st, 3);
    } else if (r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id, session_id);
    return mn__sqlite_finish(s, st, r, rc, "message lookup");
}

static mn_status message_rewrite(mn_store_tx *tx, int64_t message_id, const char *content, const char *metadata,
                                 int64_t tokens)
{
    struct sqlite_store *s = TX(tx);
    mn_status rc = mn__sqlite_run(s, SQL_LOG_OLD, "keyword index log", ARGS(ARG_INT(message_id)));
    if (rc || (rc = mn__sqlite_run(s, SQL_MESSAGE_REWRITE, "message edit",
                                   ARGS(ARG_INT(message_id), ARG_TEXT(content), ARG_TEXT(metadata), ARG_INT(tokens)))))
        return rc;
    return mn__sqlite_run(s, SQL_LOG_NEW, "keyword index log", ARGS(ARG_INT(message_id)));
}

static mn_status title_follow(mn_store_tx *tx, int64_t sid, int64_t seq, const char *title)
{
    return mn__sqlite_run(TX(tx), SQL_TITLE_FOLLOW, "title", ARGS(ARG_INT(sid), ARG_INT(seq), ARG_TEXT(title)));
}

static mn_status message_remove(mn_store_tx *tx, int64_t message_id)
{
    return mn__sqlite_run(TX(tx), SQL_MESSAGE_REMOVE, "message delete", ARGS(ARG_INT(message_id)));
}

static mn_status session_counts(mn_store_tx *tx, int64_t sid, int64_t messages, int64_t tokens, int64_t users,
                                int64_t inactive, int64_t now_ms)
{
    return mn__sqlite_run(TX(tx), SQL_SESSION_COUNTS, "session update",
                          ARGS(ARG_INT(sid), ARG_INT(messages), ARG_INT(tokens), ARG_INT(users), ARG_INT(inactive),
                               ARG_INT(now_ms)));
}

static mn_status vector_stale(mn_store_tx *tx, int64_t message_id)
{
    mn_status rc = mn__sqlite_run(TX(tx), SQL_VECTOR_DROP, "vector drop", ARGS(ARG_INT(message_id)));
    return rc ? rc : mn__sqlite_run(TX(tx), SQL_REQUEUE, "embedding queue", ARGS(ARG_INT(message_id)));
}

static mn_status summaries_drop(mn_store_tx *tx, int64_t sid, int64_t seq, int64_t *dropped)
{
    mn_status rc = mn__sqlite_run(TX(tx), SQL_SUMMARIES_DROP, "summary delete", ARGS(ARG_INT(sid), ARG_INT(seq)));
    *dropped = rc ? 0 : sqlite3_changes64(TX(tx)->db);
    return rc;
}

static mn_status event_add(mn_store_tx *tx, int64_t sid, const char *kind, const char *data, int64_t now_ms)
{
    return mn__sqlite_run(TX(tx), SQL_EVENT_ADD, "event",
                          ARGS(ARG_INT(sid), ARG_TEXT(kind), ARG_TEXT(data), ARG_INT(now_ms)));
}

static mn_status turns_row(mn_store_tx *tx, const char *session_id, mn_store_turns_row *out)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_TURNS_ROW, &st, ARGS(ARG_TEXT(session_id)));
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW)
        *out = (mn_store_turns_row){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                                    sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                                    sqlite3_column_int64(st, 4)};
    else if (r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "session %s not found", session_id);
    return mn__sqlite_finish(s, st, r, rc, "session lookup");
}

static mn_status turns_write(mn_store_tx *tx, const mn_store_turns_row *row, int64_t now_ms)
{
    return mn__sqlite_run(TX(tx), SQL_TURNS_WRITE, "session update",
                          ARGS(ARG_INT(row->sid), ARG_INT(row->max_turns), ARG_INT(row->cleared_seq),
                               ARG_INT(row->cleared_from), ARG_INT(now_ms)));
}

static mn_status state_drop(mn_store_tx *tx, int64_t sid)
{
    return mn__sqlite_run(TX(tx), SQL_STATE_DROP, "state", ARGS(ARG_INT(sid)));
}

static mn_status turn_start(mn_store_tx *tx, int64_t sid, int64_t n, int active_only, int64_t *seq)
{
    *seq = 0; /* n >= 1: the engine asks only with a turn limit (store_rows.h) */
    return mn__sqlite_int(TX(tx), active_only ? SQL_TURN_START_ACTIVE : SQL_TURN_START, "turn limit", seq, NULL,
                          ARGS(ARG_INT(sid), ARG_INT(n - 1)));
}

static mn_status first_active(mn_store_tx *tx, int64_t sid, int64_t *seq)
{
    return mn__sqlite_int(TX(tx), SQL_FIRST_ACTIVE, "active history", seq, NULL, ARGS(ARG_INT(sid)));
}

static mn_status messages_activate(mn_store_tx *tx, int64_t sid, int64_t from_seq, int64_t upto_seq, int active,
                                   int64_t *changed)
{
    int64_t pos[2];
    seq_range(sid, from_seq, upto_seq, pos);
    mn_status rc = mn__sqlite_run(TX(tx), SQL_ACTIVATE, "active history",
                                  ARGS(ARG_INT(pos[0]), ARG_INT(pos[1]), ARG_INT(active != 0)));
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
    seq_range(sid, from_seq, upto_seq, pos);
    mn_status rc = mn__sqlite_query(s, SQL_REMOVE_RANGE, &st, ARGS(ARG_INT(pos[0]), ARG_INT(pos[1])));
    if (rc)
        return rc;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        out->messages++;
        out->tokens += sqlite3_column_int64(st, 0);
        out->inactive += sqlite3_column_int(st, 1) == 0;
    }
    if ((rc = mn__sqlite_finish(s, st, r, MN_OK, "message delete")))
        *out = (mn_store_removed){0, 0, 0};
    return rc;
}

/* The write transaction holds the database: the row needs no lock of its own. */
static mn_status session_read(mn_store_tx *tx, const char *session_id, mn_store_session_fn fn, void *user,
                              mn_store_session_row *out)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_SESSION_READ, &st, ARGS(ARG_TEXT(session_id)));
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        mn_session row;
        mn__sqlite_row_session(st, &row);
        out->sid = sqlite3_column_int64(st, MN_SQLITE_SESSION_NCOLS);
        out->title_seq = sqlite3_column_int64(st, MN_SQLITE_SESSION_NCOLS + 1);
        fn(user, &row);
    } else if (r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "session %s not found", session_id);
    return mn__sqlite_finish(s, st, r, rc, "session lookup");
}

static mn_status messages_read(mn_store_tx *tx, int64_t sid, const char *session_id, int64_t after_seq,
                               int64_t upto_seq, size_t limit, mn_store_message_fn fn, void *user)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    int64_t pos[2];
    seq_range(sid, after_seq == INT64_MAX ? after_seq : after_seq + 1, upto_seq, pos);
    mn_status rc = mn__sqlite_query(s, SQL_MESSAGES_READ, &st,
                                    ARGS(ARG_INT(pos[0]), ARG_INT(pos[1]),
                                         ARG_INT(limit > (size_t)INT64_MAX ? INT64_MAX : (int64_t)limit)));
    return rc ? rc : mn__sqlite_each_message(s, st, session_id, fn, user, "message read");
}

static mn_status title_from(mn_store_tx *tx, int64_t sid, int64_t seq)
{
    return mn__sqlite_run(TX(tx), SQL_TITLE_FROM, "title", ARGS(ARG_INT(sid), ARG_INT(seq)));
}

static mn_status meta_drop(mn_store_tx *tx, const char *key)
{
    return mn__sqlite_run(TX(tx), SQL_META_DROP, "meta delete", ARGS(ARG_TEXT(key)));
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
