/*
 * context.c — the entry of the context pipeline (docs/context.md): the handle's configuration
 * turned into the settings of src/context (mn_strategy_cfg), the summariser for a build or a
 * compaction, the offload folder; then memories (memories.c), load → govern → plan → fold →
 * layout in src/context/strategy.c, RAG (rag.c) and rendering (src/context/render.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"
#include "store/target.h"
#include "context/context.h"
#include "store/records.h"
#include "summarize/summarize.h"
#include "util/abi.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

int mn__strategy_known(const char *strategy)
{
    static const char *const names[] = {"window", "summary", "chunked", "hybrid"};
    for (size_t i = 0; strategy && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(strategy, names[i]) == 0)
            return 1;
    return 0;
}

void mn__split_budget(int64_t model_window, mn_budget *out)
{
    mn__context_budget_split(model_window, &out->response, &out->history, &out->files);
}

/* The settings of the strategies from the configuration. */
static void strategy_cfg(const mn_db *db, mn_strategy_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->max_messages = db->settings.context_max_history_messages;
    c->trigger_percent = db->settings.context_summary_trigger_percent;
    c->tail_turns = db->settings.context_tail_turns;
    c->chunk_threshold = db->settings.context_chunk_threshold_tokens;
    c->prompt_budget = db->settings.context_prompt_budget_tokens;
    c->hybrid_recent = db->settings.context_hybrid_recent_messages;
    c->reserve_tokens = db->settings.context_reserve_tokens;
    c->safety_margin = db->settings.context_safety_margin;
    c->claim_ms = db->settings.summarizer_claim_seconds * 1000;
    c->retry_gap = db->settings.summarizer_retry_after_messages;
    c->model_window = db->settings.context_model_window;
    c->gov.tk = db->tk;
    c->gov.trim_chars = db->settings.context_tool_output_trim_chars;
    c->gov.offload = strcmp(db->settings.context_tool_output_offload, "on") == 0;
    c->gov.protect_tokens = db->settings.context_tool_output_protect_tokens;
    c->gov.protect_messages = db->settings.context_tool_output_protect_messages;
    c->gov.offload_threshold = db->settings.context_tool_output_offload_threshold_tokens;
    c->gov.loop_repeat = db->settings.context_loop_repeat;
}

/* context.summary_token_cap, or (0, the default) a quarter of the context's budget, at least
 * 256 tokens: the summary's share follows the budget it is folded for — within what the
 * summariser's input may hold (summarizer.input_budget_tokens ≥ 2 × cap + 264). */
static int64_t summary_cap(const mn_db *db, int64_t max_tokens)
{
    int64_t cap = db->settings.context_summary_token_cap;
    if (cap > 0)
        return cap;
    int64_t most = (db->settings.summarizer_input_budget_tokens - 264) / 2;
    cap = max_tokens / 4 > 256 ? max_tokens / 4 : 256;
    return cap < most ? cap : most > 16 ? most : 16;
}

struct env_store {
    mn_strategy_env env;
    char dir[4096];
    char err[512];
};

/* The user's data directory ($XDG_DATA_HOME/mnemo, else ~/.local/share/mnemo), made when
 * missing; "" when it cannot be (offloading then fails and is counted as failed). */
static void data_dir(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int n = xdg && *xdg ? snprintf(out, cap, "%s/mnemo", xdg)
                        : snprintf(out, cap, "%s/.local/share/mnemo", home && *home ? home : ".");
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
        return;
    }
    for (char *p = out + 1; *p; p++) /* like mkdir -p */
        if (*p == '/') {
            *p = '\0';
            mkdir(out, 0700);
            *p = '/';
        }
    if (mkdir(out, 0700) != 0 && errno != EEXIST)
        out[0] = '\0';
}

void mn__offload_dir(const mn_db *db, char *out, size_t cap)
{
    if (!mn__store_target_folder(db->path, out, cap))
        data_dir(out, cap); /* PostgreSQL, an in-memory database: no folder of its own */
}

