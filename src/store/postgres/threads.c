/*
 * threads.c — the PostgreSQL side of threads and session state: purging expired threads, file
 * lists and content hashes, and state updates as one read-modify-write transaction on the
 * session row locked FOR UPDATE (so concurrent merges, from any node, never lose each other).
 * Same semantics as sqlite/threads.c.
 */
#include <libpq-fe.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_int.h"
#include "store/records.h"
#include "util/err.h"
#include "util/banned.h"

/* ---- gc -------------------------------------------------------------------------------------- */

static const char SQL_GC[] = "DELETE FROM sessions WHERE expires_at > 0 AND expires_at <= $1::bigint RETURNING id";

/* One DELETE: two nodes collecting at once each delete what the other has not (idempotent). */
mn_status mn__pg_op_session_gc(mn_store *st, int64_t now_ms, int64_t *purged, mn_strings **ids)
{
    return mn__pg_delete_sessions(PG(st), SQL_GC, now_ms, purged, ids);
}

/* ---- files ----------------------------------------------------------------------------------- */

/* messages.files is JSON text: the string items of its array (SQLite: json_each … type 'text').
 * Seed 002's walk: messages newest first, each one's files in the order it lists them (the
 * ordinality); a path keeps the place of its first occurrence. Paths compare as strings. */
static const char SQL_FILES[] =
    "SELECT path FROM (SELECT j.path, m.seq, j.at,"
    " row_number() OVER (PARTITION BY j.path ORDER BY m.seq DESC, j.at) AS nth FROM messages m,"
    " jsonb_array_elements_text(CASE WHEN jsonb_typeof(m.files::jsonb) = 'array'"
    "   THEN jsonb_path_query_array(m.files::jsonb, '$[*] ? (@.type() == \"string\")') ELSE '[]'::jsonb END)"
    " WITH ORDINALITY AS j(path, at)"
    " WHERE m.session_sid = $1::bigint AND m.files IS NOT NULL) f"
    " WHERE nth = 1 ORDER BY seq DESC, at";

struct files_arg {
    const char *id;
    mn_strings **out;
};

static mn_status files_body(struct pg_conn *c, void *arg)
{
    struct files_arg *a = arg;
    struct pg_params p;
    PGresult *r = NULL;
    mn_status rc = mn__pg_sid_params(c, a->id, &p);
    if (rc || (rc = mn__pg_query(c, SQL_FILES, &p, 0, "files", &r)))
        return rc;
    struct mn_strings_impl *l = calloc(1, sizeof *l);
    if (!l)
        rc = mn__nomem();
    for (int i = 0; !rc && i < PQntuples(r); i++)
        if (mn__records_strings_push(l, PQgetvalue(r, i, 0)))
            rc = mn__nomem();
    PQclear(r);
    if (rc) {
        mn_strings_free(l ? &l->pub : NULL);
        return rc;
    }
    *a->out = &l->pub;
    return MN_OK;
}

mn_status mn__pg_op_session_files(mn_store *st, const char *id, mn_strings **out)
{
    struct files_arg a = {id, out};
    return mn__pg_run(PG(st), PG_SNAPSHOT, files_body, &a);
}

/* Seed 002's FileDeduplicator keeps, per content, the path it was first seen under: the same
 * content is skipped under that path and included under any other, every time. So a row is
 * written only for content new to the session (as in sqlite/threads.c); of the rows an earlier
 * version wrote, the earliest (then the smallest path) is the first. Of two transactions sending
 * new content under the same path at once, the one whose insert lost the race skips it. */
static const char SQL_FILE_SEEN[] =
    "WITH first AS (SELECT path FROM file_hashes WHERE session_sid = $1::bigint AND sha256 = $3"
    "   ORDER BY first_seen, path COLLATE \"C\" LIMIT 1),"
    " ins AS (INSERT INTO file_hashes (session_sid, path, sha256, first_seen)"
    "   SELECT $1::bigint, $2, $3, $4::bigint WHERE NOT EXISTS (SELECT 1 FROM first)"
    "   ON CONFLICT DO NOTHING RETURNING 1)"
    " SELECT CASE WHEN EXISTS (SELECT 1 FROM first) THEN (SELECT path <> $2 FROM first)"
    " ELSE EXISTS (SELECT 1 FROM ins) END";

struct seen_arg {
    const char *id, *path, *sha;
    int64_t now_ms;
    int include;
};

static mn_status file_seen_body(struct pg_conn *c, void *arg)
{
    struct seen_arg *a = arg;
    struct pg_params p;
    mn_status rc = mn__pg_sid_params(c, a->id, &p);
    if (rc)
        return rc;
    mn__pg_text(&p, a->path);
    mn__pg_text(&p, a->sha);
    mn__pg_i64(&p, a->now_ms);
    PGresult *r = NULL;
    if ((rc = mn__pg_query(c, SQL_FILE_SEEN, &p, 0, "file hash", &r)))
        return rc;
    a->include = strcmp(PQgetvalue(r, 0, 0), "t") == 0;
    PQclear(r);
    return MN_OK;
}

mn_status mn__pg_op_file_seen(mn_store *st, const char *id, const char *path, const char *sha256, int64_t now_ms,
                             int *include)
{
    struct seen_arg a = {id, path, sha256, now_ms, 0};
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, file_seen_body, &a);
    *include = rc ? 0 : a.include;
    return rc;
}

/* ---- state ----------------------------------------------------------------------------------- */

static const char SQL_STATE_GET[] = "SELECT state FROM sessions WHERE id = $1";
static const char SQL_STATE_LOCK[] = "SELECT state FROM sessions WHERE id = $1 FOR UPDATE";
static const char SQL_STATE_SET[] = "UPDATE sessions SET state = $2 WHERE id = $1";

static mn_status state_read(struct pg_conn *c, const char *sql, const char *id, char **out)
{
    PGresult *r = NULL;
    *out = NULL;
    mn_status rc = mn__pg_session_row(c, sql, id, "state", &r);
    if (rc)
        return rc;
    const char *v = mn__pg_col_text(r, 0, 0);
    if (v && !(*out = strdup(v)))
        rc = mn__nomem();
    PQclear(r);
    return rc;
}

struct state_arg {
    const char *id;
    char **out;
    mn_status (*fn)(void *user, const char *current, char **next);
    void *user;
};

static mn_status state_get_body(struct pg_conn *c, void *arg)
{
    struct state_arg *a = arg;
    return state_read(c, SQL_STATE_GET, a->id, a->out);
}

mn_status mn__pg_op_state_get(mn_store *st, const char *id, char **out)
{
    struct state_arg a = {id, out, NULL, NULL};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, state_get_body, &a);
}

static mn_status state_update_body(struct pg_conn *c, void *arg)
{
    struct state_arg *a = arg;
    char *current = NULL, *next = NULL;
    mn_status rc = state_read(c, SQL_STATE_LOCK, a->id, &current);
    if (!rc)
        rc = a->fn(a->user, current, &next);
    if (!rc) {
        struct pg_params p;
        mn__pg_params_init(&p);
        mn__pg_text(&p, a->id);
        mn__pg_text(&p, next);
        rc = mn__pg_query(c, SQL_STATE_SET, &p, 0, "state", NULL);
    }
    free(current);
    free(next);
    return rc;
}

mn_status mn__pg_op_state_update(mn_store *st, const char *id,
                                mn_status (*fn)(void *user, const char *current, char **next), void *user)
{
    struct state_arg a = {id, NULL, fn, user};
    return mn__pg_run(PG(st), PG_WRITE, state_update_body, &a);
}
