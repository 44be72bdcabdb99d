/*
 * edit.c — the SQLite backend's session update: a session's title and metadata (store.h
 * session_update; the public function is in src/mnemo_service.c). Message edits and deletes are
 * src/engine/edit.c over rows.c.
 */
#include <sqlite3.h>
#include <stdint.h>

#include "store/sqlite/sqlite_int.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

/* A title given here is the user's: it comes from no message (title_seq 0). */
static const char SQL_SESSION_UPDATE[] =
    "UPDATE sessions SET title = coalesce(?2, title), title_seq = CASE WHEN ?2 IS NULL THEN title_seq ELSE 0 END,"
    " metadata = coalesce(?3, metadata), updated_at = ?4 WHERE id = ?1";

static mn_status update_locked(struct sqlite_store *s, const char *id, const char *title, const char *metadata,
                               int64_t now_ms)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_SESSION_UPDATE, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, id);
    mn__sqlite_bind_text(st, 2, title);
    mn__sqlite_bind_text(st, 3, metadata);
    sqlite3_bind_int64(st, 4, now_ms);
    if ((rc = mn__sqlite_step_done(s, st, "session update")))
        return rc;
    if (sqlite3_changes(s->db) == 0)
        return mn__err(MN_NOTFOUND, "session %s not found", id);
    return MN_OK;
}

mn_status mn__sqlite_op_session_update(mn_store *st, const char *id, const char *title, const char *metadata,
                                      int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, update_locked(s, id, title, metadata, now_ms));
}
