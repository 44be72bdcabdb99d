/*
 * mnemo_document.c — the public document functions (mnemo.h, docs/documents.md): the handle and
 * ABI checks, then the use cases of engine/document.c.
 */
#include <stddef.h>

#include "engine/engine.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/banned.h"

/* *out cleared, and required. */
#define OUT_REQUIRED(fn, out)                                                                                        \
    do {                                                                                                             \
        if (out)                                                                                                     \
            *(out) = NULL;                                                                                           \
        if (!rc && !(out))                                                                                           \
            rc = mn__err(MN_MISUSE, fn ": out is NULL");                                                             \
    } while (0)

mn_status mn_document_put(mn_db *db, const mn_document_in *d, mn_documents **out)
{
    mn_document_in in = MN_DOCUMENT_IN_INIT;
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (!rc)
        rc = MN__ABI_LOAD(mn_document_in, &in, d, ttl_ms);
    return rc ? rc : mn__put_document(db, &in, out);
}

mn_status mn_document_get(mn_db *db, const char *ns, const char *path, const char *key, int refresh_ttl,
                          mn_documents **out)
{
    mn_status rc = mn__check_db(db);
    OUT_REQUIRED("mn_document_get", out);
    return rc ? rc : mn__get_document(db, ns, path, key, refresh_ttl, out);
}

mn_status mn_document_delete(mn_db *db, const char *ns, const char *path, const char *key, int64_t *deleted)
{
    mn_status rc = mn__check_db(db);
    if (deleted)
        *deleted = 0;
    return rc ? rc : mn__delete_document(db, ns, path, key, deleted);
}

mn_status mn_document_search(mn_db *db, const mn_document_query *q, mn_documents **out)
{
    mn_document_query in = MN_DOCUMENT_QUERY_INIT;
    mn_status rc = mn__check_db(db);
    OUT_REQUIRED("mn_document_search", out);
    if (!rc)
        rc = MN__ABI_LOAD(mn_document_query, &in, q, refresh_ttl);
    return rc ? rc : mn__search_documents(db, &in, out);
}

mn_status mn_document_paths(mn_db *db, const mn_document_paths_query *q, mn_strings **out)
{
    mn_document_paths_query in = MN_DOCUMENT_PATHS_QUERY_INIT;
    mn_status rc = mn__check_db(db);
    OUT_REQUIRED("mn_document_paths", out);
    if (!rc)
        rc = MN__ABI_LOAD(mn_document_paths_query, &in, q, offset);
    return rc ? rc : mn__list_document_paths(db, &in, out);
}

const mn_document *mn_documents_at(const mn_documents *list, size_t i)
{
    if (!list || i >= list->count)
        return NULL;
    return (const mn_document *)(const void *)((const char *)list->items + i * list->item_size);
}

void mn_documents_free(mn_documents *list)
{
    mn__free_documents(list);
}
