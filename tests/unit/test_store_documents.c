/*
 * test_store_documents.c — the document store (store/store_document.h) on each backend: SQLite
 * (unit/test_store_documents) and PostgreSQL (pg/unit/test_store_documents). A put stores the
 * value byte for byte and its vectors bit for bit, and a put over a row keeps its created_at only;
 * a get, a scan and a path listing leave out what expired at `now` (and nothing at 0); a scan
 * matches a prefix as a whole label ("a" finds "a" and "a.b", not "ab" or "a-b"), one namespace
 * or every one, in byte order of namespace, path and key, with or without the vectors; touch,
 * remove and both purges change what they say and no more; between begin and commit every
 * operation runs in that transaction; a database of the schema version before gets the table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <float.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_document.h"
#include "test_db.h"

static char dir[256], file[400];
static mn_store *st;

static int open_store(void)
{
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 0};
    if (mn__store_open(test_db_target(file), &o, &st) != MN_OK) {
        fprintf(stderr, "open: %s\n", mn_errmsg());
        return -1;
    }
    return 0;
}

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "store-documents") != 0)
        return -1;
    snprintf(file, sizeof file, "%s/docs.db", dir);
    return open_store();
}

static int teardown(void **state)
{
    (void)state;
    if (st)
        st->ops->close(st);
    return test_rmdir(dir);
}

/* ---- helpers --------------------------------------------------------------------------------- */

/* Stores a document without vectors; updated_at is created_at. */
static mn_status put(const char *ns, const char *path, const char *key, const char *value, int64_t created,
                     int64_t expires)
{
    mn_store_document d = {.ns = ns, .path = path, .key = key, .value = value, .created_at = created,
                           .updated_at = created, .expires_at = expires};
    return st->ops->document->put(st, &d);
}

/* One row as read: its fields, and its vectors copied. */
struct row {
    char line[240]; /* "ns|path|key|value|created|updated|expires|ttl|dim|n_vectors" */
    float vec[16];
    int has_vectors; /* d->vectors was not NULL */
};

/* What a read handed over. No assertion fails inside a callback, where the store holds its
 * lock: a callback notes what went wrong (bad) and stops, the caller checks. */
struct rows {
    struct row r[320];
    size_t n, stop_after;
    int keys_only; /* line is "ns path key" */
    int bad;
};

static int collect(void *user, const mn_store_document *d)
{
    struct rows *s = user;
    if (s->n == sizeof s->r / sizeof s->r[0] || d->n_vectors * d->dim > 16 || (!d->vectors && d->n_vectors)) {
        s->bad = 1;
        return 1;
    }
    struct row *r = &s->r[s->n++];
    if (s->keys_only)
        snprintf(r->line, sizeof r->line, "%s %s %s", d->ns, d->path, d->key);
    else
        snprintf(r->line, sizeof r->line, "%s|%s|%s|%s|%lld|%lld|%lld|%lld|%u|%zu", d->ns, d->path, d->key, d->value,
                 (long long)d->created_at, (long long)d->updated_at, (long long)d->expires_at, (long long)d->ttl_ms,
                 (unsigned)d->dim, d->n_vectors);
    r->has_vectors = d->vectors != NULL;
    if (d->vectors)
        memcpy(r->vec, d->vectors, d->n_vectors * d->dim * sizeof(float));
    return s->stop_after && s->n == s->stop_after;
}

/* The row get hands over (s->n 0: none). */
static void get(const char *ns, const char *path, const char *key, int64_t now, struct rows *s)
{
    memset(s, 0, sizeof *s);
    assert_int_equal(st->ops->document->get(st, ns, path, key, now, collect, s), MN_OK);
    assert_true(s->n <= 1 && !s->bad);
}

/* The scan of (ns, prefix, now), with vectors, stopped after stop_after rows (0: none), as
 * "ns path key" joined by ", ". */
static const char *scan(const char *ns, const char *prefix, int64_t now, size_t stop_after)
{
    static char out[8000];
    static struct rows s;
    memset(&s, 0, sizeof s);
    s.keys_only = 1;
    s.stop_after = stop_after;
    mn_store_document_scan q = {ns, prefix, now, 1};
    assert_int_equal(st->ops->document->scan(st, &q, collect, &s), MN_OK);
    assert_false(s.bad);
    out[0] = '\0';
    for (size_t i = 0; i < s.n; i++)
        snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", i ? ", " : "", s.r[i].line);
    return out;
}

