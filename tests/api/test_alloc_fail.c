/*
 * test_alloc_fail.c — the allocation-failure run (issue #40), after SQLite's malloc tests: slices
 * of the public API run again and again on SQLite files, each run with one more allocation
 * failing, until a run goes by with nothing left to fail.
 *
 * How. The program links the static library with -Wl,--wrap=malloc,calloc,realloc,strdup,strndup
 * (tests/CMakeLists.txt), and jansson's allocator is pointed at the same counter
 * (json_set_alloc_funcs), so every allocation libmnemo and jansson make is counted; SQLite's,
 * libcrypto's and the C library's own are not. Only the scenario's thread counts: the library's
 * threads would make the order depend on scheduling. Three phases: `create` (mn_open_path on a new
 * file: schema from version 0, keyword index; then mn_close), `open` (the same on an existing
 * database) and `calls` (one handle opened before, and per run a new session: mn_session_create,
 * four mn_append and an mn_append_batch, mn_history and mn_messages_to_json, mn_context_build with
 * the window strategy (retrieval injects) and the summary one (the extractive summariser folds),
 * a keyword mn_search, mn_memory_add and a keyword mn_memory_search, mn_export).
 *
 * Which allocations fail. Each run fails the first allocation at or after the one the previous
 * run failed whose call stack (every return address) has not failed twice in the phase: a loop
 * that allocates at one place fails at its first two turns, not at each (the configuration's
 * defaults alone are 600 allocations). About 820 runs, 25-45 s under ASan on two busy cores;
 * MNEMO_TEST_ALLOC_ALL=1 fails every allocation instead (about 2,300 runs, 3 minutes).
 * MNEMO_TEST_ALLOC_PHASE=NAME runs one phase; MNEMO_TEST_ALLOC_TRACE=1 prints the stack of each
 * allocation it fails (sanitizer builds).
 *
 * Checked: every call returns MN_OK or, when the allocation failed inside it, MN_NOMEM with a
 * non-empty mn_errmsg(); the same call made again then succeeds (the failure left nothing behind);
 * each success is what was asked (messages as sent, the clean run's contexts, the search hits);
 * after each run another handle sees exactly the acknowledged messages (seq 1..12, none twice)
 * and one memory, and after the sweep a new handle sees every run's. Leaks: LeakSanitizer after
 * each phase. A crash is the sanitizer's report; a run that hangs for 60 s ends the program,
 * naming it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <execinfo.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_tmp.h"

/* ---- the counter behind every allocation ---------------------------------------------------- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
/* the sanitizer runtime's, when linked */
void __sanitizer_print_stack_trace(void) __attribute__((weak));
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static _Thread_local int counting; /* on while a scenario runs, on its thread */
static long alloc_count; /* allocations counted in this run */
static long arm_from;    /* 0: nothing fails; else the first allocation from this one on that may */
static long failed_at;   /* the one that failed in this run; 0: none */
static int per_stack;    /* failures per call stack (0: no limit, every N) */
static int trace;

/* Call stacks already failed, by a hash of their return addresses: open addressing. */
enum { STACKS = 1 << 15 };
static struct {
    uint64_t key;
    int failed;
} stacks[STACKS];
static long n_stacks;

/* Whether this allocation's stack may fail once more (and counts it if so). */
static int stack_may_fail(void)
{
    void *frames[64];
    int n = backtrace(frames, 64);
    uint64_t h = 1469598103934665603u;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uintptr_t)frames[i]) * 1099511628211u;
    size_t i = h % STACKS;
    while (stacks[i].key && stacks[i].key != h)
        i = (i + 1) % STACKS;
    if (!stacks[i].key) {
        if (n_stacks == STACKS / 2) /* too many stacks to tell apart: fail them all */
            return 1;
        stacks[i].key = h;
        n_stacks++;
    }
    return stacks[i].failed++ < per_stack;
}

