/*
 * test_context_props.c — the context invariants as properties, with no database: random
 * conversations (tool-heavy, long messages, multi-result tool calls, orphan results, pins or a
 * head, a stored summary, a system prompt or not) go through governance (trimming), the pure
 * layout of every strategy and every format, over a sweep of budgets from 1 token to unbounded.
 * Checked for each: the newest unit and the system prompt are there; within the budget unless
 * the report says over_budget with the exact shortfall, and then nothing optional is there; the
 * current turn's user message (the newest user message) verbatim in every context; the summary
 * before any older message; the recent part a contiguous newest end, but for the current turn's
 * older steps, which leave first (one gap, right after its user message, and then nothing older);
 * no free room while a recent unit was left out; calls and results paired; never starting on a
 * tool result; the same input gives the same bytes. A third of the conversations end in an agent
 * loop: a user task then 1-200 tool steps with outputs up to 50 KB.
 * The seed is fixed (MNEMO_PROPS_SEED overrides it) and printed on failure.
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

#include "context/context.h"
#include "memory/message.h"

#define CONVERSATIONS 36
#define MAX_MSGS 48
#define MAX_STEPS 200
#define CAP_MSGS (MAX_MSGS * 4 + MAX_STEPS * 2 + 2)

static uint64_t rng;
static unsigned long long seed0;

static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static uint32_t below(uint32_t n) { return n ? next() % n : 0; }

#define CHECK(cond, ...)                                                                                             \
    do {                                                                                                             \
        if (!(cond)) {                                                                                               \
            fprintf(stderr, "property failed (MNEMO_PROPS_SEED=%llu, conversation %d, strategy %s, budget %lld): ", \
                    seed0, conv, strategy, (long long)budget);                                                      \
            fprintf(stderr, __VA_ARGS__);                                                                            \
            fprintf(stderr, "\n");                                                                                   \
            fail();                                                                                                  \
        }                                                                                                            \
    } while (0)

struct conv {
    struct mn_arena arena;
    mn_message msgs[CAP_MSGS];
    size_t n;
    mn_message pins[8];
    size_t npins;
    const char *system, *summary;
};

static const char *words[] = {"file", "src/store/migrate_v3.c", "error", "fixed", "the", "a", "build", "test",
                              "é", "日本", "path", "42", "v1.2.3", "\n", "{\"k\": 1}", "tool", "call"};

static char *text(struct mn_arena *a, size_t max_words)
{
    size_t nw = 1 + below((uint32_t)max_words);
    char buf[16384];
    size_t len = 0;
    for (size_t i = 0; i < nw && len + 32 < sizeof buf; i++) {
        const char *w = words[below(sizeof words / sizeof words[0])];
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? " " : "", w);
    }
    return mn__arena_strndup(a, buf, len);
}

/* A tool output of about `chars` characters (up to 50 KB). */
static char *output(struct mn_arena *a, size_t chars)
{
    static char buf[51200];
    size_t len = 0;
    while (len + 40 < chars && len + 40 < sizeof buf)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s line %u ok\n", words[below(sizeof words / sizeof words[0])],
                                below(1000));
    return mn__arena_strndup(a, buf, len);
}

static void add(struct conv *c, const mn_tokenizer *tk, mn_role role, const char *content, const char *calls,
                const char *call_id)
{
    mn_message *m = &c->msgs[c->n];
    memset(m, 0, sizeof *m);
    m->id = (int64_t)c->n + 1;
    m->seq = (int64_t)c->n + 1;
    m->session_id = "s";
    m->role = role;
    m->content = content;
    m->tool_calls = calls;
    m->tool_call_id = call_id;
    m->metadata = "{}";
    m->tokens = mn__message_tokens(tk, m);
    c->n++;
}

