/*
 * cmd_message.c — `mnemo append`, `mnemo history` and `mnemo context build` (its report as text:
 * cmd_report.c).
 */
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The options of `add` that describe the one message of its single form. */
static const char *const one_message_opts[] = {"tool-calls", "tool-call-id", "name",  "metadata",        "files",
                                               "model",      "tool-name",    "pinned", "idempotency-key", NULL};

/* `add ID --messages FILE`: a JSON array of message objects (append's `messages`), stored as one
 * transaction through the append operation itself, so each item is checked as REST and MCP check
 * it. Prints the positions (#N), one a line, or with --json the stored messages as a JSON array. */
static int add_batch(const struct cli_global *g, struct cli_args *a)
{
    if (a->npos > 1)
        return cli_usage_error("add: --messages holds the batch; give no ROLE or TEXT with it");
    char typed[64];
    for (int i = 0; one_message_opts[i]; i++)
        if (cli_opt(a, one_message_opts[i]))
            return cli_usage_error("add: --%s is a field of each message in --messages, not an option beside it",
                                   cli_typed(a, one_message_opts[i], typed, sizeof typed));
    const char *path = cli_opt(a, "messages");
    size_t len = 0;
    char *text = cli_read_path(path, &len);
    if (!text)
        return 1;
    json_error_t jerr; /* strict as REST and MCP bodies: a key twice is refused, not the last kept */
    json_t *batch = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    free(text);
    if (!batch) {
        fprintf(stderr, "mnemo: --messages %s: not JSON (line %d column %d: %s)\n", path, jerr.line, jerr.column,
                jerr.text);
        return 1;
    }
    json_t *params = json_pack("{s:s,s:o,s:b}", "session_id", a->pos[0], "messages", batch, "create",
                               cli_flag(a, "create"));
    if (!params) { /* jansson refuses a string that is not UTF-8: the only one here is the id */
        fprintf(stderr, "mnemo: session id: '%s' is not valid UTF-8\n", a->pos[0]);
        return 1;
    }
    mn_db *db = cli_open(g);
    json_t *result = NULL;
    int status = !db || cli_run_op(db, "append", params, &result);
    if (status == 0) {
        json_t *stored = json_object_get(result, "messages"), *m;
        size_t i;
        if (cli_flag(a, "json")) {
            char *out = json_dumps(stored, JSON_COMPACT);
            status = out ? (puts(out), 0) : cli_fail(MN_NOMEM);
            free(out);
        } else
            json_array_foreach(stored, i, m) printf("#%lld\n",
                                                    (long long)json_integer_value(json_object_get(m, "seq")));
    }
    json_decref(result);
    json_decref(params);
    mn_close(db);
    return status;
}

int cmd_add(const struct cli_global *g, struct cli_args *a)
{
    if (cli_opt(a, "messages"))
        return add_batch(g, a);
    if (a->npos < 2)
        return cli_usage_error("usage: mnemo append ID ROLE [TEXT|-] … (or ID --messages FILE)");
    mn_message_in m = MN_MESSAGE_IN_INIT;
    if (mn_role_parse(a->pos[1], &m.role) != MN_OK)
        return cli_usage_error("%s", mn_errmsg());
    char *stdin_text = NULL;
    if (a->npos == 3 && strcmp(a->pos[2], "-") == 0) {
        if (!(stdin_text = cli_read_all(stdin, "standard input", NULL)))
            return 1;
        m.content = stdin_text;
    } else if (a->npos == 3)
        m.content = a->pos[2];
    m.tool_calls = cli_opt(a, "tool-calls");
    m.tool_call_id = cli_opt(a, "tool-call-id");
    m.name = cli_opt(a, "name");
    m.metadata = cli_opt(a, "metadata");
    m.idempotency_key = cli_opt(a, "idempotency-key");
    m.files = cli_opt(a, "files");
    m.model = cli_opt(a, "model");
    m.tool_name = cli_opt(a, "tool-name");
    m.pinned = cli_flag(a, "pinned");
    int status = 1;
    mn_db *db = cli_open(g);
    if (db) {
        mn_message *out = NULL;
        mn_status rc = mn_append(db, a->pos[0], &m, cli_flag(a, "create") ? MN_APPEND_CREATE : 0, &out);
        /* test hook (tests/cli/t0700-crash.sh, docs/config.md): die the way a crash would,
         * after the commit and before anything is reported; inert unless the variable is set */
        if (rc == MN_OK && getenv("MNEMO_TEST_CRASH_AFTER_COMMIT"))
            raise(SIGKILL);
        if (rc)
            status = cli_fail(rc);
        else if (cli_flag(a, "json")) {
            char *json = NULL;
            if ((rc = mn_message_to_json(out, &json)))
                status = cli_fail(rc);
            else {
                puts(json);
                status = 0;
            }
            mn_free(json);
        } else { /* the position, as history shows it: the id is for JSON (--json) */
            printf("#%lld\n", (long long)out->seq);
            status = 0;
        }
        mn_message_free(out);
        mn_close(db);
    }
    free(stdin_text);
    return status;
}

static void print_message(const mn_message *m)
{
    char when[32];
    cli_time(m->created_at, when, sizeof when);
    printf("#%lld %s %s", (long long)m->seq, when, mn_role_name(m->role));
    if (m->name)
        printf(" (%s)", m->name);
    if (m->tool_call_id)
        printf(" [result of %s]", m->tool_call_id);
    if (m->tool_name)
        printf(" via %s", m->tool_name);
    printf(", %lld tokens%s\n", (long long)m->tokens, m->pinned ? ", pinned" : "");
    if (m->content)
        printf("%s\n", m->content);
    if (m->tool_calls)
        printf("tool calls: %s\n", m->tool_calls);
    putchar('\n');
}

