/*
 * rest.c — the REST request core: route a method and path to an operation of the table, merge
 * path, query and body parameters, run it and shape the JSON answer or error. No socket here, so
 * the fuzz target fuzz/fuzz_http_body.c drives it directly. Also the OpenAPI document.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

void srv_utf8_clip(char *s)
{
    /* jansson's own check, so that what it takes here json_pack takes too; an error path only */
    size_t n = strlen(s);
    json_t *v = NULL;
    while (n && !(v = json_stringn(s, n)))
        n--;
    json_decref(v);
    s[n] = '\0';
}

void srv_error(struct srv_response *resp, int http, const char *code, const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    srv_utf8_clip(msg); /* a "%.60s" of a client's text may end inside a character */
    free(resp->body);
    json_t *e = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", msg);
    resp->body = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    resp->body_len = resp->body ? strlen(resp->body) : 0;
    resp->status = http;
    resp->content_type = "application/json";
    if (http == 503)
        resp->retry_after = 1;
}

/* OpenAI's error shape: {"error":{"message","type","param","code"}}; param is the field the
 * message starts with ("items[0].role: …"), else null. */
static void openai_error(struct srv_response *resp, int http, const char *code, const char *message)
{
    char msg[600], param[128] = "";
    snprintf(msg, sizeof msg, "%s", message);
    srv_utf8_clip(msg);
    const char *colon = strstr(msg, ": ");
    if (colon && (size_t)(colon - msg) < sizeof param && !memchr(msg, ' ', (size_t)(colon - msg)))
        snprintf(param, sizeof param, "%.*s", (int)(colon - msg), msg);
    const char *type = http == 401 ? "authentication_error" : http == 403 ? "permission_error"
                       : http == 404 ? "not_found_error" : http == 409 ? "conflict_error"
                       : http == 429 ? "rate_limit_error" : http >= 500 ? "server_error" : "invalid_request_error";
    free(resp->body);
    json_t *e = json_pack("{s:{s:s,s:s,s:o,s:s}}", "error", "message", msg, "type", type, "param",
                          param[0] ? json_string(param) : json_null(), "code", code);
    resp->body = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    resp->body_len = resp->body ? strlen(resp->body) : 0;
    resp->status = http;
    resp->content_type = "application/json";
    if (http == 503)
        resp->retry_after = 1;
}

void srv_response_release(struct srv_response *resp)
{
    free(resp->body);
    json_decref(resp->export_ids);
    memset(resp, 0, sizeof *resp);
}

static int hexval(int ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* s[0..len) decoded (%XX a byte; in a query, '+' a space) into a new string; *out_len its
 * length, which a %00 makes longer than strlen. */
static char *unescape(const char *s, size_t len, int query, size_t *out_len)
{
    char *o = malloc(len + 1);
    size_t j = 0;
    if (!o)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        if (query && s[i] == '+') {
            o[j++] = ' ';
        } else if (s[i] == '%' && i + 2 < len && hexval((unsigned char)s[i + 1]) >= 0 &&
                   hexval((unsigned char)s[i + 2]) >= 0) {
            o[j++] = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
            i += 2;
        } else {
            o[j++] = s[i];
        }
    }
    o[j] = '\0';
    *out_len = j;
    return o;
}

size_t srv_query_count(const char *q)
{
    size_t n = 0;
    for (; q && *q; q++)
        n += q[0] != '&' && (q[1] == '&' || q[1] == '\0');
    return n;
}

