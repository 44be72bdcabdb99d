/*
 * checkpoint_io.c — graph checkpoints in and out of a database as a whole (docs/checkpoints.md,
 * docs/format.md "Export"): the export's checkpoint lines, their import, and the copy `mnemo
 * migrate` makes, each checkpoint with its pending writes.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "store/store_checkpoint.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/banned.h"
#include "util/json.h"

/* Every checkpoint of one session (session_id) or of the database (NULL), with its writes, as
 * fn sees them: rows stream from the store, writes are read per row. */
struct each {
    mn_store *st;
    mn_status (*fn)(void *user, const mn_checkpoint *cp);
    void *user;
    mn_status rc;
};

static int each_row(void *user, const mn_checkpoint *row)
{
    struct each *e = user;
    struct mn_arena a = MN_ARENA_INIT;
    struct mn__checkpoint_writes w = {.a = &a};
    e->rc = e->st->ops->checkpoint->writes(e->st, row->session_id, row->checkpoint_ns, row->id,
                                           mn__checkpoint_write_collect, &w);
    if (!e->rc && w.oom)
        e->rc = mn__nomem();
    if (!e->rc) {
        mn_checkpoint cp = *row;
        cp.writes = w.items;
        cp.n_writes = w.n;
        e->rc = e->fn(e->user, &cp);
    }
    mn__arena_release(&a);
    return e->rc != MN_OK;
}

static mn_status each_checkpoint(mn_store *st, const char *session_id,
                                 mn_status (*fn)(void *user, const mn_checkpoint *cp), void *user)
{
    struct each e = {st, fn, user, MN_OK};
    mn_store_checkpoint_scan q = {.session_id = session_id};
    mn_status rc = st->ops->checkpoint->scan(st, &q, each_row, &e);
    return e.rc ? e.rc : rc;
}

/* ---- export and import ----------------------------------------------------------------------- */

static json_t *line_json(const mn_checkpoint *cp)
{
    json_t *writes = json_array();
    for (size_t i = 0; writes && i < cp->n_writes; i++) {
        const mn_checkpoint_write *w = &cp->writes[i];
        if (json_array_append_new(writes, json_pack("{s:s,s:s,s:I,s:s,s:s,s:s}", "task_id", w->task_id, "task_path",
                                                    w->task_path, "idx", (json_int_t)w->idx, "channel", w->channel,
                                                    "type", w->type, "value", w->value))) {
            json_decref(writes);
            writes = NULL;
        }
    }
    if (!writes)
        return NULL;
    json_t *metadata = json_loads(cp->metadata, 0, NULL);
    return json_pack("{s:s,s:s,s:s,s:s,s:s?,s:s,s:s,s:o,s:I,s:o}", "type", "checkpoint", "session_id",
                     cp->session_id, "checkpoint_ns", cp->checkpoint_ns, "id", cp->id, "parent_id", cp->parent_id,
                     "data_type", cp->type, "data", cp->data, "metadata", metadata ? metadata : json_object(),
                     "created_at", (json_int_t)cp->created_at, "writes", writes);
}

struct export_ctx {
    mn_write_fn write;
    void *user;
};

mn_status mn__export_line(mn_write_fn write, void *user, json_t *o)
{
    char *text = o ? mn__json_dump(o) : NULL;
    json_decref(o);
    if (!text)
        return mn__nomem();
    size_t len = strlen(text);
    text[len] = '\n'; /* the dump's NUL becomes the line's end; the length says where it stops */
    int failed = write(user, text, len + 1) != 0;
    free(text);
    return failed ? mn__err(MN_IO, "export: write failed") : MN_OK;
}

static mn_status export_one(void *user, const mn_checkpoint *cp)
{
    struct export_ctx *x = user;
    return mn__export_line(x->write, x->user, line_json(cp));
}

mn_status mn__checkpoint_export(mn_db *db, const char *const *ids, size_t n, mn_write_fn write, void *user)
{
    struct export_ctx x = {write, user};
    if (n == 0)
        return each_checkpoint(db->store, NULL, export_one, &x);
    mn_status rc = MN_OK;
    for (size_t i = 0; i < n && !rc; i++)
        rc = each_checkpoint(db->store, ids[i], export_one, &x);
    return rc;
}

