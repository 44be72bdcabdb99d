/*
 * document.c — the document use cases (docs/documents.md): put with its field vectors, get,
 * delete, search (filter, then newest first or ranked by meaning) and the paths in use, with
 * time to live decided here: a read filters what expired and restarts the time of what it
 * returns. The store keeps rows (store_document.h); document_fields.c reads values.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "engine/document.h"
#include "engine/engine.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "store/records.h"
#include "store/store_document.h"
#include "util/arena.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define MAX_TEXTS 256          /* vectors of one document */
#define MAX_FIELD_BYTES 256    /* one index field path */
#define SEARCH_MAX_LIMIT 1000
#define SEARCH_DEFAULT_LIMIT 10
#define PATHS_DEFAULT_LIMIT 100
#define MAX_OFFSET 100000

/* The list a caller frees: the public struct first, so mn_documents_free finds the arena. */
struct document_list {
    mn_documents pub;
    struct mn_arena a;
    size_t cap;
};

/* ---- checks ---------------------------------------------------------------------------------- */

static mn_status check_path(const char *field, const char *path, int empty_ok)
{
    if (!path || !*path)
        return empty_ok ? MN_OK : mn__err(MN_INVALID, "%s: required", field);
    size_t n = strlen(path);
    if (n > MN_DOCUMENT_MAX_PATH)
        return mn__err(MN_INVALID, "%s: %zu bytes, at most %d", field, n, MN_DOCUMENT_MAX_PATH);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if (c < 0x20 || c == 0x7f)
            return mn__err(MN_INVALID, "%s: contains a control character", field);
        if (c == '.' && (i == 0 || i == n - 1 || path[i + 1] == '.'))
            return mn__err(MN_INVALID, "%s: '%.200s' has an empty label (labels are joined by '.')", field, path);
    }
    return mn__check_text(field, path, MN_DOCUMENT_MAX_PATH, "");
}

static mn_status check_key(const char *key)
{
    if (!key || !*key)
        return mn__err(MN_INVALID, "key: required");
    size_t n = strlen(key);
    if (n > MN_DOCUMENT_MAX_KEY)
        return mn__err(MN_INVALID, "key: %zu bytes, at most %d", n, MN_DOCUMENT_MAX_KEY);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
            return mn__err(MN_INVALID, "key: contains a control character");
    return mn__check_text("key", key, MN_DOCUMENT_MAX_KEY, "");
}

/* ns (NULL: "default"), path and key. */
static mn_status check_address(const char **ns, const char *path, const char *key)
{
    *ns = *ns ? *ns : "default";
    mn_status rc = mn__check_namespace(*ns);
    if (!rc)
        rc = check_path("path", path, 0);
    return rc ? rc : check_key(key);
}

/* The index field paths: NULL or "true" give ["$"], "false" no array (*fields NULL). */
static mn_status parse_index(const char *index, json_t **fields)
{
    *fields = NULL;
    if (index && strcmp(index, "false") == 0)
        return MN_OK;
    if (index && strcmp(index, "true") == 0)
        index = NULL;
    mn_status rc = index ? mn__json_parse(index, "index", fields) : MN_OK;
    if (rc)
        return rc;
    if (!index && !(*fields = json_pack("[s]", "$")))
        return mn__nomem();
    size_t n = json_array_size(*fields), i;
    json_t *f;
    if (!json_is_array(*fields) || n < 1 || n > MN_DOCUMENT_MAX_FIELDS)
        rc = mn__err(MN_INVALID, "index: false, or an array of 1 to %d field paths", MN_DOCUMENT_MAX_FIELDS);
    json_array_foreach(*fields, i, f)
    {
        if (!rc && (!json_is_string(f) || json_string_length(f) == 0 || json_string_length(f) > MAX_FIELD_BYTES))
            rc = mn__err(MN_INVALID, "index[%zu]: not a field path of 1 to %d bytes", i, MAX_FIELD_BYTES);
        else if (!rc && !mn__document_field_ok(json_string_value(f)))
            rc = mn__err(MN_INVALID, "index[%zu]: '%.100s' is not a field path (name.name, [*], [N], *, {a,b})", i,
                         json_string_value(f));
    }
    if (rc) {
        json_decref(*fields);
        *fields = NULL;
    }
    return rc;
}