json_t *srv_parse_query(const char *q, char *err, size_t errcap)
{
    json_t *o = json_object();
    if (err && errcap)
        err[0] = '\0';
    for (size_t at = 1; o && q && *q; at++) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        const char *eq = memchr(q, '=', len);
        size_t klen = eq ? (size_t)(eq - q) : len, kn = 0, vn = 0;
        char *k = unescape(q, klen, 1, &kn), *v = eq ? unescape(eq + 1, len - klen - 1, 1, &vn) : strdup("");
        json_t *value = k && v ? json_string(v) : NULL;
        /* a name or value that is not UTF-8 text, or holds a NUL byte, is refused: left out, it
         * widened a filter (namespace, session_id, ids) to everything */
        int bad = k && v && (!value || kn != strlen(k) || vn != strlen(v));
        /* "name[]" is the array "name", one item each time it comes, so it may repeat (the
         * openai SDK's arrays: include[]=a&include[]=b); a plain name twice, or both forms, is a
         * guess as before */
        int list = !bad && value && kn > 2 && strcmp(k + kn - 2, "[]") == 0;
        if (list)
            k[kn - 2] = '\0';
        json_t *had = !bad && value && k[0] ? json_object_get(o, k) : NULL;
        int twice = had && !(list && json_is_array(had));
        if (!bad && !twice && value && k[0]) {
            if (list) {
                if (!had && json_object_set_new(o, k, had = json_array()) != 0)
                    had = NULL; /* the name is not UTF-8 */
                bad = !had || json_array_append(had, value) != 0;
            } else {
                bad = json_object_set(o, k, value) != 0; /* fails when the name is not UTF-8 */
            }
        }
        json_decref(value);
        if (bad && err && errcap)
            snprintf(err, errcap, "query: parameter %zu is not UTF-8 text or holds a NUL byte (%%00)", at);
        if (twice && err && errcap) /* which one to take would be a guess: a filter must be exact */
            snprintf(err, errcap, "%.60s: given twice in the query", k);
        bad |= twice;
        if (bad || !k || !v) {
            json_decref(o);
            o = NULL;
        }
        free(k);
        free(v);
        q += len + (amp ? 1 : 0);
    }
    return o;
}

/* Matches path — as sent, percent-encoded — against pattern; on a match the path parameters go
 * into params (when not NULL), each segment decoded after the split, so that an encoded '/'
 * (%2F: a session key "team/a") stays inside its parameter. */
static int match(const char *pattern, const char *path, json_t *params)
{
    const char *p = pattern, *s = path;
    while (*p && *s) {
        if (*p == '{') {
            const char *pe = strchr(p, '}'), *se = strchr(s, '/');
            size_t slen = se ? (size_t)(se - s) : strlen(s);
            if (!pe || slen == 0)
                return 0;
            if (params) {
                char name[64];
                size_t vlen;
                char *value = unescape(s, slen, 0, &vlen);
                snprintf(name, sizeof name, "%.*s", (int)(pe - p - 1), p + 1);
                /* not UTF-8 text: left out, and refused as missing by the declarations */
                json_object_set_new(params, name, value ? json_stringn(value, vlen) : NULL);
                free(value);
            }
            p = pe + 1;
            s += slen;
            continue;
        }
        if (*p != *s)
            return 0;
        p++;
        s++;
    }
    return *p == '\0' && (*s == '\0' || (s[0] == '/' && s[1] == '\0'));
}

/* The Idempotency-Key header as the append's key; for a batch (`messages`), message i's is
 * "<key>#<i>" unless it carries its own, as the Conversations API keys its items, so that a
 * retried batch stores nothing new. -1 when the key is not UTF-8 text. */
static int header_key(json_t *params, const char *key)
{
    json_t *batch = json_object_get(params, "messages");
    if (!json_is_array(batch))
        return json_object_set_new(params, "idempotency_key", json_string(key));
    json_t *probe = json_string(key); /* NULL when not UTF-8 */
    if (!probe)
        return -1;
    json_decref(probe);
    size_t i;
    json_t *m;
    json_array_foreach(batch, i, m) {
        if (!json_is_object(m) || json_object_get(m, "idempotency_key"))
            continue; /* a message that is not an object is refused by name later */
        json_object_set_new(m, "idempotency_key", json_sprintf("%s#%zu", key, i));
    }
    return 0;
}

static void set_json(struct srv_response *resp, int status, json_t *v)
{
    resp->status = status;
    resp->body = json_dumps(v, JSON_COMPACT);
    resp->body_len = resp->body ? strlen(resp->body) : 0;
    resp->content_type = "application/json";
}

