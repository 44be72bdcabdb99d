/*
 * cmd_serve.c — `mnemo serve` (the HTTP service: REST, MCP at /mcp) and `mnemo mcp` (MCP over
 * standard input and output). Option handling only; the service lives in app/server/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/server.h"

int cmd_serve(const struct cli_global *g, struct cli_args *a)
{
    struct srv_options o = {0};
    long long max_body = (long long)SRV_MAX_BODY_DEFAULT;
    if (cli_local_number(a, "max-body", 1024, 1LL << 30, &max_body) != 0)
        return EXIT_USAGE;
    o.listen = cli_opt(a, "listen") ? cli_opt(a, "listen") : "127.0.0.1:8765";
    o.max_body = (size_t)max_body;
    o.allow_origin = cli_opt(a, "allow-origin");
    o.key_ns = cli_opt(a, "key-namespace");
    o.verbose = cli_flag(a, "verbose");
    const char *env = cli_opt(a, "api-key-env");
    if (env) {
        o.api_key = getenv(env);
        if (!o.api_key || !o.api_key[0])
            return cli_usage_error("--api-key-env %s: that environment variable is not set", env);
    } else if (getenv("MNEMO_API_KEY") && getenv("MNEMO_API_KEY")[0]) {
        o.api_key = getenv("MNEMO_API_KEY");
    }
    if (o.key_ns && !o.key_ns[0]) /* an unset variable: never "every namespace" */
        return cli_usage_error("--key-namespace: empty; name the namespace the key is bound to");
    if (o.key_ns && !o.api_key)
        return cli_usage_error("--key-namespace needs an API key (--api-key-env VAR or MNEMO_API_KEY)");
    const char *lf = cli_opt(a, "log-format");
    if (lf && strcmp(lf, "text") != 0 && strcmp(lf, "json") != 0)
        return cli_usage_error("--log-format %s: must be text or json", lf);
    srv_log_format(lf && strcmp(lf, "json") == 0);
    mn_config *cfg = cli_config(g);
    if (!cfg)
        return 1;
    const char *v = NULL;
    char *keys = NULL;
    if (mn_config_get(cfg, "server.api_keys", &v, NULL) == MN_OK && v && *v)
        keys = strdup(v);
    o.api_keys = keys;
    if (mn_config_get(cfg, "server.gc_interval_seconds", &v, NULL) == MN_OK && v)
        o.gc_interval = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "memory.auto_prune_days", &v, NULL) == MN_OK && v)
        o.prune_days = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.max_inflight", &v, NULL) == MN_OK && v)
        o.max_inflight = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.request_timeout_ms", &v, NULL) == MN_OK && v)
        o.request_timeout_ms = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.idle_timeout_seconds", &v, NULL) == MN_OK && v)
        o.idle_timeout_s = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.header_timeout_ms", &v, NULL) == MN_OK && v)
        o.header_timeout_ms = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.max_connections", &v, NULL) == MN_OK && v)
        o.max_connections = (int)strtol(v, NULL, 10);
    o.max_connections_per_ip = -1;
    if (mn_config_get(cfg, "server.max_connections_per_ip", &v, NULL) == MN_OK && v)
        o.max_connections_per_ip = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.max_query_params", &v, NULL) == MN_OK && v)
        o.max_query_params = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.drain_timeout_seconds", &v, NULL) == MN_OK && v)
        o.drain_timeout_s = (int)strtol(v, NULL, 10);
    char *hosts = NULL, *origins = NULL;
    if (mn_config_get(cfg, "server.allowed_hosts", &v, NULL) == MN_OK && v && *v)
        hosts = strdup(v);
    o.allowed_hosts = hosts;
    /* --allow-origin and server.allowed_origins: both lists apply */
    if (mn_config_get(cfg, "server.allowed_origins", &v, NULL) == MN_OK && v && *v) {
        const char *flag = o.allow_origin;
        size_t n = strlen(v) + (flag ? strlen(flag) + 1 : 0) + 1;
        if ((origins = malloc(n)))
            snprintf(origins, n, "%s%s%s", v, flag ? "," : "", flag ? flag : "");
        o.allow_origin = origins;
    }
    if (mn_config_get(cfg, "memory.strategy", &v, NULL) == MN_OK && v)
        o.window_default = strcmp(v, "window") == 0;
    if (mn_config_get(cfg, "server.workers", &v, NULL) == MN_OK && v)
        o.workers = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.io_threads", &v, NULL) == MN_OK && v)
        o.io_threads = (int)strtol(v, NULL, 10);
    if (mn_config_get(cfg, "server.committers", &v, NULL) == MN_OK && v)
        o.committers = (int)strtol(v, NULL, 10);
    mn_config_free(cfg);
    mn_db *db = cli_open(g);
    int rc = db ? srv_run_http(db, &o) : 1;
    mn_close(db);
    free(keys);
    free(hosts);
    free(origins);
    return rc;
}

int cmd_mcp(const struct cli_global *g, struct cli_args *a)
{
    (void)a;
    mn_db *db = cli_open(g); /* diagnostics go to stderr: stdout carries protocol messages only */
    if (!db)
        return 1;
    int rc = mcp_stdio(db);
    mn_close(db);
    return rc;
}
