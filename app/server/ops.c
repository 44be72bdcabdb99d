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

mn_status srv_fail(struct srv_call *c, mn_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->status = st;
    return st;
}

mn_status srv_fail_lib(struct srv_call *c, mn_status st)
{
    const char *m = mn_errmsg();
    return srv_fail(c, st, "%s", m && m[0] ? m : mn_status_str(st));
}

static mn_status forbidden(struct srv_call *c, const char *what)
{
    c->http = 403;
    return srv_fail(c, MN_INVALID, "%s: this API key is bound to namespace '%s'", what, c->ns);
}

mn_status srv_call_ns(struct srv_call *c, const char **ns)
{
    *ns = json_string_value(json_object_get(c->params, "namespace"));
    if (c->ns) {
        if (*ns && strcmp(*ns, c->ns) != 0)
            return forbidden(c, "namespace");
        *ns = c->ns;
    }
    return MN_OK;
}

/* ---- typed reads of the checked parameters ---------------------------------------------------
 * srv_params_check has run: every member of c->params is declared, of its declared type and
 * within its limits, and defaults are filled. Reading a name the operation does not declare is
 * a bug in the table, caught by the first test that runs the handler. */

static const struct srv_param *declared(struct srv_call *c, const char *name)
{
    const struct srv_param *p = srv_param_find(c->op, name);
    if (!p) {
        fprintf(stderr, "mnemo: operation %s reads undeclared parameter %s\n", c->op->name, name);
        abort();
    }
    return p;
}

/* The value, or NULL when absent. */
static json_t *a_val(struct srv_call *c, const char *name)
{
    declared(c, name);
    return json_object_get(c->params, name);
}

static const char *a_str(struct srv_call *c, const char *name)
{
    return json_string_value(a_val(c, name));
}

static int64_t a_int(struct srv_call *c, const char *name, int64_t absent)
{
    json_t *v = a_val(c, name);
    return v ? json_integer_value(v) : absent;
}

static double a_num(struct srv_call *c, const char *name, double absent)
{
    json_t *v = a_val(c, name);
    return v ? json_number_value(v) : absent;
}

/* 1 true, 0 false, absent when not given. */
static int a_bool(struct srv_call *c, const char *name, int absent)
{
    json_t *v = a_val(c, name);
    return v ? json_is_true(v) : absent;
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
        return srv_fail(c, MN_NOMEM, "out of memory");
    (void)prefix;
    return MN_OK;
}

/* A declared JSON-valued parameter passed to the library as text: a string (the declared
 * alternative form) as it is, any other value dumped; NULL when absent. */
static mn_status a_text(struct srv_call *c, struct keep *k, const char *name, const char **out)
{
    json_t *v = a_val(c, name);
    const struct srv_param *p = declared(c, name);
    *out = NULL;
    if (!v)
        return MN_OK;
    if (json_is_string(v) && p->type != PT_ANY) {
        *out = json_string_value(v);
        return MN_OK;
    }
    *out = keep(k, json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY));
    return *out ? MN_OK : srv_fail(c, MN_NOMEM, "out of memory");
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
    return from_text(t);
}

/* The session id parameter, checked against the caller's namespace (a session of another
 * namespace looks like a missing one). */
static mn_status session_param(struct srv_call *c, const char **id)
{
    *id = a_str(c, "session_id");
    if (!c->ns)
        return MN_OK;
    mn_status st;
    mn_session *s = NULL;
    /* another namespace's session is missing, expired or not (never 410 with its time) */
    if ((st = mn_session_get_in(c->db, c->ns, *id, &s)))
        return srv_fail_lib(c, st);
    mn_session_free(s);
    return MN_OK;
}

/* Takes a JSON object text the handler built (malloc'd). */
static mn_status ok_raw(struct srv_call *c, char *text)
{
    if (!text)
        return srv_fail(c, MN_NOMEM, "out of memory");
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
        return srv_fail(c, MN_NOMEM, "out of memory");
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
    o.id = a_str(c, "id");
    o.key = a_str(c, "key");
    o.ns = a_str(c, "namespace");
    o.title = a_str(c, "title");
    o.system_prompt = a_str(c, "system_prompt");
    o.tool_name = a_str(c, "tool_name");
    int64_t ttl = a_int(c, "ttl_seconds", 0), turns = a_int(c, "max_turns", 0);
    mn_status st;
    if ((st = a_text(c, &k, "metadata", &o.metadata)))
        goto out;
    if (c->ns) {
        if (o.ns && strcmp(o.ns, c->ns) != 0) {
            st = forbidden(c, "namespace");
            goto out;
        }
        o.ns = c->ns;
    }
    /* 0 or -1 given: none; absent: the thread default (the library's 0) */
    o.ttl_ms = ttl > 0 ? ttl * 1000 : a_val(c, "ttl_seconds") ? -1 : 0;
    o.max_turns = turns > 0 ? turns : a_val(c, "max_turns") ? -1 : 0;
    mn_session *s = NULL;
    if ((st = mn_session_create(c->db, &o, &s)) != MN_OK) {
        srv_fail_lib(c, st);
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
        return srv_fail_lib(c, st);
    st = session_answer(c, s);
    return st;
}

static mn_status op_session_list(struct srv_call *c)
{
    const char *ns = a_str(c, "namespace");
    int64_t limit = a_int(c, "limit", 0), offset = a_int(c, "offset", 0);
    mn_status st;
    if (c->ns) {
        if (ns && strcmp(ns, c->ns) != 0)
            return forbidden(c, "namespace");
        ns = c->ns;
    }
    /* one more than asked tells whether a next page exists; at the library's limit a second
     * read of one row does */
    mn_sessions *list = NULL, *next = NULL;
    size_t ask = limit < MN_SESSION_LIST_MAX ? (size_t)limit + 1 : (size_t)limit;
    if ((st = mn_session_list(c->db, ns, ask, (size_t)offset, &list)))
        return srv_fail_lib(c, st);
    json_t *a = json_array();
    for (size_t i = 0; i < list->count && i < (size_t)limit; i++)
        json_array_append_new(a, session_json(&list->items[i]));
    int more = list->count > (size_t)limit;
    if (ask == (size_t)limit && list->count == (size_t)limit &&
        mn_session_list(c->db, ns, 1, (size_t)(offset + limit), &next) == MN_OK)
        more = next->count > 0;
    mn_sessions_free(next);
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
        return srv_fail_lib(c, st);
    char canon[40]; /* the stored id: a UUID given in upper case is stored in lower */
    return ok(c, json_pack("{s:s}", "deleted", srv_id_lower(id, canon, sizeof canon)));
}

const char *srv_id_lower(const char *id, char *out, size_t cap)
{
    snprintf(out, cap, "%s", id);
    for (char *p = out; *p; p++)
        if (*p >= 'A' && *p <= 'F')
            *p = (char)(*p - 'A' + 'a');
    return out;
}

/* Title and/or metadata of a session (absent, or an empty title: unchanged). */
static mn_status op_session_update(struct srv_call *c)
{
    const char *id, *title = a_str(c, "title");
    mn_status st;
    struct keep k = {0};
    const char *metadata = NULL;
    if ((st = session_param(c, &id)) || (st = a_text(c, &k, "metadata", &metadata)))
        goto out;
    /* mn_session_update takes an empty title as "leave it": a title cannot be cleared, so an
     * empty one alone is refused rather than answered 200 with nothing changed */
    if ((!title || !*title) && !metadata) {
        st = srv_fail(c, MN_INVALID,
                      title ? "title: an empty title leaves the title as it is (a title cannot be cleared); give a "
                              "title or metadata"
                            : "title or metadata: give at least one");
        goto out;
    }
    if ((st = mn_session_update(c->db, id, title, metadata))) {
        st = srv_fail_lib(c, st);
        goto out;
    }
    mn_session *s = NULL;
    if ((st = mn_session_get(c->db, id, &s))) {
        st = srv_fail_lib(c, st);
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
    int64_t mid = a_int(c, "message_id", 0);
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    if ((st = mn_message_delete(c->db, id, mid)))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I}", "deleted", (json_int_t)mid));
}

/* Pins or unpins one message of a session. */
static mn_status op_message_pin(struct srv_call *c)
{
    const char *id;
    int64_t mid = a_int(c, "message_id", 0);
    int pinned = a_bool(c, "pinned", 1);
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    if ((st = mn_session_message_pin(c->db, id, mid, pinned)))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I, s:b}", "id", (json_int_t)mid, "pinned", pinned));
}

/* Changes one message's content (and metadata) in place; answers with the message as stored. */
static mn_status op_message_edit(struct srv_call *c)
{
    const char *id, *metadata = NULL;
    int64_t mid = a_int(c, "message_id", 0);
    struct keep k = {0};
    mn_status st;
    if ((st = session_param(c, &id)) || (st = a_text(c, &k, "metadata", &metadata)))
        goto out;
    mn_message *m = NULL;
    if ((st = mn_message_edit(c->db, id, mid, a_str(c, "content"), metadata, &m))) {
        st = srv_fail_lib(c, st);
        goto out;
    }
    char *t = NULL;
    st = mn_message_to_json(m, &t);
    mn_message_free(m);
    if (st) {
        st = srv_fail_lib(c, st);
        goto out;
    }
    st = ok_raw(c, concat("{\"message\":", t, "}", (char *)NULL));
    mn_free(t);
out:
    keep_release(&k);
    return st;
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
        return srv_fail_lib(c, st);
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
    mn_compact_opts o = MN_COMPACT_OPTS_INIT;
    o.instructions = a_str(c, "instructions");
    char *event = NULL;
    if ((st = mn_compact_ex(c->db, id, &o, &event))) {
        srv_fail_lib(c, st);
        mn_free(event);
        return st;
    }
    return ok(c, json_pack("{s:o}", "event", from_text(event)));
}

/* The session's events, newest first. */
static mn_status op_events(struct srv_call *c)
{
    const char *id;
    int64_t limit = a_int(c, "limit", 0);
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    char *t = NULL;
    if ((st = mn_events_json(c->db, id, (size_t)limit, &t)))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:o}", "events", from_text(t)));
}

static mn_status op_session_fork(struct srv_call *c)
{
    const char *id;
    int64_t upto = a_int(c, "upto_seq", 0);
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    mn_session *s = NULL;
    if ((st = mn_session_fork(c->db, id, upto, &s)))
        return srv_fail_lib(c, st);
    st = session_answer(c, s);
    return st;
}

static mn_status op_session_resume(struct srv_call *c)
{
    const char *ns = a_str(c, "namespace"), *id = a_str(c, "session_id");
    mn_status st;
    if (c->ns) {
        if (ns && strcmp(ns, c->ns) != 0)
            return forbidden(c, "namespace");
        ns = c->ns;
        if (id && (st = session_param(c, &id)))
            return st;
    }
    mn_session *s = NULL;
    if ((st = mn_session_resume(c->db, ns, id, &s)))
        return srv_fail_lib(c, st);
    st = session_answer(c, s);
    return st;
}

/* A message's fields are append's parameters but the call's own (session_id, create, messages),
 * in their declared order: the single form takes them as parameters, each item of messages as
 * members. */
static int msg_field(const struct srv_param *p)
{
    return strcmp(p->name, "session_id") != 0 && strcmp(p->name, "create") != 0 && strcmp(p->name, "messages") != 0;
}

/* "role, content, …": the message fields of c's operation, or with obj only those obj has.
 * Returns how many. */
