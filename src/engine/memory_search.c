/*
 * memory_search.c — reading long-term memories (docs/memory.md): a store query collected into a
 * list, and search over memories: keyword through the store's FTS5 / tsvector index, semantic as
 * an exact cosine scan of the stored vectors of the memories that pass the filters, hybrid by
 * reciprocal rank fusion. Used by mn_memory_* and by memories in a context (memories.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "embed/embed.h"
#include "memory/fact.h"
#include "search/search.h"
#include "store/store_memory.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

void mn__memories_list_free(mn_memories *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->count; i++)
        mn_fact_release(&list->items[i]);
    free(list->items);
    free(list);
}

/* ---- collecting rows ------------------------------------------------------------------------- */

struct collect {
    mn_memories *list;
    size_t cap;
    mn_status rc;
};

static int collect_row(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)vec;
    (void)dim;
    struct collect *c = user;
    if (c->list->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        mn_memory *items = realloc(c->list->items, cap * sizeof *items);
        if (!items) {
            c->rc = mn__nomem();
            return 1;
        }
        c->list->items = items;
        c->cap = cap;
    }
    mn_memory *dst = &c->list->items[c->list->count];
    if ((c->rc = mn_fact_copy(dst, m)))
        return 1;
    dst->score = bm25;
    c->list->count++;
    return 0;
}

