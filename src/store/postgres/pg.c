/*
 * pg.c — the PostgreSQL backend of store.h (postgres:// or postgresql:// URLs): a lazily opened
 * pool of libpq connections per handle, statements prepared once per connection, the
 * transaction runner with its retries, the shapes most statements take (pg_int.h), SQLSTATE →
 * mn_status mapping, schema migrations under an advisory lock, and the handle-wide operations
 * (stats, meta, token recount).
 * Why a separate backend at all: several `mnemo serve` nodes sharing one database (DESIGN.md §1).
 * Schema: schema.h. The other operations: messages.c, threads.c, summaries.c, search.c.
 */
#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/postgres/pg_int.h"
#include "store/postgres/schema.h"
#include "store/records.h"
#include "store/store.h"
#include "store/target.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/uuid.h"
#include "util/banned.h"

_Static_assert(MN_PG_SCHEMA_VERSION == MN_SCHEMA_VERSION_PG, "store.h names the version schema.h reaches");

/* Takes a pool_size=N parameter out of the URL's query (libpq would refuse it); *size stays as
 * it was when there is none. */
static mn_status take_pool_size(char *url, size_t *size)
{
    char *q = strchr(url, '?');
    for (char *p = q; p && *p;) {
        char *name = p + 1, *end = name + strcspn(name, "&");
        if (strncmp(name, "pool_size=", 10) != 0) {
            p = *end ? end : NULL;
            continue;
        }
        char *num_end = NULL;
        long long n = strtoll(name + 10, &num_end, 10);
        if (num_end != end || n < 1 || n > 256)
            return mn__err(MN_INVALID, "database URL: pool_size must be a number from 1 to 256");
        *size = (size_t)n;
        if (*end) /* "?pool_size=4&x" → "?x", "&pool_size=4&x" → "&x" */
            memmove(name, end + 1, strlen(end + 1) + 1);
        else /* last: drop it with the separator before it */
            *p = '\0';
    }
    return MN_OK;
}

static int hex_digit(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* Takes each replica=URL parameter (percent-encoded) out of the URL's query, as pool_size, and
 * appends its URL to *list (malloc'd, space-separated; the caller frees it): a URL that names its
 * read replicas itself, as postgres.replicas would. */
static mn_status take_replicas(char *url, char **list)
{
    char *q = strchr(url, '?');
    for (char *p = q; p && *p;) {
        char *name = p + 1, *end = name + strcspn(name, "&");
        if (strncmp(name, "replica=", 8) != 0) {
            p = *end ? end : NULL;
            continue;
        }
        size_t had = *list ? strlen(*list) : 0, len = 0;
        char *grown = realloc(*list, had + (size_t)(end - name) + 2);
        if (!grown)
            return mn__nomem();
        *list = grown;
        char *out = grown + had + (had > 0);
        if (had)
            grown[had] = ' ';
        for (const char *v = name + 8; v < end; v++) {
            int hi = v + 2 < end ? hex_digit(v[1]) : -1, lo = hi >= 0 ? hex_digit(v[2]) : -1;
            if (*v == '%' && hi >= 0 && lo >= 0) {
                out[len++] = (char)(hi * 16 + lo);
                v += 2;
            } else {
                out[len++] = *v;
            }
        }
        out[len] = '\0';
        if (*end)
            memmove(name, end + 1, strlen(end + 1) + 1);
        else
            *p = '\0';
    }
    return MN_OK;
}

/* ---- parameters ------------------------------------------------------------------------------ */

void mn__pg_params_init(struct pg_params *p) { memset(p, 0, sizeof *p); }

void mn__pg_text(struct pg_params *p, const char *v)
{
    if (p->n < MN_PG_MAX_PARAMS)
        p->v[p->n++] = v;
}

void mn__pg_i64(struct pg_params *p, int64_t v)
{
    if (p->n < MN_PG_MAX_PARAMS) {
        snprintf(p->num[p->n], sizeof p->num[p->n], "%lld", (long long)v);
        p->v[p->n] = p->num[p->n];
        p->n++;
    }
}

void mn__pg_size(struct pg_params *p, size_t v) { mn__pg_i64(p, v > (size_t)INT64_MAX ? INT64_MAX : (int64_t)v); }

void mn__pg_texts(struct pg_params *p, int n, const char *const *v)
{
    for (int i = 0; i < n; i++)
        mn__pg_text(p, v[i]);
}

void mn__pg_i64s(struct pg_params *p, int n, const int64_t *v)
{
    for (int i = 0; i < n; i++)
        mn__pg_i64(p, v[i]);
}

mn_status mn__pg_id_array(struct mn_buf *out, const int64_t *ids, size_t n)
{
    mn_status rc = mn__buf_addc(out, '{');
    for (size_t i = 0; i < n && !rc; i++)
        rc = mn__buf_addf(out, "%s%lld", i ? "," : "", (long long)ids[i]);
    return rc ? rc : mn__buf_addc(out, '}');
}

void mn__pg_bin(struct pg_params *p, const void *data, int len)
{
    if (p->n < MN_PG_MAX_PARAMS) {
        p->v[p->n] = data;
        p->len[p->n] = len;
        p->fmt[p->n++] = 1;
    }
}

/* ---- errors ---------------------------------------------------------------------------------- */

/* The message of a failed result (or of the connection), without the trailing newline. */
static void error_text(struct pg_conn *c, PGresult *r, char *out, size_t cap)
{
    const char *m = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    if (!m || !*m)
        m = r && *PQresultErrorMessage(r) ? PQresultErrorMessage(r) : PQerrorMessage(c->pg);
    snprintf(out, cap, "%s", m && *m ? m : "unknown error");
    size_t n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
        out[--n] = '\0';
    for (char *p = out; *p; p++) /* libpq's hints come on lines of their own: one line */
        if (*p == '\n' || *p == '\t')
            *p = ' ';
}

mn_status mn__pg_fail(struct pg_conn *c, PGresult *r, const char *what)
{
    char msg[512];
    error_text(c, r, msg, sizeof msg);
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    if (!state)
        state = "";
    if (PQstatus(c->pg) == CONNECTION_BAD || strncmp(state, "08", 2) == 0 || strcmp(state, "57P01") == 0 ||
        strcmp(state, "57P02") == 0 || strcmp(state, "57P03") == 0 || strcmp(state, "25006") == 0 ||
        strcmp(state, "53300") == 0 || (!r && PQstatus(c->pg) != CONNECTION_OK)) {
        c->broken = 1;
        return mn__err(MN_UNAVAILABLE, "database unavailable: %s: %s", what, msg);
    }
    if (!r)
        return mn__nomem();
    if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
        c->retry = 1;
        return mn__err(MN_BUSY, "%s: %s (retried)", what, msg);
    }
    if (strcmp(state, "55P03") == 0)
        return mn__err(MN_BUSY, "%s: the database is locked by another writer for longer than memory.busy_timeout_ms"
                       " (%s)", what, msg);
    if (strcmp(state, "57014") == 0)
        return mn__err(MN_BUSY, "%s: the statement ran longer than postgres.statement_timeout_ms (%s)", what, msg);
    if (strncmp(state, "23", 2) == 0)
        return mn__err(MN_CONFLICT, "%s: %s", what, msg);
    if (strcmp(state, "53100") == 0)
        return mn__err(MN_IO, "%s: %s", what, msg);
    if (strcmp(state, "53200") == 0)
        return mn__err(MN_NOMEM, "%s: %s", what, msg);
    if (strcmp(state, "XX001") == 0 || strcmp(state, "XX002") == 0)
        return MN_CORRUPT_AT("%s: %s", what, msg);
    if (strncmp(state, "22", 2) == 0)
        return mn__err(MN_INVALID, "%s: %s", what, msg);
    return mn__err(MN_INTERNAL, "%s: %s (sqlstate %s)", what, msg, *state ? state : "none");
}

/* ---- statements ------------------------------------------------------------------------------ */

static const char SQL_BEGIN[] = "BEGIN";
static const char SQL_BEGIN_SNAPSHOT[] = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
static const char SQL_COMMIT[] = "COMMIT";
static const char SQL_ROLLBACK[] = "ROLLBACK";

#ifdef LIBPQ_HAS_PIPELINING
#define HAVE_PIPELINE 1
#else
#define HAVE_PIPELINE 0
#endif

/* Notes a queued statement's result as owed (pipeline mode). */
static mn_status owe(struct pg_conn *c, const char *what, PGresult **keep)
{
    if (c->n_owed == c->owed_cap) {
        size_t cap = c->owed_cap ? c->owed_cap * 2 : 64;
        struct pg_owed *o = realloc(c->owed, cap * sizeof *o);
        if (!o)
            return mn__nomem();
        c->owed = o;
        c->owed_cap = cap;
    }
    c->owed[c->n_owed++] = (struct pg_owed){what, keep, 0};
    return MN_OK;
}

#if HAVE_PIPELINE
static mn_status pipe_sync(struct pg_conn *c);
#endif

/* The name a statement is prepared under on c ("s<index>"), preparing it first when new (in
 * pipeline mode the prepare is queued too). */
static mn_status prepared(struct pg_conn *c, const char *sql, const char *what, char name[16])
{
    size_t i = 0;
    while (i < c->n_stmts && c->stmts[i] != sql)
        i++;
    snprintf(name, 16, "s%zu", i);
    if (i < c->n_stmts)
        return MN_OK;
    if (i == MN_PG_MAX_STMTS)
        return mn__err(MN_INTERNAL, "postgres: statement cache full");
#if HAVE_PIPELINE
    if (c->pipe) { /* once per statement and connection: a round trip, so that the cache only
                    * ever names statements the server has */
        if (!PQsendPrepare(c->pg, name, sql, 0, NULL))
            return mn__pg_fail(c, NULL, what);
        mn_status rc = owe(c, what, NULL);
        if (rc || (rc = pipe_sync(c))) {
            if (rc == MN_NOMEM)
                c->broken = 1; /* the queue no longer matches the results */
            return rc;
        }
    } else
#endif
    {
        PGresult *r = PQprepare(c->pg, name, sql, 0, NULL);
        mn_status rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, what);
        PQclear(r);
        if (rc)
            return rc;
    }
    c->stmts[c->n_stmts++] = sql;
    return MN_OK;
}

