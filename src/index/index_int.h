/*
 * index_int.h — private to src/index/ and its tests: the index struct, distance kernels and
 * their run-time dispatch, the id map, the file checksum, test hooks.
 */
#ifndef MN_INDEX_INT_H
#define MN_INDEX_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "index/index.h"

#define MN__INDEX_NONE UINT32_MAX
#define MN__INDEX_MAX_LEVEL 31
#define MN__INDEX_MAGIC 0x6d6e4958u /* "mnIX": live handle */
#define MN__INDEX_FLAG_DELETED 1u

/* ---- distance kernels ------------------------------------------------------------------------
 * Each set has the same contract; the scalar one is the reference the others are tested
 * against. dot_i8 never saturates for codes in [-127, 127] (loaders refuse -128). */
struct mn__index_kernels {
    const char *name;
    float (*dot_f32)(const float *a, const float *b, size_t d);
    int32_t (*dot_i8)(const int8_t *a, const int8_t *b, size_t d);
};
extern const struct mn__index_kernels mn__index_kernels_scalar;
/* NULL when not compiled in or not supported by this CPU. */
const struct mn__index_kernels *mn__index_kernels_avx2(void);
const struct mn__index_kernels *mn__index_kernels_avx512(void);
const struct mn__index_kernels *mn__index_kernels_neon(void);
/* The fastest set this CPU runs. MNEMO_INDEX_KERNEL=scalar|avx2|avx512|neon forces one (an
 * unavailable name falls back to the automatic choice). */
const struct mn__index_kernels *mn__index_kernels_best(void);

/* ---- id -> slot map: open addressing, linear probing, backward-shift deletion ---------------- */
struct mn__idmap {
    int64_t *keys;
    uint32_t *vals; /* MN__INDEX_NONE = empty */
    size_t cap;     /* power of two, or 0 */
    size_t n;
};
uint32_t mn__idmap_get(const struct mn__idmap *m, int64_t id);
mn_status mn__idmap_put(struct mn__idmap *m, int64_t id, uint32_t slot); /* id must be absent */
void mn__idmap_del(struct mn__idmap *m, int64_t id);
mn_status mn__idmap_reserve(struct mn__idmap *m, size_t n);
void mn__idmap_release(struct mn__idmap *m);

/* ---- search scratch, one per concurrent search ---------------------------------------------- */
struct mn__cand {
    float d; /* distance: -inner product, smaller is nearer */
    uint32_t slot;
};
struct mn__scratch {
    struct mn__scratch *next;
    uint16_t *visited; /* visited[slot] == tag: seen in this walk */
    size_t vcap;
    uint16_t tag;
    struct mn__cand *cand; /* min-heap: to expand */
    size_t ccap;
    struct mn__cand *res; /* max-heap: best found */
    size_t rcap;
    uint32_t *batch; /* neighbours of one node not visited yet */
    struct mn__cand *sel; /* neighbour selection (writer) */
    size_t selcap;
    float *qf;       /* normalised query */
    int8_t *qc;      /* its int8 code */
    size_t qcap;
};

struct mn_index {
    uint32_t magic;
    struct mn_index_params p;
    const struct mn__index_kernels *kern;
    uint32_t M0;       /* level-0 links per node: 2M */
    size_t stride0;    /* u32 words per level-0 list: 1 + M0 */
    size_t strideU;    /* u32 words per upper list: 1 + M */
    size_t row_bytes;  /* bytes per stored vector */
    double level_mult; /* 1 / ln(M) */

    size_t n;   /* slots used */
    size_t cap; /* slots allocated */
    size_t n_deleted;
    int64_t *ids;
    uint8_t *level;
    uint8_t *flags;
    uint32_t *upoff;
    float *vecs;    /* f32: cap x dim */
    int8_t *codes;  /* int8: cap x dim */
    float *scales;  /* int8: cap */
    uint32_t *links0; /* hnsw: cap x stride0 */
    uint32_t *upper;  /* hnsw: upper-level lists */
    size_t upper_n, upper_cap;
    uint32_t entry;
    int max_level;
    uint64_t rng;
    struct mn__idmap map;

    mn_index_fetch_fn fetch;
    void *fetch_user;

    /* mn__index_map: the arrays above point into this read-only mapping of the file until the
     * first write copies them to the heap (mn__index_materialize) */
    void *map_base;
    size_t map_len;

    pthread_rwlock_t lock;
    pthread_mutex_t pool_lock;
    struct mn__scratch *pool;  /* free scratches for searches */
    struct mn__scratch *wscr;  /* the writer's scratch (inserts) */
};

/* A query as the distance functions see it: a normalised f32 vector, and in an int8 index its
 * code and scale. */
struct mn__qv {
    const float *f;
    const int8_t *c;
    float s;
};

