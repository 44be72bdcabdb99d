/*
 * mnemo_search.c — the public search functions of mnemo.h (mn_search, mn_relevant_context,
 * mn_embed_*) and the hooks the rest of the library calls: queueing on open, auto-embedding
 * after an append, RAG injection in mn_context_build, saving the vector index on close.
 * Design notes: docs/search.md.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "config/config.h"
#include "context/context.h"
#include "embed/embed.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "search/search.h"
#include "store/records.h"
#include "store/store_search.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

#define MAX_TOP_K 1000
#define MAX_QUERY_BYTES 65536
#define RAG_OVERFETCH 20
#define RAG_CUT_CHARS 200

struct mn_search_state {
    pthread_mutex_t lock; /* guards emb and vs creation */
    mn_embedder *emb;
    mn_vsearch *vs;
};

static const char *const mode_names[] = {"auto", "semantic", "keyword", "hybrid"};

mn_status mn_search_mode_parse(const char *name, mn_search_mode *out)
{
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *out = (mn_search_mode)i;
            return MN_OK;
        }
    return mn__err(MN_INVALID, "mode: '%s' is not one of auto, semantic, keyword, hybrid", name ? name : "(null)");
}

const char *mn_search_mode_name(mn_search_mode mode)
{
    return (unsigned)mode < 4 ? mode_names[mode] : NULL;
}

static int embedder_configured(mn_db *db) { return strcmp(mn_config_str(db->cfg, "embedder.name"), "none") != 0; }

/* ---- hooks ----------------------------------------------------------------------------------- */

mn_status mn__search_open(mn_db *db)
{
    db->search = calloc(1, sizeof *db->search);
    if (!db->search)
        return mn__nomem();
    pthread_mutex_init(&db->search->lock, NULL);
    if (embedder_configured(db))
        return db->store->ops->search->queue_enable(db->store, 1);
    return MN_OK;
}

void mn__search_close(mn_db *db)
{
    if (!db->search)
        return;
    mn_vsearch_free(db->search->vs);
    mn_embed_free(db->search->emb);
    pthread_mutex_destroy(&db->search->lock);
    free(db->search);
    db->search = NULL;
}

static mn_status get_embedder(mn_db *db, mn_embedder **out)
{
    *out = NULL;
    if (!embedder_configured(db))
        return mn__err(MN_UNAVAILABLE, "no embedder is configured (embedder.name is none; set it to hash, openai or"
                                       " ollama for semantic search)");
    mn_status rc = MN_OK;
    pthread_mutex_lock(&db->search->lock);
    if (!db->search->emb) {
        const char *key_env = mn_config_str(db->cfg, "embedder.api_key_env");
        const char *key = key_env && *key_env ? getenv(key_env) : NULL;
        mn_embed_cfg c = {mn_config_str(db->cfg, "embedder.name"),
                          mn_config_str(db->cfg, "embedder.model"),
                          mn_config_str(db->cfg, "embedder.base_url"),
                          key && *key ? key : NULL,
                          mn_config_int(db->cfg, "embedder.dim"),
                          mn_config_int(db->cfg, "embedder.timeout_ms"),
                          mn_config_int(db->cfg, "embedder.batch"),
                          (int)mn_config_int(db->cfg, "embedder.retries"),
                          mn_config_int(db->cfg, "embedder.backoff_ms")};
        rc = mn_embed_open(&c, &db->search->emb);
    }
    *out = db->search->emb;
    pthread_mutex_unlock(&db->search->lock);
    return rc;
}

mn_status mn__search_embedder(mn_db *db, struct mn_embedder **out) { return get_embedder(db, out); }

