/*
 * index.c — the vector index's life cycle and search: create/free, add (normalise, quantise,
 * link), remove (tombstones), compact, and search with its choice between the graph walk
 * (hnsw.c) and an exact scan, filters, fall-backs and int8 re-ranking. File I/O is in io.c.
 * Design notes: docs/index.md.
 */
#include "index/index_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/err.h"
#include "util/banned.h"

#define MAX_SLOTS ((size_t)UINT32_MAX - 1) /* MN__INDEX_NONE is reserved */

/* ---- small helpers ------------------------------------------------------------------------- */

mn_status mn__cand_grow(struct mn__cand **a, size_t *cap, size_t need)
{
    if (need <= *cap)
        return MN_OK;
    size_t nc = *cap ? *cap : 64;
    while (nc < need)
        nc *= 2;
    struct mn__cand *p = realloc(*a, nc * sizeof *p);
    if (!p)
        return mn__nomem();
    *a = p;
    *cap = nc;
    return MN_OK;
}

static int check_ix(const mn_index *ix) { return ix && ix->magic == MN__INDEX_MAGIC; }

/* Normalises x[0..d) into out; MN_INVALID for a zero or non-finite vector. */
static mn_status normalise(const float *x, size_t d, float *out, const char *what)
{
    double sum = 0;
    for (size_t i = 0; i < d; i++) {
        if (!isfinite(x[i]))
            return mn__err(MN_INVALID, "%s: component %zu is not finite", what, i);
        sum += (double)x[i] * (double)x[i];
    }
    if (!(sum > 0) || !isfinite(sum))
        return mn__err(MN_INVALID, "%s: the vector has no direction (norm %g)", what, sqrt(sum));
    double inv = 1.0 / sqrt(sum);
    for (size_t i = 0; i < d; i++)
        out[i] = (float)((double)x[i] * inv);
    return MN_OK;
}

void mn__index_quantize(const float *x, size_t d, int8_t *code, float *scale)
{
    float mx = 0;
    for (size_t i = 0; i < d; i++)
        mx = fabsf(x[i]) > mx ? fabsf(x[i]) : mx;
    if (mx == 0) {
        memset(code, 0, d);
        *scale = 0;
        return;
    }
    float inv = 127.0f / mx;
    for (size_t i = 0; i < d; i++) {
        long v = lrintf(x[i] * inv);
        code[i] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    *scale = mx / 127.0f;
}

/* ---- scratch ------------------------------------------------------------------------------- */

void mn__scratch_free(struct mn__scratch *s)
{
    if (!s)
        return;
    free(s->visited);
    free(s->cand);
    free(s->res);
    free(s->batch);
    free(s->sel);
    free(s->qf);
    free(s->qc);
    free(s);
}

/* Makes `s` fit the index: visited marks for every slot, query buffers, neighbour batch. */
mn_status mn__scratch_fit(mn_index *ix, struct mn__scratch *s)
{
    size_t need = ix->cap > ix->n ? ix->cap : ix->n;
    if (s->vcap < need) {
        uint16_t *v = realloc(s->visited, need * sizeof *v);
        if (!v)
            return mn__nomem();
        memset(v + s->vcap, 0, (need - s->vcap) * sizeof *v);
        s->visited = v;
        s->vcap = need;
    }
    if (s->qcap < ix->p.dim) {
        float *qf = realloc(s->qf, 2 * (size_t)ix->p.dim * sizeof *qf); /* query + fetch buffer */
        if (!qf)
            return mn__nomem();
        s->qf = qf;
        int8_t *qc = realloc(s->qc, ix->p.dim);
        if (!qc)
            return mn__nomem();
        s->qc = qc;
        s->qcap = ix->p.dim;
    }
    if (!s->batch) {
        s->batch = malloc((ix->M0 + 1) * sizeof *s->batch);
        if (!s->batch)
            return mn__nomem();
    }
    return MN_OK;
}

static mn_status scratch_get(mn_index *ix, struct mn__scratch **out)
{
    pthread_mutex_lock(&ix->pool_lock);
    struct mn__scratch *s = ix->pool;
    if (s)
        ix->pool = s->next;
    pthread_mutex_unlock(&ix->pool_lock);
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return mn__nomem();
    }
    mn_status rc = mn__scratch_fit(ix, s);
    if (rc != MN_OK) {
        mn__scratch_free(s);
        return rc;
    }
    *out = s;
    return MN_OK;
}