static int collect_path(void *user, const char *path)
{
    char *out = user;
    snprintf(out + strlen(out), 2000 - strlen(out), "%s%s", *out ? ", " : "", path);
    return strcmp(path, "STOP") == 0;
}

static const char *paths(const char *ns, int64_t now)
{
    static char out[2000];
    out[0] = '\0';
    assert_int_equal(st->ops->document->paths(st, ns, now, collect_path, out), MN_OK);
    return out;
}

static int64_t purge(const char *ns, int64_t now)
{
    int64_t n = -1;
    assert_int_equal(st->ops->document->purge(st, ns, now, &n), MN_OK);
    return n;
}

/* The first column of the first row of sql, read beside the store, as text. */
static const char *sql_value(const char *sql)
{
    static char out[256];
    if (test_db_pg()) {
        assert_int_equal(test_db_sql(test_db_target(file), sql, out, sizeof out), 0);
        return out;
    }
    sqlite3 *c = NULL;
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_open_v2(file, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(q, 0);
    snprintf(out, sizeof out, "%s", t ? (const char *)t : "");
    sqlite3_finalize(q);
    sqlite3_close(c);
    return out;
}

static int64_t rows(void) { return strtoll(sql_value("SELECT count(*) FROM documents"), NULL, 10); }

/* After each test, whatever it left (a failed one leaves its rows): the next starts empty. */
static int clean(void **state)
{
    (void)state;
    if (test_db_pg())
        return test_db_sql(test_db_target(file), "DELETE FROM documents", NULL, 0);
    sqlite3 *c = NULL;
    int r = sqlite3_open(file, &c);
    if (r == SQLITE_OK)
        r = sqlite3_busy_timeout(c, 5000);
    if (r == SQLITE_OK)
        r = sqlite3_exec(c, "DELETE FROM documents", NULL, NULL, NULL);
    sqlite3_close(c);
    return r == SQLITE_OK ? 0 : -1;
}

/* ---- tests ----------------------------------------------------------------------------------- */

/* The value comes back byte for byte (key order, spacing, escapes, UTF-8 of 2 to 4 bytes) with
 * every field; a document without vectors has dim 0 and none; a missing one is not handed over. */
static void put_get_round_trip(void **state)
{
    (void)state;
    const char *value = "{\"z\":1, \"a\" : \"caf\xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80\",\n\"esc\":\"\\u00e9\\n\","
                        "\"n\":[1.50,2e3,null]}";
    mn_store_document d = {.ns = "rt", .path = "users.alice", .key = "prefs", .value = value, .created_at = 1000,
                           .updated_at = 1001, .expires_at = 90000, .ttl_ms = 60000, .dim = 3};
    assert_int_equal(st->ops->document->put(st, &d), MN_OK); /* dim 3 with no vectors: stored as none */
    struct rows s;
    get("rt", "users.alice", "prefs", 0, &s);
    assert_int_equal(s.n, 1);
    char want[300];
    snprintf(want, sizeof want, "rt|users.alice|prefs|%s|1000|1001|90000|60000|0|0", value);
    assert_string_equal(s.r[0].line, want);
    assert_false(s.r[0].has_vectors);
    assert_string_equal(sql_value("SELECT coalesce(length(vectors), -1) || ' ' || dim FROM documents"), "-1 0");
    /* missing: another key, path or namespace */
    get("rt", "users.alice", "other", 0, &s);
    assert_int_equal(s.n, 0);
    get("rt", "users", "prefs", 0, &s);
    assert_int_equal(s.n, 0);
    get("rt2", "users.alice", "prefs", 0, &s);
    assert_int_equal(s.n, 0);
    assert_int_equal(purge("rt", 0), 1);
}

/* Two vectors of dim 3 come back bit for bit (as n_vectors 2), stored as 24 bytes. */
static void vectors_round_trip(void **state)
{
    (void)state;
    const float v[6] = {0.25f, -1.5f, FLT_MAX, -0.0f, 1e-45f /* subnormal */, 3.14159274f};
    mn_store_document d = {.ns = "vec", .path = "p", .key = "k", .value = "{}", .created_at = 1, .updated_at = 1,
                           .dim = 3, .n_vectors = 2, .vectors = v};
    assert_int_equal(st->ops->document->put(st, &d), MN_OK);
    struct rows s;
    get("vec", "p", "k", 0, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.r[0].line, "vec|p|k|{}|1|1|0|0|3|2");
    assert_true(s.r[0].has_vectors);
    assert_memory_equal(s.r[0].vec, v, sizeof v);
    assert_string_equal(sql_value("SELECT length(vectors) || ' ' || dim FROM documents"), "24 3");
    /* a scan with them, and one without: dim stays, the vectors do not come */
    memset(&s, 0, sizeof s);
    mn_store_document_scan q = {"vec", NULL, 0, 1};
    assert_int_equal(st->ops->document->scan(st, &q, collect, &s), MN_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.r[0].line, "vec|p|k|{}|1|1|0|0|3|2");
    assert_memory_equal(s.r[0].vec, v, sizeof v);
    memset(&s, 0, sizeof s);
    q.with_vectors = 0;
    assert_int_equal(st->ops->document->scan(st, &q, collect, &s), MN_OK);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.r[0].line, "vec|p|k|{}|1|1|0|0|3|0");
    assert_false(s.r[0].has_vectors);
    /* vectors without a dim, or a NULL array, are a caller's mistake: nothing stored */
    d.key = "bad";
    d.dim = 0;
    assert_int_equal(st->ops->document->put(st, &d), MN_MISUSE);
    d.dim = 3;
    d.vectors = NULL;
    assert_int_equal(st->ops->document->put(st, &d), MN_MISUSE);
    assert_int_equal(rows(), 1);
    assert_int_equal(purge("vec", 0), 1);
}

