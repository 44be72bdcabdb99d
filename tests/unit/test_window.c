/*
 * test_window.c — the `window` strategy on scripted and random conversations: budget kept,
 * tool calls never separated from their results, never starting on a tool result, the system
 * prompt always present, the kept part being the recent end, same input → same bytes.
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
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[64];

static mn_db *open_db(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
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

static void add(mn_db *db, const char *sid, mn_role role, const char *content, const char *calls, const char *call_id)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = content;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    if (mn_append(db, sid, &m, 0, NULL) != MN_OK)
        fail_msg("append: %s", mn_errmsg());
}

static json_t *build(mn_db *db, const char *sid, int64_t budget, json_t **report)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.max_tokens = budget;
    mn_context *c = NULL;
    if (mn_context_build(db, sid, &o, &c) != MN_OK)
        fail_msg("build: %s", mn_errmsg());
    json_t *msgs = json_loads(c->rendered, 0, NULL);
    *report = json_loads(c->report, 0, NULL);
    assert_non_null(msgs);
    assert_non_null(*report);
    assert_int_equal(json_integer_value(json_object_get(*report, "tokens")), c->tokens);
    mn_context_free(c);
    return msgs;
}

/* Checks every invariant of a built context. */
static void check_invariants(json_t *msgs, json_t *report, int64_t budget, int has_system)
{
    size_t n = json_array_size(msgs);
    int64_t tokens = json_integer_value(json_object_get(report, "tokens"));
    int over = json_is_true(json_object_get(report, "over_budget"));
    assert_true(over || tokens <= budget);
    size_t first = 0;
    if (has_system) {
        assert_true(n >= 1);
        assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 0), "role")), "system");
        first = 1;
    }
    if (n > first)
        assert_string_not_equal(json_string_value(json_object_get(json_array_get(msgs, first), "role")), "tool");
    for (size_t i = first; i < n; i++) {
        json_t *m = json_array_get(msgs, i);
        json_t *calls = json_object_get(m, "tool_calls");
        if (!calls)
            continue;
        /* the results of this call follow it directly, one per call id */
        size_t k = json_array_size(calls);
        assert_true(i + k < n + 1);
        for (size_t j = 0; j < k; j++) {
            json_t *r = json_array_get(msgs, i + 1 + j);
            assert_non_null(r);
            assert_string_equal(json_string_value(json_object_get(r, "role")), "tool");
            const char *rid = json_string_value(json_object_get(r, "tool_call_id"));
            int found = 0;
            for (size_t c = 0; c < k; c++)
                found |= strcmp(json_string_value(json_object_get(json_array_get(calls, c), "id")), rid) == 0;
            assert_true(found);
        }
    }
    for (size_t i = first; i < n; i++) { /* every tool result has its call right before the run */
        json_t *m = json_array_get(msgs, i);
        if (strcmp(json_string_value(json_object_get(m, "role")), "tool") != 0)
            continue;
        size_t j = i;
        while (j > first && strcmp(json_string_value(json_object_get(json_array_get(msgs, j - 1), "role")), "tool") == 0)
            j--;
        assert_true(j > first);
        assert_non_null(json_object_get(json_array_get(msgs, j - 1), "tool_calls"));
    }
}

static void scripted_tool_heavy(void **state)
{
    (void)state;
    mn_db *db = open_db("scripted");
    char *sid = new_session(db, "You are terse.");
    add(db, sid, MN_ROLE_USER, "list the files", NULL, NULL);
    add(db, sid, MN_ROLE_ASSISTANT, NULL,
        "[{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}},"
        "{\"id\":\"b\",\"type\":\"function\",\"function\":{\"name\":\"pwd\",\"arguments\":\"{}\"}}]",
        NULL);
    add(db, sid, MN_ROLE_TOOL, "a.c b.c c.c", NULL, "a");
    add(db, sid, MN_ROLE_TOOL, "/home/user/project", NULL, "b");
    add(db, sid, MN_ROLE_ASSISTANT, "Three C files in /home/user/project.", NULL, NULL);
    add(db, sid, MN_ROLE_USER, "thanks", NULL, NULL);
    for (int64_t budget = 1; budget < 200; budget++) {
        json_t *report, *msgs = build(db, sid, budget, &report);
        check_invariants(msgs, report, budget, 1);
        json_decref(msgs);
        json_decref(report);
    }
    /* with room for everything, everything is there in order */
    json_t *report, *msgs = build(db, sid, 100000, &report);
    assert_int_equal(json_array_size(msgs), 7);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(report, "messages"), "dropped")), 0);
    json_decref(msgs);
    json_decref(report);
    /* an answer that is still pending (call without results) is never sent */
    add(db, sid, MN_ROLE_ASSISTANT, NULL,
        "[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"cat\",\"arguments\":\"{}\"}}]", NULL);
    msgs = build(db, sid, 100000, &report);
    assert_int_equal(json_array_size(msgs), 7);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(report, "dropped"), "unmatched_tool_call")), 1);
    json_decref(msgs);
    json_decref(report);
    free(sid);
    mn_close(db);
}

