/*
 * memories.c — long-term memories in a built context (opts->memories; docs/context.md
 * "Memories"). Before the history is laid out, plan: the memory blocks of the session's scope and
 * the memories relevant to its last user message, fitted into what the system prompt leaves, so
 * that the history gets the rest. After: place the block right after the system prompt, fitted
 * again into what the history's mandatory part left (src/context/memblock.c), and report it.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "context/context.h"
#include "memory/fact.h"
#include "memory/message.h"
#include "store/records.h"
#include "store/store_memory.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define MAX_CANDIDATES 1000 /* memories read before the scope's own filters (mn_memory_query's limit) */
#define QUERY_LOOKBACK 200  /* newest messages searched for the last user message */

struct mn_memctx {
    mn_memories *pinned, *relevant;
    mn_memblock block;
    const char *session_id; /* the session's, borrowed */
    json_t *rep; /* the report's "memories" member */
};

int64_t mn__memories_planned(const struct mn_memctx *mc) { return mc ? mn__memblock_cost(&mc->block) : 0; }

void mn__free_memories(struct mn_memctx *mc)
{
    if (!mc)
        return;
    mn__memblock_release(&mc->block);
    mn__memories_list_free(mc->pinned);
    mn__memories_list_free(mc->relevant);
    json_decref(mc->rep);
    free(mc);
}

/* The session's user and agent, from its metadata's "user_id" / "agent_id" strings. */
struct scope {
    const mn_session *s;
    json_t *meta;
    const char *user_id, *agent_id;
};

static void scope_init(struct scope *sc, const mn_session *s)
{
    sc->s = s;
    sc->meta = s->metadata ? json_loads(s->metadata, 0, NULL) : NULL;
    sc->user_id = json_string_value(json_object_get(sc->meta, "user_id"));
    sc->agent_id = json_string_value(json_object_get(sc->meta, "agent_id"));
}

static int same_or_unset(const char *bound, const char *known)
{
    return !bound || (known && strcmp(bound, known) == 0);
}

/* A memory of the namespace belongs to this session's context unless it is bound to another
 * session, user or agent (a user or agent the session does not name counts as another). */
static int in_scope(const struct scope *sc, const mn_memory *m)
{
    return same_or_unset(m->session_id, sc->s->id) && same_or_unset(m->user_id, sc->user_id) &&
           same_or_unset(m->agent_id, sc->agent_id);
}

/* Keeps the items of list in scope, at most max (0: all), in their order; releases the rest. */
static void keep_in_scope(const struct scope *sc, mn_memories *list, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < list->count; i++) {
        if (in_scope(sc, &list->items[i]) && (!max || n < max)) {
            mn_memory keep = list->items[i];
            list->items[i] = list->items[n];
            list->items[n++] = keep;
        }
    }
    for (size_t i = n; i < list->count; i++)
        mn__fact_release(&list->items[i]);
    list->count = n;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const mn_memory *)a)->id, ((const mn_memory *)b)->id);
}

/* The newest user message of session s (live history), NULL when there is none; *msgs owns it. */
static mn_status last_user_message(mn_db *db, const mn_session *s, mn_messages **msgs, const mn_message **q)
{
    *q = NULL;
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.limit = QUERY_LOOKBACK;
    ho.tail = 1;
    mn_status rc = db->store->ops->history(db->store, s->id, &ho, NULL, msgs);
    for (size_t i = rc ? 0 : (*msgs)->count; i-- > 0 && !*q;)
        if ((*msgs)->items[i].role == MN_ROLE_USER && (*msgs)->items[i].content && *(*msgs)->items[i].content)
            *q = &(*msgs)->items[i];
    return rc;
}

/* The relevant memories (not blocks) of the scope for the last user message, best first. A
 * search that cannot run is reported as "skipped", never an error. */
static mn_status find_relevant(mn_db *db, const struct scope *sc, size_t top_k, struct mn_memctx *mc)
{
    mn_messages *msgs = NULL;
    const mn_message *q = NULL;
    mn_status rc = last_user_message(db, sc->s, &msgs, &q);
    if (!rc && !q)
        rc = mn__json_set_str(mc->rep, "skipped", "no user message in the session");
    if (rc || !q) {
        mn__records_message_list_free(msgs);
        return rc;
    }
    json_object_set_new(mc->rep, "query_message_id", json_integer(q->id));
    int semantic = mn__embedder_configured(db);
    json_object_set_new(mc->rep, "mode", json_string(semantic ? "semantic" : "keyword"));
    mn_memory_query mq = MN_MEMORY_QUERY_INIT;
    mq.ns = sc->s->ns;
    mq.pinned = 0;
    rc = mn__memory_search_run(db, q->content, semantic ? MN_SEARCH_SEMANTIC : MN_SEARCH_KEYWORD, &mq,
                               MAX_CANDIDATES, &mc->relevant);
    mn__records_message_list_free(msgs);
    if (rc == MN_UNAVAILABLE || rc == MN_CONFLICT) {
        rc = mn__json_set_str(mc->rep, "skipped", mn_errmsg());
        mn__err_clear();
        return rc;
    }
    if (!rc)
        keep_in_scope(sc, mc->relevant, top_k);
    return rc;
}