static mn_status get_vsearch(mn_db *db, mn_vsearch **out)
{
    mn_status rc = MN_OK;
    pthread_mutex_lock(&db->search->lock);
    if (!db->search->vs) {
        struct mn_index_params p = MN_INDEX_PARAMS_INIT;
        p.M = (uint32_t)mn_config_int(db->cfg, "search.hnsw_m");
        p.ef_construction = (uint32_t)mn_config_int(db->cfg, "search.hnsw_ef_construction");
        p.ef_search = (uint32_t)mn_config_int(db->cfg, "search.hnsw_ef_search");
        if (strcmp(mn_config_str(db->cfg, "search.quantize"), "int8") == 0)
            p.quant = MN_INDEX_INT8; /* codes in memory; re-ranked on the stored float vectors */
        rc = mn_vsearch_new(db->store, db->path, &p, &db->search->vs);
        if (!rc)
            mn_vsearch_set_threads(db->search->vs, (unsigned)mn_config_int(db->cfg, "search.index_threads"));
    }
    *out = db->search->vs;
    pthread_mutex_unlock(&db->search->lock);
    return rc;
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
    size_t bs = mn_embed_batch(e);
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
        rc = mn_embed_texts_alloc(e, (const char *const *)b.texts, b.n, &vecs, &dim);
        for (size_t i = 0; !rc && i < b.n; i++) {
            int zero = 1;
            for (uint32_t j = 0; j < dim && zero; j++)
                zero = vecs[i * dim + j] == 0.0f;
            skip[i] = (unsigned char)zero;
        }
        if (!rc)
            rc = db->store->ops->search->vec_put(db->store, b.ids, b.n, vecs, skip, dim, mn_embed_name(e),
                                                 mn_embed_model(e), mn_clock_now_ms());
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
        rc = mn_vsearch_update(vs, rebuild, (size_t)added);
    return rc;
}

