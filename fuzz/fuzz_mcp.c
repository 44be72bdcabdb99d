/*
 * fuzz_mcp.c — libFuzzer target for the MCP JSON-RPC handler (app/server/mcp.c): each input is
 * one message given to mcp_handle against a real database file; any reply must be one line of
 * JSON holding a JSON-RPC response.
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
    char *reply = NULL;
    mcp_handle(db, (size & 1) ? "fuzzns" : NULL, (const char *)data, size, &reply);
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
