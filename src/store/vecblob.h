/*
 * vecblob.h — the stored form of an embedding vector, written once for every backend and every
 * table that holds one (embeddings, memory vectors): dim floats as little-endian IEEE-754
 * binary32, 4 bytes each, no header (the dimension is a column of its own). Reading copies
 * into a float array, so a blob need not be aligned.
 */
#ifndef MN_STORE_VECBLOB_H
#define MN_STORE_VECBLOB_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"

#define MN_VECBLOB_MAX_DIM 65536

/* dim floats of v into out (dim * 4 bytes). */
void mn__vecblob_encode(const float *v, uint32_t dim, unsigned char *out);
/* A malloc'd blob of v (caller frees); NULL on OOM. */
unsigned char *mn__vecblob_new(const float *v, uint32_t dim);
/* dim floats of a blob into out. */
void mn__vecblob_decode(const void *blob, uint32_t dim, float *out);
/* A blob of len bytes that a row says holds dim floats, decoded into *buf (grown to *cap);
 * NULL when the row is malformed (dim out of 1…MN_VECBLOB_MAX_DIM, len not dim * 4) or on OOM. */
const float *mn__vecblob_read(const void *blob, size_t len, int64_t dim, float **buf, uint32_t *cap);
/* n vectors of dim floats, one after another (a document's), as one malloc'd blob of *len bytes;
 * *blob NULL when n is 0. MN_MISUSE (v NULL, dim out of 1…MN_VECBLOB_MAX_DIM), MN_TOOBIG (past
 * INT_MAX bytes), MN_NOMEM. */
mn_status mn__vecblob_many_new(const float *v, size_t n, uint32_t dim, unsigned char **blob, int *len);
/* A blob of len bytes holding whole vectors of dim floats, decoded into *buf (grown to *cap
 * floats); *n gets how many. 0; -1 when len is not whole vectors of a dim in 1…MN_VECBLOB_MAX_DIM
 * (the row is malformed); -2 on OOM. */
int mn__vecblob_many_read(const void *blob, size_t len, uint32_t dim, float **buf, size_t *cap, size_t *n);

#endif