#if HAVE_PIPELINE
/* Sends a sync and reads every owed result up to it, in order: kept ones go where they were
 * asked for, the first failure becomes the status. A failure of a write nobody waited for (queued
 * by mn__pg_send without keep, before the last statement) has the runner run the body again
 * without the pipeline, where the engine sees it at the statement that caused it. Once COMMIT's
 * result has come back the transaction is committed: an error after it (the server process
 * terminated before the sync's answer) only breaks the connection. */
static mn_status pipe_sync(struct pg_conn *c)
{
    mn_status rc = MN_OK;
    int deferred = 0, nulls = 0;
    size_t i = 0;
    if (!PQpipelineSync(c->pg)) {
        c->broken = 1;
        return mn__pg_fail(c, NULL, c->n_owed ? c->owed[0].what : "pipeline");
    }
    for (;;) {
        PGresult *r = PQgetResult(c->pg);
        if (!r) { /* between two statements' results; twice in a row: nothing more comes */
            if (PQstatus(c->pg) == CONNECTION_BAD || ++nulls > 2) {
                if (!rc && !c->committed)
                    rc = mn__pg_fail(c, NULL, i < c->n_owed ? c->owed[i].what : "pipeline");
                c->broken = 1;
                break;
            }
            continue;
        }
        nulls = 0;
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_PIPELINE_SYNC) {
            PQclear(r);
            break;
        }
        struct pg_owed o = i < c->n_owed ? c->owed[i] : (struct pg_owed){"pipeline", NULL, 0};
        int last = i + 1 == c->n_owed;
        i++;
        if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
            c->committed |= o.commit;
            if (o.keep && !rc) {
                *o.keep = r;
                continue;
            }
        } else if (c->committed) {
            c->broken = 1;
        } else if (st != PGRES_PIPELINE_ABORTED && !rc) {
            rc = mn__pg_fail(c, r, o.what);
            deferred = !last && !o.keep && !c->broken; /* a write nobody waited for */
        }
        PQclear(r);
    }
    if (rc) /* nothing half read goes back to the callers */
        for (size_t k = 0; k < c->n_owed; k++)
            if (c->owed[k].keep && *c->owed[k].keep) {
                PQclear(*c->owed[k].keep);
                *c->owed[k].keep = NULL;
            }
    c->n_owed = 0;
    if (rc && deferred) {
        c->retry = 1;
        c->nopipe = 1;
    }
    return rc;
}
#endif

mn_status mn__pg_send(struct pg_conn *c, const char *sql, const struct pg_params *p, const char *what,
                     PGresult **keep)
{
    if (keep)
        *keep = NULL;
    if (!c->pipe)
        return mn__pg_query(c, sql, p, 0, what, keep);
    mn_status rc = mn__pg_rows_flush(c); /* the appends queued before it go first */
    if (rc)
        return rc;
    char name[16];
    rc = prepared(c, sql, what, name);
    if (rc)
        return rc;
    if (!PQsendQueryPrepared(c->pg, name, p ? p->n : 0, p ? p->v : NULL, p ? p->len : NULL, p ? p->fmt : NULL, 0))
        return mn__pg_fail(c, NULL, what);
    if ((rc = owe(c, what, keep)))
        c->broken = 1;
    else
        c->owed[c->n_owed - 1].commit = sql == SQL_COMMIT;
    return rc;
}

mn_status mn__pg_query(struct pg_conn *c, const char *sql, const struct pg_params *p, int binary, const char *what,
                      PGresult **out)
{
    if (out)
        *out = NULL;
    mn_status rc = c->pipe ? mn__pg_rows_flush(c) : MN_OK; /* the appends queued before it go first */
    if (rc)
        return rc;
    char name[16];
    rc = prepared(c, sql, what, name);
    if (rc)
        return rc;
#if HAVE_PIPELINE
    if (c->pipe) {
        PGresult *r = NULL;
        if (!PQsendQueryPrepared(c->pg, name, p ? p->n : 0, p ? p->v : NULL, p ? p->len : NULL, p ? p->fmt : NULL,
                                 binary))
            return mn__pg_fail(c, NULL, what);
        if ((rc = owe(c, what, &r))) {
            c->broken = 1;
            return rc;
        }
        if ((rc = pipe_sync(c)))
            return rc;
        if (out)
            *out = r;
        else
            PQclear(r);
        return MN_OK;
    }
#endif
    PGresult *r = PQexecPrepared(c->pg, name, p ? p->n : 0, p ? p->v : NULL, p ? p->len : NULL, p ? p->fmt : NULL,
                                 binary);
    ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        rc = mn__pg_fail(c, r, what);
        PQclear(r);
        return rc;
    }
    if (out)
        *out = r;
    else
        PQclear(r);
    return MN_OK;
}

/* Drawn after the statements queued before it (the session locks): the ids of one session's
 * messages still grow with their seq. */
static const char SQL_RESERVE_IDS[] =
    "SELECT nextval(q.s) FROM (SELECT pg_get_serial_sequence('messages', 'id')::regclass AS s) q,"
    " generate_series(1, $1::integer)";

mn_status mn__pg_reserve_ids(struct pg_conn *c, size_t n)
{
    if (!c->pipe || n == 0)
        return MN_OK;
    if (c->n_ids + n > c->ids_cap) {
        int64_t *ids = realloc(c->ids, (c->n_ids + n) * sizeof *ids);
        if (!ids)
            return mn__nomem();
        c->ids = ids;
        c->ids_cap = c->n_ids + n;
    }
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, (int64_t)n);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_RESERVE_IDS, &p, 0, "message ids", &r);
    if (rc)
        return rc;
    for (int i = 0; i < PQntuples(r) && (size_t)i < n; i++) /* after the ones left: still growing */
        c->ids[c->n_ids++] = mn__pg_col_i64(r, i, 0);
    PQclear(r);
    return MN_OK;
}

int64_t mn__pg_take_id(struct pg_conn *c) { return c->pipe && c->next_id < c->n_ids ? c->ids[c->next_id++] : 0; }

