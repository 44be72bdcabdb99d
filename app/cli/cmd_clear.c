/*
 * cmd_clear.c — `mnemo session clear ID [--undo] [--state]` and `mnemo session set-max-turns ID
 * TURNS`: seed 000's /clear and seed 003's clear() / prune(max_messages) from the shell.
 */
#include <stdio.h>

#include "cli/cli.h"

int cmd_session_clear(const struct cli_global *g, struct cli_args *a)
{
    int undo = cli_flag(a, "undo"), state = cli_flag(a, "state");
    if (undo && state)
        return cli_usage_error("--undo and --state do not go together (a reset state cannot come back)");
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int64_t n = 0;
    mn_status rc = mn_session_clear(db, a->pos[0], (undo ? MN_CLEAR_UNDO : 0) | (state ? MN_CLEAR_STATE : 0), &n);
    mn_close(db);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"%s\":%lld}\n", undo ? "restored" : "cleared", (long long)n);
    else if (undo)
        printf("restored %lld messages to the active history\n", (long long)n);
    else
        printf("cleared %lld messages from the active history (still stored and searchable)\n", (long long)n);
    return 0;
}

int cmd_session_limit(const struct cli_global *g, struct cli_args *a)
{
    long long turns;
    if (cli_param_whole(a, "max_turns", a->pos[1], "TURNS", &turns))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_session_set_max_turns(db, a->pos[0], turns);
    mn_session *s = NULL;
    if (!rc)
        rc = mn_session_get(db, a->pos[0], &s);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json")) {
        char *json = NULL;
        if ((rc = mn_session_to_json(s, &json)))
            status = cli_fail(rc);
        else
            puts(json);
        mn_free(json);
    } else
        printf("turn limit %lld: %lld of %lld messages active\n", (long long)s->max_turns,
               (long long)(s->message_count - s->inactive_count), (long long)s->message_count);
    mn_session_free(s);
    mn_close(db);
    return status;
}
