/*
 * store_rows.h — the row primitives a change to stored messages is made of. The use cases (what
 * an edit or a delete changes beside the text: the title, the counters, the vector, the
 * summaries, the events) are written once above the store, in src/engine/edit.c; a backend only runs a write
 * transaction and reads or writes single rows inside it. tests/unit/test_store_rows.c runs the
 * same cases on every backend.
 */
#ifndef MN_STORE_ROWS_H
#define MN_STORE_ROWS_H

#include <stdint.h>

#include "store/store.h"
#include "store/store_append.h"

/* What a change needs of the message's row, which stays locked until commit. */
typedef struct mn_store_message_row {
    int64_t sid;    /* the session's internal row id */
    int64_t seq;    /* the message's position in its session */
    int64_t tokens; /* its stored token count */
    int user;       /* a user message (the session's turn_count counts them) */
    int active;     /* in the active history (0: past the turn limit or cleared) */
} mn_store_message_row;

struct mn_store_row_ops {
    /* Runs body in one write transaction: begin, body, commit (rollback when body fails). The
     * backend may run body again from the start, so a body starts over each time it is called. */
    mn_status (*write)(mn_store *st, mn_store_tx_body body, void *arg);
    /* The row of message_id in session session_id, locked. MN_NOTFOUND names the session when it
     * is missing, else the message. */
    mn_status (*message_row)(mn_store_tx *tx, const char *session_id, int64_t message_id, mn_store_message_row *out);
    /* Writes the message's content, metadata (NULL: unchanged) and tokens, and keeps the keyword
     * index in step with the new text. */
    mn_status (*message_rewrite)(mn_store_tx *tx, int64_t message_id, const char *content, const char *metadata,
                                 int64_t tokens);
    /* Deletes the message's row; its keyword index entry and vector go with it. */
    mn_status (*message_remove)(mn_store_tx *tx, int64_t message_id);
    /* When the session's title came from the message at seq: it becomes title, or goes ("": the
     * session has none until a message gives it one). */
    mn_status (*title_follow)(mn_store_tx *tx, int64_t sid, int64_t seq, const char *title);
    /* Adds to the session's counters (messages, tokens, user turns, inactive messages; the last
     * two never below 0) and sets its updated_at. */
    mn_status (*session_counts)(mn_store_tx *tx, int64_t sid, int64_t messages, int64_t tokens, int64_t users,
                                int64_t inactive, int64_t now_ms);
    /* The message's vector no longer fits its text: dropped (every index hears of it), and the
     * message queued again for embedding while the queue is on. */
    mn_status (*vector_stale)(mn_store_tx *tx, int64_t message_id);
    /* Deletes the session's summaries that folded the message at seq or later; *dropped gets
     * how many. */
    mn_status (*summaries_drop)(mn_store_tx *tx, int64_t sid, int64_t seq, int64_t *dropped);
    /* Records an event of the session: kind, data a JSON object's text. */
    mn_status (*event_add)(mn_store_tx *tx, int64_t sid, const char *kind, const char *data, int64_t now_ms);
    /* Text left the database in this transaction: once it commits, the backend erases what it
     * keeps of freed text (SQLite: the freed pages and the WAL; docs/erasure.md). */
    void (*erased)(mn_store_tx *tx);
};

#endif
