/*
 * test_vecblob.c — the one stored form of an embedding vector (src/store/vecblob.c): little-endian
 * binary32, read back from any alignment, malformed rows refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "store/vecblob.h"

static void little_endian_bytes(void **state)
{
    (void)state;
    const float v[2] = {1.0f, -2.5f};
    unsigned char b[8];
    mn__vecblob_encode(v, 2, b);
    /* 1.0f = 0x3F800000, -2.5f = 0xC0200000, least significant byte first */
    const unsigned char want[8] = {0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x20, 0xC0};
    assert_memory_equal(b, want, 8);
    float back[2];
    mn__vecblob_decode(b, 2, back);
    assert_memory_equal(back, v, sizeof v);
}

static void read_grows_and_checks(void **state)
{
    (void)state;
    float v[5] = {0.5f, 0.25f, -1.0f, 3.0f, 1e-3f};
    unsigned char *blob = mn__vecblob_new(v, 5);
    assert_non_null(blob);
    unsigned char *odd = malloc(5 * 4 + 1); /* an unaligned copy, as a row may hand it out */
    memcpy(odd + 1, blob, 20);
    float *buf = NULL;
    uint32_t cap = 0;
    const float *got = mn__vecblob_read(odd + 1, 20, 5, &buf, &cap);
    assert_non_null(got);
    assert_int_equal(cap, 5);
    assert_memory_equal(got, v, sizeof v);
    /* a shorter one reuses the buffer */
    assert_non_null(mn__vecblob_read(blob, 8, 2, &buf, &cap));
    assert_int_equal(cap, 5);
    /* malformed: length not dim * 4, dimension out of range, no blob */
    assert_null(mn__vecblob_read(blob, 19, 5, &buf, &cap));
    assert_null(mn__vecblob_read(blob, 20, 4, &buf, &cap));
    assert_null(mn__vecblob_read(blob, 0, 0, &buf, &cap));
    assert_null(mn__vecblob_read(blob, 20, -5, &buf, &cap));
    assert_null(mn__vecblob_read(blob, (size_t)(MN_VECBLOB_MAX_DIM + 1) * 4, MN_VECBLOB_MAX_DIM + 1, &buf, &cap));
    assert_null(mn__vecblob_read(NULL, 20, 5, &buf, &cap));
    free(buf);
    free(odd);
    free(blob);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(little_endian_bytes), cmocka_unit_test(read_grows_and_checks)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
