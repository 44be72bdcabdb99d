/*
 * hnsw.c — the HNSW graph (Malkov & Yashunin, 2016/2018): random levels, greedy descent through
 * the upper levels, the ef-bounded best-first walk with an optional filter, neighbour selection
 * by the diversity heuristic, and reverse links with re-pruning. The algorithm follows hnswlib's
 * (same heuristic, same stopping rule) so that recall at a given ef is comparable.
 */
#include "index/index_int.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/banned.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int mn__hnsw_random_level(mn_index *ix)
{
    double u = (double)(rng_next(&ix->rng) >> 11) * (1.0 / 9007199254740992.0);
    if (u <= 0)
        u = 1e-300;
    double l = -log(u) * ix->level_mult;
    return l >= MN__INDEX_MAX_LEVEL ? MN__INDEX_MAX_LEVEL : (int)l;
}

static inline void prefetch_row(const mn_index *ix, uint32_t s)
{
    const char *p = ix->p.quant == MN_INDEX_INT8 ? (const char *)(ix->codes + (size_t)s * ix->p.dim)
                                                  : (const char *)(ix->vecs + (size_t)s * ix->p.dim);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
}

/* Greedy descent on one upper level: moves (*cur, *dcur) to a local minimum. Every list and
 * neighbour is checked before it is followed: a mapped index (mn__index_map) was opened without
 * checking its links, and a damaged one must cost results, never an out-of-bounds read. */
static void greedy(const mn_index *ix, const struct mn__qv *q, uint32_t *cur, float *dcur, int level)
{
    for (int changed = 1; changed;) {
        changed = 0;
        if ((uint64_t)ix->upoff[*cur] + (uint64_t)level * ix->strideU > ix->upper_n)
            return;
        const uint32_t *l = mn__links(ix, *cur, level);
        uint32_t cnt = l[0] <= ix->p.M ? l[0] : ix->p.M;
        for (uint32_t j = 1; j <= cnt; j++) {
            if (l[j] >= ix->n || ix->level[l[j]] < level)
                continue;
            float d = mn__qdist(ix, q, l[j]);
            if (d < *dcur) {
                *dcur = d;
                *cur = l[j];
                changed = 1;
            }
        }
    }
}

static void new_tag(struct mn__scratch *s)
{
    if (++s->tag == 0) {
        memset(s->visited, 0, s->vcap * sizeof *s->visited);
        s->tag = 1;
    }
}

/* Best-first walk of `level` from ep, keeping the ef nearest accepted nodes in scr->res (a
 * max-heap). f == NULL (building): every node is accepted, tombstones included, so that the
 * graph stays connected through them. Otherwise tombstones and rejected nodes are followed but
 * not kept. */
static mn_status walk(const mn_index *ix, struct mn__scratch *scr, const struct mn__qv *q, uint32_t ep,
                      float dep, int level, size_t ef, const struct mn__filter *f, size_t budget,
                      size_t *n_res, size_t *visited, int *aborted)
{
    mn_status rc = mn__cand_grow(&scr->res, &scr->rcap, ef + 1);
    if (rc != MN_OK)
        return rc;
    new_tag(scr);
    uint16_t *vis = scr->visited;
    uint16_t tag = scr->tag;
    struct mn__cand *res = scr->res;
    size_t nres = 0, ncand = 0, nvis = 1, nacc = 0;
    size_t probe = f ? f->probe : 0;
    mn_index_accept_fn accept = f ? f->accept : NULL;
    void *user = f ? f->user : NULL;
#define OK_SLOT(s)                                                                                \
    (!f || (!(ix->flags[s] & MN__INDEX_FLAG_DELETED) && (!accept || accept(user, ix->ids[s]))))

    vis[ep] = tag;
    if ((rc = mn__cand_grow(&scr->cand, &scr->ccap, 64)) != MN_OK)
        return rc;
    struct mn__cand c0 = {dep, ep};
    mn__minheap_push(scr->cand, &ncand, c0);
    if (OK_SLOT(ep))
        mn__maxheap_push(res, &nres, c0);
    float lower = nres ? res[0].d : INFINITY;

    while (ncand > 0) {
        struct mn__cand c = scr->cand[0];
        if (c.d > lower && nres >= ef)
            break;
        mn__minheap_pop(scr->cand, &ncand);
        const uint32_t *l = mn__links(ix, c.slot, level);
        uint32_t maxc = level ? ix->p.M : ix->M0;
        uint32_t cnt = l[0] <= maxc ? l[0] : maxc; /* checked as greedy() does */
        uint32_t *batch = scr->batch;
        size_t nb = 0;
        for (uint32_t j = 1; j <= cnt; j++) {
            uint32_t s = l[j];
            if (s >= ix->n || vis[s] == tag)
                continue;
            vis[s] = tag;
            batch[nb++] = s;
            prefetch_row(ix, s);
        }
        if (ncand + nb > scr->ccap && (rc = mn__cand_grow(&scr->cand, &scr->ccap, ncand + nb)) != MN_OK)
            return rc;
        for (size_t j = 0; j < nb; j++) {
            uint32_t s = batch[j];
            float d = mn__qdist(ix, q, s);
            if (nres < ef || d < lower) {
                struct mn__cand cn = {d, s};
                mn__minheap_push(scr->cand, &ncand, cn);
                if (OK_SLOT(s)) {
                    nacc++;
                    mn__maxheap_push(res, &nres, cn);
                    if (nres > ef)
                        mn__maxheap_pop(res, &nres);
                    lower = res[0].d;
                }
            }
        }
        nvis += nb;
        if (budget && nvis > budget) {
            *aborted = 1;
            break;
        }
        if (probe && nvis >= probe) {
            if ((double)nacc < f->min_frac * (double)nvis) {
                *aborted = 1;
                break;
            }
            probe = 0; /* judged once */
        }
    }
#undef OK_SLOT
    *n_res = nres;
    *visited += nvis;
    return MN_OK;
}

