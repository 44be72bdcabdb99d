/*
 * kernels.c — distance kernels of the vector index: the scalar reference (inner product of
 * float32 and of int8 vectors) and the run-time choice among the SIMD sets in kernels_avx2.c,
 * kernels_avx512.c and kernels_neon.c, which are tested against it (tests/unit/test_index_kernels.c).
 */
#include "index/index_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

static float dot_f32_scalar(const float *a, const float *b, size_t d)
{
    float s = 0.0f;
    for (size_t i = 0; i < d; i++)
        s += a[i] * b[i];
    return s;
}

static int32_t dot_i8_scalar(const int8_t *a, const int8_t *b, size_t d)
{
    int32_t s = 0;
    for (size_t i = 0; i < d; i++)
        s += (int32_t)a[i] * (int32_t)b[i];
    return s;
}

const struct mn__index_kernels mn__index_kernels_scalar = {"scalar", dot_f32_scalar, dot_i8_scalar};

#if !defined(__aarch64__)
const struct mn__index_kernels *mn__index_kernels_neon(void) { return NULL; }
#endif
#if !(defined(__x86_64__) || defined(__i386__))
const struct mn__index_kernels *mn__index_kernels_avx2(void) { return NULL; }
const struct mn__index_kernels *mn__index_kernels_avx512(void) { return NULL; }
#endif

const struct mn__index_kernels *mn__index_kernels_best(void)
{
    const char *force = getenv("MNEMO_INDEX_KERNEL");
    const struct mn__index_kernels *k = NULL;
    if (force && *force) {
        if (strcmp(force, "scalar") == 0)
            return &mn__index_kernels_scalar;
        if (strcmp(force, "avx2") == 0)
            k = mn__index_kernels_avx2();
        else if (strcmp(force, "avx512") == 0)
            k = mn__index_kernels_avx512();
        else if (strcmp(force, "neon") == 0)
            k = mn__index_kernels_neon();
        if (k)
            return k;
    }
    if ((k = mn__index_kernels_avx512()) != NULL)
        return k;
    if ((k = mn__index_kernels_avx2()) != NULL)
        return k;
    if ((k = mn__index_kernels_neon()) != NULL)
        return k;
    return &mn__index_kernels_scalar;
}
