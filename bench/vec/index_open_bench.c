/*
 * index_open_bench.c — what a fresh process pays to search a saved vector index, and what a
 * build costs on 1..T threads. Builds N clustered vectors (deterministic, seed 42) with
 * mn__index_add_batch on each thread count asked (time, recall@10 at ef 64 against exact search,
 * and whether the saved bytes are identical across thread counts), saves the index, then, each
 * in a new process (fork) R times: mn__index_map + the first search ("map"), mn__index_load + the
 * first search ("load", the full validating read), and the p50 of 100 searches after a map.
 * usage: index-open-bench [-n N] [-d DIM] [-t 1,2] [-r RUNS] DIR      (docs: bench/vec/README.md)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "index/index.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds (user + system) of this process: robust where wall time is not (a busy machine) */
static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double gauss(uint64_t *s)
{
    double u = ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
    double v = ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* n points around 1,000 unit centres (the shared benchmark's model), unit length. */
static float *points(size_t n, size_t d, const float *cs, uint64_t seed)
{
    float *x = malloc(n * d * sizeof *x);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        const float *c = cs + (rng_next(&s) % 1000) * d;
        double norm = 0;
        for (size_t j = 0; j < d; j++) {
            x[i * d + j] = (float)(c[j] + 1.5 * gauss(&s) / sqrt((double)d));
            norm += (double)x[i * d + j] * x[i * d + j];
        }
        for (size_t j = 0; j < d; j++)
            x[i * d + j] = (float)(x[i * d + j] / sqrt(norm));
    }
    return x;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* In a child: open (map or load) and search; writes seconds (open+first search, then p50 of 100
 * more searches) to fd. */
static void child(const char *path, int map, const float *q, size_t d, int fd)
{
    double t0 = now_s(), c0 = cpu_s();
    mn_index *ix = NULL;
    if ((map ? mn__index_map(path, &ix) : mn__index_load(path, &ix)) != MN_OK)
        _exit(2);
    struct mn_index_hit h[10];
    size_t nh;
    if (mn__index_search(ix, q, 10, NULL, h, &nh) != MN_OK)
        _exit(3);
    double out[3] = {now_s() - t0, 0, cpu_s() - c0};
    double lat[100];
    for (size_t i = 0; i < 100; i++) {
        double a = now_s();
        mn__index_search(ix, q + (i + 1) * d, 10, NULL, h, &nh);
        lat[i] = now_s() - a;
    }
    out[1] = median(lat, 100);
    if (write(fd, out, sizeof out) != (ssize_t)sizeof out)
        _exit(4);
    mn__index_free(ix);
    _exit(0);
}

static int fresh(const char *path, int map, const float *q, size_t d, double out[3])
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        child(path, map, q, d, fds[1]);
    }
    close(fds[1]);
    ssize_t r = read(fds[0], out, 3 * sizeof(double));
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return r == (ssize_t)(3 * sizeof(double)) && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    size_t n = 10000, d = 384, runs = 5;
    const char *tlist = "1,2";
    int c;
    while ((c = getopt(argc, argv, "n:d:t:r:")) != -1) {
        if (c == 'n')
            n = (size_t)atol(optarg);
        else if (c == 'd')
            d = (size_t)atol(optarg);
        else if (c == 't')
            tlist = optarg;
        else if (c == 'r')
            runs = (size_t)atol(optarg);
        else
            return 2;
    }
    if (optind >= argc || n < 100 || d < 1 || runs < 1) {
        fprintf(stderr, "usage: index-open-bench [-n N] [-d DIM] [-t 1,2] [-r RUNS] DIR\n");
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/open-bench-%zu.hnsw", argv[optind], n);
    uint64_t s = 42;
    float *cs = malloc(1000 * d * sizeof *cs);
    for (size_t i = 0; i < 1000 * d; i++)
        cs[i] = (float)gauss(&s);
    float *x = points(n, d, cs, 43), *q = points(101, d, cs, 44);
    int64_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++)
        ids[i] = (int64_t)i + 1;
    /* exact answers for recall */
    struct mn_index_params fp = MN_INDEX_PARAMS_INIT;
    fp.dim = (uint32_t)d;
    fp.kind = MN_INDEX_FLAT;
    mn_index *flat = NULL;
    if (mn__index_create(&fp, &flat) != MN_OK || mn__index_add_batch(flat, ids, x, n, 1) != MN_OK)
        return 1;
    uint64_t first_sum = 0;
    for (const char *tp = tlist; *tp;) {
        char *end;
        unsigned t = (unsigned)strtoul(tp, &end, 10);
        if (end == tp)
            break;
        tp = *end == ',' ? end + 1 : end;
        struct mn_index_params p = MN_INDEX_PARAMS_INIT;
        p.dim = (uint32_t)d;
        p.capacity = n;
        mn_index *ix = NULL;
        if (mn__index_create(&p, &ix) != MN_OK)
            return 1;
        double t0 = now_s(), c0 = cpu_s();
        if (mn__index_add_batch(ix, ids, x, n, t) != MN_OK) {
            fprintf(stderr, "build: %s\n", mn_errmsg());
            return 1;
        }
        double build = now_s() - t0, build_cpu = cpu_s() - c0;
        size_t hits = 0;
        for (size_t i = 0; i < 100; i++) {
            struct mn_index_hit a[10], b[10];
            size_t na, nb;
            mn__index_search(ix, q + i * d, 10, NULL, a, &na);
            mn__index_search(flat, q + i * d, 10, NULL, b, &nb);
            for (size_t u = 0; u < na; u++)
                for (size_t w = 0; w < nb; w++)
                    hits += a[u].id == b[w].id;
        }
        if (mn__index_save(ix, path) != MN_OK) {
            fprintf(stderr, "save: %s\n", mn_errmsg());
            return 1;
        }
        FILE *f = fopen(path, "rb");
        uint64_t sum = 0;
        if (f && fseek(f, -8, SEEK_END) == 0 && fread(&sum, 8, 1, f) == 1 && !first_sum)
            first_sum = sum;
        if (f)
            fclose(f);
        printf("build n=%zu dim=%zu threads=%u seconds=%.2f cpu_seconds=%.2f recall10_ef64=%.4f same_file_as_first=%s\n",
               n, d, t, build, build_cpu, (double)hits / 1000.0, sum == first_sum ? "yes" : "NO");
        fflush(stdout);
        mn__index_free(ix);
    }
    for (int map = 1; map >= 0; map--) {
        double *first = malloc(runs * sizeof *first), *p50 = malloc(runs * sizeof *p50),
               *cpu = malloc(runs * sizeof *cpu);
        for (size_t r = 0; r < runs; r++) {
            double o[3];
            if (fresh(path, map, q, d, o) != 0) {
                fprintf(stderr, "child failed\n");
                return 1;
            }
            first[r] = o[0];
            p50[r] = o[1];
            cpu[r] = o[2];
        }
        double lo = first[0], hi = first[0];
        for (size_t r = 1; r < runs; r++) {
            lo = first[r] < lo ? first[r] : lo;
            hi = first[r] > hi ? first[r] : hi;
        }
        printf("open mode=%s n=%zu dim=%zu open_plus_first_search_ms_median=%.2f (min %.2f max %.2f) "
               "cpu_ms_median=%.2f search_p50_us=%.1f runs=%zu\n",
               map ? "map" : "load", n, d, median(first, runs) * 1e3, lo * 1e3, hi * 1e3, median(cpu, runs) * 1e3,
               median(p50, runs) * 1e6, runs);
        fflush(stdout);
        free(first);
        free(p50);
        free(cpu);
    }
    unlink(path);
    mn__index_free(flat);
    free(cs);
    free(x);
    free(q);
    free(ids);
    return 0;
}