mn_status mn__hnsw_search(mn_index *ix, struct mn__scratch *scr, const struct mn__qv *q, size_t ef,
                          const struct mn__filter *f, size_t budget, size_t *n_res, size_t *visited,
                          int *aborted)
{
    *n_res = 0;
    *aborted = 0;
    if (ix->entry == MN__INDEX_NONE)
        return MN_OK;
    uint32_t cur = ix->entry;
    float dcur = mn__qdist(ix, q, cur);
    for (int l = ix->max_level; l > 0; l--)
        greedy(ix, q, &cur, &dcur, l);
    return walk(ix, scr, q, cur, dcur, 0, ef, f, budget, n_res, visited, aborted);
}

static int cand_cmp(const void *pa, const void *pb)
{
    const struct mn__cand *a = pa, *b = pb;
    if (a->d != b->d)
        return a->d < b->d ? -1 : 1;
    return (a->slot > b->slot) - (a->slot < b->slot);
}

static void cand_sort(struct mn__cand *c, size_t n)
{
    if (n > 48) {
        qsort(c, n, sizeof *c, cand_cmp);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        struct mn__cand x = c[i];
        size_t j = i;
        while (j > 0 && cand_cmp(&c[j - 1], &x) > 0) {
            c[j] = c[j - 1];
            j--;
        }
        c[j] = x;
    }
}

/* The diversity heuristic on c[0..n) sorted nearest first: keeps a candidate only when it is
 * nearer to the base than to every candidate kept before it. Returns how many were kept (at the
 * front of c), at most m. */
static size_t select_neighbours(const mn_index *ix, struct mn__cand *c, size_t n, size_t m)
{
    if (n < m)
        return n;
    size_t kept = 0;
    for (size_t i = 0; i < n && kept < m; i++) {
        struct mn__qv qi = mn__slot_qv(ix, c[i].slot);
        int good = 1;
        for (size_t j = 0; j < kept; j++) {
            if (mn__qdist(ix, &qi, c[j].slot) < c[i].d) {
                good = 0;
                break;
            }
        }
        if (good)
            c[kept++] = c[i];
    }
    return kept;
}

/* Adds s to nb's list on `level`; a full list is re-pruned with the heuristic, in c (room for
 * max(ef_construction, M0) + 2 candidates). */
