/*
 * store_document.h — the document part of the store interface (store.h's ops->document),
 * implemented by sqlite/documents.c and postgres/documents.c: rows of one table, documents,
 * keyed by (namespace, path, key). Policy — validation, field extraction and embedding, time to
 * live, filters, ranking, path matching — is decided above (src/engine/document.c,
 * docs/documents.md); a backend only stores, reads and deletes rows.
 */
#ifndef MN_STORE_DOCUMENT_H
#define MN_STORE_DOCUMENT_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "store/store.h"

/* One row. The strings and vectors live for the call only. */
typedef struct mn_store_document {
    const char *ns, *path, *key;
    const char *value;          /* JSON object text, stored byte for byte */
    int64_t created_at, updated_at;
    int64_t expires_at;         /* 0: never */
    int64_t ttl_ms;             /* 0: none */
    uint32_t dim;               /* 0: no vectors */
    size_t n_vectors;
    const float *vectors;       /* n_vectors * dim floats, one vector after another */
} mn_store_document;

/* Which rows a scan reads. */
typedef struct mn_store_document_scan {
    const char *ns;      /* NULL: every namespace (export, migrate) */
    const char *prefix;  /* NULL: every path; else rows whose path is prefix or starts with prefix + "."
                            ("" is taken literally: the engine passes NULL for "every path") */
    int64_t now;         /* 0: expired rows too; else only rows with expires_at 0 or > now */
    int with_vectors;    /* 0: d->vectors NULL and n_vectors 0 (the rows' dim is still set) */
} mn_store_document_scan;

/* One row, callback-scoped. Return 0 to go on, 1 to stop. A callback (of get, scan or paths)
 * may not call into the same store: it runs under the store's lock (MN_MISUSE on SQLite). */
typedef int (*mn_store_document_fn)(void *user, const mn_store_document *d);
/* One path, callback-scoped. Return 0 to go on, 1 to stop. */
typedef int (*mn_store_document_path_fn)(void *user, const char *path);

/* Every namespace, path and key argument is required (NULL: MN_MISUSE) unless said otherwise. */
struct mn_store_document_ops {
    /* Stores d, replacing the row of the same (ns, path, key) but keeping that row's created_at.
     * n_vectors 0 stores dim 0 (whatever d->dim says), so that dim tells a scan without vectors
     * whether a row has any; n_vectors > 0 needs dim > 0 and vectors (else MN_MISUSE). */
    mn_status (*put)(mn_store *st, const mn_store_document *d);
    /* The row (ns, path, key) with vectors when it is there and (now > 0) not expired at now:
     * fn is called once; else not at all. */
    mn_status (*get)(mn_store *st, const char *ns, const char *path, const char *key, int64_t now,
                     mn_store_document_fn fn, void *user);
    /* Sets the expires_at of row (ns, path, key), when there. */
    mn_status (*touch)(mn_store *st, const char *ns, const char *path, const char *key, int64_t expires_at);
    /* Deletes row (ns, path, key); *removed gets 1 or 0. */
    mn_status (*remove)(mn_store *st, const char *ns, const char *path, const char *key, int64_t *removed);
    /* The rows q matches, by ns, path, key (byte order). fn may not call into the store. */
    mn_status (*scan)(mn_store *st, const mn_store_document_scan *q, mn_store_document_fn fn, void *user);
    /* The distinct paths of namespace ns's rows not expired at now (0: any), in byte order. */
    mn_status (*paths)(mn_store *st, const char *ns, int64_t now, mn_store_document_path_fn fn, void *user);
    /* Deletes the rows with 0 < expires_at <= now (ns NULL: of every namespace) or, with now 0,
     * every row of namespace ns; *removed gets the count. */
    mn_status (*purge)(mn_store *st, const char *ns, int64_t now, int64_t *removed);
};

#endif
