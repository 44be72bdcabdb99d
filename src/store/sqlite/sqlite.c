/*
 * sqlite.c — the SQLite backend of store.h: one database file in WAL mode, foreign keys on,
 * prepared statements kept for the life of the handle, writes in BEGIN IMMEDIATE transactions,
 * and a busy handler that backs off exponentially up to the configured bound.
 * Schema and migrations: schema.h. Format notes: docs/format.md.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/records.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_int.h"
#include "store/store.h"
#include "store/store_append.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

_Static_assert(MN_SQLITE_SCHEMA_VERSION == MN_SCHEMA_VERSION_SQLITE, "store.h names the version schema.h reaches");

#define SESSION_COLS MN_SQLITE_SESSION_COLS
#define MESSAGE_COLS MN_SQLITE_MESSAGE_COLS

enum stmt_id {
    S_BEGIN_WRITE,
    S_BEGIN_READ,
    S_COMMIT,
    S_ROLLBACK,
    S_SESSION_INSERT,
    S_SESSION_BY_KEY,
    S_SESSION_GET,
    S_SESSION_SID,
    S_SESSION_APPENDED,
    S_SESSION_LIST_NS,
    S_SESSION_LIST_ALL,
    S_SESSION_ALL_BY_CREATED,
    S_MESSAGE_INSERT,
    S_MESSAGE_BY_IDEM,
    S_MESSAGE_SCAN_DESC,
    S_HISTORY_ASC,
    S_HISTORY_TAIL,
    S_MESSAGE_SEQ_EXISTS,
    S_MESSAGE_ID_EXISTS,
    S_MESSAGE_IMPORT,
    S_SESSION_IMPORTED_MESSAGE,
    S_STATS,
    S_META_GET,
    S_META_SET,
    S_RECOUNT_READ,
    S_RECOUNT_WRITE,
    S_RECOUNT_SESSIONS,
    S_MESSAGE_TOTAL,
    S_COUNT
};
_Static_assert(S_COUNT <= MN_SQLITE_CORE_STMTS, "raise MN_SQLITE_CORE_STMTS");

static const char *const stmt_sql[S_COUNT] = {
    [S_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [S_BEGIN_READ] = "BEGIN",
    [S_COMMIT] = "COMMIT",
    [S_ROLLBACK] = "ROLLBACK",
    [S_SESSION_INSERT] = "INSERT INTO sessions (id, namespace, title, system_prompt, metadata, tool_name, parent_id,"
                         " created_at, updated_at, expires_at, ttl_ms, max_turns, cleared_seq,"
                         " cleared_from, key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    [S_SESSION_BY_KEY] = "SELECT " SESSION_COLS " FROM sessions WHERE namespace = ?1 AND key = ?2",
    [S_SESSION_GET] = "SELECT " SESSION_COLS " FROM sessions WHERE id = ?1",
    [S_SESSION_SID] = "SELECT sid, last_seq, expires_at, ttl_ms, max_turns, namespace, title IS NOT NULL"
                      " FROM sessions WHERE id = ?1",
    /* NULL title (?6) and 0 expiry (?9): leave them (the append decides, src/engine/append.c). */
    [S_SESSION_APPENDED] = "UPDATE sessions SET last_seq = ?2, message_count = message_count + ?3,"
                           " token_count = token_count + ?4, updated_at = ?5, turn_count = turn_count + ?7,"
                           " title = coalesce(?6, title), title_seq = CASE WHEN ?6 IS NULL THEN title_seq ELSE ?8 END,"
                           " expires_at = CASE WHEN ?9 > 0 THEN ?9 ELSE expires_at END WHERE sid = ?1",
    [S_SESSION_LIST_NS] = "SELECT " SESSION_COLS " FROM sessions WHERE namespace = ?1"
                          " ORDER BY updated_minute DESC, updated_at DESC, sid DESC LIMIT ?2 OFFSET ?3",
    [S_SESSION_LIST_ALL] = "SELECT " SESSION_COLS " FROM sessions"
                           " ORDER BY updated_minute DESC, updated_at DESC, sid DESC LIMIT ?2 OFFSET ?3",
    [S_SESSION_ALL_BY_CREATED] = "SELECT " SESSION_COLS " FROM sessions ORDER BY created_at, id",
    [S_MESSAGE_INSERT] = "INSERT INTO messages (session_sid, seq, role, content, tool_calls, tool_call_id, name,"
                         " tool_name, model, files, metadata, idem_key, tokens, pinned, created_at, id, pos)"
                         " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                         MN_SQLITE_LAST_ID " + 1, " MN_SQLITE_POS("?1", "?2") ") RETURNING id",
    [S_MESSAGE_BY_IDEM] = "SELECT " MESSAGE_COLS " FROM messages WHERE session_sid = ?1 AND idem_key = ?2",
    [S_MESSAGE_SCAN_DESC] = "SELECT " MESSAGE_COLS " FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1")
                            " AND active = 1 ORDER BY pos DESC",
    [S_HISTORY_ASC] = "SELECT " MESSAGE_COLS " FROM messages WHERE " MN_SQLITE_AFTER_SEQ("pos", "?1", "?2")
                      " AND active >= ?4 ORDER BY pos LIMIT ?3",
    [S_HISTORY_TAIL] = "SELECT " MESSAGE_COLS " FROM messages WHERE " MN_SQLITE_AFTER_SEQ("pos", "?1", "?2")
                       " AND active >= ?4 ORDER BY pos DESC LIMIT ?3",
    [S_MESSAGE_SEQ_EXISTS] = "SELECT 1 FROM messages WHERE pos = " MN_SQLITE_POS("?1", "?2") " AND session_sid = ?1",
    [S_MESSAGE_ID_EXISTS] = "SELECT 1 FROM messages WHERE id = ?1",
    [S_MESSAGE_IMPORT] = "INSERT INTO messages (id, session_sid, seq, role, content, tool_calls, tool_call_id, name,"
                         " tool_name, model, files, metadata, idem_key, tokens, pinned, created_at, active, pos)"
                         " VALUES (coalesce(?16, " MN_SQLITE_LAST_ID " + 1), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9,"
                         " ?10, ?11, ?12, ?13, ?14, ?15, ?17, " MN_SQLITE_POS("?1", "?2") ") RETURNING id",
    [S_SESSION_IMPORTED_MESSAGE] = "UPDATE sessions SET last_seq = max(last_seq, ?2), message_count = message_count + 1,"
                                   " token_count = token_count + ?3, turn_count = turn_count + ?4,"
                                   " inactive_count = inactive_count + ?5 WHERE sid = ?1",
    [S_STATS] = "SELECT count(*), coalesce(sum(message_count), 0), coalesce(sum(token_count), 0),"
                " coalesce(sum(ttl_ms > 0), 0), coalesce(sum(turn_count), 0),"
                " coalesce(sum(expires_at > 0 AND expires_at <= ?1), 0) FROM sessions",
    [S_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [S_RECOUNT_READ] = "SELECT id, content, tool_calls, name, tool_call_id FROM messages WHERE id > ?1 ORDER BY id LIMIT ?2",
    [S_RECOUNT_WRITE] = "UPDATE messages SET tokens = ?2 WHERE id = ?1",
    [S_RECOUNT_SESSIONS] = "UPDATE sessions SET token_count ="
                           " (SELECT coalesce(sum(tokens), 0) FROM messages WHERE "
                           MN_SQLITE_IN_SESSION("pos", "sessions.sid") ")",
    [S_MESSAGE_TOTAL] = "SELECT count(*) FROM messages",
    [S_META_SET] = "INSERT INTO meta (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
};



/* ---- errors ---------------------------------------------------------------------------------- */

