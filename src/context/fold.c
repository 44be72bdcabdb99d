/*
 * fold.c — folding older messages into the session's global summary: one fold per session at a
 * time (the busy_until claim, across threads, processes and nodes), an inflation guard (a
 * summary that is not shorter is rolled back), an event per attempt; and mn_compact's forced
 * fold. Whether a build folds now, queues or skips a due fold is strategy.c's (docs/context.md).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "store/records.h"
#include "summarize/summarize.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

static const char *const outcome_names[] = {"none",      "ok",       "failed",   "rolled_back",
                                            "in_flight", "cooldown", "disabled", "nothing_to_fold",
                                            "queued",    "timed_out", "deferred"};

const char *mn__fold_outcome_name(enum mn_fold_outcome o) { return outcome_names[o]; }

static int64_t count_turns(const mn_message *m, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += m[i].role == MN_ROLE_USER;
    return t;
}

static int64_t cost_all(const mn_message *m, size_t n)
{
    int64_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += mn__context_cost(&m[i]);
    return c;
}

static mn_status load_after(const mn_strategy_env *env, const char *sid, int64_t after, mn_messages **out)
{
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.after_seq = after;
    return env->st->ops->history(env->st, sid, &o, NULL, out);
}

/* Folds run by this process, by outcome (a service's metrics; every handle counts). */
static atomic_llong folds_run[MN_FOLD_DEFERRED + 1];

void mn__context_fold_counts(int64_t *ok, int64_t *failed, int64_t *rolled_back)
{
    *ok = atomic_load(&folds_run[MN_FOLD_OK]);
    *failed = atomic_load(&folds_run[MN_FOLD_FAILED]);
    *rolled_back = atomic_load(&folds_run[MN_FOLD_ROLLED_BACK]);
}

mn_status mn__context_summary_latest(const mn_strategy_env *env, const char *session_id, mn_summary **out)
{
    mn_status rc = env->st->ops->summary_latest(env->st, session_id, out);
    if (rc == MN_NOTFOUND)
        rc = MN_OK, mn__err_clear();
    return rc;
}

/* Runs one fold under the claim. *outcome says what happened; *made gets the stored summary.
 * Errors only for the store (the summariser's failure is an outcome, with an event). */
