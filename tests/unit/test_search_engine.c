/*
 * test_search_engine.c — the search pieces that need no database: the hash embedder
 * (determinism, unit length, similar texts closer than unrelated ones), FTS query escaping
 * (a table of hostile inputs), reciprocal rank fusion, and the embeddings reply parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "search/search.h"

static double cosine(const float *a, const float *b, uint32_t d)
{
    double s = 0;
    for (uint32_t i = 0; i < d; i++)
        s += (double)a[i] * b[i];
    return s;
}

static void hash_embedder(void **state)
{
    (void)state;
    float a[384], b[384], c[384], d[384];
    const char *t1 = "How do I configure the Postgres connection pool?";
    mn__embed_hash(t1, strlen(t1), 384, a);
    mn__embed_hash(t1, strlen(t1), 384, b);
    assert_memory_equal(a, b, sizeof a); /* deterministic */
    assert_true(fabs(cosine(a, a, 384) - 1.0) < 1e-5); /* unit length */
    const char *t2 = "configuring a postgres connection pooler";
    const char *t3 = "my cat likes fish on fridays";
    mn__embed_hash(t2, strlen(t2), 384, c);
    mn__embed_hash(t3, strlen(t3), 384, d);
    assert_true(cosine(a, c, 384) > cosine(a, d, 384) + 0.2);
    /* case does not matter */
    const char *t4 = "HOW DO I CONFIGURE THE POSTGRES CONNECTION POOL?";
    mn__embed_hash(t4, strlen(t4), 384, b);
    assert_true(cosine(a, b, 384) > 0.999);
    /* no word characters: the zero vector */
    mn__embed_hash("!!! ... ???", 11, 384, b);
    for (int i = 0; i < 384; i++)
        assert_true(b[i] == 0.0f);
    /* long input and odd dimensions */
    char *big = malloc(200000);
    for (int i = 0; i < 200000; i++)
        big[i] = (char)("abc def\xc3\xa9 "[i % 11]);
    float e[7];
    mn__embed_hash(big, 200000, 7, e);
    assert_true(fabs(cosine(e, e, 7) - 1.0) < 1e-5);
    free(big);
}

static void hash_embedder_via_vtable(void **state)
{
    (void)state;
    mn_embed_cfg c = {"hash", NULL, NULL, NULL, 0, 0, 0, 0, 0};
    mn_embedder *e = NULL;
    assert_int_equal(mn__embed_open(&c, &e), MN_OK);
    assert_string_equal(mn__embed_model(e), MN_EMBED_HASH_MODEL);
    assert_int_equal(mn__embed_dim(e), 384);
    const char *texts[] = {"one", "two"};
    float *v = NULL;
    uint32_t dim = 0;
    assert_int_equal(mn__embed_texts_alloc(e, texts, 2, &v, &dim), MN_OK);
    assert_int_equal(dim, 384);
    free(v);
    mn__embed_free(e);
    mn_embed_cfg bad = {"bert", NULL, NULL, NULL, 0, 0, 0, 0, 0};
    assert_int_equal(mn__embed_open(&bad, &e), MN_INVALID);
    mn_embed_cfg remote = {"openai", "m", "", NULL, 0, 0, 0, 0, 0};
    assert_int_equal(mn__embed_open(&remote, &e), MN_UNAVAILABLE);
}

