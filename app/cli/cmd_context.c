/*
 * cmd_context.c — context governance commands: `mnemo pin|unpin MSG_ID`, `mnemo summary show
 * ID`, `mnemo compact ID`, `mnemo events ID` and `mnemo budget WINDOW` (docs/context.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static int message_id(const char *text, long long *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(text, &end, 10);
    if (errno || end == text || *end || n < 1)
        return cli_usage_error("MSG_ID: '%s' is not a message id (a positive whole number)", text);
    *out = n;
    return 0;
}

static int pin(const struct cli_global *g, struct cli_args *a, int pinned)
{
    long long id = 0;
    if (message_id(a->pos[0], &id))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_message_pin(db, id, pinned);
    mn_close(db);
    return cli_pin_result(a, rc, id, pinned);
}

int cli_pin_result(const struct cli_args *a, mn_status rc, long long id, int pinned)
{
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"id\":%lld,\"pinned\":%s}\n", id, pinned ? "true" : "false");
    else
        printf("%s message %lld\n", pinned ? "pinned" : "unpinned", id);
    return 0;
}

int cmd_pin(const struct cli_global *g, struct cli_args *a) { return pin(g, a, 1); }

int cmd_unpin(const struct cli_global *g, struct cli_args *a) { return pin(g, a, 0); }

static void json_string_out(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", stdout);
        else if (*p == '\t')
            fputs("\\t", stdout);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

int cmd_summary_show(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_summary *s = NULL;
    mn_status rc = mn_summary_get(db, a->pos[0], &s);
    if (!rc && cli_flag(a, "json")) {
        printf("{\"id\":%lld,\"session_id\":\"%s\",\"covers_upto\":%lld,\"folded\":%lld,\"tokens\":%lld,"
               "\"summarizer\":\"%s\",\"model\":",
               (long long)s->id, s->session_id, (long long)s->covers_upto, (long long)s->folded, (long long)s->tokens,
               s->summarizer);
        if (s->model)
            json_string_out(s->model);
        else
            fputs("null", stdout);
        printf(",\"created_at\":%lld,\"text\":", (long long)s->created_at);
        json_string_out(s->text);
        puts("}");
    } else if (!rc) {
        char when[32];
        cli_time(s->created_at, when, sizeof when);
        printf("summary %lld of session %s: covers messages up to seq %lld (%lld messages), %lld tokens, %s%s%s, %s\n\n%s\n",
               (long long)s->id, s->session_id, (long long)s->covers_upto, (long long)s->folded, (long long)s->tokens,
               s->summarizer, s->model ? " " : "", s->model ? s->model : "", when, s->text);
    }
    mn_summary_free(s);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}

int cmd_compact(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    char *event = NULL;
    mn_compact_opts o = MN_COMPACT_OPTS_INIT;
    o.instructions = cli_opt(a, "instructions");
    mn_status rc = mn_compact_ex(db, a->pos[0], &o, &event);
    int status = 0;
    if (event && (cli_flag(a, "json") || !rc))
        puts(event);
    if (rc)
        status = cli_fail(rc);
    mn_free(event);
    mn_close(db);
    return status;
}

int cmd_events(const struct cli_global *g, struct cli_args *a)
{
    long long limit = 0;
    if (cli_number(a, "limit", 1, 10000, &limit))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    char *json = NULL;
    mn_status rc = mn_events_json(db, a->pos[0], (size_t)limit, &json);
    if (!rc)
        puts(json);
    mn_free(json);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}

int cmd_budget(const struct cli_global *g, struct cli_args *a)
{
    (void)g;
    char *end;
    errno = 0;
    long long w = strtoll(a->pos[0], &end, 10);
    if (errno || end == a->pos[0] || *end || w < 1 || w > 100000000)
        return cli_usage_error("WINDOW: '%s' is not a whole number from 1 to 100000000", a->pos[0]);
    mn_budget b;
    mn_status rc = mn_budget_split(w, &b);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"model_window\":%lld,\"response\":%lld,\"history\":%lld,\"files\":%lld}\n", w,
               (long long)b.response, (long long)b.history, (long long)b.files);
    else
        printf("model window %lld: response %lld, history %lld, files %lld\n", w, (long long)b.response,
               (long long)b.history, (long long)b.files);
    return 0;
}
