/*
 * messages.c — the PostgreSQL side of sessions and messages: session rows, appends (one
 * transaction per append, the session row locked FOR UPDATE so that seq stays gapless and unique
 * when several nodes append to one session), group commit in libpq pipeline mode (the session
 * locks and the messages' ids in one round trip, the inserts queued with COMMIT: see mn__pg_run),
 * history reads (one statement each), export/import, single-message deletes and session
 * updates. Same semantics as sqlite/sqlite.c and sqlite/edit.c; why it is written this way:
 * pg_int.h.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_int.h"
#include "store/records.h"
#include "store/store_append.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

#define SESSION_COLS MN_PG_SESSION_COLS
#define MESSAGE_COLS MN_PG_MESSAGE_COLS

/* ---- sessions -------------------------------------------------------------------------------- */

static const char SQL_SESSION_INSERT[] =
    "INSERT INTO sessions (id, namespace, title, system_prompt, metadata, tool_name, parent_id, created_at,"
    " updated_at, expires_at, ttl_ms, max_turns, cleared_seq, cleared_from, key)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8::bigint, $9::bigint, $10::bigint, $11::bigint, $12::bigint, $13::bigint,"
    " $14::bigint, $15)"
    " ON CONFLICT DO NOTHING RETURNING sid"; /* no row: the id or the key taken (the trigger sessions_claim,
                                             * schema.h 16 → 17), no error to abort the transaction */
static const char SQL_SESSION_GET[] = "SELECT " SESSION_COLS " FROM sessions WHERE id = $1";
static const char SQL_SESSION_BY_KEY[] = "SELECT " SESSION_COLS " FROM sessions WHERE namespace = $1 AND key = $2";
/* Listing and pruning go by updated_minute first (schema 9: the indexed minute of updated_at,
 * which lets an append update its session in place), then by updated_at: the same order. */
static const char SQL_SESSION_LIST_NS[] =
    "SELECT " SESSION_COLS " FROM sessions WHERE namespace = $1"
    " ORDER BY updated_minute DESC, updated_at DESC, sid DESC LIMIT $2::bigint OFFSET $3::bigint";
static const char SQL_SESSION_LIST_ALL[] =
    "SELECT " SESSION_COLS " FROM sessions"
    " ORDER BY updated_minute DESC, updated_at DESC, sid DESC LIMIT $1::bigint OFFSET $2::bigint";
static const char SQL_SESSION_DELETE[] = "DELETE FROM sessions WHERE id = $1";
static const char SQL_SESSION_PRUNE[] =
    "DELETE FROM sessions WHERE updated_minute <= $1::bigint / 60000 AND updated_at < $1::bigint RETURNING id";

/* Inserts a session row; *sid its internal id. MN_CONFLICT when the id is taken. */
static mn_status insert_session(struct pg_conn *c, const mn_session *in, int64_t *sid)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, in->id);
    mn__pg_text(&p, in->ns);
    mn__pg_text(&p, in->title);
    mn__pg_text(&p, in->system_prompt);
    mn__pg_text(&p, in->metadata && strcmp(in->metadata, "{}") != 0 ? in->metadata : NULL);
    mn__pg_text(&p, in->tool_name);
    mn__pg_text(&p, in->parent_id);
    mn__pg_i64(&p, in->created_at);
    mn__pg_i64(&p, in->updated_at);
    mn__pg_i64(&p, in->expires_at);
    mn__pg_i64(&p, in->ttl_ms);
    mn__pg_i64(&p, in->max_turns);
    mn__pg_i64(&p, in->cleared_seq);
    mn__pg_i64(&p, in->cleared_from);
    mn__pg_text(&p, in->key);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_SESSION_INSERT, &p, 0, "session insert", &r);
    if (rc)
        return rc;
    if (PQntuples(r) == 1) {
        if (sid)
            *sid = mn__pg_col_i64(r, 0, 0);
    } else if (in->key)
        rc = mn__err(MN_CONFLICT, "session %s, or one keyed '%.200s' in namespace %s, already exists", in->id, in->key,
                     in->ns);
    else
        rc = mn__err(MN_CONFLICT, "session %s already exists", in->id);
    PQclear(r);
    return rc;
}

static mn_status session_insert_body(struct pg_conn *c, void *arg) { return insert_session(c, arg, NULL); }

mn_status mn__pg_op_session_insert(mn_store *st, const mn_session *in)
{
    return mn__pg_run(PG(st), PG_WRITE, session_insert_body, (void *)in);
}

struct get_arg {
    const char *id_or_ns, *key; /* key NULL: by id */
    mn_session **out;
};

