/*
 * embed.h — embedders: text → float vector. `hash` (offline, lexical: signed feature hashing of
 * words, word bigrams and character trigrams), `openai` (/v1/embeddings) and `ollama`
 * (/api/embed), both batched over src/http with retries. Every vector carries the embedder's
 * identity (name, model, dimension); vectors of different identities are never compared.
 * Design notes: docs/search.md.
 */
#ifndef MN_EMBED_H
#define MN_EMBED_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"

#define MN_EMBED_HASH_MODEL "hash-v1" /* the feature set of hash.c; bump when it changes */
#define MN_EMBED_MAX_DIM 65536u
#define MN_EMBED_MAX_BATCH 2048u

typedef struct mn_embed_cfg {
    const char *name;     /* "hash", "openai", "ollama" ("none" is not an embedder) */
    const char *model;    /* remote: required; hash: ignored (MN_EMBED_HASH_MODEL) */
    const char *base_url; /* remote: required */
    const char *api_key;  /* remote: bearer token or NULL */
    int64_t dim;          /* 0: hash 384, remote learned from the first reply; else expected */
    int64_t timeout_ms;   /* per HTTP attempt */
    int64_t batch;        /* texts per request */
    int retries;          /* extra attempts after 429/5xx */
    int64_t backoff_ms;
} mn_embed_cfg;

typedef struct mn_embedder mn_embedder;

/* Opens an embedder. Errors: MN_INVALID (unknown name, dim out of range), MN_UNAVAILABLE (a
 * remote embedder without base_url or model), MN_NOMEM. Caller frees with mn__embed_free. */
mn_status mn__embed_open(const mn_embed_cfg *cfg, mn_embedder **out);
void mn__embed_free(mn_embedder *e);

/* Embeds texts[0..n) into out[i * dim ..] (L2-normalised); *dim gets the dimension (for a remote
 * embedder it is known after the first call). out must hold n * mn_embed_dim_max(e) floats when
 * the dimension is not known yet — use mn__embed_texts_alloc then. Thread-safe. */
mn_status mn__embed_texts_alloc(mn_embedder *e, const char *const *texts, size_t n, float **out, uint32_t *dim);

const char *mn__embed_name(const mn_embedder *e);
const char *mn__embed_model(const mn_embedder *e);
/* 0 until a remote embedder has answered once (when embedder.dim is 0). */
uint32_t mn__embed_dim(const mn_embedder *e);
size_t mn__embed_batch(const mn_embedder *e);

/* The hash embedding of text[0..len) into out[0..dim) (unit length; all zero for a text with no
 * word characters). Deterministic across platforms. */
void mn__embed_hash(const char *text, size_t len, uint32_t dim, float *out);

/* Parses an embeddings reply: protocol "openai" ({"data":[{"index":i,"embedding":[…]}]}) or
 * "ollama" ({"embeddings":[[…]]}); n vectors expected; *dim checked (0: set from the reply).
 * out (caller frees with free) gets n * dim floats, normalised. Errors: MN_UNAVAILABLE naming
 * what is wrong. Exposed for tests and the fuzzer. */
mn_status mn__embed_parse_reply(const char *protocol, const char *body, size_t len, size_t n, uint32_t *dim,
                               float **out);

#endif
