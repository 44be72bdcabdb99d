/*
 * mnemo_governance.c — the public functions of context governance (mnemo.h "Context
 * governance"): budget split, pins, summaries, compaction, events; and the bridge from a handle's
 * configuration to the strategies of src/context (settings, the summariser, the offload folder).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mnemo_int.h"
#include "config/config.h"
#include "context/context.h"
#include "store/target.h"
#include "summarize/summarize.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

int mn__strategy_known(const char *strategy)
{
    static const char *const names[] = {"window", "summary", "chunked", "hybrid"};
    for (size_t i = 0; strategy && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(strategy, names[i]) == 0)
            return 1;
    return 0;
}

mn_status mn_budget_split(int64_t model_window, mn_budget *out)
{
    mn__err_clear();
    if (!out)
        return mn__err(MN_MISUSE, "mn_budget_split: out is NULL");
    memset(out, 0, sizeof *out);
    if (model_window < 1 || model_window > 100000000)
        return mn__err(MN_INVALID, "model_window: %lld is not from 1 to 100000000", (long long)model_window);
    mn_context_budget_split(model_window, &out->response, &out->history, &out->files);
    return MN_OK;
}

/* True when a URL points at this machine (a project file may name only those). */
/* The settings of the strategies from the configuration. */
static void strategy_cfg(const mn_db *db, mn_strategy_cfg *c)
{
    const mn_config *cfg = db->cfg;
    memset(c, 0, sizeof *c);
    c->max_messages = mn_config_int(cfg, "context.max_history_messages");
    c->trigger_percent = mn_config_int(cfg, "context.summary_trigger_percent");
    c->tail_turns = mn_config_int(cfg, "context.tail_turns");
    c->chunk_threshold = mn_config_int(cfg, "context.chunk_threshold_tokens");
    c->prompt_budget = mn_config_int(cfg, "context.prompt_budget_tokens");
    c->summary_cap = mn_config_int(cfg, "context.summary_token_cap");
    c->hybrid_recent = mn_config_int(cfg, "context.hybrid_recent_messages");
    c->reserve_tokens = mn_config_int(cfg, "context.reserve_tokens");
    c->safety_margin = mn_config_int(cfg, "context.safety_margin");
    c->claim_ms = mn_config_int(cfg, "summarizer.claim_seconds") * 1000;
    c->retry_gap = mn_config_int(cfg, "summarizer.retry_after_messages");
    c->model_window = mn_config_int(cfg, "context.model_window");
    c->gov.tk = db->tk;
    c->gov.trim_chars = mn_config_int(cfg, "context.tool_output_trim_chars");
    c->gov.offload = strcmp(mn_config_str(cfg, "context.tool_output_offload"), "on") == 0;
    c->gov.protect_tokens = mn_config_int(cfg, "context.tool_output_protect_tokens");
    c->gov.offload_threshold = mn_config_int(cfg, "context.tool_output_offload_threshold_tokens");
    c->gov.loop_repeat = mn_config_int(cfg, "context.loop_repeat");
}

struct env_store {
    mn_strategy_env env;
    char dir[4096];
    char err[512];
};

/* The user's data directory ($XDG_DATA_HOME/mnemo, else ~/.local/share/mnemo), made when
 * missing; "" when it cannot be (offloading then fails and is counted as failed). */
static void data_dir(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int n = xdg && *xdg ? snprintf(out, cap, "%s/mnemo", xdg)
                        : snprintf(out, cap, "%s/.local/share/mnemo", home && *home ? home : ".");
    if (n < 0 || (size_t)n >= cap) {
        out[0] = '\0';
        return;
    }
    for (char *p = out + 1; *p; p++) /* like mkdir -p */
        if (*p == '/') {
            *p = '\0';
            mkdir(out, 0700);
            *p = '/';
        }
    if (mkdir(out, 0700) != 0 && errno != EEXIST)
        out[0] = '\0';
}

void mn__offload_dir(const mn_db *db, char *out, size_t cap)
{
    if (!mn_store_target_folder(db->path, out, cap))
        data_dir(out, cap); /* PostgreSQL, an in-memory database: no folder of its own */
}