static void scratch_put(mn_index *ix, struct mn__scratch *s)
{
    pthread_mutex_lock(&ix->pool_lock);
    s->next = ix->pool;
    ix->pool = s;
    pthread_mutex_unlock(&ix->pool_lock);
}

/* ---- create, grow, free -------------------------------------------------------------------- */

static mn_status check_params(const struct mn_index_params *p)
{
    if (!p)
        return mn__err(MN_INVALID, "index: params is NULL");
    if (p->dim < 1 || p->dim > 65536)
        return mn__err(MN_INVALID, "index: dim %u is outside 1..65536", p->dim);
    if (p->kind != MN_INDEX_HNSW && p->kind != MN_INDEX_FLAT)
        return mn__err(MN_INVALID, "index: kind %d is neither hnsw (0) nor flat (1)", (int)p->kind);
    if (p->quant != MN_INDEX_F32 && p->quant != MN_INDEX_INT8)
        return mn__err(MN_INVALID, "index: quant %d is neither f32 (0) nor int8 (1)", (int)p->quant);
    if (p->M < 2 || p->M > 128)
        return mn__err(MN_INVALID, "index: M %u is outside 2..128", p->M);
    if (p->ef_construction < 1 || p->ef_construction > 65536)
        return mn__err(MN_INVALID, "index: ef_construction %u is outside 1..65536", p->ef_construction);
    if (p->ef_search < 1 || p->ef_search > 65536)
        return mn__err(MN_INVALID, "index: ef_search %u is outside 1..65536", p->ef_search);
    if (p->capacity > MAX_SLOTS)
        return mn__err(MN_TOOBIG, "index: capacity %zu is over %zu", p->capacity, MAX_SLOTS);
    return MN_OK;
}

mn_status mn__index_alloc(const struct mn_index_params *p, mn_index **out)
{
    mn_status rc = check_params(p);
    if (rc != MN_OK)
        return rc;
    mn_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return mn__nomem();
    ix->p = *p;
    ix->kern = mn__index_kernels_best();
    ix->M0 = 2 * p->M;
    ix->stride0 = 1 + (size_t)ix->M0;
    ix->strideU = 1 + (size_t)p->M;
    ix->row_bytes = p->quant == MN_INDEX_INT8 ? p->dim : (size_t)p->dim * sizeof(float);
    ix->level_mult = 1.0 / log((double)p->M);
    ix->entry = MN__INDEX_NONE;
    ix->max_level = -1;
    ix->rng = p->seed ^ 0x9e3779b97f4a7c15ull;
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    int e1 = pthread_rwlock_init(&ix->lock, &attr);
    pthread_rwlockattr_destroy(&attr);
    if (e1 != 0) {
        free(ix);
        return mn__err(MN_NOMEM, "index: cannot create its lock");
    }
    if (pthread_mutex_init(&ix->pool_lock, NULL) != 0) {
        pthread_rwlock_destroy(&ix->lock);
        free(ix);
        return mn__err(MN_NOMEM, "index: cannot create its lock");
    }
    ix->magic = MN__INDEX_MAGIC;
    ix->wscr = calloc(1, sizeof *ix->wscr);
    if (!ix->wscr) {
        mn__index_free(ix);
        return mn__nomem();
    }
    size_t selcap = (p->ef_construction > ix->M0 ? p->ef_construction : ix->M0) + 2;
    if ((rc = mn__scratch_fit(ix, ix->wscr)) != MN_OK ||
        (rc = mn__cand_grow(&ix->wscr->res, &ix->wscr->rcap, p->ef_construction + 2)) != MN_OK ||
        (rc = mn__cand_grow(&ix->wscr->sel, &ix->wscr->selcap, selcap)) != MN_OK ||
        (p->capacity && (rc = mn__index_reserve(ix, p->capacity)) != MN_OK)) {
        mn__index_free(ix);
        return rc;
    }
    *out = ix;
    return MN_OK;
}

