/*
 * health.c — readiness of `mnemo serve`: whether this node can take appends now, for /healthz
 * and /metrics. Two signals: the appends' own outcomes (commit.c reports each group), and a
 * prober thread that reads from the database once a second whenever no append has shown it
 * reachable meanwhile. The answer is made from what they last saw, without waiting: /healthz
 * runs on the event loop. What degraded means, and what an operator sees: docs/scale-out.md.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server/server.h"

#define PROBE_MS 1000          /* a probe when no append was acknowledged for this long */
#define STUCK_MS 3000          /* a probe unanswered this long: the database is not answering */
#define FAILING_RUN 3          /* appends failed in a row (none acknowledged since): failing... */
#define FAILING_WINDOW_MS 10000 /* ...while the last of them is this recent */

static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the prober's sleep, on CLOCK_MONOTONIC */
    pthread_t prober;
    int running, stop;
    mn_db *db;
    uint64_t ok_total, failed_total, waited_total, probe_failures;
    int64_t last_ok_ns, last_fail_ns;
    unsigned fail_run; /* failures since the last acknowledged append */
    char fail_msg[256];
    int64_t probe_started_ns; /* a probe in flight since then (0: none) */
    mn_status probe_status;   /* of the last probe (MN_OK: the database answered) */
    char probe_msg[256];
    int degraded; /* as the prober last found it: transitions are logged */
} h = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void srv_health_appends(size_t ok, size_t failed, size_t waited, const char *failure)
{
    pthread_mutex_lock(&h.lock);
    int64_t now = mono_ns();
    h.ok_total += ok;
    h.failed_total += failed;
    h.waited_total += waited;
    if (failed) { /* the failures of a group come after its successes: its last outcome is theirs */
        h.fail_run = ok ? (unsigned)failed : h.fail_run + (unsigned)failed;
        h.last_fail_ns = now;
        snprintf(h.fail_msg, sizeof h.fail_msg, "%s", failure ? failure : "");
    } else if (ok) {
        h.fail_run = 0;
    }
    if (ok) {
        h.last_ok_ns = now;
        h.probe_status = MN_OK; /* an acknowledged append: the database answers */
    }
    pthread_mutex_unlock(&h.lock);
}

/* The problems of the node now (h.lock held): *db and *appends get a description each, or "". */
static int problems(int64_t now, char db[320], char appends[384])
{
    db[0] = appends[0] = '\0';
    if (h.probe_started_ns && (now - h.probe_started_ns) / 1000000 >= STUCK_MS)
        snprintf(db, 320, "not answering: a read has waited %lld ms",
                 (long long)((now - h.probe_started_ns) / 1000000));
    else if (h.probe_status != MN_OK)
        snprintf(db, 320, "unreachable: %s", h.probe_msg);
    if (h.fail_run >= FAILING_RUN && h.last_fail_ns > h.last_ok_ns &&
        (now - h.last_fail_ns) / 1000000 < FAILING_WINDOW_MS)
        snprintf(appends, 384, "failing: %u in a row, the last %lld ms ago: %s", h.fail_run,
                 (long long)((now - h.last_fail_ns) / 1000000), h.fail_msg);
    return db[0] || appends[0];
}

static void *prober(void *arg)
{
    (void)arg;
    static const char nil[] = "00000000-0000-0000-0000-000000000000";
    pthread_mutex_lock(&h.lock);
    while (!h.stop) {
        int64_t now = mono_ns();
        if ((now - h.last_ok_ns) / 1000000 >= PROBE_MS) {
            h.probe_started_ns = now;
            pthread_mutex_unlock(&h.lock);
            mn_session *s = NULL;
            mn_status st = mn_session_get(h.db, nil, &s); /* one indexed read: MN_NOTFOUND is an answer */
            char msg[256];
            snprintf(msg, sizeof msg, "%s", mn_errmsg());
            mn_session_free(s);
            pthread_mutex_lock(&h.lock);
            h.probe_started_ns = 0;
            h.probe_status = st == MN_NOTFOUND ? MN_OK : st;
            h.probe_failures += h.probe_status != MN_OK;
            snprintf(h.probe_msg, sizeof h.probe_msg, "%s", msg[0] ? msg : mn_status_str(st));
        }
        char db[320], appends[384];
        int degraded = problems(mono_ns(), db, appends);
        if (degraded != h.degraded) {
            if (degraded)
                srv_log("warn", "msg=\"not ready\" database=\"%s\" appends=\"%s\"", db[0] ? db : "ok",
                        appends[0] ? appends : "ok");
            else
                srv_log("info", "msg=\"ready again\"");
            h.degraded = degraded;
        }
        int64_t until = mono_ns() + (int64_t)PROBE_MS * 1000000;
        struct timespec ts = {(time_t)(until / 1000000000), (long)(until % 1000000000)};
        pthread_cond_timedwait(&h.wake, &h.lock, &ts);
    }
    pthread_mutex_unlock(&h.lock);
    return NULL;
}

