/*
 * summaries.c — the PostgreSQL side of context governance: global summaries (the latest row of
 * `summaries` per session), the append-only `events` log, the per-session fold claim on
 * sessions.busy_until (a conditional UPDATE, so it holds across nodes as well as threads),
 * pinning, and the reads the strategies need. Same semantics as sqlite/summaries.c.
 *
 * A session's summaries and events are ordered by their column n (schema.h version 14), not by
 * id: on a distributed PostgreSQL (Citus) nodes draw ids from ranges of their own, so id order
 * is not the order of the writes. A writer takes n = the session's largest + 1 while it holds
 * the session row's lock, so the writers of one session take turns and n follows commit order.
 */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_int.h"
#include "store/records.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/banned.h"

/* The session row, locked until the transaction ends (see the top of the file). */
static const char SQL_SESSION_LOCK[] = "SELECT sid FROM sessions WHERE id = $1 FOR UPDATE";

/* Locks the row of session `id` (MN_NOTFOUND without one); *sid gets its internal id. */
static mn_status session_lock(struct pg_conn *c, const char *id, int64_t *sid)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_session_row(c, SQL_SESSION_LOCK, id, "session lock", &r);
    if (rc)
        return rc;
    *sid = mn__pg_col_i64(r, 0, 0);
    PQclear(r);
    return MN_OK;
}

/* ---- summaries ------------------------------------------------------------------------------- */

/* One statement (one round trip): no row when the session is missing, a NULL summary when it
 * has none. */
static const char SQL_SUMMARY_LATEST[] =
    "SELECT x.id, x.covers_upto, x.folded, x.text, x.tokens, x.model, x.summarizer, x.created_at FROM sessions s"
    " LEFT JOIN LATERAL (SELECT id, covers_upto, folded, text, tokens, model, summarizer, created_at FROM summaries"
    " WHERE session_sid = s.sid AND covers_upto > s.cleared_seq ORDER BY n DESC LIMIT 1) x ON true WHERE s.id = $1";
/* Under the session row's lock (session_lock): n is the session's largest + 1. */
static const char SQL_SUMMARY_INSERT[] =
    "INSERT INTO summaries (session_sid, n, covers_upto, folded, text, tokens, model, summarizer, created_at)"
    " SELECT $1::bigint, coalesce(max(n), 0) + 1, $2::bigint, $3::bigint, $4::text, $5::bigint, $6::text, $7::text,"
    " $8::bigint FROM summaries WHERE session_sid = $1::bigint RETURNING id";

struct summary_arg {
    const char *session_id;
    mn_summary **out;
    const mn_summary *in;
    int64_t id;
};

static mn_status summary_latest_body(struct pg_conn *c, void *arg)
{
    struct summary_arg *a = arg;
    PGresult *r = NULL;
    mn_status rc = mn__pg_session_row(c, SQL_SUMMARY_LATEST, a->session_id, "summary", &r);
    if (rc)
        return rc;
    if (!PQgetisnull(r, 0, 0)) {
        mn_summary row = {mn__pg_col_i64(r, 0, 0), a->session_id, mn__pg_col_i64(r, 0, 1), mn__pg_col_i64(r, 0, 2),
                          mn__pg_col_text(r, 0, 3), mn__pg_col_i64(r, 0, 4), mn__pg_col_text(r, 0, 5),
                          mn__pg_col_text(r, 0, 6), mn__pg_col_i64(r, 0, 7)};
        if (!(*a->out = mn__records_summary_copy(&row)))
            rc = mn__nomem();
    } else
        rc = mn__err(MN_NOTFOUND, "session %s has no summary yet", a->session_id);
    PQclear(r);
    return rc;
}

mn_status mn__pg_op_summary_latest(mn_store *st, const char *session_id, mn_summary **out)
{
    *out = NULL;
    struct summary_arg a = {session_id, out, NULL, 0};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, summary_latest_body, &a);
}

static mn_status summary_insert_body(struct pg_conn *c, void *arg)
{
    struct summary_arg *a = arg;
    const mn_summary *sm = a->in;
    int64_t sid = 0;
    mn_status rc = session_lock(c, a->session_id, &sid);
    if (rc)
        return rc;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, sid);
    mn__pg_i64(&p, sm->covers_upto);
    mn__pg_i64(&p, sm->folded);
    mn__pg_text(&p, sm->text ? sm->text : "");
    mn__pg_i64(&p, sm->tokens);
    mn__pg_text(&p, sm->model);
    mn__pg_text(&p, sm->summarizer ? sm->summarizer : "none");
    mn__pg_i64(&p, sm->created_at);
    return mn__pg_one_i64(c, SQL_SUMMARY_INSERT, &p, "summary insert", &a->id);
}

mn_status mn__pg_op_summary_insert(mn_store *st, const char *session_id, const mn_summary *sm, int64_t *id)
{
    struct summary_arg a = {session_id, NULL, sm, 0};
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, summary_insert_body, &a);
    if (!rc && id)
        *id = a.id;
    return rc;
}

