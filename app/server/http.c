/*
 * http.c — the HTTP transport of `mnemo serve` over libmicrohttpd: listen address and loopback
 * rule, bearer API key, request bodies with a size limit, /healthz, /metrics, /openapi.json,
 * /mcp (Streamable HTTP, JSON responses), the REST routes of rest.c, the streamed export, logs
 * and graceful shutdown on SIGTERM/SIGINT. Notes: docs/http-api.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/server.h"

/* ---- logging --------------------------------------------------------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_json;

void srv_log_format(int json) { log_json = json; }

/* "k=v k2=\"a b\"" → a JSON object with ts and level first (values stay strings). */
static char *log_to_json(const char *ts, const char *level, const char *msg)
{
    json_t *o = json_pack("{s:s,s:s}", "ts", ts, "level", level);
    const char *p = msg;
    while (o && *p) {
        while (*p == ' ')
            p++;
        const char *eq = strchr(p, '=');
        const char *sp = strchr(p, ' ');
        if (!eq || (sp && sp < eq)) { /* a word without key: keep it under "text" */
            size_t n = sp ? (size_t)(sp - p) : strlen(p);
            if (n)
                json_object_set_new(o, "text", json_stringn(p, n));
            p += n;
            continue;
        }
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq - p), p);
        const char *v = eq + 1, *end;
        json_t *val;
        if (*v == '"') {
            end = strchr(v + 1, '"');
            if (!end)
                end = v + strlen(v);
            val = json_stringn(v + 1, (size_t)(end - v - 1));
            p = *end ? end + 1 : end;
        } else {
            end = strchr(v, ' ');
            if (!end)
                end = v + strlen(v);
            val = json_stringn(v, (size_t)(end - v));
            p = end;
        }
        json_object_set_new(o, key, val ? val : json_null());
    }
    char *out = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return out;
}

void srv_log(const char *level, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[80];
    snprintf(when, sizeof when, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ts.tv_nsec / 1000000) % 1000);
    char *j = log_json ? log_to_json(when, level, msg) : NULL;
    pthread_mutex_lock(&log_lock);
    if (j)
        fprintf(stderr, "%s\n", j);
    else
        fprintf(stderr, "ts=%s level=%s %s\n", when, level, msg);
    pthread_mutex_unlock(&log_lock);
    free(j);
}

/* ---- metrics --------------------------------------------------------------------------------- */

enum { MAX_SERIES = 256, NBUCKETS = 10 };
static const double buckets[NBUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 2.5};
struct series {
    char route[32];
    int status;
    uint64_t count;
};
struct hist {
    char route[32];
    uint64_t le[NBUCKETS];
    uint64_t count;
    double sum;
};
static struct {
    pthread_mutex_t lock;
    struct series s[MAX_SERIES];
    size_t ns;
    struct hist h[64];
    size_t nh;
    uint64_t errors;
    int64_t in_flight;
} metrics = {PTHREAD_MUTEX_INITIALIZER, {{{0}, 0, 0}}, 0, {{{0}, {0}, 0, 0}}, 0, 0, 0};

void srv_metrics_record(const char *route, int status, double seconds)
{
    pthread_mutex_lock(&metrics.lock);
    size_t i = 0;
    for (; i < metrics.ns; i++)
        if (metrics.s[i].status == status && strcmp(metrics.s[i].route, route) == 0)
            break;
    if (i == metrics.ns && i < MAX_SERIES) {
        snprintf(metrics.s[i].route, sizeof metrics.s[i].route, "%s", route);
        metrics.s[i].status = status;
        metrics.ns++;
    }
    if (i < MAX_SERIES)
        metrics.s[i].count++;
    size_t j = 0;
    for (; j < metrics.nh; j++)
        if (strcmp(metrics.h[j].route, route) == 0)
            break;
    if (j == metrics.nh && j < sizeof metrics.h / sizeof metrics.h[0]) {
        snprintf(metrics.h[j].route, sizeof metrics.h[j].route, "%s", route);
        metrics.nh++;
    }
    if (j < metrics.nh) {
        for (int b = 0; b < NBUCKETS; b++)
            if (seconds <= buckets[b])
                metrics.h[j].le[b]++;
        metrics.h[j].count++;
        metrics.h[j].sum += seconds;
    }
    if (status >= 500)
        metrics.errors++;
    pthread_mutex_unlock(&metrics.lock);
}

static struct {
    pthread_mutex_t lock;
    uint64_t runs, purged, pruned;
} cleanup = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};

void srv_metrics_cleanup(int64_t purged, int64_t pruned)
{
    pthread_mutex_lock(&cleanup.lock);
    cleanup.runs++;
    cleanup.purged += (uint64_t)purged;
    cleanup.pruned += (uint64_t)pruned;
    pthread_mutex_unlock(&cleanup.lock);
}

/* Counts a request in (+1) or out (-1); returns how many were in progress before. */
static int64_t metrics_in_flight(int delta)
{
    pthread_mutex_lock(&metrics.lock);
    int64_t before = metrics.in_flight;
    metrics.in_flight += delta;
    pthread_mutex_unlock(&metrics.lock);
    return before;
}

char *srv_metrics_render(mn_db *db)
{
    size_t cap = 4096 + (MAX_SERIES + 64 * (NBUCKETS + 3)) * 128, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
#define EMIT(...)                                                                                      \
    do {                                                                                               \
        if (len < cap) {                                                                               \
            int n_ = snprintf(out + len, cap - len, __VA_ARGS__);                                      \
            len = n_ < 0 ? cap : len + (size_t)n_;                                                     \
        }                                                                                              \
    } while (0)
    pthread_mutex_lock(&metrics.lock);
    EMIT("# HELP mnemo_http_requests_total HTTP requests by route and status.\n"
         "# TYPE mnemo_http_requests_total counter\n");
    for (size_t i = 0; i < metrics.ns && len < cap; i++)
        EMIT("mnemo_http_requests_total{route=\"%s\",status=\"%d\"} %llu\n", metrics.s[i].route, metrics.s[i].status,
             (unsigned long long)metrics.s[i].count);
    EMIT("# HELP mnemo_http_request_duration_seconds Time to answer a request, by route.\n"
         "# TYPE mnemo_http_request_duration_seconds histogram\n");
    for (size_t j = 0; j < metrics.nh && len < cap; j++) {
        for (int b = 0; b < NBUCKETS; b++)
            EMIT("mnemo_http_request_duration_seconds_bucket{route=\"%s\",le=\"%g\"} %llu\n", metrics.h[j].route,
                 buckets[b], (unsigned long long)metrics.h[j].le[b]);
        EMIT("mnemo_http_request_duration_seconds_bucket{route=\"%s\",le=\"+Inf\"} %llu\n", metrics.h[j].route,
             (unsigned long long)metrics.h[j].count);
        EMIT("mnemo_http_request_duration_seconds_sum{route=\"%s\"} %.6f\n", metrics.h[j].route, metrics.h[j].sum);
        EMIT("mnemo_http_request_duration_seconds_count{route=\"%s\"} %llu\n", metrics.h[j].route,
             (unsigned long long)metrics.h[j].count);
    }
    EMIT("# HELP mnemo_http_errors_total Requests answered with a 5xx status.\n"
         "# TYPE mnemo_http_errors_total counter\nmnemo_http_errors_total %llu\n",
         (unsigned long long)metrics.errors);
    EMIT("# HELP mnemo_http_requests_in_flight Requests being answered now.\n"
         "# TYPE mnemo_http_requests_in_flight gauge\nmnemo_http_requests_in_flight %lld\n",
         (long long)metrics.in_flight);
    pthread_mutex_unlock(&metrics.lock);
    pthread_mutex_lock(&cleanup.lock);
    EMIT("# HELP mnemo_cleanup_runs_total Background cleanup runs (gc, auto-prune).\n"
         "# TYPE mnemo_cleanup_runs_total counter\nmnemo_cleanup_runs_total %llu\n"
         "# HELP mnemo_cleanup_sessions_total Sessions removed by the background worker, by reason.\n"
         "# TYPE mnemo_cleanup_sessions_total counter\nmnemo_cleanup_sessions_total{reason=\"expired\"} %llu\n"
         "mnemo_cleanup_sessions_total{reason=\"pruned\"} %llu\n",
         (unsigned long long)cleanup.runs, (unsigned long long)cleanup.purged, (unsigned long long)cleanup.pruned);
    pthread_mutex_unlock(&cleanup.lock);
    uint64_t groups = 0, appends = 0, deferrals = 0;
    size_t depth = 0;
    int committers = 0;
    srv_commit_stats(&groups, &appends, &deferrals, &depth, &committers);
    EMIT("# HELP mnemo_commit_groups_total Transactions of the group committer (one fsync each).\n"
         "# TYPE mnemo_commit_groups_total counter\nmnemo_commit_groups_total %llu\n"
         "# HELP mnemo_commit_appends_total Append requests committed by the group committer.\n"
         "# TYPE mnemo_commit_appends_total counter\nmnemo_commit_appends_total %llu\n"
         "# HELP mnemo_commit_queue_depth Append requests waiting for the next commit.\n"
         "# TYPE mnemo_commit_queue_depth gauge\nmnemo_commit_queue_depth %zu\n"
         "# HELP mnemo_commit_deferrals_total Appends queued again because another writer held their session.\n"
         "# TYPE mnemo_commit_deferrals_total counter\nmnemo_commit_deferrals_total %llu\n"
         "# HELP mnemo_commit_committers Group committer threads (server.committers).\n"
         "# TYPE mnemo_commit_committers gauge\nmnemo_commit_committers %d\n",
         (unsigned long long)groups, (unsigned long long)appends, depth, (unsigned long long)deferrals, committers);
    int64_t ok = 0, failed = 0, rolled_back = 0, embedded = 0, queued = 0;
    mn_compaction_counts(&ok, &failed, &rolled_back);
    EMIT("# HELP mnemo_compactions_total Folds of older turns into a session's summary, by outcome.\n"
         "# TYPE mnemo_compactions_total counter\n"
         "mnemo_compactions_total{outcome=\"ok\"} %lld\nmnemo_compactions_total{outcome=\"failed\"} %lld\n"
         "mnemo_compactions_total{outcome=\"rolled_back\"} %lld\n",
         (long long)ok, (long long)failed, (long long)rolled_back);
    if (db && mn_embed_counts(db, &embedded, &queued) == MN_OK)
        EMIT("# HELP mnemo_embed_queue_depth Messages waiting to be embedded.\n"
             "# TYPE mnemo_embed_queue_depth gauge\nmnemo_embed_queue_depth %lld\n"
             "# HELP mnemo_embedded_messages Messages with a stored vector.\n"
             "# TYPE mnemo_embedded_messages gauge\nmnemo_embedded_messages %lld\n",
             (long long)queued, (long long)embedded);
#undef EMIT
    if (len >= cap)
        len = cap - 1;
    out[len] = '\0';
    return out;
}

