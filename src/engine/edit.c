/*
 * edit.c — the message edit and delete use cases, written once for every backend, over the
 * store's row primitives (store/store_rows.h).
 *
 * Edit: the new text passes the
 * append rules (mn__message_prepare with the message's own role, tool calls and names, so its
 * token count is what an append of it would store); then one transaction over the store's row
 * primitives (store/store_rows.h) changes the row and keeps in step, in this order: the title
 * taken from it, the text and the keyword index, the session's tokens, the vector (dropped and
 * queued again), the summaries that folded the old text (with a `summary_dropped` event, as a
 * delete drops them), and a `message_edited` event. After the commit the old text's offloaded
 * output and the saved vector index go (erase.c).
 *
 * Delete: in one transaction, the title taken from the message goes (the next user message gives
 * one), the row goes (its keyword entry and vector with it), the session's counters lose it, and
 * the summaries that folded it go with a `summary_dropped` event; then the same erasure.
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "memory/message.h"
#include "store/records.h"
#include "store/store_rows.h"
#include "store/store_search.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

struct found {
    const char *session_id;
    mn_message *m; /* a copy of the message when it is in that session */
    int oom;
};

static int found_one(void *user, const mn_message *m, const char *ns)
{
    (void)ns;
    struct found *f = user;
    if (strcmp(m->session_id, f->session_id) == 0 && !f->m && !(f->m = mn__records_message_copy(m)))
        f->oom = 1;
    return 1;
}

/* The stored message `message_id` of session `canon` (caller frees *out with mn_message_free). */
static mn_status message_read(mn_db *db, const char *canon, int64_t message_id, mn_message **out)
{
    struct found f = {canon, NULL, 0};
    mn_status rc = db->store->ops->search->messages_get(db->store, &message_id, 1, found_one, &f);
    if (!rc && f.oom)
        rc = mn__nomem();
    if (!rc && !f.m)
        rc = mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id, canon);
    if (rc) {
        mn__records_message_free(f.m);
        return rc;
    }
    *out = f.m;
    return MN_OK;
}

/* The edit as an append of the same message with the new content would store it. */
static mn_status prepare(mn_db *db, const mn_message *cur, const char *content, const char *metadata, int64_t now,
                         struct mn_arena *a, mn_message *row)
{
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.role = cur->role;
    in.content = content;
    in.tool_calls = cur->tool_calls;
    in.tool_call_id = cur->tool_call_id;
    in.name = cur->name;
    in.tool_name = cur->tool_name;
    in.model = cur->model;
    in.files = cur->files;
    in.metadata = metadata ? metadata : cur->metadata;
    in.pinned = cur->pinned;
    return mn__message_prepare(&in, db->max_message_bytes, db->tk, now, a, "", row);
}

struct edit {
    const struct mn_store_row_ops *o;
    const char *session_id;
    int64_t message_id;
    const char *content, *metadata; /* metadata NULL: unchanged */
    int64_t tokens;
    const char *title; /* the session's, when it came from this message ("": none; NULL: leave it) */
    int64_t now_ms;
    int64_t seq; /* out: the message's seq */
};

/* The summaries that folded the message at row->seq hold its old text: they go, and an event
 * says why (reason: message_edited or message_deleted). */
static mn_status drop_summaries(const struct mn_store_row_ops *o, mn_store_tx *tx, const mn_store_message_row *row,
                                int64_t message_id, const char *reason, int64_t now_ms)
{
    int64_t dropped = 0;
    char data[256];
    mn_status rc = o->summaries_drop(tx, row->sid, row->seq, &dropped);
    if (rc || !dropped)
        return rc;
    snprintf(data, sizeof data, "{\"reason\":\"%s\",\"message_id\":%lld,\"seq\":%lld,\"summaries\":%lld}", reason,
             (long long)message_id, (long long)row->seq, (long long)dropped);
    return o->event_add(tx, row->sid, "summary_dropped", data, now_ms);
}

