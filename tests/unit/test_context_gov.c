/*
 * test_context_gov.c — context governance: the summary, chunked and hybrid strategies on
 * scripted and random conversations (invariants, budget, determinism), tool-output trimming and
 * offloading, loop detection, the pre-flight check, the inflation guard, summariser failure and
 * fallback, the in-flight claim, staged compaction of a full context, pins, and prefix stability.
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
#include <sys/stat.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"
#include "context/context.h"
#include "engine/engine.h"
#include "summarize/summarize.h"

static char dir[96];
static int seq_db;

static mn_db *open_db(const char *const *kv)
{
    char path[160];
    snprintf(path, sizeof path, "%s/gov%d.db", dir, seq_db++);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    for (; kv && kv[0]; kv += 2)
        if (mn_config_set(cfg, kv[0], kv[1], NULL) != MN_OK)
            fail_msg("config %s: %s", kv[0], mn_errmsg());
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static char *new_session(mn_db *db, const char *system)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.system_prompt = system;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static int64_t add(mn_db *db, const char *sid, mn_role role, const char *content, const char *calls,
                   const char *call_id)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = content;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    mn_message *out = NULL;
    if (mn_append(db, sid, &m, 0, &out) != MN_OK)
        fail_msg("append: %s", mn_errmsg());
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

static void add_call(mn_db *db, const char *sid, const char *id, const char *name, const char *args,
                     const char *result)
{
    char calls[512];
    snprintf(calls, sizeof calls, "[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"%s\"}}]",
             id, name, args);
    add(db, sid, MN_ROLE_ASSISTANT, NULL, calls, NULL);
    add(db, sid, MN_ROLE_TOOL, result, NULL, id);
}

struct built {
    json_t *msgs, *report;
    char *rendered;
};

static struct built build(mn_db *db, const char *sid, const char *strategy, int64_t budget, unsigned flags)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = strategy;
    o.max_tokens = budget;
    o.flags = flags;
    o.rag = -1; /* the history is what this file checks; retrieval has test_search and test_current_turn */
    mn_context *c = NULL;
    if (mn_context_build(db, sid, &o, &c) != MN_OK)
        fail_msg("build %s: %s", strategy, mn_errmsg());
    struct built b = {json_loads(c->rendered, 0, NULL), json_loads(c->report, 0, NULL), strdup(c->rendered)};
    assert_non_null(b.msgs);
    assert_non_null(b.report);
    assert_int_equal(json_integer_value(json_object_get(b.report, "tokens")), c->tokens);
    mn_context_free(c);
    return b;
}

static void built_free(struct built *b)
{
    json_decref(b->msgs);
    json_decref(b->report);
    free(b->rendered);
}

static const char *role_of(json_t *m) { return json_string_value(json_object_get(m, "role")); }

static void check_invariants(const struct built *b, int64_t budget, int has_system)
{
    json_t *msgs = b->msgs;
    size_t n = json_array_size(msgs), first = 0;
    int64_t tokens = json_integer_value(json_object_get(b->report, "tokens"));
    int over = json_is_true(json_object_get(b->report, "over_budget"));
    if (!over && tokens > budget)
        fail_msg("tokens %lld over budget %lld", (long long)tokens, (long long)budget);
    if (has_system) {
        assert_true(n >= 1);
        assert_string_equal(role_of(json_array_get(msgs, 0)), "system");
        first = 1;
    }
    if (n > first)
        assert_string_not_equal(role_of(json_array_get(msgs, first)), "tool");
    for (size_t i = first; i < n; i++) {
        json_t *m = json_array_get(msgs, i);
        json_t *calls = json_object_get(m, "tool_calls");
        if (calls) {
            size_t k = json_array_size(calls);
            for (size_t j = 0; j < k; j++) {
                json_t *r = json_array_get(msgs, i + 1 + j);
                assert_non_null(r);
                assert_string_equal(role_of(r), "tool");
                const char *rid = json_string_value(json_object_get(r, "tool_call_id"));
                int found = 0;
                for (size_t c = 0; c < k; c++)
                    found |= strcmp(json_string_value(json_object_get(json_array_get(calls, c), "id")), rid) == 0;
                assert_true(found);
            }
        }
        if (strcmp(role_of(m), "tool") == 0) {
            size_t j = i;
            while (j > first && strcmp(role_of(json_array_get(msgs, j - 1)), "tool") == 0)
                j--;
            assert_true(j > first);
            assert_non_null(json_object_get(json_array_get(msgs, j - 1), "tool_calls"));
        }
    }
}