static int must_fail(void)
{
    if (!counting)
        return 0;
    long i = ++alloc_count;
    if (!arm_from || failed_at || i < arm_from || (per_stack && !stack_may_fail()))
        return 0;
    failed_at = i;
    if (trace && __sanitizer_print_stack_trace) {
        fprintf(stderr, "alloc_fail: failing allocation %ld\n", i);
        __sanitizer_print_stack_trace();
    }
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

void *__wrap_malloc(size_t n) { return must_fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t k, size_t n) { return must_fail() ? NULL : __real_calloc(k, n); }
void *__wrap_realloc(void *p, size_t n) { return must_fail() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return must_fail() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return must_fail() ? NULL : __real_strndup(s, n); }

/* ---- runs and what they found --------------------------------------------------------------- */

static char dir[256], template_dir[256], path[300];

struct run {
    const char *phase;
    long index; /* 0: the clean run */
    int problems;
    int completed;
    char sid[40];  /* calls: the run's session */
    char user[24]; /* calls: the run's memory scope */
};
static struct run *current; /* for the watchdog */

static void problem(struct run *r, const char *call, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(struct run *r, const char *call, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "alloc_fail %s run %ld (N=%ld) %s: ", r->phase, r->index, failed_at, call);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    r->problems++;
}

static void watchdog(int sig)
{
    (void)sig;
    char msg[200];
    int n = snprintf(msg, sizeof msg, "alloc_fail %s run %ld (N=%ld): hangs\n", current ? current->phase : "?",
                     current ? current->index : -1L, failed_at);
    if (write(2, msg, (size_t)n) < 0)
        _exit(3);
    abort();
}

/* A call that failed: only the allocation that failed inside it may be the cause, reported as
 * MN_NOMEM with a message. */
static void judge_failure(struct run *r, const char *call, mn_status st, int failed_here)
{
    if (!failed_here)
        problem(r, call, "%s with no allocation failing in it: %s", mn_status_name(st), mn_errmsg());
    else if (st != MN_NOMEM)
        problem(r, call, "an allocation failure reported as %s: %s", mn_status_name(st), mn_errmsg());
    if (!*mn_errmsg())
        problem(r, call, "%s with an empty mn_errmsg()", mn_status_name(st));
}

/* Runs expr (an mn_status); after a failure, judges it and runs expr once more, which must succeed
 * (the application's retry). A second failure ends the run. */
#define CALL(r, name, expr)                                                                                          \
    do {                                                                                                             \
        long before_ = failed_at;                                                                                    \
        mn_status st_ = (expr);                                                                                      \
        if (st_ != MN_OK) {                                                                                          \
            judge_failure(r, name, st_, failed_at && !before_);                                                      \
            st_ = (expr);                                                                                            \
            if (st_ != MN_OK) {                                                                                      \
                problem(r, name, "the retry failed too: %s: %s", mn_status_name(st_), mn_errmsg());                  \
                goto out;                                                                                            \
            }                                                                                                        \
        }                                                                                                            \
    } while (0)

/* ---- the scenarios -------------------------------------------------------------------------- */

/* The conversation: a tool call and its result, then enough turns for the summary strategy to fold
 * (head: messages 1-4, up to the first assistant text; tail: the last 4). */
enum { N_MSGS = 12, N_SINGLE = 4, SOURCE = 7 /* the memory's provenance */ };
static const char TOOL_CALLS[] = "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"lookup\","
                                 "\"arguments\":\"{\\\"place\\\":\\\"harbour\\\"}\"}}]";
static const struct {
    mn_role role;
    const char *content, *tool_calls, *tool_call_id, *metadata;
} conversation[N_MSGS] = {
    {MN_ROLE_USER, "Where is the blue harbour lighthouse?", NULL, NULL, NULL},
    {MN_ROLE_ASSISTANT, NULL, TOOL_CALLS, NULL, NULL},
    {MN_ROLE_TOOL, "The lighthouse stands on the north pier.", NULL, "c1", NULL},
    {MN_ROLE_ASSISTANT, "It stands on the north pier, past the fish market.", NULL, NULL, NULL},
    {MN_ROLE_USER, "And the ferry timetable?", NULL, NULL, "{\"topic\":\"ferry\"}"},
    {MN_ROLE_ASSISTANT, "Ferries leave hourly from the south quay.", NULL, NULL, NULL},
    {MN_ROLE_USER, "Remember that I prefer morning ferries.", NULL, NULL, NULL},
    {MN_ROLE_ASSISTANT, "Noted: morning ferries from the south quay.", NULL, NULL, NULL},
    {MN_ROLE_USER, "Is there a cafe near the quay?", NULL, NULL, NULL},
    {MN_ROLE_ASSISTANT, "Yes, the Harbour Cafe opens at seven.", NULL, NULL, NULL},
    {MN_ROLE_USER, "Book a table at the cafe by the lighthouse.", NULL, NULL, NULL},
    {MN_ROLE_ASSISTANT, "Done: a table for eight at the Harbour Cafe.", NULL, NULL, NULL},
};
static const char MEMORY[] = "The user prefers morning ferries.";
static const char TEMPLATE_SID[] = "0190f0f0-a110-7000-8000-000000000000";

static mn_message_in message_in(int i)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = conversation[i].role;
    m.content = conversation[i].content;
    m.tool_calls = conversation[i].tool_calls;
    m.tool_call_id = conversation[i].tool_call_id;
    m.metadata = conversation[i].metadata;
    return m;
}

