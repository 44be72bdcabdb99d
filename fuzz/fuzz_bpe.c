/*
 * fuzz_bpe.c — libFuzzer target for the BPE tokenizer (src/token/bpe.c, pretok.c): any bytes
 * must encode without crashing, decode back to exactly the same bytes, and count to exactly the
 * number of ids. The first input byte picks the encoding (cl100k_base or o200k_base).
 * Rank files: $MNEMO_DATA_DIR, else build/share/mnemo found from the working directory upwards.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "token/bpe.h"
#include "token/token.h"

static mn_tokenizer *enc[2];

static int try_dir(const char *dir)
{
    mn_tokenizer *a = NULL, *b = NULL;
    if (mn__token_open("cl100k_base", dir, &a) != MN_OK)
        return 0;
    if (mn__token_open("o200k_base", dir, &b) != MN_OK) {
        mn__token_free(a);
        return 0;
    }
    enc[0] = a;
    enc[1] = b;
    return 1;
}

static void load(void)
{
    const char *env = getenv("MNEMO_DATA_DIR");
    if (env && *env) {
        if (try_dir(env))
            return;
        fprintf(stderr, "fuzz_bpe: cannot load the rank files from MNEMO_DATA_DIR=%s: %s\n", env, mn_errmsg());
        abort();
    }
    /* from the working directory up: <dir>/build/share/mnemo (ctest runs in build/<x>/fuzz) */
    char dir[4096] = ".";
    for (int up = 0; up < 8; up++) {
        char cand[4200];
        snprintf(cand, sizeof cand, "%s/build/share/mnemo", dir);
        if (access(cand, R_OK) == 0 && try_dir(cand))
            return;
        snprintf(cand, sizeof cand, "%s/share/mnemo", dir);
        if (access(cand, R_OK) == 0 && try_dir(cand))
            return;
        size_t l = strlen(dir);
        if (l + 4 >= sizeof dir)
            break;
        memcpy(dir + l, "/..", 4);
    }
    fprintf(stderr, "fuzz_bpe: rank files not found: set MNEMO_DATA_DIR or run scripts/fetch-ranks\n");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!enc[0])
        load();
    if (size == 0)
        return 0;
    const mn_tokenizer *tk = enc[data[0] & 1];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    uint32_t *ids = NULL;
    size_t n = 0;
    if (tk->vt->encode(tk, text, len, &ids, &n) != MN_OK)
        abort();
    if (mn__token_count(tk, text, len) != n) {
        fprintf(stderr, "fuzz_bpe: count != number of ids (%zu)\n", n);
        abort();
    }
    char *back = NULL;
    size_t blen = 0;
    if (mn__bpe_decode(tk, ids, n, &back, &blen) != MN_OK || blen != len || memcmp(back, text, len) != 0) {
        fprintf(stderr, "fuzz_bpe: decode(encode(x)) != x\n");
        abort();
    }
    free(back);
    free(ids);
    return 0;
}
