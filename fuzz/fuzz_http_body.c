/*
 * fuzz_http_body.c — libFuzzer target for the REST request core of `mnemo serve`
 * (app/server/rest.c + ops.c): the first byte picks a route, the rest is the JSON body (and,
 * for GET routes, the query string), run through srv_handle_rest against a real database file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/server.h"

static mn_db *db;
static const char *const SID = "0190a000-0000-7000-8000-00000000f001";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char path[] = "/tmp/mnemo-fuzz-http-XXXXXX";
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
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.id = SID;
    if (mn_session_create(db, &o, NULL))
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const routes[][2] = {
        {"POST", "/v1/sessions"},       {"GET", "/v1/sessions"},          {"POST", "/v1/sessions/%s/messages"},
        {"GET", "/v1/sessions/%s/messages"}, {"POST", "/v1/sessions/%s/context"}, {"POST", "/v1/sessions/%s/state"},
        {"POST", "/v1/sessions/%s/fork"}, {"GET", "/v1/sessions/%s"},     {"POST", "/v1/import"},
        {"GET", "/v1/resume"},          {"GET", "/v1/export"},            {"PUT", "/v1/x/%s"},
    };
    if (size < 1)
        return 0;
    const char *const *r = routes[data[0] % (sizeof routes / sizeof routes[0])];
    char path[128];
    snprintf(path, sizeof path, r[1], SID);
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    json_t *query = NULL;
    if (strcmp(r[0], "GET") == 0) { /* the body bytes as a query string */
        char *q = strndup(body, len);
        query = srv_parse_query(q, NULL, 0); /* NULL (not UTF-8): the body alone */
        free(q);
    }
    struct srv_response resp;
    srv_handle_rest(db, (data[0] & 0x80) ? "fuzzns" : NULL, r[0], path, query, NULL, body, len, &resp);
    if (resp.status < 200 || resp.status > 599)
        abort();
    srv_response_release(&resp);
    json_decref(query);
    return 0;
}
