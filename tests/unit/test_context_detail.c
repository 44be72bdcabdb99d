/*
 * test_context_detail.c — the report's "detail" (MN_CONTEXT_DETAIL), the per-message fates the
 * web page's context picture draws, checked against the history and the rest of the report over
 * random conversations (plain turns, tool calls with one or two results, long tool outputs,
 * pins) and a sweep of budgets:
 *  - every kept message is listed once, in seq order, with its id and a fate kept, trimmed or
 *    offloaded; their number is the report's kept count and their tokens its message tokens;
 *  - the dropped orphans and unmatched calls follow, in seq order, as many as the report counts;
 *  - kept + orphans + unmatched + folded + dropped for the budget = the live messages (hybrid
 *    never folds a pinned or system message's unit);
 *  - a listed tool result has its call listed, a listed call all its results;
 *  - "kept" contents are in the rendered text as stored, "trimmed" ones are not, and only tool
 *    outputs longer than context.tool_output_trim_chars are trimmed; the newest is always kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "test_db.h"

#define TRIM_CHARS 300

/* fates seen over the sweep: the test proves it reached each kind it checks */
static struct {
    int64_t kept, trimmed, dropped, folded;
} seen;

struct convo {
    mn_db *db;
    char dir[200];
    char sid[64];
    mn_messages *history;
};

static unsigned next(unsigned *r)
{
    *r = *r * 1103515245u + 12345u;
    return (*r >> 8) & 0xFFFFFF;
}

static int64_t add(struct convo *c, mn_role role, const char *content, const char *calls, const char *call_id, int pin)
{
    mn_message *out = NULL;
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = content;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    m.pinned = pin;
    if (mn_append(c->db, c->sid, &m, 0, &out) != MN_OK)
        fail_msg("append: %s", mn_errmsg());
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

/* A conversation of about `turns` steps from seed; contents are unique words, so strstr finds them. */
static void make_convo(struct convo *c, unsigned seed, int turns)
{
    char path[260];
    assert_int_equal(test_tmpdir(c->dir, sizeof c->dir, "ctxdetail"), 0);
    snprintf(path, sizeof path, "%s/d.db", c->dir);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    char trim[16];
    snprintf(trim, sizeof trim, "%d", TRIM_CHARS);
    assert_int_equal(mn_config_set(cfg, "context.tool_output_trim_chars", trim, NULL), MN_OK);
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &c->db), MN_OK);
    mn_config_free(cfg);
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(c->db, NULL, &s), MN_OK);
    snprintf(c->sid, sizeof c->sid, "%s", s->id);
    mn_session_free(s);
    add(c, MN_ROLE_SYSTEM, "You are a careful assistant.", NULL, NULL, 0);
    unsigned r = seed;
    char text[4096], calls[512];
    for (int t = 0; t < turns; t++) {
        unsigned kind = next(&r) % 6;
        int pin = next(&r) % 23 == 0;
        if (kind <= 2) {
            snprintf(text, sizeof text, "turn%dseed%u %s words for the budget to count", t, seed,
                     kind == 0 ? "user" : kind == 1 ? "assistant" : "question with a few more");
            add(c, kind == 1 ? MN_ROLE_ASSISTANT : MN_ROLE_USER, text, NULL, NULL, pin);
            continue;
        }
        int n = 1 + (int)(next(&r) % 2);
        snprintf(calls, sizeof calls, "[");
        for (int k = 0; k < n; k++)
            snprintf(calls + strlen(calls), sizeof calls - strlen(calls),
                     "%s{\"id\":\"call%d_%d\",\"type\":\"function\",\"function\":{\"name\":\"grep\",\"arguments\":\"{}\"}}",
                     k ? "," : "", t, k);
        strcat(calls, "]");
        int64_t call = add(c, MN_ROLE_ASSISTANT, NULL, calls, NULL, pin);
        unsigned broken = next(&r) % 8; /* 0: the results never came (unmatched); 1: the call is deleted (orphans) */
        for (int k = 0; k < n && broken != 0; k++) {
            char id[32];
            snprintf(id, sizeof id, "call%d_%d", t, k);
            int len = snprintf(text, sizeof text, "out%dk%dseed%u", t, k, seed);
            size_t want = next(&r) % 3 == 0 ? 200 + next(&r) % 3000 : 40;
            while ((size_t)len < want && (size_t)len + 8 < sizeof text)
                len += snprintf(text + len, sizeof text - (size_t)len, " line%d", len);
            add(c, MN_ROLE_TOOL, text, NULL, id, 0);
        }
        if (broken == 1 && mn_message_delete(c->db, c->sid, call) != MN_OK)
            fail_msg("delete: %s", mn_errmsg());
    }
    assert_int_equal(mn_history(c->db, c->sid, NULL, &c->history), MN_OK);
}

static void drop_convo(struct convo *c)
{
    mn_messages_free(c->history);
    mn_close(c->db);
    test_rmdir(c->dir);
}