static void link_back(mn_index *ix, struct mn__cand *c, uint32_t nb, uint32_t s, float d, int level)
{
    uint32_t *l = mn__links(ix, nb, level);
    uint32_t maxc = level ? ix->p.M : ix->M0;
    uint32_t cnt = l[0];
    if (cnt < maxc) {
        l[1 + cnt] = s;
        l[0] = cnt + 1;
        return;
    }
    struct mn__qv qn = mn__slot_qv(ix, nb);
    for (uint32_t j = 0; j < cnt; j++) {
        c[j].slot = l[1 + j];
        c[j].d = mn__qdist(ix, &qn, l[1 + j]);
    }
    c[cnt].slot = s;
    c[cnt].d = d;
    cand_sort(c, cnt + 1);
    size_t kept = select_neighbours(ix, c, cnt + 1, maxc);
    for (size_t j = 0; j < kept; j++)
        l[1 + j] = c[j].slot;
    for (size_t j = kept; j < maxc; j++)
        l[1 + j] = 0; /* unused words are 0 in the file */
    l[0] = (uint32_t)kept;
}

/* Cannot fail: the writer's scratch was sized by mn__index_reserve (candidates for every slot). */
mn_status mn__hnsw_insert(mn_index *ix, uint32_t s)
{
    int L = ix->level[s];
    if (ix->entry == MN__INDEX_NONE) {
        ix->entry = s;
        ix->max_level = L;
        return MN_OK;
    }
    struct mn__scratch *scr = ix->wscr;
    struct mn__qv q = mn__slot_qv(ix, s);
    uint32_t cur = ix->entry;
    float dcur = mn__qdist(ix, &q, cur);
    for (int l = ix->max_level; l > L; l--)
        greedy(ix, &q, &cur, &dcur, l);
    for (int l = L < ix->max_level ? L : ix->max_level; l >= 0; l--) {
        size_t nres = 0, nvis = 0;
        int aborted = 0;
        mn_status rc = walk(ix, scr, &q, cur, dcur, l, ix->p.ef_construction, NULL, 0, &nres, &nvis, &aborted);
        if (rc != MN_OK)
            return rc;
        struct mn__cand *c = scr->sel;
        size_t n = 0;
        for (size_t i = 0; i < nres; i++)
            if (scr->res[i].slot != s)
                c[n++] = scr->res[i];
        cand_sort(c, n);
        if (n == 0)
            continue;
        cur = c[0].slot; /* nearest: the start on the next level down */
        dcur = c[0].d;
        size_t kept = select_neighbours(ix, c, n, ix->p.M);
        uint32_t *own = mn__links(ix, s, l);
        /* copy before link_back, which reuses scr->sel */
        for (size_t j = 0; j < kept; j++)
            own[1 + j] = c[j].slot;
        own[0] = (uint32_t)kept;
        for (size_t j = 0; j < kept; j++) {
            uint32_t nb = own[1 + j];
            link_back(ix, scr->sel, nb, s, mn__qdist(ix, &q, nb), l);
        }
    }
    if (L > ix->max_level) {
        ix->entry = s;
        ix->max_level = L;
    }
    return MN_OK;
}

/* ---- batch insertion on several threads ----------------------------------------------------
 * Slots are linked in chunks. Phase 1, in parallel: each slot of the chunk finds its neighbours
 * in the graph as it was before the chunk (frozen: nobody writes it meanwhile) plus, by exact
 * distance, the chunk's earlier slots; it writes only its own lists. Phase 2: the reverse links,
 * in slot order for each target, on every thread: a target's list is written by the thread it
 * belongs to (target % threads), which makes the calls in the order one thread would. A chunk
 * slot's own lists are read as phase 1 left them (a snapshot): no earlier slot of the chunk can
 * link to a later one, so one thread would read them unchanged too. Then the entry point. Chunk
 * boundaries depend only on the slot numbers, so the graph is the same for any number of
 * threads. */

#define CHUNK_MAX 256u
#define THREADS_MAX 64u

struct batch {
    mn_index *ix;
    uint32_t a, b; /* the chunk: slots [a, b) */
    uint32_t entry;
    int max_level;
    unsigned threads; /* the caller and threads - 1 workers */
    struct mn__scratch *scr[THREADS_MAX];
    mn_status rc[THREADS_MAX];
    pthread_mutex_t mu;
    pthread_cond_t go, idle;
    uint64_t gen;     /* bumped for each phase of each chunk */
    int phase;        /* 1 or 2 */
    unsigned pending; /* workers still on the current phase */
    int quit;
    uint32_t *snap;                 /* phase 2: the chunk's own lists after phase 1 */
    size_t snapcap;                 /* uint32s */
    size_t snapoff[CHUNK_MAX];      /* slot a + i's lists start at snap + snapoff[i] */
};

