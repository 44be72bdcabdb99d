/*
 * handle.c — the checks every public function starts with: the handle, a session id, and a
 * session that exists and has not expired (engine.h); and what a handle tells about its store.
 */
#include <string.h>

#include "engine/engine.h"
#include "memory/jsonl.h"
#include "store/records.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/uuid.h"
#include "util/banned.h"

mn_status mn__check_db(const mn_db *db)
{
    mn__err_clear();
    if (!db || db->magic != DB_MAGIC)
        return mn__err(MN_MISUSE, "invalid mn_db handle");
    return MN_OK;
}

mn_status mn__check_id(const char *id, char canon[MN_UUID_LEN + 1])
{
    if (!mn__uuid_parse(id, canon))
        return mn__err(MN_INVALID, "session id: '%.64s' is not a UUID", id ? id : "(null)");
    return MN_OK;
}

mn_status mn__session_ref(mn_db *db, const char *ns, const char *ref, char canon[MN_UUID_LEN + 1])
{
    if (ref && mn__uuid_parse(ref, canon))
        return MN_OK;
    mn_status rc;
    if (!ref || !*ref)
        return mn__err(MN_INVALID, "session id: empty (a UUID or a session key)");
    if ((rc = mn__check_session_key(ref)))
        return rc;
    mn_session *s = NULL;
    if ((rc = db->store->ops->session_by_key(db->store, ns ? ns : "default", ref, &s)))
        return rc;
    memcpy(canon, s->id, MN_UUID_LEN + 1);
    mn__records_session_free(s);
    return MN_OK;
}

mn_status mn__session_unexpired(const char *canon_id, int64_t expires_at)
{
    if (expires_at <= 0 || expires_at > mn__clock_now_ms())
        return MN_OK;
    char when[40];
    mn__clock_iso(expires_at, when, sizeof when);
    return mn__err(MN_EXPIRED, "session %s expired at %s (idle longer than its TTL)", canon_id, when);
}

mn_status mn__live_session(mn_db *db, const char *canon_id, mn_session **out)
{
    mn_session *s = NULL;
    mn_status rc = db->store->ops->session_get(db->store, canon_id, &s);
    if (rc)
        return rc;
    if ((rc = mn__session_unexpired(canon_id, s->expires_at))) {
        mn__records_session_free(s);
        return rc;
    }
    if (out)
        *out = s;
    else
        mn__records_session_free(s);
    return MN_OK;
}

const char *mn__get_db_label(const mn_db *db) { return db->store->label; }

int mn__get_append_writers(const mn_db *db) { return db->store->ops->append_writers; }
int mn__get_reads_local(const mn_db *db) { return db->store->ops->reads_local; }

/* ---- read replicas (the store's; none on SQLite) ---- */

void mn__replica_reads(mn_db *db, int on)
{
    if (db->store->ops->replica)
        db->store->ops->replica->reads(db->store, on);
}

void mn__get_position(mn_db *db, char out[MN_POSITION_MAX])
{
    out[0] = '\0';
    if (db->store->ops->replica)
        db->store->ops->replica->position(db->store, out);
}

mn_status mn__set_read_after(mn_db *db, const char *position)
{
    if (position && strlen(position) >= MN_POSITION_MAX)
        return mn__err(MN_INVALID, "read-after position: longer than %d bytes", MN_POSITION_MAX - 1);
    if (db->store->ops->replica)
        return db->store->ops->replica->read_after(db->store, position);
    return MN_OK; /* one file: every read sees every commit */
}

void mn__get_replica_stats(mn_db *db, mn_replica_stats *out)
{
    mn_store_replica_stats s = {0};
    if (db->store->ops->replica)
        db->store->ops->replica->stats(db->store, &s);
    *out = (mn_replica_stats){s.replicas, s.replicas_up, s.on_replica, s.on_primary, s.waited, s.lagging, s.down};
}
