/*
 * embed.c — opening an embedder from its configuration and embedding batches of texts: `hash`
 * locally (hash.c), `openai` (POST {base}/v1/embeddings) and `ollama` (POST {base}/api/embed)
 * with batch input over src/http, which retries 429 and 5xx with backoff.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "http/http.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

enum kind { K_HASH, K_OPENAI, K_OLLAMA };

struct mn_embedder {
    enum kind kind;
    char *name, *model, *base_url, *api_key;
    uint32_t dim;     /* 0 until known (remote, not configured) */
    int dim_fixed;    /* configured: replies of another size are refused */
    size_t batch;
    int64_t timeout_ms, backoff_ms;
    int retries;
    pthread_mutex_t lock; /* guards dim */
};

static char *dup_or_null(const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *oom = 1;
    return d;
}

mn_status mn__embed_open(const mn_embed_cfg *c, mn_embedder **out)
{
    *out = NULL;
    enum kind k;
    if (!c->name)
        return mn__err(MN_INVALID, "embedder.name: not set");
    if (strcmp(c->name, "hash") == 0)
        k = K_HASH;
    else if (strcmp(c->name, "openai") == 0)
        k = K_OPENAI;
    else if (strcmp(c->name, "ollama") == 0)
        k = K_OLLAMA;
    else
        return mn__err(MN_INVALID, "embedder.name: '%s' is not one of hash, openai, ollama", c->name);
    if (c->dim < 0 || c->dim > (int64_t)MN_EMBED_MAX_DIM)
        return mn__err(MN_INVALID, "embedder.dim: %lld is not from 0 to %u", (long long)c->dim, MN_EMBED_MAX_DIM);
    if (k != K_HASH && (!c->base_url || !*c->base_url))
        return mn__err(MN_UNAVAILABLE, "embedder.base_url is not set (the %s embedder needs a server)", c->name);
    if (k != K_HASH && (!c->model || !*c->model))
        return mn__err(MN_UNAVAILABLE, "embedder.model is not set (the %s embedder needs a model)", c->name);
    mn_embedder *e = calloc(1, sizeof *e);
    if (!e)
        return mn__nomem();
    int oom = 0;
    e->kind = k;
    e->name = dup_or_null(c->name, &oom);
    e->model = dup_or_null(k == K_HASH ? MN_EMBED_HASH_MODEL : c->model, &oom);
    e->base_url = dup_or_null(c->base_url, &oom);
    e->api_key = dup_or_null(c->api_key, &oom);
    e->dim = (uint32_t)(c->dim ? c->dim : (k == K_HASH ? 384 : 0));
    e->dim_fixed = e->dim != 0;
    e->batch = c->batch > 0 ? (size_t)c->batch : 64;
    if (e->batch > MN_EMBED_MAX_BATCH)
        e->batch = MN_EMBED_MAX_BATCH;
    e->timeout_ms = c->timeout_ms > 0 ? c->timeout_ms : 30000;
    e->backoff_ms = c->backoff_ms > 0 ? c->backoff_ms : 500;
    e->retries = c->retries;
    pthread_mutex_init(&e->lock, NULL);
    if (oom) {
        mn__embed_free(e);
        return mn__nomem();
    }
    *out = e;
    return MN_OK;
}

void mn__embed_free(mn_embedder *e)
{
    if (!e)
        return;
    pthread_mutex_destroy(&e->lock);
    free(e->name);
    free(e->model);
    free(e->base_url);
    free(e->api_key);
    free(e);
}

const char *mn__embed_name(const mn_embedder *e) { return e->name; }
const char *mn__embed_model(const mn_embedder *e) { return e->model; }
size_t mn__embed_batch(const mn_embedder *e) { return e->batch; }

uint32_t mn__embed_dim(const mn_embedder *e)
{
    pthread_mutex_lock((pthread_mutex_t *)&e->lock);
    uint32_t d = e->dim;
    pthread_mutex_unlock((pthread_mutex_t *)&e->lock);
    return d;
}

/* ---- replies --------------------------------------------------------------------------------- */

