/*
 * mnemo_edit.c — mn_message_edit: a message's content (and metadata) changed in place. The
 * arguments are checked here; the use case is src/engine/edit.c.
 */
#include "mnemo_int.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_message_edit(mn_db *db, const char *session_id, int64_t message_id, const char *content,
                          const char *metadata, mn_message **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)))
        return rc;
    if (message_id <= 0)
        return mn__err(MN_INVALID, "message_id: %lld is not positive", (long long)message_id);
    if (!content)
        return mn__err(MN_INVALID, "content: required");
    if ((rc = mn__live_session(db, canon, NULL)))
        return rc;
    return mn__edit_message(db, canon, message_id, content, metadata, out);
}
