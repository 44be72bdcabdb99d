/*
 * strategy.c — the strategies beyond the plain window: summary (seed 001: head + summary + tail),
 * chunked (seed 004: global summary + raw turns within a prompt budget) and hybrid (system and
 * pinned messages + summary + recent). All three read the session's global summary and fold
 * older messages into it when their trigger fires: one fold per session at a time (the
 * busy_until claim), an inflation guard, a retry gap after failures, an event per attempt.
 * Design notes and pictures: docs/context.md.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "context/context.h"
#include "store/records.h"
#include "summarize/summarize.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/utf8.h"
#include "util/banned.h"

#define INF_BUDGET (INT64_MAX / 4)
#define MARKER_RESERVE 32 /* tokens kept back for the trimmed-messages marker */

void mn_context_budget_split(int64_t window, int64_t *response, int64_t *history, int64_t *files)
{
    int64_t r = window / 4 < 16000 ? window / 4 : 16000;
    int64_t rest = window - r;
    int64_t h = rest / 3 < 50000 ? rest / 3 : 50000;
    *response = r;
    *history = h;
    *files = rest - h;
}

static int64_t cost_of(const mn_message *m) { return m->tokens + mn_context_frame_tokens(m); }

static int64_t cost_all(const mn_message *m, size_t n)
{
    int64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += cost_of(&m[i]);
    return c;
}

static mn_status push_item(struct mn_window *w, const mn_message *m)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        mn_message *n = realloc(w->items, cap * sizeof *n);
        if (!n)
            return mn__nomem();
        w->items = n;
        w->cap = cap;
    }
    w->items[w->count++] = *m;
    w->message_tokens += m->tokens;
    w->framing_tokens += mn_context_frame_tokens(m);
    return MN_OK;
}

/* A message that is not stored (summary, marker): role user, seq 0. */
static mn_status synth(struct mn_window *w, const mn_tokenizer *tk, const char *sid, const char *text, mn_message *out)
{
    memset(out, 0, sizeof *out);
    out->role = MN_ROLE_USER;
    out->session_id = sid;
    out->metadata = "{}";
    if (!(out->content = mn_arena_strndup(&w->arena, text, strlen(text))))
        return mn__nomem();
    out->tokens = (int64_t)mn_token_count(tk, text, strlen(text));
    return MN_OK;
}

static mn_status summary_message(struct mn_window *w, const mn_tokenizer *tk, const char *sid, int64_t folded,
                                 const char *text, mn_message *out)
{
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn_buf_addf(&b, "[Summary of %lld earlier messages]\n%s", (long long)folded, text);
    if (!rc)
        rc = synth(w, tk, sid, b.data, out);
    mn_buf_release(&b);
    return rc;
}

static mn_status marker_message(struct mn_window *w, const mn_tokenizer *tk, const char *sid, int64_t n, mn_message *out)
{
    char text[160];
    snprintf(text, sizeof text, "[Earlier conversation trimmed — %lld messages removed to stay within context budget]",
             (long long)n);
    return synth(w, tk, sid, text, out);
}

/* The end of text within max tokens, cut on a line (else character) boundary, "…" in front. */
static char *keep_end(const mn_tokenizer *tk, const char *text, int64_t max)
{
    size_t len = strlen(text);
    if (max <= 1)
        return NULL;
    size_t chars = mn_utf8_chars(text, len);
    size_t lo = 0, hi = chars; /* smallest start (in characters) whose suffix fits */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t off = mn_utf8_prefix(text, len, mid);
        if ((int64_t)mn_token_count(tk, text + off, len - off) + 1 <= max)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t off = mn_utf8_prefix(text, len, lo);
    const char *nl = memchr(text + off, '\n', len - off);
    if (off > 0 && nl && (size_t)(nl - text) < off + (len - off) / 2)
        off = (size_t)(nl - text) + 1;
    if (off >= len)
        return NULL;
    struct mn_buf b = MN_BUF_INIT;
    if (mn_buf_adds(&b, off ? "…" : "") || mn_buf_add(&b, text + off, len - off)) {
        mn_buf_release(&b);
        return NULL;
    }
    return mn_buf_detach(&b, NULL);
}