static json_t *rget(json_t *r, const char *a, const char *b)
{
    json_t *v = json_object_get(r, a);
    return b ? json_object_get(v, b) : v;
}

static const char *const strategies[] = {"window", "summary", "chunked", "hybrid"};

/* Random conversations (tool-heavy, some outputs far over the budget) and budgets: every
 * strategy's context keeps the invariants and the budget, and is the same bytes when built
 * again. */
static void random_conversations(void **state)
{
    (void)state;
    static const char *const kv[] = {"context.max_history_messages", "12", "context.chunk_threshold_tokens", "400",
                                     "context.prompt_budget_tokens", "300", "context.hybrid_recent_messages", "6",
                                     "context.tool_output_trim_chars", "300", NULL};
    mn_db *db = open_db(kv);
    unsigned seed = 4242;
    static char big[20001];
    memset(big, 'y', sizeof big - 1);
    for (int conv = 0; conv < 12; conv++) {
        char *sid = new_session(db, conv % 3 ? "system rules" : NULL);
        int n = 5 + (int)(rand_r(&seed) % 60);
        int calls = 0;
        for (int i = 0; i < n; i++) {
            int kind = (int)(rand_r(&seed) % 6);
            char text[600], id[16];
            int len = (int)(rand_r(&seed) % 500);
            memset(text, 'a' + (char)(i % 26), (size_t)len);
            text[len] = '\0';
            if (kind == 0 || kind == 1)
                add(db, sid, MN_ROLE_USER, text, NULL, NULL);
            else if (kind == 2)
                add(db, sid, MN_ROLE_ASSISTANT, text[0] ? text : "ok", NULL, NULL);
            else {
                snprintf(id, sizeof id, "k%d", calls++);
                big[rand_r(&seed) % 20000] = '\0';
                add_call(db, sid, id, kind == 5 ? "grep" : "read", "{}", kind == 5 ? big : text);
                memset(big, 'y', sizeof big - 1);
            }
            if (rand_r(&seed) % 7 == 0) /* a stray result sometimes */
                add(db, sid, MN_ROLE_TOOL, "stray", NULL, "zz");
        }
        for (int b = 0; b < 6; b++) {
            int64_t budget = 40 + (int64_t)(rand_r(&seed) % 3000);
            for (size_t s = 0; s < 4; s++) {
                struct built x = build(db, sid, strategies[s], budget, 0);
                check_invariants(&x, budget, conv % 3 != 0);
                struct built y = build(db, sid, strategies[s], budget, 0);
                struct built z = build(db, sid, strategies[s], budget, 0);
                check_invariants(&y, budget, conv % 3 != 0);
                assert_string_equal(y.rendered, z.rendered); /* same stored data → same bytes */
                built_free(&x);
                built_free(&y);
                built_free(&z);
            }
        }
        free(sid);
    }
    mn_close(db);
}

