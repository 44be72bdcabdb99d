/*
 * session.c — changing a session's own fields: its title and metadata (mn_session_update, and
 * chat's usage counters), checked here so that every caller gets the same rules.
 */
#include "engine/engine.h"
#include "memory/message.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn__update_session(mn_db *db, const char *canon, const char *title, const char *metadata)
{
    mn_status rc;
    if ((rc = mn__check_text("title", title, MN_MAX_TITLE_BYTES, "")))
        return rc;
    struct mn_arena a = MN_ARENA_INIT;
    const char *meta = NULL;
    if (metadata && (rc = mn__check_json_object("metadata", metadata, &a, "", &meta))) {
        mn__arena_release(&a);
        return rc;
    }
    if (!(rc = mn__live_session(db, canon, NULL)))
        rc = db->store->ops->session_update(db->store, canon, title && *title ? title : NULL, meta,
                                            mn__clock_now_ms());
    if (!rc && meta)
        mn__memory_optin_note(db, meta);
    mn__arena_release(&a);
    return rc;
}
