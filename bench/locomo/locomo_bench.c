/*
 * locomo_bench.c — answer-in-context on LoCoMo (snap-research/locomo), public header only.
 *
 * For each conversation, every turn becomes one message of one mnemo session, in order
 * (speaker_a: user, speaker_b: assistant, content "Name: text"). For each question of categories
 * 1-4 whose gold answer (lower case) occurs in the lower-cased conversation text, the question is
 * appended as the newest user message, the context is built with mn_context_build (format text),
 * and the question counts as answered-in-context when the gold answer occurs in the rendered
 * context with the question's own text cut out; the question message is then deleted again
 * (mn_message_delete), so every question sees the same session. Each cell (conversation ×
 * strategy × retrieval mode × budget) gets a fresh database, so a summary made at one budget never
 * serves another. The table gives, per strategy × retrieval mode, the rate at each budget and the
 * p50/p99 of mn_context_build over the row's builds that did not fold (the folding builds, one per
 * cell at most with the summary strategies, are counted apart with their p50).
 *
 * Retrieval modes:
 *   off      opts.rag = -1 (no embedder configured)
 *   keyword  opts.rag = 1, no embedder configured (RAG by keyword search)
 *   hash     opts.rag = 1, embedder.name = hash, every message embedded before the questions
 *            (since 0.6 the search is hybrid: keyword + semantic, the threshold on the semantic part)
 *   default  MN_CONTEXT_OPTS_INIT with only max_tokens (and format text) set, plus the strategy
 *            unless the strategy is "config" (opts.strategy NULL: the configured memory.strategy;
 *            "config" makes only this row); fold mode, RAG and the rest as the configuration
 *            says; no embedder. The configuration is always mn_config_new's built-in defaults
 *            (no files, no environment) plus memory.durability normal, the tokenizer options and
 *            every --set KEY=VALUE (in that order, on every database the run opens)
 * With off, keyword and hash the fold mode is MN_CONTEXT_FOLD_SYNC, so the summary strategies
 * fold (extractive summariser, the default) at the first question.
 *
 * --split: questions are split by FNV-1a-64 of the question text (even: tuning half, odd:
 * held-out half) and both halves are reported beside the whole. --half tune (or heldout) asks
 * only that half's questions (a sweep on the tuning half never builds a held-out context).
 *
 * --latency: context-build latency with retrieval off and on at a synthetic 100k messages
 * (LoCoMo turns repeated in sessions of 500 messages, each ending with a LoCoMo question).
 *
 * usage: locomo-bench [--data DIR] [--budgets 2000,4000,8000] [--strategies LIST] [--modes LIST]
 *                     [--conversations N] [--questions N] [--split] [--out FILE] [--tmp DIR]
 *                     [--tokenizer NAME] [--token-data DIR] [--rag-top-k K] [--rag-min-sim X]
 *                     [--set KEY=VALUE]... [--half tune|heldout]
 *                     [--dump N]  (stderr: the rendered context and report of each cell's first N)
 *                     [--latency [--latency-messages N] [--latency-session M] [--latency-builds B]
 *                      [--latency-budget T] [--latency-warmup N (default: one per session)]]
 */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"

#define DEFAULT_DATA "/tmp/locomo/data/multimodal_dialog/locomo10_v2"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
    fprintf(stderr, "locomo-bench: %s: %s\n", what, mn_errmsg());
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "locomo-bench: out of memory\n");
        exit(1);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "locomo-bench: out of memory\n");
        exit(1);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* ------------------------------------------------------------------------------------------
 * Data.
 */
struct turn {
    mn_role role;
    char *content; /* "Name: text" */
};

struct question {
    char *text;
    char *answer; /* lower case */
    int category;
    int half; /* 0: tuning, 1: held-out */
};

struct conv {
    char *name;
    struct turn *turns;
    size_t nturns;
    struct question *qs; /* qualifying questions only */
    size_t nq;
    size_t n_cat14, n_cat14_with_answer; /* all questions of categories 1-4, those with an answer */
};

static char *answer_string(json_t *a)
{
    char buf[64];
    if (json_is_string(a))
        return xstrdup(json_string_value(a));
    if (json_is_integer(a)) {
        snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(a));
        return xstrdup(buf);
    }
    if (json_is_real(a)) {
        snprintf(buf, sizeof buf, "%g", json_real_value(a));
        return xstrdup(buf);
    }
    return NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    return s;
}