static void trimming_and_offloading(void **state)
{
    (void)state;
    static const char *const kv[] = {"context.tool_output_trim_chars", "100", NULL};
    mn_db *db = open_db(kv);
    char *sid = new_session(db, "sys");
    char out[5001];
    memset(out, 'z', 5000);
    out[5000] = '\0';
    memcpy(out, "HEAD", 4);
    memcpy(out + 4996, "TAIL", 4);
    add(db, sid, MN_ROLE_USER, "go", NULL, NULL);
    add_call(db, sid, "a1", "cat", "{}", out);
    add_call(db, sid, "a2", "json", "{}", "{ \"k\" :  [1, 2,   3],  \"pad\": \"                      \" }");
    add_call(db, sid, "a3", "cat", "{}", out); /* the last exchange: never trimmed */
    struct built b = build(db, sid, "window", 100000, 0);
    const char *c1 = json_string_value(json_object_get(json_array_get(b.msgs, 3), "content"));
    assert_non_null(strstr(c1, "[…truncated, 5000 chars total]"));
    assert_true(strncmp(c1, "HEAD", 4) == 0);
    assert_non_null(strstr(c1, "TAIL"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(b.msgs, 3), "tool_call_id")), "a1");
    assert_int_equal(strlen(json_string_value(json_object_get(json_array_get(b.msgs, 7), "content"))), 5000);
    assert_int_equal(json_integer_value(rget(rget(b.report, "governance", "tool_outputs"), "trimmed", NULL)), 1);
    assert_true(json_integer_value(rget(rget(b.report, "governance", "tool_outputs"), "tokens_saved", NULL)) > 1000);
    built_free(&b);
    mn_close(db);
    /* 0 disables trimming */
    static const char *const off[] = {"context.tool_output_trim_chars", "0", NULL};
    db = open_db(off);
    free(sid);
    sid = new_session(db, NULL);
    add(db, sid, MN_ROLE_USER, "go", NULL, NULL);
    add_call(db, sid, "a1", "cat", "{}", out);
    add_call(db, sid, "a2", "cat", "{}", "short");
    b = build(db, sid, "chunked", 100000, 0);
    assert_int_equal(strlen(json_string_value(json_object_get(json_array_get(b.msgs, 2), "content"))), 5000);
    built_free(&b);
    mn_close(db);
    /* offloading: the full output goes to a file named in the preview */
    static const char *const on[] = {"context.tool_output_offload", "on", "context.tool_output_protect_tokens", "0",
                                     "context.tool_output_offload_threshold_tokens", "10", NULL};
    db = open_db(on);
    free(sid);
    sid = new_session(db, NULL);
    add(db, sid, MN_ROLE_USER, "go", NULL, NULL);
    add_call(db, sid, "a1", "cat", "{}", out);
    add_call(db, sid, "a2", "cat", "{}", "short");
    b = build(db, sid, "window", 100000, 0);
    const char *prev = json_string_value(json_object_get(json_array_get(b.msgs, 2), "content"));
    const char *p = strstr(prev, "full output in ");
    assert_non_null(p);
    char path[512];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(p + 15, "]"), p + 15);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, 5000);
    assert_non_null(strstr(path, sid));
    assert_int_equal(json_integer_value(rget(rget(b.report, "governance", "tool_outputs"), "offloaded", NULL)), 1);
    struct built again = build(db, sid, "window", 100000, 0);
    assert_string_equal(again.rendered, b.rendered);
    built_free(&again);
    built_free(&b);
    free(sid);
    mn_close(db);
}

static void loops_and_preflight(void **state)
{
    (void)state;
    mn_db *db = open_db(NULL);
    char *sid = new_session(db, "sys");
    add(db, sid, MN_ROLE_USER, "go", NULL, NULL);
    add_call(db, sid, "b0", "ls", "{\\\"d\\\":1}", "x");
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof id, "l%d", i);
        add_call(db, sid, id, "grep", "{\\\"q\\\":\\\"foo\\\"}", "no match");
    }
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.max_tokens = 500;
    o.model_window = 800;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, sid, &o, &c), MN_OK);
    json_t *r = json_loads(c->report, 0, NULL);
    assert_string_equal(json_string_value(rget(rget(r, "governance", "loop"), "tool", NULL)), "grep");
    assert_int_equal(json_integer_value(rget(rget(r, "governance", "loop"), "repeats", NULL)), 4);
    json_t *pf = json_object_get(r, "preflight");
    assert_int_equal(json_integer_value(json_object_get(pf, "reserve_tokens")), 200);
    assert_int_equal(json_integer_value(json_object_get(pf, "safety_margin")), 512);
    assert_false(json_is_true(json_object_get(pf, "fits"))); /* tokens + 200 + 512 > 800 */
    json_decref(r);
    mn_context_free(c);
    /* an older caller's smaller options struct still works */
    struct {
        size_t size;
        const char *strategy;
        int64_t max_tokens;
        mn_format format;
    } old = {offsetof(mn_context_opts, model_window), "window", 100, MN_FORMAT_TEXT};
    assert_int_equal(mn_context_build(db, sid, (const mn_context_opts *)&old, &c), MN_OK);
    mn_context_free(c);
    mn_budget bs;
    assert_int_equal(mn_budget_split(128000, &bs), MN_OK);
    assert_int_equal(bs.response, 16000);
    assert_int_equal(bs.history, 37333);
    assert_int_equal(bs.files, 128000 - 16000 - 37333);
    assert_int_equal(mn_budget_split(1000000, &bs), MN_OK);
    assert_int_equal(bs.history, 50000);
    assert_int_equal(mn_budget_split(0, &bs), MN_INVALID);
    o.strategy = "magic";
    assert_int_equal(mn_context_build(db, sid, &o, &c), MN_INVALID);
    free(sid);
    mn_close(db);
}

