/*
 * test_render.c — `--format anthropic` produces only requests the Messages API accepts, rule by
 * rule (src/context/render.c lists them): system apart, alternating roles, a user turn first, no
 * empty content, each tool_use answered by tool_results first in the next user turn, no
 * trailing white space in a final assistant turn. Case by case, then over random windows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "util/json.h"

#define CALL1(id, name) "[{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":\"{}\"}}]"
#define CALL2(a, b)                                                                                                  \
    "[{\"id\":\"" a "\",\"type\":\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{}\"}},"                  \
    "{\"id\":\"" b "\",\"type\":\"function\",\"function\":{\"name\":\"cat\",\"arguments\":\"{\\\"f\\\":1}\"}}]"

static mn_message M(mn_role role, const char *content, const char *calls, const char *call_id)
{
    mn_message m;
    memset(&m, 0, sizeof m);
    m.role = role;
    m.content = content;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    m.metadata = "{}";
    return m;
}

/* Renders msgs in the anthropic format; returns the parsed object (caller decrefs). */
static json_t *render(const char *system, mn_message *msgs, size_t n)
{
    struct mn_window w;
    memset(&w, 0, sizeof w);
    w.items = msgs;
    w.count = n;
    w.system_prompt = system;
    w.max_tokens = 100000;
    w.total_messages = (int64_t)n;
    char *rendered = NULL, *report = NULL;
    assert_int_equal(mn__context_render(&w, "window", "heuristic", MN_FORMAT_ANTHROPIC, &rendered, &report), MN_OK);
    json_t *v = json_loads(rendered, 0, NULL);
    assert_non_null(v);
    free(rendered);
    free(report);
    return v;
}

static const char *str(json_t *v) { return json_string_value(v) ? json_string_value(v) : ""; }

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (!strchr(" \t\r\n\f\v", *s))
            return 0;
    return 1;
}

/* Every documented rule; fails with the rule's number and the request. */
static void check_rules(json_t *req)
{
    char *dump = json_dumps(req, JSON_COMPACT);
    json_t *sys = json_object_get(req, "system");
    if (sys && (!json_is_string(sys) || is_blank(str(sys))))
        fail_msg("rule 1 (system a non-empty string or absent): %s", dump);
    const char *k;
    json_t *v;
    json_object_foreach(req, k, v)
    {
        if (strcmp(k, "system") != 0 && strcmp(k, "messages") != 0)
            fail_msg("unexpected member %s: %s", k, dump);
    }
    json_t *msgs = json_object_get(req, "messages");
    size_t n = json_array_size(msgs);
    for (size_t i = 0; i < n; i++) {
        json_t *m = json_array_get(msgs, i), *blocks = json_object_get(m, "content");
        const char *role = str(json_object_get(m, "role"));
        if (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)
            fail_msg("role %s: %s", role, dump);
        if (i == 0 && strcmp(role, "user") != 0)
            fail_msg("rule 3 (first turn is user): %s", dump);
        if (i > 0 && strcmp(role, str(json_object_get(json_array_get(msgs, i - 1), "role"))) == 0)
            fail_msg("rule 2 (alternating roles) at %zu: %s", i, dump);
        if (!json_is_array(blocks) || json_array_size(blocks) == 0)
            fail_msg("rule 4 (no empty content) at %zu: %s", i, dump);
        int seen_other = 0;
        size_t j;
        json_t *b;
        json_array_foreach(blocks, j, b)
        {
            const char *type = str(json_object_get(b, "type"));
            if (strcmp(type, "text") == 0 && is_blank(str(json_object_get(b, "text"))))
                fail_msg("rule 4 (no blank text block) at %zu: %s", i, dump);
            if (strcmp(type, "tool_result") == 0) {
                if (strcmp(role, "user") != 0 || seen_other)
                    fail_msg("rule 5 (tool_results first, in a user turn) at %zu: %s", i, dump);
                json_t *prev = json_object_get(json_array_get(msgs, i - 1), "content");
                int found = 0;
                size_t q;
                json_t *u;
                json_array_foreach(prev, q, u)
                {
                    found |= strcmp(str(json_object_get(u, "type")), "tool_use") == 0 &&
                             strcmp(str(json_object_get(u, "id")), str(json_object_get(b, "tool_use_id"))) == 0;
                }
                if (i == 0 || !found)
                    fail_msg("rule 5 (tool_result answers the turn before) at %zu: %s", i, dump);
                json_t *content = json_object_get(b, "content");
                if (content && (!json_is_string(content) || is_blank(str(content))))
                    fail_msg("rule 4 (tool_result content non-empty or absent) at %zu: %s", i, dump);
            } else
                seen_other = 1;
            if (strcmp(type, "tool_use") == 0) {
                if (strcmp(role, "assistant") != 0 || !json_is_object(json_object_get(b, "input")))
                    fail_msg("tool_use in an assistant turn with an object input at %zu: %s", i, dump);
                json_t *next = json_object_get(json_array_get(msgs, i + 1), "content");
                int found = 0;
                size_t q;
                json_t *r;
                json_array_foreach(next, q, r)
                {
                    found |= strcmp(str(json_object_get(r, "type")), "tool_result") == 0 &&
                             strcmp(str(json_object_get(r, "tool_use_id")), str(json_object_get(b, "id"))) == 0;
                }
                if (!found)
                    fail_msg("rule 5 (tool_use answered in the next turn) at %zu: %s", i, dump);
            }
        }
        if (i + 1 == n && strcmp(role, "assistant") == 0) {
            json_t *last = json_array_get(blocks, json_array_size(blocks) - 1);
            const char *t = str(json_object_get(last, "text"));
            if (*t && strchr(" \t\r\n", t[strlen(t) - 1]))
                fail_msg("rule 6 (final assistant turn without trailing white space): %s", dump);
        }
    }
    free(dump);
}

