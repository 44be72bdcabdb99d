/*
 * http.c — the HTTP transport of `mnemo serve` over libmicrohttpd: listen address and loopback
 * rule (localhost holds 127.0.0.1 and ::1), the connections it accepts (caps, oldest idle closed
 * first, a reserve for /healthz), strict request framing, bearer API key, request bodies with a
 * size limit and a memory budget, /healthz, /metrics, /openapi.json, /mcp (Streamable HTTP, JSON
 * responses), the REST routes of rest.c, the streamed export, logs and graceful shutdown on
 * SIGTERM/SIGINT. Notes: docs/http-api.md, docs/security.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "server/server.h"

/* Under AddressSanitizer its allocator holds the heap, not glibc's: malloc_trim gives nothing
 * back, __sanitizer_purge_allocator does (give_back_memory). */
#if defined(__SANITIZE_ADDRESS__)
#define SRV_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SRV_ASAN 1
#endif
#endif
#ifdef SRV_ASAN
#include <sanitizer/allocator_interface.h>
#endif

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

/* The connection caps and the body budget at work, for /metrics. */
static struct {
    atomic_int open;          /* connections counted against the caps (not those being closed) */
    atomic_int reserve;       /* of which admitted past a cap: /healthz and /metrics only */
    atomic_ullong evicted;    /* idle connections closed to make room for newer ones */
    atomic_ullong refused;    /* connections closed at once: every one in the reserve was busy */
    atomic_ullong body_waits; /* requests answered 503 because bodies in progress filled the budget */
    atomic_size_t body_bytes; /* body bytes held against the budget now */
} conn_stats;

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
    EMIT("# HELP mnemo_http_connections Open connections (server.max_connections), the reserve included.\n"
         "# TYPE mnemo_http_connections gauge\nmnemo_http_connections %d\n"
         "# HELP mnemo_http_connections_reserve Connections admitted past a cap: /healthz and /metrics only.\n"
         "# TYPE mnemo_http_connections_reserve gauge\nmnemo_http_connections_reserve %d\n"
         "# HELP mnemo_http_connections_evicted_total Idle connections closed to make room for new ones.\n"
         "# TYPE mnemo_http_connections_evicted_total counter\nmnemo_http_connections_evicted_total %llu\n"
         "# HELP mnemo_http_connections_refused_total Connections closed at once: caps and reserve full.\n"
         "# TYPE mnemo_http_connections_refused_total counter\nmnemo_http_connections_refused_total %llu\n"
         "# HELP mnemo_http_body_bytes Request body bytes held against the body memory budget.\n"
         "# TYPE mnemo_http_body_bytes gauge\nmnemo_http_body_bytes %zu\n"
         "# HELP mnemo_http_body_budget_waits_total Requests answered 503: the body memory budget was full.\n"
         "# TYPE mnemo_http_body_budget_waits_total counter\nmnemo_http_body_budget_waits_total %llu\n",
         atomic_load(&conn_stats.open), atomic_load(&conn_stats.reserve),
         (unsigned long long)atomic_load(&conn_stats.evicted), (unsigned long long)atomic_load(&conn_stats.refused),
         atomic_load(&conn_stats.body_bytes), (unsigned long long)atomic_load(&conn_stats.body_waits));
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
    char *health = srv_health_metrics();
    if (health)
        EMIT("%s", health);
    free(health);
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
    mn_replica_stats rs;
    if (db && mn_replica_stats_get(db, &rs) == MN_OK && rs.replicas > 0)
        EMIT("# HELP mnemo_replicas Read replicas configured (postgres.replicas), and reachable when last tried.\n"
             "# TYPE mnemo_replicas gauge\nmnemo_replicas{state=\"configured\"} %lld\nmnemo_replicas{state=\"up\"} %lld\n"
             "# HELP mnemo_replica_reads_total Reads that may go to a replica, by where they went.\n"
             "# TYPE mnemo_replica_reads_total counter\nmnemo_replica_reads_total{target=\"replica\"} %lld\n"
             "mnemo_replica_reads_total{target=\"primary\"} %lld\n"
             "# HELP mnemo_replica_waits_total Reads that waited for a replica to replay a position.\n"
             "# TYPE mnemo_replica_waits_total counter\nmnemo_replica_waits_total %lld\n"
             "# HELP mnemo_replica_skips_total Replicas passed over for a read, by why.\n"
             "# TYPE mnemo_replica_skips_total counter\nmnemo_replica_skips_total{reason=\"lagging\"} %lld\n"
             "mnemo_replica_skips_total{reason=\"down\"} %lld\n",
             (long long)rs.replicas, (long long)rs.replicas_up, (long long)rs.on_replica, (long long)rs.on_primary,
             (long long)rs.waited, (long long)rs.lagging, (long long)rs.down);
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
    int reads_on_loop;        /* mn_db_reads_local: short reads answered on the event loops */
    /* Requests suspended while a worker or the committer answers them: at the end of the drain
     * the ones still running are resumed and closed before MHD stops (it aborts otherwise). */
    pthread_mutex_t wait_lock;
    struct conn *waiting;
    atomic_int abandoned_open; /* abandoned requests whose 503 is not sent yet */
    int drained;               /* under wait_lock: abandon_waiting ran, nothing may be suspended */
    /* Open connections (struct slot, by descriptor), under track_lock: the caps the acceptor
     * admits them by (server.max_connections, server.max_connections_per_ip, the reserve), the
     * idle ones it may close for a new one, oldest first, and the header and body deadlines
     * (server.header_timeout_ms, server.request_timeout_ms): the reaper thread shuts down a
     * socket whose request headers, or whose request body, are not complete in time
     * (slowloris, and its slow-body form). */
    pthread_mutex_t track_lock;
    struct slot *slots;
    int nslots, hi;            /* slots[0..nslots); descriptors below hi have been used */
    int idle_head[2], idle_tail[2]; /* the idle lists, oldest first: [0] counted, [1] reserve */
    int n_open[2];             /* connections of each kind, less those being closed (evicted) */
    unsigned max_conn, per_net; /* the caps; per_net 0: none */
    struct net *nets[256];     /* client networks with connections counted (per_net) */
    pthread_cond_t track_wake;
    int track_stop;
    /* Listening sockets (127.0.0.1 and ::1 for localhost), read by the acceptor thread, which
     * hands each connection to libmicrohttpd (MHD_add_connection) once admitted. */
    int listen_fd[2], n_listen, wake_fd[2];
    struct MHD_Daemon *daemon;
    char own[64]; /* this server's own origins' hosts (policy.own_hosts) */
    /* Request bodies held at once, with what parsing them costs (jansson: ~13x their size). */
    size_t body_budget;
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
    char *path;   /* the path as sent, still percent-encoded (on_uri): routes split it before they
                     decode, so that an encoded '/' stays inside its segment; NULL: c->url */
    char *body;
    size_t len, cap;
    int too_big;
    int overloaded; /* arrived with server.max_inflight requests already in progress: 429 */
    int late;       /* the body took longer than server.request_timeout_ms to arrive: 408 */
    int body_timed; /* its body is under the reaper's deadline (PHASE_BODY) */
    int refused;    /* refused on its headers (refuse_on_headers): resp is its answer, its body dropped */
    const char *ns; /* the namespace its API key is bound to (srv->keys'); NULL: none */
    int framing;    /* its body's framing is not one unambiguous reading (400), or in a coding
                       not read (501): see note_framing */
    const char *framing_why; /* what was wrong with it */
    int hosts, bad_host; /* its Host lines; not exactly one (HTTP/1.0: at most one): 400 */
    int reserve;    /* its connection was admitted past a cap: /healthz and /metrics only */
    int close;      /* close the connection after the answer (framing, the reserve) */
    size_t declared; /* its Content-Length */
    size_t budget;  /* bytes of the body budget it holds (srv->body_budget) */
    int over_budget; /* a body without a length outgrew what the budget had left: 503 */
    struct timespec t0;
    /* answering: READING the body; WAITING (suspended) for a worker or the committer; the
     * answer READY to send on the event loop */
    enum { READING, WAITING, READY } state;
    struct server *srv;
    struct MHD_Connection *mc;
    const char *url, *method; /* MHD's: valid until the request completes */
    const char *route_name;
    int web;                  /* the answer is the web page (1) or its icon (2) */
    struct srv_rest rest;     /* a REST call, which may finish on the committer thread */
    struct srv_response resp; /* the answer, made wherever the request ran */
    struct conn *next;        /* the worker queue */
    struct conn *wprev, *wnext; /* srv->waiting, under wait_lock, while suspended */
    int abandoned;            /* under wait_lock: still running when the drain ended */
    atomic_int refs;          /* MHD's, and while suspended the answering thread's */
};

