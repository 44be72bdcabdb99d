/*
 * store.c — chooses the backend for a database target: a postgres:// or postgresql:// URL
 * opens the PostgreSQL backend (postgres/), anything else is a SQLite file path (sqlite/).
 */
#include "store/store.h"

#include <string.h>

#include "util/err.h"
#include "util/banned.h"

mn_status mn_store_open(const char *target, const mn_store_opts *opts, mn_store **out)
{
    *out = NULL;
    if (strncmp(target, "postgres://", 11) == 0 || strncmp(target, "postgresql://", 13) == 0)
        return mn_store_pg_open(target, opts, out);
    return mn_store_sqlite_open(target, opts, out);
}