static char *events(mn_db *db, const char *sid)
{
    char *j = NULL;
    assert_int_equal(mn_events_json(db, sid, 0, &j), MN_OK);
    return j;
}

static void conversation(mn_db *db, const char *sid, int turns, int pad)
{
    char text[2048];
    for (int t = 0; t < turns; t++) {
        snprintf(text, sizeof text, "Please fix bug %d in src/m%d.c %.*s", t, t, pad,
                 "--------------------------------------------------------------------------------------------------"
                 "--------------------------------------------------------------------------------------------------");
        add(db, sid, MN_ROLE_USER, text, NULL, NULL);
        char id[16];
        snprintf(id, sizeof id, "t%d", t);
        snprintf(text, sizeof text, "FAILED test_%d: error at line %d %.*s", t, t, pad,
                 "==================================================================================================="
                 "===================================================================================================");
        add_call(db, sid, id, "run_tests", "{}", text);
        snprintf(text, sizeof text, "Fixed bug %d; tests pass now.", t);
        add(db, sid, MN_ROLE_ASSISTANT, text, NULL, NULL);
    }
}

/* The summary strategy: head + summary + tail; `none` falls back to the static marker. */
static void summary_strategy_and_fallback(void **state)
{
    (void)state;
    static const char *const kv[] = {"context.max_history_messages", "20", "context.summary_trigger_percent", "0", NULL};
    mn_db *db = open_db(kv);
    char *sid = new_session(db, "sys");
    conversation(db, sid, 10, 10);
    struct built b = build(db, sid, "summary", 100000, 0);
    check_invariants(&b, 100000, 1);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "ok");
    /* head: the first run up to the first assistant text reply (user, call, result, reply) */
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(b.msgs, 1), "content")), "bug 0"));
    assert_non_null(strstr(json_string_value(json_object_get(json_array_get(b.msgs, 4), "content")), "Fixed bug 0"));
    const char *sm = json_string_value(json_object_get(json_array_get(b.msgs, 5), "content"));
    assert_true(strncmp(sm, "[Summary of ", 12) == 0);
    /* the fold leaves a tail of max(4, 20/2) = 10 messages, moved back to start on the tool call
     * (11); the room the summary leaves goes to the 25 messages it stands for, verbatim: all 36
     * after the head, here */
    assert_int_equal(json_array_size(b.msgs), 1 + 4 + 1 + 36);
    assert_int_equal(json_integer_value(rget(b.report, "summary", "covers_upto")), 29);
    built_free(&b);
    mn_summary *s = NULL;
    assert_int_equal(mn_summary_get(db, sid, &s), MN_OK);
    assert_string_equal(s->summarizer, "extractive");
    assert_int_equal(s->covers_upto, 29);
    mn_summary_free(s);
    mn_close(db);
    /* none: the marker, nothing lost, an event says why */
    static const char *const none[] = {"context.max_history_messages", "20", "context.summary_trigger_percent", "0",
                                       "summarizer.name", "none", NULL};
    db = open_db(none);
    free(sid);
    sid = new_session(db, "sys");
    conversation(db, sid, 10, 10);
    b = build(db, sid, "summary", 100000, 0);
    check_invariants(&b, 100000, 1);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "failed");
    assert_string_equal(json_string_value(json_object_get(json_array_get(b.msgs, 5), "content")),
                        "[Earlier conversation trimmed — 25 messages removed to stay within context budget]");
    built_free(&b);
    char *ev = events(db, sid);
    assert_non_null(strstr(ev, "\"outcome\":\"failed\""));
    assert_non_null(strstr(ev, "'none' is configured"));
    free(ev);
    mn_messages *h = NULL;
    assert_int_equal(mn_history(db, sid, NULL, &h), MN_OK);
    assert_int_equal(h->count, 40);
    mn_messages_free(h);
    assert_int_equal(mn_summary_get(db, sid, &s), MN_NOTFOUND);
    /* within the retry gap the fold is not tried again (no new event) */
    b = build(db, sid, "summary", 100000, 0);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "cooldown");
    built_free(&b);
    ev = events(db, sid);
    json_t *arr = json_loads(ev, 0, NULL);
    assert_int_equal(json_array_size(arr), 1);
    json_decref(arr);
    free(ev);
    free(sid);
    mn_close(db);
}

