/*
 * mcp.c — the Model Context Protocol server: JSON-RPC 2.0 messages in, replies out, with no
 * transport inside (stdio below, Streamable HTTP in http.c, fuzz/fuzz_mcp.c drives mcp_handle
 * and mcp_handle_http). Two eras side by side: the `initialize` revisions 2025-11-25,
 * 2025-06-18 and 2025-03-26, and the stateless 2026-07-28 revision (server/discover, protocol
 * version and client capabilities in every request's _meta). Tools come from the operation
 * table in ops.c. Notes and sources: docs/mcp.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

/* The stateless revision, then the `initialize` revisions, newest first. */
#define MODERN "2026-07-28"
static const char *const legacy[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

/* Reserved _meta keys of the 2026-07-28 revision (schema.ts: RequestMetaObject, ResultMetaObject). */
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_CLIENT "io.modelcontextprotocol/clientInfo"
#define META_SERVER "io.modelcontextprotocol/serverInfo"

enum { RPC_PARSE = -32700, RPC_INVALID_REQUEST = -32600, RPC_NO_METHOD = -32601, RPC_INVALID_PARAMS = -32602,
       RPC_INTERNAL = -32603, RPC_RESOURCE_NOT_FOUND = -32002, /* 2025-11-25 and earlier only */
       RPC_HEADER_MISMATCH = -32020, RPC_UNSUPPORTED_VERSION = -32022 };

/* Cache hints of the 2026-07-28 CacheableResult: the tool list and templates change only with
 * the binary; sessions change all the time and belong to the caller's namespace. */
enum { TTL_STATIC_MS = 300000 };

static const char *const instructions =
    "Conversation memory. Pass the session (continuation) id to every tool. Call `append` for each turn and "
    "`context_build` to get the token-budgeted messages for the next model call.";

int mcp_version_supported(const char *v)
{
    if (!v)
        return 0;
    if (strcmp(v, MODERN) == 0)
        return 1;
    for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++)
        if (strcmp(v, legacy[i]) == 0)
            return 1;
    return 0;
}

static json_t *supported_versions(void)
{
    json_t *a = json_array();
    json_array_append_new(a, json_string(MODERN));
    for (size_t i = 0; i < sizeof legacy / sizeof legacy[0]; i++)
        json_array_append_new(a, json_string(legacy[i]));
    return a;
}

static json_t *server_info(void)
{
    return json_pack("{s:s,s:s,s:s}", "name", "mnemo", "title", "mnemo conversation memory", "version", mn_version());
}

/* One request being answered. */
struct req {
    mn_db *db;
    const char *ns;
    json_t *id;   /* borrowed; NULL for a notification */
    int modern;   /* served under 2026-07-28 */
    int http;     /* came through mcp_handle_http */
    int status;   /* HTTP status of the reply */
};

static char *dump(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return s;
}

/* A JSON-RPC error; data (stolen) may be NULL. Sets the HTTP status the 2026-07-28 transport
 * asks for: 400 for an unsupported version or a header mismatch, 404 for an unknown method. */
static char *fail(struct req *r, int code, const char *message, json_t *data)
{
    char msg[600];
    snprintf(msg, sizeof msg, "%s", message);
    srv_utf8_clip(msg); /* a "%.60s" of a client's text may end inside a character */
    json_t *err = json_pack("{s:i,s:s}", "code", code, "message", msg);
    if (err && data)
        json_object_set_new(err, "data", data);
    else
        json_decref(data);
    if (code == RPC_UNSUPPORTED_VERSION || code == RPC_HEADER_MISMATCH)
        r->status = 400;
    else if (code == RPC_NO_METHOD && r->modern)
        r->status = 404;
    return dump(json_pack("{s:s,s:O,s:o*}", "jsonrpc", "2.0", "id", r->id ? r->id : json_null(), "error", err));
}

static char *unsupported(struct req *r, const char *requested)
{
    char msg[160];
    snprintf(msg, sizeof msg, "Unsupported protocol version %.60s (supported: " MODERN ", %s, %s, %s)", requested,
             legacy[0], legacy[1], legacy[2]);
    return fail(r, RPC_UNSUPPORTED_VERSION, msg,
                json_pack("{s:o,s:s}", "supported", supported_versions(), "requested", requested));
}