/* ---- the list handed out --------------------------------------------------------------------- */

static struct document_list *list_new(void)
{
    struct document_list *l = calloc(1, sizeof *l);
    if (l)
        l->pub.item_size = sizeof(mn_document);
    return l;
}

/* Appends a copy of row d; non-zero on OOM. */
static int list_push(struct document_list *l, const mn_store_document *d, int scored, double score)
{
    if (l->pub.count == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        mn_document *items = realloc(l->pub.items, cap * sizeof *items);
        if (!items)
            return 1;
        l->pub.items = items;
        l->cap = cap;
    }
    int oom = 0;
    mn_document *o = &l->pub.items[l->pub.count];
    *o = (mn_document){.created_at = d->created_at, .updated_at = d->updated_at, .expires_at = d->expires_at,
                       .scored = scored, .score = scored ? score : 0};
    o->ns = mn__arena_strdup(&l->a, d->ns, &oom);
    o->path = mn__arena_strdup(&l->a, d->path, &oom);
    o->key = mn__arena_strdup(&l->a, d->key, &oom);
    o->value = mn__arena_strdup(&l->a, d->value, &oom);
    if (!oom)
        l->pub.count++;
    return oom;
}

void mn__free_documents(mn_documents *list)
{
    if (!list)
        return;
    struct document_list *l = (struct document_list *)list;
    free(l->pub.items);
    mn__arena_release(&l->a);
    free(l);
}

/* Restarts the time to live of the listed documents that have one (ttl[i] > 0). */
static mn_status refresh(mn_db *db, struct document_list *l, const int64_t *ttl, int64_t now)
{
    for (size_t i = 0; i < l->pub.count; i++) {
        mn_document *d = &l->pub.items[i];
        if (ttl[i] <= 0)
            continue;
        mn_status rc = db->store->ops->document->touch(db->store, d->ns, d->path, d->key, now + ttl[i]);
        if (rc)
            return rc;
        d->expires_at = now + ttl[i];
    }
    return MN_OK;
}

/* ---- put ------------------------------------------------------------------------------------- */

/* The vectors of value's texts at fields, by this handle's embedder: none without one. */
static mn_status embed_fields(mn_db *db, const json_t *value, const json_t *fields, float **vecs, size_t *n,
                              uint32_t *dim)
{
    *vecs = NULL;
    *n = 0;
    *dim = 0;
    if (!fields || !mn__embedder_configured(db))
        return MN_OK;
    char **texts = NULL;
    size_t nt = 0;
    mn_embedder *e = NULL;
    mn_status rc = mn__document_texts(value, fields, MAX_TEXTS, &texts, &nt);
    if (!rc && nt > 0 && !(rc = mn__search_embedder(db, &e)))
        rc = mn__embed_texts_alloc(e, (const char *const *)texts, nt, vecs, dim);
    mn__document_texts_free(texts, nt);
    if (!rc)
        *n = *vecs ? nt : 0;
    return rc;
}

struct found {
    struct document_list *l;
    int64_t ttl;
    int oom;
};

static int take_found(void *user, const mn_store_document *d)
{
    struct found *f = user;
    f->ttl = d->ttl_ms;
    f->oom = list_push(f->l, d, 0, 0);
    return 1;
}

/* The document at (ns, path, key) not expired at now, into a new list (count 0: none). */
static mn_status read_one(mn_db *db, const char *ns, const char *path, const char *key, int64_t now,
                          struct document_list **out, int64_t *ttl)
{
    struct found f = {list_new(), 0, 0};
    if (!f.l)
        return mn__nomem();
    mn_status rc = db->store->ops->document->get(db->store, ns, path, key, now, take_found, &f);
    if (!rc && f.oom)
        rc = mn__nomem();
    if (rc) {
        mn__free_documents(&f.l->pub);
        return rc;
    }
    *out = f.l;
    *ttl = f.ttl;
    return MN_OK;
}