static mn_status read_vector(json_t *arr, size_t i, uint32_t *dim, float **out, size_t n)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0)
        return mn__err(MN_UNAVAILABLE, "embedder reply: vector %zu is not a non-empty array of numbers", i);
    size_t d = json_array_size(arr);
    if (*dim == 0) {
        if (d > MN_EMBED_MAX_DIM)
            return mn__err(MN_UNAVAILABLE, "embedder reply: vector of %zu dimensions (at most %u)", d,
                           MN_EMBED_MAX_DIM);
        *dim = (uint32_t)d;
    }
    if (d != *dim)
        return mn__err(MN_UNAVAILABLE, "embedder reply: vector %zu has %zu dimensions, expected %u", i, d, *dim);
    if (!*out && !(*out = calloc(n * d, sizeof **out)))
        return mn__nomem();
    float *v = *out + i * d;
    double norm = 0;
    for (size_t j = 0; j < d; j++) {
        json_t *x = json_array_get(arr, j);
        if (!json_is_number(x))
            return mn__err(MN_UNAVAILABLE, "embedder reply: vector %zu, component %zu is not a number", i, j);
        double f = json_number_value(x);
        if (!isfinite(f) || fabs(f) > 1e30)
            return mn__err(MN_UNAVAILABLE, "embedder reply: vector %zu, component %zu is out of range", i, j);
        v[j] = (float)f;
        norm += f * f;
    }
    if (!(norm > 0))
        return mn__err(MN_UNAVAILABLE, "embedder reply: vector %zu is all zeros", i);
    float inv = (float)(1.0 / sqrt(norm));
    for (size_t j = 0; j < d; j++)
        v[j] *= inv;
    return MN_OK;
}