mn_status mn__sqlite_fail(struct sqlite_store *s, int rc, const char *what)
{
    int primary = rc & 0xFF;
    const char *msg = s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc);
    switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return mn__err(MN_BUSY, "%s: database %s is locked by another writer for more than %lld ms"
                       " (memory.busy_timeout_ms)", what, s->path, (long long)s->busy_timeout_ms);
    case SQLITE_NOTADB:
        return mn__err(MN_CORRUPT, "%s: %s is not a SQLite database (%s)", what, s->path, msg);
    case SQLITE_CORRUPT:
        return MN_CORRUPT_AT("%s: database %s is corrupt or not a SQLite database: %s", what, s->path, msg);
    case SQLITE_NOMEM:
        return mn__nomem();
    case SQLITE_CONSTRAINT:
        return mn__err(MN_CONFLICT, "%s: %s", what, msg);
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
        return mn__err(MN_IO, "%s: %s: %s", what, s->path, msg);
    default:
        return mn__err(MN_INTERNAL, "%s: %s (sqlite %d)", what, msg, rc);
    }
}

/* ---- statements ------------------------------------------------------------------------------ */

mn_status mn__sqlite_stmt(struct sqlite_store *s, const char *sql, sqlite3_stmt **out)
{
    for (size_t i = 0; i < s->n_extra; i++)
        if (s->extra[i].sql == sql) {
            *out = s->extra[i].st;
            return MN_OK;
        }
    if (s->n_extra == sizeof s->extra / sizeof s->extra[0])
        return mn__err(MN_INTERNAL, "sqlite: statement cache full");
    int rc = sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL);
    if (rc != SQLITE_OK)
        return mn__sqlite_fail(s, rc, "prepare");
    s->extra[s->n_extra].sql = sql;
    s->extra[s->n_extra++].st = *out;
    return MN_OK;
}

mn_status mn__sqlite_step_done(struct sqlite_store *s, sqlite3_stmt *st, const char *what)
{
    int r = sqlite3_step(st);
    mn__sqlite_done(st);
    return r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, what);
}

mn_status mn__sqlite_exec_stmt(struct sqlite_store *s, const char *sql, const char *what)
{
    sqlite3_stmt *st;
    mn_status rc = mn__sqlite_stmt(s, sql, &st);
    return rc ? rc : mn__sqlite_step_done(s, st, what);
}

static mn_status prep(struct sqlite_store *s, enum stmt_id id, sqlite3_stmt **out)
{
    if (!s->stmt[id]) {
        int rc = sqlite3_prepare_v3(s->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[id], NULL);
        if (rc != SQLITE_OK)
            return mn__sqlite_fail(s, rc, "prepare");
    }
    *out = s->stmt[id];
    return MN_OK;
}

void mn__sqlite_done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

void mn__sqlite_bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* Runs a statement that returns no rows. */
static mn_status run(struct sqlite_store *s, enum stmt_id id, const char *what)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, id, &st);
    if (rc)
        return rc;
    int r = sqlite3_step(st);
    mn__sqlite_done(st);
    return r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, what);
}

mn_status mn__sqlite_begin_write(struct sqlite_store *s)
{
    s->busy_started_ns = 0;
    return run(s, S_BEGIN_WRITE, "begin");
}

mn_status mn__sqlite_commit(struct sqlite_store *s)
{
    mn_status rc = run(s, S_COMMIT, "commit");
    if (rc && !sqlite3_get_autocommit(s->db))
        run(s, S_ROLLBACK, "rollback");
    return rc;
}

void mn__sqlite_rollback(struct sqlite_store *s)
{
    if (!sqlite3_get_autocommit(s->db))
        run(s, S_ROLLBACK, "rollback");
}

/* ---- rows ------------------------------------------------------------------------------------ */

const char *mn__sqlite_col_text(sqlite3_stmt *st, int i) { return (const char *)sqlite3_column_text(st, i); }

void mn__sqlite_row_session(sqlite3_stmt *st, mn_session *out)
{
    memset(out, 0, sizeof *out);
    out->id = mn__sqlite_col_text(st, 0);
    out->ns = mn__sqlite_col_text(st, 1);
    out->title = mn__sqlite_col_text(st, 2);
    out->system_prompt = mn__sqlite_col_text(st, 3);
    out->metadata = mn__sqlite_col_text(st, 4);
    out->tool_name = mn__sqlite_col_text(st, 5);
    out->parent_id = mn__sqlite_col_text(st, 6);
    out->created_at = sqlite3_column_int64(st, 7);
    out->updated_at = sqlite3_column_int64(st, 8);
    out->expires_at = sqlite3_column_int64(st, 9);
    out->message_count = sqlite3_column_int64(st, 10);
    out->token_count = sqlite3_column_int64(st, 11);
    out->ttl_ms = sqlite3_column_int64(st, 12);
    out->max_turns = sqlite3_column_int64(st, 13);
    out->turn_count = sqlite3_column_int64(st, 14);
    out->inactive_count = sqlite3_column_int64(st, 15);
    out->cleared_seq = sqlite3_column_int64(st, 16);
    out->cleared_from = sqlite3_column_int64(st, 17);
    out->key = mn__sqlite_col_text(st, 18);
    if (!out->metadata)
        out->metadata = "{}";
}

mn_status mn__sqlite_row_message(struct sqlite_store *s, sqlite3_stmt *st, const char *session_id, mn_message *out)
{
    memset(out, 0, sizeof *out);
    out->id = sqlite3_column_int64(st, 0);
    out->session_id = session_id;
    out->seq = sqlite3_column_int64(st, 1);
    if (mn_role_parse(mn__sqlite_col_text(st, 2), &out->role) != MN_OK)
        return MN_CORRUPT_AT("database %s: message %lld has an unknown role", s->path, (long long)out->id);
    out->content = mn__sqlite_col_text(st, 3);
    out->tool_calls = mn__sqlite_col_text(st, 4);
    out->tool_call_id = mn__sqlite_col_text(st, 5);
    out->name = mn__sqlite_col_text(st, 6);
    out->tool_name = mn__sqlite_col_text(st, 7);
    out->model = mn__sqlite_col_text(st, 8);
    out->files = mn__sqlite_col_text(st, 9);
    out->metadata = mn__sqlite_col_text(st, 10);
    out->idempotency_key = mn__sqlite_col_text(st, 11);
    out->tokens = sqlite3_column_int64(st, 12);
    out->pinned = sqlite3_column_int(st, 13);
    out->created_at = sqlite3_column_int64(st, 14);
    out->active = sqlite3_column_int(st, 15);
    if (!out->metadata)
        out->metadata = "{}";
    return MN_OK;
}

/* What an append reads of session id's row (S_SESSION_SID); MN_NOTFOUND when missing. */
static mn_status session_row(struct sqlite_store *s, const char *id, mn_store_append_row *out)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_SESSION_SID, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, id);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->sid = sqlite3_column_int64(st, 0);
        out->last_seq = sqlite3_column_int64(st, 1);
        out->expires_at = sqlite3_column_int64(st, 2);
        out->ttl_ms = sqlite3_column_int64(st, 3);
        out->max_turns = sqlite3_column_int64(st, 4);
        snprintf(out->ns, sizeof out->ns, "%s", (const char *)sqlite3_column_text(st, 5));
        out->titled = sqlite3_column_int(st, 6);
    } else if (r == SQLITE_DONE)
        rc = mn__err(MN_NOTFOUND, "session %s not found", id);
    return mn__sqlite_finish(s, st, r, rc, "session lookup");
}

/* Looks up the internal sid and last seq of a session; MN_NOTFOUND when missing. */
mn_status mn__sqlite_session_sid(struct sqlite_store *s, const char *id, int64_t *sid, int64_t *last_seq)
{
    mn_store_append_row row;
    mn_status rc = session_row(s, id, &row);
    *sid = rc ? 0 : row.sid;
    if (last_seq)
        *last_seq = rc ? 0 : row.last_seq;
    return rc;
}

/* ---- operations ------------------------------------------------------------------------------ */