static int same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Messages [first, first + count) of the conversation, in order, as they were sent. */
static void check_messages(struct run *r, const char *call, const mn_messages *l, int first)
{
    for (size_t i = 0; i < l->count; i++) {
        const mn_message *m = mn_messages_at(l, i);
        int k = first + (int)i;
        if (k >= N_MSGS || m->seq != k + 1 || m->role != conversation[k].role ||
            !same(m->content, conversation[k].content) || !same(m->tool_calls, conversation[k].tool_calls) ||
            !same(m->tool_call_id, conversation[k].tool_call_id) ||
            !same(m->metadata, conversation[k].metadata ? conversation[k].metadata : "{}")) {
            problem(r, call, "item %zu: seq %lld, content %s, tool_calls %s, metadata %s", i, (long long)m->seq,
                    m->content ? m->content : "(null)", m->tool_calls ? m->tool_calls : "(null)", m->metadata);
            return;
        }
    }
}

static mn_config *config_for(struct run *r)
{
    static const char *const kv[] = {"tokenizer.name", "heuristic", "memory.durability", "normal",
                                     /* the summary strategy folds past 4 messages */
                                     "context.max_history_messages", "4", "summarizer.name", "extractive", NULL};
    mn_config *cfg = NULL;
    CALL(r, "mn_config_new", mn_config_new(&cfg));
    for (const char *const *p = kv; *p; p += 2)
        CALL(r, "mn_config_set", mn_config_set(cfg, p[0], p[1], NULL));
    return cfg;
out:
    mn_config_free(cfg);
    return NULL;
}

/* A handle with nothing failing, or NULL after a problem. */
static mn_db *open_clean(struct run *r)
{
    int was = counting;
    counting = 0;
    mn_config *cfg = config_for(r);
    mn_db *db = NULL;
    if (!cfg || mn_open_path(path, cfg, &db) != MN_OK)
        problem(r, "verify", "cannot open: %s", mn_errmsg());
    mn_config_free(cfg);
    counting = was;
    return db;
}

/* The history of session sid is the whole conversation, once. */
static void check_history(struct run *r, mn_db *db, const char *sid)
{
    mn_messages *list = NULL;
    if (mn_history(db, sid, NULL, &list) != MN_OK || list->count != N_MSGS)
        problem(r, "verify", "history of %s: %zu messages: %s", sid, list ? list->count : 0, mn_errmsg());
    else
        check_messages(r, "verify", list, 0);
    mn_messages_free(list);
}

/* create and open: mn_open_path and mn_close. */
static void scenario_open(struct run *r, mn_db *unused)
{
    (void)unused;
    mn_db *db = NULL;
    mn_config *cfg = config_for(r);
    if (!cfg)
        return;
    CALL(r, "mn_open_path", mn_open_path(path, cfg, &db));
    r->completed = 1;
out:
    mn_close(db);
    mn_config_free(cfg);
}

/* create: the new database works. */
static void verify_create(struct run *r, mn_db *unused)
{
    (void)unused;
    mn_db *db = open_clean(r);
    mn_messages *list = NULL;
    mn_message_in in = message_in(0);
    if (db && (mn_append(db, TEMPLATE_SID, &in, MN_APPEND_CREATE, NULL) != MN_OK ||
               mn_history(db, TEMPLATE_SID, NULL, &list) != MN_OK || list->count != 1))
        problem(r, "verify", "the new database does not work: %s", mn_errmsg());
    mn_messages_free(list);
    mn_close(db);
}

/* open: what the template holds is there. */
static void verify_open(struct run *r, mn_db *unused)
{
    (void)unused;
    mn_db *db = open_clean(r);
    if (db)
        check_history(r, db, TEMPLATE_SID);
    mn_close(db);
}

/* Export output, in a fixed buffer. */
static struct {
    char data[64 * 1024];
    size_t len;
} sink;