static pthread_once_t wake_once = PTHREAD_ONCE_INIT;

static void wake_init(void) { srv_cond_monotonic(&h.wake); }

void srv_health_start(mn_db *db)
{
    pthread_once(&wake_once, wake_init);
    pthread_mutex_lock(&h.lock);
    if (!h.running) {
        h.db = db;
        h.stop = 0;
        h.last_ok_ns = mono_ns(); /* the first probe a second from now */
        h.running = pthread_create(&h.prober, NULL, prober, NULL) == 0;
    }
    pthread_mutex_unlock(&h.lock);
}

void srv_health_stop(void)
{
    pthread_mutex_lock(&h.lock);
    int running = h.running;
    h.stop = 1;
    pthread_cond_broadcast(&h.wake);
    pthread_mutex_unlock(&h.lock);
    if (running)
        pthread_join(h.prober, NULL);
    pthread_mutex_lock(&h.lock);
    h.running = 0;
    pthread_mutex_unlock(&h.lock);
}

int srv_health_check(char **body)
{
    char db[320], appends[384];
    pthread_mutex_lock(&h.lock);
    int degraded = problems(mono_ns(), db, appends);
    pthread_mutex_unlock(&h.lock);
    if (!degraded) {
        *body = strdup("{\"status\":\"ok\"}");
        return 1;
    }
    json_t *o = json_pack("{s:s,s:s,s:s}", "status", "degraded", "database", db[0] ? db : "ok", "appends",
                          appends[0] ? appends : "ok");
    *body = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return 0;
}

char *srv_health_metrics(void)
{
    char db[320], appends[384];
    pthread_mutex_lock(&h.lock);
    int degraded = problems(mono_ns(), db, appends);
    uint64_t failed = h.failed_total, waited = h.waited_total, probes = h.probe_failures;
    pthread_mutex_unlock(&h.lock);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    if (!f)
        return NULL;
    fprintf(f,
            "# HELP mnemo_ready 1 when /healthz answers ok, 0 when the node is degraded.\n"
            "# TYPE mnemo_ready gauge\nmnemo_ready %d\n"
            "# HELP mnemo_database_reachable 0 when the database did not answer the last probe or append.\n"
            "# TYPE mnemo_database_reachable gauge\nmnemo_database_reachable %d\n"
            "# HELP mnemo_database_probe_failures_total Readiness probes of the database that failed.\n"
            "# TYPE mnemo_database_probe_failures_total counter\nmnemo_database_probe_failures_total %llu\n"
            "# HELP mnemo_commit_failures_total Append requests that failed for a reason of the node or the"
            " database (busy, unavailable, I/O).\n"
            "# TYPE mnemo_commit_failures_total counter\nmnemo_commit_failures_total %llu\n"
            "# HELP mnemo_commit_lock_waits_total Append requests that waited in the database's lock queue for"
            " a session another writer held.\n"
            "# TYPE mnemo_commit_lock_waits_total counter\nmnemo_commit_lock_waits_total %llu\n",
            !degraded, db[0] == '\0', (unsigned long long)probes, (unsigned long long)failed,
            (unsigned long long)waited);
    if (fclose(f) != 0) {
        free(out);
        return NULL;
    }
    return out;
}