static void fts_escaping(void **state)
{
    (void)state;
    static const struct {
        const char *in, *out;
        size_t terms;
    } cases[] = {
        {"hello world", "\"hello\" OR \"world\"", 2},
        {"\"quoted\"", "\"quoted\"", 1},
        {"a\"b", "\"a\" OR \"b\"", 2},
        {"AND OR NOT NEAR", "\"AND\" OR \"OR\" OR \"NOT\" OR \"NEAR\"", 4},
        {"NEAR(a b, 3)", "\"NEAR\" OR \"a\" OR \"b\" OR \"3\"", 4},
        {"pref*", "\"pref\"", 1},
        {"^start", "\"start\"", 1},
        {"((unbalanced", "\"unbalanced\"", 1},
        {"col:umn", "\"col\" OR \"umn\"", 2},
        {"-x +y", "\"x\" OR \"y\"", 2},
        {"café 東京", "\"café\" OR \"東京\"", 2},
        {"snake_case", "\"snake_case\"", 1},
        {"", "", 0},
        {"*** ( ) \" ' ^", "", 0},
    };
    struct mn_buf b = MN_BUF_INIT;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t terms = 99;
        assert_int_equal(mn__fts_query(cases[i].in, &b, &terms), MN_OK);
        assert_string_equal(b.data, cases[i].out);
        assert_int_equal(terms, cases[i].terms);
    }
    /* at most MN_FTS_MAX_TERMS terms; long tokens cut on a UTF-8 boundary */
    char many[1000] = "";
    for (int i = 0; i < 100; i++)
        strcat(many, "w ");
    size_t terms = 0;
    assert_int_equal(mn__fts_query(many, &b, &terms), MN_OK);
    assert_int_equal(terms, MN_FTS_MAX_TERMS);
    char longtok[600];
    for (int i = 0; i < 599; i += 2) {
        longtok[i] = (char)0xC3;
        longtok[i + 1] = (char)0xA9;
    }
    longtok[599] = '\0';
    assert_int_equal(mn__fts_query(longtok, &b, &terms), MN_OK);
    assert_true(b.len <= 258);
    assert_true(((unsigned char)b.data[b.len - 2] & 0xC0) != 0xC0); /* no lead byte left dangling */
    /* the content variant drops function words when other words remain, and only then */
    static const struct {
        const char *in, *out;
        size_t terms;
    } content[] = {
        {"Where do I live now?", "\"live\"", 1},
        {"What is THE City of my editor", "\"City\" OR \"editor\"", 2},
        {"to be or not", "\"not\"", 1},
        {"the and of", "\"the\" OR \"and\" OR \"of\"", 3},
        {"theme inn", "\"theme\" OR \"inn\"", 2},
        {"", "", 0},
    };
    for (size_t i = 0; i < sizeof content / sizeof content[0]; i++) {
        assert_int_equal(mn__fts_query_content(content[i].in, &b, &terms), MN_OK);
        assert_string_equal(b.data ? b.data : "", content[i].out);
        assert_int_equal(terms, content[i].terms);
    }
    mn__buf_release(&b);
}

static void rrf(void **state)
{
    (void)state;
    struct mn_ranked a[] = {{10, 0.9}, {20, 0.8}, {30, 0.7}}, k[] = {{20, 5}, {40, 4}, {10, 3}};
    struct mn_ranked *out = NULL;
    size_t n = 0;
    assert_int_equal(mn__rrf(a, 3, k, 3, 60, &out, &n), MN_OK);
    assert_int_equal(n, 4);
    /* 10: 1/61 + 1/63; 20: 1/62 + 1/61 — 20 wins; then 10; then 40 (1/62) before 30 (1/63) */
    assert_int_equal(out[0].id, 20);
    assert_int_equal(out[1].id, 10);
    assert_int_equal(out[2].id, 40);
    assert_int_equal(out[3].id, 30);
    assert_true(fabs(out[0].score - (1.0 / 62 + 1.0 / 61)) < 1e-12);
    free(out);
    assert_int_equal(mn__rrf(NULL, 0, NULL, 0, 60, &out, &n), MN_OK);
    assert_int_equal(n, 0);
    free(out);
}

static void reply_parser(void **state)
{
    (void)state;
    float *v = NULL;
    uint32_t dim = 0;
    const char *ok = "{\"data\":[{\"index\":1,\"embedding\":[0,2]},{\"index\":0,\"embedding\":[3,4]}]}";
    assert_int_equal(mn__embed_parse_reply("openai", ok, strlen(ok), 2, &dim, &v), MN_OK);
    assert_int_equal(dim, 2);
    assert_true(fabs(v[0] - 0.6f) < 1e-6 && fabs(v[1] - 0.8f) < 1e-6 && v[3] == 1.0f);
    free(v);
    const char *ol = "{\"embeddings\":[[1,0,0]]}";
    dim = 0;
    assert_int_equal(mn__embed_parse_reply("ollama", ol, strlen(ol), 1, &dim, &v), MN_OK);
    assert_int_equal(dim, 3);
    free(v);
    static const char *const bad[] = {"", "[]", "{\"data\":[]}", "{\"data\":[{\"embedding\":[0,0]}]}",
                                      "{\"data\":[{\"embedding\":[1,\"x\"]}]}", "{\"error\":{\"message\":\"nope\"}}",
                                      "{\"data\":[{\"index\":5,\"embedding\":[1]}]}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dim = 0;
        assert_int_equal(mn__embed_parse_reply("openai", bad[i], strlen(bad[i]), 1, &dim, &v), MN_UNAVAILABLE);
        assert_null(v);
    }
    dim = 3; /* another dimension than expected */
    assert_int_equal(mn__embed_parse_reply("ollama", "{\"embeddings\":[[1,0]]}", 22, 1, &dim, &v), MN_UNAVAILABLE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hash_embedder), cmocka_unit_test(hash_embedder_via_vtable), cmocka_unit_test(fts_escaping),
        cmocka_unit_test(rrf),           cmocka_unit_test(reply_parser),
    };
    return cmocka_run_group_tests_name("search_engine", tests, NULL, NULL);
}
