/*
 * openai.c — the OpenAI Conversations API over mnemo sessions (docs/http-api.md, "OpenAI
 * Conversations API"): a conversation is a session ("conv_" + its UUID), an item is a message
 * ("msg_" / "fc_" / "fco_" / "item_" + its seq in the session). Items of type message map to
 * mnemo messages (role, text content); function_call to an assistant message with tool_calls,
 * function_call_output to a tool message; every item is also kept as it came (normalised, without
 * its id) in the message metadata under "openai_item", and returned from there, whole: so no
 * handler reads `include` (declared in ops.c, its values checked by params.c), which could only add
 * what an item already holds. Handlers of the operation table (ops.c), flagged OP_OPENAI: answers
 * and errors take OpenAI's shapes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

#define ITEM_KEY "openai_item"

/* "conv_<uuid>" or a bare UUID → the session id (in buf). The caller's namespace is checked
 * first, by the library as on the native routes (mn_session_get_in): another namespace's
 * conversation, expired or not, is not found, never 410 with its time. */
static mn_status conv_param(struct srv_call *c, char *buf, size_t cap, mn_session **out)
{
    json_t *v = json_object_get(c->params, "conversation_id");
    const char *s = json_string_value(v);
    if (!s)
        return srv_fail(c, MN_INVALID, "conversation_id: required");
    if (strncmp(s, "conv_", 5) == 0)
        s += 5;
    snprintf(buf, cap, "%s", s);
    mn_session *sess = NULL;
    mn_status st = mn_session_get_in(c->db, c->ns, buf, &sess);
    if (st == MN_INVALID || st == MN_NOTFOUND)
        return srv_fail(c, MN_NOTFOUND, "conversation %.80s not found", json_string_value(v));
    if (st)
        return srv_fail_lib(c, st);
    if (out)
        *out = sess;
    else
        mn_session_free(sess);
    return MN_OK;
}

static json_t *conversation_json(const mn_session *s)
{
    char id[80];
    snprintf(id, sizeof id, "conv_%s", s->id);
    json_t *meta = json_loads(s->metadata ? s->metadata : "{}", 0, NULL);
    return json_pack("{s:s,s:s,s:I,s:o}", "id", id, "object", "conversation", "created_at",
                     (json_int_t)(s->created_at / 1000), "metadata", meta ? meta : json_object());
}

static const char *or_empty(const char *s) { return s ? s : ""; }
static const char *or_default(const char *s, const char *d) { return s ? s : d; }

static const char *item_prefix(const char *type)
{
    if (strcmp(type, "message") == 0)
        return "msg";
    if (strcmp(type, "function_call") == 0)
        return "fc";
    if (strcmp(type, "function_call_output") == 0)
        return "fco";
    return "item";
}

/* A stored message as a Conversations item. */
static json_t *item_json(const mn_message *m)
{
    json_t *meta = m->metadata ? json_loads(m->metadata, 0, NULL) : NULL;
    json_t *item = json_object_get(meta, ITEM_KEY);
    if (json_is_object(item)) {
        item = json_deep_copy(item);
    } else if (m->role == MN_ROLE_ASSISTANT && m->tool_calls && !m->content) {
        /* a native assistant message with tool calls: its first call */
        json_t *calls = json_loads(m->tool_calls, 0, NULL), *call = json_array_get(calls, 0);
        json_t *fn = json_object_get(call, "function");
        item = json_pack("{s:s,s:s,s:s,s:s,s:s}", "type", "function_call", "call_id",
                         or_empty(json_string_value(json_object_get(call, "id"))), "name",
                         or_empty(json_string_value(json_object_get(fn, "name"))), "arguments",
                         or_default(json_string_value(json_object_get(fn, "arguments")), "{}"), "status", "completed");
        json_decref(calls);
    } else if (m->role == MN_ROLE_TOOL) {
        item = json_pack("{s:s,s:s,s:s,s:s}", "type", "function_call_output", "call_id",
                         m->tool_call_id ? m->tool_call_id : "", "output", m->content ? m->content : "", "status",
                         "completed");
    } else {
        int out = m->role == MN_ROLE_ASSISTANT;
        json_t *part = json_pack("{s:s,s:s}", "type", out ? "output_text" : "input_text", "text",
                                 m->content ? m->content : "");
        if (out)
            json_object_set_new(part, "annotations", json_array());
        item = json_pack("{s:s,s:s,s:s,s:[o]}", "type", "message", "status", "completed", "role",
                         mn_role_name(m->role), "content", part);
    }
    json_decref(meta);
    if (!item)
        return NULL;
    const char *type = json_string_value(json_object_get(item, "type"));
    char id[48];
    snprintf(id, sizeof id, "%s_%lld", item_prefix(type ? type : ""), (long long)m->seq);
    json_object_set_new(item, "id", json_string(id));
    return item;
}

