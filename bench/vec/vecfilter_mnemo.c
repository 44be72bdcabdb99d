/*
 * vecfilter_mnemo.c — filtered vector search on the shared data set (100k x 384): how fast
 * mnemo's index answers "top-k among the vectors that pass a filter" at 1% and 0.1%
 * selectivity, and how exactly. The harness (vecbench.c) has no filters, so this is our own
 * mode, documented in bench/vec/README.md.
 *
 * usage: vecfilter_mnemo [-D DATADIR] [-I INDEXFILE] [-k 10] [-r 3] [-e EF] [-Q NQ] [-g NQ]
 *   The index is loaded from INDEXFILE (saved by `MNEMO_VB_SAVE=... vecbench_mnemo`), or built
 *   (M 16, ef_construction 200) and saved there when missing. The filter keeps ids with
 *   id % 100 == 0 (1%) or id % 1000 == 0 (0.1%): uncorrelated with the clusters. Ground truth is
 *   the exact filtered top-k in double precision. Modes:
 *     hint   accept callback + n_accept_hint (what mnemo's search layer passes): auto path
 *     list   the matching ids as an explicit candidate list: exact scan over them
 *     nohint accept callback, no hint: graph walk with the filter inside, exact fall-back
 *     graph  accept callback, graph walk forced (no budget; still falls back below k); slow at
 *            these selectivities, so it runs only the first 200 queries (-g)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "index/index.h"
#include "vecfile.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct filt {
    int64_t mod;
};

static int accept_mod(void *user, int64_t id)
{
    const struct filt *f = user;
    return id % f->mod == 0;
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp/peers-data", *ixpath = "/tmp/peers-data/mnemo.idx";
    int k = 10, reps = 3, ef = 64, opt;
    uint32_t qlimit = 0, glimit = 200;
    while ((opt = getopt(argc, argv, "D:I:k:r:e:Q:g:")) != -1) {
        switch (opt) {
        case 'D': dir = optarg; break;
        case 'I': ixpath = optarg; break;
        case 'k': k = (int)strtol(optarg, NULL, 10); break;
        case 'r': reps = (int)strtol(optarg, NULL, 10); break;
        case 'e': ef = (int)strtol(optarg, NULL, 10); break;
        case 'Q': qlimit = (uint32_t)strtoul(optarg, NULL, 10); break;
        case 'g': glimit = (uint32_t)strtoul(optarg, NULL, 10); break;
        default: fprintf(stderr, "bad option\n"); return 2;
        }
    }
    if (k < 1 || k > 100 || reps < 1 || reps > 50) {
        fprintf(stderr, "k 1..100, r 1..50\n");
        return 2;
    }
    char path[4096];
    uint32_t n, dim, nq, qdim;
    snprintf(path, sizeof path, "%s/base.f32", dir);
    float *base = vf_read(path, &n, &dim);
    snprintf(path, sizeof path, "%s/query.f32", dir);
    float *query = vf_read(path, &nq, &qdim);
    if (qlimit && qlimit < nq)
        nq = qlimit;

    mn_index *ix = NULL;
    double t0 = now();
    mn_status rc = mn__index_load(ixpath, &ix);
    if (rc == MN_OK) {
        printf("load file=%s load_s=%.3f n=%zu\n", ixpath, now() - t0, mn__index_count(ix));
    } else {
        fprintf(stderr, "%s: %s; building\n", ixpath, mn_errmsg());
        struct mn_index_params p = MN_INDEX_PARAMS_INIT;
        p.dim = dim;
        p.capacity = n;
        if (mn__index_create(&p, &ix) != MN_OK)
            return 1;
        for (uint32_t i = 0; i < n; i++)
            if (mn__index_add(ix, i, base + (size_t)i * dim) != MN_OK)
                return 1;
        printf("build n=%u build_s=%.3f\n", n, now() - t0);
        if (mn__index_save(ix, ixpath) != MN_OK)
            fprintf(stderr, "save: %s\n", mn_errmsg());
    }
    struct mn_index_stats st;
    mn__index_stats(ix, &st);
    printf("index kernel=%s live=%zu memory_mb=%.1f\n", st.kernel, st.live, (double)st.memory_bytes / 1048576.0);

    const int mods[2] = {100, 1000};
    struct mn_index_hit *hits = malloc(sizeof *hits * (size_t)k);
    int64_t *got = malloc(sizeof *got * (size_t)nq * (size_t)k);
    double *qps = malloc(sizeof *qps * (size_t)reps);
    for (int mi = 0; mi < 2; mi++) {
        struct filt f = {mods[mi]};
        size_t nm = 0;
        int64_t *cand = malloc(sizeof *cand * ((size_t)n / (size_t)mods[mi] + 1));
        for (uint32_t i = 0; i < n; i += (uint32_t)mods[mi])
            cand[nm++] = i;
        /* exact filtered top-k, double precision */
        int64_t *gt = malloc(sizeof *gt * (size_t)nq * (size_t)k);
        for (uint32_t q = 0; q < nq; q++) {
            double best[100];
            int64_t bid[100];
            int cnt = 0;
            for (size_t c = 0; c < nm; c++) {
                const float *v = base + (size_t)cand[c] * dim, *qq = query + (size_t)q * dim;
                double s = 0;
                for (uint32_t j = 0; j < dim; j++)
                    s += (double)v[j] * qq[j];
                if (cnt == k && s <= best[k - 1])
                    continue;
                int pos = cnt < k ? cnt++ : k - 1;
                while (pos > 0 && best[pos - 1] < s) {
                    best[pos] = best[pos - 1];
                    bid[pos] = bid[pos - 1];
                    pos--;
                }
                best[pos] = s;
                bid[pos] = cand[c];
            }
            for (int j = 0; j < k; j++)
                gt[(size_t)q * k + j] = j < cnt ? bid[j] : -1;
        }
        const char *modes[4] = {"hint", "list", "nohint", "graph"};
        for (int mode = 0; mode < 4; mode++) {
            struct mn_index_search_info info;
            struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
            o.ef = (size_t)ef;
            o.info = &info;
            if (mode == 1) {
                o.candidates = cand;
                o.n_candidates = nm;
            } else {
                o.accept = accept_mod;
                o.user = &f;
                if (mode == 0)
                    o.n_accept_hint = nm;
                if (mode == 3)
                    o.path = MN_INDEX_PATH_GRAPH;
            }
            size_t exact_paths = 0, fallbacks = 0, short_results = 0;
            double visited = 0;
            uint32_t mq = mode == 3 && glimit && glimit < nq ? glimit : nq;
            for (int r = -1; r < reps; r++) { /* r = -1: untimed warm-up */
                double ts = now();
                for (uint32_t q = 0; q < mq; q++) {
                    size_t nh = 0;
                    if (mn__index_search(ix, query + (size_t)q * dim, (size_t)k, &o, hits, &nh) != MN_OK) {
                        fprintf(stderr, "search: %s\n", mn_errmsg());
                        return 1;
                    }
                    if (r == 0) {
                        exact_paths += info.path == MN_INDEX_PATH_EXACT;
                        fallbacks += (size_t)info.fell_back;
                        short_results += nh < (size_t)k;
                        visited += (double)info.visited;
                        for (int j = 0; j < k; j++)
                            got[(size_t)q * k + j] = (size_t)j < nh ? hits[j].id : -2;
                    }
                }
                if (r >= 0)
                    qps[r] = mq / (now() - ts);
            }
            long hit = 0;
            for (uint32_t q = 0; q < mq; q++)
                for (int i = 0; i < k; i++)
                    for (int j = 0; j < k; j++)
                        if (got[(size_t)q * k + i] == gt[(size_t)q * k + j]) {
                            hit++;
                            break;
                        }
            qsort(qps, (size_t)reps, sizeof *qps, cmp_d);
            printf("filtered selectivity=%.3f%% matching=%zu mode=%s ef=%d k=%d recall=%.4f qps_median=%.1f "
                   "qps_min=%.1f qps_max=%.1f exact_path=%zu fell_back=%zu short=%zu mean_visited=%.0f nq=%u\n",
                   100.0 / mods[mi], nm, modes[mode], ef, k, (double)hit / ((double)mq * k), qps[reps / 2], qps[0],
                   qps[reps - 1], exact_paths, fallbacks, short_results, visited / mq, mq);
            fflush(stdout);
        }
        free(gt);
        free(cand);
    }
    free(hits);
    free(got);
    free(qps);
    free(base);
    free(query);
    mn__index_free(ix);
    return 0;
}
