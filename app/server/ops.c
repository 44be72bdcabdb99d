/*
 * ops.c — the operation table of `mnemo serve`: one record per API operation (name, method,
 * path, summary, parameter and result schemas, flags, handler). The REST routes, the MCP tools
 * and /openapi.json are all made from this table (STYLE.md: one table drives the surface).
 * Handlers take a JSON object of parameters and call include/mnemo.h only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

/* ---- parameter helpers ----------------------------------------------------------------------- */

static mn_status fail(struct srv_call *c, mn_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static mn_status fail(struct srv_call *c, mn_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->status = st;
    return st;
}

/* A library failure: the status and mn_errmsg(). */
static mn_status lib_fail(struct srv_call *c, mn_status st)
{
    const char *m = mn_errmsg();
    return fail(c, st, "%s", m && m[0] ? m : mn_status_str(st));
}

static mn_status forbidden(struct srv_call *c, const char *what)
{
    c->http = 403;
    return fail(c, MN_INVALID, "%s: this API key is bound to namespace '%s'", what, c->ns);
}

/* Optional string parameter: *out NULL when absent or null. */
static mn_status p_str(struct srv_call *c, const char *name, int required, const char **out)
{
    json_t *v = json_object_get(c->params, name);
    *out = NULL;
    if (!v || json_is_null(v)) {
        if (required)
            return fail(c, MN_INVALID, "%s: required", name);
        return MN_OK;
    }
    if (!json_is_string(v))
        return fail(c, MN_INVALID, "%s: must be a string", name);
    *out = json_string_value(v);
    if (strlen(*out) != json_string_length(v))
        return fail(c, MN_INVALID, "%s: must not contain NUL", name);
    return MN_OK;
}

/* Integer parameter, from a JSON integer or a decimal string (query strings). */
static mn_status p_int(struct srv_call *c, const char *name, int64_t def, int64_t min, int64_t max, int64_t *out)
{
    json_t *v = json_object_get(c->params, name);
    *out = def;
    if (!v || json_is_null(v))
        return MN_OK;
    long long n;
    if (json_is_integer(v)) {
        n = json_integer_value(v);
    } else if (json_is_string(v)) {
        const char *s = json_string_value(v);
        char *end;
        errno = 0;
        n = strtoll(s, &end, 10);
        if (errno || end == s || *end)
            return fail(c, MN_INVALID, "%s: '%.60s' is not a whole number", name, s);
    } else {
        return fail(c, MN_INVALID, "%s: must be an integer", name);
    }
    if (n < min || n > max)
        return fail(c, MN_INVALID, "%s: %lld is out of range %lld..%lld", name, n, (long long)min, (long long)max);
    *out = n;
    return MN_OK;
}

static mn_status p_bool(struct srv_call *c, const char *name, int *out)
{
    json_t *v = json_object_get(c->params, name);
    *out = 0;
    if (!v || json_is_null(v))
        return MN_OK;
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return MN_OK;
    }
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "")) {
            *out = 1;
            return MN_OK;
        }
        if (!strcmp(s, "false") || !strcmp(s, "0"))
            return MN_OK;
    }
    return fail(c, MN_INVALID, "%s: must be true or false", name);
}

/* Strings made for one call (JSON text of metadata, tool_calls …), freed at its end. */
struct keep {
    char **p;
    size_t n, cap;
};

static const char *keep(struct keep *k, char *s)
{
    if (!s)
        return NULL;
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 16;
        char **np = realloc(k->p, cap * sizeof *np);
        if (!np) {
            free(s);
            return NULL;
        }
        k->p = np;
        k->cap = cap;
    }
    return k->p[k->n++] = s;
}

static void keep_release(struct keep *k)
{
    for (size_t i = 0; i < k->n; i++)
        free(k->p[i]);
    free(k->p);
}

/* A JSON-valued field passed to the library as text: a JSON value (dumped) or a string holding
 * JSON text (passed as is; the library validates it). */
static mn_status j_text(struct srv_call *c, struct keep *k, json_t *obj, const char *name, const char *prefix,
                        const char **out)
{
    json_t *v = json_object_get(obj, name);
    *out = NULL;
    if (!v || json_is_null(v))
        return MN_OK;
    if (json_is_string(v)) {
        *out = json_string_value(v);
        return MN_OK;
    }
    *out = keep(k, json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY));
    if (!*out)
        return fail(c, MN_NOMEM, "out of memory");
    (void)prefix;
    return MN_OK;
}

static json_t *from_text(char *text)
{
    json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
    mn_free(text);
    return v;
}

static json_t *session_json(const mn_session *s)
{
    char *t = NULL;
    if (mn_session_to_json(s, &t) != MN_OK)
        return NULL;
    json_t *v = from_text(t);
    /* the thread fields the CLI's JSON leaves out */
    if (v) {
        json_object_set_new(v, "ttl_ms", json_integer(s->ttl_ms));
        json_object_set_new(v, "max_turns", json_integer(s->max_turns));
        json_object_set_new(v, "turn_count", json_integer(s->turn_count));
    }
    return v;
}

/* The session id parameter, checked against the caller's namespace (a session of another
 * namespace looks like a missing one). */
static mn_status session_param(struct srv_call *c, const char **id)
{
    mn_status st = p_str(c, "session_id", 1, id);
    if (st || !c->ns)
        return st;
    mn_session *s = NULL;
    /* another namespace's session is missing, expired or not (never 410 with its time) */
    if ((st = mn_session_get_in(c->db, c->ns, *id, &s)))
        return lib_fail(c, st);
    mn_session_free(s);
    return MN_OK;
}

/* Takes a JSON object text the handler built (malloc'd). */
static mn_status ok_raw(struct srv_call *c, char *text)
{
    if (!text)
        return fail(c, MN_NOMEM, "out of memory");
    c->raw = text;
    return MN_OK;
}

/* malloc'd concatenation of the NULL-terminated list of strings (NULL on OOM). */
static char *concat(const char *first, ...)
{
    va_list ap;
    size_t len = 0;
    va_start(ap, first);
    for (const char *p = first; p; p = va_arg(ap, const char *))
        len += strlen(p);
    va_end(ap);
    char *out = malloc(len + 1), *w = out;
    if (!out)
        return NULL;
    va_start(ap, first);
    for (const char *p = first; p; p = va_arg(ap, const char *)) {
        size_t n = strlen(p);
        memcpy(w, p, n);
        w += n;
    }
    va_end(ap);
    *w = '\0';
    return out;
}

static mn_status ok(struct srv_call *c, json_t *result)
{
    if (!result)
        return fail(c, MN_NOMEM, "out of memory");
    c->result = result;
    return MN_OK;
}

/* ---- handlers -------------------------------------------------------------------------------- */

/* {"session": …} as the result; takes s. */
static mn_status session_answer(struct srv_call *c, mn_session *s)
{
    mn_status st = ok(c, json_pack("{s:o*}", "session", session_json(s)));
    mn_session_free(s);
    return st;
}

static mn_status op_session_create(struct srv_call *c)
{
    struct keep k = {0};
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    int64_t ttl = 0, turns = 0;
    mn_status st;
    if ((st = p_str(c, "id", 0, &o.id)) || (st = p_str(c, "namespace", 0, &o.ns)) ||
        (st = p_str(c, "title", 0, &o.title)) || (st = p_str(c, "system_prompt", 0, &o.system_prompt)) ||
        (st = p_str(c, "tool_name", 0, &o.tool_name)) ||
        (st = j_text(c, &k, c->params, "metadata", "", &o.metadata)) ||
        (st = p_int(c, "ttl_seconds", 0, -1, 31622400, &ttl)) || (st = p_int(c, "max_turns", 0, -1, 1000000, &turns)))
        goto out;
    if (c->ns) {
        if (o.ns && strcmp(o.ns, c->ns) != 0) {
            st = forbidden(c, "namespace");
            goto out;
        }
        o.ns = c->ns;
    }
    o.ttl_ms = ttl > 0 ? ttl * 1000 : ttl;
    o.max_turns = turns;
    mn_session *s = NULL;
    if ((st = mn_session_create(c->db, &o, &s)) != MN_OK) {
        lib_fail(c, st);
        goto out;
    }
    st = session_answer(c, s);
out:
    keep_release(&k);
    return st;
}

