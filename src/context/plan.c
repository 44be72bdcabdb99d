/*
 * plan.c — whether a build's fold is due and over which messages; pure (no I/O, no clock).
 * summary and hybrid fire on the message count (context.max_history_messages; 0 turns folding
 * off, as in seed 001) or, when context.summary_trigger_percent is set (default 0: off), on
 * tokens (that share of the model window, else of max_tokens), and fold down to half the
 * threshold so the trigger does not fire again on the next turn; chunked fires when the summary
 * plus the unsummarised messages pass chunk_threshold_tokens or the prompt budget, and keeps the
 * last K turns raw (seed 004). No fold takes the current turn's user message (the newest user
 * message). window never folds by itself.
 */
#include <string.h>

#include "context/context.h"
#include "util/banned.h"

static int64_t count_turns(const mn_message *m, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += m[i].role == MN_ROLE_USER;
    return t;
}

/* The index in b of the oldest message of the newest stretch whose governed cost (from g, the
 * governed copy of b) is within budget, moved back to a unit start; at least the newest unit. */
static size_t suffix_from(const struct mn_window *g, const mn_message *b, size_t n, int64_t budget)
{
    int64_t used = 0, cut_seq = INT64_MAX;
    for (size_t i = g->count; i-- > 0;) {
        used += mn__context_cost(&g->items[i]);
        if (used > budget && cut_seq != INT64_MAX)
            break;
        cut_seq = g->items[i].seq;
    }
    size_t i = 0;
    while (i < n && b[i].seq < cut_seq)
        i++;
    return i < n ? mn__context_unit_start(b, i) : n;
}

static void plan_recent(const mn_strategy_cfg *cfg, const struct mn_loaded *ld, const struct mn_window *scratch,
                        int64_t whole, size_t head_old, struct mn_fold_plan *p)
{
    int is_summary = strcmp(cfg->strategy, "summary") == 0;
    const mn_message *bm = ld->buf->items;
    size_t n = ld->buf->count;
    int64_t ref = cfg->model_window > 0 ? cfg->model_window : cfg->max_tokens;
    int64_t cnt = (int64_t)head_old + (ld->sum ? 1 : 0) + (int64_t)n;
    if (cfg->max_messages == 0) /* seed 001: 0 turns compaction off, token trigger included */
        return;
    if (cnt > cfg->max_messages)
        p->trigger = "messages";
    else if (cfg->trigger_percent > 0 && whole * 100 > cfg->trigger_percent * ref)
        p->trigger = "tokens";
    if (!p->trigger)
        return;
    int64_t keep = is_summary ? (cfg->max_messages > 0 ? cfg->max_messages : 40) / 2 : cfg->hybrid_recent;
    if (is_summary && keep < 4)
        keep = 4;
    if (keep < 1)
        keep = 1;
    size_t ts = n > (size_t)keep ? mn__context_unit_start(bm, n - (size_t)keep) : 0;
    if (strcmp(p->trigger, "tokens") == 0) { /* fold down to half the threshold */
        size_t tk_ts = suffix_from(scratch, bm, n, cfg->trigger_percent * ref / 200);
        ts = tk_ts > ts ? tk_ts : ts;
    }
    p->from = is_summary ? p->head_end : 0;
    p->to = ts > p->from ? ts : p->from;
}

static void plan_chunked(const mn_strategy_cfg *cfg, const struct mn_loaded *ld, int64_t fixed, int64_t sum_cost, int64_t buf_cost, struct mn_fold_plan *p)
{
    const mn_message *bm = ld->buf->items;
    size_t n = ld->buf->count;
    int64_t k = cfg->tail_turns > 0 ? cfg->tail_turns : 3;
    int64_t mem = cfg->prompt_budget < cfg->max_tokens - fixed ? cfg->prompt_budget : cfg->max_tokens - fixed;
    if (count_turns(bm, n) <= k)
        return;
    if ((ld->sum ? ld->sum->tokens : 0) + buf_cost > cfg->chunk_threshold)
        p->trigger = "chunk_threshold";
    else if (sum_cost + buf_cost > mem)
        p->trigger = "prompt_budget";
    else
        return;
    p->to = mn__context_keep_turns_from(bm, n, k); /* the last K turns stay verbatim (seed 004) */
}

void mn__fold_plan_make(const mn_strategy_cfg *cfg, const struct mn_loaded *ld, const struct mn_window *scratch,
                       int64_t head_end_seq, int64_t fixed, struct mn_fold_plan *p)
{
    memset(p, 0, sizeof *p);
    const mn_message *bm = ld->buf->items;
    size_t n = ld->buf->count;
    while (p->head_end < n && bm[p->head_end].seq <= head_end_seq)
        p->head_end++;
    int64_t buf_cost = 0;
    for (size_t i = 0; i < scratch->count; i++)
        buf_cost += mn__context_cost(&scratch->items[i]);
    int64_t head_old_cost = 0;
    size_t head_old = 0; /* head messages already covered by the summary */
    int64_t upto = ld->sum ? ld->sum->covers_upto : 0;
    for (size_t i = 0; ld->head && i < ld->head->count && ld->head->items[i].seq <= head_end_seq &&
                       ld->head->items[i].seq <= upto;
         i++)
        head_old_cost += mn__context_cost(&ld->head->items[i]), head_old++;
    int64_t sum_cost = ld->sum ? ld->sum->tokens + 12 + MN_FRAME_PER_MESSAGE : 0;
    if (strcmp(cfg->strategy, "summary") == 0 || strcmp(cfg->strategy, "hybrid") == 0)
        plan_recent(cfg, ld, scratch, fixed + head_old_cost + sum_cost + buf_cost, head_old, p);
    else if (strcmp(cfg->strategy, "chunked") == 0)
        plan_chunked(cfg, ld, fixed, sum_cost, buf_cost, p);
    /* the current turn's user message is never folded: every context shows it verbatim */
    size_t task = n;
    while (task > 0 && bm[task - 1].role != MN_ROLE_USER)
        task--;
    if (task > 0 && p->to > task - 1)
        p->to = task - 1 > p->from ? task - 1 : p->from;
}
