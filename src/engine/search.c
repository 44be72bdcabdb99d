/*
 * search.c — the search use cases behind mn_search, mn_embed_* and mn_keyword_drain*
 * (src/mnemo_search.c) and the hooks the rest of the library calls: queueing on open,
 * auto-embedding after an append, the handle's embedder and vector index, saving the index on
 * close. RAG is in rag.c.
 * Design notes: docs/search.md.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "context/context.h"
#include "embed/embed.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "search/search.h"
#include "store/records.h"
#include "store/store_memory.h"
#include "store/store_search.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"


struct mn_search_state {
    pthread_mutex_t lock; /* guards emb and vs creation */
    mn_embedder *emb;
    mn_vsearch *vs;
    mn_vsearch *mvs; /* over memory versions' vectors ("<db>.memories.hnsw") */
};

int mn__embedder_configured(mn_db *db) { return strcmp(db->settings.embedder_name, "none") != 0; }

/* ---- hooks ----------------------------------------------------------------------------------- */

mn_status mn__search_open(mn_db *db)
{
    db->search = calloc(1, sizeof *db->search);
    if (!db->search)
        return mn__nomem();
    pthread_mutex_init(&db->search->lock, NULL);
    if (mn__embedder_configured(db))
        return db->store->ops->search->queue_enable(db->store, 1);
    return MN_OK;
}

void mn__search_close(mn_db *db)
{
    if (!db->search)
        return;
    mn__vsearch_free(db->search->vs);
    mn__vsearch_free(db->search->mvs);
    mn__embed_free(db->search->emb);
    pthread_mutex_destroy(&db->search->lock);
    free(db->search);
    db->search = NULL;
}

static mn_status get_embedder(mn_db *db, mn_embedder **out)
{
    *out = NULL;
    if (!mn__embedder_configured(db))
        return mn__err(MN_UNAVAILABLE, "no embedder is configured (embedder.name is none; set it to hash, openai or"
                                       " ollama for semantic search)");
    mn_status rc = MN_OK;
    pthread_mutex_lock(&db->search->lock);
    if (!db->search->emb) {
        const char *key_env = db->settings.embedder_api_key_env;
        const char *key = key_env && *key_env ? getenv(key_env) : NULL;
        mn_embed_cfg c = {db->settings.embedder_name,
                          db->settings.embedder_model,
                          db->settings.embedder_base_url,
                          key && *key ? key : NULL,
                          db->settings.embedder_dim,
                          db->settings.embedder_timeout_ms,
                          db->settings.embedder_batch,
                          (int)db->settings.embedder_retries,
                          db->settings.embedder_backoff_ms};
        rc = mn__embed_open(&c, &db->search->emb);
    }
    *out = db->search->emb;
    pthread_mutex_unlock(&db->search->lock);
    return rc;
}

mn_status mn__search_embedder(mn_db *db, struct mn_embedder **out) { return get_embedder(db, out); }

/* The handle's index over messages' vectors (memory = 0) or memory versions' (memory = 1): the
 * same machinery (search/vindex.c) over two sources, with the same settings. */
static mn_status get_index(mn_db *db, int memory, mn_vsearch **out)
{
    mn_status rc = MN_OK;
    pthread_mutex_lock(&db->search->lock);
    mn_vsearch **slot = memory ? &db->search->mvs : &db->search->vs;
    if (!*slot) {
        struct mn_index_params p = MN_INDEX_PARAMS_INIT;
        p.M = (uint32_t)db->settings.search_hnsw_m;
        p.ef_construction = (uint32_t)db->settings.search_hnsw_ef_construction;
        p.ef_search = (uint32_t)db->settings.search_hnsw_ef_search;
        if (strcmp(db->settings.search_quantize, "int8") == 0)
            p.quant = MN_INDEX_INT8; /* codes in memory; re-ranked on the stored float vectors */
        const struct mn_store_memory_ops *m = db->store->ops->memory;
        struct mn_vsource src = {".memories.hnsw", m->vec_scan, m->vec_changes, m->vec_get};
        rc = memory ? mn__vsearch_new_source(db->store, db->path, &p, &src, slot)
                    : mn__vsearch_new(db->store, db->path, &p, slot);
        if (!rc)
            mn__vsearch_set_threads(*slot, (unsigned)db->settings.search_index_threads);
    }
    *out = *slot;
    pthread_mutex_unlock(&db->search->lock);
    return rc;
}

