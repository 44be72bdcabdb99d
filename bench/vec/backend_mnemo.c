/*
 * backend_mnemo.c — mnemo's vector index (src/index) behind the shared harness interface
 * ../shared/bench/vec/vecbench_backend.h, so that vecbench.c measures it exactly as it measures
 * hnswlib. Built twice by CMakeLists.txt: `mnemo` (float32 vectors) and, with
 * -DVB_MNEMO_INT8, `mnemo_int8` (int8 codes; re-ranking fetches full precision from the
 * harness's own copy of base.f32, standing in for the vectors mnemo keeps in its database).
 * MNEMO_VB_SAVE=PATH saves the built index there (vecfilter_mnemo loads it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "vecbench_backend.h"

#ifdef VB_MNEMO_INT8
#define VB_NAME "mnemo_int8"
#define VB_QUANT MN_INDEX_INT8
#else
#define VB_NAME "mnemo"
#define VB_QUANT MN_INDEX_F32
#endif

struct mb {
    mn_index *ix;
    uint32_t dim;
    const float *base; /* the harness's array, alive until destroy */
    uint32_t first;
    size_t n;
    unsigned threads; /* build threads (-T) */
};

static int fetch(void *user, int64_t id, float *out)
{
    struct mb *b = user;
    if (id < b->first || (size_t)(id - b->first) >= b->n)
        return 1;
    memcpy(out, b->base + (size_t)(id - b->first) * b->dim, b->dim * sizeof *out);
    return 0;
}

static void *m_create(const vb_params *p)
{
    struct mb *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    struct mn_index_params ip = MN_INDEX_PARAMS_INIT;
    ip.dim = p->dim;
    ip.M = (uint32_t)p->M;
    ip.ef_construction = (uint32_t)p->ef_construction;
    ip.quant = VB_QUANT;
    ip.seed = p->seed;
    ip.capacity = p->max_elements;
    b->dim = p->dim;
    b->threads = p->build_threads > 1 ? (unsigned)p->build_threads : 1;
    if (mn__index_create(&ip, &b->ix) != MN_OK) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        free(b);
        return NULL;
    }
    return b;
}

static int m_add(void *ix, const float *x, uint32_t n, uint32_t first_id)
{
    struct mb *b = ix;
    /* one batch on -T threads: the graph is the same for any thread count (docs/index.md) */
    int64_t *ids = malloc((n ? n : 1) * sizeof *ids);
    if (!ids)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        ids[i] = (int64_t)first_id + i;
    mn_status rc = mn__index_add_batch(b->ix, ids, x, n, b->threads);
    free(ids);
    if (rc != MN_OK) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return -1;
    }
    b->base = x;
    b->first = first_id;
    b->n = n;
    if (VB_QUANT == MN_INDEX_INT8)
        mn__index_set_source(b->ix, fetch, b);
    const char *save = getenv("MNEMO_VB_SAVE");
    if (save && *save && mn__index_save(b->ix, save) != MN_OK)
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
    return 0;
}

static void m_set_ef(void *ix, int ef)
{
    struct mb *b = ix;
    mn__index_set_ef_search(b->ix, (uint32_t)ef);
}

static int m_search(void *ix, const float *q, int k, int64_t *ids, float *scores)
{
    struct mb *b = ix;
    struct mn_index_hit hits[1024];
    size_t nh = 0;
    if (k > 1024 || mn__index_search(b->ix, q, (size_t)k, NULL, hits, &nh) != MN_OK)
        return -1;
    for (int i = 0; i < k; i++) {
        ids[i] = (size_t)i < nh ? hits[i].id : -1;
        if (scores)
            scores[i] = (size_t)i < nh ? hits[i].score : -1e30f;
    }
    return 0;
}

static size_t m_memory(void *ix)
{
    struct mb *b = ix;
    return mn__index_memory_bytes(b->ix);
}

static void m_destroy(void *ix)
{
    struct mb *b = ix;
    mn__index_free(b->ix);
    free(b);
}

const vb_backend vb_backend_impl = {VB_NAME, m_create, m_add, m_set_ef, m_search, NULL, m_memory, m_destroy};
