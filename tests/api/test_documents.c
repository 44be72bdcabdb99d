/*
 * test_documents.c — documents through mnemo.h (docs/documents.md): a JSON object at a path and
 * key, replaced in place keeping created_at; search by prefix (labels, not bytes), filter
 * (values and LangGraph's operators), newest first or by meaning; paths by prefix, suffix and
 * depth; time to live and its refresh; namespaces apart and forgotten; export and import with
 * vectors; bad input refused by name. Runs on SQLite (api/documents) and PostgreSQL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[256];

static mn_db *open_db(const char *name, const char *embedder)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", embedder, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static mn_status put_full(mn_db *db, const char *ns, const char *path, const char *key, const char *value,
                          const char *index, int64_t ttl_ms)
{
    mn_document_in in = MN_DOCUMENT_IN_INIT;
    in.ns = ns;
    in.path = path;
    in.key = key;
    in.value = value;
    in.index = index;
    in.ttl_ms = ttl_ms;
    return mn_document_put(db, &in, NULL);
}

static mn_status put(mn_db *db, const char *path, const char *key, const char *value)
{
    return put_full(db, NULL, path, key, value, NULL, 0);
}

/* "path/key" of each document of a search, joined by spaces. */
static void search_keys(mn_db *db, mn_document_query *q, char *out, size_t cap)
{
    mn_documents *l = NULL;
    assert_int_equal(mn_document_search(db, q, &l), MN_OK);
    out[0] = '\0';
    for (size_t i = 0; i < l->count; i++) {
        const mn_document *d = mn_documents_at(l, i);
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s/%s", i ? " " : "", d->path, d->key);
    }
    mn_documents_free(l);
}

static void by_filter(mn_db *db, const char *filter, const char *want)
{
    mn_document_query q = MN_DOCUMENT_QUERY_INIT;
    q.prefix = "f";
    q.filter = filter;
    char got[512];
    search_keys(db, &q, got, sizeof got);
    assert_string_equal(got, want);
}

static void put_get_replace(void **state)
{
    (void)state;
    mn_db *db = open_db("put", "none");
    const char *v1 = "{\"z\":1,\"a\":\"caf\xc3\xa9 \xe2\x9c\x93\",\"n\":{\"x\":[1,2.5,null]}}";
    mn_documents *l = NULL;
    mn_document_in in = MN_DOCUMENT_IN_INIT;
    in.path = "users.alice";
    in.key = "prefs";
    in.value = v1;
    assert_int_equal(mn_document_put(db, &in, &l), MN_OK);
    const mn_document *d = mn_documents_at(l, 0);
    assert_string_equal(d->value, v1); /* byte for byte, key order kept */
    assert_string_equal(d->ns, "default");
    assert_int_equal(d->created_at, d->updated_at);
    assert_int_equal(d->expires_at, 0);
    int64_t created = d->created_at;
    mn_documents_free(l);
    sleep_ms(5);
    assert_int_equal(put(db, "users.alice", "prefs", "{\"theme\":\"dark\"}"), MN_OK);
    assert_int_equal(mn_document_get(db, NULL, "users.alice", "prefs", 1, &l), MN_OK);
    d = mn_documents_at(l, 0);
    assert_string_equal(d->value, "{\"theme\":\"dark\"}");
    assert_int_equal(d->created_at, created);
    assert_true(d->updated_at > created);
    assert_false(d->scored);
    mn_documents_free(l);
    assert_int_equal(mn_document_get(db, NULL, "users.alice", "other", 1, &l), MN_NOTFOUND);
    assert_null(l);
    assert_int_equal(mn_document_get(db, "beta", "users.alice", "prefs", 1, &l), MN_NOTFOUND);
    int64_t n = -1;
    assert_int_equal(mn_document_delete(db, NULL, "users.alice", "prefs", &n), MN_OK);
    assert_int_equal(n, 1);
    assert_int_equal(mn_document_delete(db, NULL, "users.alice", "prefs", &n), MN_OK);
    assert_int_equal(n, 0);
    assert_int_equal(mn_document_get(db, NULL, "users.alice", "prefs", 1, &l), MN_NOTFOUND);
    mn_close(db);
}