static void generate(struct conv *c, const mn_tokenizer *tk)
{
    memset(c, 0, sizeof *c);
    int tool_heavy = below(2), long_msgs = below(3) == 0;
    if (below(5) == 0) /* an orphan result at the start */
        add(c, tk, MN_ROLE_TOOL, "orphan", NULL, "zz");
    size_t turns = 1 + below(MAX_MSGS / 4);
    for (size_t t = 0; t < turns; t++) {
        add(c, tk, MN_ROLE_USER, text(&c->arena, long_msgs ? 500 : 30), NULL, NULL);
        int calls = tool_heavy ? (int)below(4) : (int)below(2);
        for (int k = 0; k < calls && c->n + 6 < MAX_MSGS * 4; k++) {
            int results = 1 + (int)below(3);
            char buf[512];
            size_t len = (size_t)snprintf(buf, sizeof buf, "[");
            for (int r = 0; r < results; r++)
                len += (size_t)snprintf(buf + len, sizeof buf - len,
                                        "%s{\"id\":\"c%zu_%d\",\"type\":\"function\",\"function\":{\"name\":\"run\","
                                        "\"arguments\":\"{}\"}}",
                                        r ? "," : "", c->n, r);
            snprintf(buf + len, sizeof buf - len, "]");
            size_t call_at = c->n;
            add(c, tk, MN_ROLE_ASSISTANT, below(2) ? "" : text(&c->arena, 10), mn__arena_strndup(&c->arena, buf, strlen(buf)),
                NULL);
            for (int r = 0; r < results; r++) {
                char id[32];
                snprintf(id, sizeof id, "c%zu_%d", call_at, r);
                add(c, tk, MN_ROLE_TOOL, text(&c->arena, tool_heavy ? 700 : 40), NULL,
                    mn__arena_strndup(&c->arena, id, strlen(id)));
            }
        }
        if (t + 1 < turns || below(2))
            add(c, tk, MN_ROLE_ASSISTANT, text(&c->arena, long_msgs ? 600 : 40), NULL, NULL);
    }
    if (below(3) == 0) { /* an agent loop: the task, then its tool steps */
        add(c, tk, MN_ROLE_USER, text(&c->arena, below(4) ? 20 : 400), NULL, NULL);
        size_t steps = 1 + (below(2) ? below(MAX_STEPS) : below(12));
        for (size_t k = 0; k < steps && c->n + 2 <= CAP_MSGS; k++) {
            char buf[256], id[32];
            snprintf(id, sizeof id, "s%zu", c->n);
            snprintf(buf, sizeof buf,
                     "[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"sh\",\"arguments\":\"{}\"}}]", id);
            add(c, tk, MN_ROLE_ASSISTANT, "", mn__arena_strndup(&c->arena, buf, strlen(buf)), NULL);
            size_t chars = below(20) == 0 ? 1 + below(51200) : 1 + below(600);
            add(c, tk, MN_ROLE_TOOL, output(&c->arena, chars), NULL, mn__arena_strndup(&c->arena, id, strlen(id)));
        }
    }
    c->system = below(3) ? text(&c->arena, below(4) ? 20 : 400) : NULL;
    c->summary = below(3) ? text(&c->arena, below(3) ? 60 : 1200) : NULL;
    c->npins = below(3) == 0 ? 1 + below(3) : 0;
    for (size_t i = 0; i < c->npins; i++) {
        mn_message *p = &c->pins[i];
        memset(p, 0, sizeof *p);
        p->id = 1000 + (int64_t)i;
        p->seq = 1000 + (int64_t)i;
        p->session_id = "s";
        p->role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        p->content = text(&c->arena, 30);
        p->metadata = "{}";
        p->tokens = mn__message_tokens(tk, p);
    }
}

/* Index of the first message of the last unit of m[0..n) (m validated). */
static size_t last_unit(const mn_message *m, size_t n)
{
    size_t i = n;
    while (i > 0 && m[i - 1].role == MN_ROLE_TOOL)
        i--;
    return i ? i - 1 : 0;
}

static char *render(const struct mn_window *w, mn_format f, const json_t *extra)
{
    char *out = NULL, *rep = NULL;
    assert_int_equal(mn__context_render_ex(w, "props", "heuristic", f, extra, &out, &rep), MN_OK);
    free(rep);
    return out;
}

