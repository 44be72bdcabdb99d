/*
 * store_search.h — the search part of the store interface (store.h's ops->search): the FTS5
 * keyword index, stored vectors, the embedding queue and the change log each process reads to
 * keep its in-memory vector index current. Implemented by sqlite/search.c. docs/search.md.
 */
#ifndef MN_STORE_SEARCH_H
#define MN_STORE_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "store/store.h"

/* A stored vector: id, dim floats (callback-scoped). Return 0 to go on, nonzero to stop. */
typedef int (*mn_store_vec_fn)(void *user, int64_t message_id, const float *vec, uint32_t dim);
/* A change of the stored vectors: op 1 stored (vec set), 0 removed (vec NULL). */
typedef int (*mn_store_change_fn)(void *user, int64_t seq, int64_t message_id, int op, const float *vec,
                                  uint32_t dim);
/* A scored message id. */
typedef int (*mn_store_score_fn)(void *user, int64_t message_id, double score);
/* A queued message to embed (content callback-scoped). */
typedef int (*mn_store_text_fn)(void *user, int64_t message_id, const char *content);
/* A message found by id, with its session's namespace. */
typedef int (*mn_store_found_fn)(void *user, const mn_message *m, const char *ns);

/* What a keyword search could not answer from the index (fts_search). */
struct mn_store_fts_report {
    int64_t unindexed, scanned;
};

struct mn_store_search_ops {
    /* Applies the pending message inserts and deletes to the keyword index (one write
     * transaction; nothing to do is a cheap read). When more waits than a search should wait
     * for (the index file was missing or stale: rebuilt from the messages), it asks for it to be
     * done in the background instead and returns; fts_search then scans the rest. */
    mn_status (*fts_sync)(mn_store *st);
    /* Keyword index upkeep as messages arrive (docs/search.md, "Keeping the keyword index
     * current"). all = 0: when this handle has logged at least fts_drain_rows rows since its last
     * drain, applies them (and up to one chunk more of an older backlog), one chunk of
     * fts_drain_rows rows per write transaction; else nothing. all = 1: applies the whole log,
     * chunk by chunk. *applied (optional) gets the log rows consumed; *pending (optional) the
     * rows left (a count of the log). defer = 1: appends no longer drain after their commit (the
     * caller calls fts_drain itself, off the append's path). Backends without a log: no-ops. */
    mn_status (*fts_drain)(mn_store *st, int all, int64_t *applied, int64_t *pending);
    void (*fts_defer)(mn_store *st, int defer);
    /* The best `limit` messages for an FTS5 MATCH expression (already escaped) that pass the
     * filter, best first, with a BM25 score (larger is better). Messages the index does not hold
     * yet (rep->unindexed) are searched by a scan of the newest of them (rep->scanned; the rest
     * are not searched); both 0 when the index holds every message. */
    mn_status (*fts_search)(mn_store *st, const char *match, const mn_search_filter *f, size_t limit,
                            mn_store_score_fn fn, void *user, struct mn_store_fts_report *rep);
    /* Ids of the messages with a vector that pass the filter (any order); *n the count. */
    mn_status (*vec_filter)(mn_store *st, const mn_search_filter *f, mn_store_score_fn fn, void *user);
    /* Every stored vector (for an index rebuild), and the embed_log position they reflect:
     * *log_seq is read first in the same read transaction. */
    mn_status (*vec_scan)(mn_store *st, mn_store_vec_fn fn, void *user, int64_t *log_seq);
    /* Changes with seq > after, in order; *last gets the last seq seen (after when none). */
    mn_status (*vec_changes)(mn_store *st, int64_t after, mn_store_change_fn fn, void *user, int64_t *last);
    /* One stored vector into out[0..dim) (MN_NOTFOUND when none or of another dimension). */
    mn_status (*vec_get)(mn_store *st, int64_t message_id, float *out, uint32_t dim);
    /* Stores n vectors (vecs[i*dim..], NULL entries in `skip` mark messages to take off the queue
     * without a vector) and removes the ids from the queue, in one transaction. The identity
     * "embedder/model/dim" must match meta 'embed.identity' (set when unset): MN_CONFLICT else. */
    mn_status (*vec_put)(mn_store *st, const int64_t *ids, size_t n, const float *vecs, const unsigned char *skip,
                         uint32_t dim, const char *embedder, const char *model, int64_t now_ms);
    /* Up to `limit` queued messages, smallest id first. */
    mn_status (*queue_peek)(mn_store *st, size_t limit, mn_store_text_fn fn, void *user);
    /* Sets meta 'embed.queue' to on (new messages are queued) or off. */
    mn_status (*queue_enable)(mn_store *st, int on);
    /* Queues every message with content and no vector; *queued gets the queue's length. With
     * reset, first drops every vector and the stored identity. */
    mn_status (*queue_fill)(mn_store *st, int reset, int64_t *queued);
    mn_status (*counts)(mn_store *st, int64_t *embedded, int64_t *queued);
    /* *n gets how many queued messages (waiting to be embedded) pass the filter. */
    mn_status (*queue_count)(mn_store *st, const mn_search_filter *f, int64_t *n);
    /* Messages by id (missing ones skipped), with their namespace, in the order given. */
    mn_status (*messages_get)(mn_store *st, const int64_t *ids, size_t n, mn_store_found_fn fn, void *user);
};

extern const struct mn_store_search_ops mn_sqlite_search_ops;

#endif
