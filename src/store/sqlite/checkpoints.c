/*
 * checkpoints.c — the SQLite side of graph checkpoints (store_checkpoint.h): the rows of
 * checkpoints and checkpoint_writes (schema.h, version 15), which belong to a session and go
 * with it. A scan sorts the matching keys alone and reads each row's data only when it is handed
 * over, so a caller that stops after the newest never reads the others' data. Every operation
 * also runs between begin and commit, in that transaction, and a read also runs inside a scan's
 * callback, on the scan's connection (mn_sqlite_held and its runners, sqlite_int.h).
 */
#include <sqlite3.h>
#include <stdint.h>

#include "store/sqlite/sqlite_int.h"
#include "store/store_checkpoint.h"
#include "util/err.h"
#include "util/banned.h"

/* ---- put ------------------------------------------------------------------------------------- */

/* No row inserted or updated: no such session. An update, not a delete and insert, so that the
 * checkpoint's pending writes stay. */
static const char SQL_PUT[] =
    "INSERT INTO checkpoints (session_sid, checkpoint_ns, id, parent_id, type, data, metadata, created_at)"
    " SELECT sid, ?2, ?3, ?4, ?5, ?6, ?7, ?8 FROM sessions WHERE id = ?1"
    " ON CONFLICT (session_sid, checkpoint_ns, id) DO UPDATE SET parent_id = excluded.parent_id,"
    " type = excluded.type, data = excluded.data, metadata = excluded.metadata, created_at = excluded.created_at";

static mn_status put_body(struct sqlite_store *s, void *arg)
{
    const mn_checkpoint *cp = arg;
    mn_status rc = mn__sqlite_run(s, SQL_PUT, "checkpoint put",
                                  ARGS(ARG_TEXT(cp->session_id), ARG_TEXT(cp->checkpoint_ns), ARG_TEXT(cp->id),
                                       ARG_TEXT(cp->parent_id), ARG_TEXT(cp->type), ARG_TEXT(cp->data),
                                       ARG_TEXT(cp->metadata), ARG_INT(cp->created_at)));
    if (!rc && !sqlite3_changes(s->db))
        return mn__err(MN_NOTFOUND, "session %s not found", cp->session_id);
    return rc;
}

static mn_status op_put(mn_store *st, const mn_checkpoint *cp)
{
    return mn__sqlite_run_write(st, put_body, NULL, (void *)cp);
}

/* ---- pending writes -------------------------------------------------------------------------- */

struct write_arg {
    const char *session_id, *checkpoint_ns, *checkpoint_id;
    const mn_checkpoint_write *w;
    int replace;
    mn_store_checkpoint_write_fn fn;
    void *user;
};

#define WRITE_INSERT                                                                                                 \
    "INSERT INTO checkpoint_writes (session_sid, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value,"  \
    " task_path) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, coalesce(?9, ''))"                                          \
    " ON CONFLICT (session_sid, checkpoint_ns, checkpoint_id, task_id, idx) DO "
static const char SQL_WRITE_REPLACE[] = WRITE_INSERT "UPDATE SET channel = excluded.channel, type = excluded.type,"
                                                     " value = excluded.value, task_path = excluded.task_path";
static const char SQL_WRITE_KEEP[] = WRITE_INSERT "NOTHING";

/* The checkpoint need not be stored yet (the writes of a step may come before it). */
static mn_status write_put_body(struct sqlite_store *s, void *arg)
{
    struct write_arg *a = arg;
    const mn_checkpoint_write *w = a->w;
    int64_t sid = 0;
    mn_status rc = mn__sqlite_session_sid(s, a->session_id, &sid, NULL);
    return rc ? rc
              : mn__sqlite_run(s, a->replace ? SQL_WRITE_REPLACE : SQL_WRITE_KEEP, "checkpoint write",
                               ARGS(ARG_INT(sid), ARG_TEXT(a->checkpoint_ns), ARG_TEXT(a->checkpoint_id),
                                    ARG_TEXT(w->task_id), ARG_INT(w->idx), ARG_TEXT(w->channel), ARG_TEXT(w->type),
                                    ARG_TEXT(w->value), ARG_TEXT(w->task_path)));
}

