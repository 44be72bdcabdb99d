/*
 * documents.c — the PostgreSQL side of documents (store_document.h): the rows of documents
 * (schema.h, version 13). Same semantics as sqlite/documents.c; between begin and commit every
 * operation runs on the connection begin pinned, in its transaction (mn__pg_run). A scan reads a
 * page of rows at a time, each after the last of the page before, so that a caller that stops
 * early does not receive every document's value.
 */
#include <libpq-fe.h>
#include <stdint.h>
#include <stdlib.h>

#include "store/postgres/pg_int.h"
#include "store/store_document.h"
#include "store/vecblob.h"
#include "util/err.h"
#include "util/banned.h"

/* The columns every read hands over, the vectors (or NULL) after them. */
#define COLS "ns, path, key, value, created_at, updated_at, expires_at, ttl_ms, dim"
/* Not expired at $n (0: any). */
#define LIVE(n) " AND (" n "::bigint = 0 OR expires_at = 0 OR expires_at > " n "::bigint)"

/* ---- vectors --------------------------------------------------------------------------------- */

/* Row i of a binary-format read (COLS, then the vectors or NULL) into *d, its vectors into *buf
 * (grown to *cap floats). A blob that is not whole vectors of the row's dim: MN_CORRUPT. */
static mn_status row_read(PGresult *r, int i, mn_store_document *d, float **buf, size_t *cap)
{
    *d = (mn_store_document){.ns = mn__pg_col_text(r, i, 0),
                             .path = mn__pg_col_text(r, i, 1),
                             .key = mn__pg_col_text(r, i, 2),
                             .value = mn__pg_col_text(r, i, 3),
                             .created_at = mn__pg_col_i64(r, i, 4),
                             .updated_at = mn__pg_col_i64(r, i, 5),
                             .expires_at = mn__pg_col_i64(r, i, 6),
                             .ttl_ms = mn__pg_col_i64(r, i, 7),
                             .dim = (uint32_t)mn__pg_col_i64(r, i, 8)};
    size_t len = PQgetisnull(r, i, 9) ? 0 : (size_t)PQgetlength(r, i, 9);
    int got = mn__vecblob_many_read(PQgetvalue(r, i, 9), len, d->dim, buf, cap, &d->n_vectors);
    if (got == -1)
        return MN_CORRUPT_AT("documents: %s/%s: %zu bytes of vectors of dim %u", d->path, d->key, len,
                             (unsigned)d->dim);
    if (got)
        return mn__nomem();
    d->vectors = d->n_vectors ? *buf : NULL;
    return MN_OK;
}

/* ---- put, touch, remove ---------------------------------------------------------------------- */

static const char SQL_PUT[] =
    "INSERT INTO documents (" COLS ", vectors) VALUES ($1, $2, $3, $4, $5::bigint, $6::bigint, $7::bigint,"
    " $8::bigint, $9::integer, $10::bytea)"
    " ON CONFLICT (ns, path, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,"
    " expires_at = excluded.expires_at, ttl_ms = excluded.ttl_ms, dim = excluded.dim, vectors = excluded.vectors";

/* A document without vectors is stored with dim 0, whatever d->dim says: dim tells a reader
 * that does not read the vectors (a scan without them) whether there are any. */
static mn_status op_put(mn_store *st, const mn_store_document *d)
{
    if (!d->ns || !d->path || !d->key || !d->value)
        return mn__err(MN_MISUSE, "document put without its namespace, path, key or value");
    unsigned char *blob = NULL;
    int len = 0;
    mn_status rc = mn__vecblob_many_new(d->vectors, d->n_vectors, d->dim, &blob, &len);
    if (!rc) {
        struct pg_params p;
        mn__pg_params_init(&p);
        mn__pg_texts(&p, 4, (const char *[]){d->ns, d->path, d->key, d->value});
        mn__pg_i64s(&p, 5, (int64_t[]){d->created_at, d->updated_at, d->expires_at, d->ttl_ms, blob ? d->dim : 0});
        mn__pg_bin(&p, blob, len); /* NULL: SQL NULL */
        rc = mn__pg_run_exec(PG(st), PG_WRITE, SQL_PUT, &p, "document put", NULL);
    }
    free(blob);
    return rc;
}

static const char SQL_TOUCH[] =
    "UPDATE documents SET expires_at = $4::bigint WHERE ns = $1 AND path = $2 AND key = $3";
static const char SQL_REMOVE[] = "DELETE FROM documents WHERE ns = $1 AND path = $2 AND key = $3";

/* Starts p with a document's key: $1-$3. */
static void key_params(struct pg_params *p, const char *ns, const char *path, const char *key)
{
    mn__pg_params_init(p);
    mn__pg_texts(p, 3, (const char *[]){ns, path, key});
}