static mn_status session_get_body(struct pg_conn *c, void *arg)
{
    struct get_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, a->id_or_ns);
    if (a->key)
        mn__pg_text(&p, a->key);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, a->key ? SQL_SESSION_BY_KEY : SQL_SESSION_GET, &p, 0, "session get", &r);
    if (rc)
        return rc;
    if (PQntuples(r) == 1) {
        mn_session row;
        mn__pg_row_session(r, 0, &row);
        *a->out = mn__records_session_copy(&row);
        rc = *a->out ? MN_OK : mn__nomem();
    } else if (a->key)
        rc = mn__err(MN_NOTFOUND, "session '%.200s' not found", a->key);
    else
        rc = mn__err(MN_NOTFOUND, "session %s not found", a->id_or_ns);
    PQclear(r);
    return rc;
}

mn_status mn__pg_op_session_get(mn_store *st, const char *id, mn_session **out)
{
    struct get_arg a = {id, NULL, out};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, session_get_body, &a);
}

mn_status mn__pg_op_session_by_key(mn_store *st, const char *ns, const char *key, mn_session **out)
{
    struct get_arg a = {ns, key, out};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, session_get_body, &a);
}

struct list_arg {
    const char *ns;
    size_t limit, offset;
    mn_sessions **out;
};

static mn_status session_list_body(struct pg_conn *c, void *arg)
{
    struct list_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    if (a->ns)
        mn__pg_text(&p, a->ns);
    mn__pg_size(&p, a->limit);
    mn__pg_size(&p, a->offset);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, a->ns ? SQL_SESSION_LIST_NS : SQL_SESSION_LIST_ALL, &p, 0, "session list", &r);
    if (rc)
        return rc;
    struct mn_sessions_impl *l = mn__records_session_list_new();
    for (int i = 0; l && i < PQntuples(r); i++) {
        mn_session row, *it = mn__records_session_push(l);
        mn__pg_row_session(r, i, &row);
        if (!it || mn__records_session_fill(&l->arena, it, &row)) {
            mn__records_session_list_free(&l->pub);
            l = NULL;
        }
    }
    PQclear(r);
    if (!l)
        return mn__nomem();
    *a->out = &l->pub;
    return MN_OK;
}

mn_status mn__pg_op_session_list(mn_store *st, const char *ns, size_t limit, size_t offset, mn_sessions **out)
{
    struct list_arg a = {ns, limit, offset, out};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, session_list_body, &a);
}

struct delete_arg {
    const char *sql, *text;
    int64_t num, changes;
    struct mn_strings_impl *ids; /* the deleted ids (a RETURNING id delete), or NULL */
};

static mn_status delete_body(struct pg_conn *c, void *arg)
{
    struct delete_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    if (a->text)
        mn__pg_text(&p, a->text);
    else
        mn__pg_i64(&p, a->num);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, a->sql, &p, 0, "delete", &r);
    if (rc)
        return rc;
    a->changes = mn__pg_changes(r);
    if (a->ids) { /* the body may run again after a deadlock: start the list afresh */
        mn_strings_free(&a->ids->pub);
        if (!(a->ids = calloc(1, sizeof *a->ids)))
            rc = mn__nomem();
        for (int i = 0; !rc && i < PQntuples(r); i++)
            if (mn__records_strings_push(a->ids, mn__pg_col_text(r, i, 0)))
                rc = mn__nomem();
    }
    PQclear(r);
    return rc;
}

/* Runs a session delete; *ids (may be NULL) gets the deleted ids. */
mn_status mn__pg_delete_sessions(struct pg_store *s, const char *sql, int64_t num, int64_t *n, mn_strings **ids)
{
    struct delete_arg a = {sql, NULL, num, 0, NULL};
    if (ids && !(a.ids = calloc(1, sizeof *a.ids)))
        return mn__nomem();
    mn_status rc = mn__pg_run(s, PG_WRITE, delete_body, &a);
    *n = rc ? 0 : a.changes;
    if (rc && a.ids)
        mn_strings_free(&a.ids->pub);
    else if (ids)
        *ids = &a.ids->pub;
    if (rc && ids)
        *ids = NULL;
    return rc;
}

mn_status mn__pg_op_session_delete(mn_store *st, const char *id)
{
    struct delete_arg a = {SQL_SESSION_DELETE, id, 0, 0, NULL};
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, delete_body, &a);
    if (!rc && a.changes == 0)
        rc = mn__err(MN_NOTFOUND, "session %s not found", id);
    return rc;
}

mn_status mn__pg_op_session_prune(mn_store *st, int64_t before_ms, int64_t *deleted, mn_strings **ids)
{
    return mn__pg_delete_sessions(PG(st), SQL_SESSION_PRUNE, before_ms, deleted, ids);
}

/* ---- appends --------------------------------------------------------------------------------- */

/* What an append reads of its session (read_append_row). */
#define APPEND_ROW "sid, last_seq, expires_at, max_turns, namespace, ttl_ms, (title IS NOT NULL)::int"
static const char SQL_SESSION_FOR_APPEND[] = "SELECT " APPEND_ROW " FROM sessions WHERE id = $1 FOR UPDATE";
static const char SQL_MESSAGE_INSERT[] =
    "INSERT INTO messages (session_sid, seq, role, content, tool_calls, tool_call_id, name, tool_name, model, files,"
    " metadata, idem_key, tokens, pinned, created_at)"
    " VALUES ($1::bigint, $2::bigint, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint, $14::integer,"
    " $15::bigint) RETURNING id";
