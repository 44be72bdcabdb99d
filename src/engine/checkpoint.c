/*
 * checkpoint.c — the graph checkpoint use cases (docs/checkpoints.md): a thread is a session
 * named by its id or key, made on its first checkpoint; pending writes follow LangGraph's rule
 * (a non-negative idx is written once, a negative one replaced); the list filter compares
 * metadata keys as JSON values. The store keeps rows (store_checkpoint.h).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "store/records.h"
#include "store/store_checkpoint.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"
#include "util/json.h"

#define NAME_MAX_BYTES 256           /* checkpoint ids, namespaces, task ids, channels */
#define TYPE_MAX_BYTES 64
#define DATA_MAX_BYTES ((size_t)16 << 20)
#define FILTER_MAX_KEYS 64
#define WRITES_MAX 10000

/* The list a caller frees: the public struct first, so mn_checkpoints_free finds the arena. */
struct checkpoint_list {
    mn_checkpoints pub;
    struct mn_arena a;
    size_t cap;
};

static mn_status check_name(const char *field, const char *s, int empty_ok)
{
    if (!s)
        return empty_ok ? MN_OK : mn__err(MN_INVALID, "%s: required", field);
    size_t n = strlen(s);
    if (n == 0 && !empty_ok)
        return mn__err(MN_INVALID, "%s: empty", field);
    if (n > NAME_MAX_BYTES)
        return mn__err(MN_INVALID, "%s: %zu bytes, at most %d", field, n, NAME_MAX_BYTES);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return mn__err(MN_INVALID, "%s: contains a control character", field);
    return mn__check_text(field, s, NAME_MAX_BYTES, "");
}

/* A serialized value and its serializer's type tag: opaque text, bounded. */
static mn_status check_blob(const char *field, const char *type, const char *value)
{
    mn_status rc;
    if ((rc = check_name("type", type, 0)))
        return rc;
    if (strlen(type) > TYPE_MAX_BYTES)
        return mn__err(MN_INVALID, "type: %zu bytes, at most %d", strlen(type), TYPE_MAX_BYTES);
    if (!value)
        return mn__err(MN_INVALID, "%s: required", field);
    if (strlen(value) > DATA_MAX_BYTES)
        return mn__err(MN_TOOBIG, "%s: %zu bytes, at most %zu", field, strlen(value), DATA_MAX_BYTES);
    return mn__check_text(field, value, DATA_MAX_BYTES, "");
}

/* The session thread names in namespace ns, as a canonical id: MN_NOTFOUND when nothing of ns
 * has that name. A UUID of another namespace's session looks missing, as everywhere; *taken
 * (may be NULL) is then set, as the name cannot be made here either. */
static mn_status thread_find(mn_db *db, const char *ns, const char *thread, char id[MN_UUID_LEN + 1], int *taken)
{
    mn_status rc;
    if ((rc = check_name("thread_id", thread, 0)) || (rc = mn__session_ref(db, ns, thread, id)))
        return rc;
    mn_session *s = NULL;
    if ((rc = db->store->ops->session_get(db->store, id, &s)))
        return rc;
    int elsewhere = strcmp(s->ns, ns) != 0;
    mn__records_session_free(s);
    if (taken)
        *taken = elsewhere;
    return elsewhere ? mn__err(MN_NOTFOUND, "thread '%.200s' not found", thread) : MN_OK;
}

/* thread_find, making the session when nothing has the name yet: with the name as its key, or as
 * its id when the name is a UUID. A maker that loses the race to another reads the winner's. */
static mn_status thread_make(mn_db *db, const char *ns, const char *thread, char id[MN_UUID_LEN + 1])
{
    for (int round = 0; round < 2; round++) {
        int taken = 0;
        mn_status rc = thread_find(db, ns, thread, id, &taken);
        if (rc != MN_NOTFOUND || taken)
            return rc ? rc : mn__live_session(db, id, NULL);
        mn__err_clear();
        int64_t now = mn__clock_now_ms();
        mn_session s = {0};
        int is_uuid = mn__uuid_parse(thread, id);
        if (!is_uuid && (rc = mn__uuid_v7(now, id)))
            return rc;
        s.id = id;
        s.key = is_uuid ? NULL : thread;
        s.ns = ns;
        s.metadata = "{}";
        s.created_at = s.updated_at = now;
        rc = db->store->ops->session_insert(db->store, &s);
        if (rc != MN_CONFLICT)
            return rc;
        mn__err_clear();
    }
    return mn__err(MN_CONFLICT, "thread '%.200s': made by another writer and gone again", thread);
}

