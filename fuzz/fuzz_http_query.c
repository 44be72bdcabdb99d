/*
 * fuzz_http_query.c — libFuzzer target for the query parameters of every REST route of
 * `mnemo serve` (app/server/rest.c, ops.c, openai.c): an input "<operation name>?<query>" runs
 * that operation (seeds stay put when the table grows); any other input picks one by its first
 * byte (every route, with its own method) and the rest is the query string, run through
 * srv_handle_rest against a real database file whose session holds a few messages, so that the
 * Conversations API paging (after/order/limit over items) walks real rows. Operations that
 * delete leave the session gone: it is made again before the next input. A request that does
 * not finish (the `after` overflow of issue #13) trips libFuzzer's -timeout. The server parses
 * queries with srv_parse_query itself (http.c: on_uri keeps the query string, answer() counts it
 * with srv_query_count and parses it).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/server.h"

static mn_db *db;
static const char *const SID = "0190a000-0000-7000-8000-00000000f002";

/* The session with five messages (seq 1..5), unless it is there already. */
static void ensure_session(void)
{
    mn_session *s = NULL;
    mn_status st = mn_session_get(db, SID, &s);
    mn_session_free(s);
    if (st == MN_OK)
        return;
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.id = SID;
    if (mn_session_create(db, &o, NULL))
        abort();
    mn_message_in m[5];
    for (int i = 0; i < 5; i++) {
        m[i] = (mn_message_in)MN_MESSAGE_IN_INIT;
        m[i].role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m[i].content = i % 2 ? "an answer" : "a question";
    }
    if (mn_append_batch(db, SID, m, 5, 0, NULL))
        abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char path[] = "/tmp/mnemo-fuzz-query-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        abort();
    close(fd);
    unlink(path);
    mn_config *cfg = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "memory.durability", "normal", "fuzz") ||
        mn_open_path(path, cfg, &db))
        abort();
    mn_config_free(cfg);
    ensure_session();
    return 0;
}

/* op->path with every {param} replaced: the session (or conversation) id, message and item 3. */
static void fill_path(const char *pattern, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = pattern; *p && n + 1 < cap;) {
        if (*p != '{') {
            out[n++] = *p++;
            continue;
        }
        const char *end = strchr(p, '}');
        if (!end)
            break;
        const char *v = strncmp(p, "{conversation_id}", 17) == 0 ? "conv_0190a000-0000-7000-8000-00000000f002"
                        : strncmp(p, "{session_id}", 12) == 0    ? SID
                        : strncmp(p, "{item_id}", 9) == 0        ? "msg_3"
                                                                 : "3";
        n += (size_t)snprintf(out + n, cap - n, "%s", v);
        if (n >= cap)
            n = cap - 1;
        p = end + 1;
    }
    out[n] = '\0';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    ensure_session();
    char *in = strndup((const char *)data, size);
    if (!in)
        return 0;
    char *q = strchr(in, '?');
    const struct srv_op *op = NULL;
    if (q) {
        *q = '\0';
        op = srv_op_find(in);
        *q = '?';
    }
    if (op)
        q++;
    else
        op = &srv_ops[data[0] % srv_nops], q = in + (in[0] ? 1 : 0);
    char path[256];
    fill_path(op->path, path, sizeof path);
    char bad[128];
    json_t *query = srv_parse_query(q, bad, sizeof bad);
    if (!query && !bad[0])
        abort(); /* NULL without a reason: only out of memory, which the fuzzer does not reach */
    if (query && json_object_size(query) > srv_query_count(q))
        abort(); /* the count server.max_query_params is held to would miss parameters */
    struct srv_response resp;
    /* the query only; a body-taking route gets an empty one (the body has its own target) */
    srv_handle_rest(db, (size & 1) ? "fuzzns" : NULL, op->method, path, query, NULL, "", 0, &resp);
    if (resp.status < 200 || resp.status > 599)
        abort();
    srv_response_release(&resp);
    json_decref(query);
    free(in);
    return 0;
}