/* ---- loading --------------------------------------------------------------------------------- */

static mn_status load_after(const mn_strategy_env *env, const char *sid, int64_t after, size_t limit, mn_messages **out)
{
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.after_seq = after;
    o.limit = limit;
    return env->st->ops->history(env->st, sid, &o, out);
}

struct collect {
    struct mn_messages_impl *l;
    mn_status rc;
};

static int collect_one(void *user, const mn_message *m)
{
    struct collect *c = user;
    mn_message *it = mn_records_message_push(c->l);
    if (!it || mn_records_message_fill(&c->l->arena, it, m)) {
        c->rc = mn__nomem();
        return 1;
    }
    return 0;
}

static mn_status load_pinned(const mn_strategy_env *env, const char *sid, int64_t upto, mn_messages **out)
{
    struct collect c = {mn_records_message_list_new(), MN_OK};
    if (!c.l)
        return mn__nomem();
    mn_status rc = upto > 0 ? env->st->ops->pinned_units(env->st, sid, upto, collect_one, &c) : MN_OK;
    if (!rc)
        rc = c.rc;
    if (rc) {
        mn_records_message_list_free(&c.l->pub);
        return rc;
    }
    *out = &c.l->pub;
    return MN_OK;
}

/* Validated units of msgs with governance applied, into w (which keeps the strings). */
static mn_status govern(struct mn_window *w, struct mn_gov *g, const mn_message *msgs, size_t n)
{
    w->gov = g;
    mn_status rc = mn_window_walk(w, msgs, n, INF_BUDGET, NULL);
    w->gov = NULL;
    return rc;
}

static int64_t tool_tokens(const mn_message *m, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        if (m[i].role == MN_ROLE_TOOL)
            t += m[i].tokens;
    return t;
}

/* ---- folding --------------------------------------------------------------------------------- */

enum fold_outcome { F_NONE, F_OK, F_FAILED, F_ROLLED_BACK, F_IN_FLIGHT, F_COOLDOWN, F_DISABLED, F_NOTHING };
static const char *const outcome_names[] = {"none", "ok", "failed", "rolled_back", "in_flight", "cooldown",
                                            "disabled", "nothing_to_fold"};

struct last_event {
    int found;
    int failed;
    int64_t last_seq;
};

static int scan_event(void *user, int64_t id, const char *kind, const char *data, int64_t at)
{
    struct last_event *e = user;
    if (strcmp(kind, "compaction") != 0)
        return 0;
    json_t *d = json_loads(data, 0, NULL);
    const char *outcome = json_string_value(json_object_get(d, "outcome"));
    e->found = 1;
    e->failed = outcome && (strcmp(outcome, "failed") == 0 || strcmp(outcome, "rolled_back") == 0);
    e->last_seq = json_integer_value(json_object_get(d, "last_seq"));
    json_decref(d);
    return 1;
}

static int64_t count_turns(const mn_message *m, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += m[i].role == MN_ROLE_USER;
    return t;
}

struct fold_req {
    const char *trigger;
    int forced;
    const mn_summary *old;
    const mn_message *msgs;
    size_t n;
    int64_t last_seq; /* newest message of the session at fold time */
};

/* Folds run by this process, by outcome (a service's metrics; every handle counts). */
static atomic_llong folds_run[F_NOTHING + 1];

void mn_context_fold_counts(int64_t *ok, int64_t *failed, int64_t *rolled_back)
{
    *ok = atomic_load(&folds_run[F_OK]);
    *failed = atomic_load(&folds_run[F_FAILED]);
    *rolled_back = atomic_load(&folds_run[F_ROLLED_BACK]);
}