static int load_conv(const char *path, struct conv *c)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) {
        fprintf(stderr, "locomo-bench: %s: line %d: %s\n", path, err.line, err.text);
        return -1;
    }
    const char *sa = json_string_value(json_object_get(root, "speaker_a"));
    if (!sa) {
        fprintf(stderr, "locomo-bench: %s: no speaker_a\n", path);
        json_decref(root);
        return -1;
    }
    memset(c, 0, sizeof *c);
    const char *base = strrchr(path, '/');
    c->name = xstrdup(base ? base + 1 : path);
    size_t cap = 0, tlen = 0, tcap = 4096;
    char *text = xmalloc(tcap);
    text[0] = 0;
    /* session_1, session_2, …: the numbered sessions in order (some numbers have only a date) */
    for (int n = 1; n < 1000; n++) {
        char key[32];
        snprintf(key, sizeof key, "session_%d", n);
        json_t *arr = json_object_get(root, key);
        if (!json_is_array(arr))
            continue;
        size_t i;
        json_t *t;
        json_array_foreach(arr, i, t)
        {
            const char *spk = json_string_value(json_object_get(t, "speaker"));
            const char *tx = json_string_value(json_object_get(t, "text"));
            if (!spk || !tx)
                continue;
            size_t len = strlen(spk) + strlen(tx) + 3;
            char *content = xmalloc(len);
            snprintf(content, len, "%s: %s", spk, tx);
            if (c->nturns == cap) {
                cap = cap ? cap * 2 : 256;
                c->turns = xrealloc(c->turns, cap * sizeof *c->turns);
            }
            c->turns[c->nturns].role = strcmp(spk, sa) == 0 ? MN_ROLE_USER : MN_ROLE_ASSISTANT;
            c->turns[c->nturns++].content = content;
            while (tlen + len + 2 > tcap)
                text = xrealloc(text, tcap *= 2);
            memcpy(text + tlen, content, len - 1);
            tlen += len - 1;
            text[tlen++] = '\n';
            text[tlen] = 0;
        }
    }
    lower(text);
    json_t *qa = json_object_get(root, "qa"), *q;
    size_t i, qcap = 0;
    json_array_foreach(qa, i, q)
    {
        int cat = (int)json_integer_value(json_object_get(q, "category"));
        const char *qt = json_string_value(json_object_get(q, "question"));
        if (cat < 1 || cat > 4 || !qt)
            continue;
        c->n_cat14++;
        char *a = answer_string(json_object_get(q, "answer"));
        if (!a)
            continue;
        c->n_cat14_with_answer++;
        lower(a);
        char *at = trim(a);
        if (!*at || !strstr(text, at)) {
            free(a);
            continue;
        }
        if (c->nq == qcap) {
            qcap = qcap ? qcap * 2 : 64;
            c->qs = xrealloc(c->qs, qcap * sizeof *c->qs);
        }
        struct question *dq = &c->qs[c->nq++];
        dq->text = xstrdup(qt);
        dq->answer = xstrdup(at);
        dq->category = cat;
        dq->half = (int)(fnv1a(qt) & 1);
        free(a);
    }
    free(text);
    json_decref(root);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ------------------------------------------------------------------------------------------
 * Options and results.
 */
enum mode { MODE_OFF, MODE_KEYWORD, MODE_HASH, MODE_DEFAULT, MODE_COUNT };
static const char *const mode_names[] = {"off", "keyword", "hash", "default"};

struct opts {
    const char *data, *out, *tmp, *tokenizer, *token_data;
    long budgets[16];
    size_t nbudgets;
    char *strategies[8];
    size_t nstrategies;
    int modes[MODE_COUNT];
    size_t nmodes;
    long conversations, questions;
    int split, latency;
    long dump;
    size_t rag_top_k;
    double rag_min_sim;
    long lat_messages, lat_session, lat_builds, lat_budget, lat_warmup;
    const char *set_key[64], *set_val[64]; /* --set KEY=VALUE, in order */
    size_t nset;
    int half; /* --half: -1 both, 0 tuning only, 1 held-out only */
};

static struct opts O;

/* The --set pairs as "KEY=VALUE,KEY=VALUE" ("-" when none), for the header and the TSV. */
static const char *set_list(void)
{
    static char buf[4096];
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < O.nset && n < sizeof buf; i++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s=%s", i ? "," : "", O.set_key[i], O.set_val[i]);
    return O.nset ? buf : "-";
}

struct cell {
    long answered[3], total[3]; /* [0] all, [1] tuning, [2] held-out */
    double tokens_sum;
    long builds, rag_injected, rag_no_room, folds_ok, over_budget;
    long rag_searched;       /* builds whose report has rag.reserved > 0 (a search ran and found hits) */
    long rag_whole;          /* builds skipped: "the whole history is in the context" */
    double rag_tokens_sum;   /* rag.tokens_added over the builds that injected */
    double rag_hits_sum;     /* messages injected */
    double rag_left_out_sum; /* rag.left_out_for_budget */
};

struct row {
    const char *strategy;
    int mode;
    struct cell *cells; /* one per budget */
    double *lat;        /* every build of the row that did not fold */
    size_t nlat, caplat;
    double *flat;       /* the builds that folded */
    size_t nflat, capflat;
};

static void push(double **v, size_t *n, size_t *cap, double x)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *v = xrealloc(*v, *cap * sizeof **v);
    }
    (*v)[(*n)++] = x;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    size_t k = (size_t)(p * (double)(n - 1) + 0.5);
    return v[k < n ? k : n - 1];
}

/* ------------------------------------------------------------------------------------------
 * Databases.
 */
static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_rf(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void join(char *out, size_t cap, const char *dir, const char *rest)
{
    if ((size_t)snprintf(out, cap, "%s%s", dir, rest) >= cap) {
        fprintf(stderr, "locomo-bench: path too long: %s%s\n", dir, rest);
        exit(1);
    }
}

static mn_db *open_db(const char *path, int hash)
{
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "memory.durability", "normal", NULL))
        die("config");
    if (O.tokenizer && mn_config_set(cfg, "tokenizer.name", O.tokenizer, NULL))
        die("config tokenizer.name");
    if (O.token_data && mn_config_set(cfg, "tokenizer.data_dir", O.token_data, NULL))
        die("config tokenizer.data_dir");
    if (hash && mn_config_set(cfg, "embedder.name", "hash", NULL))
        die("config embedder.name");
    for (size_t i = 0; i < O.nset; i++)
        if (mn_config_set(cfg, O.set_key[i], O.set_val[i], "--set")) {
            fprintf(stderr, "locomo-bench: --set %s=%s: %s\n", O.set_key[i], O.set_val[i], mn_errmsg());
            exit(2);
        }
    if (mn_open_path(path, cfg, &db))
        die(path);
    mn_config_free(cfg);
    return db;
}

