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
    if (mn__token_open("heuristic", NULL, &tk) != MN_OK)
        return -1;
    return fake_server_start(&server, MNEMO_TEST_DATA "/../fake_llm/fake_llm.js");
}

static int stop_server(void **state)
{
    (void)state;
    fake_server_stop(&server);
    mn__token_free(tk);
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
    assert_int_equal(mn__summarizer_open(&c, &s), MN_OK);
    return s;
}

static void extractive_keeps_what_matters(void **state)
{
    (void)state;
    make_conv();
    mn_summarizer *s = open_sum("extractive", NULL, NULL, 0, 4000);
    mn_sum_input in = {NULL, conv, 8, 300, tk, 0, NULL};
    mn_sum_result r, r2;
    assert_int_equal(mn__summarize(s, &in, &r), MN_OK);
    assert_non_null(strstr(r.text, "tests/test_parse.py"));
    assert_non_null(strstr(r.text, "src/parse.py"));
    assert_non_null(strstr(r.text, "run_tests ×2"));
    assert_non_null(strstr(r.text, "resolved: 42 passed"));
    assert_non_null(strstr(r.text, "Never touch setup.cfg"));
    assert_non_null(strstr(r.text, "whitespace input"));
    assert_true((int64_t)mn__token_count(tk, r.text, strlen(r.text)) <= 300);
    /* deterministic, and the previous summary is carried into the next one */
    assert_int_equal(mn__summarize(s, &in, &r2), MN_OK);
    assert_string_equal(r.text, r2.text);
    mn__sum_result_release(&r2);
    mn_message more = msg(MN_ROLE_USER, "Also update docs/usage.md please.", NULL, NULL, NULL);
    mn_sum_input in2 = {r.text, &more, 1, 300, tk, 0, NULL};
    assert_int_equal(mn__summarize(s, &in2, &r2), MN_OK);
    assert_non_null(strstr(r2.text, "src/parse.py"));
    assert_non_null(strstr(r2.text, "docs/usage.md"));
    mn__sum_result_release(&r2);
    /* a tight cap drops items, never exceeds */
    mn_sum_input tight = {NULL, conv, 8, 30, tk, 0, NULL};
    assert_int_equal(mn__summarize(s, &tight, &r2), MN_OK);
    assert_true((int64_t)mn__token_count(tk, r2.text, strlen(r2.text)) <= 30);
    mn__sum_result_release(&r2);
    mn__sum_result_release(&r);
    mn__summarizer_free(s);
}


/* Summarises msgs with the extractive summariser: cap tokens, optional previous summary and
 * instructions. Caller frees the text. */
static char *extract(const char *existing, const mn_message *msgs, size_t n, int64_t cap, const char *instructions)
{
    mn_summarizer *s = open_sum("extractive", NULL, NULL, 0, 12000);
    mn_sum_input in = {existing, msgs, n, cap, tk, 0, instructions};
    mn_sum_result r;
    assert_int_equal(mn__summarize(s, &in, &r), MN_OK);
    mn__summarizer_free(s);
    assert_true((int64_t)mn__token_count(tk, r.text, strlen(r.text)) <= cap);
    char *text = r.text;
    if (getenv("MNEMO_TEST_SHOW"))
        fprintf(stderr, "---- summary (cap %lld)\n%s\n", (long long)cap, text);
    r.text = NULL;
    mn__sum_result_release(&r);
    return text;
}

/* The section of a summary that holds `needle`: the nearest "Name:" header line above it. */
static const char *section_of(const char *summary, const char *needle, char *out, size_t cap)
{
    const char *at = strstr(summary, needle);
    snprintf(out, cap, "(absent)");
    if (!at)
        return out;
    for (const char *line = at; line >= summary; line--) {
        if (line != summary && line[-1] != '\n')
            continue;
        const char *colon = strchr(line, ':');
        if (line[0] != '-' && colon && colon < at + strlen(needle) && (size_t)(colon - line) < 40) {
            snprintf(out, cap, "%.*s", (int)(colon - line), line);
            return out;
        }
    }
    return out;
}

