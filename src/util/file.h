/*
 * file.h — whole files copied and made durable (file.c), for copies that must survive a crash
 * once made: mn_backup's (src/engine/backup.c, src/search/vindex.c, src/store/sqlite/backup.c).
 */
#ifndef MN_UTIL_FILE_H
#define MN_UTIL_FILE_H

#include "mnemo.h"

/* Copies the open file `from`, from its current offset to its end, into a new file `to` (created,
 * never replaced: MN_IO when `to` exists), then fsyncs it. On failure `to` is removed. */
mn_status mn__file_copy(int from, const char *to);
/* fsyncs a file, or a folder after renames in it, by name (MN_IO). */
mn_status mn__file_sync(const char *path);

#endif
