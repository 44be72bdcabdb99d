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

static mn_status op_put(mn_store *st, const mn_checkpoint *cp)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_texts(&p, 7, (const char *[]){cp->session_id, cp->checkpoint_ns, cp->id, cp->parent_id, cp->type,
                                         cp->data, cp->metadata});
    mn__pg_i64(&p, cp->created_at);
    int64_t changed = 0;
    mn_status rc = mn__pg_run_exec(PG(st), PG_WRITE, SQL_PUT, &p, "checkpoint put", &changed);
    return rc || changed ? rc : mn__err(MN_NOTFOUND, "session %s not found", cp->session_id);
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

/* Inside begin…commit the pinned connection's transaction; outside, one of its own. */
static mn_status op_write_put(mn_store *st, const char *session_id, const char *checkpoint_ns,
                              const char *checkpoint_id, const mn_checkpoint_write *w, int replace)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_texts(&p, 4, (const char *[]){session_id, checkpoint_ns, checkpoint_id, w->task_id});
    mn__pg_i64(&p, w->idx);
    mn__pg_texts(&p, 4, (const char *[]){w->channel, w->type, w->value, w->task_path});
    int64_t found = 0;
    mn_status rc = mn__pg_run_i64(PG(st), PG_WRITE, replace ? SQL_WRITE_REPLACE : SQL_WRITE_KEEP, &p,
                                  "checkpoint write", &found);
    return rc || found ? rc : mn__err(MN_NOTFOUND, "session %s not found", session_id);
}

static const char SQL_WRITES[] =
    "SELECT w.task_id, w.task_path, w.idx, w.channel, w.type, w.value FROM sessions s"
    " JOIN checkpoint_writes w ON w.session_sid = s.sid"
    " WHERE s.id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = $3 ORDER BY w.task_path, w.task_id, w.idx";

struct writes_arg {
    mn_store_checkpoint_write_fn fn;
    void *user;
};

static mn_status write_row(void *arg, PGresult *r, int i, int *stop)
{
    struct writes_arg *a = arg;
    mn_checkpoint_write w = {mn__pg_col_text(r, i, 0), mn__pg_col_text(r, i, 1), mn__pg_col_i64(r, i, 2),
                             mn__pg_col_text(r, i, 3), mn__pg_col_text(r, i, 4), mn__pg_col_text(r, i, 5)};
    *stop = a->fn(a->user, &w);
    return MN_OK;
}

static mn_status op_writes(mn_store *st, const char *session_id, const char *checkpoint_ns,
                           const char *checkpoint_id, mn_store_checkpoint_write_fn fn, void *user)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_texts(&p, 3, (const char *[]){session_id, checkpoint_ns, checkpoint_id});
    struct writes_arg a = {fn, user};
    return mn__pg_run_each(PG(st), SQL_WRITES, &p, 0, "checkpoint writes", write_row, &a);
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
#define SCAN_MAX_PAGE 1024

struct scan_arg {
    const mn_store_checkpoint_scan *q;
    mn_store_checkpoint_fn fn;
    void *user;
};

static mn_status checkpoint_row(void *arg, PGresult *r, int i, int *stop)
{
    struct scan_arg *a = arg;
    mn_checkpoint cp = {.thread = mn__pg_col_text(r, i, 0),
                        .session_id = mn__pg_col_text(r, i, 1),
                        .checkpoint_ns = mn__pg_col_text(r, i, 2),
                        .id = mn__pg_col_text(r, i, 3),
                        .parent_id = mn__pg_col_text(r, i, 4),
                        .type = mn__pg_col_text(r, i, 5),
                        .data = mn__pg_col_text(r, i, 6),
                        .metadata = mn__pg_col_text(r, i, 7),
                        .created_at = mn__pg_col_i64(r, i, 8)};
    *stop = a->fn(a->user, &cp) != 0;
    return MN_OK;
}

static const char *scan_page(void *arg, struct pg_params *p, const PGresult *prev, int last, int64_t n)
{
    const mn_store_checkpoint_scan *q = ((struct scan_arg *)arg)->q;
    mn__pg_params_init(p);
    mn__pg_texts(p, 5, (const char *[]){q->ns, q->session_id, q->checkpoint_ns, q->id, q->before});
    mn__pg_text(p, prev ? mn__pg_col_text(prev, last, 3) : NULL);
    mn__pg_text(p, prev ? mn__pg_col_text(prev, last, 1) : NULL);
    mn__pg_text(p, prev ? mn__pg_col_text(prev, last, 2) : NULL);
    mn__pg_i64(p, n);
    return q->session_id ? SQL_SCAN_SESSION : q->ns ? SQL_SCAN_NS : SQL_SCAN_ALL;
}

/* Each page is a statement of its own (a snapshot of its own), as the message scans: a page
 * below the first shows the checkpoints as they were then, still in order without repeats. */
static mn_status scan_body(struct pg_conn *c, void *arg)
{
    static const struct pg_pages scan = {"checkpoint scan", 0, SCAN_MAX_PAGE, scan_page, checkpoint_row};
    return mn__pg_pages(c, &scan, arg);
}

static mn_status op_scan(mn_store *st, const mn_store_checkpoint_scan *q, mn_store_checkpoint_fn fn, void *user)
{
    struct scan_arg a = {q, fn, user};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, scan_body, &a);
}

/* ---- remove ---------------------------------------------------------------------------------- */

/* The session's pending writes and checkpoints, in one statement: the rows it counts are the
 * checkpoints. */
static const char SQL_REMOVE[] =
    "WITH s AS (SELECT sid FROM sessions WHERE id = $1),"
    " w AS (DELETE FROM checkpoint_writes WHERE session_sid = (SELECT sid FROM s))"
    " DELETE FROM checkpoints WHERE session_sid = (SELECT sid FROM s)";

static mn_status op_remove(mn_store *st, const char *session_id, int64_t *removed)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, session_id);
    return mn__pg_run_exec(PG(st), PG_WRITE, SQL_REMOVE, &p, "checkpoint remove", removed);
}

const struct mn_store_checkpoint_ops mn_pg_checkpoint_ops = {
    .put = op_put,
    .write_put = op_write_put,
    .scan = op_scan,
    .writes = op_writes,
    .remove = op_remove,
};