static size_t msg_fields_text(const struct srv_call *c, json_t *obj, char *out, size_t cap)
{
    size_t n = 0, len = 0;
    out[0] = '\0';
    for (const struct srv_param *p = c->op->params; p->name; p++) {
        json_t *v = obj ? json_object_get(obj, p->name) : NULL;
        if (!msg_field(p) || (obj && (!v || json_is_null(v)))) /* null stands for absent, as message_in reads it */
            continue;
        int w = snprintf(out + len, cap - len, "%s%s", n++ ? ", " : "", p->name);
        if (w < 0 || (size_t)w >= cap - len)
            break; /* cut short: the message says enough */
        len += (size_t)w;
    }
    return n;
}

/* A batch item's keys: a misspelt one ("metdata", "pined") must not be dropped, its value
 * silently lost. (The single form's keys are the operation's parameters, checked already.) */
static mn_status message_keys(struct srv_call *c, json_t *obj, const char *where)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        const struct srv_param *p = srv_param_find(c->op, k);
        if (!p || !msg_field(p)) {
            char known[256];
            msg_fields_text(c, NULL, known, sizeof known);
            return srv_invalid(c, "%s%.60s: not a field of a message (its fields: %s)", where, k, known);
        }
    }
    return MN_OK;
}

/* One message object → mn_message_in (strings borrowed from obj or kept in k). */
static mn_status message_in(struct srv_call *c, struct keep *k, json_t *obj, size_t index, int many,
                            mn_message_in *m)
{
    char where[48] = "";
    if (many)
        snprintf(where, sizeof where, "messages[%zu].", index);
    if (!json_is_object(obj))
        return srv_invalid(c, "%smessage: must be an object", where);
    mn_status st;
    if (many && (st = message_keys(c, obj, where)))
        return st;
    *m = (mn_message_in)MN_MESSAGE_IN_INIT;
    static const char *const strs[] = {"role", "content", "tool_call_id", "name", "tool_name", "model",
                                       "idempotency_key"};
    const char *vals[7] = {0};
    for (size_t i = 0; i < 7; i++) {
        json_t *v = json_object_get(obj, strs[i]);
        if (!v || json_is_null(v))
            continue;
        if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
            return srv_invalid(c, "%s%s: must be a string", where, strs[i]);
        vals[i] = json_string_value(v);
    }
    if (!vals[0])
        return srv_invalid(c, "%srole: required (system, user, assistant or tool)", where);
    if (mn_role_parse(vals[0], &m->role) != MN_OK)
        return srv_invalid(c, "%srole: '%.40s' is not one of system, user, assistant, tool", where, vals[0]);
    m->content = vals[1];
    m->tool_call_id = vals[2];
    m->name = vals[3];
    m->tool_name = vals[4];
    m->model = vals[5];
    m->idempotency_key = vals[6];
    if ((st = j_text(c, k, obj, "tool_calls", where, &m->tool_calls)) ||
        (st = j_text(c, k, obj, "files", where, &m->files)) || (st = j_text(c, k, obj, "metadata", where, &m->metadata)))
        return st;
    json_t *pin = json_object_get(obj, "pinned");
    if (pin && !json_is_null(pin)) {
        if (!json_is_boolean(pin))
            return srv_invalid(c, "%spinned: must be true or false", where);
        m->pinned = json_is_true(pin);
    }
    return MN_OK;
}

/* An append is one message (role, content, … as parameters) or a batch (messages), never both:
 * the single message would be dropped unseen. Names the single form's fields that were given. */
static mn_status one_form(struct srv_call *c)
{
    char given[256];
    if (msg_fields_text(c, c->params, given, sizeof given) == 0)
        return MN_OK;
    return srv_invalid(c, "messages: does not go with the single-message form (%s): send one message or a batch, not both",
                       given);
}

/* The answer to an append: {"messages":[…]} as text (takes stored). */
static mn_status appended(struct srv_call *c, mn_messages *stored)
{
    char *arr = NULL;
    mn_status st = mn_messages_to_json(stored, 0, stored->count, &arr);
    mn_messages_free(stored);
    if (st)
        return srv_fail_lib(c, st);
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
        srv_fail(c, st, "%s", err);
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
    int create = a_bool(c, "create", 0);
    mn_status st;
    id = a_str(c, "session_id");
    /* c->ns goes with the append: the library refuses, under the session's lock, a session of
     * another namespace (404, as if missing), and makes a new one in ours (mn_append_request.ns) */
    json_t *batch = a_val(c, "messages");
    struct keep k = {0};
    mn_message_in *in = NULL;
    size_t n = 1;
    if (batch && !json_is_null(batch)) {
        if ((st = one_form(c)))
            goto out;
        if (json_array_size(batch) == 0) {
            st = srv_fail(c, MN_INVALID, "messages: must be an array of 1 to %lld message objects",
                      (long long)declared(c, "messages")->max);
            goto out;
        }
        n = json_array_size(batch);
    }
    if (!(in = calloc(n, sizeof *in))) {
        st = srv_fail(c, MN_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if ((st = message_in(c, &k, batch && !json_is_null(batch) ? json_array_get(batch, i) : c->params, i,
                             batch && !json_is_null(batch), &in[i])))
            goto out;
    mn_append_request req = {sizeof req, id, in, n, create ? MN_APPEND_CREATE : 0, c->ns};
    if (c->resume) { /* an event loop waits for us: queue the append and answer from the commit */
        struct append_wait *w = malloc(sizeof *w);
        if (w) {
            *w = (struct append_wait){c, in, k};
            c->pending = 1; /* before the submit: the committer may answer before it returns */
            if (srv_append_submit(c->db, &req, append_done, w) == 0)
                return MN_OK;
            c->pending = 0;
            free(w);
        }
    }
    mn_messages *stored = NULL;
    char err[256];
    if ((st = srv_append(c->db, &req, &stored, err))) {
        srv_fail(c, st, "%s", err);
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
    int64_t after = a_int(c, "after", 0), limit = a_int(c, "limit", 0);
    int tail = a_bool(c, "tail", 0), all = a_bool(c, "all", 0);
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.after_seq = after;
    o.limit = (size_t)limit + (tail ? 0 : 1);
    o.tail = tail;
    o.all = all;
    mn_messages *ms = NULL;
    if ((st = mn_history(c->db, id, &o, &ms)))
        return srv_fail_lib(c, st);
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
        return srv_fail_lib(c, st);
    /* rendered as text straight away: history is the hot read path */
    st = ok_raw(c, concat("{\"messages\":", arr, tail_text, (char *)NULL));
    mn_free(arr);
    return st;
}

static mn_status op_context(struct srv_call *c)
{
    const char *id, *format = a_str(c, "format"), *fold = a_str(c, "fold");
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = a_str(c, "strategy");
    o.max_tokens = a_int(c, "max_tokens", 0);
    o.model_window = a_int(c, "model_window", 0);
    o.flags = a_bool(c, "detail", 0) ? MN_CONTEXT_DETAIL : 0;
    int no_fold = a_bool(c, "no_fold", 0);
    if (no_fold && fold && strcmp(fold, "off") != 0)
        return srv_fail(c, MN_INVALID, "no_fold: the same as fold off; it does not go with fold %s", fold);
    o.fold = no_fold || (fold && strcmp(fold, "off") == 0) ? MN_CONTEXT_FOLD_OFF
             : fold && strcmp(fold, "sync") == 0          ? MN_CONTEXT_FOLD_SYNC
                                                          : MN_CONTEXT_FOLD_BACKGROUND;
    if (format)
        mn_format_parse(format, &o.format); /* one of the declared values */
    o.rag = a_bool(c, "rag", 0) ? 1 : a_bool(c, "rag", 1) ? 0 : -1; /* absent: memory.rag.enabled */
    o.rag_top_k = (size_t)a_int(c, "rag_top_k", 0);
    o.rag_min_similarity = a_num(c, "rag_min_similarity", 0);
    if (a_val(c, "rag_min_similarity") && o.rag_min_similarity == 0)
        o.rag_min_similarity = -1; /* 0 given: no threshold (the library reads 0 as "configured") */
    const char *scope = a_str(c, "rag_scope");
    o.rag_scope = !scope ? MN_RAG_SCOPE_DEFAULT : strcmp(scope, "all") == 0 ? MN_RAG_SCOPE_ALL : MN_RAG_SCOPE_SESSION;
    o.memories = a_bool(c, "memories", 0) ? 1 : a_bool(c, "memories", 1) ? 0 : -1; /* absent: memory.context.enabled */
    o.memories_top_k = (size_t)a_int(c, "memories_top_k", 0);
    mn_context *ctx = NULL;
    if ((st = mn_context_build(c->db, id, &o, &ctx)))
        return srv_fail_lib(c, st);
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
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:o*}", "state", from_text(t)));
}

static mn_status op_state_get(struct srv_call *c)
{
    const char *id;
    int reveal = a_bool(c, "reveal", 0);
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    if (reveal && c->for_model) /* a model never sees the values redaction hides */
        return srv_fail(c, MN_INVALID, "reveal: not available to MCP clients; sensitive params stay redacted");
    return state_result(c, id, reveal);
}

static mn_status op_state_merge(struct srv_call *c)
{
    const char *id;
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    char *t = json_dumps(a_val(c, "params"), JSON_COMPACT);
    if (!t)
        return srv_fail(c, MN_NOMEM, "out of memory");
    st = mn_state_merge_params(c->db, id, t);
    free(t);
    if (st)
        return srv_fail_lib(c, st);
    return state_result(c, id, 0);
}

/* The rest of seed 003's ask-user flow, named as `mnemo state ID VERB`; each answers with the
 * state it leaves behind, as the CLI prints it. */
static mn_status state_change(struct srv_call *c, mn_status (*change)(struct srv_call *c, const char *id))
{
    const char *id;
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    if ((st = change(c, id)))
        return c->status ? c->status : srv_fail_lib(c, st);
    return state_result(c, id, 0);
}

static mn_status do_wait(struct srv_call *c, const char *id)
{
    return mn_state_set_waiting(c->db, id, a_str(c, "param"));
}

static mn_status do_unwait(struct srv_call *c, const char *id)
{
    return mn_state_set_waiting(c->db, id, NULL);
}

static mn_status do_result(struct srv_call *c, const char *id)
{
    struct keep k = {0};
    const char *result;
    mn_status st = a_text(c, &k, "result", &result);
    if (!st)
        st = mn_state_set_result(c->db, id, a_str(c, "intent_id"), result);
    keep_release(&k);
    return st;
}

static mn_status do_plan(struct srv_call *c, const char *id)
{
    struct keep k = {0};
    const char *plan;
    mn_status st = a_text(c, &k, "plan", &plan);
    if (!st)
        st = mn_state_set_plan(c->db, id, plan);
    keep_release(&k);
    return st;
}

static mn_status do_clear(struct srv_call *c, const char *id)
{
    /* history too: seed 003's clear(), both in one transaction */
    return a_bool(c, "history", 0) ? mn_session_clear(c->db, id, MN_CLEAR_STATE, NULL) : mn_state_clear(c->db, id);
}

static mn_status op_state_wait(struct srv_call *c) { return state_change(c, do_wait); }
static mn_status op_state_unwait(struct srv_call *c) { return state_change(c, do_unwait); }
static mn_status op_state_result(struct srv_call *c) { return state_change(c, do_result); }
static mn_status op_state_plan(struct srv_call *c) { return state_change(c, do_plan); }
static mn_status op_state_clear(struct srv_call *c) { return state_change(c, do_clear); }

/* Seed 000's /clear: the active history leaves every context but stays stored (or comes back). */
static mn_status op_session_clear(struct srv_call *c)
{
    const char *id;
    int undo = a_bool(c, "undo", 0), state = a_bool(c, "state", 0);
    int64_t n = 0;
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    if (undo && state)
        return srv_fail(c, MN_INVALID, "undo: does not go with state (a reset state cannot come back)");
    if ((st = mn_session_clear(c->db, id, (undo ? MN_CLEAR_UNDO : 0) | (state ? MN_CLEAR_STATE : 0), &n)))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I}", undo ? "restored" : "cleared", (json_int_t)n));
}

/* Seed 003's prune(max_messages): the session's turn limit, applied at once. */
static mn_status op_session_limit(struct srv_call *c)
{
    const char *id;
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    if ((st = mn_session_set_max_turns(c->db, id, a_int(c, "max_turns", 0))))
        return srv_fail_lib(c, st);
    mn_session *s = NULL;
    if ((st = mn_session_get(c->db, id, &s)))
        return srv_fail_lib(c, st);
    return session_answer(c, s);
}

/* Seed 002's file deduplication: whether to send this file's content in the session now. */
static mn_status op_files_check(struct srv_call *c)
{
    const char *id, *path = a_str(c, "path");
    json_t *content = a_val(c, "content");
    int include = 0;
    mn_status st;
    if ((st = session_param(c, &id)))
        return st;
    if ((st = mn_file_should_include(c->db, id, path, json_string_value(content), json_string_length(content),
                                     &include)))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:s,s:b}", "path", path, "include", include));
}