static void check_one(int conv, const char *strategy, int64_t budget, const mn_layout_in *in, const struct conv *c)
{
    struct mn_window w, w2;
    memset(&w, 0, sizeof w);
    memset(&w2, 0, sizeof w2);
    mn_layout_out lo, lo2;
    assert_int_equal(mn__context_layout(in, &w, &lo), MN_OK);
    assert_int_equal(mn__context_layout(in, &w2, &lo2), MN_OK);
    int64_t total = w.system_tokens + w.message_tokens + w.framing_tokens;
    size_t nu = in->n_tail ? last_unit(in->tail, in->n_tail) : 0;
    size_t unit_len = in->n_tail - nu;
    /* the current turn's user message, when it is not the newest unit itself */
    size_t task = in->n_tail;
    for (size_t i = in->n_tail; i-- > 0 && task == in->n_tail;)
        if (in->tail[i].role == MN_ROLE_USER && in->tail[i].seq > 0)
            task = i;
    int has_task = task < nu;
    const mn_message *tm = has_task ? &in->tail[task] : NULL;
    if (tm) {
        int found = 0;
        for (size_t i = 0; i < w.count && !found; i++)
            found = w.items[i].seq == tm->seq && strcmp(w.items[i].content, tm->content) == 0;
        CHECK(found, "the current turn's user message (seq %lld) is missing", (long long)tm->seq);
    }
    /* the newest unit, at the end, whole */
    CHECK(w.count >= unit_len, "only %zu items, the newest unit has %zu", w.count, unit_len);
    for (size_t i = 0; i < unit_len; i++)
        CHECK(w.items[w.count - unit_len + i].seq == in->tail[nu + i].seq, "newest unit message %zu missing", i);
    /* the report's marker counts only a marker that was sent */
    int marker_sent = 0;
    for (size_t i = 0; i < w.count; i++)
        marker_sent |= w.items[i].seq == 0 && strncmp(w.items[i].content, "[Earlier conversation trimmed", 29) == 0;
    CHECK((lo.marker > 0) == marker_sent, "report marker %lld, marker %s", (long long)lo.marker,
          marker_sent ? "sent" : "not sent");
    /* the system prompt */
    CHECK((w.system_prompt != NULL) == (c->system != NULL), "system prompt %s", w.system_prompt ? "added" : "lost");
    /* the budget, or the exact shortfall with nothing optional */
    if (total <= budget)
        CHECK(lo.shortfall == 0 && !w.over_budget, "within budget but shortfall %lld", (long long)lo.shortfall);
    else {
        CHECK(lo.shortfall == total - budget, "shortfall %lld, over by %lld", (long long)lo.shortfall,
              (long long)(total - budget));
        CHECK(w.count == unit_len + (size_t)has_task, "over budget with %zu optional items",
              w.count - unit_len - (size_t)has_task);
    }
    /* the summary before older messages: none of them without it */
    size_t synthetic = 0, hist_tail = 0, first_tail = w.count;
    for (size_t i = 0; i < w.count; i++) {
        if (w.items[i].seq == 0)
            synthetic++;
        else if (in->n_tail && w.items[i].seq >= in->tail[0].seq && w.items[i].seq < 1000) {
            hist_tail++;
            if (first_tail == w.count)
                first_tail = i;
        }
    }
    if (in->summary && (hist_tail > unit_len + (size_t)has_task || w.count - synthetic - hist_tail > 0))
        CHECK(lo.summary_shown, "older messages kept, the summary not");
    /* the recent part is the newest end, contiguous, but for one gap right after the task, which
     * then starts the recent part; no room left while the next older unit would fit */
    size_t gaps = 0;
    for (size_t i = first_tail; i + 1 < w.count; i++)
        if (w.items[i + 1].seq != w.items[i].seq + 1) {
            gaps++;
            CHECK(tm && w.items[i].seq == tm->seq && i == first_tail, "gap in the recent part at seq %lld",
                  (long long)w.items[i].seq);
        }
    CHECK(gaps <= 1, "%zu gaps in the recent part", gaps);
    if (first_tail < w.count)
        CHECK(w.items[first_tail].role != MN_ROLE_TOOL, "starts on a tool result");
    if (first_tail < w.count && !in->mem_budget && total <= budget && (!in->summary || lo.summary_shown)) {
        /* the unit the layout would have taken next: the newest step left out, else the one
         * before the recent part */
        int64_t next_seq = gaps ? w.items[first_tail + 1].seq : w.items[first_tail].seq;
        size_t j = 0;
        while (j < in->n_tail && in->tail[j].seq < next_seq)
            j++;
        size_t end = j, st = j;
        while (st > 0 && in->tail[st - 1].role == MN_ROLE_TOOL)
            st--;
        if (st > 0 && (gaps || !tm || in->tail[st - 1].seq != tm->seq) && in->tail[st - 1].seq > 0) {
            st--;
            int64_t cost = 0;
            for (size_t k = st; k < end; k++)
                cost += mn__context_cost(&in->tail[k]);
            if (!(gaps == 0 && tm && next_seq > tm->seq)) /* the steps were all in: older units */
                CHECK(budget - total < cost, "%lld tokens free, the unit at seq %lld costs %lld",
                      (long long)(budget - total), (long long)in->tail[st].seq, (long long)cost);
        }
    }
    /* calls and results paired */
    for (size_t i = 0; i < w.count; i++) {
        const mn_message *m = &w.items[i];
        if (m->role == MN_ROLE_TOOL) {
            size_t j = i;
            while (j > 0 && w.items[j - 1].role == MN_ROLE_TOOL)
                j--;
            CHECK(j > 0 && w.items[j - 1].tool_calls && strstr(w.items[j - 1].tool_calls, m->tool_call_id),
                  "result %s without its call", m->tool_call_id);
        } else if (m->tool_calls) {
            json_t *calls = json_loads(m->tool_calls, 0, NULL);
            size_t results = 0;
            for (size_t j = i + 1; j < w.count && w.items[j].role == MN_ROLE_TOOL; j++)
                results++;
            CHECK(results == json_array_size(calls), "call with %zu of %zu results", results, json_array_size(calls));
            json_decref(calls);
        }
    }
    /* every format: the newest message is there, the same bytes twice */
    json_t *extra = json_pack("{s:b, s:I}", "over_budget", lo.shortfall > 0, "shortfall", (json_int_t)lo.shortfall);
    for (int f = MN_FORMAT_OPENAI; f <= MN_FORMAT_TEXT; f++) {
        char *a = render(&w, (mn_format)f, extra), *b = render(&w2, (mn_format)f, extra);
        CHECK(strcmp(a, b) == 0, "format %d: different bytes for the same input", f);
        if (in->n_tail) {
            const char *newest = in->tail[in->n_tail - 1].content;
            if (f == MN_FORMAT_OPENAI) {
                json_t *v = json_loads(a, 0, NULL);
                json_t *last = json_array_get(v, json_array_size(v) - 1);
                CHECK(last && strcmp(json_string_value(json_object_get(last, "content")), newest) == 0,
                      "openai: the newest message is not last");
                json_decref(v);
            } else if (f == MN_FORMAT_ANTHROPIC) {
                json_t *v = json_loads(a, 0, NULL);
                CHECK(json_is_array(json_object_get(v, "messages")), "anthropic: not a messages object");
                CHECK(!c->system || json_object_get(v, "system"), "anthropic: no system");
                json_decref(v);
            } else
                CHECK(strstr(a, newest) != NULL, "text: the newest message is missing");
        }
        free(a);
        free(b);
    }
    json_decref(extra);
    mn__window_release(&w);
    mn__window_release(&w2);
}