static mn_status op_session_get(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    mn_session *s = NULL;
    if ((st = mn_session_get(c->db, id, &s)))
        return lib_fail(c, st);
    st = session_answer(c, s);
    return st;
}

static mn_status op_session_list(struct srv_call *c)
{
    const char *ns;
    int64_t limit, offset;
    mn_status st;
    if ((st = p_str(c, "namespace", 0, &ns)) || (st = p_int(c, "limit", 20, 1, 1000, &limit)) ||
        (st = p_int(c, "offset", 0, 0, 100000000, &offset)))
        return st;
    if (c->ns) {
        if (ns && strcmp(ns, c->ns) != 0)
            return forbidden(c, "namespace");
        ns = c->ns;
    }
    mn_sessions *list = NULL;
    if ((st = mn_session_list(c->db, ns, (size_t)limit + 1, (size_t)offset, &list)))
        return lib_fail(c, st);
    json_t *a = json_array();
    for (size_t i = 0; i < list->count && i < (size_t)limit; i++)
        json_array_append_new(a, session_json(&list->items[i]));
    int more = list->count > (size_t)limit;
    mn_sessions_free(list);
    return ok(c, json_pack("{s:o,s:b,s:o}", "sessions", a, "has_more", more, "next_offset",
                           more ? json_integer(offset + limit) : json_null()));
}

static mn_status op_session_delete(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    if ((st = mn_session_delete(c->db, id)))
        return lib_fail(c, st);
    return ok(c, json_pack("{s:s}", "deleted", id));
}

/* Title and/or metadata of a session (absent: unchanged). */
static mn_status op_session_update(struct srv_call *c)
{
    const char *id, *title;
    mn_status st;
    struct keep k = {0};
    const char *metadata = NULL;
    if ((st = session_param(c, &id)) || (st = p_str(c, "title", 0, &title)) ||
        (st = j_text(c, &k, c->params, "metadata", "", &metadata)))
        goto out;
    if (!title && !metadata) {
        st = fail(c, MN_INVALID, "title or metadata: give at least one");
        goto out;
    }
    if ((st = mn_session_update(c->db, id, title, metadata))) {
        st = lib_fail(c, st);
        goto out;
    }
    mn_session *s = NULL;
    if ((st = mn_session_get(c->db, id, &s))) {
        st = lib_fail(c, st);
        goto out;
    }
    st = session_answer(c, s);
out:
    keep_release(&k);
    return st;
}

/* Deletes one message of a session (the counters follow). */
static mn_status op_message_delete(struct srv_call *c)
{
    const char *id;
    int64_t mid;
    mn_status st;
    if ((st = session_param(c, &id)) || (st = p_int(c, "message_id", -1, 1, INT64_MAX, &mid)))
        return st;
    if (mid < 1)
        return fail(c, MN_INVALID, "message_id: required, a positive integer");
    if ((st = mn_message_delete(c->db, id, mid)))
        return lib_fail(c, st);
    return ok(c, json_pack("{s:I}", "deleted", (json_int_t)mid));
}

/* The session's global summary (404 when it has none yet). */
static mn_status op_summary_get(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    mn_summary *sm = NULL;
    if ((st = mn_summary_get(c->db, id, &sm)))
        return lib_fail(c, st);
    json_t *o = json_pack("{s:I,s:s,s:I,s:I,s:s,s:I,s:s?,s:s?,s:I}", "id", (json_int_t)sm->id, "session_id",
                          sm->session_id, "covers_upto", (json_int_t)sm->covers_upto, "folded", (json_int_t)sm->folded,
                          "text", sm->text ? sm->text : "", "tokens", (json_int_t)sm->tokens, "model", sm->model,
                          "summarizer", sm->summarizer, "created_at", (json_int_t)sm->created_at);
    mn_summary_free(sm);
    return ok(c, o ? json_pack("{s:o}", "summary", o) : NULL);
}

/* Folds the session now (/compact); the event written says what happened. */
static mn_status op_compact(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    const char *instructions;
    if ((st = p_str(c, "instructions", 0, &instructions)))
        return st;
    mn_compact_opts o = MN_COMPACT_OPTS_INIT;
    o.instructions = instructions;
    char *event = NULL;
    if ((st = mn_compact_ex(c->db, id, &o, &event))) {
        lib_fail(c, st);
        mn_free(event);
        return st;
    }
    return ok(c, json_pack("{s:o}", "event", from_text(event)));
}

/* The session's events, newest first. */
static mn_status op_events(struct srv_call *c)
{
    const char *id;
    int64_t limit;
    mn_status st;
    if ((st = session_param(c, &id)) || (st = p_int(c, "limit", 50, 1, 10000, &limit)))
        return st;
    char *t = NULL;
    if ((st = mn_events_json(c->db, id, (size_t)limit, &t)))
        return lib_fail(c, st);
    return ok(c, json_pack("{s:o}", "events", from_text(t)));
}

static mn_status op_session_fork(struct srv_call *c)
{
    const char *id;
    int64_t upto;
    mn_status st;
    if ((st = session_param(c, &id)) || (st = p_int(c, "upto_seq", 0, 0, INT64_MAX, &upto)))
        return st;
    mn_session *s = NULL;
    if ((st = mn_session_fork(c->db, id, upto, &s)))
        return lib_fail(c, st);
    st = session_answer(c, s);
    return st;
}

static mn_status op_session_resume(struct srv_call *c)
{
    const char *ns, *id;
    mn_status st;
    if ((st = p_str(c, "namespace", 0, &ns)) || (st = p_str(c, "session_id", 0, &id)))
        return st;
    if (c->ns) {
        if (ns && strcmp(ns, c->ns) != 0)
            return forbidden(c, "namespace");
        ns = c->ns;
        if (id && (st = session_param(c, &id)))
            return st;
    }
    mn_session *s = NULL;
    if ((st = mn_session_resume(c->db, ns, id, &s)))
        return lib_fail(c, st);
    st = session_answer(c, s);
    return st;
}

/* One message object → mn_message_in (strings borrowed from obj or kept in k). */
static mn_status message_in(struct srv_call *c, struct keep *k, json_t *obj, size_t index, int many,
                            mn_message_in *m)
{
    char where[48] = "";
    if (many)
        snprintf(where, sizeof where, "messages[%zu].", index);
    if (!json_is_object(obj))
        return fail(c, MN_INVALID, "%smessage: must be an object", where);
    *m = (mn_message_in)MN_MESSAGE_IN_INIT;
    static const char *const strs[] = {"role", "content", "tool_call_id", "name", "tool_name", "model",
                                       "idempotency_key"};
    const char *vals[7] = {0};
    for (size_t i = 0; i < 7; i++) {
        json_t *v = json_object_get(obj, strs[i]);
        if (!v || json_is_null(v))
            continue;
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
            return fail(c, MN_INVALID, "%s%s: must be a string", where, strs[i]);
        vals[i] = json_string_value(v);
    }
    if (!vals[0])
        return fail(c, MN_INVALID, "%srole: required (system, user, assistant or tool)", where);
    if (mn_role_parse(vals[0], &m->role) != MN_OK)
        return fail(c, MN_INVALID, "%srole: '%.40s' is not one of system, user, assistant, tool", where, vals[0]);
    m->content = vals[1];
    m->tool_call_id = vals[2];
    m->name = vals[3];
    m->tool_name = vals[4];
    m->model = vals[5];
    m->idempotency_key = vals[6];
    mn_status st;
    if ((st = j_text(c, k, obj, "tool_calls", where, &m->tool_calls)) ||
        (st = j_text(c, k, obj, "files", where, &m->files)) || (st = j_text(c, k, obj, "metadata", where, &m->metadata)))
        return st;
    json_t *pin = json_object_get(obj, "pinned");
    if (pin && !json_is_null(pin)) {
        if (!json_is_boolean(pin))
            return fail(c, MN_INVALID, "%spinned: must be true or false", where);
        m->pinned = json_is_true(pin);
    }
    return MN_OK;
}

/* The answer to an append: {"messages":[…]} as text (takes stored). */
static mn_status appended(struct srv_call *c, mn_messages *stored)
{
    char *arr = NULL;
    mn_status st = mn_messages_to_json(stored, 0, stored->count, &arr);
    mn_messages_free(stored);
    if (st)
        return lib_fail(c, st);
    st = ok_raw(c, concat("{\"messages\":", arr, "}", (char *)NULL));
    mn_free(arr);
    return st;
}