static const mn_message *by_seq(const struct convo *c, int64_t seq)
{
    for (size_t i = 0; i < c->history->count; i++)
        if (mn_messages_at(c->history, i)->seq == seq)
            return mn_messages_at(c->history, i);
    return NULL;
}

static int64_t num(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(o, a);
    return json_integer_value(b ? json_object_get(v, b) : v);
}

/* Is the tool call `call_id` (made by an assistant message) in the kept set `kept_seq`? */
static int call_kept(const struct convo *c, const char *call_id, const char *kept_seq)
{
    char needle[64];
    snprintf(needle, sizeof needle, "\"%s\"", call_id);
    for (size_t i = 0; i < c->history->count; i++) {
        const mn_message *m = mn_messages_at(c->history, i);
        if (m->tool_calls && strstr(m->tool_calls, needle))
            return kept_seq[m->seq] != 0;
    }
    return 0;
}

/* Hybrid never folds a system or pinned message with its unit (from the nearest non-tool message
 * at or before it to the next non-tool message): it sends them or drops them for the budget. */
static char *pinned_units(const struct convo *c, int64_t upto, int64_t max_seq)
{
    char *unit = calloc((size_t)max_seq + 1, 1);
    assert_non_null(unit);
    size_t n = c->history->count;
    for (size_t i = 0; i < n; i++) {
        const mn_message *p = mn_messages_at(c->history, i);
        if (p->seq > upto || !(p->pinned || p->role == MN_ROLE_SYSTEM))
            continue;
        size_t s = i;
        while (s > 0 && mn_messages_at(c->history, s)->role == MN_ROLE_TOOL)
            s--;
        for (size_t j = s; j < n && (j == s || mn_messages_at(c->history, j)->role == MN_ROLE_TOOL); j++)
            if (mn_messages_at(c->history, j)->seq <= upto)
                unit[mn_messages_at(c->history, j)->seq] = 1;
    }
    return unit;
}

static void check_one(const struct convo *c, int64_t budget, const char *strategy)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = strategy;
    o.max_tokens = budget;
    o.format = MN_FORMAT_TEXT;
    o.flags = MN_CONTEXT_DETAIL | MN_CONTEXT_NO_FOLD;
    o.rag = -1; /* the history's messages are what the detail lists */
    mn_context *ctx = NULL;
    if (mn_context_build(c->db, c->sid, &o, &ctx) != MN_OK)
        fail_msg("build %s %lld: %s", strategy, (long long)budget, mn_errmsg());
    json_error_t jerr;
    json_t *rep = json_loads(ctx->report, 0, &jerr);
    assert_non_null(rep);
    json_t *detail = json_object_get(rep, "detail");
    if (!json_is_array(detail))
        fail_msg("no detail in %s", ctx->report);

    size_t n_hist = c->history->count;
    int64_t max_seq = mn_messages_at(c->history, n_hist - 1)->seq;
    char *kept_seq = calloc((size_t)max_seq + 1, 1);
    assert_non_null(kept_seq);
    int64_t kept = 0, orphans = 0, unmatched = 0, tokens = 0, last = 0;
    int in_dropped = 0;
    size_t i;
    json_t *e;
    json_array_foreach(detail, i, e)
    {
        int64_t seq = num(e, "seq", NULL);
        const char *fate = json_string_value(json_object_get(e, "fate"));
        assert_non_null(fate);
        const mn_message *m = by_seq(c, seq);
        if (!m)
            fail_msg("detail lists seq %lld, not in the history", (long long)seq);
        int dropped = !strncmp(fate, "dropped", 7);
        if (dropped && !in_dropped) {
            in_dropped = 1;
            last = 0;
        }
        if (!dropped && in_dropped)
            fail_msg("kept seq %lld after the dropped ones", (long long)seq);
        if (seq <= last)
            fail_msg("detail out of seq order at %lld (%s)", (long long)seq, fate);
        last = seq;
        if (kept_seq[seq])
            fail_msg("seq %lld listed twice", (long long)seq);
        kept_seq[seq] = dropped ? 2 : 1;
        seen.dropped += dropped;
        if (dropped) {
            if (!strcmp(fate, "dropped_orphan"))
                orphans++;
            else if (!strcmp(fate, "dropped_unmatched"))
                unmatched++;
            else
                fail_msg("unknown fate %s", fate);
            continue;
        }
        kept++;
        assert_int_equal(num(e, "id", NULL), m->id);
        int64_t t = num(e, "tokens", NULL);
        assert_true(t > 0);
        tokens += t;
        seen.kept += !strcmp(fate, "kept");
        seen.trimmed += !strcmp(fate, "trimmed");
        if (!strcmp(fate, "kept")) {
            if (!strstr(ctx->rendered, m->content ? m->content : m->tool_calls ? "grep" : ""))
                fail_msg("kept seq %lld is not in the rendered text as stored", (long long)seq);
        } else if (!strcmp(fate, "trimmed")) {
            if (m->role != MN_ROLE_TOOL || !m->content || strlen(m->content) <= TRIM_CHARS)
                fail_msg("seq %lld trimmed but not a long tool output", (long long)seq);
            if (strstr(ctx->rendered, m->content))
                fail_msg("trimmed seq %lld is rendered whole", (long long)seq);
        } else if (strcmp(fate, "offloaded")) {
            fail_msg("unknown fate %s for a kept message", fate);
        }
    }
    for (i = 0; i < n_hist; i++) { /* tool pairs: both ends or neither */
        const mn_message *m = mn_messages_at(c->history, i);
        if (kept_seq[m->seq] != 1)
            continue;
        if (m->role == MN_ROLE_TOOL && !call_kept(c, m->tool_call_id, kept_seq))
            fail_msg("tool result seq %lld kept without its call", (long long)m->seq);
        if (m->tool_calls)
            for (size_t j = 0; j < n_hist; j++) {
                const mn_message *r = mn_messages_at(c->history, j);
                char needle[80];
                if (r->role != MN_ROLE_TOOL)
                    continue;
                snprintf(needle, sizeof needle, "\"%s\"", r->tool_call_id);
                if (strstr(m->tool_calls, needle) && kept_seq[r->seq] != 1)
                    fail_msg("call seq %lld kept without its result seq %lld", (long long)m->seq, (long long)r->seq);
            }
    }
    assert_int_equal(kept_seq[max_seq], 1); /* the newest message is always in */
    assert_int_equal(kept, (int64_t)ctx->kept);
    assert_int_equal(kept, num(rep, "messages", "kept"));
    json_t *gone = json_object_get(rep, "dropped");
    assert_int_equal(orphans, num(gone, "orphan_tool_result", NULL));
    assert_int_equal(unmatched, num(gone, "unmatched_tool_call", NULL));
    int64_t budget_dropped = num(gone, "budget", NULL);
    int64_t folded = json_is_object(json_object_get(rep, "summary")) ? num(rep, "summary", "covers_upto") : 0;
    int64_t n_folded = 0;
    char *unit = pinned_units(c, !strcmp(strategy, "hybrid") ? folded : 0, max_seq);
    for (i = 0; i < n_hist; i++) {
        const mn_message *m = mn_messages_at(c->history, i);
        n_folded += m->seq <= folded && !kept_seq[m->seq] && !unit[m->seq];
    }
    free(unit);
    seen.folded += n_folded;
    if (kept + orphans + unmatched + n_folded + budget_dropped != (int64_t)n_hist)
        fail_msg("%s budget %lld: kept %lld + orphans %lld + unmatched %lld + folded %lld + budget %lld != %zu live: %s",
                 strategy, (long long)budget, (long long)kept, (long long)orphans, (long long)unmatched,
                 (long long)n_folded, (long long)budget_dropped, n_hist, ctx->report);
    /* a summary or an omission marker is sent as a message of its own, not in the detail */
    if (!json_is_object(json_object_get(rep, "summary")) && !num(rep, "marker", NULL))
        if (tokens != num(rep, "parts", "messages"))
            fail_msg("%s budget %lld: detail tokens %lld, parts.messages %lld: %s", strategy, (long long)budget,
                     (long long)tokens, (long long)num(rep, "parts", "messages"), ctx->report);
    free(kept_seq);
    json_decref(rep);
    mn_context_free(ctx);
}