static const char SQL_MESSAGE_BY_IDEM[] =
    "SELECT " MESSAGE_COLS " FROM messages WHERE session_sid = $1::bigint AND idem_key = $2";
/* The counters an append adds ($16-$20 below, $3-$7 in SQL_SESSION_APPENDED: bind_counters), and
 * what it decided (src/engine/append.c): a NULL title and a 0 expiry leave them. */
#define APPENDED(n, t, e, u, ts, x)                                                                              \
    " message_count = message_count + " n "::bigint, token_count = token_count + " t "::bigint,"                   \
    " updated_at = " e "::bigint, turn_count = turn_count + " u "::bigint, title = coalesce(" ts ", title),"      \
    " title_seq = CASE WHEN " ts "::text IS NULL THEN title_seq ELSE " x "::bigint END,"
/* One message and its session's counters (what the append added, this message included) in one
 * statement. */
static const char SQL_MESSAGE_INSERT_APPENDED[] =
    "WITH m AS (INSERT INTO messages (session_sid, seq, role, content, tool_calls, tool_call_id, name, tool_name,"
    " model, files, metadata, idem_key, tokens, pinned, created_at)"
    " VALUES ($1::bigint, $2::bigint, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint, $14::integer,"
    " $15::bigint) RETURNING id)"
    " UPDATE sessions SET last_seq = $2::bigint," APPENDED("$16", "$17", "$18", "$20", "$19", "$21")
    " expires_at = CASE WHEN $22::bigint > 0 THEN $22::bigint ELSE expires_at END WHERE sid = $1::bigint"
    " RETURNING (SELECT id FROM m)";
/* SQL_MESSAGE_INSERT with the message's id drawn beforehand ($16). */
static const char SQL_MESSAGE_INSERT_ID[] =
    "INSERT INTO messages (session_sid, seq, role, content, tool_calls, tool_call_id, name, tool_name, model, files,"
    " metadata, idem_key, tokens, pinned, created_at, id)"
    " VALUES ($1::bigint, $2::bigint, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint, $14::integer,"
    " $15::bigint, $16::bigint)";
static const char SQL_SESSION_APPENDED[] =
    "UPDATE sessions SET last_seq = $2::bigint," APPENDED("$3", "$4", "$5", "$7", "$6", "$8")
    " expires_at = CASE WHEN $9::bigint > 0 THEN $9::bigint ELSE expires_at END WHERE sid = $1::bigint";

static void bind_message(struct pg_params *p, int64_t sid, const mn_message *m)
{
    mn__pg_i64(p, sid);
    mn__pg_i64(p, m->seq);
    mn__pg_text(p, mn_role_name(m->role));
    mn__pg_text(p, m->content);
    mn__pg_text(p, m->tool_calls);
    mn__pg_text(p, m->tool_call_id);
    mn__pg_text(p, m->name);
    mn__pg_text(p, m->tool_name);
    mn__pg_text(p, m->model);
    mn__pg_text(p, m->files);
    mn__pg_text(p, m->metadata && strcmp(m->metadata, "{}") != 0 ? m->metadata : NULL);
    mn__pg_text(p, m->idempotency_key);
    mn__pg_i64(p, m->tokens);
    mn__pg_i64(p, m->pinned ? 1 : 0);
    mn__pg_i64(p, m->created_at);
}

/* ---- append primitives (store_append.h; the algorithm is src/engine/append.c) --------------- */

/* A transaction is the connection the runner borrowed. */
#define TX(tx) ((struct pg_conn *)(tx))

struct write_arg {
    mn_store_tx_body body;
    void *arg;
};

static mn_status write_body(struct pg_conn *c, void *arg)
{
    struct write_arg *w = arg;
    return w->body((mn_store_tx *)c, w->arg);
}

mn_status mn__pg_tx_run(mn_store *st, enum pg_mode mode, mn_store_tx_body body, void *arg)
{
    struct write_arg w = {body, arg};
    return mn__pg_run(PG(st), mode, write_body, &w);
}

static mn_status tx_write(mn_store *st, mn_store_tx_body body, void *arg)
{
    return mn__pg_tx_run(st, PG_PIPELINE, body, arg);
}

static mn_status tx_savepoint(mn_store_tx *tx, enum mn_store_savepoint op)
{
    static const char *const sql[] = {"SAVEPOINT mn_many", "ROLLBACK TO SAVEPOINT mn_many", "RELEASE SAVEPOINT mn_many"};
    static const char *const what[] = {"savepoint", "rollback to savepoint", "release savepoint"};
    return mn__pg_send(TX(tx), sql[op], NULL, what[op], NULL);
}