static void search_prefix_filter_order(void **state)
{
    (void)state;
    mn_db *db = open_db("search", "none");
    assert_int_equal(put(db, "a", "1", "{}"), MN_OK);
    assert_int_equal(put(db, "a.b", "2", "{}"), MN_OK);
    assert_int_equal(put(db, "ab", "3", "{}"), MN_OK);
    assert_int_equal(put(db, "a-b", "4", "{}"), MN_OK);
    assert_int_equal(put(db, "a.b.c", "5", "{}"), MN_OK);
    mn_document_query q = MN_DOCUMENT_QUERY_INIT;
    char got[512];
    q.prefix = "a";
    search_keys(db, &q, got, sizeof got);
    /* labels, not bytes: "ab" and "a-b" are other paths; the same millisecond sorts by path */
    assert_non_null(strstr(got, "a/1"));
    assert_non_null(strstr(got, "a.b/2"));
    assert_non_null(strstr(got, "a.b.c/5"));
    assert_null(strstr(got, "ab/3"));
    assert_null(strstr(got, "a-b/4"));
    q.prefix = "a.b";
    search_keys(db, &q, got, sizeof got);
    assert_true(strcmp(got, "a.b.c/5 a.b/2") == 0 || strcmp(got, "a.b/2 a.b.c/5") == 0);

    /* newest updated first */
    for (int i = 0; i < 3; i++) {
        char key[8];
        snprintf(key, sizeof key, "k%d", i);
        sleep_ms(3);
        assert_int_equal(put(db, "order", key, "{}"), MN_OK);
    }
    q.prefix = "order";
    search_keys(db, &q, got, sizeof got);
    assert_string_equal(got, "order/k2 order/k1 order/k0");
    q.limit = 1;
    q.offset = 1;
    search_keys(db, &q, got, sizeof got);
    assert_string_equal(got, "order/k1");
    q.offset = 5;
    search_keys(db, &q, got, sizeof got);
    assert_string_equal(got, "");

    assert_int_equal(put(db, "f", "x", "{\"n\":5,\"s\":\"b\",\"tags\":[1,2],\"o\":{\"k\":1}}"), MN_OK);
    sleep_ms(3);
    assert_int_equal(put(db, "f", "y", "{\"n\":2.5,\"s\":\"a\",\"tags\":[1]}"), MN_OK);
    by_filter(db, "{\"n\":5}", "f/x");
    by_filter(db, "{\"o\":{\"k\":1}}", "f/x"); /* JSON equality of objects */
    by_filter(db, "{\"tags\":[1]}", "f/y");
    by_filter(db, "{\"n\":{\"$gt\":2.5}}", "f/x");
    by_filter(db, "{\"n\":{\"$gte\":2.5,\"$lt\":5}}", "f/y");
    by_filter(db, "{\"s\":{\"$lte\":\"a\"}}", "f/y");
    by_filter(db, "{\"s\":{\"$gt\":1}}", ""); /* a string does not compare with a number */
    by_filter(db, "{\"s\":{\"$in\":[\"a\",\"c\"]}}", "f/y");
    by_filter(db, "{\"s\":{\"$nin\":[\"a\"]}}", "f/x");
    by_filter(db, "{\"o\":{\"$ne\":{\"k\":1}}}", "f/y"); /* a missing member is not equal */
    by_filter(db, "{\"o\":{\"$eq\":{\"k\":1}},\"n\":5}", "f/x");
    by_filter(db, "{}", "f/y f/x");
    mn_close(db);
}

