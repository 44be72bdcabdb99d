/*
 * token.c — the tokenizer registry and the `heuristic` provider (4 characters a token), the
 * fallback whenever no exact encoding is configured.
 */
#include "token/token.h"
#include "token/bpe.h"
#include "token/bpe_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/banned.h"

size_t mn__token_heuristic_count(const char *text, size_t len)
{
    size_t chars = 0;
    for (size_t i = 0; i < len; i++)
        chars += ((unsigned char)text[i] & 0xC0) != 0x80; /* count lead bytes, not continuations */
    return (chars + 3) / 4;
}

static size_t heuristic_count(const mn_tokenizer *tk, const char *text, size_t len)
{
    (void)tk;
    return mn__token_heuristic_count(text, len);
}

static void heuristic_free(mn_tokenizer *tk) { free(tk); }

static const struct mn_tokenizer_vt heuristic_vt = {heuristic_count, NULL, heuristic_free};

static mn_status heuristic_open(const char *name, const char *data_dir, mn_tokenizer **out)
{
    (void)name;
    (void)data_dir;
    mn_tokenizer *tk = calloc(1, sizeof *tk);
    if (!tk)
        return mn__nomem();
    tk->vt = &heuristic_vt;
    tk->name = "heuristic";
    *out = tk;
    return MN_OK;
}

typedef mn_status (*open_fn)(const char *name, const char *data_dir, mn_tokenizer **out);

/* The registry: one line per provider. */
static const struct {
    const char *name;
    open_fn open;
} providers[] = {
    {"heuristic", heuristic_open},
    {"cl100k_base", mn__bpe_open},
    {"o200k_base", mn__bpe_open},
};

mn_status mn__token_open(const char *name, const char *data_dir, mn_tokenizer **out)
{
    *out = NULL;
    for (size_t i = 0; i < sizeof providers / sizeof providers[0]; i++)
        if (strcmp(providers[i].name, name) == 0)
            return providers[i].open(name, data_dir, out);
    return mn__err(MN_INVALID, "tokenizer: unknown name '%s' (known: heuristic, cl100k_base, o200k_base)", name);
}

size_t mn__token_count(const mn_tokenizer *tk, const char *text, size_t len) { return tk->vt->count(tk, text, len); }

size_t mn__token_count_threads(const mn_tokenizer *tk, const char *text, size_t len, unsigned threads)
{
    if (len < MN_TOKEN_PAR_MIN || threads == 1 || !mn__bpe_is(tk))
        return mn__token_count(tk, text, len);
    if (threads == 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (unsigned)cores : 1;
    }
    if (threads == 1)
        return mn__token_count(tk, text, len);
    size_t parts = len / MN_TOKEN_PAR_PART;
    if (parts < 4 * (size_t)threads) /* at least 4 parts a thread, to even out their speeds */
        parts = 4 * (size_t)threads;
    return mn__bpe_count_chunks(tk, text, len, parts > 1024 ? 1024 : (unsigned)parts, threads, NULL);
}

const char *mn__token_name(const mn_tokenizer *tk) { return tk->name; }

void mn__token_free(mn_tokenizer *tk)
{
    if (tk)
        tk->vt->free(tk);
}
