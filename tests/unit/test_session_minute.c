/*
 * test_session_minute.c — SQLite schema 12: the sessions indexes key on updated_minute =
 * updated_at / 60000, kept by triggers, so that an append (which writes updated_at) rewrites them
 * only when the minute changes (src/store/sqlite/schema.h). Over random timestamps — ties within a
 * minute, equal times, hours apart, set by SQL as any writer might — the column always equals
 * updated_at / 60000, the listing (all, per namespace, page by page) is exactly the order by
 * updated_at then sid, both newest first, appends keep it so, and prune deletes exactly the
 * sessions idle past its bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnemo.h"
#include "test_sql.h"
#include "test_tmp.h"

#define NSESS 60
#define DAY_MS 86400000LL

static uint64_t rs = 0x2545F4914F6CDD1DULL;
static unsigned rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs >> 11);
}

/* The listing mnemo gives (ns NULL: all) against the order by updated_at, sid, page by page. */
static void same_order(mn_db *db, sqlite3 *c, const char *ns)
{
    char sql[300];
    snprintf(sql, sizeof sql, "SELECT id FROM sessions %s ORDER BY updated_at DESC, sid DESC",
             ns ? "WHERE namespace = ?1" : "");
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &st, NULL), SQLITE_OK);
    if (ns)
        sqlite3_bind_text(st, 1, ns, -1, SQLITE_STATIC);
    size_t page = 1 + rnd() % 9, at = 0;
    mn_sessions *list = NULL;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (at % page == 0) {
            mn_sessions_free(list);
            assert_int_equal(mn_session_list(db, ns, page, at, &list), MN_OK);
        }
        const mn_session *got = mn_sessions_at(list, at % page);
        assert_non_null(got);
        assert_string_equal(got->id, (const char *)sqlite3_column_text(st, 0));
        at++;
    }
    mn_sessions_free(list);
    sqlite3_finalize(st);
    assert_true(at > 0);
}

static void minute_order_and_prune(void **state)
{
    (void)state;
    char dir[400], path[500];
    assert_int_equal(test_tmpdir(dir, sizeof dir, "session-minute"), 0);
    snprintf(path, sizeof path, "%s/m.db", dir);
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_open_path(path, cfg, &db), MN_OK);
    mn_config_free(cfg);
    char ids[NSESS][40];
    for (int i = 0; i < NSESS; i++) {
        mn_session_opts o = MN_SESSION_OPTS_INIT;
        o.ns = i % 3 ? "left" : "right";
        mn_session *s = NULL;
        assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
        snprintf(ids[i], sizeof ids[i], "%s", s->id);
        mn_session_free(s);
    }
    sqlite3 *c = NULL;
    assert_int_equal(sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    sqlite3_busy_timeout(c, 10000);
    int64_t now = (int64_t)time(NULL) * 1000;
    for (int round = 0; round < 4; round++) {
        /* times around three days ago (prune's bound below is two): a few minutes, equal values */
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_prepare_v2(c, "UPDATE sessions SET updated_at = ?2 WHERE id = ?1", -1, &st, NULL),
                         SQLITE_OK);
        for (int i = 0; i < NSESS; i++) {
            int64_t t = now - 3 * DAY_MS + (int64_t)(rnd() % 5) * 60000 + (rnd() % 4 ? (int64_t)(rnd() % 60000) : 0);
            sqlite3_bind_text(st, 1, ids[i], -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 2, i % 7 == 0 ? now - 3 * DAY_MS : t);
            assert_int_equal(sqlite3_step(st), SQLITE_DONE);
            sqlite3_reset(st);
        }
        sqlite3_finalize(st);
        assert_int_equal(test_sql_int(c, "SELECT count(*) FROM sessions WHERE updated_minute <> updated_at / 60000"), 0);
        same_order(db, c, NULL);
        same_order(db, c, "left");
        same_order(db, c, "right");
        /* appends move some sessions to now */
        for (int k = 0; k < 5; k++) {
            mn_message_in m = MN_MESSAGE_IN_INIT;
            m.role = MN_ROLE_USER;
            m.content = "tick";
            assert_int_equal(mn_append(db, ids[rnd() % NSESS], &m, 0, NULL), MN_OK);
        }
        assert_int_equal(test_sql_int(c, "SELECT count(*) FROM sessions WHERE updated_minute <> updated_at / 60000"), 0);
        same_order(db, c, NULL);
        same_order(db, c, "left");
    }
    /* prune: exactly the sessions idle for more than two days */
    int64_t idle = test_sql_int(c, "SELECT count(*) FROM sessions WHERE updated_at < CAST(strftime('%s', 'now') AS INTEGER)"
                             " * 1000 - 2 * 86400000");
    assert_true(idle > 0 && idle < NSESS);
    int64_t deleted = -1;
    assert_int_equal(mn_prune(db, 2, &deleted), MN_OK);
    assert_int_equal(deleted, idle);
    assert_int_equal(test_sql_int(c, "SELECT count(*) FROM sessions"), NSESS - idle);
    assert_int_equal(test_sql_int(c, "SELECT min(updated_at) >= CAST(strftime('%s', 'now') AS INTEGER) * 1000 - 2 * 86400000"
                               " FROM sessions"),
                     1);
    sqlite3_close(c);
    mn_close(db);
    test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(minute_order_and_prune),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