void mn__search_after_append(mn_db *db)
{
    if (!embedder_configured(db) || strcmp(mn_config_str(db->cfg, "embedder.mode"), "inline") != 0)
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

mn_status mn_embed_pending(mn_db *db, size_t max, size_t *done)
{
    mn_status rc = mn__check_db(db);
    int64_t n = 0;
    if (done)
        *done = 0;
    if (rc)
        return rc;
    rc = drain(db, max, NULL, NULL, 0, &n);
    if (!rc) /* also catches up with vectors other processes stored */
        rc = update_index(db, 0, n);
    if (done)
        *done = (size_t)n;
    return rc;
}

static mn_status fill_and_drain(mn_db *db, int reset, mn_progress_fn progress, void *user, int64_t *done)
{
    mn_status rc = mn__check_db(db);
    int64_t n = 0, queued = 0;
    if (done)
        *done = 0;
    if (rc)
        return rc;
    mn_embedder *e;
    if ((rc = get_embedder(db, &e)))
        return rc;
    if (!(rc = db->store->ops->search->queue_enable(db->store, 1)))
        rc = db->store->ops->search->queue_fill(db->store, reset, &queued);
    if (!rc && progress)
        progress(user, 0, queued);
    if (!rc)
        rc = drain(db, 0, progress, user, queued, &n);
    if (!rc) /* a reindex replaced every vector: built again from scratch */
        rc = update_index(db, reset, n);
    if (done)
        *done = n;
    return rc;
}

mn_status mn_embed_backfill(mn_db *db, mn_progress_fn progress, void *user, int64_t *done)
{
    return fill_and_drain(db, 0, progress, user, done);
}

mn_status mn_reindex_embeddings(mn_db *db, mn_progress_fn progress, void *user, int64_t *done)
{
    return fill_and_drain(db, 1, progress, user, done);
}

mn_status mn_embed_counts(mn_db *db, int64_t *embedded, int64_t *queued)
{
    mn_status rc = mn__check_db(db);
    if (embedded)
        *embedded = 0;
    if (queued)
        *queued = 0;
    if (rc)
        return rc;
    return db->store->ops->search->counts(db->store, embedded, queued);
}

/* ---- search ---------------------------------------------------------------------------------- */

struct hits_impl {
    mn_search_hits pub; /* first */
    struct mn_arena arena;
};

void mn_search_hits_free(mn_search_hits *hits)
{
    if (!hits)
        return;
    struct hits_impl *h = (struct hits_impl *)hits;
    free(h->pub.items);
    mn_arena_release(&h->arena);
    free(h);
}

static mn_status check_filter(const mn_search_filter *f, mn_search_filter *o, char canon[MN_UUID_LEN + 1])
{
    static const mn_search_filter none = MN_SEARCH_FILTER_INIT;
    *o = none;
    if (!f)
        return MN_OK;
    mn_status rc = MN__ABI_LOAD(mn_search_filter, o, f, until);
    if (rc)
        return rc;
    if (o->session_id) {
        if ((rc = mn__check_id(o->session_id, canon)))
            return rc;
        o->session_id = canon;
    }
    if (o->ns && (rc = mn_check_namespace(o->ns)))
        return rc;
    if (o->role < -1 || o->role > MN_ROLE_TOOL)
        return mn__err(MN_INVALID, "filter.role: %d is not -1 or a role (0 to 3)", o->role);
    if (o->since < 0 || o->until < 0 || (o->until && o->since >= o->until))
        return mn__err(MN_INVALID, "filter: since and until must be >= 0 and since < until");
    if (o->metadata && (rc = mn__check_filter_metadata(o->metadata)))
        return rc;
    return MN_OK;
}

struct list {
    struct mn_ranked *r;
    size_t n, cap;
    int oom;
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
        rc = mn_fts_query(query, &match, &terms);
    if (!rc && terms)
        rc = db->store->ops->search->fts_search(db->store, match.data, f, limit, list_push, l);
    if (!rc && l->oom)
        rc = mn__nomem();
    mn_buf_release(&match);
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
    snprintf(want, sizeof want, "%s/%s/%u", mn_embed_name(e), mn_embed_model(e), dim);
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
    if ((rc = mn_embed_texts_alloc(e, texts, 1, &q, &dim)))
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
            rc = mn_vsearch_query(vs, q, dim, limit, f, hits, &n, info);
    }
    for (size_t i = 0; !rc && i < n; i++)
        if ((min_sim == 0 || hits[i].score >= min_sim) && list_push(l, hits[i].id, hits[i].score))
            rc = mn__nomem();
    free(hits);
    free(q);
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
    if (mn_records_message_fill(&c->h->arena, &hit->message, m) || !(hit->ns = mn_arena_strdup(&c->h->arena, ns, &c->oom))) {
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

static mn_status run_search(mn_db *db, const char *query, mn_search_mode mode, size_t top_k,
                            const mn_search_filter *f, double min_sim, mn_search_hits **out)
{
    if (mode == MN_SEARCH_AUTO)
        mode = embedder_configured(db) ? MN_SEARCH_HYBRID : MN_SEARCH_KEYWORD;
    size_t limit = mode == MN_SEARCH_HYBRID ? (top_k * 2 > 50 ? top_k * 2 : 50) : top_k;
    if (limit > MN_INDEX_MAX_K)
        limit = MN_INDEX_MAX_K;
    struct list sem = {0}, kw = {0};
    struct mn_vsearch_info info = {0, 0, 0};
    mn_status rc = MN_OK;
    if (mode != MN_SEARCH_KEYWORD)
        rc = semantic_list(db, query, f, limit, min_sim, &sem, &info);
    if (!rc && mode != MN_SEARCH_SEMANTIC)
        rc = keyword_list(db, query, f, limit, &kw);
    int64_t not_embedded = 0; /* what the semantic list could not see */
    if (!rc && mode != MN_SEARCH_KEYWORD)
        rc = db->store->ops->search->queue_count(db->store, f, &not_embedded);
    struct mn_ranked *order = NULL;
    size_t n = 0;
    if (!rc && mode == MN_SEARCH_HYBRID)
        rc = mn_rrf(sem.r, sem.n, kw.r, kw.n, (double)mn_config_int(db->cfg, "search.rrf_k"), &order, &n);
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
        struct fill_ctx c = {h, order, &sem, &kw, 0};
        rc = db->store->ops->search->messages_get(db->store, ids, n, fill_hit, &c);
        if (!rc && c.oom)
            rc = mn__nomem();
    }
    if (rc)
        mn_search_hits_free(h ? &h->pub : NULL);
    else
        *out = &h->pub;
    free(ids);
    free(order);
    free(sem.r);
    free(kw.r);
    return rc;
}

static mn_status check_query(const char *query)
{
    if (!query || !*query)
        return mn__err(MN_INVALID, "query: empty");
    size_t len = strlen(query), bad;
    if (len > MAX_QUERY_BYTES)
        return mn__err(MN_TOOBIG, "query: %zu bytes is over the limit of %d", len, MAX_QUERY_BYTES);
    if (!mn_utf8_valid(query, len, &bad))
        return mn__err(MN_INVALID, "query: invalid UTF-8 at byte %zu", bad);
    return MN_OK;
}

mn_status mn_search(mn_db *db, const char *query, mn_search_mode mode, size_t top_k, const mn_search_filter *filter,
                    double min_similarity, mn_search_hits **out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_search: out is NULL");
    *out = NULL;
    if (rc || (rc = check_query(query)))
        return rc;
    if ((unsigned)mode > MN_SEARCH_HYBRID)
        return mn__err(MN_INVALID, "mode: %d is not a search mode", (int)mode);
    if (top_k > MAX_TOP_K)
        return mn__err(MN_INVALID, "top_k: %zu is over the maximum of %d", top_k, MAX_TOP_K);
    if (!(min_similarity >= -1 && min_similarity <= 1))
        return mn__err(MN_INVALID, "min_similarity: must be from -1 to 1");
    mn_search_filter f;
    char canon[MN_UUID_LEN + 1];
    if ((rc = check_filter(filter, &f, canon)))
        return rc;
    return run_search(db, query, mode, top_k ? top_k : 10, &f, min_similarity, out);
}

mn_status mn_search_hits_to_json(const mn_search_hits *hits, char **out)
{
    mn__err_clear();
    if (!hits || !out)
        return mn__err(MN_MISUSE, "mn_search_hits_to_json: NULL argument");
    *out = NULL;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < hits->count; i++) {
        const mn_search_hit *h = &hits->items[i];
        json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:i, s:i, s:s, s:o}", "rank", (json_int_t)(i + 1), "score",
                              h->score, "similarity", h->similarity, "bm25", h->bm25, "semantic_rank",
                              h->semantic_rank, "keyword_rank", h->keyword_rank, "namespace", h->ns, "message",
                              mn_jsonl_message(&h->message, 0));
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    *out = arr ? mn_json_dump(arr) : NULL;
    json_decref(arr);
    return *out ? MN_OK : mn__nomem();
}

