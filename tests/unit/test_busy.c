/*
 * test_busy.c — a database locked by another writer: mnemo backs off and succeeds when the lock
 * goes away in time, and fails with MN_BUSY and a clear message when it does not. The other
 * writer is a plain SQLite connection holding a write transaction, or on PostgreSQL (pg/unit/
 * test_busy, tests/test_db.h) a psql session holding an EXCLUSIVE lock on the sessions table.
 *
 * Nothing here depends on the machine's speed: the lock is held until the test lets it go (on
 * PostgreSQL once pg_locks shows mnemo waiting for it), and the bound that must be outlived is
 * generous; the only short bound is the one that must expire while the lock is still held.
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
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[256], path[320];

static mn_db *open_db(const char *timeout_ms)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.busy_timeout_ms", timeout_ms, NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

/* PostgreSQL: how many locks on the sessions table match `where` (a condition on pg_locks l). */
static int pg_sessions_locks(const char *where)
{
    char sql[512], out[64] = "";
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
             " WHERE c.relname = 'sessions' AND %s",
             where);
    if (test_db_sql(test_db_target(path), sql, out, sizeof out) != 0)
        return -1;
    return atoi(out);
}

/* Polls until a lock on sessions matches `where`; 0, or -1 after a deadline that only ends a hung
 * test (120 s). */
static int pg_await_lock(const char *where)
{
    time_t give_up = time(NULL) + 120;
    while (pg_sessions_locks(where) < 1) {
        if (time(NULL) > give_up) {
            fprintf(stderr, "test_busy: gave up after 120 s waiting for a lock on sessions with %s\n", where);
            return -1;
        }
        usleep(10 * 1000);
    }
    return 0;
}

/* PostgreSQL: psql, reading its commands from our pipe, takes an EXCLUSIVE lock on the sessions
 * table and holds it until pg_unlock; we return once pg_locks shows it granted. */
static FILE *pg_lock(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "psql -X -q -v ON_ERROR_STOP=1 '%s' >/dev/null", test_db_target(path));
    FILE *p = popen(cmd, "w");
    assert_non_null(p);
    fputs("BEGIN;\nLOCK TABLE sessions IN EXCLUSIVE MODE;\n", p);
    fflush(p);
    assert_int_equal(pg_await_lock("l.mode = 'ExclusiveLock' AND l.granted"), 0);
    return p;
}

static int pg_unlock(FILE *p)
{
    fputs("ROLLBACK;\n", p);
    return pclose(p);
}

/* Lets the lock go once mnemo waits for it (an ungranted lock on sessions); returns 0 or -1. */
static void *pg_release_when_waited(void *p)
{
    int waited = pg_await_lock("NOT l.granted");
    int closed = pg_unlock(p);
    return (waited == 0 && closed == 0) ? NULL : p;
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
    mn_db *db = open_db("120000");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "waits for the lock";
    if (test_db_pg()) {
        FILE *p = pg_lock();
        pthread_t t;
        void *failed = NULL;
        pthread_create(&t, NULL, pg_release_when_waited, p);
        assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
        pthread_join(t, &failed);
        assert_null(failed);
    } else {
        /* SQLite's busy wait is not visible from outside: released after 150 ms, well within the
         * bound; on a slow machine the append may simply find it free */
        sqlite3 *other = lock_db();
        pthread_t t;
        pthread_create(&t, NULL, release_later, other);
        assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
        pthread_join(t, NULL);
        sqlite3_close(other);
    }
    mn_session_free(s);
    mn_close(db);
}

static void busy_beyond_the_bound(void **state)
{
    (void)state;
    mn_db *db = open_db("200");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "gives up";
    /* held until the append has given up, however long that takes */
    FILE *p = test_db_pg() ? pg_lock() : NULL;
    sqlite3 *other = test_db_pg() ? NULL : lock_db();
    assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_BUSY);
    assert_non_null(strstr(mn_errmsg(), "locked"));
    assert_non_null(strstr(mn_errmsg(), "memory.busy_timeout_ms"));
    if (p)
        assert_int_equal(pg_unlock(p), 0);
    else {
        sqlite3_exec(other, "ROLLBACK", 0, 0, 0);
        sqlite3_close(other);
    }
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
    if (test_tmpdir(dir, sizeof dir, "busy") != 0)
        return -1;
    snprintf(path, sizeof path, "%s/busy.db", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(busy_then_free),
        cmocka_unit_test(busy_beyond_the_bound),
    };
    return cmocka_run_group_tests_name("busy", tests, setup, teardown);
}
