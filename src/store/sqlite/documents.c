/*
 * documents.c — the SQLite side of documents (store_document.h): the rows of documents (schema.h,
 * version 16), keyed by (ns, path, key) in byte order. Every operation also runs between begin
 * and commit, in that transaction (mn__sqlite_run_write and mn__sqlite_run_read, sqlite_int.h).
 * A read holds its connection while it calls back (mn_sqlite_held, scan 1), so that a callback
 * that calls a document or checkpoint operation anyway, which it may not, gets MN_MISUSE for a
 * write or another document read instead of waiting forever for the lock its own read holds.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "store/sqlite/sqlite_int.h"
#include "store/store_document.h"
#include "store/vecblob.h"
#include "util/err.h"
#include "util/banned.h"

/* The columns every read hands over, the vectors (or NULL) after them. */
#define COLS "ns, path, key, value, created_at, updated_at, expires_at, ttl_ms, dim"
/* Not expired at ?n (0: any). */
#define LIVE(n) " AND (" n " = 0 OR expires_at = 0 OR expires_at > " n ")"

/* ---- vectors --------------------------------------------------------------------------------- */

/* A row's vectors (column 9) into *buf (grown to *cap floats): d->vectors and d->n_vectors. A
 * blob that is not whole vectors of the row's dim: the file disagrees with itself. */
static mn_status vectors_decode(struct sqlite_store *s, sqlite3_stmt *st, mn_store_document *d, float **buf,
                                size_t *cap)
{
    size_t len = (size_t)sqlite3_column_bytes(st, 9);
    int got = mn__vecblob_many_read(sqlite3_column_blob(st, 9), len, d->dim, buf, cap, &d->n_vectors);
    if (got == -1)
        return MN_CORRUPT_AT("documents: %s: %s/%s: %zu bytes of vectors of dim %u", s->path, d->path, d->key, len,
                             (unsigned)d->dim);
    if (got)
        return mn__nomem();
    d->vectors = d->n_vectors ? *buf : NULL;
    return MN_OK;
}

/* The row a read statement is on (COLS, then the vectors or NULL). */
static void row_read(sqlite3_stmt *st, mn_store_document *d)
{
    *d = (mn_store_document){.ns = mn__sqlite_col_text(st, 0),
                             .path = mn__sqlite_col_text(st, 1),
                             .key = mn__sqlite_col_text(st, 2),
                             .value = mn__sqlite_col_text(st, 3),
                             .created_at = sqlite3_column_int64(st, 4),
                             .updated_at = sqlite3_column_int64(st, 5),
                             .expires_at = sqlite3_column_int64(st, 6),
                             .ttl_ms = sqlite3_column_int64(st, 7),
                             .dim = (uint32_t)sqlite3_column_int64(st, 8)};
}

/* ---- put, touch, remove ---------------------------------------------------------------------- */

static const char SQL_PUT[] =
    "INSERT INTO documents (" COLS ", vectors) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
    " ON CONFLICT (ns, path, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,"
    " expires_at = excluded.expires_at, ttl_ms = excluded.ttl_ms, dim = excluded.dim, vectors = excluded.vectors";

struct put_arg {
    const mn_store_document *d;
    const unsigned char *blob;
    int len;
};

static mn_status put_body(struct sqlite_store *s, void *arg)
{
    struct put_arg *a = arg;
    const mn_store_document *d = a->d;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_PUT, &st,
                                    ARGS(ARG_TEXT(d->ns), ARG_TEXT(d->path), ARG_TEXT(d->key), ARG_TEXT(d->value),
                                         ARG_INT(d->created_at), ARG_INT(d->updated_at), ARG_INT(d->expires_at),
                                         ARG_INT(d->ttl_ms), ARG_INT(a->blob ? d->dim : 0)));
    if (rc)
        return rc;
    if (a->blob)
        sqlite3_bind_blob(st, 10, a->blob, a->len, SQLITE_STATIC);
    return mn__sqlite_step_done(s, st, "document put");
}

/* A document without vectors is stored with dim 0, whatever d->dim says: dim tells a reader
 * that does not read the vectors (a scan without them) whether there are any. */
static mn_status op_put(mn_store *st, const mn_store_document *d)
{
    if (!d->ns || !d->path || !d->key || !d->value)
        return mn__err(MN_MISUSE, "document put without its namespace, path, key or value");
    struct put_arg a = {d, NULL, 0};
    unsigned char *blob = NULL;
    mn_status rc = mn__vecblob_many_new(d->vectors, d->n_vectors, d->dim, &blob, &a.len);
    a.blob = blob;
    if (!rc)
        rc = mn__sqlite_run_write(st, put_body, NULL, &a);
    free(blob);
    return rc;
}