static void refusals(void **state)
{
    (void)state;
    mn_db *db = open_db("refuse", "none");
    const char *bad_paths[] = {"", "a..b", ".a", "a.", "a\tb"};
    for (size_t i = 0; i < sizeof bad_paths / sizeof *bad_paths; i++) {
        assert_int_equal(put(db, bad_paths[i], "k", "{}"), MN_INVALID);
        assert_non_null(strstr(mn_errmsg(), "path"));
    }
    assert_int_equal(put(db, "a", "", "{}"), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "key"));
    assert_int_equal(put(db, "a", "k", "[1]"), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "value"));
    assert_int_equal(put(db, "a", "k", "{\"a\":"), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "value"));
    char *big = malloc(MN_DOCUMENT_MAX_VALUE + 16);
    assert_non_null(big);
    memset(big, ' ', MN_DOCUMENT_MAX_VALUE + 8);
    memcpy(big, "{\"a\":1}", 7);
    big[MN_DOCUMENT_MAX_VALUE + 8] = '\0';
    assert_int_equal(put(db, "a", "k", big), MN_TOOBIG);
    free(big);
    assert_int_equal(put_full(db, NULL, "a", "k", "{}", "[]", 0), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "index"));
    const char *bad_fields[] = {"[\"a[b\"]", "[\"a[x]\"]", "[\"{a,b\"]", "[\"a]\"]", "[1]", "[\"\"]"};
    for (size_t i = 0; i < sizeof bad_fields / sizeof *bad_fields; i++) {
        assert_int_equal(put_full(db, NULL, "a", "k", "{}", bad_fields[i], 0), MN_INVALID);
        assert_non_null(strstr(mn_errmsg(), "index[0]"));
    }
    assert_int_equal(put_full(db, NULL, "a", "k", "{}", "[\"a[-1].b\",\"c[*]\",\"{x, y.z}\",\"*\",\"$\"]", 0), MN_OK);
    assert_int_equal(put_full(db, NULL, "a", "k", "{}", "true", 0), MN_OK); /* as NULL: the whole value */
    assert_int_equal(put_full(db, NULL, "a", "k", "{}", "false", 0), MN_OK);
    assert_int_equal(put_full(db, NULL, "a", "k", "{}", NULL, -1), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "ttl_ms"));
    assert_int_equal(put_full(db, "no spaces", "a", "k", "{}", NULL, 0), MN_INVALID);
    mn_document_query q = MN_DOCUMENT_QUERY_INIT;
    mn_documents *l = NULL;
    q.filter = "{\"n\":{\"$regex\":\"x\"}}";
    assert_int_equal(mn_document_search(db, &q, &l), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "$regex"));
    q.filter = "{\"n\":{\"$in\":3}}";
    assert_int_equal(mn_document_search(db, &q, &l), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "filter.n.$in"));
    q.filter = NULL;
    q.limit = 1001;
    assert_int_equal(mn_document_search(db, &q, &l), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "limit"));
    q.limit = 0;
    q.query = "anything";
    assert_int_equal(mn_document_search(db, &q, &l), MN_UNAVAILABLE); /* no embedder: said, not ignored */
    assert_non_null(strstr(mn_errmsg(), "embedder"));
    assert_null(l);
    mn_document_in bad = {0}; /* not made with its _INIT macro */
    assert_int_equal(mn_document_put(db, &bad, NULL), MN_MISUSE);
    mn_close(db);
}

