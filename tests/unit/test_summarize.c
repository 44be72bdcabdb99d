/*
 * test_summarize.c — summarisers: the extractive one (what it keeps, the cap, determinism,
 * staged folding under a small budget), the response parser, and the `llm` one against the
 * local fake server tests/fake_llm/fake_llm.js (OpenAI and Ollama protocols, usage, errors,
 * 429 with retries, timeouts, `length`, an unreachable server).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "summarize/summarize.h"
#include "token/token.h"
#include "fake_server.h"

static mn_tokenizer *tk;
static struct fake_server server;

static int start_server(void **state)
{
    (void)state;
    if (mn_token_open("heuristic", NULL, &tk) != MN_OK)
        return -1;
    return fake_server_start(&server, MNEMO_TEST_DATA "/../fake_llm/fake_llm.js");
}

static int stop_server(void **state)
{
    (void)state;
    fake_server_stop(&server);
    mn_token_free(tk);
    return 0;
}

static mn_message msg(mn_role role, const char *content, const char *calls, const char *call_id, const char *name)
{
    mn_message m;
    memset(&m, 0, sizeof m);
    m.role = role;
    m.content = content;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    m.name = name;
    m.metadata = "{}";
    return m;
}

#define CALL(id, name, args) "[{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":\"" args "\"}}]"

static mn_message conv[8];

static void make_conv(void)
{
    conv[0] = msg(MN_ROLE_USER, "Please fix the failing test in tests/test_parse.py. Never touch setup.cfg.", NULL, NULL, NULL);
    conv[1] = msg(MN_ROLE_ASSISTANT, NULL, CALL("c1", "run_tests", "{}"), NULL, NULL);
    conv[2] = msg(MN_ROLE_TOOL, "FAILED test_empty: AssertionError expected [] got None\n1 failed, 41 passed", NULL, "c1", "run_tests");
    conv[3] = msg(MN_ROLE_ASSISTANT, "I will change src/parse.py to return an empty list.", NULL, NULL, NULL);
    conv[4] = msg(MN_ROLE_ASSISTANT, NULL, CALL("c2", "run_tests", "{}"), NULL, NULL);
    conv[5] = msg(MN_ROLE_TOOL, "42 passed in 0.31s", NULL, "c2", "run_tests");
    conv[6] = msg(MN_ROLE_ASSISTANT, "Fixed: all 42 tests pass.", NULL, NULL, NULL);
    conv[7] = msg(MN_ROLE_USER, "Next, add a test for whitespace input (TODO).", NULL, NULL, NULL);
}

static mn_summarizer *open_sum(const char *name, const char *protocol, const char *model, int64_t timeout_ms,
                               int64_t budget)
{
    mn_summarizer_cfg c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.protocol = protocol;
    c.base_url = server.base_url;
    c.model = model;
    c.timeout_ms = timeout_ms;
    c.backoff_ms = 5;
    c.retries = 3;
    c.input_budget = budget;
    mn_summarizer *s = NULL;
    assert_int_equal(mn_summarizer_open(&c, &s), MN_OK);
    return s;
}

static void extractive_keeps_what_matters(void **state)
{
    (void)state;
    make_conv();
    mn_summarizer *s = open_sum("extractive", NULL, NULL, 0, 4000);
    mn_sum_input in = {NULL, conv, 8, 300, tk, 0, NULL};
    mn_sum_result r, r2;
    assert_int_equal(mn_summarize(s, &in, &r), MN_OK);
    assert_non_null(strstr(r.text, "tests/test_parse.py"));
    assert_non_null(strstr(r.text, "src/parse.py"));
    assert_non_null(strstr(r.text, "run_tests ×2"));
    assert_non_null(strstr(r.text, "resolved: 42 passed"));
    assert_non_null(strstr(r.text, "Never touch setup.cfg"));
    assert_non_null(strstr(r.text, "whitespace input"));
    assert_true((int64_t)mn_token_count(tk, r.text, strlen(r.text)) <= 300);
    /* deterministic, and the previous summary is carried into the next one */
    assert_int_equal(mn_summarize(s, &in, &r2), MN_OK);
    assert_string_equal(r.text, r2.text);
    mn_sum_result_release(&r2);
    mn_message more = msg(MN_ROLE_USER, "Also update docs/usage.md please.", NULL, NULL, NULL);
    mn_sum_input in2 = {r.text, &more, 1, 300, tk, 0, NULL};
    assert_int_equal(mn_summarize(s, &in2, &r2), MN_OK);
    assert_non_null(strstr(r2.text, "src/parse.py"));
    assert_non_null(strstr(r2.text, "docs/usage.md"));
    mn_sum_result_release(&r2);
    /* a tight cap drops items, never exceeds */
    mn_sum_input tight = {NULL, conv, 8, 30, tk, 0, NULL};
    assert_int_equal(mn_summarize(s, &tight, &r2), MN_OK);
    assert_true((int64_t)mn_token_count(tk, r2.text, strlen(r2.text)) <= 30);
    mn_sum_result_release(&r2);
    mn_sum_result_release(&r);
    mn_summarizer_free(s);
}