/* An append queued for the group committer on behalf of an event loop (c->resume). */
struct append_wait {
    struct srv_call *c;
    mn_message_in *in; /* its strings point into c->params and keep */
    struct keep k;
};

static void append_done(void *user, mn_status st, mn_messages *stored, const char *err)
{
    struct append_wait *w = user;
    struct srv_call *c = w->c;
    if (st)
        fail(c, st, "%s", err);
    else
        appended(c, stored);
    free(w->in);
    keep_release(&w->k);
    free(w);
    c->resume(c->resume_ctx);
}

static mn_status op_append(struct srv_call *c)
{
    const char *id;
    int create;
    mn_status st;
    if ((st = p_bool(c, "create", &create)))
        return st;
    if ((st = p_str(c, "session_id", 1, &id)))
        return st;
    if (c->ns) { /* an existing session must be ours; a new one is made in our namespace */
        mn_session *s = NULL;
        mn_status g = mn_session_get(c->db, id, &s);
        if (g == MN_OK) {
            int same = strcmp(s->ns, c->ns) == 0;
            mn_session_free(s);
            if (!same)
                return fail(c, MN_NOTFOUND, "session %s not found", id);
        } else if (g != MN_NOTFOUND || !create) {
            return lib_fail(c, g);
        } else {
            mn_session_opts o = MN_SESSION_OPTS_INIT;
            o.id = id;
            o.ns = c->ns;
            g = mn_session_create(c->db, &o, NULL);
            if (g && g != MN_CONFLICT)
                return lib_fail(c, g);
        }
    }
    json_t *batch = json_object_get(c->params, "messages");
    struct keep k = {0};
    mn_message_in *in = NULL;
    size_t n = 1;
    if (batch && !json_is_null(batch)) {
        if (!json_is_array(batch) || json_array_size(batch) == 0 || json_array_size(batch) > 100000) {
            st = fail(c, MN_INVALID, "messages: must be an array of 1 to 100000 message objects");
            goto out;
        }
        n = json_array_size(batch);
    }
    if (!(in = calloc(n, sizeof *in))) {
        st = fail(c, MN_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if ((st = message_in(c, &k, batch && !json_is_null(batch) ? json_array_get(batch, i) : c->params, i,
                             batch && !json_is_null(batch), &in[i])))
            goto out;
    unsigned flags = create ? MN_APPEND_CREATE : 0;
    if (c->resume) { /* an event loop waits for us: queue the append and answer from the commit */
        struct append_wait *w = malloc(sizeof *w);
        if (w) {
            *w = (struct append_wait){c, in, k};
            if (srv_append_submit(c->db, id, in, n, flags, append_done, w) == 0) {
                c->pending = 1;
                return MN_OK;
            }
            free(w);
        }
    }
    mn_messages *stored = NULL;
    char err[256];
    if ((st = srv_append(c->db, id, in, n, flags, &stored, err))) {
        fail(c, st, "%s", err);
        goto out;
    }
    st = appended(c, stored);
out:
    free(in);
    keep_release(&k);
    return st;
}

static mn_status op_history(struct srv_call *c)
{
    const char *id;
    int64_t after, limit;
    int tail, all;
    mn_status st;
    if ((st = session_param(c, &id)) || (st = p_int(c, "after", 0, 0, INT64_MAX, &after)) ||
        (st = p_int(c, "limit", 100, 1, 10000, &limit)) || (st = p_bool(c, "tail", &tail)) ||
        (st = p_bool(c, "all", &all)))
        return st;
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.after_seq = after;
    o.limit = (size_t)limit + (tail ? 0 : 1);
    o.tail = tail;
    o.all = all;
    mn_messages *ms = NULL;
    if ((st = mn_history(c->db, id, &o, &ms)))
        return lib_fail(c, st);
    int more = !tail && ms->count > (size_t)limit;
    size_t n = ms->count < (size_t)limit ? ms->count : (size_t)limit;
    char *arr = NULL, tail_text[64];
    st = mn_messages_to_json(ms, 0, n, &arr);
    if (more)
        snprintf(tail_text, sizeof tail_text, ",\"has_more\":true,\"next_after\":%lld}", (long long)ms->items[n - 1].seq);
    else
        snprintf(tail_text, sizeof tail_text, ",\"has_more\":false,\"next_after\":null}");
    mn_messages_free(ms);
    if (st)
        return lib_fail(c, st);
    /* rendered as text straight away: history is the hot read path */
    st = ok_raw(c, concat("{\"messages\":", arr, tail_text, (char *)NULL));
    mn_free(arr);
    return st;
}

static mn_status op_context(struct srv_call *c)
{
    const char *id, *strategy, *format, *fold;
    int64_t max_tokens, model_window;
    int detail;
    mn_status st;
    if ((st = session_param(c, &id)) || (st = p_str(c, "strategy", 0, &strategy)) ||
        (st = p_str(c, "format", 0, &format)) || (st = p_int(c, "max_tokens", 0, 0, 100000000, &max_tokens)) ||
        (st = p_int(c, "model_window", 0, 0, 100000000, &model_window)) || (st = p_str(c, "fold", 0, &fold)) ||
        (st = p_bool(c, "detail", &detail)))
        return st;
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = strategy;
    o.max_tokens = max_tokens;
    o.model_window = model_window;
    o.flags = detail ? MN_CONTEXT_DETAIL : 0;
    if (fold && strcmp(fold, "background") != 0 && strcmp(fold, "sync") != 0 && strcmp(fold, "off") != 0)
        return fail(c, MN_INVALID, "fold: '%.40s' is not one of background, sync, off", fold);
    o.fold = !fold || strcmp(fold, "background") == 0 ? MN_CONTEXT_FOLD_BACKGROUND
             : strcmp(fold, "sync") == 0               ? MN_CONTEXT_FOLD_SYNC
                                                       : MN_CONTEXT_FOLD_OFF;
    if (format && mn_format_parse(format, &o.format) != MN_OK)
        return fail(c, MN_INVALID, "format: '%.40s' is not one of openai, anthropic, text", format);
    mn_context *ctx = NULL;
    if ((st = mn_context_build(c->db, id, &o, &ctx)))
        return lib_fail(c, st);
    /* The answer is assembled as text: rendered and report are JSON texts already, and this is
     * the hot path of an agent's turn (parsing them back with jansson cost more than the build). */
    char nums[128], *text_json = NULL;
    snprintf(nums, sizeof nums, ",\"tokens\":%lld,\"kept\":%zu,\"dropped\":%zu}", (long long)ctx->tokens, ctx->kept,
             ctx->dropped);
    const char *report = ctx->report && ctx->report[0] ? ctx->report : "{}";
    char *r = NULL;
    if (o.format == MN_FORMAT_TEXT) {
        json_t *t = json_string(ctx->rendered ? ctx->rendered : "");
        text_json = t ? json_dumps(t, JSON_ENCODE_ANY) : NULL;
        json_decref(t);
        if (text_json)
            r = concat("{\"format\":\"text\",\"text\":", text_json, ",\"report\":", report, nums, (char *)NULL);
    } else if (o.format == MN_FORMAT_ANTHROPIC) {
        /* rendered is the object {"system":…,"messages":[…]}: its members join ours */
        const char *inner = ctx->rendered && ctx->rendered[0] == '{' ? ctx->rendered + 1 : "}";
        const char *sep = inner[0] == '}' ? "" : ",";
        size_t ilen = strlen(inner);
        char *members = malloc(ilen);
        if (members) {
            memcpy(members, inner, ilen - 1); /* without the closing brace */
            members[ilen - 1] = '\0';
            r = concat("{\"format\":\"anthropic\"", sep, members, ",\"report\":", report, nums, (char *)NULL);
            free(members);
        }
    } else {
        r = concat("{\"format\":\"openai\",\"messages\":", ctx->rendered ? ctx->rendered : "[]", ",\"report\":", report,
                   nums, (char *)NULL);
    }
    free(text_json);
    mn_context_free(ctx);
    return ok_raw(c, r);
}

static mn_status state_result(struct srv_call *c, const char *id, int reveal)
{
    char *t = NULL;
    mn_status st = mn_state_get(c->db, id, reveal, &t);
    if (st)
        return lib_fail(c, st);
    return ok(c, json_pack("{s:o*}", "state", from_text(t)));
}

static mn_status op_state_get(struct srv_call *c)
{
    const char *id;
    int reveal;
    mn_status st;
    if ((st = session_param(c, &id)) || (st = p_bool(c, "reveal", &reveal)))
        return st;
    if (reveal && c->for_model) /* a model never sees the values redaction hides */
        return fail(c, MN_INVALID, "reveal: not available to MCP clients; sensitive params stay redacted");
    return state_result(c, id, reveal);
}

static mn_status op_state_merge(struct srv_call *c)
{
    const char *id;
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    json_t *p = json_object_get(c->params, "params");
    if (!json_is_object(p))
        return fail(c, MN_INVALID, "params: required, a JSON object");
    char *t = json_dumps(p, JSON_COMPACT);
    if (!t)
        return fail(c, MN_NOMEM, "out of memory");
    st = mn_state_merge_params(c->db, id, t);
    free(t);
    if (st)
        return lib_fail(c, st);
    return state_result(c, id, 0);
}

static mn_status op_files(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    mn_strings *l = NULL;
    if ((st = mn_session_files(c->db, id, &l)))
        return lib_fail(c, st);
    json_t *a = json_array();
    for (size_t i = 0; i < l->count; i++)
        json_array_append_new(a, json_string(l->items[i]));
    mn_strings_free(l);
    return ok(c, json_pack("{s:o}", "files", a));
}

static mn_status global_only(struct srv_call *c, const char *what)
{
    return c->ns ? forbidden(c, what) : MN_OK;
}

static mn_status op_gc(struct srv_call *c)
{
    int64_t n = 0;
    mn_status st = global_only(c, "gc");
    if (st)
        return st;
    if ((st = mn_gc(c->db, &n)))
        return lib_fail(c, st);
    return ok(c, json_pack("{s:I}", "purged", (json_int_t)n));
}

static mn_status op_prune(struct srv_call *c)
{
    int64_t days, n = 0;
    mn_status st;
    if ((st = global_only(c, "prune")) || (st = p_int(c, "days", -1, 1, 36500, &days)))
        return st;
    if (days < 0)
        return fail(c, MN_INVALID, "days: required, 1 to 36500");
    if ((st = mn_prune(c->db, (int)days, &n)))
        return lib_fail(c, st);
    return ok(c, json_pack("{s:I}", "deleted", (json_int_t)n));
}

static mn_status op_stats(struct srv_call *c)
{
    char *t = NULL;
    mn_status st = global_only(c, "stats");
    if (st)
        return st;
    if ((st = mn_stats_json(c->db, &t)))
        return lib_fail(c, st);
    return ok(c, from_text(t));
}

/* Search over stored messages (mn_search); a key bound to a namespace searches only it. */
static mn_status op_search(struct srv_call *c)
{
    const char *q, *mode_name, *ns, *sid = NULL, *role;
    int64_t top_k;
    mn_status st;
    if ((st = p_str(c, "q", 1, &q)) || (st = p_str(c, "mode", 0, &mode_name)) ||
        (st = p_str(c, "namespace", 0, &ns)) || (st = p_str(c, "role", 0, &role)) ||
        (st = p_int(c, "top_k", 10, 1, 1000, &top_k)))
        return st;
    if (json_is_string(json_object_get(c->params, "session_id")) && (st = session_param(c, &sid)))
        return st;
    mn_search_mode mode = MN_SEARCH_AUTO;
    if (mode_name && mn_search_mode_parse(mode_name, &mode) != MN_OK)
        return fail(c, MN_INVALID, "mode: '%.40s' is not one of auto, keyword, semantic, hybrid", mode_name);
    if (c->ns) {
        if (ns && strcmp(ns, c->ns) != 0)
            return forbidden(c, "namespace");
        ns = c->ns;
    }
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.ns = ns;
    f.session_id = sid;
    if (role) {
        mn_role r;
        if (mn_role_parse(role, &r) != MN_OK)
            return fail(c, MN_INVALID, "role: '%.40s' is not one of system, user, assistant, tool", role);
        f.role = (int)r;
    }
    mn_search_hits *hits = NULL;
    char *t = NULL;
    if ((st = mn_search(c->db, q, mode, (size_t)top_k, &f, 0, &hits)))
        return lib_fail(c, st);
    st = mn_search_hits_to_json(hits, &t);
    const char *ran = mn_search_mode_name(hits->mode);
    json_int_t not_embedded = (json_int_t)hits->not_embedded; /* queued: not findable by meaning yet */
    mn_search_hits_free(hits);
    if (st)
        return lib_fail(c, st);
    return ok(c, json_pack("{s:s,s:o*,s:I}", "mode", ran ? ran : "keyword", "hits", from_text(t), "not_embedded",
                           not_embedded));
}

/* The export itself is streamed by the transport; this checks the parameters and returns the
 * ids to export ("ids": comma-separated list or array; none: every session). */
static mn_status op_export(struct srv_call *c)
{
    mn_status st = global_only(c, "export");
    if (st)
        return st;
    json_t *ids = json_array(), *v = json_object_get(c->params, "ids");
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        while (*s) {
            const char *e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            if (len)
                json_array_append_new(ids, json_stringn(s, len));
            s += len + (e ? 1 : 0);
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) {
            if (!json_is_string(x)) {
                json_decref(ids);
                return fail(c, MN_INVALID, "ids[%zu]: must be a string", i);
            }
            json_array_append(ids, x);
        }
    } else if (v && !json_is_null(v)) {
        json_decref(ids);
        return fail(c, MN_INVALID, "ids: must be a comma-separated string or an array of ids");
    }
    return ok(c, json_pack("{s:o}", "ids", ids));
}

struct mem_reader {
    const char *p;
    size_t left;
};

static long mem_read(void *user, char *buf, size_t cap)
{
    struct mem_reader *r = user;
    size_t n = r->left < cap ? r->left : cap;
    memcpy(buf, r->p, n);
    r->p += n;
    r->left -= n;
    return (long)n;
}

static mn_status op_import(struct srv_call *c)
{
    mn_status st = global_only(c, "import");
    if (st)
        return st;
    struct mem_reader r = {c->body ? c->body : "", c->body ? c->body_len : 0};
    mn_import_stats s = {0};
    if ((st = mn_import(c->db, mem_read, &r, &s)))
        return lib_fail(c, st);
    return ok(c, json_pack("{s:I,s:I,s:I,s:I}", "sessions_added", (json_int_t)s.sessions_added, "sessions_skipped",
                           (json_int_t)s.sessions_skipped, "messages_added", (json_int_t)s.messages_added,
                           "messages_skipped", (json_int_t)s.messages_skipped));
}


/* ---- long-term memory (docs/memory.md) ------------------------------------------------------- */

/* Refuses parameters the operation does not know (a misspelt filter must not widen a search). */
static mn_status only_params(struct srv_call *c, const char *const *allowed)
{
    const char *k;
    json_t *v;
    json_object_foreach(c->params, k, v) {
        int known = 0;
        for (size_t i = 0; allowed[i] && !known; i++)
            known = strcmp(allowed[i], k) == 0;
        if (!known)
            return fail(c, MN_INVALID, "%.60s: not a parameter of this operation", k);
    }
    return MN_OK;
}

/* metadata as JSON text (kept for the call), from an object or a string holding one. */
static mn_status p_object_text(struct srv_call *c, struct keep *k, const char *name, const char **out)
{
    json_t *v = json_object_get(c->params, name);
    *out = NULL;
    if (!v || json_is_null(v))
        return MN_OK;
    if (json_is_string(v)) {
        *out = json_string_value(v);
        return MN_OK;
    }
    if (!json_is_object(v))
        return fail(c, MN_INVALID, "%s: must be an object", name);
    *out = keep(k, json_dumps(v, JSON_COMPACT));
    return *out ? MN_OK : fail(c, MN_NOMEM, "out of memory");
}

static json_t *memory_json(const mn_memory *m)
{
    char *t = NULL;
    return mn_memory_to_json(m, &t) == MN_OK ? from_text(t) : NULL;
}

static json_t *memories_json(const mn_memories *l)
{
    char *t = NULL;
    return mn_memories_to_json(l, &t) == MN_OK ? from_text(t) : NULL;
}

/* The memory named by the path, checked against the key's namespace (another namespace's
 * memory is not found). *out may be NULL. */
static mn_status memory_param(struct srv_call *c, const char **id, mn_memory **out)
{
    mn_status st = p_str(c, "memory_id", 1, id);
    if (out)
        *out = NULL;
    if (st || (!c->ns && !out))
        return st;
    mn_memory *m = NULL;
    if ((st = mn_memory_get(c->db, *id, &m)))
        return lib_fail(c, st);
    if (c->ns && strcmp(m->ns, c->ns) != 0) {
        mn_memory_free(m);
        return fail(c, MN_NOTFOUND, "memory %.60s: no such memory", *id);
    }
    if (out)
        *out = m;
    else
        mn_memory_free(m);
    return MN_OK;
}

/* Scope and filters shared by recall and memory_list. */
static mn_status memory_query(struct srv_call *c, struct keep *k, mn_memory_query *q, int64_t def_limit)
{
    int64_t limit, offset, as_of;
    int all, pinned;
    mn_status st;
    if ((st = p_str(c, "namespace", 0, &q->ns)) || (st = p_str(c, "user_id", 0, &q->user_id)) ||
        (st = p_str(c, "agent_id", 0, &q->agent_id)) || (st = p_str(c, "session_id", 0, &q->session_id)) ||
        (st = p_str(c, "kind", 0, &q->kind)) || (st = p_object_text(c, k, "metadata", &q->metadata)) ||
        (st = p_int(c, "as_of", 0, 0, INT64_MAX, &as_of)) || (st = p_int(c, "limit", def_limit, 1, 1000, &limit)) ||
        (st = p_int(c, "offset", 0, 0, INT64_MAX, &offset)) || (st = p_bool(c, "include_closed", &all)) ||
        (st = p_bool(c, "pinned", &pinned)))
        return st;
    if (c->ns) {
        if (q->ns && strcmp(q->ns, c->ns) != 0)
            return forbidden(c, "namespace");
        q->ns = c->ns;
    }
    q->as_of = as_of;
    q->limit = (size_t)limit;
    q->offset = (size_t)offset;
    q->include_closed = all;
    q->pinned = pinned ? 1 : -1;
    return MN_OK;
}

/* The fields of a memory to write (remember, update). */
static mn_status memory_in(struct srv_call *c, struct keep *k, mn_memory_in *in, int64_t *sources, int is_update)
{
    int64_t cap, from, to;
    mn_status st;
    if ((st = p_str(c, "text", !is_update, &in->text)) || (st = p_str(c, "kind", 0, &in->kind)) ||
        (st = p_object_text(c, k, "metadata", &in->metadata)) || (st = p_str(c, "reason", 0, &in->reason)) ||
        (st = p_int(c, "token_cap", -1, 0, MN_MEMORY_MAX_TOKEN_CAP, &cap)) ||
        (st = p_int(c, "valid_from", 0, 0, INT64_MAX, &from)) || (st = p_int(c, "valid_to", 0, 0, INT64_MAX, &to)))
        return st;
    json_t *pin = json_object_get(c->params, "pinned");
    if (pin && !json_is_boolean(pin))
        return fail(c, MN_INVALID, "pinned: must be true or false");
    in->pinned = pin ? json_is_true(pin) : is_update ? -1 : 0;
    in->token_cap = is_update ? cap : cap < 0 ? 0 : cap;
    in->valid_from = from;
    in->valid_to = to;
    json_t *src = json_object_get(c->params, "sources");
    if (src && !json_is_null(src)) {
        if (!json_is_array(src))
            return fail(c, MN_INVALID, "sources: must be an array of message ids");
        if (json_array_size(src) > MN_MEMORY_MAX_SOURCES)
            return fail(c, MN_TOOBIG, "sources: %zu message ids is over the limit of %d", json_array_size(src),
                        MN_MEMORY_MAX_SOURCES);
        for (size_t i = 0; i < json_array_size(src); i++) {
            json_t *v = json_array_get(src, i);
            if (!json_is_integer(v))
                return fail(c, MN_INVALID, "sources: must be an array of message ids");
            sources[i] = json_integer_value(v);
        }
        in->sources = sources;
        in->n_sources = json_array_size(src);
    }
    return MN_OK;
}

static const char *const MEMORY_IN_PARAMS[] = {"text", "kind", "metadata", "reason", "token_cap", "valid_from",
                                               "valid_to", "pinned", "sources", "namespace", "user_id",
                                               "agent_id", "session_id", "memory_id", NULL};
static const char *const MEMORY_QUERY_PARAMS[] = {"q", "mode", "namespace", "user_id", "agent_id", "session_id",
                                                  "kind", "metadata", "as_of", "limit", "offset",
                                                  "include_closed", "pinned", NULL};

static mn_status op_remember(struct srv_call *c)
{
    struct keep k = {0};
    int64_t sources[MN_MEMORY_MAX_SOURCES];
    mn_memory_in in = MN_MEMORY_IN_INIT;
    mn_status st = only_params(c, MEMORY_IN_PARAMS);
    if (!st && json_object_get(c->params, "memory_id"))
        st = fail(c, MN_INVALID, "memory_id: not a parameter of this operation");
    if (!st)
        st = memory_in(c, &k, &in, sources, 0);
    if (!st && !((st = p_str(c, "namespace", 0, &in.ns)) || (st = p_str(c, "user_id", 0, &in.user_id)) ||
                 (st = p_str(c, "agent_id", 0, &in.agent_id)) || (st = p_str(c, "session_id", 0, &in.session_id)))) {
        if (c->ns && in.ns && strcmp(in.ns, c->ns) != 0)
            st = forbidden(c, "namespace");
        else if (c->ns)
            in.ns = c->ns;
    }
    mn_memory *m = NULL;
    in.actor = "api";
    if (!st && (st = mn_memory_add(c->db, &in, &m)))
        st = lib_fail(c, st);
    if (!st)
        st = ok(c, json_pack("{s:o*}", "memory", memory_json(m)));
    mn_memory_free(m);
    keep_release(&k);
    return st;
}

static mn_status op_recall(struct srv_call *c)
{
    struct keep k = {0};
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    const char *text, *mode_name;
    mn_search_mode mode = MN_SEARCH_AUTO;
    mn_status st = only_params(c, MEMORY_QUERY_PARAMS);
    if (!st && !(st = p_str(c, "q", 1, &text)) && !(st = p_str(c, "mode", 0, &mode_name)) && mode_name &&
        mn_search_mode_parse(mode_name, &mode) != MN_OK)
        st = fail(c, MN_INVALID, "mode: '%.40s' is not one of auto, keyword, semantic, hybrid", mode_name);
    if (!st)
        st = memory_query(c, &k, &q, 10);
    mn_memories *l = NULL;
    if (!st && (st = mn_memory_search(c->db, text, mode, &q, &l)))
        st = lib_fail(c, st);
    if (!st)
        st = ok(c, json_pack("{s:o*}", "memories", memories_json(l)));
    mn_memories_free(l);
    keep_release(&k);
    return st;
}

static mn_status op_memory_list(struct srv_call *c)
{
    struct keep k = {0};
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_status st = only_params(c, MEMORY_QUERY_PARAMS + 2);
    if (!st)
        st = memory_query(c, &k, &q, 100);
    mn_memories *l = NULL;
    if (!st && (st = mn_memory_list(c->db, &q, &l)))
        st = lib_fail(c, st);
    if (!st)
        st = ok(c, json_pack("{s:o*}", "memories", memories_json(l)));
    mn_memories_free(l);
    keep_release(&k);
    return st;
}

static mn_status op_memory_get(struct srv_call *c)
{
    const char *id;
    mn_memory *m = NULL;
    mn_status st = memory_param(c, &id, &m);
    if (!st)
        st = ok(c, json_pack("{s:o*}", "memory", memory_json(m)));
    mn_memory_free(m);
    return st;
}

static mn_status op_memory_update(struct srv_call *c)
{
    struct keep k = {0};
    int64_t sources[MN_MEMORY_MAX_SOURCES];
    mn_memory_in in = MN_MEMORY_IN_INIT;
    const char *id;
    mn_status st = only_params(c, MEMORY_IN_PARAMS);
    if (!st)
        st = memory_param(c, &id, NULL);
    if (!st)
        st = memory_in(c, &k, &in, sources, 1);
    const char *scope_names[] = {"namespace", "user_id", "agent_id", "session_id"};
    for (int i = 0; i < 4 && !st; i++)
        if (json_object_get(c->params, scope_names[i]))
            st = fail(c, MN_INVALID, "%s: a memory's scope cannot change", scope_names[i]);
    mn_memory *m = NULL;
    in.actor = "api";
    if (!st && (st = mn_memory_update(c->db, id, &in, &m)))
        st = lib_fail(c, st);
    if (!st)
        st = ok(c, json_pack("{s:o*}", "memory", memory_json(m)));
    mn_memory_free(m);
    keep_release(&k);
    return st;
}

static mn_status op_memory_delete(struct srv_call *c)
{
    static const char *const allowed[] = {"memory_id", "at", "reason", NULL};
    const char *id, *reason;
    int64_t at;
    mn_status st = only_params(c, allowed);
    if (!st && !(st = memory_param(c, &id, NULL)) && !(st = p_str(c, "reason", 0, &reason)) &&
        !(st = p_int(c, "at", 0, 0, INT64_MAX, &at)) && (st = mn_memory_delete(c->db, id, at, "api", reason)))
        st = lib_fail(c, st);
    return st ? st : ok(c, json_pack("{s:s}", "closed", id));
}

static mn_status op_memory_history(struct srv_call *c)
{
    const char *id;
    mn_memories *l = NULL;
    mn_status st = memory_param(c, &id, NULL);
    if (!st && (st = mn_memory_history(c->db, id, &l)))
        st = lib_fail(c, st);
    if (!st)
        st = ok(c, json_pack("{s:o*}", "versions", memories_json(l)));
    mn_memories_free(l);
    return st;
}

static mn_status op_forget(struct srv_call *c)
{
    const char *id;
    mn_status st = memory_param(c, &id, NULL);
    if (!st && (st = mn_memory_forget(c->db, id)))
        st = lib_fail(c, st);
    return st ? st : ok(c, json_pack("{s:s}", "forgotten", id));
}

/* ---- schemas --------------------------------------------------------------------------------- */

/* ---- the table ------------------------------------------------------------------------------- */

#define SID "\"session_id\":{\"type\":\"string\",\"description\":\"the session (continuation) id, a UUID\"}"
#define NSP "\"namespace\":{\"type\":\"string\",\"description\":\"tenant or user the sessions belong to\"}"
#define OBJ(props, req) "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req "]}"
#define MID "\"memory_id\":{\"type\":\"string\",\"description\":\"the memory's id, a UUID\"}"
#define MEM_TEXT "\"text\":{\"type\":\"string\",\"description\":\"the fact, short and self-contained\"}"
#define MEM_FIELDS                                                                                               \
    "\"kind\":{\"type\":\"string\",\"description\":\"fact, preference, instruction, event, or another a-z_ "    \
    "word\"},\"metadata\":{\"type\":\"object\"},\"sources\":{\"type\":\"array\",\"items\":{\"type\":"           \
    "\"integer\"},\"description\":\"ids of the messages it came from\"},\"pinned\":{\"type\":\"boolean\","      \
    "\"description\":\"a memory block, always in a context built with memories\"},\"token_cap\":{\"type\":"     \
    "\"integer\",\"minimum\":0},\"valid_from\":{\"type\":\"integer\",\"description\":\"when it became true (ms)"  \
    "\"},\"valid_to\":{\"type\":\"integer\",\"description\":\"when it stopped being true (ms)\"},\"reason\":{"    \
    "\"type\":\"string\",\"description\":\"why (kept in the history)\"}"
#define MEM_SCOPE                                                                                                \
    NSP ",\"user_id\":{\"type\":\"string\"},\"agent_id\":{\"type\":\"string\"},\"session_id\":{\"type\":"       \
        "\"string\"}"
#define MEM_FILTERS                                                                                              \
    "\"kind\":{\"type\":\"string\"},\"metadata\":{\"type\":\"object\",\"description\":\"scalars each memory's "  \
    "metadata must equal\"},\"as_of\":{\"type\":\"integer\",\"description\":\"what was true at this moment "     \
    "(ms)\"},\"include_closed\":{\"type\":\"boolean\"},\"pinned\":{\"type\":\"boolean\"},\"limit\":{\"type\":"  \
    "\"integer\",\"minimum\":1,\"maximum\":1000}"
#define MEMORY_R OBJ("\"memory\":{\"type\":\"object\"}", "\"memory\"")
#define MEMORIES_R OBJ("\"memories\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"memories\"")
#define SESSION_R OBJ("\"session\":{\"type\":\"object\"}", "\"session\"")
#define MSG_PROPS                                                                                               \
    "\"role\":{\"type\":\"string\",\"enum\":[\"system\",\"user\",\"assistant\",\"tool\"]},"                     \
    "\"content\":{\"type\":[\"string\",\"null\"]},"                                                             \
    "\"tool_calls\":{\"type\":\"array\",\"description\":\"assistant only: OpenAI tool calls\"},"                 \
    "\"tool_call_id\":{\"type\":\"string\",\"description\":\"required for role tool\"},"                        \
    "\"name\":{\"type\":\"string\"},\"tool_name\":{\"type\":\"string\",\"description\":\"the agent tool that "  \
    "produced it\"},\"model\":{\"type\":\"string\"},\"files\":{\"type\":\"array\",\"items\":{\"type\":"         \
    "\"string\"}},\"metadata\":{\"type\":\"object\"},\"pinned\":{\"type\":\"boolean\"},"                        \
    "\"idempotency_key\":{\"type\":\"string\",\"description\":\"a retry with the same key stores nothing new\"}"

#define CID "\"conversation_id\":{\"type\":\"string\",\"description\":\"conv_<uuid> (or the session UUID)\"}"
#define IID "\"item_id\":{\"type\":\"string\",\"description\":\"msg_<seq>, fc_<seq>, fco_<seq> or item_<seq>\"}"
#define CONV_ITEMS "\"items\":{\"type\":\"array\",\"items\":{\"type\":\"object\"},\"maxItems\":20}"
#define CONV_R                                                                                                   \
    OBJ("\"id\":{\"type\":\"string\"},\"object\":{\"const\":\"conversation\"},\"created_at\":{\"type\":"       \
        "\"integer\"},\"metadata\":{\"type\":\"object\"}",                                                          \
        "\"id\",\"object\",\"created_at\",\"metadata\"")
#define ITEM_LIST_R                                                                                              \
    OBJ("\"object\":{\"const\":\"list\"},\"data\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"       \
        "\"first_id\":{\"type\":[\"string\",\"null\"]},\"last_id\":{\"type\":[\"string\",\"null\"]},"             \
        "\"has_more\":{\"type\":\"boolean\"}",                                                                     \
        "\"object\",\"data\",\"has_more\"")

const struct srv_op srv_ops[] = {
    {"session_create", "POST", "/v1/sessions", "Create a session (a thread when tool_name or ttl_seconds is set).",
     OBJ("\"id\":{\"type\":\"string\"}," NSP ",\"title\":{\"type\":\"string\"},\"system_prompt\":{\"type\":"
         "\"string\"},\"metadata\":{\"type\":\"object\"},\"tool_name\":{\"type\":\"string\"},\"ttl_seconds\":{"
         "\"type\":\"integer\",\"description\":\"idle time before expiry; -1 never\"},\"max_turns\":{\"type\":"
         "\"integer\"}",
         ""),
     SESSION_R, OP_TOOL, op_session_create},
    {"session_list", "GET", "/v1/sessions", "List sessions, most recently updated first, a page at a time.",
     OBJ(NSP ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"default\":20},\"offset\":{"
             "\"type\":\"integer\",\"minimum\":0,\"default\":0}",
         ""),
     OBJ("\"sessions\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"has_more\":{\"type\":\"boolean\"},"
         "\"next_offset\":{\"type\":[\"integer\",\"null\"]}",
         "\"sessions\",\"has_more\""),
     OP_TOOL | OP_READONLY, op_session_list},
    {"session_resume", "GET", "/v1/resume",
     "The live session to continue: session_id when it has not expired, else the newest in the namespace.",
     OBJ(NSP "," SID, ""), SESSION_R, OP_READONLY, op_session_resume},
    {"session_get", "GET", "/v1/sessions/{session_id}", "Read one session.", OBJ(SID, "\"session_id\""), SESSION_R,
     OP_TOOL | OP_READONLY | OP_QUICK, op_session_get},
    {"session_delete", "DELETE", "/v1/sessions/{session_id}", "Delete a session and all its messages.",
     OBJ(SID, "\"session_id\""), OBJ("\"deleted\":{\"type\":\"string\"}", "\"deleted\""),
     OP_TOOL | OP_DESTRUCTIVE | OP_IDEMPOTENT, op_session_delete},
    {"session_update", "PATCH", "/v1/sessions/{session_id}", "Set a session's title and/or metadata.",
     OBJ(SID ",\"title\":{\"type\":\"string\"},\"metadata\":{\"type\":\"object\"}", "\"session_id\""), SESSION_R,
     OP_TOOL | OP_IDEMPOTENT, op_session_update},
    {"message_delete", "DELETE", "/v1/sessions/{session_id}/messages/{message_id}",
     "Delete one message of a session (the session's counts follow).",
     OBJ(SID ",\"message_id\":{\"type\":\"integer\",\"minimum\":1}", "\"session_id\",\"message_id\""),
     OBJ("\"deleted\":{\"type\":\"integer\"}", "\"deleted\""), OP_DESTRUCTIVE | OP_IDEMPOTENT, op_message_delete},
    {"summary_get", "GET", "/v1/sessions/{session_id}/summary",
     "The session's global summary: the text older turns were folded into, what it covers, who wrote it.",
     OBJ(SID, "\"session_id\""), OBJ("\"summary\":{\"type\":\"object\"}", "\"summary\""),
     OP_TOOL | OP_READONLY | OP_QUICK, op_summary_get},
    {"compact", "POST", "/v1/sessions/{session_id}/compact",
     "Summarise the session now: every message but the last few turns is folded into its global summary.",
     OBJ(SID ",\"instructions\":{\"type\":\"string\",\"maxLength\":4000,\"description\":\"what the summary "
             "must keep, like /compact <focus>\"}",
         "\"session_id\""),
     OBJ("\"event\":{\"type\":\"object\"}", "\"event\""), OP_TOOL, op_compact},
    {"events", "GET", "/v1/sessions/{session_id}/events",
     "The session's events (compactions, summariser failures, fallbacks), newest first.",
     OBJ(SID ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10000,\"default\":50}", "\"session_id\""),
     OBJ("\"events\":{\"type\":\"array\"}", "\"events\""), OP_READONLY | OP_QUICK, op_events},
    {"session_fork", "POST", "/v1/sessions/{session_id}/fork",
     "Copy a session's messages (up to upto_seq) into a new session whose parent is this one.",
     OBJ(SID ",\"upto_seq\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"0: all\"}", "\"session_id\""),
     SESSION_R, OP_TOOL, op_session_fork},
    {"append", "POST", "/v1/sessions/{session_id}/messages",
     "Append one message (role, content, …) or a batch (messages: […]) as one durable transaction.",
     OBJ(SID ",\"create\":{\"type\":\"boolean\",\"description\":\"create the session when missing\"},"
             "\"messages\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{" MSG_PROPS
             "},\"required\":[\"role\"]}}," MSG_PROPS,
         "\"session_id\""),
     OBJ("\"messages\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"messages\""), OP_TOOL, op_append},
    {"history", "GET", "/v1/sessions/{session_id}/messages",
     "A session's messages, oldest to newest, a page at a time (after + limit), or the newest (tail).",
     OBJ(SID ",\"after\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"only messages with seq > after\"},"
             "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10000,\"default\":100},\"tail\":{\"type\":"
             "\"boolean\",\"description\":\"the newest limit messages\"},\"all\":{\"type\":\"boolean\","
             "\"description\":\"also messages past the turn limit\"}",
         "\"session_id\""),
     OBJ("\"messages\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"has_more\":{\"type\":\"boolean\"},"
         "\"next_after\":{\"type\":[\"integer\",\"null\"]}",
         "\"messages\",\"has_more\""),
     OP_TOOL | OP_READONLY | OP_QUICK, op_history},
    {"context", "POST", "/v1/sessions/{session_id}/context",
     "Build the context for the session's next model call within a token budget: the messages to send and a "
     "report of what was kept and dropped and why.",
     OBJ(SID ",\"max_tokens\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000000,\"description\":\"token "
             "budget; 0: the configured default\"},\"strategy\":{\"type\":\"string\",\"description\":\"window "
             "(default: memory.strategy)\"},\"format\":{\"type\":\"string\",\"enum\":[\"openai\",\"anthropic\","
             "\"text\"],\"default\":\"openai\"},\"fold\":{\"type\":\"string\",\"enum\":[\"background\",\"sync\","
             "\"off\"],\"default\":\"background\",\"description\":\"a due fold: queued (background), run before "
             "building (sync) or skipped (off)\"},\"model_window\":{\"type\":\"integer\",\"minimum\":0,"
             "\"maximum\":100000000,\"description\":\"the model's context window; 0: context.model_window\"},"
             "\"detail\":{\"type\":\"boolean\",\"description\":\"the report lists each message's fate "
             "(kept, trimmed, offloaded, dropped)\"}",
         "\"session_id\""),
     OBJ("\"format\":{\"type\":\"string\"},\"messages\":{\"type\":\"array\"},\"system\":{},\"text\":{\"type\":"
         "\"string\"},\"report\":{\"type\":\"object\"},\"tokens\":{\"type\":\"integer\"},\"kept\":{\"type\":"
         "\"integer\"},\"dropped\":{\"type\":\"integer\"}",
         "\"format\",\"report\",\"tokens\""),
     OP_TOOL | OP_READONLY, op_context},
    {"state_get", "GET", "/v1/sessions/{session_id}/state",
     "The session's ask-user state (params, waiting_for_param, last_intent_id, last_result, plan_execution).",
     OBJ(SID ",\"reveal\":{\"type\":\"boolean\",\"description\":\"show sensitive params (REST only: refused over MCP)\"}", "\"session_id\""),
     OBJ("\"state\":{\"type\":\"object\"}", "\"state\""), OP_TOOL | OP_READONLY | OP_QUICK, op_state_get},
    {"state_merge", "POST", "/v1/sessions/{session_id}/state",
     "Merge an object into the state's params (a null value removes a key); returns the state.",
     OBJ(SID ",\"params\":{\"type\":\"object\"}", "\"session_id\",\"params\""),
     OBJ("\"state\":{\"type\":\"object\"}", "\"state\""), OP_TOOL | OP_IDEMPOTENT, op_state_merge},
    {"files", "GET", "/v1/sessions/{session_id}/files", "The unique file paths the session's messages list, newest first.",
     OBJ(SID, "\"session_id\""), OBJ("\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", "\"files\""),
     OP_TOOL | OP_READONLY | OP_QUICK, op_files},
    {"gc", "POST", "/v1/gc", "Purge expired threads.", OBJ("", ""), OBJ("\"purged\":{\"type\":\"integer\"}", "\"purged\""),
     OP_DESTRUCTIVE, op_gc},
    {"prune", "POST", "/v1/prune", "Delete sessions not updated for `days` days.",
     OBJ("\"days\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":36500}", "\"days\""),
     OBJ("\"deleted\":{\"type\":\"integer\"}", "\"deleted\""), OP_DESTRUCTIVE, op_prune},
    {"stats", "GET", "/v1/stats", "Sessions, messages, tokens and bytes on disk.", OBJ("", ""), OBJ("", ""),
     OP_READONLY, op_stats},
    {"search", "GET", "/v1/search",
     "Search stored messages by keyword (FTS5 BM25), meaning (embeddings) or both (hybrid), best first.",
     OBJ("\"q\":{\"type\":\"string\",\"description\":\"the query text\"},\"mode\":{\"type\":\"string\","
         "\"enum\":[\"auto\",\"keyword\",\"semantic\",\"hybrid\"],\"default\":\"auto\"},\"top_k\":{"
         "\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,\"default\":10}," NSP "," SID
         ",\"role\":{\"type\":\"string\",\"enum\":[\"system\",\"user\",\"assistant\",\"tool\"]}",
         "\"q\""),
     OBJ("\"mode\":{\"type\":\"string\"},\"hits\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"not_embedded\":{\"type\":\"integer\"}",
         "\"mode\",\"hits\""),
     OP_TOOL | OP_READONLY, op_search},
    {"export", "GET", "/v1/export", "Stream sessions as JSON Lines (docs/format.md); every session when ids is absent.",
     OBJ("\"ids\":{\"type\":\"string\",\"description\":\"comma-separated session ids\"}", ""), OBJ("", ""),
     OP_READONLY | OP_STREAM, op_export},
    {"import", "POST", "/v1/import", "Import an export (JSON Lines body); all or nothing, skips what is there.",
     OBJ("", ""),
     OBJ("\"sessions_added\":{\"type\":\"integer\"},\"sessions_skipped\":{\"type\":\"integer\"},"
         "\"messages_added\":{\"type\":\"integer\"},\"messages_skipped\":{\"type\":\"integer\"}",
         ""),
     OP_RAWBODY, op_import},
    /* long-term memory (docs/memory.md); the Mem0-shaped routes are in mem0.c */
    {"remember", "POST", "/v1/memory",
     "Remember a fact, preference, instruction or event beyond this conversation, with its scope and provenance.",
     OBJ(MEM_TEXT "," MEM_FIELDS "," MEM_SCOPE, "\"text\""), MEMORY_R, OP_TOOL, op_remember},
    {"recall", "GET", "/v1/memory/search",
     "Search long-term memories (keyword, semantic or hybrid) within a scope; as_of: what was true then.",
     OBJ("\"q\":{\"type\":\"string\",\"description\":\"what to look for\"},\"mode\":{\"type\":\"string\","
         "\"enum\":[\"auto\",\"keyword\",\"semantic\",\"hybrid\"],\"default\":\"auto\"}," MEM_SCOPE "," MEM_FILTERS,
         "\"q\""),
     MEMORIES_R, OP_TOOL | OP_READONLY, op_recall},
    {"memory_list", "GET", "/v1/memory", "List the memories true now (or as_of a moment), newest first.",
     OBJ(MEM_SCOPE "," MEM_FILTERS ",\"offset\":{\"type\":\"integer\",\"minimum\":0}", ""), MEMORIES_R,
     OP_READONLY, op_memory_list},
    {"memory_get", "GET", "/v1/memory/{memory_id}", "One memory's current version.", OBJ(MID, "\"memory_id\""),
     MEMORY_R, OP_READONLY, op_memory_get},
    {"update", "PATCH", "/v1/memory/{memory_id}",
     "Correct or change a memory: a new version; the previous one is closed and kept in its history.",
     OBJ(MID "," MEM_TEXT "," MEM_FIELDS, "\"memory_id\""), MEMORY_R, OP_TOOL, op_memory_update},
    {"memory_delete", "DELETE", "/v1/memory/{memory_id}",
     "Close a memory: it stops being true (at, default now) and stays in its history.",
     OBJ(MID ",\"at\":{\"type\":\"integer\",\"description\":\"ms since the epoch\"},\"reason\":{\"type\":"
             "\"string\"}",
         "\"memory_id\""),
     OBJ("\"closed\":{\"type\":\"string\"}", "\"closed\""), OP_IDEMPOTENT, op_memory_delete},
    {"memory_history", "GET", "/v1/memory/{memory_id}/history",
     "Every version of a memory, oldest first: what changed, when, by whom and why.", OBJ(MID, "\"memory_id\""),
     OBJ("\"versions\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"versions\""), OP_READONLY,
     op_memory_history},
    {"forget", "POST", "/v1/memory/{memory_id}/forget",
     "Erase a memory and its whole history, for real (erasure).", OBJ(MID, "\"memory_id\""),
     OBJ("\"forgotten\":{\"type\":\"string\"}", "\"forgotten\""), OP_TOOL | OP_DESTRUCTIVE, op_forget},
    /* OpenAI Conversations API (openai.c): conversation = session, item = message */
    {"conversation_create", "POST", "/v1/conversations",
     "OpenAI Conversations API: create a conversation (a session), with up to 20 initial items.",
     OBJ(CONV_ITEMS ",\"metadata\":{\"type\":\"object\"}", ""), CONV_R, OP_OPENAI, srv_op_conv_create},
    {"conversation_get", "GET", "/v1/conversations/{conversation_id}", "OpenAI Conversations API: a conversation.",
     OBJ(CID, "\"conversation_id\""), CONV_R, OP_OPENAI | OP_READONLY, srv_op_conv_get},
    {"conversation_update", "POST", "/v1/conversations/{conversation_id}",
     "OpenAI Conversations API: replace a conversation's metadata.",
     OBJ(CID ",\"metadata\":{\"type\":\"object\"}", "\"conversation_id\",\"metadata\""), CONV_R, OP_OPENAI,
     srv_op_conv_update},
    {"conversation_delete", "DELETE", "/v1/conversations/{conversation_id}",
     "OpenAI Conversations API: delete a conversation and its items.", OBJ(CID, "\"conversation_id\""),
     OBJ("\"id\":{\"type\":\"string\"},\"object\":{\"type\":\"string\"},\"deleted\":{\"type\":\"boolean\"}", ""),
     OP_OPENAI | OP_DESTRUCTIVE, srv_op_conv_delete},
    {"conversation_items_create", "POST", "/v1/conversations/{conversation_id}/items",
     "OpenAI Conversations API: add 1 to 20 items (message, function_call, function_call_output, others kept as "
     "they came).",
     OBJ(CID "," CONV_ITEMS, "\"conversation_id\",\"items\""), ITEM_LIST_R, OP_OPENAI, srv_op_items_create},
    {"conversation_items_list", "GET", "/v1/conversations/{conversation_id}/items",
     "OpenAI Conversations API: a page of items (limit 1-100, order asc/desc, after an item id).",
     OBJ(CID ",\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100,\"default\":20},\"order\":{"
             "\"type\":\"string\",\"enum\":[\"asc\",\"desc\"],\"default\":\"desc\"},\"after\":{\"type\":"
             "\"string\",\"description\":\"an item id\"}",
         "\"conversation_id\""),
     ITEM_LIST_R, OP_OPENAI | OP_READONLY, srv_op_items_list},
    {"conversation_item_get", "GET", "/v1/conversations/{conversation_id}/items/{item_id}",
     "OpenAI Conversations API: one item.", OBJ(CID "," IID, "\"conversation_id\",\"item_id\""),
     OBJ("\"id\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"}", "\"id\",\"type\""),
     OP_OPENAI | OP_READONLY, srv_op_item_get},
    {"conversation_item_delete", "DELETE", "/v1/conversations/{conversation_id}/items/{item_id}",
     "OpenAI Conversations API: delete one item; returns the conversation.",
     OBJ(CID "," IID, "\"conversation_id\",\"item_id\""), CONV_R, OP_OPENAI | OP_DESTRUCTIVE, srv_op_item_delete},
};
const size_t srv_nops = sizeof srv_ops / sizeof srv_ops[0];