/* ---- the service ----------------------------------------------------------------------------- */

struct server {
    mn_db *db;
    const struct srv_options *o;
    size_t max_body;
    char *openapi;
    int verbose;
    pthread_mutex_t lock; /* export threads */
    pthread_cond_t idle;
    int exports;
    struct srv_keys keys; /* none: no auth */
    pthread_t worker;
    int worker_running, stopping;
    pthread_cond_t wake; /* under lock: wakes the worker to stop */
    atomic_int closing;  /* SIGTERM seen: new requests are answered 503 */
    struct srv_policy policy; /* Host, Origin (policy.c) */
    int max_query;            /* server.max_query_params */
    /* Requests suspended while a worker or the committer answers them: at the end of the drain
     * the ones still running are resumed and closed before MHD stops (it aborts otherwise). */
    pthread_mutex_t wait_lock;
    struct conn *waiting;
    atomic_int abandoned_open; /* abandoned requests whose 503 is not sent yet */
    int drained;               /* under wait_lock: abandon_waiting ran, nothing may be suspended */
    /* Open connections, for the header and body deadlines (server.header_timeout_ms,
     * server.request_timeout_ms): the reaper thread shuts down a socket whose request headers,
     * or whose request body, are not complete in time (slowloris, and its slow-body form). */
    pthread_mutex_t track_lock;
    struct tracked *tracked;
    pthread_cond_t track_wake;
    int track_stop;
    struct {             /* threads that answer the requests the event loop hands off */
        pthread_mutex_t lock;
        pthread_cond_t work;
        struct conn *head, *tail;
        int stop;
        pthread_t *threads;
        int n;
    } pool;
};

struct conn {
    int started;  /* on_request has seen it: its headers are in */
    int nul_in_path; /* its path has a %00 (on_uri) */
    char *query;  /* the query string as sent (after '?'; NULL without one): on_uri */
    char *body;
    size_t len, cap;
    int too_big;
    int overloaded; /* arrived with server.max_inflight requests already in progress: 429 */
    int late;       /* the body took longer than server.request_timeout_ms to arrive: 408 */
    int body_timed; /* its body is under the reaper's deadline (PHASE_BODY) */
    int refused;    /* refused on its headers (refuse_on_headers): resp is its answer, its body dropped */
    const char *ns; /* the namespace its API key is bound to (srv->keys'); NULL: none */
    int framing;    /* its body's length is declared two ways (400) or in a coding not read (501) */
    int hosts, bad_host; /* its Host lines; not exactly one (HTTP/1.0: at most one): 400 */
    struct timespec t0;
    /* answering: READING the body; WAITING (suspended) for a worker or the committer; the
     * answer READY to send on the event loop */
    enum { READING, WAITING, READY } state;
    struct server *srv;
    struct MHD_Connection *mc;
    const char *url, *method; /* MHD's: valid until the request completes */
    const char *route_name;
    int web;                  /* the answer is the web page */
    struct srv_rest rest;     /* a REST call, which may finish on the committer thread */
    struct srv_response resp; /* the answer, made wherever the request ran */
    struct conn *next;        /* the worker queue */
    struct conn *wprev, *wnext; /* srv->waiting, under wait_lock, while suspended */
    int abandoned;            /* under wait_lock: still running when the drain ended */
    atomic_int refs;          /* MHD's, and while suspended the answering thread's */
};

/* What an open connection is waiting for from its client, and so whether it has a deadline. */
enum phase { PHASE_NONE, PHASE_HEADERS, PHASE_BODY };

/* One open connection (MHD_OPTION_NOTIFY_CONNECTION), under srv->track_lock. */
struct tracked {
    int fd;
    int linked;
    enum phase phase;         /* none: no deadline (answering, or a limit is 0) */
    struct timespec deadline; /* by when the headers or the body must be complete */
    struct tracked *prev, *next;
};

static void conn_unref(struct conn *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    srv_response_release(&c->resp);
    free(c->query);
    free(c->body);
    free(c);
}

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Queues a response. The malloc'd body (may be NULL) is handed to MHD, which frees it, rather
 * than copied (a history answer is ~18 KB). */
