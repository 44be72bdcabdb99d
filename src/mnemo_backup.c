/*
 * mnemo_backup.c — mn_backup: a SQLite database copied online with what mnemo keeps beside it
 * (engine/backup.c). What is copied and why the copy opens without a rebuild: docs/cli.md (backup).
 */
#include "mnemo_int.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_backup(mn_db *db, const char *dest_path, mn_progress_fn progress, void *user)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    if (!dest_path)
        return mn__err(MN_MISUSE, "mn_backup: NULL destination");
    if (!*dest_path)
        return mn__err(MN_INVALID, "backup: the destination is empty: give a new file's path");
    return mn__backup_db(db, dest_path, progress, user);
}