static enum mn_store_tx_state tx_state(mn_store_tx *tx)
{
    struct pg_conn *c = TX(tx);
    if (c->retry || c->broken)
        return MN_TX_DOOMED;
    return PQtransactionStatus(c->pg) == PQTRANS_INERROR ? MN_TX_ABORTED : MN_TX_OK;
}

static void tx_rerun(mn_store_tx *tx) { TX(tx)->retry = 1; }

/* Row k's APPEND_ROW columns, from column col on. */
static void read_append_row(PGresult *r, int k, int col, mn_store_append_row *out)
{
    out->held = PQgetisnull(r, k, col);
    out->sid = mn__pg_col_i64(r, k, col);
    out->last_seq = mn__pg_col_i64(r, k, col + 1);
    out->expires_at = mn__pg_col_i64(r, k, col + 2);
    out->max_turns = mn__pg_col_i64(r, k, col + 3);
    snprintf(out->ns, sizeof out->ns, "%s", PQgetvalue(r, k, col + 4));
    out->ttl_ms = mn__pg_col_i64(r, k, col + 5);
    out->titled = (int)mn__pg_col_i64(r, k, col + 6);
}

/* The session row for an append, locked until commit: appends to one session (from any node)
 * run one after the other, so seq stays gapless and idempotency checks see every earlier key. */
static mn_status tx_session_lock(mn_store_tx *tx, const char *id, mn_store_append_row *out)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, id);
    PGresult *r = NULL; /* in pipeline mode: with the id of its message (one round trip) */
    mn_status rc = mn__pg_send(TX(tx), SQL_SESSION_FOR_APPEND, &p, "session lookup", &r);
    if (!rc)
        rc = mn__pg_reserve_ids(TX(tx), 1);
    if (rc) {
        PQclear(r);
        return rc;
    }
    if (PQntuples(r) == 1)
        read_append_row(r, 0, 0, out);
    else
        rc = mn__err(MN_NOTFOUND, "session %s not found", id);
    PQclear(r);
    return rc;
}

static mn_status tx_session_create(mn_store_tx *tx, const mn_session *in, int64_t *sid)
{
    return insert_session(TX(tx), in, sid);
}

static mn_status tx_idem_find(mn_store_tx *tx, int64_t sid, const char *session_id, const char *key,
                              mn_store_message_fn fn, void *user, int *found)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, sid);
    mn__pg_text(&p, key);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(TX(tx), SQL_MESSAGE_BY_IDEM, &p, 0, "idempotency lookup", &r);
    if (rc)
        return rc;
    *found = PQntuples(r) == 1;
    if (*found) {
        mn_message row;
        if (!(rc = mn__pg_row_message(r, 0, 0, session_id, &row)))
            fn(user, &row);
    }
    PQclear(r);
    return rc;
}

/* A unique violation cannot happen with the session row locked; should it anyway (a concurrent
 * import of the same id), the runner runs the whole append again. */
static mn_status insert_failed(struct pg_conn *c, mn_status rc)
{
    if (rc == MN_CONFLICT)
        c->retry = 1;
    return rc;
}

/* Runs an INSERT … RETURNING id of message m (parameters p); sets m->id. */
static mn_status insert_message(struct pg_conn *c, const char *sql, const struct pg_params *p, mn_message *m)
{
    PGresult *r = NULL;
    mn__pg_drop_ids(c); /* this id comes after the ones drawn before */
    mn_status rc = mn__pg_query(c, sql, p, 0, "message insert", &r);
    if (rc)
        return insert_failed(c, rc);
    m->id = mn__pg_col_i64(r, 0, 0);
    PQclear(r);
    return MN_OK;
}

/* Inserts m with an id drawn beforehand when there is one left (sql_id, the id bound after p's
 * parameters; queued: no round trip), else with RETURNING id (sql). */
static mn_status insert_message_drawn(struct pg_conn *c, const char *sql, const char *sql_id, struct pg_params *p,
                                      mn_message *m)
{
    int64_t id = mn__pg_take_id(c);
    if (!id)
        return insert_message(c, sql, p, m);
    mn__pg_i64(p, id);
    mn_status rc = mn__pg_send(c, sql_id, p, "message insert", NULL);
    if (!rc)
        m->id = id;
    return rc;
}

static mn_status tx_message_insert(mn_store_tx *tx, int64_t sid, mn_message *m)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    bind_message(&p, sid, m);
    return insert_message_drawn(TX(tx), SQL_MESSAGE_INSERT, SQL_MESSAGE_INSERT_ID, &p, m);
}

/* What an append adds and decides, as seven parameters: added, tokens, now, title, users,
 * title_seq, expires_at. */
static void bind_counters(struct pg_params *p, const mn_store_appended *c)
{
    mn__pg_i64(p, c->added);
    mn__pg_i64(p, c->tokens);
    mn__pg_i64(p, c->now_ms);
    mn__pg_text(p, c->title);
    mn__pg_i64(p, c->users);
    mn__pg_i64(p, c->title_seq);
    mn__pg_i64(p, c->expires_at);
}