/* The summariser for automatic folds (summarizer.auto_model when set) or for mn_compact. A
 * summariser that cannot be opened is not an error here: folds fail with the reason. (A build's
 * fold deadline travels with each call, mn_sum_input.deadline_ms.) */
static void open_env(mn_db *db, int automatic, struct env_store *e)
{
    const mn_config *cfg = db->cfg;
    memset(e, 0, sizeof *e);
    e->env.st = db->store;
    e->env.tk = db->tk;
    mn__offload_dir(db, e->dir, sizeof e->dir);
    mn_summarizer_cfg sc;
    memset(&sc, 0, sizeof sc);
    sc.name = mn_config_str(cfg, "summarizer.name");
    sc.protocol = mn_config_str(cfg, "summarizer.protocol");
    sc.base_url = mn_config_str(cfg, "summarizer.base_url");
    sc.model = mn_config_str(cfg, "summarizer.model");
    if (automatic && *mn_config_str(cfg, "summarizer.auto_model"))
        sc.model = mn_config_str(cfg, "summarizer.auto_model");
    const char *key_env = mn_config_str(cfg, "summarizer.api_key_env");
    sc.api_key = *key_env ? getenv(key_env) : NULL;
    sc.timeout_ms = mn_config_int(cfg, "summarizer.timeout_ms");
    sc.backoff_ms = mn_config_int(cfg, "summarizer.backoff_ms");
    sc.retries = (int)mn_config_int(cfg, "summarizer.retries");
    sc.input_budget = mn_config_int(cfg, "summarizer.input_budget_tokens");
    sc.prompt_file = mn_config_str(cfg, "summarizer.prompt_file");
    mn_summarizer *s = NULL;
    if (mn_summarizer_open(&sc, &s) != MN_OK) {
        snprintf(e->err, sizeof e->err, "%s", mn_errmsg());
        mn__err_clear();
        e->env.sum_err = e->err;
        return;
    }
    e->env.sum = s;
}

static void close_env(struct env_store *e) { mn_summarizer_free(e->env.sum); }

/* A build's fold goes to the handle's queue (mn_fold_queue_set) as a job. */
static int queue_bridge(void *user, const mn_strategy_cfg *cfg, const char *session_id)
{
    mn_db *db = user;
    mn_fold_job job = {session_id, cfg->strategy, cfg->max_tokens, cfg->model_window};
    return db->fold_queue ? db->fold_queue(db->fold_queue_user, &job) : -1;
}

mn_status mn__context_assemble(mn_db *db, const mn_session *s, const char *strategy, int64_t max_tokens,
                               int64_t model_window, int fold_mode, int detail, struct mn_built *b)
{
    mn_strategy_cfg c;
    strategy_cfg(db, &c);
    c.strategy = strategy;
    c.max_tokens = max_tokens;
    c.model_window = model_window;
    c.fold_mode = fold_mode;
    /* background without a worker: fold here, within context.fold_timeout_ms (0: never) */
    int64_t timeout = mn_config_int(db->cfg, "context.fold_timeout_ms");
    if (fold_mode == MN_CONTEXT_FOLD_BACKGROUND && !db->fold_queue) {
        if (timeout == 0)
            c.fold_mode = MN_CONTEXT_FOLD_OFF;
        else
            c.fold_deadline_ms = mn_clock_now_ms() + timeout;
    }
    struct env_store e;
    open_env(db, 1, &e);
    e.env.queue = db->fold_queue ? queue_bridge : NULL;
    e.env.queue_user = db;
    c.gov.offload_dir = e.dir;
    if (detail && !(c.gov.marks = json_object())) {
        close_env(&e);
        return mn__nomem();
    }
    mn_status rc = mn_context_assemble(&e.env, &c, s, b);
    json_decref(c.gov.marks);
    close_env(&e);
    return rc;
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
    if ((rc = mn__check_id(job->session_id, id)))
        return rc;
    const char *strategy = job->strategy ? job->strategy : mn_config_str(db->cfg, "memory.strategy");
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
    rc = mn__context_assemble(db, s, strategy, job->max_tokens, job->model_window, MN_CONTEXT_FOLD_SYNC, 0, &b);
    json_t *fold = b.extra ? json_object_get(b.extra, "fold") : NULL;
    if (!rc && outcome_json && !(*outcome_json = fold ? mn_json_dump(fold) : strdup("{\"outcome\":\"none\"}")))
        rc = mn__nomem();
    mn_built_release(&b);
    mn_session_free(s);
    return rc;
}