int cmd_history(const struct cli_global *g, struct cli_args *a)
{
    long long limit = 0, after = 0;
    if (cli_number(a, "limit", &limit) || cli_number(a, "after", &after))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.limit = (size_t)limit;
    /* the newest N unless paging forward from --after (the API's tail, which defaults to false) */
    o.tail = !cli_opt(a, "after") || cli_flag(a, "tail");
    o.after_seq = after;
    o.all = cli_flag(a, "all");
    mn_messages *l = NULL;
    mn_status rc = mn_history(db, a->pos[0], &o, &l);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json")) {
        fputc('[', stdout);
        for (size_t i = 0; i < l->count && !status; i++) {
            char *json = NULL;
            if ((rc = mn_message_to_json(&l->items[i], &json)))
                status = cli_fail(rc);
            else
                printf("%s%s", i ? "," : "", json);
            mn_free(json);
        }
        puts("]");
    } else
        for (size_t i = 0; i < l->count; i++)
            print_message(&l->items[i]);
    mn_messages_free(l);
    mn_close(db);
    return status;
}

int cmd_context(const struct cli_global *g, struct cli_args *a)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    long long max_tokens = 0;
    if (cli_number(a, "max-tokens", &max_tokens))
        return EXIT_USAGE;
    o.max_tokens = max_tokens;
    long long model_window = 0;
    if (cli_number(a, "model-window", &model_window))
        return EXIT_USAGE;
    o.model_window = model_window;
    o.flags = (cli_flag(a, "no-fold") ? MN_CONTEXT_NO_FOLD : 0) | (cli_flag(a, "detail") ? MN_CONTEXT_DETAIL : 0);
    const char *fold = cli_opt(a, "fold");
    if (fold && strcmp(fold, "background") != 0 && strcmp(fold, "sync") != 0 && strcmp(fold, "off") != 0)
        return cli_usage_error("--fold: '%s' is not background, sync or off", fold);
    if (fold && strcmp(fold, "off") != 0 && cli_flag(a, "no-fold")) /* as the API refuses no_fold with fold */
        return cli_usage_error("--no-fold: the same as --fold off; it does not go with --fold %s", fold);
    o.fold = !fold || strcmp(fold, "background") == 0 ? MN_CONTEXT_FOLD_BACKGROUND
             : strcmp(fold, "sync") == 0               ? MN_CONTEXT_FOLD_SYNC
                                                       : MN_CONTEXT_FOLD_OFF;
    o.strategy = cli_opt(a, "strategy");
    if (cli_contradict(a, "memories", "no-memories"))
        return EXIT_USAGE;
    o.memories = cli_flag(a, "memories") ? 1 : cli_flag(a, "no-memories") ? -1 : 0; /* 0: memory.context.enabled */
    long long memories_top_k = 0;
    if (cli_number(a, "memories-top-k", &memories_top_k))
        return EXIT_USAGE;
    o.memories_top_k = (size_t)memories_top_k;
    if (cli_contradict(a, "rag", "no-rag"))
        return EXIT_USAGE;
    o.rag = cli_flag(a, "rag") ? 1 : cli_flag(a, "no-rag") ? -1 : 0; /* 0: memory.rag.enabled */
    long long rag_top_k = 0;
    if (cli_number(a, "rag-top-k", &rag_top_k))
        return EXIT_USAGE;
    o.rag_top_k = (size_t)rag_top_k;
    if (cli_opt(a, "rag-scope") && strcmp(cli_opt(a, "rag-scope"), "all") != 0 &&
        strcmp(cli_opt(a, "rag-scope"), "session") != 0)
        return cli_usage_error("--rag-scope: '%s' is not session or all", cli_opt(a, "rag-scope"));
    if (cli_fraction(a, "rag-min-similarity", &o.rag_min_similarity))
        return EXIT_USAGE;
    if (cli_opt(a, "rag-min-similarity") && o.rag_min_similarity == 0)
        o.rag_min_similarity = -1; /* 0 asks for no threshold; the API's 0 means the default */
    o.rag_scope = !cli_opt(a, "rag-scope")                       ? MN_RAG_SCOPE_DEFAULT
                 : strcmp(cli_opt(a, "rag-scope"), "all") == 0 ? MN_RAG_SCOPE_ALL
                                                               : MN_RAG_SCOPE_SESSION;
    if (cli_opt(a, "format") && mn_format_parse(cli_opt(a, "format"), &o.format) != MN_OK)
        return cli_usage_error("%s", mn_errmsg());
    if (cli_flag(a, "json") && !cli_flag(a, "report"))
        return cli_usage_error("--json is the form of the report: add --report (the context's own form is --format)");
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_context *c = NULL;
    mn_status rc = mn_context_build(db, a->pos[0], &o, &c);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (!cli_flag(a, "report"))
        printf("%s%s", c->rendered, o.format == MN_FORMAT_TEXT ? "" : "\n");
    else if (!cli_flag(a, "json")) {
        printf("%s%s--- report\n", c->rendered, o.format == MN_FORMAT_TEXT ? "" : "\n");
        cli_print_report_text(stdout, c->report);
    } else if (o.format == MN_FORMAT_TEXT)
        printf("%s--- report\n%s\n", c->rendered, c->report);
    else
        printf("{\"messages\":%s,\"report\":%s}\n", c->rendered, c->report);
    if (!rc) /* said whatever the output: without --report nothing else would tell */
        cli_context_warnings(c->report, max_tokens);
    mn_context_free(c);
    mn_close(db);
    return status;
}