/* A result (stolen). Under 2026-07-28 every result says resultType "complete" and names the
 * server in its _meta; cacheable ones (ttl_ms >= 0) carry ttlMs and cacheScope. */
static char *answer(struct req *r, json_t *result, int ttl_ms, const char *scope)
{
    if (!result)
        return fail(r, RPC_INTERNAL, "out of memory", NULL);
    if (r->modern) {
        json_object_set_new(result, "resultType", json_string("complete"));
        json_t *meta = json_object_get(result, "_meta");
        if (!json_is_object(meta)) {
            meta = json_object();
            json_object_set_new(result, "_meta", meta);
        }
        json_object_set_new(meta, META_SERVER, server_info());
        if (ttl_ms >= 0) {
            json_object_set_new(result, "ttlMs", json_integer(ttl_ms));
            json_object_set_new(result, "cacheScope", json_string(scope));
        }
    }
    return dump(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", r->id, "result", result));
}

static json_t *tool_json(const struct srv_op *op)
{
    json_t *t = json_pack("{s:s,s:s,s:o,s:o,s:{s:b,s:b,s:b,s:b}}", "name", op->name, "description", op->summary,
                          "inputSchema", srv_op_input_schema(op, -1), "outputSchema", srv_op_schema(op->result),
                          "annotations", "readOnlyHint", (op->flags & OP_READONLY) != 0, "destructiveHint",
                          (op->flags & OP_DESTRUCTIVE) != 0, "idempotentHint",
                          (op->flags & (OP_IDEMPOTENT | OP_READONLY)) != 0, "openWorldHint", 0);
    return t;
}

/* The tools in table order (2026-07-28 asks for a deterministic order). */
static json_t *tools_list(void)
{
    json_t *a = json_array();
    for (size_t i = 0; i < srv_nops; i++)
        if (srv_ops[i].flags & OP_TOOL)
            json_array_append_new(a, tool_json(&srv_ops[i]));
    return json_pack("{s:o}", "tools", a);
}

/* Runs a tool. Arguments the tool does not declare, or of the wrong type or out of their limits,
 * are JSON-RPC invalid params (*invalid gets the message); failures of the operation itself are
 * results with isError. */
static json_t *tools_call(mn_db *db, const char *ns, const struct srv_op *op, json_t *args, char invalid[512])
{
    struct srv_call c = {0};
    c.db = db;
    c.params = args;
    c.ns = ns;
    c.for_model = 1;
    json_t *r;
    if (srv_call_op(op, &c) != MN_OK && c.invalid_params) {
        snprintf(invalid, 512, "%s", c.msg);
        r = NULL;
    } else if (c.status != MN_OK) {
        char text[700];
        snprintf(text, sizeof text, "%s: %s", c.http == 403 ? "forbidden" : mn_status_name(c.status), c.msg);
        r = json_pack("{s:[{s:s,s:s}],s:b}", "content", "type", "text", "text", text, "isError", 1);
    } else {
        char *text = json_dumps(c.result, JSON_COMPACT);
        r = json_pack("{s:[{s:s,s:s}],s:O,s:b}", "content", "type", "text", "text", text ? text : "{}",
                      "structuredContent", c.result, "isError", 0);
        free(text);
    }
    json_decref(c.result);
    return r;
}

static char *tools_call_request(struct req *r, json_t *params)
{
    json_t *name = json_object_get(params, "name"), *args = json_object_get(params, "arguments");
    if (!name || json_is_null(name))
        return fail(r, RPC_INVALID_PARAMS, "name: required, the tool's name", NULL);
    if (!json_is_string(name))
        return fail(r, RPC_INVALID_PARAMS, "name: must be a string, the tool's name", NULL);
    const struct srv_op *op = srv_op_find(json_string_value(name));
    if (!op || !(op->flags & OP_TOOL)) {
        char msg[200];
        snprintf(msg, sizeof msg, "unknown tool: %.100s", json_string_value(name));
        return fail(r, RPC_INVALID_PARAMS, msg, NULL);
    }
    if (args && !json_is_null(args) && !json_is_object(args))
        return fail(r, RPC_INVALID_PARAMS, "arguments must be an object", NULL);
    json_t *a = json_is_object(args) ? json_incref(args) : json_object();
    char invalid[512] = "";
    json_t *res = tools_call(r->db, r->ns, op, a, invalid);
    json_decref(a);
    if (invalid[0])
        return fail(r, RPC_INVALID_PARAMS, invalid, NULL);
    return answer(r, res, -1, NULL);
}

#define SESSION_URI "mnemo://sessions/"

static json_t *resources_list(mn_db *db, const char *ns)
{
    struct srv_call c = {0};
    c.db = db;
    c.ns = ns;
    c.params = json_pack("{s:i}", "limit", 100);
    json_t *a = json_array();
    if (srv_call_op(srv_op_find("session_list"), &c) == MN_OK) {
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(c.result, "sessions"), i, s) {
            const char *id = json_string_value(json_object_get(s, "id"));
            json_t *title = json_object_get(s, "title");
            char uri[128];
            snprintf(uri, sizeof uri, SESSION_URI "%s", id ? id : "");
            json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s}", "uri", uri, "name", id ? id : "", "title",
                                               json_is_string(title) ? json_string_value(title) : (id ? id : ""),
                                               "mimeType", "application/json"));
        }
    }
    json_decref(c.result);
    json_decref(c.params);
    return json_pack("{s:o}", "resources", a);
}

