/*
 * server.h — `mnemo serve` and `mnemo mcp`: the operation table (one record per API operation,
 * from which the REST routes, the MCP tools and the OpenAPI document are made), the request core
 * that runs without a socket (so fuzz targets drive it), and the two transports. Public header
 * (include/mnemo.h) and jansson only; design notes in docs/http-api.md and docs/mcp.md.
 */
#ifndef MNEMO_SERVER_H
#define MNEMO_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mnemo.h"

/* Operation flags. */
enum srv_op_flags {
    OP_READONLY = 1 << 0,    /* MCP readOnlyHint */
    OP_DESTRUCTIVE = 1 << 1, /* MCP destructiveHint */
    OP_TOOL = 1 << 2,        /* offered as an MCP tool */
    OP_STREAM = 1 << 3,      /* REST answers with a stream (export) */
    OP_RAWBODY = 1 << 4,     /* REST body is not a JSON object (import: JSON Lines) */
    OP_IDEMPOTENT = 1 << 5,  /* MCP idempotentHint */
    OP_OPENAI = 1 << 6,      /* OpenAI Conversations API: 200 on success, OpenAI's error shape */
    OP_QUICK = 1 << 7        /* a short read: answered on the server's event loop, not a worker */
};

/* ---- parameter declarations (params.c) ---------------------------------------------------- */

/* The JSON type of a declared parameter. PT_ANY: any JSON value (passed on as JSON text). */
enum srv_ptype { PT_NONE = 0, PT_STRING, PT_INTEGER, PT_NUMBER, PT_BOOLEAN, PT_OBJECT, PT_ARRAY, PT_ANY };

/* Where a REST request carries a parameter; derived from the route (srv_param_in). */
enum srv_pin { PIN_PATH, PIN_QUERY, PIN_BODY };

/* One parameter of an operation, as data: the validator (srv_params_check), the MCP inputSchema,
 * /openapi.json, `mnemo api` and the CLI help are all made from it. Limits exist here once. */
struct srv_param {
    const char *name;      /* snake_case; NULL ends a list */
    enum srv_ptype type;
    enum srv_ptype alt;    /* a second accepted type (metadata: an object or a string of JSON text) */
    int required;
    int has_min, has_max;
    int64_t min, max;      /* integer, number: the range; string: max is maxLength; array: maxItems */
    const char *def;       /* the default as JSON text (filled in when absent), or NULL */
    const char *enums;     /* string: the allowed values, "a|b|c"; array: the values each item
                              may take; or NULL */
    const char *desc;      /* one line, or NULL */
    const char *items;     /* array: the JSON Schema of an item (JSON text), or NULL */
    int session;           /* a session: its UUID or its key, made the UUID before the handler
                              runs (srv_call_op) */
};

/* One call of an operation: the parameters in, the result or the error out. */
struct srv_call {
    mn_db *db;
    json_t *params;          /* object: path, query and body parameters merged (borrowed); once
                                srv_params_check passed, every member is declared, typed (query
                                and path text converted), within its limits, and defaults are filled */
    const struct srv_op *op; /* the operation being run (set by srv_call_op) */
    int invalid_params;      /* the parameters failed the declarations (MCP: JSON-RPC -32602) */
    const char *body;        /* OP_RAWBODY: the raw request body */
    size_t body_len;
    const char *ns;          /* namespace the caller is bound to (API key), NULL: any */
    int for_model;           /* the caller is a model (MCP): redacted values stay redacted */
    json_t *text_params;     /* REST: the names whose values came as text (query string, path),
                                converted to their declared type; NULL (MCP): none, JSON carries
                                its own types */
    json_t *result;          /* on success: an object (owned by the call) */
    char *raw;               /* or, from handlers on hot paths: the object as JSON text (malloc'd) */
    int accept_raw;          /* set by the caller that can send raw as it is (REST) */
    /* Asynchronous completion, offered by a transport with an event loop: a handler that can
     * wait without a thread (append, on the group committer) sets pending, returns MN_OK and
     * later fills result/raw or status/msg and calls resume(resume_ctx) from another thread. */
    void (*resume)(void *ctx);
    void *resume_ctx;
    int pending;
    mn_status status;        /* on failure */
    int http;                /* on failure: an HTTP status overriding the mapped one (403), or 0 */
    char msg[512];           /* on failure: what went wrong, naming the field */
};

