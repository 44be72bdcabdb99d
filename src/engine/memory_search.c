/*
 * memory_search.c — reading long-term memories (docs/memory.md): a store query collected into a
 * list; a memory's current version, its history, a list by filters; and search over memories:
 * keyword through the store's FTS5 / tsvector index, semantic through the memory vector index
 * (search/vindex.c; an exact cosine scan until one is built), hybrid by reciprocal rank fusion.
 * Used by mn_memory_*, the writers (memory_write.c), extraction (extract.c, extract_llm.c) and
 * memories in a context (memories.c).
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
#include "util/utf8.h"
#include "util/banned.h"

#define DEFAULT_LIST_LIMIT 100
#define DEFAULT_TOP_K 10
#define MAX_QUERY_BYTES 65536

void mn__memories_list_free(mn_memories *list)
{
    if (!list)
        return;
    for (size_t i = 0; i < list->count; i++)
        mn__fact_release(&list->items[i]);
    free(list->items);
    free(list);
}

void mn__free_memory(mn_memory *m)
{
    if (!m)
        return;
    mn__fact_release(m);
    free(m);
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
    if ((c->rc = mn__fact_copy(dst, m)))
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

/* ---- by id and by filters -------------------------------------------------------------------- */

mn_status mn__memory_check_id(const char *id, char canon[MN_UUID_LEN + 1])
{
    if (!id || !mn__uuid_parse(id, canon))
        return mn__err(MN_INVALID, "id: '%s' is not a memory id (a UUID)", id ? id : "(null)");
    return MN_OK;
}

mn_status mn__memory_current(mn_db *db, const char *canon, mn_memory **out)
{
    *out = NULL;
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.include_closed = 1;
    mn_store_memory_query sq = {&q, canon, 0, NULL, 0, mn__clock_now_ms(), 1, 0, NULL, 0};
    mn_memories *list = NULL;
    mn_status rc = mn__memory_query_run(db, &sq, &list);
    if (rc)
        return rc;
    if (list->count == 0) {
        mn__memories_list_free(list);
        return mn__err(MN_NOTFOUND, "memory %s: no such memory", canon);
    }
    *out = malloc(sizeof **out);
    if (!*out) {
        mn__memories_list_free(list);
        return mn__nomem();
    }
    **out = list->items[0];
    list->count = 0;
    mn__memories_list_free(list);
    return MN_OK;
}

mn_status mn__get_memory(mn_db *db, const char *ns, const char *id, mn_memory **out)
{
    *out = NULL;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__memory_check_id(id, canon);
    if (!rc)
        rc = mn__memory_current(db, canon, out);
    if (rc || !ns || strcmp((*out)->ns, ns) == 0)
        return rc;
    mn__free_memory(*out);
    *out = NULL;
    return mn__err(MN_NOTFOUND, "memory %s: no such memory", canon); /* the words of a missing one */
}

mn_status mn__list_memory_versions(mn_db *db, const char *id, mn_memories **out)
{
    *out = NULL;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__memory_check_id(id, canon);
    if (rc)
        return rc;
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, canon, 1, NULL, 0, mn__clock_now_ms(), 0, 0, NULL, 0};
    if ((rc = mn__memory_query_run(db, &sq, out)))
        return rc;
    if ((*out)->count == 0) {
        mn__memories_list_free(*out);
        *out = NULL;
        return mn__err(MN_NOTFOUND, "memory %s: no such memory", canon);
    }
    return MN_OK;
}

/* Checks q (NULL: none) and points *q at its copy as this version knows it (util/abi.h). */
static mn_status check_query_arg(const mn_memory_query **q, mn_memory_query *loaded)
{
    mn_status rc = *q ? mn__fact_check_query(*q, loaded) : MN_OK;
    if (!rc && *q)
        *q = loaded;
    return rc;
}

mn_status mn__list_memories(mn_db *db, const mn_memory_query *q, mn_memories **out)
{
    *out = NULL;
    mn_memory_query loaded;
    mn_status rc = check_query_arg(&q, &loaded);
    if (rc)
        return rc;
    mn_memory_query dflt = MN_MEMORY_QUERY_INIT;
    if (!q)
        q = &dflt;
    mn_store_memory_query sq = {q, NULL, 0, NULL, 0, mn__clock_now_ms(), q->limit ? q->limit : DEFAULT_LIST_LIMIT,
                                q->offset, NULL, 0};
    return mn__memory_query_run(db, &sq, out);
}

