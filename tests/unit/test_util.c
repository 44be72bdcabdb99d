/*
 * test_util.c — unit tests of src/util: UTF-8 validation and cutting, UUIDv7, the string
 * builder's cap, arenas, status names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/arena.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"
#include "util/url.h"
#include "util/uuid.h"
#include "util/utf8.h"

static void utf8_table(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        size_t len;
        int valid;
        size_t bad_at;
    } cases[] = {
        {"", 0, 1, 0},
        {"plain ascii", 11, 1, 0},
        {"caf\xc3\xa9", 5, 1, 0},
        {"\xe2\x82\xac", 3, 1, 0},                /* € */
        {"\xf0\x9f\x98\x80", 4, 1, 0},            /* 😀 */
        {"\xf4\x8f\xbf\xbf", 4, 1, 0},            /* U+10FFFF */
        {"ab\xff", 3, 0, 2},                      /* never valid */
        {"\xc0\xaf", 2, 0, 0},                    /* overlong / */
        {"\xe0\x80\xaf", 3, 0, 0},                /* overlong */
        {"\xed\xa0\x80", 3, 0, 0},                /* surrogate D800 */
        {"\xf4\x90\x80\x80", 4, 0, 0},            /* past U+10FFFF */
        {"x\xe2\x82", 3, 0, 1},                   /* truncated */
        {"\xc3\x28", 2, 0, 0},                    /* bad continuation */
        {"ok\x80", 3, 0, 2},                      /* lone continuation */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t bad = 99;
        int v = mn__utf8_valid(cases[i].s, cases[i].len, &bad);
        assert_int_equal(v, cases[i].valid);
        if (!v)
            assert_int_equal(bad, cases[i].bad_at);
    }
}

static void utf8_prefix_cuts_on_boundary(void **state)
{
    (void)state;
    const char *s = "\xc3\xa9\xc3\xa9\xc3\xa9"; /* ééé */
    assert_int_equal(mn__utf8_prefix(s, 6, 2), 4);
    assert_int_equal(mn__utf8_prefix(s, 6, 3), 6);
    assert_int_equal(mn__utf8_prefix(s, 6, 10), 6);
    assert_int_equal(mn__utf8_prefix(s, 6, 0), 0);
    assert_int_equal(mn__utf8_chars(s, 6), 3);
}

static void uuid_v7_layout(void **state)
{
    (void)state;
    char a[MN_UUID_LEN + 1], b[MN_UUID_LEN + 1], canon[MN_UUID_LEN + 1];
    assert_int_equal(mn__uuid_v7(0x0123456789ABLL, a), MN_OK);
    assert_int_equal(mn__uuid_v7(0x0123456789ABLL, b), MN_OK);
    assert_int_equal(strlen(a), 36);
    assert_memory_equal(a, "01234567-89ab-7", 15); /* timestamp, then version 7 */
    assert_true(strchr("89ab", a[19]) != NULL);     /* RFC variant */
    assert_string_not_equal(a, b);                  /* random bits differ */
    assert_true(mn__uuid_parse(a, canon));
    assert_string_equal(a, canon);
    assert_true(mn__uuid_parse("01234567-89AB-7DEF-8000-00000000000A", canon));
    assert_string_equal(canon, "01234567-89ab-7def-8000-00000000000a");
    assert_false(mn__uuid_parse("01234567-89ab-7def-8000-00000000000", NULL));
    assert_false(mn__uuid_parse("01234567x89ab-7def-8000-000000000000", NULL));
    assert_false(mn__uuid_parse("g1234567-89ab-7def-8000-000000000000", NULL));
    assert_false(mn__uuid_parse(NULL, NULL));
}

static void buf_cap_and_detach(void **state)
{
    (void)state;
    struct mn_buf b = MN_BUF_INIT;
    assert_string_equal(b.data, "");
    mn__buf_init(&b, 8);
    assert_int_equal(mn__buf_adds(&b, "12345"), MN_OK);
    assert_int_equal(mn__buf_addf(&b, "%d", 678), MN_OK);
    assert_string_equal(b.data, "12345678");
    assert_int_equal(mn__buf_addc(&b, '9'), MN_TOOBIG);
    assert_string_equal(b.data, "12345678"); /* unchanged on failure */
    size_t len;
    char *s = mn__buf_detach(&b, &len);
    assert_string_equal(s, "12345678");
    assert_int_equal(len, 8);
    assert_string_equal(b.data, "");
    free(s);
    mn__buf_release(&b);
}

/* The hand-written JSON string writer gives exactly jansson's bytes. */
static void json_strings_match_jansson(void **state)
{
    (void)state;
    const char *cases[] = {"", "plain", "quote \" and backslash \\", "line\nbreak\ttab\rcr\bbs\ffeed",
                           "\x01\x02\x1f ctl", "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x80\xa8", "/slash/ \x7f del",
                           "{\"json\":[1,2]}"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct mn_buf b = MN_BUF_INIT;
        assert_int_equal(mn__buf_add_json_str(&b, cases[i]), MN_OK);
        json_t *v = json_string(cases[i]);
        char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        assert_string_equal(b.data, want);
        free(want);
        json_decref(v);
        mn__buf_release(&b);
    }
    struct mn_buf b = MN_BUF_INIT;
    assert_int_equal(mn__buf_add_json_str(&b, NULL), MN_OK);
    assert_string_equal(b.data, "null");
    mn__buf_release(&b);

    /* the word-at-a-time scan: every escape at every offset of strings of 1 to 40 bytes, with
     * UTF-8 around (high bytes must never look like control characters) */
    static const char specials[] = {'"', '\\', '\n', '\x01', '\x1f', ' ', (char)0xc3};
    for (size_t len = 1; len <= 40; len++)
        for (size_t at = 0; at < len; at++)
            for (size_t k = 0; k < sizeof specials; k++) {
                char text[48];
                for (size_t i = 0; i < len; i++)
                    text[i] = (char)(i % 3 == 0 ? 'a' + i % 26 : i % 3 == 1 ? 0xc3 : 0xa9);
                if (len % 3 == 2)
                    text[len - 1] = 'z'; /* keep the UTF-8 pairs whole */
                if (text[at] != (char)0xa9 && (at + 1 >= len || text[at + 1] != (char)0xa9))
                    text[at] = specials[k];
                text[len] = '\0';
                json_t *v = json_string(text);
                if (!v)
                    continue; /* a cut UTF-8 pair: not a string mnemo would hold */
                struct mn_buf w = MN_BUF_INIT;
                assert_int_equal(mn__buf_add_json_str(&w, text), MN_OK);
                char *want = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                assert_string_equal(w.data, want);
                free(want);
                json_decref(v);
                mn__buf_release(&w);
            }
}

