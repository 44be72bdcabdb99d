/*
 * test_summarize_quality.c — what the extractive summary is worth (issue 38): facts stated once
 * outlive tool-heavy filler; the goal is the user's first real request; repeated words lower an
 * item's worth; questions, successes and fixes land in the right sections; same input, same
 * bytes. The conversations reproduce reports from use (the migrate_v3.c session and another).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summarize/summarize.h"
#include "token/token.h"

static mn_tokenizer *tk;

static int setup(void **state)
{
    (void)state;
    return mn__token_open("heuristic", NULL, &tk) == MN_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
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

#define U(text) msg(MN_ROLE_USER, text, NULL, NULL, NULL)
#define A(text) msg(MN_ROLE_ASSISTANT, text, NULL, NULL, NULL)
#define CALL(id, name, args)                                                                                           \
    msg(MN_ROLE_ASSISTANT, NULL,                                                                                       \
        "[{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":\"" args "\"}}]", \
        NULL, NULL)
#define TOOL(id, name, text) msg(MN_ROLE_TOOL, text, NULL, id, name)

/* The extractive summary of msgs (staged as in use: a 12000-token input budget), capped. */
static char *extract(const char *existing, const mn_message *msgs, size_t n, int64_t cap)
{
    mn_summarizer_cfg c;
    memset(&c, 0, sizeof c);
    c.name = "extractive";
    c.input_budget = 12000;
    mn_summarizer *s = NULL;
    assert_int_equal(mn__summarizer_open(&c, &s), MN_OK);
    mn_sum_input in = {existing, msgs, n, cap, tk, 0, NULL};
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

/* The section of a summary that holds `needle` ("Goal" for the goal line), or "(absent)". */
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

static void expect_section(const char *summary, const char *needle, const char *section)
{
    char sec[64];
    if (strcmp(section_of(summary, needle, sec, sizeof sec), section) != 0)
        fail_msg("'%s' is under '%s', expected '%s':\n%s", needle, sec, section, summary);
}

static void expect_not_section(const char *summary, const char *needle, const char *section)
{
    char sec[64];
    if (strcmp(section_of(summary, needle, sec, sizeof sec), section) == 0)
        fail_msg("'%s' is under '%s':\n%s", needle, section, summary);
}

/* How many lines of summary contain needle. */
static int lines_with(const char *summary, const char *needle)
{
    int n = 0;
    for (const char *p = summary; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        const char *at = strstr(p, needle);
        n += at && at < p + len;
        p = nl ? nl + 1 : NULL;
    }
    return n;
}

/* ---- the migrate_v3.c session: six early turns, then 80 tool-heavy turns of filler ---------- */

enum { EARLY = 14, FILLER_TURNS = 80, MAX_MSGS = EARLY + 4 * FILLER_TURNS };
static mn_message conv[MAX_MSGS];
static char conv_text[4 * FILLER_TURNS][700];

static unsigned rnd(unsigned *s) { return (*s = *s * 1103515245u + 12345u) >> 8; }

/* Words that repeat across the filler turns, as in the report ("window window shard query"). */
static const char *const filler_words[] = {"window", "shard", "query", "index", "merge", "buffer"};

static void filler_phrase(char *out, size_t cap, unsigned *seed)
{
    size_t o = 0;
    out[0] = '\0';
    for (int w = 0; w < 5 && o < cap; w++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", w ? " " : "", filler_words[rnd(seed) % 6]);
}

/* Fills conv; returns the number of messages. The first two messages are the conversation's
 * head (the summary strategy keeps them out of the fold). */
static size_t make_session(void)
{
    size_t n = 0;
    conv[n++] = U("The v3 schema migration in src/store/migrate_v3.c fails on a fresh database, please fix it.");
    conv[n++] = A("I will reproduce it first.");
    conv[n++] = U("Good.");
    conv[n++] = CALL("c1", "run_shell", "{\\\"command\\\":\\\"make test-migrate\\\"}");
    conv[n++] = TOOL("c1", "run_shell",
                     "src/store/migrate_v3.c:142: error: column \"tenant_id\" does not exist\n"
                     "make: *** [test-migrate] Error 1");
    conv[n++] = A("The ALTER TABLE in src/store/migrate_v3.c ran before tenant_id was created; I moved it after the "
                  "CREATE TABLE and fixed the migration, make test-migrate passes now.");
    conv[n++] = U("Thanks.");
    conv[n++] = A("You're welcome.");
    conv[n++] = U("We keep PostgreSQL 15 as the minimum version.");
    conv[n++] = A("Understood.");
    conv[n++] = U("Next, document that minimum in docs/install.md.");
    conv[n++] = A("I will do that after the index work.");
    conv[n++] = U("ok");
    conv[n++] = A("Starting on the index work.");
    assert_int_equal(n, EARLY);
    unsigned seed = 9;
    for (int t = 0; t < FILLER_TURNS; t++) {
        char phrase[120], p2[120];
        filler_phrase(phrase, sizeof phrase, &seed);
        filler_phrase(p2, sizeof p2, &seed);
        char *u = conv_text[4 * t], *out = conv_text[4 * t + 1], *a = conv_text[4 * t + 2];
        /* a third of them look like rules: "we should always keep …" */
        if (t % 3 == 1)
            snprintf(u, 700, "we should always keep %s (turn %d)", phrase, t + 9);
        else
            snprintf(u, 700, "%s (turn %d)", phrase, t + 9);
        size_t o = 0;
        for (int l = 0; l < 6; l++) {
            filler_phrase(p2, sizeof p2, &seed);
            o += (size_t)snprintf(out + o, 700 - o, "%s %d\n", p2, (int)(rnd(&seed) % 90));
        }
        snprintf(a, 700, "Looked at the %s results for turn %d.", phrase, t + 9);
        conv[n++] = U(u);
        conv[n++] = CALL("s1", "search_index", "{\\\"q\\\":\\\"window shard\\\"}");
        conv[n++] = TOOL("s1", "search_index", out);
        conv[n++] = A(a);
    }
    return n;
}

static void check_buried_facts(const char *sum)
{
    assert_non_null(strstr(sum, "src/store/migrate_v3.c"));
    assert_non_null(strstr(sum, "docs/install.md"));
    expect_section(sum, "We keep PostgreSQL 15 as the minimum version", "Decisions");
    /* the error, with the fix that names it */
    expect_section(sum, "column \"tenant_id\" does not exist", "Errors and fixes");
    if (!strstr(sum, "does not exist → resolved: The ALTER TABLE in src/store/migrate_v3.c"))
        fail_msg("the error lost its fix:\n%s", sum);
    /* the open task; when the fold starts after the first request, it is the first request */
    char sec[64];
    section_of(sum, "document that minimum in docs/install.md", sec, sizeof sec);
    if (strcmp(sec, "Open tasks") != 0 && strcmp(sec, "Goal") != 0)
        fail_msg("the open task is under '%s':\n%s", sec, sum);
    /* filler: no constraint, and no run of near-identical messages listed */
    if (lines_with(sum, "we should always keep") > 0)
        fail_msg("filler kept as a constraint:\n%s", sum);
    for (const char *line = sum; line && *line;) { /* a line with two filler words is filler */
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char one[1024];
        snprintf(one, sizeof one, "%.*s", (int)(len < 1000 ? len : 1000), line);
        int words = 0;
        for (size_t w = 0; w < sizeof filler_words / sizeof *filler_words; w++)
            words += strstr(one, filler_words[w]) != NULL;
        if (words >= 2)
            fail_msg("a filler line: '%s' in\n%s", one, sum);
        line = nl ? nl + 1 : NULL;
    }
    assert_null(strstr(sum, "Goal: Good."));
    assert_null(strstr(sum, "You're welcome"));
}

/* The whole session folded at the default cap: the goal is the first request, verbatim. */
static void buried_facts_survive_filler(void **state)
{
    (void)state;
    size_t n = make_session();
    char *sum = extract(NULL, conv, n, 500);
    static const char goal[] =
        "Goal: The v3 schema migration in src/store/migrate_v3.c fails on a fresh database, please fix it.\n";
    assert_true(strncmp(sum, goal, strlen(goal)) == 0);
    check_buried_facts(sum);
    char *again = extract(NULL, conv, n, 500);
    assert_string_equal(sum, again); /* same input, same bytes */
    free(again);
    free(sum);
}

/* As the summary strategy folds it: the head (first request and reply) stays out of the fold,
 * so the first folded user message is "Good." — not a goal. */
static void goal_is_not_an_acknowledgement(void **state)
{
    (void)state;
    size_t n = make_session();
    char *sum = extract(NULL, conv + 2, n - 2, 500);
    char sec[64];
    assert_string_equal(section_of(sum, "Goal: ", sec, sizeof sec), "Goal");
    assert_null(strstr(sum, "Goal: Good."));
    assert_null(strstr(sum, "Goal: Thanks."));
    assert_null(strstr(sum, "Goal: ok"));
    check_buried_facts(sum);
    /* folded again in small pieces, the summary carried from fold to fold, as in use */
    char *acc = NULL;
    for (size_t i = 2; i < n; i += 20) {
        char *next = extract(acc, conv + i, n - i < 20 ? n - i : 20, 500);
        free(acc);
        acc = next;
    }
    assert_null(strstr(acc, "Goal: Good."));
    check_buried_facts(acc);
    free(acc);
    /* a summary whose goal an older version took from "Good." gets a real one */
    mn_message next[] = {U("Thanks!"), U("Now add an index on tenant_id in src/store/migrate_v4.c.")};
    acc = extract("Goal: Good.\nDecisions:\n- We keep PostgreSQL 15 as the minimum version.", next, 2, 500);
    assert_true(strncmp(acc, "Goal: Now add an index on tenant_id", 35) == 0);
    expect_section(acc, "We keep PostgreSQL 15 as the minimum version", "Decisions");
    free(acc);
    free(sum);
}

/* ---- labels: questions, successes, fixes ---------------------------------------------------- */

/* A question is not a constraint, even with "should" or "always" in it; "CI is green now." is
 * done, not an open task. */
static void questions_and_successes(void **state)
{
    (void)state;
    mn_message m[] = {
        U("Add retries to the upload client in src/net/upload.c."),
        A("I will add them with exponential backoff."),
        U("Should we always retry on HTTP 503?"),
        A("Yes, 503 is transient; retry up to 5 times."),
        U("Do we need to keep the old timeout of 30 s?"),
        U("Never retry a POST without an idempotency key."),
        A("Agreed, only idempotent requests are retried."),
        U("CI is green now."),
        U("The tests pass on my machine too."),
        U("Still need to update the changelog for v2.3.1."),
        U("I fixed the flaky upload test myself, it passes now."),
    };
    char *sum = extract(NULL, m, sizeof m / sizeof *m, 1000);
    expect_not_section(sum, "Should we always retry on HTTP 503", "Constraints");
    expect_not_section(sum, "Do we need to keep the old timeout", "Constraints");
    expect_section(sum, "Never retry a POST without an idempotency key", "Constraints");
    expect_not_section(sum, "CI is green now", "Open tasks");
    expect_not_section(sum, "The tests pass on my machine", "Open tasks");
    expect_section(sum, "CI is green now", "Done");
    expect_section(sum, "update the changelog for v2.3.1", "Open tasks");
    expect_section(sum, "I fixed the flaky upload test myself", "Done");
    expect_section(sum, "retry up to 5 times", "Facts");
    free(sum);
}

/* An error is paired with the fix that names it (same file, identifier or tool), not with the
 * newest unresolved error; an error nobody fixed stays open. */
static void fix_pairs_with_its_error(void **state)
{
    (void)state;
    mn_message m[] = {
        U("Get the nightly job working again."),
        CALL("c1", "run_shell", "{}"),
        TOOL("c1", "run_shell", "src/jobs/nightly.py:88: KeyError: 'retention_days'"),
        CALL("c2", "fetch_url", "{}"),
        TOOL("c2", "fetch_url", "error: timed out after 30 s fetching https://status.example.com"),
        A("I fixed the KeyError in src/jobs/nightly.py by reading retention_days with a default of 30."),
    };
    char *sum = extract(NULL, m, sizeof m / sizeof *m, 1000);
    if (!strstr(sum, "KeyError: 'retention_days' → resolved: I fixed the KeyError"))
        fail_msg("the fix is not with its error:\n%s", sum);
    assert_null(strstr(sum, "status.example.com → resolved"));
    expect_section(sum, "fetch_url: error: timed out", "Errors and fixes");
    free(sum);
    /* a fix that follows its error directly needs no shared word */
    mn_message d[] = {
        U("Build it."),
        CALL("c1", "run_shell", "{}"),
        TOOL("c1", "run_shell", "error E7: undefined reference to parse_row"),
        A("I fixed it by linking libparse3."),
    };
    sum = extract(NULL, d, sizeof d / sizeof *d, 1000);
    assert_non_null(strstr(sum, "undefined reference to parse_row → resolved: I fixed it by linking libparse3"));
    free(sum);
}

/* A goal the user labelled "Goal:" is not labelled twice; "open task:" marks an open task. */
static void goal_label_and_open_task(void **state)
{
    (void)state;
    mn_message m[] = {
        U("Goal: make the nightly build reproducible. It differs every night."),
        A("I updated ci/nightly.yml. Use -ffile-prefix-map=$PWD=. in CFLAGS; open task: check the static library "
          "too."),
    };
    char *sum = extract(NULL, m, sizeof m / sizeof *m, 1000);
    assert_true(strncmp(sum, "Goal: make the nightly build reproducible.\n", 43) == 0);
    assert_int_equal(lines_with(sum, "make the nightly build reproducible"), 1);
    expect_section(sum, "open task: check the static library too", "Open tasks");
    free(sum);
}

/* ---- ranking: repetition lowers worth ------------------------------------------------------- */

/* Thirty user messages made of the same few words, one of them with a constraint word each, do
 * not crowd out a constraint and a version said once; the run of near-identical messages is
 * listed once at most. */
static void repetition_lowers_worth(void **state)
{
    (void)state;
    enum { N = 30 };
    static mn_message m[2 + 2 * N];
    static char text[2 * N][200];
    unsigned seed = 5;
    m[0] = U("Port the exporter to the new API. Never change the CSV column order.");
    m[1] = A("Noted; the exporter targets api-v4 and libcsv 1.8.2.");
    for (int i = 0; i < N; i++) {
        char phrase[120];
        filler_phrase(phrase, sizeof phrase, &seed);
        snprintf(text[2 * i], sizeof text[0], "we must always keep %s %d", phrase, i);
        snprintf(text[2 * i + 1], sizeof text[0], "Sure, %s.", phrase);
        m[2 + 2 * i] = U(text[2 * i]);
        m[3 + 2 * i] = A(text[2 * i + 1]);
    }
    char *sum = extract(NULL, m, 2 + 2 * N, 120);
    expect_section(sum, "Never change the CSV column order", "Constraints");
    assert_non_null(strstr(sum, "libcsv 1.8.2"));
    assert_true(lines_with(sum, "we must always keep") <= 1);
    free(sum);
    /* with room to spare, still not every message of a kind */
    sum = extract(NULL, m, 2 + 2 * N, 4000);
    assert_true(lines_with(sum, "we must always keep") <= 1);
    assert_null(strstr(sum, "Left out"));
    free(sum);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(buried_facts_survive_filler), cmocka_unit_test(goal_is_not_an_acknowledgement),
        cmocka_unit_test(questions_and_successes),     cmocka_unit_test(fix_pairs_with_its_error),
        cmocka_unit_test(repetition_lowers_worth),     cmocka_unit_test(goal_label_and_open_task),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
