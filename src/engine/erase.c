/*
 * erase.c — what a delete removes besides the rows (docs/erasure.md): the offloaded tool
 * outputs that context governance wrote for the session (DIR/tool-outputs/SESSION/SEQ.txt,
 * src/context/govern.c), and the erased vectors in the vector indexes: this handle's copy in
 * memory and the saved files (messages' "<db>.hnsw", memories' "<db>.memories.hnsw"), caches
 * that every later save writes only after applying the removals (search/vindex.c). The rows
 * themselves are erased by the store (src/store/, sqlite/erase.c). mn__delete_session,
 * mn__sessions_gc and mn__sessions_prune are the deletes of sessions, each with all of it (the
 * extraction watermarks too), so no caller can forget a part. mn__forget_namespace erases a
 * whole namespace as the erasures it is made of: each session as mn__delete_session does, each
 * long-term memory as mn_memory_forget does, then its documents; in batches of the store's own
 * reads, so that a namespace of any size is finished in bounded memory.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "store/records.h"
#include "store/store_memory.h"
#include "store/store_rows.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

static void remove_file(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT)
        mn__log(MN_LOG_WARN, "erase: cannot remove %s: %s", path, strerror(errno));
}

/* Removes DIR/tool-outputs/ID/SEQ.txt, or the whole folder when seq is 0. */
static void drop_offloaded(mn_db *db, const char *session_id, int64_t seq)
{
    char base[4096], dir[4200], path[4400];
    mn__offload_dir(db, base, sizeof base);
    if (!*base || (size_t)snprintf(dir, sizeof dir, "%s/tool-outputs/%s", base, session_id) >= sizeof dir)
        return;
    if (seq > 0) {
        if ((size_t)snprintf(path, sizeof path, "%s/%lld.txt", dir, (long long)seq) < sizeof path)
            remove_file(path);
        return;
    }
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            (size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < sizeof path)
            remove_file(path); /* SEQ.txt and temp files: govern.c makes no folders inside */
    closedir(d);
    if (rmdir(dir) != 0 && errno != ENOENT)
        mn__log(MN_LOG_WARN, "erase: cannot remove %s: %s", dir, strerror(errno));
}

void mn__erased_message(mn_db *db, const char *session_id, int64_t seq)
{
    if (seq > 0)
        drop_offloaded(db, session_id, seq);
    mn__vector_index_erase(db, 0);
}

void mn__erased_sessions(mn_db *db, const mn_strings *ids)
{
    for (size_t i = 0; ids && i < ids->count; i++)
        drop_offloaded(db, ids->items[i], 0);
    if (ids && ids->count)
        mn__vector_index_erase(db, 0);
}

void mn__erased_memories(mn_db *db)
{
    mn__vector_index_erase(db, 1);
}

struct forget {
    const struct mn_store_row_ops *o;
    const mn_strings *ids;
};

static mn_status forget_body(mn_store_tx *tx, void *arg)
{
    struct forget *f = arg;
    char key[MN_EXTRACT_MARK_KEY_CAP];
    mn_status rc = MN_OK;
    for (size_t i = 0; !rc && i < f->ids->count; i++) {
        mn__extract_mark_key(f->ids->items[i], key);
        rc = f->o->meta_drop(tx, key);
    }
    return rc;
}

/* The extraction watermarks of sessions ids (meta memory.extracted.<id>, mnemo_memory_extract.c)
 * go, in one transaction: they would outlive the sessions, and one made again with such an id
 * starts at seq 1, so its first turns would never be read. Dropping a live session's only
 * re-reads its turns, which changes nothing. */
static mn_status forget_watermarks(mn_db *db, const mn_strings *ids)
{
    struct forget f = {db->store->ops->rows, ids};
    return ids && ids->count ? f.o->write(db->store, forget_body, &f) : MN_OK;
}

mn_status mn__delete_session(mn_db *db, const char *canon)
{
    mn_strings one = {1, (const char *[]){canon}};
    mn_status rc = forget_watermarks(db, &one); /* first: nothing is deleted when it fails */
    if (!rc)
        rc = db->store->ops->session_delete(db->store, canon);
    if (!rc)
        mn__erased_sessions(db, &one);
    return rc;
}

/* gc (expired: the sessions whose expiry is bound or before) and prune (those not updated since
 * bound): the store deletes them and names them, so the rest of a delete comes after. The files
 * go even when the watermarks could not, as the rows are gone. */
static mn_status sessions_delete_where(mn_db *db, int expired, int64_t bound, int64_t *n)
{
    const struct mn_store_ops *ops = db->store->ops;
    int64_t deleted = 0;
    mn_strings *ids = NULL;
    mn_status rc = expired ? ops->session_gc(db->store, bound, &deleted, &ids)
                           : ops->session_prune(db->store, bound, &deleted, &ids);
    if (!rc) {
        rc = forget_watermarks(db, ids);
        mn__erased_sessions(db, ids);
    }
    mn_strings_free(ids);
    *n = rc ? 0 : deleted;
    return rc;
}

mn_status mn__sessions_gc(mn_db *db, int64_t *n)
{
    mn_status rc = sessions_delete_where(db, 1, mn__clock_now_ms(), n);
    if (!rc && *n)
        mn__log(MN_LOG_INFO, "gc: purged %lld expired threads", (long long)*n);
    return rc;
}

mn_status mn__sessions_prune(mn_db *db, int days, int64_t *n)
{
    return sessions_delete_where(db, 0, mn__clock_now_ms() - (int64_t)days * 86400000, n);
}

/* ---- a whole namespace (mn_namespace_forget) ---- */

#define FORGET_BATCH 1000

static mn_status forget_sessions(mn_db *db, const char *ns, int64_t *count)
{
    for (;;) {
        mn_sessions *l = NULL;
        mn_status rc = db->store->ops->session_list(db->store, ns, FORGET_BATCH, 0, &l);
        if (rc)
            return rc;
        size_t n = l->count;
        for (size_t i = 0; !rc && i < n; i++) {
            const char *id = l->items[i].id;
            rc = mn__delete_session(db, id);
            if (rc == MN_NOTFOUND) /* deleted meanwhile by another caller: as good */
                rc = MN_OK;
            else if (!rc)
                (*count)++;
        }
        mn__records_session_list_free(l);
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
    if (mn__records_strings_push(ids->l, m->id)) {
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
        mn_store_memory_query sq = {&q, NULL, 1, NULL, 0, mn__clock_now_ms(), FORGET_BATCH, 0, NULL, 0};
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

mn_status mn__forget_namespace(mn_db *db, const char *ns, mn_forget_stats *st)
{
    mn_status rc = forget_sessions(db, ns, &st->sessions);
    if (!rc)
        rc = forget_memories(db, ns, &st->memories);
    int64_t documents = 0;
    if (!rc)
        rc = mn__document_forget_ns(db, ns, &documents);
    if (st->sessions || st->memories || documents)
        mn__log(MN_LOG_INFO, "namespace %s forgotten: %lld sessions, %lld memories, %lld documents", ns,
                (long long)st->sessions, (long long)st->memories, (long long)documents);
    return rc;
}