mn_status mn__search_memories(mn_db *db, const char *query, mn_search_mode mode, const mn_memory_query *q,
                            mn_memories **out)
{
    *out = NULL;
    mn_memory_query loaded;
    mn_status rc = check_query_arg(&q, &loaded);
    if (!rc && (!query || !*query))
        rc = mn__err(MN_INVALID, "query: must not be empty");
    if (!rc && strlen(query) > MAX_QUERY_BYTES)
        rc = mn__err(MN_TOOBIG, "query: over the limit of %d bytes", MAX_QUERY_BYTES);
    if (!rc && !mn__utf8_valid(query, strlen(query), NULL))
        rc = mn__err(MN_INVALID, "query: not valid UTF-8");
    if (!rc && (unsigned)mode > MN_SEARCH_HYBRID)
        rc = mn__err(MN_INVALID, "mode: %d is not a search mode", (int)mode);
    if (rc)
        return rc;
    mn_memory_query dflt = MN_MEMORY_QUERY_INIT;
    if (!q)
        q = &dflt;
    return mn__memory_search_run(db, query, mode, q, q->limit ? q->limit : DEFAULT_TOP_K, out);
}

/* ---- search ---------------------------------------------------------------------------------- */

/* The exact scan of the vectors of the memories that pass the filters. */
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
        mn__fact_release(&b->items[pos]);
    else
        b->count++;
    while (pos > 0 && b->items[pos - 1].score < score) {
        b->items[pos] = b->items[pos - 1];
        pos--;
    }
    if ((s->rc = mn__fact_copy(&b->items[pos], m))) {
        memmove(&b->items[pos], &b->items[pos + 1], (b->count - pos - 1) * sizeof *b->items);
        b->count--;
        return 1;
    }
    b->items[pos].score = score;
    return 0;
}

static mn_memories *list_new(size_t cap)
{
    mn_memories *l = calloc(1, sizeof *l);
    if (l)
        l->item_size = sizeof(mn_memory);
    if (l && !(l->items = calloc(cap ? cap : 1, sizeof *l->items))) {
        free(l);
        l = NULL;
    }
    return l;
}

/* The exact scan of every vector of the memories that pass the filters: when there is no index
 * yet (a writer builds it), or it cannot answer (its vectors have another dimension). */
static mn_status exact(mn_db *db, const float *qv, uint32_t dim, const mn_memory_query *q, size_t k,
                       mn_memories **out)
{
    mn_memories *best = list_new(k);
    if (!best)
        return mn__nomem();
    struct scan s = {qv, dim, best, k, MN_OK};
    mn_store_memory_query sq = {q, NULL, 0, NULL, 1, mn__clock_now_ms(), 0, 0, NULL, 0};
    mn_status rc = db->store->ops->memory->query(db->store, &sq, scan_row, &s);
    if (!rc)
        rc = s.rc;
    if (rc)
        mn__memories_list_free(best);
    else
        *out = best;
    return rc;
}

/* The rows of the hits that pass the filters, best first, at most k, with the hits' scores. */
struct by_hit {
    mn_memories *list;
    const struct mn_index_hit *hits;
    size_t k;
    mn_status rc;
};

static int take_hit(void *user, const mn_memory *m, double pos, const float *vec, uint32_t dim)
{
    (void)vec;
    (void)dim;
    struct by_hit *b = user;
    if (b->list->count == b->k)
        return 1;
    mn_memory *dst = &b->list->items[b->list->count];
    if ((b->rc = mn__fact_copy(dst, m)))
        return 1;
    dst->score = b->hits[(size_t)pos].score;
    b->list->count++;
    return 0;
}

static mn_status rows_of(mn_db *db, const mn_store_memory_query *filter, const struct mn_index_hit *hits, size_t n,
                         size_t k, mn_memories **out)
{
    *out = NULL;
    int64_t *vids = malloc((n ? n : 1) * sizeof *vids);
    mn_memories *list = list_new(k);
    mn_status rc = vids && list ? MN_OK : mn__nomem();
    for (size_t i = 0; !rc && i < n; i++)
        vids[i] = hits[i].id;
    mn_store_memory_query sq = *filter;
    sq.vids = vids;
    sq.n_vids = n;
    struct by_hit b = {list, hits, k, MN_OK};
    if (!rc)
        rc = db->store->ops->memory->query(db->store, &sq, take_hit, &b);
    if (!rc)
        rc = b.rc;
    free(vids);
    if (rc)
        mn__memories_list_free(list);
    else
        *out = list;
    return rc;
}

/* Semantic: the memory vector index (search/vindex.c over memory_vectors, the same machinery as
 * messages'). Filters never under-return: a scope (namespace, user, agent, session, kind,
 * metadata, pinned) hands the index the ids of the versions that pass it (an exact scan of them
 * when at most 50,000); without one, the nearest hits are over-fetched and checked against the
 * time filters (current, not closed, or as of), fetching more until k pass or every vector was
 * seen, else the ids that pass. No index yet: the exact scan of the stored vectors. */
