/*
 * rag.c — retrieval-augmented context (docs/search.md, seed 000): the block of relevant past
 * messages for mn_relevant_context, and its injection into a built context (opts->rag) within
 * the build's budget, reported under "rag".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "context/context.h"
#include "memory/message.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

#define RAG_OVERFETCH 20
#define RAG_CUT_CHARS 200

/* "[ROLE]: content" with content cut at 200 characters ("..." when cut), as seed 000 does. */
static mn_status rag_line(struct mn_buf *b, const mn_message *m)
{
    const char *role = mn_role_name(m->role), *c = m->content ? m->content : "";
    mn_status rc = mn__buf_addc(b, '[');
    for (const char *p = role; !rc && *p; p++)
        rc = mn__buf_addc(b, (char)(*p - 32));
    size_t len = strlen(c), cut = mn__utf8_prefix(c, len, RAG_CUT_CHARS);
    if (!rc)
        rc = mn__buf_adds(b, "]: ");
    if (!rc)
        rc = mn__buf_add(b, c, cut);
    if (!rc && cut < len)
        rc = mn__buf_adds(b, "...");
    return rc;
}

static const char RAG_HEAD[] = "RELEVANT CONTEXT FROM PAST CONVERSATIONS:\n---\n";
static const char RAG_TAIL[] = "---";

/* The block for hits[0..n) within max_tokens (0: no limit); *used gets the hits kept. */
static mn_status rag_block(mn_db *db, const mn_search_hit *hits, size_t n, int64_t max_tokens, struct mn_buf *out,
                           size_t *used)
{
    struct mn_buf line = MN_BUF_INIT;
    mn_status rc = MN_OK;
    int64_t spent = 0;
    *used = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        mn__buf_reset(&line);
        if ((rc = rag_line(&line, &hits[i].message)) || (rc = mn__buf_addc(&line, '\n')))
            break;
        int64_t t = (int64_t)mn__token_count(db->tk, line.data, line.len);
        if (max_tokens && spent + t > max_tokens)
            break;
        spent += t;
        if (!out->len && (rc = mn__buf_adds(out, RAG_HEAD)))
            break;
        rc = mn__buf_add(out, line.data, line.len);
        ++*used;
    }
    if (!rc && out->len)
        rc = mn__buf_adds(out, RAG_TAIL);
    mn__buf_release(&line);
    return rc;
}

