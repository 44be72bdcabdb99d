/*
 * erase.c — what a delete removes besides the rows (docs/erasure.md): the offloaded tool
 * outputs that context governance wrote for the session (DIR/tool-outputs/SESSION/SEQ.txt,
 * src/context/govern.c), and the saved vector indexes (messages' "<db>.hnsw", memories'
 * "<db>.memories.hnsw"), caches rebuilt from the stored vectors (which no longer hold the
 * deleted ones). The rows
 * themselves are erased by the store (src/store/, sqlite/erase.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "store/target.h"
#include "util/err.h"
#include "util/banned.h"

static void remove_file(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT)
        mn__log(MN_LOG_WARN, "erase: cannot remove %s: %s", path, strerror(errno));
}

/* The saved index holds deleted vectors as tombstones: drop the file (and its state). */
static void drop_vector_index(mn_db *db, const char *suffix)
{
    char path[4200], state[4210];
    if (!mn_store_target_local(db->path) ||
        (size_t)snprintf(path, sizeof path, "%s%s", mn_store_target_path(db->path), suffix) >= sizeof path ||
        access(path, F_OK) != 0)
        return;
    snprintf(state, sizeof state, "%s.state", path);
    remove_file(path);
    remove_file(state);
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
    drop_vector_index(db, ".hnsw");
}

void mn__erased_sessions(mn_db *db, const mn_strings *ids)
{
    for (size_t i = 0; ids && i < ids->count; i++)
        drop_offloaded(db, ids->items[i], 0);
    if (ids && ids->count)
        drop_vector_index(db, ".hnsw");
}

void mn__erased_memories(mn_db *db)
{
    mn__memory_index_drop(db); /* this handle's copy: its tombstones are never saved */
    drop_vector_index(db, ".memories.hnsw");
}