static void sweep(void **state)
{
    (void)state;
    const char *env = getenv("MNEMO_PROPS_SEED");
    seed0 = env && *env ? strtoull(env, NULL, 10) : 20261123ULL;
    rng = seed0 * 2654435761ULL + 1;
    mn_tokenizer *tk = NULL;
    assert_int_equal(mn__token_open("heuristic", NULL, &tk), MN_OK);
    static struct conv c;
    static const char *const strategies[] = {"window", "summary", "chunked", "hybrid"};
    for (int conv = 0; conv < CONVERSATIONS; conv++) {
        generate(&c, tk);
        /* governance as every build does it: trimming old tool output, pairing validated */
        struct mn_window gw;
        memset(&gw, 0, sizeof gw);
        struct mn_gov g;
        memset(&g, 0, sizeof g);
        g.tk = tk;
        g.trim_chars = below(2) ? 300 : 0;
        gw.gov = &g;
        assert_int_equal(mn__window_walk(&gw, c.msgs, c.n, INT64_MAX / 4, NULL), MN_OK);
        gw.gov = NULL;
        int64_t whole = 0;
        for (size_t i = 0; i < gw.count; i++)
            whole += mn__context_cost(&gw.items[i]);
        for (int s = 0; s < 4; s++) {
            const char *strategy = strategies[s];
            int64_t budget = 1;
            while (1) {
                mn_layout_in in = {"s", tk, c.system, NULL, 0, c.summary, 17, gw.items, gw.count, 0, budget, 0,
                                   s > 0};
                if (s == 1) { /* summary: the first exchange as the head, a hidden middle */
                    size_t head = gw.count > 3 ? 2 : 0;
                    in.old = gw.items;
                    in.n_old = head;
                    in.tail = gw.items + head;
                    in.n_tail = gw.count - head;
                    while (in.n_tail && in.tail[0].role == MN_ROLE_TOOL) /* as the plan cuts: on a unit */
                        in.n_old++, in.tail++, in.n_tail--;
                    in.hidden = below(5);
                } else if (s == 2)
                    in.mem_budget = 1 + below(3000);
                else if (s == 3) {
                    in.old = c.pins;
                    in.n_old = c.npins;
                }
                check_one(conv, strategy, budget, &in, &c);
                if (budget >= 100000000)
                    break;
                budget = budget > whole * 2 + 2000 ? 100000000 : budget + 1 + budget / 2 + (int64_t)below(7);
            }
        }
        mn__window_release(&gw);
        mn__arena_release(&c.arena);
    }
    mn__token_free(tk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(sweep)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
