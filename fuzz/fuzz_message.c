/*
 * fuzz_message.c — libFuzzer target for message validation (src/memory/message.c): the input
 * is split on 0x00 bytes into role, content, tool_calls, tool_call_id, metadata and files;
 * validation must accept or refuse without crashing, and what it accepts is valid JSON/UTF-8.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory/message.h"
#include "token/token.h"
#include "util/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static mn_tokenizer *tk;
    if (!tk && mn__token_open("heuristic", NULL, &tk) != MN_OK)
        abort();
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    const char *field[6] = {NULL};
    char *p = copy;
    for (int i = 0; i < 6 && p <= copy + size; i++) {
        field[i] = p;
        p += strlen(p) + 1;
    }
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.role = field[0] && field[0][0] ? (mn_role)(field[0][0] % 5) : MN_ROLE_USER;
    in.content = field[1];
    in.tool_calls = field[2] && *field[2] ? field[2] : NULL;
    in.tool_call_id = field[3] && *field[3] ? field[3] : NULL;
    in.metadata = field[4] && *field[4] ? field[4] : NULL;
    in.files = field[5] && *field[5] ? field[5] : NULL;
    struct mn_arena a = MN_ARENA_INIT;
    mn_message row;
    if (mn__message_prepare(&in, 1 << 20, tk, 0, &a, "", &row) == MN_OK) {
        if (row.content && !mn__utf8_valid(row.content, strlen(row.content), NULL))
            abort();
        if (mn__message_check_row(&row, 1 << 20, "") != MN_OK)
            abort(); /* a prepared row must pass the import checks too */
    }
    mn__arena_release(&a);
    free(copy);
    return 0;
}