/* What an open connection is waiting for from its client, and so whether it has a deadline. */
enum phase { PHASE_NONE, PHASE_HEADERS, PHASE_BODY };

/* A client's network, for server.max_connections_per_ip: an IPv4 /24, an IPv6 /64, or all of
 * loopback (one machine); a key of 9 bytes: the kind, then the prefix. */
struct net {
    unsigned char key[9];
    unsigned n; /* its counted connections */
    struct net *next;
};

/* One open connection, at srv->slots[its descriptor], under srv->track_lock: from its accept to
 * MHD's MHD_CONNECTION_NOTIFY_CLOSED, just before libmicrohttpd closes the descriptor (so it is
 * never reused under it). */
struct slot {
    unsigned char used;
    unsigned char reserve;  /* admitted past a cap: /healthz and /metrics only, then closed */
    unsigned char idle;     /* in an idle list: waiting for a request's headers */
    unsigned char evicted;  /* shut down to make room; closing */
    int iprev, inext;       /* its idle list, by descriptor; -1: none */
    struct net *net;        /* the network it is counted in, or NULL */
    enum phase phase;       /* none: no deadline (answering, or a limit is 0) */
    struct timespec deadline; /* by when the headers or the body must be complete */
};

/* The path routes match: as sent (percent-encoded), else libmicrohttpd's decoded one. */
static const char *route_path(const struct conn *c) { return c->path ? c->path : c->url; }

static void conn_unref(struct conn *c)
{
    if (atomic_fetch_sub(&c->refs, 1) != 1)
        return;
    srv_response_release(&c->resp);
    free(c->query);
    free(c->path);
    free(c->body);
    free(c);
}

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Headers every response carries: a browser must not read a JSON or NDJSON body (an error
 * echoing input, an export of stored text) as HTML or script. */
static void common_headers(struct MHD_Response *r)
{
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
}

/* Queues a response. The malloc'd body (may be NULL) is handed to MHD, which frees it, rather
 * than copied (a history answer is ~18 KB). With close, the connection is closed after it. */
