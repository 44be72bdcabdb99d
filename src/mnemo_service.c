/*
 * mnemo_service.c — the public functions a long-running service needs beyond the CLI's (mnemo.h):
 * group commit (mn_append_many: several appends, one transaction, per-request results), deleting
 * one message, updating a session's title and metadata, vacuum. Checks here, then the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "config/config.h"
#include "memory/message.h"
#include "store/records.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/banned.h"

#define MAX_MANY 10000
#define MAX_BATCH 100000

/* Validates one request into store rows (as mn_append_batch does); strings live in `a`. */
static mn_status prepare_one(mn_db *db, const mn_append_request *r, int64_t now, int trim_delete, struct mn_arena *a,
                             char *id, mn_session *create, mn_store_append *out)
{
    mn_status rc;
    mn_append_request loaded = MN_APPEND_REQUEST_INIT;
    if ((rc = MN__ABI_LOAD(mn_append_request, &loaded, r, flags)))
        return rc;
    r = &loaded;
    if ((rc = mn__check_id(r->session_id, id)))
        return rc;
    if (!r->msgs || r->n == 0 || r->n > MAX_BATCH)
        return mn__err(MN_INVALID, "messages: a request holds 1 to %d messages", MAX_BATCH);
    if (r->flags & ~(unsigned)MN_APPEND_CREATE)
        return mn__err(MN_INVALID, "flags: unknown bits 0x%x", r->flags & ~(unsigned)MN_APPEND_CREATE);
    mn_message *rows = mn_arena_alloc(a, r->n * sizeof *rows);
    if (!rows)
        return mn__nomem();
    memset(rows, 0, r->n * sizeof *rows);
    const char *title = NULL;
    for (size_t i = 0; i < r->n; i++) {
        char label[48] = "";
        if (r->n > 1)
            snprintf(label, sizeof label, "message %zu: ", i);
        if ((rc = mn_message_prepare(MN__ABI_ITEM(mn_message_in, r->msgs, i), db->max_message_bytes, db->tk, now, a, label, &rows[i])))
            return rc;
        if (!title && rows[i].role == MN_ROLE_USER && rows[i].content) {
            if (!(title = mn_message_title(a, rows[i].content)))
                return mn__nomem();
            if (!*title)
                title = NULL;
        }
    }
    if (r->flags & MN_APPEND_CREATE) {
        memset(create, 0, sizeof *create);
        create->id = id;
        create->ns = "default";
        create->metadata = "{}";
        create->created_at = create->updated_at = now;
    }
    mn_store_append req = {rows, r->n, (r->flags & MN_APPEND_CREATE) ? create : NULL, title, now, trim_delete};
    *out = req;
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
    int64_t now = mn_clock_now_ms();
    int trim_delete = strcmp(mn_config_str(db->cfg, "threads.trim"), "delete") == 0;
    for (size_t i = 0; i < n; i++) {
        mn_status v = prepare_one(db, MN__ABI_ITEM(mn_append_request, reqs, i), now, trim_delete, &a, ids[i], &creates[i], &sreqs[m]);
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
    rc = db->store->ops->append_many(db->store, sids, sreqs, m, st, msgs, want_stored ? out : NULL);
    for (size_t j = 0; j < m; j++) {
        mn_append_result *r = &results[index[j]];
        r->status = st[j];
        memcpy(r->errmsg, msgs[j], sizeof r->errmsg);
        r->errmsg[sizeof r->errmsg - 1] = '\0';
        r->stored = want_stored ? out[j] : NULL;
    }
    for (size_t j = 0; !rc && j < m; j++)
        if (st[j] == MN_OK)
            mn__memory_after_append(db, sids[j]); /* background extraction (mnemo_memory_bg.c) */
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
    mn_arena_release(&a);
    return rc;
}

mn_status mn_message_delete(mn_db *db, const char *session_id, int64_t message_id)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__check_id(session_id, id)))
        return rc;
    if (message_id <= 0)
        return mn__err(MN_INVALID, "message_id: %lld is not positive", (long long)message_id);
    if ((rc = mn__live_session(db, id, NULL)))
        return rc;
    int64_t seq = 0;
    if ((rc = db->store->ops->message_delete(db->store, id, message_id, &seq)))
        return rc;
    mn__erased_message(db, id, seq);
    return MN_OK;
}

mn_status mn_session_update(mn_db *db, const char *id, const char *title, const char *metadata)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__check_id(id, canon)))
        return rc;
    if ((rc = mn_check_text("title", title, MN_MAX_TITLE_BYTES, "")))
        return rc;
    struct mn_arena a = MN_ARENA_INIT;
    const char *meta = NULL;
    if (metadata && (rc = mn_check_json_object("metadata", metadata, &a, "", &meta))) {
        mn_arena_release(&a);
        return rc;
    }
    if (!(rc = mn__live_session(db, canon, NULL)))
        rc = db->store->ops->session_update(db->store, canon, title && *title ? title : NULL, meta,
                                            mn_clock_now_ms());
    mn_arena_release(&a);
    return rc;
}

mn_status mn_vacuum(mn_db *db)
{
    mn_status rc = mn__check_db(db);
    return rc ? rc : db->store->ops->vacuum(db->store);
}