static mn_status op_files(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    mn_strings *l = NULL;
    if ((st = mn_session_files_n(c->db, id, (size_t)a_int(c, "limit", 0), &l)))
        return srv_fail_lib(c, st);
    json_t *a = json_array();
    for (size_t i = 0; i < l->count; i++)
        json_array_append_new(a, json_string(l->items[i]));
    mn_strings_free(l);
    return ok(c, json_pack("{s:o}", "files", a));
}

/* Seed 002's hand-over: what the next tool needs to know about this thread. */
static mn_status op_handover(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    mn_thread_summary *t = NULL;
    if ((st = mn_thread_summary_get(c->db, id, (size_t)a_int(c, "files", 0), &t)))
        return srv_fail_lib(c, st);
    char *text = NULL;
    st = mn_thread_summary_to_json(t, &text);
    mn_thread_summary_free(t);
    if (st)
        return srv_fail_lib(c, st);
    return ok_raw(c, text);
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
    if ((st = mn_gc(c->db, &n)) || (a_bool(c, "vacuum", 0) && (st = mn_vacuum(c->db))))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I}", "purged", (json_int_t)n));
}

static mn_status op_prune(struct srv_call *c)
{
    int64_t days = a_int(c, "days", 0), n = 0;
    mn_status st;
    if ((st = global_only(c, "prune")))
        return st;
    if ((st = mn_prune(c->db, (int)days, &n)))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I}", "deleted", (json_int_t)n));
}

static mn_status op_stats(struct srv_call *c)
{
    char *t = NULL;
    mn_status st = global_only(c, "stats");
    if (st)
        return st;
    if ((st = mn_stats_json(c->db, &t)))
        return srv_fail_lib(c, st);
    return ok(c, from_text(t));
}

/* Search over stored messages (mn_search); a key bound to a namespace searches only it. */
static mn_status op_search(struct srv_call *c)
{
    const char *q = a_str(c, "q"), *mode_name = a_str(c, "mode"), *ns = a_str(c, "namespace"), *sid = NULL;
    const char *role = a_str(c, "role");
    int64_t top_k = a_int(c, "top_k", 0);
    mn_status st;
    if (a_val(c, "session_id") && (st = session_param(c, &sid)))
        return st;
    mn_search_mode mode = MN_SEARCH_AUTO;
    if (mode_name)
        mn_search_mode_parse(mode_name, &mode); /* one of the declared values */
    if (c->ns) {
        if (ns && strcmp(ns, c->ns) != 0)
            return forbidden(c, "namespace");
        ns = c->ns;
    }
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.ns = ns;
    f.session_id = sid;
    f.since = a_int(c, "since", 0);
    f.until = a_int(c, "until", 0);
    struct keep k = {0};
    if ((st = a_text(c, &k, "metadata", &f.metadata))) {
        keep_release(&k);
        return st;
    }
    if (role) {
        mn_role r = MN_ROLE_USER;
        mn_role_parse(role, &r); /* one of the declared values */
        f.role = (int)r;
    }
    mn_search_hits *hits = NULL;
    char *t = NULL;
    st = mn_search(c->db, q, mode, (size_t)top_k, &f, a_num(c, "min_similarity", 0), &hits);
    keep_release(&k);
    if (st)
        return srv_fail_lib(c, st);
    st = mn_search_hits_to_json(hits, &t);
    const char *ran = mn_search_mode_name(hits->mode);
    json_int_t not_embedded = (json_int_t)hits->not_embedded; /* queued: not findable by meaning yet */
    /* not in the keyword index yet (rebuilt in the background), and of them scanned */
    json_int_t unindexed = (json_int_t)hits->keyword_unindexed, scanned = (json_int_t)hits->keyword_scanned;
    mn_search_hits_free(hits);
    if (st)
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:s,s:o*,s:I,s:I,s:I}", "mode", ran ? ran : "keyword", "hits", from_text(t),
                           "not_embedded", not_embedded, "keyword_unindexed", unindexed, "keyword_scanned", scanned));
}

/* The export itself is streamed by the transport; this checks the parameters and returns the
 * ids to export ("ids": comma-separated list or array; none: every session). */
static mn_status op_export(struct srv_call *c)
{
    mn_status st = global_only(c, "export");
    if (st)
        return st;
    json_t *ids = json_array(), *v = a_val(c, "ids");
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        for (size_t i = 0;; i++) { /* an empty entry is refused: dropped, ",,," exported everything */
            const char *e = strchr(s, ',');
            size_t len = e ? (size_t)(e - s) : strlen(s);
            if (!len) {
                json_decref(ids);
                return srv_fail(c, MN_INVALID, "ids: entry %zu is empty (a comma-separated list of session ids)", i + 1);
            }
            json_array_append_new(ids, json_stringn(s, len));
            if (!e)
                break;
            s = e + 1;
        }
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        if (!json_array_size(v)) {
            json_decref(ids);
            return srv_fail(c, MN_INVALID, "ids: an empty list (leave ids out to export every session)");
        }
        json_array_foreach(v, i, x) {
            if (!json_is_string(x)) {
                json_decref(ids);
                return srv_fail(c, MN_INVALID, "ids[%zu]: must be a string", i);
            }
            json_array_append(ids, x);
        }
    } else if (v && !json_is_null(v)) {
        json_decref(ids);
        return srv_fail(c, MN_INVALID, "ids: must be a comma-separated string or an array of ids");
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
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I,s:I,s:I,s:I}", "sessions_added", (json_int_t)s.sessions_added, "sessions_skipped",
                           (json_int_t)s.sessions_skipped, "messages_added", (json_int_t)s.messages_added,
                           "messages_skipped", (json_int_t)s.messages_skipped));
}

/* Erases a namespace for real; a key bound to a namespace may erase only its own. */
static mn_status op_namespace_forget(struct srv_call *c)
{
    const char *ns = a_str(c, "namespace");
    if (c->ns && strcmp(ns, c->ns) != 0)
        return forbidden(c, "namespace");
    mn_forget_stats fs = {0, 0};
    mn_status st = mn_namespace_forget(c->db, ns, &fs);
    if (st)
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I,s:I}", "sessions", (json_int_t)fs.sessions, "memories", (json_int_t)fs.memories));
}


/* ---- long-term memory (docs/memory.md) ------------------------------------------------------- */

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

/* Who made a version (docs/memory.md, actor): the surface the call came through. */
static const char *memory_actor(const struct srv_call *c) { return c->for_model ? "mcp" : "api"; }

/* Fails c with the library's message, its argument's name (lib_name, as in "id: …") replaced by
 * the parameter the caller sent (memory_id, q): the error must name what the caller can fix. */
static mn_status fail_lib_as(struct srv_call *c, mn_status st, const char *lib_name, const char *param)
{
    const char *m = mn_errmsg();
    size_t n = strlen(lib_name);
    if (m && strncmp(m, lib_name, n) == 0 && m[n] == ':')
        return srv_fail(c, st, "%s%s", param, m + n);
    return srv_fail_lib(c, st);
}

/* The memory named by the path, checked against the key's namespace (another namespace's
 * memory is not found). *out may be NULL. */
static mn_status memory_param(struct srv_call *c, const char **id, mn_memory **out)
{
    mn_status st;
    *id = a_str(c, "memory_id");
    if (out)
        *out = NULL;
    if (!c->ns && !out)
        return MN_OK;
    mn_memory *m = NULL;
    /* another namespace's memory is missing, closed or not */
    if ((st = mn_memory_get_in(c->db, c->ns, *id, &m)))
        return fail_lib_as(c, st, "id", "memory_id");
    if (out)
        *out = m;
    else
        mn_memory_free(m);
    return MN_OK;
}

/* Scope and filters shared by memory_search and memory_list. */
static mn_status memory_query(struct srv_call *c, struct keep *k, mn_memory_query *q)
{
    mn_status st;
    q->ns = a_str(c, "namespace");
    q->user_id = a_str(c, "user_id");
    q->agent_id = a_str(c, "agent_id");
    q->session_id = a_str(c, "session_id");
    q->kind = a_str(c, "kind");
    if ((st = a_text(c, k, "metadata", &q->metadata)))
        return st;
    if (c->ns) {
        if (q->ns && strcmp(q->ns, c->ns) != 0)
            return forbidden(c, "namespace");
        q->ns = c->ns;
    }
    q->as_of = a_int(c, "as_of", 0);
    q->limit = (size_t)a_int(c, "limit", 0);
    q->offset = (size_t)(srv_param_find(c->op, "offset") ? a_int(c, "offset", 0) : 0);
    q->include_closed = a_bool(c, "include_closed", 0);
    json_t *pinned = json_object_get(c->params, "pinned"); /* true: blocks only; false: no blocks; absent: any */
    q->pinned = json_is_true(pinned) ? 1 : json_is_false(pinned) ? 0 : -1;
    return MN_OK;
}

/* The fields of a memory to write (memory_add, memory_update). */
static mn_status memory_in(struct srv_call *c, struct keep *k, mn_memory_in *in, int64_t *sources, int is_update)
{
    mn_status st;
    in->text = a_str(c, "text");
    in->kind = a_str(c, "kind");
    in->reason = a_str(c, "reason");
    if ((st = a_text(c, k, "metadata", &in->metadata)))
        return st;
    int64_t cap = a_int(c, "token_cap", -1);
    in->pinned = a_bool(c, "pinned", is_update ? -1 : 0);
    in->token_cap = is_update ? cap : cap < 0 ? 0 : cap;
    in->valid_from = a_int(c, "valid_from", 0);
    in->valid_to = a_int(c, "valid_to", 0);
    json_t *src = a_val(c, "sources");
    if (src) {
        for (size_t i = 0; i < json_array_size(src); i++) {
            json_t *v = json_array_get(src, i);
            if (!json_is_integer(v))
                return srv_fail(c, MN_INVALID, "sources: must be an array of message ids");
            sources[i] = json_integer_value(v);
        }
        in->sources = sources;
        in->n_sources = json_array_size(src);
    }
    return MN_OK;
}

