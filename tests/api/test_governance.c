/*
 * test_governance.c — context governance through mnemo.h only: strategies by name, pins,
 * summaries, mn_compact and its event, the events list, mn_budget_split, argument errors; the
 * fold queue (mn_fold_queue_set / mn_fold_run), fold modes and compaction instructions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

static void governance_api(void **state)
{
    (void)state;
    char dir[128], path[200];
    const char *tmp = getenv("MNEMO_TEST_TMP");
    mkdir(tmp && *tmp ? tmp : "/tmp", 0700);
    snprintf(dir, sizeof dir, "%s/govapiXXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/g.db", dir);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.strategy", "hybrid", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.strategy", "magic", NULL), MN_INVALID);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    mn_message *first = NULL;
    for (int i = 0; i < 12; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        char text[512];
        snprintf(text, sizeof text, "message %d about src/f%d.c %s", i, i,
                 "and a long explanation that goes on and on about nothing in particular, so that a summary of it"
                 " is much shorter than the message itself, which is what summaries are for after all, isn't it");
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = text;
        assert_int_equal(mn_append(db, s->id, &m, 0, i ? NULL : &first), MN_OK);
    }
    assert_int_equal(mn_message_pin(db, first->id, 1), MN_OK);
    assert_int_equal(mn_message_pin(db, 0, 1), MN_INVALID);
    assert_int_equal(mn_message_pin(NULL, 1, 1), MN_MISUSE);
    /* within a session: another session's message is not found and stays as it was */
    mn_session *other = NULL;
    assert_int_equal(mn_session_create(db, NULL, &other), MN_OK);
    assert_int_equal(mn_session_message_pin(db, other->id, first->id, 0), MN_NOTFOUND);
    assert_int_equal(mn_session_message_pin(db, s->id, first->id, 1), MN_OK);
    assert_int_equal(mn_session_message_pin(db, s->id, first->id, 2), MN_INVALID);
    assert_int_equal(mn_session_message_pin(db, "not\ta-uuid", first->id, 1), MN_INVALID);
    assert_int_equal(mn_session_message_pin(db, NULL, first->id, 1), MN_MISUSE);
    mn_messages *pins = NULL;
    assert_int_equal(mn_history(db, s->id, NULL, &pins), MN_OK);
    assert_int_equal(mn_messages_at(pins, 0)->pinned, 1);
    mn_messages_free(pins);
    mn_session_free(other);
    mn_summary *sum = NULL;
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), "no summary"));
    char *ev = NULL;
    assert_int_equal(mn_compact(db, s->id, &ev), MN_OK);
    if (!strstr(ev, "\"outcome\":\"ok\""))
        fail_msg("compact: %s", ev);
    mn_free(ev);
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_OK);
    assert_int_equal(sum->covers_upto, 6); /* all but the last 3 turns */
    assert_string_equal(sum->summarizer, "extractive");
    assert_null(sum->model);
    assert_non_null(strstr(sum->text, "src/f0.c"));
    mn_summary_free(sum);
    mn_summary_free(NULL);
    char *list = NULL;
    assert_int_equal(mn_events_json(db, s->id, 10, &list), MN_OK);
    assert_non_null(strstr(list, "\"kind\":\"compaction\""));
    mn_free(list);
    assert_int_equal(mn_events_json(db, "no\tpe", 10, &list), MN_INVALID);
    /* the configured strategy (hybrid): the pinned first message, the summary, the rest */
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, s->id, NULL, &c), MN_OK);
    assert_non_null(strstr(c->rendered, "message 0 about"));
    assert_non_null(strstr(c->rendered, "[Summary of 6 earlier messages]"));
    assert_non_null(strstr(c->report, "\"strategy\":\"hybrid\""));
    mn_context_free(c);
    mn_budget b;
    assert_int_equal(mn_budget_split(8192, &b), MN_OK);
    assert_int_equal(b.response, 2048);
    assert_int_equal(b.history, 2048);
    assert_int_equal(b.files, 4096);
    mn_message_free(first);
    mn_session_free(s);
    mn_close(db);
}

