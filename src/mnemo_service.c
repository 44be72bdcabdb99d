/*
 * mnemo_service.c — the public functions a long-running service needs beyond the CLI's (mnemo.h):
 * deleting one message (the use case is engine/edit.c), updating a session's title and metadata
 * (engine/session.c), vacuuming the database (engine/admin.c). Checks here, then the engine.
 */
#include "mnemo_int.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_message_delete(mn_db *db, const char *session_id, int64_t message_id)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    if (message_id <= 0)
        return mn__err(MN_INVALID, "message_id: %lld is not positive", (long long)message_id);
    if ((rc = mn__live_session(db, id, NULL)))
        return rc;
    return mn__delete_message(db, id, message_id);
}

mn_status mn_session_update(mn_db *db, const char *id, const char *title, const char *metadata)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__session_ref(db, NULL, id, canon)))
        return rc;
    return mn__update_session(db, canon, title, metadata);
}

mn_status mn_vacuum(mn_db *db)
{
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__vacuum_db(db);
}