/* A put over a row keeps its created_at and replaces the value, updated_at, expiry, time to
 * live and vectors (to none, and back). */
static void upsert_keeps_created_at(void **state)
{
    (void)state;
    const float v1[3] = {1, 2, 3}, v2[4] = {4, 5, 6, 7};
    mn_store_document d = {.ns = "up", .path = "p", .key = "k", .value = "{\"v\":1}", .created_at = 1000,
                           .updated_at = 1000, .expires_at = 5000, .ttl_ms = 4000, .dim = 3, .n_vectors = 1,
                           .vectors = v1};
    assert_int_equal(st->ops->document->put(st, &d), MN_OK);
    mn_store_document e = {.ns = "up", .path = "p", .key = "k", .value = "{\"v\":2}", .created_at = 2000,
                           .updated_at = 3000};
    assert_int_equal(st->ops->document->put(st, &e), MN_OK);
    struct rows s;
    get("up", "p", "k", 0, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.r[0].line, "up|p|k|{\"v\":2}|1000|3000|0|0|0|0");
    assert_false(s.r[0].has_vectors);
    mn_store_document f = {.ns = "up", .path = "p", .key = "k", .value = "{\"v\":3}", .created_at = 4000,
                           .updated_at = 4000, .expires_at = 9000, .ttl_ms = 5000, .dim = 2, .n_vectors = 2,
                           .vectors = v2};
    assert_int_equal(st->ops->document->put(st, &f), MN_OK);
    get("up", "p", "k", 0, &s);
    assert_string_equal(s.r[0].line, "up|p|k|{\"v\":3}|1000|4000|9000|5000|2|2");
    assert_memory_equal(s.r[0].vec, v2, sizeof v2);
    assert_int_equal(rows(), 1);
    assert_int_equal(purge("up", 0), 1);
}

/* get leaves out a row expired at now (expires_at <= now), not at 0; touch moves the expiry (0:
 * never) of a row that is there and makes none; remove says whether it deleted one. */