/* The summariser for automatic folds (summarizer.auto_model when set) or for mn_compact. A
 * summariser that cannot be opened is not an error here: folds fail with the reason. (A build's
 * fold deadline travels with each call, mn_sum_input.deadline_ms.) */
static void open_env(mn_db *db, int automatic, struct env_store *e)
{
    memset(e, 0, sizeof *e);
    e->env.st = db->store;
    e->env.tk = db->tk;
    mn__offload_dir(db, e->dir, sizeof e->dir);
    mn_summarizer_cfg sc;
    memset(&sc, 0, sizeof sc);
    sc.name = db->settings.summarizer_name;
    sc.protocol = db->settings.summarizer_protocol;
    sc.base_url = db->settings.summarizer_base_url;
    sc.model = db->settings.summarizer_model;
    if (automatic && *db->settings.summarizer_auto_model)
        sc.model = db->settings.summarizer_auto_model;
    const char *key_env = db->settings.summarizer_api_key_env;
    sc.api_key = *key_env ? getenv(key_env) : NULL;
    sc.timeout_ms = db->settings.summarizer_timeout_ms;
    sc.backoff_ms = db->settings.summarizer_backoff_ms;
    sc.retries = (int)db->settings.summarizer_retries;
    sc.input_budget = db->settings.summarizer_input_budget_tokens;
    sc.prompt_file = db->settings.summarizer_prompt_file;
    mn_summarizer *s = NULL;
    if (mn__summarizer_open(&sc, &s) != MN_OK) {
        snprintf(e->err, sizeof e->err, "%s", mn_errmsg());
        mn__err_clear();
        e->env.sum_err = e->err;
        return;
    }
    e->env.sum = s;
}

static void close_env(struct env_store *e) { mn__summarizer_free(e->env.sum); }

/* A build's fold goes to the handle's queue (mn_fold_queue_set) as a job. */
static int queue_bridge(void *user, const mn_strategy_cfg *cfg, const char *session_id)
{
    mn_db *db = user;
    mn_fold_job job = {session_id, cfg->strategy, cfg->max_tokens, cfg->model_window};
    return db->fold_queue ? db->fold_queue(db->fold_queue_user, &job) : -1;
}

mn_status mn__assemble_context(mn_db *db, const mn_session *s, const char *strategy, int64_t max_tokens,
                               int64_t model_window, int fold_mode, int detail, struct mn_built *b)
{
    mn_strategy_cfg c;
    strategy_cfg(db, &c);
    c.strategy = strategy;
    c.max_tokens = max_tokens;
    c.summary_cap = summary_cap(db, max_tokens);
    c.model_window = model_window;
    c.fold_mode = fold_mode;
    /* background without a worker: fold here, within context.fold_timeout_ms (0: never) */
    int64_t timeout = db->settings.context_fold_timeout_ms;
    if (fold_mode == MN_CONTEXT_FOLD_BACKGROUND && !db->fold_queue) {
        if (timeout == 0)
            c.fold_mode = MN_CONTEXT_FOLD_OFF;
        else
            c.fold_deadline_ms = mn__clock_now_ms() + timeout;
    }
    struct env_store e;
    open_env(db, 1, &e);
    e.env.queue = db->fold_queue ? queue_bridge : NULL;
    e.env.queue_user = db;
    c.gov.offload_dir = e.dir;
    if (detail && !(c.gov.marks = json_object())) {
        close_env(&e);
        return mn__nomem();
    }
    mn_status rc = mn__context_assemble(&e.env, &c, s, b);
    json_decref(c.gov.marks);
    close_env(&e);
    return rc;
}

mn_status mn__compact_context(mn_db *db, const mn_session *s, const char *instructions, json_t **event)
{
    mn_strategy_cfg c;
    strategy_cfg(db, &c);
    c.strategy = "compact";
    c.instructions = instructions;
    c.summary_cap = summary_cap(db, db->settings.memory_max_history_tokens);
    struct env_store e;
    open_env(db, 0, &e);
    mn_status rc = mn__context_compact(&e.env, &c, s, event);
    close_env(&e);
    return rc;
}