static mn_status insert_session(struct sqlite_store *s, const mn_session *in)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_SESSION_INSERT, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, in->id);
    mn__sqlite_bind_text(st, 2, in->ns);
    mn__sqlite_bind_text(st, 3, in->title);
    mn__sqlite_bind_text(st, 4, in->system_prompt);
    mn__sqlite_bind_text(st, 5, in->metadata && strcmp(in->metadata, "{}") != 0 ? in->metadata : NULL);
    mn__sqlite_bind_text(st, 6, in->tool_name);
    mn__sqlite_bind_text(st, 7, in->parent_id);
    sqlite3_bind_int64(st, 8, in->created_at);
    sqlite3_bind_int64(st, 9, in->updated_at);
    sqlite3_bind_int64(st, 10, in->expires_at);
    sqlite3_bind_int64(st, 11, in->ttl_ms);
    sqlite3_bind_int64(st, 12, in->max_turns);
    sqlite3_bind_int64(st, 13, in->cleared_seq);
    sqlite3_bind_int64(st, 14, in->cleared_from);
    mn__sqlite_bind_text(st, 15, in->key);
    int r = sqlite3_step(st);
    /* which unique index refused it: the message names the columns */
    int by_key = r == SQLITE_CONSTRAINT_UNIQUE && strstr(sqlite3_errmsg(s->db), "sessions.key") != NULL;
    mn__sqlite_done(st);
    if (by_key)
        return mn__err(MN_CONFLICT, "session key '%.200s' already names a session in namespace %s", in->key, in->ns);
    if (r == SQLITE_CONSTRAINT_UNIQUE || r == SQLITE_CONSTRAINT_PRIMARYKEY)
        return mn__err(MN_CONFLICT, "session %s already exists", in->id);
    return r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, "session insert");
}

static mn_status session_insert_locked(struct sqlite_store *s, const mn_session *in)
{
    mn_status rc = mn__sqlite_begin_write(s);
    if (rc)
        return rc;
    rc = insert_session(s, in);
    if (rc) {
        mn__sqlite_rollback(s);
        return rc;
    }
    return mn__sqlite_commit(s);
}

static mn_status op_session_insert(mn_store *st, const mn_session *in)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, session_insert_locked(s, in));
}

/* The session of S_SESSION_GET (by id) or S_SESSION_BY_KEY (ns, key: key non-NULL). */
static mn_status session_get_locked(struct sqlite_store *s, const char *id_or_ns, const char *key, mn_session **out)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, key ? S_SESSION_BY_KEY : S_SESSION_GET, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, id_or_ns);
    if (key)
        mn__sqlite_bind_text(st, 2, key);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        mn_session row;
        mn__sqlite_row_session(st, &row);
        *out = mn__records_session_copy(&row);
        rc = *out ? MN_OK : mn__nomem();
    } else if (r == SQLITE_DONE)
        rc = key ? mn__err(MN_NOTFOUND, "session '%.200s' not found", key)
                 : mn__err(MN_NOTFOUND, "session %s not found", id_or_ns);
    else
        rc = mn__sqlite_fail(s, r, "session get");
    mn__sqlite_done(st);
    return rc;
}

static mn_status op_session_get(mn_store *st, const char *id, mn_session **out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, session_get_locked(s, id, NULL, out));
}

static mn_status op_session_by_key(mn_store *st, const char *ns, const char *key, mn_session **out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, session_get_locked(s, ns, key, out));
}

static mn_status session_list_locked(struct sqlite_store *s, const char *ns, size_t limit, size_t offset,
                                     mn_sessions **out)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, ns ? S_SESSION_LIST_NS : S_SESSION_LIST_ALL, &st);
    if (rc)
        return rc;
    struct mn_sessions_impl *l = mn__records_session_list_new();
    if (!l)
        return mn__nomem();
    if (ns)
        mn__sqlite_bind_text(st, 1, ns);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
    sqlite3_bind_int64(st, 3, offset > (size_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)offset);
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        mn_session row, *it = mn__records_session_push(l);
        mn__sqlite_row_session(st, &row);
        if (!it || mn__records_session_fill(&l->arena, it, &row)) {
            rc = mn__nomem();
            break;
        }
    }
    if (!rc && r != SQLITE_DONE)
        rc = mn__sqlite_fail(s, r, "session list");
    mn__sqlite_done(st);
    if (rc) {
        mn__records_session_list_free(&l->pub);
        return rc;
    }
    *out = &l->pub;
    return MN_OK;
}

static mn_status op_session_list(mn_store *st, const char *ns, size_t limit, size_t offset, mn_sessions **out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, session_list_locked(s, ns, limit, offset, out));
}

static void bind_message(sqlite3_stmt *st, int64_t sid, const mn_message *m)
{
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, m->seq);
    mn__sqlite_bind_text(st, 3, mn_role_name(m->role));
    mn__sqlite_bind_text(st, 4, m->content);
    mn__sqlite_bind_text(st, 5, m->tool_calls);
    mn__sqlite_bind_text(st, 6, m->tool_call_id);
    mn__sqlite_bind_text(st, 7, m->name);
    mn__sqlite_bind_text(st, 8, m->tool_name);
    mn__sqlite_bind_text(st, 9, m->model);
    mn__sqlite_bind_text(st, 10, m->files);
    mn__sqlite_bind_text(st, 11, m->metadata && strcmp(m->metadata, "{}") != 0 ? m->metadata : NULL);
    mn__sqlite_bind_text(st, 12, m->idempotency_key);
    sqlite3_bind_int64(st, 13, m->tokens);
    sqlite3_bind_int(st, 14, m->pinned ? 1 : 0);
    sqlite3_bind_int64(st, 15, m->created_at);
}

/* ---- append primitives (store_append.h; the algorithm is src/engine/append.c) --------------- */

/* A transaction is the handle itself, under its lock. */
#define TX(tx) ((struct sqlite_store *)(tx))

mn_status mn__sqlite_tx_write(mn_store *st, mn_store_tx_body body, void *arg)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    pthread_mutex_lock(&s->lock);
    s->erase_after_commit = 0;
    mn_status rc = mn__sqlite_begin_write(s);
    if (!rc) {
        rc = body((mn_store_tx *)s, arg);
        if (rc)
            mn__sqlite_rollback(s);
        else
            rc = mn__sqlite_commit(s);
    }
    if (!rc && s->erase_after_commit)
        mn__sqlite_erased(s); /* the text that left goes from the freed pages and the WAL too */
    if (!rc)
        mn__sqlite_fts_after_commit(s); /* every fts_drain_rows logged rows, a chunk */
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static mn_status tx_savepoint(mn_store_tx *tx, enum mn_store_savepoint op)
{
    static const char *const sql[] = {"SAVEPOINT mn_many", "ROLLBACK TO mn_many", "RELEASE mn_many"};
    return mn__sqlite_exec_stmt(TX(tx), sql[op], "savepoint");
}

/* A failed statement leaves SQLite's transaction usable (the statement alone is undone). */
static enum mn_store_tx_state tx_state(mn_store_tx *tx) { return sqlite3_get_autocommit(TX(tx)->db) ? MN_TX_DOOMED : MN_TX_OK; }

static mn_status tx_session_lock(mn_store_tx *tx, const char *id, mn_store_append_row *out)
{
    return session_row(TX(tx), id, out);
}

static mn_status tx_session_create(mn_store_tx *tx, const mn_session *in, int64_t *sid)
{
    mn_status rc = insert_session(TX(tx), in);
    *sid = rc ? 0 : sqlite3_last_insert_rowid(TX(tx)->db);
    return rc;
}