int mn__checkpoint_line(const char *line, size_t len)
{
    static const char head[] = "{\"type\":\"checkpoint\"";
    return len >= sizeof head - 1 && memcmp(line, head, sizeof head - 1) == 0;
}

/* Stores cp and its writes on st as they are, inside the caller's transaction (a checkpoint
 * already there is left alone: *added 0). */
static mn_status store_rows(mn_store *st, const mn_checkpoint *cp, int *added)
{
    int found = 0;
    mn_store_checkpoint_scan q = {.session_id = cp->session_id, .checkpoint_ns = cp->checkpoint_ns, .id = cp->id};
    mn_status rc = st->ops->checkpoint->scan(st, &q, mn__checkpoint_found, &found);
    *added = 0;
    if (rc || found)
        return rc;
    rc = st->ops->checkpoint->put(st, cp);
    for (size_t i = 0; i < cp->n_writes && !rc; i++)
        rc = st->ops->checkpoint->write_put(st, cp->session_id, cp->checkpoint_ns, cp->id, &cp->writes[i], 1);
    *added = !rc;
    return rc;
}

/* store_rows in a transaction of its own. */
static mn_status store_copy(mn_store *st, const mn_checkpoint *cp, int *added)
{
    mn_status rc = st->ops->begin(st);
    if (rc)
        return rc;
    if ((rc = store_rows(st, cp, added))) {
        st->ops->rollback(st);
        *added = 0;
        return rc;
    }
    return st->ops->commit(st);
}

static const char *member(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

mn_status mn__checkpoint_import_line(mn_db *db, const char *line, size_t len, int *added)
{
    json_t *o = NULL;
    char *text = strndup(line, len);
    if (!text)
        return mn__nomem();
    mn_status rc = mn__json_parse(text, "checkpoint line", &o);
    free(text);
    if (rc)
        return rc;
    json_t *jw = json_object_get(o, "writes");
    size_t n = json_array_size(jw);
    mn_checkpoint_write *w = calloc(n ? n : 1, sizeof *w);
    char *metadata = mn__json_dump(json_object_get(o, "metadata"));
    if (!w || !metadata) {
        rc = mn__nomem();
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *x = json_array_get(jw, i);
        w[i] = (mn_checkpoint_write){member(x, "task_id"), member(x, "task_path"),
                                     json_integer_value(json_object_get(x, "idx")), member(x, "channel"),
                                     member(x, "type"), member(x, "value")};
    }
    mn_checkpoint cp = {.session_id = member(o, "session_id"), .checkpoint_ns = member(o, "checkpoint_ns"),
                        .id = member(o, "id"), .parent_id = member(o, "parent_id"), .type = member(o, "data_type"),
                        .data = member(o, "data"), .metadata = metadata,
                        .created_at = json_integer_value(json_object_get(o, "created_at")), .n_writes = n,
                        .writes = w};
    if ((rc = mn__checkpoint_check_row(&cp)))
        goto out;
    int copied = 0;
    rc = store_rows(db->store, &cp, &copied); /* inside mn_import's transaction */
    if (added)
        *added = copied;
    if (rc == MN_NOTFOUND)
        rc = mn__err(MN_INVALID, "checkpoint %.200s belongs to session %s, which has no session line before it",
                     cp.id, cp.session_id);
out:
    free(metadata);
    free(w);
    json_decref(o);
    return rc;
}

/* ---- migrate --------------------------------------------------------------------------------- */

struct copy_ctx {
    mn_store *dst;
    int64_t copied;
};

static mn_status copy_one(void *user, const mn_checkpoint *cp)
{
    struct copy_ctx *c = user;
    int added = 0;
    mn_status rc = store_copy(c->dst, cp, &added);
    c->copied += added;
    return rc;
}

mn_status mn__checkpoint_copy(mn_store *src, mn_store *dst, const char *session_id, int64_t *copied)
{
    struct copy_ctx c = {dst, 0};
    mn_status rc = each_checkpoint(src, session_id, copy_one, &c);
    if (copied)
        *copied = c.copied;
    return rc;
}