static enum MHD_Result send_bytes(struct MHD_Connection *mc, int status, const char *ctype, char *body, size_t len,
                                  int retry_after, const char *allow, const char *position, int close_conn)
{
    struct MHD_Response *r = body ? MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE)
                                  : MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!r)
        free(body);
    if (!r)
        return MHD_NO;
    if (ctype)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    common_headers(r);
    if (close_conn)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    if (retry_after > 0) {
        char ra[16];
        snprintf(ra, sizeof ra, "%d", retry_after);
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, ra);
    }
    if (status == 401)
        MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (status == 405 && allow && *allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
    if (position && *position) /* docs/scale-out.md#read-your-writes */
        MHD_add_response_header(r, "Mnemo-Position", position);
    enum MHD_Result ret = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result send_resp(struct MHD_Connection *mc, struct srv_response *resp, int close_conn)
{
    char *body = resp->body;
    resp->body = NULL; /* MHD's now */
    return send_bytes(mc, resp->status, resp->content_type, body, resp->body_len, resp->retry_after, resp->allow,
                      resp->position, close_conn);
}

/* ---- streamed export: a thread runs mn_export into a pipe the response reads ------------------ */

struct export_job {
    struct server *srv;
    int rfd, wfd;
    const char **ids;
    size_t n;
    json_t *idlist;
    char read_after[MN_POSITION_MAX]; /* the request's Mnemo-Read-After */
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
    mn_status rc = mn_db_read_after(srv->db, j->read_after); /* checked with the request */
    if (!rc)
        rc = mn_export(srv->db, j->ids, j->n, pipe_write, j);
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

static enum MHD_Result start_export(struct server *srv, struct MHD_Connection *mc, struct srv_response *resp,
                                    int close_conn)
{
    size_t n = json_array_size(resp->export_ids);
    /* a missing session is a 404 before any byte is sent */
    for (size_t i = 0; i < n; i++) {
        mn_session *s = NULL;
        mn_status st = mn_session_get(srv->db, json_string_value(json_array_get(resp->export_ids, i)), &s);
        mn_session_free(s);
        if (st) {
            srv_error(resp, srv_http_status(st), mn_status_name(st), "%s", mn_errmsg());
            return send_resp(mc, resp, close_conn);
        }
    }
    struct export_job *j = calloc(1, sizeof *j);
    int fds[2];
    if (!j || pipe(fds) != 0) {
        free(j);
        srv_error(resp, 500, "io", "cannot start the export");
        return send_resp(mc, resp, close_conn);
    }
    j->srv = srv;
    j->rfd = fds[0];
    j->wfd = fds[1];
    j->n = n;
    j->idlist = json_incref(resp->export_ids);
    memcpy(j->read_after, resp->read_after, sizeof j->read_after);
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
        return send_resp(mc, resp, close_conn);
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
    common_headers(r);
    if (close_conn)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
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

/* ---- the body budget: request bodies held at once ---------------------------------------------- */

/* Takes n bytes of the budget: 0, or -1 when the bodies in progress leave less than that. A body
 * is at most --max-body and the budget at least that, so one request alone always fits. */
static int budget_take(struct server *srv, size_t n)
{
    size_t used = atomic_load(&conn_stats.body_bytes);
    do {
        if (n > srv->body_budget - used)
            return -1;
    } while (!atomic_compare_exchange_weak(&conn_stats.body_bytes, &used, used + n));
    return 0;
}

/* Bodies larger than this return their memory to the system once answered (give_back_memory). */
enum { TRIM_AFTER = 256 * 1024 };

/* Hands the heap's free pages back to the system: parsing a large body leaves many megabytes of
 * small blocks free (1.94 GB after 64 bodies of 7 MB) that the allocator would otherwise keep. */
static void give_back_memory(void)
{
    malloc_trim(0);
#ifdef SRV_ASAN
    __sanitizer_purge_allocator();
#endif
}

/* Gives back n bytes of the budget, once the request that held them is answered and its body
 * freed. */
static void budget_give(size_t n)
{
    if (!n)
        return;
    atomic_fetch_sub(&conn_stats.body_bytes, n);
    if (n >= TRIM_AFTER)
        give_back_memory();
}

static void body_budget_full(struct server *srv, struct conn *c)
{
    atomic_fetch_add(&conn_stats.body_waits, 1);
    srv_error(&c->resp, 503, "unavailable",
              "request bodies in progress fill the memory kept for them (%zu bytes: 4 x --max-body); retry shortly",
              srv->body_budget);
    c->resp.retry_after = 1;
}

/* The refusals a request's headers decide, before its body: framing, a declared size over the
 * limit, Host and Origin, load, shutdown, the API key. Fills c->resp and returns 1 when c is
 * refused; else notes the key's namespace in c->ns. /healthz is never refused here, and the web
 * page and its icon need no key. Runs on the event loop as the headers come in (on_request). */
static int refuse_on_headers(struct server *srv, struct conn *c)
{
    struct srv_response *resp = &c->resp;
    const char *url = c->url;
    if (c->framing) {
        c->route_name = "framing";
        if (c->framing == 501)
            srv_error(resp, 501, "not_implemented", "Transfer-Encoding other than chunked is not supported");
        else
            srv_error(resp, 400, "invalid", "%s", c->framing_why);
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
    if (c->reserve && strcmp(url, "/metrics") != 0) {
        c->route_name = "connection_limit";
        srv_error(resp, 503, "unavailable",
                  "too many connections are open (server.max_connections, server.max_connections_per_ip): "
                  "this one answers /healthz and /metrics only; retry shortly");
        resp->retry_after = 1;
        return 1;
    }
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
    /* the web page and its icon (web.c): no data in them, so no key needed */
    if (strcmp(url, "/") == 0 || strcmp(url, "/favicon.ico") == 0)
        return 0;
    if (srv->keys.n &&
        !srv_keys_check(&srv->keys, MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Authorization"), &c->ns)) {
        c->route_name = "unauthorized";
        srv_error(resp, 401, "unauthorized", "a valid API key is required: Authorization: Bearer <key>");
        return 1;
    }
    if (c->declared && budget_take(srv, c->declared) != 0) {
        c->route_name = "body_budget";
        body_budget_full(srv, c);
        return 1;
    }
    c->budget = c->declared;
    return 0;
}

/* Makes the answer to a request in c->resp (sends nothing: it may run on a worker thread while
 * the connection is suspended; MHD is only asked for header values then). A request refused on
 * its headers has its answer already. Returns 1 when a REST operation is pending on the
 * committer (c->rest.call.resume fires later), else 0. */
static int answer_request(struct server *srv, struct conn *c)
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
    if (c->over_budget) {
        c->route_name = "body_budget";
        body_budget_full(srv, c);
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
        resp->status = srv_health_check(&resp->body) ? 200 : 503; /* health.c: degraded when appends fail */
        resp->body_len = resp->body ? strlen(resp->body) : 0;
        resp->content_type = "application/json";
        return 0;
    }
    if (strcmp(url, "/") == 0 || strcmp(url, "/favicon.ico") == 0) {
        int icon = url[1] != '\0';
        c->route_name = icon ? "favicon" : "web";
        if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0) {
            c->web = icon ? 2 : 1;
        } else { /* answered here, not by web.c, to carry the headers every answer has */
            srv_error(resp, 405, "method_not_allowed", icon ? "the icon answers GET" : "the page answers GET");
            snprintf(resp->allow, sizeof resp->allow, "GET, HEAD");
        }
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
    const struct srv_op *op = srv_rest_route(method, route_path(c), &known);
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
    int pending = srv_rest_start(&c->rest, srv->db, ns, method, route_path(c), query,
                                 MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Idempotency-Key"),
                                 c->body ? c->body : "", c->len, resp);
    json_decref(query);
    c->route_name = c->rest.op ? c->rest.op->name : (resp->status == 405 ? "method_not_allowed" : "not_found");
    return pending;
}

/* answer_request, its reads seeing what the client's Mnemo-Read-After header names: a position
 * an answer of any node gave it in Mnemo-Position (docs/scale-out.md#read-your-writes). */
static int answer(struct server *srv, struct conn *c)
{
    const char *after = c->refused ? NULL : MHD_lookup_connection_value(c->mc, MHD_HEADER_KIND, "Mnemo-Read-After");
    if (after && mn_db_read_after(srv->db, after) != MN_OK) {
        c->route_name = "bad_header";
        srv_error(&c->resp, 400, "invalid", "Mnemo-Read-After: %s", mn_errmsg());
        return 0;
    }
    int pending = answer_request(srv, c);
    if (after && !pending && c->resp.stream_export) /* its thread reads after the same position */
        snprintf(c->resp.read_after, sizeof c->resp.read_after, "%s", after);
    if (after)
        mn_db_read_after(srv->db, NULL);
    return pending;
}

/* Sends c's answer (on the event loop), records it and logs it. */
static enum MHD_Result deliver(struct server *srv, struct MHD_Connection *mc, struct conn *c)
{
    int status = c->resp.status;
    enum MHD_Result ret;
    if (c->rest.op || (c->route_name && strcmp(c->route_name, "mcp") == 0))
        mn_db_position(srv->db, c->resp.position); /* after its commit, when it wrote */
    if (c->web)
        ret = (c->web == 2 ? srv_web_icon_send : srv_web_send)(mc, &status) == MHD_YES ? MHD_YES : MHD_NO;
    else if (c->resp.stream_export)
        ret = start_export(srv, mc, &c->resp, c->close);
    else
        ret = send_resp(mc, &c->resp, c->close);
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

/* ---- connections: admission by the caps, idle ones closed for new ones, deadlines ------------- */

/* Places for connections admitted past a cap (server.max_connections with none idle to close,
 * or server.max_connections_per_ip): they answer /healthz and /metrics and close. When these
 * are taken too, the oldest idle one is closed for the new one; with none idle, the new one is. */
enum { RESERVE = 16 };

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

/* The network a client address counts in (struct net): IPv4 /24, IPv6 /64, loopback as one. */
static void net_key(const struct sockaddr *sa, unsigned char key[9])
{
    const unsigned char *v4 = NULL;
    memset(key, 0, 9);
    if (sa->sa_family == AF_INET) {
        v4 = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a)) {
            v4 = a->s6_addr + 12;
        } else if (IN6_IS_ADDR_LOOPBACK(a)) {
            key[0] = 'L';
        } else {
            key[0] = '6';
            memcpy(key + 1, a->s6_addr, 8);
        }
    }
    if (v4 && v4[0] == 127) {
        key[0] = 'L'; /* 127.0.0.0/8 is this machine, however many addresses it rotates through */
    } else if (v4) {
        key[0] = '4';
        memcpy(key + 1, v4, 3);
    }
}

/* Where the network `key` is, or would be linked, in srv->nets (under track_lock). */
static struct net **net_find(struct server *srv, const unsigned char key[9])
{
    unsigned h = 0;
    for (int i = 0; i < 9; i++)
        h = h * 31u + key[i];
    struct net **p = &srv->nets[h & 255u];
    while (*p && memcmp((*p)->key, key, 9) != 0)
        p = &(*p)->next;
    return p;
}

static void conn_gauges(struct server *srv)
{
    atomic_store(&conn_stats.open, srv->n_open[0] + srv->n_open[1]);
    atomic_store(&conn_stats.reserve, srv->n_open[1]);
}

/* The idle lists (under track_lock): connections waiting for a request (its line not read), by the time
 * they started waiting, oldest first; one list for counted connections, one for the reserve. */
static void idle_unlink(struct server *srv, int fd)
{
    struct slot *s = &srv->slots[fd];
    int k = s->reserve;
    if (s->iprev >= 0)
        srv->slots[s->iprev].inext = s->inext;
    else
        srv->idle_head[k] = s->inext;
    if (s->inext >= 0)
        srv->slots[s->inext].iprev = s->iprev;
    else
        srv->idle_tail[k] = s->iprev;
    s->iprev = s->inext = -1;
    s->idle = 0;
}

static void idle_append(struct server *srv, int fd)
{
    struct slot *s = &srv->slots[fd];
    int k = s->reserve;
    s->iprev = srv->idle_tail[k];
    s->inext = -1;
    if (s->iprev >= 0)
        srv->slots[s->iprev].inext = fd;
    else
        srv->idle_head[k] = fd;
    srv->idle_tail[k] = fd;
    s->idle = 1;
}

/* Stops counting connection fd against the caps: it is closing, or closed. */
static void slot_uncount(struct server *srv, int fd)
{
    struct slot *s = &srv->slots[fd];
    srv->n_open[s->reserve]--;
    if (s->net && --s->net->n == 0) {
        struct net **p = net_find(srv, s->net->key);
        *p = s->net->next;
        free(s->net);
    }
    s->net = NULL;
    conn_gauges(srv);
}

/* Closes the oldest idle connection of a kind (0 counted, 1 reserve) to make room: 0, or -1 when
 * none is idle. Shut down, not closed: libmicrohttpd sees the end of the stream and closes it.
 * One with bytes not read yet has just sent its request (libmicrohttpd has not seen it yet, and
 * under a flood of connections that may take longer than the flood takes to make it the oldest):
 * it goes to the end of the list instead. Once libmicrohttpd has read the request's line (on_uri)
 * the connection leaves the list; between its read and that, a moment, it is still there. */
static int evict_oldest(struct server *srv, int kind)
{
    int fd = srv->idle_head[kind];
    for (int tries = 0; fd >= 0 && tries < 16; tries++) {
        int unread = 0;
        if (ioctl(fd, FIONREAD, &unread) != 0 || unread == 0)
            break;
        idle_unlink(srv, fd);
        idle_append(srv, fd);
        fd = srv->idle_head[kind];
    }
    if (fd < 0)
        return -1;
    idle_unlink(srv, fd);
    slot_uncount(srv, fd);
    srv->slots[fd].evicted = 1;
    srv->slots[fd].phase = PHASE_NONE;
    shutdown(fd, SHUT_RDWR);
    atomic_fetch_add(&conn_stats.evicted, 1);
    return 0;
}

/* Forgets connection fd (under track_lock): libmicrohttpd is closing it, or closed it without
 * telling (a connection it failed to set up): its number came back from accept. */
static void slot_release(struct server *srv, int fd)
{
    struct slot *s = &srv->slots[fd];
    if (!s->used)
        return;
    if (s->idle)
        idle_unlink(srv, fd);
    if (!s->evicted)
        slot_uncount(srv, fd);
    memset(s, 0, sizeof *s);
    s->iprev = s->inext = -1;
}

/* Admits a connection the acceptor took (fd, from sa), counting it (0), or refuses it (-1: close
 * it): past server.max_connections the oldest idle connection is closed for it; past the cap of
 * its client's network, or with none idle, it takes a place in the reserve; past that, the
 * oldest idle one there is closed, and with none idle it is refused. */
static int admit(struct server *srv, int fd, const struct sockaddr *sa)
{
    unsigned char key[9];
    int reserve = 0;
    pthread_mutex_lock(&srv->track_lock);
    if (fd >= srv->nslots) {
        pthread_mutex_unlock(&srv->track_lock);
        atomic_fetch_add(&conn_stats.refused, 1);
        return -1;
    }
    slot_release(srv, fd);
    if (srv->per_net) {
        net_key(sa, key);
        struct net *net = *net_find(srv, key);
        reserve = net && net->n >= srv->per_net;
    }
    if (!reserve && srv->n_open[0] >= (int)srv->max_conn && evict_oldest(srv, 0) != 0)
        reserve = 1;
    if (reserve && srv->n_open[1] >= RESERVE && evict_oldest(srv, 1) != 0) {
        pthread_mutex_unlock(&srv->track_lock);
        atomic_fetch_add(&conn_stats.refused, 1);
        return -1;
    }
    struct slot *s = &srv->slots[fd];
    s->used = 1;
    s->reserve = (unsigned char)reserve;
    if (!reserve && srv->per_net) {
        struct net **p = net_find(srv, key); /* again: an eviction may have freed a network */
        if (!*p && (*p = calloc(1, sizeof **p)))
            memcpy((*p)->key, key, sizeof key);
        if ((s->net = *p)) /* out of memory: not counted */
            s->net->n++;
    }
    srv->n_open[reserve]++;
    idle_append(srv, fd);
    if (srv->o->header_timeout_ms > 0) {
        s->phase = PHASE_HEADERS;
        deadline_in(&s->deadline, srv->o->header_timeout_ms);
    }
    if (fd >= srv->hi)
        srv->hi = fd + 1;
    conn_gauges(srv);
    pthread_mutex_unlock(&srv->track_lock);
    return 0;
}

/* A request's headers are in (busy: the connection is not idle), or its answer is sent and the
 * connection kept for the next (idle again, the newest). */
static void slot_busy(struct server *srv, struct slot *s, int busy)
{
    if (!s)
        return;
    pthread_mutex_lock(&srv->track_lock);
    if (s->used && !s->evicted) {
        if (busy && s->idle)
            idle_unlink(srv, (int)(s - srv->slots));
        else if (!busy && !s->idle)
            idle_append(srv, (int)(s - srv->slots));
    }
    pthread_mutex_unlock(&srv->track_lock);
}

static void on_connection(void *cls, struct MHD_Connection *mc, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct server *srv = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) { /* admit() filled its slot before handing it over */
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
        int fd = ci ? ci->connect_fd : -1;
        *socket_context = fd >= 0 && fd < srv->nslots ? &srv->slots[fd] : NULL;
    } else if (*socket_context) { /* closed: MHD closes the socket after this returns */
        pthread_mutex_lock(&srv->track_lock);
        slot_release(srv, (int)((struct slot *)*socket_context - srv->slots));
        pthread_mutex_unlock(&srv->track_lock);
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
    struct slot *s = ci ? ci->socket_context : NULL;
    if (!s)
        return;
    long ms = 0;
    if (phase == PHASE_HEADERS) {
        long idle = (long)(srv->o->idle_timeout_s > 0 ? srv->o->idle_timeout_s : 60) * 1000;
        ms = srv->o->header_timeout_ms > 0 ? (idle > srv->o->header_timeout_ms ? idle : srv->o->header_timeout_ms) : 0;
    } else if (phase == PHASE_BODY) {
        ms = 2L * srv->o->request_timeout_ms;
    }
    pthread_mutex_lock(&srv->track_lock);
    if (s->used && !s->evicted) {
        s->phase = ms > 0 ? phase : PHASE_NONE;
        if (ms > 0)
            deadline_in(&s->deadline, ms);
    }
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
        for (int fd = 0; fd < srv->hi; fd++) {
            struct slot *s = &srv->slots[fd];
            if (s->used && s->phase != PHASE_NONE &&
                (now.tv_sec > s->deadline.tv_sec ||
                 (now.tv_sec == s->deadline.tv_sec && now.tv_nsec >= s->deadline.tv_nsec))) {
                shutdown(fd, SHUT_RDWR);
                closed[s->phase]++;
                s->phase = PHASE_NONE;
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

/* ---- the acceptor: listening sockets, connections handed to libmicrohttpd --------------------- */

/* Takes the connections waiting on listening socket lfd (at most a batch, so that every
 * listener gets its turn), admits each and hands it to libmicrohttpd. */
static void accept_some(struct server *srv, int lfd)
{
    for (int i = 0; i < 64; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd = accept4(lfd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                /* out of descriptors, below the cap (exports, the database hold some too): make
                 * room, and let the connection wait in the backlog a moment */
                pthread_mutex_lock(&srv->track_lock);
                if (evict_oldest(srv, 1) != 0)
                    evict_oldest(srv, 0);
                pthread_mutex_unlock(&srv->track_lock);
                nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
            }
            return; /* none waiting (EAGAIN), or it went away (ECONNABORTED) */
        }
        if (admit(srv, fd, (struct sockaddr *)&ss) != 0) {
            close(fd);
            continue;
        }
        if (MHD_add_connection(srv->daemon, fd, (struct sockaddr *)&ss, len) != MHD_YES) {
            pthread_mutex_lock(&srv->track_lock); /* MHD closed it: no notification will come */
            slot_release(srv, fd);
            pthread_mutex_unlock(&srv->track_lock);
        }
    }
}

static void *acceptor(void *arg)
{
    struct server *srv = arg;
    struct pollfd pf[3];
    int n = srv->n_listen;
    for (int i = 0; i < n; i++)
        pf[i] = (struct pollfd){srv->listen_fd[i], POLLIN, 0};
    pf[n] = (struct pollfd){srv->wake_fd[0], POLLIN, 0};
    for (;;) {
        if (poll(pf, (nfds_t)n + 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            srv_log("error", "msg=\"accepting connections failed\" error=\"%s\"", strerror(errno));
            break;
        }
        if (pf[n].revents)
            break; /* stopping */
        for (int i = 0; i < n; i++)
            if (pf[i].revents)
                accept_some(srv, pf[i].fd);
    }
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
 * errors, and on a local database OP_QUICK reads and window contexts), handed to the committer
 * (a REST append: the connection waits suspended, no thread held), or on a worker thread
 * (everything else, which may take long: a context that summarises, MCP, search, import; and
 * every read on PostgreSQL, whose round trips would hold the loop and each request behind it). */
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
    if (c->refused || c->too_big || c->late || c->over_budget || strcmp(c->url, "/") == 0 ||
        strcmp(c->url, "/favicon.ico") == 0 || strcmp(c->url, "/healthz") == 0 || strcmp(c->url, "/metrics") == 0 ||
        strcmp(c->url, "/openapi.json") == 0)
        return ON_LOOP;
    if (strcmp(c->url, "/mcp") == 0)
        return ON_WORKER;
    int known;
    const struct srv_op *op = srv_rest_route(c->method, route_path(c), &known);
    if (!op)
        return ON_LOOP;
    if (srv->reads_on_loop &&
        ((op->flags & OP_QUICK) || (strcmp(op->name, "context_build") == 0 && window_context(srv, c))))
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
    if (uri && !(c->path = strndup(uri, path_len))) {
        free(c);
        return NULL;
    }
    if (mark && mark[1]) {
        if (!(c->query = strdup(mark + 1))) {
            free(c->path);
            free(c);
            return NULL;
        }
        mark[1] = '\0';
    }
    /* a request is under way: the connection is no longer idle, and not the one to close for a
     * newer one (its headers may still come in slowly: server.header_timeout_ms bounds that) */
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    slot_busy(c->srv, ci ? ci->socket_context : NULL, 1);
    return c;
}

/* How a request's body is delimited, read from all its header lines as libmicrohttpd hands them
 * over (RFC 9112, 6). libmicrohttpd reads only the first Content-Length, and Transfer-Encoding
 * before it; and 0.9.75 takes a name with whitespace before its colon ("Content-Length : 5") for
 * another name, and a line folded onto the next (obs-fold) as part of the name: such a request
 * had no body here while a proxy in front read one, and the body ran as a second request
 * (request smuggling). Each of these is refused with 400 and the connection closed. */
struct framing {
    const char *bad;    /* why the framing is refused (400), or NULL */
    const char *length; /* the first Content-Length */
    int codings;        /* Transfer-Encoding lines */
    int chunked;        /* the one Transfer-Encoding is "chunked" */
    int hosts;          /* Host lines */
};

/* A header name is a token (RFC 9110, 5.1): no whitespace, no separators. */
static int is_token(const char *s, size_t n)
{
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch && strchr("!#$%&'*+-.^_`|~", ch))))
            return 0;
    }
    return 1;
}

#if MHD_VERSION < 0x00097700
/* libmicrohttpd before 0.9.77 parses a header line in place, its colon made a NUL: the value
 * follows its name on the same line after optional whitespace. A folded line is joined to the
 * name, which moves elsewhere in the connection's memory (0.9.77 joins it to the value, which
 * the checks of the values then see; 1.0 refuses it at MHD_OPTION_CLIENT_DISCIPLINE_LVL 1). */
static int value_follows_name(const char *key, size_t key_size, const char *value)
{
    uintptr_t k = (uintptr_t)key, v = (uintptr_t)value;
    if (v <= k + key_size || (key[key_size] != '\0' && key[key_size] != ':'))
        return 0;
    for (const char *p = key + key_size + 1; (uintptr_t)p < v; p++)
        if (*p != ' ' && *p != '\t')
            return 0;
    return 1;
}
#endif

static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static enum MHD_Result note_framing(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                    const char *value, size_t value_size)
{
    struct framing *f = cls;
    (void)kind;
    (void)value_size;
    if (!is_token(key, key_size)) {
        f->bad = f->bad ? f->bad : "a header name is not a token (whitespace before its colon?)";
        return MHD_YES;
    }
#if MHD_VERSION < 0x00097700
    if (value && !value_follows_name(key, key_size, value)) {
        f->bad = f->bad ? f->bad : "a header line is folded onto the next (obs-fold, RFC 9112 5.2)";
        return MHD_YES;
    }
#endif
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
        if (!value || !all_digits(value))
            f->bad = f->bad ? f->bad : "Content-Length is not a number";
        else if (!f->length)
            f->length = value;
        else /* even the same value twice: a proxy in front may have read it otherwise (RFC 9112 6.3) */
            f->bad = f->bad ? f->bad : "the body's length is declared twice (two Content-Length lines)";
    } else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        if (++f->codings > 1)
            f->bad = f->bad ? f->bad : "Transfer-Encoding is given on two lines";
        f->chunked = value && strcasecmp(value, "chunked") == 0;
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
        return send_bytes(mc, 503, "application/json", b, b ? strlen(b) : 0, 1, NULL, NULL, 1);
    }
    if (!c) /* on_uri had no memory for it */
        return MHD_NO;
    if (!c->started) {
        c->started = 1;
        clock_gettime(CLOCK_MONOTONIC, &c->t0);
        c->url = url;
        c->method = method;
        struct framing f = {0};
        MHD_get_connection_values_n(mc, MHD_HEADER_KIND, note_framing, &f);
        int http10 = strcmp(version, MHD_HTTP_VERSION_1_0) == 0;
        if (!f.bad && f.codings && f.length)
            f.bad = "the body's length is declared two ways (Content-Length with Transfer-Encoding)";
        if (!f.bad && f.codings && http10)
            f.bad = "Transfer-Encoding in an HTTP/1.0 request, which has none";
        c->framing = f.bad ? 400 : f.codings && !f.chunked ? 501 : 0;
        c->framing_why = f.bad;
        /* HTTP/1.1 names its host exactly once (RFC 9112, 3.2): a proxy and this server must not
         * read two different ones, and the loopback Host check needs one to read */
        c->hosts = f.hosts;
        c->bad_host = f.hosts > 1 || (f.hosts == 0 && !http10);
        c->close = c->framing || c->bad_host; /* what follows on the connection is not to be read */
        c->declared = f.length && !c->framing ? (size_t)strtoull(f.length, NULL, 10) : 0;
        if (c->declared > srv->max_body)
            c->too_big = 1;
        if (metrics_in_flight(1) >= srv->o->max_inflight && srv->o->max_inflight > 0)
            c->overloaded = 1;
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        struct slot *slot = ci ? ci->socket_context : NULL;
        c->reserve = slot && slot->reserve;
        c->close |= c->reserve; /* a place in the reserve is for one answer */
        slot_busy(srv, slot, 1);
        c->body_timed = !c->framing && (f.chunked || c->declared > 0) && srv->o->request_timeout_ms > 0;
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
        if (!c->too_big && !c->refused && !c->over_budget && c->len + *upload_size > c->budget) {
            /* a body without a length takes the budget as it grows, doubling */
            size_t want = c->budget ? 2 * c->budget : 64 * 1024;
            want = want < c->len + *upload_size ? c->len + *upload_size : want;
            want = want > srv->max_body ? srv->max_body : want;
            if (budget_take(srv, want - c->budget) == 0) {
                c->budget = want;
            } else {
                c->over_budget = 1; /* the rest is dropped, then 503 */
                drop_body(c);
            }
        }
        if (!c->too_big && !c->refused && !c->over_budget) {
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
        size_t held = c->budget;
        pthread_mutex_lock(&srv->wait_lock);
        if (c->abandoned)
            atomic_fetch_sub(&srv->abandoned_open, 1);
        pthread_mutex_unlock(&srv->wait_lock);
        conn_unref(c); /* a request abandoned at the drain lives on until its thread is done */
        *con_cls = NULL;
        budget_give(held); /* after its body is freed */
    }
    if (toe == MHD_REQUEST_TERMINATED_COMPLETED_OK) { /* kept alive: waiting for the next request */
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        slot_busy(srv, ci ? ci->socket_context : NULL, 0);
        if (srv->o->header_timeout_ms > 0)
            track_phase(srv, mc, PHASE_HEADERS); /* its headers are due */
    }
}

