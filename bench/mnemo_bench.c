/*
 * mnemo_bench.c — storage figures of libmnemo through its public API (mnemo.h) only, measured
 * the same way as the peers in shared/bench/storage (bench_store.py = the seed design in Python,
 * sqlite_insert.c = the raw sqlite3 C API limit). Each command prints one JSON object.
 *
 *   mnemo-bench append --db PATH --n N [--per-txn B] [--sync full|normal] [--tokenizer NAME]
 *       N messages into 10 new sessions. B = 1: one mn_append (one durable transaction) each,
 *       sessions round robin, exactly the peers' message sequence. B > 1: mn_append_batch of B
 *       consecutive messages to one session (a mnemo batch is one session), sessions round robin.
 *   mnemo-bench build --db PATH --sessions S --messages M [--rounds-per-txn R] [--sync normal|full]
 *       Deletes PATH, creates S sessions, then M rounds; in each round every session (in a
 *       shuffled order) gets one message — the peers' interleaved layout. R = 1 (default): one
 *       mn_append per message, so rows land on disk in exactly the interleaved order. R > 1:
 *       every R rounds, one mn_append_batch of R messages per session (faster; a session's rows
 *       are then clustered R at a time, which flatters later reads).
 *   Every command takes --fts-drain N (the setting search.fts_drain; 0 = the keyword index log
 *       waits for the first search, as before it was drained as messages arrive).
 *   mnemo-bench window --db PATH --calls C --max-tokens T [--passes P] [--read context|history]
 *       C calls on random sessions (fixed seed). --read context (default): mn_context_build,
 *       strategy window, format openai. --read history: mn_history with the newest 100 messages
 *       (the peers' raw query, no windowing nor rendering). P passes over the same calls on one
 *       handle; pass 0 starts with a cold SQLite cache; the figures are the last pass's.
 *   mnemo-bench group --db PATH --n N [--group G] [--sync full|normal]
 *       `mnemo serve`'s group commit without HTTP: N one-message appends (200 bytes of the blob)
 *       to random sessions of an existing store, G (34) to one mn_append_many; prints the rate
 *       and the CPU an append (the appending thread's, and the process's until mn_close).
 *
 * Message generator: the one of sqlite_insert.c (xorshift64 seeded like it, the same syllables,
 * a 4,000,000-byte pseudo-word blob; length log-uniform in [50,500] for user and [200,2000] for
 * assistant messages, a slice of the blob at a random offset), all generated before the timer.
 * Timing: CLOCK_MONOTONIC around the library calls only.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"

/* ---- generator (sqlite_insert.c's, so that mnemo and the raw C limit store the same text) ---- */

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static double unif(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

#define BLOB_LEN 4000000u

static char *make_blob(size_t n)
{
    static const char *syl[] = {"ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ve", "din",
                                "gar", "tel", "son", "bra", "qu", "ex", "ion", "al", "ent", "or",
                                "an", "th", "is", "we", "re", "co", "de", "pro", "con", "mem"};
    char *b = malloc(n + 64);
    size_t p = 0;
    if (!b)
        return NULL;
    while (p < n) {
        int k = 1 + (int)(rnd() % 4);
        for (int i = 0; i < k; i++) {
            const char *s = syl[rnd() % 30];
            size_t l = strlen(s);
            memcpy(b + p, s, l);
            p += l;
        }
        if (unif() < 0.07)
            b[p++] = ".,?!"[rnd() % 4];
        b[p++] = ' ';
    }
    b[n] = 0;
    return b;
}

/* One message's content: a slice of the blob, copied out NUL-terminated (the API takes C strings). */
static char *gen_content(const char *blob, int user)
{
    double lo = user ? 50 : 200, hi = user ? 500 : 2000;
    int len = (int)exp(log(lo) + unif() * (log(hi) - log(lo)));
    size_t off = rnd() % (BLOB_LEN - (size_t)len);
    char *c = malloc((size_t)len + 1);
    if (!c)
        return NULL;
    memcpy(c, blob + off, (size_t)len);
    c[len] = 0;
    return c;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, mn_status rc)
{
    fprintf(stderr, "mnemo-bench: %s: %s (%s)\n", what, mn_status_name(rc), mn_errmsg());
    exit(1);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "mnemo-bench: out of memory\n");
        exit(1);
    }
    return p;
}

