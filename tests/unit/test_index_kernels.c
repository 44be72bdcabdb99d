/*
 * test_index_kernels.c — the SIMD distance kernels (AVX2, AVX-512, NEON: whichever this build
 * and CPU have) against the scalar reference on random data of every length up to 300 and at
 * odd alignments, plus the int8 quantiser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_int.h"
#include "unit/test_index_data.h"

static void check_set(const struct mn__index_kernels *k)
{
    const struct mn__index_kernels *ref = &mn__index_kernels_scalar;
    uint64_t s = 1234;
    enum { MAXD = 1100 };
    float *a = malloc((MAXD + 8) * sizeof *a), *b = malloc((MAXD + 8) * sizeof *b);
    int8_t *ca = malloc(MAXD + 8), *cb = malloc(MAXD + 8);
    size_t dims[400], nd = 0;
    for (size_t d = 0; d <= 300; d++)
        dims[nd++] = d;
    size_t more[] = {383, 384, 385, 511, 512, 768, 1024, 1031, 1100};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        dims[nd++] = more[i];
    for (size_t di = 0; di < nd; di++) {
        size_t d = dims[di];
        for (int off = 0; off < 3; off++) { /* unaligned starts */
            float *pa = a + off, *pb = b + 2 * off;
            int8_t *qa = ca + off, *qb = cb + 3 * off;
            double mag = 0;
            for (size_t i = 0; i < d; i++) {
                pa[i] = (float)td_gauss(&s);
                pb[i] = (float)td_gauss(&s);
                mag += fabs((double)pa[i] * pb[i]);
                qa[i] = (int8_t)((int)(td_next(&s) % 255) - 127);
                qb[i] = (int8_t)((int)(td_next(&s) % 255) - 127);
            }
            float r = ref->dot_f32(pa, pb, d), v = k->dot_f32(pa, pb, d);
            if (fabs((double)r - (double)v) > 1e-5 * mag + 1e-6) {
                fprintf(stderr, "%s dot_f32 d=%zu: %.9g vs scalar %.9g\n", k->name, d, v, r);
                fail();
            }
            assert_int_equal(k->dot_i8(qa, qb, d), ref->dot_i8(qa, qb, d));
        }
    }
    /* extremes: all +-127 (the int8 kernel must not saturate) */
    for (size_t i = 0; i < 512; i++) {
        ca[i] = 127;
        cb[i] = (int8_t)(i % 2 ? -127 : 127);
    }
    assert_int_equal(k->dot_i8(ca, ca, 512), 127 * 127 * 512);
    assert_int_equal(k->dot_i8(ca, cb, 512), 0);
    for (size_t i = 0; i < 512; i++)
        cb[i] = -127;
    assert_int_equal(k->dot_i8(ca, cb, 512), -127 * 127 * 512);
    free(a);
    free(b);
    free(ca);
    free(cb);
}

static void simd_matches_scalar(void **state)
{
    (void)state;
    const struct mn__index_kernels *sets[3] = {mn__index_kernels_avx2(), mn__index_kernels_avx512(),
                                               mn__index_kernels_neon()};
    int tested = 0;
    for (int i = 0; i < 3; i++) {
        if (!sets[i])
            continue;
        printf("  checking %s against scalar\n", sets[i]->name);
        check_set(sets[i]);
        tested++;
    }
    check_set(&mn__index_kernels_scalar); /* trivially, and the extremes */
    const struct mn__index_kernels *best = mn__index_kernels_best();
    assert_non_null(best);
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2"))
        assert_true(tested >= 1);
#endif
    setenv("MNEMO_INDEX_KERNEL", "scalar", 1);
    assert_string_equal(mn__index_kernels_best()->name, "scalar");
    setenv("MNEMO_INDEX_KERNEL", "no-such-kernel", 1);
    assert_ptr_equal(mn__index_kernels_best(), best);
    unsetenv("MNEMO_INDEX_KERNEL");
}

static void quantiser(void **state)
{
    (void)state;
    uint64_t s = 5;
    float x[100];
    int8_t c[100];
    float scale;
    for (int rep = 0; rep < 50; rep++) {
        for (int i = 0; i < 100; i++)
            x[i] = (float)td_gauss(&s);
        td_unit(x, 100);
        mn__index_quantize(x, 100, c, &scale);
        float mx = 0;
        for (int i = 0; i < 100; i++) {
            assert_true(c[i] >= -127 && c[i] <= 127);
            mx = fabsf(x[i]) > mx ? fabsf(x[i]) : mx;
            assert_true(fabsf(scale * c[i] - x[i]) <= scale * 0.5f + 1e-7f);
        }
        assert_true(fabsf(scale * 127 - mx) < 1e-6f);
    }
    float zero[4] = {0, 0, 0, 0};
    mn__index_quantize(zero, 4, c, &scale);
    assert_true(scale == 0);
    assert_int_equal(c[0], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(simd_matches_scalar),
        cmocka_unit_test(quantiser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
