/*
 * held.c — the connection a thread holds (mn_sqlite_held, sqlite_int.h) and the two runners
 * built on it, which the checkpoint and document operations share: inside begin…commit they run
 * in that transaction, inside a scan's callback on the scan's connection, and elsewhere take the
 * handle's lock (or a reader's) for themselves.
 */
#include <pthread.h>

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
    if (!rc && (rc = body(s, arg)))
        mn__sqlite_rollback(s);
    else if (!rc && !(rc = mn__sqlite_commit(s)) && after)
        after(s, arg);
    pthread_mutex_unlock(&s->lock);
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