/* A summary that would make the context longer is rolled back, and not retried in a loop. */
static void inflation_guard(void **state)
{
    (void)state;
    static const char *const kv[] = {"context.max_history_messages", "3", "context.summary_trigger_percent", "0",
                                     "context.summary_token_cap", "2000", "context.hybrid_recent_messages", "2",
                                     NULL};
    mn_db *db = open_db(kv);
    char *sid = new_session(db, NULL);
    for (int i = 0; i < 4; i++) /* two tiny messages to fold: the summary and its header are longer */
        add(db, sid, i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER, i % 2 ? "ok 1" : "n 2", NULL, NULL);
    struct built b = build(db, sid, "hybrid", 100000, 0);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "rolled_back");
    check_invariants(&b, 100000, 0);
    assert_int_equal(json_array_size(b.msgs), 4); /* nothing lost */
    built_free(&b);
    b = build(db, sid, "hybrid", 100000, 0);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "cooldown");
    built_free(&b);
    mn_summary *s = NULL;
    assert_int_equal(mn_summary_get(db, sid, &s), MN_NOTFOUND);
    free(sid);
    mn_close(db);
}

/* chunked: summary + raw turns; the fold keeps the last K turns; the memory budget drops
 * oldest turns down to one, then cuts the summary. */
static void chunked_strategy(void **state)
{
    (void)state;
    static const char *const kv[] = {"context.chunk_threshold_tokens", "1500", "context.prompt_budget_tokens", "100000",
                                     "context.tail_turns", "3", NULL};
    mn_db *db = open_db(kv);
    char *sid = new_session(db, "sys");
    conversation(db, sid, 12, 150);
    struct built b = build(db, sid, "chunked", 100000, 0);
    check_invariants(&b, 100000, 1);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "ok");
    assert_string_equal(json_string_value(rget(b.report, "fold", "trigger")), "chunk_threshold");
    /* system + summary + 3 turns of 4 messages */
    assert_int_equal(json_array_size(b.msgs), 1 + 1 + 12);
    assert_int_equal(json_integer_value(rget(b.report, "summary", "covers_upto")), 36);
    built_free(&b);
    /* a tight budget: one turn, the summary cut from its start */
    b = build(db, sid, "chunked", 150, MN_CONTEXT_NO_FOLD);
    check_invariants(&b, 150, 1);
    built_free(&b);
    /* "never fold" and "fold before building" at once: refused, not one of them picked */
    mn_context_opts contra = MN_CONTEXT_OPTS_INIT;
    contra.flags = MN_CONTEXT_NO_FOLD;
    contra.fold = MN_CONTEXT_FOLD_SYNC;
    mn_context *none = NULL;
    assert_int_equal(mn_context_build(db, sid, &contra, &none), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "does not go with fold sync"));
    assert_null(none);
    /* between folds the prefix is stable: each context extends the previous one */
    struct built prev = build(db, sid, "chunked", 100000, 0);
    int extends = 0;
    for (int t = 0; t < 3; t++) {
        conversation(db, sid, 1, 20);
        struct built cur = build(db, sid, "chunked", 100000, 0);
        size_t pl = strlen(prev.rendered) - 1; /* without the closing bracket */
        extends += strncmp(prev.rendered, cur.rendered, pl) == 0;
        built_free(&prev);
        prev = cur;
    }
    assert_int_equal(extends, 3);
    built_free(&prev);
    free(sid);
    mn_close(db);
}

