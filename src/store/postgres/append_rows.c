/*
 * append_rows.c — an append group's messages in one set-based statement. In pipeline mode each
 * one-statement append (a message and its session's counters, messages.c) is not sent on its
 * own: its row is added to one array per column, and the next statement sent on the connection
 * (the COMMIT, a savepoint, a read) first sends them all as one INSERT … SELECT FROM unnest(…)
 * with one UPDATE per session (the sums of its appends). Order and results are those of the
 * statements it replaces; a failure surfaces at the commit like theirs, and the runner then runs
 * the group again without the pipeline, one statement per message (pg.c, mn__pg_run).
 */
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_int.h"
#include "store/store_append.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

enum { N_COLS = 23 };

struct pg_rows {
    size_t n;
    struct mn_buf col[N_COLS]; /* array literals without their closing brace: "{1,2,3", "{\"a\",NULL" */
};

/* ord: the rows' order; last_seq of a session is its last row's seq, the counters are sums, now
 * the last one. What the append decided (src/engine/append.c) comes with the row that carries
 * it: a title (and its seq) at most once per session, an expiry (0: leave it) with each. */
static const char SQL_APPEND_ROWS[] =
    "WITH d AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[],"
    " $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::integer[],"
    " $15::bigint[], $16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[], $20::text[], $21::bigint[],"
    " $22::bigint[], $23::bigint[])"
    " WITH ORDINALITY AS d(sid, seq, role, content, tool_calls, tool_call_id, name, tool_name, model, files,"
    " metadata, idem_key, tokens, pinned, created_at, id, added, ntokens, now, title, users, title_seq,"
    " expires_at, ord)),"
    " m AS (INSERT INTO messages (session_sid, seq, role, content, tool_calls, tool_call_id, name, tool_name,"
    " model, files, metadata, idem_key, tokens, pinned, created_at, id)"
    " SELECT sid, seq, role, content, tool_calls, tool_call_id, name, tool_name, model, files, metadata, idem_key,"
    " tokens, pinned, created_at, id FROM d ORDER BY ord),"
    " u AS (SELECT sid, (array_agg(seq ORDER BY ord DESC))[1] AS last_seq, sum(added) AS added,"
    " sum(ntokens) AS ntokens, (array_agg(now ORDER BY ord DESC))[1] AS now,"
    " (array_agg(title ORDER BY ord) FILTER (WHERE title IS NOT NULL))[1] AS title,"
    " (array_agg(title_seq ORDER BY ord) FILTER (WHERE title IS NOT NULL))[1] AS title_seq,"
    " max(expires_at) AS expires_at, sum(users) AS users FROM d GROUP BY sid)"
    " UPDATE sessions s SET last_seq = u.last_seq, message_count = s.message_count + u.added,"
    " token_count = s.token_count + u.ntokens, updated_at = u.now, turn_count = s.turn_count + u.users,"
    " title = coalesce(u.title, s.title), title_seq = CASE WHEN u.title IS NULL THEN s.title_seq ELSE u.title_seq END,"
    " expires_at = CASE WHEN u.expires_at > 0 THEN u.expires_at ELSE s.expires_at END"
    " FROM u WHERE s.sid = u.sid";

static mn_status add_i64(struct pg_rows *r, int col, int64_t v)
{
    struct mn_buf *b = &r->col[col];
    mn_status rc = mn__buf_addc(b, b->len ? ',' : '{');
    return rc ? rc : mn__buf_add_i64(b, v);
}

/* An array element: NULL, or the text in double quotes with " and \ escaped. */
static mn_status add_text(struct pg_rows *r, int col, const char *v)
{
    struct mn_buf *b = &r->col[col];
    mn_status rc = mn__buf_addc(b, b->len ? ',' : '{');
    if (rc || !v)
        return rc ? rc : mn__buf_adds(b, "NULL");
    if ((rc = mn__buf_addc(b, '"')))
        return rc;
    for (const char *s = v; *s && !rc;) {
        size_t run = strcspn(s, "\"\\");
        if (run)
            rc = mn__buf_add(b, s, run);
        s += run;
        if (*s && !rc) {
            char esc[2] = {'\\', *s++};
            rc = mn__buf_add(b, esc, 2);
        }
    }
    return rc ? rc : mn__buf_addc(b, '"');
}

