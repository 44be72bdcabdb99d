/* The C side of bench/python/bench_calls.py: microseconds per mn_append and per
 * mn_context_build on a database, the same work the Python side times.
 * Usage: c_calls DB N_APPEND N_CONTEXT. Prints one JSON object. */
#include <mnemo.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int fail(const char *what)
{
    fprintf(stderr, "c_calls: %s: %s\n", what, mn_errmsg());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return fprintf(stderr, "usage: c_calls DB N_APPEND N_CONTEXT\n"), 2;
    long n_append = strtol(argv[2], NULL, 10), n_context = strtol(argv[3], NULL, 10);
    mn_config *cfg;
    mn_db *db;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "memory.durability", "normal", NULL))
        return fail("config");
    if (mn_open_path(argv[1], cfg, &db))
        return fail("open");
    mn_config_free(cfg);
    mn_session *s;
    if (mn_session_create(db, NULL, &s))
        return fail("session");
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "What did we decide about the parser in src/parse.c yesterday?";
    double t0 = now_us();
    for (long i = 0; i < n_append; i++) {
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        mn_message *out = NULL; /* the stored message comes back, as Python's append returns it */
        if (mn_append(db, s->id, &m, 0, &out))
            return fail("append");
        mn_message_free(out);
    }
    double t1 = now_us();
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.max_tokens = 4096;
    for (long i = 0; i < n_context; i++) {
        mn_context *ctx;
        if (mn_context_build(db, s->id, &o, &ctx))
            return fail("context");
        mn_context_free(ctx);
    }
    double t2 = now_us();
    printf("{\"append_us\":%.2f,\"context_us\":%.2f}\n", (t1 - t0) / (double)n_append, (t2 - t1) / (double)n_context);
    mn_session_free(s);
    mn_close(db);
    return 0;
}
