/*
 * test_token_bpe.c — the BPE tokenizers cl100k_base and o200k_base (src/token/bpe.c, pretok.c)
 * against the committed vectors tests/data/tok/ (JSON Lines) (ids from tiktoken@1.0.22, made by
 * tests/tok/gen_vectors.cjs), plus round trips, count == encode length, the two merge loops
 * against each other, and the loader's errors. Needs the rank files from scripts/fetch-ranks in
 * $MNEMO_DATA_DIR or build/share/mnemo; fails (does not skip) without them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "token/bpe.h"
#include "token/bpe_int.h"
#include "token/token.h"

#ifndef MNEMO_TEST_DATA
#define MNEMO_TEST_DATA "tests/data"
#endif

static const char *const ENC_NAMES[2] = {"cl100k_base", "o200k_base"};
static mn_tokenizer *enc[2];
static char data_dir[4096];

static int setup(void **state)
{
    (void)state;
    const char *env = getenv("MNEMO_DATA_DIR");
    snprintf(data_dir, sizeof data_dir, "%s", env && *env ? env : MNEMO_TEST_DATA "/../../build/share/mnemo");
    for (int e = 0; e < 2; e++) {
        mn_status st = mn__token_open(ENC_NAMES[e], data_dir, &enc[e]);
        if (st != MN_OK) {
            fprintf(stderr,
                    "test_token_bpe: cannot load %s from %s: %s: %s\n"
                    "test_token_bpe: run scripts/fetch-ranks (or set MNEMO_DATA_DIR to the folder with the "
                    "*.tiktoken files)\n",
                    ENC_NAMES[e], data_dir, mn_status_name(st), mn_errmsg());
            return -1;
        }
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int e = 0; e < 2; e++)
        mn__token_free(enc[e]);
    return 0;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static int b64v(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

static size_t b64dec(const char *in, unsigned char *out)
{
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (; *in && *in != '='; in++) {
        int v = b64v((unsigned char)*in);
        assert_true(v >= 0);
        acc = acc << 6 | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
        }
    }
    return o;
}

/* Encodes, counts and decodes text with encoding e; checks against want (may be NULL). */
static int check_one(int e, const char *name, const char *text, size_t len, const uint32_t *want, size_t n_want)
{
    uint32_t *ids;
    size_t n;
    assert_int_equal(enc[e]->vt->encode(enc[e], text, len, &ids, &n), MN_OK);
    int ok = 1;
    if (want && (n != n_want || memcmp(ids, want, n * sizeof *ids) != 0)) {
        fprintf(stderr, "MISMATCH %s [%s]: got %zu ids, want %zu:", ENC_NAMES[e], name, n, n_want);
        for (size_t i = 0; i < n && i < 40; i++)
            fprintf(stderr, " %u", ids[i]);
        fprintf(stderr, " | want");
        for (size_t i = 0; i < n_want && i < 40; i++)
            fprintf(stderr, " %u", want[i]);
        fprintf(stderr, "\n");
        ok = 0;
    }
    size_t c = mn__token_count(enc[e], text, len);
    if (c != n) {
        fprintf(stderr, "COUNT %s [%s]: count %zu, encode %zu\n", ENC_NAMES[e], name, c, n);
        ok = 0;
    }
    char *back;
    size_t blen;
    assert_int_equal(mn__bpe_decode(enc[e], ids, n, &back, &blen), MN_OK);
    if (blen != len || memcmp(back, text, len) != 0) {
        fprintf(stderr, "ROUNDTRIP %s [%s]: %zu bytes back, %zu in\n", ENC_NAMES[e], name, blen, len);
        ok = 0;
    }
    free(back);
    free(ids);
    return ok;
}