/* Runs one fold under the claim. *outcome says what happened; *made gets the stored summary.
 * Errors only for the store (the summariser's failure is an outcome, with an event). */
static mn_status fold(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                      const struct fold_req *fr, enum fold_outcome *outcome, mn_summary **made, json_t **event)
{
    *outcome = F_NONE;
    int64_t now = mn_clock_now_ms(), until = now + (cfg->claim_ms > 0 ? cfg->claim_ms : 120000);
    int claimed = 0;
    int64_t holder = 0;
    mn_status rc = env->st->ops->busy_claim(env->st, s->id, now, until, &claimed, &holder);
    if (rc)
        return rc;
    if (!claimed) {
        *outcome = F_IN_FLIGHT;
        return MN_OK;
    }
    int64_t t0 = mn_clock_mono_ns();
    mn_sum_result r;
    memset(&r, 0, sizeof r);
    mn_sum_input in = {fr->old ? fr->old->text : NULL, fr->msgs, fr->n, cfg->summary_cap, env->tk, 0, NULL};
    mn_status srs = env->sum ? mn_summarize(env->sum, &in, &r)
                             : mn__err(MN_UNAVAILABLE, "summarizer: %s", env->sum_err ? env->sum_err : "unavailable");
    char error[512] = "";
    if (srs)
        snprintf(error, sizeof error, "%s", mn_errmsg());
    int64_t before = (fr->old ? fr->old->tokens + MN_FRAME_PER_MESSAGE : 0) + cost_all(fr->msgs, fr->n);
    int64_t folded = (fr->old ? fr->old->folded : 0) + (int64_t)fr->n;
    int64_t after = 0, new_tokens = 0, sid_id = 0;
    if (!srs) {
        char head[96];
        snprintf(head, sizeof head, "[Summary of %lld earlier messages]\n", (long long)folded);
        new_tokens = (int64_t)mn_token_count(env->tk, r.text, strlen(r.text));
        after = (int64_t)mn_token_count(env->tk, head, strlen(head)) + new_tokens + MN_FRAME_PER_MESSAGE;
        if (after >= before)
            *outcome = F_ROLLED_BACK; /* the inflation guard: the summary is not shorter */
        else {
            mn_summary sm = {0, s->id, fr->msgs[fr->n - 1].seq, folded, r.text, new_tokens, r.model,
                             mn_summarizer_name(env->sum), mn_clock_now_ms()};
            rc = env->st->ops->summary_insert(env->st, s->id, &sm, &sid_id);
            if (!rc)
                rc = env->st->ops->summary_latest(env->st, s->id, made);
            *outcome = rc ? F_FAILED : F_OK;
        }
    } else
        *outcome = F_FAILED;
    if (*outcome == F_OK || *outcome == F_FAILED || *outcome == F_ROLLED_BACK)
        atomic_fetch_add(&folds_run[*outcome], 1);
    int64_t ms = (mn_clock_mono_ns() - t0) / 1000000;
    json_t *ev = json_pack(
        "{s:s, s:s, s:s, s:b, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:I, s:I, s:o, s:o}",
        "kind", "compaction", "outcome", outcome_names[*outcome], "trigger", fr->trigger, "automatic", !fr->forced,
        "summarizer", env->sum ? mn_summarizer_name(env->sum) : "unavailable", "model",
        r.model ? json_string(r.model) : json_null(), "messages_folded", (json_int_t)fr->n, "turns_folded",
        (json_int_t)count_turns(fr->msgs, fr->n), "covers_upto", (json_int_t)fr->msgs[fr->n - 1].seq, "last_seq",
        (json_int_t)fr->last_seq, "tokens_before", (json_int_t)before, "tokens_after",
        (json_int_t)(srs ? before : after), "duration_ms", (json_int_t)ms, "calls", r.calls, "attempts",
        r.attempts, "prompt_tokens", (json_int_t)r.prompt_tokens, "completion_tokens",
        (json_int_t)r.completion_tokens, "error", *error ? json_string(error) : json_null(), "summary_id",
        sid_id ? json_integer(sid_id) : json_null());
    mn_sum_result_release(&r);
    char *text = ev ? mn_json_dump(ev) : NULL;
    mn_status erc = text ? env->st->ops->event_insert(env->st, s->id, "compaction", text, mn_clock_now_ms())
                         : mn__nomem();
    free(text);
    env->st->ops->busy_release(env->st, s->id, until);
    if (!rc)
        rc = erc;
    if (event && ev)
        *event = json_incref(ev);
    json_decref(ev);
    if (srs)
        mn__log(MN_LOG_WARN, "session %s: summary failed, the context falls back: %s", s->id, error);
    return rc;
}

