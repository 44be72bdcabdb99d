/*
 * rows.c — the PostgreSQL backend's row primitives for changes to stored messages
 * (store_rows.h; the SQLite ones are sqlite/rows.c); the use cases over them are in
 * src/engine/edit.c. The keyword index is the generated tsv column, so a rewrite keeps it in step.
 */
#include <libpq-fe.h>
#include <stdint.h>

#include "store/postgres/pg_int.h"
#include "store/store_rows.h"
#include "util/err.h"
#include "util/banned.h"

#define TX(tx) ((struct pg_conn *)(tx))

static const char SQL_MESSAGE_ROW[] = "SELECT tokens, seq, (role = 'user')::integer, active FROM messages"
                                      " WHERE id = $1::bigint AND session_sid = $2::bigint FOR UPDATE";
static const char SQL_MESSAGE_REMOVE[] = "DELETE FROM messages WHERE id = $1::bigint";
static const char SQL_MESSAGE_REWRITE[] =
    "UPDATE messages SET content = $2, metadata = coalesce($3, metadata), tokens = $4::bigint WHERE id = $1::bigint";
static const char SQL_TITLE_FOLLOW[] =
    "UPDATE sessions SET title = nullif($3, ''), title_seq = CASE WHEN $3 = '' THEN 0 ELSE title_seq END"
    " WHERE sid = $1::bigint AND title_seq = $2::bigint";
static const char SQL_SESSION_COUNTS[] =
    "UPDATE sessions SET message_count = message_count + $2::bigint, token_count = token_count + $3::bigint,"
    " turn_count = greatest(turn_count + $4::bigint, 0), inactive_count = greatest(inactive_count + $5::bigint, 0),"
    " updated_at = $6::bigint WHERE sid = $1::bigint";
/* The embed_log trigger tells every node's index of the dropped vector. */
static const char SQL_VECTOR_DROP[] = "DELETE FROM embeddings WHERE message_id = $1::bigint";
static const char SQL_REQUEUE[] =
    "INSERT INTO embed_queue (message_id) SELECT $1::bigint WHERE (SELECT value FROM meta"
    " WHERE key = 'embed.queue') = '1' ON CONFLICT DO NOTHING";
static const char SQL_SUMMARIES_DROP[] =
    "DELETE FROM summaries WHERE session_sid = $1::bigint AND covers_upto >= $2::bigint";
static const char SQL_EVENT_ADD[] =
    "INSERT INTO events (session_sid, kind, data, created_at) VALUES ($1::bigint, $2, $3, $4::bigint)";

/* Not pipelined, unlike an append group: a body reads what it changes. */
static mn_status row_write(mn_store *st, mn_store_tx_body body, void *arg)
{
    return mn_pg_tx_run(st, PG_WRITE, body, arg);
}

/* Runs a statement of int64 parameters $1..$n; *changed (may be NULL) gets the rows it changed. */
static mn_status run_ints(struct pg_conn *c, const char *sql, const char *what, int n, const int64_t *v,
                          int64_t *changed)
{
    struct pg_params p;
    mn_pg_params_init(&p);
    for (int i = 0; i < n; i++)
        mn_pg_i64(&p, v[i]);
    PGresult *r = NULL;
    mn_status rc = mn_pg_query(c, sql, &p, 0, what, changed ? &r : NULL);
    if (!rc && changed)
        *changed = mn_pg_changes(r);
    PQclear(r);
    return rc;
}

static mn_status message_row(mn_store_tx *tx, const char *session_id, int64_t message_id, mn_store_message_row *out)
{
    struct pg_conn *c = TX(tx);
    mn_status rc = mn_pg_session_sid(c, session_id, &out->sid, NULL);
    if (rc)
        return rc;
    struct pg_params p;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, message_id);
    mn_pg_i64(&p, out->sid);
    PGresult *r = NULL;
    if ((rc = mn_pg_query(c, SQL_MESSAGE_ROW, &p, 0, "message lookup", &r)))
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id, session_id);
    }
    out->tokens = mn_pg_col_i64(r, 0, 0);
    out->seq = mn_pg_col_i64(r, 0, 1);
    out->user = (int)mn_pg_col_i64(r, 0, 2);
    out->active = (int)mn_pg_col_i64(r, 0, 3);
    PQclear(r);
    return MN_OK;
}

static mn_status message_rewrite(mn_store_tx *tx, int64_t message_id, const char *content, const char *metadata,
                                 int64_t tokens)
{
    struct pg_params p;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, message_id);
    mn_pg_text(&p, content);
    mn_pg_text(&p, metadata);
    mn_pg_i64(&p, tokens);
    return mn_pg_query(TX(tx), SQL_MESSAGE_REWRITE, &p, 0, "message edit", NULL);
}

static mn_status title_follow(mn_store_tx *tx, int64_t sid, int64_t seq, const char *title)
{
    struct pg_params p;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, sid);
    mn_pg_i64(&p, seq);
    mn_pg_text(&p, title);
    return mn_pg_query(TX(tx), SQL_TITLE_FOLLOW, &p, 0, "title", NULL);
}

static mn_status message_remove(mn_store_tx *tx, int64_t message_id)
{
    return run_ints(TX(tx), SQL_MESSAGE_REMOVE, "message delete", 1, &message_id, NULL);
}

static mn_status session_counts(mn_store_tx *tx, int64_t sid, int64_t messages, int64_t tokens, int64_t users,
                                int64_t inactive, int64_t now_ms)
{
    return run_ints(TX(tx), SQL_SESSION_COUNTS, "session update", 6,
                    (int64_t[]){sid, messages, tokens, users, inactive, now_ms}, NULL);
}

static mn_status vector_stale(mn_store_tx *tx, int64_t message_id)
{
    mn_status rc = run_ints(TX(tx), SQL_VECTOR_DROP, "vector drop", 1, &message_id, NULL);
    return rc ? rc : run_ints(TX(tx), SQL_REQUEUE, "embedding queue", 1, &message_id, NULL);
}

static mn_status summaries_drop(mn_store_tx *tx, int64_t sid, int64_t seq, int64_t *dropped)
{
    *dropped = 0;
    return run_ints(TX(tx), SQL_SUMMARIES_DROP, "summary delete", 2, (int64_t[]){sid, seq}, dropped);
}

static mn_status event_add(mn_store_tx *tx, int64_t sid, const char *kind, const char *data, int64_t now_ms)
{
    struct pg_params p;
    mn_pg_params_init(&p);
    mn_pg_i64(&p, sid);
    mn_pg_text(&p, kind);
    mn_pg_text(&p, data);
    mn_pg_i64(&p, now_ms);
    return mn_pg_query(TX(tx), SQL_EVENT_ADD, &p, 0, "event", NULL);
}

/* PostgreSQL keeps no freed text of its own to erase: VACUUM reclaims dead rows. */
static void erased(mn_store_tx *tx) { (void)tx; }

const struct mn_store_row_ops mn_pg_row_ops = {
    .write = row_write,
    .message_row = message_row,
    .message_rewrite = message_rewrite,
    .message_remove = message_remove,
    .title_follow = title_follow,
    .session_counts = session_counts,
    .vector_stale = vector_stale,
    .summaries_drop = summaries_drop,
    .event_add = event_add,
    .erased = erased,
};