static mn_status op_remember(struct srv_call *c)
{
    struct keep k = {0};
    int64_t sources[MN_MEMORY_MAX_SOURCES];
    mn_memory_in in = MN_MEMORY_IN_INIT;
    mn_status st = memory_in(c, &k, &in, sources, 0);
    in.ns = a_str(c, "namespace");
    in.user_id = a_str(c, "user_id");
    in.agent_id = a_str(c, "agent_id");
    in.session_id = a_str(c, "session_id");
    if (!st && c->ns && in.ns && strcmp(in.ns, c->ns) != 0)
        st = forbidden(c, "namespace");
    else if (c->ns)
        in.ns = c->ns;
    mn_memory *m = NULL;
    in.actor = memory_actor(c);
    if (!st && (st = mn_memory_add(c->db, &in, &m)))
        st = srv_fail_lib(c, st);
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
    const char *mode_name = a_str(c, "mode");
    mn_search_mode mode = MN_SEARCH_AUTO;
    if (mode_name)
        mn_search_mode_parse(mode_name, &mode); /* one of the declared values */
    mn_status st = memory_query(c, &k, &q);
    mn_memories *l = NULL;
    if (!st && (st = mn_memory_search(c->db, a_str(c, "q"), mode, &q, &l)))
        st = fail_lib_as(c, st, "query", "q");
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
    mn_status st = memory_query(c, &k, &q);
    mn_memories *l = NULL;
    if (!st && (st = mn_memory_list(c->db, &q, &l)))
        st = srv_fail_lib(c, st);
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
    mn_status st = memory_param(c, &id, NULL);
    if (!st)
        st = memory_in(c, &k, &in, sources, 1);
    mn_memory *m = NULL;
    in.actor = memory_actor(c);
    if (!st && (st = mn_memory_update(c->db, id, &in, &m)))
        st = fail_lib_as(c, st, "id", "memory_id");
    if (!st)
        st = ok(c, json_pack("{s:o*}", "memory", memory_json(m)));
    mn_memory_free(m);
    keep_release(&k);
    return st;
}

static mn_status op_memory_delete(struct srv_call *c)
{
    const char *id;
    mn_status st = memory_param(c, &id, NULL);
    if (!st && (st = mn_memory_delete(c->db, id, a_int(c, "at", 0), memory_actor(c), a_str(c, "reason"))))
        st = fail_lib_as(c, st, "id", "memory_id");
    return st ? st : ok(c, json_pack("{s:s}", "closed", id));
}

static mn_status op_memory_history(struct srv_call *c)
{
    const char *id;
    mn_memories *l = NULL;
    mn_status st = memory_param(c, &id, NULL);
    if (!st && (st = mn_memory_history(c->db, id, &l)))
        st = fail_lib_as(c, st, "id", "memory_id");
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
        st = fail_lib_as(c, st, "id", "memory_id");
    return st ? st : ok(c, json_pack("{s:s}", "forgotten", id));
}

static mn_status op_memory_extract(struct srv_call *c)
{
    const char *id;
    mn_status st = session_param(c, &id);
    if (st)
        return st;
    mn_extract_stats x;
    if ((st = mn_memory_extract(c->db, id, a_str(c, "extractor"), &x)))
        return srv_fail_lib(c, st);
    return ok(c, json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "messages", (json_int_t)x.messages, "candidates",
                           (json_int_t)x.candidates, "added", (json_int_t)x.added, "updated", (json_int_t)x.updated,
                           "invalidated", (json_int_t)x.invalidated, "unchanged", (json_int_t)x.unchanged,
                           "rejected", (json_int_t)x.rejected));
}

/* ---- the table ------------------------------------------------------------------------------- */

/* Parameter declarations: P(name, type, attributes…). */
#define P(n, t, ...) {.name = (n), .type = (t), __VA_ARGS__}
#define REQ .required = 1
#define GE(v) .has_min = 1, .min = (v)
#define LE(v) .has_max = 1, .max = (v)
#define DEF(t) .def = (t)
#define ENUM(e) .enums = (e)
#define DESC(d) .desc = (d)
#define ALT(t) .alt = (t)
#define ITEMS(t) .items = (t)
#define END {.name = NULL}

#define SREF .session = 1
#define SID_REQ P("session_id", PT_STRING, REQ, SREF, DESC("the session: its UUID, or its key"))
#define NSP P("namespace", PT_STRING, DESC("tenant or user the sessions belong to"))
#define METADATA P("metadata", PT_OBJECT, ALT(PT_STRING), DESC("a JSON object (or its text)"))
#define MID_REQ P("memory_id", PT_STRING, REQ, DESC("the memory's id, a UUID"))
#define CID_REQ P("conversation_id", PT_STRING, REQ, DESC("conv_<uuid> (or the session UUID)"))
#define IID_REQ P("item_id", PT_STRING, REQ, DESC("msg_<seq>, fc_<seq>, fco_<seq> or item_<seq>"))
#define SEARCH_MODE P("mode", PT_STRING, ENUM("auto|keyword|semantic|hybrid"), DEF("\"auto\""))
#define ROLES "system|user|assistant|agent|tool" /* agent: seed 003's name, stored as assistant */
#define MSG_ITEM                                                                                                   \
    "{\"type\":\"object\",\"properties\":{\"role\":{\"type\":\"string\",\"enum\":[\"system\",\"user\",\"agent\","\
    "\"assistant\",\"tool\"]},\"content\":{\"type\":[\"string\",\"null\"]},\"tool_calls\":{\"type\":\"array\"},"  \
    "\"tool_call_id\":{\"type\":\"string\"},\"name\":{\"type\":\"string\"},\"tool_name\":{\"type\":\"string\"},"   \
    "\"model\":{\"type\":\"string\"},\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"              \
    "\"metadata\":{\"type\":\"object\"},\"pinned\":{\"type\":\"boolean\"},\"idempotency_key\":{\"type\":"       \
    "\"string\"}},\"required\":[\"role\"]}"
#define MEM_FIELDS                                                                                                 \
    P("kind", PT_STRING, DESC("fact, preference, instruction, event, or another a-z_ word")), METADATA,          \
        P("sources", PT_ARRAY, LE(MN_MEMORY_MAX_SOURCES), ITEMS("{\"type\":\"integer\"}"),                        \
          DESC("ids of the messages it came from")),                                                              \
        P("pinned", PT_BOOLEAN, DESC("a memory block, always in a context built with memories")),                 \
        P("token_cap", PT_INTEGER, GE(0), LE(MN_MEMORY_MAX_TOKEN_CAP)),                                           \
        P("valid_from", PT_INTEGER, GE(0), DESC("when it became true (ms)")),                                     \
        P("valid_to", PT_INTEGER, GE(0), DESC("when it stopped being true (ms)")),                                \
        P("reason", PT_STRING, DESC("why (kept in the history)"))
#define MEM_SCOPE NSP, P("user_id", PT_STRING), P("agent_id", PT_STRING), P("session_id", PT_STRING)
#define MEM_FILTERS(deflimit)                                                                                      \
    P("kind", PT_STRING), P("metadata", PT_OBJECT, ALT(PT_STRING), DESC("scalars each memory's metadata must equal")), \
        P("as_of", PT_INTEGER, GE(0), DESC("what was true at this moment (ms)")),                                \
        P("include_closed", PT_BOOLEAN), P("pinned", PT_BOOLEAN),                                                 \
        P("limit", PT_INTEGER, GE(1), LE(1000), DEF(deflimit))

static const struct srv_param p_session_create[] = {
    P("id", PT_STRING, DESC("the session id to use (a UUID); absent: a new one")),
    P("key", PT_STRING, LE(256), DESC("your own name for the session (any string but a UUID), unique in its namespace")),
    NSP, P("title", PT_STRING),
    P("system_prompt", PT_STRING), METADATA, P("tool_name", PT_STRING, DESC("the agent tool (makes it a thread)")),
    P("ttl_seconds", PT_INTEGER, GE(-1), LE(31622400),
      DESC("idle time before expiry; 0 or -1: never; absent: threads.ttl_seconds for a thread")),
    P("max_turns", PT_INTEGER, GE(-1), LE(1000000),
      DESC("turns kept active (a message, or a tool call with its results); 0 or -1: no limit; absent: threads.max_turns for a thread")), END};
static const struct srv_param p_session_list[] = {
    NSP, P("limit", PT_INTEGER, GE(1), LE(MN_SESSION_LIST_MAX), DEF("20")),
    P("offset", PT_INTEGER, GE(0), LE(100000000), DEF("0")), END};
static const struct srv_param p_session_resume[] = {
    NSP, P("session_id", PT_STRING, SREF, DESC("the session to continue when it has not expired")), END};
static const struct srv_param p_session[] = {SID_REQ, END};
static const struct srv_param p_session_update[] = {SID_REQ, P("title", PT_STRING), METADATA, END};
static const struct srv_param p_session_clear[] = {
    SID_REQ, P("undo", PT_BOOLEAN, DESC("bring the cleared messages back instead")),
    P("state", PT_BOOLEAN, DESC("also reset the session state")), END};
static const struct srv_param p_session_limit[] = {
    SID_REQ, P("max_turns", PT_INTEGER, REQ, GE(0), LE(1000000), DESC("turns kept active (a message, or a tool call with its results); 0: no limit")), END};
#define MSGID_REQ P("message_id", PT_INTEGER, REQ, GE(1), DESC("the message's id (history shows it)"))
static const struct srv_param p_message_delete[] = {SID_REQ, MSGID_REQ, END};
static const struct srv_param p_message_pin[] = {
    SID_REQ, MSGID_REQ, P("pinned", PT_BOOLEAN, DEF("true"), DESC("false: unpin")), END};
static const struct srv_param p_message_edit[] = {
    SID_REQ, MSGID_REQ, P("content", PT_STRING, REQ, DESC("the new content (memory.max_message_bytes)")),
    P("metadata", PT_OBJECT, ALT(PT_STRING), DESC("a JSON object that replaces the message's metadata")), END};
static const struct srv_param p_compact[] = {
    SID_REQ, P("instructions", PT_STRING, LE(4000), DESC("what the summary must keep, like /compact <focus>")), END};
static const struct srv_param p_events[] = {SID_REQ, P("limit", PT_INTEGER, GE(1), LE(10000), DEF("50")), END};
static const struct srv_param p_session_fork[] = {SID_REQ, P("upto_seq", PT_INTEGER, GE(0), DESC("0: all")), END};
static const struct srv_param p_append[] = {
    SID_REQ, P("create", PT_BOOLEAN, DESC("create the session when missing")),
    P("messages", PT_ARRAY, GE(1), LE(100000), ITEMS(MSG_ITEM), DESC("a batch, stored as one transaction")),
    P("role", PT_STRING, ENUM(ROLES)), P("content", PT_STRING),
    P("tool_calls", PT_ARRAY, ALT(PT_STRING), DESC("assistant only: OpenAI tool calls")),
    P("tool_call_id", PT_STRING, DESC("required for role tool")), P("name", PT_STRING),
    P("tool_name", PT_STRING, DESC("the agent tool that produced it")), P("model", PT_STRING),
    P("files", PT_ARRAY, ALT(PT_STRING), ITEMS("{\"type\":\"string\"}")), METADATA, P("pinned", PT_BOOLEAN),
    P("idempotency_key", PT_STRING, DESC("a retry with the same key stores nothing new")), END};
static const struct srv_param p_history[] = {
    SID_REQ, P("after", PT_INTEGER, GE(0), DESC("only messages with seq > after")),
    P("limit", PT_INTEGER, GE(1), LE(10000), DEF("100")), P("tail", PT_BOOLEAN, DESC("the newest limit messages")),
    P("all", PT_BOOLEAN, DESC("also messages past the turn limit")), END};
