/*
 * vecblob.c — embedding vectors to and from their stored bytes (vecblob.h).
 */
#include "store/vecblob.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/banned.h"

static int little_endian(void)
{
    const uint16_t one = 1;
    unsigned char b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Copies n floats between native order and little-endian bytes (the same swap both ways). */
static void le_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n * 4);
    if (little_endian())
        return;
    unsigned char *p = dst;
    for (size_t i = 0; i < n; i++, p += 4) {
        unsigned char t = p[0];
        p[0] = p[3];
        p[3] = t;
        t = p[1];
        p[1] = p[2];
        p[2] = t;
    }
}

void mn__vecblob_encode(const float *v, uint32_t dim, unsigned char *out) { le_copy(out, v, dim); }

unsigned char *mn__vecblob_new(const float *v, uint32_t dim)
{
    unsigned char *b = malloc((size_t)dim * 4 + 1);
    if (b)
        le_copy(b, v, dim);
    return b;
}

void mn__vecblob_decode(const void *blob, uint32_t dim, float *out) { le_copy(out, blob, dim); }

const float *mn__vecblob_read(const void *blob, size_t len, int64_t dim, float **buf, uint32_t *cap)
{
    if (dim <= 0 || dim > MN_VECBLOB_MAX_DIM || !blob || len != (size_t)dim * 4)
        return NULL;
    if ((uint32_t)dim > *cap) {
        float *nb = realloc(*buf, (size_t)dim * sizeof *nb);
        if (!nb)
            return NULL;
        *buf = nb;
        *cap = (uint32_t)dim;
    }
    le_copy(*buf, blob, (size_t)dim);
    return *buf;
}

mn_status mn__vecblob_many_new(const float *v, size_t n, uint32_t dim, unsigned char **blob, int *len)
{
    *blob = NULL;
    *len = 0;
    if (!n)
        return MN_OK;
    if (!v || dim == 0 || dim > MN_VECBLOB_MAX_DIM)
        return mn__err(MN_MISUSE, "%zu vectors of dim %u", n, (unsigned)dim);
    if (n > (size_t)INT_MAX / 4 / dim)
        return mn__err(MN_TOOBIG, "%zu vectors of dim %u", n, (unsigned)dim);
    if (!(*blob = malloc(n * dim * 4)))
        return mn__nomem();
    mn__vecblob_encode(v, (uint32_t)(n * dim), *blob);
    *len = (int)(n * dim * 4);
    return MN_OK;
}

int mn__vecblob_many_read(const void *blob, size_t len, uint32_t dim, float **buf, size_t *cap, size_t *n)
{
    *n = 0;
    if (!blob || !len)
        return 0;
    if (dim == 0 || dim > MN_VECBLOB_MAX_DIM || len % ((size_t)dim * 4))
        return -1;
    size_t floats = len / 4;
    if (floats > *cap) {
        float *nb = realloc(*buf, floats * sizeof *nb);
        if (!nb)
            return -2;
        *buf = nb;
        *cap = floats;
    }
    le_copy(*buf, blob, floats);
    *n = floats / dim;
    return 0;
}