#define OVERFETCH_MIN 32

struct mem_filter {
    mn_db *db;
    const mn_store_memory_query *sq;
};

static mn_status mem_filter_ids(void *arg, mn_store_score_fn fn, void *user)
{
    struct mem_filter *f = arg;
    return f->db->store->ops->memory->vec_filter(f->db->store, f->sq, fn, user);
}

static int scoped(const mn_memory_query *q)
{
    return q->ns || q->user_id || q->agent_id || q->session_id || q->kind || q->metadata || q->pinned >= 0;
}

static mn_status indexed(mn_db *db, struct mn_vsearch *mvs, const float *qv, uint32_t dim, const mn_memory_query *q,
                         size_t k, mn_memories **out)
{
    mn_store_memory_query sq = {q, NULL, 0, NULL, 0, mn__clock_now_ms(), 0, 0, NULL, 0};
    size_t cap = k > MN_INDEX_MAX_K ? k : MN_INDEX_MAX_K;
    struct mn_index_hit *hits = malloc(cap * sizeof *hits);
    if (!hits)
        return mn__nomem();
    mn_status rc = MN_OK;
    size_t n = 0;
    struct mn_vsearch_info info = {0, 0, 0};
    int done = 0;
    /* no scope: over-fetch, check the time filters */
    for (size_t want = k * 2 > OVERFETCH_MIN ? k * 2 : OVERFETCH_MIN; !rc && !done && !scoped(q); want *= 4) {
        if (want > MN_INDEX_MAX_K)
            want = MN_INDEX_MAX_K;
        if ((rc = mn__vsearch_query_ids(mvs, qv, dim, want, NULL, NULL, hits, &n, &info)))
            break;
        if (info.truncated) {
            rc = MN_CONFLICT; /* the index is far behind: the exact scan answers */
            break;
        }
        if ((rc = rows_of(db, &sq, hits, n, k, out)))
            break;
        if ((*out)->count >= k || n < want) /* k passed, or every vector was seen */
            done = 1;
        else if (want == MN_INDEX_MAX_K)
            break;
        if (!done) {
            mn__memories_list_free(*out);
            *out = NULL;
        }
    }
    /* a scope, or few pass: the ids that pass are the index's candidates (or its accept filter) */
    if (!rc && !done) {
        struct mem_filter f = {db, &sq};
        rc = mn__vsearch_query_ids(mvs, qv, dim, k, mem_filter_ids, &f, hits, &n, &info);
        if (!rc && info.truncated)
            rc = MN_CONFLICT;
        if (!rc)
            rc = rows_of(db, &sq, hits, n, k, out);
    }
    free(hits);
    return rc;
}

static mn_status semantic(mn_db *db, const char *query, const mn_memory_query *q, size_t k, mn_memories **out)
{
    *out = NULL;
    float *qv = NULL;
    uint32_t dim = 0;
    mn_embedder *e = NULL;
    struct mn_vsearch *mvs = NULL;
    mn_status rc = mn__search_embedder(db, &e);
    if (!rc)
        rc = mn__embed_texts_alloc(e, &query, 1, &qv, &dim);
    if (!rc)
        rc = mn__memory_vsearch(db, &mvs);
    if (rc) {
        free(qv);
        return rc;
    }
    if (mn__vsearch_ready(mvs) && k <= MN_INDEX_MAX_K) {
        rc = indexed(db, mvs, qv, dim, q, k, out);
        if (rc == MN_CONFLICT) { /* another dimension than the index's, or the index far behind */
            mn__err_clear();
            rc = exact(db, qv, dim, q, k, out);
        }
    } else {
        rc = exact(db, qv, dim, q, k, out);
    }
    free(qv);
    return rc;
}

static mn_status keyword(mn_db *db, const char *query, const mn_memory_query *q, size_t k, mn_memories **out)
{
    *out = NULL;
    struct mn_buf match = MN_BUF_INIT;
    size_t terms = 0;
    mn_status rc = mn__fts_query_content(query, &match, &terms);
    if (!rc && terms == 0) {
        *out = calloc(1, sizeof **out);
        if (*out)
            (*out)->item_size = sizeof(mn_memory);
        rc = *out ? MN_OK : mn__nomem();
    } else if (!rc) {
        mn_store_memory_query sq = {q, NULL, 0, match.data, 0, mn__clock_now_ms(), k, 0, NULL, 0};
        rc = mn__memory_query_run(db, &sq, out);
    }
    mn__buf_release(&match);
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
        rc = mn__rrf(ra, a->count, rb, b->count, rrf_k, &fused, &n);
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
