/*
 * fork.c — the fork use case (mn_session_fork), written once for every backend over the store's
 * append and row primitives (store/store_append.h, store/store_rows.h). What a fork copies is
 * decided here, in one write transaction that holds the source session's row: a new session with
 * the source as its parent, and its namespace, title, system prompt, metadata, tool name and
 * limits (a TTL counts from the fork); the source's active messages up to upto_seq (0: all), in
 * order and numbered from 1, each with its role, text, tool calls, names, model, files,
 * metadata, idempotency key, tokens, pinned flag and time; the counters that follow from them;
 * and the title keeps following the message it came from when that one was copied. Nothing else
 * (state, file hashes, summaries, events, the messages the turn limit or a clear left out).
 */
#include <stdint.h>
#include <string.h>

#include "engine/engine.h"
#include "store/records.h"
#include "store/store_append.h"
#include "store/store_rows.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

/* Messages read (and held) at a time: a fork of any size copies in bounded memory. */
#define PAGE 256

struct fork {
    const struct mn_store_row_ops *o;
    const struct mn_store_append_ops *a;
    const char *src_id, *new_id;
    int64_t upto_seq, now_ms;
    mn_session *src;              /* the source's record, read in the transaction */
    struct mn_messages_impl *page; /* the messages being copied */
};

static int keep_source(void *user, const mn_session *s)
{
    struct fork *f = user;
    f->src = mn__records_session_copy(s);
    return 1;
}

/* The copies of one page of the source's messages; c counts them, *title_seq gets the copy's
 * seq of the message the source's title came from (src_title_seq). */
static mn_status copy_page(const struct fork *f, mn_store_tx *tx, int64_t src_title_seq, mn_store_appended *c,
                           int64_t *title_seq)
{
    for (size_t i = 0; i < f->page->pub.count; i++) {
        mn_message *m = &f->page->pub.items[i];
        if (m->seq == src_title_seq)
            *title_seq = c->last_seq + 1;
        m->seq = ++c->last_seq;
        m->session_id = f->new_id;
        c->added++;
        c->tokens += m->tokens;
        c->users += m->role == MN_ROLE_USER;
        mn_status rc = f->a->message_insert(tx, c->sid, m);
        if (rc)
            return rc;
    }
    return MN_OK;
}

static mn_status fork_body(mn_store_tx *tx, void *arg)
{
    struct fork *f = arg;
    mn__records_session_free(f->src); /* a run again starts over */
    f->src = NULL;
    mn_store_session_row src;
    mn_status rc = f->o->session_read(tx, f->src_id, keep_source, f, &src);
    if (!rc && !f->src)
        rc = mn__nomem();
    if (rc)
        return rc;
    const mn_session *s = f->src;
    mn_session copy;
    memset(&copy, 0, sizeof copy);
    copy.id = f->new_id;
    copy.ns = s->ns;
    copy.title = s->title;
    copy.system_prompt = s->system_prompt;
    copy.metadata = s->metadata;
    copy.tool_name = s->tool_name;
    copy.parent_id = s->id;
    copy.created_at = copy.updated_at = f->now_ms;
    copy.expires_at = s->ttl_ms > 0 ? f->now_ms + s->ttl_ms : 0;
    copy.ttl_ms = s->ttl_ms;
    copy.max_turns = s->max_turns;
    mn_store_appended c = {.now_ms = f->now_ms}; /* the title and expiry are the copy's already */
    if ((rc = f->a->session_create(tx, &copy, &c.sid)))
        return rc;
    int64_t after = 0, upto = f->upto_seq ? f->upto_seq : INT64_MAX, title_seq = 0;
    size_t got;
    do {
        mn__arena_release(&f->page->arena);
        f->page->pub.count = 0;
        struct mn_records_collect k = {f->page, MN_OK};
        if ((rc = f->o->messages_read(tx, src.sid, s->id, after, upto, PAGE, mn__records_collect_message, &k)) ||
            (rc = k.rc))
            return rc;
        if ((got = f->page->pub.count))
            after = f->page->pub.items[got - 1].seq;
        if ((rc = copy_page(f, tx, src.title_seq, &c, &title_seq)))
            return rc;
    } while (got == PAGE);
    if (c.added && (rc = f->a->session_appended(tx, &c)))
        return rc;
    return title_seq ? f->o->title_from(tx, c.sid, title_seq) : MN_OK;
}

mn_status mn__fork_session(mn_db *db, const char *canon, int64_t upto_seq, mn_session **out)
{
    char new_id[MN_UUID_LEN + 1];
    struct fork f = {db->store->ops->rows, db->store->ops->append, canon, new_id, upto_seq, mn__clock_now_ms(),
                     NULL, mn__records_message_list_new()};
    mn_status rc = f.page ? mn__live_session(db, canon, NULL) : mn__nomem();
    if (!rc)
        rc = mn__uuid_v7(f.now_ms, new_id);
    if (!rc)
        rc = f.o->write(db->store, fork_body, &f);
    mn__records_session_free(f.src);
    if (f.page)
        mn__records_message_list_free(&f.page->pub);
    if (rc || !out)
        return rc;
    return db->store->ops->session_get(db->store, new_id, out);
}
