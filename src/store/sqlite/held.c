/*
 * held.c — the connection a thread holds (mn_sqlite_held, sqlite_int.h) and the runners built on
 * it, which the checkpoint and document operations share: inside begin…commit they run in that
 * transaction, inside a scan's callback on the scan's connection, and elsewhere take the handle's
 * lock (or a reader's) for themselves. Also the statement helpers the backend's files share
 * (prepare, bind, step, check, reset as one call; sqlite_int.h).
 */
#include <pthread.h>
#include <stdlib.h>

#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

_Thread_local struct mn_sqlite_held mn_sqlite_held;

mn_status mn__sqlite_run_write(mn_store *st, mn_sqlite_body body, mn_sqlite_body after, void *arg)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    const struct mn_sqlite_held *h = &mn_sqlite_held;
    if (h->handle == s && h->tx)
        return body(h->conn, arg);
    if (h->handle == s) /* the lock is the scan's: waiting for it would never end */
        return mn__err(MN_MISUSE, "a write from inside a scan's callback");
    pthread_mutex_lock(&s->lock);
    mn_status rc = mn__sqlite_begin_write(s);
    if (!rc && !(rc = mn__sqlite_end_write(s, body(s, arg))) && after)
        after(s, arg);
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static mn_status removed_committed(struct sqlite_store *s, void *arg)
{
    if (*(const int64_t *)arg > 0) /* the first member of the body's arg (sqlite_int.h) */
        mn__sqlite_wal_truncate(s);
    return MN_OK;
}

mn_status mn__sqlite_run_remove(mn_store *st, mn_sqlite_body body, void *arg, int64_t *removed)
{
    mn_status rc = mn__sqlite_run_write(st, body, removed_committed, arg);
    *removed = rc ? 0 : *(const int64_t *)arg;
    return rc;
}

mn_status mn__sqlite_run_read(mn_store *st, mn_sqlite_body body, void *arg)
{
    if (mn_sqlite_held.handle == (struct sqlite_store *)st)
        return body(mn_sqlite_held.conn, arg);
    struct sqlite_store *s = (struct sqlite_store *)mn__sqlite_reader(st);
    LOCKED(s, body(s, arg));
}

/* The body of a scan and its handle, for scan_body. */
struct scan_run {
    struct sqlite_store *handle;
    mn_sqlite_body body;
    void *arg;
};

static mn_status scan_body(struct sqlite_store *s, void *arg)
{
    struct scan_run *r = arg;
    struct mn_sqlite_held was = mn_sqlite_held;
    if (was.scan) /* its statements are running */
        return mn__err(MN_MISUSE, "a read from inside a read's callback");
    mn_sqlite_held = (struct mn_sqlite_held){r->handle, s, was.handle == r->handle && was.tx, 1};
    mn_status rc = r->body(s, r->arg);
    mn_sqlite_held = was;
    return rc;
}

mn_status mn__sqlite_run_scan(mn_store *st, mn_sqlite_body body, void *arg)
{
    struct scan_run r = {(struct sqlite_store *)st, body, arg};
    return mn__sqlite_run_read(st, scan_body, &r);
}

/* ---- statements ------------------------------------------------------------------------------ */

mn_status mn__sqlite_end_write(struct sqlite_store *s, mn_status rc)
{
    if (!rc)
        return mn__sqlite_commit(s);
    mn__sqlite_rollback(s);
    return rc;
}

/* Binds args to ?first, ?first+1, … of st, those past its last parameter left out. */
static void bind_args(sqlite3_stmt *st, int first, size_t n, const struct mn_sqlite_arg *args)
{
    int params = sqlite3_bind_parameter_count(st);
    for (int i = first; i <= params && (size_t)(i - first) < n; i++)
        if (args[i - first].is_text)
            mn__sqlite_bind_text(st, i, args[i - first].text);
        else
            sqlite3_bind_int64(st, i, args[i - first].num);
}

mn_status mn__sqlite_query(struct sqlite_store *s, const char *sql, sqlite3_stmt **out, size_t n,
                          const struct mn_sqlite_arg *args)
{
    mn_status rc = mn__sqlite_stmt(s, sql, out);
    if (!rc)
        bind_args(*out, 1, n, args);
    return rc;
}

mn_status mn__sqlite_session_query(struct sqlite_store *s, const char *session_id, const char *sql,
                                  sqlite3_stmt **out, int64_t *sid, size_t n, const struct mn_sqlite_arg *args)
{
    mn_status rc = mn__sqlite_session_sid(s, session_id, sid, NULL);
    if (rc || (rc = mn__sqlite_stmt(s, sql, out)))
        return rc;
    sqlite3_bind_int64(*out, 1, *sid);
    bind_args(*out, 2, n, args);
    return MN_OK;
}

mn_status mn__sqlite_each_message(struct sqlite_store *s, sqlite3_stmt *st, const char *session_id,
                                 mn_store_message_fn fn, void *user, const char *what)
{
    mn_status rc = MN_OK;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        mn_message m;
        if ((rc = mn__sqlite_row_message(s, st, session_id, &m)) || fn(user, &m))
            break;
    }
    return mn__sqlite_finish(s, st, r, rc, what);
}

mn_status mn__sqlite_finish(struct sqlite_store *s, sqlite3_stmt *st, int r, mn_status rc, const char *what)
{
    if (!rc && r != SQLITE_ROW && r != SQLITE_DONE)
        rc = mn__sqlite_fail(s, r, what);
    mn__sqlite_done(st);
    return rc;
}

mn_status mn__sqlite_run(struct sqlite_store *s, const char *sql, const char *what, size_t n,
                        const struct mn_sqlite_arg *args)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, sql, &st, n, args);
    return rc ? rc : mn__sqlite_step_done(s, st, what);
}

mn_status mn__sqlite_int(struct sqlite_store *s, const char *sql, const char *what, int64_t *out, int *found, size_t n,
                        const struct mn_sqlite_arg *args)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, sql, &st, n, args);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    *out = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (found)
        *found = r == SQLITE_ROW;
    return mn__sqlite_finish(s, st, r, MN_OK, what);
}

void *mn__sqlite_grow(void *items, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return items;
    size_t more = *cap ? *cap * 2 : first;
    void *p = realloc(items, more * size);
    if (p)
        *cap = more;
    return p;
}
