/*
 * admin.c — looking after a whole database: its token counts made again with the handle's
 * tokenizer (mn_reindex_tokens), its counts and sizes (mn_stats_get, mn_stats_json), and
 * mn_vacuum.
 */
#include <string.h>

#include "engine/engine.h"
#include "memory/message.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

struct recount {
    const mn_tokenizer *tk;
    mn_progress_fn progress;
    void *user;
};

static int64_t recount_one(void *user, const mn_message *m)
{
    const struct recount *r = user;
    return mn__message_tokens(r->tk, m);
}

static void recount_progress(void *user, int64_t done, int64_t total)
{
    const struct recount *r = user;
    if (r->progress)
        r->progress(r->user, done, total);
}

mn_status mn__recount_tokens(mn_db *db, mn_progress_fn progress, void *user, int64_t *n)
{
    struct recount r = {db->tk, progress, user};
    mn_status rc = db->store->ops->recount_tokens(db->store, recount_one, &r, recount_progress, n);
    if (!rc) /* the stored counts are this tokenizer's now */
        rc = db->store->ops->meta_set(db->store, "tokenizer", mn__token_name(db->tk));
    return rc;
}

mn_status mn__read_stats(mn_db *db, mn_stats *out)
{
    mn_store_stats s;
    memset(&s, 0, sizeof s);
    mn_status rc = db->store->ops->stats(db->store, mn__clock_now_ms(), &s);
    if (rc)
        return rc;
    out->sessions = s.sessions;
    out->messages = s.messages;
    out->tokens = s.tokens;
    out->db_bytes = s.db_bytes;
    out->wal_bytes = s.wal_bytes;
    out->schema_version = s.schema_version;
    out->threads = s.threads;
    out->turns = s.turns;
    out->expired_pending = s.expired_pending;
    return MN_OK;
}

mn_status mn__format_stats(mn_db *db, char **out)
{
    mn_stats s;
    memset(&s, 0, sizeof s);
    mn_status rc = mn__read_stats(db, &s);
    if (rc)
        return rc;
    double per_msg = s.messages ? (double)(s.db_bytes + s.wal_bytes) / (double)s.messages : 0.0;
    json_t *v = json_pack("{s:s, s:s, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "path",
                          db->store->label, "backend", db->store->ops->name, "schema_version", s.schema_version,
                          "tokenizer", mn__token_name(db->tk), "sessions", (json_int_t)s.sessions, "messages",
                          (json_int_t)s.messages, "tokens", (json_int_t)s.tokens, "threads", (json_int_t)s.threads,
                          "turns", (json_int_t)s.turns, "expired_pending", (json_int_t)s.expired_pending, "db_bytes",
                          (json_int_t)s.db_bytes, "wal_bytes", (json_int_t)s.wal_bytes, "bytes_per_message", per_msg);
    *out = v ? mn__json_dump(v) : NULL;
    json_decref(v);
    return *out ? MN_OK : mn__nomem();
}

mn_status mn__vacuum_db(mn_db *db) { return db->store->ops->vacuum(db->store); }

void mn__analyze_after_load(mn_store *st)
{
    /* the rows are committed whatever this says: a failure only leaves the statistics to
     * autovacuum, as before */
    if (st->ops->analyze && st->ops->analyze(st) != MN_OK)
        mn__log(MN_LOG_WARN, "after the load, refreshing the planner's statistics failed (autovacuum will): %s",
                mn_errmsg());
}
