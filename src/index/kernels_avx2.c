/*
 * kernels_avx2.c — AVX2 + FMA distance kernels (x86-64). Only these functions are compiled for
 * AVX2 (target attribute), so the library still runs on older CPUs: kernels.c picks them at run
 * time when __builtin_cpu_supports says so.
 */
#include "index/index_int.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "util/banned.h"

#if defined(__x86_64__) || defined(__i386__)

#define MN__AVX2 __attribute__((target("avx2,fma")))

MN__AVX2 static float hsum256(__m256 v)
{
    __m128 lo = _mm256_castps256_ps128(v);
    __m128 hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 0x55));
    return _mm_cvtss_f32(lo);
}

MN__AVX2 static float dot_f32_avx2(const float *a, const float *b, size_t d)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 32 <= d; i += 32) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
        s2 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16), s2);
        s3 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24), s3);
    }
    for (; i + 8 <= d; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float s = hsum256(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < d; i++)
        s += a[i] * b[i];
    return s;
}

/* |a| (unsigned) x (b with a's sign) pairs in 16 bits: exact for codes in [-127, 127]. */
MN__AVX2 static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, size_t d)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= d; i += 32) {
        __m256i va = _mm256_loadu_si256((const __m256i *)(const void *)(a + i));
        __m256i vb = _mm256_loadu_si256((const __m256i *)(const void *)(b + i));
        __m256i p16 = _mm256_maddubs_epi16(_mm256_sign_epi8(va, va), _mm256_sign_epi8(vb, va));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p16, ones));
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    int32_t r = _mm_cvtsi128_si32(s);
    for (; i < d; i++)
        r += (int32_t)a[i] * (int32_t)b[i];
    return r;
}

static const struct mn__index_kernels avx2_kernels = {"avx2", dot_f32_avx2, dot_i8_avx2};

const struct mn__index_kernels *mn__index_kernels_avx2(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &avx2_kernels;
    return NULL;
}

/* Exposed for kernels_avx512.c, which reuses the int8 kernel. */
int32_t mn__dot_i8_avx2(const int8_t *a, const int8_t *b, size_t d);
int32_t mn__dot_i8_avx2(const int8_t *a, const int8_t *b, size_t d) { return dot_i8_avx2(a, b, d); }

#endif