const struct srv_op *srv_rest_route(const char *method, const char *path, int *path_known)
{
    *path_known = 0;
    for (size_t i = 0; i < srv_nops; i++) {
        if (!match(srv_ops[i].path, path, NULL))
            continue;
        /* a literal route beats a parameter route (/v1/sessions vs /v1/sessions/{id}) */
        *path_known = 1;
        if (strcmp(srv_ops[i].method, method) == 0)
            return &srv_ops[i];
    }
    return NULL;
}

void srv_rest_allow(const char *path, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < srv_nops; i++) {
        if (!match(srv_ops[i].path, path, NULL))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(srv_ops[j].method, srv_ops[i].method) == 0 && match(srv_ops[j].path, path, NULL);
        if (seen)
            continue;
        int w = snprintf(out + n, cap - n, "%s%s", n ? ", " : "", srv_ops[i].method);
        if (w < 0 || (size_t)w >= cap - n)
            break;
        n += (size_t)w;
    }
}

int srv_rest_start(struct srv_rest *r, mn_db *db, const char *ns, const char *method, const char *path, json_t *query,
                   const char *idem_key, const char *body, size_t body_len, struct srv_response *resp)
{
    memset(resp, 0, sizeof *resp);
    int path_known;
    const struct srv_op *op = srv_rest_route(method, path, &path_known);
    r->op = op;
    r->params = r->text = NULL;
    if (!op) {
        if (path_known) {
            srv_rest_allow(path, resp->allow, sizeof resp->allow);
            srv_error(resp, 405, "method_not_allowed", "%s is not allowed on %.200s (allowed: %s)", method, path,
                      resp->allow);
        }
        else
            srv_error(resp, 404, "not_found", "no route %.200s %.200s (see /openapi.json)", method, path);
        return 0;
    }
    resp->op = op;
    json_t *params = NULL;
    if (!(op->flags & OP_RAWBODY) && body_len > 0) {
        json_error_t jerr;
        params = json_loadb(body, body_len, JSON_REJECT_DUPLICATES, &jerr);
        if (!params || !json_is_object(params)) {
            char msg[300];
            if (params)
                snprintf(msg, sizeof msg, "request body: must be a JSON object");
            else
                snprintf(msg, sizeof msg, "request body: %s at line %d column %d", jerr.text, jerr.line, jerr.column);
            json_decref(params);
            if (op->flags & OP_OPENAI)
                openai_error(resp, 400, "bad_json", msg);
            else
                srv_error(resp, 400, "bad_json", "%s", msg);
            return 0;
        }
    } else {
        params = json_object();
    }
    /* the query string and the path are text: their names are noted for the validator, which
     * converts them to their declared types (a body's JSON keeps its own) */
    json_t *text = json_object(), *in_path = json_object();
    const char *k;
    json_t *v;
    json_object_foreach(query, k, v) {
        if (!json_object_get(params, k)) {
            json_object_set(params, k, v);
            json_object_set(text, k, json_true());
        }
    }
    match(op->path, path, in_path); /* path parameters win over body and query */
    json_object_foreach(in_path, k, v) {
        json_object_set(params, k, v);
        json_object_set(text, k, json_true());
    }
    json_decref(in_path);
    if (idem_key && srv_param_find(op, "idempotency_key") && !json_object_get(params, "idempotency_key") &&
        header_key(params, idem_key) != 0) {
        json_decref(params); /* not UTF-8: dropped, a retry would have stored twice */
        json_decref(text);
        srv_error(resp, 400, "invalid", "Idempotency-Key: not UTF-8 text");
        return 0;
    }
    struct srv_call *c = &r->call;
    c->db = db;
    c->params = r->params = params;
    c->text_params = r->text = text;
    c->body = body;
    c->body_len = body_len;
    c->ns = ns;
    c->accept_raw = !(op->flags & OP_STREAM);
    c->pending = 0;
    srv_call_op(op, c);
    /* pending: c->resume runs when the result is in, then srv_rest_finish. Only pending is
     * read here: the committer may already be filling status and result on its thread (the
     * status once read here made a failed append answer twice). */
    if (c->pending)
        return 1;
    srv_rest_finish(r, resp);
    return 0;
}