static enum MHD_Result send_bytes(struct MHD_Connection *mc, int status, const char *ctype, char *body, size_t len,
                                  int retry_after, const char *allow)
{
    struct MHD_Response *r = body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
                                  : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r)
        free(body);
    if (!r)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    if (retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (status == 401)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == 405 && allow && *allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    enum MHD_Result ret = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_resp(struct MHD_Connection *mc, struct srv_response *resp)
{
    char *body = resp->body;
    resp->body = NULL; /* MHD's now */
    return send_bytes(mc, resp->status, resp->content_type, body, resp->body_len, resp->retry_after, resp->allow);
}

/* ---- streamed export: a thread runs mn_export into a pipe the response reads ------------------ */

struct export_job {
    struct server *srv;
    int rfd, wfd;
    const char **ids;
    size_t n;
    json_t *idlist;
    atomic_int rc;
    atomic_int refs;
};

static void job_unref(struct export_job *j)
{
    if (atomic_fetch_sub(&j->refs, 1) != 1)
        return;
    free(j->ids);
    json_decref(j->idlist);
    free(j);
}

static int pipe_write(void *user, const char *bytes, size_t len)
{
    struct export_job *j = user;
    while (len) {
        ssize_t w = write(j->wfd, bytes, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return 1; /* reader gone (EPIPE): stop */
        }
        bytes += w;
        len -= (size_t)w;
    }
    return 0;
}

static void *export_thread(void *arg)
{
    struct export_job *j = arg;
    struct server *srv = j->srv;
    mn_status rc = mn_export(srv->db, j->ids, j->n, pipe_write, j);
    atomic_store(&j->rc, (int)rc);
    if (rc)
        srv_log("warn", "msg=\"export stopped\" status=%s", mn_status_name(rc));
    close(j->wfd);
    job_unref(j);
    pthread_mutex_lock(&srv->lock);
    if (--srv->exports == 0)
        pthread_cond_broadcast(&srv->idle);
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

static ssize_t export_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct export_job *j = cls;
    (void)pos;
    for (;;) {
        ssize_t n = read(j->rfd, buf, max);
        if (n > 0)
            return n;
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0 && atomic_load(&j->rc) == 0)
            return MHD_CONTENT_READER_END_OF_STREAM;
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
}

static void export_free(void *cls)
{
    struct export_job *j = cls;
    close(j->rfd);
    job_unref(j);
}

static enum MHD_Result start_export(struct server *srv, struct MHD_Connection *mc, struct srv_response *resp)
{
    size_t n = json_array_size(resp->export_ids);
    /* a missing session is a 404 before any byte is sent */
    for (size_t i = 0; i < n; i++) {
        mn_session *s = NULL;
        mn_status st = mn_session_get(srv->db, json_string_value(json_array_get(resp->export_ids, i)), &s);
        mn_session_free(s);
        if (st) {
            srv_error(resp, srv_http_status(st), mn_status_name(st), "%s", mn_errmsg());
            return send_resp(mc, resp);
        }
    }
    struct export_job *j = calloc(1, sizeof *j);
    int fds[2];
    if (!j || pipe(fds) != 0) {
        free(j);
        srv_error(resp, 500, "io", "cannot start the export");
        return send_resp(mc, resp);
    }
    j->srv = srv;
    j->rfd = fds[0];
    j->wfd = fds[1];
    j->n = n;
    j->idlist = json_incref(resp->export_ids);
    j->ids = calloc(n ? n : 1, sizeof *j->ids);
    for (size_t i = 0; i < n && j->ids; i++)
        j->ids[i] = json_string_value(json_array_get(j->idlist, i));
    atomic_init(&j->rc, 0);
    atomic_init(&j->refs, 2);
    struct MHD_Response *r = j->ids ? MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, export_read, j,
                                                                        export_free)
                                    : NULL;
    if (!r) {
        close(fds[0]);
        close(fds[1]);
        free(j->ids);
        json_decref(j->idlist);
        free(j);
        srv_error(resp, 500, "no_memory", "cannot start the export");
        return send_resp(mc, resp);
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
    pthread_mutex_lock(&srv->lock);
    srv->exports++;
    pthread_mutex_unlock(&srv->lock);
    pthread_t t;
    if (pthread_create(&t, NULL, export_thread, j) != 0) {
        close(j->wfd);
        atomic_store(&j->rc, (int)MN_IO);
        job_unref(j);
        pthread_mutex_lock(&srv->lock);
        srv->exports--;
        pthread_mutex_unlock(&srv->lock);
    } else {
        pthread_detach(t);
    }
    enum MHD_Result ret = MHD_queue_response(mc, 200, r);
    MHD_destroy_response(r); /* export_free runs when MHD is done with it */
    return ret;
}

/* ---- the browser-origin policy (policy.c; docs/security.md) -------------------------------- */

/* Refuses (fills resp, returns 1) a request the browser-origin policy does not serve: a Host
 * that is not loopback on a loopback listener without keys (DNS rebinding), an Origin that is
 * not the server's own or configured (cross-site requests), or a browser's cross-site fetch
 * without Origin (Sec-Fetch-Site: a no-cors GET from another page). */
static int refuse_foreign(struct server *srv, struct conn *c)
{
    const char *host = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    const char *origin = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Origin");
    const char *site = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Sec-Fetch-Site");
    if (!srv_host_allowed(&srv->policy, host)) {
        c->route_name = "forbidden_host";
        srv_error(&c->resp, 403, "forbidden",
                  "Host %.200s is not served: this server listens on loopback without API keys and answers "
                  "loopback names only (server.allowed_hosts adds more)",
                  host);
        return 1;
    }
    if (strcmp(c->url, "/") == 0 && !origin)
        return 0; /* the web page: a link from anywhere may open it; it holds no data */
    if (!srv_origin_allowed(&srv->policy, origin, host)) {
        c->route_name = "forbidden_origin";
        srv_error(&c->resp, 403, "forbidden",
                  "Origin %.200s is not allowed: only this server's own origin may call it "
                  "(server.allowed_origins or --allow-origin adds more)",
                  origin);
        return 1;
    }
    if (!origin && site && (strcmp(site, "cross-site") == 0 || strcmp(site, "same-site") == 0)) {
        c->route_name = "forbidden_origin";
        srv_error(&c->resp, 403, "forbidden", "a request from another site's page (Sec-Fetch-Site: %.20s) is not "
                                              "allowed", site);
        return 1;
    }
    return 0;
}

/* A request with a body, or a declared Content-Type, that is not JSON: 415 (fills resp,
 * returns 1). Browsers send text/plain, forms and multipart without asking (no preflight);
 * application/json they may not, so a page cannot make a write this server takes. */
static int refuse_media_type(struct conn *c, int ndjson)
{
    const char *m = c->method;
    if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
        return 0;
    const char *ct = MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    if ((!ct && c->len == 0 && !c->too_big) || srv_content_type_ok(ct, ndjson))
        return 0;
    c->route_name = "unsupported_media_type";
    srv_error(&c->resp, 415, "unsupported_media_type", "Content-Type %.100s: request bodies must be application/json%s",
              ct ? ct : "(none)", ndjson ? " (or application/x-ndjson for import)" : "");
    return 1;
}

/* ---- the request handler --------------------------------------------------------------------- */

static void too_big(struct server *srv, struct conn *c)
{
    c->route_name = "too_big";
    srv_error(&c->resp, 413, "too_big", "request body over the limit of %zu bytes (--max-body)", srv->max_body);
}

/* The refusals a request's headers decide, before its body: framing, a declared size over the
 * limit, Host and Origin, load, shutdown, the API key. Fills c->resp and returns 1 when c is
 * refused; else notes the key's namespace in c->ns. /healthz is never refused here, and the web
 * page needs no key. Runs on the event loop as the headers come in (on_request). */
static int refuse_on_headers(struct server *srv, struct conn *c)
{
    struct srv_response *resp = &c->resp;
    const char *url = c->url;
    if (c->framing) {
        c->route_name = "framing";
        if (c->framing == 501)
            srv_error(resp, 501, "not_implemented", "Transfer-Encoding other than chunked is not supported");
        else
            srv_error(resp, 400, "invalid",
                      "the body's length is declared two ways (two Content-Length values, or Content-Length "
                      "with Transfer-Encoding)");
        return 1;
    }
    if (c->bad_host) {
        c->route_name = "bad_host";
        srv_error(resp, 400, "invalid", "the request has %d Host headers: HTTP/1.1 needs exactly one", c->hosts);
        return 1;
    }
    if (c->too_big) {
        too_big(srv, c);
        return 1;
    }
    if (strcmp(url, "/healthz") == 0)
        return 0;
    if (refuse_foreign(srv, c))
        return 1;
    if (c->overloaded && strcmp(url, "/metrics") != 0) {
        c->route_name = "overloaded";
        srv_error(resp, 429, "rate_limited", "%d requests are in progress (server.max_inflight); retry shortly",
                  srv->o->max_inflight);
        resp->retry_after = 1;
        return 1;
    }
    if (atomic_load(&srv->closing)) {
        c->route_name = "closing";
        srv_error(resp, 503, "unavailable", "the server is shutting down");
        resp->retry_after = 1;
        return 1;
    }
    if (strcmp(url, "/") == 0) /* the web page (web.c): no data in it, so no key needed */
        return 0;
    if (srv->keys.n &&
        !srv_keys_check(&srv->keys, MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Authorization"), &c->ns)) {
        c->route_name = "unauthorized";
        srv_error(resp, 401, "unauthorized", "a valid API key is required: Authorization: Bearer <key>");
        return 1;
    }
    return 0;
}

/* Makes the answer to a request in c->resp (sends nothing: it may run on a worker thread while
 * the connection is suspended; MHD is only asked for header values then). A request refused on
 * its headers has its answer already. Returns 1 when a REST operation is pending on the
 * committer (c->rest.call.resume fires later), else 0. */
static int answer(struct server *srv, struct conn *c)
{
    struct MHD_Connection *mc = c->mc;
    const char *url = c->url, *method = c->method, *ns = c->ns;
    struct srv_response *resp = &c->resp;
    if (c->refused)
        return 0;
    if (c->too_big) { /* a body without a length that grew past the limit */
        too_big(srv, c);
        return 0;
    }
    if (c->late) {
        c->route_name = "timeout";
        srv_error(resp, 408, "timeout", "request body not received within %d ms (server.request_timeout_ms)",
                  srv->o->request_timeout_ms);
        return 0;
    }
    if (strcmp(url, "/healthz") == 0) {
        c->route_name = "healthz";
        resp->status = 200;
        resp->body = strdup("{\"status\":\"ok\"}");
        resp->body_len = resp->body ? strlen(resp->body) : 0;
        resp->content_type = "application/json";
        return 0;
    }
    if (strcmp(url, "/") == 0) {
        c->route_name = "web";
        c->web = 1;
        return 0;
    }
    if (strcmp(url, "/metrics") == 0 && strcmp(method, "GET") == 0 && ns) {
        c->route_name = "metrics";
        srv_error(resp, 403, "forbidden", "/metrics counts every namespace: it needs a key not bound to one");
        return 0;
    }
    if (strcmp(url, "/metrics") == 0 && strcmp(method, "GET") == 0) {
        c->route_name = "metrics";
        resp->status = 200;
        resp->body = srv_metrics_render(srv->db);
        resp->body_len = resp->body ? strlen(resp->body) : 0;
        resp->content_type = "text/plain; version=0.0.4";
        return 0;
    }
    if (strcmp(url, "/openapi.json") == 0 && strcmp(method, "GET") == 0) {
        c->route_name = "openapi";
        resp->status = 200;
        resp->body = srv->openapi ? strdup(srv->openapi) : NULL;
        resp->body_len = resp->body ? strlen(resp->body) : 0;
        resp->content_type = "application/json";
        return 0;
    }
    if (strcmp(url, "/mcp") == 0) {
        c->route_name = "mcp";
        const char *pv = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "MCP-Protocol-Version");
        if (strcmp(method, "POST") != 0) {
            srv_error(resp, 405, "method_not_allowed", "this server answers MCP with JSON on POST only");
            snprintf(resp->allow, sizeof resp->allow, "POST");
        } else if (refuse_media_type(c, 0)) {
            return 0;
        } else {
            /* versions and the 2026-07-28 header checks are mcp.c's: it answers JSON-RPC errors */
            struct mcp_http h = {pv, MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Mcp-Method"),
                                 MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Mcp-Name"), 200};
            char *reply = NULL;
            mcp_handle_http(srv->db, ns, c->body ? c->body : "", c->len, &h, &reply);
            if (reply) {
                resp->status = h.status;
                resp->body = reply;
                resp->body_len = strlen(reply);
                resp->content_type = "application/json";
            } else {
                resp->status = 202;
            }
        }
        return 0;
    }
    int known;
    const struct srv_op *op = srv_rest_route(method, url, &known);
    if (op && refuse_media_type(c, (op->flags & OP_RAWBODY) != 0))
        return 0;
    if (c->nul_in_path || MHD_get_connection_values(mc, MHD_GET_ARGUMENT_KIND, NULL, NULL) > 0) {
        /* a %00 in the path (decoded, it cut the path short: "/v1/memories/%00x" routed as
         * "/v1/memories"), or a raw NUL byte: libmicrohttpd found a '?' that on_uri did not */
        c->route_name = "bad_query";
        srv_error(resp, 400, "invalid", "the URL holds a NUL byte");
        return 0;
    }
    size_t nq = srv_query_count(c->query);
    if (nq > (size_t)srv->max_query) {
        c->route_name = "bad_query";
        srv_error(resp, 400, "invalid", "query: %zu parameters, over the limit of %d (server.max_query_params)", nq,
                  srv->max_query);
        return 0;
    }
    char bad[128];
    json_t *query = srv_parse_query(c->query, bad, sizeof bad);
    if (!query) {
        c->route_name = "bad_query";
        if (bad[0])
            srv_error(resp, 400, "invalid", "%s", bad);
        else
            srv_error(resp, 503, "unavailable", "out of memory");
        return 0;
    }
    int pending = srv_rest_start(&c->rest, srv->db, ns, method, url, query,
                                 MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Idempotency-Key"),
                                 c->body ? c->body : "", c->len, resp);
    json_decref(query);
    c->route_name = c->rest.op ? c->rest.op->name : (resp->status == 405 ? "method_not_allowed" : "not_found");
    return pending;
}

/* Sends c's answer (on the event loop), records it and logs it. */
static enum MHD_Result deliver(struct server *srv, struct MHD_Connection *mc, struct conn *c)
{
    int status = c->resp.status;
    enum MHD_Result ret;
    if (c->web)
        ret = srv_web_send(mc, c->method, &status) == MHD_YES ? MHD_YES : MHD_NO;
    else if (c->resp.stream_export)
        ret = start_export(srv, mc, &c->resp);
    else
        ret = send_resp(mc, &c->resp);
    if (!c->web)
        status = c->resp.status;
    srv_response_release(&c->resp);
    double secs = since(&c->t0);
    srv_metrics_record(c->route_name ? c->route_name : "unknown", status, secs);
    if (srv->verbose || status >= 500)
        srv_log(status >= 500 ? "error" : "info", "method=%s path=%.200s route=%s status=%d ms=%.2f", c->method, c->url,
                c->route_name ? c->route_name : "unknown", status, secs * 1000);
    return ret;
}

/* Suspends c while a worker or the committer answers it; ready() resumes it. Returns 0, and
 * suspends nothing, once the drain is over (abandon_waiting): libmicrohttpd aborts the process
 * when it stops with a connection suspended, and a request whose headers came before SIGTERM may
 * finish its body after the drain gave up. */
static int suspend(struct server *srv, struct conn *c)
{
    pthread_mutex_lock(&srv->wait_lock);
    if (srv->drained) {
        pthread_mutex_unlock(&srv->wait_lock);
        return 0;
    }
    c->state = WAITING;
    atomic_fetch_add(&c->refs, 1); /* the answering thread's, dropped in ready() */
    c->wprev = NULL;
    c->wnext = srv->waiting;
    if (srv->waiting)
        srv->waiting->wprev = c;
    srv->waiting = c;
    MHD_suspend_connection(c->mc);
    pthread_mutex_unlock(&srv->wait_lock);
    return 1;
}

/* The answer is in: the event loop sends it once MHD resumes the connection. After the drain
 * gave up on c (abandoned: answered 503 and closed) the answer is dropped. */
static void ready(struct conn *c)
{
    struct server *srv = c->srv;
    pthread_mutex_lock(&srv->wait_lock);
    if (!c->abandoned) {
        if (c->wprev)
            c->wprev->wnext = c->wnext;
        else
            srv->waiting = c->wnext;
        if (c->wnext)
            c->wnext->wprev = c->wprev;
        c->state = READY;
        MHD_resume_connection(c->mc);
    }
    pthread_mutex_unlock(&srv->wait_lock);
    conn_unref(c);
}

/* The drain is over: every request still suspended is resumed to be answered 503 and closed,
 * so that MHD_stop_daemon finds none suspended (it aborts the process otherwise). Returns how
 * many. Their threads finish on their own and drop the answer (ready). */
static int abandon_waiting(struct server *srv)
{
    int n = 0;
    pthread_mutex_lock(&srv->wait_lock);
    for (struct conn *c = srv->waiting; c; c = c->wnext, n++) {
        c->abandoned = 1;
        MHD_resume_connection(c->mc);
    }
    srv->waiting = NULL;
    srv->drained = 1;
    atomic_store(&srv->abandoned_open, n);
    pthread_mutex_unlock(&srv->wait_lock);
    /* let the event loops send the 503s before MHD_stop_daemon closes the sockets (bounded) */
    for (int i = 0; i < 300 && atomic_load(&srv->abandoned_open) > 0; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    return n;
}

/* ---- the header deadline (slowloris) ---------------------------------------------------------- */

static void deadline_in(struct timespec *t, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct tracked *t = calloc(1, sizeof *t);
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = t;
        if (!t || !ci)
            return;
        t->fd = ci->connect_fd;
        t->linked = 1;
        if (srv->o->header_timeout_ms > 0) {
            t->phase = PHASE_HEADERS;
            deadline_in(&t->deadline, srv->o->header_timeout_ms);
        }
        pthread_mutex_lock(&srv->track_lock);
        t->next = srv->tracked;
        if (srv->tracked)
            srv->tracked->prev = t;
        srv->tracked = t;
        pthread_mutex_unlock(&srv->track_lock);
    } else if (*socket_context) { /* closed: MHD closes the socket after this returns */
        struct tracked *t = *socket_context;
        pthread_mutex_lock(&srv->track_lock);
        if (t->linked) {
            if (t->prev)
                t->prev->next = t->next;
            else
                srv->tracked = t->next;
            if (t->next)
                t->next->prev = t->prev;
        }
        pthread_mutex_unlock(&srv->track_lock);
        free(t);
        *socket_context = NULL;
    }
}

/* A connection starts waiting for a request's headers (kept alive: the next request may wait as
 * long as an idle connection may), or for a body (twice server.request_timeout_ms from the
 * headers: a body still arriving after one is answered 408 when it ends, and one that does not
 * end by two is closed), or for nothing the reaper watches. Only with its limit set. */
static void track_phase(struct server *srv, struct MHD_Connection *mc, enum phase phase)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    struct tracked *t = ci ? ci->socket_context : NULL;
    if (!t)
        return;
    long ms = 0;
    if (phase == PHASE_HEADERS) {
        long idle = (long)(srv->o->idle_timeout_s > 0 ? srv->o->idle_timeout_s : 60) * 1000;
        ms = srv->o->header_timeout_ms > 0 ? (idle > srv->o->header_timeout_ms ? idle : srv->o->header_timeout_ms) : 0;
    } else if (phase == PHASE_BODY) {
        ms = 2L * srv->o->request_timeout_ms;
    }
    pthread_mutex_lock(&srv->track_lock);
    t->phase = ms > 0 ? phase : PHASE_NONE;
    if (ms > 0)
        deadline_in(&t->deadline, ms);
    pthread_mutex_unlock(&srv->track_lock);
}

/* Shuts down the sockets whose headers or body are late: MHD then sees the end of the stream
 * and closes the connection (the socket stays open until it does, so the fd is never reused
 * under us). */
static void *reaper(void *arg)
{
    struct server *srv = arg;
    long tick = 250; /* a quarter of the shortest deadline, at most 250 ms */
    if (srv->o->header_timeout_ms > 0 && srv->o->header_timeout_ms / 4 < tick)
        tick = srv->o->header_timeout_ms / 4;
    if (srv->o->request_timeout_ms > 0 && srv->o->request_timeout_ms / 2 < tick)
        tick = srv->o->request_timeout_ms / 2;
    pthread_mutex_lock(&srv->track_lock);
    while (!srv->track_stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (tick > 10 ? tick : 10) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&srv->track_wake, &srv->track_lock, &until);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int closed[3] = {0};
        for (struct tracked *t = srv->tracked; t; t = t->next) {
            if (t->phase != PHASE_NONE && (now.tv_sec > t->deadline.tv_sec ||
                                           (now.tv_sec == t->deadline.tv_sec && now.tv_nsec >= t->deadline.tv_nsec))) {
                shutdown(t->fd, SHUT_RDWR);
                closed[t->phase]++;
                t->phase = PHASE_NONE;
            }
        }
        if (closed[PHASE_HEADERS] && srv->verbose)
            srv_log("info", "msg=\"closed connections with late headers\" count=%d header_timeout_ms=%d",
                    closed[PHASE_HEADERS], srv->o->header_timeout_ms);
        if (closed[PHASE_BODY] && srv->verbose)
            srv_log("info", "msg=\"closed connections with late bodies\" count=%d request_timeout_ms=%d",
                    closed[PHASE_BODY], srv->o->request_timeout_ms);
    }
    pthread_mutex_unlock(&srv->track_lock);
    return NULL;
}

