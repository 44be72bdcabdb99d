/*
 * strategy.c — one build of a context, in stages: load (the stored summary and the messages
 * after it) → govern (tool-output governance over the loaded messages) → plan (plan.c, pure: is
 * a fold due) → fold (now, queued on a worker, or not at all) → layout (layout.c, pure) →
 * report. window (newest messages that fit, after the summary once there is one), summary
 * (seed 001: head + summary + tail), chunked (seed 004: summary + raw turns within a prompt
 * budget) and hybrid (pinned units + summary + recent) differ only in what they load and plan.
 * Design notes and pictures: docs/context.md.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "context/context.h"
#include "store/records.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

#define INF_BUDGET (INT64_MAX / 4)

void mn__context_budget_split(int64_t window, int64_t *response, int64_t *history, int64_t *files)
{
    int64_t r = window / 4 < 16000 ? window / 4 : 16000;
    int64_t rest = window - r;
    int64_t h = rest / 3 < 50000 ? rest / 3 : 50000;
    *response = r;
    *history = h;
    *files = rest - h;
}

void mn__built_release(struct mn_built *b)
{
    mn__window_release(&b->w);
    for (int i = 0; i < 3; i++)
        mn__window_release(&b->parts[i]);
    json_decref(b->extra);
    b->extra = NULL;
}

static void add_extra(struct mn_built *b, const char *key, json_t *v)
{
    if (b->extra && v)
        json_object_set_new(b->extra, key, v);
    else
        json_decref(v);
}

/* ---- loading --------------------------------------------------------------------------------- */

static mn_status load_after(const mn_strategy_env *env, const char *sid, int64_t after, size_t limit, mn_messages **out)
{
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.after_seq = after;
    o.limit = limit;
    return env->st->ops->history(env->st, sid, &o, NULL, out);
}

struct collect {
    struct mn_messages_impl *l;
    mn_status rc;
};

static int collect_one(void *user, const mn_message *m)
{
    struct collect *c = user;
    mn_message *it = mn__records_message_push(c->l);
    if (!it || mn__records_message_fill(&c->l->arena, it, m)) {
        c->rc = mn__nomem();
        return 1;
    }
    return 0;
}

static mn_status load_pinned(const mn_strategy_env *env, const char *sid, int64_t upto, mn_messages **out)
{
    struct collect c = {mn__records_message_list_new(), MN_OK};
    if (!c.l)
        return mn__nomem();
    mn_status rc = upto > 0 ? env->st->ops->pinned_units(env->st, sid, upto, collect_one, &c) : MN_OK;
    if (!rc)
        rc = c.rc;
    if (rc) {
        mn__records_message_list_free(&c.l->pub);
        return rc;
    }
    *out = &c.l->pub;
    return MN_OK;
}

/* Messages the summary stands for, to spend room the summary leaves on them verbatim: newest
 * first, seq in (after, upto], while they cost no more than budget; oldest first into the list,
 * never starting on a tool result. */
struct covered {
    struct mn_messages_impl *l;
    int64_t after, upto, left;
    mn_status rc;
};

static int collect_covered(void *user, const mn_message *m)
{
    struct covered *c = user;
    if (m->seq > c->upto)
        return 0;
    if (m->seq <= c->after || (c->left -= mn__context_cost(m)) < 0)
        return 1;
    return collect_one(&(struct collect){c->l, MN_OK}, m) ? (c->rc = mn__nomem(), 1) : 0;
}

static mn_status load_covered(const mn_strategy_env *env, const char *sid, int64_t after, int64_t upto,
                              int64_t budget, mn_messages **out)
{
    struct covered c = {mn__records_message_list_new(), after, upto, budget, MN_OK};
    if (!c.l)
        return mn__nomem();
    mn_status rc = upto > after ? env->st->ops->scan_newest(env->st, sid, collect_covered, &c) : MN_OK;
    if (!rc)
        rc = c.rc;
    if (rc) {
        mn__records_message_list_free(&c.l->pub);
        return rc;
    }
    mn_message *it = c.l->pub.items;
    size_t n = c.l->pub.count;
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) { /* oldest to newest */
        mn_message t = it[i];
        it[i] = it[j - 1];
        it[j - 1] = t;
    }
    size_t lead = 0; /* results whose call did not fit: not shown, not counted */
    while (lead < n && it[lead].role == MN_ROLE_TOOL)
        lead++;
    if (lead)
        memmove(it, it + lead, (n - lead) * sizeof *it);
    c.l->pub.count = n - lead;
    *out = &c.l->pub;
    return MN_OK;
}