mn_status mn__put_checkpoint(mn_db *db, const mn_checkpoint_in *in)
{
    const char *ns = in->ns ? in->ns : "default";
    const char *cns = in->checkpoint_ns ? in->checkpoint_ns : "";
    const char *metadata = in->metadata ? in->metadata : "{}";
    struct mn_arena a = MN_ARENA_INIT;
    char id[MN_UUID_LEN + 1];
    mn_status rc;
    if ((rc = mn__check_namespace(ns)) || (rc = check_name("checkpoint_ns", cns, 1)) ||
        (rc = check_name("checkpoint_id", in->id, 0)) ||
        (in->parent_id && (rc = check_name("parent_checkpoint_id", in->parent_id, 0))) ||
        (rc = check_blob("checkpoint", in->type, in->data)) ||
        (rc = mn__check_json_object("metadata", metadata, &a, "", &metadata)) ||
        (rc = thread_make(db, ns, in->thread, id)))
        goto out;
    mn_checkpoint row = {.session_id = id, .checkpoint_ns = cns, .id = in->id, .parent_id = in->parent_id,
                         .type = in->type, .data = in->data, .metadata = metadata,
                         .created_at = mn__clock_now_ms()};
    rc = db->store->ops->checkpoint->put(db->store, &row);
out:
    mn__arena_release(&a);
    return rc;
}

int mn__checkpoint_found(void *user, const mn_checkpoint *cp)
{
    (void)cp;
    *(int *)user = 1;
    return 1;
}

static mn_status check_write(const mn_checkpoint_write *w, size_t i)
{
    mn_status rc;
    if ((rc = check_name("task_id", w->task_id, 0)) || (rc = check_name("task_path", w->task_path, 1)) ||
        (rc = check_name("channel", w->channel, 0)) || (rc = check_blob("value", w->type, w->value)))
        return mn__err(rc, "writes[%zu].%s", i, mn_errmsg());
    return MN_OK;
}

mn_status mn__checkpoint_check_row(const mn_checkpoint *cp)
{
    char id[MN_UUID_LEN + 1];
    struct mn_arena a = MN_ARENA_INIT;
    const char *canon;
    mn_status rc;
    if (!cp->session_id || !mn__uuid_parse(cp->session_id, id))
        return mn__err(MN_INVALID, "checkpoint: session_id is not a UUID");
    if (!cp->checkpoint_ns)
        return mn__err(MN_INVALID, "checkpoint: checkpoint_ns: required");
    if ((rc = check_name("checkpoint_ns", cp->checkpoint_ns, 1)) || (rc = check_name("checkpoint_id", cp->id, 0)) ||
        (cp->parent_id && (rc = check_name("parent_id", cp->parent_id, 0))) ||
        (rc = check_blob("data", cp->type, cp->data)))
        return rc;
    rc = mn__check_json_object("metadata", cp->metadata, &a, "", &canon);
    mn__arena_release(&a);
    for (size_t i = 0; i < cp->n_writes && !rc; i++)
        rc = check_write(&cp->writes[i], i);
    return rc;
}

mn_status mn__put_checkpoint_writes(mn_db *db, const char *ns, const char *thread, const char *cns,
                                    const char *checkpoint_id, const mn_checkpoint_write *w, size_t n)
{
    ns = ns ? ns : "default";
    cns = cns ? cns : "";
    char id[MN_UUID_LEN + 1];
    mn_status rc;
    if ((rc = mn__check_namespace(ns)) || (rc = check_name("checkpoint_ns", cns, 1)) ||
        (rc = check_name("checkpoint_id", checkpoint_id, 0)))
        return rc;
    if (!w || n == 0 || n > WRITES_MAX)
        return mn__err(MN_INVALID, "writes: 1 to %d writes", WRITES_MAX);
    for (size_t i = 0; i < n; i++)
        if ((rc = check_write(&w[i], i)))
            return rc;
    /* LangGraph saves a step's writes as they come and its checkpoint after the one before: the
     * writes may arrive first, even a thread's first */
    if ((rc = thread_make(db, ns, thread, id)))
        return rc;
    const struct mn_store_checkpoint_ops *o = db->store->ops->checkpoint;
    if ((rc = db->store->ops->begin(db->store)))
        return rc;
    for (size_t i = 0; i < n && !rc; i++)
        rc = o->write_put(db->store, id, cns, checkpoint_id, &w[i], w[i].idx < 0);
    if (rc) {
        db->store->ops->rollback(db->store);
        return rc;
    }
    return db->store->ops->commit(db->store);
}

