/*
 * memories.c — the PostgreSQL side of long-term memory (store_memory.h): the same rows as
 * sqlite/memories.c, keyword search through the generated memories.tsv column (schema.h
 * version 5), vectors as BYTEA. A new version closes the previous one in the same transaction.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "memory/fact.h"
#include "store/postgres/pg_int.h"
#include "store/store_memory.h"
#include "store/vecblob.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "vectors are stored as little-endian f32");

#define MEMORY_COLS                                                                                                  \
    "m.vid, m.id, m.version, m.text, m.kind, m.namespace, m.user_id, m.agent_id, m.session_id, m.metadata,"         \
    " m.sources, m.pinned, m.token_cap, m.valid_from, m.valid_to, m.recorded_at, m.superseded_at, m.change,"         \
    " m.actor, m.reason"
#define N_MEMORY_COLS 20

static const char SQL_END[] =
    "UPDATE memories SET superseded_at = $3::bigint, valid_to = $4::bigint WHERE id = $1 AND version = $2::bigint";
static const char SQL_INSERT[] =
    "INSERT INTO memories (id, version, text, kind, namespace, user_id, agent_id, session_id, metadata, sources,"
    " pinned, token_cap, valid_from, valid_to, recorded_at, superseded_at, change, actor, reason)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"
    " ON CONFLICT (id, version) DO NOTHING RETURNING vid";
/* keyed by the memory's id and the version (schema.h version 15: rows of one memory on one shard) */
static const char SQL_VEC_INSERT[] = "INSERT INTO memory_vectors (memory_id, vid, dim, vector) VALUES ($1, $2, $3, $4)";
static const char SQL_FORGET[] = "DELETE FROM memories WHERE id = $1";
/* Writers of memory_vector_log take its lock first thing (schema.h version 7: seq order is commit
 * order); the log trigger takes it too, for any other writer. */
static const char SQL_LOG_LOCK[] = "SELECT pg_advisory_xact_lock(" MN_PG_LOCK_MEMORY_LOG ")";

struct write_arg {
    const mn_memory *m;
    const float *vec;
    uint32_t dim;
    int64_t vid;
    int64_t removed;
    const char *id;
};

static mn_status insert_row(struct pg_conn *c, const mn_memory *m, int64_t *vid)
{
    char *sources = mn__fact_sources_json(m->sources, m->n_sources);
    if (!sources)
        return mn__nomem();
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, m->id);
    mn__pg_i64(&p, m->version);
    mn__pg_text(&p, m->text);
    mn__pg_text(&p, m->kind);
    mn__pg_text(&p, m->ns);
    mn__pg_text(&p, m->user_id);
    mn__pg_text(&p, m->agent_id);
    mn__pg_text(&p, m->session_id);
    mn__pg_text(&p, m->metadata ? m->metadata : "{}");
    mn__pg_text(&p, sources);
    mn__pg_i64(&p, m->pinned);
    mn__pg_i64(&p, m->token_cap);
    mn__pg_i64(&p, m->valid_from);
    mn__pg_i64(&p, m->valid_to);
    mn__pg_i64(&p, m->recorded_at);
    mn__pg_i64(&p, m->superseded_at);
    mn__pg_text(&p, m->change);
    mn__pg_text(&p, m->actor);
    mn__pg_text(&p, m->reason);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_INSERT, &p, 0, "memory insert", &r);
    free(sources);
    if (rc)
        return rc;
    *vid = PQntuples(r) ? mn__pg_col_i64(r, 0, 0) : 0;
    PQclear(r);
    return MN_OK;
}

static mn_status put_vector(struct pg_conn *c, const char *id, int64_t vid, const float *vec, uint32_t dim)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    unsigned char *blob = mn__vecblob_new(vec, dim);
    if (!blob)
        return mn__nomem();
    mn__pg_text(&p, id);
    mn__pg_i64(&p, vid);
    mn__pg_i64(&p, dim);
    mn__pg_bin(&p, blob, (int)(dim * 4));
    mn_status rc = mn__pg_query(c, SQL_VEC_INSERT, &p, 0, "memory vector", NULL);
    free(blob);
    return rc;
}

/* The memory_vector_log lock first thing (SQL_LOG_LOCK), then the row. */
static mn_status put_body(struct pg_conn *c, void *arg)
{
    struct write_arg *a = arg;
    mn_status rc = a->vec ? mn__pg_query(c, SQL_LOG_LOCK, NULL, 0, "memory write", NULL) : MN_OK;
    if (!rc)
        rc = insert_row(c, a->m, &a->vid);
    return !rc && a->vid && a->vec ? put_vector(c, a->m->id, a->vid, a->vec, a->dim) : rc;
}