/* The compact JSON of req["messages"], for exact expectations. */
static char *messages_of(json_t *req) { return json_dumps(json_object_get(req, "messages"), JSON_COMPACT); }

static void expect(const char *system, mn_message *msgs, size_t n, const char *want_messages, const char *want_system)
{
    json_t *req = render(system, msgs, n);
    check_rules(req);
    char *got = messages_of(req);
    if (strcmp(got, want_messages) != 0)
        fail_msg("messages\n got: %s\nwant: %s", got, want_messages);
    if (want_system)
        assert_string_equal(str(json_object_get(req, "system")), want_system);
    else
        assert_null(json_object_get(req, "system"));
    free(got);
    json_decref(req);
}

static void empty_assistant_content(void **state)
{
    (void)state;
    mn_message m[] = {M(MN_ROLE_USER, "hi", NULL, NULL), M(MN_ROLE_ASSISTANT, "", NULL, NULL),
                      M(MN_ROLE_ASSISTANT, NULL, NULL, NULL), M(MN_ROLE_USER, "still there?", NULL, NULL)};
    expect("sys", m, 4, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"},{\"type\":\"text\",\"text\":\"still there?\"}]}]", "sys");
}

static void blank_text_and_system(void **state)
{
    (void)state;
    mn_message m[] = {M(MN_ROLE_SYSTEM, "  \n", NULL, NULL), M(MN_ROLE_USER, " \t", NULL, NULL),
                      M(MN_ROLE_USER, "question", NULL, NULL), M(MN_ROLE_SYSTEM, "rule two", NULL, NULL)};
    expect(NULL, m, 4, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"question\"}]}]", "rule two");
    mn_message only[] = {M(MN_ROLE_USER, "q", NULL, NULL)};
    expect(NULL, only, 1, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"q\"}]}]", NULL);
    expect("", only, 1, "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"q\"}]}]", NULL);
}

static void first_turn_is_user(void **state)
{
    (void)state;
    mn_message m[] = {M(MN_ROLE_ASSISTANT, "Welcome back.", NULL, NULL), M(MN_ROLE_USER, "thanks", NULL, NULL)};
    expect("s", m, 2,
           "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"(continuing an earlier conversation)\"}]},"
           "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Welcome back.\"}]},"
           "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"thanks\"}]}]",
           "s");
}