void mn__pg_drop_ids(struct pg_conn *c) { c->next_id = c->n_ids; }

int64_t mn__pg_changes(PGresult *r)
{
    const char *n = PQcmdTuples(r);
    return n && *n ? strtoll(n, NULL, 10) : 0;
}

/* ---- columns --------------------------------------------------------------------------------- */

const char *mn__pg_col_text(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

int64_t mn__pg_col_i64(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return 0;
    const char *v = PQgetvalue(r, row, col);
    if (PQfformat(r, col) == 0)
        return strtoll(v, NULL, 10);
    int len = PQgetlength(r, row, col);
    uint64_t x = 0;
    for (int i = 0; i < len && i < 8; i++)
        x = x << 8 | (unsigned char)v[i];
    if (len == 4)
        return (int32_t)(uint32_t)x;
    if (len == 2)
        return (int16_t)(uint16_t)x;
    return (int64_t)x;
}

double mn__pg_col_double(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtod(PQgetvalue(r, row, col), NULL);
}

/* ---- statement shapes ------------------------------------------------------------------------ */

mn_status mn__pg_exec(struct pg_conn *c, const char *sql, const struct pg_params *p, const char *what,
                     int64_t *changed)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, sql, p, 0, what, changed ? &r : NULL);
    if (changed)
        *changed = rc ? 0 : mn__pg_changes(r);
    PQclear(r);
    return rc;
}

mn_status mn__pg_one_i64(struct pg_conn *c, const char *sql, const struct pg_params *p, const char *what,
                        int64_t *out)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, sql, p, 0, what, &r);
    *out = !rc && PQntuples(r) > 0 ? mn__pg_col_i64(r, 0, 0) : 0;
    PQclear(r);
    return rc;
}

mn_status mn__pg_rows(struct pg_conn *c, PGresult *r, pg_row_fn fn, void *arg, int *stop)
{
    mn_status rc = MN_OK;
    for (int i = 0; !rc && !*stop && i < PQntuples(r); i++) {
        c->visible = 1;
        rc = fn(arg, r, i, stop);
    }
    return rc;
}

mn_status mn__pg_pages(struct pg_conn *c, const struct pg_pages *how, void *arg)
{
    PGresult *prev = NULL; /* the page before: its last row is where this one starts */
    int64_t n = 16;
    mn_status rc = MN_OK;
    for (int stop = 0; !stop;) {
        struct pg_params p;
        const char *sql = how->page(arg, &p, prev, prev ? PQntuples(prev) - 1 : -1, n);
        PGresult *r = NULL;
        rc = mn__pg_query(c, sql, &p, how->binary, how->what, &r);
        PQclear(prev); /* after the statement: p points into it */
        prev = r;
        if (!rc)
            rc = mn__pg_rows(c, r, how->row, arg, &stop);
        if (rc || PQntuples(r) < n)
            stop = 1;
        n = n * 8 > how->max_page ? how->max_page : n * 8;
    }
    PQclear(prev);
    return rc;
}

mn_status mn__pg_each(struct pg_conn *c, const char *sql, const struct pg_params *p, int binary, const char *what,
                     pg_row_fn fn, void *arg)
{
    PGresult *r = NULL;
    int stop = 0;
    mn_status rc = mn__pg_query(c, sql, p, binary, what, &r);
    if (!rc)
        rc = mn__pg_rows(c, r, fn, arg, &stop);
    PQclear(r);
    return rc;
}

/* ---- connections and the pool ---------------------------------------------------------------- */

static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    mn__log(MN_LOG_DEBUG, "postgres: %s", message);
}

/* The bounds of every statement and transaction on c (lock waits end like SQLite's busy
 * handler: after memory.busy_timeout_ms, as MN_BUSY). Its own statement: a VACUUM runs without
 * the statement bound and puts it back with this. */
static mn_status conn_bounds(struct pg_store *s, struct pg_conn *c)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SET lock_timeout = %lld; SET statement_timeout = %lld;"
             " SET idle_in_transaction_session_timeout = %lld",
             (long long)(s->busy_timeout_ms > 0 ? s->busy_timeout_ms : 1), (long long)s->statement_timeout_ms,
             (long long)s->idle_timeout_ms);
    PGresult *r = PQexec(c->pg, sql);
    mn_status rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, "connect");
    PQclear(r);
    return rc;
}

static void conn_close(struct pg_conn *c)
{
    if (c) {
        PQfinish(c->pg);
        free(c->owed);
        free(c->ids);
        mn__pg_rows_free(c);
        free(c);
    }
}

static mn_status conn_open(struct pg_store *s, struct pg_pool *pool, struct pg_conn **out)
{
    *out = NULL;
    struct pg_conn *c = calloc(1, sizeof *c);
    if (!c)
        return mn__nomem();
    c->pool = pool;
    /* earlier entries are defaults: what the URL says wins */
    const char *keys[] = {"connect_timeout", "application_name", "dbname", NULL};
    const char *vals[] = {"10", "mnemo", pool->url, NULL};
    c->pg = PQconnectdbParams(keys, vals, 1);
    if (!c->pg) {
        free(c);
        return mn__nomem();
    }
    if (PQstatus(c->pg) != CONNECTION_OK) {
        char msg[512];
        error_text(c, NULL, msg, sizeof msg);
        mn__store_pg_scrub(pool->url, msg); /* libpq may quote a piece of the target */
        conn_close(c);
        return mn__err(MN_UNAVAILABLE, "database unavailable: cannot connect to %s: %s", pool->masked, msg);
    }
    PQsetNoticeProcessor(c->pg, quiet_notice, NULL);
    if (PQserverVersion(c->pg) < 120000) {
        int v = PQserverVersion(c->pg);
        conn_close(c);
        return mn__err(MN_UNAVAILABLE, "%s runs PostgreSQL %d.%d; mnemo needs 12 or newer", pool->masked, v / 10000,
                       v % 10000);
    }
    const char *enc = PQparameterStatus(c->pg, "server_encoding");
    if (enc && strcmp(enc, "UTF8") != 0) {
        mn_status rc = mn__err(MN_INVALID, "%s uses the encoding %s; mnemo stores UTF-8 text and needs a UTF8"
                               " database (CREATE DATABASE … ENCODING 'UTF8')", pool->masked, enc);
        conn_close(c);
        return rc;
    }
    PGresult *r = PQexec(c->pg, s->sync_full ? "SET client_encoding = 'UTF8'; SET client_min_messages = warning"
                                             : "SET client_encoding = 'UTF8'; SET client_min_messages = warning;"
                                               " SET synchronous_commit = off");
    mn_status rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, "connect");
    PQclear(r);
    if (!rc)
        rc = conn_bounds(s, c);
    char uuid[MN_UUID_LEN + 1];
    if (!rc && !(rc = mn__uuid_v7(mn__clock_now_ms(), uuid)))
        snprintf(c->token_key, sizeof c->token_key, "commit:%s", uuid);
    if (rc) {
        conn_close(c);
        return rc;
    }
    *out = c;
    return MN_OK;
}

/* The connection pinned to this thread by begin() (under the lock), or NULL. */
static struct pg_conn *pinned_here(struct pg_store *s)
{
    for (struct pg_conn *p = s->pinned; p; p = p->next_free)
        if (pthread_equal(p->pin_owner, pthread_self()))
            return p;
    return NULL;
}

mn_status mn__pg_acquire(struct pg_store *s, struct pg_pool *pool, struct pg_conn **out)
{
    pthread_mutex_lock(&s->lock);
    while (!pool->free_list && pool->n_open >= pool->size)
        pthread_cond_wait(&pool->freed, &s->lock);
    if (pool->free_list) {
        *out = pool->free_list;
        pool->free_list = (*out)->next_free;
        (*out)->next_free = NULL;
        pthread_mutex_unlock(&s->lock);
        return MN_OK;
    }
    pool->n_open++;
    pthread_mutex_unlock(&s->lock);
    mn_status rc = conn_open(s, pool, out);
    if (rc) {
        pthread_mutex_lock(&s->lock);
        pool->n_open--;
        pthread_cond_signal(&pool->freed);
        pthread_mutex_unlock(&s->lock);
    }
    return rc;
}