/* In the transaction of begin…commit when inside one (the engine's version writes, imports). */
static mn_status op_put(mn_store *st, const mn_memory *m, const float *vec, uint32_t dim, int *added)
{
    struct write_arg a = {m, vec, dim, 0, 0, NULL};
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, put_body, &a);
    *added = a.vid != 0;
    return rc;
}

static mn_status op_end(mn_store *st, const char *id, int64_t version, int64_t superseded_at, int64_t valid_to)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, id);
    mn__pg_i64s(&p, 3, (int64_t[]){version, superseded_at, valid_to});
    return mn__pg_run_exec(PG(st), PG_WRITE, SQL_END, &p, "memory close", NULL);
}

static mn_status forget_body(struct pg_conn *c, void *arg)
{
    struct write_arg *a = arg;
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, a->id);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, SQL_LOG_LOCK, NULL, 0, "memory forget", NULL);
    if (!rc)
        rc = mn__pg_query(c, SQL_FORGET, &p, 0, "memory forget", &r);
    if (rc)
        return rc;
    a->removed = mn__pg_changes(r);
    PQclear(r);
    return MN_OK;
}

static mn_status op_forget(mn_store *st, const char *id, int64_t *removed)
{
    struct write_arg a = {NULL, NULL, 0, 0, 0, id};
    mn_status rc = mn__pg_run(PG(st), PG_WRITE, forget_body, &a);
    *removed = a.removed;
    return rc;
}

/* ---- queries --------------------------------------------------------------------------------- */

struct query_arg {
    const mn_store_memory_query *sq;
    mn_store_memory_fn fn;
    void *user;
    const char *terms; /* text[] literal, or NULL */
};

struct binds {
    const char *v[64];
    char num[64][24];
    int n;
    int oom;
};

static void add(struct binds *b, struct mn_buf *sql, const char *s) { b->oom |= mn__buf_adds(sql, s) != MN_OK; }

static void bind_text(struct binds *b, struct mn_buf *sql, const char *fmt, const char *v)
{
    b->v[b->n++] = v;
    b->oom |= mn__buf_addf(sql, fmt, b->n) != MN_OK;
}

static void bind_num(struct binds *b, struct mn_buf *sql, const char *fmt, int64_t v)
{
    snprintf(b->num[b->n], sizeof b->num[b->n], "%lld", (long long)v);
    b->v[b->n] = b->num[b->n];
    b->n++;
    b->oom |= mn__buf_addf(sql, fmt, b->n) != MN_OK;
}

static void build_where(const mn_store_memory_query *sq, struct binds *b, struct mn_buf *sql, json_t *meta)
{
    const mn_memory_query *q = sq->q;
    const char *col[6], *scope[6];
    for (size_t i = 0, n = mn__memory_scope(sq, col, scope); i < n; i++) {
        add(b, sql, " AND ");
        add(b, sql, col[i]);
        bind_text(b, sql, " = $%d", scope[i]);
    }
    if (q->pinned >= 0)
        bind_num(b, sql, " AND m.pinned = $%d::int", q->pinned);
    if (!sq->all_versions) {
        if (q->as_of) {
            bind_num(b, sql, " AND m.valid_from <= $%d::bigint", q->as_of);
            bind_num(b, sql, " AND (m.valid_to = 0 OR m.valid_to > $%d::bigint)", q->as_of);
        } else {
            add(b, sql, " AND m.superseded_at = 0");
            if (!q->include_closed) { /* true now: begun (a fact valid from tomorrow is not yet) and not ended */
                bind_num(b, sql, " AND m.valid_from <= $%d::bigint", sq->now_ms);
                bind_num(b, sql, " AND (m.valid_to = 0 OR m.valid_to > $%d::bigint)", sq->now_ms);
            }
        }
    }
    const char *key;
    json_t *val;
    json_object_foreach(meta, key, val)
    {
        /* keys checked by mn__fact_check_query: [A-Za-z0-9_-]; passed as a parameter anyway */
        bind_text(b, sql, " AND (m.metadata::jsonb -> $%d::text)", key);
        bind_text(b, sql, " = $%d::jsonb", json_string_value(val));
    }
}

