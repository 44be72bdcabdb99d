/*
 * summaries.c — the SQLite side of context governance: global summaries (the latest row of
 * `summaries` per session), the append-only `events` log, the per-session fold claim on
 * sessions.busy_until, pinning, and the reads the strategies need (pinned units, tool tokens).
 * Design notes: docs/context.md; the tables are described in schema.h (version 2).
 */
#include <stdlib.h>
#include <string.h>

#include "store/records.h"
#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

/* ---- summaries ------------------------------------------------------------------------------- */

static const char SQL_SUMMARY_LATEST[] =
    "SELECT id, covers_upto, folded, text, tokens, model, summarizer, created_at FROM summaries"
    " WHERE session_sid = ?1 AND covers_upto > (SELECT cleared_seq FROM sessions WHERE sid = ?1)"
    " ORDER BY id DESC LIMIT 1";
static const char SQL_SUMMARY_INSERT[] =
    "INSERT INTO summaries (session_sid, covers_upto, folded, text, tokens, model, summarizer, created_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

static mn_status summary_latest_locked(struct sqlite_store *s, const char *session_id, mn_summary **out)
{
    int64_t sid = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_session_query(s, session_id, SQL_SUMMARY_LATEST, &st, &sid, 0, NULL);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        mn_summary row = {sqlite3_column_int64(st, 0), session_id, sqlite3_column_int64(st, 1),
                          sqlite3_column_int64(st, 2), mn__sqlite_col_text(st, 3), sqlite3_column_int64(st, 4),
                          mn__sqlite_col_text(st, 5), mn__sqlite_col_text(st, 6), sqlite3_column_int64(st, 7)};
        if (!(*out = mn__records_summary_copy(&row)))
            rc = mn__nomem();
    } else if (r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "session %s has no summary yet", session_id);
    return mn__sqlite_finish(s, st, r, rc, "summary");
}

mn_status mn__sqlite_op_summary_latest(mn_store *st, const char *session_id, mn_summary **out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    *out = NULL;
    LOCKED(s, summary_latest_locked(s, session_id, out));
}

static mn_status summary_insert_locked(struct sqlite_store *s, const char *session_id, const mn_summary *sm,
                                       int64_t *id)
{
    int64_t sid = 0;
    mn_status rc = mn__sqlite_session_sid(s, session_id, &sid, NULL);
    if (rc || (rc = mn__sqlite_run(s, SQL_SUMMARY_INSERT, "summary insert",
                                   ARGS(ARG_INT(sid), ARG_INT(sm->covers_upto), ARG_INT(sm->folded),
                                        ARG_TEXT(sm->text ? sm->text : ""), ARG_INT(sm->tokens), ARG_TEXT(sm->model),
                                        ARG_TEXT(sm->summarizer ? sm->summarizer : "none"), ARG_INT(sm->created_at)))))
        return rc;
    if (id)
        *id = sqlite3_last_insert_rowid(s->db);
    return MN_OK;
}

mn_status mn__sqlite_op_summary_insert(mn_store *st, const char *session_id, const mn_summary *sm, int64_t *id)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, summary_insert_locked(s, session_id, sm, id));
}

/* ---- events ---------------------------------------------------------------------------------- */

static const char SQL_EVENT_INSERT[] =
    "INSERT INTO events (session_sid, kind, data, created_at) VALUES (?1, ?2, ?3, ?4)";
static const char SQL_EVENTS_LIST[] =
    "SELECT id, kind, data, created_at FROM events WHERE session_sid = ?1 ORDER BY id DESC LIMIT ?2";

static mn_status event_insert_locked(struct sqlite_store *s, const char *session_id, const char *kind,
                                     const char *data, int64_t now_ms)
{
    int64_t sid = 0;
    mn_status rc = mn__sqlite_session_sid(s, session_id, &sid, NULL);
    return rc ? rc
              : mn__sqlite_run(s, SQL_EVENT_INSERT, "event insert",
                               ARGS(ARG_INT(sid), ARG_TEXT(kind), ARG_TEXT(data ? data : "{}"), ARG_INT(now_ms)));
}

mn_status mn__sqlite_op_event_insert(mn_store *st, const char *session_id, const char *kind, const char *data,
                                    int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, event_insert_locked(s, session_id, kind, data, now_ms));
}

static mn_status events_list_locked(struct sqlite_store *s, const char *session_id, size_t limit,
                                    int (*fn)(void *user, int64_t id, const char *kind, const char *data, int64_t at),
                                    void *user)
{
    int64_t sid = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_session_query(s, session_id, SQL_EVENTS_LIST, &st, &sid, ARGS(ARG_INT(limit)));
    if (rc)
        return rc;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(user, sqlite3_column_int64(st, 0), mn__sqlite_col_text(st, 1), mn__sqlite_col_text(st, 2),
               sqlite3_column_int64(st, 3)))
            break;
    return mn__sqlite_finish(s, st, r, rc, "events");
}

mn_status mn__sqlite_op_events_list(mn_store *st, const char *session_id, size_t limit,
                                   int (*fn)(void *user, int64_t id, const char *kind, const char *data, int64_t at),
                                   void *user)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, events_list_locked(s, session_id, limit, fn, user));
}

/* ---- the fold claim -------------------------------------------------------------------------- */

static const char SQL_BUSY_CLAIM[] = "UPDATE sessions SET busy_until = ?3 WHERE id = ?1 AND busy_until < ?2";
static const char SQL_BUSY_GET[] = "SELECT busy_until FROM sessions WHERE id = ?1";
static const char SQL_BUSY_RELEASE[] = "UPDATE sessions SET busy_until = 0 WHERE id = ?1 AND busy_until = ?2";

