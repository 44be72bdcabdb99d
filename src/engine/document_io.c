/*
 * document_io.c — documents in and out of a database as a whole (docs/documents.md,
 * docs/format.md "Export"): the export's document lines with their vectors (a restore needs no
 * embedder), their import, and the copy `mnemo migrate` makes, of the documents that have not
 * expired. A document the destination has already is left as it is there.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "memory/jsonl.h"
#include "store/store_document.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define MAX_DIM 65536

static json_t *vectors_json(const mn_store_document *d)
{
    json_t *all = json_array();
    for (size_t v = 0; all && v < d->n_vectors; v++) {
        json_t *one = json_array();
        for (uint32_t i = 0; one && i < d->dim; i++)
            if (json_array_append_new(one, json_real(d->vectors[v * d->dim + i]))) {
                json_decref(one);
                one = NULL;
            }
        if (!one || json_array_append_new(all, one)) {
            json_decref(all);
            all = NULL;
        }
    }
    return all;
}

static json_t *line_json(const mn_store_document *d)
{
    json_t *value = json_loads(d->value, 0, NULL), *vectors = vectors_json(d);
    return json_pack("{s:s,s:s,s:s,s:s,s:o,s:I,s:I,s:I,s:I,s:o}", "type", "document", "namespace", d->ns, "path",
                     d->path, "key", d->key, "value", value ? value : json_object(), "created_at",
                     (json_int_t)d->created_at, "updated_at", (json_int_t)d->updated_at, "expires_at",
                     (json_int_t)d->expires_at, "ttl_ms", (json_int_t)d->ttl_ms, "vectors", vectors);
}

struct export_ctx {
    mn_write_fn write;
    void *user;
    mn_status rc;
};

static int export_row(void *user, const mn_store_document *d)
{
    struct export_ctx *x = user;
    x->rc = mn__export_line(x->write, x->user, line_json(d));
    return x->rc != MN_OK;
}

mn_status mn__document_export(mn_db *db, mn_write_fn write, void *user)
{
    struct export_ctx x = {write, user, MN_OK};
    mn_store_document_scan q = {NULL, NULL, mn__clock_now_ms(), 1}; /* what expired is gone already */
    mn_status rc = db->store->ops->document->scan(db->store, &q, export_row, &x);
    return rc ? rc : x.rc;
}

int mn__document_line(const char *line, size_t len)
{
    static const char head[] = "{\"type\":\"document\"";
    return len >= sizeof head - 1 && memcmp(line, head, sizeof head - 1) == 0;
}

static int found(void *user, const mn_store_document *d)
{
    (void)d;
    *(int *)user = 1;
    return 1;
}

/* Stores d on st unless a document of its address is there (expired or not). */
static mn_status store_new(mn_store *st, const mn_store_document *d, int *added)
{
    int there = 0;
    mn_status rc = st->ops->document->get(st, d->ns, d->path, d->key, 0, found, &there);
    *added = 0;
    if (rc || there)
        return rc;
    *added = 1;
    return st->ops->document->put(st, d);
}

/* The vectors of a line: equal-length arrays of numbers, into *out (n * dim floats). */
static mn_status parse_vectors(const json_t *arr, float **out, size_t *n, uint32_t *dim)
{
    *out = NULL;
    *n = json_array_size(arr);
    *dim = *n ? (uint32_t)json_array_size(json_array_get(arr, 0)) : 0;
    if (arr && !json_is_array(arr))
        return mn__err(MN_INVALID, "document line: vectors: not an array");
    if (*n == 0)
        return MN_OK;
    if (*dim == 0 || *dim > MAX_DIM || *n > 256)
        return mn__err(MN_INVALID, "document line: vectors: 1 to 256 arrays of 1 to %d numbers", MAX_DIM);
    if (!(*out = malloc(*n * *dim * sizeof **out)))
        return mn__nomem();
    for (size_t v = 0; v < *n; v++) {
        const json_t *one = json_array_get(arr, v);
        if (json_array_size(one) != *dim)
            return mn__err(MN_INVALID, "document line: vectors[%zu]: not %u numbers", v, (unsigned)*dim);
        for (uint32_t i = 0; i < *dim; i++) {
            const json_t *x = json_array_get(one, i);
            if (!json_is_number(x))
                return mn__err(MN_INVALID, "document line: vectors[%zu][%u]: not a number", v, (unsigned)i);
            (*out)[v * *dim + i] = (float)json_number_value(x);
        }
    }
    return MN_OK;
}

static int64_t int_of(const json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

mn_status mn__document_import_line(mn_db *db, const char *line, size_t len)
{
    char *text = strndup(line, len);
    json_t *o = NULL;
    if (!text)
        return mn__nomem();
    mn_status rc = mn__json_parse(text, "document line", &o);
    free(text);
    if (rc)
        return rc;
    char *value = mn__json_dump(json_object_get(o, "value"));
    mn_document_in in = MN_DOCUMENT_IN_INIT;
    in.ns = json_string_value(json_object_get(o, "namespace"));
    in.path = json_string_value(json_object_get(o, "path"));
    in.key = json_string_value(json_object_get(o, "key"));
    in.value = value;
    in.index = "false";
    in.ttl_ms = int_of(o, "ttl_ms");
    float *vecs = NULL;
    size_t n = 0;
    uint32_t dim = 0;
    rc = value ? mn__document_check(&in) : mn__nomem();
    if (!rc && (!in.ns || int_of(o, "created_at") < 0 || int_of(o, "updated_at") < 0 || int_of(o, "expires_at") < 0))
        rc = mn__err(MN_INVALID, "document line: namespace, created_at, updated_at or expires_at missing or bad");
    if (!rc)
        rc = parse_vectors(json_object_get(o, "vectors"), &vecs, &n, &dim);
    mn_store_document d = {in.ns, in.path, in.key, value, int_of(o, "created_at"), int_of(o, "updated_at"),
                           int_of(o, "expires_at"), in.ttl_ms, n ? dim : 0, n, vecs};
    int added = 0;
    if (!rc)
        rc = store_new(db->store, &d, &added);
    free(vecs);
    free(value);
    json_decref(o);
    return rc;
}

struct copy_ctx {
    mn_store *dst;
    int64_t copied;
    mn_status rc;
};

static int copy_row(void *user, const mn_store_document *d)
{
    struct copy_ctx *c = user;
    int added = 0;
    c->rc = store_new(c->dst, d, &added);
    c->copied += added;
    return c->rc != MN_OK;
}

mn_status mn__document_copy(mn_store *src, mn_store *dst, int64_t *copied)
{
    struct copy_ctx c = {dst, 0, MN_OK};
    mn_store_document_scan q = {NULL, NULL, mn__clock_now_ms(), 1};
    mn_status rc = src->ops->document->scan(src, &q, copy_row, &c);
    if (copied)
        *copied = c.copied;
    return rc ? rc : c.rc;
}