/* A REST operation that was pending on the committer has finished (committer thread). */
static void rest_resumed(void *ctx)
{
    struct conn *c = ctx;
    srv_rest_finish(&c->rest, &c->resp);
    ready(c);
}

/* Stops the worker pool after the queue is empty (the event loop has stopped handing off). */
static void pool_stop(struct server *srv)
{
    pthread_mutex_lock(&srv->pool.lock);
    srv->pool.stop = 1;
    pthread_cond_broadcast(&srv->pool.work);
    pthread_mutex_unlock(&srv->pool.lock);
    for (int i = 0; i < srv->pool.n; i++)
        pthread_join(srv->pool.threads[i], NULL);
    free(srv->pool.threads);
    pthread_cond_destroy(&srv->pool.work);
    pthread_mutex_destroy(&srv->pool.lock);
}

static void *pool_thread(void *arg)
{
    struct server *srv = arg;
    pthread_mutex_lock(&srv->pool.lock);
    for (;;) {
        while (!srv->pool.head && !srv->pool.stop)
            pthread_cond_wait(&srv->pool.work, &srv->pool.lock);
        struct conn *c = srv->pool.head;
        if (!c)
            break;
        srv->pool.head = c->next;
        if (!srv->pool.head)
            srv->pool.tail = NULL;
        pthread_mutex_unlock(&srv->pool.lock);
        pthread_mutex_lock(&srv->wait_lock);
        int gone = c->abandoned; /* its connection is closed: nothing to ask MHD */
        pthread_mutex_unlock(&srv->wait_lock);
        if (!gone)
            answer(srv, c); /* no resume set: the operation finishes here */
        ready(c);
        pthread_mutex_lock(&srv->pool.lock);
    }
    pthread_mutex_unlock(&srv->pool.lock);
    return NULL;
}