static mn_status busy_claim_locked(struct sqlite_store *s, const char *session_id, int64_t now_ms, int64_t until_ms,
                                   int *claimed, int64_t *busy_until)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_run(s, SQL_BUSY_CLAIM, "summary claim",
                                  ARGS(ARG_TEXT(session_id), ARG_INT(now_ms), ARG_INT(until_ms)));
    if (rc)
        return rc;
    *claimed = sqlite3_changes(s->db) == 1;
    *busy_until = until_ms;
    if (*claimed || (rc = mn__sqlite_query(s, SQL_BUSY_GET, &st, ARGS(ARG_TEXT(session_id)))))
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW)
        *busy_until = sqlite3_column_int64(st, 0);
    else if (r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "session %s not found", session_id);
    return mn__sqlite_finish(s, st, r, rc, "summary claim");
}

mn_status mn__sqlite_op_busy_claim(mn_store *st, const char *session_id, int64_t now_ms, int64_t until_ms,
                                  int *claimed, int64_t *busy_until)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    *claimed = 0;
    LOCKED(s, busy_claim_locked(s, session_id, now_ms, until_ms, claimed, busy_until));
}

mn_status mn__sqlite_op_busy_release(mn_store *st, const char *session_id, int64_t until_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, mn__sqlite_run(s, SQL_BUSY_RELEASE, "summary release", ARGS(ARG_TEXT(session_id), ARG_INT(until_ms))));
}

/* ---- pins and reads for the strategies ------------------------------------------------------- */

static const char SQL_PIN[] = "UPDATE messages SET pinned = ?2 WHERE id = ?1"
                              " AND (?3 IS NULL OR session_sid = (SELECT sid FROM sessions WHERE id = ?3))";

static mn_status pin_locked(struct sqlite_store *s, const char *session_id, int64_t message_id, int pinned)
{
    mn_status rc =
        mn__sqlite_run(s, SQL_PIN, "pin", ARGS(ARG_INT(message_id), ARG_INT(pinned ? 1 : 0), ARG_TEXT(session_id)));
    if (rc)
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return session_id ? mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id,
                                    session_id)
                          : mn__err(MN_NOTFOUND, "message %lld not found", (long long)message_id);
    return MN_OK;
}

mn_status mn__sqlite_op_message_pin(mn_store *st, const char *session_id, int64_t message_id, int pinned)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, pin_locked(s, session_id, message_id, pinned));
}

/* The unit of a kept message runs from the nearest non-tool message at or before it to the
 * message before the next non-tool message. */
static const char SQL_PINNED_UNITS[] =
    "WITH p AS (SELECT seq FROM messages WHERE " MN_SQLITE_UPTO_SEQ("pos", "?1", "?2") " AND active = 1"
    "           AND (pinned = 1 OR role = 'system')),"
    " u AS (SELECT DISTINCT (SELECT m.seq FROM messages m WHERE " MN_SQLITE_UPTO_SEQ("m.pos", "?1", "p.seq")
    " AND m.role <> 'tool' ORDER BY m.pos DESC LIMIT 1) AS s FROM p),"
    " r AS MATERIALIZED (SELECT s, coalesce((SELECT m.seq FROM messages m WHERE " MN_SQLITE_AFTER_SEQ("m.pos", "?1", "u.s")
    " AND m.role <> 'tool' ORDER BY m.pos LIMIT 1), 4294967296) AS e FROM u WHERE s IS NOT NULL)"
    " SELECT DISTINCT " MN_SQLITE_MESSAGE_COLS " FROM r JOIN messages ON " MN_SQLITE_UPTO_SEQ("messages.pos", "?1", "r.e - 1")
    " AND messages.seq >= r.s WHERE messages.active = 1 AND messages.seq <= ?2"
    " ORDER BY messages.pos";

static mn_status pinned_units_locked(struct sqlite_store *s, const char *session_id, int64_t upto_seq,
                                     mn_store_message_fn fn, void *user)
{
    int64_t sid = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_session_query(s, session_id, SQL_PINNED_UNITS, &st, &sid, ARGS(ARG_INT(upto_seq)));
    return rc ? rc : mn__sqlite_each_message(s, st, session_id, fn, user, "pinned messages");
}

mn_status mn__sqlite_op_pinned_units(mn_store *st, const char *session_id, int64_t upto_seq, mn_store_message_fn fn,
                                    void *user)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, pinned_units_locked(s, session_id, upto_seq, fn, user));
}

static const char SQL_TOOL_TOKENS[] =
    "SELECT coalesce(sum(tokens), 0) FROM messages WHERE " MN_SQLITE_AFTER_SEQ("pos", "?1", "?2")
    " AND active = 1 AND role = 'tool'";

static mn_status tool_tokens_locked(struct sqlite_store *s, const char *session_id, int64_t after_seq, int64_t *sum)
{
    int64_t sid = 0;
    mn_status rc = mn__sqlite_session_sid(s, session_id, &sid, NULL);
    return rc ? rc
              : mn__sqlite_int(s, SQL_TOOL_TOKENS, "tool tokens", sum, NULL, ARGS(ARG_INT(sid), ARG_INT(after_seq)));
}

mn_status mn__sqlite_op_tool_tokens(mn_store *st, const char *session_id, int64_t after_seq, int64_t *sum)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    *sum = 0;
    LOCKED(s, tool_tokens_locked(s, session_id, after_seq, sum));
}