/* JSON a client hands the library may nest MN_MAX_JSON_DEPTH levels: deeper, stored metadata
 * made SQLite's JSON functions (depth ~2000) and the server's re-parse of an answer that
 * wraps it (jansson: 2048) fail later, for every search filtered on metadata. */
static void json_depth_capped(void **state)
{
    (void)state;
    for (int depth = MN_MAX_JSON_DEPTH - 1; depth <= MN_MAX_JSON_DEPTH + 1; depth++) {
        struct mn_buf b = MN_BUF_INIT;
        for (int i = 0; i < depth; i++)
            assert_int_equal(mn__buf_add(&b, i % 2 ? "[" : "{\"a\":", i % 2 ? 1 : 5), MN_OK);
        assert_int_equal(mn__buf_add(&b, "1", 1), MN_OK);
        for (int i = depth - 1; i >= 0; i--)
            assert_int_equal(mn__buf_add(&b, i % 2 ? "]" : "}", 1), MN_OK);
        json_t *v = NULL;
        mn_status rc = mn__json_parse(b.data, "metadata", &v);
        if (depth <= MN_MAX_JSON_DEPTH) {
            assert_int_equal(rc, MN_OK);
            json_decref(v);
        } else {
            assert_int_equal(rc, MN_INVALID);
            assert_null(v);
            assert_non_null(strstr(mn_errmsg(), "metadata: nested deeper than"));
        }
        mn__buf_release(&b);
    }
}

static void buf_integers(void **state)
{
    (void)state;
    const int64_t v[] = {0, 1, -1, 9, 10, -10, 1234567890123LL, INT64_MAX, INT64_MIN};
    const char *want[] = {"0", "1", "-1", "9", "10", "-10", "1234567890123", "9223372036854775807",
                          "-9223372036854775808"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        struct mn_buf b = MN_BUF_INIT;
        assert_int_equal(mn__buf_add_i64(&b, v[i]), MN_OK);
        assert_string_equal(b.data, want[i]);
        mn__buf_release(&b);
    }
}

static void arena_many_allocations(void **state)
{
    (void)state;
    struct mn_arena a = MN_ARENA_INIT;
    char *first = mn__arena_strndup(&a, "hello", 5);
    for (int i = 0; i < 10000; i++) {
        char *p = mn__arena_alloc(&a, (size_t)(i % 300) + 1);
        assert_non_null(p);
        assert_int_equal(((uintptr_t)p) % 16, 0);
    }
    char *big = mn__arena_alloc(&a, 3 << 20); /* larger than a chunk */
    assert_non_null(big);
    big[(3 << 20) - 1] = 1;
    assert_string_equal(first, "hello");
    mn__arena_release(&a);
    assert_null(a.head);
}

/* A URL in a message or a log shows no userinfo and no query (passwords, tokens). */
static void url_shown_hides_secrets(void **state)
{
    (void)state;
    static const char *cases[][2] = {
        {"http://127.0.0.1:11434/api/embed", "http://127.0.0.1:11434/api/embed"},
        {"https://bob:s3cret@api.example/v1/embeddings", "https://***@api.example/v1/embeddings"},
        {"https://api.example/v1?key=s3cret#x", "https://api.example/v1?***"},
        {"https://a:b@c@host/p?q", "https://***@host/p?***"},
        {"no-scheme:pw@host", "***@host"},
        {"", ""},
    };
    char out[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mn__url_shown(cases[i][0], out, sizeof out);
        assert_string_equal(out, cases[i][1]);
    }
    mn__url_shown("https://api.example/a-long-path", out, 12);
    assert_string_equal(out, "https://api");
}

static void status_names(void **state)
{
    (void)state;
    assert_string_equal(mn_status_name(MN_OK), "ok");
    assert_string_equal(mn_status_name(MN_NOTFOUND), "not_found");
    assert_string_equal(mn_status_name(MN_EXPIRED), "expired");
    assert_string_equal(mn_status_name((mn_status)999), "unknown");
    assert_string_equal(mn_status_str(MN_BUSY), "database is busy");
    assert_int_equal(MN_INTERNAL, 12); /* codes are never renumbered */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_table),      cmocka_unit_test(utf8_prefix_cuts_on_boundary),
        cmocka_unit_test(uuid_v7_layout),  cmocka_unit_test(buf_cap_and_detach),
        cmocka_unit_test(arena_many_allocations), cmocka_unit_test(json_strings_match_jansson), cmocka_unit_test(buf_integers), cmocka_unit_test(status_names),
        cmocka_unit_test(json_depth_capped), cmocka_unit_test(url_shown_hides_secrets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
