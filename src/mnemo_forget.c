/*
 * mnemo_forget.c — mn_namespace_forget: erasure of a whole namespace (a tenant or user leaving),
 * as the erasures it is made of: each session as mn_session_delete erases it (rows, keyword
 * index, vectors, summaries, events, state, file records; offloaded outputs and the saved vector
 * index afterwards) and each long-term memory as mn_memory_forget erases it. Batches of the
 * store's own reads, so that a namespace of any size is finished in bounded memory.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "memory/jsonl.h"
#include "store/records.h"
#include "store/store_memory.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

#define BATCH 1000

static mn_status forget_sessions(mn_db *db, const char *ns, int64_t *count)
{
    for (;;) {
        mn_sessions *l = NULL;
        mn_status rc = db->store->ops->session_list(db->store, ns, BATCH, 0, &l);
        if (rc)
            return rc;
        size_t n = l->count;
        for (size_t i = 0; !rc && i < n; i++) {
            const char *id = l->items[i].id;
            rc = db->store->ops->session_delete(db->store, id);
            if (rc == MN_NOTFOUND) /* deleted meanwhile by another caller: as good */
                rc = MN_OK;
            else if (!rc) {
                mn_strings one = {1, (const char *[]){id}};
                mn__erased_sessions(db, &one);
                (*count)++;
            }
        }
        mn_records_session_list_free(l);
        if (rc || n == 0)
            return rc;
    }
}

struct ids {
    struct mn_strings_impl *l;
    int oom;
};

/* Collects each memory id once (a query of every version repeats them, oldest version first). */
static int collect_id(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25, (void)vec, (void)dim;
    struct ids *ids = user;
    mn_strings *l = &ids->l->pub;
    if (l->count && strcmp(l->items[l->count - 1], m->id) == 0)
        return 0;
    for (size_t i = 0; i < l->count; i++)
        if (strcmp(l->items[i], m->id) == 0)
            return 0;
    if (mn_records_strings_push(ids->l, m->id)) {
        ids->oom = 1;
        return 1;
    }
    return 0;
}

static mn_status forget_memories(mn_db *db, const char *ns, int64_t *count)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = ns;
    for (;;) {
        struct ids ids = {calloc(1, sizeof *ids.l), 0};
        if (!ids.l)
            return mn__nomem();
        mn_store_memory_query sq = {&q, NULL, 1, NULL, 0, mn_clock_now_ms(), BATCH, 0, NULL, 0};
        mn_status rc = db->store->ops->memory->query(db->store, &sq, collect_id, &ids);
        if (!rc && ids.oom)
            rc = mn__nomem();
        size_t n = rc ? 0 : ids.l->pub.count;
        for (size_t i = 0; !rc && i < n; i++) {
            int64_t removed = 0;
            rc = db->store->ops->memory->forget(db->store, ids.l->pub.items[i], &removed);
            if (!rc && removed)
                (*count)++;
        }
        mn_strings_free(&ids.l->pub);
        if (!rc && n == 0 && *count) /* the memory vector index kept their vectors: it goes */
            mn__erased_memories(db);
        if (rc || n == 0)
            return rc;
    }
}

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
    if ((rc = mn_check_namespace(ns)))
        return rc;
    rc = forget_sessions(db, ns, &st.sessions);
    if (!rc)
        rc = forget_memories(db, ns, &st.memories);
    if (st.sessions || st.memories)
        mn__log(MN_LOG_INFO, "namespace %s forgotten: %lld sessions, %lld memories", ns, (long long)st.sessions,
                (long long)st.memories);
    if (stats)
        *stats = st;
    return rc;
}
