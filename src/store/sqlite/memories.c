/*
 * memories.c — the SQLite side of long-term memory (store_memory.h): one row per version in
 * `memories`, its text in memories_fts, its vector in memory_vectors (schema.h version 5).
 * A new version closes the previous one in the same write transaction. docs/memory.md.
 */
#include <stdlib.h>
#include <string.h>

#include "memory/fact.h"
#include "store/sqlite/sqlite_int.h"
#include "store/store_memory.h"
#include "store/vecblob.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "vectors are stored as little-endian f32");

#define S(st) ((struct sqlite_store *)(st))
#define MEMORY_COLS                                                                                                  \
    "m.vid, m.id, m.version, m.text, m.kind, m.namespace, m.user_id, m.agent_id, m.session_id, m.metadata,"         \
    " m.sources, m.pinned, m.token_cap, m.valid_from, m.valid_to, m.recorded_at, m.superseded_at, m.change,"         \
    " m.actor, m.reason"
#define N_MEMORY_COLS 20

static const char SQL_END[] = "UPDATE memories SET superseded_at = ?3, valid_to = ?4 WHERE id = ?1 AND version = ?2";
static const char SQL_INSERT[] =
    "INSERT INTO memories (id, version, text, kind, namespace, user_id, agent_id, session_id, metadata, sources,"
    " pinned, token_cap, valid_from, valid_to, recorded_at, superseded_at, change, actor, reason)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)"
    " ON CONFLICT (id, version) DO NOTHING";
static const char SQL_FTS_INSERT[] = "INSERT INTO memories_fts (rowid, text) VALUES (?1, ?2)";
static const char SQL_VEC_INSERT[] = "INSERT INTO memory_vectors (vid, dim, vector) VALUES (?1, ?2, ?3)";
static const char SQL_FTS_FORGET[] = "DELETE FROM memories_fts WHERE rowid IN (SELECT vid FROM memories WHERE id = ?1)";
static const char SQL_FORGET[] = "DELETE FROM memories WHERE id = ?1";
static const char SQL_FTS_OPTIMIZE[] = "INSERT INTO memories_fts (memories_fts) VALUES ('optimize')";

/* Inserts the row; *vid gets its rowid, 0 when (id, version) was there already. */
static mn_status insert_row(struct sqlite_store *s, const mn_memory *m, int64_t *vid)
{
    sqlite3_stmt *st = NULL;
    char *sources = mn__fact_sources_json(m->sources, m->n_sources);
    if (!sources)
        return mn__nomem();
    mn_status rc = mn__sqlite_stmt(s, SQL_INSERT, &st);
    if (rc) {
        free(sources);
        return rc;
    }
    mn__sqlite_bind_text(st, 1, m->id);
    sqlite3_bind_int64(st, 2, m->version);
    mn__sqlite_bind_text(st, 3, m->text);
    mn__sqlite_bind_text(st, 4, m->kind);
    mn__sqlite_bind_text(st, 5, m->ns);
    mn__sqlite_bind_text(st, 6, m->user_id);
    mn__sqlite_bind_text(st, 7, m->agent_id);
    mn__sqlite_bind_text(st, 8, m->session_id);
    mn__sqlite_bind_text(st, 9, m->metadata ? m->metadata : "{}");
    mn__sqlite_bind_text(st, 10, sources);
    sqlite3_bind_int(st, 11, m->pinned);
    sqlite3_bind_int64(st, 12, m->token_cap);
    sqlite3_bind_int64(st, 13, m->valid_from);
    sqlite3_bind_int64(st, 14, m->valid_to);
    sqlite3_bind_int64(st, 15, m->recorded_at);
    sqlite3_bind_int64(st, 16, m->superseded_at);
    mn__sqlite_bind_text(st, 17, m->change);
    mn__sqlite_bind_text(st, 18, m->actor);
    mn__sqlite_bind_text(st, 19, m->reason);
    rc = mn__sqlite_step_done(s, st, "memory insert");
    free(sources);
    *vid = !rc && sqlite3_changes(s->db) ? sqlite3_last_insert_rowid(s->db) : 0;
    if (rc || !*vid)
        return rc;
    if ((rc = mn__sqlite_stmt(s, SQL_FTS_INSERT, &st)))
        return rc;
    sqlite3_bind_int64(st, 1, *vid);
    mn__sqlite_bind_text(st, 2, m->text);
    return mn__sqlite_step_done(s, st, "memory keyword index");
}