static mn_status op_write_put(mn_store *st, const char *session_id, const char *checkpoint_ns,
                              const char *checkpoint_id, const mn_checkpoint_write *w, int replace)
{
    struct write_arg a = {session_id, checkpoint_ns, checkpoint_id, w, replace, NULL, NULL};
    return mn__sqlite_run_write(st, write_put_body, NULL, &a);
}

static const char SQL_WRITES[] =
    "SELECT w.task_id, w.task_path, w.idx, w.channel, w.type, w.value FROM sessions s"
    " JOIN checkpoint_writes w ON w.session_sid = s.sid"
    " WHERE s.id = ?1 AND w.checkpoint_ns = ?2 AND w.checkpoint_id = ?3 ORDER BY w.task_path, w.task_id, w.idx";

static mn_status writes_body(struct sqlite_store *s, void *arg)
{
    struct write_arg *a = arg;
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_WRITES, &st);
    if (rc)
        return rc;
    if (sqlite3_stmt_busy(st)) /* one statement a connection: its own callback cannot run it again */
        return mn__err(MN_MISUSE, "checkpoint writes read from inside their own callback");
    mn__sqlite_bind_text(st, 1, a->session_id);
    mn__sqlite_bind_text(st, 2, a->checkpoint_ns);
    mn__sqlite_bind_text(st, 3, a->checkpoint_id);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        mn_checkpoint_write w = {mn__sqlite_col_text(st, 0), mn__sqlite_col_text(st, 1), sqlite3_column_int64(st, 2),
                                 mn__sqlite_col_text(st, 3), mn__sqlite_col_text(st, 4), mn__sqlite_col_text(st, 5)};
        if (a->fn(a->user, &w))
            break;
    }
    return mn__sqlite_finish(s, st, r, rc, "checkpoint writes");
}

static mn_status op_writes(mn_store *st, const char *session_id, const char *checkpoint_ns,
                           const char *checkpoint_id, mn_store_checkpoint_write_fn fn, void *user)
{
    struct write_arg a = {session_id, checkpoint_ns, checkpoint_id, NULL, 0, fn, user};
    return mn__sqlite_run_read(st, writes_body, &a);
}

/* ---- scan ------------------------------------------------------------------------------------ */

/* The keys of the matching checkpoints (key, session id, sid, checkpoint_ns, id), in the scan's
 * order, sorted from the primary key's index (no row read): one session's, those of each
 * session of a namespace, or every one (ns NULL). NULL filters match anything; ids compare as
 * bytes. */
#define SCAN_KEYS(sessions)                                                                                          \
    "SELECT s.key, s.id, c.session_sid, c.checkpoint_ns, c.id FROM sessions s"                                       \
    " JOIN checkpoints c ON c.session_sid = s.sid WHERE " sessions                                                   \
    " AND (?3 IS NULL OR c.checkpoint_ns = ?3) AND (?4 IS NULL OR c.id = ?4) AND (?5 IS NULL OR c.id < ?5)"          \
    " ORDER BY c.id DESC, s.id, c.checkpoint_ns"
static const char SQL_SCAN_SESSION[] = SCAN_KEYS("s.id = ?2 AND (?1 IS NULL OR s.namespace = ?1)");
static const char SQL_SCAN_NS[] = SCAN_KEYS("s.namespace = ?1");
static const char SQL_SCAN_ALL[] = SCAN_KEYS("?1 IS NULL");
static const char SQL_SCAN_ROW[] = "SELECT parent_id, type, data, metadata, created_at FROM checkpoints"
                                   " WHERE session_sid = ?1 AND checkpoint_ns = ?2 AND id = ?3";

struct scan_arg {
    const mn_store_checkpoint_scan *q;
    mn_store_checkpoint_fn fn;
    void *user;
};

/* Hands one key row's checkpoint to fn (read by its key in the keys' read transaction: their
 * statement is still running). *stop: fn asked to stop. */