/* ---- listen address -------------------------------------------------------------------------- */

/* Parses --listen ([host][:port], [v6]:port, port); *named_localhost: the host was the name
 * localhost, taken as 127.0.0.1 (open_listeners adds ::1), whatever the resolver says. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *sslen, int *named_localhost,
                        char *err, size_t errcap)
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
    if ((*named_localhost = strcasecmp(host, "localhost") == 0))
        snprintf(host, sizeof host, "127.0.0.1");
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

/* Whether the address is one `localhost` names: 127.0.0.1 or ::1. A browser sends
 * http://localhost:PORT to either, so a server there holds both (open_listeners). */
static int is_localhost(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) == INADDR_LOOPBACK;
    return ss->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static unsigned addr_port(const struct sockaddr_storage *ss)
{
    return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
                                           : ((const struct sockaddr_in *)ss)->sin_port);
}

/* A listening socket on sa, non-blocking (the acceptor polls it); -1 with errno on failure. */
static int listen_on(const void *sa, socklen_t len)
{
    int family = ((const struct sockaddr *)sa)->sa_family, one = 1;
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* SO_REUSEADDR: a restart binds past TIME_WAIT. No SO_REUSEPORT: a second server on the same
     * port must fail ("address in use"), not take half the connections. */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6)
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)sa, len) != 0 || listen(fd, SOMAXCONN) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static unsigned bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 ? addr_port(&ss) : 0;
}