/* resources/read of mnemo://sessions/{id}: the session and its newest 100 messages. A missing
 * resource is -32002 up to 2025-11-25 and -32602 (invalid params) from 2026-07-28. */
static char *resources_read(struct req *r, json_t *params)
{
    int not_found = r->modern ? RPC_INVALID_PARAMS : RPC_RESOURCE_NOT_FOUND;
    const char *uri = json_string_value(json_object_get(params, "uri"));
    if (!uri)
        return fail(r, RPC_INVALID_PARAMS, "uri: required, a string", NULL);
    if (strncmp(uri, SESSION_URI, strlen(SESSION_URI)) != 0)
        return fail(r, not_found, "unknown resource (expected mnemo://sessions/{id})", NULL);
    struct srv_call c = {0}, h = {0};
    c.db = h.db = r->db;
    c.ns = h.ns = r->ns;
    c.params = json_pack("{s:s}", "session_id", uri + strlen(SESSION_URI));
    h.params = json_pack("{s:s,s:i,s:b}", "session_id", uri + strlen(SESSION_URI), "limit", 100, "tail", 1);
    char *out;
    if (srv_call_op(srv_op_find("session_get"), &c) != MN_OK ||
        srv_call_op(srv_op_find("history"), &h) != MN_OK) {
        char msg[600];
        snprintf(msg, sizeof msg, "resource not found: %s", c.msg[0] ? c.msg : h.msg);
        out = fail(r, not_found, msg, NULL);
    } else {
        json_t *body = json_pack("{s:O,s:O}", "session", json_object_get(c.result, "session"), "messages",
                                 json_object_get(h.result, "messages"));
        char *text = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        out = answer(r, json_pack("{s:[{s:s,s:s,s:s}]}", "contents", "uri", uri, "mimeType", "application/json",
                                  "text", text ? text : "{}"),
                     0, "private");
        free(text);
    }
    json_decref(c.result);
    json_decref(h.result);
    json_decref(c.params);
    json_decref(h.params);
    return out;
}

/* initialize (the older era only): the client's revision when it is one of ours, else the newest
 * of that era. 2026-07-28 is never negotiated here: it has no handshake. */
static char *initialize(struct req *r, json_t *params)
{
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    const char *v = legacy[0];
    for (size_t i = 0; want && i < sizeof legacy / sizeof legacy[0]; i++)
        if (strcmp(want, legacy[i]) == 0)
            v = legacy[i];
    return answer(r,
                  json_pack("{s:s,s:{s:{s:b},s:{s:b,s:b}},s:o,s:s}", "protocolVersion", v, "capabilities", "tools",
                            "listChanged", 0, "resources", "subscribe", 0, "listChanged", 0, "serverInfo",
                            server_info(), "instructions", instructions),
                  -1, NULL);
}