static mn_status read_row(PGresult *r, int row, mn_memory *m)
{
    memset(m, 0, sizeof *m);
    m->id = (char *)mn__pg_col_text(r, row, 1);
    m->version = mn__pg_col_i64(r, row, 2);
    m->text = (char *)mn__pg_col_text(r, row, 3);
    m->kind = (char *)mn__pg_col_text(r, row, 4);
    m->ns = (char *)mn__pg_col_text(r, row, 5);
    m->user_id = (char *)mn__pg_col_text(r, row, 6);
    m->agent_id = (char *)mn__pg_col_text(r, row, 7);
    m->session_id = (char *)mn__pg_col_text(r, row, 8);
    m->metadata = (char *)mn__pg_col_text(r, row, 9);
    m->pinned = (int)mn__pg_col_i64(r, row, 11);
    m->token_cap = mn__pg_col_i64(r, row, 12);
    m->valid_from = mn__pg_col_i64(r, row, 13);
    m->valid_to = mn__pg_col_i64(r, row, 14);
    m->recorded_at = mn__pg_col_i64(r, row, 15);
    m->superseded_at = mn__pg_col_i64(r, row, 16);
    m->change = (char *)mn__pg_col_text(r, row, 17);
    m->actor = (char *)mn__pg_col_text(r, row, 18);
    m->reason = (char *)mn__pg_col_text(r, row, 19);
    return mn__fact_sources_parse(mn__pg_col_text(r, row, 10), &m->sources, &m->n_sources);
}

/* The metadata filter's values as JSON texts by key (NULL when there is none). */
static json_t *meta_values(const mn_store_memory_query *sq)
{
    if (!sq->q->metadata)
        return NULL;
    json_error_t e;
    json_t *o = json_loads(sq->q->metadata, 0, &e);
    json_t *meta = json_object();
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val)
    {
        char *vj = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
        json_object_set_new(meta, key, json_string(vj ? vj : "null"));
        free(vj);
    }
    json_decref(o);
    return meta;
}

/* Runs a built query (results in binary); *r NULL on failure. */
static mn_status run_built(struct pg_conn *c, const struct mn_buf *sql, const struct binds *b, const char *what,
                           PGresult **r)
{
    *r = NULL;
    if (b->oom)
        return mn__nomem();
    PGresult *got = PQexecParams(c->pg, sql->data, b->n, NULL, b->v, NULL, NULL, 1);
    if (!got || PQresultStatus(got) != PGRES_TUPLES_OK) {
        mn_status rc = mn__pg_fail(c, got, what);
        PQclear(got);
        return rc;
    }
    *r = got;
    return MN_OK;
}