/* A server-side failure's message without the server's file paths (they tell a client where
 * the data lives): every word starting with '/' or '~/' becomes "<path>". The full message
 * goes to the log. */
static void hide_paths(char *msg, size_t cap)
{
    char out[sizeof ((struct srv_call *)0)->msg];
    size_t n = 0;
    int hid = 0;
    for (const char *p = msg; *p && n + 8 < sizeof out;) {
        int start = p == msg || strchr(" '\"(=:", p[-1]);
        if (start && (p[0] == '/' || (p[0] == '~' && p[1] == '/'))) {
            while (*p && !strchr(" '\"),;", *p))
                p++;
            memcpy(out + n, "<path>", 6);
            n += 6;
            hid = 1;
            continue;
        }
        out[n++] = *p++;
    }
    out[n] = '\0';
    if (hid) {
        srv_log("warn", "msg=\"server error\" detail=\"%.400s\"", msg);
        snprintf(msg, cap, "%s", out);
    }
}

void srv_rest_finish(struct srv_rest *r, struct srv_response *resp)
{
    const struct srv_op *op = r->op;
    struct srv_call *c = &r->call;
    resp->op = op;
    if (c->status != MN_OK) {
        int http = c->http ? c->http : srv_http_status(c->status);
        if (http >= 500)
            hide_paths(c->msg, sizeof c->msg);
        if (op->flags & OP_OPENAI)
            openai_error(resp, http, c->http == 403 ? "forbidden" : mn_status_name(c->status), c->msg);
        else
            srv_error(resp, http, c->http == 403 ? "forbidden" : mn_status_name(c->status), "%s", c->msg);
    } else if (op->flags & OP_STREAM) {
        resp->status = 200;
        resp->stream_export = 1;
        resp->export_ids = json_incref(json_object_get(c->result, "ids"));
        resp->content_type = "application/x-ndjson";
    } else {
        int created = strcmp(op->method, "POST") == 0 &&
                      (strcmp(op->name, "session_create") == 0 || strcmp(op->name, "session_fork") == 0 ||
                       strcmp(op->name, "append") == 0);
        int status = created && !(op->flags & OP_OPENAI) ? 201 : 200;
        if (c->raw) {
            resp->status = status;
            resp->body = c->raw;
            resp->body_len = strlen(c->raw);
            resp->content_type = "application/json";
            c->raw = NULL;
        } else {
            set_json(resp, status, c->result);
        }
    }
    free(c->raw);
    c->raw = NULL;
    json_decref(c->result);
    c->result = NULL;
    json_decref(r->params);
    r->params = NULL;
    json_decref(r->text);
    r->text = NULL;
}

void srv_handle_rest(mn_db *db, const char *ns, const char *method, const char *path, json_t *query,
                     const char *idem_key, const char *body, size_t body_len, struct srv_response *resp)
{
    struct srv_rest r = {0}; /* no resume: every operation answers before it returns */
    srv_rest_start(&r, db, ns, method, path, query, idem_key, body, body_len, resp);
}

/* ---- OpenAPI --------------------------------------------------------------------------------- */

static json_t *error_response(const char *desc)
{
    return json_pack("{s:s,s:{s:{s:{s:s}}}}", "description", desc, "content", "application/json", "schema", "$ref",
                     "#/components/schemas/Error");
}

