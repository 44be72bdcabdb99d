/*
 * search.h — the search engine below the public API: the FTS5 query escaping, reciprocal rank
 * fusion, and the per-handle vector index kept in step with the stored vectors (loaded from
 * "<db>.hnsw", rebuilt from the database when missing, damaged or stale, caught up from the
 * embed_log on every search, saved on close). Design notes: docs/search.md.
 */
#ifndef MN_SEARCH_H
#define MN_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "index/index.h"
#include "mnemo.h"
#include "store/store.h"
#include "store/store_search.h"
#include "util/buf.h"

#define MN_FTS_MAX_TERMS 64 /* terms of a query that count; the rest are ignored */

/* Turns user text into a safe FTS5 MATCH expression: every word-ish token becomes a quoted
 * string ("…", inner quotes doubled), joined by OR, so no input is ever FTS5 syntax. *terms gets
 * the number of terms; 0 when the text has none (the expression is then empty). */
mn_status mn__fts_query(const char *text, struct mn_buf *out, size_t *terms);
/* mn__fts_query without English function words ("the", "is", "my", "where", …) when the text has
 * other words: for questions over short texts (memory search), where those words decide an OR
 * ranking. A text of function words only keeps them all. */
mn_status mn__fts_query_content(const char *text, struct mn_buf *out, size_t *terms);

/* One ranked list entry. */
struct mn_ranked {
    int64_t id;
    double score;
};
/* Reciprocal rank fusion of two ranked lists (best first): score(d) = sum of 1/(k + rank).
 * out (caller frees) gets the union, best first, ties by smaller id. */
mn_status mn__rrf(const struct mn_ranked *a, size_t na, const struct mn_ranked *b, size_t nb, double k,
                 struct mn_ranked **out, size_t *n);

typedef struct mn_vsearch mn_vsearch;

/* Where an index's vectors come from (store_search.h's types): every stored vector with the
 * change log position it reflects, the log's changes after a position, one vector. suffix names
 * the saved file beside the database (".hnsw" for messages, ".memories.hnsw" for memories). */
struct mn_vsource {
    const char *suffix;
    mn_status (*scan)(mn_store *st, mn_store_vec_fn fn, void *user, int64_t *log_seq);
    mn_status (*changes)(mn_store *st, int64_t after, mn_store_change_fn fn, void *user, int64_t *last);
    mn_status (*get)(mn_store *st, int64_t id, float *out, uint32_t dim);
};
/* A filter as the ids passing it, handed to fn (any order). */
typedef mn_status (*mn_vfilter_fn)(void *arg, mn_store_score_fn fn, void *user);

/* A vector index for the database at db_path (NULL or ":memory:": not persisted; the file is
 * db_path + ".hnsw"). Nothing is opened until the first query or update. params: the graph's M
 * and ef_construction (used when the index is built; a saved file keeps its own) and ef_search
 * (applied to every search); dim is filled in later. */
mn_status mn__vsearch_new(mn_store *st, const char *db_path, const struct mn_index_params *params, mn_vsearch **out);
/* The same over another source (the file is db_path + src->suffix). */
mn_status mn__vsearch_new_source(mn_store *st, const char *db_path, const struct mn_index_params *params,
                                const struct mn_vsource *src, mn_vsearch **out);
/* Saves the index when this handle changed it (and the file on disk is older), frees. */
void mn__vsearch_free(mn_vsearch *v);
/* Cores a build from scratch uses (0: all). */
void mn__vsearch_set_threads(mn_vsearch *v, unsigned threads);
/* The writers' step, after vectors were stored (`added` of them by the caller): brings the index
 * up to date with the stored vectors — built from scratch (on every core) when there is none,
 * when `rebuild` is set or `added` is over half the index, else the embed_log changes added —
 * and saves it when due (after a build, else at most every 30 s; and on free). */
mn_status mn__vsearch_update(mn_vsearch *v, int rebuild, size_t added);

/* What a query searched: the vectors in the index, those scanned exactly because the index
 * does not reflect them yet, and whether that scan stopped at its bound (100,000 rows). */
struct mn_vsearch_info {
    size_t indexed;
    size_t scanned;
    int truncated;
};
/* The k nearest stored vectors to q (dim floats) that pass the filter (NULL: all), best first.
 * Never builds or changes the index: the saved index (memory-mapped) answers for what it
 * reflects, an exact scan for the rest. info may be NULL. */
mn_status mn__vsearch_query(mn_vsearch *v, const float *q, uint32_t dim, size_t k, const mn_search_filter *f,
                           struct mn_index_hit *hits, size_t *n, struct mn_vsearch_info *info);
/* The same with the filter given as the ids passing it (filter NULL: every vector): at most
 * 50,000 ids are the index's candidates (an exact scan of them), more an accept filter. */
mn_status mn__vsearch_query_ids(mn_vsearch *v, const float *q, uint32_t dim, size_t k, mn_vfilter_fn filter,
                               void *filter_arg, struct mn_index_hit *hits, size_t *n, struct mn_vsearch_info *info);
/* 1 when there is an index (this handle's, or a saved file, mapped now); 0: a query would scan
 * every stored vector until a writer builds one. */
int mn__vsearch_ready(mn_vsearch *v);
/* After an erase: applies the change log to the index this handle has loaded (none: nothing to
 * do), so that the erased vectors leave its memory now (removed slots are zeroed), not at the
 * next write. */
mn_status mn__vsearch_apply_changes(mn_vsearch *v);
/* After an erase: removes the saved index "<db><suffix>" and its state (they hold the erased
 * vectors), under the lock every save takes; a database without a local file has none. */
void mn__vsearch_erase_saved(const char *db_path, const char *suffix);
/* For a backup (engine/backup.c): copies the saved index "<db><suffix>" and its state to
 * "<to><suffix>" and its state, a pair that belongs together (the state names the file's
 * checksum), without the lock saves take: a save replaces both by renames, never writes them in
 * place, so an index file opened is one whole save. Copied before the database's snapshot, the
 * index reflects a change-log position at or before it, and catches up from the log. *copied is
 * 0 when there is none (no local file, none saved, or a save at each of three tries). */
mn_status mn__vsearch_copy_saved(const char *db_path, const char *suffix, const char *to, int *copied);
/* Live vectors in the index. */
size_t mn__vsearch_count(mn_vsearch *v);
/* Saves now (when changed). */
mn_status mn__vsearch_save(mn_vsearch *v);

#endif