static mn_status query_body(struct pg_conn *c, void *arg)
{
    float *vbuf = NULL; /* the rows' vectors, decoded */
    uint32_t vcap = 0;
    struct query_arg *a = arg;
    const mn_store_memory_query *sq = a->sq;
    struct mn_buf sql = MN_BUF_INIT;
    struct binds b = {0};
    json_t *meta = meta_values(sq);
    struct mn_buf vids = MN_BUF_INIT; /* sq->vids as a bigint[] literal */
    for (size_t i = 0; i < sq->n_vids; i++)
        b.oom |= mn__buf_addf(&vids, "%s%lld", i ? "," : "{", (long long)sq->vids[i]) != MN_OK;
    b.oom |= sq->vids && mn__buf_adds(&vids, sq->n_vids ? "}" : "{}") != MN_OK;
    add(&b, &sql, "");
    if (a->terms) {
        bind_text(&b, &sql,
                  "WITH q AS MATERIALIZED (SELECT coalesce(string_agg('(' || x.q::text || ')', ' | '), '')::tsquery"
                  " AS q FROM (SELECT plainto_tsquery('mnemo', mn_fold(t)) AS q FROM unnest($%d::text[]) AS t) x"
                  " WHERE numnode(x.q) > 0) ",
                  a->terms);
    }
    add(&b, &sql, "SELECT " MEMORY_COLS);
    add(&b, &sql, a->terms ? ", ts_rank_cd(m.tsv, (SELECT q FROM q), 1)::text AS score"
                  : sq->vids ? ", (h.pos - 1)::text" : ", '0'");
    add(&b, &sql, sq->want_vectors ? ", v.dim, v.vector" : ", 0, NULL::bytea");
    if (sq->vids) /* the versions given, in their order */
        bind_text(&b, &sql, " FROM unnest($%d::bigint[]) WITH ORDINALITY AS h(vid, pos) JOIN memories m ON m.vid = h.vid",
                  vids.data);
    else
        add(&b, &sql, " FROM memories m");
    if (sq->want_vectors)
        add(&b, &sql, " JOIN memory_vectors v ON v.memory_id = m.id AND v.vid = m.vid");
    add(&b, &sql, " WHERE true");
    if (a->terms)
        add(&b, &sql, " AND m.tsv @@ (SELECT q FROM q)");
    build_where(sq, &b, &sql, meta);
    if (sq->all_versions)
        add(&b, &sql, " ORDER BY m.id, m.version");
    else if (sq->vids && !a->terms)
        add(&b, &sql, " ORDER BY h.pos");
    else if (a->terms)
        add(&b, &sql, " ORDER BY score DESC, m.vid");
    else
        add(&b, &sql, " ORDER BY m.recorded_at DESC, m.vid DESC");
    if (sq->limit)
        b.oom |= mn__buf_addf(&sql, " LIMIT %zu OFFSET %zu", sq->limit, sq->offset) != MN_OK;
    PGresult *r = NULL;
    mn_status rc = run_built(c, &sql, &b, "memory query", &r);
    for (int i = 0; !rc && r && i < PQntuples(r); i++) {
        mn_memory m;
        if ((rc = read_row(r, i, &m)))
            break;
        const float *vec = NULL;
        uint32_t dim = 0;
        if (sq->want_vectors) {
            int64_t d = mn__pg_col_i64(r, i, N_MEMORY_COLS + 1);
            vec = mn__vecblob_read(PQgetvalue(r, i, N_MEMORY_COLS + 2), (size_t)PQgetlength(r, i, N_MEMORY_COLS + 2),
                                  d, &vbuf, &vcap);
            dim = vec ? (uint32_t)d : 0;
        }
        c->visible = 1;
        int stop = a->fn(a->user, &m, mn__pg_col_double(r, i, N_MEMORY_COLS), vec, dim);
        free(m.sources);
        if (stop)
            break;
    }
    PQclear(r);
    free(vbuf);
    json_decref(meta);
    mn__buf_release(&sql);
    mn__buf_release(&vids);
    return rc;
}

static mn_status op_query(mn_store *st, const mn_store_memory_query *sq, mn_store_memory_fn fn, void *user)
{
    struct mn_buf terms = MN_BUF_INIT;
    size_t n = 0;
    mn_status rc = MN_OK;
    if (sq->match && (rc = mn__pg_match_terms(sq->match, &terms, &n)) == MN_OK && n == 0) {
        mn__buf_release(&terms);
        return MN_OK;
    }
    struct query_arg a = {sq, fn, user, sq->match ? terms.data : NULL};
    if (!rc)
        rc = mn__pg_run(PG(st), PG_AUTOCOMMIT, query_body, &a);
    mn__buf_release(&terms);
    return rc;
}

struct filter_arg {
    const mn_store_memory_query *sq;
    mn_store_score_fn fn;
    void *user;
};

static mn_status vec_filter_body(struct pg_conn *c, void *arg)
{
    struct filter_arg *a = arg;
    mn_store_memory_query f = *a->sq;
    f.id = NULL;
    f.match = NULL;
    struct mn_buf sql = MN_BUF_INIT;
    struct binds b = {0};
    json_t *meta = meta_values(&f);
    add(&b, &sql, "SELECT m.vid FROM memory_vectors v JOIN memories m ON m.id = v.memory_id AND m.vid = v.vid"
                  " WHERE true");
    build_where(&f, &b, &sql, meta);
    PGresult *r = NULL;
    mn_status rc = run_built(c, &sql, &b, "memory filter", &r);
    for (int i = 0; !rc && r && i < PQntuples(r); i++) {
        c->visible = 1;
        if (a->fn(a->user, mn__pg_col_i64(r, i, 0), 0))
            break;
    }
    PQclear(r);
    json_decref(meta);
    mn__buf_release(&sql);
    return rc;
}

static mn_status op_vec_filter(mn_store *st, const mn_store_memory_query *q, mn_store_score_fn fn, void *user)
{
    struct filter_arg a = {q, fn, user};
    return mn__pg_run(PG(st), PG_AUTOCOMMIT, vec_filter_body, &a);
}

const struct mn_store_memory_ops mn_pg_memory_ops = {
    .put = op_put,
    .end = op_end,
    .query = op_query,
    .forget = op_forget,
    .vec_filter = op_vec_filter,
    .vec_scan = mn__pg_memory_vec_scan,
    .vec_changes = mn__pg_memory_vec_changes,
    .vec_get = mn__pg_memory_vec_get,
};