/* Heaps of candidates; the caller guarantees room for one more entry. */
static inline void mn__maxheap_push(struct mn__cand *h, size_t *n, struct mn__cand c)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].d >= c.d)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = c;
}
static inline void mn__maxheap_pop(struct mn__cand *h, size_t *n)
{
    size_t m = --(*n);
    if (m == 0)
        return;
    struct mn__cand last = h[m];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        float bd = last.d;
        if (l < m && h[l].d > bd) {
            b = l;
            bd = h[l].d;
        }
        if (r < m && h[r].d > bd)
            b = r;
        if (b == i)
            break;
        h[i] = h[b];
        i = b;
    }
    h[i] = last;
}
static inline void mn__minheap_push(struct mn__cand *h, size_t *n, struct mn__cand c)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].d <= c.d)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = c;
}
static inline void mn__minheap_pop(struct mn__cand *h, size_t *n)
{
    size_t m = --(*n);
    if (m == 0)
        return;
    struct mn__cand last = h[m];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        float bd = last.d;
        if (l < m && h[l].d < bd) {
            b = l;
            bd = h[l].d;
        }
        if (r < m && h[r].d < bd)
            b = r;
        if (b == i)
            break;
        h[i] = h[b];
        i = b;
    }
    h[i] = last;
}
/* Grows a candidate array to hold at least `need` entries. */
mn_status mn__cand_grow(struct mn__cand **a, size_t *cap, size_t need);

/* index.c */
mn_status mn__index_alloc(const struct mn_index_params *p, mn_index **out); /* checks params */
mn_status mn__index_reserve(mn_index *ix, size_t slots);
mn_status mn__index_upper_reserve(mn_index *ix, size_t words);
void mn__index_quantize(const float *x, size_t d, int8_t *code, float *scale);
mn_status mn__scratch_fit(mn_index *ix, struct mn__scratch *s);
/* io.c: a mapped index's arrays to the heap, after checking its vectors and links (the mapping
 * was opened without that check). No-op for other indexes. Needs the write lock. */
mn_status mn__index_materialize(mn_index *ix);
void mn__scratch_free(struct mn__scratch *s);

/* hnsw.c: the graph */
int mn__hnsw_random_level(mn_index *ix);
/* Links slot `s` (vector and level already stored) into the graph. Needs the write lock. */
mn_status mn__hnsw_insert(mn_index *ix, uint32_t s);
/* Links slots [first, end) (vectors and levels stored, lists empty) on `threads` threads; the
 * graph does not depend on the thread count. Needs the write lock. */
mn_status mn__hnsw_insert_batch(mn_index *ix, uint32_t first, uint32_t end, unsigned threads);
/* Walks level 0 from the entry point. Results (accepted, live) are left in scr->res as a
 * max-heap of *n_res entries. *aborted = 1 when the walk passed `budget` visits (0 = none) or
 * the filter's probe says it is selective. */
struct mn__filter {
    mn_index_accept_fn accept;
    void *user;
    /* give up (set *aborted) once `probe` nodes were visited and fewer than min_frac of them
     * passed the filter: the exact scan is cheaper then (0: never) */
    size_t probe;
    double min_frac;
};
mn_status mn__hnsw_search(mn_index *ix, struct mn__scratch *scr, const struct mn__qv *q,
                          size_t ef, const struct mn__filter *f, size_t budget, size_t *n_res,
                          size_t *visited, int *aborted);
static inline float mn__qdist(const mn_index *ix, const struct mn__qv *q, uint32_t slot)
{
    size_t d = ix->p.dim;
    if (ix->p.quant == MN_INDEX_INT8)
        return -(q->s * ix->scales[slot] * (float)ix->kern->dot_i8(q->c, ix->codes + (size_t)slot * d, d));
    return -ix->kern->dot_f32(q->f, ix->vecs + (size_t)slot * d, d);
}
static inline struct mn__qv mn__slot_qv(const mn_index *ix, uint32_t slot)
{
    struct mn__qv q = {NULL, NULL, 0};
    size_t d = ix->p.dim;
    if (ix->p.quant == MN_INDEX_INT8) {
        q.c = ix->codes + (size_t)slot * d;
        q.s = ix->scales[slot];
    } else {
        q.f = ix->vecs + (size_t)slot * d;
    }
    return q;
}
static inline uint32_t *mn__links(const mn_index *ix, uint32_t slot, int level)
{
    if (level == 0)
        return ix->links0 + (size_t)slot * ix->stride0;
    return ix->upper + ix->upoff[slot] + (size_t)(level - 1) * ix->strideU;
}

/* io.c: the file checksum (streaming; any split of the bytes gives the same value) */
struct mn__cksum {
    uint64_t h;
    uint64_t pend;
    unsigned npend;
    uint64_t total;
};
void mn__cksum_init(struct mn__cksum *c);
void mn__cksum_update(struct mn__cksum *c, const void *data, size_t len);
uint64_t mn__cksum_final(const struct mn__cksum *c);
uint64_t mn__index_checksum(const void *data, size_t len);

/* Test hook: when nonzero, mn__index_save fails with MN_IO after writing this many bytes of the
 * temporary file (simulates a crash or a full disk mid-save). Not thread-safe; tests only. */
extern size_t mn__index_save_fail_after;

#endif
