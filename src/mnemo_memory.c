/*
 * mnemo_memory.c — the public long-term memory functions of mnemo.h (mn_memory_*): the handle
 * check, then the engine's use case (versions: engine/memory_write.c; reads and search:
 * engine/memory_search.c; extraction: engine/extract.c), and the records' free and JSON forms.
 * docs/memory.md.
 */
#include <stdlib.h>

#include "mnemo_int.h"
#include "memory/fact.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

mn_status mn_memory_add(mn_db *db, const mn_memory_in *in, mn_memory **out)
{
    if (out)
        *out = NULL;
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__add_memory(db, in, out);
}

mn_status mn_memory_get(mn_db *db, const char *id, mn_memory **out)
{
    *out = NULL;
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__get_memory(db, NULL, id, out);
}

mn_status mn_memory_get_in(mn_db *db, const char *ns, const char *id, mn_memory **out)
{
    *out = NULL;
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__get_memory(db, ns, id, out);
}

mn_status mn_memory_update(mn_db *db, const char *id, const mn_memory_in *in, mn_memory **out)
{
    if (out)
        *out = NULL;
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__update_memory(db, id, in, out);
}

mn_status mn_memory_delete(mn_db *db, const char *id, int64_t at, const char *actor, const char *reason)
{
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__delete_memory(db, id, at, actor, reason);
}

mn_status mn_memory_forget(mn_db *db, const char *id)
{
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__forget_memory(db, id);
}

mn_status mn_memory_history(mn_db *db, const char *id, mn_memories **out)
{
    *out = NULL;
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__list_memory_versions(db, id, out);
}

mn_status mn_memory_list(mn_db *db, const mn_memory_query *q, mn_memories **out)
{
    *out = NULL;
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__list_memories(db, q, out);
}

mn_status mn_memory_search(mn_db *db, const char *query, mn_search_mode mode, const mn_memory_query *q,
                           mn_memories **out)
{
    *out = NULL;
    mn_status rc = mn__check_db(db);
    return rc ? rc : MN__ON_REPLICA(db, mn__search_memories(db, query, mode, q, out));
}

/* The engine checks the handle itself: the background worker runs the same extraction. */
mn_status mn_memory_extract(mn_db *db, const char *session_id, const char *extractor, mn_extract_stats *stats)
{
    return mn__extract_memories(db, session_id, extractor, 0, stats);
}

/* ---- records --------------------------------------------------------------------------------- */

void mn_memory_free(mn_memory *m) { mn__free_memory(m); }

void mn_memories_free(mn_memories *list) { mn__memories_list_free(list); }

mn_status mn_memory_to_json(const mn_memory *m, char **out)
{
    *out = NULL;
    json_t *o = m ? mn__fact_json(m, 0) : NULL;
    if (!o)
        return m ? mn__nomem() : mn__err(MN_MISUSE, "memory: NULL");
    *out = mn__json_dump(o);
    json_decref(o);
    return *out ? MN_OK : mn__nomem();
}

mn_status mn_memories_to_json(const mn_memories *list, char **out)
{
    *out = NULL;
    json_t *a = json_array();
    mn_status rc = a ? MN_OK : mn__nomem();
    for (size_t i = 0; !rc && list && i < list->count; i++) {
        json_t *o = mn__fact_json(&list->items[i], 1);
        if (!o || json_array_append_new(a, o))
            rc = mn__nomem();
    }
    if (!rc && !(*out = mn__json_dump(a)))
        rc = mn__nomem();
    json_decref(a);
    return rc;
}