static void staged_under_small_budget(void **state)
{
    (void)state;
    enum { N = 120 };
    static mn_message many[N];
    static char text[N][600];
    for (int i = 0; i < N; i++) {
        snprintf(text[i], sizeof text[i], "%s %d: edit src/file%d.c and check the error in step %d %.*s",
                 i % 2 ? "Done" : "Please", i, i, i, 400, "................................................................................................................................................................................................................................................................................................................................................................................................................");
        many[i] = msg(i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER, text[i], NULL, NULL, NULL);
    }
    mn_summarizer *s = open_sum("extractive", NULL, NULL, 0, 2000);
    mn_sum_input in = {NULL, many, N, 200, tk, 0, NULL};
    mn_sum_result r;
    assert_int_equal(mn_summarize(s, &in, &r), MN_OK);
    assert_true(r.calls > 5); /* 120 × ~150 tokens cannot go in one 2000-token call */
    assert_true((int64_t)mn_token_count(tk, r.text, strlen(r.text)) <= 200);
    mn_sum_result_release(&r);
    /* a budget too small for the cap is refused, not overrun */
    mn_summarizer *tiny = open_sum("extractive", NULL, NULL, 0, 300);
    assert_int_equal(mn_summarize(tiny, &in, &r), MN_INVALID);
    mn_summarizer_free(tiny);
    mn_summarizer_free(s);
}

static void none_always_fails(void **state)
{
    (void)state;
    make_conv();
    mn_summarizer *s = open_sum("none", NULL, NULL, 0, 4000);
    mn_sum_input in = {NULL, conv, 8, 300, tk, 0, NULL};
    mn_sum_result r;
    assert_int_equal(mn_summarize(s, &in, &r), MN_UNAVAILABLE);
    assert_null(r.text);
    mn_summarizer_free(s);
    mn_summarizer_cfg c;
    memset(&c, 0, sizeof c);
    c.name = "magic";
    assert_int_equal(mn_summarizer_open(&c, &s), MN_INVALID);
}

static void shape_is_seed_004(void **state)
{
    (void)state;
    make_conv();
    struct mn_buf b = MN_BUF_INIT;
    assert_int_equal(mn_summarize_shape(&b, NULL, conv, 8, 2000), MN_OK);
    assert_true(strncmp(b.data, "=== EXISTING_SUMMARY ===\nNONE\n=== END_EXISTING_SUMMARY ===\n\n=== NEW_TURNS ===\nTurn 1:\nUser: Please", 98) == 0);
    assert_non_null(strstr(b.data, "Assistant calls: run_tests({})\nTool run_tests (c1): FAILED"));
    assert_non_null(strstr(b.data, "\nTurn 2:\nUser: Next"));
    assert_non_null(strstr(b.data, "=== END_NEW_TURNS ===\n"));
    mn_buf_release(&b);
}

struct parse_case {
    const char *protocol, *body;
    mn_status rc;
    const char *text;
    int64_t p, c;
};