/* server/discover, answered in any era and without a handshake: the versions, capabilities,
 * identity and instructions. Always in the 2026-07-28 result shape (it is that revision's method). */
static char *discover(struct req *r)
{
    int was = r->modern;
    r->modern = 1;
    char *out = answer(r,
                       json_pack("{s:o,s:{s:{},s:{}},s:o,s:s}", "supportedVersions", supported_versions(),
                                 "capabilities", "tools", "resources", "serverInfo", server_info(), "instructions",
                                 instructions),
                       TTL_STATIC_MS, "public");
    r->modern = was;
    return out;
}

static char *request(struct req *r, const char *method, json_t *params)
{
    if (!strcmp(method, "server/discover"))
        return discover(r);
    /* the handshake and ping belong to the older era; 2026-07-28 removed both */
    if (!r->modern && !strcmp(method, "initialize"))
        return initialize(r, params);
    if (!r->modern && !strcmp(method, "ping"))
        return answer(r, json_object(), -1, NULL);
    if (!strcmp(method, "tools/list"))
        return answer(r, tools_list(), TTL_STATIC_MS, "public");
    if (!strcmp(method, "tools/call"))
        return tools_call_request(r, params);
    if (!strcmp(method, "resources/list"))
        return answer(r, resources_list(r->db, r->ns), 0, "private");
    if (!strcmp(method, "resources/templates/list"))
        return answer(r,
                      json_pack("{s:[{s:s,s:s,s:s,s:s}]}", "resourceTemplates", "uriTemplate", SESSION_URI "{id}",
                                "name", "session", "description", "a session with its newest 100 messages",
                                "mimeType", "application/json"),
                      TTL_STATIC_MS, "public");
    if (!strcmp(method, "resources/read"))
        return resources_read(r, params);
    char msg[200];
    snprintf(msg, sizeof msg, "method not found: %.100s%s", method,
             r->modern && (!strcmp(method, "initialize") || !strcmp(method, "ping"))
                 ? " (removed in " MODERN "; send the request itself with _meta)"
                 : "");
    return fail(r, RPC_NO_METHOD, msg, NULL);
}

/* ---- which era a message belongs to, and the 2026-07-28 header checks ------------------------ */

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Mcp-Name may be "=?base64?…?=" (the transport's sentinel for values that are not plain
 * ASCII). Returns whether the header names exactly the len bytes of want. */
static int header_names(const char *hv, const char *want, size_t len)
{
    static const char pre[] = "=?base64?", suf[] = "?=";
    size_t n = strlen(hv), np = sizeof pre - 1, ns = sizeof suf - 1;
    if (n < np + ns || strncmp(hv, pre, np) != 0 || strcmp(hv + n - ns, suf) != 0)
        return n == len && memcmp(hv, want, len) == 0;
    size_t out = 0, bits = 0;
    unsigned acc = 0;
    for (const char *p = hv + np; p < hv + n - ns; p++) {
        if (*p == '=')
            break;
        int v = b64val((unsigned char)*p);
        if (v < 0)
            return 0;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (out >= len || (unsigned char)want[out] != ((acc >> bits) & 0xffu))
                return 0;
            out++;
        }
    }
    return out == len;
}

static char *mismatch(struct req *r, const char *what, const char *header, const char *body)
{
    char msg[300];
    if (!header)
        snprintf(msg, sizeof msg, "Header mismatch: the %s header is required with protocol version " MODERN, what);
    else if (!body)
        snprintf(msg, sizeof msg, "Header mismatch: %s header value '%.60s' has no matching value in the body", what,
                 header);
    else
        snprintf(msg, sizeof msg, "Header mismatch: %s header value '%.60s' does not match body value '%.60s'", what,
                 header, body);
    return fail(r, RPC_HEADER_MISMATCH, msg, NULL);
}

/* Decides r->modern from the message's _meta and (HTTP) its MCP-Protocol-Version header, and
 * checks what the 2026-07-28 revision asks of both. Returns an error reply, or NULL to go on. */
