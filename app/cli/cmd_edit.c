/*
 * cmd_edit.c — changes in place: `mnemo message delete|edit|pin` and `mnemo session update`.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* A message id argument: a positive whole number. */
static int message_id_arg(const char *v, long long *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n <= 0)
        return cli_usage_error("MSG_ID: '%s' is not a message id (a positive number; mnemo history --json shows it)",
                               v), -1;
    *out = n;
    return 0;
}

int cmd_message_delete(const struct cli_global *g, struct cli_args *a)
{
    long long id = 0;
    if (message_id_arg(a->pos[1], &id))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_message_delete(db, a->pos[0], id);
    mn_close(db);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"deleted\":%lld}\n", id);
    return 0;
}

/* Pins (or with --unpin unpins) one message of a session: the server's message_pin. */
int cmd_message_pin(const struct cli_global *g, struct cli_args *a)
{
    long long id = 0;
    if (message_id_arg(a->pos[1], &id))
        return EXIT_USAGE;
    int pinned = !cli_flag(a, "unpin");
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_session_message_pin(db, a->pos[0], id, pinned);
    mn_close(db);
    return cli_pin_result(a, rc, id, pinned);
}

int cmd_message_edit(const struct cli_global *g, struct cli_args *a)
{
    long long id = 0;
    if (message_id_arg(a->pos[1], &id))
        return EXIT_USAGE;
    char *stdin_text = NULL;
    const char *content = a->pos[2];
    if (strcmp(content, "-") == 0 && !(content = stdin_text = cli_read_all(stdin, "standard input", NULL)))
        return 1;
    int status = 1;
    mn_db *db = cli_open(g);
    if (db) {
        mn_message *m = NULL;
        mn_status rc = mn_message_edit(db, a->pos[0], id, content, cli_opt(a, "metadata"), &m);
        if (rc)
            status = cli_fail(rc);
        else if (cli_flag(a, "json")) {
            char *json = NULL;
            status = mn_message_to_json(m, &json) ? cli_fail(MN_NOMEM) : (puts(json), 0);
            mn_free(json);
        } else
            status = 0;
        mn_message_free(m);
        mn_close(db);
    }
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