/* Whether part w holds the message of this seq. */
static int in_part(const struct mn_window *w, int64_t seq)
{
    for (size_t i = 0; i < w->count; i++)
        if (w->items[i].seq == seq)
            return 1;
    return 0;
}

/* Removes from l the messages `shown` holds (by seq); l stays oldest first, never starting on a
 * tool result. */
static void drop_shown(mn_messages *l, const mn_messages *shown)
{
    mn_message *it = (mn_message *)l->items;
    size_t k = 0;
    for (size_t i = 0; i < l->count; i++) {
        int dup = 0;
        for (size_t j = 0; j < shown->count && !dup; j++)
            dup = shown->items[j].seq == it[i].seq;
        if (!dup && !(k == 0 && it[i].role == MN_ROLE_TOOL))
            it[k++] = it[i];
    }
    l->count = k;
}

static void loaded_release(struct mn_loaded *ld)
{
    mn_summary_free(ld->sum);
    mn__records_message_list_free(ld->buf);
    mn__records_message_list_free(ld->head);
    mn__records_message_list_free(ld->pinned);
    mn__records_message_list_free(ld->covered);
    memset(ld, 0, sizeof *ld);
}

/* ---- governing ------------------------------------------------------------------------------- */

static int64_t tool_tokens(const mn_message *m, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        if (m[i].role == MN_ROLE_TOOL)
            t += m[i].tokens;
    return t;
}

/* Validated units of msgs with governance applied, into w (which keeps the strings). */
static mn_status govern(struct mn_window *w, struct mn_gov *g, const mn_message *msgs, size_t n)
{
    w->gov = g;
    mn_status rc = mn__window_walk(w, msgs, n, INF_BUDGET, NULL);
    w->gov = NULL;
    return rc;
}

/* ---- reporting ------------------------------------------------------------------------------- */

static json_t *preflight(const mn_strategy_cfg *cfg, int64_t tokens)
{
    if (cfg->model_window <= 0)
        return json_null();
    int64_t resp, hist, files;
    mn__context_budget_split(cfg->model_window, &resp, &hist, &files);
    int64_t reserve = cfg->reserve_tokens > 0 ? cfg->reserve_tokens : resp;
    int64_t needed = tokens + reserve + cfg->safety_margin;
    return json_pack("{s:I, s:I, s:I, s:I, s:b}", "model_window", (json_int_t)cfg->model_window, "reserve_tokens",
                     (json_int_t)reserve, "safety_margin", (json_int_t)cfg->safety_margin, "needed",
                     (json_int_t)needed, "fits", needed <= cfg->model_window);
}

static const char *mode_name(int mode)
{
    return mode == MN_CONTEXT_FOLD_SYNC ? "sync" : mode == MN_CONTEXT_FOLD_OFF ? "off" : "background";
}

/* Sorts an array of {"seq", …} objects by seq (insertion sort: nearly sorted already). */
static void sort_by_seq(json_t *arr)
{
    for (size_t i = 1; i < json_array_size(arr); i++)
        for (size_t j = i; j > 0; j--) {
            json_t *x = json_array_get(arr, j - 1), *y = json_array_get(arr, j);
            if (json_integer_value(json_object_get(x, "seq")) <= json_integer_value(json_object_get(y, "seq")))
                break;
            json_incref(x);
            json_array_set(arr, j - 1, y);
            json_array_set_new(arr, j, x);
        }
}

/* MN_CONTEXT_DETAIL: every history message the build kept (seq, id, tokens as sent, fate kept,
 * trimmed or offloaded), then those a walk dropped as orphan results or unmatched calls (seq,
 * fate), in seq order each. The messages not listed are folded into the summary (seq up to its
 * covers_upto) or dropped for the budget. NULL on OOM. */
