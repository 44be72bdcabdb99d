/*
 * checkpoints.c — the PostgreSQL side of graph checkpoints (store_checkpoint.h): the rows of
 * checkpoints and checkpoint_writes (schema.h, version 12), which belong to a session and go with
 * it. Same semantics as sqlite/checkpoints.c; a scan reads a page of rows at a time, so that a
 * caller that stops after the newest does not receive every checkpoint's data.
 */
#include <libpq-fe.h>
#include <stdint.h>
#include <string.h>

#include "store/postgres/pg_int.h"
#include "store/store_checkpoint.h"
#include "util/err.h"
#include "util/banned.h"

/* ---- put ------------------------------------------------------------------------------------- */

/* No row inserted or updated: no such session. An update, not a delete and insert, so that the
 * checkpoint's pending writes stay. */
static const char SQL_PUT[] =
    "INSERT INTO checkpoints (session_sid, checkpoint_ns, id, parent_id, type, data, metadata, created_at)"
    " SELECT sid, $2, $3, $4, $5, $6, $7, $8::bigint FROM sessions WHERE id = $1"
    " ON CONFLICT (session_sid, checkpoint_ns, id) DO UPDATE SET parent_id = excluded.parent_id,"
    " type = excluded.type, data = excluded.data, metadata = excluded.metadata, created_at = excluded.created_at";

static mn_status put_body(struct pg_conn *c, void *arg)
{
    const mn_checkpoint *cp = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, cp->session_id);
    mn__pg_text(&p, cp->checkpoint_ns);
    mn__pg_text(&p, cp->id);
    mn__pg_text(&p, cp->parent_id);
    mn__pg_text(&p, cp->type);
    mn__pg_text(&p, cp->data);
    mn__pg_text(&p, cp->metadata);
    mn__pg_i64(&p, cp->created_at);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_PUT, &p, 0, "checkpoint put", &r);
    if (rc)
        return rc;
    if (mn__pg_changes(r) == 0)
        rc = mn__err(MN_NOTFOUND, "session %s not found", cp->session_id);
    PQclear(r);
    return rc;
}

static mn_status op_put(mn_store *st, const mn_checkpoint *cp)
{
    return mn__pg_run(PG(st), PG_WRITE, put_body, (void *)cp);
}

/* ---- pending writes -------------------------------------------------------------------------- */

/* One statement: the write stored when its session exists, the answer whether it does. The
 * checkpoint need not be stored yet (the writes of a step may come before it). */
#define WRITE_PUT(conflict)                                                                                          \
    "WITH s AS (SELECT sid FROM sessions WHERE id = $1),"                                                            \
    " ins AS (INSERT INTO checkpoint_writes (session_sid, checkpoint_ns, checkpoint_id, task_id, idx, channel, type," \
    "   value, task_path) SELECT sid, $2, $3, $4, $5::bigint, $6, $7, $8, coalesce($9, '') FROM s"                    \
    "   ON CONFLICT (session_sid, checkpoint_ns, checkpoint_id, task_id, idx) DO " conflict ")"                     \
    " SELECT count(*) FROM s"
static const char SQL_WRITE_REPLACE[] = WRITE_PUT("UPDATE SET channel = excluded.channel, type = excluded.type,"
                                                  " value = excluded.value, task_path = excluded.task_path");
static const char SQL_WRITE_KEEP[] = WRITE_PUT("NOTHING");

struct write_arg {
    const char *session_id, *checkpoint_ns, *checkpoint_id;
    const mn_checkpoint_write *w;
    int replace;
    mn_store_checkpoint_write_fn fn;
    void *user;
};

static mn_status write_put_body(struct pg_conn *c, void *arg)
{
    struct write_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, a->session_id);
    mn__pg_text(&p, a->checkpoint_ns);
    mn__pg_text(&p, a->checkpoint_id);
    mn__pg_text(&p, a->w->task_id);
    mn__pg_i64(&p, a->w->idx);
    mn__pg_text(&p, a->w->channel);
    mn__pg_text(&p, a->w->type);
    mn__pg_text(&p, a->w->value);
    mn__pg_text(&p, a->w->task_path);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, a->replace ? SQL_WRITE_REPLACE : SQL_WRITE_KEEP, &p, 0, "checkpoint write", &r);
    if (rc)
        return rc;
    if (mn__pg_col_i64(r, 0, 0) == 0)
        rc = mn__err(MN_NOTFOUND, "session %s not found", a->session_id);
    PQclear(r);
    return rc;
}

