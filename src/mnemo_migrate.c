/*
 * mnemo_migrate.c — mn_migrate: one database copied into another (engine/migrate.c). What moves
 * and what does not: docs/scale-out.md ("Moving data") and docs/cli.md (migrate).
 */
#include "mnemo_int.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_migrate(const char *from, const char *to, const mn_config *cfg, int append, mn_progress_fn progress,
                     void *user, mn_import_stats *stats)
{
    mn__err_clear();
    mn_import_stats st = {0, 0, 0, 0};
    if (stats)
        *stats = st;
    if (!from || !to)
        return mn__err(MN_MISUSE, "mn_migrate: NULL argument");
    mn_status rc = mn__migrate_db(from, to, cfg, append, progress, user, &st);
    if (!rc && stats)
        *stats = st;
    return rc;
}