static mn_status tx_session_appended(mn_store_tx *tx, const mn_store_appended *c)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, c->sid);
    mn__pg_i64(&p, c->last_seq);
    bind_counters(&p, c);
    return mn__pg_send(TX(tx), SQL_SESSION_APPENDED, &p, "session update", NULL);
}

/* The fast path: the message and the counters in one statement (one round trip). In pipeline
 * mode, with an id drawn beforehand: queued, and the group's queued ones go as one statement
 * (append_rows.c; no round trip; a failure surfaces at the commit and the group runs again
 * without the pipeline). */
static mn_status tx_message_insert_appended(mn_store_tx *tx, mn_message *m, const mn_store_appended *c)
{
    int64_t id = mn__pg_take_id(TX(tx));
    if (id) { /* the group's such rows go as one statement (append_rows.c) */
        mn_status rc = mn__pg_rows_add(TX(tx), id, m, c);
        if (!rc)
            m->id = id;
        return rc;
    }
    struct pg_params p;
    mn__pg_params_init(&p);
    bind_message(&p, c->sid, m);
    bind_counters(&p, c);
    return insert_message(TX(tx), SQL_MESSAGE_INSERT_APPENDED, &p, m);
}

/* Locks every session of a group in id order before any append runs: two nodes committing
 * groups that share sessions then queue behind each other instead of deadlocking (each append
 * locking its session as it comes would take them in request order). Session ids reaching the
 * store are canonical UUIDs (checked above), so the array literal needs no quoting. */
static const char SQL_LOCK_SESSIONS[] = "SELECT id, " APPEND_ROW " FROM sessions"
                                        " WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE";
/* The same, leaving alone the rows another transaction holds: they come back with a NULL sid
 * (the session exists, but is not locked); a missing session does not come back at all. */
static const char SQL_LOCK_SESSIONS_SKIP[] =
    "WITH l AS (SELECT id, " APPEND_ROW " AS titled FROM sessions"
    " WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE SKIP LOCKED)"
    " SELECT s.id, l.sid, l.last_seq, l.expires_at, l.max_turns, l.namespace, l.ttl_ms, l.titled"
    " FROM sessions s LEFT JOIN l ON l.id = s.id WHERE s.id = ANY($1::text[])";

static mn_status tx_sessions_lock(mn_store_tx *tx, const char *const *ids, size_t n, int skip,
                                  mn_store_append_row *rows)
{
    size_t cap = 3 + n * 40, len = 0;
    char *list = malloc(cap);
    if (!list)
        return mn__nomem();
    list[len++] = '{';
    for (size_t i = 0; i < n; i++) {
        size_t idlen = strlen(ids[i]);
        if (idlen > 36 || strspn(ids[i], "0123456789abcdef-") != idlen)
            continue; /* not a canonical id: that append fails on its own */
        if (len > 1)
            list[len++] = ',';
        memcpy(list + len, ids[i], idlen);
        len += idlen;
    }
    list[len++] = '}';
    list[len] = '\0';
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, list);
    PGresult *r = NULL; /* in pipeline mode: with an id for each request's message (one round trip) */
    mn_status rc = mn__pg_send(TX(tx), skip ? SQL_LOCK_SESSIONS_SKIP : SQL_LOCK_SESSIONS, &p, "session locks", &r);
    if (!rc)
        rc = mn__pg_reserve_ids(TX(tx), n);
    free(list);
    if (rc) {
        PQclear(r);
        return rc;
    }
    for (int k = 0; k < PQntuples(r); k++)
        for (size_t i = 0; i < n; i++)
            if (strcmp(ids[i], PQgetvalue(r, k, 0)) == 0)
                read_append_row(r, k, 1, &rows[i]);
    PQclear(r);
    return MN_OK;
}

const struct mn_store_append_ops mn_pg_append_ops = {
    .write = tx_write,
    .savepoint = tx_savepoint,
    .state = tx_state,
    .rerun = tx_rerun,
    .session_lock = tx_session_lock,
    .session_create = tx_session_create,
    .idem_find = tx_idem_find,
    .message_insert = tx_message_insert,
    .session_appended = tx_session_appended,
    .message_insert_appended = tx_message_insert_appended,
    .sessions_lock = tx_sessions_lock,
};

/* ---- reads ----------------------------------------------------------------------------------- */

/* One statement each, the session's sid looked up inside it (a statement is a consistent
 * snapshot of its own: no transaction, one round trip): no row when the session is missing, one
 * with a NULL message when it has none to show. */
#define SCAN_FROM(inner, order)                                                                                     \
    "SELECT s.sid, s.expires_at, m.* FROM sessions s LEFT JOIN LATERAL (SELECT " MESSAGE_COLS " FROM messages"      \
    " WHERE session_sid = s.sid AND " inner ") m ON true WHERE s.id = $1 ORDER BY m.seq" order
