/*
 * test_token_par.c — counting a text on several threads (src/token/bpe.c mn__bpe_count_chunks,
 * token.c mn__token_count_threads) gives exactly the one-thread count. Checks, for cl100k_base and
 * o200k_base:
 *   - every position that mn__pretok_safe_cut accepts in random texts (letters of every case
 *     class, digits of every kind, spaces, tabs, CR, LF, Unicode white space, punctuation, '/',
 *     contractions, marks, CJK, emoji, invalid UTF-8, long white-space runs) is a piece boundary
 *     of the whole text, and the text's two sides split into the same pieces on their own;
 *   - the chunked count equals the one-thread count for 1..40 parts on 1..4 threads on random texts, on the
 *     committed vector texts (tests/data/tok, the .jsonl files) joined, and, when MNEMO_TOK_CORPUS names
 *     the shared corpus (../shared/bench/tok/build_corpus.sh), on slices of it;
 *   - mn__token_count_threads on texts over its 1 MiB threshold, any thread count.
 * Needs the rank files (scripts/fetch-ranks) in $MNEMO_DATA_DIR or build/share/mnemo.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "token/bpe.h"
#include "token/bpe_int.h"
#include "token/token.h"

#ifndef MNEMO_TEST_DATA
#define MNEMO_TEST_DATA "tests/data"
#endif

static const char *const ENC_NAMES[2] = {"cl100k_base", "o200k_base"};
static const enum mn_pretok_kind KINDS[2] = {MN_PRETOK_CL100K, MN_PRETOK_O200K};
static mn_tokenizer *enc[2];

static int setup(void **state)
{
    (void)state;
    char dir[4096];
    const char *env = getenv("MNEMO_DATA_DIR");
    snprintf(dir, sizeof dir, "%s", env && *env ? env : MNEMO_TEST_DATA "/../../build/share/mnemo");
    for (int e = 0; e < 2; e++)
        if (mn__token_open(ENC_NAMES[e], dir, &enc[e]) != MN_OK) {
            fprintf(stderr, "test_token_par: cannot load %s from %s: %s (run scripts/fetch-ranks)\n", ENC_NAMES[e],
                    dir, mn_errmsg());
            return -1;
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

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint32_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* The pieces of the random texts: every class the two regexes tell apart, and what sits next to
 * a cut (LF, digits) in every company. */
static const char *const ITEMS[] = {
    "a", "e", "t", "the", "Hello", "WORLD", "x", "Z", "\n", "\n", "\n", "\n", "\r\n", "\r", "\n\n", " ", " ", " ",
    "  ", "\t", "   \n  ", "\n   ", " \n", "0", "1", "7", "42", "12345", "3.14", "/", "//", "\n/", "!", ".", ",",
    "?!", "#", "(", ")", "{", "}", "-", "_", "\"", "'", "'s", "'S", "'t", "'re", "'VE", "'m", "'ll", "'LL", "'d",
    "'\xc5\xbf",              /* 's with U+017F long s */
    "\xc3\xa9", "\xc3\x89",   /* é É */
    "\xc7\x85",               /* ǅ (Lt) */
    "\xca\xb0",               /* ʰ (Lm) */
    "\xcc\x81",               /* combining acute (Mn) */
    "\xe4\xb8\xad\xe6\x96\x87", /* 中文 (Lo) */
    "\xd9\xa3",               /* ٣ (Nd) */
    "\xe2\x85\xab",           /* Ⅻ (Nl) */
    "\xc2\xbd",               /* ½ (No) */
    "\xc2\xa0",               /* NBSP (white space) */
    "\xe2\x80\xa8",           /* LINE SEPARATOR (white space, not CR/LF) */
    "\xe3\x80\x80",           /* IDEOGRAPHIC SPACE */
    "\xc2\x85",               /* NEL (white space) */
    "\x0b", "\x0c",           /* VT, FF (white space) */
    "\x1c",                   /* not white space to the regexes */
    "\xf0\x9f\x98\x80",       /* emoji */
    "\xd0\x9f\xd1\x80\xd0\xb8", /* При */
    "\xff", "\xc3", "\xe2\x82", "\x80", "\xed\xa0\x80", /* invalid UTF-8 */
};
#define N_ITEMS (sizeof ITEMS / sizeof ITEMS[0])