mn_status mn_message_pin(mn_db *db, int64_t message_id, int pinned)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    if (message_id < 1)
        return mn__err(MN_INVALID, "message id: %lld is not a message id", (long long)message_id);
    if (pinned != 0 && pinned != 1)
        return mn__err(MN_INVALID, "pinned: %d is not 0 or 1", pinned);
    return db->store->ops->message_pin(db->store, message_id, pinned);
}

mn_status mn_summary_get(mn_db *db, const char *session_id, mn_summary **out)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_summary_get: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__check_id(session_id, id)) || (rc = mn__live_session(db, id, NULL)))
        return rc;
    return db->store->ops->summary_latest(db->store, id, out);
}

void mn_compaction_counts(int64_t *ok, int64_t *failed, int64_t *rolled_back)
{
    int64_t a, b, c;
    mn_context_fold_counts(&a, &b, &c);
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
    if (rc || (rc = mn__check_id(session_id, id)))
        return rc;
    if (opts && opts->size < sizeof(size_t) + sizeof(const char *))
        return mn__err(MN_MISUSE, "mn_compact_opts.size is not set (use MN_COMPACT_OPTS_INIT)");
    mn_compact_opts o = defaults;
    if (opts)
        memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
    const char *ins = o.instructions && *o.instructions ? o.instructions : NULL;
    if (ins && strlen(ins) > MN_COMPACT_INSTRUCTIONS_MAX)
        return mn__err(MN_INVALID, "instructions: %zu bytes is over the maximum of %d", strlen(ins),
                       MN_COMPACT_INSTRUCTIONS_MAX);
    if (ins && !mn_utf8_valid(ins, strlen(ins), NULL))
        return mn__err(MN_INVALID, "instructions: not valid UTF-8");
    mn_session *s = NULL;
    if ((rc = mn__live_session(db, id, &s)))
        return rc;
    mn_strategy_cfg c;
    strategy_cfg(db, &c);
    c.strategy = "compact";
    c.instructions = ins;
    struct env_store e;
    open_env(db, 0, &e);
    json_t *ev = NULL;
    rc = mn_context_compact(&e.env, &c, s, &ev);
    if (event_json && ev) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", mn_errmsg());
        if (!(*event_json = mn_json_dump(ev)) && !rc)
            rc = mn__nomem();
        else if (rc)
            mn__err(rc, "%s", msg);
    }
    json_decref(ev);
    close_env(&e);
    mn_session_free(s);
    return rc;
}

struct events {
    json_t *arr;
    int oom;
};

static int add_event(void *user, int64_t id, const char *kind, const char *data, int64_t at)
{
    struct events *ev = user;
    json_t *d = json_loads(data ? data : "{}", 0, NULL);
    json_t *o = json_pack("{s:I, s:s, s:I, s:o}", "id", (json_int_t)id, "kind", kind ? kind : "", "created_at",
                          (json_int_t)at, "data", d ? d : json_object());
    if (!o || json_array_append_new(ev->arr, o)) {
        ev->oom = 1;
        return 1;
    }
    return 0;
}

mn_status mn_events_json(mn_db *db, const char *session_id, size_t limit, char **out)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_events_json: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__check_id(session_id, id)))
        return rc;
    if (limit > 10000)
        return mn__err(MN_INVALID, "limit: %zu is over the maximum of 10000", limit);
    struct events ev = {json_array(), 0};
    if (!ev.arr)
        return mn__nomem();
    rc = db->store->ops->events_list(db->store, id, limit ? limit : 50, add_event, &ev);
    if (!rc && ev.oom)
        rc = mn__nomem();
    if (!rc && !(*out = mn_json_dump(ev.arr)))
        rc = mn__nomem();
    json_decref(ev.arr);
    return rc;
}