struct context_impl {
    mn_context pub;
    char *rendered, *report;
};

/* Shortfall and over_budget of the report against max_tokens, and the pre-flight's need, after
 * `added` tokens went into a built context (the memories' block, retrieved messages). */
void mn__built_fix_budget(struct mn_built *b, int64_t max_tokens, int64_t added)
{
    struct mn_window *w = &b->w;
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens;
    w->max_tokens = max_tokens;
    w->over_budget = total > max_tokens;
    json_object_set_new(b->extra, "over_budget", json_boolean(w->over_budget));
    json_object_set_new(b->extra, "shortfall", json_integer(total > max_tokens ? total - max_tokens : 0));
    json_t *pf = json_object_get(b->extra, "preflight");
    if (json_is_object(pf) && added) {
        json_int_t needed = json_integer_value(json_object_get(pf, "needed")) + added;
        json_object_set_new(pf, "needed", json_integer(needed));
        json_object_set_new(pf, "fits", json_boolean(needed <= json_integer_value(json_object_get(pf, "model_window"))));
    }
}

/* The history of the context within max_tokens - reserve, with the memories' block (b zeroed):
 * memories first take what they need of the budget; the history gets the rest, and the block is
 * fitted again into what the history's newest unit left (docs/context.md). */
static mn_status build_history(mn_db *db, const mn_session *s, const char *strategy, int64_t max_tokens,
                               int64_t reserve, int64_t model_window, int fold_mode, int detail,
                               struct mn_memctx *mem, struct mn_built *b)
{
    int64_t planned = mn__memories_planned(mem), history = max_tokens - reserve - planned;
    mn_status rc = mn__assemble_context(db, s, strategy, history > 0 ? history : 1, model_window, fold_mode, detail, b);
    if (!rc && mem)
        rc = mn__memories_place(db, mem, b, max_tokens - reserve);
    /* the block gave up some of its share (cut, or left out, for the newest unit): the history is
     * built again with what the block keeps, else those tokens went to nobody. The block only
     * shrinks, so it fits the same again. */
    int64_t block = mn__memories_planned(mem);
    if (!rc && mem && block < planned) {
        mn__built_release(b);
        memset(b, 0, sizeof *b);
        history = max_tokens - reserve - block;
        rc = mn__assemble_context(db, s, strategy, history > 0 ? history : 1, model_window, fold_mode, detail, b);
        if (!rc)
            rc = mn__memories_place(db, mem, b, max_tokens - reserve);
    }
    return rc;
}

mn_status mn__build_context(mn_db *db, const mn_session *s, const char *strategy, int64_t max_tokens,
                            int64_t model_window, int fold_mode, const mn_context_opts *opts, mn_context **out)
{
    struct mn_built b;
    memset(&b, 0, sizeof b);
    struct mn_memctx *mem = NULL;
    struct mn_ragctx *rag = NULL;
    int detail = (opts->flags & MN_CONTEXT_DETAIL) != 0;
    mn_status rc = mn__memories_plan(db, opts, s, max_tokens, &mem);
    if (!rc)
        rc = build_history(db, s, strategy, max_tokens, 0, model_window, fold_mode, detail, mem, &b);
    /* retrieval takes its share from a history that did not all fit: built again without it
     * (a due fold ran or was queued by the first build) */
    if (!rc)
        rc = mn__rag_plan(db, opts, s, &b, max_tokens, &rag);
    if (!rc && mn__rag_reserve(rag) > 0) { /* the fold was the first build's to run or queue */
        json_t *fold = json_incref(json_object_get(b.extra, "fold"));
        mn__built_release(&b);
        memset(&b, 0, sizeof b);
        rc = build_history(db, s, strategy, max_tokens, mn__rag_reserve(rag), model_window, MN_CONTEXT_FOLD_OFF,
                           detail, mem, &b);
        if (!rc && fold && b.extra)
            json_object_set(b.extra, "fold", fold);
        json_decref(fold);
    }
    if (!rc)
        rc = mn__rag_inject(db, rag, &b, max_tokens);
    mn__rag_free(rag);
    mn__free_memories(mem);
    const struct mn_window *wp = &b.w;
    struct context_impl *c = NULL;
    if (!rc && !(c = calloc(1, sizeof *c)))
        rc = mn__nomem();
    if (!rc)
        rc = mn__context_render_ex(wp, strategy, mn__token_name(db->tk), opts->format, b.extra, &c->rendered,
                                  &c->report);
    if (!rc) {
        int64_t kept = (int64_t)wp->count - wp->synthetic;
        c->pub.rendered = c->rendered;
        c->pub.report = c->report;
        c->pub.tokens = wp->system_tokens + wp->message_tokens + wp->framing_tokens;
        c->pub.kept = (size_t)kept;
        c->pub.dropped = (size_t)(wp->total_messages > kept ? wp->total_messages - kept : 0);
        *out = &c->pub;
    } else
        free(c);
    mn__built_release(&b);
    return rc;
}

