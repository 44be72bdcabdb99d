/*
 * test_governance.c — context governance through mnemo.h only: strategies by name, pins,
 * summaries, mn_compact and its event, the events list, mn_budget_split, argument errors.
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
    assert_int_equal(mn_events_json(db, "nope", 10, &list), MN_INVALID);
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

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(governance_api)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