const struct srv_op *srv_op_find(const char *name)
{
    for (size_t i = 0; i < srv_nops; i++)
        if (strcmp(srv_ops[i].name, name) == 0)
            return &srv_ops[i];
    return NULL;
}

json_t *srv_op_schema(const char *text)
{
    json_t *v = json_loads(text, 0, NULL);
    if (!v)
        return json_object();
    /* an empty "required" list is not valid in every JSON Schema draft */
    json_t *req = json_object_get(v, "required");
    if (req && json_array_size(req) == 0)
        json_object_del(v, "required");
    return v;
}

mn_status srv_call_op(const struct srv_op *op, struct srv_call *c)
{
    c->result = NULL;
    c->raw = NULL;
    c->status = MN_OK;
    c->http = 0;
    c->msg[0] = '\0';
    if (!json_is_object(c->params))
        return fail(c, MN_INVALID, "parameters must be a JSON object");
    if (op->fn(c) == MN_OK && c->raw && !c->accept_raw) {
        json_error_t jerr;
        c->result = json_loads(c->raw, 0, &jerr);
        free(c->raw);
        c->raw = NULL;
        if (!c->result)
            return fail(c, MN_NOMEM, "result: %s", jerr.text);
    }
    return c->status;
}

int srv_http_status(mn_status st)
{
    switch (st) {
    case MN_OK: return 200;
    case MN_INVALID: return 400;
    case MN_NOTFOUND: return 404;
    case MN_CONFLICT: return 409;
    case MN_EXPIRED: return 410;
    case MN_TOOBIG: return 413;
    case MN_BUSY: return 503;
    case MN_UNAVAILABLE: return 503;
    default: return 500;
    }
}
