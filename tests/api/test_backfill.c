/*
 * test_backfill.c — mn_embed_backfill killed part way and run again: a child process backfills
 * messages stored before the embedder was turned on and SIGKILLs itself from the progress
 * callback once two batches are stored; the vectors stored by then stay, the rest stay queued,
 * and the second run embeds only the rest, reports its progress from 0 to what was left, and
 * leaves every message with one vector in the index. On SQLite files and on PostgreSQL.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

enum { N = 40, BATCH = 5, KILLED_AFTER = 2 * BATCH };

static char dir[200];
static char target[400];

static mn_db *open_db(const char *embedder)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", embedder, NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.batch", "5", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(target, cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

/* The child's callback: dies like a kill -9 once KILLED_AFTER vectors are stored. */
static void die_part_way(void *user, int64_t done, int64_t total)
{
    (void)user;
    (void)total;
    if (done >= KILLED_AFTER)
        kill(getpid(), SIGKILL);
}

struct seen {
    int calls;
    int64_t first_done, first_total, last_done, last_total;
    int backwards;
};

static void record(void *user, int64_t done, int64_t total)
{
    struct seen *s = user;
    if (!s->calls++) {
        s->first_done = done;
        s->first_total = total;
    } else if (done < s->last_done)
        s->backwards = 1;
    s->last_done = done;
    s->last_total = total;
}

static void resumes_after_a_kill(void **state)
{
    (void)state;
    mn_db *db = open_db("none"); /* stored before any embedder: nothing queued */
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    for (int i = 0; i < N; i++) {
        char t[80];
        snprintf(t, sizeof t, "message %d about topic%d, the walrus number %d", i, i % 7, i);
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = t;
        assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
    }
    mn_session_free(s);
    mn_close(db);

    pid_t kid = fork();
    assert_true(kid >= 0);
    if (kid == 0) {
        mn_db *d = open_db("hash");
        mn_embed_backfill(d, die_part_way, NULL, NULL);
        _exit(3); /* not reached: the callback kills the process first */
    }
    int st = 0;
    assert_int_equal(waitpid(kid, &st, 0), kid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

    db = open_db("hash");
    int64_t embedded = -1, queued = -1;
    assert_int_equal(mn_embed_counts(db, &embedded, &queued), MN_OK);
    assert_int_equal(embedded, KILLED_AFTER); /* what was stored before the kill stays */
    assert_int_equal(queued, N - KILLED_AFTER);

    struct seen seen = {0};
    int64_t done = -1;
    assert_int_equal(mn_embed_backfill(db, record, &seen, &done), MN_OK);
    assert_int_equal(done, N - KILLED_AFTER); /* only the rest is embedded again */
    assert_int_equal(seen.first_done, 0);
    assert_int_equal(seen.first_total, N - KILLED_AFTER);
    assert_int_equal(seen.last_done, N - KILLED_AFTER);
    assert_int_equal(seen.last_total, N - KILLED_AFTER);
    assert_false(seen.backwards);
    assert_int_equal(mn_embed_counts(db, &embedded, &queued), MN_OK);
    assert_int_equal(embedded, N);
    assert_int_equal(queued, 0);

    /* messages of both runs are found, each once, all from the index the backfill built */
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "walrus number", MN_SEARCH_SEMANTIC, 1000, NULL, -1, &h), MN_OK);
    assert_int_equal(h->count, N);
    assert_int_equal(h->index_indexed, N);
    assert_int_equal(h->index_scanned, 0);
    for (size_t i = 1; i < h->count; i++)
        for (size_t j = 0; j < i; j++)
            assert_true(h->items[i].message.id != h->items[j].message.id);
    mn_search_hits_free(h);
    assert_int_equal(mn_embed_backfill(db, NULL, NULL, &done), MN_OK);
    assert_int_equal(done, 0); /* nothing left */
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "backfill"))
        return -1;
    char path[300];
    snprintf(path, sizeof path, "%s/b.db", dir);
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
    const struct CMUnitTest tests[] = {cmocka_unit_test(resumes_after_a_kill)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