static mn_status edit_body(mn_store_tx *tx, void *arg)
{
    struct edit *e = arg;
    const struct mn_store_row_ops *o = e->o;
    mn_store_message_row row;
    char data[256];
    mn_status rc = o->message_row(tx, e->session_id, e->message_id, &row);
    if (!rc && e->title)
        rc = o->title_follow(tx, row.sid, row.seq, e->title);
    if (!rc)
        rc = o->message_rewrite(tx, e->message_id, e->content, e->metadata, e->tokens);
    if (!rc)
        rc = o->session_counts(tx, row.sid, 0, e->tokens - row.tokens, 0, 0, e->now_ms);
    if (!rc)
        rc = o->vector_stale(tx, e->message_id);
    if (!rc)
        rc = drop_summaries(o, tx, &row, e->message_id, "message_edited", e->now_ms);
    if (!rc) {
        snprintf(data, sizeof data, "{\"message_id\":%lld,\"seq\":%lld,\"tokens_before\":%lld,\"tokens_after\":%lld}",
                 (long long)e->message_id, (long long)row.seq, (long long)row.tokens, (long long)e->tokens);
        rc = o->event_add(tx, row.sid, "message_edited", data, e->now_ms);
    }
    if (!rc)
        o->erased(tx); /* the old text leaves the keyword index and the logs */
    e->seq = rc ? 0 : row.seq;
    return rc;
}

mn_status mn__edit_message(mn_db *db, const char *canon, int64_t message_id, const char *content,
                           const char *metadata, mn_message **out)
{
    mn_message *cur = NULL;
    mn_status rc = message_read(db, canon, message_id, &cur);
    if (rc)
        return rc;
    struct mn_arena a = MN_ARENA_INIT;
    mn_message row;
    int64_t now = mn__clock_now_ms();
    rc = prepare(db, cur, content, metadata, now, &a, &row);
    const char *title = NULL;
    if (!rc && row.role == MN_ROLE_USER && !(title = mn__message_title(&a, row.content)))
        rc = mn__nomem();
    struct edit e = {db->store->ops->rows, canon, message_id, row.content, metadata ? row.metadata : NULL,
                     row.tokens, title, now, 0};
    if (!rc)
        rc = e.o->write(db->store, edit_body, &e);
    mn__arena_release(&a);
    mn__records_message_free(cur);
    if (rc)
        return rc;
    mn__erased_message(db, canon, e.seq);
    return out ? message_read(db, canon, message_id, out) : MN_OK;
}

struct removal {
    const struct mn_store_row_ops *o;
    const char *session_id;
    int64_t message_id, now_ms;
    int64_t seq; /* out: the message's seq */
};

static mn_status delete_body(mn_store_tx *tx, void *arg)
{
    struct removal *d = arg;
    const struct mn_store_row_ops *o = d->o;
    mn_store_message_row row;
    mn_status rc = o->message_row(tx, d->session_id, d->message_id, &row);
    if (!rc)
        rc = o->title_follow(tx, row.sid, row.seq, "");
    if (!rc)
        rc = o->message_remove(tx, d->message_id);
    if (!rc)
        rc = o->session_counts(tx, row.sid, -1, -row.tokens, -(int64_t)row.user, -(int64_t)!row.active, d->now_ms);
    if (!rc)
        rc = drop_summaries(o, tx, &row, d->message_id, "message_deleted", d->now_ms);
    if (!rc)
        o->erased(tx);
    d->seq = rc ? 0 : row.seq;
    return rc;
}

mn_status mn__delete_message(mn_db *db, const char *canon, int64_t message_id)
{
    struct removal d = {db->store->ops->rows, canon, message_id, mn__clock_now_ms(), 0};
    mn_status rc = d.o->write(db->store, delete_body, &d);
    if (!rc)
        mn__erased_message(db, canon, d.seq); /* its offloaded output and the saved vector index */
    return rc;
}