struct counts {
    int64_t messages, tokens, turns;
};

static char *load_session(mn_db *db, const struct turn *turns, size_t n, struct counts *count)
{
    mn_session *s = NULL;
    if (mn_session_create(db, NULL, &s))
        die("session create");
    char *sid = xstrdup(s->id);
    mn_session_free(s);
    mn_message_in *in = xmalloc(n * sizeof *in);
    for (size_t i = 0; i < n; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = turns[i].role;
        m.content = turns[i].content;
        in[i] = m;
    }
    for (size_t off = 0; off < n; off += 50000) {
        size_t k = n - off < 50000 ? n - off : 50000;
        if (mn_append_batch(db, sid, in + off, k, 0, NULL))
            die("append batch");
    }
    free(in);
    if (mn_session_get(db, sid, &s))
        die("session get");
    count->messages = s->message_count, count->tokens = s->token_count, count->turns = s->turn_count;
    mn_session_free(s);
    return sid;
}

static void embed_all(mn_db *db)
{
    size_t done = 0;
    if (mn_embed_pending(db, 0, &done))
        die("embed pending");
    int64_t queued = -1;
    if (mn_embed_counts(db, NULL, &queued) || queued != 0) {
        fprintf(stderr, "locomo-bench: %lld messages still queued for embedding\n", (long long)queued);
        exit(1);
    }
}

static void fill_opts(mn_context_opts *o, const char *strategy, int mode, long budget)
{
    mn_context_opts init = MN_CONTEXT_OPTS_INIT;
    *o = init;
    o->max_tokens = budget;
    o->format = MN_FORMAT_TEXT;
    o->strategy = strcmp(strategy, "config") == 0 ? NULL : strategy;
    if (mode == MODE_DEFAULT)
        return;
    o->fold = MN_CONTEXT_FOLD_SYNC;
    o->rag = mode == MODE_OFF ? -1 : 1;
    o->rag_top_k = O.rag_top_k;
    o->rag_min_similarity = O.rag_min_sim;
    /* rag_scope stays 0: MN_RAG_SCOPE_DEFAULT, memory.rag.scope (default: this session) */
}

/* The gold answer in the rendered context, the question's own text cut out (its last
 * occurrence: the newest message; before 0.6 the RAG block's "USER QUESTION: …"). */
static int answer_in(const char *rendered, const char *question_lc, const char *answer_lc)
{
    char *r = xstrdup(rendered);
    lower(r);
    size_t ql = strlen(question_lc);
    char *last = NULL;
    for (char *p = strstr(r, question_lc); p; p = strstr(p + 1, question_lc))
        last = p;
    if (last && ql)
        memmove(last, last + ql, strlen(last + ql) + 1);
    int hit = strstr(r, answer_lc) != NULL;
    free(r);
    return hit;
}

/* Counts the report's RAG, fold and budget facts into c; returns 1 when this build folded. */
static int report_stats(const char *report, struct cell *c)
{
    json_t *r = json_loads(report, 0, NULL);
    int folded = 0;
    if (!r)
        return 0;
    json_t *rag = json_object_get(r, "rag");
    if (json_array_size(json_object_get(rag, "injected")))
        c->rag_injected++;
    size_t ninj = json_array_size(json_object_get(rag, "injected"));
    if (ninj) {
        c->rag_hits_sum += (double)ninj;
        c->rag_tokens_sum += (double)json_integer_value(json_object_get(rag, "tokens_added"));
    }
    c->rag_left_out_sum += (double)json_integer_value(json_object_get(rag, "left_out_for_budget"));
    if (json_integer_value(json_object_get(rag, "reserved")) > 0)
        c->rag_searched++;
    const char *sk = json_string_value(json_object_get(rag, "skipped"));
    if (sk && strstr(sk, "no room"))
        c->rag_no_room++;
    if (sk && strstr(sk, "whole history"))
        c->rag_whole++;
    const char *fo = json_string_value(json_object_get(json_object_get(r, "fold"), "outcome"));
    if (fo && strcmp(fo, "ok") == 0)
        c->folds_ok++, folded = 1;
    if (json_is_true(json_object_get(r, "over_budget")))
        c->over_budget++;
    json_decref(r);
    return folded;
}

static long deletes_dropping_summary;

