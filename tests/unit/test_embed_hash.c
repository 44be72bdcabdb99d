/*
 * test_embed_hash.c — the hash embedder gives the same bits as it always did: stored vectors
 * are compared with the vectors of new queries, so a change of a single bit (a sort in another
 * order, a sum in another order) would make old and new vectors drift apart without any error.
 * The expected values are a 64-bit FNV-1a of each vector's float bit patterns, taken from the
 * implementation of commit a7978bf (before its qsort became a radix sort), for texts that take the
 * stack and the heap path, repeated words, non-ASCII words and words cut at 64 bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"

static const char *const texts[] = {
    "How do I configure the Postgres connection pool?",
    "the cat sat on the mat; the cat sat on the hat. THE CAT!",
    "na\xc3\xafve caf\xc3\xa9 r\xc3\xa9sum\xc3\xa9 \xe2\x80\x94 \xc3\xbc" "berm\xc3\xa4\xc3\x9f" "ig stra\xc3\x9f" "e "
    "\xe6\x9d\xb1\xe4\xba\xac 42 x y z",
    "supercalifragilisticexpialidocious-pneumonoultramicroscopicsilicovolcanoconiosis-"
    "antidisestablishmentarianism is long",
    "a",
    NULL, /* BIG_LEN bytes of pseudo-words: thousands of features, the heap path */
};

enum { BIG_LEN = 20000 };

static const struct {
    size_t text;
    uint32_t dim;
    uint64_t bits;
} cases[] = {
    {0, 384, 0x56515e207b9d190dULL},  {0, 7, 0xbd38a9f00decadd2ULL}, {0, 1536, 0x0ed68e3b6207f8c4ULL},
    {1, 384, 0x9790da8fe8f4125bULL},  {1, 7, 0xb998bea0600cd31bULL}, {1, 1536, 0xc12cb022652c363eULL},
    {2, 384, 0xbff4f5105156069eULL},  {2, 7, 0xa3b6b9d665280611ULL}, {2, 1536, 0xb7f2c06aeff2dfc4ULL},
    {3, 384, 0x55e694bead670d24ULL},  {3, 7, 0x8eac850861d44c98ULL}, {3, 1536, 0x88b13568ad9bf66eULL},
    {4, 384, 0x94259fbc8dfd18a2ULL},  {4, 7, 0x8cbb977af8775c36ULL}, {4, 1536, 0xe55a2359a2103cd6ULL},
    {5, 384, 0x7a78ba80231a7096ULL},  {5, 7, 0x7c9b79d82c39e631ULL}, {5, 1536, 0x1d821dc0b98c6fe4ULL},
};

/* FNV-1a over the bit patterns, least significant byte first: the same on any byte order. */
static uint64_t vector_bits(const float *v, uint32_t dim)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (uint32_t i = 0; i < dim; i++) {
        uint32_t u;
        memcpy(&u, &v[i], sizeof u);
        for (int k = 0; k < 4; k++) {
            h ^= (u >> (8 * k)) & 0xff;
            h *= 0x100000001b3ULL;
        }
    }
    return h;
}

static void same_bits_as_before(void **state)
{
    (void)state;
    char *big = malloc(BIG_LEN);
    assert_non_null(big);
    static const char words[] = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor 0123 ";
    for (int i = 0; i < BIG_LEN; i++)
        big[i] = words[(i * 7) % (int)(sizeof words - 1)];
    float *v = malloc(1536 * sizeof *v);
    assert_non_null(v);
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *t = texts[cases[i].text] ? texts[cases[i].text] : big;
        mn__embed_hash(t, texts[cases[i].text] ? strlen(t) : BIG_LEN, cases[i].dim, v);
        uint64_t got = vector_bits(v, cases[i].dim);
        if (got != cases[i].bits) {
            print_error("text %zu, dim %u: bits 0x%016llx, expected 0x%016llx\n", cases[i].text, cases[i].dim,
                        (unsigned long long)got, (unsigned long long)cases[i].bits);
            bad++;
        }
    }
    free(v);
    free(big);
    assert_int_equal(bad, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(same_bits_as_before)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