/* Text of a message item's content parts (input_text, output_text, text, refusal). */
static char *parts_text(json_t *parts)
{
    size_t total = 1, i;
    json_t *p;
    json_array_foreach(parts, i, p) {
        const char *t = json_string_value(json_object_get(p, "text"));
        if (!t)
            t = json_string_value(json_object_get(p, "refusal"));
        if (t)
            total += strlen(t);
    }
    char *out = malloc(total), *w = out;
    if (!out)
        return NULL;
    json_array_foreach(parts, i, p) {
        const char *t = json_string_value(json_object_get(p, "text"));
        if (!t)
            t = json_string_value(json_object_get(p, "refusal"));
        if (t) {
            size_t n = strlen(t);
            memcpy(w, t, n);
            w += n;
        }
    }
    *w = '\0';
    return out;
}

/* Strings made while converting items, freed with the call. */
struct owned {
    char **p;
    size_t n;
};

static const char *own(struct owned *o, char *s)
{
    char **np = s ? realloc(o->p, (o->n + 1) * sizeof *np) : NULL;
    if (!np) {
        free(s);
        return NULL;
    }
    o->p = np;
    return o->p[o->n++] = s;
}

static void owned_release(struct owned *o)
{
    for (size_t i = 0; i < o->n; i++)
        free(o->p[i]);
    free(o->p);
}

static const char *req_str(json_t *item, const char *name)
{
    const char *s = json_string_value(json_object_get(item, name));
    return s && strlen(s) == json_string_length(json_object_get(item, name)) ? s : NULL;
}