static json_t *detail(const struct mn_window *w, const struct mn_gov *g)
{
    json_t *a = json_array(), *kept = json_object();
    const char *key;
    json_t *v;
    char k[24];
    for (size_t i = 0; a && kept && i < w->count; i++) {
        const mn_message *m = &w->items[i];
        if (m->seq <= 0)
            continue; /* summary, marker */
        snprintf(k, sizeof k, "%lld", (long long)m->seq);
        const char *fate = json_string_value(json_object_get(g->marks, k));
        json_object_set_new(kept, k, json_true());
        json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:s}", "seq", (json_int_t)m->seq, "id", (json_int_t)m->id,
                                           "tokens", (json_int_t)m->tokens, "fate",
                                           fate && strncmp(fate, "dropped", 7) != 0 ? fate : "kept"));
    }
    json_t *gone = json_array();
    json_object_foreach(g->marks, key, v)
    {
        if (gone && !json_object_get(kept, key) && !strncmp(json_string_value(v), "dropped", 7))
            json_array_append_new(gone, json_pack("{s:I, s:s}", "seq", (json_int_t)strtoll(key, NULL, 10), "fate",
                                                  json_string_value(v)));
    }
    json_decref(kept);
    if (!a || !gone) {
        json_decref(a);
        json_decref(gone);
        return NULL;
    }
    /* json objects keep no order, nor does the context (pins first): both by seq */
    sort_by_seq(a);
    sort_by_seq(gone);
    json_array_extend(a, gone);
    json_decref(gone);
    return a;
}

/* Leading tool results of the layout's recent part, which it never sends. */
static void mark_layout_orphans(const struct mn_gov *g, const mn_layout_in *in, const mn_layout_out *lo)
{
    for (int64_t i = 0; i < lo->orphans && (size_t)i < in->n_tail; i++)
        mn__gov_mark(g, in->tail[i].seq, "dropped_orphan");
}

/* The report members every strategy has: budget, summary, fold, marker, governance, preflight. */
static void report(struct mn_built *b, const mn_strategy_cfg *cfg, const mn_summary *sum,
                   const mn_layout_out *lo, enum mn_fold_outcome outcome, const char *trigger, json_t *event,
                   const struct mn_gov *g)
{
    const struct mn_window *w = &b->w;
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens;
    add_extra(b, "over_budget", json_boolean(lo->shortfall > 0));
    add_extra(b, "shortfall", json_integer(lo->shortfall));
    add_extra(b, "summary",
              sum ? json_pack("{s:I, s:I, s:I, s:I, s:s, s:o, s:b, s:b}", "id", (json_int_t)sum->id, "covers_upto",
                              (json_int_t)sum->covers_upto, "folded", (json_int_t)sum->folded, "tokens",
                              (json_int_t)sum->tokens, "summarizer", sum->summarizer, "model",
                              sum->model ? json_string(sum->model) : json_null(), "shown", lo->summary_shown, "cut",
                              lo->summary_cut)
                  : json_null());
    add_extra(b, "fold", json_pack("{s:s, s:s, s:o, s:o}", "mode", mode_name(cfg->fold_mode), "outcome",
                                   mn__fold_outcome_name(outcome), "trigger",
                                   trigger ? json_string(trigger) : json_null(), "event",
                                   event ? json_incref(event) : json_null()));
    add_extra(b, "marker", json_integer(lo->marker));
    add_extra(b, "current_turn",
              lo->turn_seq ? json_pack("{s:I, s:I, s:I}", "user_seq", (json_int_t)lo->turn_seq, "steps",
                                       (json_int_t)lo->turn_steps, "steps_dropped", (json_int_t)lo->turn_steps_dropped)
                           : json_null());
    add_extra(b, "governance", mn__gov_report(g));
    add_extra(b, "preflight", preflight(cfg, total));
    if (g->marks)
        add_extra(b, "detail", detail(w, g));
}

/* ---- folding a due plan ---------------------------------------------------------------------- */

struct last_event {
    int found;
    int failed;
    int64_t last_seq;
};

static int scan_event(void *user, int64_t id, const char *kind, const char *data, int64_t at)
{
    (void)id, (void)at;
    struct last_event *e = user;
    if (strcmp(kind, "compaction") != 0)
        return 0;
    json_t *d = json_loads(data, 0, NULL);
    const char *outcome = json_string_value(json_object_get(d, "outcome"));
    e->found = 1;
    e->failed = outcome && (strcmp(outcome, "failed") == 0 || strcmp(outcome, "rolled_back") == 0 ||
                            strcmp(outcome, "timed_out") == 0);
    e->last_seq = json_integer_value(json_object_get(d, "last_seq"));
    json_decref(d);
    return 1;
}

