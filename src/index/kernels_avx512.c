/*
 * kernels_avx512.c — AVX-512F float32 inner product (x86-64), chosen at run time on CPUs that
 * have it; the int8 kernel is the AVX2 one (kernels_avx2.c). Target attributes only, no global
 * -m flags.
 */
#include "index/index_int.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "util/banned.h"

#if defined(__x86_64__) || defined(__i386__)

int32_t mn__dot_i8_avx2(const int8_t *a, const int8_t *b, size_t d);

__attribute__((target("avx512f"))) static float dot_f32_avx512(const float *a, const float *b, size_t d)
{
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= d; i += 32) {
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
        s1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), s1);
    }
    for (; i + 16 <= d; i += 16)
        s0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), s0);
    if (i < d) {
        __mmask16 m = (__mmask16)((1u << (d - i)) - 1u);
        s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + i), _mm512_maskz_loadu_ps(m, b + i), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

static const struct mn__index_kernels avx512_kernels = {"avx512", dot_f32_avx512, mn__dot_i8_avx2};

const struct mn__index_kernels *mn__index_kernels_avx512(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2"))
        return &avx512_kernels;
    return NULL;
}

#endif