static mn_status put_vector(struct sqlite_store *s, int64_t vid, const float *vec, uint32_t dim)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_VEC_INSERT, &st);
    if (rc)
        return rc;
    unsigned char *blob = mn__vecblob_new(vec, dim);
    if (!blob)
        return mn__nomem();
    sqlite3_bind_int64(st, 1, vid);
    sqlite3_bind_int64(st, 2, dim);
    sqlite3_bind_blob(st, 3, blob, (int)(dim * 4), SQLITE_STATIC);
    rc = mn__sqlite_step_done(s, st, "memory vector");
    free(blob);
    return rc;
}

struct put_arg {
    const mn_memory *m;
    const float *vec;
    uint32_t dim;
    int64_t vid;
};

static mn_status put_body(struct sqlite_store *s, void *arg)
{
    struct put_arg *a = arg;
    mn_status rc = insert_row(s, a->m, &a->vid);
    return !rc && a->vid && a->vec ? put_vector(s, a->vid, a->vec, a->dim) : rc;
}

/* In the transaction of begin…commit when inside one (the engine's version writes, imports). */
static mn_status op_put(mn_store *st, const mn_memory *m, const float *vec, uint32_t dim, int *added)
{
    struct put_arg a = {m, vec, dim, 0};
    mn_status rc = mn__sqlite_run_write(st, put_body, NULL, &a);
    *added = a.vid != 0;
    return rc;
}

struct end_arg {
    const char *id;
    int64_t version, superseded_at, valid_to;
};

static mn_status end_body(struct sqlite_store *s, void *arg)
{
    struct end_arg *a = arg;
    return mn__sqlite_run(s, SQL_END, "memory close",
                          ARGS(ARG_TEXT(a->id), ARG_INT(a->version), ARG_INT(a->superseded_at), ARG_INT(a->valid_to)));
}

static mn_status op_end(mn_store *st, const char *id, int64_t version, int64_t superseded_at, int64_t valid_to)
{
    struct end_arg a = {id, version, superseded_at, valid_to};
    return mn__sqlite_run_write(st, end_body, NULL, &a);
}

static mn_status forget_locked(struct sqlite_store *s, const char *id, int64_t *removed)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_begin_write(s);
    if (!rc && !(rc = mn__sqlite_stmt(s, SQL_FTS_FORGET, &st))) {
        mn__sqlite_bind_text(st, 1, id);
        rc = mn__sqlite_step_done(s, st, "memory forget");
    }
    if (!rc && !(rc = mn__sqlite_stmt(s, SQL_FORGET, &st))) {
        mn__sqlite_bind_text(st, 1, id);
        rc = mn__sqlite_step_done(s, st, "memory forget");
        *removed = sqlite3_changes(s->db);
    }
    /* An FTS5 delete only adds delete markers: the forgotten terms stay in their segments
     * (memories_fts_data) until a merge reaches them. 'optimize' merges every segment into one,
     * now, in the same transaction (as the messages' index is after a delete: erasure.md). */
    if (!rc && *removed)
        rc = mn__sqlite_exec_stmt(s, SQL_FTS_OPTIMIZE, "memory forget");
    if (rc) {
        mn__sqlite_rollback(s);
        *removed = 0;
        return rc;
    }
    if ((rc = mn__sqlite_commit(s)))
        return rc;
    if (*removed) /* the WAL still holds the pages written before (the memory's insert among them) */
        mn__sqlite_wal_truncate(s);
    return MN_OK;
}

static mn_status op_forget(mn_store *st, const char *id, int64_t *removed)
{
    *removed = 0;
    LOCKED(S(st), forget_locked(S(st), id, removed));
}

/* ---- queries --------------------------------------------------------------------------------- */

/* Appends the WHERE conditions of q; binds are numbered from 1 in the order of vals. */
struct binds {
    const char *text[64];
    int64_t num[64];
    int is_num[64];
    int n;
    int oom;
};

static void add(struct binds *b, struct mn_buf *sql, const char *s)
{
    b->oom |= mn__buf_adds(sql, s) != MN_OK;
}