static mn_status tx_idem_find(mn_store_tx *tx, int64_t sid, const char *session_id, const char *key,
                              mn_store_message_fn fn, void *user, int *found)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_MESSAGE_BY_IDEM, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    mn__sqlite_bind_text(st, 2, key);
    int r = sqlite3_step(st);
    *found = r == SQLITE_ROW;
    if (r == SQLITE_ROW) {
        mn_message row;
        if (!(rc = mn__sqlite_row_message(s, st, session_id, &row)))
            fn(user, &row);
    } else if (r != SQLITE_DONE)
        rc = mn__sqlite_fail(s, r, "idempotency lookup");
    mn__sqlite_done(st);
    return rc;
}

/* Steps an INSERT … RETURNING id to its end: *id gets the id; SQLITE_DONE or the failure. */
static int step_returning_id(sqlite3_stmt *st, int64_t *id)
{
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        r = sqlite3_step(st);
    }
    mn__sqlite_done(st);
    return r;
}

static mn_status tx_message_insert(mn_store_tx *tx, int64_t sid, mn_message *m)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_MESSAGE_INSERT, &st);
    if (rc)
        return rc;
    bind_message(st, sid, m);
    int r = step_returning_id(st, &m->id);
    if (r != SQLITE_DONE)
        return mn__sqlite_fail(s, r, "message insert");
    s->fts_logged += m->content != NULL; /* past the keyword index's watermark (search.c) */
    return MN_OK;
}

static mn_status tx_session_appended(mn_store_tx *tx, const mn_store_appended *c)
{
    struct sqlite_store *s = TX(tx);
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_SESSION_APPENDED, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, c->sid);
    sqlite3_bind_int64(st, 2, c->last_seq);
    sqlite3_bind_int64(st, 3, c->added);
    sqlite3_bind_int64(st, 4, c->tokens);
    sqlite3_bind_int64(st, 5, c->now_ms);
    mn__sqlite_bind_text(st, 6, c->title);
    sqlite3_bind_int64(st, 7, c->users);
    sqlite3_bind_int64(st, 8, c->title_seq);
    sqlite3_bind_int64(st, 9, c->expires_at);
    int r = sqlite3_step(st);
    mn__sqlite_done(st);
    return r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, "session update");
}

static const struct mn_store_append_ops sqlite_append_ops = {
    .write = mn__sqlite_tx_write,
    .savepoint = tx_savepoint,
    .state = tx_state,
    .session_lock = tx_session_lock,
    .session_create = tx_session_create,
    .idem_find = tx_idem_find,
    .message_insert = tx_message_insert,
    .session_appended = tx_session_appended,
};

/* Runs fn inside a read transaction so that the session lookup and the scan see one snapshot. */
static mn_status read_scan(struct sqlite_store *s, const char *session_id, enum stmt_id id, int64_t a2, int64_t a3,
                           int64_t a4, int64_t *expires_at, mn_store_message_fn fn, void *user)
{
    mn_status rc = run(s, S_BEGIN_READ, "begin");
    if (rc)
        return rc;
    mn_store_append_row srow;
    rc = session_row(s, session_id, &srow);
    if (!rc && expires_at)
        *expires_at = srow.expires_at;
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = prep(s, id, &st);
    if (!rc) {
        sqlite3_bind_int64(st, 1, srow.sid);
        if (id != S_MESSAGE_SCAN_DESC) {
            sqlite3_bind_int64(st, 2, a2);
            sqlite3_bind_int64(st, 3, a3);
            sqlite3_bind_int64(st, 4, a4);
        }
        int r;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
            mn_message row;
            rc = mn__sqlite_row_message(s, st, session_id, &row);
            if (rc || fn(user, &row))
                break;
        }
        if (!rc && r != SQLITE_ROW && r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "message scan");
        mn__sqlite_done(st);
    }
    run(s, S_COMMIT, "end read");
    return rc;
}

static mn_status op_scan_newest(mn_store *st, const char *session_id, mn_store_message_fn fn, void *user)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, read_scan(s, session_id, S_MESSAGE_SCAN_DESC, 0, 0, 0, NULL, fn, user));
}

static mn_status op_history(mn_store *st, const char *session_id, const mn_history_opts *o, int64_t *expires_at,
                            mn_messages **out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    struct mn_records_collect c = {mn__records_message_list_new(), MN_OK};
    if (!c.l)
        return mn__nomem();
    int64_t limit = o->limit == 0 || o->limit > (size_t)INT64_MAX ? -1 : (int64_t)o->limit;
    int tail = o->tail && limit > 0;
    pthread_mutex_lock(&s->lock);
    mn_status rc = read_scan(s, session_id, tail ? S_HISTORY_TAIL : S_HISTORY_ASC, o->after_seq, limit, o->all ? 0 : 1,
                             expires_at, mn__records_collect_message, &c);
    pthread_mutex_unlock(&s->lock);
    if (!rc)
        rc = c.rc;
    if (rc) {
        mn__records_message_list_free(&c.l->pub);
        return rc;
    }
    if (tail) /* read newest first; hand back oldest to newest */
        mn__records_message_list_reverse(&c.l->pub);
    *out = &c.l->pub;
    return MN_OK;
}

/* ---- export and import ----------------------------------------------------------------------- */

static mn_status export_one(struct sqlite_store *s, sqlite3_stmt *sess, mn_store_session_fn on_session,
                            mn_store_message_fn on_message, void *user)
{
    mn_session row;
    mn__sqlite_row_session(sess, &row);
    if (on_session(user, &row))
        return mn__err(MN_IO, "export: write failed");
    int64_t sid = 0;
    mn_status rc = mn__sqlite_session_sid(s, row.id, &sid, NULL);
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = prep(s, S_HISTORY_ASC, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int64(st, 2, 0);
    sqlite3_bind_int64(st, 3, -1);
    sqlite3_bind_int64(st, 4, 0); /* inactive messages too */
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        mn_message m;
        rc = mn__sqlite_row_message(s, st, row.id, &m);
        if (!rc && on_message(user, &m))
            rc = mn__err(MN_IO, "export: write failed");
        if (rc)
            break;
    }
    if (!rc && r != SQLITE_DONE)
        rc = mn__sqlite_fail(s, r, "export");
    mn__sqlite_done(st);
    return rc;
}

static mn_status export_locked(struct sqlite_store *s, const char *const *ids, size_t n,
                               mn_store_session_fn on_session, mn_store_message_fn on_message, void *user)
{
    int64_t sid = 0;
    mn_status rc = MN_OK;
    for (size_t i = 0; i < n && !rc; i++) /* every named session must exist before a byte is written */
        rc = mn__sqlite_session_sid(s, ids[i], &sid, NULL);
    if (rc)
        return rc;
    sqlite3_stmt *st = NULL;
    if (n == 0) {
        rc = prep(s, S_SESSION_ALL_BY_CREATED, &st);
        if (rc)
            return rc;
        int r;
        while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
            rc = export_one(s, st, on_session, on_message, user);
        if (!rc && r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "export");
        mn__sqlite_done(st);
        return rc;
    }
    for (size_t i = 0; i < n && !rc; i++) {
        rc = prep(s, S_SESSION_GET, &st);
        if (rc)
            return rc;
        mn__sqlite_bind_text(st, 1, ids[i]);
        int r = sqlite3_step(st);
        if (r == SQLITE_ROW)
            rc = export_one(s, st, on_session, on_message, user);
        else
            rc = mn__sqlite_fail(s, r, "export");
        mn__sqlite_done(st);
    }
    return rc;
}