/* No section drops items on its own: 60 paths named in 60 turns are all kept when the cap allows. */
static void extractive_no_silent_caps(void **state)
{
    (void)state;
    enum { N = 60 };
    static mn_message m[2 * N];
    static char text[2 * N][160];
    for (int i = 0; i < N; i++) {
        snprintf(text[2 * i], sizeof text[0], "Look at src/mod%02d/impl_%02d.c please.", i, i);
        snprintf(text[2 * i + 1], sizeof text[0], "Reviewed it, looks fine.");
        m[2 * i] = msg(MN_ROLE_USER, text[2 * i], NULL, NULL, NULL);
        m[2 * i + 1] = msg(MN_ROLE_ASSISTANT, text[2 * i + 1], NULL, NULL, NULL);
    }
    char *sum = extract(NULL, m, 2 * N, 4000, NULL);
    for (int i = 0; i < N; i++) {
        char path[64];
        snprintf(path, sizeof path, "src/mod%02d/impl_%02d.c", i, i);
        if (!strstr(sum, path))
            fail_msg("%s was dropped:\n%s", path, sum);
    }
    assert_null(strstr(sum, "Left out"));
    free(sum);
}

/* Over the cap: the least specific items go first, oldest first among equals, and the summary
 * says how many went. A path, an id and a constraint from the first turn outlive small talk;
 * chit-chat made of the same words turn after turn is not listed at all. */
static void extractive_cut_keeps_specific(void **state)
{
    (void)state;
    enum { N = 40 };
    static const char *const syl[] = {"ka", "lo", "mi", "ru", "sen", "tav", "vo", "zel"};
    static mn_message m[2 + 2 * N];
    static char text[2 * N][200];
    m[0] = msg(MN_ROLE_USER, "Migrate the schema in src/store/migrate_v3.c to version 3. Never drop the users table.", NULL, NULL, NULL);
    m[1] = msg(MN_ROLE_ASSISTANT, "The ticket is DB-4411 and we will use ALTER TABLE instead of a rebuild.", NULL, NULL, NULL);
    for (int i = 0; i < N; i++) {
        snprintf(text[2 * i], sizeof text[0], "Thanks, that sounds good %d times over.", i);
        /* small talk naming a part of its own each turn (so it is not filler), less specific than
         * the first turn's facts */
        snprintf(text[2 * i + 1], sizeof text[0], "Glad it helps, part %s%s-%d had small things to look at.",
                 syl[i % 8], syl[i / 8], i);
        m[2 + 2 * i] = msg(MN_ROLE_USER, text[2 * i], NULL, NULL, NULL);
        m[3 + 2 * i] = msg(MN_ROLE_ASSISTANT, text[2 * i + 1], NULL, NULL, NULL);
    }
    char *full = extract(NULL, m, 2 + 2 * N, 4000, NULL);
    assert_null(strstr(full, "Left out"));
    assert_null(strstr(full, "sounds good")); /* the same words 40 times: filler */
    assert_non_null(strstr(full, "part kaka-0 had small things"));
    char *sum = extract(NULL, m, 2 + 2 * N, 200, NULL);
    assert_non_null(strstr(sum, "src/store/migrate_v3.c"));
    assert_non_null(strstr(sum, "DB-4411"));
    assert_non_null(strstr(sum, "Never drop the users table"));
    const char *left = strstr(sum, "Left out: ");
    assert_non_null(left);
    long n = strtol(left + 10, NULL, 10);
    assert_true(n > 0);
    /* the newest chit-chat outlives the oldest of the same kind */
    assert_null(strstr(sum, "part kaka-0 had small things"));
    /* anchoring: the next fold keeps the previous items and adds to the count of left-out ones */
    mn_message more[2] = {msg(MN_ROLE_USER, "Also rename docs/schema.md please.", NULL, NULL, NULL),
                          msg(MN_ROLE_ASSISTANT, "Renamed docs/schema.md to docs/schema-v3.md.", NULL, NULL, NULL)};
    char *next = extract(sum, more, 2, 200, NULL);
    assert_non_null(strstr(next, "src/store/migrate_v3.c"));
    assert_non_null(strstr(next, "DB-4411"));
    assert_non_null(strstr(next, "docs/schema-v3.md"));
    left = strstr(next, "Left out: ");
    assert_non_null(left);
    assert_true(strtol(left + 10, NULL, 10) >= n);
    free(next);
    free(sum);
    free(full);
}

/* A question that got an answer is not an open task; a request nobody finished is. */
/* Routine output (replies or listings that differ only in their numbers) goes before a fact
 * stated once, however many paths and numbers the routine names; an assistant's "fixed it by …"
 * stays with the error of the same turns, and a later success of the tool does not replace it. */