static void bind_text(struct binds *b, struct mn_buf *sql, const char *fmt, const char *v)
{
    b->text[b->n] = v;
    b->is_num[b->n++] = 0;
    b->oom |= mn__buf_addf(sql, fmt, b->n) != MN_OK;
}

static void bind_num(struct binds *b, struct mn_buf *sql, const char *fmt, int64_t v)
{
    b->num[b->n] = v;
    b->is_num[b->n++] = 1;
    b->oom |= mn__buf_addf(sql, fmt, b->n) != MN_OK;
}

static mn_status build_where(const mn_store_memory_query *sq, struct binds *b, struct mn_buf *sql,
                             json_t **meta_keep)
{
    const mn_memory_query *q = sq->q;
    const char *col[6], *scope[6];
    for (size_t i = 0, n = mn__memory_scope(sq, col, scope); i < n; i++) {
        add(b, sql, " AND ");
        add(b, sql, col[i]);
        bind_text(b, sql, " = ?%d", scope[i]);
    }
    if (q->pinned >= 0)
        bind_num(b, sql, " AND m.pinned = ?%d", q->pinned);
    if (!sq->all_versions) {
        if (q->as_of) {
            bind_num(b, sql, " AND m.valid_from <= ?%d", q->as_of);
            bind_num(b, sql, " AND (m.valid_to = 0 OR m.valid_to > ?%d)", q->as_of);
        } else {
            add(b, sql, " AND m.superseded_at = 0");
            if (!q->include_closed) { /* true now: begun (a fact valid from tomorrow is not yet) and not ended */
                bind_num(b, sql, " AND m.valid_from <= ?%d", sq->now_ms);
                bind_num(b, sql, " AND (m.valid_to = 0 OR m.valid_to > ?%d)", sq->now_ms);
            }
        }
    }
    if (q->metadata) {
        /* keys checked by mn__fact_check_query: [A-Za-z0-9_-], safe inside a quoted JSON path */
        json_error_t e;
        json_t *o = json_loads(q->metadata, 0, &e);
        if (!o)
            return mn__nomem();
        const char *key;
        json_t *val;
        json_object_foreach(o, key, val)
        {
            char *vj = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
            json_object_set_new(o, key, json_string(vj ? vj : "null"));
            free(vj);
            b->oom |= mn__buf_addf(sql, " AND json_extract(m.metadata, '$.\"%s\"') IS json_extract(", key) != MN_OK;
            bind_text(b, sql, "?%d, '$')", json_string_value(json_object_get(o, key)));
            /* json_extract gives true as 1: the value alone let true match 1 and 1.0. A boolean
             * matches a boolean only; numbers stay numbers (1 matches 1.0, as jsonb's = on PG) */
            b->oom |= mn__buf_addf(sql,
                                  " AND (json_type(m.metadata, '$.\"%s\"') IN ('true', 'false'))"
                                  " = (json_type(?%d, '$') IN ('true', 'false'))",
                                  key, b->n) != MN_OK;
        }
        *meta_keep = o; /* owns the bound texts */
    }
    return b->oom ? mn__nomem() : MN_OK;
}

static void bind_all(sqlite3_stmt *st, const struct binds *b)
{
    for (int i = 0; i < b->n; i++) {
        if (b->is_num[i])
            sqlite3_bind_int64(st, i + 1, b->num[i]);
        else
            sqlite3_bind_text(st, i + 1, b->text[i], -1, SQLITE_STATIC);
    }
}

static mn_status read_row(sqlite3_stmt *st, mn_memory *m)
{
    memset(m, 0, sizeof *m);
    m->id = (char *)mn__sqlite_col_text(st, 1);
    m->version = sqlite3_column_int64(st, 2);
    m->text = (char *)mn__sqlite_col_text(st, 3);
    m->kind = (char *)mn__sqlite_col_text(st, 4);
    m->ns = (char *)mn__sqlite_col_text(st, 5);
    m->user_id = (char *)mn__sqlite_col_text(st, 6);
    m->agent_id = (char *)mn__sqlite_col_text(st, 7);
    m->session_id = (char *)mn__sqlite_col_text(st, 8);
    m->metadata = (char *)mn__sqlite_col_text(st, 9);
    m->pinned = sqlite3_column_int(st, 11);
    m->token_cap = sqlite3_column_int64(st, 12);
    m->valid_from = sqlite3_column_int64(st, 13);
    m->valid_to = sqlite3_column_int64(st, 14);
    m->recorded_at = sqlite3_column_int64(st, 15);
    m->superseded_at = sqlite3_column_int64(st, 16);
    m->change = (char *)mn__sqlite_col_text(st, 17);
    m->actor = (char *)mn__sqlite_col_text(st, 18);
    m->reason = (char *)mn__sqlite_col_text(st, 19);
    return mn__fact_sources_parse(mn__sqlite_col_text(st, 10), &m->sources, &m->n_sources);
}