/* Where a request with its body read is answered: on the event loop (quick: fixed pages,
 * errors, OP_QUICK reads), handed to the committer (a REST append: the connection waits
 * suspended, no thread held), or on a worker thread (everything else, which may take long:
 * a context that summarises, MCP, search, import). */
enum plan { ON_LOOP, ON_COMMITTER, ON_WORKER };

/* A context request under the window strategy only reads (no summariser call): the hot path of
 * an agent's turn, answered on the loop without a hand-off. The body is small; a body that does
 * not parse goes to a worker, which answers the error. */
static int window_context(const struct server *srv, const struct conn *c)
{
    json_t *body = c->len ? json_loadb(c->body, c->len, 0, NULL) : json_object();
    json_t *st = json_object_get(body, "strategy");
    json_t *query = c->query && !st && srv_query_count(c->query) <= (size_t)srv->max_query ? srv_parse_query(c->query, NULL, 0)
                                                                                           : NULL;
    const char *q = json_string_value(json_object_get(query, "strategy"));
    const char *name = json_is_string(st) ? json_string_value(st) : st ? "" : q; /* the body wins */
    int window = json_is_object(body) && (name ? strcmp(name, "window") == 0 : srv->o->window_default);
    json_decref(query);
    json_decref(body);
    return window;
}

static enum plan plan(struct server *srv, const struct conn *c)
{
    if (c->refused || c->too_big || c->late || strcmp(c->url, "/") == 0 ||
        strcmp(c->url, "/healthz") == 0 || strcmp(c->url, "/metrics") == 0 || strcmp(c->url, "/openapi.json") == 0)
        return ON_LOOP;
    if (strcmp(c->url, "/mcp") == 0)
        return ON_WORKER;
    int known;
    const struct srv_op *op = srv_rest_route(c->method, c->url, &known);
    if (!op || (op->flags & OP_QUICK) || (strcmp(op->name, "context") == 0 && window_context(srv, c)))
        return ON_LOOP;
    return strcmp(op->name, "append") == 0 ? ON_COMMITTER : ON_WORKER;
}