static char *select_era(struct req *r, const char *method, json_t *params, const struct mcp_http *h)
{
    json_t *meta = json_object_get(params, "_meta");
    if (meta && !json_is_object(meta))
        return fail(r, RPC_INVALID_PARAMS, "params._meta must be an object", NULL);
    json_t *mvj = json_object_get(meta, META_VERSION);
    if (mvj && !json_is_string(mvj))
        return fail(r, RPC_INVALID_PARAMS, "params._meta[\"" META_VERSION "\"] must be a string", NULL);
    const char *mv = json_string_value(mvj);
    const char *hv = h ? h->protocol_version : NULL;
    if (mv && !mcp_version_supported(mv))
        return unsupported(r, mv);
    if (hv && !mcp_version_supported(hv))
        return unsupported(r, hv);
    if (hv && mv && strcmp(hv, mv) != 0)
        return mismatch(r, "MCP-Protocol-Version", hv, mv);
    r->modern = (mv && !strcmp(mv, MODERN)) || (hv && !strcmp(hv, MODERN));
    if (!r->modern)
        return NULL;
    json_t *caps = json_object_get(meta, META_CAPS), *client = json_object_get(meta, META_CLIENT);
    if (caps && !json_is_object(caps))
        return fail(r, RPC_INVALID_PARAMS, "params._meta[\"" META_CAPS "\"] must be an object", NULL);
    if (client && !json_is_object(client))
        return fail(r, RPC_INVALID_PARAMS, "params._meta[\"" META_CLIENT "\"] must be an object", NULL);
    if (!h)
        return NULL;
    /* Streamable HTTP: the headers mirror the body, so that intermediaries may route on them */
    if (!hv)
        return mismatch(r, "MCP-Protocol-Version", NULL, NULL);
    if (!mv)
        return mismatch(r, "MCP-Protocol-Version", hv, NULL);
    if (!r->id)
        return NULL; /* the revision sets no header rules for notifications */
    if (!h->method)
        return mismatch(r, "Mcp-Method", NULL, NULL);
    if (strcmp(h->method, method) != 0)
        return mismatch(r, "Mcp-Method", h->method, method);
    const char *field = !strcmp(method, "tools/call") ? "name" : !strcmp(method, "resources/read") ? "uri" : NULL;
    if (field) {
        json_t *v = json_object_get(params, field);
        if (!h->name)
            return mismatch(r, "Mcp-Name", NULL, NULL);
        if (json_is_string(v) && !header_names(h->name, json_string_value(v), json_string_length(v)))
            return mismatch(r, "Mcp-Name", h->name, json_string_value(v));
    }
    return NULL;
}

/* ---- messages -------------------------------------------------------------------------------- */

void mcp_handle_http(mn_db *db, const char *ns, const char *msg, size_t len, struct mcp_http *h, char **reply)
{
    struct req r = {db, ns, NULL, 0, h != NULL, 200};
    *reply = NULL;
    json_error_t jerr;
    json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!m) {
        char what[300]; /* jansson's reason and place: a number too big for 64 bits reads "not JSON" otherwise */
        snprintf(what, sizeof what, "parse error: %s (line %d, column %d)", jerr.text, jerr.line, jerr.column);
        *reply = fail(&r, RPC_PARSE, what, NULL);
    } else if (!json_is_object(m)) {
        *reply = fail(&r, RPC_INVALID_REQUEST,
                      json_is_array(m) ? "batches are not supported" : "a message must be a JSON object", NULL);
    } else {
        json_t *id = json_object_get(m, "id"), *method = json_object_get(m, "method");
        json_t *params = json_object_get(m, "params");
        const char *ver = json_string_value(json_object_get(m, "jsonrpc"));
        if (id && !json_is_string(id) && !json_is_integer(id))
            id = NULL; /* answered with id null */
        r.id = id;
        if (json_object_get(m, "id") && !id) {
            *reply = fail(&r, RPC_INVALID_REQUEST, "id must be a string or an integer", NULL);
        } else if (!ver || strcmp(ver, "2.0") != 0) {
            *reply = fail(&r, RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"", NULL);
        } else if (!method) {
            if (!id || (!json_object_get(m, "result") && !json_object_get(m, "error")))
                *reply = fail(&r, RPC_INVALID_REQUEST, "method: required", NULL);
            /* else a response to a request we never send: ignored */
        } else if (!json_is_string(method)) {
            *reply = fail(&r, RPC_INVALID_REQUEST, "method must be a string", NULL);
        } else if (params && !json_is_null(params) && !json_is_object(params)) {
            if (id)
                *reply = fail(&r, RPC_INVALID_PARAMS, "params must be an object", NULL);
        } else {
            char *err = select_era(&r, json_string_value(method), json_is_object(params) ? params : NULL, h);
            if (err && !id && !h) {
                free(err); /* a notification gets no reply on stdio, not even an error */
                err = NULL;
            }
            if (err && !id && r.status == 200)
                r.status = 400; /* HTTP: a notification refused is an HTTP error, not a 200 */
            if (err)
                *reply = err;
            else if (id && !(*reply = request(&r, json_string_value(method), json_is_object(params) ? params : NULL)))
                *reply = fail(&r, RPC_INTERNAL, "internal error", NULL);
            /* notifications (notifications/initialized, notifications/cancelled, …) need no reply */
        }
    }
    json_decref(m);
    if (h)
        h->status = r.status;
}