/* Newest first, a page at a time below seq $2 (a window stops after the newest few: the rest of
 * a long session is never read). */
static const char SQL_MESSAGE_SCAN_DESC[] =
    SCAN_FROM("active = 1 AND seq < $2::bigint ORDER BY seq DESC LIMIT $3::bigint", " DESC");
#define SCAN_FIRST_PAGE 128 /* then 8 times more each page */
static const char SQL_HISTORY_ASC[] =
    SCAN_FROM("seq > $2::bigint AND active >= $4::integer ORDER BY seq LIMIT $3::bigint", "");
static const char SQL_HISTORY_TAIL[] =
    SCAN_FROM("seq > $2::bigint AND active >= $4::integer ORDER BY seq DESC LIMIT $3::bigint", " DESC");

#define SCAN_MESSAGE_AT 2 /* SCAN_FROM's first message column: after the session's sid and expires_at */

struct scan_arg {
    const char *session_id, *sql;
    int64_t after, limit, min_active; /* limit < 0: all */
    int64_t *expires_at;              /* not NULL: the session's, from the first page */
    mn_store_message_fn fn;
    void *user;
};

/* Rows of a message query (MESSAGE_COLS from column `at`) handed to fn in order (the callback
 * sees them after the query ran); rows whose message is NULL are skipped. *stopped: fn asked to
 * stop; *n rows handed, *last_seq the last one's seq. */
static mn_status emit_messages(struct pg_conn *c, PGresult *r, int at, const char *session_id,
                               mn_store_message_fn fn, void *user, int *stopped, int64_t *n, int64_t *last_seq)
{
    mn_status rc = MN_OK;
    *stopped = 0;
    *n = 0;
    for (int i = 0; i < PQntuples(r) && !rc; i++) {
        mn_message row;
        if (PQgetisnull(r, i, at))
            continue;
        if ((rc = mn__pg_row_message(r, i, at, session_id, &row)))
            break;
        c->visible = 1;
        ++*n;
        *last_seq = row.seq;
        if (fn(user, &row)) {
            *stopped = 1;
            break;
        }
    }
    return rc;
}

static mn_status scan_body(struct pg_conn *c, void *arg)
{
    struct scan_arg *a = arg;
    int scan = a->sql == SQL_MESSAGE_SCAN_DESC;
    int64_t below = INT64_MAX, page = SCAN_FIRST_PAGE;
    for (int first = 1;; first = 0) {
        struct pg_params p;
        mn__pg_params_init(&p);
        mn__pg_text(&p, a->session_id);
        if (scan) {
            mn__pg_i64(&p, below);
            mn__pg_i64(&p, page);
        } else {
            mn__pg_i64(&p, a->after);
            if (a->limit < 0)
                mn__pg_text(&p, NULL); /* LIMIT NULL: no limit */
            else
                mn__pg_i64(&p, a->limit);
            mn__pg_i64(&p, a->min_active);
        }
        PGresult *r = NULL;
        mn_status rc = mn__pg_query(c, a->sql, &p, 0, "message scan", &r);
        if (rc)
            return rc;
        int stopped = 0;
        int64_t n = 0;
        if (PQntuples(r) == 0) /* a later page: the session went meanwhile, nothing more to show */
            rc = first ? mn__err(MN_NOTFOUND, "session %s not found", a->session_id) : MN_OK;
        else {
            if (first && a->expires_at)
                *a->expires_at = PQgetisnull(r, 0, 1) ? 0 : mn__pg_col_i64(r, 0, 1);
            rc = emit_messages(c, r, SCAN_MESSAGE_AT, a->session_id, a->fn, a->user, &stopped, &n, &below);
        }
        PQclear(r);
        /* each page is a statement of its own (a snapshot of its own): what a page below the
         * first shows is the session as it was then, still newest first without repeats */
        if (rc || !scan || stopped || n < page)
            return rc;
        page = page < INT64_MAX / 8 ? page * 8 : page;
    }
}

mn_status mn__pg_op_scan_newest(mn_store *st, const char *session_id, mn_store_message_fn fn, void *user)
{
    struct scan_arg a = {session_id, SQL_MESSAGE_SCAN_DESC, 0, 0, 0, NULL, fn, user};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, scan_body, &a);
}

mn_status mn__pg_op_history(mn_store *st, const char *session_id, const mn_history_opts *o, int64_t *expires_at,
                            mn_messages **out)
{
    struct mn_records_collect col = {mn__records_message_list_new(), MN_OK};
    if (!col.l)
        return mn__nomem();
    int64_t limit = o->limit == 0 || o->limit > (size_t)INT64_MAX ? -1 : (int64_t)o->limit;
    int tail = o->tail && limit > 0;
    struct scan_arg a = {session_id, tail ? SQL_HISTORY_TAIL : SQL_HISTORY_ASC, o->after_seq, limit, o->all ? 0 : 1,
                         expires_at, mn__records_collect_message, &col};
    mn_status rc = mn__pg_run(PG(st), PG_AUTOCOMMIT, scan_body, &a);
    if (!rc)
        rc = col.rc;
    if (rc) {
        mn__records_message_list_free(&col.l->pub);
        return rc;
    }
    if (tail) /* read newest first; hand back oldest to newest */
        mn__records_message_list_reverse(&col.l->pub);
    *out = &col.l->pub;
    return MN_OK;
}