/* A request's line is in (MHD_OPTION_URI_LOG_CALLBACK, before libmicrohttpd parses the query):
 * its record starts here, with the query string, which is then cut from libmicrohttpd's copy so
 * that it parses no parameter. libmicrohttpd keeps each one in the connection's 64 KiB pool and,
 * once that is full, answers nothing at all until server.header_timeout_ms (from ~1,000 short
 * parameters, or 400 of 100 bytes); answer() counts them against server.max_query_params and
 * parses them (srv_parse_query). uri points into libmicrohttpd's read buffer, which it writes
 * itself (it ends the path at the '?' next). A URL with a NUL byte before its '?' keeps its query
 * from this (strchr stops at the NUL) and meets libmicrohttpd's limit: answer() refuses it when
 * it was parsed, and past the limit the connection closes at server.header_timeout_ms, as
 * before. A %00 in the path is noted for answer() to refuse: decoded, it cuts the path short. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *mc)
{
    struct conn *c = calloc(1, sizeof *c);
    char *mark = uri ? strchr(uri, '?') : NULL;
    if (!c)
        return NULL;
    atomic_init(&c->refs, 1);
    c->srv = cls;
    c->mc = mc;
    size_t path_len = mark ? (size_t)(mark - uri) : uri ? strlen(uri) : 0;
    for (size_t i = 0; i + 2 < path_len; i++)
        c->nul_in_path |= uri[i] == '%' && uri[i + 1] == '0' && uri[i + 2] == '0';
    if (mark && mark[1]) {
        if (!(c->query = strdup(mark + 1))) {
            free(c);
            return NULL;
        }
        mark[1] = '\0';
    }
    return c;
}

/* How a request's body is delimited, from all its header lines (libmicrohttpd reads only the
 * first Content-Length, and Transfer-Encoding before it): values that disagree would be read one
 * way here and another way by a proxy in front (request smuggling). */
struct framing {
    const char *length; /* the first Content-Length */
    int lengths_differ;
    int codings; /* Transfer-Encoding lines */
    int chunked; /* one, and it is "chunked" */
    int hosts;   /* Host lines */
};

static enum MHD_Result note_framing(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    struct framing *f = cls;
    (void)kind;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (!f->length)
            f->length = value;
        else if (strcmp(f->length, value) != 0)
            f->lengths_differ = 1;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->codings++;
        f->chunked = f->codings == 1 && strcasecmp(value, "chunked") == 0;
    } else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0) {
        f->hosts++;
    }
    return MHD_YES;
}

static void drop_body(struct conn *c)
{
    free(c->body);
    c->body = NULL;
    c->len = c->cap = 0;
}

/* The client waits for "100 Continue" before it sends the body (libmicrohttpd's own test). */
static int asks_to_continue(struct MHD_Connection *mc, const char *version)
{
    const char *expect = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT);
    return expect && strcasecmp(expect, "100-continue") == 0 && strcmp(version, MHD_HTTP_VERSION_1_1) == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    struct server *srv = cls;
    struct conn *c = *con_cls;
    if (c && c->state == READY)
        return deliver(srv, mc, c);
    if (c && c->state == WAITING) { /* resumed by the end of the drain: the answer will not come */
        pthread_mutex_lock(&srv->wait_lock);
        int gone = c->abandoned;
        pthread_mutex_unlock(&srv->wait_lock);
        if (!gone)
            return MHD_YES;
        char *b = strdup("{\"error\":{\"code\":\"unavailable\",\"message\":\"the server is stopping and this request "
                         "was still running after server.drain_timeout_seconds: its outcome is unknown (retry it "
                         "with the same idempotency key)\"}}");
        return send_bytes(mc, 503, "application/json", b, b ? strlen(b) : 0, 1, NULL);
    }
    if (!c) /* on_uri had no memory for it */
        return MHD_NO;
    if (!c->started) {
        c->started = 1;
        clock_gettime(CLOCK_MONOTONIC, &c->t0);
        c->url = url;
        c->method = method;
        struct framing f = {0};
        MHD_get_connection_values(mc, MHD_HEADER_KIND, note_framing, &f);
        c->framing = f.lengths_differ || (f.codings && f.length) ? 400 : f.codings && !f.chunked ? 501 : 0;
        /* HTTP/1.1 names its host exactly once (RFC 9112, 3.2): a proxy and this server must not
         * read two different ones, and the loopback Host check needs one to read */
        c->hosts = f.hosts;
        c->bad_host = f.hosts > 1 || (f.hosts == 0 && strcmp(version, MHD_HTTP_VERSION_1_0) != 0);
        if (f.length && strtoull(f.length, NULL, 10) > srv->max_body)
            c->too_big = 1;
        if (metrics_in_flight(1) >= srv->o->max_inflight && srv->o->max_inflight > 0)
            c->overloaded = 1;
        c->body_timed = !c->framing && (f.chunked || (f.length && strtoull(f.length, NULL, 10) > 0)) &&
                        srv->o->request_timeout_ms > 0;
        c->refused = refuse_on_headers(srv, c);
        /* A refusal is sent at once when the body's framing is unreadable, or when the client
         * waits for "100 Continue" before sending it; then libmicrohttpd reads no body and
         * closes the connection after the answer. A client that sends its body without asking
         * reads no reply before it is sent, so it is answered after, the body dropped as it
         * comes: a request without a key, from a foreign origin or past the load limit never
         * has its body kept. */
        int at_once = c->refused && (c->framing || asks_to_continue(mc, version));
        c->body_timed = c->body_timed && !at_once;
        if (c->body_timed)
            track_phase(srv, mc, PHASE_BODY); /* the headers are in, the body is due */
        else if (srv->o->header_timeout_ms > 0)
            track_phase(srv, mc, PHASE_NONE); /* the headers are in */
        return at_once ? deliver(srv, mc, c) : MHD_YES;
    }
    if (*upload_size && !c->late && srv->o->request_timeout_ms > 0 &&
        since(&c->t0) * 1000 > srv->o->request_timeout_ms) {
        c->late = 1; /* a trickling body: the rest is read and dropped, then 408 */
        drop_body(c);
    }
    if (*upload_size && c->late) {
        *upload_size = 0;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!c->too_big && c->len + *upload_size > srv->max_body) {
            c->too_big = 1; /* a body without a length grew past the limit: the rest is dropped */
            drop_body(c);
        }
        if (!c->too_big && !c->refused) {
            if (c->len + *upload_size + 1 > c->cap) {
                size_t cap = c->cap ? c->cap : 4096;
                while (cap < c->len + *upload_size + 1)
                    cap *= 2;
                char *nb = realloc(c->body, cap);
                if (!nb)
                    return MHD_NO;
                c->body = nb;
                c->cap = cap;
            }
            memcpy(c->body + c->len, upload, *upload_size);
            c->len += *upload_size;
            c->body[c->len] = '\0';
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (c->body_timed) {
        c->body_timed = 0;
        track_phase(srv, mc, PHASE_NONE); /* the body is in */
    }
    enum plan where = plan(srv, c);
    if (where != ON_LOOP && !suspend(srv, c)) { /* the drain is over: too late to start */
        c->route_name = "closing";
        srv_error(&c->resp, 503, "unavailable", "the server is shutting down");
        c->resp.retry_after = 1;
        return deliver(srv, mc, c);
    }
    switch (where) {
    case ON_LOOP:
        answer(srv, c);
        return deliver(srv, mc, c);
    case ON_COMMITTER:
        /* suspended first: the commit may finish before this function returns */
        c->rest.call.resume = rest_resumed;
        c->rest.call.resume_ctx = c;
        if (!answer(srv, c))
            ready(c); /* answered at once (an error, or no committer): send it when resumed */
        return MHD_YES;
    case ON_WORKER:
        pthread_mutex_lock(&srv->pool.lock);
        if (srv->pool.tail)
            srv->pool.tail->next = c;
        else
            srv->pool.head = c;
        srv->pool.tail = c;
        pthread_cond_signal(&srv->pool.work);
        pthread_mutex_unlock(&srv->pool.lock);
        return MHD_YES;
    }
    return MHD_NO;
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct server *srv = cls;
    struct conn *c = *con_cls;
    if (c) {
        if (c->started)
            metrics_in_flight(-1);
        pthread_mutex_lock(&srv->wait_lock);
        if (c->abandoned)
            atomic_fetch_sub(&srv->abandoned_open, 1);
        pthread_mutex_unlock(&srv->wait_lock);
        conn_unref(c); /* a request abandoned at the drain lives on until its thread is done */
        *con_cls = NULL;
    }
    if (srv->o->header_timeout_ms > 0 && toe == MHD_REQUEST_TERMINATED_COMPLETED_OK)
        track_phase(srv, mc, PHASE_HEADERS); /* kept alive: the next request's headers are due */
}

