/*
 * mnemo_forget.c — mn_namespace_forget: erasure of a whole namespace (a tenant or user leaving),
 * as the erasures it is made of (engine/erase.c); and mn_memory_erase_sources: the messages
 * memories were made from, once no live memory names them (engine/sources.c).
 */
#include "mnemo_int.h"
#include "memory/jsonl.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_namespace_forget(mn_db *db, const char *ns, mn_forget_stats *stats)
{
    mn_forget_stats st = {0, 0};
    if (stats)
        *stats = st;
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    if (!ns)
        return mn__err(MN_INVALID, "namespace: required");
    if ((rc = mn__check_namespace(ns)))
        return rc;
    rc = mn__forget_namespace(db, ns, &st);
    if (stats) /* what was erased before a failure too */
        *stats = st;
    return rc;
}

mn_status mn_memory_erase_sources(mn_db *db, const char *session_id, const char *memory_id, int64_t *erased)
{
    if (erased)
        *erased = 0;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)))
        return rc;
    return mn__erase_memory_sources(db, canon, memory_id, erased);
}
