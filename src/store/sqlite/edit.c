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
    mn_status rc = mn__sqlite_run(s, SQL_SESSION_UPDATE, "session update",
                                  ARGS(ARG_TEXT(id), ARG_TEXT(title), ARG_TEXT(metadata), ARG_INT(now_ms)));
    if (!rc && sqlite3_changes(s->db) == 0)
        return mn__err(MN_NOTFOUND, "session %s not found", id);
    return rc;
}

mn_status mn__sqlite_op_session_update(mn_store *st, const char *id, const char *title, const char *metadata,
                                      int64_t now_ms)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, update_locked(s, id, title, metadata, now_ms));
}