static void run_vector_file(const char *file, size_t min_cases)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/tok/%s", MNEMO_TEST_DATA, file);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    char *line = NULL;
    size_t cap = 0, cases = 0, bad = 0;
    ssize_t got;
    unsigned char *buf = NULL;
    while ((got = getline(&line, &cap, f)) > 0) {
        json_error_t err;
        json_t *o = json_loadb(line, (size_t)got, JSON_ALLOW_NUL, &err);
        if (!o)
            fail_msg("%s: bad JSON line: %s", path, err.text);
        if (json_object_get(o, "meta")) {
            json_decref(o);
            continue;
        }
        const char *name = json_string_value(json_object_get(o, "name"));
        json_t *jt = json_object_get(o, "text"), *jb = json_object_get(o, "b64");
        const char *text;
        size_t len;
        if (jt) {
            text = json_string_value(jt);
            len = json_string_length(jt);
        } else {
            assert_non_null(jb);
            const char *b = json_string_value(jb);
            buf = realloc(buf, strlen(b) + 1);
            len = b64dec(b, buf);
            text = (const char *)buf;
        }
        for (int e = 0; e < 2; e++) {
            json_t *arr = json_object_get(o, ENC_NAMES[e]);
            assert_true(json_is_array(arr));
            size_t n = json_array_size(arr);
            uint32_t *want = malloc((n + 1) * sizeof *want);
            for (size_t i = 0; i < n; i++)
                want[i] = (uint32_t)json_integer_value(json_array_get(arr, i));
            bad += !check_one(e, name, text, len, want, n);
            free(want);
        }
        cases++;
        json_decref(o);
    }
    free(line);
    free(buf);
    fclose(f);
    printf("%s: %zu cases x 2 encodings, %zu failures\n", file, cases, bad);
    assert_true(cases >= min_cases);
    assert_int_equal(bad, 0);
}

/* ---- vectors ---------------------------------------------------------------------------------- */

static void test_vectors_adversarial(void **state)
{
    (void)state;
    run_vector_file("adversarial.jsonl", 5000);
}

static void test_vectors_real(void **state)
{
    (void)state;
    run_vector_file("real.jsonl", 40);
}

static void test_vectors_invalid_utf8(void **state)
{
    (void)state;
    run_vector_file("invalid_utf8.jsonl", 700);
}

/* ---- properties ------------------------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* The O(n^2) loop and the heap must merge identically, on text-like and on random bytes. */
static void test_merge_loops_agree(void **state)
{
    (void)state;
    static const char alpha[] = "aaaaeeeeiioonnrssttlh  ABCXYZ0123!!.,'\n\t\xc3\xa9\xe4\xb8\xad";
    uint32_t a[128], b[128];
    uint8_t piece[96];
    for (int round = 0; round < 20000; round++) {
        size_t len = 2 + next_rand() % 95;
        int random_bytes = round % 4 == 0;
        for (size_t i = 0; i < len; i++)
            piece[i] = random_bytes ? (uint8_t)next_rand() : (uint8_t)alpha[next_rand() % (sizeof alpha - 1)];
        for (int e = 0; e < 2; e++) {
            const struct mn_bpe *bpe = mn__bpe_of(enc[e]);
            size_t na = mn__bpe_merge(bpe, piece, len, a, 0);
            size_t nb = mn__bpe_merge(bpe, piece, len, b, 1);
            assert_int_equal(na, nb);
            assert_memory_equal(a, b, na * sizeof a[0]);
            assert_int_equal(mn__bpe_merge(bpe, piece, len, NULL, 0), na);
        }
    }
}