/* One input item → an mn_message_in (strings in o). idem: the request's key, or NULL. */
static mn_status item_in(struct srv_call *c, struct owned *o, json_t *item, size_t i, const char *idem,
                         mn_message_in *m)
{
    *m = (mn_message_in)MN_MESSAGE_IN_INIT;
    if (!json_is_object(item))
        return srv_fail(c, MN_INVALID, "items[%zu]: must be an object", i);
    json_t *norm = json_deep_copy(item);
    if (!norm)
        return srv_fail(c, MN_NOMEM, "out of memory");
    json_object_del(norm, "id");
    const char *type = req_str(item, "type");
    if (!json_object_get(item, "type")) {
        type = "message";
        json_object_set_new(norm, "type", json_string("message"));
    } else if (!type) {
        json_decref(norm);
        return srv_fail(c, MN_INVALID, "items[%zu].type: must be a string", i);
    }
    mn_status st = MN_OK;
    if (strcmp(type, "message") == 0) {
        const char *role = req_str(item, "role");
        if (!role || (strcmp(role, "user") && strcmp(role, "assistant") && strcmp(role, "system") &&
                      strcmp(role, "developer"))) {
            st = srv_fail(c, MN_INVALID, "items[%zu].role: must be user, assistant, system or developer", i);
            goto out;
        }
        m->role = strcmp(role, "user") == 0 ? MN_ROLE_USER : strcmp(role, "assistant") == 0 ? MN_ROLE_ASSISTANT
                                                                                              : MN_ROLE_SYSTEM;
        json_t *content = json_object_get(item, "content");
        if (json_is_string(content)) {
            json_t *part = json_pack("{s:s,s:O}", "type", m->role == MN_ROLE_ASSISTANT ? "output_text" : "input_text",
                                     "text", content);
            if (m->role == MN_ROLE_ASSISTANT)
                json_object_set_new(part, "annotations", json_array());
            json_object_set_new(norm, "content", json_pack("[o]", part));
        } else if (!json_is_array(content)) {
            st = srv_fail(c, MN_INVALID, "items[%zu].content: must be a string or an array of content parts", i);
            goto out;
        } else {
            size_t j;
            json_t *p;
            json_array_foreach(content, j, p) {
                if (!json_is_object(p) || !json_is_string(json_object_get(p, "type"))) {
                    st = srv_fail(c, MN_INVALID, "items[%zu].content[%zu]: must be an object with a type", i, j);
                    goto out;
                }
            }
        }
        if (!json_object_get(norm, "status"))
            json_object_set_new(norm, "status", json_string("completed"));
        m->content = own(o, parts_text(json_object_get(norm, "content")));
        if (!m->content) {
            st = srv_fail(c, MN_NOMEM, "out of memory");
            goto out;
        }
    } else if (strcmp(type, "function_call") == 0) {
        const char *call = req_str(item, "call_id"), *name = req_str(item, "name"),
                   *args = req_str(item, "arguments");
        if (!call || !*call || !name || !*name || !args) {
            st = srv_fail(c, MN_INVALID, "items[%zu]: a function_call needs call_id, name and arguments (strings)", i);
            goto out;
        }
        m->role = MN_ROLE_ASSISTANT;
        json_t *tc = json_pack("[{s:s,s:s,s:{s:s,s:s}}]", "id", call, "type", "function", "function", "name", name,
                               "arguments", args);
        m->tool_calls = own(o, tc ? json_dumps(tc, JSON_COMPACT) : NULL);
        json_decref(tc);
        if (!m->tool_calls) {
            st = srv_fail(c, MN_NOMEM, "out of memory");
            goto out;
        }
    } else if (strcmp(type, "function_call_output") == 0) {
        const char *call = req_str(item, "call_id");
        json_t *output = json_object_get(item, "output");
        if (!call || !*call || !output) {
            st = srv_fail(c, MN_INVALID, "items[%zu]: a function_call_output needs call_id and output", i);
            goto out;
        }
        m->role = MN_ROLE_TOOL;
        m->tool_call_id = call;
        m->content = json_is_string(output) ? json_string_value(output)
                                            : own(o, json_is_array(output) ? parts_text(output)
                                                                           : json_dumps(output, JSON_ENCODE_ANY));
        if (!m->content) {
            st = srv_fail(c, MN_NOMEM, "out of memory");
            goto out;
        }
    } else { /* reasoning, web_search_call, …: kept as they came, no text in the context */
        m->role = MN_ROLE_ASSISTANT;
        m->content = "";
    }
    json_t *meta = json_pack("{s:O}", ITEM_KEY, norm);
    m->metadata = own(o, meta ? json_dumps(meta, JSON_COMPACT) : NULL);
    json_decref(meta);
    if (!m->metadata) {
        st = srv_fail(c, MN_NOMEM, "out of memory");
        goto out;
    }
    if (idem) {
        char key[240];
        snprintf(key, sizeof key, "%.190s#%zu", idem, i);
        m->idempotency_key = own(o, strdup(key));
    }
out:
    json_decref(norm);
    return st;
}