static mn_status op_export_scan(mn_store *st, const char *const *ids, size_t n, mn_store_session_fn on_session,
                                mn_store_message_fn on_message, void *user)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    pthread_mutex_lock(&s->lock);
    mn_status rc = run(s, S_BEGIN_READ, "begin");
    if (!rc) {
        rc = export_locked(s, ids, n, on_session, on_message, user);
        run(s, S_COMMIT, "end read");
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

/* Where an imported session's title came from (the engine finds it: engine/import_rows.c). */
static const char SQL_IMPORT_TITLE_FROM[] = "UPDATE sessions SET title_seq = ?2 WHERE id = ?1";

static mn_status op_import_title_from(mn_store *st, const char *id, int64_t seq)
{
    return mn__sqlite_run((struct sqlite_store *)st, SQL_IMPORT_TITLE_FROM, "import title",
                          ARGS(ARG_TEXT(id), ARG_INT(seq))); /* begin() holds the lock */
}

/* Import holds the handle's lock from begin to commit/rollback, so the whole import is one
 * transaction that no other thread's call can interleave with. */
static mn_status op_begin(mn_store *st)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    pthread_mutex_lock(&s->lock);
    mn_status rc = mn__sqlite_begin_write(s);
    if (rc)
        pthread_mutex_unlock(&s->lock);
    else
        mn_sqlite_held = (struct mn_sqlite_held){s, s, 1, 0};
    return rc;
}

static mn_status op_commit(mn_store *st)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    mn_status rc = mn__sqlite_commit(s);
    if (!rc)
        mn__sqlite_fts_after_commit(s);
    mn_sqlite_held = (struct mn_sqlite_held){0};
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static void op_rollback(mn_store *st)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    mn__sqlite_rollback(s);
    mn_sqlite_held = (struct mn_sqlite_held){0};
    pthread_mutex_unlock(&s->lock);
}

static mn_status op_import_session(mn_store *st, const mn_session *in, int *added)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int64_t sid = 0;
    mn_status rc = mn__sqlite_session_sid(s, in->id, &sid, NULL);
    *added = 0;
    if (rc != MN_NOTFOUND)
        return rc; /* present (skip) or a real error */
    rc = insert_session(s, in);
    *added = rc == MN_OK;
    return rc;
}

static mn_status exists(struct sqlite_store *s, enum stmt_id id, int64_t a, int64_t b, int *yes)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, id, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, a);
    if (id == S_MESSAGE_SEQ_EXISTS)
        sqlite3_bind_int64(st, 2, b);
    int r = sqlite3_step(st);
    mn__sqlite_done(st);
    if (r != SQLITE_ROW && r != SQLITE_DONE)
        return mn__sqlite_fail(s, r, "lookup");
    *yes = r == SQLITE_ROW;
    return MN_OK;
}

static mn_status op_import_message(mn_store *st, const mn_message *m, int *added)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int64_t sid = 0;
    int taken = 0;
    *added = 0;
    mn_status rc = mn__sqlite_session_sid(s, m->session_id, &sid, NULL);
    if (!rc)
        rc = exists(s, S_MESSAGE_SEQ_EXISTS, sid, m->seq, &taken);
    if (rc || taken)
        return rc;
    rc = exists(s, S_MESSAGE_ID_EXISTS, m->id, 0, &taken);
    int64_t id = 0;
    sqlite3_stmt *ins = NULL;
    if (!rc)
        rc = prep(s, S_MESSAGE_IMPORT, &ins);
    if (rc)
        return rc;
    bind_message(ins, sid, m);
    if (taken || m->id <= 0) /* keep the exported id when it is free, else take a new one */
        sqlite3_bind_null(ins, 16);
    else
        sqlite3_bind_int64(ins, 16, m->id);
    sqlite3_bind_int(ins, 17, m->active ? 1 : 0);
    int r = step_returning_id(ins, &id);
    if (r != SQLITE_DONE)
        return mn__sqlite_fail(s, r, "message import");
    /* an exported id kept may be below the keyword index's watermark: log it (search.c) */
    if (m->content && (rc = mn__sqlite_fts_log_insert(s, id)))
        return rc;
    s->fts_logged += m->content != NULL;
    sqlite3_stmt *upd = NULL;
    rc = prep(s, S_SESSION_IMPORTED_MESSAGE, &upd);
    if (rc)
        return rc;
    sqlite3_bind_int64(upd, 1, sid);
    sqlite3_bind_int64(upd, 2, m->seq);
    sqlite3_bind_int64(upd, 3, m->tokens);
    sqlite3_bind_int64(upd, 4, m->role == MN_ROLE_USER);
    sqlite3_bind_int64(upd, 5, !m->active);
    r = sqlite3_step(upd);
    mn__sqlite_done(upd);
    if (r != SQLITE_DONE)
        return mn__sqlite_fail(s, r, "session update");
    *added = 1;
    return MN_OK;
}

/* ---- stats and meta -------------------------------------------------------------------------- */

static int64_t file_size(const char *path, const char *suffix)
{
    char name[PATH_MAX];
    struct stat sb;
    snprintf(name, sizeof name, "%s%s", path, suffix);
    return stat(name, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

static mn_status stats_locked(struct sqlite_store *s, int64_t now_ms, mn_store_stats *out)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_STATS, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, now_ms);
    int r = sqlite3_step(st);
    if (r == SQLITE_ROW) {
        out->sessions = sqlite3_column_int64(st, 0);
        out->threads = sqlite3_column_int64(st, 3);
        out->turns = sqlite3_column_int64(st, 4);
        out->expired_pending = sqlite3_column_int64(st, 5);
        out->messages = sqlite3_column_int64(st, 1);
        out->tokens = sqlite3_column_int64(st, 2);
    } else
        rc = mn__sqlite_fail(s, r, "stats");
    mn__sqlite_done(st);
    out->db_bytes = file_size(s->path, "") + file_size(s->path, ".keywords");
    out->wal_bytes = file_size(s->path, "-wal") + file_size(s->path, ".keywords-wal");
    out->schema_version = MN_SQLITE_SCHEMA_VERSION;
    return rc;
}

static mn_status op_stats(mn_store *st, int64_t now_ms, mn_store_stats *out)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, stats_locked(s, now_ms, out));
}

static mn_status meta_get_locked(struct sqlite_store *s, const char *key, char **value)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_META_GET, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, key);
    int r = sqlite3_step(st);
    *value = NULL;
    if (r == SQLITE_ROW) {
        *value = strdup(mn__sqlite_col_text(st, 0));
        if (!*value)
            rc = mn__nomem();
    } else if (r != SQLITE_DONE)
        rc = mn__sqlite_fail(s, r, "meta get");
    mn__sqlite_done(st);
    return rc;
}

static mn_status op_meta_get(mn_store *st, const char *key, char **value)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, meta_get_locked(s, key, value));
}

static mn_status meta_set_locked(struct sqlite_store *s, const char *key, const char *value)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = prep(s, S_META_SET, &st);
    if (rc)
        return rc;
    mn__sqlite_bind_text(st, 1, key);
    mn__sqlite_bind_text(st, 2, value);
    int r = sqlite3_step(st);
    mn__sqlite_done(st);
    return r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, "meta set");
}

static mn_status op_meta_set(mn_store *st, const char *key, const char *value)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    LOCKED(s, meta_set_locked(s, key, value));
}

/* One batch of the recount: up to `limit` messages after *after, in one transaction. */
static mn_status recount_batch(struct sqlite_store *s, int64_t (*count)(void *, const mn_message *),
                               void *user, int64_t *after, int64_t limit, int64_t *n_done)
{
    mn_status rc = mn__sqlite_begin_write(s);
    if (rc)
        return rc;
    sqlite3_stmt *rd = NULL, *wr = NULL;
    if (!(rc = prep(s, S_RECOUNT_READ, &rd)) && !(rc = prep(s, S_RECOUNT_WRITE, &wr))) {
        sqlite3_bind_int64(rd, 1, *after);
        sqlite3_bind_int64(rd, 2, limit);
        int r;
        while ((r = sqlite3_step(rd)) == SQLITE_ROW) {
            mn_message m;
            memset(&m, 0, sizeof m);
            m.id = *after = sqlite3_column_int64(rd, 0);
            m.content = mn__sqlite_col_text(rd, 1);
            m.tool_calls = mn__sqlite_col_text(rd, 2);
            m.name = mn__sqlite_col_text(rd, 3);
            m.tool_call_id = mn__sqlite_col_text(rd, 4);
            sqlite3_bind_int64(wr, 1, *after);
            sqlite3_bind_int64(wr, 2, count(user, &m));
            int w = sqlite3_step(wr);
            mn__sqlite_done(wr);
            if (w != SQLITE_DONE) {
                rc = mn__sqlite_fail(s, w, "recount");
                break;
            }
            ++*n_done;
        }
        if (!rc && r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "recount");
        mn__sqlite_done(rd);
    }
    if (rc) {
        mn__sqlite_rollback(s);
        return rc;
    }
    return mn__sqlite_commit(s);
}

