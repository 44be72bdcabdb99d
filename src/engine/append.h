/*
 * append.h — the append algorithm over a store's primitives (append.c; store/store_append.h),
 * for the public mn_append* functions and for tests that drive a bare store.
 */
#ifndef MN_ENGINE_APPEND_H
#define MN_ENGINE_APPEND_H

#include <stddef.h>

#include "store/store.h"

/* All of req's messages in one transaction; idempotency keys already stored return the stored
 * row. *out (may be NULL) gets the stored messages (caller frees with mn_messages_free). */
mn_status mn__engine_append(mn_store *st, const char *session_id, const mn_store_append *req, mn_messages **out);

/* Group commit: n appends (session_ids[i], reqs[i]) in one write transaction, each inside its own
 * savepoint so that a failing one leaves the others; results[i] gets each status and errmsg[i]
 * its message; out[i] (out may be NULL) the stored messages. Returns the status of the commit:
 * on failure every result is that status and nothing is stored. */
mn_status mn__engine_append_many(mn_store *st, const char *const *session_ids, const mn_store_append *reqs, size_t n,
                                mn_status *results, char (*errmsg)[256], mn_messages **out);

#endif
