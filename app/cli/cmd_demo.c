/*
 * cmd_demo.c — `mnemo demo`: a guided tour on the configured database. It creates a session,
 * stores a short conversation with a tool call, and shows the context built under a small
 * token budget, with the report of what was kept and why.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char *const weather_call =
    "[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
    "\"arguments\":\"{\\\"city\\\":\\\"Lisbon\\\"}\"}}]";

struct turn {
    mn_role role;
    const char *content;
    const char *tool_calls;
    const char *tool_call_id;
};

static const struct turn conversation[] = {
    {MN_ROLE_USER, "I'm planning a trip to Lisbon next week. Can you help me pack?", NULL, NULL},
    {MN_ROLE_ASSISTANT,
     "Happily. Lisbon in late November is mild but changeable: plan layers, comfortable shoes for the hills, "
     "and a light rain jacket. How many days will you stay?",
     NULL, NULL},
    {MN_ROLE_USER, "Five days. What will the weather be like on Monday?", NULL, NULL},
    {MN_ROLE_ASSISTANT, NULL, NULL, NULL}, /* the tool call */
    {MN_ROLE_TOOL, "{\"city\":\"Lisbon\",\"monday\":{\"high_c\":17,\"low_c\":11,\"rain_mm\":4}}", NULL, "call_1"},
    {MN_ROLE_ASSISTANT, "Monday looks like 17 °C at best and 11 °C at night, with a little rain: bring the jacket.",
     NULL, NULL},
    {MN_ROLE_USER, "Great, and remind me to book the tram tour.", NULL, NULL},
};

int cmd_demo(const struct cli_global *g, struct cli_args *a)
{
    (void)a;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    printf("mnemo %s — a short tour\n\n", mn_version());
    printf("1. Database: %s (SQLite, WAL, tokenizer %s).\n", mn_db_path(db), mn_db_tokenizer(db));

    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.system_prompt = "You are a concise travel assistant.";
    so.metadata = "{\"source\":\"mnemo demo\"}";
    mn_session *s = NULL;
    mn_status rc = mn_session_create(db, &so, &s);
    if (rc) {
        mn_close(db);
        return cli_fail(rc);
    }
    printf("2. Created session %s with a system prompt.\n", s->id);

    size_t n = sizeof conversation / sizeof conversation[0];
    mn_message_in msgs[sizeof conversation / sizeof conversation[0]];
    for (size_t i = 0; i < n; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = conversation[i].role;
        m.content = conversation[i].content;
        m.tool_call_id = conversation[i].tool_call_id;
        m.tool_calls = i == 3 ? weather_call : NULL;
        m.tool_name = "mnemo-demo";
        msgs[i] = m;
    }
    for (size_t i = 0; i < n && !rc; i++) /* one durable transaction per message, as an agent would */
        rc = mn_append(db, s->id, &msgs[i], 0, NULL);
    if (rc) {
        mn_session_free(s);
        mn_close(db);
        return cli_fail(rc);
    }
    printf("3. Appended %zu messages, one durable transaction each: user, assistant, a get_weather tool call\n"
           "   and its result, and the rest of the exchange.\n\n",
           n);

    mn_context_opts co = MN_CONTEXT_OPTS_INIT;
    co.max_tokens = 120;
    co.format = MN_FORMAT_TEXT;
    mn_context *c = NULL;
    rc = mn_context_build(db, s->id, &co, &c);
    if (!rc) {
        printf("4. The context for the next call with a budget of %lld tokens (strategy window):\n\n", (long long)co.max_tokens);
        printf("---\n%s---\n\n", c->rendered);
        printf("   %lld tokens; %zu messages kept, %zu older ones left out. The tool call and its result\n"
               "   travel together, and the system prompt is always there.\n\n",
               (long long)c->tokens, c->kept, c->dropped);
        printf("5. Why, in the report that `mnemo context build %s --max-tokens %lld --format text --report` prints\n"
               "   (--json: the same as JSON):\n\n",
               s->id, (long long)co.max_tokens);
        cli_print_report_text(stdout, c->report);
        putchar('\n');
    }
    mn_context_free(c);
    if (!rc) {
        char db_flag[4200] = "";
        if (g->db)
            snprintf(db_flag, sizeof db_flag, " --db %s", g->db);
        printf("Try next:\n  mnemo%s history %s\n  mnemo%s context %s --format anthropic\n  mnemo%s session list\n"
               "  mnemo%s export %s\n",
               db_flag, s->id, db_flag, s->id, db_flag, db_flag, s->id);
    }
    mn_session_free(s);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}
