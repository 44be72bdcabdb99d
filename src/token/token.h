/*
 * token.h — the tokenizer interface: count (and, where supported, encode/decode) the tokens of
 * UTF-8 text. Providers are chosen by name from a registry in token.c: "heuristic" (4 characters
 * a token, the fallback), and the byte-level BPE encodings added by bpe.c.
 */
#ifndef MN_TOKEN_H
#define MN_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"

typedef struct mn_tokenizer mn_tokenizer;

struct mn_tokenizer_vt {
    /* Number of tokens in text[0..len). Never fails; any bytes are accepted. */
    size_t (*count)(const mn_tokenizer *tk, const char *text, size_t len);
    /* Token ids of text[0..len) into *ids (caller frees with free()). NULL when unsupported. */
    mn_status (*encode)(const mn_tokenizer *tk, const char *text, size_t len, uint32_t **ids, size_t *n);
    void (*free)(mn_tokenizer *tk);
};

/* Every provider's struct starts with this. */
struct mn_tokenizer {
    const struct mn_tokenizer_vt *vt;
    const char *name;
};

/* Opens the tokenizer `name`. `data_dir` is where rank files live (may be NULL for providers
 * that need none). Errors: MN_INVALID (unknown name), MN_UNAVAILABLE (its data is missing),
 * MN_CORRUPT (its data is damaged), MN_NOMEM. */
mn_status mn__token_open(const char *name, const char *data_dir, mn_tokenizer **out);
size_t mn__token_count(const mn_tokenizer *tk, const char *text, size_t len);
/* The same count, on up to `threads` threads (0: the online cores) when the text is large
 * (MN_TOKEN_PAR_MIN bytes or more) and the tokenizer is a BPE encoding: the text is cut into
 * parts of about MN_TOKEN_PAR_PART bytes where both encodings always split (mn__pretok_safe_cut),
 * the threads take the parts in turn (so a slow stretch of text does not hold one thread back),
 * and the parts' counts are summed: the result equals mn__token_count's exactly. */
#define MN_TOKEN_PAR_MIN (1u << 20)
#define MN_TOKEN_PAR_PART (256u << 10)
size_t mn__token_count_threads(const mn_tokenizer *tk, const char *text, size_t len, unsigned threads);
const char *mn__token_name(const mn_tokenizer *tk);
void mn__token_free(mn_tokenizer *tk);

/* The heuristic: one token per 4 Unicode characters, rounded up (invalid bytes count as one
 * character each). */
size_t mn__token_heuristic_count(const char *text, size_t len);

#endif
