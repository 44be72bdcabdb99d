/*
 * backup.c — mn_backup (src/mnemo_backup.c): an online copy of a SQLite database with what mnemo
 * keeps beside it, which opens without rebuilding any index. docs/cli.md (backup) has the user's
 * view.
 *
 * Each copy fits the database's copy: the database and its keyword index come from one snapshot
 * (the store's backup op); the saved vector indexes and the offloaded tool outputs are copied
 * before that snapshot begins. A saved vector index names the change-log position it reflects,
 * and the log only grows, so one copied first is current or behind the database's copy, never
 * ahead, and catches up from the log (search/vindex.c). An offloaded output is a message's text,
 * removed when the message is edited or deleted (engine/erase.c), so a file copied first holds
 * what the message still holds (a session deleted meanwhile leaves a folder nothing names).
 *
 * Everything is written into a new folder in the destination's folder, then moved into place: the
 * offloaded outputs, the files beside the database, then the database, never over a file that
 * appeared meanwhile. So the destination names a whole backup or nothing; a crash leaves at most
 * the hidden folder ".NAME.backup-XXXXXX".
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/engine.h"
#include "search/search.h"
#include "store/target.h"
#include "util/err.h"
#include "util/file.h"
#include "util/banned.h"

/* The saved vector indexes beside a database (search/vindex.c): messages', memories'. */
static const char *const VECTOR_SUFFIXES[] = {".hnsw", ".memories.hnsw"};
#define N_VECTOR_SUFFIXES (sizeof VECTOR_SUFFIXES / sizeof VECTOR_SUFFIXES[0])

struct dest {
    char path[PATH_MAX]; /* the backup's database file */
    char dir[PATH_MAX];  /* its folder */
    char base[NAME_MAX + 1];
    char tmp[PATH_MAX]; /* the new folder the backup is written into */
    char to[PATH_MAX];  /* tmp/base: the database's copy */
};

/* dest as a path ("~/" expanded, a sqlite: prefix dropped), split into folder and name. */
static mn_status dest_parse(const char *dest, struct dest *d)
{
    if (!mn__store_target_local(dest))
        return mn__err(MN_INVALID, "backup: the destination must be a new file's path, not a database URL or :memory:");
    char *path = mn__expand_path(mn__store_target_path(dest));
    if (!path)
        return mn__nomem();
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    mn_status rc = MN_OK;
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        rc = mn__err(MN_INVALID, "backup: %s names a folder: give the backup file's name", path);
    else if ((size_t)snprintf(d->path, sizeof d->path, "%s", path) >= sizeof d->path ||
             (size_t)snprintf(d->base, sizeof d->base, "%s", base) >= sizeof d->base)
        rc = mn__err(MN_INVALID, "backup: the path %s is too long", path);
    else
        mn__store_target_folder(d->path, d->dir, sizeof d->dir); /* "." for a bare name */
    free(path);
    return rc;
}

/* A SQLite journal left under name + "-wal" or "-journal" in dir: SQLite would apply it to the
 * file moved in under that name (MN_CONFLICT). */
static mn_status check_journals(const char *dir, const char *name)
{
    static const char *const journals[] = {"-wal", "-journal"};
    char p[PATH_MAX + 16];
    for (size_t i = 0; i < sizeof journals / sizeof journals[0]; i++) {
        int n = snprintf(p, sizeof p, "%s/%s%s", dir, name, journals[i]);
        if (n < 0 || (size_t)n >= sizeof p)
            return mn__err(MN_INVALID, "backup: the path %s/%s is too long", dir, name);
        if (access(p, F_OK) == 0)
            return mn__err(MN_CONFLICT, "backup: %s is there, a SQLite journal of another database that SQLite would"
                                        " apply to the backup: remove it, or choose another name", p);
    }
    return MN_OK;
}