/* Converts params.items (max items) into in[] (*n). */
static mn_status items_in(struct srv_call *c, struct owned *o, size_t max, int required, mn_message_in **in,
                          size_t *n)
{
    json_t *items = json_object_get(c->params, "items");
    *in = NULL;
    *n = 0;
    if (!items || json_is_null(items)) {
        if (required)
            return srv_fail(c, MN_INVALID, "items: required, an array of 1 to %zu items", max);
        return MN_OK;
    }
    if (!json_is_array(items) || json_array_size(items) > max || (required && json_array_size(items) == 0))
        return srv_fail(c, MN_INVALID, "items: must be an array of %d to %zu items", required ? 1 : 0, max);
    *n = json_array_size(items);
    if (*n == 0)
        return MN_OK;
    if (!(*in = calloc(*n, sizeof **in)))
        return srv_fail(c, MN_NOMEM, "out of memory");
    const char *idem = json_string_value(json_object_get(c->params, "idempotency_key"));
    for (size_t i = 0; i < *n; i++) {
        mn_status st = item_in(c, o, json_array_get(items, i), i, idem, &(*in)[i]);
        if (st)
            return st;
    }
    return MN_OK;
}

static json_t *list_json(json_t *data, int more)
{
    size_t n = json_array_size(data);
    json_t *first = n ? json_incref(json_object_get(json_array_get(data, 0), "id")) : json_null();
    json_t *last = n ? json_incref(json_object_get(json_array_get(data, n - 1), "id")) : json_null();
    return json_pack("{s:s,s:o,s:o,s:o,s:b}", "object", "list", "data", data, "first_id", first, "last_id", last,
                     "has_more", more);
}

static mn_status done(struct srv_call *c, json_t *r)
{
    if (!r)
        return srv_fail(c, MN_NOMEM, "out of memory");
    c->result = r;
    return MN_OK;
}