mn_status mn__index_create(const struct mn_index_params *params, mn_index **out)
{
    if (!out)
        return mn__err(MN_INVALID, "index: out is NULL");
    *out = NULL;
    return mn__index_alloc(params, out);
}

/* Grows every per-slot array to `slots`. Nothing visible changes: on failure the index is as it
 * was (some arrays may have more room than ix->cap says, which is harmless). */
mn_status mn__index_reserve(mn_index *ix, size_t slots)
{
    if (slots <= ix->cap)
        return MN_OK;
    if (slots > MAX_SLOTS)
        return mn__err(MN_TOOBIG, "index: %zu vectors is over the limit of %zu", slots, MAX_SLOTS);
    void *p;
#define GROW(field, per)                                                                          \
    do {                                                                                          \
        p = realloc(ix->field, slots * (per));                                                    \
        if (!p)                                                                                   \
            return mn__nomem();                                                                   \
        ix->field = p;                                                                            \
    } while (0)
    GROW(ids, sizeof(int64_t));
    GROW(level, 1);
    GROW(flags, 1);
    if (ix->p.quant == MN_INDEX_INT8) {
        GROW(codes, ix->p.dim);
        GROW(scales, sizeof(float));
    } else {
        GROW(vecs, (size_t)ix->p.dim * sizeof(float));
    }
    if (ix->p.kind == MN_INDEX_HNSW) {
        GROW(upoff, sizeof(uint32_t));
        GROW(links0, ix->stride0 * sizeof(uint32_t));
    }
#undef GROW
    mn_status rc = mn__idmap_reserve(&ix->map, slots);
    if (rc != MN_OK)
        return rc;
    /* the writer's walk never allocates: room for every slot as a candidate */
    if (ix->p.kind == MN_INDEX_HNSW && (rc = mn__cand_grow(&ix->wscr->cand, &ix->wscr->ccap, slots + 1)) != MN_OK)
        return rc;
    size_t old = ix->cap;
    ix->cap = slots;
    if ((rc = mn__scratch_fit(ix, ix->wscr)) != MN_OK) {
        ix->cap = old;
        return rc;
    }
    return MN_OK;
}

mn_status mn__index_upper_reserve(mn_index *ix, size_t words)
{
    if (words <= ix->upper_cap)
        return MN_OK;
    size_t nc = ix->upper_cap ? ix->upper_cap : 1024;
    while (nc < words)
        nc *= 2;
    if (nc > UINT32_MAX)
        return mn__err(MN_TOOBIG, "index: upper-level graph over 2^32 words");
    uint32_t *u = realloc(ix->upper, nc * sizeof *u);
    if (!u)
        return mn__nomem();
    ix->upper = u;
    ix->upper_cap = nc;
    return MN_OK;
}

static void free_data(mn_index *ix)
{
    if (ix->map_base) { /* the arrays are the mapping's */
        munmap(ix->map_base, ix->map_len);
        ix->map_base = NULL;
        mn__idmap_release(&ix->map);
        return;
    }
    free(ix->ids);
    free(ix->level);
    free(ix->flags);
    free(ix->upoff);
    free(ix->vecs);
    free(ix->codes);
    free(ix->scales);
    free(ix->links0);
    free(ix->upper);
    mn__idmap_release(&ix->map);
}

void mn__index_free(mn_index *ix)
{
    if (!ix)
        return;
    free_data(ix);
    mn__scratch_free(ix->wscr);
    while (ix->pool) {
        struct mn__scratch *s = ix->pool;
        ix->pool = s->next;
        mn__scratch_free(s);
    }
    pthread_rwlock_destroy(&ix->lock);
    pthread_mutex_destroy(&ix->pool_lock);
    ix->magic = 0;
    free(ix);
}

/* ---- add, remove, compact ------------------------------------------------------------------ */

/* Takes a new slot for `id` at `level` (links empty; vector not written). Commits nothing on
 * failure. */
