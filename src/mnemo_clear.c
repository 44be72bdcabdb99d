/*
 * mnemo_clear.c — seed 000's /clear and seed 003's clear() and prune(max_messages) as library
 * operations (mnemo.h "Clearing and turn limits"): the active history leaves every context but
 * stays stored and searchable, reversibly; a session's turn limit changes after creation. The
 * use cases are src/engine/turns.c.
 */
#include "mnemo_int.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_session_clear(mn_db *db, const char *session_id, unsigned flags, int64_t *count)
{
    if (count)
        *count = 0;
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    if (flags & ~(unsigned)(MN_CLEAR_UNDO | MN_CLEAR_STATE))
        return mn__err(MN_INVALID, "flags: 0x%x has bits other than MN_CLEAR_UNDO and MN_CLEAR_STATE", flags);
    if ((flags & MN_CLEAR_UNDO) && (flags & MN_CLEAR_STATE))
        return mn__err(MN_INVALID, "flags: MN_CLEAR_UNDO cannot bring back a state that was reset (MN_CLEAR_STATE)");
    if ((rc = mn__live_session(db, id, NULL)))
        return rc;
    int64_t changed = 0;
    rc = mn__clear_session(db, id, (flags & MN_CLEAR_UNDO) != 0, (flags & MN_CLEAR_STATE) != 0, &changed);
    if (!rc && count)
        *count = changed;
    return rc;
}

mn_status mn_session_set_max_turns(mn_db *db, const char *session_id, int64_t max_turns)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    if (max_turns < 0 || max_turns > 1000000)
        return mn__err(MN_INVALID, "max_turns: %lld is not from 0 (no limit) to 1000000", (long long)max_turns);
    if ((rc = mn__live_session(db, id, NULL)))
        return rc;
    return mn__session_set_turns(db, id, max_turns);
}