/* Folds, queues or skips the plan's range, as the fold mode says. A fold done here replaces
 * ld->sum with the new summary. */
static mn_status run_plan(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                          struct mn_loaded *ld, const struct mn_fold_plan *p, enum mn_fold_outcome *outcome,
                          json_t **event)
{
    const mn_message *bm = ld->buf->items;
    size_t n = ld->buf->count;
    *outcome = p->trigger ? MN_FOLD_NOTHING : MN_FOLD_NONE;
    if (!p->trigger || p->to <= p->from)
        return MN_OK;
    if (cfg->fold_mode == MN_CONTEXT_FOLD_OFF) {
        *outcome = MN_FOLD_DISABLED;
        return MN_OK;
    }
    struct last_event le = {0, 0, 0};
    int64_t last_seq = n ? bm[n - 1].seq : 0;
    mn_status rc = env->st->ops->events_list(env->st, s->id, 20, scan_event, &le);
    if (rc)
        return rc;
    if (le.found && le.failed && last_seq < le.last_seq + cfg->retry_gap) {
        *outcome = MN_FOLD_COOLDOWN;
        return MN_OK;
    }
    if (cfg->fold_mode == MN_CONTEXT_FOLD_BACKGROUND && env->queue &&
        env->queue(env->queue_user, cfg, s->id) == 0) {
        *outcome = MN_FOLD_QUEUED;
        return MN_OK;
    }
    mn_summary *made = NULL;
    struct mn_fold_req fr = {p->trigger, 0, ld->sum, bm + p->from, p->to - p->from, last_seq};
    if ((rc = mn__context_fold(env, cfg, s, &fr, outcome, &made, event))) {
        mn_summary_free(made); /* stored, then the event could not be */
        return rc;
    }
    if (made) {
        mn_summary_free(ld->sum);
        ld->sum = made;
    }
    return MN_OK;
}

/* The messages a context chooses from: the active history. Those past the turn limit or cleared
 * are in no report's count (not "dropped for the budget": they were never candidates). */
static int64_t active_history(const mn_session *s) { return s->message_count - s->inactive_count; }

/* ---- the window strategy --------------------------------------------------------------------- */

/* The newest messages that fit, after the stored summary when there is one (mn_compact's, or
 * another strategy's folds). Loads from the store only what the budget can use. */
static mn_status build_window(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                              struct mn_built *b)
{
    struct mn_gov g = cfg->gov;
    mn_summary *sum = NULL;
    struct mn_window *tail = &b->parts[0];
    mn_status rc = mn__context_summary_latest(env, s->id, &sum);
    int64_t upto = sum ? sum->covers_upto : 0;
    /* the session's tool-output total decides offloading only: no scan of the whole session
     * on every build without it */
    if (!rc && g.offload)
        rc = env->st->ops->tool_tokens(env->st, s->id, upto, &g.total_tool_tokens);
    tail->gov = &g;
    if (!rc)
        rc = mn__window_collect(env->st, s, upto, cfg->max_tokens, tail);
    tail->gov = NULL;
    if (!rc && !(b->extra = json_object()))
        rc = mn__nomem();
    mn_layout_in in = {s->id, env->tk, s->system_prompt, NULL, 0, sum ? sum->text : NULL, sum ? sum->folded : 0,
                       tail->items, tail->count, 0, cfg->max_tokens, 0, 0};
    mn_layout_out lo;
    memset(&lo, 0, sizeof lo);
    if (!rc)
        rc = mn__context_layout(&in, &b->w, &lo);
    if (!rc) {
        struct mn_window *w = &b->w;
        w->total_messages = active_history(s);
        w->dropped_orphan = tail->dropped_orphan + lo.orphans;
        w->dropped_unmatched = tail->dropped_unmatched;
        w->summarized = sum ? sum->folded : 0;
        mark_layout_orphans(&g, &in, &lo);
        lo.turn_steps += tail->turn_skipped; /* steps the walk passed over on its way to the task */
        lo.turn_steps_dropped += tail->turn_skipped;
        report(b, cfg, sum, &lo, MN_FOLD_NONE, NULL, NULL, &g);
    }
    mn_summary_free(sum);
    return rc;
}

