/*
 * clear.c — the SQLite side of clearing a session's active history (mn_session_clear) and of
 * changing its turn limit after creation (mn_session_set_max_turns). Clearing marks every active
 * message inactive — kept and searchable, out of every context — and records the newest seq it
 * covered in sessions.cleared_seq, which also hides the summaries written before it, and the
 * oldest in cleared_from (at the first clear since the last undo: the messages active then).
 * Undoing brings back cleared_from .. cleared_seq, those the turn limit would keep (its turns: any
 * message, a tool call with its results one) — never a message the limit had moved out before
 * the clear — and drops the summaries written since the clear (they folded what followed it,
 * and would hide the messages brought back: the next context folds again). Same semantics as
 * postgres/clear.c.
 */
#include <sqlite3.h>
#include <stdint.h>

#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

static const char SQL_DEACTIVATE_ALL[] = "UPDATE messages SET active = 0 WHERE " MN_SQLITE_IN_SESSION("pos", "?1") " AND active = 1";
static const char SQL_MARK_CLEARED[] =
    "UPDATE sessions SET cleared_seq = ?2, inactive_count = inactive_count + ?3, updated_at = ?4,"
    " state = CASE WHEN ?5 THEN NULL ELSE state END WHERE sid = ?1";
/* Runs before the messages go: the oldest active one, unless an earlier clear is still undoable. */
static const char SQL_MARK_CLEARED_FROM[] =
    "UPDATE sessions SET cleared_from = coalesce((SELECT min(seq) FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1")
    " AND active = 1), ?2 + 1) WHERE sid = ?1 AND cleared_seq = 0";
static const char SQL_CLEAR_INFO[] = "SELECT cleared_seq, max_turns, cleared_from FROM sessions WHERE sid = ?1";
static const char SQL_SUMMARIES_SINCE[] = "DELETE FROM summaries WHERE session_sid = ?1 AND covers_upto > ?2";
static const char SQL_SUMMARIES_DROPPED[] =
    "INSERT INTO events (session_sid, kind, data, created_at) VALUES (?1, 'summary_dropped',"
    " json_object('reason', 'clear_undone', 'cleared_seq', ?2, 'summaries', ?3), ?4)";
/* The first message of the ?2+1-th newest turn, inactive ones counted: a turn starts at every
 * message but a tool result, which belongs to the call before it (threads.c counts the same). */
static const char SQL_OLDEST_TURN_ALL[] =
    "SELECT seq FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1") " AND role <> 'tool' ORDER BY pos DESC"
    " LIMIT 1 OFFSET ?2";
static const char SQL_REACTIVATE[] =
    "UPDATE messages SET active = 1 WHERE pos BETWEEN " MN_SQLITE_POS("?1", "?3") " AND " MN_SQLITE_POS("?1", "?2")
    " AND active = 0";
static const char SQL_MARK_UNCLEARED[] =
    "UPDATE sessions SET cleared_seq = 0, cleared_from = 0, updated_at = ?2,"
    " inactive_count = (SELECT count(*) FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1") " AND active = 0)"
    " WHERE sid = ?1";
static const char SQL_SET_TURNS[] = "UPDATE sessions SET max_turns = ?2, updated_at = ?3 WHERE sid = ?1";

/* Runs one prepared statement to completion; *changed (optional) gets the rows it changed. */
static mn_status run(struct sqlite_store *s, sqlite3_stmt *st, const char *what, int64_t *changed)
{
    int r = sqlite3_step(st);
    mn_sqlite_done(st);
    if (r != SQLITE_DONE)
        return mn_sqlite_fail(s, r, what);
    if (changed)
        *changed = sqlite3_changes(s->db);
    return MN_OK;
}

/* A single integer a query returns (dflt when it returns no row). */
static mn_status one_int(struct sqlite_store *s, sqlite3_stmt *st, int col, int64_t dflt, int64_t *out,
                         const char *what)
{
    int r = sqlite3_step(st);
    *out = r == SQLITE_ROW ? sqlite3_column_int64(st, col) : dflt;
    mn_sqlite_done(st);
    return r == SQLITE_ROW || r == SQLITE_DONE ? MN_OK : mn_sqlite_fail(s, r, what);
}