/* Borrows a connection of the primary: the caller's pinned one (*pinned 1), an idle one, or a
 * new one. */
static mn_status acquire(struct pg_store *s, struct pg_conn **out, int *pinned)
{
    pthread_mutex_lock(&s->lock);
    *out = pinned_here(s);
    pthread_mutex_unlock(&s->lock);
    *pinned = *out != NULL;
    return *out ? MN_OK : mn__pg_acquire(s, &s->primary, out);
}

/* Gives a connection back. A broken one is closed, and so is every idle one of its pool (after a
 * server restart they are all dead): the next call connects afresh. */
void mn__pg_release(struct pg_store *s, struct pg_conn *c)
{
    struct pg_conn *drop = NULL;
    struct pg_pool *pool = c->pool;
    if (!c->broken && PQtransactionStatus(c->pg) != PQTRANS_IDLE)
        c->broken = 1; /* never hand on a connection inside a transaction */
    pthread_mutex_lock(&s->lock);
    if (c->broken) {
        c->next_free = pool->free_list;
        drop = c;
        pool->n_open--;
        for (struct pg_conn *d = pool->free_list; d; d = d->next_free)
            pool->n_open--;
        pool->free_list = NULL;
    } else {
        c->next_free = pool->free_list;
        pool->free_list = c;
    }
    pthread_cond_broadcast(&pool->freed);
    pthread_mutex_unlock(&s->lock);
    while (drop) {
        struct pg_conn *next = drop->next_free;
        conn_close(drop);
        drop = next;
    }
}

/* A pool for url: its pool_size=N taken out of the URL (default MN_PG_DEFAULT_POOL). */
mn_status mn__pg_pool_init(struct pg_pool *pool, const char *url)
{
    memset(pool, 0, sizeof *pool);
    pool->size = MN_PG_DEFAULT_POOL;
    pthread_cond_init(&pool->freed, NULL);
    if (!(pool->url = strdup(url)) || !(pool->masked = mn__store_pg_mask(url)))
        return mn__nomem();
    return take_pool_size(pool->url, &pool->size);
}

void mn__pg_pool_close(struct pg_pool *pool)
{
    for (struct pg_conn *c = pool->free_list; c;) {
        struct pg_conn *next = c->next_free;
        conn_close(c);
        c = next;
    }
    pool->free_list = NULL;
    pthread_cond_destroy(&pool->freed);
    free(pool->url);
    free(pool->masked);
}

/* ---- transactions ---------------------------------------------------------------------------- */

/* The token a PG_PIPELINE transaction writes: its connection's row in meta ("commit:<uuid>")
 * gets the run's "<ms>:<number>", committed or not with everything else. A random key per
 * connection, never reused (a transaction id is: a crash gives the ids a lost transaction had
 * to later ones), and one row each, updated in place, so runs never wait for each other. */
static const char SQL_TOKEN_SET[] = "INSERT INTO meta (key, value) VALUES ($1, $2)"
                                    " ON CONFLICT (key) DO UPDATE SET value = excluded.value";
/* What a later connection asks: the row as the lost transaction left it. The insert waits for
 * a transaction still inserting the row, the lock for one still updating it. */
static const char SQL_TOKEN_WAIT[] = "INSERT INTO meta (key, value) VALUES ($1, '0:0') ON CONFLICT (key) DO NOTHING";
static const char SQL_TOKEN_GET[] = "SELECT value FROM meta WHERE key = $1 FOR UPDATE";
/* The rows of connections gone for TOKEN_KEEP_MS (long after any question about them). */
#define TOKEN_KEEP_MS 600000
static const char SQL_TOKEN_SWEEP[] =
    "DELETE FROM meta WHERE key IN (SELECT key FROM meta WHERE key LIKE 'commit:%'"
    " AND split_part(value, ':', 1)::bigint < $1::bigint FOR UPDATE SKIP LOCKED)";
/* A transaction whose caller waits on something else between statements (an export writing to
 * its client, an import reading its input): idle up to the statement bound, not the short one. */
static const char SQL_IDLE_LONG[] = "SELECT set_config('idle_in_transaction_session_timeout', $1, true)";

static void rollback(struct pg_conn *c)
{
    if (!c->broken && PQtransactionStatus(c->pg) != PQTRANS_IDLE) {
        PGresult *r = PQexec(c->pg, SQL_ROLLBACK);
        if (!r || PQresultStatus(r) != PGRES_COMMAND_OK)
            c->broken = 1;
        PQclear(r);
    }
}

/* Exponential backoff, 1 ms doubling to 100 ms, with jitter from the clock's low digits. */
static void backoff(int attempt)
{
    int64_t delay = attempt < 7 ? (int64_t)1 << attempt : 100;
    delay += (mn__clock_mono_ns() / 1000 % 1000) * delay / 2000;
    mn__clock_sleep_ms(delay);
}

/* Lets the open transaction on c stay idle between statements up to the statement bound. */
static mn_status idle_long(struct pg_store *s, struct pg_conn *c)
{
    if (s->idle_timeout_ms == 0)
        return MN_OK;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, s->statement_timeout_ms);
    return mn__pg_query(c, SQL_IDLE_LONG, &p, 0, "begin", NULL);
}

enum outcome { OUTCOME_COMMITTED, OUTCOME_ABORTED, OUTCOME_UNKNOWN };

/* How long the runner keeps asking about a commit whose answer was lost: memory.busy_timeout_ms,
 * and at least long enough for a database restart with crash recovery. */
#define OUTCOME_WAIT_MIN_MS 30000

struct token_arg {
    const char *key;
    char value[48]; /* out: the row's value once no transaction changes it any more */
};

static mn_status token_body(struct pg_conn *c, void *arg)
{
    struct token_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, a->key);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_TOKEN_WAIT, &p, 0, "commit outcome", NULL);
    if (!rc)
        rc = mn__pg_query(c, SQL_TOKEN_GET, &p, 0, "commit outcome", &r);
    if (!rc)
        snprintf(a->value, sizeof a->value, "%s", PQntuples(r) == 1 ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    return rc;
}

/* Whether the transaction that set token `value` in row `key` committed, its COMMIT having gone
 * out on a connection that then dropped: asked on new connections until the database answers
 * or the wait above is over. The question waits for a transaction still running (it holds the
 * row): one whose COMMIT went astray ends by postgres.idle_in_transaction_timeout_ms. */
static enum outcome commit_outcome(struct pg_store *s, const char *key, const char *value)
{
    int64_t limit_ms = s->busy_timeout_ms > OUTCOME_WAIT_MIN_MS ? s->busy_timeout_ms : OUTCOME_WAIT_MIN_MS;
    int64_t started = mn__clock_mono_ns();
    for (int attempt = 0;; attempt++) {
        struct token_arg a = {key, ""};
        if (mn__pg_run(s, PG_WRITE, token_body, &a) == MN_OK)
            return strcmp(a.value, value) == 0 ? OUTCOME_COMMITTED : OUTCOME_ABORTED;
        if ((mn__clock_mono_ns() - started) / 1000000 >= limit_ms)
            return OUTCOME_UNKNOWN;
        backoff(attempt);
    }
}

/* Queues (or, outside pipeline mode, runs) the run's token; *r gets its answer. A connection's
 * first run also removes the rows of connections long gone. */
static mn_status token_set(struct pg_conn *c, const char *key, const char *token, PGresult **r)
{
    struct pg_params p;
    mn_status rc = MN_OK;
    if (c->runs == 1) {
        mn__pg_params_init(&p);
        mn__pg_i64(&p, mn__clock_now_ms() - TOKEN_KEEP_MS);
        rc = mn__pg_send(c, SQL_TOKEN_SWEEP, &p, "commit token", NULL);
    }
    mn__pg_params_init(&p);
    mn__pg_text(&p, key);
    mn__pg_text(&p, token);
    return rc ? rc : mn__pg_send(c, SQL_TOKEN_SET, &p, "commit token", r);
}

