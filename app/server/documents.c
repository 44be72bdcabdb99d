/*
 * documents.c — the document operations (document_put, document_get, document_delete,
 * document_search, document_paths; docs/documents.md): LangGraph's store over include/mnemo.h.
 * Values travel as JSON objects; the library stores their compact text.
 */
#include <stdlib.h>

#include "server/server.h"

static const char *str(struct srv_call *c, const char *name)
{
    return json_string_value(json_object_get(c->params, name));
}

static int flag(struct srv_call *c, const char *name, int absent)
{
    json_t *v = json_object_get(c->params, name);
    return v ? json_is_true(v) : absent;
}

static size_t count(struct srv_call *c, const char *name)
{
    json_t *v = json_object_get(c->params, name);
    return v ? (size_t)json_integer_value(v) : 0;
}

/* A parameter's JSON as compact text in *out (NULL when absent); MN_NOMEM. */
static mn_status dumped(struct srv_call *c, const char *name, char **out)
{
    json_t *v = json_object_get(c->params, name);
    *out = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    return v && !*out ? srv_fail(c, MN_NOMEM, "out of memory") : MN_OK;
}

static json_t *document_json(const mn_document *d)
{
    json_t *value = json_loads(d->value, 0, NULL);
    json_t *o = json_pack("{s:s,s:s,s:s,s:o,s:I,s:I}", "namespace", d->ns, "path", d->path, "key", d->key, "value",
                          value ? value : json_object(), "created_at", (json_int_t)d->created_at, "updated_at",
                          (json_int_t)d->updated_at);
    if (o && (json_object_set_new(o, "expires_at", d->expires_at ? json_integer(d->expires_at) : json_null()) ||
              json_object_set_new(o, "score", d->scored ? json_real(d->score) : json_null()))) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

/* {documents: [...]} or, one, {document: {...}}; frees l. */
static mn_status answer(struct srv_call *c, mn_documents *l, int one)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < l->count; i++)
        if (json_array_append_new(arr, document_json(mn_documents_at(l, i)))) {
            json_decref(arr);
            arr = NULL;
        }
    mn_documents_free(l);
    json_t *r = !arr ? NULL
                : one ? json_pack("{s:O}", "document", json_array_get(arr, 0))
                      : json_pack("{s:O}", "documents", arr);
    json_decref(arr);
    if (!r)
        return srv_fail(c, MN_NOMEM, "out of memory");
    c->result = r;
    return MN_OK;
}

mn_status srv_op_document_put(struct srv_call *c)
{
    mn_document_in in = MN_DOCUMENT_IN_INIT;
    mn_status st = srv_call_ns(c, &in.ns);
    char *value = NULL, *index = NULL;
    if (st || (st = dumped(c, "value", &value)) || (st = dumped(c, "index", &index))) {
        free(value);
        return st;
    }
    in.path = str(c, "path");
    in.key = str(c, "key");
    in.value = value;
    in.index = index; /* JSON text: false, true or an array, as the library takes it */
    in.ttl_ms = (int64_t)count(c, "ttl_ms");
    mn_documents *l = NULL;
    st = mn_document_put(c->db, &in, &l);
    free(value);
    free(index);
    return st ? srv_fail_lib(c, st) : answer(c, l, 1);
}

mn_status srv_op_document_get(struct srv_call *c)
{
    const char *ns;
    mn_status st = srv_call_ns(c, &ns);
    if (st)
        return st;
    mn_documents *l = NULL;
    if ((st = mn_document_get(c->db, ns, str(c, "path"), str(c, "key"), flag(c, "refresh_ttl", 1), &l)))
        return srv_fail_lib(c, st);
    return answer(c, l, 1);
}

mn_status srv_op_document_delete(struct srv_call *c)
{
    const char *ns;
    int64_t n = 0;
    mn_status st = srv_call_ns(c, &ns);
    if (st)
        return st;
    if ((st = mn_document_delete(c->db, ns, str(c, "path"), str(c, "key"), &n)))
        return srv_fail_lib(c, st);
    if (!(c->result = json_pack("{s:I}", "deleted", (json_int_t)n)))
        return srv_fail(c, MN_NOMEM, "out of memory");
    return MN_OK;
}

mn_status srv_op_document_search(struct srv_call *c)
{
    mn_document_query q = MN_DOCUMENT_QUERY_INIT;
    char *filter = NULL;
    mn_status st = srv_call_ns(c, &q.ns);
    if (st || (st = dumped(c, "filter", &filter)))
        return st;
    q.prefix = str(c, "prefix");
    q.filter = filter;
    q.query = str(c, "query");
    q.limit = count(c, "limit");
    q.offset = count(c, "offset");
    q.refresh_ttl = flag(c, "refresh_ttl", 1);
    mn_documents *l = NULL;
    st = mn_document_search(c->db, &q, &l);
    free(filter);
    return st ? srv_fail_lib(c, st) : answer(c, l, 0);
}

mn_status srv_op_document_paths(struct srv_call *c)
{
    mn_document_paths_query q = MN_DOCUMENT_PATHS_QUERY_INIT;
    mn_status st = srv_call_ns(c, &q.ns);
    if (st)
        return st;
    q.prefix = str(c, "prefix");
    q.suffix = str(c, "suffix");
    q.max_depth = count(c, "max_depth");
    q.limit = count(c, "limit");
    q.offset = count(c, "offset");
    mn_strings *l = NULL;
    if ((st = mn_document_paths(c->db, &q, &l)))
        return srv_fail_lib(c, st);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < l->count; i++)
        if (json_array_append_new(arr, json_string(mn_strings_at(l, i)))) {
            json_decref(arr);
            arr = NULL;
        }
    mn_strings_free(l);
    if (!arr || !(c->result = json_pack("{s:o}", "paths", arr)))
        return srv_fail(c, MN_NOMEM, "out of memory");
    return MN_OK;
}
