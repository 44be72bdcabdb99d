/*
 * mnemo_governance.c — the public functions of context governance (mnemo.h "Context
 * governance"): budget split, folds, pins, summaries, compaction, events. Checks here, then the
 * engine (engine/context.c: the bridge to the strategies of src/context; engine/governance.c).
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "context/context.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

mn_status mn_budget_split(int64_t model_window, mn_budget *out)
{
    mn__err_clear();
    if (!out)
        return mn__err(MN_MISUSE, "mn_budget_split: out is NULL");
    memset(out, 0, sizeof *out);
    if (model_window < 1 || model_window > 100000000)
        return mn__err(MN_INVALID, "model_window: %lld is not from 1 to 100000000", (long long)model_window);
    mn__split_budget(model_window, out);
    return MN_OK;
}

mn_status mn_fold_queue_set(mn_db *db, mn_fold_queue_fn fn, void *user)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    db->fold_queue = fn;
    db->fold_queue_user = fn ? user : NULL;
    return MN_OK;
}

mn_status mn_fold_run(mn_db *db, const mn_fold_job *job, char **outcome_json)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (outcome_json)
        *outcome_json = NULL;
    if (rc)
        return rc;
    if (!job)
        return mn__err(MN_MISUSE, "mn_fold_run: job is NULL");
    if ((rc = mn__session_ref(db, NULL, job->session_id, id)))
        return rc;
    const char *strategy = job->strategy ? job->strategy : db->settings.memory_strategy;
    if (!mn__strategy_known(strategy))
        return mn__err(MN_INVALID, "strategy: '%s' is not one of: window, summary, chunked, hybrid", strategy);
    if (job->max_tokens < 1 || job->max_tokens > 100000000)
        return mn__err(MN_INVALID, "max_tokens: %lld is not from 1 to 100000000", (long long)job->max_tokens);
    if (job->model_window < 0 || job->model_window > 100000000)
        return mn__err(MN_INVALID, "model_window: %lld is not from 0 to 100000000", (long long)job->model_window);
    mn_session *s = NULL;
    if ((rc = mn__live_session(db, id, &s)))
        return rc;
    struct mn_built b;
    memset(&b, 0, sizeof b);
    rc = mn__assemble_context(db, s, strategy, job->max_tokens, job->model_window, MN_CONTEXT_FOLD_SYNC, 0, &b);
    json_t *fold = b.extra ? json_object_get(b.extra, "fold") : NULL;
    if (!rc && outcome_json && !(*outcome_json = fold ? mn__json_dump(fold) : strdup("{\"outcome\":\"none\"}")))
        rc = mn__nomem();
    mn__built_release(&b);
    mn__free_session(s);
    return rc;
}

/* Both pins: session_id NULL pins by id alone (mn_message_pin). */
static mn_status message_pin(mn_db *db, const char *session_id, int64_t message_id, int pinned)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (session_id && ((rc = mn__session_ref(db, NULL, session_id, id)) || (rc = mn__live_session(db, id, NULL)))))
        return rc;
    if (message_id < 1)
        return mn__err(MN_INVALID, "message id: %lld is not a message id", (long long)message_id);
    if (pinned != 0 && pinned != 1)
        return mn__err(MN_INVALID, "pinned: %d is not 0 or 1", pinned);
    return mn__pin_message(db, session_id ? id : NULL, message_id, pinned);
}

mn_status mn_message_pin(mn_db *db, int64_t message_id, int pinned) { return message_pin(db, NULL, message_id, pinned); }

mn_status mn_session_message_pin(mn_db *db, const char *session_id, int64_t message_id, int pinned)
{
    if (!session_id)
        return mn__err(MN_MISUSE, "mn_session_message_pin: session_id is NULL");
    return message_pin(db, session_id, message_id, pinned);
}

mn_status mn_summary_get(mn_db *db, const char *session_id, mn_summary **out)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_summary_get: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)) || (rc = mn__live_session(db, id, NULL)))
        return rc;
    return mn__get_summary(db, id, out);
}

void mn_compaction_counts(int64_t *ok, int64_t *failed, int64_t *rolled_back)
{
    int64_t a, b, c;
    mn__context_fold_counts(&a, &b, &c);
    if (ok)
        *ok = a;
    if (failed)
        *failed = b;
    if (rolled_back)
        *rolled_back = c;
}

mn_status mn_compact(mn_db *db, const char *session_id, char **event_json)
{
    return mn_compact_ex(db, session_id, NULL, event_json);
}

mn_status mn_compact_ex(mn_db *db, const char *session_id, const mn_compact_opts *opts, char **event_json)
{
    static const mn_compact_opts defaults = MN_COMPACT_OPTS_INIT;
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (event_json)
        *event_json = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    mn_compact_opts o = defaults;
    if (opts && (rc = MN__ABI_LOAD(mn_compact_opts, &o, opts, instructions)))
        return rc;
    const char *ins = o.instructions && *o.instructions ? o.instructions : NULL;
    if (ins && strlen(ins) > MN_COMPACT_INSTRUCTIONS_MAX)
        return mn__err(MN_INVALID, "instructions: %zu bytes is over the maximum of %d", strlen(ins),
                       MN_COMPACT_INSTRUCTIONS_MAX);
    if (ins && !mn__utf8_valid(ins, strlen(ins), NULL))
        return mn__err(MN_INVALID, "instructions: not valid UTF-8");
    mn_session *s = NULL;
    if ((rc = mn__live_session(db, id, &s)))
        return rc;
    json_t *ev = NULL;
    rc = mn__compact_context(db, s, ins, &ev);
    if (event_json && ev) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", mn_errmsg());
        if (!(*event_json = mn__json_dump(ev)) && !rc)
            rc = mn__nomem();
        else if (rc)
            mn__err(rc, "%s", msg);
    }
    json_decref(ev);
    mn__free_session(s);
    return rc;
}

mn_status mn_events_json(mn_db *db, const char *session_id, size_t limit, char **out)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_events_json: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    if (limit > 10000)
        return mn__err(MN_INVALID, "limit: %zu is over the maximum of 10000", limit);
    return mn__list_events(db, id, limit ? limit : 50, out);
}