/* ---- RAG ------------------------------------------------------------------------------------- */

/* "[ROLE]: content" with content cut at 200 characters ("..." when cut), as seed 000 does. */
static mn_status rag_line(struct mn_buf *b, const mn_message *m)
{
    const char *role = mn_role_name(m->role), *c = m->content ? m->content : "";
    mn_status rc = mn_buf_addc(b, '[');
    for (const char *p = role; !rc && *p; p++)
        rc = mn_buf_addc(b, (char)(*p - 32));
    size_t len = strlen(c), cut = mn_utf8_prefix(c, len, RAG_CUT_CHARS);
    if (!rc)
        rc = mn_buf_adds(b, "]: ");
    if (!rc)
        rc = mn_buf_add(b, c, cut);
    if (!rc && cut < len)
        rc = mn_buf_adds(b, "...");
    return rc;
}

static const char RAG_HEAD[] = "RELEVANT CONTEXT FROM PAST CONVERSATIONS:\n---\n";
static const char RAG_TAIL[] = "---";
static const char RAG_QUESTION[] =
    "\n\nNow answer the current user question using the context above if relevant.\n\nUSER QUESTION: ";

/* The block for hits[0..n) within max_tokens (0: no limit); *used gets the hits kept. */
static mn_status rag_block(mn_db *db, const mn_search_hit *hits, size_t n, int64_t max_tokens, struct mn_buf *out,
                           size_t *used)
{
    struct mn_buf line = MN_BUF_INIT;
    mn_status rc = MN_OK;
    int64_t spent = 0;
    *used = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        mn_buf_reset(&line);
        if ((rc = rag_line(&line, &hits[i].message)) || (rc = mn_buf_addc(&line, '\n')))
            break;
        int64_t t = (int64_t)mn_token_count(db->tk, line.data, line.len);
        if (max_tokens && spent + t > max_tokens)
            break;
        spent += t;
        if (!out->len && (rc = mn_buf_adds(out, RAG_HEAD)))
            break;
        rc = mn_buf_add(out, line.data, line.len);
        ++*used;
    }
    if (!rc && out->len)
        rc = mn_buf_adds(out, RAG_TAIL);
    mn_buf_release(&line);
    return rc;
}

