/*
 * test_current_turn.c — the current turn (the newest user message and the agent's tool steps
 * after it) through mnemo.h, on SQLite and PostgreSQL: the user message that started an agent's
 * tool loop is in every context verbatim, for every strategy and format, with retrieval,
 * memories and pins, at every budget that can hold it with the newest step (else the report
 * says over_budget); older steps of the turn leave first and the report counts them. The cases
 * of issue 38: six old exchanges, the task, then 30 steps of 45-line results at the default
 * budget; 12 steps at 1,500 tokens; 60 short steps at 2,000; two steps at 150.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[64];
static const char TASK[] = "CURRENT-TASK: migrate the build to meson and keep the tests green.";

static mn_db *open_db(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "context.max_history_messages", "20", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static int64_t add(mn_db *db, const char *sid, mn_role role, const char *text, const char *calls,
                   const char *call_id)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = text;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    mn_message *out = NULL;
    assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

/* One tool step: an assistant call and its result of `lines` lines. */
static void step(mn_db *db, const char *sid, int k, int lines)
{
    char calls[256], id[32], *out = malloc((size_t)lines * 80 + 1);
    snprintf(id, sizeof id, "call_%d", k);
    snprintf(calls, sizeof calls,
             "[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"shell\",\"arguments\":"
             "\"{\\\"cmd\\\":\\\"meson test %d\\\"}\"}}]",
             id, k);
    add(db, sid, MN_ROLE_ASSISTANT, NULL, calls, NULL);
    size_t len = 0;
    for (int i = 0; i < lines; i++)
        len += (size_t)sprintf(out + len, "step %d line %d: compiling src/unit_%d.c ok warnings 0 time 12ms\n", k,
                               i, i);
    out[len] = '\0';
    add(db, sid, MN_ROLE_TOOL, lines ? out : "ok", NULL, id);
    free(out);
}

/* A session: six old exchanges, the task, then `steps` tool steps of `lines` lines. */
static char *session(mn_db *db, int steps, int lines, int64_t *first_id)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    char *sid = strdup(s->id);
    mn_session_free(s);
    char text[200];
    for (int i = 0; i < 6; i++) {
        snprintf(text, sizeof text, "Old question %d about the parser and its error messages?", i);
        int64_t id = add(db, sid, MN_ROLE_USER, text, NULL, NULL);
        if (i == 0 && first_id)
            *first_id = id;
        snprintf(text, sizeof text, "Old answer %d: the parser reports the line and the column.", i);
        add(db, sid, MN_ROLE_ASSISTANT, text, NULL, NULL);
    }
    add(db, sid, MN_ROLE_USER, TASK, NULL, NULL);
    for (int k = 0; k < steps; k++)
        step(db, sid, k, lines);
    return sid;
}

static long report_int(const char *report, const char *key)
{
    const char *p = strstr(report, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* The task is there, the newest step too, and the budget holds unless the report says not. */
static void check(mn_db *db, const char *sid, const char *strategy, mn_format f, int64_t budget, int rag,
                  int memories, int last_step)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = strategy;
    o.max_tokens = budget;
    o.format = f;
    o.rag = rag;
    o.memories = memories;
    o.fold = MN_CONTEXT_FOLD_SYNC;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, sid, &o, &c), MN_OK);
    char newest[64];
    snprintf(newest, sizeof newest, "meson test %d", last_step);
    int over = strstr(c->report, "\"over_budget\":true") != NULL;
    if (!strstr(c->rendered, TASK) || (last_step >= 0 && !strstr(c->rendered, newest)) ||
        (!over && c->tokens > budget))
        fail_msg("%s format %d budget %lld rag %d memories %d: task %s, newest step %s, %lld tokens\n%s", strategy,
                 (int)f, (long long)budget, rag, memories, strstr(c->rendered, TASK) ? "in" : "MISSING",
                 strstr(c->rendered, newest) ? "in" : "missing", (long long)c->tokens, c->report);
    /* the report names the current turn and how many of its steps were left out */
    if (!strstr(c->report, "\"current_turn\":{"))
        fail_msg("no current_turn in %s", c->report);
    assert_true(report_int(c->report, "\"steps_dropped\":") >= 0);
    mn_context_free(c);
}

static void sweep(mn_db *db, const char *sid, int64_t budget, int last_step)
{
    static const char *const strategies[] = {"window", "summary", "chunked", "hybrid"};
    for (int s = 0; s < 4; s++)
        for (int f = MN_FORMAT_OPENAI; f <= MN_FORMAT_TEXT; f++)
            check(db, sid, strategies[s], (mn_format)f, budget, -1, -1, last_step);
    for (int s = 0; s < 4; s++) { /* retrieval and memories on */
        check(db, sid, strategies[s], MN_FORMAT_OPENAI, budget, 1, 1, last_step);
        check(db, sid, strategies[s], MN_FORMAT_TEXT, budget, 1, -1, last_step);
    }
}

static void tool_loop_default_budget(void **state)
{
    (void)state;
    mn_db *db = open_db("loop30");
    int64_t first = 0;
    char *sid = session(db, 30, 45, &first);
    assert_int_equal(mn_message_pin(db, first, 1), MN_OK); /* pins do not push the task out */
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = "The user prefers meson over cmake for new projects.";
    in.pinned = 1;
    mn_memory *mem = NULL;
    assert_int_equal(mn_memory_add(db, &in, &mem), MN_OK);
    mn_memory_free(mem);
    sweep(db, sid, 4096, 29);
    /* the older steps left the context for the task: the report counts them */
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.max_tokens = 4096;
    o.rag = -1;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, sid, &o, &c), MN_OK);
    long dropped = report_int(c->report, "\"steps_dropped\":");
    assert_true(dropped > 0 && dropped < 29);
    assert_int_equal(report_int(c->report, "\"steps\":"), 29);
    mn_context_free(c);
    free(sid);
    mn_close(db);
}

static void tool_loop_small_budgets(void **state)
{
    (void)state;
    mn_db *db = open_db("loops");
    char *a = session(db, 12, 45, NULL), *b = session(db, 60, 0, NULL), *c = session(db, 2, 2, NULL);
    sweep(db, a, 1500, 11);
    sweep(db, b, 2000, 59);
    sweep(db, c, 150, 1);
    /* a budget that cannot hold the task and the newest step: both are sent, over_budget says so */
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.max_tokens = 10;
    mn_context *ctx = NULL;
    assert_int_equal(mn_context_build(db, c, &o, &ctx), MN_OK);
    assert_non_null(strstr(ctx->rendered, TASK));
    assert_non_null(strstr(ctx->rendered, "meson test 1"));
    assert_non_null(strstr(ctx->report, "\"over_budget\":true"));
    mn_context_free(ctx);
    free(a);
    free(b);
    free(c);
    mn_close(db);
}

int main(void)
{
    test_tmpdir(dir, sizeof dir, "turn");
    const struct CMUnitTest tests[] = {cmocka_unit_test(tool_loop_default_budget),
                                       cmocka_unit_test(tool_loop_small_budgets)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_rmdir(dir);
    return rc;
}