/* Opens the listening sockets for ss (srv->listen_fd) and names what they serve: the port
 * (srv->policy.port), this server's own origins (srv->own, policy.own_hosts) and its URL. On
 * `localhost` (named, 127.0.0.1 or ::1) both 127.0.0.1 and ::1 on one port: were only one held,
 * another program could listen on the other and a browser's http://localhost:PORT might reach
 * it, where the page asks for the API key. A port taken on ::1 is an error (0: another port is
 * tried); a machine without IPv6 is served on 127.0.0.1 alone. 0, or -1 with err. */
static int open_listeners(struct server *srv, const struct sockaddr_storage *ss, socklen_t sslen, int named_localhost,
                          char *url, size_t urlcap, char *err, size_t cap)
{
    unsigned want = addr_port(ss);
    char host[INET6_ADDRSTRLEN + 2];
    if (!named_localhost && !is_localhost(ss)) {
        char a[INET6_ADDRSTRLEN] = "";
        int v6 = ss->ss_family == AF_INET6;
        const void *in = v6 ? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
                            : (const void *)&((const struct sockaddr_in *)ss)->sin_addr;
        inet_ntop(ss->ss_family, in, a, sizeof a);
        snprintf(host, sizeof host, v6 ? "[%s]" : "%s", a);
        int fd = listen_on(ss, sslen);
        if (fd < 0)
            return snprintf(err, cap, "cannot listen on %s:%u: %s%s", host, want, strerror(errno),
                            errno == EADDRINUSE ? " (is another mnemo serve running on this port?)" : ""),
                   -1;
        srv->listen_fd[srv->n_listen++] = fd;
        srv->policy.port = bound_port(fd);
        /* a wildcard address holds the loopback one of its family too */
        snprintf(srv->own, sizeof srv->own, "%s",
                 strcmp(a, "0.0.0.0") == 0 ? "127.0.0.1" : strcmp(a, "::") == 0 ? "[::1]" : host);
        snprintf(url, urlcap, "http://%s:%u", host, srv->policy.port);
        return 0;
    }
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)want)};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int attempt = 0; attempt < 64; attempt++) {
        int fd4 = listen_on(&v4, sizeof v4);
        if (fd4 < 0)
            return snprintf(err, cap, "cannot listen on 127.0.0.1:%u: %s%s", want, strerror(errno),
                            errno == EADDRINUSE ? " (is another mnemo serve running on this port?)" : ""),
                   -1;
        unsigned port = bound_port(fd4);
        v6.sin6_port = htons((uint16_t)port);
        int fd6 = listen_on(&v6, sizeof v6), e = errno;
        if (fd6 < 0 && e == EADDRINUSE && want == 0) { /* an ephemeral port taken on ::1: another */
            close(fd4);
            continue;
        }
        if (fd6 < 0 && e != EAFNOSUPPORT && e != EADDRNOTAVAIL) {
            close(fd4);
            return snprintf(err, cap,
                            "cannot listen on [::1]:%u: %s. On localhost mnemo serve holds the port on both "
                            "127.0.0.1 and [::1], so that a browser's http://localhost:%u reaches it and no other "
                            "program (stop the one on [::1]:%u, or choose another port)",
                            port, strerror(e), port, port),
                   -1;
        }
        srv->listen_fd[srv->n_listen++] = fd4;
        srv->policy.port = port;
        if (fd6 >= 0) {
            srv->listen_fd[srv->n_listen++] = fd6;
            snprintf(srv->own, sizeof srv->own, "localhost,127.0.0.1,[::1]");
        } else { /* nobody can listen on ::1 here either */
            srv_log("warn", "msg=\"no IPv6 on this machine: serving 127.0.0.1 only\" error=\"%s\"", strerror(e));
            snprintf(srv->own, sizeof srv->own, "localhost,127.0.0.1");
        }
        snprintf(url, urlcap, "http://%s:%u",
                 named_localhost ? "localhost" : ss->ss_family == AF_INET6 && fd6 >= 0 ? "[::1]" : "127.0.0.1", port);
        return 0;
    }
    return snprintf(err, cap, "--listen: no port was free on both 127.0.0.1 and [::1]"), -1;
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
 * write never waits on a model, and catch the vector indexes up with the change log. Without an embedder nothing is queued and it only polls; when
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
        /* with nothing queued too: the call also brings the vector indexes up to date with
         * other nodes' writes and erasures (an erased vector leaves this node's memory within a
         * second, docs/erasure.md); without an embedder it fails at once */
        if (!st)
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

