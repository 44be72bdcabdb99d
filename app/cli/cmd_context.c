/*
 * cmd_context.c — context governance commands: `mnemo pin|unpin SESSION N`, `mnemo summary get
 * ID`, `mnemo compact ID`, `mnemo events ID` and `mnemo budget WINDOW` (docs/context.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_pin(const struct cli_global *g, const struct cli_args *a, const char *session, const char *position,
            int pinned)
{
    struct cli_msg_ref r;
    if (cli_message_ref(a, position, &r))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int status = session ? cli_message_resolve(db, session, &r) : 0;
    mn_status rc = MN_OK;
    if (!status) /* with a session, the message must be one of its own (what REST and MCP call) */
        rc = session ? mn_session_message_pin(db, session, r.id, pinned) : mn_message_pin(db, r.id, pinned);
    mn_close(db);
    if (status)
        return status;
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"id\":%lld,\"pinned\":%s}\n", r.id, pinned ? "true" : "false");
    else if (r.seq)
        printf("%s #%lld\n", pinned ? "pinned" : "unpinned", r.seq);
    else /* given by its id: the position is not known here */
        printf("%s message id %lld\n", pinned ? "pinned" : "unpinned", r.id);
    return 0;
}

/* `pin SESSION N`, `pin SESSION --message-id ID` or `pin --message-id ID`. A lone number is
 * refused: it reads as the #N of `history`, which names no message without its session. */
static int pin(const struct cli_global *g, struct cli_args *a, int pinned)
{
    if (a->npos < 2 && !cli_opt(a, "message-id"))
        return cli_usage_error("%s: give the session and the position: mnemo %s SESSION N (N: the #N of mnemo "
                               "history), or the message id: mnemo %s --message-id MSG_ID",
                               pinned ? "pin" : "unpin", pinned ? "pin" : "unpin", pinned ? "pin" : "unpin");
    return cli_pin(g, a, a->npos ? a->pos[0] : NULL, a->npos > 1 ? a->pos[1] : NULL, pinned);
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
    if (event && cli_flag(a, "json"))
        puts(event);
    else if (event && !rc)
        cli_print_compaction_text(event);
    if (rc)
        status = cli_fail(rc);
    mn_free(event);
    mn_close(db);
    return status;
}

int cmd_events(const struct cli_global *g, struct cli_args *a)
{
    long long limit = 0;
    if (cli_number(a, "limit", &limit))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    char *json = NULL;
    mn_status rc = mn_events_json(db, a->pos[0], (size_t)limit, &json);
    if (!rc && cli_flag(a, "json"))
        puts(json);
    else if (!rc)
        cli_print_events_text(json);
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
