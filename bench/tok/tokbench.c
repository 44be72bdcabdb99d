/*
 * tokbench.c — mnemo-tokbench: throughput, load time, memory and exactness of the BPE
 * tokenizers (src/token/bpe.c) on the shared tokenizer corpus, in the same shape as the npm
 * peers' harness (shared/bench/tok/bench_tok.cjs). See bench/tok/README.md.
 *
 *   mnemo-tokbench [-d DATADIR] [-r REPS] load   ENC
 *   mnemo-tokbench [-d DATADIR] [-r REPS] count  ENC FILE
 *   mnemo-tokbench [-d DATADIR] [-r REPS] encode ENC FILE
 *   mnemo-tokbench [-d DATADIR]           verify TSV FILE   (per-segment counts, both encodings)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "token/bpe.h"
#include "token/token.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "tokbench: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "tokbench: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    buf[size] = '\0';
    *len = (size_t)size;
    return buf;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kb;
}

static mn_tokenizer *open_enc(const char *enc, const char *dir, double *ms)
{
    mn_tokenizer *tk = NULL;
    double t0 = now();
    mn_status st = mn__token_open(enc, dir, &tk);
    if (ms)
        *ms = (now() - t0) * 1e3;
    if (st != MN_OK) {
        fprintf(stderr, "tokbench: %s: %s\n", mn_status_name(st), mn_errmsg());
        exit(2);
    }
    return tk;
}

/* The ~1000-character messages of bench_tok.cjs: whole lines appended until the message has at
 * least 1000 UTF-16 code units. */
struct msg {
    size_t off, len;
};

static struct msg *cut_messages(const char *s, size_t len, size_t *n_out)
{
    size_t cap = len / 500 + 16, n = 0, start = 0, units = 0;
    struct msg *m = malloc(cap * sizeof *m);
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)s[i];
        if ((b & 0xC0) != 0x80)
            units += b >= 0xF0 ? 2 : 1;
        if (b == '\n' && units >= 1000) {
            if (n == cap)
                m = realloc(m, (cap *= 2) * sizeof *m);
            m[n++] = (struct msg){start, i + 1 - start};
            start = i + 1;
            units = 0;
        }
    }
    if (start < len) {
        if (n == cap)
            m = realloc(m, (cap + 1) * sizeof *m);
        m[n++] = (struct msg){start, len - start};
    }
    *n_out = n;
    return m;
}

static size_t run_once(const mn_tokenizer *tk, int encode, const char *s, size_t len)
{
    if (!encode)
        return mn__token_count(tk, s, len);
    uint32_t *ids;
    size_t n;
    if (tk->vt->encode(tk, s, len, &ids, &n) != MN_OK) {
        fprintf(stderr, "tokbench: encode failed: %s\n", mn_errmsg());
        exit(2);
    }
    free(ids);
    return n;
}

static int bench(const char *enc, const char *dir, const char *file, int encode, int reps)
{
    size_t len;
    char *text = read_all(file, &len);
    long rss0 = rss_kb();
    double init_ms;
    mn_tokenizer *tk = open_enc(enc, dir, &init_ms);
    long rss1 = rss_kb();
    double mb = (double)len / 1e6;
    double t0 = now();
    size_t tokens = run_once(tk, encode, text, len);
    double first = mb / (now() - t0);
    double *full = malloc((size_t)reps * sizeof *full), *msg = malloc((size_t)reps * sizeof *msg);
    for (int r = 0; r < reps; r++) {
        t0 = now();
        run_once(tk, encode, text, len);
        full[r] = mb / (now() - t0);
    }
    size_t n_msgs, tokens_msgs = 0;
    struct msg *msgs = cut_messages(text, len, &n_msgs);
    for (int r = 0; r < reps; r++) {
        size_t sum = 0;
        t0 = now();
        for (size_t i = 0; i < n_msgs; i++)
            sum += run_once(tk, encode, text + msgs[i].off, msgs[i].len);
        msg[r] = mb / (now() - t0);
        tokens_msgs = sum;
    }
    double fmin = full[0], fmax = full[0], mmin = msg[0], mmax = msg[0];
    for (int r = 1; r < reps; r++) {
        fmin = full[r] < fmin ? full[r] : fmin;
        fmax = full[r] > fmax ? full[r] : fmax;
        mmin = msg[r] < mmin ? msg[r] : mmin;
        mmax = msg[r] > mmax ? msg[r] : mmax;
    }
    printf("tok package=mnemo-%s encoding=%s bytes=%zu messages=%zu init_ms=%.1f full_first_mbs=%.2f "
           "full_mbs_median=%.2f full_mbs_min=%.2f full_mbs_max=%.2f msg_mbs_median=%.2f msg_mbs_min=%.2f "
           "msg_mbs_max=%.2f tokens_full=%zu tokens_msgs=%zu reps=%d mem_bytes=%zu rss_delta_kb=%ld\n",
           encode ? "encode" : "count", enc, len, n_msgs, init_ms, first, median(full, reps), fmin, fmax,
           median(msg, reps), mmin, mmax, tokens, tokens_msgs, reps, mn__bpe_memory(tk), rss1 - rss0);
    mn__token_free(tk);
    free(full);
    free(msg);
    free(msgs);
    free(text);
    return 0;
}