mn_status mn__find_relevant_context(mn_db *db, const char *query, int64_t max_tokens, const mn_search_filter *f,
                               char **text)
{
    mn_search_hits *hits = NULL;
    mn_status rc = mn__search_run(db, query, MN_SEARCH_AUTO, RAG_OVERFETCH, f, 0, &hits);
    struct mn_buf b = MN_BUF_INIT;
    size_t used;
    if (!rc)
        rc = rag_block(db, hits->items, hits->count, max_tokens, &b, &used);
    mn__free_search_hits(hits);
    if (!rc && !(*text = mn__buf_detach(&b, NULL)))
        rc = mn__nomem();
    mn__buf_release(&b);
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

struct mn_ragctx {
    json_t *rep;          /* the report's "rag" member */
    mn_search_hits *hits; /* best first; NULL: nothing to inject (rep says why) */
    size_t top_k;
    int64_t reserve;      /* tokens the history leaves for the block */
};

void mn__rag_free(struct mn_ragctx *r)
{
    if (!r)
        return;
    json_decref(r->rep);
    mn__free_search_hits(r->hits);
    free(r);
}

int64_t mn__rag_reserve(const struct mn_ragctx *r) { return r ? r->reserve : 0; }

/* The current turn's user message in the built context (the layout always keeps it). */
static mn_message *query_message(struct mn_window *w)
{
    for (size_t i = w->count; i-- > 0;)
        if (w->items[i].role == MN_ROLE_USER && w->items[i].content && w->items[i].id > 0)
            return &w->items[i];
    return NULL;
}

/* Tokens of the block (rag_block) of the first top_k hits not in w, its framing included. */
static mn_status block_cost(mn_db *db, const mn_search_hits *h, size_t top_k, const struct mn_window *w,
                            int64_t *cost)
{
    struct exclude x = {w->items, w->count};
    mn_search_hit *kept = malloc((h->count ? h->count : 1) * sizeof *kept);
    if (!kept)
        return mn__nomem();
    size_t n = 0, used;
    for (size_t i = 0; i < h->count && n < top_k; i++)
        if (!in_window(&x, h->items[i].message.id))
            kept[n++] = h->items[i];
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = rag_block(db, kept, n, 0, &b, &used);
    *cost = !rc && b.len ? (int64_t)mn__token_count(db->tk, b.data, b.len) + MN_FRAME_PER_MESSAGE : 0;
    mn__buf_release(&b);
    free(kept);
    return rc;
}

mn_status mn__rag_plan(mn_db *db, const mn_context_opts *o, const mn_session *s, struct mn_built *b,
                       int64_t max_tokens, struct mn_ragctx **out)
{
    *out = NULL;
    /* rag 0: the configured memory.rag.* (on by default) */
    int from_config = o->rag == 0;
    if (o->rag_top_k > 100)
        return mn__err(MN_INVALID, "rag_top_k: %zu is over the maximum of 100", o->rag_top_k);
    if (o->rag_min_similarity > 1 || o->rag_min_similarity < -1 || isnan(o->rag_min_similarity))
        return mn__err(MN_INVALID, "rag_min_similarity: must be from -1 to 1 (0: the default 0.7)");
    if ((unsigned)o->rag_scope > MN_RAG_SCOPE_SESSION)
        return mn__err(MN_INVALID, "rag_scope: %d is not the default (0), all (1) or session (2)", (int)o->rag_scope);
    if (o->rag < 0 || (from_config && !db->settings.memory_rag_enabled))
        return MN_OK;
    int all = o->rag_scope == MN_RAG_SCOPE_ALL ||
              (o->rag_scope == MN_RAG_SCOPE_DEFAULT && strcmp(db->settings.memory_rag_scope, "all") == 0);
    struct mn_ragctx *r = calloc(1, sizeof *r);
    if (!r)
        return mn__nomem();
    r->top_k = o->rag_top_k ? o->rag_top_k : (size_t)db->settings.memory_rag_top_k;
    double min_sim = o->rag_min_similarity == 0 ? db->settings.memory_rag_min_similarity : o->rag_min_similarity;
    min_sim = min_sim < 0 ? 0 : min_sim;
    int semantic = mn__embedder_configured(db);
    r->rep = json_pack("{s:b, s:s, s:I, s:f, s:I, s:s, s:[]}", "enabled", 1, "scope", all ? "all" : "session",
                       "top_k", (json_int_t)r->top_k, "min_similarity", min_sim, "share_percent",
                       (json_int_t)db->settings.memory_rag_share_percent, "mode",
                       semantic ? "hybrid" : "keyword", "injected");
    *out = r;
    if (!r->rep || (from_config && json_object_set_new(r->rep, "source", json_string("memory.rag.enabled"))))
        return mn__nomem();
    struct mn_window *w = &b->w;
    mn_message *q = query_message(w);
    if (!q)
        return mn__json_set_str(r->rep, "skipped", "no user message in the context");
    /* by default nothing is retrieved while the active history all fits: a clear or a turn limit
     * took the rest out on purpose; asked for (rag 1, or scope all), the search runs */
    if (from_config && !all && w->total_messages <= (int64_t)w->count - w->synthetic && !w->summarized)
        return mn__json_set_str(r->rep, "skipped", "the whole history is in the context");
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    if (all)
        f.ns = s->ns;
    else
        f.session_id = s->id;
    mn_status rc = mn__search_run(db, q->content, semantic ? MN_SEARCH_HYBRID : MN_SEARCH_KEYWORD,
                                  r->top_k + RAG_OVERFETCH, &f, semantic ? min_sim : 0, &r->hits);
    if (rc == MN_UNAVAILABLE || rc == MN_CONFLICT) { /* retrieval failing never fails the context */
        mn__json_set_str(r->rep, "skipped", mn_errmsg());
        mn__err_clear();
        return MN_OK;
    }
    if (rc)
        return rc;
    if (semantic) /* messages of the scope the semantic search could not see yet */
        json_object_set_new(r->rep, "not_embedded", json_integer(r->hits->not_embedded));
    int64_t cost = 0, share = max_tokens / 100 * db->settings.memory_rag_share_percent +
                          max_tokens % 100 * db->settings.memory_rag_share_percent / 100;
    if ((rc = block_cost(db, r->hits, r->top_k, w, &cost)))
        return rc;
    r->reserve = cost < share ? cost : share;
    return MN_OK;
}

mn_status mn__rag_inject(mn_db *db, struct mn_ragctx *r, struct mn_built *b, int64_t max_tokens)
{
    if (!r)
        return MN_OK;
    struct mn_window *w = &b->w;
    if (!b->extra && !(b->extra = json_object()))
        return mn__nomem();
    json_t *rep = r->rep;
    if (json_object_set(b->extra, "rag", rep))
        return mn__nomem();
    json_object_set_new(rep, "reserved", json_integer(r->reserve));
    mn_message *q = query_message(w);
    if (!r->hits || !q)
        return MN_OK;
    mn_search_hits *hits = r->hits;
    struct exclude x = {w->items, w->count};
    size_t keep = 0;
    for (size_t i = 0; i < hits->count && keep < r->top_k; i++) /* compact: drop what the context has */
        if (!in_window(&x, hits->items[i].message.id))
            hits->items[keep++] = hits->items[i];
    hits->count = keep;
    /* The block stays within max_tokens: the most relevant hits that fit go in, the rest are
     * reported as left out for the budget. It is a message of its own right before the current
     * turn's user message, which stays as it was said. A block's tokens grow with its lines, so
     * the most that fit are found by halving (lo fit, hi do not): all of them first, then
     * between, a few blocks counted rather than one for each hit left out. */
    struct mn_buf block = MN_BUF_INIT;
    size_t used = 0, lo = 0, hi = keep + 1, n = keep, built = 0;
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens, tokens = 0, lo_tokens = 0;
    mn_status rc = MN_OK;
    while (!rc && hi - lo > 1) {
        mn__buf_reset(&block);
        if ((rc = rag_block(db, hits->items, n, 0, &block, &used)))
            break;
        built = n;
        tokens = (int64_t)mn__token_count(db->tk, block.data, block.len);
        if (total + tokens + MN_FRAME_PER_MESSAGE <= max_tokens)
            lo = n, lo_tokens = tokens;
        else
            hi = n;
        n = lo + (hi - lo) / 2;
    }
    if (!rc && lo > 0 && built != lo) { /* the last block counted did not fit */
        mn__buf_reset(&block);
        rc = rag_block(db, hits->items, lo, 0, &block, &used);
    }
    tokens = lo_tokens;
    int fits = lo > 0;
    if (!rc && !fits) {
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
    size_t at = (size_t)(q - w->items);
    int64_t qid = q->id;
    if (!rc && fits && !(rc = mn__window_insert(w, at, MN_ROLE_USER, q->session_id, block.data, tokens))) {
        json_object_set_new(rep, "query_message_id", json_integer(qid));
        json_object_set_new(rep, "tokens_added", json_integer(tokens)); /* its framing: parts.framing */
        json_object_set_new(rep, "left_out_for_budget", json_integer((json_int_t)(keep - used)));
    }
    if (!rc)
        mn__built_fix_budget(b, max_tokens, fits ? tokens + MN_FRAME_PER_MESSAGE : 0);
    mn__buf_release(&block);
    return rc;
}