mn_status mn__pg_rows_add(struct pg_conn *c, int64_t id, const mn_message *m, const struct mn_store_appended *a)
{
    if (!c->rows) {
        if (!(c->rows = calloc(1, sizeof *c->rows)))
            return mn__nomem();
        for (int k = 0; k < N_COLS; k++)
            mn__buf_init(&c->rows->col[k], 0);
    }
    struct pg_rows *r = c->rows;
    const char *meta = m->metadata && strcmp(m->metadata, "{}") != 0 ? m->metadata : NULL;
    mn_status rc = MN_OK;
    int k = 0;
    if (!rc) rc = add_i64(r, k++, a->sid);
    if (!rc) rc = add_i64(r, k++, m->seq);
    if (!rc) rc = add_text(r, k++, mn_role_name(m->role));
    if (!rc) rc = add_text(r, k++, m->content);
    if (!rc) rc = add_text(r, k++, m->tool_calls);
    if (!rc) rc = add_text(r, k++, m->tool_call_id);
    if (!rc) rc = add_text(r, k++, m->name);
    if (!rc) rc = add_text(r, k++, m->tool_name);
    if (!rc) rc = add_text(r, k++, m->model);
    if (!rc) rc = add_text(r, k++, m->files);
    if (!rc) rc = add_text(r, k++, meta);
    if (!rc) rc = add_text(r, k++, m->idempotency_key);
    if (!rc) rc = add_i64(r, k++, m->tokens);
    if (!rc) rc = add_i64(r, k++, m->pinned ? 1 : 0);
    if (!rc) rc = add_i64(r, k++, m->created_at);
    if (!rc) rc = add_i64(r, k++, id);
    if (!rc) rc = add_i64(r, k++, a->added);
    if (!rc) rc = add_i64(r, k++, a->tokens);
    if (!rc) rc = add_i64(r, k++, a->now_ms);
    if (!rc) rc = add_text(r, k++, a->title);
    if (!rc) rc = add_i64(r, k++, a->users);
    if (!rc) rc = add_i64(r, k++, a->title_seq);
    if (!rc) rc = add_i64(r, k++, a->expires_at);
    if (rc) { /* the columns no longer line up: the group fails and runs no further */
        mn__pg_rows_clear(c);
        c->broken = 1;
        return rc;
    }
    r->n++;
    return MN_OK;
}

mn_status mn__pg_rows_flush(struct pg_conn *c)
{
    struct pg_rows *r = c->rows;
    if (!r || !r->n)
        return MN_OK;
    mn_status rc = MN_OK;
    struct pg_params p;
    mn__pg_params_init(&p);
    for (int k = 0; k < N_COLS && !rc; k++)
        if (!(rc = mn__buf_addc(&r->col[k], '}')))
            mn__pg_text(&p, r->col[k].data);
    r->n = 0; /* before the send, which would flush again */
    if (!rc)
        rc = mn__pg_send(c, SQL_APPEND_ROWS, &p, "message insert", NULL);
    else
        c->broken = 1; /* rows that were never sent: the group must not commit */
    mn__pg_rows_clear(c);
    return rc;
}

void mn__pg_rows_clear(struct pg_conn *c)
{
    if (!c->rows)
        return;
    c->rows->n = 0;
    for (int k = 0; k < N_COLS; k++)
        mn__buf_reset(&c->rows->col[k]);
}

void mn__pg_rows_free(struct pg_conn *c)
{
    if (!c->rows)
        return;
    for (int k = 0; k < N_COLS; k++)
        mn__buf_release(&c->rows->col[k]);
    free(c->rows);
    c->rows = NULL;
}
