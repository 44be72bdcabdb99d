/*
 * cmd_edit.c — changes in place: `mnemo message delete|edit|pin` (a message by its position, or
 * --message-id) and `mnemo session update`.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The position argument of `mnemo message CMD ID N|--message-id MSG_ID …` into *position (NULL with
 * --message-id), with `extra` positionals after it (edit's TEXT); a usage error naming `usage`
 * when the message is missing. */
static int message_form(const struct cli_args *a, int extra, const char *usage, const char **position)
{
    int given = a->npos - 1 - extra; /* 1: a position */
    if (given < 1 && !cli_opt(a, "message-id"))
        return cli_usage_error("usage: mnemo %s", usage);
    *position = given >= 1 ? a->pos[1] : NULL;
    return 0;
}

int cmd_message_delete(const struct cli_global *g, struct cli_args *a)
{
    const char *position = NULL;
    struct cli_msg_ref r;
    if (message_form(a, 0, "message delete ID N|--message-id MSG_ID [--json]", &position) ||
        cli_message_ref(a, position, &r))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int status = cli_message_resolve(db, a->pos[0], &r);
    mn_status rc = status ? MN_OK : mn_message_delete(db, a->pos[0], r.id);
    mn_close(db);
    if (status)
        return status;
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"deleted\":%lld}\n", r.id);
    return 0;
}

/* Pins (or with --unpin unpins) one message of a session: the server's message_pin. */
int cmd_message_pin(const struct cli_global *g, struct cli_args *a)
{
    const char *position = NULL;
    if (message_form(a, 0, "message pin ID N|--message-id MSG_ID [--unpin] [--json]", &position))
        return EXIT_USAGE;
    return cli_pin(g, a, a->pos[0], position, !cli_flag(a, "unpin"));
}

int cmd_message_edit(const struct cli_global *g, struct cli_args *a)
{
    const char *position = NULL;
    struct cli_msg_ref r;
    if (message_form(a, 1, "message edit ID N|--message-id MSG_ID TEXT|- [--metadata JSON] [--json]", &position) ||
        cli_message_ref(a, position, &r))
        return EXIT_USAGE;
    char *stdin_text = NULL;
    const char *content = a->pos[a->npos - 1];
    if (strcmp(content, "-") == 0 && !(content = stdin_text = cli_read_all(stdin, "standard input", NULL)))
        return 1;
    int status = 1;
    mn_db *db = cli_open(g);
    if (db && !(status = cli_message_resolve(db, a->pos[0], &r))) {
        mn_message *m = NULL;
        mn_status rc = mn_message_edit(db, a->pos[0], r.id, content, cli_opt(a, "metadata"), &m);
        if (rc)
            status = cli_fail(rc);
        else if (cli_flag(a, "json")) {
            char *json = NULL;
            status = mn_message_to_json(m, &json) ? cli_fail(MN_NOMEM) : (puts(json), 0);
            mn_free(json);
        }
        mn_message_free(m);
    }
    if (db)
        mn_close(db);
    free(stdin_text);
    return status;
}

int cmd_session_update(const struct cli_global *g, struct cli_args *a)
{
    const char *title = cli_opt(a, "title"), *metadata = cli_opt(a, "metadata");
    if (!title && !metadata)
        return cli_usage_error("session update: give --title, --metadata or both");
    if (title && !*title)
        return cli_usage_error("--title: empty (a session keeps its title until another is given)");
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_session_update(db, a->pos[0], title, metadata);
    mn_session *s = NULL;
    if (!rc && cli_flag(a, "json"))
        rc = mn_session_get(db, a->pos[0], &s);
    int status = rc ? cli_fail(rc) : 0;
    if (s) {
        char *json = NULL;
        status = mn_session_to_json(s, &json) ? cli_fail(MN_NOMEM) : (puts(json), 0);
        mn_free(json);
    }
    mn_session_free(s);
    mn_close(db);
    return status;
}