static mn_status link_frozen(struct batch *bt, struct mn__scratch *scr, uint32_t s)
{
    mn_index *ix = bt->ix;
    int L = ix->level[s];
    struct mn__qv q = mn__slot_qv(ix, s);
    uint32_t cur = bt->entry;
    float dcur = 0;
    if (cur != MN__INDEX_NONE) {
        dcur = mn__qdist(ix, &q, cur);
        for (int l = bt->max_level; l > L; l--)
            greedy(ix, &q, &cur, &dcur, l);
    }
    for (int l = L; l >= 0; l--) {
        struct mn__cand *c = scr->sel;
        size_t n = 0;
        if (cur != MN__INDEX_NONE && l <= bt->max_level) {
            size_t nres = 0, nvis = 0;
            int aborted = 0;
            mn_status rc = walk(ix, scr, &q, cur, dcur, l, ix->p.ef_construction, NULL, 0, &nres, &nvis, &aborted);
            if (rc != MN_OK)
                return rc;
            for (size_t i = 0; i < nres; i++) {
                c[n++] = scr->res[i];
                /* the nearest frozen node starts the next level down */
                if (scr->res[i].d < dcur || (scr->res[i].d == dcur && scr->res[i].slot < cur)) {
                    dcur = scr->res[i].d;
                    cur = scr->res[i].slot;
                }
            }
        }
        for (uint32_t t = bt->a; t < s; t++)
            if (ix->level[t] >= l) {
                struct mn__cand ct = {mn__qdist(ix, &q, t), t};
                c[n++] = ct;
            }
        uint32_t *own = mn__links(ix, s, l);
        if (n == 0) {
            own[0] = 0;
            continue;
        }
        cand_sort(c, n);
        size_t kept = select_neighbours(ix, c, n, ix->p.M);
        for (size_t j = 0; j < kept; j++)
            own[1 + j] = c[j].slot;
        own[0] = (uint32_t)kept;
    }
    return MN_OK;
}

static void phase1(struct batch *bt, unsigned tid)
{
    for (uint32_t s = bt->a + tid; s < bt->b && bt->rc[tid] == MN_OK; s += bt->threads)
        bt->rc[tid] = link_frozen(bt, bt->scr[tid], s);
}

/* The chunk's own lists as phase 1 wrote them, M + 1 words a level (phase 1 keeps at most M). */
static mn_status snapshot(struct batch *bt)
{
    mn_index *ix = bt->ix;
    size_t per = (size_t)ix->p.M + 1, n = 0;
    for (uint32_t s = bt->a; s < bt->b; s++) {
        bt->snapoff[s - bt->a] = n;
        n += (size_t)(ix->level[s] + 1) * per;
    }
    if (n > bt->snapcap) {
        uint32_t *p = realloc(bt->snap, n * sizeof *p);
        if (!p)
            return mn__nomem();
        bt->snap = p;
        bt->snapcap = n;
    }
    for (uint32_t s = bt->a; s < bt->b; s++)
        for (int l = 0; l <= ix->level[s]; l++) {
            const uint32_t *own = mn__links(ix, s, l);
            memcpy(bt->snap + bt->snapoff[s - bt->a] + (size_t)l * per, own, (own[0] + 1) * sizeof *own);
        }
    return MN_OK;
}

static void phase2(struct batch *bt, unsigned tid)
{
    mn_index *ix = bt->ix;
    size_t per = (size_t)ix->p.M + 1;
    for (uint32_t s = bt->a; s < bt->b; s++) {
        struct mn__qv q = mn__slot_qv(ix, s);
        for (int l = ix->level[s]; l >= 0; l--) {
            const uint32_t *own = bt->snap + bt->snapoff[s - bt->a] + (size_t)l * per;
            for (uint32_t j = 0; j < own[0]; j++) {
                uint32_t nb = own[1 + j];
                if (nb % bt->threads == tid)
                    link_back(ix, bt->scr[tid]->sel, nb, s, mn__qdist(ix, &q, nb), l);
            }
        }
    }
}

struct worker_arg {
    struct batch *bt;
    unsigned tid;
};

static void *worker_main(void *arg)
{
    struct worker_arg *w = arg;
    struct batch *bt = w->bt;
    uint64_t seen = 0;
    pthread_mutex_lock(&bt->mu);
    for (;;) {
        while (bt->gen == seen && !bt->quit)
            pthread_cond_wait(&bt->go, &bt->mu);
        if (bt->quit)
            break;
        seen = bt->gen;
        int phase = bt->phase;
        pthread_mutex_unlock(&bt->mu);
        if (phase == 1)
            phase1(bt, w->tid);
        else
            phase2(bt, w->tid);
        pthread_mutex_lock(&bt->mu);
        if (--bt->pending == 0)
            pthread_cond_signal(&bt->idle);
    }
    pthread_mutex_unlock(&bt->mu);
    return NULL;
}