/* Runs after a connection dropped before anything was committed: a few times, on new ones. */
#define MAX_RECONNECTS 3

/* mn__pg_run on connection c (not pinned). On a replica's connection (replica 1) a dropped
 * connection is not tried again here: *lost says so when nothing was shown to a callback, and
 * the caller runs the body on the primary. */
static mn_status run_on(struct pg_store *s, struct pg_conn *c, int replica, enum pg_mode mode, pg_body body,
                        void *arg, int *lost)
{
    int pinned = 0, reconnects = 0;
    mn_status rc = MN_OK;
    int64_t started = mn__clock_mono_ns();
    int nopipe = 0; /* a queued write failed: the tries after it go one statement at a time */
    for (int attempt = 0;; attempt++) {
        int committing = 0;
        PGresult *token_r = NULL; /* PG_PIPELINE: the answer to this run's token */
        char key[sizeof c->token_key], token[48];
        snprintf(key, sizeof key, "%s", c->token_key);
        snprintf(token, sizeof token, "%lld:%lld", (long long)mn__clock_now_ms(), (long long)++c->runs);
        c->visible = c->retry = c->committed = 0;
        c->n_owed = c->n_ids = c->next_id = 0;
        c->nopipe = 0;
        mn__pg_rows_clear(c);
#if HAVE_PIPELINE
        c->pipe = mode == PG_PIPELINE && !nopipe && PQenterPipelineMode(c->pg) == 1;
#endif
        if (c->pipe) {
            /* BEGIN, the body's queued writes and COMMIT go out together: a group of appends
             * costs the round trips of its reads (the session locks) and one for the commit;
             * the token goes with the first read */
            rc = mn__pg_send(c, SQL_BEGIN, NULL, "begin", NULL);
            if (!rc)
                rc = token_set(c, key, token, &token_r);
            if (!rc)
                rc = body(c, arg);
#if HAVE_PIPELINE
            if (!rc && !token_r) /* a body without a read: the token must be in before COMMIT goes */
                rc = pipe_sync(c);
#endif
            if (!rc) {
                committing = 1;
                rc = mn__pg_send(c, SQL_COMMIT, NULL, "commit", NULL);
            }
#if HAVE_PIPELINE
            if (!c->broken) { /* read what is owed, then leave pipeline mode */
                mn_status sync = c->n_owed || committing ? pipe_sync(c) : MN_OK;
                if (!rc)
                    rc = sync;
                if (!c->broken && PQexitPipelineMode(c->pg) != 1)
                    c->broken = 1;
            }
#endif
            c->pipe = 0;
            if (c->nopipe)
                nopipe = 1;
            if (rc)
                rollback(c);
        } else {
            rc = mode == PG_AUTOCOMMIT ? MN_OK
                                       : mn__pg_query(c, mode == PG_SNAPSHOT ? SQL_BEGIN_SNAPSHOT : SQL_BEGIN, NULL, 0,
                                                     "begin", NULL);
            if (!rc && mode == PG_PIPELINE)
                rc = token_set(c, key, token, &token_r);
            if (!rc && mode == PG_SNAPSHOT)
                rc = idle_long(s, c);
            if (!rc)
                rc = body(c, arg);
            if (mode != PG_AUTOCOMMIT) {
                if (rc)
                    rollback(c);
                else {
                    committing = 1;
                    rc = mn__pg_query(c, SQL_COMMIT, NULL, 0, "commit", NULL);
                    if (rc)
                        rollback(c);
                }
            }
        }
        int tokened = token_r != NULL;
        PQclear(token_r);
        if (!rc || c->visible)
            break;
        if (committing && c->broken && rc == MN_UNAVAILABLE) {
            /* COMMIT went out and its answer was lost with the connection: running the body
             * again could store it twice. Without a token (PG_WRITE) the outcome stays
             * unknown; with it, the database says. */
            if (!tokened)
                break;
            mn__pg_release(s, c);
            c = NULL;
            enum outcome out = commit_outcome(s, key, token);
            if (out == OUTCOME_COMMITTED) {
                mn__log(MN_LOG_WARN, "%s: the connection dropped after COMMIT, which went through", s->primary.masked);
                return MN_OK;
            }
            if (out == OUTCOME_UNKNOWN)
                return mn__err(MN_UNAVAILABLE, "database unavailable: the connection dropped after COMMIT and %s did"
                               " not answer in time whether it went through: the outcome is unknown (retry with the"
                               " same idempotency key)", s->primary.masked);
            if (reconnects++ >= MAX_RECONNECTS) /* it did not: as a connection lost before COMMIT */
                return mn__err(MN_UNAVAILABLE, "database unavailable: the connection dropped %d times during the"
                               " transaction", reconnects);
            if ((rc = acquire(s, &c, &pinned)))
                return rc;
            continue;
        }
        if (replica && c->broken) {
            *lost = !c->visible;
            break;
        }
        if (c->broken && reconnects < MAX_RECONNECTS && !(committing && rc == MN_UNAVAILABLE)) {
            /* the connection dropped (server restart, failover, a terminated server process)
             * before anything was committed: again on a fresh connection */
            mn__pg_release(s, c);
            c = NULL;
            reconnects++;
            if ((rc = acquire(s, &c, &pinned)))
                return rc;
            continue;
        }
        int64_t waited_ms = (mn__clock_mono_ns() - started) / 1000000;
        if (c->broken || !c->retry || attempt >= 50 || (attempt >= 4 && waited_ms >= s->busy_timeout_ms))
            break;
        backoff(attempt);
    }
    if (!rc && !replica && mode != PG_AUTOCOMMIT && mode != PG_SNAPSHOT && s->n_replicas)
        mn__pg_note_commit(s, c);
    mn__pg_release(s, c);
    return rc;
}

mn_status mn__pg_run(struct pg_store *s, enum pg_mode mode, pg_body body, void *arg)
{
    struct pg_conn *c = NULL;
    int pinned = 0, lost = 0;
    if ((mode == PG_AUTOCOMMIT || mode == PG_SNAPSHOT) && mn__pg_replica_reads(s)) {
        mn__pg_replica_pick(s, &c);
        if (c) {
            struct pg_pool *pool = c->pool; /* c is gone after the run */
            mn_status rc = run_on(s, c, 1, mode, body, arg, &lost);
            if (!lost)
                return rc;
            mn__pg_replica_down(s, pool);
        }
    }
    mn_status rc = acquire(s, &c, &pinned);
    if (rc)
        return rc;
    if (pinned) { /* inside begin…commit: the caller's transaction */
        c->visible = c->retry = 0;
        return body(c, arg);
    }
    return run_on(s, c, 0, mode, body, arg, &lost);
}

/* The body of mn__pg_run_exec, _i64 and _each: their statement, and how its answer is read. */
struct stmt_arg {
    enum { STMT_EXEC, STMT_I64, STMT_EACH } kind;
    const char *sql, *what;
    const struct pg_params *p;
    int64_t *out; /* STMT_EXEC: the rows changed (may be NULL); STMT_I64: the integer */
    int binary;   /* STMT_EACH: the rows, in binary format or not, to fn */
    pg_row_fn fn;
    void *arg;
};

static mn_status stmt_body(struct pg_conn *c, void *arg)
{
    struct stmt_arg *a = arg;
    switch (a->kind) {
    case STMT_EXEC:
        return mn__pg_exec(c, a->sql, a->p, a->what, a->out);
    case STMT_I64:
        return mn__pg_one_i64(c, a->sql, a->p, a->what, a->out);
    default:
        return mn__pg_each(c, a->sql, a->p, a->binary, a->what, a->fn, a->arg);
    }
}

static mn_status run_stmt(struct pg_store *s, enum pg_mode mode, struct stmt_arg *a)
{
    mn_status rc = mn__pg_run(s, mode, stmt_body, a);
    if (rc && a->out) /* the body's answer, when the commit after it failed */
        *a->out = 0;
    return rc;
}

mn_status mn__pg_run_exec(struct pg_store *s, enum pg_mode mode, const char *sql, const struct pg_params *p,
                         const char *what, int64_t *changed)
{
    struct stmt_arg a = {.kind = STMT_EXEC, .sql = sql, .what = what, .p = p, .out = changed};
    return run_stmt(s, mode, &a);
}