char *srv_openapi(void)
{
    json_t *paths = json_object();
    for (size_t i = 0; i < srv_nops; i++) {
        const struct srv_op *op = &srv_ops[i];
        json_t *item = json_object_get(paths, op->path);
        if (!item) {
            item = json_object();
            json_object_set_new(paths, op->path, item);
        }
        json_t *parameters = json_array(), *body_props = json_object(), *body_req = json_array();
        int is_get = strcmp(op->method, "GET") == 0 || strcmp(op->method, "DELETE") == 0;
        for (const struct srv_param *p = op->params; p && p->name; p++) {
            enum srv_pin in = srv_param_in(op, p);
            if (in != PIN_BODY) {
                json_array_append_new(parameters, json_pack("{s:s,s:s,s:b,s:o}", "name", p->name, "in",
                                                             in == PIN_PATH ? "path" : "query", "required",
                                                             in == PIN_PATH || p->required, "schema",
                                                             srv_param_schema(p)));
            } else {
                json_object_set_new(body_props, p->name, srv_param_schema(p));
                if (p->required)
                    json_array_append_new(body_req, json_string(p->name));
            }
        }
        json_t *o = json_pack("{s:s,s:s,s:o}", "operationId", op->name, "summary", op->summary, "parameters",
                              parameters);
        json_t *aliases = srv_op_alias_list(op);
        if (json_array_size(aliases)) /* the older names, for clients that keep them (docs/names.md) */
            json_object_set(o, "x-mnemo-aliases", aliases);
        json_decref(aliases);
        if (op->flags & OP_RAWBODY) {
            json_decref(body_props);
            json_object_set_new(o, "requestBody",
                                json_pack("{s:b,s:{s:{s:{s:s}}}}", "required", 1, "content", "application/x-ndjson",
                                          "schema", "type", "string"));
        } else if (!is_get || json_object_size(body_props)) {
            json_t *bs = json_pack("{s:s,s:o,s:b}", "type", "object", "properties", body_props, "additionalProperties", 0);
            if (json_array_size(body_req))
                json_object_set(bs, "required", body_req);
            json_object_set_new(o, "requestBody", json_pack("{s:b,s:{s:{s:o}}}", "required", 0, "content",
                                                            "application/json", "schema", bs));
        } else {
            json_decref(body_props);
        }
        json_decref(body_req);
        json_t *ok;
        if (op->flags & OP_STREAM)
            ok = json_pack("{s:s,s:{s:{s:{s:s}}}}", "description", "JSON Lines, streamed", "content",
                           "application/x-ndjson", "schema", "type", "string");
        else
            ok = json_pack("{s:s,s:{s:{s:o}}}", "description", "success", "content", "application/json", "schema",
                           srv_op_schema(op->result));
        int created = strcmp(op->method, "POST") == 0 &&
                      (strcmp(op->name, "session_create") == 0 || strcmp(op->name, "session_fork") == 0 ||
                       strcmp(op->name, "append") == 0);
        json_t *responses = json_object();
        json_object_set_new(responses, created ? "201" : "200", ok);
        json_object_set_new(responses, "400", error_response("invalid input or bad JSON"));
        json_object_set_new(responses, "404", error_response("no such session"));
        json_object_set_new(responses, "default", error_response("error"));
        json_object_set_new(o, "responses", responses);
        char method[8];
        size_t m = 0;
        for (; op->method[m] && m < sizeof method - 1; m++)
            method[m] = (char)(op->method[m] | 0x20);
        method[m] = '\0';
        json_object_set_new(item, method, o);
    }
    json_t *doc = json_pack(
        "{s:s,s:{s:s,s:s,s:s},s:[{s:s}],s:o,s:{s:{s:{s:s,s:{s:{s:s,s:{s:{s:s},s:{s:s}},s:[s,s]}},s:[s]}},"
        "s:{s:{s:s,s:s}}}}",
        "openapi", "3.1.0", "info", "title", "mnemo", "version", mn_version(), "description",
        "Conversation memory for LLM agents: sessions, messages, token-budgeted context (docs/http-api.md).",
        "servers", "url", "/", "paths", paths, "components", "schemas", "Error", "type", "object", "properties",
        "error", "type", "object", "properties", "code", "type", "string", "message", "type", "string", "required",
        "code", "message", "required", "error", "securitySchemes", "bearer", "type", "http", "scheme", "bearer");
    if (!doc)
        return NULL;
    char *out = json_dumps(doc, JSON_INDENT(1));
    json_decref(doc);
    return out;
}