static void by_meaning(void **state)
{
    (void)state;
    mn_db *db = open_db("meaning", "hash");
    assert_int_equal(put(db, "docs", "py", "{\"text\":\"python programming tutorial for beginners\"}"), MN_OK);
    assert_int_equal(put(db, "docs", "pasta", "{\"text\":\"cooking fresh pasta at home\"}"), MN_OK);
    assert_int_equal(put_full(db, NULL, "docs", "plain", "{\"text\":\"python programming\"}", "false", 0), MN_OK);
    assert_int_equal(put_full(db, NULL, "docs", "fields",
                              "{\"title\":\"gardening\",\"chapters\":[{\"t\":\"soil\"},{\"t\":\"python programming\"}]}",
                              "[\"chapters[*].t\"]", 0),
                     MN_OK);
    mn_document_query q = MN_DOCUMENT_QUERY_INIT;
    q.prefix = "docs";
    q.query = "python programming";
    mn_documents *l = NULL;
    assert_int_equal(mn_document_search(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 4);
    const mn_document *first = mn_documents_at(l, 0), *last = mn_documents_at(l, 3);
    /* the chapter's vector is the query's text exactly: the closest field scores */
    assert_string_equal(first->key, "fields");
    assert_true(first->scored);
    assert_true(first->score > 0.99);
    assert_string_equal(mn_documents_at(l, 1)->key, "py");
    assert_true(mn_documents_at(l, 1)->score > mn_documents_at(l, 2)->score);
    assert_string_equal(last->key, "plain"); /* index false: found, unscored, last */
    assert_false(last->scored);
    mn_documents_free(l);
    q.filter = "{\"title\":{\"$ne\":\"gardening\"}}";
    q.limit = 1;
    assert_int_equal(mn_document_search(db, &q, &l), MN_OK);
    assert_string_equal(mn_documents_at(l, 0)->key, "py");
    mn_documents_free(l);
    mn_close(db);
}

static void time_to_live(void **state)
{
    (void)state;
    mn_db *db = open_db("ttl", "none");
    assert_int_equal(put_full(db, NULL, "t", "short", "{}", NULL, 1), MN_OK);
    assert_int_equal(put_full(db, NULL, "t", "long", "{}", NULL, 3600000), MN_OK);
    sleep_ms(20);
    mn_documents *l = NULL;
    assert_int_equal(mn_document_get(db, NULL, "t", "short", 1, &l), MN_NOTFOUND);
    mn_document_query q = MN_DOCUMENT_QUERY_INIT;
    char got[256];
    search_keys(db, &q, got, sizeof got);
    assert_string_equal(got, "t/long");
    assert_int_equal(put_full(db, NULL, "gone", "k", "{}", NULL, 1), MN_OK);
    sleep_ms(20);
    mn_strings *paths = NULL;
    mn_document_paths_query pq = MN_DOCUMENT_PATHS_QUERY_INIT;
    assert_int_equal(mn_document_paths(db, &pq, &paths), MN_OK);
    assert_int_equal(paths->count, 1);
    assert_string_equal(mn_strings_at(paths, 0), "t");
    mn_strings_free(paths);

    assert_int_equal(mn_document_get(db, NULL, "t", "long", 0, &l), MN_OK);
    int64_t e1 = mn_documents_at(l, 0)->expires_at;
    assert_true(e1 > 0);
    mn_documents_free(l);
    sleep_ms(5);
    assert_int_equal(mn_document_get(db, NULL, "t", "long", 0, &l), MN_OK); /* no refresh */
    assert_int_equal(mn_documents_at(l, 0)->expires_at, e1);
    mn_documents_free(l);
    assert_int_equal(mn_document_get(db, NULL, "t", "long", 1, &l), MN_OK);
    int64_t e2 = mn_documents_at(l, 0)->expires_at;
    assert_true(e2 > e1);
    mn_documents_free(l);
    sleep_ms(5);
    q.refresh_ttl = 1;
    mn_documents *s = NULL;
    assert_int_equal(mn_document_search(db, &q, &s), MN_OK);
    assert_true(mn_documents_at(s, 0)->expires_at > e2);
    int64_t e3 = mn_documents_at(s, 0)->expires_at;
    mn_documents_free(s);
    assert_int_equal(mn_document_get(db, NULL, "t", "long", 0, &l), MN_OK); /* the refresh was stored */
    assert_int_equal(mn_documents_at(l, 0)->expires_at, e3);
    mn_documents_free(l);
    assert_int_equal(mn_gc(db, NULL), MN_OK); /* the expired rows go; the live one stays */
    assert_int_equal(mn_document_get(db, NULL, "t", "long", 0, &l), MN_OK);
    mn_documents_free(l);
    mn_close(db);
}

static void listing_paths(void **state)
{
    (void)state;
    mn_db *db = open_db("paths", "none");
    const char *paths[] = {"users.alice.prefs", "users.bob.prefs", "users.bob.notes", "team.x.prefs", "users-old"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        assert_int_equal(put(db, paths[i], "a", "{}"), MN_OK);
        assert_int_equal(put(db, paths[i], "b", "{}"), MN_OK); /* two keys, one path */
    }
    struct {
        const char *prefix, *suffix;
        size_t depth, limit, offset;
        const char *want;
    } cases[] = {
        {NULL, NULL, 0, 0, 0, "team.x.prefs users-old users.alice.prefs users.bob.notes users.bob.prefs"},
        {"users", NULL, 0, 0, 0, "users.alice.prefs users.bob.notes users.bob.prefs"},
        {NULL, "prefs", 0, 0, 0, "team.x.prefs users.alice.prefs users.bob.prefs"},
        {"*.bob", NULL, 0, 0, 0, "users.bob.notes users.bob.prefs"},
        {NULL, "*.prefs", 0, 0, 0, "team.x.prefs users.alice.prefs users.bob.prefs"},
        {"users", "prefs", 0, 0, 0, "users.alice.prefs users.bob.prefs"},
        {NULL, NULL, 1, 0, 0, "team users users-old"},
        {"users", NULL, 2, 0, 0, "users.alice users.bob"},
        {NULL, NULL, 0, 2, 1, "users-old users.alice.prefs"},
        {"nothing", NULL, 0, 0, 0, ""},
        {"", "", 0, 1, 0, "team.x.prefs"}, /* "" as absent */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        mn_document_paths_query q = MN_DOCUMENT_PATHS_QUERY_INIT;
        q.prefix = cases[i].prefix;
        q.suffix = cases[i].suffix;
        q.max_depth = cases[i].depth;
        q.limit = cases[i].limit;
        q.offset = cases[i].offset;
        mn_strings *l = NULL;
        assert_int_equal(mn_document_paths(db, &q, &l), MN_OK);
        char got[512] = "";
        for (size_t j = 0; j < l->count; j++) {
            size_t len = strlen(got);
            snprintf(got + len, sizeof got - len, "%s%s", j ? " " : "", mn_strings_at(l, j));
        }
        mn_strings_free(l);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, got, cases[i].want);
    }
    mn_close(db);
}

