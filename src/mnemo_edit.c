/*
 * mnemo_edit.c — mn_message_edit: a message's content (and metadata) changed in place. The new
 * text passes the append rules (mn_message_prepare, with the message's own role, tool calls and
 * names, so its token count is what an append of it would store); the store changes the row and
 * keeps the index, vectors, summaries, title and counters in step (store.h message_edit).
 */
#include <string.h>

#include "mnemo_int.h"
#include "memory/message.h"
#include "store/records.h"
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
    if (strcmp(m->session_id, f->session_id) == 0 && !f->m && !(f->m = mn_records_message_copy(m)))
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
        mn_records_message_free(f.m);
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
    return mn_message_prepare(&in, db->max_message_bytes, db->tk, now, a, "", row);
}

mn_status mn_message_edit(mn_db *db, const char *session_id, int64_t message_id, const char *content,
                          const char *metadata, mn_message **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (rc || (rc = mn__check_id(session_id, canon)))
        return rc;
    if (message_id <= 0)
        return mn__err(MN_INVALID, "message_id: %lld is not positive", (long long)message_id);
    if (!content)
        return mn__err(MN_INVALID, "content: required");
    mn_message *cur = NULL;
    if ((rc = mn__live_session(db, canon, NULL)) || (rc = message_read(db, canon, message_id, &cur)))
        return rc;
    struct mn_arena a = MN_ARENA_INIT;
    mn_message row;
    int64_t now = mn_clock_now_ms(), seq = 0;
    rc = prepare(db, cur, content, metadata, now, &a, &row);
    const char *title = NULL;
    if (!rc && row.role == MN_ROLE_USER && !(title = mn_message_title(&a, row.content)))
        rc = mn__nomem();
    if (!rc) {
        mn_store_edit e = {message_id, row.content, metadata ? row.metadata : NULL, row.tokens, title, now};
        rc = db->store->ops->message_edit(db->store, canon, &e, &seq);
    }
    mn_arena_release(&a);
    mn_records_message_free(cur);
    if (rc)
        return rc;
    /* the old text's offloaded output and the saved vector index go (mnemo_erase.c) */
    mn__erased_message(db, canon, seq);
    return out ? message_read(db, canon, message_id, out) : MN_OK;
}