static void extractive_templates_and_fixes(void **state)
{
    (void)state;
    enum { N = 30 };
    static mn_message m[6 + N];
    static char text[N][120];
    m[0] = msg(MN_ROLE_USER, "Please run the build check.", NULL, NULL, NULL);
    m[1] = msg(MN_ROLE_ASSISTANT, NULL, CALL("c1", "run_shell", "{}"), NULL, NULL);
    m[2] = msg(MN_ROLE_TOOL, "error E7: undefined reference to parse_row\nstatus: failed", NULL, "c1", "run_shell");
    m[3] = msg(MN_ROLE_ASSISTANT, "I fixed it by linking libparse3, and the check passes now. The limit is 4224 ms.",
               NULL, NULL, NULL);
    m[4] = msg(MN_ROLE_ASSISTANT, NULL, CALL("c2", "run_shell", "{}"), NULL, NULL);
    m[5] = msg(MN_ROLE_TOOL, "build/page0/entry_1.txt ok", NULL, "c2", "run_shell");
    for (int i = 0; i < N; i++) {
        snprintf(text[i], sizeof text[0], "See docs/notes_%d.md, section %d.", i, (i * 7) % 40 + 1);
        m[6 + i] = msg(MN_ROLE_ASSISTANT, text[i], NULL, NULL, NULL);
    }
    char *sum = extract(NULL, m, 6 + N, 150, NULL);
    assert_non_null(strstr(sum, "run_shell: error E7: undefined reference to parse_row → resolved: I fixed it by "
                                "linking libparse3"));
    assert_null(strstr(sum, "resolved: build/page0"));
    assert_non_null(strstr(sum, "The limit is 4224 ms."));
    assert_non_null(strstr(sum, "Left out: "));
    /* a fix in later turns does not attach to an error carried from the existing summary */
    mn_message open_err[3] = {m[1], msg(MN_ROLE_TOOL, "error E9: disk full", NULL, "c1", "run_shell"),
                              msg(MN_ROLE_USER, "Let's look at it tomorrow.", NULL, NULL, NULL)};
    char *first = extract(NULL, open_err, 3, 300, NULL);
    mn_message later = msg(MN_ROLE_ASSISTANT, "I fixed the typo in docs/usage.md.", NULL, NULL, NULL);
    char *next = extract(first, &later, 1, 300, NULL);
    assert_non_null(strstr(next, "run_shell: error E9: disk full"));
    assert_null(strstr(next, "disk full → resolved"));
    free(next);
    free(first);
    free(sum);
}

static void extractive_open_tasks(void **state)
{
    (void)state;
    mn_message m[] = {
        msg(MN_ROLE_USER, "Which port does staging use?", NULL, NULL, NULL),
        msg(MN_ROLE_ASSISTANT, "Staging listens on port 8443.", NULL, NULL, NULL),
        msg(MN_ROLE_USER, "What is the retry limit?", NULL, NULL, NULL),
        msg(MN_ROLE_ASSISTANT, "It is 5 retries with backoff.", NULL, NULL, NULL),
        msg(MN_ROLE_USER, "Write the release notes for v2.4.0.", NULL, NULL, NULL),
        msg(MN_ROLE_ASSISTANT, "Starting on them now.", NULL, NULL, NULL),
        msg(MN_ROLE_USER, "Update the changelog.", NULL, NULL, NULL),
        msg(MN_ROLE_ASSISTANT, "Updated CHANGELOG.md with the new entries.", NULL, NULL, NULL),
        msg(MN_ROLE_USER, "Is the CI green?", NULL, NULL, NULL),
    };
    char *sum = extract(NULL, m, sizeof m / sizeof m[0], 1000, NULL);
    char sec[64];
    assert_string_not_equal(section_of(sum, "Which port does staging use", sec, sizeof sec), "Open tasks");
    assert_string_not_equal(section_of(sum, "What is the retry limit", sec, sizeof sec), "Open tasks");
    assert_string_equal(section_of(sum, "port 8443", sec, sizeof sec), "Facts");
    assert_string_equal(section_of(sum, "Write the release notes for v2.4.0", sec, sizeof sec), "Open tasks");
    assert_string_equal(section_of(sum, "Update the changelog", sec, sizeof sec), "Done");
    assert_string_equal(section_of(sum, "Is the CI green", sec, sizeof sec), "Open tasks"); /* not answered */
    free(sum);
}