/* The checks of a document to write; *value (may be NULL) gets the parsed value. */
static mn_status check_in(const mn_document_in *in, json_t **value)
{
    const char *ns = in->ns;
    mn_status rc = check_address(&ns, in->path, in->key);
    if (rc)
        return rc;
    if (!in->value)
        return mn__err(MN_INVALID, "value: required");
    size_t vlen = strlen(in->value);
    if (vlen > MN_DOCUMENT_MAX_VALUE)
        return mn__err(MN_TOOBIG, "value: %zu bytes, at most %d", vlen, MN_DOCUMENT_MAX_VALUE);
    if (in->ttl_ms < 0 || in->ttl_ms > MN_DOCUMENT_MAX_TTL_MS)
        return mn__err(MN_INVALID, "ttl_ms: %lld, not 0 to %lld", (long long)in->ttl_ms,
                       (long long)MN_DOCUMENT_MAX_TTL_MS);
    json_t *v = NULL;
    if ((rc = mn__json_parse(in->value, "value", &v)))
        return rc;
    if (!json_is_object(v))
        rc = mn__err(MN_INVALID, "value: not a JSON object");
    if (!rc && value)
        *value = json_incref(v);
    json_decref(v);
    return rc;
}

mn_status mn__document_check(const mn_document_in *in)
{
    return check_in(in, NULL);
}

mn_status mn__put_document(mn_db *db, const mn_document_in *in, mn_documents **out)
{
    const char *ns = in->ns ? in->ns : "default";
    json_t *value = NULL, *fields = NULL;
    mn_status rc = check_in(in, &value);
    if (rc)
        return rc;
    rc = parse_index(in->index, &fields);
    float *vecs = NULL;
    size_t nv = 0;
    uint32_t dim = 0;
    if (!rc)
        rc = embed_fields(db, value, fields, &vecs, &nv, &dim);
    json_decref(value);
    json_decref(fields);
    int64_t now = mn__clock_now_ms();
    mn_store_document d = {ns, in->path, in->key, in->value, now, now, in->ttl_ms ? now + in->ttl_ms : 0,
                           in->ttl_ms, nv ? dim : 0, nv, vecs};
    if (!rc)
        rc = db->store->ops->document->put(db->store, &d);
    free(vecs);
    if (rc || !out)
        return rc;
    struct document_list *l = NULL;
    int64_t ttl = 0;
    if ((rc = read_one(db, ns, in->path, in->key, 0, &l, &ttl)))
        return rc;
    *out = &l->pub;
    return MN_OK;
}

/* ---- get, delete ----------------------------------------------------------------------------- */

mn_status mn__get_document(mn_db *db, const char *ns, const char *path, const char *key, int refresh_ttl,
                           mn_documents **out)
{
    mn_status rc = check_address(&ns, path, key);
    if (rc)
        return rc;
    int64_t now = mn__clock_now_ms(), ttl = 0;
    struct document_list *l = NULL;
    if ((rc = read_one(db, ns, path, key, now, &l, &ttl)))
        return rc;
    if (l->pub.count == 0)
        rc = mn__err(MN_NOTFOUND, "document '%.200s' at path '%.200s' not found", key, path);
    else if (refresh_ttl)
        rc = refresh(db, l, &ttl, now);
    if (rc) {
        mn__free_documents(&l->pub);
        return rc;
    }
    *out = &l->pub;
    return MN_OK;
}

mn_status mn__delete_document(mn_db *db, const char *ns, const char *path, const char *key, int64_t *deleted)
{
    int64_t n = 0;
    mn_status rc = check_address(&ns, path, key);
    if (!rc)
        rc = db->store->ops->document->remove(db->store, ns, path, key, &n);
    if (deleted)
        *deleted = rc ? 0 : n;
    return rc;
}

