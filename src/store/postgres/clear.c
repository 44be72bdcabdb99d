/*
 * clear.c — the PostgreSQL side of clearing a session's active history (mn_session_clear) and
 * of changing its turn limit after creation (mn_session_set_max_turns), each one transaction on
 * the session row locked FOR UPDATE (so an append from another node waits). Same semantics as
 * sqlite/clear.c (cleared_from, and the summaries an undo drops).
 */
#include <libpq-fe.h>
#include <stdint.h>

#include "store/postgres/pg_int.h"
#include "util/err.h"
#include "util/banned.h"

static const char SQL_LOCK[] =
    "SELECT sid, last_seq, cleared_seq, max_turns, cleared_from FROM sessions WHERE id = $1 FOR UPDATE";
/* Runs before the messages go: the oldest active one, unless an earlier clear is still undoable. */
static const char SQL_MARK_CLEARED_FROM[] =
    "UPDATE sessions SET cleared_from = coalesce((SELECT min(seq) FROM messages WHERE session_sid = $1::bigint"
    " AND active = 1), $2::bigint + 1) WHERE sid = $1::bigint AND cleared_seq = 0";
/* The summaries written since the clear folded what followed it and would hide the messages
 * brought back: they go, with an event; the next context folds again. */
static const char SQL_SUMMARIES_SINCE[] =
    "WITH gone AS (DELETE FROM summaries WHERE session_sid = $1::bigint AND covers_upto > $2::bigint RETURNING 1)"
    " INSERT INTO events (session_sid, kind, data, created_at)"
    " SELECT $1::bigint, 'summary_dropped', json_build_object('reason', 'clear_undone', 'cleared_seq', $2::bigint,"
    " 'summaries', count(*))::text, $3::bigint FROM gone HAVING count(*) > 0";
static const char SQL_DEACTIVATE_ALL[] =
    "UPDATE messages SET active = 0 WHERE session_sid = $1::bigint AND active = 1";
static const char SQL_MARK_CLEARED[] =
    "UPDATE sessions SET cleared_seq = $2::bigint, inactive_count = inactive_count + $3::bigint,"
    " updated_at = $4::bigint, state = CASE WHEN $5::bigint = 1 THEN NULL ELSE state END WHERE sid = $1::bigint";
/* The first message of the $2+1-th newest turn, inactive ones counted: a turn starts at every
 * message but a tool result, which belongs to the call before it (threads.c counts the same). */
static const char SQL_OLDEST_TURN_ALL[] =
    "SELECT seq FROM messages WHERE session_sid = $1::bigint AND role <> 'tool'"
    " ORDER BY seq DESC LIMIT 1 OFFSET $2::bigint";
static const char SQL_REACTIVATE[] =
    "UPDATE messages SET active = 1 WHERE session_sid = $1::bigint AND active = 0 AND seq <= $2::bigint"
    " AND seq >= $3::bigint";
static const char SQL_MARK_UNCLEARED[] =
    "UPDATE sessions SET cleared_seq = 0, cleared_from = 0, updated_at = $2::bigint,"
    " inactive_count = (SELECT count(*) FROM messages WHERE session_sid = $1::bigint AND active = 0)"
    " WHERE sid = $1::bigint";
static const char SQL_SET_TURNS[] = "UPDATE sessions SET max_turns = $2::bigint, updated_at = $3::bigint WHERE sid = $1::bigint";

struct clear_arg {
    const char *id;
    int undo, with_state, set_turns, trim_delete;
    int64_t now_ms, max_turns, changed;
};

static mn_status exec(struct pg_conn *c, const char *sql, const struct pg_params *p, const char *what,
                      int64_t *changed)
{
    PGresult *r = NULL;
    mn_status rc = mn_pg_query(c, sql, p, 0, what, &r);
    if (rc)
        return rc;
    if (changed)
        *changed = mn_pg_changes(r);
    PQclear(r);
    return MN_OK;
}