/* A random text of about `want` bytes into buf (room for want + 64); its length. */
static size_t random_text(char *buf, size_t want)
{
    size_t n = 0;
    while (n < want) {
        uint32_t r = next_rand();
        if (r % 50 == 0) { /* a long white-space or digit run */
            size_t run = 8 + next_rand() % 48;
            const char *c = (const char *[]){" ", "\n", "\t", "9", " \n"}[next_rand() % 5];
            size_t cl = strlen(c);
            for (size_t k = 0; k < run && n + cl <= want + 60; k++, n += cl)
                memcpy(buf + n, c, cl);
            continue;
        }
        const char *it = ITEMS[r % N_ITEMS];
        size_t l = strlen(it);
        memcpy(buf + n, it, l);
        n += l;
    }
    return n;
}

/* The piece ends of s[0..len) in ends[] (room for len); their number. */
static size_t split(enum mn_pretok_kind kind, const uint8_t *s, size_t len, size_t *ends)
{
    size_t n = 0;
    for (size_t i = 0; i < len;)
        ends[n++] = i = mn__pretok_next(kind, s, len, i);
    return n;
}

static void test_safe_cuts_are_boundaries(void **state)
{
    (void)state;
    char *buf = malloc(4096 + 64);
    size_t *whole = malloc((4096 + 64) * sizeof *whole), *part = malloc((4096 + 64) * sizeof *part);
    size_t cuts = 0, rejected = 0;
    for (int round = 0; round < 300; round++) {
        size_t len = random_text(buf, 16 + next_rand() % (round % 20 == 0 ? 4000 : 1200));
        const uint8_t *s = (const uint8_t *)buf;
        for (int e = 0; e < 2; e++) {
            size_t nw = split(KINDS[e], s, len, whole);
            size_t total = mn__token_count(enc[e], buf, len);
            size_t w = 0; /* whole[w] is the first piece end >= b */
            for (size_t b = 1; b < len; b++) {
                while (whole[w] < b)
                    w++;
                if (!mn__pretok_safe_cut(s, len, b)) {
                    rejected++;
                    continue;
                }
                cuts++;
                if (whole[w] != b)
                    fail_msg("%s: a safe cut at %zu is inside a piece (round %d)", ENC_NAMES[e], b, round);
                size_t np = split(KINDS[e], s, b, part);
                assert_int_equal(np, w + 1);
                assert_memory_equal(part, whole, np * sizeof *part);
                np = split(KINDS[e], s + b, len - b, part);
                assert_int_equal(np, nw - w - 1);
                for (size_t k = 0; k < np; k++)
                    assert_int_equal(part[k] + b, whole[w + 1 + k]);
                assert_int_equal(mn__token_count(enc[e], buf, b) + mn__token_count(enc[e], buf + b, len - b), total);
            }
        }
    }
    printf("safe cuts checked: %zu (positions rejected: %zu)\n", cuts, rejected);
    assert_true(cuts > 10000);
    free(buf);
    free(whole);
    free(part);
}

/* mn__bpe_count_chunks == mn__token_count for 1..8 parts, then every half again up to max_chunks,
 * on 1 to 4 threads; how many of those runs really split the text. */
static size_t check_chunks(const char *text, size_t len, unsigned max_chunks, const char *what)
{
    size_t split_runs = 0;
    for (int e = 0; e < 2; e++) {
        size_t want = mn__token_count(enc[e], text, len);
        for (unsigned c = 1; c <= max_chunks; c = c < 8 ? c + 1 : c * 3 / 2) {
            unsigned parts = 0;
            unsigned threads = 1 + c % 4;
            size_t got = mn__bpe_count_chunks(enc[e], text, len, c, threads, &parts);
            if (got != want)
                fail_msg("%s, %s, %u chunks (%u parts), %u threads: %zu tokens, one thread %zu", what, ENC_NAMES[e],
                         c, parts, threads, got, want);
            assert_true(parts >= 1 && parts <= c);
            split_runs += parts > 1;
        }
    }
    return split_runs;
}

static void test_chunks_random(void **state)
{
    (void)state;
    char *buf = malloc(65536 + 64);
    size_t split_runs = 0;
    for (int round = 0; round < 150; round++) {
        size_t len = random_text(buf, 1 + next_rand() % (round % 10 == 0 ? 65536 : 3000));
        split_runs += check_chunks(buf, len, 24, "random text");
    }
    /* no LF, no digit: no safe cut, one part whatever is asked */
    unsigned parts = 0;
    const char *flat = "one long line without a cut, only words and spaces: none of them is safe to cut at";
    assert_int_equal(mn__bpe_count_chunks(enc[0], flat, strlen(flat), 8, 2, &parts), mn__token_count(enc[0], flat, strlen(flat)));
    assert_int_equal(parts, 1);
    printf("random texts: %zu chunked counts really split\n", split_runs);
    assert_true(split_runs > 1000);
    free(buf);
}