typedef mn_status (*srv_handler)(struct srv_call *c);

/* Fails call c: status st and the message (naming the field); returns st. For handlers. */
mn_status srv_fail(struct srv_call *c, mn_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Fails call c with a library status and mn_errmsg() (the status's text when empty). */
mn_status srv_fail_lib(struct srv_call *c, mn_status st);
/* The namespace a call names (`namespace`), else its API key's: a key bound to a namespace
 * cannot name another (403). */
mn_status srv_call_ns(struct srv_call *c, const char **ns);

struct srv_op {
    const char *name;    /* snake_case; also the MCP tool name */
    const char *method;  /* GET, POST, DELETE */
    const char *path;    /* "/v1/sessions/{session_id}/messages" */
    const char *summary; /* one line, for OpenAPI, tools/list and docs */
    const struct srv_param *params; /* the parameters, ended by an entry with name NULL */
    const char *result;  /* JSON Schema (object) of the result, as JSON text */
    unsigned flags;
    srv_handler fn;
};

extern const struct srv_op srv_ops[];
extern const size_t srv_nops;

/* The OpenAI Conversations API handlers (openai.c). */
mn_status srv_op_conv_create(struct srv_call *c);
mn_status srv_op_conv_get(struct srv_call *c);
mn_status srv_op_conv_update(struct srv_call *c);
mn_status srv_op_conv_delete(struct srv_call *c);
mn_status srv_op_items_create(struct srv_call *c);
mn_status srv_op_items_list(struct srv_call *c);
mn_status srv_op_item_get(struct srv_call *c);
mn_status srv_op_item_delete(struct srv_call *c);
/* The graph checkpoint operations (checkpoints.c). */
mn_status srv_op_checkpoint_put(struct srv_call *c);
mn_status srv_op_checkpoint_put_writes(struct srv_call *c);
mn_status srv_op_checkpoint_get(struct srv_call *c);
mn_status srv_op_checkpoint_list(struct srv_call *c);
mn_status srv_op_checkpoint_delete_thread(struct srv_call *c);
mn_status srv_op_document_put(struct srv_call *c);
mn_status srv_op_document_get(struct srv_call *c);
mn_status srv_op_document_delete(struct srv_call *c);
mn_status srv_op_document_search(struct srv_call *c);
mn_status srv_op_document_paths(struct srv_call *c);
/* The extraction job operations (jobs.c). */
mn_status srv_op_memory_extract_queue(struct srv_call *c);
mn_status srv_op_memory_extract_job(struct srv_call *c);
/* The Mem0-shaped routes (mem0.c). */
mn_status srv_op_mem0_ping(struct srv_call *c);
mn_status srv_op_mem0_add(struct srv_call *c);
mn_status srv_op_mem0_list(struct srv_call *c);
mn_status srv_op_mem0_search(struct srv_call *c);
mn_status srv_op_mem0_get(struct srv_call *c);
mn_status srv_op_mem0_update(struct srv_call *c);
mn_status srv_op_mem0_delete(struct srv_call *c);
mn_status srv_op_mem0_delete_all(struct srv_call *c);
mn_status srv_op_mem0_history(struct srv_call *c);
/* Mem0's entities and batches (mem0_entities.c). */
mn_status srv_op_mem0_entities(struct srv_call *c);
mn_status srv_op_mem0_entity_delete(struct srv_call *c);
mn_status srv_op_mem0_batch_update(struct srv_call *c);
mn_status srv_op_mem0_batch_delete(struct srv_call *c);

/* Appends req (as mn_append_many does with one request) through the group committer when it
 * runs (commit.c): the call returns once the transaction holding these messages has committed.
 * Without a committer, a group of one on the calling thread. */
mn_status srv_append(mn_db *db, const mn_append_request *req, mn_messages **out, char err[256]);
/* Queues an append for the committer without waiting: done(user, …) runs on the committer
 * thread after the commit (stored: the caller's, free with mn_messages_free; err: the message
 * on failure). req's strings and messages must stay valid until then. Returns -1 (nothing
 * queued) when no committer runs: call srv_append instead. */
int srv_append_submit(mn_db *db, const mn_append_request *req,
                      void (*done)(void *user, mn_status st, mn_messages *stored, const char *err), void *user);
/* Starts the committer threads for db (committers; 0: mn_db_append_writers; 0 ok); stops them
 * after draining the queue; counters. */
int srv_commit_start(mn_db *db, int committers);
void srv_commit_stop(void);
void srv_commit_stats(uint64_t *groups, uint64_t *appends, uint64_t *deferrals, size_t *depth, int *committers);

/* Readiness (health.c; docs/scale-out.md). The committers report each group: how many of its
 * appends were acknowledged, how many failed for a reason of the node or the database (busy,
 * unavailable, I/O; not a client's mistake), how many waited for their session's lock, and the
 * last failure's message (may be NULL). srv_commit_start and srv_commit_stop start and stop the
 * prober, a thread that reads from the database once a second when no append was acknowledged
 * meanwhile. */
void srv_health_appends(size_t ok, size_t failed, size_t waited, const char *failure);
/* Makes c (initialised, unused) time its waits on the monotonic clock (commit.c): a backoff
 * must not stretch when the wall clock is set back. */
void srv_cond_monotonic(pthread_cond_t *c);
void srv_health_start(mn_db *db);
void srv_health_stop(void);
/* For /healthz, without waiting (safe on the event loop): returns 1 and *body {"status":"ok"}
 * when the node is ready; 0 when it is degraded — the database unreachable or not answering, or
 * appends failing (three in a row, none acknowledged since, the last within 10 s) — and *body
 * {"status":"degraded","database":"…","appends":"…"} saying which. *body is malloc'd (NULL when
 * out of memory). */
int srv_health_check(char **body);
/* For /metrics: mnemo_ready, mnemo_database_reachable, mnemo_database_probe_failures_total,
 * mnemo_commit_failures_total, mnemo_commit_lock_waits_total, in the exposition format;
 * malloc'd (NULL when out of memory). */
char *srv_health_metrics(void);

/* Background folds (fold.c): worker threads that run the folds context builds queue on db
 * (mn_fold_queue_set). Start before serving (-1: none started, builds then fold themselves
 * within context.fold_timeout_ms); stop after the last request (drops queued jobs, waits for
 * the folds in flight). */
int srv_folds_start(mn_db *db);
void srv_folds_stop(void);
size_t srv_folds_depth(void);

/* Runs op with c->params; fills c->result (or c->raw when c->accept_raw and the handler made
 * text) or c->status/c->msg. Returns c->status. The caller frees result and raw. */
mn_status srv_call_op(const struct srv_op *op, struct srv_call *c);
/* The operation named `name`, or one of its older names (srv_op_aliases); NULL: none. */
const struct srv_op *srv_op_find(const char *name);
/* An older name of an operation, still accepted (docs/names.md). */
struct srv_op_alias {
    const char *alias; /* NULL ends the list */
    const char *name;  /* the operation's name in the table */
};
extern const struct srv_op_alias srv_op_aliases[];
/* op's older names, a JSON array of strings (empty: none). New reference. */
json_t *srv_op_alias_list(const struct srv_op *op);
/* The parsed result schema of an op (new reference; never NULL for a valid table). */
json_t *srv_op_schema(const char *text);
/* The JSON Schema (object) of an op's parameters, generated from its declarations; with
 * only_in >= 0 just those carried there (enum srv_pin). New reference. */
json_t *srv_op_input_schema(const struct srv_op *op, int only_in);
/* The JSON Schema of one declared parameter. New reference. */
json_t *srv_param_schema(const struct srv_param *p);
/* Where REST carries p for op: path (in the route), query (GET, DELETE) or body. */
enum srv_pin srv_param_in(const struct srv_op *op, const struct srv_param *p);
/* The declaration of `name` in op, or NULL. */
const struct srv_param *srv_param_find(const struct srv_op *op, const char *name);
/* "string", "integer", … */
const char *srv_ptype_name(enum srv_ptype t);
/* Checks c->params against c->op's declarations before any handler runs: an undeclared name,
 * a wrong type, a value out of range or not in the enum is MN_INVALID naming the parameter and
 * the limit (c->invalid_params set). Converts a value that came as text, from a REST query
 * string or path ("60", "true"; c->text_params), to its declared type; a JSON value (a body's,
 * MCP arguments) keeps its type, a wrong one refused. Fills defaults in
 * place. */
mn_status srv_params_check(struct srv_call *c);
/* Refuses c's parameters as the validator does: MN_INVALID with the message, c->invalid_params
 * set (REST 400 invalid, MCP -32602). For checks the declarations cannot state (a batch item's
 * fields). Returns MN_INVALID. */
mn_status srv_invalid(struct srv_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* HTTP status for a library status (MN_INVALID 400, …). */
int srv_http_status(mn_status st);

/* ---- the request core (no socket) ------------------------------------------------------------ */

struct srv_response {
    int status;              /* HTTP status */
    char *body;              /* malloc'd; may be NULL (empty) */
    size_t body_len;
    const char *content_type;
    int retry_after;         /* seconds, 0: no header */
    const struct srv_op *op; /* the operation routed to, NULL for others */
    int stream_export;       /* the export route: the transport streams it (ids in export_ids) */
    json_t *export_ids;      /* array of ids to export (owned) */
    char allow[48];          /* 405: the methods the path answers (the Allow header) */
    char read_after[MN_POSITION_MAX]; /* the request's Mnemo-Read-After, for a streamed export */
    char position[MN_POSITION_MAX];   /* the Mnemo-Position header: the node's position after it */
};

/* The request body limit of `mnemo serve` when --max-body is not given (8 MiB), and the longest
 * line `mnemo mcp` reads: one JSON-RPC message is bounded alike on either transport. */
#define SRV_MAX_BODY_DEFAULT ((size_t)8 << 20)

struct srv_limits {
    size_t max_body;         /* bytes */
};

/* Routes a REST request: method, path (no query), query string (may be NULL), body. Fills resp
 * (free with srv_response_release). Thread-safe; db is shared. */
void srv_handle_rest(mn_db *db, const char *ns, const char *method, const char *path, json_t *query,
                     const char *idem_key, const char *body, size_t body_len, struct srv_response *resp);
/* A REST request in two steps, for transports that answer later: start routes and runs the
 * operation; it returns 0 with resp filled, or 1 when the operation is pending (then
 * call.resume, set before start, fires once and srv_rest_finish fills resp). The struct must
 * stay put until then. */
struct srv_rest {
    struct srv_call call;
    const struct srv_op *op;
    json_t *params;
    json_t *text; /* the names given as text (call.text_params) */
};
int srv_rest_start(struct srv_rest *r, mn_db *db, const char *ns, const char *method, const char *path, json_t *query,
                   const char *idem_key, const char *body, size_t body_len, struct srv_response *resp);
void srv_rest_finish(struct srv_rest *r, struct srv_response *resp);
/* The operation a REST method and path route to (NULL: none; *path_known tells 405 from 404). */
const struct srv_op *srv_rest_route(const char *method, const char *path, int *path_known);
/* The methods routes answer on path, as an Allow header value ("GET, DELETE"). */
void srv_rest_allow(const char *path, char *out, size_t cap);
/* Parses "a=1&b=x%20y" (q may be NULL) into a new object of strings, '+' a space, the last of a
 * repeated name winning, empty names left out. NULL when out of memory, or when a name or value
 * is not UTF-8 text or holds a NUL byte: then err (when not NULL) says which parameter.
 * srv_query_count: the parameters in q, the non-empty pieces between '&'s. */
json_t *srv_parse_query(const char *q, char *err, size_t errcap);
size_t srv_query_count(const char *q);
/* Cuts s to its longest prefix that is UTF-8 text (a message cut by "%.60s" inside a character
 * made jansson refuse the whole answer). */
void srv_utf8_clip(char *s);
void srv_response_release(struct srv_response *resp);
/* Fills resp with {"error":{"code","message"}}. */
void srv_error(struct srv_response *resp, int http, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The OpenAPI 3.1 document made from the table. Caller frees with free(). */
char *srv_openapi(void);

/* ---- MCP ------------------------------------------------------------------------------------- */

/* Handles one JSON-RPC message (request, notification or response) of len bytes. *reply gets a
 * malloc'd JSON text to send back, or NULL when nothing is to be sent (notifications and
 * responses). Thread-safe. */
void mcp_handle(mn_db *db, const char *ns, const char *msg, size_t len, char **reply);
/* Streamable HTTP: the request headers the 2026-07-28 revision checks against the body (NULL
 * when absent), and the HTTP status to answer with (200; 400 for an unsupported version or a
 * header mismatch; 404 for an unknown method under 2026-07-28). */
struct mcp_http {
    const char *protocol_version; /* MCP-Protocol-Version */
    const char *method;           /* Mcp-Method */
    const char *name;             /* Mcp-Name */
    int status;                   /* out */
};
/* mcp_handle for a message that came over HTTP with headers h (NULL: exactly mcp_handle). */
void mcp_handle_http(mn_db *db, const char *ns, const char *msg, size_t len, struct mcp_http *h, char **reply);
/* Whether `v` is a protocol revision this server speaks (2026-07-28 or an `initialize` one). */
int mcp_version_supported(const char *v);
/* Serves MCP over stdin/stdout (newline-delimited JSON-RPC) until end of input. A line over
 * SRV_MAX_BODY_DEFAULT bytes is read to its newline without being kept and answered -32600.
 * Returns 0 (1 when out of memory). */
int mcp_stdio(mn_db *db);

/* ---- HTTP service ---------------------------------------------------------------------------- */

/* The browser-origin policy (policy.c, docs/security.md). */
struct srv_policy {
    const char *allowed_origins; /* comma-separated Origin values also allowed ("*": any), or NULL */
    const char *allowed_hosts;   /* comma-separated Host values ("host" or "host:port") also served */
    unsigned port;               /* the port the server listens on: its own loopback origins */
    int check_host;              /* loopback without keys: only loopback Host values are served */
    const char *own_hosts;       /* comma-separated hosts of the server's own origins, http://HOST:port
                                    ("localhost,127.0.0.1,[::1]" when it holds both loopback
                                    addresses); NULL: none */
};
/* Strict origin: scheme (http/https) :// host [: port], nothing else; port defaults per scheme.
 * 0 ok, -1 not an origin. */
int srv_origin_parse(const char *origin, char *scheme, size_t scap, char *host, size_t hcap, unsigned *port);
/* 1 when the Host header may be served. */
int srv_host_allowed(const struct srv_policy *p, const char *host_header);
/* 1 when a request with this Origin (NULL: none) may be answered. */
int srv_origin_allowed(const struct srv_policy *p, const char *origin, const char *host_header);
/* id (a session id that the library accepted) with A-F in lower case, as it is stored; into out. */
const char *srv_id_lower(const char *id, char *out, size_t cap);
/* Whether text is a number as JSON writes one ([-]digits, and with `real` [.digits][e[±]digits]):
 * strtoll and strtod also take leading spaces, a '+', hex, "inf" and "nan", which no client means
 * to send as a limit (params.c; the CLI's options too). */
int srv_number_text(const char *text, int real);
/* Whether every entry of the configured lists is an origin / a host (a typo there would only ever
 * refuse, or a path in an origin never match): 0, or -1 with err naming the first that is not. */
int srv_policy_check(const struct srv_policy *p, char *err, size_t cap);
/* 1 when Content-Type is application/json (parameters allowed), or with ndjson also
 * application/x-ndjson / application/jsonl. */
int srv_content_type_ok(const char *ctype, int ndjson);

/* API keys (auth.c). */
struct srv_key;
struct srv_keys {
    struct srv_key *keys;
    size_t n;
};
/* Parses server.api_keys ("sha256hex:ns,…"; ns "*" = all) plus an optional plaintext key from
 * the environment bound to plain_ns (NULL: all). 0, or -1 with err filled. */
int srv_keys_parse(const char *spec, const char *plain_key, const char *plain_ns, struct srv_keys *out, char *err,
                   size_t errcap);
void srv_keys_free(struct srv_keys *k);
/* 1 when the Authorization header ("Bearer KEY", or "Token KEY" as Mem0's client sends it) carries a
 * configured key; *ns gets its namespace (NULL: all). */
int srv_keys_check(const struct srv_keys *k, const char *authorization, const char **ns);

struct srv_options {
    const char *listen;       /* "127.0.0.1:8765" */
    const char *api_key;      /* NULL: none (then only loopback may be bound) */
    const char *key_ns;       /* namespace the key is bound to, NULL: all */
    const char *allow_origin; /* extra allowed Origin values (comma-separated; --allow-origin and
                                 server.allowed_origins), NULL: the server's own only */
    const char *allowed_hosts; /* server.allowed_hosts: more Host values served on loopback without keys */
    size_t max_body;          /* bytes; 0: 8 MiB */
    int verbose;              /* log every request (info) */
    const char *api_keys;     /* server.api_keys: "sha256hex:namespace,…" */
    int gc_interval;          /* seconds between background gc/prune runs; 0: none */
    int prune_days;           /* memory.auto_prune_days; 0: no auto-prune */
    int max_inflight;         /* server.max_inflight: more requests at once get 429; 0: no limit */
    int request_timeout_ms;   /* server.request_timeout_ms: a body arriving slower gets 408, one not whole
                                 by twice it is closed; 0: none */
    int idle_timeout_s;       /* server.idle_timeout_seconds: idle connections are closed */
    int header_timeout_ms;    /* server.header_timeout_ms: headers not complete by then: closed; 0: none */
    int drain_timeout_s;      /* server.drain_timeout_seconds: SIGTERM waits this long for
                                 requests; 0: 120 */
    int max_connections;      /* server.max_connections: open connections at once; 0: 4096 */
    int max_connections_per_ip; /* server.max_connections_per_ip: 0: no limit; -1: none on
                                   loopback, 256 elsewhere */
    int max_query_params;     /* server.max_query_params: more get 400; 0: 100 */
    int workers;              /* server.workers: threads for requests that may take long; 0: 16 */
    int io_threads;           /* server.io_threads: event-loop threads; 0: one per CPU (at most 8) */
    int committers;           /* server.committers: group committers; 0: mn_db_append_writers (2 on
                                 PostgreSQL, 1 on SQLite) */
    int window_default;       /* memory.strategy is window: a context call without a strategy
                                 never summarises, so the event loop may answer it */
};

/* The web page at / (web.c): queues it on mc with its security headers and sets *status (GET
 * and HEAD only: http.c answers other methods 405). Returns an MHD_Result. The
 * Content-Security-Policy it sends. */
struct MHD_Connection;
int srv_web_send(struct MHD_Connection *mc, int *status);
const char *srv_web_csp(void);
/* The page's icon at /favicon.ico (web.c): an SVG, queued like the page (GET and HEAD only). */
int srv_web_icon_send(struct MHD_Connection *mc, int *status);

/* Log format of srv_log: 0 text (key=value), 1 JSON lines. */
void srv_log_format(int json);

/* Runs the HTTP service until SIGTERM/SIGINT; prints the URL on stdout when ready. Returns the
 * process exit status (0 clean, 1 failure). */
int srv_run_http(mn_db *db, const struct srv_options *o);

/* Metrics (Prometheus text). */
void srv_metrics_record(const char *route, int status, double seconds);
/* The Prometheus text; db (may be NULL) adds the embedding queue. Caller frees. */
char *srv_metrics_render(mn_db *db);
/* One background cleanup run: expired threads purged, sessions pruned. */
void srv_metrics_cleanup(int64_t purged, int64_t pruned);

/* Logging to stderr: one line, "level=… msg=…" text. */
void srv_log(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