mn_status mn__memory_query_run(mn_db *db, const mn_store_memory_query *sq, mn_memories **out)
{
    *out = calloc(1, sizeof **out);
    if (*out)
        (*out)->item_size = sizeof(mn_memory);
    if (!*out)
        return mn__nomem();
    struct collect c = {*out, 0, MN_OK};
    mn_status rc = db->store->ops->memory->query(db->store, sq, collect_row, &c);
    if (!rc)
        rc = c.rc;
    if (rc) {
        mn__memories_list_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Semantic: an exact scan of the vectors of the memories that pass the filters. */
struct scan {
    const float *q;
    uint32_t dim;
    mn_memories *best; /* sorted best first, at most k */
    size_t k;
    mn_status rc;
};

static double cosine(const float *a, const float *b, uint32_t dim)
{
    double dot = 0, na = 0, nb = 0;
    for (uint32_t i = 0; i < dim; i++) {
        dot += (double)a[i] * b[i];
        na += (double)a[i] * a[i];
        nb += (double)b[i] * b[i];
    }
    return na > 0 && nb > 0 ? dot / (sqrt(na) * sqrt(nb)) : 0;
}

static int scan_row(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25;
    struct scan *s = user;
    if (!vec || dim != s->dim)
        return 0; /* another embedder's vector: not comparable */
    double score = cosine(s->q, vec, dim);
    mn_memories *b = s->best;
    if (b->count == s->k && score <= b->items[b->count - 1].score)
        return 0;
    size_t pos = b->count < s->k ? b->count : s->k - 1;
    if (b->count == s->k)
        mn_fact_release(&b->items[pos]);
    else
        b->count++;
    while (pos > 0 && b->items[pos - 1].score < score) {
        b->items[pos] = b->items[pos - 1];
        pos--;
    }
    if ((s->rc = mn_fact_copy(&b->items[pos], m))) {
        memmove(&b->items[pos], &b->items[pos + 1], (b->count - pos - 1) * sizeof *b->items);
        b->count--;
        return 1;
    }
    b->items[pos].score = score;
    return 0;
}

static mn_status semantic(mn_db *db, const char *query, const mn_memory_query *q, size_t k, mn_memories **out)
{
    *out = NULL;
    float *qv = NULL;
    uint32_t dim = 0;
    mn_embedder *e = NULL;
    mn_status rc = mn__search_embedder(db, &e);
    if (!rc)
        rc = mn_embed_texts_alloc(e, &query, 1, &qv, &dim);
    if (rc)
        return rc;
    mn_memories *best = calloc(1, sizeof *best);
    if (best)
        best->item_size = sizeof(mn_memory);
    if (best)
        best->items = calloc(k, sizeof *best->items);
    if (!best || !best->items) {
        free(qv);
        mn__memories_list_free(best);
        return mn__nomem();
    }
    struct scan s = {qv, dim, best, k, MN_OK};
    mn_store_memory_query sq = {q, NULL, 0, NULL, 1, mn_clock_now_ms(), 0, 0};
    rc = db->store->ops->memory->query(db->store, &sq, scan_row, &s);
    if (!rc)
        rc = s.rc;
    free(qv);
    if (rc)
        mn__memories_list_free(best);
    else
        *out = best;
    return rc;
}

static mn_status keyword(mn_db *db, const char *query, const mn_memory_query *q, size_t k, mn_memories **out)
{
    *out = NULL;
    struct mn_buf match = MN_BUF_INIT;
    size_t terms = 0;
    mn_status rc = mn_fts_query_content(query, &match, &terms);
    if (!rc && terms == 0) {
        *out = calloc(1, sizeof **out);
        if (*out)
            (*out)->item_size = sizeof(mn_memory);
        rc = *out ? MN_OK : mn__nomem();
    } else if (!rc) {
        mn_store_memory_query sq = {q, NULL, 0, match.data, 0, mn_clock_now_ms(), k, 0};
        rc = mn__memory_query_run(db, &sq, out);
    }
    mn_buf_release(&match);
    return rc;
}

/* Where (id, version) of m is in list, or -1. */
static long find(const mn_memories *list, const mn_memory *m)
{
    for (size_t i = 0; i < list->count; i++)
        if (list->items[i].version == m->version && strcmp(list->items[i].id, m->id) == 0)
            return (long)i;
    return -1;
}

/* Reciprocal rank fusion of the two lists; items are moved out of a and b. */
static mn_status fuse(mn_memories *a, mn_memories *b, size_t k, double rrf_k, mn_memories **out)
{
    struct mn_ranked *ra = calloc(a->count + 1, sizeof *ra), *rb = calloc(b->count + 1, sizeof *rb), *fused = NULL;
    size_t n = 0;
    mn_status rc = ra && rb ? MN_OK : mn__nomem();
    /* ids: position in a, or a->count + position in b for what only b has */
    for (size_t i = 0; !rc && i < a->count; i++)
        ra[i] = (struct mn_ranked){(int64_t)i, a->items[i].score};
    for (size_t i = 0; !rc && i < b->count; i++) {
        long in_a = find(a, &b->items[i]);
        rb[i] = (struct mn_ranked){in_a >= 0 ? in_a : (int64_t)(a->count + i), b->items[i].score};
    }
    if (!rc)
        rc = mn_rrf(ra, a->count, rb, b->count, rrf_k, &fused, &n);
    if (!rc) {
        *out = calloc(1, sizeof **out);
        if (*out)
            (*out)->item_size = sizeof(mn_memory);
        if (*out)
            (*out)->items = calloc(n < k ? n + 1 : k, sizeof *(*out)->items);
        if (!*out || !(*out)->items)
            rc = mn__nomem();
    }
    for (size_t i = 0; !rc && i < n && i < k; i++) {
        size_t id = (size_t)fused[i].id;
        mn_memory *src = id < a->count ? &a->items[id] : &b->items[id - a->count];
        (*out)->items[(*out)->count] = *src;
        (*out)->items[(*out)->count++].score = fused[i].score;
        memset(src, 0, sizeof *src);
    }
    if (rc && *out) {
        mn__memories_list_free(*out);
        *out = NULL;
    }
    free(ra);
    free(rb);
    free(fused);
    return rc;
}

mn_status mn__memory_search_run(mn_db *db, const char *query, mn_search_mode mode, const mn_memory_query *q, size_t k,
                                mn_memories **out)
{
    *out = NULL;
    if (mode == MN_SEARCH_AUTO)
        mode = mn__embedder_configured(db) ? MN_SEARCH_HYBRID : MN_SEARCH_KEYWORD;
    if (mode == MN_SEARCH_KEYWORD)
        return keyword(db, query, q, k, out);
    if (mode == MN_SEARCH_SEMANTIC)
        return semantic(db, query, q, k, out);
    mn_memories *a = NULL, *b = NULL;
    mn_status rc = keyword(db, query, q, k, &a);
    if (!rc)
        rc = semantic(db, query, q, k, &b);
    if (!rc)
        rc = fuse(a, b, k, (double)db->settings.search_rrf_k, out);
    mn__memories_list_free(a);
    mn__memories_list_free(b);
    return rc;
}