mn_status mn_relevant_context(mn_db *db, const char *query, int64_t max_tokens, const mn_search_filter *filter,
                              char **text)
{
    mn_status rc = mn__check_db(db);
    if (!text)
        return mn__err(MN_MISUSE, "mn_relevant_context: text is NULL");
    *text = NULL;
    if (rc || (rc = check_query(query)))
        return rc;
    if (max_tokens < 1 || max_tokens > 1000000)
        return mn__err(MN_INVALID, "max_tokens: %lld is not from 1 to 1000000", (long long)max_tokens);
    mn_search_filter f;
    char canon[MN_UUID_LEN + 1];
    if ((rc = check_filter(filter, &f, canon)))
        return rc;
    mn_search_hits *hits = NULL;
    rc = run_search(db, query, MN_SEARCH_AUTO, RAG_OVERFETCH, &f, 0, &hits);
    struct mn_buf b = MN_BUF_INIT;
    size_t used;
    if (!rc)
        rc = rag_block(db, hits->items, hits->count, max_tokens, &b, &used);
    mn_search_hits_free(hits);
    if (!rc && !(*text = mn_buf_detach(&b, NULL)))
        rc = mn__nomem();
    mn_buf_release(&b);
    return rc;
}

struct exclude {
    const mn_message *items;
    size_t n;
};

static int in_window(const struct exclude *x, int64_t id)
{
    for (size_t i = 0; i < x->n; i++)
        if (x->items[i].id == id)
            return 1;
    return 0;
}

