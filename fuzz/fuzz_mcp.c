/*
 * fuzz_mcp.c — libFuzzer target for the MCP JSON-RPC handler (app/server/mcp.c): each input is
 * one message given to mcp_handle (stdio) or mcp_handle_http with one of a few header sets (none,
 * the 2026-07-28 headers, an older revision's; chosen by the input's length) against a real
 * database file; any reply must be one line of JSON holding a JSON-RPC response, and the HTTP
 * status one the transport knows.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/server.h"

static mn_db *db;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char path[] = "/tmp/mnemo-fuzz-mcp-XXXXXX";
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
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct mcp_http sets[] = {
        {NULL, NULL, NULL, 0},
        {"2026-07-28", "tools/call", "history", 0},
        {"2026-07-28", "resources/read", "=?base64?bW5lbW86Ly9zZXNzaW9ucy8=?=", 0},
        {"2025-06-18", NULL, NULL, 0},
    };
    char *reply = NULL;
    const char *ns = (size & 1) ? "fuzzns" : NULL;
    size_t pick = (size >> 1) % 5;
    if (pick == 4) {
        mcp_handle(db, ns, (const char *)data, size, &reply);
    } else {
        struct mcp_http h = sets[pick];
        mcp_handle_http(db, ns, (const char *)data, size, &h, &reply);
        if (h.status != 200 && h.status != 400 && h.status != 404)
            abort();
    }
    if (reply) {
        if (strchr(reply, '\n'))
            abort();
        json_t *v = json_loads(reply, 0, NULL);
        if (!json_is_object(v) || !json_is_string(json_object_get(v, "jsonrpc")))
            abort();
        json_decref(v);
        free(reply);
    }
    return 0;
}