mn_status mn__context_fold(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                          const struct mn_fold_req *fr, enum mn_fold_outcome *outcome, mn_summary **made,
                          json_t **event)
{
    *outcome = MN_FOLD_NONE;
    int64_t now = mn__clock_now_ms(), until = now + (cfg->claim_ms > 0 ? cfg->claim_ms : 120000);
    int claimed = 0;
    int64_t holder = 0;
    mn_status rc = env->st->ops->busy_claim(env->st, s->id, now, until, &claimed, &holder);
    if (rc)
        return rc;
    if (!claimed) {
        *outcome = MN_FOLD_IN_FLIGHT;
        return MN_OK;
    }
    /* the plan was made before the claim: a fold that ran in between (another thread's or
     * node's, released just now) has stored a newer summary, and this one is not due any more */
    mn_summary *latest = NULL;
    rc = mn__context_summary_latest(env, s->id, &latest);
    int64_t latest_id = latest ? latest->id : 0;
    mn_summary_free(latest);
    if (rc || latest_id != (fr->old ? fr->old->id : 0)) {
        env->st->ops->busy_release(env->st, s->id, until);
        *outcome = MN_FOLD_IN_FLIGHT;
        return rc;
    }
    int64_t t0 = mn__clock_mono_ns();
    mn_sum_result r;
    memset(&r, 0, sizeof r);
    mn_sum_input in = {fr->old ? fr->old->text : NULL, fr->msgs, fr->n, cfg->summary_cap, env->tk,
                       cfg->fold_deadline_ms, cfg->instructions};
    mn_status srs = env->sum ? mn__summarize(env->sum, &in, &r)
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
        new_tokens = (int64_t)mn__token_count(env->tk, r.text, strlen(r.text));
        after = (int64_t)mn__token_count(env->tk, head, strlen(head)) + new_tokens + MN_FRAME_PER_MESSAGE;
        if (after >= before)
            *outcome = MN_FOLD_ROLLED_BACK; /* the inflation guard: the summary is not shorter */
        else {
            mn_summary sm = {0, s->id, fr->msgs[fr->n - 1].seq, folded, r.text, new_tokens, r.model,
                             mn__summarizer_name(env->sum), mn__clock_now_ms()};
            rc = env->st->ops->summary_insert(env->st, s->id, &sm, &sid_id);
            if (!rc)
                rc = env->st->ops->summary_latest(env->st, s->id, made);
            *outcome = rc ? MN_FOLD_FAILED : MN_FOLD_OK;
        }
    } else /* past the deadline, the summariser's failure is the deadline's */
        *outcome = cfg->fold_deadline_ms > 0 && mn__clock_now_ms() >= cfg->fold_deadline_ms ? MN_FOLD_TIMED_OUT
                                                                                         : MN_FOLD_FAILED;
    if (*outcome == MN_FOLD_OK || *outcome == MN_FOLD_FAILED || *outcome == MN_FOLD_ROLLED_BACK)
        atomic_fetch_add(&folds_run[*outcome], 1);
    else if (*outcome == MN_FOLD_TIMED_OUT)
        atomic_fetch_add(&folds_run[MN_FOLD_FAILED], 1);
    int64_t ms = (mn__clock_mono_ns() - t0) / 1000000;
    json_t *ev = json_pack(
        "{s:s, s:s, s:s, s:b, s:s, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:i, s:I, s:I, s:o, s:o}",
        "kind", "compaction", "outcome", mn__fold_outcome_name(*outcome), "trigger", fr->trigger, "automatic", !fr->forced,
        "summarizer", env->sum ? mn__summarizer_name(env->sum) : "unavailable", "model",
        r.model ? json_string(r.model) : json_null(), "messages_folded", (json_int_t)fr->n, "turns_folded",
        (json_int_t)count_turns(fr->msgs, fr->n), "covers_upto", (json_int_t)fr->msgs[fr->n - 1].seq, "last_seq",
        (json_int_t)fr->last_seq, "tokens_before", (json_int_t)before, "tokens_after",
        (json_int_t)(srs ? before : after), "duration_ms", (json_int_t)ms, "calls", r.calls, "attempts",
        r.attempts, "prompt_tokens", (json_int_t)r.prompt_tokens, "completion_tokens",
        (json_int_t)r.completion_tokens, "error", *error ? json_string(error) : json_null(), "summary_id",
        sid_id ? json_integer(sid_id) : json_null());
    if (ev && cfg->instructions)
        json_object_set_new(ev, "instructions", json_string(cfg->instructions));
    mn__sum_result_release(&r);
    char *text = ev ? mn__json_dump(ev) : NULL;
    mn_status erc = text ? env->st->ops->event_insert(env->st, s->id, "compaction", text, mn__clock_now_ms())
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
size_t mn__context_keep_turns_from(const mn_message *m, size_t n, int64_t k)
{
    int64_t seen = 0;
    for (size_t i = n; i-- > 0;)
        if (m[i].role == MN_ROLE_USER && ++seen == k)
            return i;
    return 0;
}

/* Moves a cut back so the part after it does not start on a tool result. */
size_t mn__context_unit_start(const mn_message *m, size_t i)
{
    while (i > 0 && m[i].role == MN_ROLE_TOOL)
        i--;
    return i;
}

mn_status mn__context_compact(const mn_strategy_env *env, const mn_strategy_cfg *cfg, const mn_session *s,
                             json_t **event)
{
    *event = NULL;
    mn_summary *old = NULL;
    mn_messages *b = NULL;
    mn_status rc = env->st->ops->summary_latest(env->st, s->id, &old);
    if (rc == MN_NOTFOUND)
        rc = MN_OK, mn__err_clear();
    if (!rc)
        rc = load_after(env, s->id, old ? old->covers_upto : 0, &b);
    if (rc) {
        mn_summary_free(old);
        return rc;
    }
    size_t ts = mn__context_keep_turns_from(b->items, b->count, cfg->tail_turns > 0 ? cfg->tail_turns : 3);
    enum mn_fold_outcome outcome = MN_FOLD_NOTHING;
    mn_summary *made = NULL;
    if (ts > 0) {
        struct mn_fold_req fr = {"forced", 1, old, b->items, ts, b->items[b->count - 1].seq};
        rc = mn__context_fold(env, cfg, s, &fr, &outcome, &made, event);
        if (!rc && outcome == MN_FOLD_IN_FLIGHT)
            rc = mn__err(MN_BUSY, "session %s: another summary is being made (sessions.busy_until); try again later",
                         s->id);
        else if (!rc && (outcome == MN_FOLD_FAILED || outcome == MN_FOLD_TIMED_OUT)) {
            const char *e = json_string_value(json_object_get(*event, "error"));
            rc = mn__err(MN_UNAVAILABLE, "%s", e ? e : "summarizer failed");
        }
    } else
        *event = json_pack("{s:s, s:s, s:s, s:I}", "kind", "compaction", "outcome", "nothing_to_fold", "reason",
                           "no more than the kept turns", "kept_turns", (json_int_t)(cfg->tail_turns));
    mn_summary_free(made);
    mn_summary_free(old);
    mn__records_message_list_free(b);
    return rc;
}