mn_status mn__pg_run_i64(struct pg_store *s, enum pg_mode mode, const char *sql, const struct pg_params *p,
                        const char *what, int64_t *out)
{
    struct stmt_arg a = {.kind = STMT_I64, .sql = sql, .what = what, .p = p, .out = out};
    return run_stmt(s, mode, &a);
}

mn_status mn__pg_run_each(struct pg_store *s, const char *sql, const struct pg_params *p, int binary,
                         const char *what, pg_row_fn fn, void *arg)
{
    struct stmt_arg a = {.kind = STMT_EACH, .sql = sql, .what = what, .p = p, .binary = binary, .fn = fn, .arg = arg};
    return run_stmt(s, PG_AUTOCOMMIT, &a);
}

/* begin/commit/rollback pin one connection to the calling thread: the import's statements
 * (mn__pg_run sees the pin) run in that one transaction while other threads use the pool (and
 * may run imports of their own on connections of their own). */
mn_status mn__pg_op_begin(mn_store *st)
{
    struct pg_store *s = PG(st);
    struct pg_conn *c = NULL;
    int pinned = 0;
    mn_status rc = acquire(s, &c, &pinned);
    if (rc)
        return rc;
    if (pinned)
        return mn__err(MN_MISUSE, "postgres: begin inside an open transaction");
    rc = mn__pg_query(c, SQL_BEGIN, NULL, 0, "begin", NULL);
    if (rc && c->broken) { /* an idle connection that died: once more on a fresh one */
        mn__pg_release(s, c);
        if ((rc = acquire(s, &c, &pinned)))
            return rc;
        rc = mn__pg_query(c, SQL_BEGIN, NULL, 0, "begin", NULL);
    }
    if (!rc) /* an import reads its input (and embeds memories) between its statements */
        rc = idle_long(s, c);
    if (rc) {
        mn__pg_release(s, c);
        return rc;
    }
    pthread_mutex_lock(&s->lock);
    c->pin_owner = pthread_self();
    c->next_free = s->pinned;
    s->pinned = c;
    pthread_mutex_unlock(&s->lock);
    return MN_OK;
}

static struct pg_conn *unpin(struct pg_store *s)
{
    pthread_mutex_lock(&s->lock);
    struct pg_conn *c = NULL, **link = &s->pinned;
    while (*link && !pthread_equal((*link)->pin_owner, pthread_self()))
        link = &(*link)->next_free;
    if (*link) {
        c = *link;
        *link = c->next_free;
        c->next_free = NULL;
    }
    pthread_mutex_unlock(&s->lock);
    return c;
}

mn_status mn__pg_op_commit(mn_store *st)
{
    struct pg_store *s = PG(st);
    struct pg_conn *c = unpin(s);
    if (!c)
        return mn__err(MN_MISUSE, "postgres: commit without begin");
    mn_status rc = mn__pg_query(c, SQL_COMMIT, NULL, 0, "commit", NULL);
    if (rc)
        rollback(c);
    else if (s->n_replicas)
        mn__pg_note_commit(s, c);
    mn__pg_release(s, c);
    return rc;
}

void mn__pg_op_rollback(mn_store *st)
{
    struct pg_store *s = PG(st);
    struct pg_conn *c = unpin(s);
    if (c) {
        rollback(c);
        mn__pg_release(s, c);
    }
}

/* ---- rows ------------------------------------------------------------------------------------ */

void mn__pg_row_session(PGresult *r, int row, mn_session *out)
{
    memset(out, 0, sizeof *out);
    out->id = mn__pg_col_text(r, row, 0);
    out->ns = mn__pg_col_text(r, row, 1);
    out->title = mn__pg_col_text(r, row, 2);
    out->system_prompt = mn__pg_col_text(r, row, 3);
    out->metadata = mn__pg_col_text(r, row, 4);
    out->tool_name = mn__pg_col_text(r, row, 5);
    out->parent_id = mn__pg_col_text(r, row, 6);
    out->created_at = mn__pg_col_i64(r, row, 7);
    out->updated_at = mn__pg_col_i64(r, row, 8);
    out->expires_at = mn__pg_col_i64(r, row, 9);
    out->message_count = mn__pg_col_i64(r, row, 10);
    out->token_count = mn__pg_col_i64(r, row, 11);
    out->ttl_ms = mn__pg_col_i64(r, row, 12);
    out->max_turns = mn__pg_col_i64(r, row, 13);
    out->turn_count = mn__pg_col_i64(r, row, 14);
    out->inactive_count = mn__pg_col_i64(r, row, 15);
    out->cleared_seq = mn__pg_col_i64(r, row, 16);
    out->cleared_from = mn__pg_col_i64(r, row, 17);
    out->key = mn__pg_col_text(r, row, 18);
    if (!out->metadata)
        out->metadata = "{}";
}

mn_status mn__pg_row_message(PGresult *r, int row, int at, const char *session_id, mn_message *out)
{
    memset(out, 0, sizeof *out);
    out->id = mn__pg_col_i64(r, row, at + 0);
    out->session_id = session_id;
    out->seq = mn__pg_col_i64(r, row, at + 1);
    const char *role = mn__pg_col_text(r, row, at + 2);
    if (!role || mn_role_parse(role, &out->role) != MN_OK)
        return MN_CORRUPT_AT("database: message %lld has an unknown role", (long long)out->id);
    out->content = mn__pg_col_text(r, row, at + 3);
    out->tool_calls = mn__pg_col_text(r, row, at + 4);
    out->tool_call_id = mn__pg_col_text(r, row, at + 5);
    out->name = mn__pg_col_text(r, row, at + 6);
    out->tool_name = mn__pg_col_text(r, row, at + 7);
    out->model = mn__pg_col_text(r, row, at + 8);
    out->files = mn__pg_col_text(r, row, at + 9);
    out->metadata = mn__pg_col_text(r, row, at + 10);
    out->idempotency_key = mn__pg_col_text(r, row, at + 11);
    out->tokens = mn__pg_col_i64(r, row, at + 12);
    out->pinned = (int)mn__pg_col_i64(r, row, at + 13);
    out->created_at = mn__pg_col_i64(r, row, at + 14);
    out->active = (int)mn__pg_col_i64(r, row, at + 15);
    if (!out->metadata)
        out->metadata = "{}";
    return MN_OK;
}

static const char SQL_SESSION_SID[] = "SELECT sid, last_seq FROM sessions WHERE id = $1";

mn_status mn__pg_session_row(struct pg_conn *c, const char *sql, const char *id, const char *what, PGresult **out)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, id);
    mn_status rc = mn__pg_query(c, sql, &p, 0, what, out);
    if (!rc && PQntuples(*out) == 0) {
        PQclear(*out);
        *out = NULL;
        rc = mn__err(MN_NOTFOUND, "session %s not found", id);
    }
    return rc;
}

mn_status mn__pg_session_sid(struct pg_conn *c, const char *id, int64_t *sid, int64_t *last_seq)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_session_row(c, SQL_SESSION_SID, id, "session lookup", &r);
    if (rc)
        return rc;
    *sid = mn__pg_col_i64(r, 0, 0);
    if (last_seq)
        *last_seq = mn__pg_col_i64(r, 0, 1);
    PQclear(r);
    return MN_OK;
}

mn_status mn__pg_sid_params(struct pg_conn *c, const char *id, struct pg_params *p)
{
    int64_t sid = 0;
    mn_status rc = mn__pg_session_sid(c, id, &sid, NULL);
    mn__pg_params_init(p);
    if (!rc)
        mn__pg_i64(p, sid);
    return rc;
}

/* ---- stats and meta -------------------------------------------------------------------------- */

static const char SQL_STATS[] =
    "SELECT count(*), coalesce(sum(message_count), 0), coalesce(sum(token_count), 0),"
    " count(*) FILTER (WHERE ttl_ms > 0), coalesce(sum(turn_count), 0),"
    " count(*) FILTER (WHERE expires_at > 0 AND expires_at <= $1::bigint),"
    " pg_database_size(current_database()) FROM sessions";

