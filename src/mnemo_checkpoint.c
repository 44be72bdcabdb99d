/*
 * mnemo_checkpoint.c — the public graph checkpoint functions (mnemo.h, docs/checkpoints.md):
 * the handle and ABI checks, then the use cases of engine/checkpoint.c.
 */
#include <stddef.h>

#include "engine/engine.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_checkpoint_put(mn_db *db, const mn_checkpoint_in *cp)
{
    mn_checkpoint_in in = MN_CHECKPOINT_IN_INIT;
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = MN__ABI_LOAD(mn_checkpoint_in, &in, cp, metadata);
    return rc ? rc : mn__put_checkpoint(db, &in);
}

mn_status mn_checkpoint_put_writes(mn_db *db, const char *ns, const char *thread, const char *checkpoint_ns,
                                   const char *checkpoint_id, const mn_checkpoint_write *writes, size_t n)
{
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__put_checkpoint_writes(db, ns, thread, checkpoint_ns, checkpoint_id, writes, n);
}

mn_status mn_checkpoint_list(mn_db *db, const mn_checkpoint_query *q, mn_checkpoints **out)
{
    mn_checkpoint_query in = MN_CHECKPOINT_QUERY_INIT;
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (!rc && !out)
        rc = mn__err(MN_MISUSE, "mn_checkpoint_list: out is NULL");
    if (!rc)
        rc = MN__ABI_LOAD(mn_checkpoint_query, &in, q, limit);
    return rc ? rc : mn__list_checkpoints(db, &in, out);
}

mn_status mn_checkpoint_get(mn_db *db, const char *ns, const char *thread, const char *checkpoint_ns, const char *id,
                            mn_checkpoints **out)
{
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (!rc && !out)
        rc = mn__err(MN_MISUSE, "mn_checkpoint_get: out is NULL");
    return rc ? rc : mn__get_checkpoint(db, ns, thread, checkpoint_ns, id, out);
}

mn_status mn_checkpoint_delete_thread(mn_db *db, const char *ns, const char *thread, int64_t *removed)
{
    mn_status rc = mn__check_db(db);
    if (removed)
        *removed = 0;
    return rc ? rc : mn__delete_checkpoint_thread(db, ns, thread, removed);
}

const mn_checkpoint *mn_checkpoints_at(const mn_checkpoints *list, size_t i)
{
    if (!list || i >= list->count)
        return NULL;
    return (const mn_checkpoint *)(const void *)((const char *)list->items + i * list->item_size);
}

void mn_checkpoints_free(mn_checkpoints *list)
{
    mn__free_checkpoints(list);
}
