/*
 * erase.c — the SQLite backend's session deletes (delete, prune, gc), which erase: the deleted
 * messages' text leaves the keyword index and its log in the same transaction, freed pages are
 * overwritten (PRAGMA secure_delete, set at open), and the WAL is truncated after the commit so
 * that no old page image stays in it. Policy and guarantees: docs/erasure.md.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>

#include "store/records.h"
#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

static const char SQL_SESSION_DELETE[] = "DELETE FROM sessions WHERE id = ?1 RETURNING id";
static const char SQL_SESSION_PRUNE[] =
    "DELETE FROM sessions WHERE updated_minute <= ?1 / 60000 AND updated_at < ?1 RETURNING id";
static const char SQL_SESSION_GC[] = "DELETE FROM sessions WHERE expires_at > 0 AND expires_at <= ?1 RETURNING id";

void mn__sqlite_wal_truncate(struct sqlite_store *s)
{
    /* Frames of earlier transactions (the message's insert among them) stay in the WAL file until
     * it is reset; TRUNCATE checkpoints and empties it. A reader in the middle of a transaction
     * makes it give up (busy): the next checkpoint resets the log then. */
    if (sqlite3_wal_checkpoint_v2(s->db, "main", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL) != SQLITE_OK)
        mn__log(MN_LOG_INFO, "%s: WAL not truncated after a delete: %s", s->path, sqlite3_errmsg(s->db));
}

void mn__sqlite_erased(struct sqlite_store *s)
{
    mn__sqlite_fts_erase(s);
    mn__sqlite_wal_truncate(s);
}

/* Runs one of the deletes above (text or number bound to ?1) in a write transaction; collects the
 * deleted ids into l (may be NULL). */
static mn_status delete_txn(struct sqlite_store *s, const char *sql, const char *text, int64_t num, int64_t *n,
                            struct mn_strings_impl *l)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, sql, &st, ARGS(text ? ARG_TEXT(text) : ARG_INT(num)));
    if (rc)
        return rc;
    int r;
    *n = 0;
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
        ++*n;
        if (l && mn__records_strings_push(l, mn__sqlite_col_text(st, 0)))
            rc = mn__nomem();
    }
    return mn__sqlite_finish(s, st, r, rc, "delete");
}

static mn_status delete_locked(struct sqlite_store *s, const char *sql, const char *text, int64_t num, int64_t *n,
                               mn_strings **ids)
{
    struct mn_strings_impl *l = NULL;
    if (ids && !(l = calloc(1, sizeof *l)))
        return mn__nomem();
    mn_status rc = mn__sqlite_begin_write(s);
    if (!rc)
        rc = mn__sqlite_end_write(s, delete_txn(s, sql, text, num, n, l));
    if (!rc && *n > 0)
        mn__sqlite_erased(s);
    if (rc) {
        if (l)
            mn_strings_free(&l->pub);
        *n = 0;
        return rc;
    }
    if (ids)
        *ids = &l->pub;
    return MN_OK;
}

mn_status mn__sqlite_op_session_delete(mn_store *st, const char *id)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int64_t n = 0;
    pthread_mutex_lock(&s->lock);
    mn_status rc = delete_locked(s, SQL_SESSION_DELETE, id, 0, &n, NULL);
    pthread_mutex_unlock(&s->lock);
    if (!rc && n == 0)
        rc = mn__err(MN_NOTFOUND, "session %s not found", id);
    return rc;
}

mn_status mn__sqlite_op_session_prune(mn_store *st, int64_t before_ms, int64_t *deleted, mn_strings **ids)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, delete_locked(s, SQL_SESSION_PRUNE, NULL, before_ms, deleted, ids));
}

mn_status mn__sqlite_op_session_gc(mn_store *st, int64_t now_ms, int64_t *purged, mn_strings **ids)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, delete_locked(s, SQL_SESSION_GC, NULL, now_ms, purged, ids));
}

static mn_status vacuum_locked(struct sqlite_store *s)
{
    int r = sqlite3_exec(s->db, "VACUUM", NULL, NULL, NULL);
    if (r != SQLITE_OK)
        return mn__sqlite_fail(s, r, "vacuum");
    mn__sqlite_wal_truncate(s);
    if (!s->kw)
        return MN_OK;
    /* the keyword index's file too (its merges free whole segments), on its own connection */
    pthread_mutex_lock(&s->kw->lock);
    r = sqlite3_exec(s->kw->db, "VACUUM kw", NULL, NULL, NULL);
    mn_status rc = r == SQLITE_OK ? MN_OK : mn__sqlite_fail(s->kw, r, "vacuum of the keyword index");
    if (!rc)
        sqlite3_wal_checkpoint_v2(s->kw->db, "kw", SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
    pthread_mutex_unlock(&s->kw->lock);
    return rc;
}

mn_status mn__sqlite_op_vacuum(mn_store *st)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, vacuum_locked(s));
}
