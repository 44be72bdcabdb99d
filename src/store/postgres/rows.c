/*
 * rows.c — the PostgreSQL backend's row primitives for changes to stored rows (store_rows.h;
 * the SQLite ones are sqlite/rows.c); the use cases over them are in src/engine/edit.c, turns.c,
 * fork.c and erase.c. The keyword index is the generated tsv column, so a rewrite keeps it in
 * step.
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
    "INSERT INTO embed_queue (message_id, session_sid) SELECT id, session_sid FROM messages WHERE id = $1::bigint"
    " AND (SELECT value FROM meta WHERE key = 'embed.queue') = '1' ON CONFLICT DO NOTHING";
static const char SQL_SUMMARIES_DROP[] =
    "DELETE FROM summaries WHERE session_sid = $1::bigint AND covers_upto >= $2::bigint";

/* FOR UPDATE: an append from another node waits for the clear or the new limit. */
static const char SQL_TURNS_ROW[] =
    "SELECT sid, last_seq, max_turns, cleared_seq, cleared_from FROM sessions WHERE id = $1 FOR UPDATE";
static const char SQL_TURNS_WRITE[] =
    "UPDATE sessions SET max_turns = $2::bigint, cleared_seq = $3::bigint, cleared_from = $4::bigint,"
    " updated_at = $5::bigint WHERE sid = $1::bigint";
static const char SQL_STATE_DROP[] = "UPDATE sessions SET state = NULL WHERE sid = $1::bigint";
static const char SQL_TURN_START[] = "SELECT seq FROM messages WHERE session_sid = $1::bigint AND role <> 'tool'"
                                     " ORDER BY seq DESC LIMIT 1 OFFSET $2::bigint";
static const char SQL_TURN_START_ACTIVE[] =
    "SELECT seq FROM messages WHERE session_sid = $1::bigint AND active = 1 AND role <> 'tool'"
    " ORDER BY seq DESC LIMIT 1 OFFSET $2::bigint";
static const char SQL_FIRST_ACTIVE[] =
    "SELECT seq FROM messages WHERE session_sid = $1::bigint AND active = 1 ORDER BY seq LIMIT 1";
static const char SQL_ACTIVATE[] =
    "UPDATE messages SET active = $4::integer WHERE session_sid = $1::bigint AND seq BETWEEN $2::bigint"
    " AND $3::bigint AND active <> $4::integer";
static const char SQL_REMOVE_RANGE[] =
    "WITH gone AS (DELETE FROM messages WHERE session_sid = $1::bigint AND seq BETWEEN $2::bigint AND $3::bigint"
    " RETURNING tokens, active)"
    " SELECT count(*), coalesce(sum(tokens), 0), count(*) FILTER (WHERE active = 0) FROM gone";

/* FOR UPDATE: the writers of the session's messages (appends, edits, deletes, clears) all write
 * its row, so they wait until a fork that reads them page by page commits. */
static const char SQL_SESSION_READ[] =
    "SELECT " MN_PG_SESSION_COLS ", sid, title_seq FROM sessions WHERE id = $1 FOR UPDATE";
static const char SQL_MESSAGES_READ[] =
    "SELECT " MN_PG_MESSAGE_COLS " FROM messages WHERE session_sid = $1::bigint AND seq > $2::bigint"
    " AND seq <= $3::bigint AND active = 1 ORDER BY seq LIMIT $4::bigint";
static const char SQL_TITLE_FROM[] = "UPDATE sessions SET title_seq = $2::bigint WHERE sid = $1::bigint";
static const char SQL_META_DROP[] = "DELETE FROM meta WHERE key = $1";

/* Not pipelined, unlike an append group: a body reads what it changes. */
static mn_status row_write(mn_store *st, mn_store_tx_body body, void *arg)
{
    return mn__pg_tx_run(st, PG_WRITE, body, arg);
}