/* ---- export and import ----------------------------------------------------------------------- */

static const char SQL_SESSION_ALL_BY_CREATED[] =
    "SELECT " SESSION_COLS ", sid FROM sessions ORDER BY created_at, id COLLATE \"C\"";
static const char SQL_SESSION_GET_SID[] = "SELECT " SESSION_COLS ", sid FROM sessions WHERE id = $1";
static const char SQL_EXPORT_MESSAGES[] =
    "SELECT " MESSAGE_COLS " FROM messages WHERE session_sid = $1::bigint ORDER BY seq";

struct export_arg {
    const char *const *ids;
    size_t n;
    mn_store_session_fn on_session;
    mn_store_message_fn on_message;
    void *user;
};

/* One session row (SESSION_COLS then sid) and its messages, inactive ones too. */
static mn_status export_one(struct pg_conn *c, PGresult *sess, int row, struct export_arg *a)
{
    mn_session s;
    mn__pg_row_session(sess, row, &s);
    c->visible = 1;
    if (a->on_session(a->user, &s))
        return mn__err(MN_IO, "export: write failed");
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, mn__pg_col_i64(sess, row, MN_PG_SESSION_NCOLS));
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_EXPORT_MESSAGES, &p, 0, "export", &r);
    if (rc)
        return rc;
    for (int i = 0; i < PQntuples(r) && !rc; i++) {
        mn_message m;
        rc = mn__pg_row_message(r, i, 0, s.id, &m);
        if (!rc && a->on_message(a->user, &m))
            rc = mn__err(MN_IO, "export: write failed");
    }
    PQclear(r);
    return rc;
}

static mn_status export_body(struct pg_conn *c, void *arg)
{
    struct export_arg *a = arg;
    int64_t sid = 0;
    mn_status rc = MN_OK;
    for (size_t i = 0; i < a->n && !rc; i++) /* every named session must exist before a byte is written */
        rc = mn__pg_session_sid(c, a->ids[i], &sid, NULL);
    if (rc)
        return rc;
    PGresult *r = NULL;
    if (a->n == 0) {
        if ((rc = mn__pg_query(c, SQL_SESSION_ALL_BY_CREATED, NULL, 0, "export", &r)))
            return rc;
        for (int i = 0; i < PQntuples(r) && !rc; i++)
            rc = export_one(c, r, i, a);
        PQclear(r);
        return rc;
    }
    for (size_t i = 0; i < a->n && !rc; i++) {
        struct pg_params p;
        mn__pg_params_init(&p);
        mn__pg_text(&p, a->ids[i]);
        if ((rc = mn__pg_query(c, SQL_SESSION_GET_SID, &p, 0, "export", &r)))
            break;
        if (PQntuples(r) == 1)
            rc = export_one(c, r, 0, a);
        else
            rc = mn__err(MN_NOTFOUND, "session %s not found", a->ids[i]);
        PQclear(r);
    }
    return rc;
}

mn_status mn__pg_op_export_scan(mn_store *st, const char *const *ids, size_t n, mn_store_session_fn on_session,
                               mn_store_message_fn on_message, void *user)
{
    struct export_arg a = {ids, n, on_session, on_message, user};
    return mn__pg_run(PG(st), PG_SNAPSHOT, export_body, &a);
}

static mn_status import_session_body(struct pg_conn *c, void *arg)
{
    const mn_session *in = arg;
    int64_t sid = 0;
    mn_status rc = mn__pg_session_sid(c, in->id, &sid, NULL);
    if (rc != MN_NOTFOUND)
        return rc == MN_OK ? MN_NOTFOUND : rc; /* MN_NOTFOUND here: present, skipped */
    return insert_session(c, in, &sid);
}

mn_status mn__pg_op_import_session(mn_store *st, const mn_session *in, int *added)
{
    *added = 0;
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, import_session_body, (void *)in);
    if (rc == MN_NOTFOUND) {
        mn__err_clear();
        return MN_OK;
    }
    *added = rc == MN_OK;
    return rc;
}

/* Where an imported session's title came from (the engine finds it: engine/import_rows.c). */
static const char SQL_IMPORT_TITLE_FROM[] = "UPDATE sessions SET title_seq = $2::bigint WHERE id = $1";

mn_status mn__pg_op_import_title_from(mn_store *st, const char *id, int64_t seq)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, id);
    mn__pg_i64(&p, seq);
    return mn__pg_run_exec(PG(st), PG_WRITE, SQL_IMPORT_TITLE_FROM, &p, "import title", NULL);
}