/* ---- listen address -------------------------------------------------------------------------- */

static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sslen, char *err, size_t errcap)
{
    char host[256] = "127.0.0.1", port[16] = "8765";
    const char *colon = strrchr(spec, ':');
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || (close[1] && close[1] != ':'))
            return snprintf(err, errcap, "--listen %s: expected [IPv6]:PORT", spec), -1;
        snprintf(host, sizeof host, "%.*s", (int)(close - spec - 1), spec + 1);
        if (close[1] == ':')
            snprintf(port, sizeof port, "%s", close + 2);
    } else if (colon) {
        if (colon != spec)
            snprintf(host, sizeof host, "%.*s", (int)(colon - spec), spec);
        snprintf(port, sizeof port, "%s", colon + 1);
    } else if (spec[0] >= '0' && spec[0] <= '9' && !strchr(spec, '.')) {
        snprintf(port, sizeof port, "%s", spec);
    } else {
        snprintf(host, sizeof host, "%s", spec);
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!port[0] || *end || p < 0 || p > 65535)
        return snprintf(err, errcap, "--listen %s: port must be 0 to 65535", spec), -1;
    struct addrinfo hints = {0}, *ai = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(host, port, &hints, &ai);
    if (rc != 0 || !ai)
        return snprintf(err, errcap, "--listen %s: %s", spec, gai_strerror(rc)), -1;
    memcpy(ss, ai->ai_addr, ai->ai_addrlen);
    *sslen = ai->ai_addrlen;
    freeaddrinfo(ai);
    return 0;
}

static int is_loopback(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
    if (ss->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
        if (IN6_IS_ADDR_LOOPBACK(a))
            return 1;
        if (IN6_IS_ADDR_V4MAPPED(a))
            return a->s6_addr[12] == 127;
    }
    return 0;
}

/* The background worker: every gc_interval seconds, purge expired threads (mn_gc) and, with
 * memory.auto_prune_days, sessions idle longer than that (mn_prune). The library serialises
 * these with the request threads; a fold in flight on a session is guarded by its own claim. */