/* ---- search ---------------------------------------------------------------------------------- */

/* A candidate kept while scanning: its own copy of the row, in rank order. */
struct hit {
    mn_store_document d; /* strings owned (malloc), vectors not kept */
    int scored;
    double score;
};

struct ranking {
    struct hit *hits; /* best first, at most k */
    size_t n, k;
    json_t *filter;
    const float *q; /* the query's vector, or NULL */
    uint32_t dim;
    mn_status rc;
};

static double best_cosine(const float *q, const mn_store_document *d)
{
    double best = -2;
    for (size_t v = 0; v < d->n_vectors; v++) {
        const float *x = d->vectors + v * d->dim;
        double dot = 0, na = 0, nb = 0;
        for (uint32_t i = 0; i < d->dim; i++) {
            dot += (double)q[i] * x[i];
            na += (double)q[i] * q[i];
            nb += (double)x[i] * x[i];
        }
        double c = na > 0 && nb > 0 ? dot / (sqrt(na) * sqrt(nb)) : 0;
        best = c > best ? c : best;
    }
    return best;
}

/* Whether a ranks before b: scored first, by score; then newest updated; then path, key. */
static int before(const struct hit *a, const struct hit *b)
{
    if (a->scored != b->scored)
        return a->scored;
    if (a->scored && a->score != b->score)
        return a->score > b->score;
    if (a->d.updated_at != b->d.updated_at)
        return a->d.updated_at > b->d.updated_at;
    int c = strcmp(a->d.path, b->d.path);
    return c ? c < 0 : strcmp(a->d.key, b->d.key) < 0;
}

static void hit_release(struct hit *h)
{
    free((char *)h->d.ns);
    free((char *)h->d.path);
    free((char *)h->d.key);
    free((char *)h->d.value);
}

static int hit_copy(struct hit *h, const mn_store_document *d)
{
    h->d = *d;
    h->d.vectors = NULL;
    h->d.n_vectors = 0;
    h->d.ns = strdup(d->ns);
    h->d.path = strdup(d->path);
    h->d.key = strdup(d->key);
    h->d.value = strdup(d->value);
    if (h->d.ns && h->d.path && h->d.key && h->d.value)
        return 0;
    hit_release(h);
    return 1;
}

static int rank_row(void *user, const mn_store_document *d)
{
    struct ranking *r = user;
    if (r->filter) {
        int oom = 0;
        json_t *v = mn__json_loads(d->value, 0, NULL, &oom);
        int keep = v && mn__document_filter_match(r->filter, v);
        json_decref(v);
        if (!v) {
            r->rc = oom ? mn__nomem() : mn__err(MN_CORRUPT, "document '%.200s': its value is not JSON", d->key);
            return 1;
        }
        if (!keep)
            return 0;
    }
    struct hit h = {.d = *d};
    h.scored = r->q && d->dim == r->dim && d->n_vectors > 0;
    h.score = h.scored ? best_cosine(r->q, d) : 0;
    if (r->n == r->k && !before(&h, &r->hits[r->n - 1]))
        return 0;
    size_t pos = r->n < r->k ? r->n : r->k - 1;
    if (r->n == r->k)
        hit_release(&r->hits[pos]);
    else
        r->n++;
    while (pos > 0 && before(&h, &r->hits[pos - 1])) {
        r->hits[pos] = r->hits[pos - 1];
        pos--;
    }
    if (hit_copy(&r->hits[pos], d)) {
        memmove(&r->hits[pos], &r->hits[pos + 1], (r->n - pos - 1) * sizeof *r->hits);
        r->n--;
        r->rc = mn__nomem();
        return 1;
    }
    r->hits[pos].scored = h.scored;
    r->hits[pos].score = h.score;
    return 0;
}