void mn__free_context(mn_context *ctx)
{
    if (!ctx)
        return;
    struct context_impl *c = (struct context_impl *)ctx;
    free(c->rendered);
    free(c->report);
    free(c);
}

mn_status mn__context_for(mn_db *db, const char *canon, const mn_context_opts *opts, mn_context **out)
{
    static const mn_context_opts defaults = MN_CONTEXT_OPTS_INIT;
    mn_status rc;
    if (!opts)
        opts = &defaults;
    mn_context_opts o = defaults; /* its first layout ended at format: those callers get the defaults */
    if ((rc = MN__ABI_LOAD(mn_context_opts, &o, opts, format)))
        return rc;
    opts = &o;
    const char *strategy = opts->strategy ? opts->strategy : db->settings.memory_strategy;
    if (!mn__strategy_known(strategy))
        return mn__err(MN_INVALID, "strategy: '%s' is not one of: window, summary, chunked, hybrid", strategy);
    int64_t model_window = opts->model_window ? opts->model_window : db->settings.context_model_window;
    if (model_window < 0 || model_window > 100000000)
        return mn__err(MN_INVALID, "model_window: %lld is not from 0 to 100000000", (long long)model_window);
    const unsigned known = MN_CONTEXT_NO_FOLD | MN_CONTEXT_DETAIL;
    if (opts->flags & ~known)
        return mn__err(MN_INVALID, "flags: unknown bits 0x%x", opts->flags & ~known);
    if (opts->fold < MN_CONTEXT_FOLD_BACKGROUND || opts->fold > MN_CONTEXT_FOLD_OFF)
        return mn__err(MN_INVALID, "fold: %d is not background (0), sync (1) or off (2)", opts->fold);
    if ((opts->flags & MN_CONTEXT_NO_FOLD) && opts->fold == MN_CONTEXT_FOLD_SYNC)
        return mn__err(MN_INVALID, "flags: MN_CONTEXT_NO_FOLD never folds; it does not go with fold sync");
    int fold_mode = opts->flags & MN_CONTEXT_NO_FOLD ? MN_CONTEXT_FOLD_OFF : opts->fold;
    int64_t max_tokens = opts->max_tokens;
    if (!max_tokens && model_window > 0) { /* the history share of the window (mn_budget_split) */
        mn_budget split;
        mn__split_budget(model_window, &split);
        max_tokens = split.history > 0 ? split.history : 1;
    }
    if (!max_tokens)
        max_tokens = db->settings.memory_max_history_tokens;
    if (max_tokens < 1 || max_tokens > 100000000)
        return mn__err(MN_INVALID, "max_tokens: %lld is not from 1 to 100000000", (long long)max_tokens);
    if ((unsigned)opts->format > MN_FORMAT_TEXT)
        return mn__err(MN_INVALID, "format: %d is not a format", (int)opts->format);
    mn_session *s = NULL;
    rc = mn__live_session(db, canon, &s);
    if (rc)
        return rc;
    rc = mn__build_context(db, s, strategy, max_tokens, model_window, fold_mode, opts, out);
    mn__records_session_free(s);
    return rc;
}
