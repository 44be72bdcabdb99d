/*
 * store.c — chooses the backend for a database target (target.h): a PostgreSQL URL or libpq
 * keyword/value string opens the PostgreSQL backend (postgres/); anything else is a SQLite file
 * (sqlite/), except text that holds "password" and "=".
 */
#include "store/store.h"

#include <string.h>

#include "store/target.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn__store_open(const char *target, const mn_store_opts *opts, mn_store **out)
{
    *out = NULL;
    if (mn__store_target_kind(target) == MN_TARGET_POSTGRES)
        return mn__store_pg_open(target, opts, out);
    if (opts->pg_replicas && opts->pg_replicas[strspn(opts->pg_replicas, " \t\r\n")])
        return mn__err(MN_INVALID, "postgres.replicas: read replicas need a PostgreSQL database, and %.200s is a"
                                   " SQLite file (every read of it sees every commit)", target);
    /* never a file whose name holds a password: a misspelt connection string */
    if (strcasestr(target, "password") && strchr(target, '='))
        return mn__err(MN_INVALID, "database target: looks like a PostgreSQL connection string with a password,"
                                   " but does not start with postgresql:// or a libpq keyword (host=, dbname=, …);"
                                   " refusing to create a SQLite file by that name");
    return mn__store_sqlite_open(mn__store_target_path(target), opts, out);
}