static mn_status get_vsearch(mn_db *db, mn_vsearch **out) { return get_index(db, 0, out); }

mn_status mn__memory_vsearch(mn_db *db, mn_vsearch **out) { return get_index(db, 1, out); }

void mn__vector_index_erase(mn_db *db, int memory)
{
    pthread_mutex_lock(&db->search->lock);
    mn_vsearch *v = memory ? db->search->mvs : db->search->vs;
    pthread_mutex_unlock(&db->search->lock);
    if (v && mn__vsearch_apply_changes(v)) { /* the next writer's catch-up (within a second on a server) zeroes them */
        mn__log(MN_LOG_WARN, "%s: the vector index in memory did not take the erasure yet: %s", db->store->label,
                mn_errmsg());
        mn__err_clear();
    }
    mn__vsearch_erase_saved(db->path, memory ? ".memories.hnsw" : ".hnsw");
}

void mn__memory_index_update(mn_db *db, int rebuild, size_t added)
{
    mn_vsearch *mvs = NULL;
    mn_status rc = get_index(db, 1, &mvs);
    if (!rc)
        rc = mn__vsearch_update(mvs, rebuild, added);
    if (rc) { /* the memories are stored; searches scan what the index lacks, the next writer retries */
        mn__log(MN_LOG_WARN, "%s: the memory vector index was not updated: %s", db->store->label, mn_errmsg());
        mn__err_clear();
    }
}

/* ---- embedding ------------------------------------------------------------------------------- */

struct batch {
    int64_t *ids;
    char **texts;
    size_t n, cap;
    int oom;
};

static int take_text(void *user, int64_t id, const char *content)
{
    struct batch *b = user;
    if (b->n == b->cap)
        return 1;
    b->ids[b->n] = id;
    if (!(b->texts[b->n] = strdup(content))) {
        b->oom = 1;
        return 1;
    }
    b->n++;
    return 0;
}

static void batch_clear(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->texts[i]);
    b->n = 0;
}

/* Embeds queued messages until the queue is empty or max (0: no limit) are done. */
static mn_status drain(mn_db *db, size_t max, mn_progress_fn progress, void *user, int64_t total, int64_t *done)
{
    mn_embedder *e;
    mn_status rc = get_embedder(db, &e);
    if (rc)
        return rc;
    size_t bs = mn__embed_batch(e);
    struct batch b = {calloc(bs, sizeof(int64_t)), calloc(bs, sizeof(char *)), 0, bs, 0};
    unsigned char *skip = calloc(bs, 1);
    if (!b.ids || !b.texts || !skip)
        rc = mn__nomem();
    while (!rc && (!max || (size_t)*done < max)) {
        b.cap = max && max - (size_t)*done < bs ? max - (size_t)*done : bs;
        rc = db->store->ops->search->queue_peek(db->store, b.cap, take_text, &b);
        if (!rc && b.oom)
            rc = mn__nomem();
        if (rc || b.n == 0)
            break;
        float *vecs = NULL;
        uint32_t dim = 0;
        rc = mn__embed_texts_alloc(e, (const char *const *)b.texts, b.n, &vecs, &dim);
        for (size_t i = 0; !rc && i < b.n; i++) {
            int zero = 1;
            for (uint32_t j = 0; j < dim && zero; j++)
                zero = vecs[i * dim + j] == 0.0f;
            skip[i] = (unsigned char)zero;
        }
        if (!rc)
            rc = db->store->ops->search->vec_put(db->store, b.ids, b.n, vecs, skip, dim, mn__embed_name(e),
                                                 mn__embed_model(e), mn__clock_now_ms());
        free(vecs);
        if (!rc) {
            *done += (int64_t)b.n;
            if (progress)
                progress(user, *done, total > *done ? total : *done);
        }
        batch_clear(&b);
    }
    batch_clear(&b);
    free(b.ids);
    free(b.texts);
    free(skip);
    return rc;
}

/* The writers' step after vectors were stored: the index follows them (built from scratch on
 * every core when `rebuild`), so that no search has to build it (docs/search.md). */