static mn_status op_touch(mn_store *st, const char *ns, const char *path, const char *key, int64_t expires_at)
{
    if (!ns || !path || !key)
        return mn__err(MN_MISUSE, "document touch without its namespace, path or key");
    struct pg_params p;
    key_params(&p, ns, path, key);
    mn__pg_i64(&p, expires_at);
    return mn__pg_run_exec(PG(st), PG_WRITE, SQL_TOUCH, &p, "document touch", NULL);
}

static mn_status op_remove(mn_store *st, const char *ns, const char *path, const char *key, int64_t *removed)
{
    *removed = 0;
    if (!ns || !path || !key)
        return mn__err(MN_MISUSE, "document remove without its namespace, path or key");
    struct pg_params p;
    key_params(&p, ns, path, key);
    return mn__pg_run_exec(PG(st), PG_WRITE, SQL_REMOVE, &p, "document remove", removed);
}

/* ---- get ------------------------------------------------------------------------------------- */

static const char SQL_GET[] =
    "SELECT " COLS ", vectors FROM documents WHERE ns = $1 AND path = $2 AND key = $3" LIVE("$4");

/* A get's or a scan's: the scan (NULL for a get), the caller's callback, and the buffer of the
 * vectors of the row it is handed. */
struct read_arg {
    const mn_store_document_scan *q;
    mn_store_document_fn fn;
    void *user;
    float *buf;
    size_t cap;
};

static mn_status document_row(void *arg, PGresult *r, int i, int *stop)
{
    struct read_arg *a = arg;
    mn_store_document d;
    mn_status rc = row_read(r, i, &d, &a->buf, &a->cap);
    if (!rc)
        *stop = a->fn(a->user, &d) != 0;
    return rc;
}

static mn_status op_get(mn_store *st, const char *ns, const char *path, const char *key, int64_t now,
                        mn_store_document_fn fn, void *user)
{
    if (!ns || !path || !key)
        return mn__err(MN_MISUSE, "document get without its namespace, path or key");
    struct pg_params p;
    key_params(&p, ns, path, key);
    mn__pg_i64(&p, now);
    struct read_arg a = {NULL, fn, user, NULL, 0};
    mn_status rc = mn__pg_run_each(PG(st), SQL_GET, &p, 1, "document get", document_row, &a);
    free(a.buf);
    return rc;
}

/* ---- scan ------------------------------------------------------------------------------------ */

/* A page of the rows a scan matches, in key order: the first ($5-$7 NULL), or those after the
 * last row of the page before ($5-$7: its ns, path and key; a namespace's through (path, key)
 * on the primary key after ns = $1). A prefix's rows are one range of the primary key: paths
 * from $2 up to $2 || '/' ('/' is '.' + 1), less those that go on with a byte below '.' ("a-b"
 * for "a"). The names compare as bytes (COLLATE "C"). Every parameter is named in each text, so
 * that each has its type; the vectors are read only when asked for ($4). */
#define PREFIX "path >= $2 AND path < ($2 || '/') AND (path = $2 OR path >= ($2 || '.'))"
#define FIRST " AND $5::text IS NULL AND $6::text IS NULL AND $7::text IS NULL"
#define NEXT_IN_NS " AND $5::text IS NOT NULL AND (path, key) > ($6::text, $7::text)"
#define NEXT " AND (ns, path, key) > ($5::text, $6::text, $7::text)"
#define SCAN_PAGE(where, after)                                                                                      \
    "SELECT " COLS ", CASE WHEN $4::integer <> 0 THEN vectors END FROM documents WHERE " where LIVE("$3") after       \
    " ORDER BY ns, path, key LIMIT $8::bigint"
#define IN_NS_PREFIX "ns = $1 AND " PREFIX
#define IN_NS "ns = $1 AND $2::text IS NULL"
#define ANY_NS_PREFIX "$1::text IS NULL AND " PREFIX
#define ANY_NS "$1::text IS NULL AND $2::text IS NULL"
static const char SQL_SCAN_NS_PREFIX[] = SCAN_PAGE(IN_NS_PREFIX, FIRST);
static const char SQL_SCAN_NS_PREFIX_NEXT[] = SCAN_PAGE(IN_NS_PREFIX, NEXT_IN_NS);
static const char SQL_SCAN_NS[] = SCAN_PAGE(IN_NS, FIRST);
static const char SQL_SCAN_NS_NEXT[] = SCAN_PAGE(IN_NS, NEXT_IN_NS);
static const char SQL_SCAN_PREFIX[] = SCAN_PAGE(ANY_NS_PREFIX, FIRST);
static const char SQL_SCAN_PREFIX_NEXT[] = SCAN_PAGE(ANY_NS_PREFIX, NEXT);
static const char SQL_SCAN_ALL[] = SCAN_PAGE(ANY_NS, FIRST);
static const char SQL_SCAN_ALL_NEXT[] = SCAN_PAGE(ANY_NS, NEXT);
#define SCAN_MAX_PAGE 256 /* values of up to 1 MiB each (mnemo.h MN_DOCUMENT_MAX_VALUE) */

