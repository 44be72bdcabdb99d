/*
 * session.c — sessions apart from their deletes, forks and clears: creation with its rules (ids,
 * keys, the thread defaults of the configuration), reads (in a namespace, a page of the list, the
 * history), a session's title and metadata (mn_session_update, and chat's usage counters), and
 * the frees of the records the store hands out. Checked here so that every caller gets the same
 * rules.
 */
#include <string.h>

#include "engine/engine.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "store/records.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

/* A limit from the options: 0 takes the thread default (for threads) or none; -1 none. */
static mn_status thread_limit(const char *field, int64_t value, int64_t min, int64_t max, int thread, int64_t dflt,
                              int64_t *out)
{
    if (value < -1 || (value > 0 && (value < min || value > max)))
        return mn__err(MN_INVALID, "%s: %lld is not -1, 0 or from %lld to %lld", field, (long long)value,
                       (long long)min, (long long)max);
    *out = value == 0 ? (thread ? dflt : 0) : value < 0 ? 0 : value;
    return MN_OK;
}

/* Fills a new session row from o; strings stay borrowed from o or live in `a`. */
static mn_status session_row(const mn_db *db, const mn_session_opts *o, struct mn_arena *a, char id[MN_UUID_LEN + 1],
                             mn_session *s)
{
    memset(s, 0, sizeof *s);
    int64_t now = mn__clock_now_ms();
    mn_status rc = o->id ? mn__check_id(o->id, id) : mn__uuid_v7(now, id);
    if (rc)
        return rc;
    s->id = id;
    s->ns = o->ns ? o->ns : "default";
    if ((rc = mn__check_namespace(s->ns)) || (rc = mn__check_text("title", o->title, MN_MAX_TITLE_BYTES, "")) ||
        (rc = mn__check_text("system_prompt", o->system_prompt, MN_MAX_SYSTEM_PROMPT_BYTES, "")) ||
        (rc = mn__check_text("tool_name", o->tool_name, MN_MAX_NAME_BYTES, "")))
        return rc;
    if (o->key && (rc = mn__check_session_key(o->key)))
        return rc;
    s->key = o->key;
    s->metadata = "{}";
    if (o->metadata && (rc = mn__check_json_object("metadata", o->metadata, a, "", &s->metadata)))
        return rc;
    s->title = o->title && *o->title ? o->title : NULL;
    s->system_prompt = o->system_prompt;
    s->tool_name = o->tool_name;
    s->created_at = s->updated_at = now;
    int thread = o->tool_name != NULL;
    if ((rc = thread_limit("ttl_ms", o->ttl_ms, 1000, 366LL * 86400000, thread,
                           db->settings.threads_ttl_seconds * 1000, &s->ttl_ms)) ||
        (rc = thread_limit("max_turns", o->max_turns, 1, 1000000, thread, db->settings.threads_max_turns,
                           &s->max_turns)))
        return rc;
    s->expires_at = s->ttl_ms ? now + s->ttl_ms : 0;
    return MN_OK;
}

/* The insert of s failed with MN_CONFLICT: which was taken, the key or else the id. An id taken
 * in another namespace looks missing (MN_NOTFOUND), not taken. */
static mn_status conflict(mn_db *db, const mn_session *s, int id_given)
{
    mn_status rc = MN_CONFLICT;
    if (s->key) {
        mn_session *keyed = NULL;
        if (db->store->ops->session_by_key(db->store, s->ns, s->key, &keyed) == MN_OK)
            rc = mn__err(MN_CONFLICT, "key: '%.200s' already names session %s in namespace %s", s->key, keyed->id,
                         s->ns);
        else
            rc = mn__err(MN_CONFLICT, "session %s already exists", s->id);
        mn__records_session_free(keyed);
    }
    if (id_given) {
        mn_session *other = NULL;
        if (db->store->ops->session_get(db->store, s->id, &other) == MN_OK && strcmp(other->ns, s->ns) != 0)
            rc = mn__err(MN_NOTFOUND, "session %s not found", s->id);
        mn__records_session_free(other);
    }
    return rc;
}

mn_status mn__create_session(mn_db *db, const mn_session_opts *opts, mn_session **out)
{
    struct mn_arena a = MN_ARENA_INIT;
    char id[MN_UUID_LEN + 1];
    mn_session s, *copy = NULL;
    mn_status rc = session_row(db, opts, &a, id, &s);
    /* *out is made before the insert: once the session is stored, the call cannot fail (a retry
     * would find the id taken) */
    if (!rc && out && !(copy = mn__records_session_copy(&s)))
        rc = mn__nomem();
    if (!rc)
        rc = db->store->ops->session_insert(db->store, &s);
    if (rc == MN_CONFLICT)
        rc = conflict(db, &s, opts->id != NULL);
    if (!rc)
        mn__memory_optin_note(db, s.metadata);
    if (!rc && out) {
        *out = copy;
        copy = NULL;
    }
    mn__records_session_free(copy);
    mn__arena_release(&a);
    return rc;
}

mn_status mn__get_session_in(mn_db *db, const char *ns, const char *canon, mn_session **out)
{
    mn_session *s = NULL;
    mn_status rc = db->store->ops->session_get(db->store, canon, &s);
    if (rc)
        return rc;
    int other = ns && strcmp(s->ns, ns) != 0;
    mn__records_session_free(s);
    if (other) /* checked before expiry: an expired session of another namespace says nothing either */
        return mn__err(MN_NOTFOUND, "session %s not found", canon);
    return mn__live_session(db, canon, out);
}

mn_status mn__list_sessions(mn_db *db, const char *ns, size_t limit, size_t offset, mn_sessions **out)
{
    return db->store->ops->session_list(db->store, ns, limit, offset, out);
}

mn_status mn__read_history(mn_db *db, const char *canon, const mn_history_opts *opts, mn_messages **out)
{
    int64_t expires_at = 0; /* read with the messages: one read, not two */
    mn_status rc = db->store->ops->history(db->store, canon, opts, &expires_at, out);
    if (!rc && (rc = mn__session_unexpired(canon, expires_at))) {
        mn__free_messages(*out);
        *out = NULL;
    }
    return rc;
}

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

void mn__free_session(mn_session *s) { mn__records_session_free(s); }

void mn__free_sessions(mn_sessions *list) { mn__records_session_list_free(list); }

void mn__free_message(mn_message *m) { mn__records_message_free(m); }

void mn__free_messages(mn_messages *list) { mn__records_message_list_free(list); }