static mn_status update_index(mn_db *db, int rebuild, int64_t added)
{
    mn_vsearch *vs;
    mn_status rc = get_vsearch(db, &vs);
    if (!rc)
        rc = mn__vsearch_update(vs, rebuild, (size_t)added);
    return rc;
}

void mn__search_after_append(mn_db *db)
{
    if (!mn__embedder_configured(db) || strcmp(db->settings.embedder_mode, "inline") != 0)
        return;
    int64_t done = 0;
    mn_status rc = drain(db, 0, NULL, NULL, 0, &done);
    if (!rc && done)
        rc = update_index(db, 0, done);
    if (rc) { /* the message is stored; it stays queued for mn_embed_pending */
        mn__log(MN_LOG_WARN, "%s: inline embedding failed, the message stays queued: %s", db->store->label, mn_errmsg());
        mn__err_clear();
    }
}

mn_status mn__embed_pending_messages(mn_db *db, size_t max, int64_t *done)
{
    mn_status rc = drain(db, max, NULL, NULL, 0, done);
    if (!rc) /* also catches up with vectors other processes stored */
        rc = update_index(db, 0, *done);
    if (!rc) /* and the memory index with memories other processes stored */
        mn__memory_index_update(db, 0, 0);
    return rc;
}

mn_status mn__embed_fill(mn_db *db, int reset, mn_progress_fn progress, void *user, int64_t *done)
{
    int64_t queued = 0;
    mn_embedder *e;
    mn_status rc = get_embedder(db, &e);
    if (rc)
        return rc;
    if (!(rc = db->store->ops->search->queue_enable(db->store, 1)))
        rc = db->store->ops->search->queue_fill(db->store, reset, &queued);
    if (!rc && progress)
        progress(user, 0, queued);
    if (!rc)
        rc = drain(db, 0, progress, user, queued, done);
    if (!rc) /* a reindex replaced every vector: built again from scratch */
        rc = update_index(db, reset, *done);
    if (!rc) /* the memory index too (from scratch on a reindex) */
        mn__memory_index_update(db, reset, 0);
    return rc;
}

mn_status mn__count_embeddings(mn_db *db, int64_t *embedded, int64_t *queued)
{
    return db->store->ops->search->counts(db->store, embedded, queued);
}

/* ---- the keyword index's queue (search.fts_drain) --------------------------------------------- */

mn_status mn__drain_keywords(mn_db *db, int all, int64_t *applied, int64_t *pending)
{
    return db->store->ops->search->fts_drain(db->store, all, applied, pending);
}

void mn__defer_keyword_drain(mn_db *db, int on) { db->store->ops->search->fts_defer(db->store, on); }

/* ---- search ---------------------------------------------------------------------------------- */

struct hits_impl {
    mn_search_hits pub; /* first */
    struct mn_arena arena;
};

void mn__free_search_hits(mn_search_hits *hits)
{
    if (!hits)
        return;
    struct hits_impl *h = (struct hits_impl *)hits;
    free(h->pub.items);
    mn__arena_release(&h->arena);
    free(h);
}

struct list {
    struct mn_ranked *r;
    size_t n, cap;
    int oom;
    struct mn_store_fts_report kw; /* a keyword list: what the index did not hold */
};

static int list_push(void *user, int64_t id, double score)
{
    struct list *l = user;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        struct mn_ranked *n = realloc(l->r, cap * sizeof *n);
        if (!n) {
            l->oom = 1;
            return 1;
        }
        l->r = n;
        l->cap = cap;
    }
    l->r[l->n++] = (struct mn_ranked){id, score};
    return 0;
}

static mn_status keyword_list(mn_db *db, const char *query, const mn_search_filter *f, size_t limit, struct list *l)
{
    struct mn_buf match = MN_BUF_INIT;
    size_t terms = 0;
    mn_status rc = db->store->ops->search->fts_sync(db->store);
    if (!rc)
        rc = mn__fts_query(query, &match, &terms);
    if (!rc && terms)
        rc = db->store->ops->search->fts_search(db->store, match.data, f, limit, list_push, l, &l->kw);
    if (!rc && l->oom)
        rc = mn__nomem();
    mn__buf_release(&match);
    return rc;
}

