/*
 * cmd_session.c — `mnemo session create|list|get|delete`.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/server.h"

static int print_json_session(const mn_session *s)
{
    char *json = NULL;
    mn_status rc = mn_session_to_json(s, &json);
    if (rc)
        return cli_fail(rc);
    puts(json);
    mn_free(json);
    return 0;
}

int cmd_session_new(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.title = cli_opt(a, "title");
    o.system_prompt = cli_opt(a, "system-prompt");
    o.metadata = cli_opt(a, "metadata");
    o.ns = cli_opt(a, "namespace");
    o.id = cli_opt(a, "id");
    o.key = cli_opt(a, "key");
    o.tool_name = cli_opt(a, "tool-name");
    long long ttl = 0, turns = 0;
    if (cli_number(a, "ttl-seconds", &ttl) || cli_number(a, "max-turns", &turns)) {
        mn_close(db);
        return EXIT_USAGE;
    }
    /* 0 or -1 given: none (as session_create's ttl_seconds and max_turns); absent: the thread default */
    o.ttl_ms = cli_opt(a, "ttl-seconds") ? (ttl > 0 ? ttl * 1000 : -1) : 0;
    o.max_turns = cli_opt(a, "max-turns") ? (turns > 0 ? turns : -1) : 0;
    mn_session *s = NULL;
    mn_status rc = mn_session_create(db, &o, &s);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json"))
        status = print_json_session(s);
    else
        puts(s->id);
    mn_session_free(s);
    mn_close(db);
    return status;
}

int cmd_session_list(const struct cli_global *g, struct cli_args *a)
{
    long long limit = cli_default(a, "limit"), offset = cli_default(a, "offset");
    if (cli_number(a, "limit", &limit) || cli_number(a, "offset", &offset))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_sessions *l = NULL;
    mn_status rc = mn_session_list(db, cli_opt(a, "namespace"), (size_t)limit, (size_t)offset, &l);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json")) {
        fputc('[', stdout);
        for (size_t i = 0; i < l->count; i++) {
            char *json = NULL;
            if ((rc = mn_session_to_json(&l->items[i], &json))) {
                status = cli_fail(rc);
                break;
            }
            printf("%s%s", i ? "," : "", json);
            mn_free(json);
        }
        puts("]");
    } else {
        if (l->count)
            printf("%-36s  %-19s  %5s  %6s  %8s  %-12s  %-9s  %s\n", "ID", "LAST ACTIVITY (UTC)", "TURNS", "MSGS",
                   "TOKENS", "TOOL", "TIME LEFT", "TITLE");
        long long now = cli_now_ms();
        for (size_t i = 0; i < l->count; i++) {
            const mn_session *s = &l->items[i];
            char when[32], left[32];
            cli_time(s->updated_at, when, sizeof when);
            cli_time_left(s->expires_at, now, left, sizeof left);
            printf("%-36s  %-19s  %5lld  %6lld  %8lld  %-12.12s  %-9s  %s\n", s->id, when, (long long)s->turn_count,
                   (long long)s->message_count, (long long)s->token_count, s->tool_name ? s->tool_name : "-", left,
                   s->title ? s->title : "");
        }
    }
    mn_sessions_free(l);
    mn_close(db);
    return status;
}

int cmd_session_show(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_session *s = NULL;
    mn_status rc = mn_session_get(db, a->pos[0], &s);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json"))
        status = print_json_session(s);
    else {
        char created[32], updated[32];
        cli_time(s->created_at, created, sizeof created);
        cli_time(s->updated_at, updated, sizeof updated);
        printf("id:            %s\nnamespace:     %s\ntitle:         %s\n", s->id, s->ns, s->title ? s->title : "");
        printf("created:       %s UTC\nupdated:       %s UTC\n", created, updated);
        printf("messages:      %lld\ntokens:        %lld\nturns:         %lld\n", (long long)s->message_count,
               (long long)s->token_count, (long long)s->turn_count);
        if (s->ttl_ms) {
            char left[32];
            cli_time_left(s->expires_at, cli_now_ms(), left, sizeof left);
            printf("ttl:           %lld s (time left: %s)\n", (long long)(s->ttl_ms / 1000), left);
        }
        if (s->max_turns)
            printf("turn limit:    %lld\n", (long long)s->max_turns);
        if (s->tool_name)
            printf("tool:          %s\n", s->tool_name);
        if (s->parent_id)
            printf("parent:        %s\n", s->parent_id);
        printf("metadata:      %s\n", s->metadata);
        if (s->system_prompt)
            printf("system prompt:\n%s\n", s->system_prompt);
    }
    mn_session_free(s);
    mn_close(db);
    return status;
}

int cmd_session_delete(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_session_delete(db, a->pos[0]);
    mn_close(db);
    if (rc)
        return cli_fail(rc);
    char id[40]; /* the stored id: a UUID given in upper case is stored in lower */
    if (cli_flag(a, "json"))
        printf("{\"deleted\":\"%s\"}\n", srv_id_lower(a->pos[0], id, sizeof id));
    return 0;
}