/* ---- reading ---------------------------------------------------------------------------------- */

struct collect {
    struct checkpoint_list *l;
    json_t *filter;
    size_t limit;
    mn_status rc;
};

/* Whether metadata holds each key of the filter with an equal value. */
static int filter_match(json_t *filter, const char *metadata, mn_status *rc)
{
    if (!filter)
        return 1;
    int oom = 0;
    json_t *m = mn__json_loads(metadata, 0, NULL, &oom);
    if (!m) {
        *rc = oom ? mn__nomem() : mn__err(MN_IO, "a stored checkpoint's metadata is not JSON");
        return 0;
    }
    const char *k;
    json_t *v;
    int match = 1;
    json_object_foreach(filter, k, v)
    {
        if (!json_equal(json_object_get(m, k), v)) {
            match = 0;
            break;
        }
    }
    json_decref(m);
    return match;
}

static char *keep(struct checkpoint_list *l, const char *s, int *oom)
{
    return mn__arena_strdup(&l->a, s, oom);
}

static int collect_row(void *user, const mn_checkpoint *cp)
{
    struct collect *c = user;
    struct checkpoint_list *l = c->l;
    if (!filter_match(c->filter, cp->metadata, &c->rc))
        return c->rc != MN_OK;
    if (l->pub.count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        mn_checkpoint *items = realloc(l->pub.items, cap * sizeof *items);
        if (!items) {
            c->rc = mn__nomem();
            return 1;
        }
        l->pub.items = items;
        l->cap = cap;
    }
    int oom = 0;
    mn_checkpoint *d = &l->pub.items[l->pub.count];
    *d = (mn_checkpoint){.created_at = cp->created_at};
    d->session_id = keep(l, cp->session_id, &oom);
    d->thread = cp->thread ? keep(l, cp->thread, &oom) : d->session_id;
    d->checkpoint_ns = keep(l, cp->checkpoint_ns, &oom);
    d->id = keep(l, cp->id, &oom);
    d->parent_id = keep(l, cp->parent_id, &oom);
    d->type = keep(l, cp->type, &oom);
    d->data = keep(l, cp->data, &oom);
    d->metadata = keep(l, cp->metadata, &oom);
    if (oom) {
        c->rc = mn__nomem();
        return 1;
    }
    l->pub.count++;
    return c->limit && l->pub.count >= c->limit;
}

int mn__checkpoint_write_collect(void *user, const mn_checkpoint_write *w)
{
    struct mn__checkpoint_writes *c = user;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 8;
        mn_checkpoint_write *items = mn__arena_alloc(c->a, cap * sizeof *items);
        if (!items) {
            c->oom = 1;
            return 1;
        }
        if (c->n)
            memcpy(items, c->items, c->n * sizeof *items);
        c->items = items;
        c->cap = cap;
    }
    mn_checkpoint_write *d = &c->items[c->n++];
    d->idx = w->idx;
    d->task_id = mn__arena_strdup(c->a, w->task_id, &c->oom);
    d->task_path = mn__arena_strdup(c->a, w->task_path ? w->task_path : "", &c->oom);
    d->channel = mn__arena_strdup(c->a, w->channel, &c->oom);
    d->type = mn__arena_strdup(c->a, w->type, &c->oom);
    d->value = mn__arena_strdup(c->a, w->value, &c->oom);
    return c->oom;
}

static mn_status attach_writes(mn_db *db, struct checkpoint_list *l)
{
    const struct mn_store_checkpoint_ops *o = db->store->ops->checkpoint;
    for (size_t i = 0; i < l->pub.count; i++) {
        mn_checkpoint *cp = &l->pub.items[i];
        struct mn__checkpoint_writes c = {.a = &l->a};
        mn_status rc = o->writes(db->store, cp->session_id, cp->checkpoint_ns, cp->id, mn__checkpoint_write_collect, &c);
        if (!rc && c.oom)
            rc = mn__nomem();
        if (rc)
            return rc;
        cp->writes = c.items;
        cp->n_writes = c.n;
    }
    return MN_OK;
}