static const struct srv_param p_context[] = {
    SID_REQ,
    P("max_tokens", PT_INTEGER, GE(0), LE(100000000), DESC("token budget; 0: the configured default")),
    P("strategy", PT_STRING, DESC("window, summary, chunked or hybrid (the library checks the name); default: "
                                  "memory.strategy")),
    P("format", PT_STRING, ENUM("openai|anthropic|text"), DEF("\"openai\"")),
    P("fold", PT_STRING, ENUM("background|sync|off"),
      DESC("a due fold: queued (background, the default), run before building (sync) or skipped (off)")),
    P("no_fold", PT_BOOLEAN, DESC("the same as fold off: use the stored summary as it is")),
    P("model_window", PT_INTEGER, GE(1), LE(100000000),
      DESC("the model's context window: the report's pre-flight check, the token trigger; absent: "
           "context.model_window")),
    P("detail", PT_BOOLEAN, DESC("the report lists each message's fate (kept, trimmed, offloaded, dropped)")),
    P("rag", PT_BOOLEAN, DESC("send past messages relevant to the current turn's user message when the history "
                              "does not all fit (false: never; absent: memory.rag.enabled, on by default)")),
    P("rag_top_k", PT_INTEGER, GE(1), LE(100), DESC("at most this many (default memory.rag.top_k, 40)")),
    P("rag_scope", PT_STRING, ENUM("session|all"),
      DESC("this session or its namespace (default memory.rag.scope, session)")),
    P("rag_min_similarity", PT_NUMBER, GE(-1), LE(1),
      DESC("semantic threshold (default memory.rag.min_similarity, 0.7; 0 or less: none)")),
    P("memories", PT_BOOLEAN, DESC("long-term memories after the system prompt: the memory blocks and the memories "
                                   "relevant to the last user message (false: never; absent: memory.context.enabled)")),
    P("memories_top_k", PT_INTEGER, GE(1), LE(50),
      DESC("at most this many relevant memories (default memory.context.top_k, 5)")),
    END};
static const struct srv_param p_state_get[] = {
    SID_REQ, P("reveal", PT_BOOLEAN, DESC("show sensitive params (REST only: refused over MCP)")), END};
static const struct srv_param p_state_merge[] = {
    SID_REQ, P("params", PT_OBJECT, REQ, DESC("merged into the params; a null value removes a key")), END};
static const struct srv_param p_state_wait[] = {
    SID_REQ, P("param", PT_STRING, REQ, DESC("the parameter the flow waits for")), END};
static const struct srv_param p_state_result[] = {
    SID_REQ, P("intent_id", PT_STRING, REQ, DESC("the intent that ran")),
    P("result", PT_ANY, DESC("its result, any JSON value (absent: unchanged)")), END};
static const struct srv_param p_state_plan[] = {
    SID_REQ, P("plan", PT_ANY, DESC("the plan being executed, any JSON value (absent: cleared)")), END};
static const struct srv_param p_state_clear[] = {
    SID_REQ, P("history", PT_BOOLEAN, DESC("also clear the active history, in the same transaction")), END};
static const struct srv_param p_files_check[] = {
    SID_REQ, P("path", PT_STRING, REQ, DESC("the file's path")),
    P("content", PT_STRING, REQ, DESC("the content about to be sent")), END};
static const struct srv_param p_files[] = {
    SID_REQ, P("limit", PT_INTEGER, GE(1), LE(1000000), DESC("only the newest limit paths; absent: all")), END};
static const struct srv_param p_handover[] = {
    SID_REQ, P("files", PT_INTEGER, GE(0), LE(1000000), DESC("list at most the newest files paths; 0 or absent: all")),
    END};
static const struct srv_param p_namespace_forget[] = {
    P("namespace", PT_STRING, REQ, DESC("the namespace to erase, every session and memory of it")), END};
static const struct srv_param p_none[] = {END};
static const struct srv_param p_gc[] = {
    P("vacuum", PT_BOOLEAN,
      DESC("then reclaim deleted rows' space now (VACUUM; PostgreSQL keeps their text until one)")),
    END};
static const struct srv_param p_prune[] = {P("days", PT_INTEGER, REQ, GE(1), LE(36500)), END};
static const struct srv_param p_search[] = {
    P("q", PT_STRING, REQ, DESC("the query text")), SEARCH_MODE,
    P("top_k", PT_INTEGER, GE(1), LE(1000), DEF("10")), NSP,
    P("session_id", PT_STRING, SREF, DESC("only this session")), P("role", PT_STRING, ENUM(ROLES)),
    P("since", PT_INTEGER, GE(0), DESC("only messages created at or after this time (ms since the epoch)")),
    P("until", PT_INTEGER, GE(0), DESC("only messages created before this time (ms since the epoch)")),
    P("min_similarity", PT_NUMBER, GE(-1), LE(1), DESC("drop semantic candidates below this (0: keep all)")),
    P("metadata", PT_OBJECT, ALT(PT_STRING),
      DESC("only messages whose metadata has each key of this object (scalars, at most 16) with an equal value")),
    END};
static const struct srv_param p_export[] = {
    P("ids", PT_STRING, ALT(PT_ARRAY), DESC("comma-separated session ids (or an array); absent: every session")),
    END};
static const struct srv_param p_remember[] = {
    P("text", PT_STRING, REQ, DESC("the fact, short and self-contained")), MEM_FIELDS, MEM_SCOPE, END};
static const struct srv_param p_recall[] = {
    P("q", PT_STRING, REQ, DESC("what to look for")), SEARCH_MODE, MEM_SCOPE, MEM_FILTERS("10"), END};
static const struct srv_param p_memory_list[] = {
    MEM_SCOPE, MEM_FILTERS("100"), P("offset", PT_INTEGER, GE(0), LE(100000000)), END};
static const struct srv_param p_memory[] = {MID_REQ, END};
static const struct srv_param p_memory_extract[] = {
    SID_REQ, P("extractor", PT_STRING, ENUM("offline|llm"),
               DESC("default: the session's memory_scope.extract, else memory.extract (offline when off)")),
    END};
static const struct srv_param p_memory_extract_queue[] = {
    SID_REQ, P("data", PT_OBJECT, DESC("a JSON object kept with the job, at most 4096 bytes (ids, not message text)")),
    END};
static const struct srv_param p_memory_extract_job[] = {P("job_id", PT_STRING, REQ, DESC("the job's id, a UUID")), END};
static const struct srv_param p_memory_update[] = {
    MID_REQ, P("text", PT_STRING, DESC("the fact, short and self-contained")), MEM_FIELDS, END};
static const struct srv_param p_memory_delete[] = {
    MID_REQ, P("at", PT_INTEGER, GE(0), DESC("ms since the epoch")), P("reason", PT_STRING), END};
/* include: what OpenAI adds to the items it returns (ResponseIncludable). mnemo returns an item as it
 * was stored, whatever it holds, so it changes nothing; it is declared so that the openai SDK's
 * requests pass, and a value the API does not document is still refused. */
#define INCLUDE                                                                                                 \
    P("include", PT_ARRAY,                                                                                      \
      ENUM("file_search_call.results|web_search_call.results|web_search_call.action.sources|"                   \
           "message.input_image.image_url|computer_call_output.output.image_url|code_interpreter_call.outputs|" \
           "reasoning.encrypted_content|message.output_text.logprobs"),                                         \
      DESC("accepted, changes nothing: items come back as stored (in a query: include[]=..., repeated)"))
static const struct srv_param p_conv_create[] = {
    P("items", PT_ARRAY, LE(20), ITEMS("{\"type\":\"object\"}")),
    P("metadata", PT_OBJECT, DESC("at most 16 pairs of string values (OpenAI's limits)")),
    P("idempotency_key", PT_STRING, DESC("the Idempotency-Key header")), END};
static const struct srv_param p_conv[] = {CID_REQ, END};
static const struct srv_param p_conv_update[] = {CID_REQ, P("metadata", PT_OBJECT, REQ), END};
static const struct srv_param p_items_create[] = {
    CID_REQ, P("items", PT_ARRAY, REQ, LE(20), ITEMS("{\"type\":\"object\"}")),
    P("idempotency_key", PT_STRING, DESC("the Idempotency-Key header")), INCLUDE, END};
static const struct srv_param p_items_list[] = {
    CID_REQ, P("limit", PT_INTEGER, GE(1), LE(100), DEF("20")), P("order", PT_STRING, ENUM("asc|desc"), DEF("\"desc\"")),
    P("after", PT_STRING, DESC("an item id")), INCLUDE, END};
static const struct srv_param p_item_get[] = {CID_REQ, IID_REQ, INCLUDE, END};
static const struct srv_param p_item[] = {CID_REQ, IID_REQ, END};
/* Mem0-shaped routes (mem0.c): Mem0's names, so that its client's requests pass as they are. */
#define M0_ENTITY                                                                                                \
    P("user_id", PT_STRING, LE(256)), P("agent_id", PT_STRING, LE(256)),                                        \
        P("app_id", PT_STRING, LE(128), DESC("the namespace")),                                                 \
        P("run_id", PT_STRING, LE(256), DESC("the memory's session_id"))
#define M0_FILTERS                                                                                               \
    P("filters", PT_OBJECT,                                                                                      \
      DESC("Mem0's filters: AND, OR, NOT of conditions on user_id, agent_id, app_id, run_id, categories, "      \
           "created_at, updated_at, metadata, keywords, memory_ids (docs/memory.md)"))
#define M0_MID P("memory_id", PT_STRING, REQ, DESC("the memory's id"))
static const struct srv_param p_m0_none[] = {END};
static const struct srv_param p_m0_add[] = {
    P("messages", PT_ARRAY, REQ, GE(1), LE(100), ITEMS("{\"type\":\"object\"}"), DESC("{role, content} turns")),
    M0_ENTITY, P("metadata", PT_OBJECT), P("infer", PT_BOOLEAN, DEF("true"), DESC("false: each message as it is")),
    P("timestamp", PT_INTEGER, GE(0), LE(253402300799), DESC("infer false: true since (s since the epoch)")),
    P("async_mode", PT_BOOLEAN, DEF("false"),
      DESC("true: answer {event_id, status} once the messages are stored; the extraction runs in the background")),
    END};
static const struct srv_param p_m0_memory[] = {M0_MID, END};
static const struct srv_param p_m0_event[] = {P("event_id", PT_STRING, REQ, DESC("the event's id (a UUID)")), END};
mn_status srv_op_mem0_event(struct srv_call *c); /* mem0.c */
static const struct srv_param p_m0_update[] = {
    M0_MID, P("text", PT_STRING), P("metadata", PT_OBJECT),
    P("timestamp", PT_INTEGER, GE(0), LE(253402300799), DESC("true since (s since the epoch)")), END};
static const struct srv_param p_m0_delete_all[] = {M0_ENTITY, END};
static const struct srv_param p_m0_list[] = {M0_FILTERS, P("page", PT_INTEGER, GE(1), LE(1000000), DEF("1")),
                                             P("page_size", PT_INTEGER, GE(1), LE(1000), DEF("100")), END};
/* graph checkpoints: a thread as the framework names it, resolved by the library in the namespace */
#define THREAD(...) P("thread_id", PT_STRING, LE(256), __VA_ARGS__)
#define CP_NS P("checkpoint_ns", PT_STRING, LE(256), DESC("the subgraph's namespace (default \"\": the root graph)"))
#define CP_ID(...) P("checkpoint_id", PT_STRING, LE(256), __VA_ARGS__)
#define CP_NSP P("namespace", PT_STRING, DESC("the namespace of the thread's session (default: the API key's, else default)"))
static const struct srv_param p_cp_put[] = {
    THREAD(REQ, DESC("the thread: a session's UUID or key; one naming nothing makes the session")), CP_NS,
    CP_ID(REQ, DESC("the checkpoint's id")), P("parent_checkpoint_id", PT_STRING, LE(256), DESC("the one before it")),
    P("type", PT_STRING, REQ, LE(64), DESC("the serializer's type tag")),
    P("checkpoint", PT_STRING, REQ, DESC("the serialized checkpoint (base64 for bytes)")),
    P("metadata", PT_OBJECT, DESC("the checkpoint's metadata (default {})")), CP_NSP, END};
