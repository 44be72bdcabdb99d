/*
 * hash.c — the `hash` embedder: signed feature hashing (the "hashing trick") of normalised words,
 * word bigrams and character trigrams of each word, sublinear term frequency (1 + ln tf), then L2
 * normalisation. Lexical, not semantic: texts sharing words and word pieces come out close,
 * synonyms do not. Deterministic: the same text gives the same bits on every platform.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "util/banned.h"

#define MAX_WORD 64  /* bytes of a word that count; longer words are cut */
#define MAX_FEATURES 65536

struct feat {
    uint64_t h;
    float w;
};

static uint64_t fnv(uint64_t seed, const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    /* splitmix64 finaliser: spreads the low bits used for the bucket */
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    h ^= h >> 31;
    return h;
}

/* Sorts f[0..n) by h, stably, using tmp[n]: an LSD radix sort, a byte a pass, skipping the bytes
 * all keys share. It replaced qsort, which took half the time of a backfill's embedding (a few
 * hundred features a message); the order, so the sums below and their bits, is the same. */
static void sort_feats(struct feat *f, struct feat *tmp, size_t n)
{
    uint32_t count[8][256] = {{0}}; /* n <= MAX_FEATURES */
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            count[b][(f[i].h >> (8 * b)) & 0xff]++;
    struct feat *from = f, *to = tmp;
    for (int b = 0; b < 8; b++) {
        uint32_t *c = count[b];
        if (c[(from[0].h >> (8 * b)) & 0xff] == n)
            continue; /* every key has the same byte here: the pass would move nothing */
        uint32_t at = 0;
        for (int d = 0; d < 256; d++) {
            uint32_t k = c[d];
            c[d] = at;
            at += k;
        }
        for (size_t i = 0; i < n; i++)
            to[c[(from[i].h >> (8 * b)) & 0xff]++] = from[i];
        struct feat *t = from;
        from = to;
        to = t;
    }
    if (from != f)
        memcpy(f, from, n * sizeof *f);
}

static int word_byte(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }

static void push(struct feat *f, size_t *n, size_t cap, uint64_t h, float w)
{
    if (*n < cap) {
        f[*n].h = h;
        f[*n].w = w;
        ++*n;
    }
}

void mn__embed_hash(const char *text, size_t len, uint32_t dim, float *out)
{
    memset(out, 0, (size_t)dim * sizeof *out);
    struct feat stackf[2 * 512], *f = stackf; /* the features, then as many for the sort */
    size_t cap = sizeof stackf / sizeof stackf[0] / 2, n = 0;
    size_t want = len * 3 + 8; /* at most: a word, a bigram and a few trigrams per byte */
    if (want > MAX_FEATURES)
        want = MAX_FEATURES;
    if (want > cap) {
        struct feat *heap = malloc(2 * want * sizeof *heap);
        if (heap) {
            f = heap;
            cap = want;
        }
    }
    unsigned char prev[MAX_WORD], word[MAX_WORD + 2];
    size_t prev_len = 0;
    const unsigned char *p = (const unsigned char *)text, *end = p + len;
    while (p < end && n + 3 < cap) {
        while (p < end && !word_byte(*p))
            p++;
        if (p >= end)
            break;
        size_t wl = 0;
        word[wl++] = ' ';
        while (p < end && word_byte(*p)) {
            unsigned char c = *p++;
            if (c >= 'A' && c <= 'Z')
                c = (unsigned char)(c + 32);
            if (wl <= MAX_WORD)
                word[wl++] = c;
        }
        word[wl] = ' ';
        size_t body = wl - 1; /* the word without the padding */
        push(f, &n, cap, fnv(1, word + 1, body), 1.0f);
        if (prev_len) { /* bigram: previous word, a separator, this word */
            unsigned char bg[2 * MAX_WORD + 1];
            memcpy(bg, prev, prev_len);
            bg[prev_len] = ' ';
            memcpy(bg + prev_len + 1, word + 1, body);
            push(f, &n, cap, fnv(2, bg, prev_len + 1 + body), 0.7f);
        }
        memcpy(prev, word + 1, body);
        prev_len = body;
        /* character trigrams of " word " (a 1- or 2-letter word gives its padded form) */
        for (size_t i = 0; i + 3 <= wl + 1 && n < cap; i++)
            push(f, &n, cap, fnv(3, word + i, 3), 0.35f);
    }
    if (n) {
        sort_feats(f, f + cap, n);
        for (size_t i = 0; i < n;) {
            size_t j = i;
            while (j < n && f[j].h == f[i].h)
                j++;
            float w = f[i].w * (1.0f + logf((float)(j - i)));
            uint64_t h = f[i].h;
            out[h % dim] += (h >> 63) ? -w : w;
            i = j;
        }
    }
    double norm = 0;
    for (uint32_t i = 0; i < dim; i++)
        norm += (double)out[i] * out[i];
    if (norm > 0) {
        float inv = (float)(1.0 / sqrt(norm));
        for (uint32_t i = 0; i < dim; i++)
            out[i] *= inv;
    }
    if (f != stackf)
        free(f);
}