static mn_status clear_txn(struct sqlite_store *s, int64_t sid, int64_t last_seq, int with_state, int64_t now_ms,
                           int64_t *changed)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_stmt(s, SQL_MARK_CLEARED_FROM, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, last_seq);
    if ((rc = run(s, st, "clear", NULL)) || (rc = mn_sqlite_stmt(s, SQL_DEACTIVATE_ALL, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    if ((rc = run(s, st, "clear", changed)) || (rc = mn_sqlite_stmt(s, SQL_MARK_CLEARED, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, last_seq);
    sqlite3_bind_int64(st, 3, *changed);
    sqlite3_bind_int64(st, 4, now_ms);
    sqlite3_bind_int(st, 5, with_state);
    return run(s, st, "clear", NULL);
}

static mn_status unclear_txn(struct sqlite_store *s, int64_t sid, int64_t now_ms, int64_t *changed)
{
    sqlite3_stmt *st = NULL;
    int64_t cleared = 0, max_turns = 0, keep_from = 0, cleared_from = 0;
    mn_status rc = mn_sqlite_stmt(s, SQL_CLEAR_INFO, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        cleared = sqlite3_column_int64(st, 0);
        max_turns = sqlite3_column_int64(st, 1);
        cleared_from = sqlite3_column_int64(st, 2);
    }
    mn_sqlite_done(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return mn_sqlite_fail(s, r, "clear");
    if (cleared == 0)
        return MN_OK; /* nothing cleared: nothing to undo */
    if (max_turns > 0) { /* what the turn limit keeps, counting the cleared turns again */
        if ((rc = mn_sqlite_stmt(s, SQL_OLDEST_TURN_ALL, &st)))
            return rc;
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, max_turns - 1);
        if ((rc = one_int(s, st, 0, 0, &keep_from, "clear")))
            return rc;
    }
    if (keep_from < cleared_from) /* a message out before the first clear stays out */
        keep_from = cleared_from;
    if ((rc = mn_sqlite_stmt(s, SQL_REACTIVATE, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, cleared);
    sqlite3_bind_int64(st, 3, keep_from);
    if ((rc = run(s, st, "clear", changed)) || (rc = mn_sqlite_stmt(s, SQL_MARK_UNCLEARED, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, now_ms);
    int64_t dropped = 0;
    if ((rc = run(s, st, "clear", NULL)) || (rc = mn_sqlite_stmt(s, SQL_SUMMARIES_SINCE, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, cleared);
    if ((rc = run(s, st, "clear", &dropped)) || dropped == 0 || (rc = mn_sqlite_stmt(s, SQL_SUMMARIES_DROPPED, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, cleared);
    sqlite3_bind_int64(st, 3, dropped);
    sqlite3_bind_int64(st, 4, now_ms);
    return run(s, st, "event", NULL);
}

static mn_status clear_locked(struct sqlite_store *s, const char *id, int undo, int with_state, int64_t now_ms,
                              int64_t *changed)
{
    int64_t sid = 0, last_seq = 0;
    mn_status rc = mn_sqlite_begin_write(s);
    if (rc)
        return rc;
    if (!(rc = mn_sqlite_session_sid(s, id, &sid, &last_seq)))
        rc = undo ? unclear_txn(s, sid, now_ms, changed) : clear_txn(s, sid, last_seq, with_state, now_ms, changed);
    if (rc) {
        mn_sqlite_rollback(s);
        return rc;
    }
    return mn_sqlite_commit(s);
}

mn_status mn_sqlite_op_session_clear(mn_store *st, const char *id, int undo, int with_state, int64_t now_ms,
                                     int64_t *changed)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    *changed = 0;
    LOCKED(s, clear_locked(s, id, undo, with_state, now_ms, changed));
}

static mn_status set_turns_locked(struct sqlite_store *s, const char *id, int64_t max_turns, int trim_delete,
                                  int64_t now_ms)
{
    int64_t sid = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn_sqlite_begin_write(s);
    if (rc)
        return rc;
    if (!(rc = mn_sqlite_session_sid(s, id, &sid, NULL)) && !(rc = mn_sqlite_stmt(s, SQL_SET_TURNS, &st))) {
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, max_turns);
        sqlite3_bind_int64(st, 3, now_ms);
        rc = run(s, st, "turn limit", NULL);
    }
    if (!rc && max_turns > 0)
        rc = mn_sqlite_trim_turns(s, sid, max_turns, trim_delete);
    if (rc) {
        mn_sqlite_rollback(s);
        return rc;
    }
    return mn_sqlite_commit(s);
}

mn_status mn_sqlite_op_session_set_turns(mn_store *st, const char *id, int64_t max_turns, int trim_delete,
                                         int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, set_turns_locked(s, id, max_turns, trim_delete, now_ms));
}