static int sink_write(void *user, const char *bytes, size_t len)
{
    (void)user;
    if (len >= sizeof sink.data - sink.len)
        return 1;
    memcpy(sink.data + sink.len, bytes, len);
    sink.len += len;
    sink.data[sink.len] = '\0';
    return 0;
}

static mn_status export_session(mn_db *db, const char *sid)
{
    const char *ids[] = {sid};
    sink.len = 0;
    sink.data[0] = '\0';
    return mn_export(db, ids, 1, sink_write, NULL);
}

/* The context is the clean run's, byte for byte, unless the fold failed for the allocation (the
 * summariser's failure is an outcome: the context falls back to the marker and the report's event
 * says why, docs/context.md). */
static void check_context(struct run *r, const char *strategy, const mn_context *ctx)
{
    static char clean[2][8192];
    char *want = clean[strcmp(strategy, "window") != 0];
    if (r->index == 0 && !strstr(ctx->report, *strategy == 'w' ? "\"injected\":[{" : "\"outcome\":\"ok\""))
        problem(r, "mn_context_build", "%s: no retrieval or no fold in the clean run: %s", strategy, ctx->report);
    if (r->index == 0)
        snprintf(want, sizeof clean[0], "%s", ctx->rendered);
    else if (strcmp(want, ctx->rendered) != 0 &&
             !(strstr(ctx->report, "\"fold\":{\"mode\":\"sync\",\"outcome\":\"failed\"") &&
               strstr(ctx->report, "out of memory\"")))
        problem(r, "mn_context_build", "%s: not the clean run's context: %s (report %s)", strategy, ctx->rendered,
                ctx->report);
}

/* calls: one conversation in a new session, on the phase's handle. */
static void scenario_calls(struct run *r, mn_db *db)
{
    const char *sid = r->sid;
    mn_session *s = NULL;
    mn_messages *list = NULL;
    mn_context *ctx = NULL;
    mn_search_hits *hits = NULL;
    mn_memory *mem = NULL;
    mn_memories *mems = NULL;
    char *json = NULL;
    int64_t source = 0;
    char mem_id[64] = "", meta[64];

    snprintf(meta, sizeof meta, "{\"user_id\":\"%s\"}", r->user);
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.id = sid;
    so.metadata = meta;
    CALL(r, "mn_session_create", mn_session_create(db, &so, &s));
    if (!same(s->id, sid) || !same(s->metadata, meta))
        problem(r, "mn_session_create", "stored %s %s", s->id, s->metadata);
    mn_session_free(s);

    /* The stored message is asked for: a record made after the commit could fail and answer
     * MN_NOMEM for a stored message, which the retry would store twice (the history below). */
    for (int i = 0; i < N_SINGLE; i++) {
        mn_message_in in = message_in(i);
        mn_message *m = NULL;
        CALL(r, "mn_append", mn_append(db, sid, &in, 0, &m));
        if (m->seq != i + 1 || !same(m->content, in.content))
            problem(r, "mn_append", "stored #%lld %s", (long long)m->seq, m->content ? m->content : "(null)");
        mn_message_free(m);
    }
    mn_message_in batch[N_MSGS - N_SINGLE];
    for (int i = N_SINGLE; i < N_MSGS; i++)
        batch[i - N_SINGLE] = message_in(i);
    CALL(r, "mn_append_batch", mn_append_batch(db, sid, batch, N_MSGS - N_SINGLE, 0, &list));
    if (list->count != N_MSGS - N_SINGLE)
        problem(r, "mn_append_batch", "%zu messages stored", list->count);
    else
        check_messages(r, "mn_append_batch", list, N_SINGLE);
    mn_messages_free(list);

    CALL(r, "mn_history", mn_history(db, sid, NULL, &list));
    if (list->count != N_MSGS)
        problem(r, "mn_history", "%zu messages", list->count);
    else
        check_messages(r, "mn_history", list, 0);
    source = list->count >= SOURCE ? mn_messages_at(list, SOURCE - 1)->id : 0;
    CALL(r, "mn_messages_to_json", mn_messages_to_json(list, 0, N_MSGS, &json));
    if (!strstr(json, conversation[N_MSGS - 1].content))
        problem(r, "mn_messages_to_json", "the last message is missing: %s", json);
    mn_free(json);
    mn_messages_free(list);

    static const char *const strategies[] = {"window", "summary"};
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        mn_context_opts co = MN_CONTEXT_OPTS_INIT;
        co.strategy = strategies[i];
        co.max_tokens = i == 0 ? 80 : 200; /* the window drops messages: the retrieval runs */
        co.fold = MN_CONTEXT_FOLD_SYNC;
        CALL(r, "mn_context_build", mn_context_build(db, sid, &co, &ctx));
        check_context(r, strategies[i], ctx);
        mn_context_free(ctx);
    }

    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.session_id = sid;
    CALL(r, "mn_search", mn_search(db, "lighthouse", MN_SEARCH_KEYWORD, 10, &f, 0, &hits));
    int64_t seqs = 0; /* 1, 3 and 11 say "lighthouse": a bit each */
    for (size_t i = 0; i < hits->count; i++)
        seqs |= (int64_t)1 << mn_search_hits_at(hits, i)->message.seq;
    if (hits->count != 3 || seqs != ((1 << 1) | (1 << 3) | (1 << 11)))
        problem(r, "mn_search", "%zu hits, not messages 1, 3 and 11", hits->count);
    mn_search_hits_free(hits);

    mn_memory_in mi = MN_MEMORY_IN_INIT;
    mi.text = MEMORY;
    mi.kind = "preference";
    mi.user_id = r->user;
    mi.sources = &source;
    mi.n_sources = 1;
    mi.pinned = 0;
    mi.token_cap = 0;
    CALL(r, "mn_memory_add", mn_memory_add(db, &mi, &mem));
    if (!same(mem->text, MEMORY) || mem->n_sources != 1 || mem->sources[0] != source)
        problem(r, "mn_memory_add", "stored %s", mem->text);
    snprintf(mem_id, sizeof mem_id, "%s", mem->id);
    mn_memory_free(mem);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.user_id = r->user;
    CALL(r, "mn_memory_search", mn_memory_search(db, "ferries", MN_SEARCH_KEYWORD, &q, &mems));
    if (mems->count != 1 || !same(mn_memories_at(mems, 0)->id, mem_id))
        problem(r, "mn_memory_search", "%zu memories, not %s", mems->count, mem_id);
    mn_memories_free(mems);

    CALL(r, "mn_export", export_session(db, sid));
    for (int i = 0; i < N_MSGS; i++)
        if (conversation[i].content && !strstr(sink.data, conversation[i].content))
            problem(r, "mn_export", "message %d is missing", i + 1);
    if (!strstr(sink.data, "\\\"harbour\\\""))
        problem(r, "mn_export", "the tool call is missing: %s", sink.data);
    r->completed = 1;