static mn_status check_query(const mn_document_query *q)
{
    if (q->limit > SEARCH_MAX_LIMIT)
        return mn__err(MN_INVALID, "limit: %zu, not 1 to %d", q->limit, SEARCH_MAX_LIMIT);
    if (q->offset > MAX_OFFSET)
        return mn__err(MN_INVALID, "offset: %zu, at most %d", q->offset, MAX_OFFSET);
    if (q->query && !*q->query)
        return mn__err(MN_INVALID, "query: empty");
    return q->query ? mn__check_text("query", q->query, MN_DOCUMENT_MAX_VALUE, "") : MN_OK;
}

/* The query's vector by this handle's embedder. */
static mn_status embed_query(mn_db *db, const char *query, float **qv, uint32_t *dim)
{
    *qv = NULL;
    if (!query)
        return MN_OK;
    if (!mn__embedder_configured(db))
        return mn__err(MN_UNAVAILABLE, "query: ranking by meaning needs an embedder (embedder.name is none)");
    mn_embedder *e = NULL;
    mn_status rc = mn__search_embedder(db, &e);
    return rc ? rc : mn__embed_texts_alloc(e, &query, 1, qv, dim);
}

mn_status mn__search_documents(mn_db *db, const mn_document_query *q, mn_documents **out)
{
    const char *ns = q->ns ? q->ns : "default";
    mn_status rc = mn__check_namespace(ns);
    if (!rc)
        rc = check_query(q);
    if (!rc)
        rc = check_path("prefix", q->prefix, 1);
    if (rc)
        return rc;
    size_t limit = q->limit ? q->limit : SEARCH_DEFAULT_LIMIT;
    struct ranking r = {.k = q->offset + limit};
    if (q->filter && !(rc = mn__json_parse(q->filter, "filter", &r.filter)))
        rc = mn__document_filter_check(r.filter);
    float *qv = NULL;
    if (!rc)
        rc = embed_query(db, q->query, &qv, &r.dim);
    r.q = qv;
    if (!rc && !(r.hits = calloc(r.k, sizeof *r.hits)))
        rc = mn__nomem();
    int64_t now = mn__clock_now_ms();
    mn_store_document_scan s = {ns, q->prefix && *q->prefix ? q->prefix : NULL, now, qv != NULL};
    if (!rc)
        rc = db->store->ops->document->scan(db->store, &s, rank_row, &r);
    if (!rc)
        rc = r.rc;
    struct document_list *l = rc ? NULL : list_new();
    int64_t *ttl = rc ? NULL : calloc(limit, sizeof *ttl);
    if (!rc && (!l || !ttl))
        rc = mn__nomem();
    for (size_t i = q->offset; !rc && i < r.n; i++) {
        ttl[l->pub.count] = q->refresh_ttl ? r.hits[i].d.ttl_ms : 0;
        if (list_push(l, &r.hits[i].d, r.hits[i].scored, r.hits[i].score))
            rc = mn__nomem();
    }
    if (!rc)
        rc = refresh(db, l, ttl, now);
    for (size_t i = 0; i < r.n; i++)
        hit_release(&r.hits[i]);
    free(r.hits);
    free(ttl);
    free(qv);
    json_decref(r.filter);
    if (rc) {
        mn__free_documents(l ? &l->pub : NULL);
        return rc;
    }
    *out = &l->pub;
    return MN_OK;
}

/* ---- paths ----------------------------------------------------------------------------------- */

/* Whether the labels of pattern (joined by '.', "*" any) are the first (suffix 0) or last
 * (suffix 1) labels of path. */
static int labels_match(const char *path, const char *pattern, int suffix)
{
    size_t np = 1, nq = 1;
    for (const char *c = path; *c; c++)
        np += *c == '.';
    for (const char *c = pattern; *c; c++)
        nq += *c == '.';
    if (nq > np)
        return 0;
    const char *p = path;
    for (size_t skip = suffix ? np - nq : 0; skip > 0; skip--)
        p = strchr(p, '.') + 1;
    const char *t = pattern;
    for (size_t i = 0; i < nq; i++) {
        size_t lp = strcspn(p, "."), lt = strcspn(t, ".");
        if (!(lt == 1 && *t == '*') && (lp != lt || memcmp(p, t, lp) != 0))
            return 0;
        p += lp + (p[lp] == '.');
        t += lt + (t[lt] == '.');
    }
    return 1;
}