/* ---- summary, chunked, hybrid ---------------------------------------------------------------- */

/* Index of the first assistant text reply (content, no tool calls); -1 when none. */
static long first_reply(const mn_message *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].role == MN_ROLE_ASSISTANT && !m[i].tool_calls && m[i].content && *m[i].content)
            return (long)i;
    return -1;
}

static mn_status load(const mn_strategy_env *env, const mn_session *s, int is_summary, struct mn_loaded *ld)
{
    mn_status rc = mn__context_summary_latest(env, s->id, &ld->sum);
    if (!rc)
        rc = load_after(env, s->id, ld->sum ? ld->sum->covers_upto : 0, 0, &ld->buf);
    if (!rc && is_summary)
        rc = load_after(env, s->id, 0, 256, &ld->head);
    return rc;
}

/* The layout's parts after the fold: the old part (summary: the head messages the summary
 * covers, then those still in the buffer when a due fold did not run; hybrid: pinned units)
 * governed into parts[1], the recent messages into parts[0]. */
static mn_status shown_parts(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                             struct mn_loaded *ld, const struct mn_fold_plan *p, int folded, int64_t head_end_seq,
                             struct mn_built *b, struct mn_gov *g, mn_layout_in *in, size_t *hidden)
{
    int is_summary = strcmp(cfg->strategy, "summary") == 0, is_hybrid = strcmp(cfg->strategy, "hybrid") == 0;
    const mn_message *bm = ld->buf->items;
    size_t n = ld->buf->count, tail_from = folded ? p->to : 0;
    int64_t upto = ld->sum ? ld->sum->covers_upto : 0;
    *hidden = 0; /* messages the marker stands for because a due fold did not run */
    if (is_summary && p->trigger && p->to > p->from && !folded) {
        *hidden = p->to - p->from;
        tail_from = p->to;
    }
    mn_status rc = is_hybrid ? load_pinned(env, s->id, upto, &ld->pinned) : MN_OK;
    if (rc)
        return rc;
    size_t head_old = 0;
    while (is_summary && head_old < ld->head->count && ld->head->items[head_old].seq <= head_end_seq &&
           ld->head->items[head_old].seq <= upto)
        head_old++;
    size_t head_in_buf = is_summary && *hidden ? p->from : 0;
    size_t old_n = is_summary ? head_old + head_in_buf : ld->pinned ? ld->pinned->count : 0;
    mn_message *old = old_n ? calloc(old_n, sizeof *old) : NULL;
    if (old_n && !old)
        return mn__nomem();
    for (size_t i = 0; i < old_n; i++)
        old[i] = !is_summary ? ld->pinned->items[i] : i < head_old ? ld->head->items[i] : bm[i - head_old];
    /* the room a summary leaves goes to the newest messages it stands for, verbatim (layout
     * step 7 takes them after the newer ones): never fewer of the conversation's own words than
     * the window would send. Not past a due fold that did not run (the marker stands there), and
     * not in chunked, whose prefix stays the same between folds (seed 004: the prompt cache). */
    const mn_message *recent = bm + tail_from;
    size_t n_recent = n - tail_from;
    mn_message *joined = NULL;
    if (ld->sum && !*hidden && strcmp(cfg->strategy, "chunked") != 0 &&
        (rc = load_covered(env, s->id, is_summary ? head_end_seq : 0, upto, cfg->max_tokens, &ld->covered))) {
        free(old);
        return rc;
    }
    if (ld->covered && ld->pinned) /* hybrid: the pinned units are the old part already */
        drop_shown(ld->covered, ld->pinned);
    /* whole units only: a call or result the summary stands for alone is its, not a drop */
    struct mn_window *g_cov = &b->parts[2];
    if (ld->covered && (rc = mn__window_walk(g_cov, ld->covered->items, ld->covered->count, INF_BUDGET, NULL))) {
        free(old);
        return rc;
    }
    if (g_cov->count) {
        size_t nc = g_cov->count;
        if (!(joined = malloc((nc + n_recent) * sizeof *joined))) {
            free(old);
            return mn__nomem();
        }
        memcpy(joined, g_cov->items, nc * sizeof *joined);
        memcpy(joined + nc, recent, n_recent * sizeof *joined);
        recent = joined;
        n_recent += nc;
    }
    g->total_tool_tokens = tool_tokens(recent, n_recent) + tool_tokens(old, old_n);
    struct mn_window *g_tail = &b->parts[0], *g_old = &b->parts[1];
    rc = govern(g_tail, g, recent, n_recent);
    free(joined);
    if (!rc)
        rc = govern(g_old, g, old, old_n);
    free(old);
    if (rc)
        return rc;
    b->w.dropped_orphan = g_tail->dropped_orphan + g_old->dropped_orphan;
    b->w.dropped_unmatched = g_tail->dropped_unmatched + g_old->dropped_unmatched;
    /* messages the summary stands for and that are not shown */
    int64_t summarized = active_history(s) - (int64_t)n - (int64_t)(old_n - head_in_buf) + (folded ? (int64_t)p->to : 0);
    b->w.summarized = summarized > 0 && ld->sum ? summarized : 0;
    *in = (mn_layout_in){s->id,
                         env->tk,
                         s->system_prompt,
                         g_old->items,
                         g_old->count,
                         ld->sum ? ld->sum->text : NULL,
                         ld->sum ? ld->sum->folded : 0,
                         g_tail->items,
                         g_tail->count,
                         (int64_t)*hidden,
                         cfg->max_tokens,
                         strcmp(cfg->strategy, "chunked") == 0 ? cfg->prompt_budget : 0,
                         1};
    return MN_OK;
}