static void system_prompt_larger_than_budget(void **state)
{
    (void)state;
    mn_db *db = open_db("oversized");
    char big[2001];
    memset(big, 'x', 2000);
    big[2000] = '\0';
    char *sid = new_session(db, big);
    add(db, sid, MN_ROLE_USER, "hello", NULL, NULL);
    json_t *report, *msgs = build(db, sid, 100, &report);
    /* the system prompt and the question, over the budget: the report says by how much */
    assert_int_equal(json_array_size(msgs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(msgs, 1), "content")), "hello");
    assert_true(json_is_true(json_object_get(report, "over_budget")));
    assert_int_equal(json_integer_value(json_object_get(report, "shortfall")),
                     json_integer_value(json_object_get(report, "tokens")) - 100);
    json_decref(msgs);
    json_decref(report);
    free(sid);
    mn_close(db);
}

static void orphan_results_are_not_sent(void **state)
{
    (void)state;
    mn_db *db = open_db("orphans");
    char *sid = new_session(db, NULL);
    add(db, sid, MN_ROLE_TOOL, "result with no call", NULL, "zz");
    add(db, sid, MN_ROLE_USER, "hi", NULL, NULL);
    json_t *report, *msgs = build(db, sid, 1000, &report);
    assert_int_equal(json_array_size(msgs), 1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(report, "dropped"), "orphan_tool_result")), 1);
    json_decref(msgs);
    json_decref(report);
    free(sid);
    mn_close(db);
}

/* Random conversations and budgets: every context satisfies the invariants, is the same bytes
 * when built twice, and keeps the most recent messages. */
static void random_conversations(void **state)
{
    (void)state;
    mn_db *db = open_db("random");
    unsigned seed = 12345;
    char content[600];
    for (int conv = 0; conv < 25; conv++) {
        char *sid = new_session(db, conv % 3 ? "system rules" : NULL);
        int turns = 5 + (int)(rand_r(&seed) % 30);
        for (int t = 0; t < turns; t++) {
            size_t len = 1 + rand_r(&seed) % 500;
            memset(content, 'a' + (char)(t % 26), len);
            content[len] = '\0';
            add(db, sid, MN_ROLE_USER, content, NULL, NULL);
            int calls = (int)(rand_r(&seed) % 3);
            for (int c = 0; c < calls; c++) {
                char json[256], id[32];
                snprintf(id, sizeof id, "call_%d_%d", t, c);
                snprintf(json, sizeof json,
                         "[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]", id);
                add(db, sid, MN_ROLE_ASSISTANT, rand_r(&seed) % 2 ? "calling" : NULL, json, NULL);
                if (rand_r(&seed) % 10) /* sometimes the result never came */
                    add(db, sid, MN_ROLE_TOOL, content, NULL, id);
            }
            add(db, sid, MN_ROLE_ASSISTANT, "ok", NULL, NULL);
        }
        for (int b = 0; b < 8; b++) {
            int64_t budget = 1 + rand_r(&seed) % 3000;
            json_t *r1, *r2;
            json_t *m1 = build(db, sid, budget, &r1), *m2 = build(db, sid, budget, &r2);
            check_invariants(m1, r1, budget, conv % 3 != 0);
            assert_true(json_equal(m1, m2));
            char *d1 = json_dumps(m1, JSON_COMPACT), *d2 = json_dumps(m2, JSON_COMPACT);
            assert_string_equal(d1, d2);
            free(d1);
            free(d2);
            /* the last message kept is the last message stored ("ok"), when anything is kept */
            size_t n = json_array_size(m1);
            int64_t kept = json_integer_value(json_object_get(json_object_get(r1, "messages"), "kept"));
            if (kept > 0)
                assert_string_equal(json_string_value(json_object_get(json_array_get(m1, n - 1), "content")), "ok");
            json_decref(m1);
            json_decref(m2);
            json_decref(r1);
            json_decref(r2);
        }
        free(sid);
    }
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mnemo-window-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scripted_tool_heavy),
        cmocka_unit_test(system_prompt_larger_than_budget),
        cmocka_unit_test(orphan_results_are_not_sent),
        cmocka_unit_test(random_conversations),
    };
    return cmocka_run_group_tests_name("window", tests, setup, teardown);
}