/* ---- events ---------------------------------------------------------------------------------- */

/* Under the session row's lock, as SQL_SUMMARY_INSERT. */
static const char SQL_EVENT_INSERT[] =
    "INSERT INTO events (session_sid, n, kind, data, created_at) SELECT $1::bigint, coalesce(max(n), 0) + 1,"
    " $2::text, $3::text, $4::bigint FROM events WHERE session_sid = $1::bigint";
static const char SQL_EVENTS_LIST[] =
    "SELECT id, kind, data, created_at FROM events WHERE session_sid = $1::bigint ORDER BY n DESC LIMIT $2::bigint";

struct event_arg {
    const char *session_id, *kind, *data;
    int64_t now_ms;
    size_t limit;
    int (*fn)(void *user, int64_t id, const char *kind, const char *data, int64_t at);
    void *user;
};

/* The caller holds the session row's lock: rows.c's writers have locked or updated the row
 * first (edit.c, turns.c), event_insert_body takes it. */
mn_status mn__pg_event_add(struct pg_conn *c, int64_t sid, const char *kind, const char *data, int64_t now_ms,
                          const char *what)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, sid);
    mn__pg_text(&p, kind);
    mn__pg_text(&p, data);
    mn__pg_i64(&p, now_ms);
    return mn__pg_query(c, SQL_EVENT_INSERT, &p, 0, what, NULL);
}

static mn_status event_insert_body(struct pg_conn *c, void *arg)
{
    struct event_arg *a = arg;
    int64_t sid = 0;
    mn_status rc = session_lock(c, a->session_id, &sid);
    return rc ? rc : mn__pg_event_add(c, sid, a->kind, a->data ? a->data : "{}", a->now_ms, "event insert");
}

mn_status mn__pg_op_event_insert(mn_store *st, const char *session_id, const char *kind, const char *data,
                                int64_t now_ms)
{
    struct event_arg a = {session_id, kind, data, now_ms, 0, NULL, NULL};
    return mn__pg_run(PG(st), PG_WRITE, event_insert_body, &a);
}

static mn_status event_row(void *arg, PGresult *r, int i, int *stop)
{
    struct event_arg *a = arg;
    *stop = a->fn(a->user, mn__pg_col_i64(r, i, 0), mn__pg_col_text(r, i, 1), mn__pg_col_text(r, i, 2),
                  mn__pg_col_i64(r, i, 3));
    return MN_OK;
}

static mn_status events_list_body(struct pg_conn *c, void *arg)
{
    struct event_arg *a = arg;
    struct pg_params p;
    mn_status rc = mn__pg_sid_params(c, a->session_id, &p);
    if (rc)
        return rc;
    mn__pg_size(&p, a->limit);
    return mn__pg_each(c, SQL_EVENTS_LIST, &p, 0, "events", event_row, a);
}

mn_status mn__pg_op_events_list(mn_store *st, const char *session_id, size_t limit,
                               int (*fn)(void *user, int64_t id, const char *kind, const char *data, int64_t at),
                               void *user)
{
    struct event_arg a = {session_id, NULL, NULL, 0, limit, fn, user};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, events_list_body, &a);
}

/* ---- the fold claim -------------------------------------------------------------------------- */

static const char SQL_BUSY_CLAIM[] =
    "UPDATE sessions SET busy_until = $3::bigint WHERE id = $1 AND busy_until < $2::bigint";
static const char SQL_BUSY_GET[] = "SELECT busy_until FROM sessions WHERE id = $1";
static const char SQL_BUSY_RELEASE[] = "UPDATE sessions SET busy_until = 0 WHERE id = $1 AND busy_until = $2::bigint";

struct busy_arg {
    const char *session_id;
    int64_t now_ms, until_ms;
    int claimed;
    int64_t busy_until;
};

static mn_status busy_claim_body(struct pg_conn *c, void *arg)
{
    struct busy_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, a->session_id);
    mn__pg_i64(&p, a->now_ms);
    mn__pg_i64(&p, a->until_ms);
    int64_t changed = 0;
    mn_status rc = mn__pg_exec(c, SQL_BUSY_CLAIM, &p, "summary claim", &changed);
    if (rc)
        return rc;
    a->claimed = changed == 1;
    a->busy_until = a->until_ms;
    if (a->claimed)
        return MN_OK;
    PGresult *r = NULL;
    if ((rc = mn__pg_session_row(c, SQL_BUSY_GET, a->session_id, "summary claim", &r)))
        return rc;
    a->busy_until = mn__pg_col_i64(r, 0, 0);
    PQclear(r);
    return MN_OK;
}

mn_status mn__pg_op_busy_claim(mn_store *st, const char *session_id, int64_t now_ms, int64_t until_ms, int *claimed,
                              int64_t *busy_until)
{
    struct busy_arg a = {session_id, now_ms, until_ms, 0, until_ms};
    *claimed = 0;
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, busy_claim_body, &a);
    *claimed = rc ? 0 : a.claimed;
    *busy_until = a.busy_until;
    return rc;
}

