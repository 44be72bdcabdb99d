/*
 * test_busy.c — a database locked by another writer: mnemo backs off and succeeds when the lock
 * goes away in time, and fails with MN_BUSY and a clear message when it does not. The other
 * writer is a plain SQLite connection holding a write transaction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"

static char dir[64], path[128];

static mn_db *open_db(const char *timeout_ms)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.busy_timeout_ms", timeout_ms, NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(path, cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static sqlite3 *lock_db(void)
{
    sqlite3 *other = NULL;
    assert_int_equal(sqlite3_open(path, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN IMMEDIATE; INSERT INTO meta VALUES ('lock', 'held')", 0, 0, 0),
                     SQLITE_OK);
    return other;
}

static void *release_later(void *arg)
{
    usleep(150 * 1000);
    sqlite3_exec(arg, "ROLLBACK", 0, 0, 0);
    return NULL;
}

static void busy_then_free(void **state)
{
    (void)state;
    mn_db *db = open_db("5000");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    sqlite3 *other = lock_db();
    pthread_t t;
    pthread_create(&t, NULL, release_later, other);
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "waits for the lock";
    assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
    pthread_join(t, NULL);
    sqlite3_close(other);
    mn_session_free(s);
    mn_close(db);
}

static void busy_beyond_the_bound(void **state)
{
    (void)state;
    mn_db *db = open_db("200");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    sqlite3 *other = lock_db();
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "gives up";
    assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_BUSY);
    assert_non_null(strstr(mn_errmsg(), "locked"));
    assert_non_null(strstr(mn_errmsg(), "memory.busy_timeout_ms"));
    sqlite3_exec(other, "ROLLBACK", 0, 0, 0);
    sqlite3_close(other);
    /* nothing half-written, and the handle works again */
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, s->id, NULL, &l), MN_OK);
    assert_int_equal(l->count, 0);
    mn_messages_free(l);
    assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
    mn_session_free(s);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mnemo-busy-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof path, "%s/busy.db", dir);
    return 0;
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
        cmocka_unit_test(busy_then_free),
        cmocka_unit_test(busy_beyond_the_bound),
    };
    return cmocka_run_group_tests_name("busy", tests, setup, teardown);
}
