/*
 * cmd_handover.c — what one tool hands to the next (seed 002): `mnemo thread summary-get` (the
 * thread summary), `mnemo file should-include` (send a file's content or not), and `mnemo
 * namespace forget`.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cmd_handover(const struct cli_global *g, struct cli_args *a)
{
    long long files = 0;
    if (cli_number(a, "files", &files))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_thread_summary *t = NULL;
    mn_status rc = mn_thread_summary_get(db, a->pos[0], (size_t)files, &t);
    int status = rc ? cli_fail(rc) : 0;
    if (!rc && cli_flag(a, "json")) {
        char *json = NULL;
        status = mn_thread_summary_to_json(t, &json) ? cli_fail(MN_NOMEM) : (puts(json), 0);
        mn_free(json);
    } else if (!rc)
        fputs(t->text, stdout);
    mn_thread_summary_free(t);
    mn_close(db);
    return status;
}

/* mnemo file should-include ID PATH [FILE|-]: the content is FILE, standard input for -, else
 * PATH. */
int cmd_files_check(const struct cli_global *g, struct cli_args *a)
{
    const char *path = a->pos[1], *from = a->npos > 2 ? a->pos[2] : path;
    size_t len = 0;
    char *content = cli_read_path(from, &len);
    if (!content)
        return 1;
    int status = 1;
    mn_db *db = cli_open(g);
    if (db) {
        int include = 0;
        mn_status rc = mn_file_should_include(db, a->pos[0], path, content, len, &include);
        if (rc)
            status = cli_fail(rc);
        else {
            if (cli_flag(a, "json"))
                printf("{\"include\":%s}\n", include ? "true" : "false");
            else
                puts(include ? "include" : "skip");
            status = 0;
        }
        mn_close(db);
    }
    free(content);
    return status;
}

int cmd_namespace_forget(const struct cli_global *g, struct cli_args *a)
{
    if (!cli_flag(a, "yes"))
        return cli_usage_error("namespace forget erases every session and memory of '%s' for good: add --yes",
                               a->pos[0]);
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_forget_stats st = {0, 0};
    mn_status rc = mn_namespace_forget(db, a->pos[0], &st);
    mn_close(db);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"sessions\":%lld,\"memories\":%lld}\n", (long long)st.sessions, (long long)st.memories);
    else
        printf("erased %lld sessions and %lld memories of %s\n", (long long)st.sessions, (long long)st.memories,
               a->pos[0]);
    return 0;
}