/* Characters in UTF-8 text (jansson's strings are valid UTF-8): bytes that start one. */
static size_t utf8_chars(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* OpenAI's limits on a conversation's metadata: at most 16 pairs, keys of at most 64 characters,
 * string values of at most 512. Returns the refusal, or MN_OK. */
static mn_status metadata_check(struct srv_call *c, json_t *meta)
{
    enum { MAX_PAIRS = 16, MAX_KEY = 64, MAX_VALUE = 512 };
    if (!json_is_object(meta))
        return srv_fail(c, MN_INVALID, "metadata: must be an object of string values");
    if (json_object_size(meta) > MAX_PAIRS)
        return srv_fail(c, MN_INVALID, "metadata: %zu pairs, over the limit of %d", json_object_size(meta), MAX_PAIRS);
    const char *key;
    json_t *value;
    json_object_foreach(meta, key, value) {
        if (utf8_chars(key) > MAX_KEY)
            return srv_fail(c, MN_INVALID, "metadata: key '%.40s...' is over %d characters", key, MAX_KEY);
        if (!json_is_string(value))
            return srv_fail(c, MN_INVALID, "metadata: the value of '%.40s' is not a string", key);
        if (utf8_chars(json_string_value(value)) > MAX_VALUE)
            return srv_fail(c, MN_INVALID, "metadata: the value of '%.40s' is over %d characters", key, MAX_VALUE);
    }
    return MN_OK;
}

mn_status srv_op_conv_create(struct srv_call *c)
{
    struct owned o = {0};
    mn_message_in *in = NULL;
    size_t n = 0;
    mn_status st;
    json_t *meta = json_object_get(c->params, "metadata");
    if (meta && !json_is_null(meta) && (st = metadata_check(c, meta)))
        return st;
    if ((st = items_in(c, &o, 20, 0, &in, &n)))
        goto out;
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.ns = c->ns;
    so.metadata = json_is_object(meta) ? own(&o, json_dumps(meta, JSON_COMPACT)) : NULL;
    mn_session *s = NULL;
    if ((st = mn_session_create(c->db, &so, &s))) {
        srv_fail_lib(c, st);
        goto out;
    }
    if (n) {
        mn_messages *stored = NULL;
        char err[256];
        mn_append_request req = {sizeof req, s->id, in, n, 0, c->ns};
        if ((st = srv_append(c->db, &req, &stored, err))) {
            srv_fail(c, st, "%s", err);
            mn_session_delete(c->db, s->id);
            mn_session_free(s);
            goto out;
        }
        mn_messages_free(stored);
    }
    st = done(c, conversation_json(s));
    mn_session_free(s);
out:
    free(in);
    owned_release(&o);
    return st;
}

mn_status srv_op_conv_get(struct srv_call *c)
{
    char id[128];
    mn_session *s = NULL;
    mn_status st = conv_param(c, id, sizeof id, &s);
    if (st)
        return st;
    st = done(c, conversation_json(s));
    mn_session_free(s);
    return st;
}

mn_status srv_op_conv_update(struct srv_call *c)
{
    char id[128];
    mn_status st = conv_param(c, id, sizeof id, NULL);
    if (st)
        return st;
    json_t *meta = json_object_get(c->params, "metadata");
    if ((st = metadata_check(c, meta)))
        return st;
    char *text = json_dumps(meta, JSON_COMPACT);
    if (!text)
        return srv_fail(c, MN_NOMEM, "out of memory");
    st = mn_session_update(c->db, id, NULL, text);
    free(text);
    if (st)
        return srv_fail_lib(c, st);
    mn_session *s = NULL;
    if ((st = mn_session_get(c->db, id, &s)))
        return srv_fail_lib(c, st);
    st = done(c, conversation_json(s));
    mn_session_free(s);
    return st;
}

mn_status srv_op_conv_delete(struct srv_call *c)
{
    char id[128];
    mn_status st = conv_param(c, id, sizeof id, NULL);
    if (st)
        return st;
    if ((st = mn_session_delete(c->db, id)))
        return srv_fail_lib(c, st);
    char cid[140];
    snprintf(cid, sizeof cid, "conv_%s", id);
    return done(c, json_pack("{s:s,s:s,s:b}", "id", cid, "object", "conversation.deleted", "deleted", 1));
}

mn_status srv_op_items_create(struct srv_call *c)
{
    char id[128];
    struct owned o = {0};
    mn_message_in *in = NULL;
    size_t n = 0;
    mn_status st = conv_param(c, id, sizeof id, NULL);
    if (st || (st = items_in(c, &o, 20, 1, &in, &n)))
        goto out;
    mn_messages *stored = NULL;
    char err[256];
    mn_append_request req = {sizeof req, id, in, n, 0, c->ns}; /* a bound key: only its namespace's */
    if ((st = srv_append(c->db, &req, &stored, err))) {
        srv_fail(c, st, "%s", err);
        goto out;
    }
    json_t *data = json_array();
    for (size_t i = 0; i < stored->count; i++)
        json_array_append_new(data, item_json(&stored->items[i]));
    mn_messages_free(stored);
    st = done(c, list_json(data, 0));
out:
    free(in);
    owned_release(&o);
    return st;
}

/* "msg_12" → 12: the seq of an id of the form this API hands out (msg_, fc_, fco_ or item_ and
 * a positive decimal); 0 otherwise. */
static int64_t item_seq(const char *s)
{
    static const char *const prefixes[] = {"msg_", "fc_", "fco_", "item_"};
    for (size_t i = 0; s && i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(s, prefixes[i], n) != 0 || s[n] < '1' || s[n] > '9')
            continue;
        char *end;
        errno = 0;
        long long v = strtoll(s + n, &end, 10);
        return errno || *end ? 0 : v;
    }
    return 0;
}