struct key_arg {
    int64_t removed; /* first: mn__sqlite_run_remove reads it */
    const char *ns, *path, *key;
    int64_t num; /* touch: the new expires_at; get and purge: now */
    mn_store_document_fn fn;
    void *user;
};

static const char SQL_TOUCH[] = "UPDATE documents SET expires_at = ?4 WHERE ns = ?1 AND path = ?2 AND key = ?3";
static const char SQL_REMOVE[] = "DELETE FROM documents WHERE ns = ?1 AND path = ?2 AND key = ?3";

/* Runs SQL_TOUCH or SQL_REMOVE (which has no ?4); a->removed gets the rows it changed. */
static mn_status key_write(struct sqlite_store *s, struct key_arg *a, const char *sql, const char *what)
{
    mn_status rc =
        mn__sqlite_run(s, sql, what, ARGS(ARG_TEXT(a->ns), ARG_TEXT(a->path), ARG_TEXT(a->key), ARG_INT(a->num)));
    if (!rc)
        a->removed = sqlite3_changes(s->db);
    return rc;
}

static mn_status touch_body(struct sqlite_store *s, void *arg)
{
    return key_write(s, arg, SQL_TOUCH, "document touch");
}

static mn_status remove_body(struct sqlite_store *s, void *arg)
{
    return key_write(s, arg, SQL_REMOVE, "document remove");
}

static mn_status op_touch(mn_store *st, const char *ns, const char *path, const char *key, int64_t expires_at)
{
    if (!ns || !path || !key)
        return mn__err(MN_MISUSE, "document touch without its namespace, path or key");
    struct key_arg a = {0, ns, path, key, expires_at, NULL, NULL};
    return mn__sqlite_run_write(st, touch_body, NULL, &a);
}

static mn_status op_remove(mn_store *st, const char *ns, const char *path, const char *key, int64_t *removed)
{
    *removed = 0;
    if (!ns || !path || !key)
        return mn__err(MN_MISUSE, "document remove without its namespace, path or key");
    struct key_arg a = {0, ns, path, key, 0, NULL, NULL};
    return mn__sqlite_run_remove(st, remove_body, &a, removed);
}

/* ---- get ------------------------------------------------------------------------------------- */

static const char SQL_GET[] = "SELECT " COLS ", vectors FROM documents WHERE ns = ?1 AND path = ?2 AND key = ?3"
                              LIVE("?4");

static mn_status get_body(struct sqlite_store *s, void *arg)
{
    struct key_arg *a = arg;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_GET, &st,
                                    ARGS(ARG_TEXT(a->ns), ARG_TEXT(a->path), ARG_TEXT(a->key), ARG_INT(a->num)));
    if (rc)
        return rc;
    float *buf = NULL;
    size_t cap = 0;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        mn_store_document d;
        row_read(st, &d);
        if (!(rc = vectors_decode(s, st, &d, &buf, &cap)))
            a->fn(a->user, &d);
    }
    free(buf);
    return mn__sqlite_finish(s, st, r, rc, "document get");
}

static mn_status op_get(mn_store *st, const char *ns, const char *path, const char *key, int64_t now,
                        mn_store_document_fn fn, void *user)
{
    if (!ns || !path || !key)
        return mn__err(MN_MISUSE, "document get without its namespace, path or key");
    struct key_arg a = {0, ns, path, key, now, fn, user};
    return mn__sqlite_run_scan(st, get_body, &a);
}

/* ---- scan, paths ----------------------------------------------------------------------------- */

/* A prefix's rows are one range of the primary key's index: paths from ?2 up to ?2 || '/' ('/'
 * is '.' + 1), less those that go on with a byte below '.' ("a-b" for "a"). Every parameter is
 * named in each text. The vectors are the last column, read only when asked for. */
#define PREFIX "path >= ?2 AND path < ?2 || '/' AND (path = ?2 OR path >= ?2 || '.')"
#define SCAN(where)                                                                                                  \
    "SELECT " COLS ", CASE WHEN ?4 THEN vectors END FROM documents WHERE " where LIVE("?3")                          \
    " ORDER BY ns, path, key"