/* The index of the first message of the newest `k` turns (0 when there are not more than k). */
static size_t keep_turns_from(const mn_message *m, size_t n, int64_t k)
{
    int64_t seen = 0;
    for (size_t i = n; i-- > 0;)
        if (m[i].role == MN_ROLE_USER && ++seen == k)
            return i;
    return 0;
}

/* Moves a cut back so the part after it does not start on a tool result. */
static size_t unit_start(const mn_message *m, size_t i)
{
    while (i > 0 && m[i].role == MN_ROLE_TOOL)
        i--;
    return i;
}

mn_status mn_context_compact(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                             json_t **event)
{
    *event = NULL;
    mn_summary *old = NULL;
    mn_messages *b = NULL;
    mn_status rc = env->st->ops->summary_latest(env->st, s->id, &old);
    if (rc == MN_NOTFOUND)
        rc = MN_OK, mn__err_clear();
    if (!rc)
        rc = load_after(env, s->id, old ? old->covers_upto : 0, 0, &b);
    if (rc) {
        mn_summary_free(old);
        return rc;
    }
    size_t ts = keep_turns_from(b->items, b->count, cfg->tail_turns > 0 ? cfg->tail_turns : 3);
    enum fold_outcome outcome = F_NOTHING;
    mn_summary *made = NULL;
    if (ts > 0) {
        struct fold_req fr = {"forced", 1, old, b->items, ts, b->items[b->count - 1].seq};
        rc = fold(env, cfg, s, &fr, &outcome, &made, event);
        if (!rc && outcome == F_IN_FLIGHT)
            rc = mn__err(MN_BUSY, "session %s: another summary is being made (sessions.busy_until); try again later",
                         s->id);
        else if (!rc && outcome == F_FAILED) {
            const char *e = json_string_value(json_object_get(*event, "error"));
            rc = mn__err(MN_UNAVAILABLE, "%s", e ? e : "summarizer failed");
        }
    } else
        *event = json_pack("{s:s, s:s, s:s, s:I}", "kind", "compaction", "outcome", "nothing_to_fold", "reason",
                           "no more than the kept turns", "kept_turns", (json_int_t)(cfg->tail_turns));
    mn_summary_free(made);
    mn_summary_free(old);
    mn_messages_free(b);
    return rc;
}

/* ---- assembling ------------------------------------------------------------------------------ */

void mn_built_release(struct mn_built *b)
{
    mn_window_release(&b->w);
    for (int i = 0; i < 3; i++)
        mn_window_release(&b->parts[i]);
    json_decref(b->extra);
    b->extra = NULL;
}

static json_t *preflight(const mn_strategy_cfg *cfg, int64_t tokens)
{
    if (cfg->model_window <= 0)
        return json_null();
    int64_t resp, hist, files;
    mn_context_budget_split(cfg->model_window, &resp, &hist, &files);
    int64_t reserve = cfg->reserve_tokens > 0 ? cfg->reserve_tokens : resp;
    int64_t needed = tokens + reserve + cfg->safety_margin;
    return json_pack("{s:I, s:I, s:I, s:I, s:b}", "model_window", (json_int_t)cfg->model_window, "reserve_tokens",
                     (json_int_t)reserve, "safety_margin", (json_int_t)cfg->safety_margin, "needed",
                     (json_int_t)needed, "fits", needed <= cfg->model_window);
}