static const char *scan_sql(const mn_store_document_scan *q, int next)
{
    if (q->ns)
        return q->prefix ? (next ? SQL_SCAN_NS_PREFIX_NEXT : SQL_SCAN_NS_PREFIX)
                         : (next ? SQL_SCAN_NS_NEXT : SQL_SCAN_NS);
    return q->prefix ? (next ? SQL_SCAN_PREFIX_NEXT : SQL_SCAN_PREFIX) : (next ? SQL_SCAN_ALL_NEXT : SQL_SCAN_ALL);
}

static const char *scan_page(void *arg, struct pg_params *p, const PGresult *prev, int last, int64_t n)
{
    const mn_store_document_scan *q = ((struct read_arg *)arg)->q;
    mn__pg_params_init(p);
    mn__pg_text(p, q->ns);
    mn__pg_text(p, q->prefix);
    mn__pg_i64(p, q->now);
    mn__pg_i64(p, q->with_vectors != 0);
    mn__pg_text(p, prev ? mn__pg_col_text(prev, last, 0) : NULL);
    mn__pg_text(p, prev ? mn__pg_col_text(prev, last, 1) : NULL);
    mn__pg_text(p, prev ? mn__pg_col_text(prev, last, 2) : NULL);
    mn__pg_i64(p, n);
    return scan_sql(q, prev != NULL);
}

/* Each page is a statement of its own (a snapshot of its own), as the checkpoint scan's: a page
 * below the first shows the rows as they were then, still in order without repeats. */
static mn_status scan_body(struct pg_conn *c, void *arg)
{
    static const struct pg_pages scan = {"document scan", 1, SCAN_MAX_PAGE, scan_page, document_row};
    return mn__pg_pages(c, &scan, arg);
}

static mn_status op_scan(mn_store *st, const mn_store_document_scan *q, mn_store_document_fn fn, void *user)
{
    struct read_arg a = {q, fn, user, NULL, 0};
    mn_status rc = mn__pg_run(PG(st), PG_AUTOCOMMIT, scan_body, &a);
    free(a.buf);
    return rc;
}

/* ---- paths ----------------------------------------------------------------------------------- */

static const char SQL_PATHS[] = "SELECT DISTINCT path FROM documents WHERE ns = $1" LIVE("$2") " ORDER BY path";

struct paths_arg {
    mn_store_document_path_fn fn;
    void *user;
};

static mn_status path_row(void *arg, PGresult *r, int i, int *stop)
{
    struct paths_arg *a = arg;
    *stop = a->fn(a->user, mn__pg_col_text(r, i, 0));
    return MN_OK;
}

static mn_status op_paths(mn_store *st, const char *ns, int64_t now, mn_store_document_path_fn fn, void *user)
{
    if (!ns)
        return mn__err(MN_MISUSE, "document paths without a namespace");
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, ns);
    mn__pg_i64(&p, now);
    struct paths_arg a = {fn, user};
    return mn__pg_run_each(PG(st), SQL_PATHS, &p, 0, "document paths", path_row, &a);
}

/* ---- purge ----------------------------------------------------------------------------------- */

/* The expired rows through documents_by_expiry (of every namespace, or of $2's), or all of $2's
 * rows ($1 0). Every parameter is named in each text. */
static const char SQL_PURGE_EXPIRED[] = "DELETE FROM documents WHERE expires_at > 0 AND expires_at <= $1::bigint"
                                        " AND ($2::text IS NULL OR ns = $2)";
static const char SQL_PURGE_NS[] = "DELETE FROM documents WHERE ns = $2 AND $1::bigint = 0";

static mn_status op_purge(mn_store *st, const char *ns, int64_t now, int64_t *removed)
{
    *removed = 0;
    if (!now && !ns)
        return mn__err(MN_MISUSE, "document purge of a whole namespace without one");
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, now);
    mn__pg_text(&p, ns);
    return mn__pg_run_exec(PG(st), PG_WRITE, now ? SQL_PURGE_EXPIRED : SQL_PURGE_NS, &p, "document purge", removed);
}

const struct mn_store_document_ops mn_pg_document_ops = {
    .put = op_put,
    .get = op_get,
    .touch = op_touch,
    .remove = op_remove,
    .scan = op_scan,
    .paths = op_paths,
    .purge = op_purge,
};