static mn_status slot_new(mn_index *ix, int64_t id, int level, uint32_t *out)
{
    mn_status rc;
    if (ix->n == ix->cap) {
        size_t want = ix->cap < 64 ? 64 : ix->cap * 2;
        if (want > MAX_SLOTS)
            want = MAX_SLOTS;
        if (want <= ix->n)
            return mn__err(MN_TOOBIG, "index: full at %zu vectors", ix->n);
        if ((rc = mn__index_reserve(ix, want)) != MN_OK)
            return rc;
    }
    size_t uw = (size_t)level * ix->strideU;
    if (level > 0 && (rc = mn__index_upper_reserve(ix, ix->upper_n + uw)) != MN_OK)
        return rc;
    if ((rc = mn__idmap_put(&ix->map, id, (uint32_t)ix->n)) != MN_OK)
        return rc;
    uint32_t s = (uint32_t)ix->n;
    ix->ids[s] = id;
    ix->level[s] = (uint8_t)level;
    ix->flags[s] = 0;
    if (ix->p.kind == MN_INDEX_HNSW) {
        memset(ix->links0 + (size_t)s * ix->stride0, 0, ix->stride0 * sizeof(uint32_t));
        ix->upoff[s] = level > 0 ? (uint32_t)ix->upper_n : 0;
        if (level > 0)
            memset(ix->upper + ix->upper_n, 0, uw * sizeof(uint32_t));
        ix->upper_n += uw;
    }
    ix->n++;
    *out = s;
    return MN_OK;
}

/* Writes the unit vector x as slot s's stored form. */
static void slot_store(mn_index *ix, uint32_t s, const float *x)
{
    size_t d = ix->p.dim;
    if (ix->p.quant == MN_INDEX_INT8)
        mn__index_quantize(x, d, ix->codes + (size_t)s * d, ix->scales + s);
    else
        memcpy(ix->vecs + (size_t)s * d, x, d * sizeof(float));
}

mn_status mn__index_add(mn_index *ix, int64_t id, const float *vec)
{
    if (!check_ix(ix))
        return mn__err(MN_MISUSE, "index: bad handle");
    if (!vec)
        return mn__err(MN_INVALID, "index add: vector is NULL");
    pthread_rwlock_wrlock(&ix->lock);
    mn_status rc;
    uint32_t s;
    if ((rc = mn__index_materialize(ix)) != MN_OK)
        goto out;
    if (mn__idmap_get(&ix->map, id) != MN__INDEX_NONE) {
        rc = mn__err(MN_CONFLICT, "index add: id %lld is already in the index", (long long)id);
        goto out;
    }
    if ((rc = normalise(vec, ix->p.dim, ix->wscr->qf, "index add")) != MN_OK)
        goto out;
    int level = ix->p.kind == MN_INDEX_HNSW ? mn__hnsw_random_level(ix) : 0;
    if ((rc = slot_new(ix, id, level, &s)) != MN_OK)
        goto out;
    slot_store(ix, s, ix->wscr->qf);
    if (ix->p.kind == MN_INDEX_HNSW)
        rc = mn__hnsw_insert(ix, s);
out:
    pthread_rwlock_unlock(&ix->lock);
    return rc;
}