static mn_status op_recount_tokens(mn_store *st, int64_t (*count)(void *, const mn_message *), void *user,
                                   void (*progress)(void *, int64_t, int64_t), int64_t *n)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    int64_t total = 0, after = 0, done_count = 0, before;
    mn_status rc;
    pthread_mutex_lock(&s->lock);
    sqlite3_stmt *c = NULL;
    if (!(rc = prep(s, S_MESSAGE_TOTAL, &c))) {
        if (sqlite3_step(c) == SQLITE_ROW)
            total = sqlite3_column_int64(c, 0);
        mn__sqlite_done(c);
    }
    pthread_mutex_unlock(&s->lock);
    do { /* the lock is let go between batches so that other threads' calls get through */
        before = done_count;
        pthread_mutex_lock(&s->lock);
        if (!rc)
            rc = recount_batch(s, count, user, &after, 1000, &done_count);
        pthread_mutex_unlock(&s->lock);
        if (!rc && progress)
            progress(user, done_count, total > done_count ? total : done_count);
    } while (!rc && done_count > before);
    pthread_mutex_lock(&s->lock);
    if (!rc && !(rc = mn__sqlite_begin_write(s))) {
        rc = run(s, S_RECOUNT_SESSIONS, "recount sessions");
        if (rc)
            mn__sqlite_rollback(s);
        else
            rc = mn__sqlite_commit(s);
    }
    pthread_mutex_unlock(&s->lock);
    *n = done_count;
    return rc;
}

/* ---- open, migrate, close -------------------------------------------------------------------- */

static void op_close(mn_store *st)
{
    struct sqlite_store *s = (struct sqlite_store *)st;
    if (!s)
        return;
    mn__sqlite_kw_stop(s);
    for (size_t i = 0; i < s->n_readers; i++)
        op_close(&s->readers[i]->base);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(s->stmt[i]);
    for (size_t i = 0; i < s->n_extra; i++)
        sqlite3_finalize(s->extra[i].st);
    mn__sqlite_fts_release(s);
    mn__sqlite_set_free(s);
    sqlite3_close(s->db);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->readers_lock);
    free(s->path);
    free(s);
}

/* The log is copied into the database (a passive checkpoint, as SQLite's own hook does) once it
 * holds a number of the connection's recent commits (a running average of the pages a commit
 * adds), and at least 1,000 pages (SQLite's default). One append a transaction adds a few pages a
 * commit: about 64 commits, a small log that stays in the CPU's cache where a 40 MB one did not
 * (+10-30% appends/s on a new file). Group commits (mnemo serve: a hundred pages or so) rewrite
 * the same pages commit after commit (session rows, the tail page of each session, index pages):
 * about 256 of them, up to 40,000 pages (160 MB), copy each of those into the file once per
 * checkpoint instead of once every few commits (+16% appends/s through mnemo serve on the 1M
 * store against 64 commits and 10,000 pages; bench/server/README.md). */
#define MN_SQLITE_CKPT_COMMITS 64
#define MN_SQLITE_CKPT_GROUP_PAGES 32 /* a commit of this many pages or more is a group's */
#define MN_SQLITE_CKPT_GROUP_COMMITS 256
#define MN_SQLITE_CKPT_MIN 1000
#define MN_SQLITE_CKPT_MAX 40000

static int wal_hook(void *user, sqlite3 *db, const char *schema, int frames)
{
    struct sqlite_store *s = user;
    int added = frames > s->wal_frames ? frames - s->wal_frames : frames; /* less: the log restarted */
    s->wal_frames = frames;
    s->wal_commit_frames += (added - s->wal_commit_frames) / 16;
    double per = s->wal_commit_frames;
    double want = (per < MN_SQLITE_CKPT_GROUP_PAGES ? MN_SQLITE_CKPT_COMMITS : MN_SQLITE_CKPT_GROUP_COMMITS) * per;
    int limit = want < MN_SQLITE_CKPT_MIN ? MN_SQLITE_CKPT_MIN : want > MN_SQLITE_CKPT_MAX ? MN_SQLITE_CKPT_MAX : (int)want;
    if (frames >= limit)
        sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
    return SQLITE_OK;
}

/* Exponential backoff, 1 ms doubling to 100 ms with jitter, until busy_timeout_ms in total. */
static int busy_handler(void *user, int attempt)
{
    struct sqlite_store *s = user;
    int64_t now = mn__clock_mono_ns();
    if (attempt == 0 || s->busy_started_ns == 0)
        s->busy_started_ns = now;
    if ((now - s->busy_started_ns) / 1000000 >= s->busy_timeout_ms)
        return 0;
    int64_t delay = attempt < 7 ? (int64_t)1 << attempt : 100;
    delay += (int64_t)(now % 1000) * delay / 2000; /* up to +50%, from the clock's low digits */
    mn__clock_sleep_ms(delay);
    return 1;
}

/* The first column of a one-row statement run once (a pragma, a count): 0 when no row. */
mn_status mn__sqlite_one_value(struct sqlite_store *s, const char *sql, int64_t *value)
{
    sqlite3_stmt *st = NULL;
    int r = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (r != SQLITE_OK)
        return mn__sqlite_fail(s, r, "open");
    r = sqlite3_step(st);
    *value = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_finalize(st);
    return r == SQLITE_ROW || r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, "open");
}

static mn_status exec(struct sqlite_store *s, const char *sql)
{
    int r = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return r == SQLITE_OK ? MN_OK : mn__sqlite_fail(s, r, "open");
}

/* Reads (without writing anything) whether the file is ours or empty, and its schema version:
 * another application's database must be left exactly as it was. */
static mn_status check_ours(struct sqlite_store *s, int *version)
{
    int64_t app_id = 0, tables = 0, v = 0;
    mn_status rc;
    if (!(rc = mn__sqlite_one_value(s, "PRAGMA application_id", &app_id)) &&
        !(rc = mn__sqlite_one_value(s, "PRAGMA user_version", &v)))
        rc = mn__sqlite_one_value(s, "SELECT count(*) FROM sqlite_schema", &tables);
    *version = (int)v;
    if (!rc && app_id != MN_SQLITE_APPLICATION_ID && (app_id != 0 || tables > 0))
        rc = mn__err(MN_CORRUPT, "%s is a SQLite database but not a mnemo database", s->path);
    if (!rc && *version > MN_SQLITE_SCHEMA_VERSION)
        rc = mn__err(MN_CORRUPT, "%s has schema version %d, newer than this mnemo understands (%d)", s->path,
                     *version, MN_SQLITE_SCHEMA_VERSION);
    return rc;
}

/* Step 9 → 10's copy (schema.h): every session's messages into the clustered table, in key
 * order, reporting (done, total) after each session that passes another hundredth. A row left
 * behind (a message whose session is gone, which foreign keys forbid) fails the migration. */
