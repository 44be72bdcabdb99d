/*
 * kernels_neon.c — NEON distance kernels (AArch64, where NEON is always present): float32 inner
 * product with four FMA accumulators, int8 inner product with widening multiplies.
 */
#include "index/index_int.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "util/banned.h"

#if defined(__aarch64__)

static float dot_f32_neon(const float *a, const float *b, size_t d)
{
    float32x4_t s0 = vdupq_n_f32(0), s1 = vdupq_n_f32(0), s2 = vdupq_n_f32(0), s3 = vdupq_n_f32(0);
    size_t i = 0;
    for (; i + 16 <= d; i += 16) {
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
        s1 = vfmaq_f32(s1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
        s2 = vfmaq_f32(s2, vld1q_f32(a + i + 8), vld1q_f32(b + i + 8));
        s3 = vfmaq_f32(s3, vld1q_f32(a + i + 12), vld1q_f32(b + i + 12));
    }
    for (; i + 4 <= d; i += 4)
        s0 = vfmaq_f32(s0, vld1q_f32(a + i), vld1q_f32(b + i));
    float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
    for (; i < d; i++)
        s += a[i] * b[i];
    return s;
}

static int32_t dot_i8_neon(const int8_t *a, const int8_t *b, size_t d)
{
    int32x4_t acc = vdupq_n_s32(0);
    size_t i = 0;
    for (; i + 16 <= d; i += 16) {
        int8x16_t va = vld1q_s8(a + i), vb = vld1q_s8(b + i);
        int16x8_t lo = vmull_s8(vget_low_s8(va), vget_low_s8(vb));
        int16x8_t hi = vmull_s8(vget_high_s8(va), vget_high_s8(vb));
        acc = vpadalq_s16(acc, lo);
        acc = vpadalq_s16(acc, hi);
    }
    int32_t r = vaddvq_s32(acc);
    for (; i < d; i++)
        r += (int32_t)a[i] * (int32_t)b[i];
    return r;
}

static const struct mn__index_kernels neon_kernels = {"neon", dot_f32_neon, dot_i8_neon};

const struct mn__index_kernels *mn__index_kernels_neon(void) { return &neon_kernels; }

#endif
