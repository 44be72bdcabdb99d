/*
 * test_backup.c — mn_backup through mnemo.h. A backup taken while a second handle appends pairs
 * of messages on another thread opens consistent: each session holds as many messages as its
 * row says, whole pairs only, the same as the source's first ones; the source has more after.
 * Its progress rises to done == total, the keyword index opens without being indexed again (no
 * warning logged) and finds a message of the writer's. Refused: an existing file, the database
 * itself, an empty or NULL destination. On PostgreSQL: the refusal names pg_basebackup and
 * pg_dump, and nothing is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

enum { SESSIONS = 3, BEFORE = 60, AFTER = 20 };

static char dir[200];
static char target[400];

static mn_db *open_db(const char *t)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(t, cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

/* The writer: its own handle, a user and an assistant message per transaction, round the
 * sessions, until told to stop; `pairs` counts the commits. */
struct writer {
    char ids[SESSIONS][40];
    atomic_int stop;
    atomic_int pairs;
    atomic_int rc; /* the writer's first failure */
};

static void *write_pairs(void *arg)
{
    struct writer *w = arg;
    mn_db *db = open_db(target);
    for (int i = 0; !atomic_load(&w->stop) && !atomic_load(&w->rc); i++) {
        char q[80];
        snprintf(q, sizeof q, "question %d about walrus%d", i, i);
        mn_message_in m[2] = {MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT};
        m[0].content = q;
        m[1].role = MN_ROLE_ASSISTANT;
        m[1].content = "an answer";
        mn_status rc = mn_append_batch(db, w->ids[i % SESSIONS], m, 2, 0, NULL);
        atomic_store(&w->rc, (int)rc);
        if (!rc)
            atomic_fetch_add(&w->pairs, 1);
    }
    mn_close(db);
    return NULL;
}

/* Waits for the writer's progress (or its failure): no clock decides anything. */
static void wait_pairs(struct writer *w, int n)
{
    while (atomic_load(&w->pairs) < n && !atomic_load(&w->rc))
        usleep(1000);
}

struct seen {
    int calls, backwards;
    int64_t last_done, last_total;
};

static void record(void *user, int64_t done, int64_t total)
{
    struct seen *s = user;
    s->backwards |= s->calls++ && done < s->last_done;
    s->last_done = done;
    s->last_total = total;
}

static atomic_int reindexed; /* warnings that a keyword index is built again */

static void on_log(void *user, mn_log_level level, const char *message)
{
    (void)user;
    (void)level;
    if (strstr(message, "indexing again"))
        atomic_fetch_add(&reindexed, 1);
}

static int64_t history_length(mn_db *db, const char *id, mn_messages **out)
{
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.all = 1;
    assert_int_equal(mn_history(db, id, &o, out), MN_OK);
    return (int64_t)(*out)->count;
}

/* The backup's sessions against the source's: counts, pairs, the source's first messages. */
static void check_consistent(mn_db *bk, mn_db *src, int64_t *total, int64_t *source_total)
{
    mn_sessions *list = NULL;
    assert_int_equal(mn_session_list(bk, NULL, 100, 0, &list), MN_OK);
    assert_int_equal(list->count, SESSIONS);
    *total = *source_total = 0;
    for (size_t i = 0; i < list->count; i++) {
        const mn_session *s = mn_sessions_at(list, i);
        mn_messages *h = NULL, *whole = NULL;
        int64_t n = history_length(bk, s->id, &h);
        assert_int_equal(n, s->message_count);
        assert_int_equal(n % 2, 0); /* whole transactions only */
        *source_total += history_length(src, s->id, &whole);
        assert_true((int64_t)whole->count >= n);
        for (int64_t k = 0; k < n; k++) {
            const mn_message *a = mn_messages_at(h, (size_t)k), *b = mn_messages_at(whole, (size_t)k);
            assert_int_equal(a->id, b->id);
            assert_string_equal(a->content, b->content);
        }
        *total += n;
        mn_messages_free(h);
        mn_messages_free(whole);
    }
    mn_sessions_free(list);
}

static void backup_while_writing(void **state)
{
    (void)state;
    if (test_db_pg())
        skip(); /* refused: pg_refused */
    mn_db *db = open_db(target);
    struct writer w = {.stop = 0, .pairs = 0, .rc = MN_OK};
    for (int i = 0; i < SESSIONS; i++) {
        mn_session *s = NULL;
        assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
        snprintf(w.ids[i], sizeof w.ids[i], "%s", s->id);
        mn_session_free(s);
    }
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, write_pairs, &w), 0);
    wait_pairs(&w, BEFORE);
    char dest[400];
    snprintf(dest, sizeof dest, "%s/copy.db", dir);
    struct seen seen = {0};
    mn_status rc = mn_backup(db, dest, record, &seen);
    int at = atomic_load(&w.pairs);
    wait_pairs(&w, at + AFTER);
    atomic_store(&w.stop, 1);
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&w.rc), MN_OK);
    assert_int_equal(rc, MN_OK);
    assert_string_equal(mn_errmsg(), "");
    assert_true(seen.calls > 0 && seen.last_total > 0);
    assert_int_equal(seen.last_done, seen.last_total);
    assert_false(seen.backwards);

    mn_set_log(on_log, NULL, MN_LOG_WARN);
    mn_db *bk = open_db(dest);
    int64_t total = 0, source_total = 0;
    check_consistent(bk, db, &total, &source_total);
    assert_true(total >= 2 * BEFORE);
    assert_true(source_total > total); /* the writer went on */
    mn_stats st;
    assert_int_equal(mn_stats_get(bk, &st), MN_OK);
    assert_int_equal(st.messages, total);
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(bk, "walrus0", MN_SEARCH_KEYWORD, 10, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 1);
    mn_search_hits_free(h);
    assert_int_equal(atomic_load(&reindexed), 0);
    mn_set_log(NULL, NULL, MN_LOG_WARN);

    /* refusals, each naming the destination */
    assert_int_equal(mn_backup(db, dest, NULL, NULL), MN_CONFLICT);
    assert_non_null(strstr(mn_errmsg(), dest));
    assert_int_equal(mn_backup(db, target, NULL, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "is the database itself"));
    assert_int_equal(mn_backup(db, "", NULL, NULL), MN_INVALID);
    assert_int_equal(mn_backup(db, NULL, NULL, NULL), MN_MISUSE);
    assert_int_equal(mn_backup(NULL, dest, NULL, NULL), MN_MISUSE);
    mn_close(bk);
    mn_close(db);
}

static void pg_refused(void **state)
{
    (void)state;
    if (!test_db_pg())
        skip(); /* SQLite: backup_while_writing */
    mn_db *db = open_db(target);
    char dest[400];
    snprintf(dest, sizeof dest, "%s/pg.db", dir);
    assert_int_equal(mn_backup(db, dest, NULL, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "PostgreSQL's own tools, pg_basebackup"));
    assert_non_null(strstr(mn_errmsg(), "pg_dump"));
    assert_int_equal(access(dest, F_OK), -1);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "backup"))
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
    const struct CMUnitTest tests[] = {cmocka_unit_test(backup_while_writing), cmocka_unit_test(pg_refused)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
