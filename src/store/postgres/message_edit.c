/*
 * message_edit.c — the PostgreSQL backend's in-place message edit (store.h message_edit; the
 * SQLite one is sqlite/message_edit.c). The keyword index is the generated tsv column, so the
 * UPDATE itself keeps it in step; vectors, summaries, title and counters follow here.
 */
#include <libpq-fe.h>
#include <stdint.h>

#include "store/postgres/pg_int.h"
#include "util/err.h"
#include "util/banned.h"

static const char SQL_MESSAGE_FOR_EDIT[] =
    "SELECT tokens, seq FROM messages WHERE id = $1::bigint AND session_sid = $2::bigint FOR UPDATE";
/* A title taken from this message (title_seq is its seq $2, as in messages.c's
 * SQL_TITLE_FROM_MESSAGE) becomes the new text's and still comes from it, or goes when that
 * gives no title (''). */
static const char SQL_TITLE_FROM_MESSAGE[] =
    "UPDATE sessions SET title = nullif($3, ''), title_seq = CASE WHEN $3 = '' THEN 0 ELSE title_seq END"
    " WHERE sid = $1::bigint AND title_seq = $2::bigint";
static const char SQL_MESSAGE_EDIT[] =
    "UPDATE messages SET content = $2, metadata = coalesce($3, metadata), tokens = $4::bigint WHERE id = $1::bigint";
static const char SQL_SESSION_TOKENS[] =
    "UPDATE sessions SET token_count = token_count - $2::bigint + $3::bigint, updated_at = $4::bigint"
    " WHERE sid = $1::bigint";
/* The vector was of the old text: drop it (the embed_log trigger tells every node's index) and
 * queue the message again while the queue is on. */
static const char SQL_VECTOR_DROP[] = "DELETE FROM embeddings WHERE message_id = $1::bigint";
static const char SQL_REQUEUE[] =
    "INSERT INTO embed_queue (message_id) SELECT $1::bigint WHERE (SELECT value FROM meta"
    " WHERE key = 'embed.queue') = '1' ON CONFLICT DO NOTHING";
/* A summary that folded the message holds the old text: it goes (as a delete does). */
static const char SQL_SUMMARIES_COVERING[] =
    "WITH gone AS (DELETE FROM summaries WHERE session_sid = $1::bigint AND covers_upto >= $3::bigint RETURNING 1)"
    " INSERT INTO events (session_sid, kind, data, created_at)"
    " SELECT $1::bigint, 'summary_dropped', json_build_object('reason', 'message_edited', 'message_id', $2::bigint,"
    " 'seq', $3::bigint, 'summaries', count(*))::text, $4::bigint FROM gone HAVING count(*) > 0";
static const char SQL_EDITED_EVENT[] =
    "INSERT INTO events (session_sid, kind, data, created_at) VALUES ($1::bigint, 'message_edited',"
    " json_build_object('message_id', $2::bigint, 'seq', $3::bigint, 'tokens_before', $4::bigint,"
    " 'tokens_after', $5::bigint)::text, $6::bigint)";

struct edit_arg {
    const char *session_id;
    const mn_store_edit *e;
    int64_t seq;
};

/* Runs a statement of int64 parameters $1..$n. */
static mn_status run_ints(struct pg_conn *c, const char *sql, const char *what, int n, const int64_t *v)
{
    struct pg_params p;
    mn_pg_params_init(&p);
    for (int i = 0; i < n; i++)
        mn_pg_i64(&p, v[i]);
    return mn_pg_query(c, sql, &p, 0, what, NULL);
}

static mn_status retitle(struct pg_conn *c, int64_t sid, int64_t seq, const mn_store_edit *e)
{
    if (!e->title)
        return MN_OK;
    struct pg_params p;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, sid);
    mn_pg_i64(&p, seq);
    mn_pg_text(&p, e->title);
    return mn_pg_query(c, SQL_TITLE_FROM_MESSAGE, &p, 0, "title", NULL);
}

static mn_status write_content(struct pg_conn *c, const mn_store_edit *e)
{
    struct pg_params p;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, e->message_id);
    mn_pg_text(&p, e->content);
    mn_pg_text(&p, e->metadata);
    mn_pg_i64(&p, e->tokens);
    return mn_pg_query(c, SQL_MESSAGE_EDIT, &p, 0, "message edit", NULL);
}

static mn_status edit_body(struct pg_conn *c, void *arg)
{
    struct edit_arg *a = arg;
    const mn_store_edit *e = a->e;
    int64_t sid = 0;
    PGresult *r = NULL;
    mn_status rc = mn_pg_message_row(c, a->session_id, e->message_id, SQL_MESSAGE_FOR_EDIT, &sid, &r);
    if (rc)
        return rc;
    int64_t before = mn_pg_col_i64(r, 0, 0);
    a->seq = mn_pg_col_i64(r, 0, 1);
    PQclear(r);
    if ((rc = retitle(c, sid, a->seq, e)) || (rc = write_content(c, e)) ||
        (rc = run_ints(c, SQL_SESSION_TOKENS, "session update", 4, (int64_t[]){sid, before, e->tokens, e->now_ms})) ||
        (rc = run_ints(c, SQL_VECTOR_DROP, "vector drop", 1, &e->message_id)) ||
        (rc = run_ints(c, SQL_REQUEUE, "embedding queue", 1, &e->message_id)) ||
        (rc = run_ints(c, SQL_SUMMARIES_COVERING, "summary delete", 4,
                       (int64_t[]){sid, e->message_id, a->seq, e->now_ms})))
        return rc;
    return run_ints(c, SQL_EDITED_EVENT, "event", 6, (int64_t[]){sid, e->message_id, a->seq, before, e->tokens, e->now_ms});
}

mn_status mn_pg_op_message_edit(mn_store *st, const char *session_id, const mn_store_edit *e, int64_t *seq)
{
    struct edit_arg a = {session_id, e, 0};
    mn_status rc = mn_pg_run(PG(st), PG_WRITE, edit_body, &a);
    if (!rc && seq)
        *seq = a.seq;
    return rc;
}