static mn_status find_pinned(mn_db *db, const struct scope *sc, struct mn_memctx *mc)
{
    mn_memory_query mq = MN_MEMORY_QUERY_INIT;
    mq.ns = sc->s->ns;
    mq.pinned = 1;
    mn_store_memory_query sq = {&mq, NULL, 0, NULL, 0, mn__clock_now_ms(), MAX_CANDIDATES, 0, NULL, 0};
    mn_status rc = mn__memory_query_run(db, &sq, &mc->pinned);
    if (!rc)
        keep_in_scope(sc, mc->pinned, 0);
    if (!rc && mc->pinned->count > 1)
        qsort(mc->pinned->items, mc->pinned->count, sizeof *mc->pinned->items, by_id); /* oldest first */
    return rc;
}

mn_status mn__memories_plan(mn_db *db, const mn_context_opts *o, const mn_session *s, int64_t max_tokens,
                            struct mn_memctx **out)
{
    *out = NULL;
    int from_config = o->memories == 0;
    if (o->memories_top_k > MN_CONTEXT_MAX_MEMORIES_TOP_K)
        return mn__err(MN_INVALID, "memories_top_k: %zu is over the maximum of %d", o->memories_top_k,
                       MN_CONTEXT_MAX_MEMORIES_TOP_K);
    if (o->memories < 0 || (from_config && !db->settings.memory_context_enabled))
        return MN_OK;
    size_t top_k = o->memories_top_k ? o->memories_top_k : (size_t)db->settings.memory_context_top_k;
    struct mn_memctx *mc = calloc(1, sizeof *mc);
    if (!mc || !(mc->rep = json_pack("{s:b, s:I}", "enabled", 1, "top_k", (json_int_t)top_k)) ||
        (from_config && json_object_set_new(mc->rep, "source", json_string("memory.context.enabled")))) {
        mn__free_memories(mc);
        return mn__nomem();
    }
    mc->session_id = s->id;
    struct scope sc;
    scope_init(&sc, s);
    mn_status rc = find_pinned(db, &sc, mc);
    if (!rc)
        rc = find_relevant(db, &sc, top_k, mc);
    json_decref(sc.meta);
    const mn_memories *p = mc->pinned, *r = mc->relevant;
    if (!rc)
        rc = mn__memblock_init(&mc->block, db->tk, p->items, p->count, r ? r->items : NULL, r ? r->count : 0);
    /* the room before the history: the budget less the system prompt and the fixed framing */
    int64_t room = max_tokens - MN_FRAME_REPLY;
    if (s->system_prompt)
        room -= (int64_t)mn__token_count(db->tk, s->system_prompt, strlen(s->system_prompt)) + MN_FRAME_PER_MESSAGE;
    if (!rc)
        rc = mn__memblock_fit(&mc->block, db->tk, room);
    if (rc)
        mn__free_memories(mc);
    else
        *out = mc;
    return rc;
}

static json_t *item_json(const mn_memblock_item *it)
{
    const mn_memory *m = it->m;
    json_t *e = json_pack("{s:s, s:I, s:s, s:b}", "id", m->id, "version", (json_int_t)m->version, "kind", m->kind,
                          "pinned", m->pinned);
    if (!e)
        return NULL;
    if (it->in)
        json_object_set_new(e, "tokens", json_integer(it->tokens));
    json_object_set_new(e, "score", m->pinned ? json_null() : json_real(m->score));
    if (it->in)
        json_object_set_new(e, "cut", json_boolean(it->cut));
    else
        json_object_set_new(e, "reason", json_string(it->left_out));
    return e;
}

mn_status mn__memories_place(mn_db *db, struct mn_memctx *mc, struct mn_built *b, int64_t max_tokens)
{
    struct mn_window *w = &b->w;
    if (!b->extra && !(b->extra = json_object()))
        return mn__nomem();
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens;
    mn_status rc = mn__memblock_fit(&mc->block, db->tk, max_tokens - total);
    int64_t cost = mn__memblock_cost(&mc->block);
    if (!rc && mc->block.text)
        rc = mn__window_put_first(w, mc->session_id, mc->block.text, mc->block.tokens);
    json_t *in = json_array(), *out = json_array();
    int64_t lines = 0;
    for (size_t i = 0; !rc && in && out && i < mc->block.n; i++) {
        const mn_memblock_item *it = &mc->block.items[i];
        lines += it->in ? it->tokens : 0;
        if (json_array_append_new(it->in ? in : out, item_json(it)))
            rc = mn__nomem();
    }
    if (!rc && (!in || !out))
        rc = mn__nomem();
    if (!rc) {
        /* tokens = the block's own tokens, counted whole; text_tokens: header, section lines and
         * the seams between lines, so that text_tokens + the items' tokens = tokens */
        json_object_set_new(mc->rep, "tokens", json_integer(mc->block.tokens));
        json_object_set_new(mc->rep, "framing", json_integer(cost ? MN_FRAME_PER_MESSAGE : 0));
        json_object_set_new(mc->rep, "text_tokens", json_integer(mc->block.text ? mc->block.tokens - lines : 0));
        json_object_set_new(mc->rep, "included", in);
        json_object_set_new(mc->rep, "left_out", out);
        in = out = NULL;
        if (json_object_set(b->extra, "memories", mc->rep))
            rc = mn__nomem();
    }
    json_decref(in);
    json_decref(out);
    if (!rc)
        mn__built_fix_budget(b, max_tokens, cost);
    return rc;
}
