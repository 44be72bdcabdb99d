/*
 * append.c — the append use case, written once for every backend: mn_append, mn_append_batch
 * and mn_append_many check and prepare their requests here, then run one algorithm over the
 * store's transaction and row primitives (store/store_append.h): lock the session (creating it
 * when asked), refuse an expired one, skip messages whose idempotency key is stored (a key reused
 * for another message is MN_CONFLICT), number the new ones, store them, add to the session's
 * counters, apply the turn limit (turns.c). A group (mn_append_many) is one transaction with a
 * savepoint per request, so a failing request leaves the others and the group costs one commit.
 * When every request of a group (of one request too) says MN_APPEND_DEFER, the group lock leaves
 * the sessions another writer holds and their requests come back MN_BUSY, unrun, for the caller
 * to queue again. A request that waited for its session's lock until the store gave up
 * (memory.busy_timeout_ms) fails MN_BUSY and is not run again: the wait is the documented one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/append.h"
#include "engine/engine.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "store/records.h"
#include "store/store.h"
#include "store/store_append.h"
#include "store/store_rows.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/banned.h"

#define MAX_MANY 10000
#define MAX_BATCH 100000

/* ---- the algorithm --------------------------------------------------------------------------- */

static int same_text(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

struct idem_check {
    const char *session_id;
    const mn_message *m;
    struct mn_messages_impl *l;
    mn_status rc;
};

/* The stored message under m's key: the same message again is returned as stored; another
 * message under that key is a client bug (MN_CONFLICT, nothing written). */
static int idem_seen(void *user, const mn_message *row)
{
    struct idem_check *k = user;
    const mn_message *m = k->m;
    if (row->role != m->role || !same_text(row->content, m->content) || !same_text(row->tool_calls, m->tool_calls) ||
        !same_text(row->tool_call_id, m->tool_call_id)) {
        k->rc = mn__err(MN_CONFLICT, "idempotency_key '%s' was used for a different message (id %lld) in session %s",
                        m->idempotency_key, (long long)row->id, k->session_id);
        return 1;
    }
    mn_message *it = mn__records_message_push(k->l);
    if (!it || mn__records_message_fill(&k->l->arena, it, row))
        k->rc = mn__nomem();
    return 1;
}

static mn_status keep(struct mn_messages_impl *l, const mn_message *m)
{
    mn_message *it = mn__records_message_push(l);
    return it && !mn__records_message_fill(&l->arena, it, m) ? MN_OK : mn__nomem();
}

/* The session row, locked; created when missing and the request says so. `known` (may be NULL)
 * is what a group lock read already. */
static mn_status lock_session(const struct mn_store_append_ops *o, mn_store_tx *tx, const char *id,
                              const mn_store_append *req, const mn_store_append_row *known, mn_store_append_row *row)
{
    if (known && known->sid) {
        *row = *known;
        return MN_OK;
    }
    mn_status rc = o->session_lock(tx, id, row);
    if (rc != MN_NOTFOUND || !req->create)
        return rc;
    memset(row, 0, sizeof *row);
    rc = o->session_create(tx, req->create, &row->sid);
    if (rc == MN_CONFLICT && req->create->key) /* the key, not the fresh id: the request named another session */
        return mn__err(MN_CONFLICT, "session '%.200s' was created by another writer meanwhile: send the append again",
                       req->create->key);
    if (rc == MN_CONFLICT) /* another writer created it meanwhile: lock theirs (its namespace checked) */
        return o->session_lock(tx, id, row);
    row->max_turns = req->create->max_turns;
    row->ttl_ms = req->create->ttl_ms;
    row->titled = req->create->title != NULL;
    snprintf(row->ns, sizeof row->ns, "%s", req->create->ns);
    return rc;
}

/* One append inside the caller's transaction; l gets the stored messages (new and repeated).
 * known (may be NULL) is the session's row when a group lock read it, and is kept current. */
static mn_status append_in_txn(const struct mn_store_append_ops *o, const struct mn_store_row_ops *rows,
                               mn_store_tx *tx, const char *session_id, const mn_store_append *req,
                               struct mn_messages_impl *l, mn_store_append_row *known)
{
    mn_store_append_row row;
    mn_status rc = lock_session(o, tx, session_id, req, known, &row);
    if (rc)
        return rc;
    if (req->ns && strcmp(row.ns, req->ns) != 0) /* another namespace's session says nothing */
        return mn__err(MN_NOTFOUND, "session %s not found", session_id);
    if (row.expires_at > 0 && row.expires_at <= req->now_ms) {
        char when[40];
        mn__clock_iso(row.expires_at, when, sizeof when);
        return mn__err(MN_EXPIRED, "session %s expired at %s (idle longer than its TTL)", session_id, when);
    }
    /* The session's rules, decided here for the store to write: a TTL session's expiry slides to
     * ttl after this append; a session without a title takes the one the request's messages give,
     * and records the seq of the message it came from (0 when that one was a repeat, which an
     * idempotency key did not store again), so that editing the message retitles the session. */
    mn_store_appended c = {.sid = row.sid, .last_seq = row.last_seq, .now_ms = req->now_ms,
                           .expires_at = row.ttl_ms > 0 ? req->now_ms + row.ttl_ms : 0,
                           .title = row.titled ? NULL : req->title};
    for (size_t i = 0; i < req->n; i++) {
        mn_message *m = &req->msgs[i];
        if (m->idempotency_key) {
            struct idem_check k = {session_id, m, l, MN_OK};
            int found = 0;
            if ((rc = o->idem_find(tx, row.sid, session_id, m->idempotency_key, idem_seen, &k, &found)) ||
                (rc = k.rc))
                return rc;
            if (found)
                continue;
        }
        if (c.last_seq >= MN_MAX_SEQ) /* in words: the store's own refusal would show its schema */
            return mn__err(MN_TOOBIG, "session %s is full: its messages are numbered up to %lld, the most one"
                           " session holds; continue in a new session", session_id, (long long)MN_MAX_SEQ);
        m->seq = ++c.last_seq;
        m->session_id = session_id;
        if (c.title && i == req->title_at)
            c.title_seq = m->seq;
        c.added++;
        c.tokens += m->tokens;
        c.users += m->role == MN_ROLE_USER;
        /* the last new message: with the fast path, it carries the counters in one statement */
        int last = i + 1 == req->n && o->message_insert_appended;
        if ((rc = last ? o->message_insert_appended(tx, m, &c) : o->message_insert(tx, row.sid, m)) ||
            (rc = keep(l, m)))
            return rc;
        if (last)
            c.added = 0; /* applied */
    }
    if (c.added && (rc = o->session_appended(tx, &c)))
        return rc;
    int stored = c.last_seq > row.last_seq;
    if (known && known->sid && stored) {
        known->last_seq = c.last_seq;
        known->titled |= c.title != NULL;
        known->expires_at = c.expires_at ? c.expires_at : known->expires_at;
    }
    /* Seed 002's limit guards against runaway sessions, so it applies after every append that
     * stored a message, whatever its role (a tool loop appends no user message for a while). */
    if (!stored || row.max_turns <= 0)
        return MN_OK;
    return mn__turns_trim(rows, tx, row.sid, row.max_turns, req->trim_delete, req->now_ms);
}

struct group {
    const struct mn_store_append_ops *o;
    const struct mn_store_row_ops *rows; /* the turn limit's (turns.c) */
    const char *const *ids;
    const mn_store_append *reqs;
    size_t n;
    int single;  /* one request: no savepoint, its failure is the transaction's */
    int careful; /* a savepoint around every request (after an unguarded one aborted the try) */
    int skip;    /* every request says MN_APPEND_DEFER: the group lock skips held sessions */
    unsigned char *waited; /* by request: its lock wait timed out in an earlier run (MN_BUSY) */
    mn_store_append_row *known; /* the group lock's rows, by request (NULL: no group lock) */
    mn_status *results;
    char (*errmsg)[256];
    struct mn_messages_impl **lists;
};

static void list_clear(struct mn_messages_impl *l)
{
    mn__arena_release(&l->arena);
    l->pub.count = 0;
}

/* The rows the group lock read, shared by the requests of one session; the first request of
 * that session that holds more than one message (or fails) makes them stale. */
static mn_store_append_row *known_row(struct group *g, size_t i)
{
    if (!g->known)
        return NULL;
    for (size_t j = 0; j < i; j++)
        if (strcmp(g->ids[j], g->ids[i]) == 0)
            return &g->known[j];
    return &g->known[i];
}

static int refusal(mn_status rc) { return rc == MN_NOTFOUND || rc == MN_EXPIRED || rc == MN_CONFLICT; }

static mn_status group_body(mn_store_tx *tx, void *arg)
{
    struct group *g = arg;
    const struct mn_store_append_ops *o = g->o;
    mn_status rc = MN_OK;
    if (g->known) { /* a run again reads them again */
        memset(g->known, 0, g->n * sizeof *g->known);
        if ((rc = o->sessions_lock(tx, g->ids, g->n, g->skip, g->known)))
            return rc;
    }
    for (size_t i = 0; i < g->n && !rc; i++) {
        g->errmsg[i][0] = '\0';
        list_clear(g->lists[i]);
        if (g->single)
            return g->results[i] = append_in_txn(o, g->rows, tx, g->ids[i], &g->reqs[i], g->lists[i], NULL);
        mn_store_append_row *known = known_row(g, i);
        if (known && known->held) { /* another writer has it: this one (and the session's next
                                     * ones, which see the same row) go back to the caller */
            g->results[i] = MN_BUSY;
            snprintf(g->errmsg[i], 256, "session %s is held by another writer: queue it again", g->ids[i]);
            continue;
        }
        if (g->waited[i]) { /* it has waited its time already: the others run without it */
            g->results[i] = mn__err(MN_BUSY, "session %s is locked by another writer for longer than"
                                    " memory.busy_timeout_ms", g->ids[i]);
            snprintf(g->errmsg[i], 256, "%s", mn_errmsg());
            continue;
        }
        /* A one-message append finds every refusal (no session, expired, idempotency clash) by
         * reading before it writes, so where the backend can run the group again it needs no
         * savepoint (two round trips fewer on PostgreSQL). Should an error of the database
         * itself leave it half done, the group runs again with savepoints throughout. */
        int guard = g->careful || !o->rerun || g->reqs[i].n != 1;
        if (guard && (rc = o->savepoint(tx, MN_SP_SET)))
            break;
        if (known && g->reqs[i].n != 1) {
            known->sid = 0;
            known = NULL;
        }
        mn_status r = g->results[i] = append_in_txn(o, g->rows, tx, g->ids[i], &g->reqs[i], g->lists[i], known);
        if (r && known)
            known->sid = 0; /* it may have moved before failing: read it again next time */
        if (r) {
            enum mn_store_tx_state s = o->state(tx);
            if (s == MN_TX_DOOMED)
                return r;
            if (!guard && (s == MN_TX_ABORTED || !refusal(r))) {
                g->careful = 1;
                g->waited[i] = r == MN_BUSY && s == MN_TX_ABORTED; /* a lock wait that timed out */
                if (g->waited[i] && g->n == 1)
                    return r; /* nothing else to run again */
                o->rerun(tx);
                return r;
            }
            snprintf(g->errmsg[i], 256, "%s", mn_errmsg());
            if (guard)
                rc = o->savepoint(tx, MN_SP_ROLLBACK);
        }
        if (!rc && guard)
            rc = o->savepoint(tx, MN_SP_RELEASE);
    }
    return rc;
}

static mn_status run_group(mn_store *st, const char *const *ids, const mn_store_append *reqs, size_t n, int single,
                           mn_status *results, char (*errmsg)[256], mn_messages **out)
{
    const struct mn_store_append_ops *o = st->ops->append;
    struct group g = {o, st->ops->rows, ids, reqs, n, single, 0, 0, calloc(n, 1), NULL, results, errmsg,
                      calloc(n, sizeof(struct mn_messages_impl *))};
    mn_status rc = g.lists && g.waited ? MN_OK : mn__nomem();
    g.skip = !single && o->sessions_lock;
    for (size_t i = 0; i < n; i++)
        g.skip &= reqs[i].defer != 0;
    if (!rc && (n > 1 || g.skip) && o->sessions_lock && !(g.known = calloc(n, sizeof *g.known)))
        rc = mn__nomem();
    for (size_t i = 0; i < n && !rc; i++)
        if (!(g.lists[i] = mn__records_message_list_new()))
            rc = mn__nomem();
    if (!rc)
        rc = o->write(st, group_body, &g);
    for (size_t i = 0; i < n; i++) {
        if (rc) {
            results[i] = rc;
            snprintf(errmsg[i], 256, "%s", mn_errmsg());
        }
        if (out && !rc && !results[i] && g.lists[i]) {
            out[i] = &g.lists[i]->pub;
        } else {
            if (out)
                out[i] = NULL;
            if (g.lists && g.lists[i])
                mn__records_message_list_free(&g.lists[i]->pub);
        }
    }
    free(g.lists);
    free(g.known);
    free(g.waited);
    return rc;
}

mn_status mn__engine_append(mn_store *st, const char *session_id, const mn_store_append *req, mn_messages **out)
{
    mn_status result = MN_OK;
    char errmsg[1][256];
    mn_status rc = run_group(st, &session_id, req, 1, 1, &result, errmsg, out);
    if (rc) /* the message of the failure, for mn_errmsg() */
        mn__err(rc, "%s", errmsg[0]);
    return rc;
}

mn_status mn__engine_append_many(mn_store *st, const char *const *session_ids, const mn_store_append *reqs, size_t n,
                                mn_status *results, char (*errmsg)[256], mn_messages **out)
{
    return run_group(st, session_ids, reqs, n, 0, results, errmsg, out);
}

/* ---- requests -------------------------------------------------------------------------------- */

/* Validates one request into store rows; strings live in `a`. what names the request in
 * messages ("a batch", "a request"). */
static mn_status prepare(mn_db *db, const char *session_id, const mn_message_in *msgs, size_t n, unsigned flags,
                         const char *ns, const char *what, int64_t now, int trim_delete, struct mn_arena *a,
                         char *id, mn_session *create, mn_store_append *out)
{
    mn_status rc;
    const char *key = NULL; /* a key that names no session yet: MN_APPEND_CREATE makes it */
    if (ns && (rc = mn__check_namespace(ns)))
        return rc;
    if ((rc = mn__session_ref(db, ns, session_id, id)) == MN_NOTFOUND && (flags & MN_APPEND_CREATE)) {
        mn__err_clear();
        key = session_id;
        rc = mn__uuid_v7(now, id);
    }
    if (rc)
        return rc;
    if (!msgs || n == 0 || n > MAX_BATCH)
        return mn__err(MN_INVALID, "messages: %s holds 1 to %d messages", what, MAX_BATCH);
    unsigned unknown = flags & ~(unsigned)(MN_APPEND_CREATE | MN_APPEND_DEFER);
    if (unknown)
        return mn__err(MN_INVALID, "flags: unknown bits 0x%x", unknown);
    mn_message *rows = mn__arena_alloc(a, n * sizeof *rows);
    if (!rows)
        return mn__nomem();
    memset(rows, 0, n * sizeof *rows);
    const char *title = NULL;
    size_t title_at = 0;
    for (size_t i = 0; i < n; i++) {
        char label[48] = "";
        if (n > 1)
            snprintf(label, sizeof label, "message %zu: ", i);
        if ((rc = mn__message_prepare(MN__ABI_ITEM(mn_message_in, msgs, i), db->max_message_bytes, db->tk, now, a, label, &rows[i])))
            return rc;
        if (!title && rows[i].role == MN_ROLE_USER && rows[i].content) {
            if (!(title = mn__message_title(a, rows[i].content)))
                return mn__nomem();
            if (!*title)
                title = NULL;
            title_at = i;
        }
    }
    if (flags & MN_APPEND_CREATE) {
        memset(create, 0, sizeof *create);
        create->id = id;
        create->key = key;
        create->ns = ns ? ns : "default";
        create->metadata = "{}";
        create->created_at = create->updated_at = now;
    }
    *out = (mn_store_append){rows, n, (flags & MN_APPEND_CREATE) ? create : NULL, title, title_at, now, trim_delete,
                             (flags & MN_APPEND_DEFER) != 0, ns};
    return MN_OK;
}

/* ---- public functions ------------------------------------------------------------------------ */

/* Whether an append failed only because another writer made the session its key names between
 * the lookup and the insert: then the same request, prepared again, appends to theirs. */
static int lost_keyed_create(mn_status rc, const mn_store_append *req)
{
    return rc == MN_CONFLICT && req->create && req->create->key;
}

mn_status mn_append_batch(mn_db *db, const char *session_id, const mn_message_in *msgs, size_t n, unsigned flags,
                          mn_messages **out)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (rc)
        return rc;
    struct mn_arena a = MN_ARENA_INIT;
    mn_session create;
    mn_store_append req;
    for (int round = 0; round < 2; round++) {
        rc = prepare(db, session_id, msgs, n, flags, NULL, "a batch", mn__clock_now_ms(), mn__trim_delete(db), &a, id,
                     &create, &req);
        if (rc)
            break;
        rc = mn__engine_append(db->store, id, &req, out);
        if (!lost_keyed_create(rc, &req))
            break;
        mn__err_clear(); /* the next round finds the other writer's session by its key */
    }
    if (!rc) {
        mn__search_after_append(db); /* auto-embedding (embedder.mode inline) */
        mn__memory_after_append(db, id); /* background extraction (memory_bg.c) */
    }
    mn__arena_release(&a);
    return rc;
}