/* Commands, versions and identifiers, errors with their fixes, decisions and preferences. */
static void extractive_keeps_commands_and_rules(void **state)
{
    (void)state;
    mn_message m[] = {
        msg(MN_ROLE_USER, "Set up the build. I prefer clang over gcc. Budget is 2 hours.", NULL, NULL, NULL),
        msg(MN_ROLE_ASSISTANT, NULL, "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":\\\"cmake -S . -B build -DCMAKE_C_COMPILER=clang\\\"}\"}}]", NULL, NULL),
        msg(MN_ROLE_TOOL, "CMake Error: libyaml 0.2.5 not found", NULL, "c1", "shell"),
        msg(MN_ROLE_ASSISTANT, "Run `apt-get install libyaml-dev` first; we'll pin libyaml 0.2.5.", NULL, NULL, NULL),
        msg(MN_ROLE_ASSISTANT, NULL, "[{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"shell\",\"arguments\":\"{\\\"command\\\":\\\"cmake -S . -B build\\\"}\"}}]", NULL, NULL),
        msg(MN_ROLE_TOOL, "-- Configuring done", NULL, "c2", "shell"),
    };
    char *sum = extract(NULL, m, sizeof m / sizeof m[0], 1000, NULL);
    char sec[64];
    assert_string_equal(section_of(sum, "I prefer clang over gcc", sec, sizeof sec), "Constraints");
    assert_string_equal(section_of(sum, "Budget is 2 hours", sec, sizeof sec), "Constraints");
    assert_string_equal(section_of(sum, "- cmake -S . -B build -DCMAKE_C_COMPILER=clang\n", sec, sizeof sec), "Commands");
    assert_string_equal(section_of(sum, "- apt-get install libyaml-dev\n", sec, sizeof sec), "Commands");
    assert_non_null(strstr(sum, "shell: CMake Error: libyaml 0.2.5 not found → resolved: -- Configuring done"));
    free(sum);
}

/* Instructions rank items: the matching ones are listed first and cut last. */
static void extractive_instructions_rank(void **state)
{
    (void)state;
    enum { N = 30 };
    static mn_message m[2 * N];
    static char text[2 * N][200];
    for (int i = 0; i < N; i++) {
        /* the billing decision names no path: unfocused, the build scripts outrank it */
        snprintf(text[2 * i], sizeof text[0], "%s", i == 0 ? "Set up the project." : i == 1 ? "We will keep the REST API for billing." : "Fine.");
        /* distinct scripts and flags, not one shape with other numbers (that is filler) */
        snprintf(text[2 * i + 1], sizeof text[0], "We will use build_%c%c.sh with %c%c_flag=%d for step %d.",
                 'a' + i % 26, 'a' + i / 26, 'a' + i % 26, 'a' + i / 26, i, i);
        m[2 * i] = msg(MN_ROLE_USER, text[2 * i], NULL, NULL, NULL);
        m[2 * i + 1] = msg(MN_ROLE_ASSISTANT, text[2 * i + 1], NULL, NULL, NULL);
    }
    char *plain = extract(NULL, m, 2 * N, 120, NULL);
    char *focused = extract(NULL, m, 2 * N, 120, "keep the API decisions about billing");
    assert_non_null(strstr(focused, "REST API for billing"));
    assert_null(strstr(plain, "REST API for billing"));
    const char *dec = strstr(focused, "Decisions:\n- ");
    assert_non_null(dec);
    assert_true(strncmp(dec + strlen("Decisions:\n- "), "We will keep the REST API", 25) == 0); /* listed first */
    assert_string_not_equal(plain, focused);
    free(plain);
    free(focused);
}

static void strip_think_cases(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"<think>plan</think>\n\nSummary text", "Summary text"},
        {"Summary text\n<THINK>unfinished reasoning", "Summary text"},
        {"<Think>a</Think>Keep <think>b</think>this", "Keep this"},
        {"<thinking>long\nreasoning</thinking>\nDone: x", "Done: x"},
        {"reasoning the model leaked</think>\nSummary", "Summary"},
        {"<think>only</think>", ""},
        {"No reasoning at all", "No reasoning at all"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *t = strdup(cases[i][0]);
        mn__summarize_strip_think(t);
        if (strcmp(t, cases[i][1]) != 0)
            fail_msg("case %zu: '%s', want '%s'", i, t, cases[i][1]);
        free(t);
    }
}