mn_status mn__pg_op_busy_release(mn_store *st, const char *session_id, int64_t until_ms)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, session_id);
    mn__pg_i64(&p, until_ms);
    return mn__pg_run_exec(PG(st), PG_WRITE, SQL_BUSY_RELEASE, &p, "summary release", NULL);
}

/* ---- pins and reads for the strategies ------------------------------------------------------- */

static const char SQL_PIN[] = "UPDATE messages SET pinned = $2::integer WHERE id = $1::bigint"
                              " AND ($3::text IS NULL OR session_sid = (SELECT sid FROM sessions WHERE id = $3::text))";

/* session_id NULL: the message of any session. */
mn_status mn__pg_op_message_pin(mn_store *st, const char *session_id, int64_t message_id, int pinned)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, message_id);
    mn__pg_i64(&p, pinned ? 1 : 0);
    mn__pg_text(&p, session_id);
    int64_t changed = 0;
    mn_status rc = mn__pg_run_exec(PG(st), PG_WRITE, SQL_PIN, &p, "pin", &changed);
    if (rc || changed)
        return rc;
    return session_id ? mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id, session_id)
                      : mn__err(MN_NOTFOUND, "message %lld not found", (long long)message_id);
}

/* The unit of a kept message runs from the nearest non-tool message at or before it to the
 * message before the next non-tool message. */
static const char SQL_PINNED_UNITS[] =
    "WITH p AS (SELECT seq FROM messages WHERE session_sid = $1::bigint AND active = 1 AND seq <= $2::bigint"
    "           AND (pinned = 1 OR role = 'system')),"
    " u AS (SELECT DISTINCT (SELECT max(m.seq) FROM messages m WHERE m.session_sid = $1::bigint AND m.seq <= p.seq"
    "                        AND m.role <> 'tool') AS s FROM p),"
    " r AS MATERIALIZED (SELECT s, coalesce((SELECT min(m.seq) FROM messages m WHERE m.session_sid = $1::bigint"
    "                    AND m.seq > u.s AND m.role <> 'tool'), 9223372036854775807) AS e FROM u WHERE s IS NOT NULL)"
    " SELECT DISTINCT " MN_PG_MESSAGE_COLS " FROM r JOIN messages ON messages.session_sid = $1::bigint"
    " AND messages.seq >= r.s AND messages.seq < r.e WHERE messages.active = 1 AND messages.seq <= $2::bigint"
    " ORDER BY seq";

struct units_arg {
    const char *session_id;
    int64_t upto_seq;
    mn_store_message_fn fn;
    void *user;
};

static mn_status unit_row(void *arg, PGresult *r, int i, int *stop)
{
    struct units_arg *a = arg;
    mn_message row;
    mn_status rc = mn__pg_row_message(r, i, 0, a->session_id, &row);
    if (!rc)
        *stop = a->fn(a->user, &row);
    return rc;
}

static mn_status pinned_units_body(struct pg_conn *c, void *arg)
{
    struct units_arg *a = arg;
    struct pg_params p;
    mn_status rc = mn__pg_sid_params(c, a->session_id, &p);
    if (rc)
        return rc;
    mn__pg_i64(&p, a->upto_seq);
    return mn__pg_each(c, SQL_PINNED_UNITS, &p, 0, "pinned messages", unit_row, a);
}

mn_status mn__pg_op_pinned_units(mn_store *st, const char *session_id, int64_t upto_seq, mn_store_message_fn fn,
                                void *user)
{
    struct units_arg a = {session_id, upto_seq, fn, user};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, pinned_units_body, &a);
}

static const char SQL_TOOL_TOKENS[] =
    "SELECT coalesce(sum(tokens), 0) FROM messages WHERE session_sid = $1::bigint AND active = 1 AND role = 'tool'"
    " AND seq > $2::bigint";

struct tool_arg {
    const char *session_id;
    int64_t after_seq, sum;
};

static mn_status tool_tokens_body(struct pg_conn *c, void *arg)
{
    struct tool_arg *a = arg;
    struct pg_params p;
    mn_status rc = mn__pg_sid_params(c, a->session_id, &p);
    if (rc)
        return rc;
    mn__pg_i64(&p, a->after_seq);
    return mn__pg_one_i64(c, SQL_TOOL_TOKENS, &p, "tool tokens", &a->sum);
}

mn_status mn__pg_op_tool_tokens(mn_store *st, const char *session_id, int64_t after_seq, int64_t *sum)
{
    struct tool_arg a = {session_id, after_seq, 0};
    mn_status rc = mn__pg_run(PG(st), PG_AUTOCOMMIT, tool_tokens_body, &a);
    *sum = rc ? 0 : a.sum;
    return rc;
}