static const struct srv_param p_cp_writes[] = {
    THREAD(REQ, DESC("the thread")), CP_NS, CP_ID(REQ, DESC("the checkpoint the writes belong to")),
    P("writes", PT_ARRAY, REQ, GE(1), LE(10000),
      ITEMS("{\"type\":\"object\",\"properties\":{\"task_id\":{\"type\":\"string\"},\"task_path\":{\"type\":"
            "\"string\"},\"idx\":{\"type\":\"integer\"},\"channel\":{\"type\":\"string\"},\"type\":{\"type\":"
            "\"string\"},\"value\":{\"type\":\"string\"}},\"required\":[\"task_id\",\"idx\",\"channel\",\"type\","
            "\"value\"]}"),
      DESC("{task_id, task_path, idx, channel, type, value}: idx >= 0 is written once, idx < 0 replaced")),
    CP_NSP, END};
static const struct srv_param p_cp_get[] = {
    THREAD(REQ, DESC("the thread")), CP_NS, CP_ID(DESC("the checkpoint (default: the thread's newest)")), CP_NSP, END};
static const struct srv_param p_cp_list[] = {
    THREAD(DESC("the thread (default: every thread of the namespace)")),
    P("checkpoint_ns", PT_STRING, LE(256), DESC("only this subgraph's (default: any)")),
    CP_ID(DESC("only this checkpoint")), P("before", PT_STRING, LE(256), DESC("only ids that sort below this one")),
    P("filter", PT_OBJECT, DESC("metadata keys and the JSON values they must equal")),
    P("limit", PT_INTEGER, GE(1), LE(10000), DESC("at most this many (default: all)")), CP_NSP, END};
static const struct srv_param p_cp_delete[] = {THREAD(REQ, DESC("the thread")), CP_NSP, END};
/* documents: LangGraph's store; a path is labels joined by '.' */
#define DOC_PATH(...) P("path", PT_STRING, GE(1), LE(MN_DOCUMENT_MAX_PATH), __VA_ARGS__)
#define DOC_KEY P("key", PT_STRING, REQ, GE(1), LE(MN_DOCUMENT_MAX_KEY), DESC("the document's key in its path"))
#define DOC_NSP P("namespace", PT_STRING, DESC("the documents' namespace (default: the API key's, else default)"))
#define DOC_PAGE(deflimit)                                                                                      \
    P("limit", PT_INTEGER, GE(1), LE(1000), DEF(deflimit)), P("offset", PT_INTEGER, GE(0), LE(100000), DEF("0"))
#define DOC_REFRESH P("refresh_ttl", PT_BOOLEAN, DEF("true"), DESC("restart the time to live of what is read"))
static const struct srv_param p_doc_put[] = {
    DOC_PATH(REQ, DESC("labels joined by '.': users.alice.prefs")), DOC_KEY,
    P("value", PT_OBJECT, REQ, DESC("the document, a JSON object")),
    P("index", PT_ARRAY, ALT(PT_BOOLEAN), LE(MN_DOCUMENT_MAX_FIELDS), ITEMS("{\"type\":\"string\"}"),
      DESC("field paths to embed (default: the whole value); false: none")),
    P("ttl_ms", PT_INTEGER, GE(0), LE(MN_DOCUMENT_MAX_TTL_MS), DESC("gone this long after its last write or read (0: never)")),
    DOC_NSP, END};
static const struct srv_param p_doc_get[] = {DOC_PATH(REQ, DESC("the document's path")), DOC_KEY, DOC_REFRESH,
                                             DOC_NSP, END};
static const struct srv_param p_doc_delete[] = {DOC_PATH(REQ, DESC("the document's path")), DOC_KEY, DOC_NSP, END};
static const struct srv_param p_doc_search[] = {
    P("prefix", PT_STRING, LE(MN_DOCUMENT_MAX_PATH), DESC("this path and those below it (default: every path)")),
    P("filter", PT_OBJECT, DESC("value keys and the JSON values they must equal, or {$eq,$ne,$gt,$gte,$lt,$lte,$in,$nin}")),
    P("query", PT_STRING, GE(1), LE(MN_DOCUMENT_MAX_VALUE), DESC("rank by meaning against this text (needs an embedder)")),
    DOC_PAGE("10"), DOC_REFRESH, DOC_NSP, END};
static const struct srv_param p_doc_paths[] = {
    P("prefix", PT_STRING, LE(MN_DOCUMENT_MAX_PATH), DESC("paths whose first labels are these (* matches any label)")),
    P("suffix", PT_STRING, LE(MN_DOCUMENT_MAX_PATH), DESC("paths whose last labels are these (* matches any label)")),
    P("max_depth", PT_INTEGER, GE(1), LE(MN_DOCUMENT_MAX_PATH), DESC("cut paths to this many labels")),
    DOC_PAGE("100"), DOC_NSP, END};
static const struct srv_param p_m0_entities[] = {P("page", PT_INTEGER, GE(1), LE(1000000), DEF("1")),
                                                 P("page_size", PT_INTEGER, GE(1), LE(1000), DEF("100")), END};
static const struct srv_param p_m0_entity[] = {
    P("entity_type", PT_STRING, REQ, ENUM("user|agent|app|run"), DESC("app: the namespace")),
    P("entity_id", PT_STRING, REQ, LE(256), DESC("the user, agent, namespace or run id")), END};
static const struct srv_param p_m0_batch_update[] = {
    P("memories", PT_ARRAY, REQ, GE(1), LE(1000), ITEMS("{\"type\":\"object\"}"), DESC("{memory_id, text} items")),
    END};
/* a list of objects: a DELETE carries it in a JSON body (srv_param_in), as Mem0's client sends it */
static const struct srv_param p_m0_batch_delete[] = {
    P("memories", PT_ARRAY, REQ, LE(1000), ITEMS("{\"type\":\"object\"}"), DESC("1 to 1000 {memory_id} items")),
    END};
static const struct srv_param p_m0_search[] = {
    P("query", PT_STRING, REQ), M0_FILTERS, P("top_k", PT_INTEGER, GE(1), LE(100), DEF("10")),
    P("threshold", PT_NUMBER, GE(0), LE(1000000), DESC("drop hits scored below it")),
    P("keyword_search", PT_BOOLEAN, DESC("true: keyword only")), P("rerank", PT_BOOLEAN, DESC("only false")),
    P("output_format", PT_STRING, ENUM("v1.1"), DESC("Mem0's answer shape")), END};

/* Result schemas (JSON text). */
#define OBJ(props, req) "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" req "]}"
#define M0_OBJ_R "{\"type\":\"object\"}"
#define M0_LIST_R "{\"type\":\"array\",\"items\":{\"type\":\"object\"}}"
#define M0_ADD_R "{\"type\":[\"array\",\"object\"],\"items\":{\"type\":\"object\"}}" /* async_mode: an object */
/* an extraction job (jobs.c) */
#define JOB_R                                                                                                      \
    OBJ("\"id\":{\"type\":\"string\"},\"session_id\":{\"type\":\"string\"},\"namespace\":{\"type\":"           \
        "\"string\"},\"data\":{\"type\":\"object\"},\"state\":{\"type\":\"string\",\"enum\":[\"pending\","     \
        "\"running\",\"done\",\"failed\"]},\"error\":{\"type\":[\"string\",\"null\"]},\"upto_seq\":{\"type\":"   \
        "\"integer\"},\"queued_at\":{\"type\":\"integer\"},\"finished_at\":{\"type\":[\"integer\",\"null\"]}",  \
        "\"id\",\"session_id\",\"namespace\",\"data\",\"state\",\"error\",\"upto_seq\",\"queued_at\","          \
        "\"finished_at\"")
