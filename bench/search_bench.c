/*
 * search_bench.c — search figures through the public header only: hash embedding throughput
 * (messages/s, via mn_embed_backfill) and search latency (keyword, semantic, hybrid, and a
 * session-filtered semantic search) on a store of N messages.
 *
 *   search-bench DIR N [QUERIES]     (default N 100000, QUERIES 200)
 *
 * Builds DIR/search.db (N messages in N/50 sessions of 50, generated text over a 5000-word
 * vocabulary), embeds them, then times QUERIES searches of each kind, each in a fresh handle's
 * steady state (the index is loaded once), and one cold search (open + load + search + close).
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

static unsigned long long rng = 88172645463325252ULL;
static unsigned next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

static void word(char *out, unsigned i)
{
    static const char *syl[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "xe", "zu", "pra", "tel", "don", "gri"};
    out[0] = '\0';
    for (int k = 0; k < 3; k++) {
        strcat(out, syl[i % 14]);
        i /= 14;
    }
}

static void sentence(char *buf, size_t cap, int words)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int w = 0; w < words; w++) {
        char wd[16];
        unsigned z = next() % 5000;
        z = z * z / 5000; /* skewed: small ids are common words */
        word(wd, z);
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", w ? " " : "", wd);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_d);
    printf("%-28s p50 %8.3f ms  p95 %8.3f ms  p99 %8.3f ms\n", what, t[n / 2] * 1e3, t[n * 95 / 100] * 1e3,
           t[n * 99 / 100] * 1e3);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: search-bench DIR [N] [QUERIES]\n");
        return 2;
    }
    long n = argc > 2 ? atol(argv[2]) : 100000, q = argc > 3 ? atol(argv[3]) : 200;
    char path[4096];
    snprintf(path, sizeof path, "%s/search.db", argv[1]);
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "embedder.name", "hash", NULL) ||
        mn_config_set(cfg, "tokenizer.name", "heuristic", NULL) ||
        mn_config_set(cfg, "memory.durability", "normal", NULL) || mn_open_path(path, cfg, &db)) {
        fprintf(stderr, "open: %s\n", mn_errmsg());
        return 1;
    }
    char **sessions = calloc((size_t)(n / 50 + 1), sizeof *sessions);
    mn_stats st;
    mn_stats_get(db, &st);
    double t0 = now_s();
    if (st.messages < n) {
        char (*texts)[256] = malloc(50 * sizeof *texts);
        mn_message_in in[50];
        for (long s = 0; s < n / 50; s++) {
            mn_session *ss = NULL;
            if (mn_session_create(db, NULL, &ss))
                return 1;
            sessions[s] = strdup(ss->id);
            mn_session_free(ss);
            for (int i = 0; i < 50; i++) {
                sentence(texts[i], sizeof texts[i], 8 + (int)(next() % 20));
                mn_message_in m = MN_MESSAGE_IN_INIT;
                m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
                m.content = texts[i];
                in[i] = m;
            }
            if (mn_append_batch(db, sessions[s], in, 50, 0, NULL)) {
                fprintf(stderr, "append: %s\n", mn_errmsg());
                return 1;
            }
        }
        free(texts);
        printf("store: %ld messages appended in %.1f s\n", n, now_s() - t0);
    } else {
        mn_sessions *l = NULL;
        mn_session_list(db, NULL, 1, 0, &l);
        sessions[0] = l && l->count ? strdup(l->items[0].id) : NULL;
        mn_sessions_free(l);
    }
    int64_t done = 0;
    t0 = now_s();
    if (mn_embed_backfill(db, NULL, NULL, &done)) {
        fprintf(stderr, "backfill: %s\n", mn_errmsg());
        return 1;
    }
    double el = now_s() - t0;
    if (done)
        printf("hash embedding (backfill, stored): %lld messages in %.2f s = %.0f messages/s\n", (long long)done, el,
               (double)done / el);
    /* first search: builds (or loads) the index */
    mn_search_hits *h = NULL;
    t0 = now_s();
    mn_search(db, "kalomi nerusa", MN_SEARCH_SEMANTIC, 10, NULL, 0, &h);
    mn_search_hits_free(h);
    printf("first semantic search (index build or load): %.2f s\n", now_s() - t0);
    double *t = calloc((size_t)q, sizeof *t);
    static const mn_search_mode modes[] = {MN_SEARCH_KEYWORD, MN_SEARCH_SEMANTIC, MN_SEARCH_HYBRID};
    static const char *names[] = {"keyword (top 10)", "semantic (top 10)", "hybrid (top 10)"};
    char query[256];
    for (int m = 0; m < 4; m++) {
        mn_search_filter f = MN_SEARCH_FILTER_INIT;
        if (m == 3)
            f.session_id = sessions[0];
        for (long i = 0; i < q; i++) {
            sentence(query, sizeof query, 4);
            double a = now_s();
            if (mn_search(db, query, m == 3 ? MN_SEARCH_SEMANTIC : modes[m], 10, &f, 0, &h)) {
                fprintf(stderr, "search: %s\n", mn_errmsg());
                return 1;
            }
            t[i] = now_s() - a;
            mn_search_hits_free(h);
        }
        report(m == 3 ? "semantic, one session" : names[m], t, (int)q);
    }
    mn_close(db); /* saves the index */
    /* cold: what one `mnemo search` run costs (open, load the index, search, close) */
    for (long i = 0; i < 5; i++) {
        double a = now_s();
        mn_open_path(path, cfg, &db);
        mn_search(db, "kalomi nerusa tivo", MN_SEARCH_HYBRID, 10, NULL, 0, &h);
        mn_search_hits_free(h);
        mn_close(db);
        t[i] = now_s() - a;
    }
    report("cold (open+search+close)", t, 5);
    /* raw hash throughput without storage */
    mn_open_path(path, cfg, &db);
    free(t);
    for (long s = 0; s < n / 50; s++)
        free(sessions[s]);
    free(sessions);
    mn_close(db);
    mn_config_free(cfg);
    return 0;
}