static int load(const char *enc, const char *dir, int reps)
{
    double *ms = malloc((size_t)reps * sizeof *ms);
    size_t mem = 0;
    long rss_delta = 0;
    for (int r = 0; r < reps; r++) {
        long rss0 = rss_kb();
        mn_tokenizer *tk = open_enc(enc, dir, &ms[r]);
        if (r == 0) /* later loads reuse freed pages */
            rss_delta = rss_kb() - rss0;
        mem = mn__bpe_memory(tk);
        mn__token_free(tk);
    }
    double mn = ms[0], mx = ms[0];
    for (int r = 1; r < reps; r++) {
        mn = ms[r] < mn ? ms[r] : mn;
        mx = ms[r] > mx ? ms[r] : mx;
    }
    printf("load encoding=%s load_ms_median=%.2f load_ms_min=%.2f load_ms_max=%.2f reps=%d mem_bytes=%zu "
           "rss_delta_kb=%ld\n",
           enc, median(ms, reps), mn, mx, reps, mem, rss_delta);
    free(ms);
    return 0;
}

/* TSV: name offset length cl100k_base o200k_base (shared/bench/results/tok/token_counts.tsv). */
static int verify(const char *dir, const char *tsv, const char *file)
{
    size_t len, tlen;
    char *text = read_all(file, &len);
    char *tab = read_all(tsv, &tlen);
    const char *encs[2] = {"cl100k_base", "o200k_base"};
    mn_tokenizer *tk[2] = {open_enc(encs[0], dir, NULL), open_enc(encs[1], dir, NULL)};
    size_t segs = 0, bad = 0, sum[2] = {0, 0}, ref[2] = {0, 0}, enc_bad = 0;
    char *save = NULL;
    char *line = strtok_r(tab, "\n", &save); /* header */
    while ((line = strtok_r(NULL, "\n", &save))) {
        char *f[5];
        char *s2 = NULL;
        int nf = 0;
        for (char *p = strtok_r(line, "\t", &s2); p && nf < 5; p = strtok_r(NULL, "\t", &s2))
            f[nf++] = p;
        if (nf != 5)
            continue;
        size_t off = strtoull(f[1], NULL, 10), l = strtoull(f[2], NULL, 10);
        if (off + l > len) {
            fprintf(stderr, "tokbench: segment %s outside %s\n", f[0], file);
            return 2;
        }
        segs++;
        for (int e = 0; e < 2; e++) {
            size_t want = strtoull(f[3 + e], NULL, 10);
            size_t got = mn__token_count(tk[e], text + off, l);
            uint32_t *ids;
            size_t n;
            if (tk[e]->vt->encode(tk[e], text + off, l, &ids, &n) != MN_OK)
                return 2;
            char *back;
            size_t blen;
            if (n != got || mn__bpe_decode(tk[e], ids, n, &back, &blen) != MN_OK || blen != l ||
                memcmp(back, text + off, l) != 0)
                enc_bad++;
            else
                free(back);
            free(ids);
            sum[e] += got;
            ref[e] += want;
            if (got != want) {
                bad++;
                if (bad <= 20)
                    printf("MISMATCH %s %s: mnemo %zu reference %zu\n", encs[e], f[0], got, want);
            }
        }
    }
    size_t whole[2] = {mn__token_count(tk[0], text, len), mn__token_count(tk[1], text, len)};
    printf("verify segments=%zu mismatches=%zu encode_count_or_roundtrip_failures=%zu\n", segs, bad, enc_bad);
    for (int e = 0; e < 2; e++)
        printf("verify %s sum_segments=%zu reference=%zu whole_file=%zu\n", encs[e], sum[e], ref[e], whole[e]);
    mn__token_free(tk[0]);
    mn__token_free(tk[1]);
    free(text);
    free(tab);
    return bad || enc_bad ? 1 : 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: mnemo-tokbench [-d DATADIR] [-r REPS] load ENC | count ENC FILE | encode ENC FILE | "
                    "verify TSV FILE\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *dir = getenv("MNEMO_DATA_DIR");
    int reps = 3, i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = (int)strtol(argv[++i], NULL, 10);
        else
            usage();
    }
    if (reps < 1 || i >= argc)
        usage();
    const char *mode = argv[i];
    if (strcmp(mode, "load") == 0 && i + 1 < argc)
        return load(argv[i + 1], dir, reps);
    if ((strcmp(mode, "count") == 0 || strcmp(mode, "encode") == 0) && i + 2 < argc)
        return bench(argv[i + 1], dir, argv[i + 2], mode[0] == 'e', reps);
    if (strcmp(mode, "verify") == 0 && i + 2 < argc)
        return verify(dir, argv[i + 1], argv[i + 2]);
    usage();
    return 2;
}