/* Closes the listening sockets and frees what the connection caps hold. */
static void conns_release(struct server *srv)
{
    for (int i = 0; i < srv->n_listen; i++)
        close(srv->listen_fd[i]);
    srv->n_listen = 0;
    for (size_t b = 0; b < sizeof srv->nets / sizeof srv->nets[0]; b++)
        while (srv->nets[b]) {
            struct net *n = srv->nets[b];
            srv->nets[b] = n->next;
            free(n);
        }
    free(srv->slots);
    srv->slots = NULL;
}

/* The connection caps (srv->max_conn, per_net, slots): server.max_connections, lowered to fit
 * below the descriptor limit (the soft limit is raised to fit first, up to the hard limit) with
 * the reserve and room for the process's other descriptors (database, pipes of exports, event
 * loops: a quarter of the limit, at most 256), so that a flood of connections never leaves the
 * server without a descriptor to accept the next or open its files. 0, or -1 out of memory. */
static int conns_init(struct server *srv, int loopback)
{
    const struct srv_options *o = srv->o;
    unsigned max_conn = o->max_connections > 0 ? (unsigned)o->max_connections : 4096u;
    struct rlimit rl;
    rlim_t limit = (rlim_t)max_conn + RESERVE + 256;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < limit && rl.rlim_cur != RLIM_INFINITY) {
            rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > limit ? limit : rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < limit) {
            rlim_t room = rl.rlim_cur / 4 < 64 ? 64 : rl.rlim_cur / 4 > 256 ? 256 : rl.rlim_cur / 4;
            unsigned fit = rl.rlim_cur > room + RESERVE + 16 ? (unsigned)(rl.rlim_cur - room - RESERVE) : 16u;
            srv_log("warn", "msg=\"server.max_connections lowered to fit the descriptor limit (ulimit -n)\" "
                            "max_connections=%u nofile=%llu",
                    fit, (unsigned long long)rl.rlim_cur);
            max_conn = fit;
            limit = rl.rlim_cur;
        }
    }
    srv->max_conn = max_conn;
    /* per client network: off by default on loopback (every client there is this machine, so a
     * cap would shut the owner out along with a flood), 256 elsewhere */
    srv->per_net = o->max_connections_per_ip >= 0 ? (unsigned)o->max_connections_per_ip : loopback ? 0u : 256u;
    /* descriptors are numbered from the lowest free: those of connections stay below the limit */
    srv->nslots = (int)(limit < (rlim_t)max_conn + RESERVE + 4096 ? limit : (rlim_t)max_conn + RESERVE + 4096);
    if (!(srv->slots = calloc((size_t)srv->nslots, sizeof *srv->slots)))
        return -1;
    for (int i = 0; i < srv->nslots; i++)
        srv->slots[i].iprev = srv->slots[i].inext = -1;
    srv->idle_head[0] = srv->idle_head[1] = srv->idle_tail[0] = srv->idle_tail[1] = -1;
    return 0;
}