static void add_extra(struct mn_built *b, const char *key, json_t *v)
{
    if (b->extra && v)
        json_object_set_new(b->extra, key, v);
    else
        json_decref(v);
}

static mn_status build_window(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                              struct mn_built *b)
{
    struct mn_gov g = cfg->gov;
    /* the session's tool-output total decides offloading only: without it, no scan of the
     * whole session on every build */
    mn_status rc = g.offload ? env->st->ops->tool_tokens(env->st, s->id, 0, &g.total_tool_tokens) : MN_OK;
    b->w.gov = &g;
    if (!rc)
        rc = mn_window_build(env->st, env->tk, s, cfg->max_tokens, &b->w);
    b->w.gov = NULL;
    if (!rc && !(b->extra = json_object()))
        rc = mn__nomem();
    if (!rc) {
        add_extra(b, "governance", mn_gov_report(&g));
        add_extra(b, "preflight", preflight(cfg, b->w.system_tokens + b->w.message_tokens + b->w.framing_tokens));
    }
    return rc;
}

/* Index of the first assistant text reply (content, no tool calls); -1 when none. */
static long first_reply(const mn_message *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].role == MN_ROLE_ASSISTANT && !m[i].tool_calls && m[i].content && *m[i].content)
            return (long)i;
    return -1;
}

/* The index in b of the oldest message of the newest stretch whose governed cost (from g, the
 * governed copy of b) is within budget, moved back to a unit start; at least the newest unit. */
static size_t suffix_from(const struct mn_window *g, const mn_message *b, size_t n, int64_t budget)
{
    int64_t used = 0, cut_seq = INT64_MAX;
    for (size_t i = g->count; i-- > 0;) {
        used += cost_of(&g->items[i]);
        if (used > budget && cut_seq != INT64_MAX)
            break;
        cut_seq = g->items[i].seq;
    }
    size_t i = 0;
    while (i < n && b[i].seq < cut_seq)
        i++;
    return i < n ? unit_start(b, i) : n;
}

struct plan {
    size_t from, to; /* the fold range in the buffer */
    const char *trigger;
};

