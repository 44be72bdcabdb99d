/*
 * mcp.c — the Model Context Protocol server: JSON-RPC 2.0 messages in, replies out, with no
 * transport inside (stdio below, Streamable HTTP in http.c, fuzz/fuzz_mcp.c drives mcp_handle).
 * Revisions 2025-11-25, 2025-06-18 and 2025-03-26; tools come from the operation table in ops.c.
 * Notes: docs/mcp.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

static const char *const versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

enum { RPC_PARSE = -32700, RPC_INVALID_REQUEST = -32600, RPC_NO_METHOD = -32601, RPC_INVALID_PARAMS = -32602,
       RPC_INTERNAL = -32603, RPC_RESOURCE_NOT_FOUND = -32002 };

int mcp_version_supported(const char *v)
{
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
        if (v && strcmp(v, versions[i]) == 0)
            return 1;
    return 0;
}

static char *dump(json_t *v)
{
    char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    return s;
}

static char *rpc_error(json_t *id, int code, const char *message)
{
    return dump(json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id ? id : json_null(), "error", "code", code,
                          "message", message));
}

static char *rpc_result(json_t *id, json_t *result)
{
    return dump(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result ? result : json_object()));
}

static json_t *tool_json(const struct srv_op *op)
{
    json_t *t = json_pack("{s:s,s:s,s:o,s:o,s:{s:b,s:b,s:b,s:b}}", "name", op->name, "description", op->summary,
                          "inputSchema", srv_op_schema(op->params), "outputSchema", srv_op_schema(op->result),
                          "annotations", "readOnlyHint", (op->flags & OP_READONLY) != 0, "destructiveHint",
                          (op->flags & OP_DESTRUCTIVE) != 0, "idempotentHint",
                          (op->flags & (OP_IDEMPOTENT | OP_READONLY)) != 0, "openWorldHint", 0);
    return t;
}

static json_t *tools_list(void)
{
    json_t *a = json_array();
    for (size_t i = 0; i < srv_nops; i++)
        if (srv_ops[i].flags & OP_TOOL)
            json_array_append_new(a, tool_json(&srv_ops[i]));
    return json_pack("{s:o}", "tools", a);
}

/* Runs a tool. Failures of validation or storage are results with isError, not JSON-RPC errors. */
static json_t *tools_call(mn_db *db, const char *ns, const struct srv_op *op, json_t *args)
{
    struct srv_call c = {0};
    c.db = db;
    c.params = args;
    c.ns = ns;
    json_t *r;
    if (srv_call_op(op, &c) != MN_OK) {
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

/* resources/read of mnemo://sessions/{id}: the session and its newest 100 messages. */
static char *resources_read(mn_db *db, const char *ns, json_t *id, json_t *params)
{
    const char *uri = json_string_value(json_object_get(params, "uri"));
    if (!uri)
        return rpc_error(id, RPC_INVALID_PARAMS, "uri: required, a string");
    if (strncmp(uri, SESSION_URI, strlen(SESSION_URI)) != 0)
        return rpc_error(id, RPC_RESOURCE_NOT_FOUND, "unknown resource (expected mnemo://sessions/{id})");
    struct srv_call c = {0}, h = {0};
    c.db = h.db = db;
    c.ns = h.ns = ns;
    c.params = json_pack("{s:s}", "session_id", uri + strlen(SESSION_URI));
    h.params = json_pack("{s:s,s:i,s:b}", "session_id", uri + strlen(SESSION_URI), "limit", 100, "tail", 1);
    char *out;
    if (srv_call_op(srv_op_find("session_get"), &c) != MN_OK ||
        srv_call_op(srv_op_find("history"), &h) != MN_OK) {
        char msg[600];
        snprintf(msg, sizeof msg, "resource not found: %s", c.msg[0] ? c.msg : h.msg);
        out = rpc_error(id, RPC_RESOURCE_NOT_FOUND, msg);
    } else {
        json_t *body = json_pack("{s:O,s:O}", "session", json_object_get(c.result, "session"), "messages",
                                 json_object_get(h.result, "messages"));
        char *text = json_dumps(body, JSON_COMPACT);
        json_decref(body);
        out = rpc_result(id, json_pack("{s:[{s:s,s:s,s:s}]}", "contents", "uri", uri, "mimeType", "application/json",
                                       "text", text ? text : "{}"));
        free(text);
    }
    json_decref(c.result);
    json_decref(h.result);
    json_decref(c.params);
    json_decref(h.params);
    return out;
}

static char *initialize(json_t *id, json_t *params)
{
    const char *want = json_string_value(json_object_get(params, "protocolVersion"));
    const char *v = mcp_version_supported(want) ? want : versions[0];
    return rpc_result(
        id, json_pack("{s:s,s:{s:{s:b},s:{s:b,s:b}},s:{s:s,s:s,s:s},s:s}", "protocolVersion", v, "capabilities",
                      "tools", "listChanged", 0, "resources", "subscribe", 0, "listChanged", 0, "serverInfo", "name",
                      "mnemo", "title", "mnemo conversation memory", "version", mn_version(), "instructions",
                      "Conversation memory. Pass the session (continuation) id to every tool. Call `append` for "
                      "each turn and `context` to get the token-budgeted messages for the next model call."));
}

static char *request(mn_db *db, const char *ns, json_t *id, const char *method, json_t *params)
{
    if (params && !json_is_object(params))
        return rpc_error(id, RPC_INVALID_PARAMS, "params must be an object");
    if (!strcmp(method, "initialize"))
        return initialize(id, params);
    if (!strcmp(method, "ping"))
        return rpc_result(id, json_object());
    if (!strcmp(method, "tools/list"))
        return rpc_result(id, tools_list());
    if (!strcmp(method, "tools/call")) {
        json_t *name = json_object_get(params, "name"), *args = json_object_get(params, "arguments");
        if (!json_is_string(name))
            return rpc_error(id, RPC_INVALID_PARAMS, "name: required, the tool's name");
        const struct srv_op *op = srv_op_find(json_string_value(name));
        if (!op || !(op->flags & OP_TOOL)) {
            char msg[200];
            snprintf(msg, sizeof msg, "unknown tool: %.100s", json_string_value(name));
            return rpc_error(id, RPC_INVALID_PARAMS, msg);
        }
        if (args && !json_is_null(args) && !json_is_object(args))
            return rpc_error(id, RPC_INVALID_PARAMS, "arguments must be an object");
        json_t *a = json_is_object(args) ? json_incref(args) : json_object();
        json_t *r = tools_call(db, ns, op, a);
        json_decref(a);
        return r ? rpc_result(id, r) : rpc_error(id, RPC_INTERNAL, "out of memory");
    }
    if (!strcmp(method, "resources/list"))
        return rpc_result(id, resources_list(db, ns));
    if (!strcmp(method, "resources/templates/list"))
        return rpc_result(id, json_pack("{s:[{s:s,s:s,s:s,s:s}]}", "resourceTemplates", "uriTemplate",
                                        SESSION_URI "{id}", "name", "session", "description",
                                        "a session with its newest 100 messages", "mimeType", "application/json"));
    if (!strcmp(method, "resources/read"))
        return resources_read(db, ns, id, params);
    char msg[200];
    snprintf(msg, sizeof msg, "method not found: %.100s", method);
    return rpc_error(id, RPC_NO_METHOD, msg);
}

void mcp_handle(mn_db *db, const char *ns, const char *msg, size_t len, char **reply)
{
    *reply = NULL;
    json_error_t jerr;
    json_t *m = json_loadb(msg, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!m) {
        *reply = rpc_error(NULL, RPC_PARSE, "parse error: not JSON");
        return;
    }
    if (!json_is_object(m)) {
        *reply = rpc_error(NULL, RPC_INVALID_REQUEST,
                           json_is_array(m) ? "batches are not supported" : "a message must be a JSON object");
        json_decref(m);
        return;
    }
    json_t *id = json_object_get(m, "id"), *method = json_object_get(m, "method");
    const char *ver = json_string_value(json_object_get(m, "jsonrpc"));
    if (id && !json_is_string(id) && !json_is_integer(id)) {
        *reply = rpc_error(NULL, RPC_INVALID_REQUEST, "id must be a string or an integer");
    } else if (!ver || strcmp(ver, "2.0") != 0) {
        *reply = rpc_error(id, RPC_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
    } else if (!method) {
        if (!id || (!json_object_get(m, "result") && !json_object_get(m, "error")))
            *reply = rpc_error(id, RPC_INVALID_REQUEST, "method: required");
        /* else a response to a request we never send: ignored */
    } else if (!json_is_string(method)) {
        *reply = rpc_error(id, RPC_INVALID_REQUEST, "method must be a string");
    } else if (id) {
        *reply = request(db, ns, id, json_string_value(method), json_object_get(m, "params"));
        if (!*reply)
            *reply = rpc_error(id, RPC_INTERNAL, "internal error");
    }
    /* notifications (notifications/initialized, notifications/cancelled, …) need no reply */
    json_decref(m);
}

int mcp_stdio(mn_db *db)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n == 0)
            continue;
        char *reply = NULL;
        mcp_handle(db, NULL, line, (size_t)n, &reply);
        if (reply) {
            fputs(reply, stdout);
            fputc('\n', stdout);
            fflush(stdout);
            free(reply);
        }
    }
    free(line);
    return 0;
}