static int64_t file_bytes(const char *path, const char *suffix)
{
    char name[4096];
    struct stat sb;
    snprintf(name, sizeof name, "%s%s", path, suffix);
    return stat(name, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

static void remove_db(const char *path)
{
    const char *suf[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char name[4096];
        snprintf(name, sizeof name, "%s%s", path, suf[i]);
        if (unlink(name) != 0 && errno != ENOENT) {
            fprintf(stderr, "mnemo-bench: cannot remove %s: %s\n", name, strerror(errno));
            exit(1);
        }
    }
}

struct opts {
    const char *db, *sync, *tokenizer, *read, *fts_drain;
    long n, per_txn, sessions, messages, rounds_per_txn, calls, max_tokens, passes, group;
};

static mn_db *open_db(const struct opts *o)
{
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    mn_status rc;
    if ((rc = mn_config_new(&cfg)))
        die("config", rc);
    if ((rc = mn_config_set(cfg, "memory.durability", o->sync, "bench")))
        die("--sync", rc);
    if ((rc = mn_config_set(cfg, "tokenizer.name", o->tokenizer, "bench")))
        die("--tokenizer", rc);
    if (o->fts_drain && (rc = mn_config_set(cfg, "search.fts_drain", o->fts_drain, "bench")))
        die("--fts-drain", rc);
    if ((rc = mn_open_path(o->db, cfg, &db)))
        die("open", rc);
    mn_config_free(cfg);
    return db;
}

/* Creates a session like the peers' (system prompt, metadata); returns its UUID (malloc'd). */
static char *new_session(mn_db *db)
{
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    mn_session *s = NULL;
    so.system_prompt = "You are a helpful assistant.";
    so.metadata = "{\"user\": \"bench\"}";
    mn_status rc = mn_session_create(db, &so, &s);
    if (rc)
        die("session create", rc);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ---- append ----------------------------------------------------------------------------------- */

static int cmd_append(const struct opts *o)
{
    long n = o->n, per = o->per_txn;
    if (n < 1 || per < 1 || per > 100000) {
        fprintf(stderr, "append: --n >= 1 and --per-txn 1..100000\n");
        return 2;
    }
    char *blob = make_blob(BLOB_LEN);
    mn_message_in *msgs = xcalloc((size_t)n, sizeof *msgs);
    int *sess = xcalloc((size_t)n, sizeof *sess);
    /* message i: in per-txn 1 mode session i % 10, role (i/10) % 2 (sqlite_insert.c's sequence);
     * batched: batch b = messages [b*per, (b+1)*per) to session b % 10, roles alternating within
     * the session. The content sequence is the same in both modes. */
    long *seen = xcalloc(10, sizeof *seen);
    for (long i = 0; i < n; i++) {
        int s = per == 1 ? (int)(i % 10) : (int)((i / per) % 10);
        int user = per == 1 ? (i / 10) % 2 == 0 : seen[s] % 2 == 0;
        seen[s]++;
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = user ? MN_ROLE_USER : MN_ROLE_ASSISTANT;
        m.content = gen_content(blob, user);
        msgs[i] = m;
        sess[i] = s;
    }
    mn_db *db = open_db(o);
    char *ids[10];
    for (int i = 0; i < 10; i++)
        ids[i] = new_session(db);
    mn_status rc;
    double t = now_s();
    if (per == 1) {
        for (long i = 0; i < n; i++)
            if ((rc = mn_append(db, ids[sess[i]], &msgs[i], 0, NULL)))
                die("mn_append", rc);
    } else {
        for (long i = 0; i < n; i += per) {
            size_t k = (size_t)(n - i < per ? n - i : per);
            if ((rc = mn_append_batch(db, ids[sess[i]], &msgs[i], k, 0, NULL)))
                die("mn_append_batch", rc);
        }
    }
    double dt = now_s() - t;
    mn_stats st;
    if ((rc = mn_stats_get(db, &st)))
        die("stats", rc);
    printf("{\"op\":\"append\",\"impl\":\"mnemo\",\"version\":\"%s\",\"tokenizer\":\"%s\",\"n\":%ld,\"per_txn\":%ld,"
           "\"sync\":\"%s\",\"seconds\":%.3f,\"msgs_per_s\":%.0f,\"db_rows_after\":%lld}\n",
           mn_version(), mn_db_tokenizer(db), n, per, o->sync, dt, (double)n / dt, (long long)st.messages);
    mn_close(db);
    for (int i = 0; i < 10; i++)
        free(ids[i]);
    for (long i = 0; i < n; i++)
        free((char *)msgs[i].content);
    free(msgs);
    free(sess);
    free(seen);
    free(blob);
    return 0;
}

/* ---- build ------------------------------------------------------------------------------------ */

static int cmd_build(const struct opts *o)
{
    long S = o->sessions, M = o->messages, R = o->rounds_per_txn;
    if (S < 1 || M < 1 || R < 1 || R > 100000) {
        fprintf(stderr, "build: --sessions >= 1, --messages >= 1, --rounds-per-txn 1..100000\n");
        return 2;
    }
    size_t total = (size_t)S * (size_t)M;
    char *blob = make_blob(BLOB_LEN);
    /* order[k] = the session of the k-th message written; content k is generated in that order */
    int *order = xcalloc(total, sizeof *order);
    mn_message_in *msgs = xcalloc(total, sizeof *msgs);
    uint64_t shuf = 11;
    int *perm = xcalloc((size_t)S, sizeof *perm);
    for (long s = 0; s < S; s++)
        perm[s] = (int)s;
    size_t k = 0;
    for (long r = 0; r < M; r++) {
        for (long i = S - 1; i > 0; i--) { /* Fisher-Yates with its own xorshift stream */
            shuf ^= shuf << 13;
            shuf ^= shuf >> 7;
            shuf ^= shuf << 17;
            long j = (long)(shuf % (uint64_t)(i + 1));
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int user = r % 2 == 0;
        for (long i = 0; i < S; i++, k++) {
            mn_message_in m = MN_MESSAGE_IN_INIT;
            m.role = user ? MN_ROLE_USER : MN_ROLE_ASSISTANT;
            m.content = gen_content(blob, user);
            msgs[k] = m;
            order[k] = perm[i];
        }
    }
    /* batched mode: per session, its messages in round order (index = round) */
    mn_message_in *by_sess = NULL;
    if (R > 1) {
        by_sess = xcalloc(total, sizeof *by_sess);
        for (size_t q = 0; q < total; q++)
            by_sess[(size_t)order[q] * (size_t)M + q / (size_t)S] = msgs[q];
    }
    remove_db(o->db);
    mn_db *db = open_db(o);
    char **ids = xcalloc((size_t)S, sizeof *ids);
    for (long s = 0; s < S; s++)
        ids[s] = new_session(db);
    mn_status rc;
    double t = now_s();
    if (R == 1) {
        for (size_t q = 0; q < total; q++)
            if ((rc = mn_append(db, ids[order[q]], &msgs[q], 0, NULL)))
                die("mn_append", rc);
    } else {
        for (long r0 = 0; r0 < M; r0 += R) {
            size_t cnt = (size_t)(M - r0 < R ? M - r0 : R);
            /* sessions in the shuffled order of the chunk's first round */
            for (long i = 0; i < S; i++) {
                int s = order[(size_t)r0 * (size_t)S + (size_t)i];
                if ((rc = mn_append_batch(db, ids[s], &by_sess[(size_t)s * (size_t)M + (size_t)r0], cnt, 0, NULL)))
                    die("mn_append_batch", rc);
            }
        }
    }
    double dt = now_s() - t;
    mn_stats st;
    if ((rc = mn_stats_get(db, &st)))
        die("stats", rc);
    const char *tok = mn_db_tokenizer(db);
    char tokname[64];
    snprintf(tokname, sizeof tokname, "%s", tok);
    mn_close(db); /* the last connection checkpoints the WAL into the file and removes it */
    int64_t bytes = file_bytes(o->db, "") + file_bytes(o->db, "-wal");
    printf("{\"op\":\"build\",\"impl\":\"mnemo\",\"version\":\"%s\",\"tokenizer\":\"%s\",\"sessions\":%ld,"
           "\"messages\":%ld,\"rounds_per_txn\":%ld,\"sync\":\"%s\",\"rows\":%lld,\"seconds\":%.2f,\"rows_per_s\":%.0f,"
           "\"db_bytes\":%lld,\"bytes_per_msg\":%.1f,\"tokens_stored\":%lld}\n",
           mn_version(), tokname, S, M, R, o->sync, (long long)st.messages, dt, (double)total / dt, (long long)bytes,
           (double)bytes / (double)total, (long long)st.tokens);
    for (long s = 0; s < S; s++)
        free(ids[s]);
    for (size_t q = 0; q < total; q++)
        free((char *)msgs[q].content);
    free(ids);
    free(by_sess);
    free(msgs);
    free(order);
    free(perm);
    free(blob);
    return 0;
}

/* ---- window ----------------------------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every session id of the store, sorted (UUIDv7: creation order), so that a seed picks the same
 * ones each run; exits when there are none. */
static char **session_ids(mn_db *db, const char *path, const char *cmd, size_t *count)
{
    size_t nids = 0, cap = 0;
    char **ids = NULL;
    mn_status rc;
    for (size_t off = 0;; off += 10000) {
        mn_sessions *l = NULL;
        if ((rc = mn_session_list(db, NULL, 10000, off, &l)))
            die("session list", rc);
        for (size_t i = 0; i < l->count; i++) {
            if (nids == cap) {
                cap = cap ? cap * 2 : 1024;
                ids = realloc(ids, cap * sizeof *ids);
                if (!ids)
                    die("ids", MN_NOMEM);
            }
            ids[nids++] = strdup(l->items[i].id);
        }
        size_t got = l->count;
        mn_sessions_free(l);
        if (got < 10000)
            break;
    }
    if (nids == 0) {
        fprintf(stderr, "%s: no sessions in %s\n", cmd, path);
        exit(1);
    }
    qsort(ids, nids, sizeof *ids, cmp_str);
    *count = nids;
    return ids;
}

static int cmd_window(const struct opts *o)
{
    long calls = o->calls, passes = o->passes;
    int history = strcmp(o->read, "history") == 0;
    if (calls < 1 || o->max_tokens < 1 || passes < 1 || (!history && strcmp(o->read, "context") != 0)) {
        fprintf(stderr, "window: --calls >= 1, --max-tokens >= 1, --passes >= 1, --read context|history\n");
        return 2;
    }
    if (access(o->db, F_OK) != 0) {
        fprintf(stderr, "window: %s does not exist (run build first)\n", o->db);
        return 1;
    }
    mn_db *db = open_db(o);
    size_t nids = 0;
    char **ids = session_ids(db, o->db, "window", &nids);
    mn_status rc;
    mn_stats st;
    if ((rc = mn_stats_get(db, &st)))
        die("stats", rc);
    int *pick = xcalloc((size_t)calls, sizeof *pick);
    rs = 0x1234567ull;
    for (long c = 0; c < calls; c++)
        pick[c] = (int)(rnd() % nids);
    double *lat = xcalloc((size_t)calls, sizeof *lat);
    double p50[64] = {0}, p99 = 0, mean = 0, kept_avg = 0, tokens_avg = 0;
    mn_context_opts co = MN_CONTEXT_OPTS_INIT;
    co.strategy = "window";
    co.max_tokens = o->max_tokens;
    co.format = MN_FORMAT_OPENAI;
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.limit = 100;
    ho.tail = 1;
    for (long p = 0; p < passes; p++) {
        double sum = 0, kept = 0, toks = 0;
        for (long c = 0; c < calls; c++) {
            double a = now_s();
            if (history) {
                mn_messages *m = NULL;
                if ((rc = mn_history(db, ids[pick[c]], &ho, &m)))
                    die("mn_history", rc);
                lat[c] = now_s() - a;
                kept += (double)m->count;
                mn_messages_free(m);
            } else {
                mn_context *ctx = NULL;
                if ((rc = mn_context_build(db, ids[pick[c]], &co, &ctx)))
                    die("mn_context_build", rc);
                lat[c] = now_s() - a; /* the free is outside: a caller frees after sending */
                kept += (double)ctx->kept;
                toks += (double)ctx->tokens;
                mn_context_free(ctx);
            }
            sum += lat[c];
        }
        qsort(lat, (size_t)calls, sizeof *lat, cmp_double);
        if (p < 64)
            p50[p] = lat[calls / 2] * 1e6;
        p99 = lat[(long)((double)calls * 0.99)] * 1e6;
        mean = sum / (double)calls * 1e6;
        kept_avg = kept / (double)calls;
        tokens_avg = toks / (double)calls;
    }
    long last = passes - 1 < 63 ? passes - 1 : 63;
    printf("{\"op\":\"window\",\"impl\":\"mnemo\",\"version\":\"%s\",\"tokenizer\":\"%s\",\"read\":\"%s\","
           "\"sessions\":%zu,\"rows\":%lld,\"calls\":%ld,\"max_tokens\":%ld,\"passes\":%ld,\"lat_p50_us\":%.1f,"
           "\"lat_p99_us\":%.1f,\"lat_mean_us\":%.1f,\"calls_per_s\":%.0f,\"msgs_returned_avg\":%.1f,"
           "\"tokens_avg\":%.1f,\"pass0_p50_us\":%.1f}\n",
           mn_version(), mn_db_tokenizer(db), o->read, nids, (long long)st.messages, calls, o->max_tokens, passes,
           p50[last], p99, mean, 1e6 / mean, kept_avg, tokens_avg, p50[0]);
    mn_close(db);
    for (size_t i = 0; i < nids; i++)
        free(ids[i]);
    free(ids);
    free(pick);
    free(lat);
    return 0;
}

/* ---- group ------------------------------------------------------------------------------------ */

static double cpu_s(int who)
{
    struct rusage u;
    getrusage(who, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/* What `mnemo serve`'s group committer does under bench/server/append.lua, without HTTP: groups of
 * --group one-message appends (a ~200-byte user turn each) to sessions of an existing store picked
 * at random, each group one mn_append_many with the stored messages asked for. Reports the rate
 * and the CPU an append, of the appending thread and of the whole process (its keyword indexer
 * thread included; mn_close waits for it). */
static int cmd_group(const struct opts *o)
{
    long n = o->n, g = o->group;
    if (n < 1 || g < 1 || g > 10000) {
        fprintf(stderr, "group: --n >= 1 and --group 1..10000\n");
        return 2;
    }
    if (access(o->db, F_OK) != 0) {
        fprintf(stderr, "group: %s does not exist (run build first)\n", o->db);
        return 1;
    }
    char *blob = make_blob(BLOB_LEN);
    mn_db *db = open_db(o);
    size_t nids = 0;
    char **ids = session_ids(db, o->db, "group", &nids);
    rs = 0x2545F4914F6CDD1Dull;
    char **text = xcalloc((size_t)n, sizeof *text);
    mn_message_in *msgs = xcalloc((size_t)n, sizeof *msgs);
    mn_append_request *reqs = xcalloc((size_t)g, sizeof *reqs);
    mn_append_result *res = xcalloc((size_t)g, sizeof *res);
    for (long i = 0; i < n; i++) {
        size_t off = rnd() % (BLOB_LEN - 200);
        text[i] = strndup(blob + off, 200);
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = MN_ROLE_USER;
        m.content = text[i];
        msgs[i] = m;
    }
    double t = now_s(), c_self = cpu_s(RUSAGE_SELF), c_thread = cpu_s(RUSAGE_THREAD);
    for (long i = 0; i < n; i += g) {
        size_t k = (size_t)(n - i < g ? n - i : g);
        for (size_t j = 0; j < k; j++) {
            mn_append_request r = MN_APPEND_REQUEST_INIT;
            r.session_id = ids[rnd() % nids];
            r.msgs = &msgs[i + (long)j];
            r.n = 1;
            reqs[j] = r;
        }
        mn_status rc = mn_append_many(db, reqs, k, 1, res);
        if (rc)
            die("mn_append_many", rc);
        for (size_t j = 0; j < k; j++) {
            if (res[j].status)
                die(res[j].errmsg, res[j].status);
            mn_messages_free(res[j].stored);
        }
    }
    double dt = now_s() - t, thread = cpu_s(RUSAGE_THREAD) - c_thread;
    mn_close(db);
    double all = cpu_s(RUSAGE_SELF) - c_self;
    printf("{\"op\":\"group\",\"impl\":\"mnemo\",\"version\":\"%s\",\"n\":%ld,\"group\":%ld,\"sync\":\"%s\","
           "\"sessions\":%zu,\"seconds\":%.3f,\"msgs_per_s\":%.0f,\"cpu_us_per_append\":%.1f,"
           "\"appender_cpu_us_per_append\":%.1f}\n",
           mn_version(), n, g, o->sync, nids, dt, (double)n / dt, all * 1e6 / (double)n, thread * 1e6 / (double)n);
    for (size_t i = 0; i < nids; i++)
        free(ids[i]);
    for (long i = 0; i < n; i++)
        free(text[i]);
    free(ids);
    free(text);
    free(msgs);
    free(reqs);
    free(res);
    free(blob);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------------- */

static const char usage[] =
    "usage: mnemo-bench append --db PATH --n N [--per-txn B] [--sync full|normal] [--tokenizer NAME]\n"
    "       mnemo-bench build  --db PATH --sessions S --messages M [--rounds-per-txn R] [--sync normal|full]\n"
    "       mnemo-bench window --db PATH --calls C --max-tokens T [--passes P] [--read context|history]\n"
    "       mnemo-bench group  --db PATH --n N [--group G] [--sync full|normal]\n"
    "--tokenizer: heuristic (default here, like the peers' len/4), auto, cl100k_base, o200k_base\n"
    "--fts-drain N: search.fts_drain (keyword index chunk; 0 = index at the first search; default 1000)\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    struct opts o = {NULL, NULL, "heuristic", "context", NULL, 2000, 1, 1000, 1000, 1, 2000, 4096, 3, 34};
    o.sync = strcmp(cmd, "append") == 0 || strcmp(cmd, "group") == 0 ? "full" : "normal";
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "missing value for %s\n%s", a, usage);
            return 2;
        }
        i++;
        if (!strcmp(a, "--db"))
            o.db = v;
        else if (!strcmp(a, "--sync"))
            o.sync = v;
        else if (!strcmp(a, "--tokenizer"))
            o.tokenizer = v;
        else if (!strcmp(a, "--read"))
            o.read = v;
        else if (!strcmp(a, "--fts-drain"))
            o.fts_drain = v;
        else if (!strcmp(a, "--n"))
            o.n = atol(v);
        else if (!strcmp(a, "--per-txn"))
            o.per_txn = atol(v);
        else if (!strcmp(a, "--sessions"))
            o.sessions = atol(v);
        else if (!strcmp(a, "--messages"))
            o.messages = atol(v);
        else if (!strcmp(a, "--rounds-per-txn"))
            o.rounds_per_txn = atol(v);
        else if (!strcmp(a, "--calls"))
            o.calls = atol(v);
        else if (!strcmp(a, "--max-tokens"))
            o.max_tokens = atol(v);
        else if (!strcmp(a, "--passes"))
            o.passes = atol(v);
        else if (!strcmp(a, "--group"))
            o.group = atol(v);
        else {
            fprintf(stderr, "unknown option %s\n%s", a, usage);
            return 2;
        }
    }
    if (!o.db) {
        fprintf(stderr, "--db is required\n%s", usage);
        return 2;
    }
    if (!strcmp(cmd, "append"))
        return cmd_append(&o);
    if (!strcmp(cmd, "build"))
        return cmd_build(&o);
    if (!strcmp(cmd, "window"))
        return cmd_window(&o);
    if (!strcmp(cmd, "group"))
        return cmd_group(&o);
    fputs(usage, stderr);
    return 2;
}
