/*
 * cmd_threads.c — `mnemo session fork|resume|files`, `mnemo gc` and `mnemo state …`.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cmd_session_fork(const struct cli_global *g, struct cli_args *a)
{
    long long upto = 0;
    if (cli_number(a, "upto-seq", &upto))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_session *s = NULL;
    mn_status rc = mn_session_fork(db, a->pos[0], upto, &s);
    int status = rc ? cli_fail(rc) : 0;
    if (!rc) {
        if (cli_flag(a, "json")) {
            char *json = NULL;
            status = mn_session_to_json(s, &json) ? cli_fail(MN_NOMEM) : (puts(json), 0);
            mn_free(json);
        } else
            puts(s->id);
    }
    mn_session_free(s);
    mn_close(db);
    return status;
}

int cmd_session_resume(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_session *s = NULL;
    mn_status rc = mn_session_resume(db, cli_opt(a, "namespace"), a->npos ? a->pos[0] : NULL, &s);
    if (!rc)
        puts(s->id);
    mn_session_free(s);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}

int cmd_gc(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int64_t n = 0;
    mn_status rc = mn_gc(db, &n);
    if (!rc && cli_flag(a, "vacuum"))
        rc = mn_vacuum(db);
    mn_close(db);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"purged\":%lld}\n", (long long)n);
    else
        printf("purged %lld expired threads\n", (long long)n);
    return 0;
}

int cmd_files(const struct cli_global *g, struct cli_args *a)
{
    long long limit = 0;
    if (cli_number(a, "limit", &limit))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_strings *l = NULL;
    mn_status rc = mn_session_files_n(db, a->pos[0], (size_t)limit, &l);
    if (!rc) {
        int json = cli_flag(a, "json");
        if (json)
            fputc('[', stdout);
        for (size_t i = 0; i < l->count; i++) {
            if (!json) {
                puts(l->items[i]);
                continue;
            }
            fputs(i ? ",\"" : "\"", stdout);
            for (const char *p = l->items[i]; *p; p++) {
                unsigned char c = (unsigned char)*p;
                if (c == '"' || c == '\\')
                    printf("\\%c", c);
                else if (c < 0x20)
                    printf("\\u%04x", c);
                else
                    putchar(c);
            }
            putchar('"');
        }
        if (json)
            puts("]");
    }
    mn_strings_free(l);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}

/* mnemo state get|merge-params|set-waiting|unwait|set-result|set-plan|clear ID [ARG [ARG]]: one
 * change of the state (get: none), then the state it leaves behind. */
int cmd_state(const struct cli_global *g, struct cli_args *a)
{
    const char *verb = a->command + strlen("state ");
    const char *arg = a->npos > 1 ? a->pos[1] : NULL, *arg2 = a->npos > 2 ? a->pos[2] : NULL;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    const char *id = a->pos[0];
    mn_status rc;
    if (strcmp(verb, "merge-params") == 0)
        rc = mn_state_merge_params(db, id, arg);
    else if (strcmp(verb, "set-waiting") == 0)
        rc = mn_state_set_waiting(db, id, arg);
    else if (strcmp(verb, "unwait") == 0)
        rc = mn_state_set_waiting(db, id, NULL);
    else if (strcmp(verb, "set-result") == 0)
        rc = mn_state_set_result(db, id, arg, arg2);
    else if (strcmp(verb, "set-plan") == 0)
        rc = mn_state_set_plan(db, id, arg);
    else if (strcmp(verb, "clear") == 0 && cli_flag(a, "history")) /* seed 003's clear(): both at once */
        rc = mn_session_clear(db, id, MN_CLEAR_STATE, NULL);
    else if (strcmp(verb, "clear") == 0)
        rc = mn_state_clear(db, id);
    else
        rc = MN_OK;
    char *json = NULL;
    if (!rc) /* every verb prints the state it leaves behind */
        rc = mn_state_get(db, id, cli_flag(a, "reveal"), &json);
    if (!rc)
        puts(json);
    mn_free(json);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}