static void namespaces_apart_and_forgotten(void **state)
{
    (void)state;
    mn_db *db = open_db("ns", "none");
    assert_int_equal(put_full(db, "alpha", "p", "k", "{\"who\":\"alpha\"}", NULL, 0), MN_OK);
    assert_int_equal(put_full(db, "beta", "p", "k", "{\"who\":\"beta\"}", NULL, 0), MN_OK);
    mn_documents *l = NULL;
    assert_int_equal(mn_document_get(db, "alpha", "p", "k", 1, &l), MN_OK);
    assert_string_equal(mn_documents_at(l, 0)->value, "{\"who\":\"alpha\"}");
    mn_documents_free(l);
    assert_int_equal(mn_namespace_forget(db, "alpha", NULL), MN_OK);
    assert_int_equal(mn_document_get(db, "alpha", "p", "k", 1, &l), MN_NOTFOUND);
    assert_int_equal(mn_document_get(db, "beta", "p", "k", 1, &l), MN_OK);
    mn_documents_free(l);
    mn_close(db);
}

struct sink {
    char *buf;
    size_t len, pos;
};

static int sink_write(void *user, const char *bytes, size_t len)
{
    struct sink *k = user;
    char *p = realloc(k->buf, k->len + len + 1);
    if (!p)
        return -1;
    memcpy(p + k->len, bytes, len);
    k->len += len;
    p[k->len] = '\0';
    k->buf = p;
    return 0;
}

