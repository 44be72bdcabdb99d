/*
 * mnemo_handover.c — what one tool hands to the next about a thread (seed 002): the newest files
 * with a limit (GetRecentFiles(maxFiles)) and the thread summary (BuildContextSummary: id, start,
 * tool, turns, tools used, files) as a record, JSON and Markdown. Reads only; the record is made
 * by engine/threads.c.
 */
#include "mnemo_int.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_session_files_n(mn_db *db, const char *session_id, size_t max_files, mn_strings **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_files_n: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)) || (rc = mn__live_session(db, canon, NULL)))
        return rc;
    return mn__list_session_files(db, canon, max_files, out);
}

mn_status mn_thread_summary_get(mn_db *db, const char *session_id, size_t max_files, mn_thread_summary **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_thread_summary_get: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)))
        return rc;
    return mn__get_thread_summary(db, canon, max_files, out);
}

void mn_thread_summary_free(mn_thread_summary *p) { mn__free_thread_summary(p); }

static mn_status add_string_array(struct mn_buf *b, const char *key, const mn_strings *l)
{
    mn_status rc = mn__buf_addf(b, ",\"%s\":[", key);
    for (size_t i = 0; !rc && i < l->count; i++) {
        if (i)
            rc = mn__buf_addc(b, ',');
        if (!rc)
            rc = mn__buf_add_json_str(b, l->items[i]);
    }
    return rc ? rc : mn__buf_addc(b, ']');
}

/* A JSON string, or null for NULL. */
static mn_status add_member(struct mn_buf *b, const char *key, const char *value)
{
    mn_status rc = mn__buf_addf(b, ",\"%s\":", key);
    if (!rc)
        rc = value ? mn__buf_add_json_str(b, value) : mn__buf_adds(b, "null");
    return rc;
}

mn_status mn_thread_summary_to_json(const mn_thread_summary *s, char **out)
{
    if (!s || !out)
        return mn__err(MN_MISUSE, "mn_thread_summary_to_json: NULL argument");
    *out = NULL;
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn__buf_adds(&b, "{\"thread_id\":");
    if (!rc)
        rc = mn__buf_add_json_str(&b, s->thread_id);
    if (!rc)
        rc = add_member(&b, "namespace", s->ns);
    if (!rc)
        rc = add_member(&b, "title", s->title);
    if (!rc)
        rc = add_member(&b, "tool", s->tool_name);
    if (!rc)
        rc = mn__buf_addf(&b, ",\"started\":%lld,\"updated_at\":%lld", (long long)s->started, (long long)s->updated_at);
    if (!rc)
        rc = s->expires_at ? mn__buf_addf(&b, ",\"expires_at\":%lld", (long long)s->expires_at)
                           : mn__buf_adds(&b, ",\"expires_at\":null");
    if (!rc)
        rc = mn__buf_addf(&b, ",\"turns\":%lld,\"messages\":%lld,\"tokens\":%lld", (long long)s->turns,
                         (long long)s->messages, (long long)s->tokens);
    if (!rc)
        rc = add_string_array(&b, "tools_used", &s->tools_used);
    if (!rc)
        rc = add_string_array(&b, "files", &s->files);
    if (!rc)
        rc = add_member(&b, "text", s->text);
    if (!rc)
        rc = mn__buf_addc(&b, '}');
    if (rc) {
        mn__buf_release(&b);
        return rc;
    }
    *out = mn__buf_detach(&b, NULL);
    return *out ? MN_OK : mn__nomem();
}