/* One cell: a fresh database holding the conversation, every question in turn. */
static void run_cell(const struct conv *cv, struct row *row, size_t bi, const char *dir)
{
    long budget = O.budgets[bi];
    struct cell *cell = &row->cells[bi];
    char path[4096];
    join(path, sizeof path, dir, "/cell");
    rm_rf(path);
    if (mkdir(path, 0700) && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    join(path, sizeof path, dir, "/cell/locomo.db");
    int hash = row->mode == MODE_HASH;
    mn_db *db = open_db(path, hash);
    struct counts count0;
    char *sid = load_session(db, cv->turns, cv->nturns, &count0);
    if ((size_t)count0.messages != cv->nturns) {
        fprintf(stderr, "locomo-bench: %s: %lld messages stored of %zu\n", cv->name, (long long)count0.messages,
                cv->nturns);
        exit(1);
    }
    if (hash)
        embed_all(db);
    if (mn_keyword_drain(db, 1, NULL, NULL))
        die("keyword drain");
    size_t nq = cv->nq;
    if (O.questions > 0 && (size_t)O.questions < nq)
        nq = (size_t)O.questions;
    for (size_t i = 0; i < nq; i++) {
        const struct question *q = &cv->qs[i];
        if (O.half >= 0 && q->half != O.half)
            continue;
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = MN_ROLE_USER;
        m.content = q->text;
        mn_message *stored = NULL;
        if (mn_append(db, sid, &m, 0, &stored))
            die("append question");
        int64_t qid = stored->id;
        mn_message_free(stored);
        if (hash)
            embed_all(db);
        mn_context_opts o;
        fill_opts(&o, row->strategy, row->mode, budget);
        mn_context *ctx = NULL;
        double t0 = now_ms();
        if (mn_context_build(db, sid, &o, &ctx))
            die("context build");
        double ms = now_ms() - t0;
        if (report_stats(ctx->report, cell))
            push(&row->flat, &row->nflat, &row->capflat, ms);
        else
            push(&row->lat, &row->nlat, &row->caplat, ms);
        char *qlc = xstrdup(q->text);
        lower(qlc);
        int hit = answer_in(ctx->rendered, qlc, q->answer);
        free(qlc);
        if ((long)i < O.dump)
            fprintf(stderr, "=== %s %s/%s budget %ld question %zu: %s | gold: %s | %s\n%s\n=== report: %s\n",
                    cv->name, row->strategy, mode_names[row->mode], budget, i, q->text, q->answer,
                    hit ? "IN CONTEXT" : "not in context", ctx->rendered, ctx->report);
        cell->builds++;
        cell->tokens_sum += (double)ctx->tokens;
        mn_context_free(ctx);
        cell->total[0]++, cell->total[1 + q->half]++;
        if (hit)
            cell->answered[0]++, cell->answered[1 + q->half]++;
        /* delete the question again; the session must be as it was (counts, summary) */
        mn_summary *sum = NULL;
        int64_t sum_id = mn_summary_get(db, sid, &sum) == MN_OK ? sum->id : 0;
        mn_summary_free(sum);
        if (mn_message_delete(db, sid, qid))
            die("delete question");
        mn_session *s = NULL;
        if (mn_session_get(db, sid, &s))
            die("session get");
        if (s->message_count != count0.messages || s->token_count != count0.tokens || s->turn_count != count0.turns) {
            fprintf(stderr,
                    "locomo-bench: %s: after deleting the question %lld messages, %lld tokens, %lld turns; before "
                    "it %lld, %lld, %lld\n",
                    cv->name, (long long)s->message_count, (long long)s->token_count, (long long)s->turn_count,
                    (long long)count0.messages, (long long)count0.tokens, (long long)count0.turns);
            exit(1);
        }
        mn_session_free(s);
        sum = NULL;
        int64_t after_id = mn_summary_get(db, sid, &sum) == MN_OK ? sum->id : 0;
        mn_summary_free(sum);
        if (after_id != sum_id)
            deletes_dropping_summary++;
    }
    free(sid);
    mn_close(db);
    join(path, sizeof path, dir, "/cell");
    rm_rf(path);
}

/* ------------------------------------------------------------------------------------------
 * Tables.
 */
static void print_table(FILE *f, struct row *rows, size_t nrows, int half, const char *title)
{
    fprintf(f, "\n%s\n\n| strategy | retrieval |", title);
    for (size_t b = 0; b < O.nbudgets; b++)
        fprintf(f, " %ld |", O.budgets[b]);
    fprintf(f, "%s\n|---|---|", half == 0 ? " build p50 ms | build p99 ms | folding builds: n, p50 ms |" : "");
    for (size_t b = 0; b < O.nbudgets; b++)
        fprintf(f, "---|");
    fprintf(f, "%s\n", half == 0 ? "---|---|---|" : "");
    for (size_t r = 0; r < nrows; r++) {
        fprintf(f, "| %s | %s |", rows[r].strategy, mode_names[rows[r].mode]);
        for (size_t b = 0; b < O.nbudgets; b++) {
            const struct cell *c = &rows[r].cells[b];
            long a = c->answered[half], t = c->total[half];
            fprintf(f, " %.1f%% (%ld/%ld) |", t ? 100.0 * (double)a / (double)t : 0.0, a, t);
        }
        if (half == 0) {
            const struct row *w = &rows[r];
            fprintf(f, " %.2f | %.2f | %zu, %.1f |", pct(w->lat, w->nlat, 0.5), pct(w->lat, w->nlat, 0.99), w->nflat,
                    pct(w->flat, w->nflat, 0.5));
        }
        fprintf(f, "\n");
    }
}

static void print_diag(FILE *f, struct row *rows, size_t nrows)
{
    fprintf(f, "\nPer cell: mean context tokens; builds where RAG injected >= 1 message / was skipped for "
               "lack of room (/ skipped because the whole history was in); mean messages and tokens the RAG "
               "block added where it was injected, mean hits left out for the budget; builds that folded; "
               "builds over budget\n\n| strategy | retrieval |");
    for (size_t b = 0; b < O.nbudgets; b++)
        fprintf(f, " %ld |", O.budgets[b]);
    fprintf(f, "\n|---|---|");
    for (size_t b = 0; b < O.nbudgets; b++)
        fprintf(f, "---|");
    fprintf(f, "\n");
    for (size_t r = 0; r < nrows; r++) {
        fprintf(f, "| %s | %s |", rows[r].strategy, mode_names[rows[r].mode]);
        for (size_t b = 0; b < O.nbudgets; b++) {
            const struct cell *c = &rows[r].cells[b];
            fprintf(f, " %.0f tok; rag %ld/%ld no-room", c->builds ? c->tokens_sum / (double)c->builds : 0.0,
                    c->rag_injected, c->rag_no_room);
            if (c->rag_whole)
                fprintf(f, "/%ld whole", c->rag_whole);
            if (c->rag_injected)
                fprintf(f, " (%.1f msgs, %.0f tok, %.1f left out)", c->rag_hits_sum / (double)c->rag_injected,
                        c->rag_tokens_sum / (double)c->rag_injected,
                        c->rag_left_out_sum / (double)c->rag_injected);
            fprintf(f, "; fold %ld; over %ld |", c->folds_ok, c->over_budget);
        }
        fprintf(f, "\n");
    }
}

static void write_tsv(const char *file, struct row *rows, size_t nrows)
{
    FILE *f = fopen(file, "w");
    if (!f) {
        perror(file);
        exit(1);
    }
    fprintf(f, "strategy\tretrieval\tbudget\thalf\tanswered\ttotal\trate\tmean_tokens\tbuilds\trag_injected\t"
               "rag_no_room\tfolds_ok\tover_budget\trow_p50_ms\trow_p99_ms\trow_fold_builds\trow_fold_p50_ms\t"
               "rag_whole_history\trag_mean_msgs\trag_mean_tokens\trag_mean_left_out\tset\n");
    static const char *const halves[] = {"all", "tune", "heldout"};
    for (size_t r = 0; r < nrows; r++) {
        struct row *w = &rows[r];
        double p50 = pct(w->lat, w->nlat, 0.5), p99 = pct(w->lat, w->nlat, 0.99), fp50 = pct(w->flat, w->nflat, 0.5);
        for (size_t b = 0; b < O.nbudgets; b++)
            for (int h = 0; h < 3; h++) {
                const struct cell *c = &rows[r].cells[b];
                double inj = c->rag_injected ? (double)c->rag_injected : 1.0;
                fprintf(f,
                        "%s\t%s\t%ld\t%s\t%ld\t%ld\t%.4f\t%.1f\t%ld\t%ld\t%ld\t%ld\t%ld\t%.3f\t%.3f\t%zu\t%.3f\t%ld\t"
                        "%.2f\t%.1f\t%.2f\t%s\n",
                        rows[r].strategy, mode_names[rows[r].mode], O.budgets[b], halves[h], c->answered[h],
                        c->total[h], c->total[h] ? (double)c->answered[h] / (double)c->total[h] : 0.0,
                        c->builds ? c->tokens_sum / (double)c->builds : 0.0, c->builds, c->rag_injected,
                        c->rag_no_room, c->folds_ok, c->over_budget, p50, p99, w->nflat, fp50, c->rag_whole,
                        c->rag_hits_sum / inj, c->rag_tokens_sum / inj, c->rag_left_out_sum / inj, set_list());
            }
    }
    fclose(f);
}

/* ------------------------------------------------------------------------------------------
 * Latency at 100k messages.
 */
static void run_latency(struct conv *convs, size_t nconv, const char *dir)
{
    /* the turn stream: every conversation's turns in order; the questions: every qualifying one */
    size_t nt = 0, nqs = 0;
    for (size_t c = 0; c < nconv; c++)
        nt += convs[c].nturns, nqs += convs[c].nq;
    struct turn *all = xmalloc(nt * sizeof *all);
    const char **qs = xmalloc((nqs ? nqs : 1) * sizeof *qs);
    nt = nqs = 0;
    for (size_t c = 0; c < nconv; c++) {
        for (size_t i = 0; i < convs[c].nturns; i++)
            all[nt++] = convs[c].turns[i];
        for (size_t i = 0; i < convs[c].nq; i++)
            qs[nqs++] = convs[c].qs[i].text;
    }
    if (!nt || !nqs) {
        fprintf(stderr, "locomo-bench: no turns or questions for the latency corpus\n");
        exit(1);
    }
    long per = O.lat_session, nsess = (O.lat_messages + per - 1) / per;
    char path[4096];
    join(path, sizeof path, dir, "/latency");
    rm_rf(path);
    if (mkdir(path, 0700) && errno != EEXIST) {
        perror(path);
        exit(1);
    }
    join(path, sizeof path, dir, "/latency/corpus.db");
    /* the corpus, once, with the hash embedder (when a hash row is asked for) so that both kinds of
     * retrieval can run on it */
    int want_hash = 0;
    for (size_t m = 0; m < O.nmodes; m++)
        want_hash |= O.modes[m] == MODE_HASH;
    double t0 = now_ms();
    mn_db *db = open_db(path, want_hash);
    char **sids = xmalloc((size_t)nsess * sizeof *sids);
    struct turn *buf = xmalloc((size_t)per * sizeof *buf);
    size_t pos = 0;
    long total = 0;
    for (long s = 0; s < nsess; s++) {
        long n = O.lat_messages - total < per ? O.lat_messages - total : per;
        for (long i = 0; i < n - 1; i++) /* consecutive turns of the stream, wrapping around */
            buf[i] = all[pos++ % nt];
        buf[n - 1].role = MN_ROLE_USER; /* each session ends with a question */
        buf[n - 1].content = (char *)qs[(size_t)s * 7919 % nqs];
        struct counts cnt;
        sids[s] = load_session(db, buf, (size_t)n, &cnt);
        total += n;
    }
    double t_load = now_ms() - t0;
    t0 = now_ms();
    if (want_hash)
        embed_all(db);
    double t_embed = now_ms() - t0;
    t0 = now_ms();
    if (mn_keyword_drain(db, 1, NULL, NULL))
        die("keyword drain");
    double t_drain = now_ms() - t0;
    mn_close(db);
    printf("latency corpus: %ld messages in %ld sessions of up to %ld (LoCoMo turns repeated); appended in %.1f s, "
           "keyword index drained in %.1f s, ",
           total, nsess, per, t_load / 1e3, t_drain / 1e3);
    if (want_hash)
        printf("hash-embedded in %.1f s\n", t_embed / 1e3);
    else
        printf("not embedded (no hash row asked for)\n");
    struct {
        const char *name;
        int mode, scope;
    } kinds[] = {
        {"off", MODE_OFF, 0},         {"keyword (session)", MODE_KEYWORD, 0},
        {"keyword (all)", MODE_KEYWORD, MN_RAG_SCOPE_ALL}, {"hash (session)", MODE_HASH, 0},
        {"hash (all)", MODE_HASH, MN_RAG_SCOPE_ALL},       {"default", MODE_DEFAULT, 0},
    };
    long warm = O.lat_warmup < 0 || O.lat_warmup > nsess ? nsess : O.lat_warmup;
    printf("\nContext-build latency at %ld messages: budget %ld, %ld timed builds per row (sessions in a fixed "
           "order), after %ld untimed builds (one per session%s); --set %s\n\n| strategy | retrieval | p50 ms | "
           "p99 ms | mean ms | RAG injected |\n|---|---|---|---|---|---|\n",
           total, O.lat_budget, O.lat_builds, warm, warm < nsess ? ", the first sessions" : "", set_list());
    double *lat = xmalloc((size_t)O.lat_builds * sizeof *lat);
    for (size_t si = 0; si < O.nstrategies; si++)
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            int mode = kinds[k].mode;
            int wanted = 0;
            for (size_t m = 0; m < O.nmodes; m++)
                wanted |= O.modes[m] == mode;
            if (!wanted)
                continue;
            db = open_db(path, mode == MODE_HASH);
            mn_context_opts o;
            fill_opts(&o, O.strategies[si], mode, O.lat_budget);
            o.rag_scope = kinds[k].scope;
            for (long s = 0; s < warm; s++) { /* warm-up: caches, folds, the vector index */
                mn_context *ctx = NULL;
                if (mn_context_build(db, sids[s], &o, &ctx))
                    die("context build");
                mn_context_free(ctx);
            }
            long injected = 0;
            double sum = 0;
            for (long b = 0; b < O.lat_builds; b++) {
                mn_context *ctx = NULL;
                const char *sid = sids[(size_t)b * 37 % (size_t)nsess];
                double t1 = now_ms();
                if (mn_context_build(db, sid, &o, &ctx))
                    die("context build");
                lat[b] = now_ms() - t1;
                sum += lat[b];
                struct cell c = {0};
                report_stats(ctx->report, &c);
                injected += c.rag_injected;
                mn_context_free(ctx);
            }
            mn_close(db);
            double p50 = pct(lat, (size_t)O.lat_builds, 0.5), p99 = pct(lat, (size_t)O.lat_builds, 0.99);
            printf("| %s | %s | %.2f | %.2f | %.2f | %ld/%ld |\n", O.strategies[si], kinds[k].name, p50, p99,
                   sum / (double)O.lat_builds, injected, O.lat_builds);
            fflush(stdout);
        }
    free(lat);
    for (long s = 0; s < nsess; s++)
        free(sids[s]);
    free(sids);
    free(buf);
    free(all);
    free(qs);
    join(path, sizeof path, dir, "/latency");
    rm_rf(path);
}