out:;
}

/* calls: another handle sees the conversation once, and the one memory. */
static void verify_calls(struct run *r, mn_db *check)
{
    check_history(r, check, r->sid);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.user_id = r->user;
    mn_memories *mems = NULL;
    if (mn_memory_list(check, &q, &mems) != MN_OK || mems->count != 1 || !same(mn_memories_at(mems, 0)->text, MEMORY))
        problem(r, "verify", "%zu memories of %s: %s", mems ? mems->count : 0, r->user, mn_errmsg());
    mn_memories_free(mems);
}

/* ---- the sweep ------------------------------------------------------------------------------ */

struct phase {
    const char *name;
    void (*scenario)(struct run *, mn_db *);
    void (*verify)(struct run *, mn_db *);
    int handles; /* calls: a handle for the scenario and one to check with, open for the phase */
    const char *from; /* each run starts from a copy of this directory's files (NULL: empty) */
};

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    static char buf[64 * 1024];
    size_t n;
    assert_non_null(in);
    assert_non_null(out);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    assert_int_equal(fclose(out), 0);
}

/* Empties the run directory; with `from`, copies that directory's files into it. */
static void reset_dir(const char *from)
{
    char p[600], q[600];
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    if (!from)
        return;
    assert_non_null(d = opendir(from));
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", from, e->d_name);
            snprintf(q, sizeof q, "%s/%s", dir, e->d_name);
            copy_file(p, q);
        }
    closedir(d);
}

/* One run: allocation `from` or a later one fails (0: none). Returns the one that failed. */
static long run_once(const struct phase *ph, struct run *r, long from, mn_db *db, mn_db *check)
{
    if (!ph->handles)
        reset_dir(ph->from);
    current = r;
    alarm(60);
    alloc_count = 0;
    failed_at = 0;
    arm_from = from;
    counting = 1;
    ph->scenario(r, db);
    counting = 0;
    if (r->completed)
        ph->verify(r, check);
    alarm(0);
    return failed_at;
}