mn_status mn__embed_parse_reply(const char *protocol, const char *body, size_t len, size_t n, uint32_t *dim,
                               float **out)
{
    *out = NULL;
    json_error_t err;
    json_t *root = body ? json_loadb(body, len, 0, &err) : NULL;
    if (!root)
        return mn__err(MN_UNAVAILABLE, "embedder reply: not JSON");
    mn_status rc = MN_OK;
    json_t *e = json_object_get(root, "error");
    if (e) {
        const char *m = json_is_string(e) ? json_string_value(e) : json_string_value(json_object_get(e, "message"));
        rc = mn__err(MN_UNAVAILABLE, "embedder reply: error: %.200s", m ? m : "(no message)");
    } else if (strcmp(protocol, "ollama") == 0) {
        json_t *arr = json_object_get(root, "embeddings");
        if (!json_is_array(arr) || json_array_size(arr) != n)
            rc = mn__err(MN_UNAVAILABLE, "embedder reply: \"embeddings\" is not an array of %zu vectors", n);
        for (size_t i = 0; !rc && i < n; i++)
            rc = read_vector(json_array_get(arr, i), i, dim, out, n);
    } else {
        json_t *arr = json_object_get(root, "data");
        if (!json_is_array(arr) || json_array_size(arr) != n)
            rc = mn__err(MN_UNAVAILABLE, "embedder reply: \"data\" is not an array of %zu items", n);
        char *seen = rc ? NULL : calloc(n ? n : 1, 1);
        if (!rc && !seen)
            rc = mn__nomem();
        for (size_t i = 0; !rc && i < n; i++) {
            json_t *item = json_array_get(arr, i), *ix = json_object_get(item, "index");
            size_t at = i;
            if (ix) {
                if (!json_is_integer(ix) || json_integer_value(ix) < 0 || (size_t)json_integer_value(ix) >= n)
                    rc = mn__err(MN_UNAVAILABLE, "embedder reply: data[%zu].index is not from 0 to %zu", i, n - 1);
                else
                    at = (size_t)json_integer_value(ix);
            }
            if (!rc && seen[at]++)
                rc = mn__err(MN_UNAVAILABLE, "embedder reply: index %zu appears twice", at);
            if (!rc)
                rc = read_vector(json_object_get(item, "embedding"), at, dim, out, n);
        }
        free(seen);
    }
    json_decref(root);
    if (rc) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/* ---- remote ---------------------------------------------------------------------------------- */

static mn_status remote_url(const mn_embedder *e, struct mn_buf *url)
{
    size_t len = strlen(e->base_url);
    while (len && e->base_url[len - 1] == '/')
        len--;
    mn_status rc = mn__buf_add(url, e->base_url, len);
    if (rc)
        return rc;
    if (e->kind == K_OLLAMA)
        return mn__buf_adds(url, "/api/embed");
    if (len >= 3 && strncmp(e->base_url + len - 3, "/v1", 3) == 0)
        return mn__buf_adds(url, "/embeddings");
    return mn__buf_adds(url, "/v1/embeddings");
}

static mn_status remote_batch(mn_embedder *e, const char *const *texts, size_t n, uint32_t *dim, float **out)
{
    struct mn_buf url = MN_BUF_INIT;
    mn_status rc = remote_url(e, &url);
    json_t *req = rc ? NULL : json_pack("{s:s, s:[]}", "model", e->model, "input");
    if (!rc && !req)
        rc = mn__nomem();
    for (size_t i = 0; !rc && i < n; i++)
        if (json_array_append_new(json_object_get(req, "input"), json_string(texts[i] ? texts[i] : "")))
            rc = mn__nomem();
    char *body = rc ? NULL : mn__json_dump(req);
    json_decref(req);
    if (!rc && !body)
        rc = mn__nomem();
    mn_http_resp resp;
    memset(&resp, 0, sizeof resp);
    if (!rc) {
        mn_http_req hr = {url.data, body, e->api_key, e->timeout_ms, e->retries, e->backoff_ms};
        rc = mn__http_post_json(&hr, &resp);
        if (rc)
            rc = mn__err(rc, "embedder %s: %s", e->name, mn_errmsg());
    }
    if (!rc && resp.status != 200) {
        float *junk = NULL;
        uint32_t d = 0;
        mn_status prc = mn__embed_parse_reply(e->kind == K_OLLAMA ? "ollama" : "openai", resp.body, resp.len, n, &d,
                                             &junk);
        free(junk);
        int has_err = prc == MN_UNAVAILABLE && strstr(mn_errmsg(), "error:");
        rc = mn__err(MN_UNAVAILABLE, "embedder %s: HTTP %ld from %s after %d attempt(s)%s%.200s", e->name,
                     resp.status, url.data, resp.attempts, has_err ? ": " : "", has_err ? mn_errmsg() : "");
    }
    if (!rc) {
        rc = mn__embed_parse_reply(e->kind == K_OLLAMA ? "ollama" : "openai", resp.body, resp.len, n, dim, out);
        if (rc)
            rc = mn__err(rc, "embedder %s (%s): %s", e->name, url.data, mn_errmsg());
    }
    mn__http_resp_release(&resp);
    free(body);
    mn__buf_release(&url);
    return rc;
}

mn_status mn__embed_texts_alloc(mn_embedder *e, const char *const *texts, size_t n, float **out, uint32_t *dim)
{
    *out = NULL;
    *dim = 0;
    if (n == 0)
        return MN_OK;
    if (e->kind == K_HASH) {
        float *v = calloc(n * e->dim, sizeof *v);
        if (!v)
            return mn__nomem();
        for (size_t i = 0; i < n; i++)
            mn__embed_hash(texts[i] ? texts[i] : "", texts[i] ? strlen(texts[i]) : 0, e->dim, v + i * e->dim);
        *out = v;
        *dim = e->dim;
        return MN_OK;
    }
    uint32_t d = mn__embed_dim(e);
    float *all = NULL;
    mn_status rc = MN_OK;
    for (size_t at = 0; at < n && !rc; at += e->batch) {
        size_t m = n - at < e->batch ? n - at : e->batch;
        float *part = NULL;
        rc = remote_batch(e, texts + at, m, &d, &part);
        if (!rc && !all && !(all = calloc(n * d, sizeof *all)))
            rc = mn__nomem();
        if (!rc)
            memcpy(all + at * d, part, m * d * sizeof *all);
        free(part);
    }
    if (rc) {
        free(all);
        return rc;
    }
    pthread_mutex_lock(&e->lock);
    if (!e->dim)
        e->dim = d;
    pthread_mutex_unlock(&e->lock);
    *out = all;
    *dim = d;
    return MN_OK;
}