mn_status mn_context_assemble(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                              struct mn_built *b)
{
    const char *strategy = cfg->strategy;
    if (strcmp(strategy, "window") == 0)
        return build_window(env, cfg, s, b);
    int is_summary = strcmp(strategy, "summary") == 0, is_chunked = strcmp(strategy, "chunked") == 0;
    int is_hybrid = strcmp(strategy, "hybrid") == 0;
    const mn_tokenizer *tk = env->tk;
    struct mn_window *w = &b->w;
    mn_summary *sum = NULL;
    mn_messages *buf = NULL, *head = NULL, *pinned = NULL;
    struct mn_window scratch; /* the buffer with governance applied: costs for the triggers */
    memset(&scratch, 0, sizeof scratch);
    mn_status rc = env->st->ops->summary_latest(env->st, s->id, &sum);
    if (rc == MN_NOTFOUND)
        rc = MN_OK, mn__err_clear();
    int64_t upto = sum ? sum->covers_upto : 0;
    if (!rc)
        rc = load_after(env, s->id, upto, 0, &buf);
    if (!rc && is_summary)
        rc = load_after(env, s->id, 0, 256, &head);
    if (!(b->extra = json_object()) && !rc)
        rc = mn__nomem();
    if (rc)
        goto out;

    /* system prompt and fixed framing */
    if (s->system_prompt) {
        if (!(w->system_prompt = mn_arena_strndup(&w->arena, s->system_prompt, strlen(s->system_prompt)))) {
            rc = mn__nomem();
            goto out;
        }
        w->system_tokens = (int64_t)mn_token_count(tk, s->system_prompt, strlen(s->system_prompt));
        w->framing_tokens += MN_FRAME_PER_MESSAGE;
    }
    w->framing_tokens += MN_FRAME_REPLY;
    w->max_tokens = cfg->max_tokens;
    w->total_messages = s->message_count;
    int64_t fixed_sys = w->system_tokens + w->framing_tokens;

    /* the first run (summary strategy): messages up to the first assistant text reply */
    int64_t head_end_seq = 0;
    if (is_summary) {
        long h = first_reply(head->items, head->count);
        head_end_seq = h >= 0 ? head->items[h].seq : 0;
    }
    size_t n = buf->count;
    const mn_message *bm = buf->items;
    int64_t last_seq = n ? bm[n - 1].seq : upto;
    size_t fs = 0; /* first buffer message after the head */
    while (fs < n && bm[fs].seq <= head_end_seq)
        fs++;

    /* governed cost of the whole buffer, for the triggers */
    int64_t buf_cost = 0;
    {
        struct mn_gov g0 = cfg->gov;
        g0.total_tool_tokens = tool_tokens(bm, n);
        rc = govern(&scratch, &g0, bm, n);
        buf_cost = cost_all(scratch.items, scratch.count);
        if (rc)
            goto out;
    }
    int64_t head_old_cost = 0;
    size_t head_old = 0; /* head messages already covered by the summary (seq <= upto) */
    if (is_summary)
        for (size_t i = 0; i < head->count && head->items[i].seq <= head_end_seq && head->items[i].seq <= upto; i++)
            head_old_cost += cost_of(&head->items[i]), head_old++;
    int64_t sum_cost = sum ? sum->tokens + 12 + MN_FRAME_PER_MESSAGE : 0;

    /* the trigger and the fold range */
    struct plan p = {0, 0, NULL};
    int64_t ref = cfg->model_window > 0 ? cfg->model_window : cfg->max_tokens;
    int64_t whole = fixed_sys + head_old_cost + sum_cost + buf_cost;
    if (is_summary || is_hybrid) {
        int64_t cnt = (int64_t)head_old + (sum ? 1 : 0) + (int64_t)n;
        if (cfg->max_messages > 0 && cnt > cfg->max_messages)
            p.trigger = "messages";
        else if (cfg->trigger_percent > 0 && whole * 100 > cfg->trigger_percent * ref)
            p.trigger = "tokens";
        if (p.trigger) {
            int64_t keep = is_summary ? (cfg->max_messages > 0 ? cfg->max_messages : 40) / 2 : cfg->hybrid_recent;
            if (is_summary && keep < 4)
                keep = 4;
            if (keep < 1)
                keep = 1;
            size_t ts = n > (size_t)keep ? unit_start(bm, n - (size_t)keep) : 0;
            if (strcmp(p.trigger, "tokens") == 0) { /* fold down to half the threshold, so it does not
                                                       fire again on the next turn */
                size_t tk_ts = suffix_from(&scratch, bm, n, cfg->trigger_percent * ref / 200);
                ts = tk_ts > ts ? tk_ts : ts;
            }
            p.from = is_summary ? fs : 0;
            p.to = ts > p.from ? ts : p.from;
        }
    } else if (is_chunked) {
        int64_t k = cfg->tail_turns > 0 ? cfg->tail_turns : 3;
        int64_t mem = cfg->prompt_budget < cfg->max_tokens - fixed_sys ? cfg->prompt_budget : cfg->max_tokens - fixed_sys;
        if (count_turns(bm, n) > k) {
            if ((sum ? sum->tokens : 0) + buf_cost > cfg->chunk_threshold)
                p.trigger = "chunk_threshold";
            else if (sum_cost + buf_cost > mem)
                p.trigger = "prompt_budget";
            if (p.trigger)
                p.to = keep_turns_from(bm, n, k);
            if (p.trigger && strcmp(p.trigger, "prompt_budget") == 0) { /* keep what fits in half of it */
                size_t i = suffix_from(&scratch, bm, n, (mem - sum_cost) / 2);
                while (i < n && bm[i].role != MN_ROLE_USER)
                    i++;
                if (i >= n)
                    i = keep_turns_from(bm, n, 1);
                p.to = i > p.to ? i : p.to;
            }
        }
    }
    enum fold_outcome outcome = p.trigger ? F_NOTHING : F_NONE;
    json_t *event = NULL;
    if (p.trigger && p.to > p.from) {
        struct last_event le = {0, 0, 0};
        if (cfg->flags & MN_CONTEXT_NO_FOLD)
            outcome = F_DISABLED;
        else if ((rc = env->st->ops->events_list(env->st, s->id, 20, scan_event, &le)))
            goto out;
        else if (le.found && le.failed && last_seq < le.last_seq + cfg->retry_gap)
            outcome = F_COOLDOWN;
        else {
            mn_summary *made = NULL;
            struct fold_req fr = {p.trigger, 0, sum, bm + p.from, p.to - p.from, last_seq};
            if ((rc = fold(env, cfg, s, &fr, &outcome, &made, &event)))
                goto out;
            if (made) {
                mn_summary_free(sum);
                sum = made;
                upto = sum->covers_upto;
                head_old = 0; /* the head messages now covered by the summary */
                while (is_summary && head_old < head->count && head->items[head_old].seq <= head_end_seq &&
                       head->items[head_old].seq <= upto)
                    head_old++;
            }
        }
    }
    /* what is shown: the old part (head or pinned), the summary, a marker, the buffer's tail */
    size_t tail_from = outcome == F_OK ? p.to : 0;
    size_t middle = 0; /* messages replaced by the marker because the fold did not happen */
    if (is_summary && p.trigger && p.to > p.from && outcome != F_OK) {
        middle = p.to - p.from;
        tail_from = p.to;
    }
    struct mn_window *g_tail = &b->parts[0], *g_old = &b->parts[1], *sel = &b->parts[2];
    struct mn_gov g = cfg->gov;
    if (is_hybrid && (rc = load_pinned(env, s->id, upto, &pinned)))
        goto out;
    /* the old part: summary strategy — the head messages the summary covers, then (when the
     * fold did not happen) the head messages still in the buffer; hybrid — pinned units */
    size_t head_in_buf = is_summary && middle ? p.from : 0;
    size_t old_n = is_summary ? head_old + head_in_buf : pinned ? pinned->count : 0;
    mn_message *old_msgs = old_n ? calloc(old_n, sizeof *old_msgs) : NULL;
    if (old_n && !old_msgs) {
        rc = mn__nomem();
        goto out;
    }
    for (size_t i = 0; i < old_n; i++)
        old_msgs[i] = !is_summary ? pinned->items[i] : i < head_old ? head->items[i] : bm[i - head_old];
    g.total_tool_tokens = tool_tokens(bm + tail_from, n - tail_from) + tool_tokens(old_msgs, old_n);
    rc = govern(g_tail, &g, bm + tail_from, n - tail_from);
    if (!rc)
        rc = govern(g_old, &g, old_msgs, old_n);
    free(old_msgs);
    if (rc)
        goto out;
    w->dropped_orphan = g_tail->dropped_orphan + g_old->dropped_orphan;
    w->dropped_unmatched = g_tail->dropped_unmatched + g_old->dropped_unmatched;
    for (size_t i = 0; i < g_old->count && !rc; i++)
        rc = push_item(w, &g_old->items[i]);
    if (rc)
        goto out;
    int64_t old_cost = cost_all(w->items, w->count);
    int64_t left = cfg->max_tokens - fixed_sys - old_cost;

    /* the summary message, cut (keeping its end) when it alone does not fit */
    mn_message sm;
    int have_sum = 0, sum_cut = 0;
    if (sum) {
        if ((rc = summary_message(w, tk, s->id, sum->folded, sum->text, &sm)))
            goto out;
        int64_t room = is_chunked ? (cfg->prompt_budget < left ? cfg->prompt_budget : left) : left;
        if (cost_of(&sm) > room - (g_tail->count ? cost_of(&g_tail->items[g_tail->count - 1]) : 0)) {
            int64_t want = room - (g_tail->count ? cost_of(&g_tail->items[g_tail->count - 1]) : 0) - 20;
            char *cut = want > 8 ? keep_end(tk, sum->text, want) : NULL;
            sum_cut = 1;
            if (cut) {
                rc = summary_message(w, tk, s->id, sum->folded, cut, &sm);
                free(cut);
                if (rc)
                    goto out;
                have_sum = 1;
            }
        } else
            have_sum = 1;
    }
    int64_t sum_shown = have_sum ? cost_of(&sm) : 0;
    left -= sum_shown;
    int64_t tail_cost = cost_all(g_tail->items, g_tail->count);
    size_t start = 0;
    if (is_chunked) { /* the memory budget: drop the oldest raw turns down to one */
        int64_t mem = cfg->prompt_budget - sum_shown;
        if (mem > left)
            mem = left;
        while (tail_cost > mem - (start ? MARKER_RESERVE : 0)) {
            size_t next = start + 1;
            while (next < g_tail->count && g_tail->items[next].role != MN_ROLE_USER)
                next++;
            if (next >= g_tail->count || count_turns(g_tail->items + next, g_tail->count - next) < 1)
                break;
            tail_cost -= cost_all(g_tail->items + start, next - start);
            start = next;
        }
        left = mem;
    }
    int reserve = middle > 0 || start > 0 || tail_cost > left;
    if (reserve)
        left -= MARKER_RESERVE;
    int64_t used = 0;
    if (left > 0 && (rc = mn_window_walk(sel, g_tail->items + start, g_tail->count - start, left, &used)))
        goto out;
    size_t not_kept = g_tail->count - sel->count;
    int64_t marker_n = (int64_t)(middle + not_kept);
    if (have_sum && (rc = push_item(w, &sm)))
        goto out;
    w->synthetic = have_sum;
    if (marker_n > 0) {
        mn_message mk;
        if ((rc = marker_message(w, tk, s->id, marker_n, &mk)) || (rc = push_item(w, &mk)))
            goto out;
        w->synthetic++;
    }
    for (size_t i = 0; i < sel->count && !rc; i++)
        rc = push_item(w, &sel->items[i]);
    if (rc)
        goto out;
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens;
    w->over_budget = total > cfg->max_tokens;
    /* messages the summary stands for and that are not shown */
    int64_t summarized = s->message_count - (int64_t)n - (int64_t)(old_n - head_in_buf) +
                         (outcome == F_OK ? (int64_t)p.to : 0);
    w->summarized = summarized > 0 && sum ? summarized : 0;

    json_t *sj = sum ? json_pack("{s:I, s:I, s:I, s:I, s:s, s:o, s:b, s:b}", "id", (json_int_t)sum->id,
                                 "covers_upto", (json_int_t)sum->covers_upto, "folded", (json_int_t)sum->folded,
                                 "tokens", (json_int_t)sum->tokens, "summarizer", sum->summarizer,
                                 "model", sum->model ? json_string(sum->model) : json_null(), "shown", have_sum,
                                 "cut", sum_cut)
                     : json_null();
    add_extra(b, "summary", sj);
    add_extra(b, "fold", json_pack("{s:s, s:o, s:o}", "outcome", outcome_names[outcome], "trigger",
                                   p.trigger ? json_string(p.trigger) : json_null(), "event",
                                   event ? json_incref(event) : json_null()));
    add_extra(b, "marker", json_integer(marker_n));
    add_extra(b, "governance", mn_gov_report(&g));
    add_extra(b, "preflight", preflight(cfg, total));
    json_decref(event);
out:
    mn_window_release(&scratch);
    mn_summary_free(sum);
    mn_messages_free(buf);
    mn_messages_free(head);
    mn_messages_free(pinned);
    return rc;
}