mn_status mn__context_assemble(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                              struct mn_built *b)
{
    if (strcmp(cfg->strategy, "window") == 0)
        return build_window(env, cfg, s, b);
    int is_summary = strcmp(cfg->strategy, "summary") == 0;
    struct mn_loaded ld;
    memset(&ld, 0, sizeof ld);
    struct mn_window scratch; /* the buffer governed: costs for the triggers */
    memset(&scratch, 0, sizeof scratch);
    json_t *event = NULL;
    mn_status rc = load(env, s, is_summary, &ld);
    if (!rc && !(b->extra = json_object()))
        rc = mn__nomem();
    if (rc)
        goto out;
    /* the first run (summary strategy): messages up to the first assistant text reply */
    long h = is_summary ? first_reply(ld.head->items, ld.head->count) : -1;
    int64_t head_end_seq = h >= 0 ? ld.head->items[h].seq : 0;
    struct mn_gov g0 = cfg->gov;
    g0.marks = NULL; /* the scratch walk decides nothing that is sent */
    g0.total_tool_tokens = tool_tokens(ld.buf->items, ld.buf->count);
    if ((rc = govern(&scratch, &g0, ld.buf->items, ld.buf->count)))
        goto out;
    int64_t fixed = MN_FRAME_REPLY;
    if (s->system_prompt)
        fixed += (int64_t)mn__token_count(env->tk, s->system_prompt, strlen(s->system_prompt)) + MN_FRAME_PER_MESSAGE;
    struct mn_fold_plan p;
    mn__fold_plan_make(cfg, &ld, &scratch, head_end_seq, fixed, &p);
    enum mn_fold_outcome outcome;
    if ((rc = run_plan(env, cfg, s, &ld, &p, &outcome, &event)))
        goto out;
    struct mn_gov g = cfg->gov;
    mn_layout_in in;
    size_t hidden;
    if ((rc = shown_parts(env, cfg, s, &ld, &p, outcome == MN_FOLD_OK, head_end_seq, b, &g, &in, &hidden)))
        goto out;
    mn_layout_out lo;
    if ((rc = mn__context_layout(&in, &b->w, &lo)))
        goto out;
    b->w.total_messages = active_history(s);
    b->w.dropped_orphan += lo.orphans;
    for (size_t i = 0; ld.sum && i < b->w.count; i++) { /* shown verbatim: not only summarised */
        const mn_message *m = &b->w.items[i];
        if (m->seq > 0 && m->seq <= ld.sum->covers_upto && !in_part(&b->parts[1], m->seq) && b->w.summarized > 0)
            b->w.summarized--;
    }
    mark_layout_orphans(&g, &in, &lo);
    report(b, cfg, ld.sum, &lo, outcome, p.trigger, event, &g);
out:
    json_decref(event);
    mn__window_release(&scratch);
    loaded_release(&ld);
    return rc;
}