/* hybrid: pinned messages stay verbatim after their part is folded. */
static void hybrid_keeps_pins(void **state)
{
    (void)state;
    static const char *const kv[] = {"context.max_history_messages", "10", "context.hybrid_recent_messages", "4",
                                     "context.summary_trigger_percent", "0", NULL};
    mn_db *db = open_db(kv);
    char *sid = new_session(db, "sys");
    int64_t rule = add(db, sid, MN_ROLE_USER, "RULE: never push to main.", NULL, NULL);
    add(db, sid, MN_ROLE_SYSTEM, "extra system note", NULL, NULL);
    conversation(db, sid, 6, 5);
    assert_int_equal(mn_message_pin(db, rule, 1), MN_OK);
    assert_int_equal(mn_message_pin(db, 999999, 1), MN_NOTFOUND);
    assert_int_equal(mn_message_pin(db, rule, 2), MN_INVALID);
    struct built b = build(db, sid, "hybrid", 100000, 0);
    check_invariants(&b, 100000, 1);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "ok");
    assert_string_equal(json_string_value(json_object_get(json_array_get(b.msgs, 1), "content")), "RULE: never push to main.");
    assert_string_equal(json_string_value(json_object_get(json_array_get(b.msgs, 2), "content")), "extra system note");
    assert_true(strncmp(json_string_value(json_object_get(json_array_get(b.msgs, 3), "content")), "[Summary of ", 12) == 0);
    built_free(&b);
    free(sid);
    mn_close(db);
}

/* A context that is already full: compaction still works, in stages within the summariser's
 * own budget; a fold in flight elsewhere makes mn_compact say busy and builds fall back. */
static void compact_full_and_in_flight(void **state)
{
    (void)state;
    static const char *const kv[] = {"summarizer.input_budget_tokens", "1500", "context.summary_token_cap", "200", NULL};
    mn_db *db = open_db(kv);
    char *sid = new_session(db, "sys");
    conversation(db, sid, 40, 150); /* ~16000 tokens: far over the 4096 budget and the summariser's 1500 */
    char *ev = NULL;
    assert_int_equal(mn_compact(db, sid, &ev), MN_OK);
    json_t *e = json_loads(ev, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(e, "outcome")), "ok");
    assert_true(json_integer_value(json_object_get(e, "calls")) > 3);
    assert_int_equal(json_integer_value(json_object_get(e, "messages_folded")), 37 * 4);
    assert_true(json_integer_value(json_object_get(e, "tokens_after")) < json_integer_value(json_object_get(e, "tokens_before")));
    json_decref(e);
    mn_free(ev);
    mn_summary *s = NULL;
    assert_int_equal(mn_summary_get(db, sid, &s), MN_OK);
    assert_true(s->tokens <= 200);
    assert_non_null(strstr(s->text, "run_tests"));
    mn_summary_free(s);
    /* another process holds the claim */
    int claimed = 0;
    int64_t holder = 0, until = 4102444800000LL;
    assert_int_equal(db->store->ops->busy_claim(db->store, sid, 1, until, &claimed, &holder), MN_OK);
    assert_true(claimed);
    conversation(db, sid, 30, 150);
    assert_int_equal(mn_compact(db, sid, NULL), MN_BUSY);
    struct built b = build(db, sid, "chunked", 4096, 0);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "in_flight");
    check_invariants(&b, 4096, 1);
    built_free(&b);
    assert_int_equal(db->store->ops->busy_release(db->store, sid, until), MN_OK);
    b = build(db, sid, "chunked", 4096, 0);
    assert_string_equal(json_string_value(rget(b.report, "fold", "outcome")), "ok");
    built_free(&b);
    free(sid);
    mn_close(db);
}

/* Two workers plan the same fold; the second claims only after the first stored its summary and
 * released. Its plan is stale: it stands down (in_flight) and stores nothing twice. */