/* ------------------------------------------------------------------------------------------
 * Main.
 */
static void usage(void)
{
    fprintf(stderr,
            "usage: locomo-bench [--data DIR] [--budgets 2000,4000,8000] [--strategies window,summary,chunked,hybrid,config]\n"
            "                    [--modes off,keyword,hash,default] [--conversations N] [--questions N] [--split]\n"
            "                    [--out FILE.tsv] [--tmp DIR] [--tokenizer NAME] [--token-data DIR]\n"
            "                    [--rag-top-k K] [--rag-min-sim X] [--set KEY=VALUE]... [--half tune|heldout]\n"
            "                    [--dump N]\n"
            "                    [--latency [--latency-messages 100000] [--latency-session 500]\n"
            "                     [--latency-builds 500] [--latency-budget 4000] [--latency-warmup N]]\n"
            "DIR holds LoCoMo's conversation files (*.json), default " DEFAULT_DATA ":\n"
            "  git clone https://github.com/snap-research/locomo && unzip locomo/data/locomo10.zip -d /tmp/locomo\n"
            "strategy 'config': opts.strategy NULL (the configured memory.strategy), only with mode default\n");
    exit(2);
}

static void parse_list(const char *arg, char **out, size_t max, size_t *n)
{
    char *s = xstrdup(arg), *save = NULL;
    *n = 0;
    for (char *t = strtok_r(s, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (*n == max)
            usage();
        out[(*n)++] = xstrdup(t);
    }
    free(s);
}

int main(int argc, char **argv)
{
    O.data = DEFAULT_DATA;
    O.tmp = "/tmp";
    O.budgets[0] = 2000, O.budgets[1] = 4000, O.budgets[2] = 8000, O.nbudgets = 3;
    parse_list("window,summary,chunked,hybrid,config", O.strategies, 8, &O.nstrategies);
    for (int m = 0; m < MODE_COUNT; m++)
        O.modes[O.nmodes++] = m;
    O.lat_messages = 100000, O.lat_session = 500, O.lat_builds = 500, O.lat_budget = 4000;
    O.half = -1;
    O.lat_warmup = -1;
    int strategies_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && (v || (usage(), 0)) && (++i, 1))
        if (ARG("--data"))
            O.data = v;
        else if (ARG("--out"))
            O.out = v;
        else if (ARG("--tmp"))
            O.tmp = v;
        else if (ARG("--tokenizer"))
            O.tokenizer = v;
        else if (ARG("--token-data"))
            O.token_data = v;
        else if (ARG("--budgets")) {
            char *l[16];
            parse_list(v, l, 16, &O.nbudgets);
            for (size_t k = 0; k < O.nbudgets; k++) {
                O.budgets[k] = atol(l[k]);
                free(l[k]);
                if (O.budgets[k] < 1)
                    usage();
            }
        } else if (ARG("--strategies")) {
            parse_list(v, O.strategies, 8, &O.nstrategies);
            strategies_given = 1;
        } else if (ARG("--modes")) {
            char *l[MODE_COUNT];
            size_t n;
            parse_list(v, l, MODE_COUNT, &n);
            O.nmodes = 0;
            for (size_t k = 0; k < n; k++) {
                int m = 0;
                while (m < MODE_COUNT && strcmp(mode_names[m], l[k]))
                    m++;
                if (m == MODE_COUNT)
                    usage();
                O.modes[O.nmodes++] = m;
                free(l[k]);
            }
        } else if (ARG("--conversations"))
            O.conversations = atol(v);
        else if (ARG("--questions"))
            O.questions = atol(v);
        else if (ARG("--dump"))
            O.dump = atol(v);
        else if (ARG("--rag-top-k"))
            O.rag_top_k = (size_t)atol(v);
        else if (ARG("--rag-min-sim"))
            O.rag_min_sim = atof(v);
        else if (ARG("--set")) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || O.nset == sizeof O.set_key / sizeof O.set_key[0])
                usage();
            char *k = xstrdup(v);
            k[eq - v] = 0;
            O.set_key[O.nset] = k;
            O.set_val[O.nset++] = k + (eq - v) + 1;
        } else if (ARG("--half")) {
            if (strcmp(v, "tune") == 0)
                O.half = 0;
            else if (strcmp(v, "heldout") == 0)
                O.half = 1;
            else
                usage();
        }
        else if (ARG("--latency-messages"))
            O.lat_messages = atol(v);
        else if (ARG("--latency-session"))
            O.lat_session = atol(v);
        else if (ARG("--latency-builds"))
            O.lat_builds = atol(v);
        else if (ARG("--latency-budget"))
            O.lat_budget = atol(v);
        else if (ARG("--latency-warmup"))
            O.lat_warmup = atol(v);
        else if (strcmp(a, "--split") == 0)
            O.split = 1;
        else if (strcmp(a, "--latency") == 0)
            O.latency = 1;
        else
            usage();
