/*
 * cmd_migrate.c — `mnemo migrate --from SRC --to DST [--append] [--json]`: copies a database into
 * another (SQLite ↔ PostgreSQL) through mn_migrate; `mnemo upgrade [--json]`: brings one
 * database's schema up to date through mn_upgrade; `mnemo backup DEST`: an online copy of a
 * SQLite database with what is kept beside it, through mn_backup. Each with a progress bar on a
 * terminal. docs/cli.md (migrate, upgrade, backup), docs/scale-out.md, docs/format.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

struct bar {
    const char *doing, *done; /* "migrating", "migrated" */
    long long started_ms, last_ms;
    int tty;
};

/* A bar with count, rate and ETA on a terminal; a plain line every 2 s (and at the end) otherwise. */
static void show_progress(void *user, int64_t done, int64_t total)
{
    struct bar *p = user;
    long long now = cli_now_ms(), el = now - p->started_ms;
    double rate = el > 0 ? (double)done * 1000.0 / (double)el : 0;
    long long eta = rate > 0 && total > done ? (long long)((double)(total - done) / rate) : 0;
    if (p->tty) {
        int width = 30, fill = total > 0 ? (int)(done * width / total) : width;
        fprintf(stderr, "\r%s [%.*s%*s] %lld/%lld %.0f/s ETA %llds ", p->doing, fill,
                "##############################", width - fill, "", (long long)done, (long long)total, rate, eta);
        if (done >= total)
            fputc('\n', stderr);
    } else if (now - p->last_ms >= 2000 || done >= total) {
        fprintf(stderr, "%s %lld/%lld (%.0f/s, ETA %llds)\n", p->done, (long long)done, (long long)total, rate, eta);
        p->last_ms = now;
    }
}

int cmd_migrate(const struct cli_global *g, struct cli_args *a)
{
    const char *from = cli_opt(a, "from"), *to = cli_opt(a, "to");
    if (!from || !*from || !to || !*to)
        return cli_usage_error("migrate: name both databases: --from SRC --to DST");
    if (g->db)
        return cli_usage_error("migrate: --db does not apply; name the databases with --from and --to");
    mn_config *cfg = cli_config(g);
    if (!cfg)
        return 1;
    struct bar p = {"migrating", "migrated", cli_now_ms(), cli_now_ms(), isatty(STDERR_FILENO)};
    mn_import_stats st;
    mn_status rc = mn_migrate(from, to, cfg, cli_flag(a, "append"), show_progress, &p, &st);
    mn_config_free(cfg);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        cli_print_import_stats_json(&st);
    else
        printf("migrated %lld sessions and %lld messages (%lld sessions and %lld messages were already there)\n",
               (long long)st.sessions_added, (long long)st.messages_added, (long long)st.sessions_skipped,
               (long long)st.messages_skipped);
    return 0;
}

int cmd_upgrade(const struct cli_global *g, struct cli_args *a)
{
    mn_config *cfg = cli_config(g);
    if (!cfg)
        return 1;
    struct bar p = {"upgrading", "upgraded", cli_now_ms(), cli_now_ms(), isatty(STDERR_FILENO)};
    int from = 0;
    mn_status rc = mn_upgrade(NULL, cfg, show_progress, &p, &from);
    mn_db *db = NULL;
    mn_stats st;
    if (!rc)
        rc = mn_open(cfg, &db);
    if (!rc)
        rc = mn_stats_get(db, &st);
    mn_close(db);
    mn_config_free(cfg);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"from_version\":%d,\"schema_version\":%d,\"messages\":%lld}\n", from, st.schema_version,
               (long long)st.messages);
    else if (from == st.schema_version)
        printf("schema version %d: up to date\n", st.schema_version);
    else if (from == 0)
        printf("new database, schema version %d\n", st.schema_version);
    else
        printf("upgraded schema version %d to %d (%lld messages)\n", from, st.schema_version, (long long)st.messages);
    return 0;
}

int cmd_backup(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    struct bar p = {"backing up", "backed up", cli_now_ms(), cli_now_ms(), isatty(STDERR_FILENO)};
    mn_status rc = mn_backup(db, a->pos[0], show_progress, &p);
    if (!rc)
        printf("backed up %s to %s\n", mn_db_path(db), a->pos[0]);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}
