/*
 * test_seed_folding.c — the folding settings of seeds 001 and 004 through mnemo.h, on SQLite and
 * PostgreSQL (issue 38): max_history_messages 0 turns compaction off with no summariser call; the
 * summary strategy folds on the message count only unless a token trigger is set; tool output is
 * protected for the last N messages (2), whatever their kind; chunked with the seed's defaults
 * keeps the last K = 3 turns verbatim even when its prompt budget fires.
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

static mn_db *open_db(const char *name, const char *const *kv)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    for (; kv && *kv; kv += 2)
        assert_int_equal(mn_config_set(cfg, kv[0], kv[1], NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static char *new_session(mn_db *db)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static void add(mn_db *db, const char *sid, mn_role role, const char *text, const char *calls, const char *call_id)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = text;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    assert_int_equal(mn_append(db, sid, &m, 0, NULL), MN_OK);
}

/* `turns` user/assistant pairs of about `words` words each. */
static void turns(mn_db *db, const char *sid, int n, int words)
{
    char text[8192];
    for (int t = 0; t < n; t++) {
        for (int r = 0; r < 2; r++) {
            size_t len = (size_t)snprintf(text, sizeof text, "%s %d:", r ? "answer" : "question", t);
            for (int w = 0; w < words && len + 16 < sizeof text; w++)
                len += (size_t)snprintf(text + len, sizeof text - len, " word%d", w);
            add(db, sid, r ? MN_ROLE_ASSISTANT : MN_ROLE_USER, text, NULL, NULL);
        }
    }
}

static char *report(mn_db *db, const char *sid, const char *strategy, int64_t budget)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = strategy;
    o.max_tokens = budget;
    o.fold = MN_CONTEXT_FOLD_SYNC;
    o.rag = -1;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, sid, &o, &c), MN_OK);
    char *r = strdup(c->report);
    mn_context_free(c);
    return r;
}

static long num(const char *rep, const char *key)
{
    const char *p = strstr(rep, key);
    if (!p)
        fail_msg("no %s in %s", key, rep);
    return strtol(p + strlen(key), NULL, 10);
}

/* seed 001: max_history_messages 0 disables compaction, and no model is asked (the summariser is
 * an llm at a port nobody listens on: a call would be a failed fold) */
static void zero_messages_disables(void **state)
{
    (void)state;
    static const char *const kv[] = {"context.max_history_messages", "0", "context.summary_trigger_percent", "50",
                                     "summarizer.name", "llm", "summarizer.base_url", "http://127.0.0.1:9",
                                     "summarizer.model", "m", NULL};
    mn_db *db = open_db("zero", kv);
    char *sid = new_session(db);
    turns(db, sid, 40, 30);
    static const char *const strategies[] = {"summary", "hybrid", NULL};
    for (const char *const *st = strategies; *st; st++) {
        char *r = report(db, sid, *st, 500);
        if (!strstr(r, "\"fold\":{\"mode\":\"sync\",\"outcome\":\"none\",\"trigger\":null"))
            fail_msg("%s: %s", *st, r);
        free(r);
    }
    mn_summary *s = NULL;
    assert_int_equal(mn_summary_get(db, sid, &s), MN_NOTFOUND);
    free(sid);
    mn_close(db);
}

/* The summary strategy folds on the message count (40) only: 30 long messages over the budget are
 * not folded by a token trigger the seeds do not have; setting one brings it back. */
static void summary_folds_on_the_count(void **state)
{
    (void)state;
    mn_db *db = open_db("count", NULL);
    char *sid = new_session(db);
    turns(db, sid, 15, 80);
    char *r = report(db, sid, "summary", 1000);
    assert_non_null(strstr(r, "\"trigger\":null"));
    free(r);
    mn_close(db);
    static const char *const kv[] = {"context.summary_trigger_percent", "50", NULL};
    db = open_db("count", kv);
    r = report(db, sid, "summary", 1000);
    assert_non_null(strstr(r, "\"trigger\":\"tokens\""));
    free(r);
    free(sid);
    mn_close(db);
}

/* seed 001: only the last 2 messages are protected from trimming, whatever their kind */
static void protection_is_the_last_messages(void **state)
{
    (void)state;
    static const char big[] = "line of build output that goes on and on ";
    char *out = malloc(sizeof big * 100);
    out[0] = '\0';
    for (int i = 0; i < 99; i++)
        strcat(out, big);
    for (int protect = 2; protect <= 3; protect++) {
        char name[16], n[8];
        snprintf(name, sizeof name, "protect%d", protect);
        snprintf(n, sizeof n, "%d", protect);
        const char *const kv[] = {"context.tool_output_protect_messages", n, NULL};
        mn_db *db = open_db(name, kv);
        char *sid = new_session(db);
        add(db, sid, MN_ROLE_USER, "build it", NULL, NULL);
        add(db, sid, MN_ROLE_ASSISTANT, NULL,
            "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"make\",\"arguments\":\"{}\"}}]", NULL);
        add(db, sid, MN_ROLE_TOOL, out, NULL, "c1");
        add(db, sid, MN_ROLE_ASSISTANT, "It builds.", NULL, NULL);
        add(db, sid, MN_ROLE_USER, "Thanks.", NULL, NULL);
        char *r = report(db, sid, "window", 100000);
        /* the newest tool result is the third newest message: trimmed with 2, kept with 3 */
        assert_int_equal(num(r, "\"trimmed\":"), protect == 2 ? 1 : 0);
        free(r);
        free(sid);
        mn_close(db);
    }
    free(out);
}

/* seed 004: the last K = 3 turns stay verbatim when the prompt budget (3000) fires before the
 * threshold (6000): the fold ends before the third newest user message */
static void chunked_keeps_the_last_turns(void **state)
{
    (void)state;
    mn_db *db = open_db("chunked", NULL);
    char *sid = new_session(db);
    turns(db, sid, 8, 150); /* about 4,200 tokens: over the prompt budget, under the threshold */
    char *r = report(db, sid, "chunked", 100000);
    if (!strstr(r, "\"trigger\":\"prompt_budget\""))
        fail_msg("not the prompt budget: %s", r);
    /* 8 turns of 2 messages: the last 3 turns start at seq 11 */
    assert_int_equal(num(r, "\"covers_upto\":"), 10);
    free(r);
    free(sid);
    mn_close(db);
}

int main(void)
{
    test_tmpdir(dir, sizeof dir, "seedfold");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zero_messages_disables), cmocka_unit_test(summary_folds_on_the_count),
        cmocka_unit_test(protection_is_the_last_messages), cmocka_unit_test(chunked_keeps_the_last_turns)};
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    test_rmdir(dir);
    return rc;
}