static mn_status parse_filter(const char *text, json_t **out)
{
    *out = NULL;
    if (!text)
        return MN_OK;
    mn_status rc = mn__json_parse(text, "filter", out);
    if (rc)
        return rc;
    if (!json_is_object(*out) || json_object_size(*out) > FILTER_MAX_KEYS) {
        json_decref(*out);
        *out = NULL;
        return mn__err(MN_INVALID, "filter: a JSON object of at most %d keys", FILTER_MAX_KEYS);
    }
    return MN_OK;
}

mn_status mn__list_checkpoints(mn_db *db, const mn_checkpoint_query *q, mn_checkpoints **out)
{
    const char *ns = q->ns ? q->ns : "default";
    char id[MN_UUID_LEN + 1];
    mn_status rc;
    if ((rc = mn__check_namespace(ns)) || (q->checkpoint_ns && (rc = check_name("checkpoint_ns", q->checkpoint_ns, 1))) ||
        (q->id && (rc = check_name("checkpoint_id", q->id, 0))) || (q->before && (rc = check_name("before", q->before, 0))))
        return rc;
    struct checkpoint_list *l = calloc(1, sizeof *l);
    if (!l)
        return mn__nomem();
    l->pub.item_size = sizeof(mn_checkpoint);
    struct collect c = {.l = l, .limit = q->limit};
    if ((rc = parse_filter(q->filter, &c.filter)))
        goto fail;
    if (q->thread) {
        rc = thread_find(db, ns, q->thread, id, NULL);
        if (rc == MN_NOTFOUND) { /* a thread with nothing saved yet */
            mn__err_clear();
            json_decref(c.filter);
            *out = &l->pub;
            return MN_OK;
        }
        if (rc)
            goto fail;
    }
    mn_store_checkpoint_scan s = {.ns = ns, .session_id = q->thread ? id : NULL, .checkpoint_ns = q->checkpoint_ns,
                                  .id = q->id, .before = q->before};
    rc = db->store->ops->checkpoint->scan(db->store, &s, collect_row, &c);
    if (!rc)
        rc = c.rc;
    if (!rc)
        rc = attach_writes(db, l);
    if (rc)
        goto fail;
    json_decref(c.filter);
    *out = &l->pub;
    return MN_OK;
fail:
    json_decref(c.filter);
    mn__free_checkpoints(&l->pub);
    return rc;
}

mn_status mn__get_checkpoint(mn_db *db, const char *ns, const char *thread, const char *cns, const char *id,
                             mn_checkpoints **out)
{
    mn_status rc = check_name("thread_id", thread, 0);
    if (rc)
        return rc;
    mn_checkpoint_query q = MN_CHECKPOINT_QUERY_INIT;
    q.ns = ns;
    q.thread = thread;
    q.checkpoint_ns = cns ? cns : "";
    q.id = id;
    q.limit = 1;
    mn_checkpoints *l = NULL;
    if ((rc = mn__list_checkpoints(db, &q, &l)))
        return rc;
    if (l->count == 0) {
        mn__free_checkpoints(l);
        return id ? mn__err(MN_NOTFOUND, "checkpoint '%.200s' of thread '%.200s' not found", id, thread)
                  : mn__err(MN_NOTFOUND, "thread '%.200s' has no checkpoint", thread);
    }
    *out = l;
    return MN_OK;
}

mn_status mn__delete_checkpoint_thread(mn_db *db, const char *ns, const char *thread, int64_t *removed)
{
    ns = ns ? ns : "default";
    char id[MN_UUID_LEN + 1];
    int64_t n = 0;
    mn_status rc = mn__check_namespace(ns);
    if (!rc)
        rc = thread_find(db, ns, thread, id, NULL);
    if (rc == MN_NOTFOUND) { /* nothing saved under that name: nothing to delete */
        mn__err_clear();
        rc = MN_OK;
    } else if (!rc) {
        rc = db->store->ops->checkpoint->remove(db->store, id, &n);
    }
    if (removed)
        *removed = rc ? 0 : n;
    return rc;
}

void mn__free_checkpoints(mn_checkpoints *list)
{
    if (!list)
        return;
    struct checkpoint_list *l = (struct checkpoint_list *)list;
    free(l->pub.items);
    mn__arena_release(&l->a);
    free(l);
}