/* Inside begin…commit the pinned connection's transaction; outside, one of its own. */
static mn_status op_write_put(mn_store *st, const char *session_id, const char *checkpoint_ns,
                              const char *checkpoint_id, const mn_checkpoint_write *w, int replace)
{
    struct write_arg a = {session_id, checkpoint_ns, checkpoint_id, w, replace, NULL, NULL};
    return mn__pg_run(PG(st), PG_WRITE, write_put_body, &a);
}

static const char SQL_WRITES[] =
    "SELECT w.task_id, w.task_path, w.idx, w.channel, w.type, w.value FROM sessions s"
    " JOIN checkpoint_writes w ON w.session_sid = s.sid"
    " WHERE s.id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = $3 ORDER BY w.task_path, w.task_id, w.idx";

static mn_status writes_body(struct pg_conn *c, void *arg)
{
    struct write_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, a->session_id);
    mn__pg_text(&p, a->checkpoint_ns);
    mn__pg_text(&p, a->checkpoint_id);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_WRITES, &p, 0, "checkpoint writes", &r);
    if (rc)
        return rc;
    for (int i = 0; i < PQntuples(r); i++) {
        mn_checkpoint_write w = {mn__pg_col_text(r, i, 0), mn__pg_col_text(r, i, 1), mn__pg_col_i64(r, i, 2),
                                 mn__pg_col_text(r, i, 3), mn__pg_col_text(r, i, 4), mn__pg_col_text(r, i, 5)};
        c->visible = 1;
        if (a->fn(a->user, &w))
            break;
    }
    PQclear(r);
    return MN_OK;
}

static mn_status op_writes(mn_store *st, const char *session_id, const char *checkpoint_ns,
                           const char *checkpoint_id, mn_store_checkpoint_write_fn fn, void *user)
{
    struct write_arg a = {session_id, checkpoint_ns, checkpoint_id, NULL, 0, fn, user};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, writes_body, &a);
}

/* ---- scan ------------------------------------------------------------------------------------ */

/* A page of the matching checkpoints in the scan's order, after the last row of the page before
 * ($6-$8: its id, session id and checkpoint_ns; NULL for the first page): one session's (through
 * its rows of the primary key), a namespace's (checkpoints_by_id or its sessions, as the planner
 * finds cheaper), or every one (ns NULL). NULL filters match anything; names compare as bytes
 * (COLLATE "C"). Every parameter is named in each text, so that each has its type. */
#define SCAN_PAGE(sessions)                                                                                          \
    "SELECT s.key, s.id, c.checkpoint_ns, c.id, c.parent_id, c.type, c.data, c.metadata, c.created_at"               \
    " FROM sessions s JOIN checkpoints c ON c.session_sid = s.sid WHERE " sessions                                   \
    " AND ($3::text IS NULL OR c.checkpoint_ns = $3) AND ($4::text IS NULL OR c.id = $4)"                            \
    " AND ($5::text IS NULL OR c.id < $5) AND ($6::text IS NULL OR c.id < $6 OR (c.id = $6"                          \
    " AND (s.id COLLATE \"C\" > $7 OR (s.id = $7 AND c.checkpoint_ns > $8))))"                                       \
    " ORDER BY c.id DESC, s.id COLLATE \"C\", c.checkpoint_ns LIMIT $9::bigint"
static const char SQL_SCAN_SESSION[] = SCAN_PAGE("s.id = $2 AND ($1::text IS NULL OR s.namespace = $1)");
static const char SQL_SCAN_NS[] = SCAN_PAGE("s.namespace = $1 AND $2::text IS NULL");
static const char SQL_SCAN_ALL[] = SCAN_PAGE("$1::text IS NULL AND $2::text IS NULL");
#define SCAN_FIRST_PAGE 16 /* then 8 times more each page, up to SCAN_MAX_PAGE */
#define SCAN_MAX_PAGE 1024

struct scan_arg {
    const mn_store_checkpoint_scan *q;
    mn_store_checkpoint_fn fn;
    void *user;
};