static void stale_plan_stands_down(void **state)
{
    (void)state;
    mn_db *db = open_db(NULL);
    char *sid = new_session(db, "sys");
    conversation(db, sid, 20, 150);
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.limit = 1000;
    mn_messages *msgs = NULL;
    assert_int_equal(mn_history(db, sid, &ho, &msgs), MN_OK); /* the second worker's plan: no summary yet */
    assert_int_equal(mn_compact(db, sid, NULL), MN_OK);        /* the first worker's fold */
    mn_summary *first = NULL;
    assert_int_equal(mn_summary_get(db, sid, &first), MN_OK);
    mn_summarizer_cfg sc;
    memset(&sc, 0, sizeof sc);
    sc.name = "extractive";
    mn_strategy_env env = {db->store, db->tk, NULL, NULL, NULL, NULL};
    assert_int_equal(mn__summarizer_open(&sc, &env.sum), MN_OK);
    mn_strategy_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.summary_cap = 400;
    cfg.claim_ms = 60000;
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, sid, &s), MN_OK);
    struct mn_fold_req fr = {"chunk_threshold", 0, NULL, msgs->items, msgs->count - 4, msgs->items[msgs->count - 1].seq};
    enum mn_fold_outcome outcome = MN_FOLD_OK;
    mn_summary *made = NULL;
    assert_int_equal(mn__context_fold(&env, &cfg, s, &fr, &outcome, &made, NULL), MN_OK);
    assert_int_equal(outcome, MN_FOLD_IN_FLIGHT);
    assert_null(made);
    mn_summary *latest = NULL;
    assert_int_equal(mn_summary_get(db, sid, &latest), MN_OK);
    assert_int_equal(latest->id, first->id); /* no second summary */
    /* the claim was released: a plan made on the stored summary folds */
    fr.old = latest;
    assert_int_equal(mn__context_fold(&env, &cfg, s, &fr, &outcome, &made, NULL), MN_OK);
    assert_int_equal(outcome, MN_FOLD_OK);
    assert_non_null(made);
    assert_true(made->id > first->id);
    mn_summary_free(made);
    mn_summary_free(latest);
    mn_summary_free(first);
    mn_session_free(s);
    mn__summarizer_free(env.sum);
    mn_messages_free(msgs);
    free(sid);
    mn_close(db);
}

static void single_output_over_budget(void **state)
{
    (void)state;
    mn_db *db = open_db(NULL);
    char *sid = new_session(db, "sys");
    static char huge[60001];
    memset(huge, 'q', 60000);
    add(db, sid, MN_ROLE_USER, "read the log", NULL, NULL);
    add_call(db, sid, "h1", "cat", "{}", huge);
    for (size_t s = 0; s < 4; s++) {
        struct built b = build(db, sid, strategies[s], 2000, 0);
        check_invariants(&b, 2000, 1);
        built_free(&b);
    }
    /* once it is older than the last exchange it is trimmed and fits */
    add(db, sid, MN_ROLE_ASSISTANT, "The log is long.", NULL, NULL);
    add_call(db, sid, "h2", "wc", "{}", "60000");
    struct built b = build(db, sid, "window", 2000, 0);
    check_invariants(&b, 2000, 1);
    assert_non_null(strstr(b.rendered, "truncated, 60000 chars total"));
    built_free(&b);
    free(sid);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("MNEMO_TEST_TMP");
    snprintf(dir, sizeof dir, "%s/govXXXXXX", tmp && *tmp ? tmp : "/tmp");
    mkdir(tmp && *tmp ? tmp : "/tmp", 0700);
    return mkdtemp(dir) ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_conversations),      cmocka_unit_test(trimming_and_offloading),
        cmocka_unit_test(loops_and_preflight),       cmocka_unit_test(summary_strategy_and_fallback),
        cmocka_unit_test(inflation_guard),           cmocka_unit_test(chunked_strategy),
        cmocka_unit_test(hybrid_keeps_pins),         cmocka_unit_test(compact_full_and_in_flight),
        cmocka_unit_test(stale_plan_stands_down),
        cmocka_unit_test(single_output_over_budget),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