static long sink_read(void *user, char *buf, size_t cap)
{
    struct sink *k = user;
    size_t n = k->len - k->pos < cap ? k->len - k->pos : cap;
    memcpy(buf, k->buf + k->pos, n);
    k->pos += n;
    return (long)n;
}

static void export_import(void **state)
{
    (void)state;
    mn_db *db = open_db("export", "hash");
    assert_int_equal(put_full(db, "alpha", "users.a", "k1", "{\"text\":\"python programming\"}", NULL, 0), MN_OK);
    assert_int_equal(put_full(db, NULL, "notes", "k2", "{\"text\":\"pasta\",\"n\":1}", NULL, 3600000), MN_OK);
    mn_documents *l = NULL;
    assert_int_equal(mn_document_get(db, NULL, "notes", "k2", 0, &l), MN_OK);
    int64_t created = mn_documents_at(l, 0)->created_at, expires = mn_documents_at(l, 0)->expires_at;
    mn_documents_free(l);
    mn_document_query q = MN_DOCUMENT_QUERY_INIT;
    q.ns = "alpha";
    q.query = "python programming";
    assert_int_equal(mn_document_search(db, &q, &l), MN_OK);
    double score = mn_documents_at(l, 0)->score;
    mn_documents_free(l);
    struct sink k = {0};
    assert_int_equal(mn_export(db, NULL, 0, sink_write, &k), MN_OK);
    assert_non_null(strstr(k.buf, "{\"type\":\"document\""));
    mn_close(db);

    mn_db *fresh = open_db("import", "hash");
    assert_int_equal(put_full(fresh, NULL, "notes", "k2", "{\"kept\":true}", NULL, 0), MN_OK);
    mn_import_stats st;
    assert_int_equal(mn_import(fresh, sink_read, &k, &st), MN_OK);
    assert_int_equal(mn_document_get(fresh, NULL, "notes", "k2", 0, &l), MN_OK);
    assert_string_equal(mn_documents_at(l, 0)->value, "{\"kept\":true}"); /* one there already stays */
    mn_documents_free(l);
    assert_int_equal(mn_document_delete(fresh, NULL, "notes", "k2", NULL), MN_OK);
    k.pos = 0;
    assert_int_equal(mn_import(fresh, sink_read, &k, &st), MN_OK);
    assert_int_equal(mn_document_get(fresh, NULL, "notes", "k2", 0, &l), MN_OK);
    const mn_document *d = mn_documents_at(l, 0);
    assert_string_equal(d->value, "{\"text\":\"pasta\",\"n\":1}");
    assert_int_equal(d->created_at, created);
    assert_int_equal(d->expires_at, expires);
    mn_documents_free(l);
    assert_int_equal(mn_document_search(fresh, &q, &l), MN_OK); /* the vectors came along */
    assert_int_equal(l->count, 1);
    assert_true(mn_documents_at(l, 0)->scored);
    assert_true(mn_documents_at(l, 0)->score > score - 1e-6 && mn_documents_at(l, 0)->score < score + 1e-6);
    mn_documents_free(l);
    free(k.buf);
    mn_close(fresh);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "documents");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_get_replace),   cmocka_unit_test(search_prefix_filter_order),
        cmocka_unit_test(refusals),          cmocka_unit_test(by_meaning),
        cmocka_unit_test(time_to_live),      cmocka_unit_test(listing_paths),
        cmocka_unit_test(namespaces_apart_and_forgotten), cmocka_unit_test(export_import),
    };
    mn_documents_free(NULL);
    return cmocka_run_group_tests(tests, setup, teardown);
}