int srv_run_http(mn_db *db, const struct srv_options *o)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    int named_localhost = 0;
    char err[512];
    if (parse_listen(o->listen ? o->listen : "127.0.0.1:8765", &ss, &sslen, &named_localhost, err, sizeof err) != 0) {
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
    struct srv_policy lists = {o->allow_origin, o->allowed_hosts, 0, 0, NULL};
    if (srv_policy_check(&lists, err, sizeof err) != 0) {
        srv_keys_free(&srv.keys);
        fprintf(stderr, "mnemo: %s\n", err);
        return 2;
    }
    srv.db = db;
    srv.o = o;
    srv.max_body = o->max_body ? o->max_body : SRV_MAX_BODY_DEFAULT;
    srv.body_budget = 4 * srv.max_body; /* 32 MiB by default: ~450 MB to parse at most */
    srv.verbose = o->verbose;
    srv.max_query = o->max_query_params > 0 ? o->max_query_params : 100;
    srv.reads_on_loop = mn_db_reads_local(db);
    srv.policy.allowed_origins = o->allow_origin;
    srv.policy.allowed_hosts = o->allowed_hosts;
    srv.policy.check_host = is_loopback(&ss) && srv.keys.n == 0;
    char url[128];
    if (conns_init(&srv, is_loopback(&ss)) != 0 ||
        open_listeners(&srv, &ss, sslen, named_localhost, url, sizeof url, err, sizeof err) != 0) {
        fprintf(stderr, "mnemo: %s\n", srv.slots ? err : "out of memory");
        conns_release(&srv);
        srv_keys_free(&srv.keys);
        return 1;
    }
    srv.policy.own_hosts = srv.own;
    srv.openapi = srv_openapi();
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
        conns_release(&srv);
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
        conns_release(&srv);
        free(srv.openapi);
        return 1;
    }
    cpu_set_t mask; /* the CPUs this process may use (taskset, cgroups), not the machine's */
    long cpus = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : sysconf(_SC_NPROCESSORS_ONLN);
    unsigned loops = o->io_threads > 0 ? (unsigned)o->io_threads : cpus < 1 ? 1u : cpus > 8 ? 8u : (unsigned)cpus;
    /* No listening socket of its own: the acceptor admits each connection by the caps above and
     * hands it over (MHD_add_connection), which libmicrohttpd's own limits could not do (they
     * stop accepting at the limit, and count one address, not a network). */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ITC |
                     MHD_USE_NO_LISTEN_SOCKET;
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
    srv.daemon = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, &srv, MHD_OPTION_URI_LOG_CALLBACK, on_uri, &srv,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, &srv, MHD_OPTION_NOTIFY_CONNECTION, on_connection, &srv,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(o->idle_timeout_s > 0 ? o->idle_timeout_s : 60),
        MHD_OPTION_THREAD_POOL_SIZE, loops, MHD_OPTION_CONNECTION_LIMIT, (unsigned)srv.nslots,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_POOL,
