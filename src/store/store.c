/*
 * store.c — chooses the backend for a database target. Only SQLite exists today; a
 * postgres:// URL is refused with a clear message until that backend lands.
 */
#include "store/store.h"

#include <string.h>

#include "util/err.h"
#include "util/banned.h"

mn_status mn_store_open(const char *target, const mn_store_opts *opts, mn_store **out)
{
    *out = NULL;
    if (strncmp(target, "postgres://", 11) == 0 || strncmp(target, "postgresql://", 13) == 0)
        return mn__err(MN_UNAVAILABLE, "the PostgreSQL backend is not built into this mnemo");
    return mn_store_sqlite_open(target, opts, out);
}