/* Long pieces take the heap; random bytes exercise invalid UTF-8 everywhere. */
static void test_long_inputs(void **state)
{
    (void)state;
    size_t len = 1 << 20;
    char *s = malloc(len);
    memset(s, 'a', len);
    for (int e = 0; e < 2; e++)
        assert_true(check_one(e, "1 MiB of a", s, len, NULL, 0));
    for (size_t i = 0; i < len; i++)
        s[i] = (char)next_rand();
    for (int e = 0; e < 2; e++)
        assert_true(check_one(e, "1 MiB of random bytes", s, len, NULL, 0));
    for (size_t i = 0; i < len; i++)
        s[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[next_rand() % 52];
    for (int e = 0; e < 2; e++)
        assert_true(check_one(e, "1 MiB word of mixed case", s, len, NULL, 0));
    free(s);
}

static void test_empty_and_tiny(void **state)
{
    (void)state;
    for (int e = 0; e < 2; e++) {
        assert_int_equal(mn__token_count(enc[e], "", 0), 0);
        uint32_t *ids = NULL;
        size_t n = 99;
        assert_int_equal(enc[e]->vt->encode(enc[e], "", 0, &ids, &n), MN_OK);
        assert_int_equal(n, 0);
        free(ids);
        for (int b = 0; b < 256; b++) {
            char c = (char)b;
            assert_int_equal(mn__token_count(enc[e], &c, 1), 1);
            assert_true(check_one(e, "one byte", &c, 1, NULL, 0));
        }
        assert_string_equal(mn__token_name(enc[e]), ENC_NAMES[e]);
        assert_true(mn__bpe_is(enc[e]));
        assert_true(mn__bpe_memory(enc[e]) > 1000000);
    }
}

/* A few splits spelt out, for the reader: pieces of the pre-tokeniser. */
static void expect_pieces(enum mn_pretok_kind kind, const char *text, const char *const *want)
{
    size_t len = strlen(text), i = 0, k = 0;
    while (i < len) {
        size_t j = mn__pretok_next(kind, (const uint8_t *)text, len, i);
        assert_true(j > i && j <= len);
        assert_non_null(want[k]);
        if (strlen(want[k]) != j - i || memcmp(want[k], text + i, j - i) != 0)
            fail_msg("piece %zu of \"%s\": got \"%.*s\", want \"%s\"", k, text, (int)(j - i), text + i, want[k]);
        k++;
        i = j;
    }
    assert_null(want[k]);
}

static void test_pretok_examples(void **state)
{
    (void)state;
    expect_pieces(MN_PRETOK_CL100K, "I'm here  now\n\n  x", (const char *const[]){"I", "'m", " here", " ", " now", "\n\n", " ", " x", NULL});
    expect_pieces(MN_PRETOK_CL100K, "12345 abc's!!\n", (const char *const[]){"123", "45", " abc", "'s", "!!\n", NULL});
    expect_pieces(MN_PRETOK_CL100K, "'Sup 'RE'll", (const char *const[]){"'S", "up", " '", "RE", "'ll", NULL});
    expect_pieces(MN_PRETOK_CL100K, "it\xca\xbcs \xc5\xbf'\xc5\xbf", (const char *const[]){"it\xca\xbcs", " \xc5\xbf", "'\xc5\xbf", NULL});
    expect_pieces(MN_PRETOK_O200K, "HTMLParser's helloWorld", (const char *const[]){"HTMLParser's", " hello", "World", NULL});
    expect_pieces(MN_PRETOK_O200K, "ABC def\xe4\xb8\xad" "A", (const char *const[]){"ABC", " def\xe4\xb8\xad", "A", NULL});
    expect_pieces(MN_PRETOK_O200K, "a//b\n/x!\n/y", (const char *const[]){"a", "//", "b", "\n", "/x", "!\n/", "y", NULL});
    expect_pieces(MN_PRETOK_O200K, " \xcc\x81!\xcc\x81", (const char *const[]){" \xcc\x81", "!\xcc\x81", NULL});
    /* invalid bytes split as one U+FFFD per maximal subpart: E2 82 is one, prefixing the word */
    expect_pieces(MN_PRETOK_CL100K, "\xe2\x82" "abc\xff\xfe" " d\xff" "e",
                  (const char *const[]){"\xe2\x82" "abc", "\xff\xfe", " d", "\xff" "e", NULL});
}

/* ---- loading and errors ----------------------------------------------------------------------- */

static char tmpdir[4096];

static void make_tmpdir(void)
{
    const char *base = getenv("MNEMO_TEST_TMP");
    if (!base || !*base)
        base = "/tmp";
    mkdir(base, 0700);
    snprintf(tmpdir, sizeof tmpdir, "%s/tokbpe.XXXXXX", base);
    assert_non_null(mkdtemp(tmpdir));
}

static void write_file(const char *name, const char *content, size_t len)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(content, 1, len, f), len);
    fclose(f);
}

static void remove_tmpdir(void)
{
    char path[8192];
    for (int e = 0; e < 2; e++) {
        snprintf(path, sizeof path, "%s/%s.tiktoken", tmpdir, ENC_NAMES[e]);
        unlink(path);
    }
    rmdir(tmpdir);
}

