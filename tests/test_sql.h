/*
 * test_sql.h — for tests that read a SQLite file beside the library (a connection of their own):
 *
 *   test_sql_int(c, sql)   the first column of the first row of sql, which must give a row
 *   test_sql_open_kw(path, flags)   a connection to the database at path (SQLITE_OPEN_READONLY or
 *                          _READWRITE) with its keyword index's file, "<path>.keywords" (schema
 *                          version 11), attached as kw; a busy timeout of 5 s
 *
 * Header-only; the including file includes cmocka.h (with its prerequisites) and sqlite3.h first.
 */
#ifndef MNEMO_TEST_SQL_H
#define MNEMO_TEST_SQL_H

#include <stdint.h>
#include <stdio.h>

static inline int64_t test_sql_int(sqlite3 *c, const char *sql)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static inline sqlite3 *test_sql_open_kw(const char *path, int flags)
{
    sqlite3 *c = NULL;
    char sql[1100];
    assert_int_equal(sqlite3_open_v2(path, &c, flags, NULL), SQLITE_OK);
    sqlite3_busy_timeout(c, 5000);
    assert_true((size_t)snprintf(sql, sizeof sql, "ATTACH '%s.keywords' AS kw", path) < sizeof sql);
    assert_int_equal(sqlite3_exec(c, sql, NULL, NULL, NULL), SQLITE_OK);
    return c;
}

#endif