struct jobs {
    int n;
    char sid[64], strategy[16];
    int64_t max_tokens;
};

static int record_job(void *user, const mn_fold_job *job)
{
    struct jobs *j = user;
    j->n++;
    snprintf(j->sid, sizeof j->sid, "%s", job->session_id);
    snprintf(j->strategy, sizeof j->strategy, "%s", job->strategy);
    j->max_tokens = job->max_tokens;
    return 0;
}

/* A library user with a worker: the build queues the due fold and answers with what is stored;
 * mn_fold_run on the worker folds; the next build uses the new summary. */
static void fold_queue(void **state)
{
    (void)state;
    char dir[128], path[200];
    const char *tmp = getenv("MNEMO_TEST_TMP");
    snprintf(dir, sizeof dir, "%s/foldqXXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/q.db", dir);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "context.max_history_messages", "8", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    for (int i = 0; i < 20; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        char text[512];
        snprintf(text, sizeof text, "turn %d about src/f%d.c %s", i, i,
                 "and a long explanation that goes on and on about nothing in particular, so that a summary of it"
                 " is much shorter than the message itself, which is what summaries are for after all, isn't it");
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = text;
        assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
    }
    struct jobs jobs = {0};
    assert_int_equal(mn_fold_queue_set(db, record_job, &jobs), MN_OK);
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = "summary";
    o.max_tokens = 3000;
    o.fold = 7;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "fold"));
    o.fold = MN_CONTEXT_FOLD_BACKGROUND;
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
    assert_non_null(strstr(c->report, "\"outcome\":\"queued\""));
    assert_non_null(strstr(c->rendered, "turn 19 about"));
    mn_context_free(c);
    assert_int_equal(jobs.n, 1);
    assert_string_equal(jobs.sid, s->id);
    assert_string_equal(jobs.strategy, "summary");
    mn_summary *sum = NULL;
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_NOTFOUND);
    mn_fold_job job = {jobs.sid, jobs.strategy, jobs.max_tokens, 0};
    char *outcome = NULL;
    assert_int_equal(mn_fold_run(db, &job, &outcome), MN_OK);
    if (!strstr(outcome, "\"outcome\":\"ok\""))
        fail_msg("fold run: %s", outcome);
    mn_free(outcome);
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
    assert_non_null(strstr(c->rendered, "[Summary of"));
    assert_non_null(strstr(c->report, "\"outcome\":\"none\""));
    mn_context_free(c);
    job.max_tokens = 0;
    assert_int_equal(mn_fold_run(db, &job, NULL), MN_INVALID);
    assert_int_equal(mn_fold_run(db, NULL, NULL), MN_MISUSE);
    /* compaction instructions: recorded in the event; over the limit refused before anything */
    mn_compact_opts co = MN_COMPACT_OPTS_INIT;
    char *big = malloc(MN_COMPACT_INSTRUCTIONS_MAX + 2);
    memset(big, 'x', MN_COMPACT_INSTRUCTIONS_MAX + 1);
    big[MN_COMPACT_INSTRUCTIONS_MAX + 1] = '\0';
    co.instructions = big;
    char *ev = NULL;
    assert_int_equal(mn_compact_ex(db, s->id, &co, &ev), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "instructions"));
    free(big);
    for (int i = 20; i < 30; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        char text[512];
        snprintf(text, sizeof text, "turn %d about src/f%d.c %s", i, i,
                 "and a long explanation that goes on and on about nothing in particular, so that a summary of it"
                 " is much shorter than the message itself, which is what summaries are for after all, isn't it");
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = text;
        assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
    }
    co.instructions = "keep the file names";
    assert_int_equal(mn_compact_ex(db, s->id, &co, &ev), MN_OK);
    assert_non_null(strstr(ev, "\"instructions\":\"keep the file names\""));
    mn_free(ev);
    co.size = 0;
    assert_int_equal(mn_compact_ex(db, s->id, &co, &ev), MN_MISUSE);
    assert_int_equal(mn_fold_queue_set(db, NULL, NULL), MN_OK);
    mn_session_free(s);
    mn_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(governance_api), cmocka_unit_test(fold_queue)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