/* A small ranks file: the 256 single bytes (rank = byte), then extra lines. */
static char *small_ranks(const char *extra, size_t *len)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t cap = 256 * 16 + strlen(extra) + 1, o = 0;
    char *s = malloc(cap);
    for (int b = 0; b < 256; b++)
        o += (size_t)snprintf(s + o, cap - o, "%c%c== %d\n", b64[b >> 2], b64[(b & 3) << 4], b);
    o += (size_t)snprintf(s + o, cap - o, "%s", extra);
    *len = o;
    return s;
}

static mn_status open_tmp(const char *content, size_t len, mn_tokenizer **tk)
{
    write_file("cl100k_base.tiktoken", content, len);
    return mn__token_open("cl100k_base", tmpdir, tk);
}

static void test_load_errors(void **state)
{
    (void)state;
    mn_tokenizer *tk = NULL;
    assert_int_equal(mn__token_open("p50k_base", data_dir, &tk), MN_INVALID);
    assert_null(tk);

    make_tmpdir();
    assert_int_equal(mn__token_open("o200k_base", tmpdir, &tk), MN_UNAVAILABLE);
    assert_non_null(strstr(mn_errmsg(), tmpdir));
    assert_non_null(strstr(mn_errmsg(), "o200k_base.tiktoken"));

    size_t len;
    char *ok = small_ranks("YWI= 256\nYWJj 257\nYmM= 258\n", &len); /* ab, abc, bc */
    unsetenv("MNEMO_ACCEPT_UNKNOWN_RANKS");
    assert_int_equal(open_tmp(ok, len, &tk), MN_CORRUPT);
    assert_non_null(strstr(mn_errmsg(), "SHA-256"));
    assert_null(tk);
    setenv("MNEMO_ACCEPT_UNKNOWN_RANKS", "0", 1);
    assert_int_equal(open_tmp(ok, len, &tk), MN_CORRUPT);

    setenv("MNEMO_ACCEPT_UNKNOWN_RANKS", "1", 1);
    assert_int_equal(open_tmp(ok, len, &tk), MN_OK);
    uint32_t *ids;
    size_t n;
    assert_int_equal(tk->vt->encode(tk, "abcabc abx", 10, &ids, &n), MN_OK);
    /* "abcabc": ab, then the second ab, then abc twice; " abx": ' ', ab, x (no " a" token) */
    uint32_t want[] = {257, 257, ' ', 256, 'x'};
    assert_int_equal(n, 5);
    assert_memory_equal(ids, want, sizeof want);
    free(ids);
    assert_int_equal(mn__token_count(tk, "abcabc abx", 10), 5);
    mn__token_free(tk);
    free(ok);

    /* ranks out of order, and a gap (259..299 unused): the general loading path */
    ok = small_ranks("YmM= 258\nYWJj 257\nYWI= 256\nYWJjYWJj 300\n", &len);
    assert_int_equal(open_tmp(ok, len, &tk), MN_OK);
    assert_int_equal(tk->vt->encode(tk, "abcabc abx", 10, &ids, &n), MN_OK);
    uint32_t want2[] = {300, ' ', 256, 'x'};
    assert_int_equal(n, 4);
    assert_memory_equal(ids, want2, sizeof want2);
    free(ids);
    char *out;
    size_t out_len;
    uint32_t gap = 259;
    assert_int_equal(mn__bpe_decode(tk, &gap, 1, &out, &out_len), MN_INVALID);
    mn__token_free(tk);
    free(ok);

    static const char *const bad[] = {
        "YWI 256\n",          /* base64 length */
        "Y!I= 256\n",         /* base64 digit */
        "YWI=256\n",          /* no space */
        "YWI= 25x\n",         /* rank */
        "YWI= \n",            /* no rank */
        "YWI= 256\nYWI= 257\n", /* the same token twice */
        "YWI= 256\nYmM= 256\n", /* the same rank twice */
        "YWI= 99999999999\n", /* rank too large */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *s = small_ranks(bad[i], &len);
        tk = NULL;
        assert_int_equal(open_tmp(s, len, &tk), MN_CORRUPT);
        assert_null(tk);
        free(s);
    }
    /* a byte without a rank: drop the line of byte 0x00 */
    char *s = small_ranks("", &len);
    char *second = strchr(s, '\n') + 1;
    assert_int_equal(open_tmp(second, len - (size_t)(second - s), &tk), MN_CORRUPT);
    assert_non_null(strstr(mn_errmsg(), "0x00"));
    free(s);
    assert_int_equal(open_tmp("", 0, &tk), MN_CORRUPT);
    unsetenv("MNEMO_ACCEPT_UNKNOWN_RANKS");
    remove_tmpdir();
}

