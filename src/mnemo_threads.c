/*
 * mnemo_threads.c — the public functions for threads (resume, fork, gc, files, content
 * deduplication) and session state (mnemo.h). Checks, then the engine (threads.c, fork.c,
 * erase.c, state.c).
 */
#include "mnemo_int.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "memory/state.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

mn_status mn_session_resume(mn_db *db, const char *ns, const char *id, mn_session **out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_resume: out is NULL");
    *out = NULL;
    if (rc)
        return rc;
    if (id) {
        char canon[MN_UUID_LEN + 1];
        return (rc = mn__session_ref(db, NULL, id, canon)) ? rc : mn__live_session(db, canon, out);
    }
    if (ns && (rc = mn__check_namespace(ns)))
        return rc;
    return mn__resume_session(db, ns, out);
}

mn_status mn_session_fork(mn_db *db, const char *id, int64_t upto_seq, mn_session **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, id, canon)))
        return rc;
    if (upto_seq < 0)
        return mn__err(MN_INVALID, "upto: %lld is negative", (long long)upto_seq);
    return mn__fork_session(db, canon, upto_seq, out);
}

mn_status mn_gc(mn_db *db, int64_t *purged)
{
    int64_t n = 0;
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = mn__sessions_gc(db, &n);
    if (!rc) /* documents past their time to live: reads skip them already; their rows go here */
        rc = mn__document_purge_expired(db, NULL);
    if (purged)
        *purged = n;
    return rc;
}

mn_status mn_session_files(mn_db *db, const char *session_id, mn_strings **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_files: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)) || (rc = mn__live_session(db, canon, NULL)))
        return rc;
    return mn__list_session_files(db, canon, 0, out);
}

mn_status mn_file_should_include(mn_db *db, const char *session_id, const char *path, const char *content, size_t len,
                                 int *include)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!include || (!content && len))
        return mn__err(MN_MISUSE, "mn_file_should_include: NULL argument");
    *include = 0;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)))
        return rc;
    if (!path || !*path)
        return mn__err(MN_INVALID, "path: required");
    if ((rc = mn__check_text("path", path, 4096, "")))
        return rc == MN_TOOBIG ? mn__err(MN_INVALID, "%s", mn_errmsg()) : rc;
    if ((rc = mn__live_session(db, canon, NULL)))
        return rc;
    return mn__record_file(db, canon, path, content, len, include);
}

/* ---- state ----------------------------------------------------------------------------------- */

/* Runs one state change on a live session. */
static mn_status change_state(mn_db *db, const char *session_id, struct mn_state_change *c)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__session_ref(db, NULL, session_id, canon);
    if (rc || (rc = mn__live_session(db, canon, NULL)))
        return rc;
    return mn__change_state(db, canon, c);
}

/* Parses an optional JSON value argument. */
static mn_status json_arg(const char *field, const char *text, json_t **out)
{
    *out = NULL;
    if (!text)
        return MN_OK;
    mn_status rc = mn__check_text(field, text, MN_STATE_MAX_BYTES, "");
    return rc ? rc : mn__json_parse(text, field, out);
}

mn_status mn_state_get(mn_db *db, const char *session_id, int reveal, char **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_state_get: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)) || (rc = mn__live_session(db, canon, NULL)))
        return rc;
    return mn__get_state(db, canon, reveal, out);
}

mn_status mn_state_merge_params(mn_db *db, const char *session_id, const char *params_json)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    json_t *params = NULL;
    if (!params_json)
        return mn__err(MN_INVALID, "params: required");
    if ((rc = json_arg("params", params_json, &params)))
        return rc;
    if (!json_is_object(params)) {
        json_decref(params);
        return mn__err(MN_INVALID, "params: must be a JSON object");
    }
    struct mn_state_change c = {MN_STATE_MERGE, params, NULL};
    rc = change_state(db, session_id, &c);
    if (!rc) /* names and a count only: values may be secrets */
        mn__log(MN_LOG_DEBUG, "state: merged %zu params into session %s", json_object_size(params), session_id);
    json_decref(params);
    return rc;
}

mn_status mn_state_set_waiting(mn_db *db, const char *session_id, const char *param)
{
    mn_status rc = mn__check_db(db);
    if (rc || (param && (rc = mn__check_text("param", param, MN_MAX_NAME_BYTES, ""))))
        return rc == MN_TOOBIG ? mn__err(MN_INVALID, "%s", mn_errmsg()) : rc;
    if (param && !*param)
        return mn__err(MN_INVALID, "param: must not be empty");
    struct mn_state_change c = {MN_STATE_WAIT, NULL, param};
    return change_state(db, session_id, &c);
}

mn_status mn_state_set_result(mn_db *db, const char *session_id, const char *intent_id, const char *result_json)
{
    mn_status rc = mn__check_db(db);
    if (rc || (intent_id && (rc = mn__check_text("intent_id", intent_id, MN_MAX_NAME_BYTES, ""))))
        return rc == MN_TOOBIG ? mn__err(MN_INVALID, "%s", mn_errmsg()) : rc;
    json_t *result = NULL;
    if ((rc = json_arg("result", result_json, &result)))
        return rc;
    struct mn_state_change c = {MN_STATE_RESULT, result, intent_id};
    rc = change_state(db, session_id, &c);
    json_decref(result);
    return rc;
}

mn_status mn_state_set_plan(mn_db *db, const char *session_id, const char *plan_json)
{
    mn_status rc = mn__check_db(db);
    json_t *plan = NULL;
    if (rc || (rc = json_arg("plan", plan_json, &plan)))
        return rc;
    struct mn_state_change c = {MN_STATE_PLAN, plan, NULL};
    rc = change_state(db, session_id, &c);
    json_decref(plan);
    return rc;
}

mn_status mn_state_clear(mn_db *db, const char *session_id)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    struct mn_state_change c = {MN_STATE_CLEAR, NULL, NULL};
    return change_state(db, session_id, &c);
}
