/*
 * store_append.h — the transaction and row primitives an append is made of. The algorithm
 * (sequence numbers, idempotency keys, expiry, counters, group commit with a savepoint per
 * request) is written once above the store, in src/engine/append.c, and the turn limit it applies
 * in src/engine/turns.c (over store_rows.h, in the same transaction); a backend only runs a
 * write transaction and reads or writes single rows inside it.
 *
 * A backend may add a fast path (an optional entry, NULL when absent) that does two primitives'
 * work in one statement; the engine uses it when present, and tests/api/t_store_conformance.c
 * runs the same cases on every backend either way.
 */
#ifndef MN_STORE_APPEND_H
#define MN_STORE_APPEND_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* A backend's open write transaction (SQLite: the handle under its lock; PostgreSQL: the
 * borrowed connection). Valid only inside the body `write` runs. */
typedef struct mn_store_tx mn_store_tx;

/* What an append needs of its session row, which stays locked until commit. */
typedef struct mn_store_append_row {
    int64_t sid; /* the internal row id; 0: not read */
    int64_t last_seq, expires_at, max_turns;
    int64_t ttl_ms; /* > 0: the session expires ttl_ms after its last append */
    int titled;     /* the session has a title */
    char ns[129];   /* its namespace (1-128 bytes) */
    int held; /* sessions_lock with skip: another writer holds the row (sid 0: not locked) */
} mn_store_append_row;

/* What an append adds to its session row. */
typedef struct mn_store_appended {
    int64_t sid, last_seq; /* the session, and its new last seq */
    int64_t added, tokens, users; /* messages stored, their tokens, how many are user turns */
    int64_t now_ms;               /* updated_at */
    int64_t expires_at;           /* > 0: the session's new expiry; 0: leave it */
    const char *title;            /* the session's new title (NULL: leave it) … */
    int64_t title_seq;            /* … and the seq of the message it came from (0: none) */
} mn_store_appended;

/* State of a transaction after a failed primitive. */
enum mn_store_tx_state {
    MN_TX_OK,      /* usable: the failure wrote nothing */
    MN_TX_ABORTED, /* the database aborted it: only a savepoint rollback (or a run again) helps */
    MN_TX_DOOMED   /* the body must return its error now: the backend runs it again or fails */
};

enum mn_store_savepoint { MN_SP_SET, MN_SP_ROLLBACK, MN_SP_RELEASE };

typedef mn_status (*mn_store_tx_body)(mn_store_tx *tx, void *arg);

struct mn_store_append_ops {
    /* Runs body in one write transaction: begin, body, commit (rollback when body fails). The
     * backend may run body again from the start (PostgreSQL: deadlock, serialization failure,
     * a dropped connection), so a body starts over each time it is called. */
    mn_status (*write)(mn_store *st, mn_store_tx_body body, void *arg);
    mn_status (*savepoint)(mn_store_tx *tx, enum mn_store_savepoint op);
    enum mn_store_tx_state (*state)(mn_store_tx *tx);
    /* Optional: asks the backend to run the body again when it returns an error (NULL: the
     * backend never does; then the engine guards every request of a group by a savepoint). */
    void (*rerun)(mn_store_tx *tx);

    /* The session's row for an append, locked until commit (MN_NOTFOUND when missing). */
    mn_status (*session_lock)(mn_store_tx *tx, const char *id, mn_store_append_row *out);
    /* Inserts a session row; *sid gets its id. MN_CONFLICT when the id is taken. */
    mn_status (*session_create)(mn_store_tx *tx, const mn_session *s, int64_t *sid);
    /* Calls fn with the session's message stored under the idempotency key, if any (*found 1). */
    mn_status (*idem_find)(mn_store_tx *tx, int64_t sid, const char *session_id, const char *key,
                           mn_store_message_fn fn, void *user, int *found);
    /* Inserts a message row (m->seq and m->session_id set by the caller); sets m->id. */
    mn_status (*message_insert)(mn_store_tx *tx, int64_t sid, mn_message *m);
    /* Adds an append to the session row's counters. */
    mn_status (*session_appended)(mn_store_tx *tx, const mn_store_appended *c);

    /* Optional fast paths. message_insert and session_appended in one statement. */
    mn_status (*message_insert_appended)(mn_store_tx *tx, mn_message *m, const mn_store_appended *c);
    /* Locks the sessions of a group in a fixed order before any append runs (so that two
     * writers sharing sessions queue instead of deadlocking); rows[i] gets ids[i]'s row (sid 0
     * when missing or not a canonical id). skip: rows another writer holds are left alone
     * (rows[i].held 1, sid 0) instead of waited for. */
    mn_status (*sessions_lock)(mn_store_tx *tx, const char *const *ids, size_t n, int skip,
                               mn_store_append_row *rows);
};

#endif
