/*
 * test_store_window.c — conformance of the store's window_scan (store/store.h) on each backend:
 * SQLite on a real file (unit/test_store_window) and PostgreSQL (pg/unit/test_store_window),
 * where it is one statement for the summary and the first page. The summary it gives is the one
 * summary_latest gives, set before the first message; the messages are scan_newest's, in the
 * same order, past the first page; a missing session is MN_NOTFOUND with no summary.
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
#include "store/store.h"
#include "test_db.h"

#define LONG_N 300 /* more than a first page (128) and its next (1,024 - 128) need not be full */

static char dir[256];
static char file[400];
static mn_store *the_store;
static char *with_summary, *without_summary, *cleared;
static char big_text[6001];

static char *new_session(mn_db *db, int n)
{
    mn_session *s = NULL;
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    for (int i = 1; i <= n; i++) {
        char text[64];
        snprintf(text, sizeof text, "message number %d", i);
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = i % 2 ? MN_ROLE_USER : MN_ROLE_ASSISTANT;
        m.content = text;
        if (mn_append(db, id, &m, 0, NULL) != MN_OK)
            fail_msg("append: %s", mn_errmsg());
    }
    return id;
}

static void add_summary(const char *sid, int64_t upto, const char *text)
{
    mn_summary sm = {0, sid, upto, upto, text, 7, "test-model", "test", 1000};
    int64_t id = 0;
    assert_int_equal(the_store->ops->summary_insert(the_store, sid, &sm, &id), MN_OK);
}

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "store-window") != 0)
        return -1;
    snprintf(file, sizeof file, "%s/window.db", dir);
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "memory.durability", "normal", NULL) ||
        mn_config_set(cfg, "tokenizer.name", "heuristic", NULL) || mn_open_path(test_db_target(file), cfg, &db)) {
        fprintf(stderr, "open: %s\n", mn_errmsg());
        return -1;
    }
    mn_config_free(cfg);
    with_summary = new_session(db, LONG_N);
    without_summary = new_session(db, 5);
    cleared = new_session(db, 6);
    mn_close(db);
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 0};
    if (mn__store_open(test_db_target(file), &o, &the_store) != MN_OK) {
        fprintf(stderr, "store open: %s\n", mn_errmsg());
        return -1;
    }
    memset(big_text, 'x', sizeof big_text - 1); /* longer than any other column of the page */
    add_summary(with_summary, 20, "an older summary");
    add_summary(with_summary, 100, big_text);
    add_summary(cleared, 3, "covered, then cleared");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    the_store->ops->close(the_store);
    free(with_summary);
    free(without_summary);
    free(cleared);
    test_rmdir(dir);
    return 0;
}

struct seen {
    mn_summary **sum;   /* window_scan's out parameter, looked at on the first message */
    int summary_first;  /* 1: set when the first message came; 0: not; -1: no message yet */
    int64_t covers;     /* its covers_upto then */
    int64_t seqs[LONG_N + 1];
    size_t n, stop_after; /* stop_after 0: never */
};

static int on_message(void *user, const mn_message *m)
{
    struct seen *s = user;
    if (s->summary_first < 0 && s->sum) {
        s->summary_first = *s->sum != NULL;
        s->covers = *s->sum ? (*s->sum)->covers_upto : -1;
    }
    if (s->n < LONG_N + 1)
        s->seqs[s->n] = m->seq;
    s->n++;
    return s->stop_after && s->n == s->stop_after;
}

/* window_scan's messages against scan_newest's, and its summary against summary_latest's. */
static void check_session(const char *sid, int64_t want_covers, const char *want_text, size_t want_n)
{
    struct seen got = {.summary_first = -1}, plain = {.summary_first = -1};
    mn_summary *sum = (mn_summary *)1;
    got.sum = &sum;
    assert_int_equal(the_store->ops->window_scan(the_store, sid, &sum, on_message, &got), MN_OK);
    assert_int_equal(the_store->ops->scan_newest(the_store, sid, on_message, &plain), MN_OK);
    assert_int_equal(got.n, want_n);
    assert_int_equal(plain.n, want_n);
    assert_memory_equal(got.seqs, plain.seqs, want_n * sizeof got.seqs[0]);
    for (size_t i = 0; i < want_n; i++)
        assert_int_equal(got.seqs[i], (int64_t)(want_n - i)); /* newest first, every one */
    mn_summary *latest = NULL;
    mn_status lrc = the_store->ops->summary_latest(the_store, sid, &latest);
    if (!want_text) {
        assert_null(sum);
        assert_int_equal(lrc, MN_NOTFOUND);
        assert_int_equal(got.summary_first, want_n ? 0 : -1);
        return;
    }
    assert_int_equal(lrc, MN_OK);
    assert_non_null(sum);
    assert_int_equal(got.summary_first, 1);
    assert_int_equal(got.covers, want_covers);
    assert_int_equal(sum->covers_upto, want_covers);
    assert_string_equal(sum->text, want_text);
    assert_int_equal(sum->id, latest->id);
    assert_int_equal(sum->folded, latest->folded);
    assert_int_equal(sum->tokens, latest->tokens);
    assert_string_equal(sum->model, latest->model);
    assert_string_equal(sum->summarizer, latest->summarizer);
    assert_int_equal(sum->created_at, latest->created_at);
    assert_string_equal(sum->session_id, sid);
    mn_summary_free(sum);
    mn_summary_free(latest);
}

static void test_latest_summary_and_every_page(void **state)
{
    (void)state;
    check_session(with_summary, 100, big_text, LONG_N);
    check_session(without_summary, 0, NULL, 5);
}

/* A summary written before a clear is no context's (as summary_latest), and the cleared
 * messages are none of the scan's. */
static void test_cleared_summary(void **state)
{
    (void)state;
    check_session(cleared, 3, "covered, then cleared", 6);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(file), NULL, &db), MN_OK);
    int64_t moved = 0;
    assert_int_equal(mn_session_clear(db, cleared, 0, &moved), MN_OK);
    assert_int_equal(moved, 6);
    mn_close(db);
    check_session(cleared, 0, NULL, 0);
}

/* The caller stops the walk inside the first page: no error, the summary is still handed. */
static void test_stop_early(void **state)
{
    (void)state;
    struct seen got = {.summary_first = -1, .stop_after = 3};
    mn_summary *sum = NULL;
    got.sum = &sum;
    assert_int_equal(the_store->ops->window_scan(the_store, with_summary, &sum, on_message, &got), MN_OK);
    assert_int_equal(got.n, 3);
    assert_non_null(sum);
    assert_int_equal(sum->covers_upto, 100);
    mn_summary_free(sum);
}

static void test_missing_session(void **state)
{
    (void)state;
    struct seen got = {.summary_first = -1};
    mn_summary *sum = (mn_summary *)1;
    got.sum = &sum;
    const char *missing = "01900000-0000-7000-8000-00000000dead";
    assert_int_equal(the_store->ops->window_scan(the_store, missing, &sum, on_message, &got), MN_NOTFOUND);
    assert_null(sum);
    assert_int_equal(got.n, 0);
    assert_non_null(strstr(mn_errmsg(), missing));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_latest_summary_and_every_page),
        cmocka_unit_test(test_cleared_summary),
        cmocka_unit_test(test_stop_early),
        cmocka_unit_test(test_missing_session),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