mn_status srv_op_items_list(struct srv_call *c)
{
    char id[128];
    mn_status st = conv_param(c, id, sizeof id, NULL);
    if (st)
        return st;
    /* checked against the declarations (ops.c): limit 1..100 (default 20), order asc or desc */
    int64_t limit = json_integer_value(json_object_get(c->params, "limit"));
    const char *order = json_string_value(json_object_get(c->params, "order"));
    int desc = !order || strcmp(order, "desc") == 0;
    json_t *av = json_object_get(c->params, "after");
    int64_t after = 0;
    if (av && !json_is_null(av) && !(after = item_seq(json_string_value(av))))
        return srv_fail(c, MN_INVALID, "after: '%.60s' is not an item id", or_empty(json_string_value(av)));
    mn_messages *ms = NULL;
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    json_t *data = json_array();
    int more = 0;
    if (!desc) {
        ho.after_seq = after;
        ho.limit = (size_t)limit + 1;
        if ((st = mn_history(c->db, id, &ho, &ms)))
            goto fail;
        for (size_t i = 0; i < ms->count && i < (size_t)limit; i++)
            json_array_append_new(data, item_json(&ms->items[i]));
        more = ms->count > (size_t)limit;
    } else if (!after) {
        ho.tail = 1;
        ho.limit = (size_t)limit + 1;
        if ((st = mn_history(c->db, id, &ho, &ms)))
            goto fail;
        for (size_t k = 0; k < ms->count && k < (size_t)limit; k++)
            json_array_append_new(data, item_json(&ms->items[ms->count - 1 - k]));
        more = ms->count > (size_t)limit;
    } else {
        /* newest first below `after`: read windows [after - w, after) until limit + 1 are found */
        /* w grows 4-fold but saturates: once the window reaches seq 0 the loop ends (an `after`
         * near INT64_MAX once overflowed w to 0 and spun forever) */
        for (int64_t w = limit + 1;; w = w > INT64_MAX / 4 ? INT64_MAX : w * 4) {
            mn_messages_free(ms);
            ms = NULL;
            ho.after_seq = w < after - 1 ? after - 1 - w : 0;
            ho.limit = 0;
            if ((st = mn_history(c->db, id, &ho, &ms)))
                goto fail;
            size_t below = 0;
            while (below < ms->count && ms->items[below].seq < after)
                below++;
            if (below > (size_t)limit || ho.after_seq == 0) {
                for (size_t k = 0; k < below && k < (size_t)limit; k++)
                    json_array_append_new(data, item_json(&ms->items[below - 1 - k]));
                more = below > (size_t)limit;
                break;
            }
        }
    }
    mn_messages_free(ms);
    return done(c, list_json(data, more));
fail:
    json_decref(data);
    mn_messages_free(ms);
    return srv_fail_lib(c, st);
}

/* The stored message of the item_id parameter (caller frees *out). */
static mn_status item_param(struct srv_call *c, const char *id, mn_messages **out)
{
    const char *item = json_string_value(json_object_get(c->params, "item_id"));
    int64_t seq = item_seq(item);
    *out = NULL;
    if (!seq)
        return srv_fail(c, MN_NOTFOUND, "item %.80s not found", item ? item : "");
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.after_seq = seq - 1;
    ho.limit = 1;
    ho.all = 1;
    mn_status st = mn_history(c->db, id, &ho, out);
    if (st)
        return srv_fail_lib(c, st);
    json_t *found = (*out)->count && (*out)->items[0].seq == seq ? item_json(&(*out)->items[0]) : NULL;
    int same = found && strcmp(json_string_value(json_object_get(found, "id")), item) == 0; /* fc_2 is not msg_2 */
    json_decref(found);
    if (!same) {
        mn_messages_free(*out);
        *out = NULL;
        return srv_fail(c, MN_NOTFOUND, "item %.80s not found", item);
    }
    return MN_OK;
}

mn_status srv_op_item_get(struct srv_call *c)
{
    char id[128];
    mn_messages *ms = NULL;
    mn_status st = conv_param(c, id, sizeof id, NULL);
    if (st || (st = item_param(c, id, &ms)))
        return st;
    st = done(c, item_json(&ms->items[0]));
    mn_messages_free(ms);
    return st;
}

mn_status srv_op_item_delete(struct srv_call *c)
{
    char id[128];
    mn_messages *ms = NULL;
    mn_status st = conv_param(c, id, sizeof id, NULL);
    if (st || (st = item_param(c, id, &ms)))
        return st;
    st = mn_message_delete(c->db, id, ms->items[0].id);
    mn_messages_free(ms);
    if (st)
        return srv_fail_lib(c, st);
    mn_session *s = NULL;
    if ((st = mn_session_get(c->db, id, &s)))
        return srv_fail_lib(c, st);
    st = done(c, conversation_json(s));
    mn_session_free(s);
    return st;
}