/* The stored vectors must come from the configured embedder. */
static mn_status check_identity(mn_db *db, mn_embedder *e, uint32_t dim, int *empty)
{
    char *have = NULL, want[600];
    *empty = 0;
    mn_status rc = db->store->ops->meta_get(db->store, "embed.identity", &have);
    if (rc)
        return rc;
    snprintf(want, sizeof want, "%s/%s/%u", mn__embed_name(e), mn__embed_model(e), dim);
    if (!have)
        *empty = 1;
    else if (strcmp(have, want) != 0)
        rc = mn__err(MN_CONFLICT,
                     "the vectors in %s were made by %s, the query is embedded by %s: they cannot be compared"
                     " (mnemo reindex --embeddings re-embeds every message)", db->store->label, have, want);
    free(have);
    return rc;
}

static mn_status semantic_list(mn_db *db, const char *query, const mn_search_filter *f, size_t limit,
                               double min_sim, struct list *l, struct mn_vsearch_info *info)
{
    mn_embedder *e;
    mn_vsearch *vs;
    mn_status rc = get_embedder(db, &e);
    if (!rc)
        rc = get_vsearch(db, &vs);
    if (rc)
        return rc;
    float *q = NULL;
    uint32_t dim = 0;
    const char *texts[1] = {query};
    if ((rc = mn__embed_texts_alloc(e, texts, 1, &q, &dim)))
        return rc;
    int empty = 0, zero = 1;
    for (uint32_t i = 0; i < dim && zero; i++)
        zero = q[i] == 0.0f;
    rc = check_identity(db, e, dim, &empty);
    struct mn_index_hit *hits = NULL;
    size_t n = 0;
    if (!rc && !empty && !zero) {
        if (!(hits = calloc(limit, sizeof *hits)))
            rc = mn__nomem();
        if (!rc)
            rc = mn__vsearch_query(vs, q, dim, limit, f, hits, &n, info);
    }
    for (size_t i = 0; !rc && i < n; i++)
        if ((min_sim == 0 || hits[i].score >= min_sim) && list_push(l, hits[i].id, hits[i].score))
            rc = mn__nomem();
    free(hits);
    free(q);
    return rc;
}

/* The semantic list of a hybrid search, made on its own thread while the caller's makes the
 * keyword list: embedding the query (a round trip to a remote embedder) and the vector search
 * overlap the keyword search instead of adding to it. The handle is thread-safe; the message of
 * a failure is carried back to the caller's thread. */
struct semantic_job {
    mn_db *db;
    const char *query;
    const mn_search_filter *f;
    size_t limit;
    double min_sim;
    struct list *l;
    struct mn_vsearch_info *info;
    mn_status rc;
    char *err;
};

static void *semantic_job_run(void *arg)
{
    struct semantic_job *j = arg;
    j->rc = semantic_list(j->db, j->query, j->f, j->limit, j->min_sim, j->l, j->info);
    if (j->rc)
        j->err = strdup(mn_errmsg());
    return NULL;
}

/* Both lists of a hybrid search; semantic first when the thread cannot be had. */
static mn_status hybrid_lists(mn_db *db, const char *query, const mn_search_filter *f, size_t limit, double min_sim,
                              struct list *sem, struct list *kw, struct mn_vsearch_info *info)
{
    struct semantic_job j = {db, query, f, limit, min_sim, sem, info, MN_OK, NULL};
    pthread_t th;
    if (pthread_create(&th, NULL, semantic_job_run, &j) != 0) {
        mn_status rc = semantic_list(db, query, f, limit, min_sim, sem, info);
        return rc ? rc : keyword_list(db, query, f, limit, kw);
    }
    mn_status rc = keyword_list(db, query, f, limit, kw);
    pthread_join(th, NULL);
    if (j.rc) /* the semantic failure first, as when the lists were made one after the other */
        rc = mn__err(j.rc, "%s", j.err ? j.err : mn_status_str(j.rc));
    free(j.err);
    return rc;
}

struct fill_ctx {
    struct hits_impl *h;
    const struct mn_ranked *order;
    const struct list *sem, *kw;
    int oom;
};

static int rank_of(const struct list *l, int64_t id, double *score)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (l->r[i].id == id) {
            *score = l->r[i].score;
            return (int)i + 1;
        }
    return 0;
}

