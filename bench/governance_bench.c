/*
 * governance_bench.c — context governance on a long scripted tool-heavy conversation (public
 * header only). For each strategy (window, summary, chunked, hybrid) it appends the same 2,000
 * turns to its own database and builds the context after every turn, measuring: build time per
 * turn (median, p99), tokens sent per turn (and versus window), the prefix-stability share
 * (consecutive turns whose context extends the previous one's), and summariser calls (from the
 * compaction events). The summariser is the extractive one: deterministic and offline.
 *
 * usage: governance-bench [TURNS] [MAX_TOKENS] [DIR] [MAX_OUTPUT_CHARS]
 *        (defaults 2000, 8000, /tmp, 6300: tool outputs of 300 .. MAX_OUTPUT_CHARS characters)
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(const char *what)
{
    fprintf(stderr, "governance-bench: %s: %s\n", what, mn_errmsg());
    exit(1);
}

static void append(mn_db *db, const char *sid, mn_role role, const char *content, const char *calls,
                   const char *call_id, const char *name)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = content;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    m.name = name;
    if (mn_append(db, sid, &m, 0, NULL) != MN_OK)
        die("append");
}

/* Turn t of the script: a request, one or two tool calls with outputs of varied size (some far
 * over the trim length, now and then an error followed by its fix), and a reply. */
static size_t max_output = 6300;

static void script_turn(mn_db *db, const char *sid, int t, char *buf, size_t cap)
{
    static const char *const tools[] = {"read_file", "run_tests", "grep", "edit_file", "list_dir"};
    snprintf(buf, cap, "Step %d: please look at src/module%d.c and fix what the tests report for case %d.", t,
             t % 37, t * 7 % 101);
    append(db, sid, MN_ROLE_USER, buf, NULL, NULL, NULL);
    int ncalls = 1 + (t % 3 == 0);
    char calls[1024];
    size_t off = (size_t)snprintf(calls, sizeof calls, "[");
    for (int c = 0; c < ncalls; c++)
        off += (size_t)snprintf(calls + off, sizeof calls - off,
                                "%s{\"id\":\"call_%d_%d\",\"type\":\"function\",\"function\":{\"name\":\"%s\","
                                "\"arguments\":\"{\\\"path\\\":\\\"src/module%d.c\\\"}\"}}",
                                c ? "," : "", t, c, tools[(t + c) % 5], t % 37);
    snprintf(calls + off, sizeof calls - off, "]");
    append(db, sid, MN_ROLE_ASSISTANT, NULL, calls, NULL, NULL);
    for (int c = 0; c < ncalls; c++) {
        size_t len = (size_t)(300 + (size_t)(t * 131 + c * 977) % (max_output - 299));
        if (len > cap - 200)
            len = cap - 200;
        int err = t % 9 == 4;
        size_t k = (size_t)snprintf(buf, cap, "%s in src/module%d.c line %d\n",
                                    err ? "error: assertion failed" : "ok: 12 passed", t % 37, t % 400);
        while (k < len)
            k += (size_t)snprintf(buf + k, cap - k, "line %zu of output for step %d\n", k, t);
        char id[32];
        snprintf(id, sizeof id, "call_%d_%d", t, c);
        append(db, sid, MN_ROLE_TOOL, buf, NULL, id, tools[(t + c) % 5]);
    }
    snprintf(buf, cap, "%s step %d: I will keep using the parser in src/module%d.c; %d checks pass.",
             t % 9 == 4 ? "Found the error in" : "Done with", t, t % 37, t % 50);
    append(db, sid, MN_ROLE_ASSISTANT, buf, NULL, NULL, NULL);
}

struct result {
    double median, p99, mean_tokens;
    int64_t total_tokens;
    int stable, pairs;
    long calls, folds, failed;
};