static const char SQL_SCAN_NS_PREFIX[] = SCAN("ns = ?1 AND " PREFIX);
static const char SQL_SCAN_NS[] = SCAN("ns = ?1 AND ?2 IS NULL");
static const char SQL_SCAN_PREFIX[] = SCAN("?1 IS NULL AND " PREFIX);
static const char SQL_SCAN_ALL[] = SCAN("?1 IS NULL AND ?2 IS NULL");
static const char SQL_PATHS[] = "SELECT DISTINCT path FROM documents WHERE ns = ?1" LIVE("?2") " ORDER BY path";

struct scan_arg {
    const mn_store_document_scan *q;
    mn_store_document_fn fn;
    const char *ns; /* paths */
    int64_t now;
    mn_store_document_path_fn path_fn;
    void *user;
};

static mn_status scan_body(struct sqlite_store *s, void *arg)
{
    struct scan_arg *a = arg;
    const mn_store_document_scan *q = a->q;
    const char *sql = q->ns ? (q->prefix ? SQL_SCAN_NS_PREFIX : SQL_SCAN_NS)
                            : (q->prefix ? SQL_SCAN_PREFIX : SQL_SCAN_ALL);
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(
        s, sql, &st, ARGS(ARG_TEXT(q->ns), ARG_TEXT(q->prefix), ARG_INT(q->now), ARG_INT(q->with_vectors != 0)));
    if (rc)
        return rc;
    float *buf = NULL;
    size_t cap = 0;
    int r, stop = 0;
    while (!rc && !stop && (r = sqlite3_step(st)) == SQLITE_ROW) {
        mn_store_document d;
        row_read(st, &d);
        if (!(rc = vectors_decode(s, st, &d, &buf, &cap)))
            stop = a->fn(a->user, &d) != 0;
    }
    free(buf);
    return mn__sqlite_finish(s, st, r, rc, "document scan");
}

static mn_status paths_body(struct sqlite_store *s, void *arg)
{
    struct scan_arg *a = arg;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_PATHS, &st, ARGS(ARG_TEXT(a->ns), ARG_INT(a->now)));
    if (rc)
        return rc;
    int r, stop = 0;
    while (!stop && (r = sqlite3_step(st)) == SQLITE_ROW)
        stop = a->path_fn(a->user, mn__sqlite_col_text(st, 0)) != 0;
    return mn__sqlite_finish(s, st, r, rc, "document paths");
}

static mn_status op_scan(mn_store *st, const mn_store_document_scan *q, mn_store_document_fn fn, void *user)
{
    struct scan_arg a = {q, fn, NULL, 0, NULL, user};
    return mn__sqlite_run_scan(st, scan_body, &a);
}

static mn_status op_paths(mn_store *st, const char *ns, int64_t now, mn_store_document_path_fn fn, void *user)
{
    if (!ns)
        return mn__err(MN_MISUSE, "document paths without a namespace");
    struct scan_arg a = {NULL, NULL, ns, now, fn, user};
    return mn__sqlite_run_scan(st, paths_body, &a);
}

/* ---- purge ----------------------------------------------------------------------------------- */

/* The expired rows through documents_by_expiry (of every namespace, or of ?2's), or all of ?2's
 * rows (?1 0). Every parameter is named in each text. */
static const char SQL_PURGE_EXPIRED[] =
    "DELETE FROM documents WHERE expires_at > 0 AND expires_at <= ?1 AND (?2 IS NULL OR ns = ?2)";
static const char SQL_PURGE_NS[] = "DELETE FROM documents WHERE ns = ?2 AND ?1 = 0";

static mn_status purge_body(struct sqlite_store *s, void *arg)
{
    struct key_arg *a = arg;
    mn_status rc = mn__sqlite_run(s, a->num ? SQL_PURGE_EXPIRED : SQL_PURGE_NS, "document purge",
                                  ARGS(ARG_INT(a->num), ARG_TEXT(a->ns)));
    if (!rc)
        a->removed = sqlite3_changes(s->db);
    return rc;
}

static mn_status op_purge(mn_store *st, const char *ns, int64_t now, int64_t *removed)
{
    *removed = 0;
    if (!now && !ns)
        return mn__err(MN_MISUSE, "document purge of a whole namespace without one");
    struct key_arg a = {0, ns, NULL, NULL, now, NULL, NULL};
    return mn__sqlite_run_remove(st, purge_body, &a, removed);
}

const struct mn_store_document_ops mn_sqlite_document_ops = {
    .put = op_put,
    .get = op_get,
    .touch = op_touch,
    .remove = op_remove,
    .scan = op_scan,
    .paths = op_paths,
    .purge = op_purge,
};