void mcp_handle(mn_db *db, const char *ns, const char *msg, size_t len, char **reply)
{
    mcp_handle_http(db, ns, msg, len, NULL, reply);
}

/* ---- stdio ---------------------------------------------------------------------------------- */

/* One line of standard input, kept up to a cap so that a client (or a stray `cat`) sending a
 * line without end cannot make the process hold it all. */
struct line {
    char *buf;
    size_t len, cap; /* bytes kept, bytes allocated */
    int over;        /* the line went past the cap: its rest was read and dropped */
};

/* Keeps byte ch in l, growing the buffer up to keep bytes (the caller never keeps more). 0, or
 * -1 out of memory. */
static int line_put(struct line *l, int ch, size_t keep)
{
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 4096;
        if (cap > keep)
            cap = keep;
        char *nb = realloc(l->buf, cap);
        if (!nb)
            return -1;
        l->buf = nb;
        l->cap = cap;
    }
    l->buf[l->len++] = (char)ch;
    return 0;
}

/* Reads the next line of in into l without its newline, keeping at most max + 1 bytes (room for
 * the '\r' of a CRLF line); the rest of a longer line is read up to its newline and dropped
 * (l->over). Byte by byte from stdio's buffer: a bulk read would wait for more than a client
 * that sent one line and waits for its answer has sent. Returns 1 for a line, 0 at end of
 * input, -1 out of memory. */
static int line_read(FILE *in, struct line *l, size_t max)
{
    int ch, rc = 0;
    l->len = 0;
    l->over = 0;
    flockfile(in);
    while ((ch = getc_unlocked(in)) != EOF && ch != '\n') {
        if (l->over)
            continue;
        if (l->len > max)
            l->over = 1;
        else if (line_put(l, ch, max + 1) != 0) {
            rc = -1;
            break;
        }
    }
    funlockfile(in);
    if (rc == 0 && (ch != EOF || l->len > 0 || l->over))
        rc = 1;
    return rc;
}

/* The answer to a line over the limit: it was never parsed, so its id is unknown (null). */
static char *too_long(size_t max)
{
    struct req r = {0};
    r.status = 200;
    char msg[200];
    snprintf(msg, sizeof msg,
             "message over the limit of %zu bytes (the default --max-body of mnemo serve): skipped up to its newline",
             max);
    return fail(&r, RPC_INVALID_REQUEST, msg, NULL);
}

static void send_line(char *reply)
{
    if (!reply)
        return;
    fputs(reply, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    free(reply);
}

int mcp_stdio(mn_db *db)
{
    const size_t max = SRV_MAX_BODY_DEFAULT; /* one message bounded as on HTTP */
    struct line l = {0};
    int got;
    while ((got = line_read(stdin, &l, max)) > 0) {
        while (l.len > 0 && l.buf[l.len - 1] == '\r')
            l.len--;
        if (l.over || l.len > max) {
            send_line(too_long(max));
            continue;
        }
        if (l.len == 0)
            continue;
        char *reply = NULL;
        mcp_handle(db, NULL, l.buf, l.len, &reply);
        send_line(reply);
    }
    free(l.buf);
    if (got < 0) {
        fprintf(stderr, "mnemo mcp: out of memory reading a message\n");
        return 1;
    }
    return 0;
}
