/*
 * store_rows.h — the row primitives a change to stored messages is made of. The use cases (what
 * an edit or a delete changes beside the text: the title, the counters, the vector, the
 * summaries, the events; which messages a clear, its undo and the turn limit leave active; what
 * a fork copies; what goes with a deleted session) are written once above the store, in
 * src/engine/edit.c, turns.c, fork.c and erase.c; a backend only runs a write transaction and
 * reads or writes rows inside it. tests/unit/test_store_rows.c runs the same cases on every
 * backend.
 */
#ifndef MN_STORE_ROWS_H
#define MN_STORE_ROWS_H

#include <stddef.h>
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

/* What clearing and the turn limit need of a session's row, which stays locked until commit. */
typedef struct mn_store_turns_row {
    int64_t sid;          /* the session's internal row id */
    int64_t last_seq;     /* the seq of its newest message (0: none yet); read only */
    int64_t max_turns;    /* its turn limit (0: none) */
    int64_t cleared_seq;  /* the newest seq its last clear covered (0: no clear to undo) */
    int64_t cleared_from; /* the oldest seq that clear took out of the active history */
} mn_store_turns_row;

/* What a fork needs of its source session's row beside the record. */
typedef struct mn_store_session_row {
    int64_t sid;       /* the session's internal row id */
    int64_t title_seq; /* the seq of the message its title came from (0: none, or a title set) */
} mn_store_session_row;

/* What a removal of messages took away. */
typedef struct mn_store_removed {
    int64_t messages, tokens; /* how many, and their stored tokens */
    int64_t inactive;         /* how many of them were inactive */
} mn_store_removed;

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
    /* The row of session session_id, locked (MN_NOTFOUND naming it when missing). */
    mn_status (*turns_row)(mn_store_tx *tx, const char *session_id, mn_store_turns_row *out);
    /* Writes row's max_turns, cleared_seq and cleared_from to session row->sid and sets its
     * updated_at. */
    mn_status (*turns_write)(mn_store_tx *tx, const mn_store_turns_row *row, int64_t now_ms);
    /* The session's state goes (none until one is set again). */
    mn_status (*state_drop)(mn_store_tx *tx, int64_t sid);
    /* The seq of the session's n-th newest message (n >= 1) whose role is not tool, counting the
     * active ones only when active_only; 0 when it has fewer. */
    mn_status (*turn_start)(mn_store_tx *tx, int64_t sid, int64_t n, int active_only, int64_t *seq);
    /* The seq of the session's oldest active message; 0 when none is active. */
    mn_status (*first_active)(mn_store_tx *tx, int64_t sid, int64_t *seq);
    /* Sets the session's messages with a seq from from_seq to upto_seq active (active 1) or
     * inactive (0); *changed gets how many were not so before. The counters are left alone. */
    mn_status (*messages_activate)(mn_store_tx *tx, int64_t sid, int64_t from_seq, int64_t upto_seq, int active,
                                   int64_t *changed);
    /* Deletes the session's messages with a seq from from_seq to upto_seq (their keyword index
     * entries and vectors with them); *out gets what went. The counters are left alone. */
    mn_status (*messages_remove)(mn_store_tx *tx, int64_t sid, int64_t from_seq, int64_t upto_seq,
                                 mn_store_removed *out);
    /* The row of session session_id, locked (MN_NOTFOUND naming it when missing): fn gets the
     * record (callback-scoped), *out the row id and title_seq. */
    mn_status (*session_read)(mn_store_tx *tx, const char *session_id, mn_store_session_fn fn, void *user,
                              mn_store_session_row *out);
    /* Calls fn with the session's active messages with a seq above after_seq and up to upto_seq,
     * in seq order, at most limit of them (fn returns 1 to stop); each record is callback-scoped
     * and names session_id as its session. */
    mn_status (*messages_read)(mn_store_tx *tx, int64_t sid, const char *session_id, int64_t after_seq,
                               int64_t upto_seq, size_t limit, mn_store_message_fn fn, void *user);
    /* The session's title came from its message at seq: title_follow keeps the two in step. */
    mn_status (*title_from)(mn_store_tx *tx, int64_t sid, int64_t seq);
    /* The database-wide setting key goes (meta_get finds none until meta_set sets it again). */
    mn_status (*meta_drop)(mn_store_tx *tx, const char *key);
    /* Text left the database in this transaction: once it commits, the backend erases what it
     * keeps of freed text (SQLite: the freed pages and the WAL; docs/erasure.md). */
    void (*erased)(mn_store_tx *tx);
};

#endif
