/*
 * store_memory.h — the long-term memory part of the store interface (store.h's ops->memory),
 * implemented by sqlite/memories.c and postgres/memories.c. A memory is stored as one row per
 * version (id, version), written by `put` and closed by `end`; which versions a change closes,
 * and when, is decided above (src/engine/memory_write.c, docs/memory.md), as are validation, ids
 * and times. The engine runs a version's put and ends in one begin…commit (store.h), where
 * query, put and end all run in that transaction.
 */
#ifndef MN_STORE_MEMORY_H
#define MN_STORE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "store/store.h"
#include "store/store_search.h"

/* What to read. q holds the scope, kind, metadata, time and pinned filters (already checked:
 * metadata keys are [A-Za-z0-9_-]). */
typedef struct mn_store_memory_query {
    const mn_memory_query *q;
    const char *id;     /* NULL: any memory; else only this one */
    int all_versions;   /* 1: every version (history), oldest first; q's time filters ignored */
    const char *match;  /* an FTS5 MATCH expression of quoted terms joined by OR (mn__fts_query), or NULL */
    int want_vectors;   /* 1: only versions with a vector, handed to the callback */
    int64_t now_ms;
    size_t limit;       /* 0: no limit */
    size_t offset;
    const int64_t *vids; /* when set: only these versions (by vid), in this order, the filters still
                          * applied; the callback's score is the row's position in vids */
    size_t n_vids;
} mn_store_memory_query;

/* The scope filters of a query (its memory id, then q's namespace, user, agent, session and
 * kind), those set, as column = value pairs for a backend's WHERE; returns how many. */
static inline size_t mn__memory_scope(const mn_store_memory_query *sq, const char *col[6], const char *val[6])
{
    const mn_memory_query *q = sq->q;
    const char *const cols[6] = {"m.id", "m.namespace", "m.user_id", "m.agent_id", "m.session_id", "m.kind"};
    const char *const vals[6] = {sq->id, q->ns, q->user_id, q->agent_id, q->session_id, q->kind};
    size_t n = 0;
    for (size_t i = 0; i < 6; i++)
        if (vals[i]) {
            col[n] = cols[i];
            val[n++] = vals[i];
        }
    return n;
}

/* One row: m and vec are callback-scoped; bm25 (larger is better) when match was set. Return 0
 * to go on, 1 to stop. */
typedef int (*mn_store_memory_fn)(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim);

struct mn_store_memory_ops {
    /* Inserts version m as it is (superseded_at and valid_to included), its keyword entry and its
     * vector (vec NULL: none), unless (id, version) exists (*added 0). */
    mn_status (*put)(mn_store *st, const mn_memory *m, const float *vec, uint32_t dim, int *added);
    /* Sets when version `version` of memory id was superseded and until when it was valid. */
    mn_status (*end)(mn_store *st, const char *id, int64_t version, int64_t superseded_at, int64_t valid_to);
    /* Rows matching the query: newest recorded first; best BM25 first with match; oldest
     * version first with all_versions. */
    mn_status (*query)(mn_store *st, const mn_store_memory_query *q, mn_store_memory_fn fn, void *user);
    /* Deletes every version of memory id, its keyword entries and vectors, erasing them (no
     * term left in the index's pages or the WAL: erasure.md); *removed gets the versions
     * deleted (0: no such memory). */
    mn_status (*forget)(mn_store *st, const char *id, int64_t *removed);
    /* The vids of the versions with a vector that pass q's scope, kind, metadata, pinned and time
     * filters (q->match, id and vids unused), any order. */
    mn_status (*vec_filter)(mn_store *st, const mn_store_memory_query *q, mn_store_score_fn fn, void *user);
    /* The vector index's source (search/vindex.c), as store_search.h's vec_scan / vec_changes /
     * vec_get with version ids (vid) for message ids: every stored memory vector and the
     * memory_vector_log position it reflects; the log's changes after a position; one vector. */
    mn_status (*vec_scan)(mn_store *st, mn_store_vec_fn fn, void *user, int64_t *log_seq);
    mn_status (*vec_changes)(mn_store *st, int64_t after, mn_store_change_fn fn, void *user, int64_t *last);
    mn_status (*vec_get)(mn_store *st, int64_t vid, float *out, uint32_t dim);
};

#endif
