/*
 * test_keyword_rebuild.c — a database opened without its keyword index file (DB.keywords, as a
 * copy of the database alone leaves it) answers keyword searches at once: from the index as it
 * stands plus a scan of the newest 5,000 messages it does not hold, and says so in
 * keyword_unindexed / keyword_scanned; it does not index the 6,000 messages first. With the
 * background rebuild held (MNEMO_TEST_KEYWORD_HOLD, so that what a search sees does not depend on
 * the thread's speed): the newest message is found, the oldest is not (past the scan), filters
 * apply to the scanned part, a message appended later is found, a deleted one is not, and
 * mn_keyword_drain(all) completes the index: everything found, nothing reported. Without the
 * hold the thread rebuilds it: a close does not wait for the rest, a later drain finishes it, and
 * every search meanwhile finds the newest message with a consistent report. On PostgreSQL (no
 * index file: each insert indexes its message) the report is always zero.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

enum { N = 6000, BATCH = 500, SCAN = 5000 };

static char dir[200];
static char target[400];
static char session_id[64];

static mn_db *open_db(void)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(target, cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

/* N messages in one session: "entry I about kiwiI" (user for even I, assistant for odd). */
static void fill(void)
{
    mn_db *db = open_db();
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    snprintf(session_id, sizeof session_id, "%s", s->id);
    mn_session_free(s);
    static char text[BATCH][48];
    mn_message_in in[BATCH];
    for (int b = 0; b < N / BATCH; b++) {
        for (int i = 0; i < BATCH; i++) {
            int k = b * BATCH + i;
            snprintf(text[i], sizeof text[i], "entry %d about kiwi%d", k, k);
            mn_message_in m = MN_MESSAGE_IN_INIT;
            m.role = k % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
            m.content = text[i];
            in[i] = m;
        }
        assert_int_equal(mn_append_batch(db, session_id, in, BATCH, 0, NULL), MN_OK);
    }
    mn_close(db);
}

static void drop_index_file(void)
{
    const char *suffix[] = {".keywords", ".keywords-wal", ".keywords-shm"};
    for (int i = 0; i < 3; i++) {
        char p[500];
        snprintf(p, sizeof p, "%s%s", target, suffix[i]);
        unlink(p);
    }
}

/* A keyword search for `word` (top 10, filter may be NULL): the number of hits, the report. */
static size_t find(mn_db *db, const char *word, const mn_search_filter *f, int64_t *unindexed, int64_t *scanned)
{
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, word, MN_SEARCH_KEYWORD, 10, f, 0, &h), MN_OK);
    size_t n = h->count;
    if (n)
        assert_non_null(strstr(h->items[0].message.content, word));
    *unindexed = h->keyword_unindexed;
    *scanned = h->keyword_scanned;
    mn_search_hits_free(h);
    return n;
}

static void answers_before_the_index_is_rebuilt(void **state)
{
    (void)state;
    if (test_db_pg())
        skip();
    fill();
    drop_index_file();
    setenv("MNEMO_TEST_KEYWORD_HOLD", "1", 1);
    mn_db *db = open_db();
    int64_t un = -1, sc = -1;
    assert_int_equal(find(db, "kiwi5999", NULL, &un, &sc), 1); /* the newest: in the scan */
    assert_int_equal(un, N);
    assert_int_equal(sc, SCAN);
    assert_int_equal(find(db, "kiwi10", NULL, &un, &sc), 0); /* the oldest: past the scan */
    assert_int_equal(un, N);

    /* the filter applies to the scanned part: kiwi5998 is a user message */
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.role = MN_ROLE_ASSISTANT;
    assert_int_equal(find(db, "kiwi5998", &f, &un, &sc), 0);
    f.role = MN_ROLE_USER;
    f.session_id = session_id;
    assert_int_equal(find(db, "kiwi5998", &f, &un, &sc), 1);

    /* a message stored meanwhile is found; a deleted one is not */
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "a late word: pomegranate";
    mn_message *late = NULL;
    assert_int_equal(mn_append(db, session_id, &m, 0, &late), MN_OK);
    assert_int_equal(find(db, "pomegranate", NULL, &un, &sc), 1);
    assert_int_equal(un, N + 1);
    assert_int_equal(sc, SCAN);
    assert_int_equal(mn_message_delete(db, session_id, late->id), MN_OK);
    mn_message_free(late);
    assert_int_equal(find(db, "pomegranate", NULL, &un, &sc), 0);

    /* the rest in the foreground: then the index holds everything, and the report is empty */
    int64_t pending = -1; /* (the delete may have done it already: its text must leave the index) */
    assert_int_equal(mn_keyword_drain(db, 1, NULL, &pending), MN_OK);
    assert_int_equal(pending, 0);
    assert_int_equal(find(db, "kiwi10", NULL, &un, &sc), 1);
    assert_int_equal(un, 0);
    assert_int_equal(sc, 0);
    assert_int_equal(find(db, "kiwi5999", NULL, &un, &sc), 1);
    assert_int_equal(find(db, "pomegranate", NULL, &un, &sc), 0);
    mn_close(db);
    unsetenv("MNEMO_TEST_KEYWORD_HOLD");
}

static void rebuilt_in_the_background(void **state)
{
    (void)state;
    if (test_db_pg())
        skip();
    drop_index_file();
    mn_db *db = open_db(); /* the indexer thread starts on the messages at once */
    for (int i = 0; i < 5; i++) {
        int64_t un = -1, sc = -1;
        assert_int_equal(find(db, "kiwi5999", NULL, &un, &sc), 1);
        assert_int_equal(sc, un < SCAN ? un : SCAN);
    }
    mn_close(db); /* stops the thread after its step: the next open goes on */
    setenv("MNEMO_TEST_KEYWORD_HOLD", "1", 1);
    db = open_db();
    int64_t pending = -1, un = -1, sc = -1;
    assert_int_equal(mn_keyword_drain(db, 1, NULL, &pending), MN_OK);
    assert_int_equal(pending, 0);
    assert_int_equal(find(db, "kiwi10", NULL, &un, &sc), 1);
    assert_int_equal(un, 0);
    mn_close(db);
    unsetenv("MNEMO_TEST_KEYWORD_HOLD");
}

static void postgres_reports_nothing(void **state)
{
    (void)state;
    if (!test_db_pg())
        skip();
    fill();
    mn_db *db = open_db();
    int64_t un = -1, sc = -1;
    assert_int_equal(find(db, "kiwi10", NULL, &un, &sc), 1);
    assert_int_equal(un, 0);
    assert_int_equal(sc, 0);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "kwrebuild"))
        return -1;
    char path[300];
    snprintf(path, sizeof path, "%s/k.db", dir);
    snprintf(target, sizeof target, "%s", test_db_target(path));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(answers_before_the_index_is_rebuilt),
                                       cmocka_unit_test(rebuilt_in_the_background),
                                       cmocka_unit_test(postgres_reports_nothing)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