/* Starts p with int64 parameters $1..$n. */
static void int_params(struct pg_params *p, int n, const int64_t *v)
{
    mn__pg_params_init(p);
    mn__pg_i64s(p, n, v);
}

/* Runs a statement of int64 parameters $1..$n; *changed (may be NULL) gets the rows it changed. */
static mn_status run_ints(struct pg_conn *c, const char *sql, const char *what, int n, const int64_t *v,
                          int64_t *changed)
{
    struct pg_params p;
    int_params(&p, n, v);
    return mn__pg_exec(c, sql, &p, what, changed);
}

static mn_status message_row(mn_store_tx *tx, const char *session_id, int64_t message_id, mn_store_message_row *out)
{
    struct pg_conn *c = TX(tx);
    mn_status rc = mn__pg_session_sid(c, session_id, &out->sid, NULL);
    if (rc)
        return rc;
    struct pg_params p;
    int_params(&p, 2, (int64_t[]){message_id, out->sid});
    PGresult *r = NULL;
    if ((rc = mn__pg_query(c, SQL_MESSAGE_ROW, &p, 0, "message lookup", &r)))
        return rc;
    if (PQntuples(r) != 1) {
        PQclear(r);
        return mn__err(MN_NOTFOUND, "message %lld not found in session %s", (long long)message_id, session_id);
    }
    out->tokens = mn__pg_col_i64(r, 0, 0);
    out->seq = mn__pg_col_i64(r, 0, 1);
    out->user = (int)mn__pg_col_i64(r, 0, 2);
    out->active = (int)mn__pg_col_i64(r, 0, 3);
    PQclear(r);
    return MN_OK;
}

static mn_status message_rewrite(mn_store_tx *tx, int64_t message_id, const char *content, const char *metadata,
                                 int64_t tokens)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, message_id);
    mn__pg_text(&p, content);
    mn__pg_text(&p, metadata);
    mn__pg_i64(&p, tokens);
    return mn__pg_query(TX(tx), SQL_MESSAGE_REWRITE, &p, 0, "message edit", NULL);
}

static mn_status title_follow(mn_store_tx *tx, int64_t sid, int64_t seq, const char *title)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_i64(&p, sid);
    mn__pg_i64(&p, seq);
    mn__pg_text(&p, title);
    return mn__pg_query(TX(tx), SQL_TITLE_FOLLOW, &p, 0, "title", NULL);
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
    return mn__pg_event_add(TX(tx), sid, kind, data, now_ms, "event");
}

/* The integer a query of int64 parameters $1..$n returns (0 when it returns no row). */
static mn_status one_int(struct pg_conn *c, const char *sql, const char *what, int n, const int64_t *v, int64_t *out)
{
    struct pg_params p;
    int_params(&p, n, v);
    return mn__pg_one_i64(c, sql, &p, what, out);
}

static mn_status turns_row(mn_store_tx *tx, const char *session_id, mn_store_turns_row *out)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_session_row(TX(tx), SQL_TURNS_ROW, session_id, "session lookup", &r);
    if (rc)
        return rc;
    *out = (mn_store_turns_row){mn__pg_col_i64(r, 0, 0), mn__pg_col_i64(r, 0, 1), mn__pg_col_i64(r, 0, 2),
                                mn__pg_col_i64(r, 0, 3), mn__pg_col_i64(r, 0, 4)};
    PQclear(r);
    return MN_OK;
}

static mn_status turns_write(mn_store_tx *tx, const mn_store_turns_row *row, int64_t now_ms)
{
    return run_ints(TX(tx), SQL_TURNS_WRITE, "session update", 5,
                    (int64_t[]){row->sid, row->max_turns, row->cleared_seq, row->cleared_from, now_ms}, NULL);
}

static mn_status state_drop(mn_store_tx *tx, int64_t sid)
{
    return run_ints(TX(tx), SQL_STATE_DROP, "state", 1, &sid, NULL);
}