/* Hands a page's rows to fn; *stop: fn asked to stop. */
static void scan_emit(struct pg_conn *c, PGresult *r, struct scan_arg *a, int *stop)
{
    for (int i = 0; i < PQntuples(r) && !*stop; i++) {
        mn_checkpoint cp = {.thread = mn__pg_col_text(r, i, 0),
                            .session_id = mn__pg_col_text(r, i, 1),
                            .checkpoint_ns = mn__pg_col_text(r, i, 2),
                            .id = mn__pg_col_text(r, i, 3),
                            .parent_id = mn__pg_col_text(r, i, 4),
                            .type = mn__pg_col_text(r, i, 5),
                            .data = mn__pg_col_text(r, i, 6),
                            .metadata = mn__pg_col_text(r, i, 7),
                            .created_at = mn__pg_col_i64(r, i, 8)};
        c->visible = 1;
        *stop = a->fn(a->user, &cp) != 0;
    }
}

/* Each page is a statement of its own (a snapshot of its own), as the message scans: a page
 * below the first shows the checkpoints as they were then, still in order without repeats. */
static mn_status scan_body(struct pg_conn *c, void *arg)
{
    struct scan_arg *a = arg;
    const mn_store_checkpoint_scan *q = a->q;
    PGresult *prev = NULL; /* the page before: its last row is where this one starts */
    int64_t page = SCAN_FIRST_PAGE;
    mn_status rc = MN_OK;
    for (int stop = 0; !stop;) {
        int last = prev ? PQntuples(prev) - 1 : -1;
        struct pg_params p;
        mn__pg_params_init(&p);
        mn__pg_text(&p, q->ns);
        mn__pg_text(&p, q->session_id);
        mn__pg_text(&p, q->checkpoint_ns);
        mn__pg_text(&p, q->id);
        mn__pg_text(&p, q->before);
        mn__pg_text(&p, prev ? mn__pg_col_text(prev, last, 3) : NULL);
        mn__pg_text(&p, prev ? mn__pg_col_text(prev, last, 1) : NULL);
        mn__pg_text(&p, prev ? mn__pg_col_text(prev, last, 2) : NULL);
        mn__pg_i64(&p, page);
        PGresult *r = NULL;
        const char *sql = q->session_id ? SQL_SCAN_SESSION : q->ns ? SQL_SCAN_NS : SQL_SCAN_ALL;
        rc = mn__pg_query(c, sql, &p, 0, "checkpoint scan", &r);
        PQclear(prev);
        prev = NULL;
        if (rc)
            break;
        scan_emit(c, r, a, &stop);
        if (PQntuples(r) < page)
            stop = 1;
        prev = r;
        page = page * 8 > SCAN_MAX_PAGE ? SCAN_MAX_PAGE : page * 8;
    }
    PQclear(prev);
    return rc;
}

static mn_status op_scan(mn_store *st, const mn_store_checkpoint_scan *q, mn_store_checkpoint_fn fn, void *user)
{
    struct scan_arg a = {q, fn, user};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, scan_body, &a);
}

/* ---- remove ---------------------------------------------------------------------------------- */

static const char SQL_REMOVE_WRITES[] =
    "DELETE FROM checkpoint_writes WHERE session_sid = (SELECT sid FROM sessions WHERE id = $1)";
static const char SQL_REMOVE[] = "DELETE FROM checkpoints WHERE session_sid = (SELECT sid FROM sessions WHERE id = $1)";

struct remove_arg {
    const char *session_id;
    int64_t removed;
};

static mn_status remove_body(struct pg_conn *c, void *arg)
{
    struct remove_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, a->session_id);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_REMOVE_WRITES, &p, 0, "checkpoint remove", NULL);
    if (rc || (rc = mn__pg_query(c, SQL_REMOVE, &p, 0, "checkpoint remove", &r)))
        return rc;
    a->removed = mn__pg_changes(r);
    PQclear(r);
    return MN_OK;
}

static mn_status op_remove(mn_store *st, const char *session_id, int64_t *removed)
{
    struct remove_arg a = {session_id, 0};
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, remove_body, &a);
    *removed = rc ? 0 : a.removed;
    return rc;
}

const struct mn_store_checkpoint_ops mn_pg_checkpoint_ops = {
    .put = op_put,
    .write_put = op_write_put,
    .scan = op_scan,
    .writes = op_writes,
    .remove = op_remove,
};
