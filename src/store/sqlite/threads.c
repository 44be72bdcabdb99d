/*
 * threads.c — the SQLite side of threads and session state: file lists and content hashes, and
 * state updates as one read-modify-write transaction (so concurrent merges never lose each
 * other). A fork is src/engine/fork.c's, over the row primitives.
 */
#include <stdlib.h>
#include <string.h>

#include "store/records.h"
#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

/* ---- files ----------------------------------------------------------------------------------- */

/* Seed 002's walk: messages newest first, each one's files in the order it lists them (j.key,
 * the array index); a path keeps the place of its first occurrence in that walk. Paths are
 * compared as strings: "a.c" and "./a.c" are two files. */
static const char SQL_FILES[] =
    "SELECT path FROM (SELECT j.value AS path, m.seq AS seq, j.key AS at,"
    " row_number() OVER (PARTITION BY j.value ORDER BY m.seq DESC, j.key) AS nth"
    " FROM messages m, json_each(m.files) j"
    " WHERE " MN_SQLITE_IN_SESSION("m.pos", "?1") " AND m.files IS NOT NULL AND j.type = 'text')"
    " WHERE nth = 1 ORDER BY seq DESC, at";

static mn_status files_locked(struct sqlite_store *s, const char *id, mn_strings **out)
{
    int64_t sid = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_session_query(s, id, SQL_FILES, &st, &sid, 0, NULL);
    if (rc)
        return rc;
    struct mn_strings_impl *l = calloc(1, sizeof *l);
    if (!l) {
        mn__sqlite_done(st);
        return mn__nomem();
    }
    int r;
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
        if (mn__records_strings_push(l, mn__sqlite_col_text(st, 0)))
            rc = mn__nomem();
    if ((rc = mn__sqlite_finish(s, st, r, rc, "files"))) {
        mn_strings_free(&l->pub);
        return rc;
    }
    *out = &l->pub;
    return MN_OK;
}

mn_status mn__sqlite_op_session_files(mn_store *st, const char *id, mn_strings **out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, files_locked(s, id, out));
}

/* Seed 002's FileDeduplicator keeps, per content, the path it was first seen under: the same
 * content is skipped under that path and included under any other, every time. So a row is
 * written only for content new to the session; a database of an earlier version may hold more
 * rows per content, of which the earliest (then the smallest path) is the first. */
static const char SQL_FILE_FIRST_PATH[] =
    "SELECT path FROM file_hashes WHERE session_sid = ?1 AND sha256 = ?2 ORDER BY first_seen, path LIMIT 1";
static const char SQL_FILE_SEEN[] =
    "INSERT INTO file_hashes (session_sid, path, sha256, first_seen) VALUES (?1, ?2, ?3, ?4)";

static mn_status file_seen_txn(struct sqlite_store *s, const char *id, const char *path, const char *sha,
                               int64_t now_ms, int *include)
{
    int64_t sid = 0;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_session_query(s, id, SQL_FILE_FIRST_PATH, &st, &sid, ARGS(ARG_TEXT(sha)));
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW)
        *include = strcmp(mn__sqlite_col_text(st, 0), path) != 0;
    if ((rc = mn__sqlite_finish(s, st, r, MN_OK, "file hash")) || r == SQLITE_ROW)
        return rc; /* a row: seen before, nothing to record */
    rc = mn__sqlite_run(s, SQL_FILE_SEEN, "file hash",
                        ARGS(ARG_INT(sid), ARG_TEXT(path), ARG_TEXT(sha), ARG_INT(now_ms)));
    if (!rc)
        *include = 1;
    return rc;
}

static mn_status file_seen_locked(struct sqlite_store *s, const char *id, const char *path, const char *sha,
                                  int64_t now_ms, int *include)
{
    mn_status rc = mn__sqlite_begin_write(s);
    return rc ? rc : mn__sqlite_end_write(s, file_seen_txn(s, id, path, sha, now_ms, include));
}

mn_status mn__sqlite_op_file_seen(mn_store *st, const char *id, const char *path, const char *sha256, int64_t now_ms,
                                 int *include)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, file_seen_locked(s, id, path, sha256, now_ms, include));
}

/* ---- state ----------------------------------------------------------------------------------- */

static const char SQL_STATE_GET[] = "SELECT state FROM sessions WHERE id = ?1";
static const char SQL_STATE_SET[] = "UPDATE sessions SET state = ?2 WHERE id = ?1";

static mn_status state_read(struct sqlite_store *s, const char *id, char **out)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_STATE_GET, &st, ARGS(ARG_TEXT(id)));
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    *out = NULL;
    if (r == SQLITE_ROW) {
        const char *v = mn__sqlite_col_text(st, 0);
        if (v && !(*out = strdup(v)))
            rc = mn__nomem();
    } else if (r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "session %s not found", id);
    return mn__sqlite_finish(s, st, r, rc, "state");
}

mn_status mn__sqlite_op_state_get(mn_store *st, const char *id, char **out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, state_read(s, id, out));
}

static mn_status state_update_txn(struct sqlite_store *s, const char *id,
                                  mn_status (*fn)(void *user, const char *current, char **next), void *user)
{
    char *current = NULL, *next = NULL;
    mn_status rc = state_read(s, id, &current);
    if (!rc)
        rc = fn(user, current, &next);
    if (!rc)
        rc = mn__sqlite_run(s, SQL_STATE_SET, "state", ARGS(ARG_TEXT(id), ARG_TEXT(next)));
    free(current);
    free(next);
    return rc;
}

static mn_status state_update_locked(struct sqlite_store *s, const char *id,
                                     mn_status (*fn)(void *user, const char *current, char **next), void *user)
{
    mn_status rc = mn__sqlite_begin_write(s);
    return rc ? rc : mn__sqlite_end_write(s, state_update_txn(s, id, fn, user));
}

mn_status mn__sqlite_op_state_update(mn_store *st, const char *id,
                                    mn_status (*fn)(void *user, const char *current, char **next), void *user)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, state_update_locked(s, id, fn, user));
}