mn_status mn__index_add_batch(mn_index *ix, const int64_t *ids, const float *vecs, size_t n, unsigned threads)
{
    if (!check_ix(ix))
        return mn__err(MN_MISUSE, "index: bad handle");
    if (n && (!ids || !vecs))
        return mn__err(MN_INVALID, "index add: ids or vectors are NULL");
    if (threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    pthread_rwlock_wrlock(&ix->lock);
    mn_status rc = mn__index_materialize(ix);
    size_t d = ix->p.dim, first = ix->n;
    if (rc == MN_OK && ix->n + n > ix->cap)
        rc = mn__index_reserve(ix, ix->n + n);
    for (size_t i = 0; rc == MN_OK && i < n; i++) {
        if (mn__idmap_get(&ix->map, ids[i]) != MN__INDEX_NONE) {
            rc = mn__err(MN_CONFLICT, "index add: id %lld is already in the index", (long long)ids[i]);
            break;
        }
        if (normalise(vecs + i * d, d, ix->wscr->qf, "index add") != MN_OK) {
            mn__err_clear();
            continue; /* no direction: skipped, as mn__index_add refuses it */
        }
        int level = ix->p.kind == MN_INDEX_HNSW ? mn__hnsw_random_level(ix) : 0;
        uint32_t s;
        if ((rc = slot_new(ix, ids[i], level, &s)) == MN_OK)
            slot_store(ix, s, ix->wscr->qf);
    }
    if (ix->p.kind == MN_INDEX_HNSW && ix->n > first) {
        mn_status lrc = mn__hnsw_insert_batch(ix, (uint32_t)first, (uint32_t)ix->n, threads);
        if (rc == MN_OK)
            rc = lrc;
    }
    pthread_rwlock_unlock(&ix->lock);
    return rc;
}

/* A removed vector is erased, not only hidden (docs/erasure.md): its slot stays in the graph as
 * a tombstone that walks pass through, so its row becomes zeros (distance 1 to every query, the
 * walk still reaches its neighbours) and no save or copy of the index can bring it back. */
static void slot_scrub(mn_index *ix, uint32_t s)
{
    if (ix->p.quant == MN_INDEX_INT8) {
        memset(ix->codes + (size_t)s * ix->p.dim, 0, ix->p.dim);
        ix->scales[s] = 0;
    } else {
        memset(ix->vecs + (size_t)s * ix->p.dim, 0, (size_t)ix->p.dim * sizeof(float));
    }
}

mn_status mn__index_remove(mn_index *ix, int64_t id)
{
    if (!check_ix(ix))
        return mn__err(MN_MISUSE, "index: bad handle");
    pthread_rwlock_wrlock(&ix->lock);
    mn_status rc = mn__index_materialize(ix);
    uint32_t s = mn__idmap_get(&ix->map, id);
    if (rc != MN_OK) {
        /* the mapped file is damaged: nothing removed */
    } else if (s == MN__INDEX_NONE) {
        rc = mn__err(MN_NOTFOUND, "index remove: id %lld is not in the index", (long long)id);
    } else {
        mn__idmap_del(&ix->map, id);
        ix->flags[s] |= MN__INDEX_FLAG_DELETED;
        ix->n_deleted++;
        slot_scrub(ix, s);
    }
    pthread_rwlock_unlock(&ix->lock);
    return rc;
}

/* Exchanges the stored data (not locks, kernels, scratch pool) of two indexes. */
static void swap_data(mn_index *a, mn_index *b)
{
    mn_index t = *a;
#define SW(f) (a->f = b->f, b->f = t.f)
    SW(n);
    SW(cap);
    SW(n_deleted);
    SW(ids);
    SW(level);
    SW(flags);
    SW(upoff);
    SW(vecs);
    SW(codes);
    SW(scales);
    SW(links0);
    SW(upper);
    SW(upper_n);
    SW(upper_cap);
    SW(entry);
    SW(max_level);
    SW(rng);
    SW(map);
    SW(wscr);
#undef SW
}

mn_status mn__index_compact(mn_index *ix)
{
    if (!check_ix(ix))
        return mn__err(MN_MISUSE, "index: bad handle");
    pthread_rwlock_wrlock(&ix->lock);
    mn_index *nx = NULL;
    mn_status rc = mn__index_materialize(ix);
    if (rc != MN_OK || ix->n_deleted == 0)
        goto out;
    struct mn_index_params p = ix->p;
    p.capacity = ix->n - ix->n_deleted;
    if ((rc = mn__index_alloc(&p, &nx)) != MN_OK)
        goto out;
    nx->rng = ix->rng;
    size_t d = ix->p.dim;
    for (size_t i = 0; i < ix->n; i++) {
        if (ix->flags[i] & MN__INDEX_FLAG_DELETED)
            continue;
        int level = nx->p.kind == MN_INDEX_HNSW ? mn__hnsw_random_level(nx) : 0;
        uint32_t s;
        if ((rc = slot_new(nx, ix->ids[i], level, &s)) != MN_OK)
            goto out;
        if (ix->p.quant == MN_INDEX_INT8) {
            memcpy(nx->codes + (size_t)s * d, ix->codes + i * d, d);
            nx->scales[s] = ix->scales[i];
        } else {
            memcpy(nx->vecs + (size_t)s * d, ix->vecs + i * d, d * sizeof(float));
        }
        if (nx->p.kind == MN_INDEX_HNSW && (rc = mn__hnsw_insert(nx, s)) != MN_OK)
            goto out;
    }
    swap_data(ix, nx);
out:
    mn__index_free(nx);
    pthread_rwlock_unlock(&ix->lock);
    return rc;
}

/* ---- search -------------------------------------------------------------------------------- */

static int hit_cmp(const void *pa, const void *pb)
{
    const struct mn_index_hit *a = pa, *b = pb;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Exact scan into scr->res (max-heap of at most `pool` entries): over the candidate ids when
 * given, otherwise over every live slot. */
static mn_status exact_scan(mn_index *ix, struct mn__scratch *scr, const struct mn__qv *q,
                            const struct mn_index_search_opts *o, size_t pool, size_t *n_res,
                            size_t *visited)
{
    mn_status rc = mn__cand_grow(&scr->res, &scr->rcap, pool + 1);
    if (rc != MN_OK)
        return rc;
    mn_index_accept_fn accept = o ? o->accept : NULL;
    void *user = o ? o->user : NULL;
    struct mn__cand *h = scr->res;
    size_t nh = 0, nv = 0;
    if (o && o->candidates) {
        if (++scr->tag == 0) {
            memset(scr->visited, 0, scr->vcap * sizeof *scr->visited);
            scr->tag = 1;
        }
        for (size_t i = 0; i < o->n_candidates; i++) {
            uint32_t s = mn__idmap_get(&ix->map, o->candidates[i]);
            if (s == MN__INDEX_NONE || scr->visited[s] == scr->tag)
                continue;
            scr->visited[s] = scr->tag;
            if (accept && !accept(user, ix->ids[s]))
                continue;
            struct mn__cand c = {mn__qdist(ix, q, s), s};
            nv++;
            if (nh < pool) {
                mn__maxheap_push(h, &nh, c);
            } else if (c.d < h[0].d) {
                mn__maxheap_pop(h, &nh);
                mn__maxheap_push(h, &nh, c);
            }
        }
    } else {
        for (size_t i = 0; i < ix->n; i++) {
            if (ix->flags[i] & MN__INDEX_FLAG_DELETED)
                continue;
            if (accept && !accept(user, ix->ids[i]))
                continue;
            uint32_t s = (uint32_t)i;
            struct mn__cand c = {mn__qdist(ix, q, s), s};
            nv++;
            if (nh < pool) {
                mn__maxheap_push(h, &nh, c);
            } else if (c.d < h[0].d) {
                mn__maxheap_pop(h, &nh);
                mn__maxheap_push(h, &nh, c);
            }
        }
    }
    *n_res = nh;
    *visited += nv;
    return MN_OK;
}

mn_status mn__index_search(mn_index *ix, const float *query, size_t k,
                          const struct mn_index_search_opts *opts, struct mn_index_hit *hits,
                          size_t *n_hits)
{
    if (n_hits)
        *n_hits = 0;
    if (!check_ix(ix))
        return mn__err(MN_MISUSE, "index: bad handle");
    if (!query || !n_hits || (k > 0 && !hits))
        return mn__err(MN_INVALID, "index search: query, hits and n_hits must not be NULL");
    if (k > MN_INDEX_MAX_K)
        return mn__err(MN_INVALID, "index search: k %zu is over %u", k, MN_INDEX_MAX_K);
    if (opts && opts->candidates == NULL && opts->n_candidates > 0)
        return mn__err(MN_INVALID, "index search: n_candidates without candidates");
    struct mn_index_search_info info = {MN_INDEX_PATH_EXACT, 0, 0};
    if (k == 0) {
        if (opts && opts->info)
            *opts->info = info;
        return MN_OK;
    }
    pthread_rwlock_rdlock(&ix->lock);
    struct mn__scratch *scr = NULL;
    mn_status rc = scratch_get(ix, &scr);
    if (rc != MN_OK)
        goto out;
    size_t d = ix->p.dim;
    if ((rc = normalise(query, d, scr->qf, "index search: query")) != MN_OK)
        goto out;
    struct mn__qv q = {scr->qf, NULL, 0};
    if (ix->p.quant == MN_INDEX_INT8) {
        mn__index_quantize(scr->qf, d, scr->qc, &q.s);
        q.c = scr->qc;
    }
    size_t ef = opts && opts->ef ? opts->ef : ix->p.ef_search;
    if (ef < k)
        ef = k;
    size_t live = ix->n - ix->n_deleted;
    enum mn_index_path want = opts ? opts->path : MN_INDEX_PATH_AUTO;
    mn_index_accept_fn accept = opts ? opts->accept : NULL;
    int rerank = ix->p.quant == MN_INDEX_INT8 && ix->fetch != NULL;
    size_t pool = rerank ? ef : k; /* how many exact-scan results to keep */
    size_t nres = 0;

    size_t thr = ix->p.exact_threshold ? ix->p.exact_threshold : (live / 20 > 1000 ? live / 20 : 1000);
    int exact;
    if (opts && opts->candidates)
        exact = 1;
    else if (ix->p.kind == MN_INDEX_FLAT || ix->entry == MN__INDEX_NONE || want == MN_INDEX_PATH_EXACT)
        exact = 1;
    else if (want == MN_INDEX_PATH_GRAPH)
        exact = 0;
    else if (live <= 2 * ef)
        exact = 1;
    else if (accept && opts->n_accept_hint > 0)
        exact = opts->n_accept_hint <= thr;
    else
        exact = 0;

    if (exact) {
        rc = exact_scan(ix, scr, &q, opts, pool, &nres, &info.visited);
    } else {
        info.path = MN_INDEX_PATH_GRAPH;
        struct mn__filter f = {accept, opts ? opts->user : NULL, 0, 0};
        size_t budget = 0;
        if (want != MN_INDEX_PATH_GRAPH && (accept || ix->n_deleted))
            budget = ix->n / 4 > 4 * ef ? ix->n / 4 : 4 * ef;
        if (want != MN_INDEX_PATH_GRAPH && accept && opts->n_accept_hint == 0) {
            /* no hint: estimate the filter's selectivity on the first nodes of the walk */
            f.probe = 16 * ef > 1024 ? 16 * ef : 1024;
            f.min_frac = (double)thr / (double)live;
        }
        int aborted = 0;
        size_t nvis = 0;
        rc = mn__hnsw_search(ix, scr, &q, ef, &f, budget, &nres, &nvis, &aborted);
        info.visited = nvis;
        /* the walk found fewer than k though more may exist (it did not see every slot) */
        int short_ = nres < k && nvis < ix->n && (accept || nres < live);
        if (rc == MN_OK && (aborted || short_)) {
            info.fell_back = 1;
            info.path = MN_INDEX_PATH_EXACT;
            rc = exact_scan(ix, scr, &q, opts, pool, &nres, &info.visited);
        }
    }
    if (rc != MN_OK)
        goto out;

    /* scores; re-rank int8 results on full precision */
    size_t m = 0;
    float *fb = scr->qf + d;
    for (size_t i = 0; i < nres; i++) {
        uint32_t s = scr->res[i].slot;
        float score = -scr->res[i].d;
        if (rerank && ix->fetch(ix->fetch_user, ix->ids[s], fb) == 0 &&
            normalise(fb, d, fb, "index fetch") == MN_OK)
            score = ix->kern->dot_f32(scr->qf, fb, d);
        if (i < k) {
            hits[m].id = ix->ids[s];
            hits[m].score = score;
            m++;
        } else {
            /* keep the k best seen so far in hits: replace the worst */
            size_t w = 0;
            for (size_t j = 1; j < k; j++)
                if (hit_cmp(&hits[j], &hits[w]) > 0)
                    w = j;
            struct mn_index_hit hnew = {ix->ids[s], score};
            if (hit_cmp(&hnew, &hits[w]) < 0)
                hits[w] = hnew;
        }
    }
    qsort(hits, m, sizeof *hits, hit_cmp);
    *n_hits = m;
    if (opts && opts->info)
        *opts->info = info;
out:
    if (scr)
        scratch_put(ix, scr);
    pthread_rwlock_unlock(&ix->lock);
    return rc;
}

/* ---- settings and counters ----------------------------------------------------------------- */

mn_status mn__index_set_ef_search(mn_index *ix, uint32_t ef)
{
    if (!check_ix(ix))
        return mn__err(MN_MISUSE, "index: bad handle");
    if (ef < 1 || ef > 65536)
        return mn__err(MN_INVALID, "index: ef_search %u is outside 1..65536", ef);
    pthread_rwlock_wrlock(&ix->lock);
    ix->p.ef_search = ef;
    pthread_rwlock_unlock(&ix->lock);
    return MN_OK;
}

void mn__index_set_source(mn_index *ix, mn_index_fetch_fn fetch, void *user)
{
    if (!check_ix(ix))
        return;
    pthread_rwlock_wrlock(&ix->lock);
    ix->fetch = fetch;
    ix->fetch_user = user;
    pthread_rwlock_unlock(&ix->lock);
}

size_t mn__index_count(mn_index *ix)
{
    if (!check_ix(ix))
        return 0;
    pthread_rwlock_rdlock(&ix->lock);
    size_t n = ix->n - ix->n_deleted;
    pthread_rwlock_unlock(&ix->lock);
    return n;
}

int mn__index_contains(mn_index *ix, int64_t id)
{
    if (!check_ix(ix))
        return 0;
    pthread_rwlock_rdlock(&ix->lock);
    int r = mn__idmap_get(&ix->map, id) != MN__INDEX_NONE;
    pthread_rwlock_unlock(&ix->lock);
    return r;
}

static size_t scratch_bytes(const struct mn__scratch *s, size_t m0)
{
    return sizeof *s + s->vcap * sizeof *s->visited + (s->ccap + s->rcap + s->selcap) * sizeof(struct mn__cand) +
           (s->batch ? (m0 + 1) * sizeof(uint32_t) : 0) + s->qcap * (2 * sizeof(float) + 1);
}

static size_t memory_locked(mn_index *ix)
{
    size_t per = sizeof(int64_t) + 2 + ix->row_bytes;
    if (ix->p.quant == MN_INDEX_INT8)
        per += sizeof(float);
    if (ix->p.kind == MN_INDEX_HNSW)
        per += sizeof(uint32_t) + ix->stride0 * sizeof(uint32_t);
    size_t b = sizeof *ix + ix->cap * per + ix->upper_cap * sizeof(uint32_t) +
               ix->map.cap * (sizeof(int64_t) + sizeof(uint32_t));
    b += scratch_bytes(ix->wscr, ix->M0);
    pthread_mutex_lock(&ix->pool_lock);
    for (const struct mn__scratch *s = ix->pool; s; s = s->next)
        b += scratch_bytes(s, ix->M0);
    pthread_mutex_unlock(&ix->pool_lock);
    return b;
}

size_t mn__index_memory_bytes(mn_index *ix)
{
    if (!check_ix(ix))
        return 0;
    pthread_rwlock_rdlock(&ix->lock);
    size_t b = memory_locked(ix);
    pthread_rwlock_unlock(&ix->lock);
    return b;
}

void mn__index_stats(mn_index *ix, struct mn_index_stats *out)
{
    if (!out)
        return;
    memset(out, 0, sizeof *out);
    if (!check_ix(ix))
        return;
    pthread_rwlock_rdlock(&ix->lock);
    out->live = ix->n - ix->n_deleted;
    out->deleted = ix->n_deleted;
    out->memory_bytes = memory_locked(ix);
    out->max_level = ix->max_level;
    out->kernel = ix->kern->name;
    pthread_rwlock_unlock(&ix->lock);
}

void mn__index_params_get(mn_index *ix, struct mn_index_params *out)
{
    if (!out || !check_ix(ix))
        return;
    pthread_rwlock_rdlock(&ix->lock);
    *out = ix->p;
    pthread_rwlock_unlock(&ix->lock);
}
