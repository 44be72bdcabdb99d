/*
 * search_latency.c — search latency on an existing store (e.g. one made by `mnemo-bench build`),
 * through the public header only: keyword top-k with no filter, within the namespace and within
 * one session, then semantic and hybrid when the store has vectors and an embedder is given.
 *
 *   search-latency --db PATH [--queries Q] [--k K] [--embedder hash] [--seed S]
 *
 * Queries are real text of the store: two or three consecutive words of a message drawn with a
 * fixed seed from the first 1000 sessions, so every run of the same store asks the same
 * questions. Each case runs the queries once untimed (warm-up), then once timed, on one handle;
 * one JSON line per case: {"case","queries","k","p50_ms","p99_ms","mean_ms","hits_avg"}.
 * p50 = lat[Q/2], p99 = lat[0.99·Q] of the sorted latencies. SL_SLOW=MS in the environment prints
 * each timed query slower than MS milliseconds on standard error. The configuration files and
 * MNEMO_* variables apply (e.g. MNEMO_EMBEDDER_BASE_URL and MNEMO_EMBEDDER_MODEL for
 * --embedder openai); the options win. See bench/README.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnemo.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long long rng = 0x1234567ULL;
static unsigned rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Two or three consecutive words of text (ASCII letters) into out; 0 when there are none. */
static int pick_words(const char *text, char *out, size_t cap)
{
    size_t len = strlen(text);
    if (!len)
        return 0;
    size_t at = rnd() % len;
    while (at > 0 && text[at - 1] != ' ')
        at--;
    int want = 2 + (int)(rnd() % 2), got = 0;
    size_t o = 0;
    for (const char *p = text + at; *p && got < want && o + 2 < cap; p++) {
        if (*p == ' ' || *p == '\n') {
            if (o && out[o - 1] != ' ')
                got++, out[o++] = ' ';
        } else
            out[o++] = *p;
    }
    while (o && out[o - 1] == ' ')
        o--;
    out[o] = '\0';
    return o > 0;
}

struct query {
    char text[128];
    char session[64];
};

static int run_case(mn_db *db, const char *name, const struct query *qs, int nq, size_t k, mn_search_mode mode,
                    int filter)
{
    double *lat = calloc((size_t)nq, sizeof *lat);
    double sum = 0, hits = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < nq; i++) {
            mn_search_filter f = MN_SEARCH_FILTER_INIT;
            if (filter == 1)
                f.ns = "default";
            else if (filter == 2)
                f.session_id = qs[i].session;
            mn_search_hits *h = NULL;
            double a = now_s();
            mn_status rc = mn_search(db, qs[i].text, mode, k, filter ? &f : NULL, 0, &h);
            double t = now_s() - a;
            if (rc) {
                fprintf(stderr, "%s: search \"%s\": %s\n", name, qs[i].text, mn_errmsg());
                free(lat);
                return 1;
            }
            if (pass == 1 && getenv("SL_SLOW") && t * 1e3 > atof(getenv("SL_SLOW")))
                fprintf(stderr, "slow %s %.1f ms \"%s\"\n", name, t * 1e3, qs[i].text);
            if (pass == 1) {
                lat[i] = t;
                sum += t;
                hits += (double)h->count;
            }
            mn_search_hits_free(h);
        }
    qsort(lat, (size_t)nq, sizeof *lat, cmp_d);
    printf("{\"case\":\"%s\",\"queries\":%d,\"k\":%zu,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,"
           "\"hits_avg\":%.1f}\n",
           name, nq, k, lat[nq / 2] * 1e3, lat[nq * 99 / 100] * 1e3, sum / nq * 1e3, hits / nq);
    fflush(stdout);
    free(lat);
    return 0;
}

static const char usage[] = "usage: search-latency --db PATH [--queries Q] [--k K] [--embedder hash] [--seed S]\n";

int main(int argc, char **argv)
{
    const char *path = NULL, *embedder = "none";
    int nq = 200;
    size_t k = 10;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "missing value for %s\n%s", a, usage);
            return 2;
        }
        if (strcmp(a, "--db") == 0)
            path = v;
        else if (strcmp(a, "--queries") == 0)
            nq = atoi(v);
        else if (strcmp(a, "--k") == 0)
            k = (size_t)atol(v);
        else if (strcmp(a, "--embedder") == 0)
            embedder = v;
        else if (strcmp(a, "--seed") == 0)
            rng = strtoull(v, NULL, 0) | 1;
        else {
            fprintf(stderr, "unknown option %s\n%s", a, usage);
            return 2;
        }
    }
    if (!path || nq < 1) {
        fputs(usage, stderr);
        return 2;
    }
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    if (mn_config_new(&cfg) || mn_config_load(cfg, NULL) || mn_config_set(cfg, "embedder.name", embedder, NULL) ||
        mn_config_set(cfg, "tokenizer.name", "heuristic", NULL) || mn_open_path(path, cfg, &db)) {
        fprintf(stderr, "open %s: %s\n", path, mn_errmsg());
        return 1;
    }
    mn_sessions *ss = NULL;
    if (mn_session_list(db, NULL, 1000, 0, &ss) || !ss->count) {
        fprintf(stderr, "%s: no sessions\n", path);
        return 1;
    }
    struct query *qs = calloc((size_t)nq, sizeof *qs);
    for (int i = 0; i < nq; i++) {
        const mn_session *s = &ss->items[rnd() % ss->count];
        mn_history_opts o = MN_HISTORY_OPTS_INIT;
        o.limit = 50;
        mn_messages *ms = NULL;
        if (mn_history(db, s->id, &o, &ms) || !ms->count) {
            fprintf(stderr, "history: %s\n", mn_errmsg());
            return 1;
        }
        const mn_message *m = mn_messages_at(ms, rnd() % ms->count);
        if (!pick_words(m->content ? m->content : "", qs[i].text, sizeof qs[i].text))
            snprintf(qs[i].text, sizeof qs[i].text, "the");
        snprintf(qs[i].session, sizeof qs[i].session, "%s", s->id);
        mn_messages_free(ms);
    }
    mn_sessions_free(ss);
    /* the first keyword search indexes what the full-text log holds: not part of any figure */
    mn_search_hits *h = NULL;
    double t0 = now_s();
    if (mn_search(db, qs[0].text, MN_SEARCH_KEYWORD, k, NULL, 0, &h)) {
        fprintf(stderr, "search: %s\n", mn_errmsg());
        return 1;
    }
    mn_search_hits_free(h);
    fprintf(stderr, "first keyword search (indexes the pending log): %.2f s\n", now_s() - t0);
    int bad = run_case(db, "keyword", qs, nq, k, MN_SEARCH_KEYWORD, 0) ||
              run_case(db, "keyword_namespace", qs, nq, k, MN_SEARCH_KEYWORD, 1) ||
              run_case(db, "keyword_session", qs, nq, k, MN_SEARCH_KEYWORD, 2);
    if (!bad && strcmp(embedder, "none") != 0)
        bad = run_case(db, "semantic", qs, nq, k, MN_SEARCH_SEMANTIC, 0) ||
              run_case(db, "hybrid", qs, nq, k, MN_SEARCH_HYBRID, 0) ||
              run_case(db, "hybrid_session", qs, nq, k, MN_SEARCH_HYBRID, 2);
    free(qs);
    mn_close(db);
    mn_config_free(cfg);
    return bad;
}