static mn_status scan_emit(struct sqlite_store *s, sqlite3_stmt *keys, struct scan_arg *a, int *stop)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_SCAN_ROW, &st,
                                    ARGS(ARG_INT(sqlite3_column_int64(keys, 2)), ARG_TEXT(mn__sqlite_col_text(keys, 3)),
                                         ARG_TEXT(mn__sqlite_col_text(keys, 4))));
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        mn_checkpoint cp = {.thread = mn__sqlite_col_text(keys, 0),
                            .session_id = mn__sqlite_col_text(keys, 1),
                            .checkpoint_ns = mn__sqlite_col_text(keys, 3),
                            .id = mn__sqlite_col_text(keys, 4),
                            .parent_id = mn__sqlite_col_text(st, 0),
                            .type = mn__sqlite_col_text(st, 1),
                            .data = mn__sqlite_col_text(st, 2),
                            .metadata = mn__sqlite_col_text(st, 3),
                            .created_at = sqlite3_column_int64(st, 4)};
        *stop = a->fn(a->user, &cp) != 0;
    } else if (r == SQLITE_DONE) /* the keys' read transaction saw it: the file disagrees with itself */
        rc = MN_CORRUPT_AT("checkpoint scan: %s: checkpoint %s listed but not found", s->path,
                           mn__sqlite_col_text(keys, 4));
    return mn__sqlite_finish(s, st, r, rc, "checkpoint scan");
}

static mn_status scan_rows(struct sqlite_store *s, void *arg)
{
    struct scan_arg *a = arg;
    const mn_store_checkpoint_scan *q = a->q;
    sqlite3_stmt *keys = NULL;
    mn_status rc = mn__sqlite_query(s, q->session_id ? SQL_SCAN_SESSION : q->ns ? SQL_SCAN_NS : SQL_SCAN_ALL, &keys,
                                    ARGS(ARG_TEXT(q->ns), ARG_TEXT(q->session_id), ARG_TEXT(q->checkpoint_ns),
                                         ARG_TEXT(q->id), ARG_TEXT(q->before)));
    if (rc)
        return rc;
    int r, stop = 0;
    while (!rc && !stop && (r = sqlite3_step(keys)) == SQLITE_ROW)
        rc = scan_emit(s, keys, a, &stop);
    return mn__sqlite_finish(s, keys, r, rc, "checkpoint scan");
}

static mn_status op_scan(mn_store *st, const mn_store_checkpoint_scan *q, mn_store_checkpoint_fn fn, void *user)
{
    struct scan_arg a = {q, fn, user}; /* the callback may read pending writes on the scan's connection */
    return mn__sqlite_run_scan(st, scan_rows, &a);
}

/* ---- remove ---------------------------------------------------------------------------------- */

static const char SQL_REMOVE_WRITES[] =
    "DELETE FROM checkpoint_writes WHERE session_sid = (SELECT sid FROM sessions WHERE id = ?1)";
static const char SQL_REMOVE[] = "DELETE FROM checkpoints WHERE session_sid = (SELECT sid FROM sessions WHERE id = ?1)";

struct remove_arg {
    int64_t removed; /* first: mn__sqlite_run_remove reads it */
    const char *session_id;
};

static mn_status remove_body(struct sqlite_store *s, void *arg)
{
    struct remove_arg *a = arg;
    mn_status rc = mn__sqlite_run(s, SQL_REMOVE_WRITES, "checkpoint remove", ARGS(ARG_TEXT(a->session_id)));
    if (rc || (rc = mn__sqlite_run(s, SQL_REMOVE, "checkpoint remove", ARGS(ARG_TEXT(a->session_id)))))
        return rc;
    a->removed = sqlite3_changes(s->db);
    return MN_OK;
}

static mn_status op_remove(mn_store *st, const char *session_id, int64_t *removed)
{
    struct remove_arg a = {0, session_id};
    return mn__sqlite_run_remove(st, remove_body, &a, removed);
}

const struct mn_store_checkpoint_ops mn_sqlite_checkpoint_ops = {
    .put = op_put,
    .write_put = op_write_put,
    .scan = op_scan,
    .writes = op_writes,
    .remove = op_remove,
};