struct path_walk {
    const mn_document_paths_query *q;
    char **items;
    size_t n, cap;
    int oom;
};

static int take_path(void *user, const char *path)
{
    struct path_walk *w = user;
    if ((w->q->prefix && !labels_match(path, w->q->prefix, 0)) || (w->q->suffix && !labels_match(path, w->q->suffix, 1)))
        return 0;
    size_t len = strlen(path);
    if (w->q->max_depth) {
        const char *c = path;
        for (size_t d = 0; c && d < w->q->max_depth; d++)
            c = (c = strchr(c, '.')) ? c + 1 : NULL;
        if (c)
            len = (size_t)(c - path) - 1;
    }
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 64;
        char **items = realloc(w->items, cap * sizeof *items);
        if (!items) {
            w->oom = 1;
            return 1;
        }
        w->items = items;
        w->cap = cap;
    }
    if (!(w->items[w->n] = strndup(path, len))) {
        w->oom = 1;
        return 1;
    }
    w->n++;
    return 0;
}

static int by_bytes(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

mn_status mn__list_document_paths(mn_db *db, const mn_document_paths_query *q, mn_strings **out)
{
    const char *ns = q->ns ? q->ns : "default";
    size_t limit = q->limit ? q->limit : PATHS_DEFAULT_LIMIT;
    mn_status rc = mn__check_namespace(ns);
    if (!rc)
        rc = check_path("prefix", q->prefix, 1);
    if (!rc)
        rc = check_path("suffix", q->suffix, 1);
    if (!rc && limit > SEARCH_MAX_LIMIT)
        rc = mn__err(MN_INVALID, "limit: %zu, not 1 to %d", limit, SEARCH_MAX_LIMIT);
    if (!rc && q->offset > MAX_OFFSET)
        rc = mn__err(MN_INVALID, "offset: %zu, at most %d", q->offset, MAX_OFFSET);
    if (rc)
        return rc;
    mn_document_paths_query cond = *q; /* "" as absent, as search's prefix */
    cond.prefix = q->prefix && *q->prefix ? q->prefix : NULL;
    cond.suffix = q->suffix && *q->suffix ? q->suffix : NULL;
    struct path_walk w = {.q = &cond};
    rc = db->store->ops->document->paths(db->store, ns, mn__clock_now_ms(), take_path, &w);
    if (!rc && w.oom)
        rc = mn__nomem();
    /* cut paths merge, and may then sort apart from their neighbours ("a-b" < "a.b") */
    if (!rc && w.n)
        qsort(w.items, w.n, sizeof *w.items, by_bytes);
    struct mn_strings_impl *l = rc ? NULL : calloc(1, sizeof *l);
    if (!rc && !l)
        rc = mn__nomem();
    size_t seen = 0;
    for (size_t i = 0; !rc && i < w.n && l->pub.count < limit; i++) {
        if (i > 0 && strcmp(w.items[i], w.items[i - 1]) == 0)
            continue;
        if (seen++ >= q->offset && mn__records_strings_push(l, w.items[i]))
            rc = mn__nomem();
    }
    for (size_t i = 0; i < w.n; i++)
        free(w.items[i]);
    free(w.items);
    if (rc) {
        mn_strings_free(l ? &l->pub : NULL);
        return rc;
    }
    *out = &l->pub;
    return MN_OK;
}

/* ---- expiry and erasure ---------------------------------------------------------------------- */

mn_status mn__document_purge_expired(mn_db *db, int64_t *removed)
{
    int64_t n = 0;
    mn_status rc = db->store->ops->document->purge(db->store, NULL, mn__clock_now_ms(), &n);
    if (removed)
        *removed = n;
    return rc;
}

mn_status mn__document_forget_ns(mn_db *db, const char *ns, int64_t *removed)
{
    return db->store->ops->document->purge(db->store, ns, 0, removed);
}