static mn_status cluster_messages(struct sqlite_store *s, const mn_store_opts *opts)
{
    static const char SQL_SESSIONS[] = "SELECT sid FROM sessions ORDER BY sid";
    static const char SQL_TOTAL[] = "SELECT count(*) FROM messages";
    static const char SQL_COPIED[] = "SELECT count(*) FROM messages_clustered";
    sqlite3_stmt *st = NULL, *copy = NULL; /* run once: prepared here, not cached */
    int64_t total = 0, done = 0, shown = -1, copied = 0;
    mn_status rc = mn__sqlite_one_value(s, SQL_TOTAL, &total);
    int r = SQLITE_DONE;
    if (!rc && ((r = sqlite3_prepare_v2(s->db, SQL_SESSIONS, -1, &st, NULL)) != SQLITE_OK ||
                (r = sqlite3_prepare_v2(s->db, MN_SQLITE_CLUSTER_COPY, -1, &copy, NULL)) != SQLITE_OK))
        rc = mn__sqlite_fail(s, r, "clustering messages");
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
        sqlite3_bind_int64(copy, 1, sqlite3_column_int64(st, 0));
        int c = sqlite3_step(copy);
        sqlite3_reset(copy);
        if (c != SQLITE_DONE) {
            rc = mn__sqlite_fail(s, c, "clustering messages");
            break;
        }
        done += sqlite3_changes(s->db);
        if (opts->progress && total > 0 && done * 100 / total > shown) {
            shown = done * 100 / total;
            opts->progress(opts->progress_user, done, total);
        }
    }
    if (!rc && r != SQLITE_DONE)
        rc = mn__sqlite_fail(s, r, "clustering messages");
    sqlite3_finalize(st);
    sqlite3_finalize(copy);
    if (!rc)
        rc = mn__sqlite_one_value(s, SQL_COPIED, &copied);
    if (!rc && copied != total)
        rc = MN_CORRUPT_AT("%s: %lld of %lld messages belong to no session; not migrated (they cannot be read;"
                           " delete them first: sqlite3 FILE \"DELETE FROM messages WHERE session_sid NOT IN"
                           " (SELECT sid FROM sessions)\")",
                           s->path, (long long)(total - copied), (long long)total);
    if (!rc)
        rc = exec(s, MN_SQLITE_CLUSTER_SWAP);
    return rc;
}

/* Inside the migration's write transaction: checks the version again (another process may have
 * migrated meanwhile) and runs every step from it to the current one. */
static mn_status migrate_steps(struct sqlite_store *s, const mn_store_opts *opts)
{
    int version = 0;
    mn_status rc = check_ours(s, &version);
    if (!rc && opts->found_version)
        *opts->found_version = version;
    for (int v = version; !rc && v < MN_SQLITE_SCHEMA_VERSION; v++) {
        rc = exec(s, mn_sqlite_migrations[v]);
        if (!rc && v + 1 == 10)
            rc = cluster_messages(s, opts);
        if (!rc)
            mn__log(MN_LOG_INFO, "%s: migrated schema to version %d", s->path, v + 1);
    }
    if (!rc && version < 10) /* the queue's trigger back when the queue is on (9 and 10 drop it) */
        rc = mn__sqlite_queue_trigger_sync(s);
    if (!rc && version < MN_SQLITE_SCHEMA_VERSION) {
        char sql[128];
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = %d", MN_SQLITE_APPLICATION_ID,
                 MN_SQLITE_SCHEMA_VERSION);
        rc = exec(s, sql);
    }
    return rc;
}

/* Brings the schema up to date from `version` (read at open) in one transaction. Foreign keys
 * are off meanwhile (a pragma that a transaction cannot change): step 9 → 10 drops the old
 * messages table, which would otherwise delete every embedding through their cascade. */
static mn_status migrate(struct sqlite_store *s, const mn_store_opts *opts, int version)
{
    if (version == MN_SQLITE_SCHEMA_VERSION) {
        if (opts->found_version)
            *opts->found_version = version;
        return MN_OK;
    }
    mn_status rc = exec(s, "PRAGMA foreign_keys = OFF");
    if (!rc && !(rc = mn__sqlite_begin_write(s))) {
        if ((rc = migrate_steps(s, opts)))
            mn__sqlite_rollback(s);
        else
            rc = mn__sqlite_commit(s);
    }
    mn_status keys = exec(s, "PRAGMA foreign_keys = ON");
    return rc ? rc : keys;
}

static mn_status make_parent_dirs(const char *path)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return mn__err(MN_INVALID, "database path is longer than %d bytes", PATH_MAX - 1);
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return mn__err(MN_IO, "cannot create directory %s for the database: %s", dir, strerror(errno));
        *p = '/';
    }
    return MN_OK;
}

/* ---- reader connections ---------------------------------------------------------------------- */

/* A second connection to the writer's file (schema already current) into *out: a reader
 * (read-only; on failure the caller reads on the write connection instead) or the keyword indexer
 * (read-write, the index's file attached read-write; it also runs keyword searches). Errors as
 * SQLite's mapped (MN_BUSY when another process held a lock past the busy timeout), MN_NOMEM. */
static mn_status open_side(struct sqlite_store *w, int indexer, struct sqlite_store **out)
{
    *out = NULL;
    struct sqlite_store *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(w->path))) {
        free(r);
        return mn__nomem();
    }
    r->base.ops = w->base.ops;
    r->busy_timeout_ms = w->busy_timeout_ms;
    r->fts_drain_rows = w->fts_drain_rows;
    r->no_readers = 1;
    r->kw_own = indexer;
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->readers_lock, NULL);
    int flags = (indexer ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
    int e = sqlite3_open_v2(r->path, &r->db, flags, NULL);
    mn_status rc = MN_OK;
    if (e == SQLITE_OK) { /* before the first statement: another process may hold a lock the attach waits for */
        sqlite3_extended_result_codes(r->db, 1);
        sqlite3_busy_handler(r->db, busy_handler, r);
        e = sqlite3_exec(r->db, "PRAGMA trusted_schema = OFF; PRAGMA secure_delete = ON; PRAGMA mmap_size = 2147418112",
                         NULL, NULL, NULL);
    }
    if (e != SQLITE_OK)
        rc = r->db ? mn__sqlite_fail(r, e, "second connection") : mn__nomem();
    /* FULL: a step's commit is on disk before its log rows leave the database (search.c
     * log_cleanup); one fsync a chunk of messages */
    if (!rc && indexer && !(rc = mn__sqlite_kw_attach_rw(r)) && !(rc = mn__sqlite_kw_views(r)) &&
        (e = sqlite3_exec(r->db, "PRAGMA kw.synchronous = FULL", NULL, NULL, NULL)) != SQLITE_OK)
        rc = mn__sqlite_fail(r, e, "keyword index file");
    if (rc) {
        mn__log(MN_LOG_WARN, "%s: cannot open a %s connection: %s", w->path, indexer ? "keyword index" : "reader",
                mn_errmsg());
        op_close(&r->base);
        return rc;
    }
    mn__sqlite_fts_register(r);
    *out = r;
    return MN_OK;
}

static struct sqlite_store *open_reader(struct sqlite_store *w)
{
    struct sqlite_store *r = NULL;
    return open_side(w, 0, &r) ? NULL : r;
}

mn_status mn__sqlite_open_indexer(struct sqlite_store *w, struct sqlite_store **out) { return open_side(w, 1, out); }

mn_status mn__sqlite_open_reader(struct sqlite_store *w, struct sqlite_store **out) { return open_side(w, 0, out); }

void mn__sqlite_close(struct sqlite_store *s) { op_close(&s->base); }

/* The connection a read should use: the write connection when it is free (one-thread callers
 * never open a reader), else a free reader, a new one, or the next in turn. The trylocks are
 * hints; the op takes the chosen connection's lock itself. */
static mn_store *reader(mn_store *st)
{
    struct sqlite_store *s = (struct sqlite_store *)st, *pick = NULL;
    if (s->no_readers || pthread_mutex_trylock(&s->lock) == 0) {
        if (!s->no_readers)
            pthread_mutex_unlock(&s->lock);
        return st;
    }
    pthread_mutex_lock(&s->readers_lock);
    for (size_t i = 0; i < s->n_readers && !pick; i++)
        if (pthread_mutex_trylock(&s->readers[i]->lock) == 0) {
            pthread_mutex_unlock(&s->readers[i]->lock);
            pick = s->readers[i];
        }
    if (!pick && s->n_readers < MN_SQLITE_READERS && (pick = open_reader(s)))
        s->readers[s->n_readers++] = pick;
    if (!pick && s->n_readers)
        pick = s->readers[s->next_reader++ % s->n_readers];
    pthread_mutex_unlock(&s->readers_lock);
    return pick ? &pick->base : st;
}