/* Runs the phase until a run has nothing left to fail; returns the runs with problems. */
static int sweep_phase(const struct phase *ph)
{
    static struct run runs[20000];
    mn_db *db = NULL, *check = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long n_runs = 0, clean = 0, from = 0;
    int bad = 0;
    memset(stacks, 0, sizeof stacks); /* a phase fails its own stacks: the same code, another state */
    n_stacks = 0;
    if (ph->handles) {
        struct run setup = {ph->name, 0, 0, 0, "", ""};
        reset_dir(ph->from);
        db = open_clean(&setup);
        check = open_clean(&setup);
        assert_true(db && check);
    }
    for (;; n_runs++) {
        assert_true(n_runs < (long)(sizeof runs / sizeof *runs));
        struct run *r = &runs[n_runs];
        *r = (struct run){ph->name, n_runs, 0, 0, "", ""};
        snprintf(r->sid, sizeof r->sid, "0190f0f0-a110-7000-8000-%012ld", n_runs + 1);
        snprintf(r->user, sizeof r->user, "u%ld", n_runs);
        long failed = run_once(ph, r, from, db, check);
        bad += r->problems != 0;
        if (n_runs == 0) { /* the clean run: the scenario itself must pass */
            assert_int_equal(r->problems, 0);
            clean = alloc_count;
        } else if (!failed) {
            break;
        }
        from = failed + 1;
    }
    if (ph->handles) { /* after the sweep, a new handle sees every whole run */
        mn_close(db);
        mn_close(check);
        struct run end = {ph->name, n_runs, 0, 0, "", ""};
        check = open_clean(&end);
        for (long i = 0; check && i <= n_runs; i++)
            if (runs[i].completed)
                check_history(&end, check, runs[i].sid);
        mn_close(check);
        bad += end.problems != 0;
    }
    if (__lsan_do_recoverable_leak_check && __lsan_do_recoverable_leak_check()) {
        fprintf(stderr, "alloc_fail %s: leaks (the report above)\n", ph->name);
        bad++;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("alloc_fail %s: %ld runs, each failing one allocation (a clean run makes %ld", ph->name, n_runs - 1, clean);
    if (per_stack)
        printf(", from %ld call stacks", n_stacks);
    printf("), %.1f s\n", (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return bad;
}

static void sweep(void **state)
{
    (void)state;
    static const struct phase phases[] = {
        {"create", scenario_open, verify_create, 0, NULL},
        {"open", scenario_open, verify_open, 0, template_dir},
        {"calls", scenario_calls, verify_calls, 1, template_dir},
    };
    const char *only = getenv("MNEMO_TEST_ALLOC_PHASE");
    int bad = 0;
    for (size_t p = 0; p < sizeof phases / sizeof *phases; p++)
        if (!only || !*only || strcmp(only, phases[p].name) == 0)
            bad += sweep_phase(&phases[p]);
    assert_int_equal(bad, 0);
}

/* The template: a database with the whole conversation in one session. */
static int make_template(void)
{
    struct run r = {"template", 0, 0, 0, "", ""};
    mn_message_in in[N_MSGS];
    for (int i = 0; i < N_MSGS; i++)
        in[i] = message_in(i);
    mn_db *db = open_clean(&r);
    if (!db || mn_append_batch(db, TEMPLATE_SID, in, N_MSGS, MN_APPEND_CREATE, NULL) != MN_OK)
        return -1;
    mn_close(db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cp '%s'/* '%s'/", dir, template_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int setup(void **state)
{
    (void)state;
    setvbuf(stdout, NULL, _IOLBF, 0); /* each phase's line, even when a later run crashes */
    setenv("MNEMO_TEST_NOW_MS", "1800000000000", 1); /* the same allocations in every run */
    const char *all = getenv("MNEMO_TEST_ALLOC_ALL");
    per_stack = all && *all && strcmp(all, "0") != 0 ? 0 : 2;
    trace = getenv("MNEMO_TEST_ALLOC_TRACE") != NULL;
    signal(SIGALRM, watchdog);
    json_set_alloc_funcs(__wrap_malloc, free);
    if (test_tmpdir(template_dir, sizeof template_dir, "alloc-fail-template") != 0 ||
        test_tmpdir(dir, sizeof dir, "alloc-fail") != 0)
        return -1;
    snprintf(path, sizeof path, "%s/a.db", dir);
    return make_template();
}

static int teardown(void **state)
{
    (void)state;
    test_rmdir(dir);
    test_rmdir(template_dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(sweep)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