static mn_status stats_row(void *arg, PGresult *r, int i, int *stop)
{
    mn_store_stats *out = arg;
    (void)stop;
    out->sessions = mn__pg_col_i64(r, i, 0);
    out->messages = mn__pg_col_i64(r, i, 1);
    out->tokens = mn__pg_col_i64(r, i, 2);
    out->threads = mn__pg_col_i64(r, i, 3);
    out->turns = mn__pg_col_i64(r, i, 4);
    out->expired_pending = mn__pg_col_i64(r, i, 5);
    out->db_bytes = mn__pg_col_i64(r, i, 6);
    return MN_OK;
}

static mn_status op_stats(mn_store *st, int64_t now_ms, mn_store_stats *out)
{
    memset(out, 0, sizeof *out);
    out->schema_version = MN_PG_SCHEMA_VERSION;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, now_ms);
    return mn__pg_run_each(PG(st), SQL_STATS, &p, 0, "stats", stats_row, out);
}

static const char SQL_META_GET[] = "SELECT value FROM meta WHERE key = $1";
static const char SQL_META_SET[] =
    "INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value";

static mn_status meta_row(void *arg, PGresult *r, int i, int *stop)
{
    char **value = arg;
    (void)stop;
    return (*value = strdup(PQgetvalue(r, i, 0))) ? MN_OK : mn__nomem();
}

static mn_status op_meta_get(mn_store *st, const char *key, char **value)
{
    *value = NULL;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, key);
    return mn__pg_run_each(PG(st), SQL_META_GET, &p, 0, "meta get", meta_row, value);
}

static mn_status op_meta_set(mn_store *st, const char *key, const char *value)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, key);
    mn__pg_text(&p, value);
    return mn__pg_run_exec(PG(st), PG_WRITE, SQL_META_SET, &p, "meta set", NULL);
}

/* ---- vacuum and analyze ---------------------------------------------------------------------- */

/* The tables that hold text or are read by plans that depend on their statistics. */
#define MAINTAINED_TABLES                                                                                           \
    " sessions, messages, summaries, events, file_hashes, embeddings, embed_log, embed_queue, checkpoints,"          \
    " checkpoint_writes, documents"

struct utility {
    struct pg_store *s;
    const char *sql, *what;
};

/* A utility statement that cannot be prepared or run in a transaction block (VACUUM, ANALYZE):
 * plain PQexec. It may take longer than the statement bound, which it lifts and then puts back. */
static mn_status utility_body(struct pg_conn *c, void *arg)
{
    struct utility *u = arg;
    PGresult *r = PQexec(c->pg, "SET statement_timeout = 0");
    mn_status rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, u->what);
    PQclear(r);
    if (rc)
        return rc;
    r = PQexec(c->pg, u->sql);
    rc = PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, u->what);
    PQclear(r);
    mn_status back = conn_bounds(u->s, c);
    return rc ? rc : back;
}

/* A delete leaves dead tuples, text included, in the table files until a vacuum (autovacuum
 * runs one some time later); this one runs it now over every table that holds text
 * (docs/erasure.md). */
static mn_status op_vacuum(mn_store *st)
{
    struct utility u = {PG(st), "VACUUM" MAINTAINED_TABLES, "vacuum"};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, utility_body, &u);
}

/* After a bulk load the planner has no statistics until autovacuum gets to the tables (a minute
 * or more): until then a lookup of 60 messages by id was a scan of the whole table (22 ms at
 * 40,000 messages against 0.7 ms after ANALYZE). */
static mn_status op_analyze(mn_store *st)
{
    struct utility u = {PG(st), "ANALYZE" MAINTAINED_TABLES, "analyze"};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, utility_body, &u);
}

/* ---- token recount --------------------------------------------------------------------------- */

static const char SQL_MESSAGE_TOTAL[] = "SELECT count(*) FROM messages";
static const char SQL_RECOUNT_READ[] =
    "SELECT id, content, tool_calls, name, tool_call_id FROM messages WHERE id > $1::bigint ORDER BY id"
    " LIMIT $2::bigint";
static const char SQL_RECOUNT_WRITE[] =
    "UPDATE messages m SET tokens = v.t FROM unnest($1::bigint[], $2::bigint[]) AS v(id, t) WHERE m.id = v.id";
static const char SQL_RECOUNT_SESSIONS[] =
    "UPDATE sessions SET token_count ="
    " (SELECT coalesce(sum(tokens), 0) FROM messages WHERE session_sid = sessions.sid)";

struct recount_arg {
    int64_t (*count)(void *, const mn_message *);
    void *user;
    int64_t after, done, total;
};

/* One batch: up to 1000 messages after a->after, recounted in one UPDATE. The batch's outcome
 * is only kept (after, done) once the runner has committed it. Counting the tokens of 1000 long
 * messages between the read and the write may take longer than the idle bound. */
struct recount_batch {
    struct pg_store *s;
    struct recount_arg *a;
    int64_t last, n;
};

static mn_status recount_batch_body(struct pg_conn *c, void *arg)
{
    struct recount_batch *b = arg;
    mn_status rc = idle_long(b->s, c);
    if (rc)
        return rc;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, b->a->after);
    mn__pg_i64(&p, 1000);
    PGresult *r = NULL;
    b->n = 0;
    b->last = b->a->after;
    rc = mn__pg_query(c, SQL_RECOUNT_READ, &p, 0, "recount", &r);
    if (rc)
        return rc;
    int rows = PQntuples(r);
    struct mn_buf ids = MN_BUF_INIT, counts = MN_BUF_INIT;
    rc = mn__buf_addc(&ids, '{');
    if (!rc)
        rc = mn__buf_addc(&counts, '{');
    for (int i = 0; i < rows && !rc; i++) {
        mn_message m;
        memset(&m, 0, sizeof m);
        m.id = b->last = mn__pg_col_i64(r, i, 0);
        m.content = mn__pg_col_text(r, i, 1);
        m.tool_calls = mn__pg_col_text(r, i, 2);
        m.name = mn__pg_col_text(r, i, 3);
        m.tool_call_id = mn__pg_col_text(r, i, 4);
        rc = mn__buf_addf(&ids, "%s%lld", i ? "," : "", (long long)m.id);
        if (!rc)
            rc = mn__buf_addf(&counts, "%s%lld", i ? "," : "", (long long)b->a->count(b->a->user, &m));
    }
    PQclear(r);
    if (!rc && !(rc = mn__buf_addc(&ids, '}')) && !(rc = mn__buf_addc(&counts, '}')) && rows > 0) {
        mn__pg_params_init(&p);
        mn__pg_text(&p, ids.data);
        mn__pg_text(&p, counts.data);
        rc = mn__pg_query(c, SQL_RECOUNT_WRITE, &p, 0, "recount", NULL);
    }
    mn__buf_release(&ids);
    mn__buf_release(&counts);
    if (!rc)
        b->n = rows;
    return rc;
}

static mn_status op_recount_tokens(mn_store *st, int64_t (*count)(void *, const mn_message *), void *user,
                                   void (*progress)(void *, int64_t, int64_t), int64_t *n)
{
    struct pg_store *s = PG(st);
    struct recount_arg a = {count, user, 0, 0, 0};
    mn_status rc = mn__pg_run_i64(s, PG_AUTOCOMMIT, SQL_MESSAGE_TOTAL, NULL, "recount", &a.total);
    while (!rc) {
        struct recount_batch b = {s, &a, 0, 0};
        rc = mn__pg_run(s, PG_WRITE, recount_batch_body, &b);
        if (rc || b.n == 0)
            break;
        a.after = b.last;
        a.done += b.n;
        if (progress)
            progress(user, a.done, a.total > a.done ? a.total : a.done);
    }
    if (!rc)
        rc = mn__pg_run_exec(s, PG_WRITE, SQL_RECOUNT_SESSIONS, NULL, "recount sessions", NULL);
    *n = a.done;
    return rc;
}

/* ---- migrations ------------------------------------------------------------------------------ */

static const char SQL_TABLES[] =
    "SELECT to_regclass('mnemo_schema') IS NOT NULL, to_regclass('sessions') IS NOT NULL";