static mn_status turn_start(mn_store_tx *tx, int64_t sid, int64_t n, int active_only, int64_t *seq)
{
    *seq = 0; /* n >= 1: the engine asks only with a turn limit (store_rows.h) */
    return one_int(TX(tx), active_only ? SQL_TURN_START_ACTIVE : SQL_TURN_START, "turn limit", 2,
                   (int64_t[]){sid, n - 1}, seq);
}

static mn_status first_active(mn_store_tx *tx, int64_t sid, int64_t *seq)
{
    return one_int(TX(tx), SQL_FIRST_ACTIVE, "active history", 1, &sid, seq);
}

static mn_status messages_activate(mn_store_tx *tx, int64_t sid, int64_t from_seq, int64_t upto_seq, int active,
                                   int64_t *changed)
{
    *changed = 0;
    return run_ints(TX(tx), SQL_ACTIVATE, "active history", 4, (int64_t[]){sid, from_seq, upto_seq, active != 0},
                    changed);
}

static mn_status messages_remove(mn_store_tx *tx, int64_t sid, int64_t from_seq, int64_t upto_seq,
                                 mn_store_removed *out)
{
    struct pg_params p;
    int_params(&p, 3, (int64_t[]){sid, from_seq, upto_seq});
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(TX(tx), SQL_REMOVE_RANGE, &p, 0, "message delete", &r);
    *out = rc ? (mn_store_removed){0, 0, 0}
              : (mn_store_removed){mn__pg_col_i64(r, 0, 0), mn__pg_col_i64(r, 0, 1), mn__pg_col_i64(r, 0, 2)};
    PQclear(r);
    return rc;
}

static mn_status session_read(mn_store_tx *tx, const char *session_id, mn_store_session_fn fn, void *user,
                              mn_store_session_row *out)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_session_row(TX(tx), SQL_SESSION_READ, session_id, "session lookup", &r);
    if (rc)
        return rc;
    mn_session row;
    mn__pg_row_session(r, 0, &row);
    out->sid = mn__pg_col_i64(r, 0, MN_PG_SESSION_NCOLS);
    out->title_seq = mn__pg_col_i64(r, 0, MN_PG_SESSION_NCOLS + 1);
    fn(user, &row);
    PQclear(r);
    return MN_OK;
}

static mn_status messages_read(mn_store_tx *tx, int64_t sid, const char *session_id, int64_t after_seq,
                               int64_t upto_seq, size_t limit, mn_store_message_fn fn, void *user)
{
    struct pg_params p;
    int_params(&p, 3, (int64_t[]){sid, after_seq, upto_seq});
    mn__pg_size(&p, limit);
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(TX(tx), SQL_MESSAGES_READ, &p, 0, "message read", &r);
    for (int i = 0; !rc && i < PQntuples(r); i++) {
        mn_message m;
        if (!(rc = mn__pg_row_message(r, i, 0, session_id, &m)) && fn(user, &m))
            break;
    }
    PQclear(r);
    return rc;
}

static mn_status title_from(mn_store_tx *tx, int64_t sid, int64_t seq)
{
    return run_ints(TX(tx), SQL_TITLE_FROM, "title", 2, (int64_t[]){sid, seq}, NULL);
}

static mn_status meta_drop(mn_store_tx *tx, const char *key)
{
    struct pg_params p;
    mn__pg_params_init(&p);
    mn__pg_text(&p, key);
    return mn__pg_query(TX(tx), SQL_META_DROP, &p, 0, "meta delete", NULL);
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
    .turns_row = turns_row,
    .turns_write = turns_write,
    .state_drop = state_drop,
    .turn_start = turn_start,
    .first_active = first_active,
    .messages_activate = messages_activate,
    .messages_remove = messages_remove,
    .session_read = session_read,
    .messages_read = messages_read,
    .title_from = title_from,
    .meta_drop = meta_drop,
    .erased = erased,
};