static const char SQL_MESSAGE_SEQ_EXISTS[] =
    "SELECT 1 FROM messages WHERE session_sid = $1::bigint AND seq = $2::bigint";
static const char SQL_MESSAGE_ID_EXISTS[] = "SELECT 1 FROM messages WHERE id = $1::bigint";
static const char SQL_MESSAGE_IMPORT[] =
    "INSERT INTO messages (id, session_sid, seq, role, content, tool_calls, tool_call_id, name, tool_name, model,"
    " files, metadata, idem_key, tokens, pinned, created_at, active)"
    " VALUES (coalesce($16::bigint, nextval(pg_get_serial_sequence('messages', 'id'))), $1::bigint, $2::bigint,"
    " $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13::bigint, $14::integer, $15::bigint, $17::integer)";
/* An imported id above the sequence moves it on, so that new messages never take it. */
static const char SQL_MESSAGE_ID_SEQ[] =
    "SELECT setval(q.seq, $1::bigint) FROM (SELECT pg_get_serial_sequence('messages', 'id')::regclass AS seq) q"
    " WHERE $1::bigint > coalesce(pg_sequence_last_value(q.seq), 0)";
static const char SQL_SESSION_IMPORTED_MESSAGE[] =
    "UPDATE sessions SET last_seq = greatest(last_seq, $2::bigint), message_count = message_count + 1,"
    " token_count = token_count + $3::bigint, turn_count = turn_count + $4::bigint,"
    " inactive_count = inactive_count + $5::bigint WHERE sid = $1::bigint";

static mn_status exists(struct pg_conn *c, const char *sql, int64_t a, int64_t b, int with_b, int *yes)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, a);
    if (with_b)
        mn__pg_i64(&p, b);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, sql, &p, 0, "lookup", &r);
    if (!rc) {
        *yes = PQntuples(r) > 0;
        PQclear(r);
    }
    return rc;
}

struct import_arg {
    const mn_message *m;
    int added;
};

static mn_status import_message_body(struct pg_conn *c, void *arg)
{
    struct import_arg *a = arg;
    const mn_message *m = a->m;
    int64_t sid = 0;
    int taken = 0;
    a->added = 0;
    mn_status rc = mn__pg_session_sid(c, m->session_id, &sid, NULL);
    if (!rc)
        rc = exists(c, SQL_MESSAGE_SEQ_EXISTS, sid, m->seq, 1, &taken);
    if (rc || taken)
        return rc;
    if ((rc = exists(c, SQL_MESSAGE_ID_EXISTS, m->id, 0, 0, &taken)))
        return rc;
    struct pg_params p;
    mn__pg_params_init(&p);
    bind_message(&p, sid, m);
    if (taken) /* keep the exported id when it is free, else take a new one */
        mn__pg_text(&p, NULL);
    else
        mn__pg_i64(&p, m->id);
    mn__pg_i64(&p, m->active ? 1 : 0);
    if ((rc = mn__pg_query(c, SQL_MESSAGE_IMPORT, &p, 0, "message import", NULL)))
        return rc;
    if (!taken) {
        mn__pg_params_init(&p);
        mn__pg_i64(&p, m->id);
        if ((rc = mn__pg_query(c, SQL_MESSAGE_ID_SEQ, &p, 0, "message import", NULL)))
            return rc;
    }
    mn__pg_params_init(&p);
    mn__pg_i64(&p, sid);
    mn__pg_i64(&p, m->seq);
    mn__pg_i64(&p, m->tokens);
    mn__pg_i64(&p, m->role == MN_ROLE_USER);
    mn__pg_i64(&p, !m->active);
    if ((rc = mn__pg_query(c, SQL_SESSION_IMPORTED_MESSAGE, &p, 0, "session update", NULL)))
        return rc;
    a->added = 1;
    return MN_OK;
}

mn_status mn__pg_op_import_message(mn_store *st, const mn_message *m, int *added)
{
    struct import_arg a = {m, 0};
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, import_message_body, &a);
    *added = rc ? 0 : a.added;
    return rc;
}

/* ---- session updates ------------------------------------------------------------------------- */

/* A title given here is the user's: it comes from no message (title_seq 0). */
static const char SQL_SESSION_UPDATE[] =
    "UPDATE sessions SET title = coalesce($2, title), title_seq = CASE WHEN $2::text IS NULL THEN title_seq ELSE 0 END,"
    " metadata = coalesce($3, metadata), updated_at = $4::bigint WHERE id = $1";

mn_status mn__pg_op_session_update(mn_store *st, const char *id, const char *title, const char *metadata,
                                  int64_t now_ms)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_texts(&p, 3, (const char *const[]){id, title, metadata});
    mn__pg_i64(&p, now_ms);
    int64_t changed = 0;
    mn_status rc = mn__pg_run_exec(PG(st), PG_WRITE, SQL_SESSION_UPDATE, &p, "session update", &changed);
    return rc || changed ? rc : mn__err(MN_NOTFOUND, "session %s not found", id);
}