/* The destination is new, not the database itself (src, its file), and has no journal by its name. */
static mn_status check_dest(const char *src, const struct dest *d)
{
    struct stat a, b;
    if (stat(d->path, &b) == 0 && stat(src, &a) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return mn__err(MN_INVALID, "backup: %s is the database itself: give a new file's name", d->path);
    if (lstat(d->path, &b) == 0)
        return mn__err(MN_CONFLICT, "backup: %s already exists: a backup never replaces a file (choose a new name)",
                       d->path);
    if (errno != ENOENT)
        return mn__err(MN_IO, "backup: %s: %s", d->path, strerror(errno));
    return check_journals(d->dir, d->base);
}

/* The new folder the backup is written into, in the destination's folder (hidden). */
static mn_status make_tmp(struct dest *d)
{
    size_t n = (size_t)snprintf(d->tmp, sizeof d->tmp, "%s/.%s.backup-XXXXXX", d->dir, d->base);
    if (n + 1 + strlen(d->base) >= sizeof d->to) /* tmp/base must fit too */
        return mn__err(MN_INVALID, "backup: the path %s is too long", d->path);
    if (!mkdtemp(d->tmp))
        return mn__err(MN_IO, "backup: cannot create a folder in %s: %s", d->dir, strerror(errno));
    int m = snprintf(d->to, sizeof d->to, "%s/%s", d->tmp, d->base);
    return m >= 0 && (size_t)m < sizeof d->to ? MN_OK : mn__err(MN_INVALID, "backup: the path %s is too long", d->path);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static int same_folder(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static mn_status make_dir(const char *path)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return mn__err(MN_IO, "backup: cannot create %s: %s", path, strerror(errno));
    return MN_OK;
}

/* An entry of a folder being walked: its name, its path, and the path of the same name in the
 * folder it goes to (`to`). */
struct entry {
    const char *name, *src, *dst, *to;
};
typedef mn_status (*entry_fn)(const struct entry *e, void *arg);

/* fn on each entry of folder `from` (those not starting with '.'), paired with folder `to`, until
 * one fails; a missing `from` has none. */
static mn_status each_entry(const char *from, const char *to, entry_fn fn, void *arg)
{
    DIR *dir = opendir(from);
    if (!dir)
        return errno == ENOENT ? MN_OK : mn__err(MN_IO, "backup: cannot read %s: %s", from, strerror(errno));
    char src[PATH_MAX + 256], dst[PATH_MAX + 256];
    mn_status rc = MN_OK;
    struct dirent *d;
    while (!rc && (d = readdir(dir)))
        if (d->d_name[0] != '.') {
            int a = snprintf(src, sizeof src, "%s/%s", from, d->d_name), b = snprintf(dst, sizeof dst, "%s/%s", to, d->d_name);
            if (a < 0 || b < 0 || (size_t)a >= sizeof src || (size_t)b >= sizeof dst) {
                rc = mn__err(MN_INVALID, "backup: the path %s/%s is too long", to, d->d_name);
                break;
            }
            struct entry e = {d->d_name, src, dst, to};
            rc = fn(&e, arg);
        }
    closedir(dir);
    return rc;
}

/* ---- the offloaded tool outputs: FOLDER/tool-outputs/SESSION/SEQ.txt (context/govern.c) ---- */

/* Copies an output: a regular file SEQ.txt (not a partial "SEQ.txt.tmp.PID"). */
static mn_status copy_output(const struct entry *e, void *arg)
{
    (void)arg;
    size_t n = strlen(e->name);
    if (n < 5 || strcmp(e->name + n - 4, ".txt") != 0)
        return MN_OK;
    struct stat st;
    int fd = open(e->src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    mn_status rc = MN_OK;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && !(rc = make_dir(e->to)))
        rc = mn__file_copy(fd, e->dst);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* Copies a session's outputs when the folder is named after a session of this database (the
 * folder tool-outputs is shared by the databases beside each other). */
static mn_status copy_session(const struct entry *e, void *arg)
{
    mn_db *db = arg;
    mn_session *s = NULL;
    mn_status rc = db->store->ops->session_get(db->store, e->name, &s);
    mn__free_session(s);
    if (rc == MN_NOTFOUND) {
        mn__err_clear();
        return MN_OK;
    }
    if (!rc && !(rc = make_dir(e->to)))
        rc = each_entry(e->src, e->dst, copy_output, NULL);
    return rc;
}

/* ---- moving the backup into place ---------------------------------------------------------- */

static mn_status move_file(const struct entry *e, void *arg)
{
    (void)arg;
    if (rename(e->src, e->dst) != 0)
        return mn__err(MN_IO, "backup: cannot move %s to %s: %s", e->src, e->dst, strerror(errno));
    return MN_OK;
}

/* A session's outputs into the destination's tool-outputs (a file there is replaced by the
 * copy, which is what the message holds), its folder fsynced. */
static mn_status move_session(const struct entry *e, void *arg)
{
    (void)arg;
    mn_status rc = make_dir(e->to);
    if (!rc && !(rc = make_dir(e->dst)) && !(rc = each_entry(e->src, e->dst, move_file, NULL)))
        rc = mn__file_sync(e->dst);
    return rc;
}

static mn_status publish_offloads(const struct dest *d)
{
    char src[PATH_MAX + 16], dst[PATH_MAX + 16];
    snprintf(src, sizeof src, "%s/tool-outputs", d->tmp);
    snprintf(dst, sizeof dst, "%s/tool-outputs", d->dir);
    if (access(src, F_OK) != 0) /* none copied */
        return MN_OK;
    mn_status rc = each_entry(src, dst, move_session, NULL);
    return rc ? rc : mn__file_sync(dst);
}

/* The files beside the database: a journal by the name of one is refused (check_side), then
 * they are moved (move_side); the database and tool-outputs are not theirs to move. */
static int is_side(const struct entry *e, const struct dest *d)
{
    return strcmp(e->name, "tool-outputs") != 0 && strcmp(e->name, d->base) != 0;
}

static mn_status check_side(const struct entry *e, void *arg)
{
    const struct dest *d = arg;
    return is_side(e, d) ? check_journals(d->dir, e->name) : MN_OK;
}

static mn_status move_side(const struct entry *e, void *arg)
{
    return is_side(e, arg) ? move_file(e, NULL) : MN_OK;
}

/* Moves `from` to the new name `to`, never over a file: a name taken meanwhile is MN_CONFLICT. */
static mn_status move_new(const char *from, const char *to)
{
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return MN_OK;
    /* a file system without RENAME_NOREPLACE: a link refuses an existing name too */
    if ((errno == EINVAL || errno == ENOSYS) && link(from, to) == 0) {
        unlink(from);
        return MN_OK;
    }
    if (errno == EEXIST)
        return mn__err(MN_CONFLICT, "backup: %s appeared while the backup was written: the backup is not kept", to);
    return mn__err(MN_IO, "backup: cannot move the backup to %s: %s", to, strerror(errno));
}

/* The offloaded outputs, the files beside the database, then the database (checked for a
 * journal by its name again: one may have appeared); the folder fsynced. */
static mn_status publish(const struct dest *d)
{
    mn_status rc = check_journals(d->dir, d->base);
    if (!rc)
        rc = each_entry(d->tmp, d->dir, check_side, (void *)d);
    if (!rc)
        rc = publish_offloads(d);
    if (!rc)
        rc = each_entry(d->tmp, d->dir, move_side, (void *)d);
    if (!rc)
        rc = move_new(d->to, d->path);
    return rc ? rc : mn__file_sync(d->dir);
}

/* ---- the use case ----------------------------------------------------------------------------- */

/* The copies into d->tmp: the saved vector indexes and the offloaded outputs, then the database
 * and its keyword index from one snapshot. A vector index not copied (none saved) is removed
 * from the destination, where a deleted database's could be left. */
static mn_status write_copies(mn_db *db, const struct dest *d, mn_progress_fn progress, void *user)
{
    int copied[N_VECTOR_SUFFIXES] = {0};
    char from[PATH_MAX];
    mn_status rc = MN_OK;
    for (size_t i = 0; !rc && i < N_VECTOR_SUFFIXES; i++)
        rc = mn__vsearch_copy_saved(db->path, VECTOR_SUFFIXES[i], d->to, &copied[i]);
    /* the folder's outputs are shared by its databases: a backup beside the database has them */
    if (!rc && mn__store_target_folder(db->path, from, sizeof from) && !same_folder(from, d->dir)) {
        char src[PATH_MAX + 16], dst[PATH_MAX + 16];
        snprintf(src, sizeof src, "%s/tool-outputs", from);
        snprintf(dst, sizeof dst, "%s/tool-outputs", d->tmp);
        rc = each_entry(src, dst, copy_session, db);
    }
    if (!rc)
        rc = db->store->ops->backup(db->store, d->to, progress, user);
    for (size_t i = 0; !rc && i < N_VECTOR_SUFFIXES; i++)
        if (!copied[i])
            mn__vsearch_erase_saved(d->path, VECTOR_SUFFIXES[i]);
    return rc;
}

mn_status mn__backup_db(mn_db *db, const char *dest, mn_progress_fn progress, void *user)
{
    if (!db->store->ops->backup) /* PostgreSQL: the server's own tools copy it */
        return mn__err(MN_INVALID,
                       "backup: %s is a PostgreSQL database: back it up with PostgreSQL's own tools, pg_basebackup"
                       " (the whole server, with point-in-time recovery) or pg_dump (this database)",
                       db->store->label);
    if (!mn__store_target_local(db->path))
        return mn__err(MN_INVALID, "backup: %s has no file to copy (a database in memory, or a file: URI)",
                       db->store->label);
    struct dest d;
    mn_status rc = dest_parse(dest, &d);
    if (!rc)
        rc = check_dest(mn__store_target_path(db->path), &d);
    if (!rc)
        rc = make_tmp(&d);
    if (rc)
        return rc;
    rc = write_copies(db, &d, progress, user);
    if (!rc)
        rc = publish(&d);
    nftw(d.tmp, remove_entry, 16, FTW_DEPTH | FTW_PHYS); /* what is left: empty folders, or a failed copy */
    return rc;
}