static void expiry_touch_remove(void **state)
{
    (void)state;
    assert_int_equal(put("ex", "p", "k", "{}", 1000, 5000), MN_OK);
    struct rows s;
    get("ex", "p", "k", 4999, &s);
    assert_int_equal(s.n, 1);
    get("ex", "p", "k", 5000, &s);
    assert_int_equal(s.n, 0);
    get("ex", "p", "k", 6000, &s);
    assert_int_equal(s.n, 0);
    get("ex", "p", "k", 0, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(st->ops->document->touch(st, "ex", "p", "k", 8000), MN_OK);
    get("ex", "p", "k", 6000, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.r[0].line, "ex|p|k|{}|1000|1000|8000|0|0|0");
    assert_int_equal(st->ops->document->touch(st, "ex", "p", "k", 0), MN_OK);
    get("ex", "p", "k", INT64_MAX, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(st->ops->document->touch(st, "ex", "p", "none", 8000), MN_OK);
    assert_int_equal(rows(), 1);
    int64_t n = -1;
    assert_int_equal(st->ops->document->remove(st, "ex", "p", "k", &n), MN_OK);
    assert_int_equal(n, 1);
    assert_int_equal(st->ops->document->remove(st, "ex", "p", "k", &n), MN_OK);
    assert_int_equal(n, 0);
    get("ex", "p", "k", 0, &s);
    assert_int_equal(s.n, 0);
    assert_int_equal(rows(), 0);
}

/* A prefix matches its path and the paths below it, label by label; the order is namespace,
 * path, key as bytes ("B" below "a", "-" below "." below letters); no namespace: every one. */
static void scan_prefix_and_order(void **state)
{
    (void)state;
    const char *paths_n1[] = {"a", "a.b", "a.b.c", "ab", "a-b", "a.c", "b", "B", "a.bc"};
    for (size_t i = 0; i < sizeof paths_n1 / sizeof paths_n1[0]; i++)
        assert_int_equal(put("n1", paths_n1[i], "k", "{}", 1, 0), MN_OK);
    assert_int_equal(put("n1", "a", "K", "{}", 1, 0), MN_OK);
    assert_int_equal(put("n1", "a", "k10", "{}", 1, 0), MN_OK);
    assert_int_equal(put("n2", "a", "k", "{}", 1, 0), MN_OK);
    assert_int_equal(put("N0", "a.b", "k", "{}", 1, 0), MN_OK);
    assert_string_equal(scan("n1", "a", 0, 0),
                        "n1 a K, n1 a k, n1 a k10, n1 a.b k, n1 a.b.c k, n1 a.bc k, n1 a.c k");
    assert_string_equal(scan("n1", "a.b", 0, 0), "n1 a.b k, n1 a.b.c k");
    assert_string_equal(scan("n1", "a.b.c", 0, 0), "n1 a.b.c k");
    assert_string_equal(scan("n1", "ab", 0, 0), "n1 ab k");
    assert_string_equal(scan("n1", "a.", 0, 0), ""); /* not a label of any path */
    assert_string_equal(scan("n1", "c", 0, 0), "");
    assert_string_equal(scan("n1", NULL, 0, 0), "n1 B k, n1 a K, n1 a k, n1 a k10, n1 a-b k, n1 a.b k, n1 a.b.c k,"
                                                " n1 a.bc k, n1 a.c k, n1 ab k, n1 b k");
    assert_string_equal(scan("n2", NULL, 0, 0), "n2 a k");
    assert_string_equal(scan("n3", NULL, 0, 0), "");
    /* every namespace, whole or under a prefix */
    assert_string_equal(scan(NULL, "a.b", 0, 0), "N0 a.b k, n1 a.b k, n1 a.b.c k");
    assert_string_equal(scan(NULL, "a", 0, 3), "N0 a.b k, n1 a K, n1 a k");
    assert_string_equal(scan(NULL, NULL, 0, 0), "N0 a.b k, n1 B k, n1 a K, n1 a k, n1 a k10, n1 a-b k, n1 a.b k,"
                                                " n1 a.b.c k, n1 a.bc k, n1 a.c k, n1 ab k, n1 b k, n2 a k");
    /* a callback that stops */
    assert_string_equal(scan("n1", "a", 0, 2), "n1 a K, n1 a k");
    assert_int_equal(purge("n1", 0), 11);
    assert_int_equal(purge("n2", 0), 1);
    assert_int_equal(purge("N0", 0), 1);
    assert_int_equal(rows(), 0);
}

/* With now, a scan and a path listing leave out what expired (expires_at <= now); with 0 they
 * do not. Paths are distinct, in byte order, of one namespace. */
static void scan_and_paths_expiry(void **state)
{
    (void)state;
    assert_int_equal(put("px", "x.live", "k1", "{}", 1, 0), MN_OK);
    assert_int_equal(put("px", "x.live", "k2", "{}", 1, 100), MN_OK);
    assert_int_equal(put("px", "x.gone", "k1", "{}", 1, 100), MN_OK);
    assert_int_equal(put("px", "x.later", "k1", "{}", 1, 300), MN_OK);
    assert_int_equal(put("px", "A", "k1", "{}", 1, 0), MN_OK);
    assert_int_equal(put("py", "x.other", "k1", "{}", 1, 0), MN_OK);
    assert_string_equal(scan("px", "x", 0, 0), "px x.gone k1, px x.later k1, px x.live k1, px x.live k2");
    assert_string_equal(scan("px", "x", 100, 0), "px x.later k1, px x.live k1");
    assert_string_equal(scan("px", "x", 99, 0), "px x.gone k1, px x.later k1, px x.live k1, px x.live k2");
    assert_string_equal(scan(NULL, NULL, 300, 0), "px A k1, px x.live k1, py x.other k1");
    assert_string_equal(paths("px", 0), "A, x.gone, x.later, x.live");
    assert_string_equal(paths("px", 100), "A, x.later, x.live");
    assert_string_equal(paths("px", 300), "A, x.live");
    assert_string_equal(paths("py", 0), "x.other");
    assert_string_equal(paths("pz", 0), "");
    assert_int_equal(put("px", "STOP", "k", "{}", 1, 0), MN_OK); /* a callback that stops */
    assert_string_equal(paths("px", 0), "A, STOP");
    assert_int_equal(purge("px", 0), 6);
    assert_int_equal(purge("py", 0), 1);
}

/* More rows than a first read takes (PostgreSQL reads pages): every one, in order, and a stop
 * past the first page. */
static void scan_many(void **state)
{
    (void)state;
    char path[32];
    for (int i = 0; i < 300; i++) {
        snprintf(path, sizeof path, "p.%03d", (i * 7) % 300); /* every path once, not in order */
        assert_int_equal(put(i % 2 ? "m1" : "m2", path, i % 3 ? "a" : "b", "{}", 1, 0), MN_OK);
    }
    struct rows *all = calloc(1, sizeof *all), *some = calloc(1, sizeof *some);
    assert_true(all && some);
    all->keys_only = some->keys_only = 1;
    mn_store_document_scan q = {"m1", "p", 0, 0};
    assert_int_equal(st->ops->document->scan(st, &q, collect, all), MN_OK);
    assert_int_equal(all->n, 150);
    all->n = 0;
    q.ns = NULL; /* the lines' fields are of one length each: as strings they sort as the keys */
    assert_int_equal(st->ops->document->scan(st, &q, collect, all), MN_OK);
    assert_int_equal(all->n, 300);
    for (size_t i = 1; i < all->n; i++)
        assert_true(strcmp(all->r[i - 1].line, all->r[i].line) < 0);
    some->stop_after = 40;
    assert_int_equal(st->ops->document->scan(st, &q, collect, some), MN_OK);
    assert_int_equal(some->n, 40);
    for (size_t i = 0; i < some->n; i++)
        assert_string_equal(some->r[i].line, all->r[i].line);
    free(all);
    free(some);
    assert_int_equal(purge("m1", 0), 150);
    assert_int_equal(purge("m2", 0), 150);
}

/* By time: the rows with 0 < expires_at <= now, of one namespace (the others untouched) or of
 * every one; never one without an expiry. Of a namespace (now 0): every row of it and no other. */
static void purges(void **state)
{
    (void)state;
    assert_int_equal(put("g1", "p", "a", "{}", 1, 100), MN_OK);
    assert_int_equal(put("g1", "p", "b", "{}", 1, 200), MN_OK);
    assert_int_equal(put("g1", "p", "c", "{}", 1, 0), MN_OK);
    assert_int_equal(put("g2", "p", "a", "{}", 1, 100), MN_OK);
    assert_int_equal(put("g2", "p", "b", "{}", 1, 0), MN_OK);
    assert_int_equal(purge("g1", 99), 0);
    assert_int_equal(purge("g1", 150), 1);
    assert_string_equal(scan(NULL, NULL, 0, 0), "g1 p b, g1 p c, g2 p a, g2 p b");
    assert_int_equal(purge(NULL, 250), 2); /* g1's b, g2's a */
    assert_string_equal(scan(NULL, NULL, 0, 0), "g1 p c, g2 p b");
    assert_int_equal(purge(NULL, INT64_MAX), 0);
    assert_int_equal(put("g1", "q", "d", "{}", 1, 500), MN_OK);
    assert_int_equal(purge("g1", 0), 2); /* expired or not */
    assert_string_equal(scan(NULL, NULL, 0, 0), "g2 p b");
    assert_int_equal(purge("g1", 0), 0);
    int64_t n = -1;
    assert_int_equal(st->ops->document->purge(st, NULL, 0, &n), MN_MISUSE); /* every row of no namespace */
    assert_int_equal(n, 0);
    assert_int_equal(rows(), 1);
    assert_int_equal(purge("g2", 0), 1);
}

/* A database of the version before (SQLite 15, PostgreSQL 12: no documents table) gets the table
 * when it is opened, its other rows untouched. */
static void migrates_from_the_version_before(void **state)
{
    (void)state;
    mn_session ses = {.id = "0190f0f0-0000-7000-8000-00000000d001", .ns = "mig", .metadata = "{}",
                      .created_at = 1000, .updated_at = 1000};
    assert_int_equal(st->ops->session_insert(st, &ses), MN_OK);
    assert_int_equal(put("mig", "p", "k", "{}", 1, 0), MN_OK);
    st->ops->close(st);
    st = NULL;
    if (test_db_pg()) {
        /* and version 14's keys and order column of summaries and events, version 15's memory keys,
         * version 16's message keys, version 17's session id and key tables */
        assert_int_equal(test_db_sql(test_db_target(file),
                                     TEST_PG_UNDO_17 " DROP TABLE documents;" TEST_PG_UNDO_14 TEST_PG_UNDO_15 TEST_PG_UNDO_16
                                     " UPDATE mnemo_schema SET version = 12",
                                     NULL, 0),
                         0);
    } else {
        sqlite3 *c = NULL;
        assert_int_equal(sqlite3_open(file, &c), SQLITE_OK);
        assert_int_equal(sqlite3_exec(c, "DROP TABLE documents; PRAGMA user_version = 15", NULL, NULL, NULL),
                         SQLITE_OK);
        sqlite3_close(c);
    }
    assert_int_equal(open_store(), 0);
    assert_string_equal(sql_value(test_db_pg() ? "SELECT version FROM mnemo_schema" : "PRAGMA user_version"),
                        test_db_pg() ? "17" : "16");
    assert_int_equal(rows(), 0);
    assert_string_equal(sql_value("SELECT count(*) FROM sessions WHERE namespace = 'mig'"), "1");
    assert_int_equal(put("mig", "p", "k", "{\"again\":1}", 1, 0), MN_OK);
    struct rows s;
    get("mig", "p", "k", 0, &s);
    assert_int_equal(s.n, 1);
    assert_int_equal(st->ops->session_delete(st, ses.id), MN_OK);
}

/* Between begin and commit every operation runs in that transaction: it sees what the
 * transaction wrote, a commit keeps it, a rollback takes it all back. */
static void inside_begin(void **state)
{
    (void)state;
    struct rows s;
    int64_t n = -1;
    assert_int_equal(st->ops->begin(st), MN_OK);
    assert_int_equal(put("tx", "p", "k1", "{\"in\":1}", 1, 0), MN_OK);
    get("tx", "p", "k1", 0, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(scan("tx", "p", 0, 0), "tx p k1");
    assert_string_equal(paths("tx", 0), "p");
    assert_int_equal(st->ops->commit(st), MN_OK);
    get("tx", "p", "k1", 0, &s);
    assert_int_equal(s.n, 1);
    assert_string_equal(s.r[0].line, "tx|p|k1|{\"in\":1}|1|1|0|0|0|0");
    assert_int_equal(rows(), 1);
    /* rolled back: a put, a touch, a remove and a purge */
    assert_int_equal(put("tx", "p", "k2", "{}", 1, 50), MN_OK);
    assert_int_equal(st->ops->begin(st), MN_OK);
    assert_int_equal(put("tx", "q", "k3", "{}", 1, 0), MN_OK);
    assert_int_equal(st->ops->document->touch(st, "tx", "p", "k1", 10), MN_OK);
    assert_int_equal(st->ops->document->remove(st, "tx", "p", "k2", &n), MN_OK);
    assert_int_equal(n, 1);
    assert_string_equal(scan("tx", NULL, 20, 0), "tx q k3");
    assert_int_equal(purge("tx", 0), 2);
    assert_string_equal(scan("tx", NULL, 0, 0), "");
    st->ops->rollback(st);
    assert_string_equal(scan("tx", NULL, 0, 0), "tx p k1, tx p k2");
    get("tx", "p", "k1", 20, &s);
    assert_int_equal(s.n, 1); /* the touch went too */
    assert_int_equal(purge("tx", 0), 2);
    assert_int_equal(rows(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(put_get_round_trip, clean),
        cmocka_unit_test_teardown(vectors_round_trip, clean),
        cmocka_unit_test_teardown(upsert_keeps_created_at, clean),
        cmocka_unit_test_teardown(expiry_touch_remove, clean),
        cmocka_unit_test_teardown(scan_prefix_and_order, clean),
        cmocka_unit_test_teardown(scan_and_paths_expiry, clean),
        cmocka_unit_test_teardown(scan_many, clean),
        cmocka_unit_test_teardown(purges, clean),
        cmocka_unit_test_teardown(migrates_from_the_version_before, clean),
        cmocka_unit_test(inside_begin), /* last: a failure between begin and commit keeps the lock */
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