static void detail_matches_history_over_budgets(void **state)
{
    (void)state;
    static const char *const strategies[] = {"window", "hybrid"};
    for (unsigned seed = 1; seed <= 6; seed++) {
        struct convo c = {0};
        make_convo(&c, seed, 20 + (int)(seed * 7));
        if (seed % 2 == 0) { /* a stored summary: the folded messages are not listed */
            char *ev = NULL;
            if (mn_compact(c.db, c.sid, &ev) != MN_OK)
                fail_msg("compact: %s", mn_errmsg());
            mn_free(ev);
        }
        for (size_t s = 0; s < 2; s++)
            for (int64_t budget = 40; budget <= 4000; budget = budget * 3 / 2 + 7)
                check_one(&c, budget, strategies[s]);
        drop_convo(&c);
    }
    if (!seen.kept || !seen.trimmed || !seen.dropped || !seen.folded)
        fail_msg("the sweep missed a fate: kept %lld trimmed %lld dropped %lld folded %lld", (long long)seen.kept,
                 (long long)seen.trimmed, (long long)seen.dropped, (long long)seen.folded);
}

/* Without the flag the report has no detail; with it, a session with one message lists it. */
static void detail_only_when_asked(void **state)
{
    (void)state;
    struct convo c = {0};
    make_convo(&c, 99, 0);
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    mn_context *ctx = NULL;
    assert_int_equal(mn_context_build(c.db, c.sid, &o, &ctx), MN_OK);
    assert_null(strstr(ctx->report, "\"detail\""));
    mn_context_free(ctx);
    check_one(&c, 1000, "window");
    o.flags = 1u << 30;
    assert_int_equal(mn_context_build(c.db, c.sid, &o, &ctx), MN_INVALID);
    drop_convo(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(detail_matches_history_over_budgets),
        cmocka_unit_test(detail_only_when_asked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
