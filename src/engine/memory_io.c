/*
 * memory_io.c — long-term memories in and out of a database as a whole (docs/memory.md,
 * docs/format.md "Export"): every version as a {"type":"memory", …} export line, their import,
 * and the copy `mnemo migrate` makes. A version is stored as it was, with a vector from the
 * receiving handle's embedder.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "memory/fact.h"
#include "store/store_memory.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

struct export_ctx {
    mn_write_fn write;
    void *user;
    mn_status rc;
};

static int export_row(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25;
    (void)vec;
    (void)dim;
    struct export_ctx *e = user;
    json_t *o = json_object();
    json_t *body = mn__fact_json(m, 0);
    if (!o || !body || json_object_set_new(o, "type", json_string("memory")) || json_object_update(o, body)) {
        json_decref(o);
        json_decref(body);
        e->rc = mn__nomem();
        return 1;
    }
    json_decref(body);
    char *text = mn__json_dump(o);
    json_decref(o);
    if (!text) {
        e->rc = mn__nomem();
        return 1;
    }
    size_t len = strlen(text);
    int bad = e->write(e->user, text, len) != 0 || e->write(e->user, "\n", 1) != 0;
    free(text);
    if (bad) {
        e->rc = mn__err(MN_IO, "export: write failed");
        return 1;
    }
    return 0;
}

mn_status mn__memory_export(mn_db *db, mn_write_fn write, void *user)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, NULL, 1, NULL, 0, mn__clock_now_ms(), 0, 0, NULL, 0};
    struct export_ctx e = {write, user, MN_OK};
    mn_status rc = db->store->ops->memory->query(db->store, &sq, export_row, &e);
    return rc ? rc : e.rc;
}

int mn__memory_line(const char *line, size_t len)
{
    static const char head[] = "{\"type\":\"memory\"";
    return len >= sizeof head - 1 && memcmp(line, head, sizeof head - 1) == 0;
}

/* Stores one version as it is, with a vector from this handle's embedder when it has one. */
static mn_status import_version(mn_db *db, const mn_memory *m, int *added)
{
    float *vec = NULL;
    uint32_t dim = 0;
    mn_status rc = mn__memory_embed(db, m->text, &vec, &dim);
    if (!rc)
        rc = mn__import_memory_version(db->store, m, vec, dim, added);
    free(vec);
    return rc;
}

mn_status mn__memory_import_line(mn_db *db, const char *line, size_t len, int *added)
{
    *added = 0;
    json_error_t e;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return mn__err(MN_CORRUPT, "memory line: %s", o ? "not an object" : e.text);
    }
    mn_memory m;
    char *meta = NULL;
    mn_status rc = mn__fact_from_json(o, &m, &meta);
    char canon[MN_UUID_LEN + 1];
    if (!rc && !mn__uuid_parse(m.id, canon))
        rc = mn__err(MN_INVALID, "memory: id: '%s' is not a UUID", m.id);
    if (!rc)
        rc = import_version(db, &m, added);
    free(m.sources);
    free(meta);
    json_decref(o);
    return rc;
}

struct copy_ctx {
    mn_db *dst;
    mn_status rc;
    size_t added;
};

static int copy_row(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25;
    (void)vec;
    (void)dim;
    struct copy_ctx *c = user;
    int added = 0;
    c->rc = import_version(c->dst, m, &added);
    c->added += (size_t)added;
    return c->rc != MN_OK;
}

mn_status mn__memory_copy(mn_db *src, mn_db *dst)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, NULL, 1, NULL, 0, mn__clock_now_ms(), 0, 0, NULL, 0};
    struct copy_ctx c = {dst, MN_OK, 0};
    mn_status rc = dst->store->ops->begin(dst->store);
    if (rc)
        return rc;
    rc = src->store->ops->memory->query(src->store, &sq, copy_row, &c);
    if (!rc)
        rc = c.rc;
    if (rc)
        dst->store->ops->rollback(dst->store);
    else
        rc = dst->store->ops->commit(dst->store);
    if (!rc && c.added) /* the destination's memory vector index follows */
        mn__memory_index_update(dst, 0, c.added);
    return rc;
}