#undef ARG
    }
    if (O.latency && !strategies_given)
        parse_list("window", O.strategies, 8, &O.nstrategies);
    if (O.lat_session < 2 || O.lat_messages < O.lat_session || O.lat_builds < 1)
        usage();
    { /* a bad --set stops the run here, before any file is made */
        mn_config *cfg = NULL;
        if (mn_config_new(&cfg))
            die("config");
        for (size_t i = 0; i < O.nset; i++)
            if (mn_config_set(cfg, O.set_key[i], O.set_val[i], "--set")) {
                fprintf(stderr, "locomo-bench: --set %s=%s: %s\n", O.set_key[i], O.set_val[i], mn_errmsg());
                return 2;
            }
        mn_config_free(cfg);
    }

    /* the conversation files, in name order */
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -1 '%s' 2>/dev/null", O.data);
    FILE *ls = popen(cmd, "r");
    char **files = NULL;
    size_t nfiles = 0, capf = 0;
    char line[4096];
    while (ls && fgets(line, sizeof line, ls)) {
        line[strcspn(line, "\n")] = 0;
        size_t l = strlen(line);
        if (l < 6 || strcmp(line + l - 5, ".json"))
            continue;
        if (nfiles == capf)
            files = xrealloc(files, (capf = capf ? capf * 2 : 16) * sizeof *files);
        size_t n = strlen(O.data) + l + 2;
        files[nfiles] = xmalloc(n);
        snprintf(files[nfiles++], n, "%s/%s", O.data, line);
    }
    if (ls)
        pclose(ls);
    if (!nfiles) {
        fprintf(stderr,
                "locomo-bench: no *.json conversation files in %s\n"
                "  get LoCoMo: git clone https://github.com/snap-research/locomo && "
                "unzip locomo/data/locomo10.zip -d /tmp/locomo\n"
                "  (then --data /tmp/locomo/data/multimodal_dialog/locomo10_v2, the default)\n",
                O.data);
        return 1;
    }
    qsort(files, nfiles, sizeof *files, cmp_str);
    if (O.conversations > 0 && (size_t)O.conversations < nfiles)
        nfiles = (size_t)O.conversations;
    struct conv *convs = xmalloc(nfiles * sizeof *convs);
    size_t nturns = 0, nq = 0, n14 = 0, n14a = 0, nq_half[2] = {0, 0}, nq_cat[5] = {0};
    for (size_t f = 0; f < nfiles; f++) {
        if (load_conv(files[f], &convs[f]))
            return 1;
        nturns += convs[f].nturns, nq += convs[f].nq, n14 += convs[f].n_cat14, n14a += convs[f].n_cat14_with_answer;
        for (size_t i = 0; i < convs[f].nq; i++)
            nq_half[convs[f].qs[i].half]++, nq_cat[convs[f].qs[i].category]++;
    }

    char dir[4096];
    snprintf(dir, sizeof dir, "%s/locomo-bench.XXXXXX", O.tmp);
    if (!mkdtemp(dir)) {
        perror(dir);
        return 1;
    }
    /* the header: data, tokenizer, summariser */
    {
        char p[4200];
        snprintf(p, sizeof p, "%s/probe.db", dir);
        mn_db *db = open_db(p, 0);
        mn_config *cfg = NULL;
        static const char *const keys[] = {"summarizer.name",          "memory.strategy",
                                           "memory.rag.enabled",       "memory.rag.top_k",
                                           "memory.rag.share_percent", "memory.rag.min_similarity",
                                           "memory.rag.scope",         "context.summary_token_cap",
                                           "context.max_history_messages"};
        printf("locomo-bench: %zu conversations from %s, %zu turns; questions of categories 1-4: %zu (%zu with an "
               "answer), qualifying (answer in the conversation text): %zu (cat 1: %zu, 2: %zu, 3: %zu, 4: %zu; "
               "tuning half %zu, held-out half %zu)%s\n",
               nfiles, O.data, nturns, n14, n14a, nq, nq_cat[1], nq_cat[2], nq_cat[3], nq_cat[4], nq_half[0],
               nq_half[1],
               O.half == 0   ? "; this run asks the tuning half only"
               : O.half == 1 ? "; this run asks the held-out half only"
                             : "");
        printf("tokenizer %s; built-in defaults:", mn_db_tokenizer(db));
        mn_config_new(&cfg);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const char *v = "(no such key)";
            mn_config_get(cfg, keys[k], &v, NULL);
            printf("%s %s %s", k ? "," : "", keys[k], v);
        }
        printf("\nthis run: --set %s; rag_top_k %zu, rag_min_similarity %g (0: the configured value); questions per "
               "conversation: %s\n",
               set_list(), O.rag_top_k, O.rag_min_sim, O.questions > 0 ? "limited" : "all");
        fflush(stdout);
        mn_config_free(cfg);
        mn_close(db);
        rm_rf(dir);
        mkdir(dir, 0700);
    }
    if (O.latency) {
        run_latency(convs, nfiles, dir);
        rm_rf(dir);
        return 0;
    }

    /* rows: strategy x mode; the strategy "config" only with the mode default (the plain
     * MN_CONTEXT_OPTS_INIT + max_tokens call) */
    size_t nrows = 0;
    struct row *rows = xmalloc(O.nstrategies * O.nmodes * sizeof *rows);
    for (size_t s = 0; s < O.nstrategies; s++)
        for (size_t m = 0; m < O.nmodes; m++) {
            if (strcmp(O.strategies[s], "config") == 0 && O.modes[m] != MODE_DEFAULT)
                continue;
            struct row *r = &rows[nrows++];
            memset(r, 0, sizeof *r);
            r->strategy = O.strategies[s];
            r->mode = O.modes[m];
            r->cells = xmalloc(O.nbudgets * sizeof *r->cells);
            memset(r->cells, 0, O.nbudgets * sizeof *r->cells);
        }
    double t0 = now_ms();
    for (size_t r = 0; r < nrows; r++) {
        for (size_t c = 0; c < nfiles; c++)
            for (size_t b = 0; b < O.nbudgets; b++)
                run_cell(&convs[c], &rows[r], b, dir);
        fprintf(stderr, "locomo-bench: %s / %s done (%.0f s)\n", rows[r].strategy, mode_names[rows[r].mode],
                (now_ms() - t0) / 1e3);
    }
    rm_rf(dir);
    printf("\nRun time %.0f s. Deleting a question dropped the session's summary %ld times (expected 0).\n",
           (now_ms() - t0) / 1e3, deletes_dropping_summary);
    print_table(stdout, rows, nrows, 0,
                "Answer-in-context rate (answered/total), all qualifying questions; build latency over the row's "
                "builds that did not fold, the folding builds apart");
    if (O.split) {
        print_table(stdout, rows, nrows, 1, "Tuning half (FNV-1a-64 of the question text even)");
        print_table(stdout, rows, nrows, 2, "Held-out half (FNV-1a-64 of the question text odd)");
    }
    print_diag(stdout, rows, nrows);
    if (O.out)
        write_tsv(O.out, rows, nrows);
    return 0;
}