static const char SQL_VERSION[] = "SELECT coalesce(max(version), 0) FROM mnemo_schema";
static const char SQL_MIGRATE_LOCK[] = "SELECT pg_advisory_xact_lock(" MN_PG_LOCK_MIGRATE ")";
/* A migration of a big database may run long, and the other nodes wait for it to finish. */
static const char SQL_MIGRATE_UNBOUND[] = "SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0";

/* The schema version of the database: 0 when empty; MN_CORRUPT when it holds another
 * application's tables or a newer schema. */
static mn_status read_version(struct pg_store *s, struct pg_conn *c, int *version)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_TABLES, NULL, 0, "open", &r);
    if (rc)
        return rc;
    int ours = strcmp(PQgetvalue(r, 0, 0), "t") == 0, sessions = strcmp(PQgetvalue(r, 0, 1), "t") == 0;
    PQclear(r);
    *version = 0;
    if (!ours)
        return sessions ? mn__err(MN_CORRUPT, "%s has a sessions table but is not a mnemo database", s->primary.masked)
                        : MN_OK;
    int64_t found = 0;
    if ((rc = mn__pg_one_i64(c, SQL_VERSION, NULL, "open", &found)))
        return rc;
    *version = (int)found;
    if (*version > MN_PG_SCHEMA_VERSION)
        return mn__err(MN_CORRUPT, "%s has schema version %d, newer than this mnemo understands (%d)", s->primary.masked,
                       *version, MN_PG_SCHEMA_VERSION);
    return MN_OK;
}

struct migrate_arg {
    struct pg_store *s;
    int locked;
    int *found; /* the version found before migrating (optional) */
};

/* Without the lock: only reads the version. With it: migrates, checking again under the lock
 * (another node may have migrated while this one waited). */
static mn_status migrate_body(struct pg_conn *c, void *arg)
{
    struct migrate_arg *a = arg;
    int version = 0;
    mn_status rc = MN_OK;
    if (a->locked) {
        PGresult *r = PQexec(c->pg, SQL_MIGRATE_UNBOUND);
        rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, "migrate");
        PQclear(r);
        if (!rc)
            rc = mn__pg_query(c, SQL_MIGRATE_LOCK, NULL, 0, "migrate", NULL);
    }
    if (!rc)
        rc = read_version(a->s, c, &version);
    if (!rc && a->found)
        *a->found = version;
    if (rc || version == MN_PG_SCHEMA_VERSION)
        return rc;
    if (!a->locked)
        return MN_NOTFOUND; /* work to do: the caller takes the lock */
    for (int v = version; !rc && v < MN_PG_SCHEMA_VERSION; v++) {
        PGresult *r = PQexec(c->pg, mn_pg_migrations[v]);
        rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, "migrate");
        PQclear(r);
        if (!rc)
            mn__log(MN_LOG_INFO, "%s: migrated schema to version %d", a->s->primary.masked, v + 1);
    }
    if (!rc) {
        char sql[200];
        snprintf(sql, sizeof sql,
                 "CREATE TABLE IF NOT EXISTS mnemo_schema (version INTEGER NOT NULL);"
                 " DELETE FROM mnemo_schema; INSERT INTO mnemo_schema (version) VALUES (%d)",
                 MN_PG_SCHEMA_VERSION);
        PGresult *r = PQexec(c->pg, sql);
        rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? MN_OK : mn__pg_fail(c, r, "migrate");
        PQclear(r);
    }
    return rc;
}

static mn_status migrate(struct pg_store *s, int *found)
{
    struct migrate_arg a = {s, 0, found};
    mn_status rc = mn__pg_run(s, PG_AUTOCOMMIT, migrate_body, &a);
    if (rc != MN_NOTFOUND)
        return rc;
    a.locked = 1;
    return mn__pg_run(s, PG_WRITE, migrate_body, &a);
}

/* ---- open and close -------------------------------------------------------------------------- */

static void op_close(mn_store *st)
{
    struct pg_store *s = PG(st);
    if (!s)
        return;
    mn__pg_replicas_close(s);
    for (struct pg_conn *c = s->pinned; c;) { /* an import left open: its transaction is rolled back */
        struct pg_conn *next = c->next_free;
        conn_close(c);
        c = next;
    }
    mn__pg_pool_close(&s->primary);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

mn_status mn__store_pg_open(const char *url, const mn_store_opts *opts, mn_store **out)
{
    static const struct mn_store_ops ops = {
        .name = "postgres",
        .append_writers = 2,
        .reads_local = 0,
        .close = op_close,
        .session_insert = mn__pg_op_session_insert,
        .session_get = mn__pg_op_session_get,
        .session_by_key = mn__pg_op_session_by_key,
        .session_list = mn__pg_op_session_list,
        .session_delete = mn__pg_op_session_delete,
        .session_prune = mn__pg_op_session_prune,
        .append = &mn_pg_append_ops,
        .rows = &mn_pg_row_ops,
        .session_update = mn__pg_op_session_update,
        .history = mn__pg_op_history,
        .scan_newest = mn__pg_op_scan_newest,
        .export_scan = mn__pg_op_export_scan,
        .begin = mn__pg_op_begin,
        .commit = mn__pg_op_commit,
        .rollback = mn__pg_op_rollback,
        .import_session = mn__pg_op_import_session,
        .import_message = mn__pg_op_import_message,
        .import_title_from = mn__pg_op_import_title_from,
        .stats = op_stats,
        .recount_tokens = op_recount_tokens,
        .session_gc = mn__pg_op_session_gc,
        .vacuum = op_vacuum,
        .analyze = op_analyze,
        .session_files = mn__pg_op_session_files,
        .file_seen = mn__pg_op_file_seen,
        .state_get = mn__pg_op_state_get,
        .state_update = mn__pg_op_state_update,
        .meta_get = op_meta_get,
        .meta_set = op_meta_set,
        .summary_latest = mn__pg_op_summary_latest,
        .summary_insert = mn__pg_op_summary_insert,
        .event_insert = mn__pg_op_event_insert,
        .events_list = mn__pg_op_events_list,
        .busy_claim = mn__pg_op_busy_claim,
        .busy_release = mn__pg_op_busy_release,
        .message_pin = mn__pg_op_message_pin,
        .pinned_units = mn__pg_op_pinned_units,
        .tool_tokens = mn__pg_op_tool_tokens,
        .search = &mn_pg_search_ops,
        .memory = &mn_pg_memory_ops,
        .checkpoint = &mn_pg_checkpoint_ops,
        .document = &mn_pg_document_ops,
        .replica = &mn_pg_replica_ops,
    };
    *out = NULL;
    if (!url || !*url)
        return mn__err(MN_INVALID, "database URL is empty");
    struct pg_store *s = calloc(1, sizeof *s);
    if (!s)
        return mn__nomem();
    s->base.ops = &ops;
    s->busy_timeout_ms = opts->busy_timeout_ms;
    s->statement_timeout_ms = opts->pg_statement_timeout_ms;
    s->idle_timeout_ms = opts->pg_idle_timeout_ms;
    s->sync_full = opts->sync_full;
    pthread_mutex_init(&s->lock, NULL);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    snprintf(s->claimer, sizeof s->claimer, "%.20s:%d:%llx", host, (int)getpid(),
             (unsigned long long)(mn__clock_mono_ns() & 0xFFFFFF));
    char *own = strdup(url), *replicas = opts->pg_replicas && *opts->pg_replicas ? strdup(opts->pg_replicas) : NULL;
    mn_status rc = !own || (opts->pg_replicas && *opts->pg_replicas && !replicas) ? mn__nomem() : MN_OK;
    if (!rc)
        rc = take_replicas(own, &replicas);
    if (!rc)
        rc = mn__pg_pool_init(&s->primary, own);
    s->base.label = s->primary.masked;
    if (!rc)
        rc = mn__pg_replicas_open(s, replicas, opts->pg_replica_max_lag_ms);
    free(own);
    free(replicas);
    if (!rc)
        rc = migrate(s, opts->found_version);
    if (rc) {
        op_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return MN_OK;
}
