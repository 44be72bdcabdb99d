/*
 * erase.c — what a delete removes besides the rows (docs/erasure.md): the offloaded tool
 * outputs that context governance wrote for the session (DIR/tool-outputs/SESSION/SEQ.txt,
 * src/context/govern.c), and the erased vectors in the vector indexes: this handle's copy in
 * memory and the saved files (messages' "<db>.hnsw", memories' "<db>.memories.hnsw"), caches
 * that every later save writes only after applying the removals (search/vindex.c). The rows
 * themselves are erased by the store (src/store/, sqlite/erase.c). mn__session_delete is the one
 * delete of a session, so no caller can forget a part of it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
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

mn_status mn__session_delete(mn_db *db, const char *canon)
{
    /* first the extraction watermark (mnemo_memory_extract.c), which would outlive the session:
     * one made again with this id starts at seq 1 and would never be read. Going back to 0 only
     * re-reads turns, which changes nothing. */
    char key[64 + MN_UUID_LEN];
    snprintf(key, sizeof key, "memory.extracted.%s", canon);
    mn_status rc = db->store->ops->meta_set(db->store, key, "0");
    if (!rc)
        rc = db->store->ops->session_delete(db->store, canon);
    if (!rc) {
        mn_strings one = {1, (const char *[]){canon}};
        mn__erased_sessions(db, &one);
    }
    return rc;
}
