/*
 * test_sql.h — for tests that read a SQLite file beside the library (a connection of their own):
 *
 *   test_sql_int(c, sql)   the first column of the first row of sql, which must give a row
 *
 * Header-only; the including file includes cmocka.h (with its prerequisites) and sqlite3.h first.
 */
#ifndef MNEMO_TEST_SQL_H
#define MNEMO_TEST_SQL_H

#include <stdint.h>

static inline int64_t test_sql_int(sqlite3 *c, const char *sql)
{
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(c, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

#endif