/* A keyword search within one user's memories, when they are few: their rows are read once from
 * the user index and each match is tested against that list before it is joined and ranked
 * (`+rowid IN (…)`: the `+` keeps FTS5 from seeking each row, which would recount the idf; the
 * scores and the order stay those of the whole index, as in search.c). Past this many rows of the
 * user, joining every match is the cheaper plan. */
#define SMALL_SCOPE 20000
static const char SQL_USER_ROWS[] = "SELECT count(*) FROM (SELECT 1 FROM memories WHERE user_id = ?1 LIMIT 20001)";

static int small_user_scope(struct sqlite_store *s, const char *user_id)
{
    sqlite3_stmt *st = NULL;
    if (mn__sqlite_stmt(s, SQL_USER_ROWS, &st))
        return 0;
    sqlite3_bind_text(st, 1, user_id, -1, SQLITE_STATIC);
    int small = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) <= SMALL_SCOPE;
    mn__sqlite_done(st);
    return small;
}

/* Prepares a statement built with add() and binds its parameters (the caller finalizes it). */
/* The statement built so far (*st NULL when building ran out of memory or it fails). */
static mn_status prepare_built(struct sqlite_store *s, const struct mn_buf *sql, const struct binds *b, const char *what,
                               sqlite3_stmt **st)
{
    *st = NULL;
    if (b->oom)
        return mn__nomem();
    int r = sqlite3_prepare_v2(s->db, sql->data, -1, st, NULL);
    if (r != SQLITE_OK)
        return mn__sqlite_fail(s, r, what);
    bind_all(*st, b);
    return MN_OK;
}

struct query_arg {
    const mn_store_memory_query *q;
    mn_store_memory_fn fn;
    void *user;
};