static void *worker(void *arg)
{
    struct server *srv = arg;
    pthread_mutex_lock(&srv->lock);
    while (!srv->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += srv->o->gc_interval;
        while (!srv->stopping && pthread_cond_timedwait(&srv->wake, &srv->lock, &until) == 0)
            ;
        if (srv->stopping)
            break;
        pthread_mutex_unlock(&srv->lock);
        int64_t purged = 0, pruned = 0;
        mn_status st = mn_gc(srv->db, &purged);
        if (st)
            srv_log("warn", "msg=\"gc failed\" code=%s", mn_status_name(st));
        if (!st && srv->o->prune_days > 0 && (st = mn_prune(srv->db, srv->o->prune_days, &pruned)))
            srv_log("warn", "msg=\"auto-prune failed\" code=%s", mn_status_name(st));
        if (purged || pruned)
            srv_log("info", "msg=\"cleanup\" expired_purged=%lld pruned=%lld", (long long)purged, (long long)pruned);
        srv_metrics_cleanup(purged, pruned);
        pthread_mutex_lock(&srv->lock);
    }
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

/* The embedding worker: once a second, embed what appends queued (mn_embed_pending), so that a
 * write never waits on a model. Without an embedder nothing is queued and it only polls; when
 * the embedder fails, it waits 30 s before trying again. */
static void *embedder(void *arg)
{
    struct server *srv = arg;
    pthread_mutex_lock(&srv->lock);
    while (!srv->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        while (!srv->stopping && pthread_cond_timedwait(&srv->wake, &srv->lock, &until) == 0)
            ;
        if (srv->stopping)
            break;
        pthread_mutex_unlock(&srv->lock);
        int64_t queued = 0;
        size_t done = 0;
        mn_status st = mn_embed_counts(srv->db, NULL, &queued);
        if (!st && queued > 0)
            st = mn_embed_pending(srv->db, 512, &done);
        int64_t left = 0; /* counted again: appends meanwhile queue more (queued - done went negative) */
        if (done && mn_embed_counts(srv->db, NULL, &left) == MN_OK)
            srv_log("info", "msg=\"embedded\" messages=%zu queued=%lld", done, (long long)left);
        pthread_mutex_lock(&srv->lock);
        if (st == MN_UNAVAILABLE && queued > 0 && !done) {
            srv_log("warn", "msg=\"embedding paused\" code=%s", mn_status_name(st));
            /* no embedder, or it failed: try again in a while, not every second */
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 30;
            while (!srv->stopping && pthread_cond_timedwait(&srv->wake, &srv->lock, &until) == 0)
                ;
        }
    }
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

int srv_run_http(mn_db *db, const struct srv_options *o)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    char err[512];
    if (parse_listen(o->listen ? o->listen : "127.0.0.1:8765", &ss, &sslen, err, sizeof err) != 0) {
        fprintf(stderr, "mnemo: %s\n", err);
        return 2;
    }
    struct server srv = {0};
    if (srv_keys_parse(o->api_keys, o->api_key, o->key_ns, &srv.keys, err, sizeof err) != 0) {
        fprintf(stderr, "mnemo: %s\n", err);
        return 2;
    }
    if (!is_loopback(&ss) && o->api_key && strlen(o->api_key) < 16) {
        srv_keys_free(&srv.keys);
        fprintf(stderr, "mnemo: refusing to listen on %s with an API key of %zu characters: a key for a non-loopback "
                        "address needs at least 16 (e.g. openssl rand -hex 32)\n",
                o->listen, strlen(o->api_key));
        return 2;
    }
    if (!is_loopback(&ss) && srv.keys.n == 0) {
        srv_keys_free(&srv.keys);
        fprintf(stderr, "mnemo: refusing to listen on %s without an API key: configure server.api_keys "
                        "(SHA-256 hashes), or --api-key-env VAR / MNEMO_API_KEY, or listen on a loopback address\n",
                o->listen);
        return 2;
    }
    struct srv_policy lists = {o->allow_origin, o->allowed_hosts, 0, 0};
    if (srv_policy_check(&lists, err, sizeof err) != 0) {
        srv_keys_free(&srv.keys);
        fprintf(stderr, "mnemo: %s\n", err);
        return 2;
    }
    srv.db = db;
    srv.o = o;
    srv.max_body = o->max_body ? o->max_body : SRV_MAX_BODY_DEFAULT;
    srv.openapi = srv_openapi();
    srv.verbose = o->verbose;
    srv.max_query = o->max_query_params > 0 ? o->max_query_params : 100;
    srv.policy.allowed_origins = o->allow_origin;
    srv.policy.allowed_hosts = o->allowed_hosts;
    srv.policy.check_host = is_loopback(&ss) && srv.keys.n == 0;
    pthread_mutex_init(&srv.wait_lock, NULL);
    pthread_mutex_init(&srv.track_lock, NULL);
    pthread_cond_init(&srv.track_wake, NULL);
    pthread_mutex_init(&srv.lock, NULL);
    pthread_cond_init(&srv.idle, NULL);
    pthread_cond_init(&srv.wake, NULL);

    /* every thread MHD starts inherits this mask: the signals come to sigwait below */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (srv_commit_start(db, o->committers) != 0) {
        fprintf(stderr, "mnemo: cannot start the committer thread\n");
        free(srv.openapi);
        return 1;
    }
    if (srv_folds_start(db) != 0)
        srv_log("warn", "msg=\"no background fold workers: context builds fold themselves\"");
    /* A few event-loop threads (epoll) read requests and answer quick ones; appends wait for
     * their group commit suspended, without a thread; the rest runs on the worker pool. */
    pthread_mutex_init(&srv.pool.lock, NULL);
    pthread_cond_init(&srv.pool.work, NULL);
    srv.pool.threads = calloc((size_t)(o->workers > 0 ? o->workers : 16), sizeof *srv.pool.threads);
    for (int i = 0; srv.pool.threads && i < (o->workers > 0 ? o->workers : 16); i++)
        if (pthread_create(&srv.pool.threads[i], NULL, pool_thread, &srv) == 0)
            srv.pool.n++;
    if (srv.pool.n == 0) {
        fprintf(stderr, "mnemo: cannot start the worker threads\n");
        srv_folds_stop();
        srv_commit_stop();
        free(srv.openapi);
        return 1;
    }
    cpu_set_t mask; /* the CPUs this process may use (taskset, cgroups), not the machine's */
    long cpus = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : sysconf(_SC_NPROCESSORS_ONLN);
    unsigned loops = o->io_threads > 0 ? (unsigned)o->io_threads : cpus < 1 ? 1u : cpus > 8 ? 8u : (unsigned)cpus;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC;
    if (ss.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* Connections: each holds a descriptor; the soft limit is raised to fit (hard limit). */
    unsigned max_conn = o->max_connections > 0 ? (unsigned)o->max_connections : 4096u;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rlim_t want = (rlim_t)max_conn + 256;
        if (rl.rlim_cur < want && rl.rlim_cur != RLIM_INFINITY) {
            rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max_conn + 256)
            max_conn = rl.rlim_cur > 512 ? (unsigned)(rl.rlim_cur - 256) : 256u;
    }
    /* per address: off by default on loopback (every client shares 127.0.0.1, so a cap would
     * shut the owner out along with a flood), 256 elsewhere; server.max_connections_per_ip */
    unsigned per_ip = o->max_connections_per_ip >= 0 ? (unsigned)o->max_connections_per_ip
                      : is_loopback(&ss)             ? 0u
                                                     : 256u;
    /* No SO_REUSEPORT: a second server on the same port must fail ("address in use"), not
     * take half the connections. MHD sets SO_REUSEADDR (a restart binds past TIME_WAIT). */
    /* A connection's memory pool holds its request line (the URL with its query, which on_uri
     * keeps libmicrohttpd from parsing) and its headers (a Cookie header twice: libmicrohttpd
     * copies it to parse it), so it is the header limit (431 or 414 past it), and the read and
     * write buffers. libmicrohttpd zeroes the whole pool
     * after every request, 5% of the server's CPU on small appends; 16 KiB gave +8-10% durable
     * appends/s but refused a browser's 8 KB of localhost cookies, a search of 2,000 CJK
     * characters in its URL, an export of 400 session ids (bench/server/README.md). */
    enum { CONNECTION_POOL = 64 * 1024 };
    /* The event loops run as SCHED_BATCH (they inherit it from this thread; the committer and
     * the workers, started before, keep the normal policy): a request arriving does not preempt
     * the committer, so a loop wakes once for the requests that came meanwhile instead of once
     * per request (1.5 context switches per durable append before, 0.2 after; bench/server).
     * The loops keep their fair share of the CPU; they only give up preempting on wake-up. */
    struct sched_param no_prio = {0};
    int batch = pthread_setschedparam(pthread_self(), SCHED_BATCH, &no_prio) == 0;
    struct MHD_Daemon *d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, &srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, &srv, MHD_OPTION_NOTIFY_COMPLETED, on_completed, &srv,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, &srv,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(o->idle_timeout_s > 0 ? o->idle_timeout_s : 60),
        MHD_OPTION_THREAD_POOL_SIZE, loops, MHD_OPTION_CONNECTION_LIMIT, max_conn, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
        per_ip, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_POOL, MHD_OPTION_END);
    if (batch) /* the threads started from here on (reaper, cleanup, embedder) are normal */
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &no_prio);
    if (!d) {
        int e = errno;
        fprintf(stderr, "mnemo: cannot listen on %s: %s%s\n", o->listen ? o->listen : "127.0.0.1:8765",
                strerror(e ? e : EADDRINUSE),
                e == EADDRINUSE || !e ? " (is another mnemo serve running on this port?)" : "");
        pool_stop(&srv);
        srv_folds_stop();
        srv_commit_stop();
        free(srv.openapi);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    unsigned port = info ? info->port : 0;
    srv.policy.port = port;
    pthread_t reaper_thread;
    int reaper_running = (o->header_timeout_ms > 0 || o->request_timeout_ms > 0) &&
                         pthread_create(&reaper_thread, NULL, reaper, &srv) == 0;
    char host[INET6_ADDRSTRLEN] = "127.0.0.1";
    if (ss.ss_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof host);
    else
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof host);
    printf(ss.ss_family == AF_INET6 ? "http://[%s]:%u\n" : "http://%s:%u\n", host, port);
    fflush(stdout);
    srv_log("info", "msg=\"listening\" url=http://%s%s%s:%u db=%s auth=%s", ss.ss_family == AF_INET6 ? "[" : "", host,
            ss.ss_family == AF_INET6 ? "]" : "", port, mn_db_path(db), srv.keys.n ? "bearer" : "none");

    if (o->gc_interval > 0)
        srv.worker_running = pthread_create(&srv.worker, NULL, worker, &srv) == 0;
    pthread_t embed_thread;
    int embed_running = pthread_create(&embed_thread, NULL, embedder, &srv) == 0;
    int sig = 0;
    sigwait(&set, &sig);
    srv_log("info", "msg=\"shutting down\" signal=%s", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    /* Drain: new requests are answered 503 and every request in progress is answered (an append
     * after its commit) before the loop stops, so nothing acknowledged is lost. Bounded: a
     * summariser call stuck past its own timeouts does not keep the process forever. (Not
     * MHD_quiesce_daemon: with a pool of epoll threads it can abort the process, seen here.) */
    atomic_store(&srv.closing, 1);
    int drain_ticks = (o->drain_timeout_s > 0 ? o->drain_timeout_s : 120) * 100;
    for (int i = 0; i < drain_ticks && metrics_in_flight(0) > 0; i++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    int abandoned = abandon_waiting(&srv);
    if (abandoned)
        srv_log("warn", "msg=\"requests still running at the end of the drain: answered 503\" count=%d "
                        "drain_timeout_seconds=%d",
                abandoned, drain_ticks / 100);
    MHD_stop_daemon(d);
    if (reaper_running) {
        pthread_mutex_lock(&srv.track_lock);
        srv.track_stop = 1;
        pthread_cond_broadcast(&srv.track_wake);
        pthread_mutex_unlock(&srv.track_lock);
        pthread_join(reaper_thread, NULL);
    }
    pool_stop(&srv);
    srv_folds_stop();
    srv_commit_stop(); /* after the event loop: it commits anything still queued, then stops */
    pthread_mutex_lock(&srv.lock);
    srv.stopping = 1;
    pthread_cond_broadcast(&srv.wake);
    pthread_mutex_unlock(&srv.lock);
    if (srv.worker_running)
        pthread_join(srv.worker, NULL);
    if (embed_running)
        pthread_join(embed_thread, NULL);
    pthread_cond_destroy(&srv.wake);
    srv_keys_free(&srv.keys);
    pthread_mutex_lock(&srv.lock);
    while (srv.exports > 0)
        pthread_cond_wait(&srv.idle, &srv.lock);
    pthread_mutex_unlock(&srv.lock);
    pthread_mutex_destroy(&srv.lock);
    pthread_cond_destroy(&srv.idle);
    pthread_mutex_destroy(&srv.wait_lock);
    pthread_mutex_destroy(&srv.track_lock);
    pthread_cond_destroy(&srv.track_wake);
    free(srv.openapi);
    srv_log("info", "msg=\"stopped\"");
    return 0;
}