#define MEMORY_R OBJ("\"memory\":{\"type\":\"object\"}", "\"memory\"")
#define MEMORIES_R OBJ("\"memories\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"memories\"")
#define SESSION_R OBJ("\"session\":{\"type\":\"object\"}", "\"session\"")
#define STATE_R OBJ("\"state\":{\"type\":\"object\"}", "\"state\"")
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
     p_session_create, SESSION_R, OP_TOOL, op_session_create},
    {"session_list", "GET", "/v1/sessions", "List sessions, most recently updated first, a page at a time.",
     p_session_list,
     OBJ("\"sessions\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"has_more\":{\"type\":\"boolean\"},"
         "\"next_offset\":{\"type\":[\"integer\",\"null\"]}",
         "\"sessions\",\"has_more\""),
     OP_TOOL | OP_READONLY, op_session_list},
    {"session_resume", "GET", "/v1/resume",
     "The session to continue: session_id when given (an expired or missing one is an error), else the newest live "
     "session in the namespace.",
     p_session_resume, SESSION_R, OP_TOOL | OP_READONLY, op_session_resume},
    {"session_get", "GET", "/v1/sessions/{session_id}", "Read one session.", p_session, SESSION_R,
     OP_TOOL | OP_READONLY | OP_QUICK, op_session_get},
    {"session_delete", "DELETE", "/v1/sessions/{session_id}", "Delete a session and all its messages.", p_session,
     OBJ("\"deleted\":{\"type\":\"string\"}", "\"deleted\""), OP_TOOL | OP_DESTRUCTIVE | OP_IDEMPOTENT,
     op_session_delete},
    {"session_update", "PATCH", "/v1/sessions/{session_id}", "Set a session's title and/or metadata.",
     p_session_update, SESSION_R, OP_TOOL | OP_IDEMPOTENT, op_session_update},
    {"session_clear", "POST", "/v1/sessions/{session_id}/clear",
     "Clear the session's active history (out of every context, still stored and searchable), or bring it back "
     "(undo).",
     p_session_clear,
     OBJ("\"cleared\":{\"type\":\"integer\"},\"restored\":{\"type\":\"integer\"}", ""), OP_TOOL, op_session_clear},
    {"session_set_max_turns", "POST", "/v1/sessions/{session_id}/limit",
     "Set the session's turn limit (max_turns) and apply it at once: older turns leave the active history.",
     p_session_limit, SESSION_R, OP_TOOL | OP_IDEMPOTENT, op_session_limit},
    {"message_delete", "DELETE", "/v1/sessions/{session_id}/messages/{message_id}",
     "Delete one message of a session (the session's counts follow).", p_message_delete,
     OBJ("\"deleted\":{\"type\":\"integer\"}", "\"deleted\""), OP_TOOL | OP_DESTRUCTIVE | OP_IDEMPOTENT,
     op_message_delete},
    {"message_edit", "PATCH", "/v1/sessions/{session_id}/messages/{message_id}",
     "Change one message's content (and metadata) in place: tokens, search index and the summaries that folded it "
     "follow.",
     p_message_edit, OBJ("\"message\":{\"type\":\"object\"}", "\"message\""), OP_TOOL | OP_IDEMPOTENT,
     op_message_edit},
    {"message_pin", "POST", "/v1/sessions/{session_id}/messages/{message_id}/pin",
     "Pin (or unpin) one message of a session: the hybrid strategy keeps pinned messages verbatim whatever their age.",
     p_message_pin, OBJ("\"id\":{\"type\":\"integer\"},\"pinned\":{\"type\":\"boolean\"}", "\"id\",\"pinned\""),
     OP_TOOL | OP_IDEMPOTENT, op_message_pin},
    {"summary_get", "GET", "/v1/sessions/{session_id}/summary",
     "The session's global summary: the text older turns were folded into, what it covers, who wrote it.",
     p_session, OBJ("\"summary\":{\"type\":\"object\"}", "\"summary\""), OP_TOOL | OP_READONLY | OP_QUICK,
     op_summary_get},
    {"compact", "POST", "/v1/sessions/{session_id}/compact",
     "Summarise the session now: every message but the last few turns is folded into its global summary.",
     p_compact, OBJ("\"event\":{\"type\":\"object\"}", "\"event\""), OP_TOOL, op_compact},
    {"events", "GET", "/v1/sessions/{session_id}/events",
     "The session's events (compactions, summariser failures, fallbacks), newest first.", p_events,
     OBJ("\"events\":{\"type\":\"array\"}", "\"events\""), OP_READONLY | OP_QUICK, op_events},
    {"session_fork", "POST", "/v1/sessions/{session_id}/fork",
     "Copy a session's messages (up to upto_seq) into a new session whose parent is this one.", p_session_fork,
     SESSION_R, OP_TOOL, op_session_fork},
    {"append", "POST", "/v1/sessions/{session_id}/messages",
     "Append one message (role, content, …) or a batch (messages: […]) as one durable transaction.", p_append,
     OBJ("\"messages\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"messages\""), OP_TOOL, op_append},
    {"history", "GET", "/v1/sessions/{session_id}/messages",
     "A session's messages, oldest to newest, a page at a time (after + limit), or the newest (tail).", p_history,
     OBJ("\"messages\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"has_more\":{\"type\":\"boolean\"},"
         "\"next_after\":{\"type\":[\"integer\",\"null\"]}",
         "\"messages\",\"has_more\""),
     OP_TOOL | OP_READONLY | OP_QUICK, op_history},
    {"context_build", "POST", "/v1/sessions/{session_id}/context",
     "Build the context for the session's next model call within a token budget: the messages to send and a "
     "report of what was kept and dropped and why.",
     p_context,
     OBJ("\"format\":{\"type\":\"string\"},\"messages\":{\"type\":\"array\"},\"system\":{},\"text\":{\"type\":"
         "\"string\"},\"report\":{\"type\":\"object\"},\"tokens\":{\"type\":\"integer\"},\"kept\":{\"type\":"
         "\"integer\"},\"dropped\":{\"type\":\"integer\"}",
         "\"format\",\"report\",\"tokens\""),
     OP_TOOL | OP_READONLY, op_context},
    {"state_get", "GET", "/v1/sessions/{session_id}/state",
     "The session's ask-user state (params, waiting_for_param, last_intent_id, last_result, plan_execution).",
     p_state_get, STATE_R, OP_TOOL | OP_READONLY | OP_QUICK, op_state_get},
    {"state_merge_params", "POST", "/v1/sessions/{session_id}/state",
     "Merge an object into the state's params (a null value removes a key); returns the state.", p_state_merge,
     STATE_R, OP_TOOL | OP_IDEMPOTENT, op_state_merge},
    {"state_set_waiting", "POST", "/v1/sessions/{session_id}/state/wait",
     "Set the parameter the flow waits for (cleared when it arrives in params); returns the state.", p_state_wait,
     STATE_R, OP_TOOL | OP_IDEMPOTENT, op_state_wait},
    {"state_unwait", "POST", "/v1/sessions/{session_id}/state/unwait",
     "Stop waiting for a parameter; returns the state.", p_session, STATE_R, OP_TOOL | OP_IDEMPOTENT,
     op_state_unwait},
    {"state_set_result", "POST", "/v1/sessions/{session_id}/state/result",
     "Record the last intent and its result; returns the state.", p_state_result, STATE_R,
     OP_TOOL | OP_IDEMPOTENT, op_state_result},
    {"state_set_plan", "POST", "/v1/sessions/{session_id}/state/plan",
     "Store the plan being executed, for resumption (absent: cleared); returns the state.", p_state_plan, STATE_R,
     OP_TOOL | OP_IDEMPOTENT, op_state_plan},
    {"state_clear", "POST", "/v1/sessions/{session_id}/state/clear",
     "Reset the state to its empty form (history: also clear the active history); returns the state.",
     p_state_clear, STATE_R, OP_TOOL | OP_DESTRUCTIVE | OP_IDEMPOTENT, op_state_clear},
    {"session_files", "GET", "/v1/sessions/{session_id}/files", "The unique file paths the session's messages list, newest first.",
     p_files, OBJ("\"files\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", "\"files\""),
     OP_TOOL | OP_READONLY | OP_QUICK, op_files},
    {"thread_summary_get", "GET", "/v1/sessions/{session_id}/handover",
     "The thread summary for the next tool: id, start, tool, turns, tools used and files, also as Markdown.",
     p_handover,
     OBJ("\"thread_id\":{\"type\":\"string\"},\"namespace\":{\"type\":\"string\"},\"title\":{\"type\":"
         "[\"string\",\"null\"]},\"tool\":{\"type\":[\"string\",\"null\"]},\"started\":{\"type\":\"integer\"},"
         "\"updated_at\":{\"type\":\"integer\"},\"expires_at\":{\"type\":[\"integer\",\"null\"]},\"turns\":{"
         "\"type\":\"integer\"},\"messages\":{\"type\":\"integer\"},\"tokens\":{\"type\":\"integer\"},"
         "\"tools_used\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},\"files\":{\"type\":\"array\","
         "\"items\":{\"type\":\"string\"}},\"text\":{\"type\":\"string\"}",
         "\"thread_id\",\"started\",\"turns\",\"tools_used\",\"files\",\"text\""),
     OP_TOOL | OP_READONLY, op_handover},
    {"file_should_include", "POST", "/v1/sessions/{session_id}/files/check",
     "Whether to send a file's content in this session: true the first time this path has this content, false "
     "after (recorded).",
     p_files_check, OBJ("\"path\":{\"type\":\"string\"},\"include\":{\"type\":\"boolean\"}", "\"path\",\"include\""),
     OP_TOOL, op_files_check},
    {"gc", "POST", "/v1/gc", "Purge expired threads.", p_gc, OBJ("\"purged\":{\"type\":\"integer\"}", "\"purged\""),
     OP_DESTRUCTIVE, op_gc},
    {"prune", "POST", "/v1/prune", "Delete sessions not updated for `days` days.", p_prune,
     OBJ("\"deleted\":{\"type\":\"integer\"}", "\"deleted\""), OP_DESTRUCTIVE, op_prune},
    {"stats", "GET", "/v1/stats", "Sessions, messages, tokens and bytes on disk.", p_none, OBJ("", ""), OP_READONLY,
     op_stats},
    {"search", "GET", "/v1/search",
     "Search stored messages by keyword (FTS5 BM25), meaning (embeddings) or both (hybrid), best first.", p_search,
     OBJ("\"mode\":{\"type\":\"string\"},\"hits\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},\"not_embedded\":{\"type\":\"integer\"},"
         "\"keyword_unindexed\":{\"type\":\"integer\"},\"keyword_scanned\":{\"type\":\"integer\"}",
         "\"mode\",\"hits\""),
     OP_TOOL | OP_READONLY, op_search},
    {"export", "GET", "/v1/export", "Stream sessions as JSON Lines (docs/format.md); every session when ids is absent.",
     p_export, OBJ("", ""), OP_READONLY | OP_STREAM, op_export},
    {"import", "POST", "/v1/import", "Import an export (JSON Lines body); all or nothing, skips what is there.", p_none,
     OBJ("\"sessions_added\":{\"type\":\"integer\"},\"sessions_skipped\":{\"type\":\"integer\"},"
         "\"messages_added\":{\"type\":\"integer\"},\"messages_skipped\":{\"type\":\"integer\"}",
         ""),
     OP_RAWBODY, op_import},
    {"namespace_forget", "DELETE", "/v1/namespaces/{namespace}",
     "Erase every session, message, summary, state, vector and memory of a namespace, for real (no undo).",
     p_namespace_forget,
     OBJ("\"sessions\":{\"type\":\"integer\"},\"memories\":{\"type\":\"integer\"}", "\"sessions\",\"memories\""),
     OP_TOOL | OP_DESTRUCTIVE | OP_IDEMPOTENT, op_namespace_forget},
    /* long-term memory (docs/memory.md) */
    {"memory_add", "POST", "/v1/memory",
     "Remember a fact, preference, instruction or event beyond this conversation, with its scope and provenance.",
     p_remember, MEMORY_R, OP_TOOL, op_remember},
    {"memory_search", "GET", "/v1/memory/search",
     "Search long-term memories (keyword, semantic or hybrid) within a scope; as_of: what was true then.", p_recall,
     MEMORIES_R, OP_TOOL | OP_READONLY, op_recall},
    {"memory_list", "GET", "/v1/memory", "List the memories true now (or as_of a moment), newest first.",
     p_memory_list, MEMORIES_R, OP_READONLY, op_memory_list},
    {"memory_get", "GET", "/v1/memory/{memory_id}", "One memory's current version.", p_memory, MEMORY_R, OP_READONLY,
     op_memory_get},
    {"memory_update", "PATCH", "/v1/memory/{memory_id}",
     "Correct or change a memory: a new version; the previous one is closed and kept in its history.",
     p_memory_update, MEMORY_R, OP_TOOL, op_memory_update},
    {"memory_delete", "DELETE", "/v1/memory/{memory_id}",
     "Close a memory: it stops being true (at, default now) and stays in its history.", p_memory_delete,
     OBJ("\"closed\":{\"type\":\"string\"}", "\"closed\""), OP_IDEMPOTENT, op_memory_delete},
    {"memory_history", "GET", "/v1/memory/{memory_id}/history",
     "Every version of a memory, oldest first: what changed, when, by whom and why.", p_memory,
     OBJ("\"versions\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"versions\""), OP_READONLY,
     op_memory_history},
    {"memory_forget", "POST", "/v1/memory/{memory_id}/forget", "Erase a memory and its whole history, for real (erasure).",
     p_memory, OBJ("\"forgotten\":{\"type\":\"string\"}", "\"forgotten\""), OP_TOOL | OP_DESTRUCTIVE, op_forget},
    {"memory_extract", "POST", "/v1/sessions/{session_id}/memory/extract",
     "Extract memories from a session's turns not read before (explicit statements offline, or the llm extractor).",
     p_memory_extract,
     OBJ("\"messages\":{\"type\":\"integer\"},\"candidates\":{\"type\":\"integer\"},\"added\":{\"type\":"
         "\"integer\"},\"updated\":{\"type\":\"integer\"},\"invalidated\":{\"type\":\"integer\"},"
         "\"unchanged\":{\"type\":\"integer\"},\"rejected\":{\"type\":\"integer\"}",
         "\"messages\",\"added\",\"updated\",\"unchanged\""),
     OP_IDEMPOTENT, op_memory_extract},
    {"memory_extract_queue", "POST", "/v1/sessions/{session_id}/memory/extract/jobs",
     "Queue an extraction of a session's turns up to now on the background worker; returns the job.",
     p_memory_extract_queue, JOB_R, OP_TOOL, srv_op_memory_extract_queue},
    {"memory_extract_job", "GET", "/v1/memory/jobs/{job_id}",
     "An extraction job: pending, running, done or failed (a run lost with its process is queued again).",
     p_memory_extract_job, JOB_R, OP_TOOL | OP_READONLY | OP_QUICK, srv_op_memory_extract_job},
    /* OpenAI Conversations API (openai.c): conversation = session, item = message */
    {"conversation_create", "POST", "/v1/conversations",
     "OpenAI Conversations API: create a conversation (a session), with up to 20 initial items.", p_conv_create,
     CONV_R, OP_OPENAI, srv_op_conv_create},
    {"conversation_get", "GET", "/v1/conversations/{conversation_id}", "OpenAI Conversations API: a conversation.",
     p_conv, CONV_R, OP_OPENAI | OP_READONLY, srv_op_conv_get},
    {"conversation_update", "POST", "/v1/conversations/{conversation_id}",
     "OpenAI Conversations API: replace a conversation's metadata.", p_conv_update, CONV_R, OP_OPENAI,
     srv_op_conv_update},
    {"conversation_delete", "DELETE", "/v1/conversations/{conversation_id}",
     "OpenAI Conversations API: delete a conversation and its items.", p_conv,
     OBJ("\"id\":{\"type\":\"string\"},\"object\":{\"type\":\"string\"},\"deleted\":{\"type\":\"boolean\"}", ""),
     OP_OPENAI | OP_DESTRUCTIVE, srv_op_conv_delete},
    {"conversation_items_create", "POST", "/v1/conversations/{conversation_id}/items",
     "OpenAI Conversations API: add 1 to 20 items (message, function_call, function_call_output, others kept as "
     "they came).",
     p_items_create, ITEM_LIST_R, OP_OPENAI, srv_op_items_create},
    {"conversation_items_list", "GET", "/v1/conversations/{conversation_id}/items",
     "OpenAI Conversations API: a page of items (limit 1-100, order asc/desc, after an item id).", p_items_list,
     ITEM_LIST_R, OP_OPENAI | OP_READONLY, srv_op_items_list},
    {"conversation_item_get", "GET", "/v1/conversations/{conversation_id}/items/{item_id}",
     "OpenAI Conversations API: one item.", p_item_get,
     OBJ("\"id\":{\"type\":\"string\"},\"type\":{\"type\":\"string\"}", "\"id\",\"type\""), OP_OPENAI | OP_READONLY,
     srv_op_item_get},
    {"conversation_item_delete", "DELETE", "/v1/conversations/{conversation_id}/items/{item_id}",
     "OpenAI Conversations API: delete one item; returns the conversation.", p_item, CONV_R,
     OP_OPENAI | OP_DESTRUCTIVE, srv_op_item_delete},
    /* Mem0-shaped routes (mem0.c): the mem0ai MemoryClient pointed at this server */
    {"mem0_ping", "GET", "/v1/ping", "Mem0 API: the client's key check.", p_m0_none, M0_OBJ_R,
     OP_READONLY | OP_QUICK, srv_op_mem0_ping},
    {"mem0_add", "POST", "/v3/memories/add",
     "Mem0 API: keep the messages and the memories the extractor finds in them (infer false: each as it is; "
     "async_mode: the extraction queued, its event answered).",
     p_m0_add, M0_ADD_R, 0, srv_op_mem0_add},
    {"checkpoint_put", "POST", "/v1/checkpoints",
     "Save a graph checkpoint (LangGraph) of a thread, making the thread's session on its first.", p_cp_put,
     OBJ("\"thread_id\":{\"type\":\"string\"},\"checkpoint_ns\":{\"type\":\"string\"},\"checkpoint_id\":{\"type\":"
         "\"string\"}",
         "\"thread_id\",\"checkpoint_ns\",\"checkpoint_id\""),
     OP_TOOL | OP_IDEMPOTENT, srv_op_checkpoint_put},
    {"checkpoint_put_writes", "POST", "/v1/checkpoints/writes",
     "Save a task's pending writes for a checkpoint (before or after it is saved).", p_cp_writes,
     OBJ("\"stored\":{\"type\":\"integer\"}", "\"stored\""), OP_TOOL | OP_IDEMPOTENT, srv_op_checkpoint_put_writes},
    {"checkpoint_get", "GET", "/v1/checkpoints/latest",
     "A thread's checkpoint with its pending writes: the one named, else the newest.", p_cp_get,
     OBJ("\"checkpoint\":{\"type\":\"object\"}", "\"checkpoint\""), OP_TOOL | OP_READONLY | OP_QUICK,
     srv_op_checkpoint_get},
    {"checkpoint_list", "POST", "/v1/checkpoints/list",
     "Checkpoints with their pending writes, newest first, by thread, subgraph, metadata and before.", p_cp_list,
     OBJ("\"checkpoints\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"checkpoints\""),
     OP_TOOL | OP_READONLY, srv_op_checkpoint_list},
    {"checkpoint_delete_thread", "DELETE", "/v1/checkpoints",
     "Delete a thread's checkpoints and pending writes (its session and messages stay).", p_cp_delete,
     OBJ("\"deleted\":{\"type\":\"integer\"}", "\"deleted\""), OP_TOOL | OP_IDEMPOTENT,
     srv_op_checkpoint_delete_thread},
    {"document_put", "PUT", "/v1/documents",
     "Write a JSON document at a path and key (LangGraph's store), replacing the one there.", p_doc_put,
     OBJ("\"document\":{\"type\":\"object\"}", "\"document\""), OP_TOOL | OP_IDEMPOTENT, srv_op_document_put},
    {"document_get", "GET", "/v1/documents/item", "One document by path and key.", p_doc_get,
     OBJ("\"document\":{\"type\":\"object\"}", "\"document\""), OP_TOOL | OP_READONLY | OP_QUICK,
     srv_op_document_get},
    {"document_delete", "DELETE", "/v1/documents", "Delete one document by path and key.", p_doc_delete,
     OBJ("\"deleted\":{\"type\":\"integer\"}", "\"deleted\""), OP_TOOL | OP_DESTRUCTIVE | OP_IDEMPOTENT,
     srv_op_document_delete},
    {"document_search", "POST", "/v1/documents/search",
     "Documents under a path prefix, filtered by value, newest first or ranked by meaning against a query.",
     p_doc_search, OBJ("\"documents\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}}", "\"documents\""),
     OP_TOOL | OP_READONLY, srv_op_document_search},
    {"document_paths", "POST", "/v1/documents/paths",
     "The paths holding documents (LangGraph's listNamespaces), by prefix, suffix and depth.", p_doc_paths,
     OBJ("\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", "\"paths\""), OP_TOOL | OP_READONLY,
     srv_op_document_paths},
    {"mem0_event", "GET", "/v1/event/{event_id}", "Mem0 API: an async add's event: PENDING, RUNNING, SUCCEEDED or FAILED.",
     p_m0_event, M0_OBJ_R, OP_READONLY, srv_op_mem0_event},
    {"mem0_list", "POST", "/v3/memories", "Mem0 API: a page of the memories true now within the filters.", p_m0_list,
     M0_OBJ_R, OP_READONLY, srv_op_mem0_list},
    {"mem0_search", "POST", "/v3/memories/search", "Mem0 API: memories ranked against a query within the filters.",
     p_m0_search, M0_OBJ_R, OP_READONLY, srv_op_mem0_search},
    {"mem0_get", "GET", "/v1/memories/{memory_id}", "Mem0 API: one memory true now.", p_m0_memory, M0_OBJ_R,
     OP_READONLY, srv_op_mem0_get},
    {"mem0_update", "PUT", "/v1/memories/{memory_id}", "Mem0 API: a new version of a memory.", p_m0_update, M0_OBJ_R,
     0, srv_op_mem0_update},
    {"mem0_delete", "DELETE", "/v1/memories/{memory_id}", "Mem0 API: close a memory (its history stays).",
     p_m0_memory, M0_OBJ_R, OP_IDEMPOTENT, srv_op_mem0_delete},
    {"mem0_delete_all", "DELETE", "/v1/memories", "Mem0 API: close every memory of a scope.", p_m0_delete_all,
     M0_OBJ_R, OP_IDEMPOTENT, srv_op_mem0_delete_all},
    {"mem0_history", "GET", "/v1/memories/{memory_id}/history", "Mem0 API: every version of a memory, oldest first.",
     p_m0_memory, M0_LIST_R, OP_READONLY, srv_op_mem0_history},
    {"mem0_entities", "GET", "/v1/entities", "Mem0 API: the users, agents and runs that have memories, a page at a time.",
     p_m0_entities, M0_OBJ_R, OP_READONLY, srv_op_mem0_entities},
    {"mem0_entity_delete", "DELETE", "/v2/entities/{entity_type}/{entity_id}",
     "Mem0 API: close every memory of a user, agent, app or run (as delete-all).", p_m0_entity, M0_OBJ_R,
     OP_IDEMPOTENT, srv_op_mem0_entity_delete},
    {"mem0_batch_update", "PUT", "/v1/batch", "Mem0 API: new text for up to 1000 memories, all checked first.",
     p_m0_batch_update, M0_OBJ_R, 0, srv_op_mem0_batch_update},
    {"mem0_batch_delete", "DELETE", "/v1/batch", "Mem0 API: close up to 1000 memories, all checked first.",
     p_m0_batch_delete, M0_OBJ_R, 0, srv_op_mem0_batch_delete},
};
const size_t srv_nops = sizeof srv_ops / sizeof srv_ops[0];