static void parse_responses(void **state)
{
    (void)state;
    static const struct parse_case cases[] = {
        {"openai", "{\"choices\":[{\"message\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1}}", MN_OK, "hi", 5, 1},
        {"openai", "{\"choices\":[{\"message\":{\"content\":\"hi\"},\"finish_reason\":\"length\"}]}", MN_UNAVAILABLE, NULL, 0, 0},
        {"openai", "{\"choices\":[]}", MN_UNAVAILABLE, NULL, 0, 0},
        {"openai", "{\"error\":{\"message\":\"nope\"}}", MN_UNAVAILABLE, NULL, 0, 0},
        {"openai", "{\"choices\":[{\"message\":{\"content\":\"\"}}]}", MN_UNAVAILABLE, NULL, 0, 0},
        {"openai", "not json", MN_INVALID, NULL, 0, 0},
        {"openai", "[1,2]", MN_INVALID, NULL, 0, 0},
        {"ollama", "{\"message\":{\"content\":\"yo\"},\"done_reason\":\"stop\",\"prompt_eval_count\":7,\"eval_count\":2}", MN_OK, "yo", 7, 2},
        {"ollama", "{\"message\":{\"content\":\"yo\"},\"done_reason\":\"length\"}", MN_UNAVAILABLE, NULL, 0, 0},
        {"ollama", "{\"error\":\"model not found\"}", MN_UNAVAILABLE, NULL, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = NULL;
        int64_t p = -1, c = -1;
        mn_status rc = mn_summarize_parse_response(cases[i].protocol, cases[i].body, strlen(cases[i].body), &text, &p, &c);
        if (rc != cases[i].rc)
            fail_msg("case %zu: status %d, want %d", i, rc, cases[i].rc);
        if (cases[i].text) {
            assert_string_equal(text, cases[i].text);
            assert_int_equal(p, cases[i].p);
            assert_int_equal(c, cases[i].c);
        } else
            assert_null(text);
        free(text);
    }
}

static mn_status llm_run(const char *protocol, const char *model, int64_t timeout_ms, mn_sum_result *r)
{
    make_conv();
    mn_summarizer *s = open_sum("llm", protocol, model, timeout_ms, 4000);
    mn_sum_input in = {"Goal: earlier goal", conv, 8, 200, tk, 0, NULL};
    mn_status rc = mn_summarize(s, &in, r);
    mn_summarizer_free(s);
    return rc;
}

static void llm_against_fake_server(void **state)
{
    (void)state;
    if (!*server.base_url)
        skip();
    mn_sum_result r;
    /* OpenAI protocol: the reply, the model, usage tokens; the existing summary went in */
    assert_int_equal(llm_run("openai", "ok", 60000, &r), MN_OK);
    assert_non_null(strstr(r.text, "updated"));
    assert_string_equal(r.model, "ok");
    assert_int_equal(r.prompt_tokens, 111);
    assert_int_equal(r.completion_tokens, 22);
    assert_int_equal(r.attempts, 1);
    mn_sum_result_release(&r);
    /* Ollama protocol */
    assert_int_equal(llm_run("ollama", "ok", 60000, &r), MN_OK);
    assert_non_null(strstr(r.text, "Summary ("));
    assert_int_equal(r.prompt_tokens, 111);
    mn_sum_result_release(&r);
    /* a reply cut off at the limit is a failure */
    assert_int_equal(llm_run("openai", "length", 60000, &r), MN_UNAVAILABLE);
    assert_non_null(strstr(mn_errmsg(), "length"));
    assert_int_equal(llm_run("ollama", "length", 60000, &r), MN_UNAVAILABLE);
    /* 429 twice, then success: retried with backoff */
    assert_int_equal(llm_run("openai", "flaky429", 60000, &r), MN_OK);
    assert_int_equal(r.attempts, 3);
    mn_sum_result_release(&r);
    /* 5xx: retried, then a failure naming the status */
    assert_int_equal(llm_run("openai", "err500", 60000, &r), MN_UNAVAILABLE);
    assert_non_null(strstr(mn_errmsg(), "HTTP 500"));
    assert_non_null(strstr(mn_errmsg(), "4 attempt"));
    /* 4xx: not retried */
    assert_int_equal(llm_run("openai", "bad400", 60000, &r), MN_UNAVAILABLE);
    assert_non_null(strstr(mn_errmsg(), "model not found"));
    assert_non_null(strstr(mn_errmsg(), "1 attempt"));
    assert_int_equal(llm_run("ollama", "errobj", 60000, &r), MN_UNAVAILABLE);
    assert_int_equal(llm_run("openai", "garbage", 60000, &r), MN_INVALID);
    /* timeout */
    assert_int_equal(llm_run("openai", "slow", 300, &r), MN_UNAVAILABLE);
    assert_non_null(strstr(mn_errmsg(), "timed out"));
    /* the cap is enforced on what comes back */
    assert_int_equal(llm_run("openai", "long", 60000, &r), MN_OK);
    assert_true((int64_t)mn_token_count(tk, r.text, strlen(r.text)) <= 200);
    mn_sum_result_release(&r);
    /* no model / no server */
    assert_int_equal(llm_run("openai", "", 60000, &r), MN_UNAVAILABLE);
    char saved[64];
    snprintf(saved, sizeof saved, "%s", server.base_url);
    snprintf(server.base_url, sizeof server.base_url, "http://127.0.0.1:1");
    assert_int_equal(llm_run("openai", "ok", 2000, &r), MN_UNAVAILABLE);
    snprintf(server.base_url, sizeof server.base_url, "%s", saved);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extractive_keeps_what_matters), cmocka_unit_test(staged_under_small_budget),
        cmocka_unit_test(none_always_fails),            cmocka_unit_test(shape_is_seed_004),
        cmocka_unit_test(parse_responses),              cmocka_unit_test(llm_against_fake_server),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