static void tool_results_first_in_next_user_turn(void **state)
{
    (void)state;
    /* two calls answered in reverse order, then the user's next question */
    mn_message m[] = {M(MN_ROLE_USER, "look", NULL, NULL), M(MN_ROLE_ASSISTANT, "Looking.", CALL2("a", "b"), NULL),
                      M(MN_ROLE_TOOL, "B out", NULL, "b"), M(MN_ROLE_TOOL, "", NULL, "a"),
                      M(MN_ROLE_USER, "and?", NULL, NULL)};
    expect("s", m, 5,
           "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"look\"}]},"
           "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Looking.\"},"
           "{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"ls\",\"input\":{}},"
           "{\"type\":\"tool_use\",\"id\":\"b\",\"name\":\"cat\",\"input\":{\"f\":1}}]},"
           "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"b\",\"content\":\"B out\"},"
           "{\"type\":\"tool_result\",\"tool_use_id\":\"a\"},{\"type\":\"text\",\"text\":\"and?\"}]}]",
           "s");
    /* a user message stored between the call and its result: the result still goes first */
    mn_message w[] = {M(MN_ROLE_USER, "go", NULL, NULL), M(MN_ROLE_ASSISTANT, NULL, CALL1("c", "ls"), NULL),
                      M(MN_ROLE_USER, "wait", NULL, NULL), M(MN_ROLE_TOOL, "out", NULL, "c")};
    expect("s", w, 4,
           "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"go\"}]},"
           "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"c\",\"name\":\"ls\",\"input\":{}}]},"
           "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"c\",\"content\":\"out\"},"
           "{\"type\":\"text\",\"text\":\"wait\"}]}]",
           "s");
}

static void unanswered_and_orphans(void **state)
{
    (void)state;
    /* a call with no result is not sent; its turn had nothing else, so the user turns merge */
    mn_message m[] = {M(MN_ROLE_USER, "one", NULL, NULL), M(MN_ROLE_ASSISTANT, NULL, CALL1("x", "ls"), NULL),
                      M(MN_ROLE_USER, "two", NULL, NULL)};
    expect("s", m, 3,
           "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"text\",\"text\":\"two\"}]}]",
           "s");
    /* a result whose call is not in the window becomes text */
    mn_message o[] = {M(MN_ROLE_TOOL, "late", NULL, "gone"), M(MN_ROLE_USER, "next", NULL, NULL)};
    expect("s", o, 2,
           "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"[result of tool call gone]\\nlate\"},"
           "{\"type\":\"text\",\"text\":\"next\"}]}]",
           "s");
}

static void final_assistant_trimmed(void **state)
{
    (void)state;
    mn_message m[] = {M(MN_ROLE_USER, "q", NULL, NULL), M(MN_ROLE_ASSISTANT, "The answer is \n", NULL, NULL)};
    expect("s", m, 2,
           "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"q\"}]},"
           "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"The answer is\"}]}]",
           "s");
}

/* Random windows over a small alphabet of messages: every rendering keeps every rule. */
static void random_windows(void **state)
{
    (void)state;
    static const char *const texts[] = {"", " ", "hello", "line\n", NULL};
    static const char *const calls[] = {CALL1("c1", "ls"), CALL1("c2", "cat"), CALL2("c3", "c4")};
    static const char *const ids[] = {"c1", "c2", "c3", "c4", "zz"};
    unsigned seed = 12345;
    for (int round = 0; round < 3000; round++) {
        mn_message m[12];
        size_t n = 1 + (seed = seed * 1103515245u + 12345u) % 12;
        for (size_t i = 0; i < n; i++) {
            unsigned r = (seed = seed * 1103515245u + 12345u) >> 8;
            const char *t = texts[r % 5];
            switch ((r >> 4) % 5) {
            case 0:
                m[i] = M(MN_ROLE_USER, t, NULL, NULL);
                break;
            case 1:
                m[i] = M(MN_ROLE_ASSISTANT, t, NULL, NULL);
                break;
            case 2:
                m[i] = M(MN_ROLE_ASSISTANT, t, calls[(r >> 8) % 3], NULL);
                break;
            case 3:
                m[i] = M(MN_ROLE_TOOL, t, NULL, ids[(r >> 8) % 5]);
                break;
            default:
                m[i] = M(MN_ROLE_SYSTEM, t, NULL, NULL);
            }
        }
        json_t *req = render(round % 2 ? "sys" : NULL, m, n);
        check_rules(req);
        json_decref(req);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_assistant_content),
        cmocka_unit_test(blank_text_and_system),
        cmocka_unit_test(first_turn_is_user),
        cmocka_unit_test(tool_results_first_in_next_user_turn),
        cmocka_unit_test(unanswered_and_orphans),
        cmocka_unit_test(final_assistant_trimmed),
        cmocka_unit_test(random_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
