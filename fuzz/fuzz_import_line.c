/*
 * fuzz_import_line.c — libFuzzer target for the export/import line parser (src/memory/jsonl.c):
 * any bytes must parse or fail cleanly; a line that parses re-serialises and parses again to
 * the same record.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory/jsonl.h"
#include "util/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mn_arena a = MN_ARENA_INIT;
    struct mn_jsonl_item it;
    if (mn__jsonl_parse_line((const char *)data, size, 1 << 20, &a, &it) == MN_OK && it.kind != MN_JSONL_HEADER) {
        json_t *v = it.kind == MN_JSONL_SESSION ? mn__jsonl_session(&it.session, 1) : mn__jsonl_message(&it.message, 1);
        char *text = v ? json_dumps(v, JSON_COMPACT) : NULL;
        if (text) {
            struct mn_arena b = MN_ARENA_INIT;
            struct mn_jsonl_item again;
            if (mn__jsonl_parse_line(text, strlen(text), 1 << 20, &b, &again) != MN_OK)
                abort(); /* what we write, we must read */
            mn__arena_release(&b);
        }
        free(text);
        json_decref(v);
    }
    mn__arena_release(&a);
    return 0;
}