/* The names operations had before each got one name on every surface, the C function's
 * (docs/names.md): REST and MCP still accept them; tools/list and /openapi.json's operationId
 * give the table's name, /openapi.json the old ones as x-mnemo-aliases. */
const struct srv_op_alias srv_op_aliases[] = {
    {"session_limit", "session_set_max_turns"},
    {"context", "context_build"},
    {"state_merge", "state_merge_params"},
    {"state_wait", "state_set_waiting"},
    {"state_result", "state_set_result"},
    {"state_plan", "state_set_plan"},
    {"files", "session_files"},
    {"handover", "thread_summary_get"},
    {"files_check", "file_should_include"},
    {"remember", "memory_add"},
    {"recall", "memory_search"},
    {"update", "memory_update"},
    {"forget", "memory_forget"},
    {NULL, NULL},
};

static const struct srv_op *op_named(const char *name)
{
    for (size_t i = 0; i < srv_nops; i++)
        if (strcmp(srv_ops[i].name, name) == 0)
            return &srv_ops[i];
    return NULL;
}

const struct srv_op *srv_op_find(const char *name)
{
    const struct srv_op *op = op_named(name);
    for (const struct srv_op_alias *a = srv_op_aliases; !op && a->alias; a++)
        if (strcmp(a->alias, name) == 0)
            op = op_named(a->name);
    return op;
}

json_t *srv_op_alias_list(const struct srv_op *op)
{
    json_t *a = json_array();
    for (const struct srv_op_alias *al = srv_op_aliases; al->alias; al++)
        if (strcmp(al->name, op->name) == 0)
            json_array_append_new(a, json_string(al->alias));
    return a;
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

/* Session parameters given as keys become the session's UUID, looked up in the caller's
 * namespace (its API key's, else the request's `namespace`, else "default"), so that handlers
 * and the library see ids only. A key that names no session is 404 — except for an append that
 * may create: the library makes the session under that key in the caller's namespace. */
static mn_status session_refs(struct srv_call *c)
{
    for (const struct srv_param *p = c->op->params; p && p->name; p++) {
        const char *ref = p->session ? json_string_value(json_object_get(c->params, p->name)) : NULL;
        char id[37];
        if (!ref)
            continue;
        const char *ns = c->ns ? c->ns : srv_param_find(c->op, "namespace") ? a_str(c, "namespace") : NULL;
        mn_status st = mn_session_resolve(c->db, ns, ref, id);
        if (st == MN_NOTFOUND && srv_param_find(c->op, "create") && a_bool(c, "create", 0))
            continue;
        if (st)
            return srv_fail(c, st, "%s: %s", p->name, mn_errmsg());
        if (strcmp(id, ref) != 0 && json_object_set_new(c->params, p->name, json_string(id)))
            return srv_fail(c, MN_NOMEM, "out of memory");
    }
    return MN_OK;
}

mn_status srv_call_op(const struct srv_op *op, struct srv_call *c)
{
    c->result = NULL;
    c->raw = NULL;
    c->status = MN_OK;
    c->http = 0;
    c->msg[0] = '\0';
    c->op = op;
    c->invalid_params = 0;
    if (!json_is_object(c->params)) {
        c->invalid_params = 1;
        return srv_fail(c, MN_INVALID, "parameters must be a JSON object");
    }
    if (srv_params_check(c) || session_refs(c))
        return c->status;
    mn_status st = op->fn(c);
    if (c->pending) /* the committer owns c now: it fills result or status, then resumes */
        return MN_OK;
    if (st == MN_OK && c->raw && !c->accept_raw) {
        json_error_t jerr;
        c->result = json_loads(c->raw, 0, &jerr);
        free(c->raw);
        c->raw = NULL;
        if (!c->result)
            return srv_fail(c, MN_NOMEM, "result: %s", jerr.text);
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