#if MHD_VERSION >= 0x00097701
        /* refuse folded header lines, bare LFs and the rest RFC 9112 lets a server refuse */
        MHD_OPTION_CLIENT_DISCIPLINE_LVL, 1,
#endif
        MHD_OPTION_END);
    if (batch) /* the threads started from here on (acceptor, reaper, cleanup, embedder) are normal */
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &no_prio);
    pthread_t acceptor_thread;
    int accepting = srv.daemon && pipe2(srv.wake_fd, O_CLOEXEC) == 0;
    if (accepting && pthread_create(&acceptor_thread, NULL, acceptor, &srv) != 0) {
        close(srv.wake_fd[0]);
        close(srv.wake_fd[1]);
        accepting = 0;
    }
    if (!accepting) {
        fprintf(stderr, "mnemo: cannot start the HTTP service: %s\n", strerror(errno ? errno : ENOMEM));
        srv_keys_free(&srv.keys);
        if (srv.daemon)
            MHD_stop_daemon(srv.daemon);
        pool_stop(&srv);
        srv_folds_stop();
        srv_commit_stop();
        conns_release(&srv);
        free(srv.openapi);
        return 1;
    }
    pthread_t reaper_thread;
    int reaper_running = (o->header_timeout_ms > 0 || o->request_timeout_ms > 0) &&
                         pthread_create(&reaper_thread, NULL, reaper, &srv) == 0;
    printf("%s\n", url);
    fflush(stdout);
    srv_log("info", "msg=\"listening\" url=%s db=%s auth=%s", url, mn_db_path(db), srv.keys.n ? "bearer" : "none");
    srv_log("info", "msg=\"limits\" addresses=%s max_connections=%u max_connections_per_ip=%u body_memory=%zu",
            srv.n_listen == 2 ? "127.0.0.1,[::1]" : srv.own, srv.max_conn, srv.per_net, srv.body_budget);

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
    (void)!write(srv.wake_fd[1], "x", 1); /* the acceptor stops before libmicrohttpd */
    pthread_join(acceptor_thread, NULL);
    close(srv.wake_fd[0]);
    close(srv.wake_fd[1]);
    for (int i = 0; i < srv.n_listen; i++) /* new connections are refused, not left waiting */
        close(srv.listen_fd[i]);
    srv.n_listen = 0;
    MHD_stop_daemon(srv.daemon);
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
    conns_release(&srv);
    free(srv.openapi);
    srv_log("info", "msg=\"stopped\"");
    return 0;
}
