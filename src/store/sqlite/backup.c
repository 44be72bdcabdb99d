/*
 * backup.c — the SQLite store's backup op (store.h; mn_backup, src/engine/backup.c): the database
 * and its keyword index file ("<db>.keywords", fts_file.c) copied page by page with SQLite's
 * online backup API, both from one read snapshot of a connection of its own, while other
 * connections and processes go on writing.
 *
 * Why the snapshot begins under the database's write lock: the index's file and the database
 * commit one after the other (fts_file.c), and a log row applied to the index leaves msg_log
 * once the index's commit is on disk. Snapshots of the two files begun at any two moments could
 * pair an index without a removal with a database whose log no longer has it: a deleted
 * message's words found again. While the write lock is held no message is added and no log row
 * is applied or removed (every such write locks the database), so the index can only move its
 * watermark over messages the database already has. Snapshots of both files begun then make a
 * pair the open check accepts (same file id, watermark not past the last id: fts_file.c) and the
 * drain brings up to date: the index is exactly current, or behind and caught up from the log.
 * The lock is held only while the two snapshots begin; the pages are copied after it.
 */
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>

#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/file.h"
#include "util/banned.h"

#define STEP_PAGES 1024 /* pages a backup step copies (4 MiB of 4 KiB pages) between progress calls */

static const char SQL_BEGIN_READ[] = "BEGIN";
static const char SQL_SNAPSHOT[] = "SELECT count(*) FROM main.sqlite_schema";
static const char SQL_SNAPSHOT_KW[] =
    "SELECT (SELECT count(*) FROM main.sqlite_schema) + (SELECT count(*) FROM kw.sqlite_schema)";
static const char SQL_PAGES[] = "PRAGMA main.page_count";
static const char SQL_PAGES_KW[] = "PRAGMA kw.page_count";

struct progress {
    void (*fn)(void *user, int64_t done, int64_t total);
    void *user;
    int64_t done, total;
};

/* Begins r's read snapshot of the database (and of the index's file when attached) while this
 * handle holds the database's write lock. */
static mn_status begin_snapshot(struct sqlite_store *s, struct sqlite_store *r, int kw)
{
    int64_t n = 0;
    pthread_mutex_lock(&s->lock);
    mn_status rc = mn__sqlite_begin_write(s);
    if (!rc) {
        if (!(rc = mn__sqlite_exec_stmt(r, SQL_BEGIN_READ, "backup")))
            rc = mn__sqlite_int(r, kw ? SQL_SNAPSHOT_KW : SQL_SNAPSHOT, "backup", &n, NULL, 0, NULL);
        mn__sqlite_rollback(s);
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Copies schema ("main" or "kw") of r's snapshot into a new database file `to`, then fsyncs it. */
static mn_status copy_schema(struct sqlite_store *r, const char *schema, const char *to, struct progress *p)
{
    sqlite3 *d = NULL;
    int e = sqlite3_open_v2(to, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_backup *b = e == SQLITE_OK ? sqlite3_backup_init(d, "main", r->db, schema) : NULL;
    if (!b) {
        mn_status rc = d ? mn__err(MN_IO, "backup: cannot write %s: %s", to, sqlite3_errmsg(d)) : mn__nomem();
        sqlite3_close(d);
        return rc;
    }
    int64_t before = p->done;
    do {
        e = sqlite3_backup_step(b, STEP_PAGES);
        p->done = before + sqlite3_backup_pagecount(b) - sqlite3_backup_remaining(b);
        if (p->fn && (e == SQLITE_OK || e == SQLITE_DONE))
            p->fn(p->user, p->done, p->total);
    } while (e == SQLITE_OK);
    sqlite3_backup_finish(b);
    mn_status rc = e == SQLITE_DONE ? MN_OK
                   : (e & 0xFF) == SQLITE_NOMEM ? mn__nomem()
                                                 : mn__err(MN_IO, "backup: cannot copy into %s: %s", to,
                                                           sqlite3_errmsg(d));
    if (sqlite3_close(d) != SQLITE_OK && !rc)
        rc = mn__err(MN_IO, "backup: cannot close %s", to);
    return rc ? rc : mn__file_sync(to);
}

/* The pages of both files in the snapshot: the progress's total. */
static mn_status count_pages(struct sqlite_store *r, int kw, int64_t *total)
{
    int64_t main_pages = 0, kw_pages = 0;
    mn_status rc = mn__sqlite_int(r, SQL_PAGES, "backup", &main_pages, NULL, 0, NULL);
    if (!rc && kw)
        rc = mn__sqlite_int(r, SQL_PAGES_KW, "backup", &kw_pages, NULL, 0, NULL);
    *total = main_pages + kw_pages;
    return rc;
}

mn_status mn__sqlite_op_backup(mn_store *st, const char *to, void (*progress)(void *user, int64_t done, int64_t total),
                               void *user)
{
    struct sqlite_store *s = (struct sqlite_store *)st, *r = NULL;
    char kw_to[PATH_MAX];
    if (snprintf(kw_to, sizeof kw_to, "%s" MN_SQLITE_KW_SUFFIX, to) >= (int)sizeof kw_to)
        return mn__err(MN_INVALID, "backup: the path %s is too long", to);
    int kw = 0;
    struct progress p = {progress, user, 0, 0};
    mn_status rc = mn__sqlite_open_reader(s, &r);
    if (!rc)
        rc = mn__sqlite_kw_attach_read(r, &kw);
    if (!rc)
        rc = begin_snapshot(s, r, kw);
    if (!rc)
        rc = count_pages(r, kw, &p.total);
    if (!rc)
        rc = copy_schema(r, "main", to, &p);
    if (!rc && kw)
        rc = copy_schema(r, "kw", kw_to, &p);
    if (r) {
        mn__sqlite_rollback(r);
        mn__sqlite_close(r);
    }
    return rc;
}