mn_store *mn__sqlite_reader(mn_store *st) { return reader(st); }

static mn_status rd_session_get(mn_store *st, const char *id, mn_session **out)
{
    return op_session_get(reader(st), id, out);
}

static mn_status rd_session_by_key(mn_store *st, const char *ns, const char *key, mn_session **out)
{
    return op_session_by_key(reader(st), ns, key, out);
}

static mn_status rd_session_list(mn_store *st, const char *ns, size_t limit, size_t offset, mn_sessions **out)
{
    return op_session_list(reader(st), ns, limit, offset, out);
}

static mn_status rd_history(mn_store *st, const char *session_id, const mn_history_opts *o, int64_t *expires_at,
                           mn_messages **out)
{
    return op_history(reader(st), session_id, o, expires_at, out);
}

static mn_status rd_scan_newest(mn_store *st, const char *session_id, mn_store_message_fn fn, void *user)
{
    return op_scan_newest(reader(st), session_id, fn, user);
}

static mn_status rd_state_get(mn_store *st, const char *id, char **out)
{
    return mn__sqlite_op_state_get(reader(st), id, out);
}

static mn_status rd_summary_latest(mn_store *st, const char *session_id, mn_summary **out)
{
    return mn__sqlite_op_summary_latest(reader(st), session_id, out);
}

static mn_status rd_pinned_units(mn_store *st, const char *session_id, int64_t upto_seq, mn_store_message_fn fn,
                                 void *user)
{
    return mn__sqlite_op_pinned_units(reader(st), session_id, upto_seq, fn, user);
}

static mn_status rd_tool_tokens(mn_store *st, const char *session_id, int64_t after_seq, int64_t *sum)
{
    return mn__sqlite_op_tool_tokens(reader(st), session_id, after_seq, sum);
}

/* SQLite counts every allocation under one process-wide mutex (SQLITE_CONFIG_MEMSTATUS, on in
 * Debian's build); with the keyword indexer's thread beside the appends the two fought over it
 * on every malloc: ~9,000 context switches and 13k instead of 16k appends/s for 20,000 appends.
 * mnemo reads none of those statistics. The setting can only be changed before SQLite is
 * initialised: if the application initialised it first, this does nothing (SQLITE_MISUSE). */
static pthread_once_t sqlite_setup_once = PTHREAD_ONCE_INIT;

static void sqlite_setup(void) { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); }

mn_status mn__store_sqlite_open(const char *path, const mn_store_opts *opts, mn_store **out)
{
    static const struct mn_store_ops ops = {
        .name = "sqlite",
        .append_writers = 1,
        .reads_local = 1,
        .close = op_close,
        .session_insert = op_session_insert,
        .session_get = rd_session_get,
        .session_by_key = rd_session_by_key,
        .session_list = rd_session_list,
        .session_delete = mn__sqlite_op_session_delete,
        .session_prune = mn__sqlite_op_session_prune,
        .append = &sqlite_append_ops,
        .rows = &mn_sqlite_row_ops,
        .session_update = mn__sqlite_op_session_update,
        .history = rd_history,
        .scan_newest = rd_scan_newest,
        .export_scan = op_export_scan,
        .begin = op_begin,
        .commit = op_commit,
        .rollback = op_rollback,
        .import_session = op_import_session,
        .import_message = op_import_message,
        .import_title_from = op_import_title_from,
        .stats = op_stats,
        .recount_tokens = op_recount_tokens,
        .session_gc = mn__sqlite_op_session_gc,
        .vacuum = mn__sqlite_op_vacuum,
        .backup = mn__sqlite_op_backup,
        .session_files = mn__sqlite_op_session_files,
        .file_seen = mn__sqlite_op_file_seen,
        .state_get = rd_state_get,
        .state_update = mn__sqlite_op_state_update,
        .meta_get = op_meta_get,
        .meta_set = op_meta_set,
        .summary_latest = rd_summary_latest,
        .summary_insert = mn__sqlite_op_summary_insert,
        .event_insert = mn__sqlite_op_event_insert,
        .events_list = mn__sqlite_op_events_list,
        .busy_claim = mn__sqlite_op_busy_claim,
        .busy_release = mn__sqlite_op_busy_release,
        .message_pin = mn__sqlite_op_message_pin,
        .pinned_units = rd_pinned_units,
        .tool_tokens = rd_tool_tokens,
        .search = &mn_sqlite_search_ops,
        .memory = &mn_sqlite_memory_ops,
        .checkpoint = &mn_sqlite_checkpoint_ops,
        .document = &mn_sqlite_document_ops,
    };
    *out = NULL;
    pthread_once(&sqlite_setup_once, sqlite_setup);
    if (!path || !*path)
        return mn__err(MN_INVALID, "database path is empty");
    mn_status rc = make_parent_dirs(path);
    if (rc)
        return rc;
    struct sqlite_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return mn__nomem();
    }
    s->base.ops = &ops;
    s->base.label = s->path;
    s->busy_timeout_ms = opts->busy_timeout_ms;
    s->fts_drain_rows = opts->fts_drain_rows;
    /* an in-memory or temporary database is private to its connection: no readers */
    s->no_readers = strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->readers_lock, NULL);
    int r = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (r != SQLITE_OK) {
        rc = mn__err(MN_IO, "cannot open database %s: %s", path, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(r));
        op_close(&s->base);
        return rc;
    }
    sqlite3_extended_result_codes(s->db, 1);
    sqlite3_busy_handler(s->db, busy_handler, s);
    sqlite3_wal_hook(s->db, wal_hook, s);
    char sql[256];
    /* mmap: reads of a large history come from the page cache without a read() per page; 2 GiB
     * less 64 KiB is the most Debian's SQLite maps (SQLITE_MAX_MMAP_SIZE), and an upgraded file
     * is past 1 GiB from 700k messages (docs/format.md). Checkpoints: wal_hook.
     * secure_delete: deleted rows and freed pages are overwritten with zeros, so that a deleted
     * message's text does not stay readable in the file (docs/erasure.md has its cost). */
    snprintf(sql, sizeof sql,
             "PRAGMA foreign_keys = ON; PRAGMA synchronous = %s; PRAGMA trusted_schema = OFF; PRAGMA secure_delete = ON;"
             " PRAGMA mmap_size = 2147418112",
             opts->sync_full ? "FULL" : "NORMAL");
    rc = exec(s, sql);
    int version = 0;
    if (!rc)
        rc = check_ours(s, &version);
    /* Switching to WAL needs a moment of exclusive access; when several processes open a new file
     * at once, the loser sees SQLITE_BUSY without the busy handler, so retry here. */
    for (int attempt = 0; !rc; attempt++) {
        int wal = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
        if (wal == SQLITE_OK)
            break;
        s->busy_started_ns = attempt == 0 ? 0 : s->busy_started_ns;
        if ((wal & 0xFF) != SQLITE_BUSY || !busy_handler(s, attempt))
            rc = mn__sqlite_fail(s, wal, "open");
    }
    if (!rc)
        rc = mn__sqlite_kw_attach_rw(s); /* before the migration: version 11 moves the index there */
    if (!rc)
        rc = migrate(s, opts, version);
    if (!rc)
        rc = mn__sqlite_kw_start(s);
    if (!rc)
        rc = mn__sqlite_fts_recover(s);
    if (!rc)
        rc = mn__sqlite_fts_backlog(s);
    if (!rc)
        mn__sqlite_fts_register(s);
    if (rc) {
        op_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return MN_OK;
}