static mn_status clear_body(struct pg_conn *c, void *arg)
{
    struct clear_arg *a = arg;
    struct pg_params p;
    mn_pg_params_init(&p);
    mn_pg_text(&p, a->id);
    PGresult *r = NULL;
    mn_status rc = mn_pg_query(c, SQL_LOCK, &p, 0, "clear", &r);
    if (rc)
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return mn__err(MN_NOTFOUND, "session %s not found", a->id);
    }
    int64_t sid = mn_pg_col_i64(r, 0, 0), last_seq = mn_pg_col_i64(r, 0, 1), cleared = mn_pg_col_i64(r, 0, 2),
            max_turns = mn_pg_col_i64(r, 0, 3), cleared_from = mn_pg_col_i64(r, 0, 4);
    PQclear(r);
    a->changed = 0;
    if (a->set_turns) {
        mn_pg_params_init(&p);
        mn_pg_i64(&p, sid);
        mn_pg_i64(&p, a->max_turns);
        mn_pg_i64(&p, a->now_ms);
        if ((rc = exec(c, SQL_SET_TURNS, &p, "turn limit", NULL)))
            return rc;
        return a->max_turns > 0 ? mn_pg_trim_turns(c, sid, a->max_turns, a->trim_delete) : MN_OK;
    }
    if (!a->undo) {
        mn_pg_params_init(&p);
        mn_pg_i64(&p, sid);
        mn_pg_i64(&p, last_seq);
        if ((rc = exec(c, SQL_MARK_CLEARED_FROM, &p, "clear", NULL)))
            return rc;
        mn_pg_params_init(&p);
        mn_pg_i64(&p, sid);
        if ((rc = exec(c, SQL_DEACTIVATE_ALL, &p, "clear", &a->changed)))
            return rc;
        mn_pg_params_init(&p);
        mn_pg_i64(&p, sid);
        mn_pg_i64(&p, last_seq);
        mn_pg_i64(&p, a->changed);
        mn_pg_i64(&p, a->now_ms);
        mn_pg_i64(&p, a->with_state ? 1 : 0);
        return exec(c, SQL_MARK_CLEARED, &p, "clear", NULL);
    }
    if (cleared == 0)
        return MN_OK; /* nothing cleared: nothing to undo */
    int64_t keep_from = 0;
    if (max_turns > 0) { /* what the turn limit keeps, counting the cleared turns again */
        mn_pg_params_init(&p);
        mn_pg_i64(&p, sid);
        mn_pg_i64(&p, max_turns - 1);
        if ((rc = mn_pg_query(c, SQL_OLDEST_TURN_ALL, &p, 0, "clear", &r)))
            return rc;
        keep_from = PQntuples(r) == 1 ? mn_pg_col_i64(r, 0, 0) : 0;
        PQclear(r);
    }
    if (keep_from < cleared_from) /* a message out before the first clear stays out */
        keep_from = cleared_from;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, sid);
    mn_pg_i64(&p, cleared);
    mn_pg_i64(&p, keep_from);
    if ((rc = exec(c, SQL_REACTIVATE, &p, "clear", &a->changed)))
        return rc;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, sid);
    mn_pg_i64(&p, a->now_ms);
    if ((rc = exec(c, SQL_MARK_UNCLEARED, &p, "clear", NULL)))
        return rc;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, sid);
    mn_pg_i64(&p, cleared);
    mn_pg_i64(&p, a->now_ms);
    return exec(c, SQL_SUMMARIES_SINCE, &p, "clear", NULL);
}

mn_status mn_pg_op_session_clear(mn_store *st, const char *id, int undo, int with_state, int64_t now_ms,
                                 int64_t *changed)
{
    struct clear_arg a = {id, undo, with_state, 0, 0, now_ms, 0, 0};
    mn_status rc = mn_pg_run(PG(st), PG_WRITE, clear_body, &a);
    *changed = rc ? 0 : a.changed;
    return rc;
}

mn_status mn_pg_op_session_set_turns(mn_store *st, const char *id, int64_t max_turns, int trim_delete,
                                     int64_t now_ms)
{
    struct clear_arg a = {id, 0, 0, 1, trim_delete, now_ms, max_turns, 0};
    return mn_pg_run(PG(st), PG_WRITE, clear_body, &a);
}
