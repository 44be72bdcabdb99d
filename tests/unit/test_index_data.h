/*
 * test_index_data.h — clustered test vectors for the index tests (deterministic: splitmix64 and
 * Box-Muller): `n_clusters` unit centres, each point unit(centre + spread * g / sqrt(dim)), the
 * same model as the shared benchmark's generator, at test sizes.
 */
#ifndef TEST_INDEX_DATA_H
#define TEST_INDEX_DATA_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static inline uint64_t td_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline double td_unif(uint64_t *s) { return ((double)(td_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0); }

static inline double td_gauss(uint64_t *s)
{
    double u = td_unif(s), v = td_unif(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static inline void td_unit(float *x, size_t d)
{
    double sum = 0;
    for (size_t i = 0; i < d; i++)
        sum += (double)x[i] * x[i];
    double inv = 1.0 / sqrt(sum);
    for (size_t i = 0; i < d; i++)
        x[i] = (float)(x[i] * inv);
}

/* Fills out[n x d] (base) and returns the centres in *centres_out (caller frees) so that queries
 * can be drawn from the same mixture with td_points(..., centres). */
static inline float *td_centres(size_t c, size_t d, uint64_t seed)
{
    float *cs = malloc(c * d * sizeof *cs);
    uint64_t s = seed;
    for (size_t i = 0; i < c * d; i++)
        cs[i] = (float)td_gauss(&s);
    for (size_t i = 0; i < c; i++)
        td_unit(cs + i * d, d);
    return cs;
}

static inline float *td_points(size_t n, size_t d, const float *cs, size_t c, double spread, uint64_t seed)
{
    float *x = malloc(n * d * sizeof *x);
    uint64_t s = seed;
    double k = spread / sqrt((double)d);
    for (size_t i = 0; i < n; i++) {
        const float *ce = cs + (td_next(&s) % c) * d;
        for (size_t j = 0; j < d; j++)
            x[i * d + j] = (float)(ce[j] + k * td_gauss(&s));
        td_unit(x + i * d, d);
    }
    return x;
}

#endif