/* Runs a phase of the current chunk on every thread, the caller's included. */
static void run_phase(struct batch *bt, int phase, unsigned workers)
{
    pthread_mutex_lock(&bt->mu);
    bt->phase = phase;
    bt->pending = workers;
    bt->gen++;
    pthread_cond_broadcast(&bt->go);
    pthread_mutex_unlock(&bt->mu);
    if (phase == 1)
        phase1(bt, 0);
    else
        phase2(bt, 0);
    pthread_mutex_lock(&bt->mu);
    while (bt->pending > 0)
        pthread_cond_wait(&bt->idle, &bt->mu);
    pthread_mutex_unlock(&bt->mu);
}

static void new_entry(mn_index *ix, uint32_t a, uint32_t b)
{
    for (uint32_t s = a; s < b; s++)
        if (ix->entry == MN__INDEX_NONE || ix->level[s] > ix->max_level) {
            ix->entry = s;
            ix->max_level = ix->level[s];
        }
}

mn_status mn__hnsw_insert_batch(mn_index *ix, uint32_t first, uint32_t end, unsigned threads)
{
    static struct batch zero;
    struct batch *bt = malloc(sizeof *bt);
    if (!bt)
        return mn__nomem();
    *bt = zero;
    bt->ix = ix;
    threads = threads < 1 ? 1 : threads > THREADS_MAX ? THREADS_MAX : threads;
    mn_status rc = MN_OK;
    size_t selcap = ix->p.ef_construction + CHUNK_MAX + 2;
    for (unsigned t = 0; t < threads && rc == MN_OK; t++) {
        if (!(bt->scr[t] = calloc(1, sizeof *bt->scr[t])))
            rc = mn__nomem();
        else if ((rc = mn__scratch_fit(ix, bt->scr[t])) == MN_OK &&
                 (rc = mn__cand_grow(&bt->scr[t]->res, &bt->scr[t]->rcap, ix->p.ef_construction + 2)) == MN_OK)
            rc = mn__cand_grow(&bt->scr[t]->sel, &bt->scr[t]->selcap, selcap);
    }
    pthread_mutex_init(&bt->mu, NULL);
    pthread_cond_init(&bt->go, NULL);
    pthread_cond_init(&bt->idle, NULL);
    struct worker_arg args[THREADS_MAX];
    pthread_t th[THREADS_MAX];
    unsigned workers = 0;
    for (unsigned t = 1; rc == MN_OK && t < threads; t++) {
        args[t].bt = bt;
        args[t].tid = t;
        if (pthread_create(&th[t], NULL, worker_main, &args[t]) != 0)
            break; /* fewer threads: same graph, just slower */
        workers++;
    }
    bt->threads = workers + 1;
    for (uint32_t a = first; rc == MN_OK && a < end;) {
        uint32_t size = a / 8;
        size = size < 1 ? 1 : size > CHUNK_MAX ? CHUNK_MAX : size;
        uint32_t b = end - a < size ? end : a + size;
        bt->a = a; /* the workers wait: written before the phase's broadcast */
        bt->b = b;
        bt->entry = ix->entry;
        bt->max_level = ix->max_level;
        run_phase(bt, 1, workers);
        for (unsigned t = 0; t < bt->threads; t++)
            if (bt->rc[t] != MN_OK)
                rc = bt->rc[t];
        if (rc == MN_OK && (rc = snapshot(bt)) == MN_OK) {
            run_phase(bt, 2, workers);
            new_entry(ix, a, b);
        }
        a = b;
    }
    pthread_mutex_lock(&bt->mu);
    bt->quit = 1;
    pthread_cond_broadcast(&bt->go);
    pthread_mutex_unlock(&bt->mu);
    for (unsigned t = 1; t <= workers; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&bt->mu);
    pthread_cond_destroy(&bt->go);
    pthread_cond_destroy(&bt->idle);
    for (unsigned t = 0; t < threads; t++)
        mn__scratch_free(bt->scr[t]);
    free(bt->snap);
    free(bt);
    return rc;
}