/* The body of op_query (held.c's runners). */
static mn_status query_body(struct sqlite_store *s, void *arg)
{
    const struct query_arg *a = arg;
    const mn_store_memory_query *sq = a->q;
    mn_store_memory_fn fn = a->fn;
    void *user = a->user;
    float *vbuf = NULL; /* the rows' vectors, decoded */
    uint32_t vcap = 0;
    struct mn_buf sql = MN_BUF_INIT;
    struct binds b = {0};
    json_t *meta = NULL;
    struct mn_buf vids = MN_BUF_INIT; /* sq->vids as a JSON array */
    for (size_t i = 0; i < sq->n_vids; i++)
        b.oom |= mn__buf_addf(&vids, "%s%lld", i ? "," : "[", (long long)sq->vids[i]) != MN_OK;
    b.oom |= sq->vids && mn__buf_adds(&vids, sq->n_vids ? "]" : "[]") != MN_OK;
    add(&b, &sql, "SELECT " MEMORY_COLS);
    add(&b, &sql, sq->match ? ", -bm25(memories_fts)" : sq->vids ? ", j.key" : ", 0");
    add(&b, &sql, sq->want_vectors ? ", v.dim, v.vector" : ", 0, NULL");
    if (sq->match) {
        add(&b, &sql, " FROM memories_fts JOIN memories m ON m.vid = memories_fts.rowid");
    } else if (sq->vids) { /* the versions given, in their order */
        bind_text(&b, &sql, " FROM json_each(?%d) j CROSS JOIN memories m ON m.vid = j.value", vids.data);
    } else {
        add(&b, &sql, " FROM memories m");
    }
    if (sq->want_vectors)
        add(&b, &sql, " JOIN memory_vectors v ON v.vid = m.vid");
    add(&b, &sql, " WHERE 1");
    if (sq->match)
        bind_text(&b, &sql, " AND memories_fts MATCH ?%d", sq->match);
    if (sq->match && sq->q->user_id && small_user_scope(s, sq->q->user_id))
        bind_text(&b, &sql, " AND +memories_fts.rowid IN (SELECT vid FROM memories WHERE user_id = ?%d)", sq->q->user_id);
    mn_status rc = build_where(sq, &b, &sql, &meta);
    if (sq->all_versions)
        add(&b, &sql, " ORDER BY m.id, m.version");
    else if (sq->vids && !sq->match)
        add(&b, &sql, " ORDER BY j.key");
    else if (sq->match)
        add(&b, &sql, " ORDER BY memories_fts.rank, m.vid");
    else if (sq->want_vectors) /* a scan for the best scores: the table's order, no sort of the rows */
        add(&b, &sql, " ORDER BY m.vid DESC");
    else
        add(&b, &sql, " ORDER BY m.recorded_at DESC, m.vid DESC");
    if (sq->limit)
        b.oom |= mn__buf_addf(&sql, " LIMIT %zu OFFSET %zu", sq->limit, sq->offset) != MN_OK;
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = prepare_built(s, &sql, &b, "memory query", &st);
    if (!rc) {
        int r;
        while ((r = sqlite3_step(st)) == SQLITE_ROW) {
            mn_memory m;
            if ((rc = read_row(st, &m)))
                break;
            const float *vec = NULL;
            uint32_t dim = 0;
            if (sq->want_vectors) {
                int64_t d = sqlite3_column_int64(st, N_MEMORY_COLS + 1);
                vec = mn__vecblob_read(sqlite3_column_blob(st, N_MEMORY_COLS + 2),
                                      (size_t)sqlite3_column_bytes(st, N_MEMORY_COLS + 2), d, &vbuf, &vcap);
                dim = vec ? (uint32_t)d : 0;
            }
            int stop = fn(user, &m, sqlite3_column_double(st, N_MEMORY_COLS), vec, dim);
            free(m.sources);
            if (stop)
                break;
        }
        if (!rc && r != SQLITE_ROW && r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "memory query");
    }
    sqlite3_finalize(st);
    free(vbuf);
    json_decref(meta);
    mn__buf_release(&sql);
    mn__buf_release(&vids);
    return rc;
}

/* On begin's connection when inside begin…commit (a version write reads the earlier ones). Not
 * a scan (mn__sqlite_run_scan): the callback may write to another handle this thread holds in
 * begin…commit (migrate copies memories from a query's rows into its destination). */
static mn_status op_query(mn_store *st, const mn_store_memory_query *q, mn_store_memory_fn fn, void *user)
{
    struct query_arg a = {q, fn, user};
    return mn__sqlite_run_read(st, query_body, &a);
}

static mn_status vec_filter_locked(struct sqlite_store *s, const mn_store_memory_query *sq, mn_store_score_fn fn,
                                   void *user)
{
    struct mn_buf sql = MN_BUF_INIT;
    struct binds b = {0};
    json_t *meta = NULL;
    mn_store_memory_query f = *sq;
    f.id = NULL;
    f.match = NULL;
    add(&b, &sql, "SELECT m.vid FROM memory_vectors v JOIN memories m ON m.vid = v.vid WHERE 1");
    mn_status rc = build_where(&f, &b, &sql, &meta);
    sqlite3_stmt *st = NULL;
    if (!rc)
        rc = prepare_built(s, &sql, &b, "memory filter", &st);
    if (!rc) {
        int r;
        while ((r = sqlite3_step(st)) == SQLITE_ROW)
            if (fn(user, sqlite3_column_int64(st, 0), 0))
                break;
        if (r != SQLITE_ROW && r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "memory filter");
    }
    sqlite3_finalize(st);
    json_decref(meta);
    mn__buf_release(&sql);
    return rc;
}

static mn_status op_vec_filter(mn_store *st, const mn_store_memory_query *q, mn_store_score_fn fn, void *user)
{
    LOCKED(S(st), vec_filter_locked(S(st), q, fn, user));
}

const struct mn_store_memory_ops mn_sqlite_memory_ops = {
    .put = op_put,
    .end = op_end,
    .query = op_query,
    .forget = op_forget,
    .vec_filter = op_vec_filter,
    .vec_scan = mn__sqlite_memory_vec_scan,
    .vec_changes = mn__sqlite_memory_vec_changes,
    .vec_get = mn__sqlite_memory_vec_get,
};