mn_status mn_append(mn_db *db, const char *session_id, const mn_message_in *msg, unsigned flags, mn_message **out)
{
    mn_messages *l = NULL;
    if (out)
        *out = NULL;
    if (!msg) {
        mn__err_clear();
        return mn__err(MN_INVALID, "message: NULL");
    }
    /* the record handed back exists before the append: nothing is allocated once it is stored */
    mn_message *one = NULL;
    if (out && !(one = mn__records_message_shell()))
        return mn__nomem();
    mn_status rc = mn_append_batch(db, session_id, msg, 1, flags, out ? &l : NULL);
    if (rc || !out) {
        mn__records_message_free(one);
        return rc;
    }
    mn__records_message_adopt(one, l);
    *out = one;
    return MN_OK;
}

mn_status mn_append_many(mn_db *db, const mn_append_request *reqs, size_t n, int want_stored,
                         mn_append_result *results)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    if (!reqs || !results || n == 0 || n > MAX_MANY)
        return mn__err(MN_INVALID, "requests: 1 to %d, with a results array", MAX_MANY);
    for (size_t i = 0; i < n; i++) {
        results[i].status = MN_OK;
        results[i].errmsg[0] = '\0';
        results[i].stored = NULL;
    }
    struct mn_arena a = MN_ARENA_INIT;
    size_t m = 0; /* the requests that passed validation go to the store */
    char(*ids)[MN_UUID_LEN + 1] = calloc(n, sizeof *ids);
    mn_session *creates = calloc(n, sizeof *creates);
    mn_store_append *sreqs = calloc(n, sizeof *sreqs);
    const char **sids = calloc(n, sizeof *sids);
    size_t *index = calloc(n, sizeof *index);
    mn_status *st = calloc(n, sizeof *st);
    char(*msgs)[256] = calloc(n, sizeof *msgs);
    mn_messages **out = calloc(n, sizeof *out);
    if (!ids || !creates || !sreqs || !sids || !index || !st || !msgs || !out) {
        rc = mn__nomem();
        goto done;
    }
    int64_t now = mn__clock_now_ms();
    int trim = mn__trim_delete(db);
    for (size_t i = 0; i < n; i++) {
        mn_append_request r = MN_APPEND_REQUEST_INIT;
        mn_status v = MN__ABI_LOAD(mn_append_request, &r, MN__ABI_ITEM(mn_append_request, reqs, i), flags);
        if (!v)
            v = prepare(db, r.session_id, r.msgs, r.n, r.flags, r.ns, "a request", now, trim, &a, ids[i],
                        &creates[i], &sreqs[m]);
        if (v == MN_NOMEM) {
            rc = v;
            goto done;
        }
        if (v) {
            results[i].status = v;
            snprintf(results[i].errmsg, sizeof results[i].errmsg, "%s", mn_errmsg());
            continue;
        }
        sids[m] = ids[i];
        index[m++] = i;
    }
    if (m == 0)
        goto done;
    rc = mn__engine_append_many(db->store, sids, sreqs, m, st, msgs, want_stored ? out : NULL);
    for (size_t j = 0; !rc && j < m; j++) /* a keyed create another writer won: once more, alone */
        if (lost_keyed_create(st[j], &sreqs[j])) {
            size_t i = index[j];
            mn_append_request r = MN_APPEND_REQUEST_INIT;
            MN__ABI_LOAD(mn_append_request, &r, MN__ABI_ITEM(mn_append_request, reqs, i), flags); /* passed before */
            mn__err_clear();
            st[j] = prepare(db, r.session_id, r.msgs, r.n, r.flags, r.ns, "a request", now, trim, &a, ids[i],
                            &creates[i], &sreqs[j]);
            if (!st[j])
                st[j] = mn__engine_append(db->store, ids[i], &sreqs[j], want_stored ? &out[j] : NULL);
            if (st[j] == MN_NOMEM)
                rc = st[j];
            snprintf(msgs[j], sizeof msgs[j], "%s", st[j] ? mn_errmsg() : "");
        }
    for (size_t j = 0; j < m; j++) {
        mn_append_result *r = &results[index[j]];
        r->status = st[j];
        memcpy(r->errmsg, msgs[j], sizeof r->errmsg);
        r->errmsg[sizeof r->errmsg - 1] = '\0';
        r->stored = want_stored ? out[j] : NULL;
    }
    int stored = 0;
    for (size_t j = 0; !rc && j < m; j++)
        if (st[j] == MN_OK) {
            stored = 1;
            mn__memory_after_append(db, sids[j]); /* background extraction (memory_bg.c) */
        }
    if (stored)
        mn__search_after_append(db); /* auto-embedding (embedder.mode inline), once per group */
    if (rc) /* the message of the failed commit, for mn_errmsg() */
        mn__err(rc, "%s", results[index[0]].errmsg);
done:
    free(ids);
    free(creates);
    free(sreqs);
    free(sids);
    free(index);
    free(st);
    free(msgs);
    free(out);
    mn__arena_release(&a);
    return rc;
}