static void test_decode_errors(void **state)
{
    (void)state;
    char *out = (char *)1;
    size_t len = 7;
    uint32_t bad_id = 100256; /* between the last token and the special tokens of cl100k_base */
    assert_int_equal(mn__bpe_decode(enc[0], &bad_id, 1, &out, &len), MN_INVALID);
    assert_null(out);
    uint32_t huge = 0xFFFFFFFFu;
    assert_int_equal(mn__bpe_decode(enc[1], &huge, 1, &out, &len), MN_INVALID);
    mn_tokenizer *h;
    assert_int_equal(mn__token_open("heuristic", NULL, &h), MN_OK);
    uint32_t zero = 0;
    assert_int_equal(mn__bpe_decode(h, &zero, 1, &out, &len), MN_INVALID);
    assert_false(mn__bpe_is(h));
    assert_int_equal(mn__bpe_memory(h), 0);
    mn__token_free(h);
    assert_int_equal(mn__bpe_decode(enc[0], NULL, 0, &out, &len), MN_OK);
    assert_int_equal(len, 0);
    free(out);
}

/* ---- the rank table, built on first use ------------------------------------------------------ */

struct first_use {
    mn_tokenizer *tk;
    const char *text;
    size_t count;
};

static void *count_once(void *user)
{
    struct first_use *u = user;
    u->count = mn__token_count(u->tk, u->text, strlen(u->text));
    return NULL;
}

/* A fresh handle holds the file's bytes, not the table, until something counts; then eight threads
 * asking at once all get the count of the handle built in setup, and the table is there. */
static void test_built_on_first_use(void **state)
{
    (void)state;
    static const char text[] = "Rank tables are built once, on first use: 12345 tokens?\n\tdone.";
    for (int e = 0; e < 2; e++) {
        mn_tokenizer *tk = NULL;
        assert_int_equal(mn__token_open(ENC_NAMES[e], data_dir, &tk), MN_OK);
        char path[8192];
        struct stat sb;
        snprintf(path, sizeof path, "%s/%s.tiktoken", data_dir, ENC_NAMES[e]);
        assert_int_equal(stat(path, &sb), 0);
        size_t before = mn__bpe_memory(tk);
        assert_true(before >= (size_t)sb.st_size && before < (size_t)sb.st_size + 4096);
        struct first_use u[8];
        pthread_t th[8];
        for (int i = 0; i < 8; i++) {
            u[i] = (struct first_use){tk, text, 0};
            assert_int_equal(pthread_create(&th[i], NULL, count_once, &u[i]), 0);
        }
        size_t want = mn__token_count(enc[e], text, strlen(text));
        for (int i = 0; i < 8; i++) {
            assert_int_equal(pthread_join(th[i], NULL), 0);
            assert_int_equal(u[i].count, want);
        }
        assert_int_equal(mn__bpe_memory(tk), mn__bpe_memory(enc[e]));
        assert_true(mn__bpe_memory(tk) != before);
        mn__token_free(tk);
    }
    /* never used: freed without building anything */
    mn_tokenizer *tk = NULL;
    assert_int_equal(mn__token_open(ENC_NAMES[0], data_dir, &tk), MN_OK);
    mn__token_free(tk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pretok_examples),
        cmocka_unit_test(test_vectors_adversarial),
        cmocka_unit_test(test_vectors_real),
        cmocka_unit_test(test_vectors_invalid_utf8),
        cmocka_unit_test(test_empty_and_tiny),
        cmocka_unit_test(test_merge_loops_agree),
        cmocka_unit_test(test_long_inputs),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_decode_errors),
        cmocka_unit_test(test_built_on_first_use),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