static struct result run(const char *strategy, int turns, int64_t max_tokens, const char *dir, const char *tokenizer)
{
    char path[512];
    snprintf(path, sizeof path, "%s/govbench-%s-%d.db", dir, strategy, (int)getpid());
    unlink(path);
    mn_config *cfg = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "memory.durability", "normal", NULL) ||
        mn_config_set(cfg, "tokenizer.name", tokenizer, NULL) ||
        mn_config_set(cfg, "summarizer.name", "extractive", NULL))
        die("config");
    mn_db *db = NULL;
    if (mn_open_path(path, cfg, &db))
        die("open");
    mn_config_free(cfg);
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.system_prompt = "You are a coding agent working in a C repository. Run the tests after every change.";
    mn_session *s = NULL;
    if (mn_session_create(db, &so, &s))
        die("session");
    double *times = calloc((size_t)turns, sizeof *times);
    static char buf[8192];
    char *prev = NULL;
    struct result r;
    memset(&r, 0, sizeof r);
    for (int t = 0; t < turns; t++) {
        script_turn(db, s->id, t, buf, sizeof buf);
        mn_context_opts o = MN_CONTEXT_OPTS_INIT;
        o.strategy = strategy;
        o.max_tokens = max_tokens;
        mn_context *c = NULL;
        double t0 = now_ms();
        if (mn_context_build(db, s->id, &o, &c))
            die("context");
        times[t] = now_ms() - t0;
        r.total_tokens += c->tokens;
        size_t len = strlen(c->rendered);
        if (prev) {
            size_t pl = strlen(prev) - 1; /* without the closing ']' */
            r.pairs++;
            r.stable += len > pl && strncmp(prev, c->rendered, pl) == 0;
        }
        free(prev);
        prev = strdup(c->rendered);
        mn_context_free(c);
    }
    free(prev);
    char *ev = NULL;
    if (mn_events_json(db, s->id, 10000, &ev))
        die("events");
    json_t *arr = json_loads(ev, 0, NULL);
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        json_t *d = json_object_get(e, "data");
        r.calls += (long)json_integer_value(json_object_get(d, "calls"));
        const char *outcome = json_string_value(json_object_get(d, "outcome"));
        r.folds += outcome && strcmp(outcome, "ok") == 0;
        r.failed += outcome && strcmp(outcome, "ok") != 0;
    }
    json_decref(arr);
    mn_free(ev);
    qsort(times, (size_t)turns, sizeof *times, cmp_double);
    r.median = times[turns / 2];
    r.p99 = times[(size_t)((double)turns * 0.99) < (size_t)turns ? (size_t)((double)turns * 0.99) : (size_t)turns - 1];
    r.mean_tokens = (double)r.total_tokens / turns;
    free(times);
    mn_session_free(s);
    mn_close(db);
    unlink(path);
    return r;
}

int main(int argc, char **argv)
{
    int turns = argc > 1 ? atoi(argv[1]) : 2000;
    int64_t max_tokens = argc > 2 ? atoll(argv[2]) : 8000;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    if (argc > 4 && atoi(argv[4]) >= 400)
        max_output = (size_t)atoi(argv[4]);
    const char *tokenizer = "cl100k_base";
    size_t probe;
    if (mn_count_tokens("cl100k_base", "x", 1, &probe) != MN_OK)
        tokenizer = "heuristic";
    static const char *const strategies[] = {"window", "summary", "chunked", "hybrid"};
    struct result res[4];
    printf("governance-bench: %d turns, max_tokens %lld, tool outputs 300..%zu chars, tokenizer %s, summarizer"
           " extractive, mnemo %s\n", turns, (long long)max_tokens, max_output, tokenizer, mn_version());
    printf("%-8s %10s %10s %14s %10s %16s %10s %8s\n", "strategy", "median_ms", "p99_ms", "tokens/turn", "vs_window",
           "prefix_stable", "sum_calls", "folds");
    for (int k = 0; k < 4; k++) {
        res[k] = run(strategies[k], turns, max_tokens, dir, tokenizer);
        printf("%-8s %10.3f %10.3f %14.1f %9.2fx %9d/%-4d %5.1f%% %8ld %8ld\n", strategies[k], res[k].median,
               res[k].p99, res[k].mean_tokens, res[k].mean_tokens / res[0].mean_tokens, res[k].stable, res[k].pairs,
               res[k].pairs ? 100.0 * res[k].stable / res[k].pairs : 0.0, res[k].calls, res[k].folds);
        fflush(stdout);
    }
    return 0;
}