mn_status mn__rag_inject(mn_db *db, const mn_context_opts *o, const mn_session *s, struct mn_built *b)
{
    /* rag 0: the configured memory.rag.* (seed 000's rag section); negative: off */
    int from_config = o->rag == 0;
    if (o->rag < 0 || (from_config && !mn_config_bool(db->cfg, "memory.rag.enabled")))
        return MN_OK;
    if (o->rag_top_k > 100)
        return mn__err(MN_INVALID, "rag_top_k: %zu is over the maximum of 100", o->rag_top_k);
    if (o->rag_min_similarity > 1 || o->rag_min_similarity < -1 || isnan(o->rag_min_similarity))
        return mn__err(MN_INVALID, "rag_min_similarity: must be from -1 to 1 (0: the default 0.7)");
    if ((unsigned)o->rag_scope > MN_RAG_SCOPE_ALL)
        return mn__err(MN_INVALID, "rag_scope: %d is not session (0) or all (1)", (int)o->rag_scope);
    size_t top_k = o->rag_top_k ? o->rag_top_k : (size_t)mn_config_int(db->cfg, "memory.rag.top_k");
    double min_sim = o->rag_min_similarity == 0 ? mn_config_real(db->cfg, "memory.rag.min_similarity")
                                                : o->rag_min_similarity;
    min_sim = min_sim < 0 ? 0 : min_sim;
    struct mn_window *w = &b->w;
    if (!b->extra && !(b->extra = json_object()))
        return mn__nomem();
    json_t *rep = json_pack("{s:b, s:s, s:I, s:f, s:[]}", "enabled", 1, "scope",
                            o->rag_scope == MN_RAG_SCOPE_ALL ? "all" : "session", "top_k", (json_int_t)top_k,
                            "min_similarity", min_sim, "injected");
    if (!rep || json_object_set_new(b->extra, "rag", rep) ||
        (from_config && json_object_set_new(rep, "source", json_string("memory.rag.enabled"))))
        return mn__nomem();
    mn_message *q = NULL;
    for (size_t i = w->count; i-- > 0 && !q;)
        if (w->items[i].role == MN_ROLE_USER && w->items[i].content && w->items[i].id > 0)
            q = &w->items[i];
    if (!q)
        return mn_json_set_str(rep, "skipped", "no user message in the context");
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    if (o->rag_scope == MN_RAG_SCOPE_ALL)
        f.ns = s->ns;
    else
        f.session_id = s->id;
    int semantic = embedder_configured(db);
    mn_search_hits *hits = NULL;
    mn_status rc = run_search(db, q->content, semantic ? MN_SEARCH_SEMANTIC : MN_SEARCH_KEYWORD, RAG_OVERFETCH, &f,
                              semantic ? min_sim : 0, &hits);
    if (rc == MN_UNAVAILABLE || rc == MN_CONFLICT) { /* retrieval failing never fails the context */
        mn_json_set_str(rep, "skipped", mn_errmsg());
        mn__err_clear();
        return MN_OK;
    }
    if (rc)
        return rc;
    json_object_set_new(rep, "mode", json_string(semantic ? "semantic" : "keyword"));
    if (semantic) /* messages of the scope the semantic search could not see yet */
        json_object_set_new(rep, "not_embedded", json_integer(hits->not_embedded));
    struct exclude x = {w->items, w->count};
    size_t keep = 0;
    for (size_t i = 0; i < hits->count && keep < top_k; i++) /* compact: drop what the context has */
        if (!in_window(&x, hits->items[i].message.id))
            hits->items[keep++] = hits->items[i];
    /* The injection stays within max_tokens: the most relevant hits that fit go in, the rest
     * are reported as left out for the budget. */
    struct mn_buf block = MN_BUF_INIT;
    size_t used = 0;
    int64_t before = q->tokens, total = w->system_tokens + w->message_tokens + w->framing_tokens;
    char *text = NULL;
    for (size_t n = keep; n > 0 && !rc && !text; n--) {
        mn_buf_reset(&block);
        if ((rc = rag_block(db, hits->items, n, 0, &block, &used)) || (rc = mn_buf_adds(&block, RAG_QUESTION)) ||
            (rc = mn_buf_adds(&block, q->content)))
            break;
        mn_message probe = *q;
        probe.content = block.data;
        if (total - before + mn_message_tokens(db->tk, &probe) <= w->max_tokens) {
            text = mn_arena_strndup(&w->arena, block.data, block.len);
            if (!text)
                rc = mn__nomem();
        }
    }
    if (!rc && !text) {
        used = 0;
        if (keep)
            json_object_set_new(rep, "skipped", json_string("no room within max_tokens"));
    }
    json_t *inj = json_object_get(rep, "injected");
    for (size_t i = 0; !rc && i < used; i++) {
        const mn_search_hit *h = &hits->items[i];
        json_t *e = json_pack("{s:I, s:s, s:s, s:f}", "id", (json_int_t)h->message.id, "session_id",
                              h->message.session_id, "role", mn_role_name(h->message.role), "score", h->score);
        if (!e || json_array_append_new(inj, e))
            rc = mn__nomem();
    }
    if (!rc && text) {
        q->content = text;
        q->tokens = mn_message_tokens(db->tk, q);
        w->message_tokens += q->tokens - before;
        json_object_set_new(rep, "query_message_id", json_integer(q->id));
        json_object_set_new(rep, "tokens_added", json_integer(q->tokens - before));
        json_object_set_new(rep, "left_out_for_budget", json_integer((json_int_t)(keep - used)));
    }
    mn_buf_release(&block);
    mn_search_hits_free(hits);
    return rc;
}