/* The texts of the committed vectors, joined with LFs: real documents, the adversarial cases and
 * invalid UTF-8 side by side. */
static void test_chunks_vector_texts(void **state)
{
    (void)state;
    static const char *const files[] = {"real.jsonl", "adversarial.jsonl"};
    size_t cap = 1 << 20, len = 0;
    char *all = malloc(cap);
    for (size_t f = 0; f < 2; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/tok/%s", MNEMO_TEST_DATA, files[f]);
        FILE *fp = fopen(path, "r");
        if (!fp)
            fail_msg("cannot open %s: %s", path, strerror(errno));
        char *line = NULL;
        size_t lcap = 0;
        ssize_t got;
        while ((got = getline(&line, &lcap, fp)) > 0) {
            json_t *o = json_loadb(line, (size_t)got, JSON_ALLOW_NUL, NULL);
            json_t *t = o ? json_object_get(o, "text") : NULL;
            if (t) {
                size_t tl = json_string_length(t);
                while (len + tl + 2 > cap)
                    all = realloc(all, cap *= 2);
                memcpy(all + len, json_string_value(t), tl);
                len += tl;
                all[len++] = '\n';
            }
            json_decref(o);
        }
        free(line);
        fclose(fp);
    }
    printf("vector texts: %zu bytes\n", len);
    assert_true(len > 100000);
    size_t split_runs = check_chunks(all, len, 40, "vector texts");
    assert_true(split_runs > 20);
    /* and slices of it that start and end anywhere */
    for (int k = 0; k < 30; k++) {
        size_t a = next_rand() % len, n = next_rand() % 50000;
        if (a + n > len)
            n = len - a;
        check_chunks(all + a, n, 12, "a slice of the vector texts");
    }
    free(all);
}

/* The shared corpus, when MNEMO_TOK_CORPUS names it (not in the repository; skipped otherwise). */
static void test_chunks_corpus(void **state)
{
    (void)state;
    const char *path = getenv("MNEMO_TOK_CORPUS");
    if (!path || !*path) {
        printf("MNEMO_TOK_CORPUS not set: the shared corpus is not checked\n");
        return;
    }
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *text = malloc((size_t)size + 1);
    assert_int_equal(fread(text, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    check_chunks(text, (size_t)size, 9, "the corpus");
    for (int k = 0; k < 8; k++) {
        size_t a = next_rand() % (size_t)size, n = 1 + next_rand() % 2000000;
        if (a + n > (size_t)size)
            n = (size_t)size - a;
        check_chunks(text + a, n, 5, "a slice of the corpus");
    }
    free(text);
}

/* The public policy: over the threshold, any thread count gives the one-thread count. */
static void test_count_threads(void **state)
{
    (void)state;
    size_t len = MN_TOKEN_PAR_MIN + 300000;
    char *buf = malloc(len + 64);
    len = random_text(buf, len);
    for (int e = 0; e < 2; e++) {
        size_t want = mn__token_count(enc[e], buf, len);
        for (unsigned t = 0; t <= 8; t++)
            assert_int_equal(mn__token_count_threads(enc[e], buf, len, t), want);
        assert_int_equal(mn__token_count_threads(enc[e], buf, 1000, 4), mn__token_count(enc[e], buf, 1000));
    }
    mn_tokenizer *h;
    assert_int_equal(mn__token_open("heuristic", NULL, &h), MN_OK);
    assert_int_equal(mn__token_count_threads(h, buf, len, 4), mn__token_count(h, buf, len));
    mn__token_free(h);
    size_t n1 = 0, n4 = 0;
    setenv("MNEMO_DATA_DIR", MNEMO_TEST_DATA "/../../build/share/mnemo", 0);
    assert_int_equal(mn_count_tokens_threads("o200k_base", buf, len, 1, &n1), MN_OK);
    assert_int_equal(mn_count_tokens_threads("o200k_base", buf, len, 4, &n4), MN_OK);
    assert_int_equal(n1, n4);
    assert_int_equal(n1, mn__token_count(enc[1], buf, len));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_safe_cuts_are_boundaries),
        cmocka_unit_test(test_chunks_random),
        cmocka_unit_test(test_chunks_vector_texts),
        cmocka_unit_test(test_chunks_corpus),
        cmocka_unit_test(test_count_threads),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
