/*
 * threads_bench.c — the figures of the threads issue, through mnemo.h only:
 *   gc       a cleanup pass over N threads (2 messages each) of which half have expired
 *   history  read latency of a 50-turn thread (100 messages), p50/p99 over C calls
 * usage: mnemo-threads-bench gc --db PATH [--n 100000]
 *        mnemo-threads-bench history --db PATH [--calls 2000]
 * Each prints one JSON object. The clock is moved with MNEMO_TEST_NOW_MS, the library's test
 * clock, so that expiry needs no waiting.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnemo.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, mn_status rc)
{
    fprintf(stderr, "threads_bench: %s: %s (%s)\n", what, mn_errmsg(), mn_status_name(rc));
    exit(1);
}

static void set_clock(long long ms)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", ms);
    setenv("MNEMO_TEST_NOW_MS", v, 1);
}

static mn_db *open_db(const char *path)
{
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    mn_status rc = mn_config_new(&cfg);
    if (!rc)
        rc = mn_config_set(cfg, "memory.durability", "normal", NULL);
    if (!rc)
        rc = mn_open_path(path, cfg, &db);
    mn_config_free(cfg);
    if (rc)
        die("open", rc);
    return db;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int run_gc(const char *path, long n)
{
    const long long t0 = 1800000000000LL;
    set_clock(t0);
    mn_db *db = open_db(path);
    double start = now_s();
    for (long i = 0; i < n; i++) {
        mn_session_opts o = MN_SESSION_OPTS_INIT;
        o.tool_name = "bench";
        o.ttl_ms = i % 2 ? 3600000 : 36000000; /* half expire after 1 h, half after 10 h */
        mn_session *s = NULL;
        mn_status rc = mn_session_create(db, &o, &s);
        if (rc)
            die("create", rc);
        mn_message_in m[2] = {MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT};
        m[0].content = "a question about the build";
        m[1].role = MN_ROLE_ASSISTANT;
        m[1].content = "an answer with a few more words in it";
        if ((rc = mn_append_batch(db, s->id, m, 2, 0, NULL)))
            die("append", rc);
        mn_session_free(s);
    }
    double setup = now_s() - start;
    set_clock(t0 + 2 * 3600000LL);
    mn_stats st;
    mn_stats_get(db, &st);
    start = now_s();
    int64_t purged = 0;
    mn_status rc = mn_gc(db, &purged);
    double gc = now_s() - start;
    if (rc)
        die("gc", rc);
    printf("{\"op\":\"gc\",\"threads\":%ld,\"expired\":%lld,\"purged\":%lld,\"gc_seconds\":%.3f,"
           "\"setup_seconds\":%.1f}\n",
           n, (long long)st.expired_pending, (long long)purged, gc, setup);
    mn_close(db);
    return 0;
}

static int run_history(const char *path, int calls)
{
    mn_db *db = open_db(path);
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.tool_name = "bench";
    mn_session *s = NULL;
    mn_status rc = mn_session_create(db, &o, &s);
    if (rc)
        die("create", rc);
    char text[700];
    memset(text, 'x', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    for (int t = 0; t < 50; t++) {
        mn_message_in m[2] = {MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT};
        m[0].content = "what next?";
        m[1].role = MN_ROLE_ASSISTANT;
        m[1].content = text;
        if ((rc = mn_append_batch(db, s->id, m, 2, 0, NULL)))
            die("append", rc);
    }
    double *lat = malloc(sizeof *lat * (size_t)calls);
    size_t got = 0;
    for (int c = 0; c < calls; c++) {
        double a = now_s();
        mn_messages *l = NULL;
        if ((rc = mn_history(db, s->id, NULL, &l)))
            die("history", rc);
        got = l->count;
        mn_messages_free(l);
        lat[c] = now_s() - a;
    }
    qsort(lat, (size_t)calls, sizeof *lat, cmp);
    printf("{\"op\":\"history\",\"turns\":50,\"messages\":%zu,\"calls\":%d,\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f}\n",
           got, calls, lat[calls / 2] * 1e6, lat[calls * 99 / 100] * 1e6);
    free(lat);
    mn_session_free(s);
    mn_close(db);
    return 0;
}

int main(int argc, char **argv)
{
    const char *db = NULL;
    long n = 100000, calls = 2000;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--db") == 0)
            db = argv[i + 1];
        else if (strcmp(argv[i], "--n") == 0)
            n = strtol(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--calls") == 0)
            calls = strtol(argv[i + 1], NULL, 10);
    }
    if (argc < 2 || !db || n < 2 || calls < 1) {
        fprintf(stderr, "usage: mnemo-threads-bench gc|history --db PATH [--n N] [--calls C]\n");
        return 2;
    }
    if (strcmp(argv[1], "gc") == 0)
        return run_gc(db, n);
    if (strcmp(argv[1], "history") == 0)
        return run_history(db, (int)calls);
    fprintf(stderr, "mnemo-threads-bench: unknown mode %s\n", argv[1]);
    return 2;
}