static void prompt_file_errors(void **state)
{
    (void)state;
    mn_summarizer_cfg c;
    memset(&c, 0, sizeof c);
    c.name = "llm";
    c.prompt_file = "/nonexistent/mnemo-prompt.txt";
    mn_summarizer *s = NULL;
    assert_int_equal(mn__summarizer_open(&c, &s), MN_IO);
    assert_null(s);
    assert_non_null(strstr(mn_errmsg(), "summarizer.prompt_file"));
    assert_non_null(strstr(mn_errmsg(), "/nonexistent/mnemo-prompt.txt"));
    char path[256];
    snprintf(path, sizeof path, "%s/empty-prompt-%d.txt", getenv("MNEMO_TEST_TMP") ? getenv("MNEMO_TEST_TMP") : "/tmp",
             (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("  \n", f);
    fclose(f);
    c.prompt_file = path;
    assert_int_equal(mn__summarizer_open(&c, &s), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "is empty"));
    remove(path);
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
    assert_int_equal(mn__summarize(s, &in, &r), MN_OK);
    assert_true(r.calls > 5); /* 120 × ~150 tokens cannot go in one 2000-token call */
    assert_true((int64_t)mn__token_count(tk, r.text, strlen(r.text)) <= 200);
    mn__sum_result_release(&r);
    /* a budget too small for the cap is refused, not overrun */
    mn_summarizer *tiny = open_sum("extractive", NULL, NULL, 0, 300);
    assert_int_equal(mn__summarize(tiny, &in, &r), MN_INVALID);
    mn__summarizer_free(tiny);
    mn__summarizer_free(s);
}

static void none_always_fails(void **state)
{
    (void)state;
    make_conv();
    mn_summarizer *s = open_sum("none", NULL, NULL, 0, 4000);
    mn_sum_input in = {NULL, conv, 8, 300, tk, 0, NULL};
    mn_sum_result r;
    assert_int_equal(mn__summarize(s, &in, &r), MN_UNAVAILABLE);
    assert_null(r.text);
    mn__summarizer_free(s);
    mn_summarizer_cfg c;
    memset(&c, 0, sizeof c);
    c.name = "magic";
    assert_int_equal(mn__summarizer_open(&c, &s), MN_INVALID);
}

static void shape_is_seed_004(void **state)
{
    (void)state;
    make_conv();
    struct mn_buf b = MN_BUF_INIT;
    assert_int_equal(mn__summarize_shape(&b, NULL, conv, 8, 2000), MN_OK);
    assert_true(strncmp(b.data, "=== EXISTING_SUMMARY ===\nNONE\n=== END_EXISTING_SUMMARY ===\n\n=== NEW_TURNS ===\nTurn 1:\nUser: Please", 98) == 0);
    assert_non_null(strstr(b.data, "Assistant calls: run_tests({})\nTool run_tests (c1): FAILED"));
    assert_non_null(strstr(b.data, "\nTurn 2:\nUser: Next"));
    assert_non_null(strstr(b.data, "=== END_NEW_TURNS ===\n"));
    mn__buf_release(&b);
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
        mn_status rc = mn__summarize_parse_response(cases[i].protocol, cases[i].body, strlen(cases[i].body), &text, &p, &c);
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
    mn_status rc = mn__summarize(s, &in, r);
    mn__summarizer_free(s);
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
    mn__sum_result_release(&r);
    /* Ollama protocol */
    assert_int_equal(llm_run("ollama", "ok", 60000, &r), MN_OK);
    assert_non_null(strstr(r.text, "Summary ("));
    assert_int_equal(r.prompt_tokens, 111);
    mn__sum_result_release(&r);
    /* a reply cut off at the limit is a failure */
    assert_int_equal(llm_run("openai", "length", 60000, &r), MN_UNAVAILABLE);
    assert_non_null(strstr(mn_errmsg(), "length"));
    assert_int_equal(llm_run("ollama", "length", 60000, &r), MN_UNAVAILABLE);
    /* 429 twice, then success: retried with backoff */
    assert_int_equal(llm_run("openai", "flaky429", 60000, &r), MN_OK);
    assert_int_equal(r.attempts, 3);
    mn__sum_result_release(&r);
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
    assert_true((int64_t)mn__token_count(tk, r.text, strlen(r.text)) <= 200);
    mn__sum_result_release(&r);
    /* no model / no server */
    assert_int_equal(llm_run("openai", "", 60000, &r), MN_UNAVAILABLE);
    char saved[64];
    snprintf(saved, sizeof saved, "%s", server.base_url);
    snprintf(server.base_url, sizeof server.base_url, "http://127.0.0.1:1");
    assert_int_equal(llm_run("openai", "ok", 2000, &r), MN_UNAVAILABLE);
    snprintf(server.base_url, sizeof server.base_url, "%s", saved);
}

/* The llm summariser: reasoning blocks never reach the summary; the prompt file replaces the
 * built-in instructions; the compaction's instructions go into the prompt. */
static void llm_think_prompt_instructions(void **state)
{
    (void)state;
    if (!*server.base_url)
        skip();
    mn_sum_result r;
    assert_int_equal(llm_run("openai", "think", 5000, &r), MN_OK);
    assert_null(strstr(r.text, "think"));
    assert_null(strstr(r.text, "I will list files"));
    assert_true(strncmp(r.text, "Summary (", 9) == 0);
    mn__sum_result_release(&r);
    assert_int_equal(llm_run("ollama", "thinkopen", 5000, &r), MN_OK);
    assert_null(strstr(r.text, "THINK"));
    assert_null(strstr(r.text, "still reasoning"));
    mn__sum_result_release(&r);
    assert_int_equal(llm_run("openai", "thinkonly", 5000, &r), MN_UNAVAILABLE);
    assert_non_null(strstr(mn_errmsg(), "reasoning"));

    char path[256];
    snprintf(path, sizeof path, "%s/prompt-%d.txt", getenv("MNEMO_TEST_TMP") ? getenv("MNEMO_TEST_TMP") : "/tmp",
             (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("CUSTOM PROMPT: list every ticket id. 100% literal, %s %n stays text.\n", f);
    fclose(f);
    make_conv();
    mn_summarizer_cfg c;
    memset(&c, 0, sizeof c);
    c.name = "llm";
    c.base_url = server.base_url;
    c.model = "echo";
    c.timeout_ms = 5000;
    c.input_budget = 4000;
    c.prompt_file = path;
    mn_summarizer *s = NULL;
    assert_int_equal(mn__summarizer_open(&c, &s), MN_OK);
    mn_sum_input in = {NULL, conv, 8, 400, tk, 0, "keep the API decisions"};
    assert_int_equal(mn__summarize(s, &in, &r), MN_OK);
    assert_true(strncmp(r.text, "CUSTOM PROMPT: list every ticket id. 100% literal, %s %n stays text.", 68) == 0);
    assert_null(strstr(r.text, "Update the conversation summary")); /* the built-in one is replaced */
    assert_non_null(strstr(r.text, "keep the API decisions"));
    mn__sum_result_release(&r);
    mn__summarizer_free(s);
    /* the built-in prompt, with instructions */
    c.prompt_file = NULL;
    assert_int_equal(mn__summarizer_open(&c, &s), MN_OK);
    assert_int_equal(mn__summarize(s, &in, &r), MN_OK);
    assert_true(strncmp(r.text, "Update the conversation summary", 31) == 0);
    assert_non_null(strstr(r.text, "keep the API decisions"));
    mn__sum_result_release(&r);
    mn__summarizer_free(s);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(extractive_keeps_what_matters), cmocka_unit_test(staged_under_small_budget),
        cmocka_unit_test(none_always_fails),            cmocka_unit_test(shape_is_seed_004),
        cmocka_unit_test(parse_responses),              cmocka_unit_test(llm_against_fake_server),
        cmocka_unit_test(extractive_no_silent_caps),    cmocka_unit_test(extractive_cut_keeps_specific),
        cmocka_unit_test(extractive_templates_and_fixes), cmocka_unit_test(extractive_open_tasks),        cmocka_unit_test(extractive_keeps_commands_and_rules),
        cmocka_unit_test(extractive_instructions_rank), cmocka_unit_test(strip_think_cases),
        cmocka_unit_test(prompt_file_errors),           cmocka_unit_test(llm_think_prompt_instructions),
    };
    return cmocka_run_group_tests(tests, start_server, stop_server);
}
