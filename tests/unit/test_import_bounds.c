/*
 * test_import_bounds.c — the integers an import line may carry (src/memory/jsonl.c for session
 * and message lines, mn__fact_from_json in src/memory/fact.c for memory lines): each bound taken
 * and one past it refused with a message naming the field, so that what an import stores leaves
 * room for the appends and updates after it (docs/format.md).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/fact.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "util/arena.h"

#define SID "0190f0f0-0000-7000-8000-0000000000aa"
#define SESSION(created, extra)                                                                                   \
    "{\"type\":\"session\",\"id\":\"" SID "\",\"created_at\":" created ",\"updated_at\":1,\"expires_at\":0" extra "}"
#define MESSAGE(id, seq)                                                                                           \
    "{\"type\":\"message\",\"session_id\":\"" SID "\",\"id\":" id ",\"seq\":" seq                                  \
    ",\"role\":\"user\",\"content\":\"hi\",\"tokens\":1,\"created_at\":1}"
#define MEMORY(version, cap, from, sources)                                                                       \
    "{\"type\":\"memory\",\"id\":\"" SID "\",\"version\":" version ",\"text\":\"t\",\"kind\":\"fact\","          \
    "\"namespace\":\"default\",\"sources\":" sources ",\"token_cap\":" cap ",\"valid_from\":" from                 \
    ",\"recorded_at\":1,\"change\":\"add\",\"actor\":\"cli\"}"

struct line_case {
    const char *line;
    mn_status want;
    const char *in_message; /* for a refusal: the text its message holds */
};

static const struct line_case line_cases[] = {
    {MESSAGE("1", "2147483647"), MN_OK, NULL},
    {MESSAGE("1", "2147483648"), MN_INVALID, "seq: must be an integer from 1 to 2147483647"},
    {MESSAGE("1", "4294967295"), MN_INVALID, "seq: must be an integer from 1 to 2147483647"},
    {MESSAGE("1", "0"), MN_INVALID, "seq: must be an integer from 1 to 2147483647"},
    {MESSAGE("4503599627370496", "1"), MN_OK, NULL},
    {MESSAGE("4503599627370497", "1"), MN_INVALID, "id: must be an integer from 1 to 4503599627370496"},
    {MESSAGE("9223372036854775807", "1"), MN_INVALID, "id: must be an integer from 1 to 4503599627370496"},
    {SESSION("253402300799999", ",\"cleared_seq\":2147483647,\"cleared_from\":2147483647"), MN_OK, NULL},
    {SESSION("1", ",\"cleared_seq\":2147483648"), MN_INVALID, "cleared_seq: must be an integer from 0 to 2147483647"},
    {SESSION("1", ",\"cleared_from\":2147483648"), MN_INVALID, "cleared_from: must be an integer from 0 to 2147483647"},
    {SESSION("253402300800000", ""), MN_INVALID, "created_at: must be an integer from 0 to 253402300799999"},
};

static void session_and_message_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof line_cases / sizeof line_cases[0]; i++) {
        const struct line_case *c = &line_cases[i];
        struct mn_arena a = MN_ARENA_INIT;
        struct mn_jsonl_item it;
        mn_status rc = mn__jsonl_parse_line(c->line, strlen(c->line), 1 << 20, &a, &it);
        if (rc != c->want || (c->in_message && !strstr(mn_errmsg(), c->in_message)))
            fail_msg("case %zu: %s -> %s (%s)", i, c->line, mn_status_name(rc), mn_errmsg());
        mn__arena_release(&a);
    }
}

/* The bound leaves the room it claims: two billion appends before the store's last seq. */
static void seq_bound_leaves_room(void **state)
{
    (void)state;
    assert_true(MN_MAX_SEQ - MN_EXPORT_MAX_SEQ >= 2000000000LL);
    assert_true(MN_EXPORT_MAX_ID < (1LL << 53));
}

static const struct line_case memory_cases[] = {
    {MEMORY("2147483647", "100000", "253402300799999", "[4503599627370496]"), MN_OK, NULL},
    {MEMORY("2147483648", "0", "1", "[]"), MN_INVALID, "memory: version: must be an integer from 1 to 2147483647"},
    {MEMORY("9223372036854775807", "0", "1", "[]"), MN_INVALID, "memory: version: must be an integer from 1"},
    {MEMORY("0", "0", "1", "[]"), MN_INVALID, "memory: version: must be an integer from 1"},
    {MEMORY("null", "0", "1", "[]"), MN_INVALID, "memory: version: must be an integer from 1"},
    {MEMORY("1", "100001", "1", "[]"), MN_INVALID, "memory: token_cap: must be an integer from 0 to 100000"},
    {MEMORY("1", "0", "253402300800000", "[]"), MN_INVALID, "memory: valid_from: must be an integer from 0 to"},
    {MEMORY("1", "0", "-1", "[]"), MN_INVALID, "memory: valid_from: must be an integer from 0 to"},
    {MEMORY("1", "0", "1", "[4503599627370497]"), MN_INVALID, "memory: sources: message ids must be integers from 1"},
    {MEMORY("1", "0", "1", "[0]"), MN_INVALID, "memory: sources: message ids must be integers from 1"},
};

static void memory_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof memory_cases / sizeof memory_cases[0]; i++) {
        const struct line_case *c = &memory_cases[i];
        json_t *o = json_loads(c->line, 0, NULL);
        assert_non_null(o);
        mn_memory m;
        char *meta = NULL;
        mn_status rc = mn__fact_from_json(o, &m, &meta);
        if (rc != c->want || (c->in_message && !strstr(mn_errmsg(), c->in_message)))
            fail_msg("case %zu: %s -> %s (%s)", i, c->line, mn_status_name(rc), mn_errmsg());
        free(m.sources);
        free(meta);
        json_decref(o);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(session_and_message_lines),
                                       cmocka_unit_test(seq_bound_leaves_room), cmocka_unit_test(memory_lines)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