static int fill_hit(void *user, const mn_message *m, const char *ns)
{
    struct fill_ctx *c = user;
    mn_search_hit *hit = &c->h->pub.items[c->h->pub.count];
    memset(hit, 0, sizeof *hit);
    if (mn__records_message_fill(&c->h->arena, &hit->message, m) || !(hit->ns = mn__arena_strdup(&c->h->arena, ns, &c->oom))) {
        c->oom = 1;
        return 1;
    }
    size_t i = c->h->pub.count; /* messages_get keeps the order; a deleted one is skipped */
    while (c->order[i].id != m->id)
        i++;
    hit->score = c->order[i].score;
    double s = 0;
    hit->semantic_rank = rank_of(c->sem, m->id, &s);
    hit->similarity = hit->semantic_rank ? s : 0;
    hit->keyword_rank = rank_of(c->kw, m->id, &s);
    hit->bm25 = hit->keyword_rank ? s : 0;
    c->h->pub.count++;
    return 0;
}

mn_status mn__search_run(mn_db *db, const char *query, mn_search_mode mode, size_t top_k,
                         const mn_search_filter *f, double min_sim, mn_search_hits **out)
{
    if (mode == MN_SEARCH_AUTO)
        mode = mn__embedder_configured(db) ? MN_SEARCH_HYBRID : MN_SEARCH_KEYWORD;
    size_t limit = mode == MN_SEARCH_HYBRID ? (top_k * 2 > 50 ? top_k * 2 : 50) : top_k;
    if (limit > MN_INDEX_MAX_K)
        limit = MN_INDEX_MAX_K;
    struct list sem = {0}, kw = {0};
    struct mn_vsearch_info info = {0, 0, 0};
    mn_status rc = MN_OK;
    if (mode == MN_SEARCH_HYBRID)
        rc = hybrid_lists(db, query, f, limit, min_sim, &sem, &kw, &info);
    else if (mode == MN_SEARCH_SEMANTIC)
        rc = semantic_list(db, query, f, limit, min_sim, &sem, &info);
    else
        rc = keyword_list(db, query, f, limit, &kw);
    int64_t not_embedded = 0; /* what the semantic list could not see */
    if (!rc && mode != MN_SEARCH_KEYWORD)
        rc = db->store->ops->search->queue_count(db->store, f, &not_embedded);
    struct mn_ranked *order = NULL;
    size_t n = 0;
    if (!rc && mode == MN_SEARCH_HYBRID)
        rc = mn__rrf(sem.r, sem.n, kw.r, kw.n, (double)db->settings.search_rrf_k, &order, &n);
    else if (!rc) {
        const struct list *one = mode == MN_SEARCH_SEMANTIC ? &sem : &kw;
        n = one->n;
        if (!(order = malloc((n + 1) * sizeof *order)))
            rc = mn__nomem();
        else if (n)
            memcpy(order, one->r, n * sizeof *order);
    }
    if (n > top_k)
        n = top_k;
    struct hits_impl *h = rc ? NULL : calloc(1, sizeof *h);
    int64_t *ids = rc ? NULL : malloc((n + 1) * sizeof *ids);
    if (!rc && (!h || !ids || !(h->pub.items = calloc(n + 1, sizeof *h->pub.items))))
        rc = mn__nomem();
    if (h)
        h->pub.item_size = sizeof(mn_search_hit);
    for (size_t i = 0; !rc && i < n; i++)
        ids[i] = order[i].id;
    if (!rc) {
        h->pub.mode = mode;
        h->pub.not_embedded = not_embedded;
        h->pub.index_indexed = (int64_t)info.indexed;
        h->pub.index_scanned = (int64_t)info.scanned;
        h->pub.index_truncated = info.truncated;
        h->pub.keyword_unindexed = kw.kw.unindexed;
        h->pub.keyword_scanned = kw.kw.scanned;
        struct fill_ctx c = {h, order, &sem, &kw, 0};
        rc = db->store->ops->search->messages_get(db->store, ids, n, fill_hit, &c);
        if (!rc && c.oom)
            rc = mn__nomem();
    }
    if (rc)
        mn__free_search_hits(h ? &h->pub : NULL);
    else
        *out = &h->pub;
    free(ids);
    free(order);
    free(sem.r);
    free(kw.r);
    return rc;
}

