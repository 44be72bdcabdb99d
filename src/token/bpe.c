/*
 * bpe.c — tiktoken-compatible byte-level BPE (cl100k_base, o200k_base): loading and checking a
 * ranks file, the rank hash table, the merge loop (tiktoken's leftmost-lowest-rank rule, O(n^2)
 * on short pieces and O(n log n) with a heap on long ones), and the count/encode/decode entry
 * points. Pre-tokenisation is in pretok.c; docs/tokenizer.md has the design and the evidence.
 */
#include "token/bpe.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "token/bpe_int.h"
#include "util/err.h"
#include "util/sha256.h"

#include "util/banned.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bpe.c packs token bytes into little-endian words"
#endif

/* The ranks files mnemo knows, with the SHA-256 of the files OpenAI publishes (and that
 * gpt-tokenizer@4.0.0 ships byte-identical as data/<name>.tiktoken; scripts/fetch-ranks pins
 * the same). */
static const struct encoding {
    const char *name;
    enum mn_pretok_kind kind;
    const char *sha256;
} encodings[] = {
    {"cl100k_base", MN_PRETOK_CL100K, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"},
    {"o200k_base", MN_PRETOK_O200K, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"},
};

#define MAX_FILE_BYTES (64u << 20) /* the real files are 1.7 and 3.6 MB */
#define MAX_RANK (1u << 24)
#define MAX_TOKEN_BYTES 4096u
#define SMALL_PIECE 96 /* pieces up to this many bytes use the O(n^2) loop */

/* The rank table is built on first use, not at open: a process that never counts (most CLI
 * commands: history, search, session list) would spend most of its start building it (~35 ms
 * of a 64 ms `mnemo history`, Release). Open reads the file and checks its pinned SHA-256 (~1 ms), so a
 * missing or altered file is still an error at open; a file with the pinned digest parses, and
 * the only failure left for first use is running out of memory. */
struct bpe_tokenizer {
    struct mn_tokenizer base;
    enum mn_pretok_kind kind;
    atomic_int ready;     /* 1 once bpe is built; read with acquire */
    pthread_mutex_t lock; /* held while building */
    uint8_t *data;        /* the file's bytes until bpe is built */
    size_t len;
    char *path;           /* for the parse's messages */
    struct mn_bpe bpe;
};

/* Builds the rank table once; any number of threads may ask at once. MN_NOMEM leaves it unbuilt,
 * to be tried again on the next use. */
static mn_status build_ranks(struct bpe_tokenizer *t)
{
    if (atomic_load_explicit(&t->ready, memory_order_acquire))
        return MN_OK;
    pthread_mutex_lock(&t->lock);
    mn_status st = MN_OK;
    if (!atomic_load_explicit(&t->ready, memory_order_relaxed)) {
        st = mn__bpe_parse(&t->bpe, t->data, t->len, t->path);
        if (st == MN_OK) {
            free(t->data);
            t->data = NULL;
            atomic_store_explicit(&t->ready, 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* The rank table, built when this is its first use; NULL when memory ran out. The tokenizer is
 * shared as const, and building the table is the one change it undergoes after open. */
static const struct mn_bpe *ranks(const mn_tokenizer *tk)
{
    struct bpe_tokenizer *t = (struct bpe_tokenizer *)(uintptr_t)tk;
    return build_ranks(t) == MN_OK ? &t->bpe : NULL;
}

/* ---- hashing --------------------------------------------------------------------------------- */

static inline uint64_t mix64(uint64_t x)
{
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    x *= 0xd6e8feb86659fd93ULL;
    x ^= x >> 32;
    return x;
}

/* Up to 8 bytes at k as a little-endian word, zero padded. */
static inline uint64_t load_word(const uint8_t *k, size_t len, int padded)
{
    uint64_t v = 0;
    if (len >= 8) {
        memcpy(&v, k, 8);
        return v;
    }
    if (padded) {
        memcpy(&v, k, 8);
        return v & ((UINT64_C(1) << (len * 8)) - 1);
    }
    for (size_t i = 0; i < len; i++)
        v |= (uint64_t)k[i] << (8 * i);
    return v;
}

static inline uint64_t hash_key(uint64_t head, const uint8_t *k, size_t len, int padded)
{
    uint64_t h = head ^ ((uint64_t)len << 56) ^ ((uint64_t)len * 0x9e3779b97f4a7c15ULL);
    for (size_t j = 8; j < len; j += 8)
        h = mix64(h) ^ load_word(k + j, len - j, padded);
    return mix64(h);
}

uint32_t mn__bpe_lookup(const struct mn_bpe *bpe, const uint8_t *k, size_t len, int padded)
{
    if (len == 0 || len > bpe->max_len)
        return MN_BPE_NO_RANK;
    uint64_t head = load_word(k, len, padded);
    uint64_t i = hash_key(head, k, len, padded) & bpe->mask;
    for (;; i = (i + 1) & bpe->mask) {
        const struct mn_bpe_slot *sl = &bpe->slots[i];
        if (sl->rank == MN_BPE_NO_RANK)
            return MN_BPE_NO_RANK;
        if (sl->head == head && sl->len == len &&
            (len <= 8 || memcmp(bpe->blob + bpe->tok_off[sl->rank] + 8, k + 8, len - 8) == 0))
            return sl->rank;
    }
}

/* ---- loading ----------------------------------------------------------------------------------- */

/* base64 digit values plus one; 0 = not a digit */
#define D(c, v) [c] = (v) + 1
static const uint8_t b64_digit[256] = {
    D('A', 0),  D('B', 1),  D('C', 2),  D('D', 3),  D('E', 4),  D('F', 5),  D('G', 6),  D('H', 7),
    D('I', 8),  D('J', 9),  D('K', 10), D('L', 11), D('M', 12), D('N', 13), D('O', 14), D('P', 15),
    D('Q', 16), D('R', 17), D('S', 18), D('T', 19), D('U', 20), D('V', 21), D('W', 22), D('X', 23),
    D('Y', 24), D('Z', 25), D('a', 26), D('b', 27), D('c', 28), D('d', 29), D('e', 30), D('f', 31),
    D('g', 32), D('h', 33), D('i', 34), D('j', 35), D('k', 36), D('l', 37), D('m', 38), D('n', 39),
    D('o', 40), D('p', 41), D('q', 42), D('r', 43), D('s', 44), D('t', 45), D('u', 46), D('v', 47),
    D('w', 48), D('x', 49), D('y', 50), D('z', 51), D('0', 52), D('1', 53), D('2', 54), D('3', 55),
    D('4', 56), D('5', 57), D('6', 58), D('7', 59), D('8', 60), D('9', 61), D('+', 62), D('/', 63),
};
#undef D

/* Strict standard base64 (length a multiple of 4, '=' only as the last one or two characters)
 * into out; returns the decoded length, or -1. */
static long b64_decode(const uint8_t *in, size_t len, uint8_t *out)
{
    if (len == 0 || len % 4)
        return -1;
    size_t o = 0, i = 0;
    for (; i + 4 < len; i += 4) {
        unsigned a = b64_digit[in[i]], b = b64_digit[in[i + 1]], c = b64_digit[in[i + 2]], d = b64_digit[in[i + 3]];
        if (!a || !b || !c || !d)
            return -1;
        uint32_t w = (a - 1) << 18 | (b - 1) << 12 | (c - 1) << 6 | (d - 1);
        out[o] = (uint8_t)(w >> 16);
        out[o + 1] = (uint8_t)(w >> 8);
        out[o + 2] = (uint8_t)w;
        o += 3;
    }
    /* the last group, which may be padded */
    unsigned a = b64_digit[in[i]], b = b64_digit[in[i + 1]], c = b64_digit[in[i + 2]], d = b64_digit[in[i + 3]];
    int pad = in[i + 3] == '=' ? (in[i + 2] == '=' ? 2 : 1) : 0;
    if (!a || !b || (pad < 2 && !c) || (pad < 1 && !d))
        return -1;
    uint32_t w = (a - 1) << 18 | (b - 1) << 12 | (pad < 2 ? c - 1 : 0) << 6 | (pad < 1 ? d - 1 : 0);
    out[o++] = (uint8_t)(w >> 16);
    if (pad < 2)
        out[o++] = (uint8_t)(w >> 8);
    if (pad < 1)
        out[o++] = (uint8_t)w;
    return (long)o;
}

void mn__bpe_release(struct mn_bpe *bpe)
{
    free(bpe->tok_off);
    free(bpe->blob);
    free(bpe->slots);
    free(bpe->pair_rank);
    memset(bpe, 0, sizeof *bpe);
}

/* Inserts token `rank`; 0 when the same bytes are already in the table. */
static int table_insert(struct mn_bpe *bpe, uint32_t rank)
{
    const uint8_t *k = bpe->blob + bpe->tok_off[rank];
    size_t len = bpe->tok_off[rank + 1] - bpe->tok_off[rank];
    uint64_t head = load_word(k, len, 1); /* the blob has 8 bytes of padding */
    uint64_t i = hash_key(head, k, len, 1) & bpe->mask;
    for (; bpe->slots[i].rank != MN_BPE_NO_RANK; i = (i + 1) & bpe->mask) {
        const struct mn_bpe_slot *sl = &bpe->slots[i];
        if (sl->head == head && sl->len == len && memcmp(bpe->blob + bpe->tok_off[sl->rank], k, len) == 0)
            return 0;
    }
    bpe->slots[i] = (struct mn_bpe_slot){.head = head, .rank = rank, .len = (uint32_t)len};
    return 1;
}

mn_status mn__bpe_parse(struct mn_bpe *bpe, const uint8_t *data, size_t len, const char *path)
{
    memset(bpe, 0, sizeof *bpe);
    mn_status st = MN_OK;
    size_t n_lines = 0;
    for (const uint8_t *p = data, *end = data + len; p < end; n_lines++) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    if (n_lines == 0 || n_lines > MAX_RANK || len > UINT32_MAX)
        return MN_CORRUPT_AT("%s: %zu lines, not a ranks file", path, n_lines);
    /* Pass 1 decodes every token into `blob` in file order, noting each line's rank and
     * offset. The published files list ranks 0, 1, 2, ... in order, and then blob and offsets
     * are already the final layout; otherwise pass 2 reorders them by rank. */
    uint32_t *line_rank = malloc(n_lines * sizeof *line_rank);
    uint32_t *line_off = malloc((n_lines + 1) * sizeof *line_off);
    bpe->blob = malloc(len + 8); /* decoded bytes are fewer than the base64 text */
    if (!line_rank || !line_off || !bpe->blob) {
        st = mn__nomem();
        goto out;
    }
    size_t n_tok = 0, used = 0, line_no = 0;
    uint32_t max_rank = 0;
    int in_order = 1;
    for (const uint8_t *p = data, *end = data + len; p < end;) {
        line_no++;
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end;
        if (le > p && le[-1] == '\r')
            le--;
        if (le == p && !nl) /* no final newline after the last line is fine */
            break;
        const uint8_t *sp = memchr(p, ' ', (size_t)(le - p));
        if (!sp || sp == p || sp + 1 == le) {
            st = MN_CORRUPT_AT("%s: line %zu is not '<base64> <rank>'", path, line_no);
            goto out;
        }
        uint32_t rank = 0;
        for (const uint8_t *q = sp + 1; q < le; q++) {
            if (*q < '0' || *q > '9' || rank >= MAX_RANK) {
                st = MN_CORRUPT_AT("%s: line %zu: bad rank", path, line_no);
                goto out;
            }
            rank = rank * 10 + (uint32_t)(*q - '0');
        }
        if (rank >= MAX_RANK || (size_t)(sp - p) / 4 * 3 > MAX_TOKEN_BYTES) {
            st = MN_CORRUPT_AT("%s: line %zu: rank or token too large", path, line_no);
            goto out;
        }
        long dl = b64_decode(p, (size_t)(sp - p), bpe->blob + used);
        if (dl <= 0) {
            st = MN_CORRUPT_AT("%s: line %zu: bad base64", path, line_no);
            goto out;
        }
        in_order &= rank == n_tok;
        line_rank[n_tok] = rank;
        line_off[n_tok++] = (uint32_t)used;
        used += (size_t)dl;
        if (rank > max_rank)
            max_rank = rank;
        p = nl ? nl + 1 : end;
    }
    if (n_tok == 0) {
        st = MN_CORRUPT_AT("%s: no tokens", path);
        goto out;
    }
    line_off[n_tok] = (uint32_t)used;
    bpe->n_ranks = max_rank + 1;
    bpe->n_tokens = (uint32_t)n_tok;
    if (in_order) {
        bpe->tok_off = line_off;
        line_off = NULL;
    } else {
        uint32_t *lens = calloc(bpe->n_ranks, sizeof *lens);
        uint8_t *blob = malloc(used + 8);
        bpe->tok_off = malloc(((size_t)bpe->n_ranks + 1) * sizeof *bpe->tok_off);
        if (!lens || !blob || !bpe->tok_off) {
            free(lens);
            free(blob);
            st = mn__nomem();
            goto out;
        }
        for (size_t i = 0; i < n_tok && st == MN_OK; i++) {
            if (lens[line_rank[i]])
                st = MN_CORRUPT_AT("%s: rank %u appears twice", path, line_rank[i]);
            lens[line_rank[i]] = line_off[i + 1] - line_off[i];
        }
        uint32_t off = 0;
        for (uint32_t r = 0; r < bpe->n_ranks; r++) {
            bpe->tok_off[r] = off;
            off += lens[r];
        }
        bpe->tok_off[bpe->n_ranks] = off;
        for (size_t i = 0; i < n_tok && st == MN_OK; i++)
            memcpy(blob + bpe->tok_off[line_rank[i]], bpe->blob + line_off[i], line_off[i + 1] - line_off[i]);
        free(lens);
        free(bpe->blob);
        bpe->blob = blob;
        if (st != MN_OK)
            goto out;
    }
    memset(bpe->blob + used, 0, 8); /* padding for word loads */
    for (uint32_t r = 0; r < bpe->n_ranks; r++)
        if (bpe->tok_off[r + 1] - bpe->tok_off[r] > bpe->max_len)
            bpe->max_len = bpe->tok_off[r + 1] - bpe->tok_off[r];

    size_t cap = 1024;
    while (cap < 2 * n_tok)
        cap <<= 1;
    bpe->mask = cap - 1;
    bpe->slots = malloc(cap * sizeof *bpe->slots);
    bpe->pair_rank = malloc(65536 * sizeof *bpe->pair_rank);
    if (!bpe->slots || !bpe->pair_rank) {
        st = mn__nomem();
        goto out;
    }
    /* MN_BPE_NO_RANK is all ones */
    memset(bpe->slots, 0xFF, cap * sizeof *bpe->slots);
    memset(bpe->byte_rank, 0xFF, sizeof bpe->byte_rank);
    memset(bpe->pair_rank, 0xFF, 65536 * sizeof *bpe->pair_rank);
    for (uint32_t r = 0; r < bpe->n_ranks; r++) {
        uint32_t l = bpe->tok_off[r + 1] - bpe->tok_off[r];
        if (r + 16 < bpe->n_ranks) { /* the table is larger than the caches: fetch ahead */
            uint32_t r2 = r + 16, l2 = bpe->tok_off[r2 + 1] - bpe->tok_off[r2];
            const uint8_t *k2 = bpe->blob + bpe->tok_off[r2];
            __builtin_prefetch(&bpe->slots[hash_key(load_word(k2, l2, 1), k2, l2, 1) & bpe->mask], 1);
        }
        if (l == 0)
            continue;
        const uint8_t *k = bpe->blob + bpe->tok_off[r];
        if (!table_insert(bpe, r)) {
            st = MN_CORRUPT_AT("%s: token of rank %u appears twice", path, r);
            goto out;
        }
        if (l == 1)
            bpe->byte_rank[k[0]] = r;
        else if (l == 2)
            bpe->pair_rank[k[0] << 8 | k[1]] = r;
    }
    for (int b = 0; b < 256; b++)
        if (bpe->byte_rank[b] == MN_BPE_NO_RANK) {
            st = MN_CORRUPT_AT("%s: byte 0x%02x has no rank", path, b);
            goto out;
        }
    /* give back the unused tail of the blob (it was sized for the base64 text) */
    uint8_t *shrunk = realloc(bpe->blob, used + 8);
    if (shrunk)
        bpe->blob = shrunk;
    bpe->mem = ((size_t)bpe->n_ranks + 1) * sizeof *bpe->tok_off + used + 8 + cap * sizeof *bpe->slots +
               65536 * sizeof *bpe->pair_rank;
out:
    free(line_rank);
    free(line_off);
    if (st != MN_OK)
        mn__bpe_release(bpe);
    return st;
}

/* ---- merging ----------------------------------------------------------------------------------- */

/* tiktoken's loop on a short piece: parts in arrays, a linear scan for the lowest rank. */
static size_t merge_small(const struct mn_bpe *bpe, const uint8_t *p, size_t n, uint32_t *ids, int padded)
{
    uint32_t pos[SMALL_PIECE + 1], rk[SMALL_PIECE], tok[SMALL_PIECE];
    size_t m = n;
    for (size_t i = 0; i < n; i++) {
        pos[i] = (uint32_t)i;
        tok[i] = bpe->byte_rank[p[i]];
        rk[i] = i + 1 < n ? bpe->pair_rank[p[i] << 8 | p[i + 1]] : MN_BPE_NO_RANK;
    }
    pos[n] = (uint32_t)n;
    for (;;) {
        uint32_t best = MN_BPE_NO_RANK;
        size_t bi = 0;
        for (size_t i = 0; i + 1 < m; i++)
            if (rk[i] < best) {
                best = rk[i];
                bi = i;
            }
        if (best == MN_BPE_NO_RANK)
            break;
        tok[bi] = best;
        memmove(&pos[bi + 1], &pos[bi + 2], (m - bi - 1) * sizeof pos[0]);
        memmove(&rk[bi + 1], &rk[bi + 2], (m - bi - 2) * sizeof rk[0]);
        memmove(&tok[bi + 1], &tok[bi + 2], (m - bi - 2) * sizeof tok[0]);
        m--;
        rk[bi] = bi + 1 < m ? mn__bpe_lookup(bpe, p + pos[bi], pos[bi + 2] - pos[bi], padded) : MN_BPE_NO_RANK;
        if (bi > 0)
            rk[bi - 1] = mn__bpe_lookup(bpe, p + pos[bi - 1], pos[bi + 1] - pos[bi - 1], padded);
    }
    if (ids)
        memcpy(ids, tok, m * sizeof *ids);
    return m;
}

/* A min-heap of (rank, start) with lazy deletion: an entry is stale when the pair that starts
 * at `start` is no longer the same bytes, which shows as a different current rank. */
struct hent {
    uint32_t rank, start;
};

static inline int hless(struct hent a, struct hent b) { return a.rank < b.rank || (a.rank == b.rank && a.start < b.start); }

static void hpush(struct hent *h, size_t *n, struct hent e)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!hless(e, h[up]))
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = e;
}

static struct hent hpop(struct hent *h, size_t *n)
{
    struct hent top = h[0], last = h[--*n];
    size_t i = 0, cnt = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= cnt)
            break;
        if (c + 1 < cnt && hless(h[c + 1], h[c]))
            c++;
        if (!hless(h[c], last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (cnt)
        h[i] = last;
    return top;
}

/* The same merges on a long piece in O(n log n): parts as a linked list over their start
 * offsets, candidate pairs in a heap ordered by (rank, start) — the lowest rank, leftmost first,
 * exactly the pair tiktoken's scan picks. */
static size_t merge_large(const struct mn_bpe *bpe, const uint8_t *p, size_t n, uint32_t *ids, int padded)
{
    if (n >= UINT32_MAX / 4)
        return 0;
    uint32_t *next = malloc((n + 1) * sizeof *next);
    uint32_t *prev = malloc(n * sizeof *prev);
    uint32_t *tok = malloc(n * sizeof *tok);
    uint32_t *cur = malloc(n * sizeof *cur); /* current rank of the pair starting here */
    struct hent *heap = malloc(3 * n * sizeof *heap);
    size_t m = 0, hn = 0;
    if (!next || !prev || !tok || !cur || !heap)
        goto out;
    for (size_t i = 0; i < n; i++) {
        next[i] = (uint32_t)(i + 1);
        prev[i] = (uint32_t)i - 1; /* prev[0] unused */
        tok[i] = bpe->byte_rank[p[i]];
        cur[i] = i + 1 < n ? bpe->pair_rank[p[i] << 8 | p[i + 1]] : MN_BPE_NO_RANK;
        if (cur[i] != MN_BPE_NO_RANK)
            hpush(heap, &hn, (struct hent){cur[i], (uint32_t)i});
    }
    next[n] = (uint32_t)n;
    m = n;
    while (hn) {
        struct hent e = hpop(heap, &hn);
        uint32_t a = e.start;
        if (cur[a] != e.rank) /* stale, or a was merged away (cur set to NO_RANK) */
            continue;
        uint32_t b = next[a];
        tok[a] = e.rank;
        next[a] = next[b];
        cur[b] = MN_BPE_NO_RANK;
        if (next[a] < n)
            prev[next[a]] = a;
        m--;
        cur[a] = next[a] < n ? mn__bpe_lookup(bpe, p + a, next[next[a]] - a, padded) : MN_BPE_NO_RANK;
        if (cur[a] != MN_BPE_NO_RANK)
            hpush(heap, &hn, (struct hent){cur[a], a});
        if (a > 0) {
            uint32_t pa = prev[a];
            cur[pa] = mn__bpe_lookup(bpe, p + pa, next[a] - pa, padded);
            if (cur[pa] != MN_BPE_NO_RANK)
                hpush(heap, &hn, (struct hent){cur[pa], pa});
        }
    }
    if (ids)
        for (size_t i = 0, k = 0; i < n; i = next[i])
            ids[k++] = tok[i];
out:
    free(next);
    free(prev);
    free(tok);
    free(cur);
    free(heap);
    return m;
}

size_t mn__bpe_merge(const struct mn_bpe *bpe, const uint8_t *piece, size_t len, uint32_t *ids, int force_large)
{
    if (force_large || len > SMALL_PIECE)
        return merge_large(bpe, piece, len, ids, 0);
    /* lookups read up to 8 bytes past a substring's start: give them a padded copy */
    uint8_t buf[SMALL_PIECE + 8];
    memcpy(buf, piece, len);
    memset(buf + len, 0, 8);
    return merge_small(bpe, buf, len, ids, 1);
}

/* ---- count, encode, decode --------------------------------------------------------------------- */

/* Tokens of one piece; ids (room for len) may be NULL. 0 only when memory runs out. */
static inline size_t piece_tokens(const struct mn_bpe *bpe, const uint8_t *p, size_t len, const uint8_t *text_end,
                                  uint32_t *ids)
{
    if (len == 1) {
        if (ids)
            ids[0] = bpe->byte_rank[p[0]];
        return 1;
    }
    int padded = (size_t)(text_end - p) >= len + 8;
    if (len <= bpe->max_len) {
        uint32_t r = mn__bpe_lookup(bpe, p, len, padded);
        if (r != MN_BPE_NO_RANK) {
            if (ids)
                ids[0] = r;
            return 1;
        }
    }
    if (len <= SMALL_PIECE) {
        if (padded)
            return merge_small(bpe, p, len, ids, 1);
        return mn__bpe_merge(bpe, p, len, ids, 0);
    }
    return merge_large(bpe, p, len, ids, padded);
}

/* Out of memory (for the table, or a huge piece) counts one token a byte: an upper bound. */
static size_t bpe_count(const mn_tokenizer *tk, const char *text, size_t len)
{
    const struct bpe_tokenizer *t = (const struct bpe_tokenizer *)tk;
    const struct mn_bpe *bpe = ranks(tk);
    if (!bpe)
        return len;
    const uint8_t *s = (const uint8_t *)text, *end = s + len;
    size_t total = 0;
    for (size_t i = 0; i < len;) {
        size_t j = mn__pretok_next(t->kind, s, len, i);
        size_t k = piece_tokens(bpe, s + i, j - i, end, NULL);
        total += k ? k : j - i;
        i = j;
    }
    return total;
}

/* ---- counting on several threads ------------------------------------------------------------- */

#define MAX_PARTS 1024
#define MAX_WORKERS 256

struct chunk_run {
    const mn_tokenizer *tk;
    const char *text;
    const size_t *cut; /* part k is text[cut[k] .. cut[k+1]) */
    unsigned n;
    atomic_uint next;  /* the next part nobody has taken */
    size_t count[MAX_PARTS];
};

/* A worker takes parts in order until none is left. */
static void *chunk_work(void *user)
{
    struct chunk_run *r = user;
    unsigned k;
    while ((k = atomic_fetch_add(&r->next, 1)) < r->n)
        r->count[k] = bpe_count(r->tk, r->text + r->cut[k], r->cut[k + 1] - r->cut[k]);
    return NULL;
}

size_t mn__bpe_count_chunks(const mn_tokenizer *tk, const char *text, size_t len, unsigned parts, unsigned threads,
                            unsigned *used)
{
    const uint8_t *s = (const uint8_t *)text;
    if (parts > MAX_PARTS)
        parts = MAX_PARTS;
    if (parts < 1 || !mn__bpe_is(tk))
        parts = 1;
    /* each cut is the first safe one at or after its target k * len / parts */
    size_t *cut = malloc((parts + 1) * sizeof *cut);
    struct chunk_run *r = parts > 1 ? malloc(sizeof *r) : NULL;
    if (!cut || !r) {
        free(cut);
        free(r);
        if (used)
            *used = 1;
        return bpe_count(tk, text, len);
    }
    unsigned n = 0;
    cut[0] = 0;
    for (unsigned k = 1; k < parts; k++) {
        size_t b = (size_t)((unsigned long long)len * k / parts);
        if (b <= cut[n])
            b = cut[n] + 1;
        while (b < len && !mn__pretok_safe_cut(s, len, b))
            b++;
        if (b >= len)
            break; /* no safe cut left: the rest is one part */
        cut[++n] = b;
    }
    cut[++n] = len;
    if (used)
        *used = n;
    r->tk = tk;
    r->text = text;
    r->cut = cut;
    r->n = n;
    atomic_init(&r->next, 0);
    if (threads > n)
        threads = n;
    if (threads > MAX_WORKERS)
        threads = MAX_WORKERS;
    pthread_t th[MAX_WORKERS];
    unsigned started = 0;
    while (started + 1 < threads && pthread_create(&th[started], NULL, chunk_work, r) == 0)
        started++;
    chunk_work(r); /* this thread works too, and alone when no thread could start */
    for (unsigned k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    size_t total = 0;
    for (unsigned k = 0; k < n; k++)
        total += r->count[k];
    free(cut);
    free(r);
    return total;
}

static mn_status bpe_encode(const mn_tokenizer *tk, const char *text, size_t len, uint32_t **ids_out, size_t *n_out)
{
    const struct bpe_tokenizer *t = (const struct bpe_tokenizer *)tk;
    const uint8_t *s = (const uint8_t *)text, *end = s + len;
    *ids_out = NULL;
    *n_out = 0;
    const struct mn_bpe *bpe = ranks(tk);
    if (!bpe)
        return mn__nomem();
    size_t cap = len / 3 + 16, n = 0;
    uint32_t *ids = malloc(cap * sizeof *ids);
    if (!ids)
        return mn__nomem();
    for (size_t i = 0; i < len;) {
        size_t j = mn__pretok_next(t->kind, s, len, i);
        if (n + (j - i) > cap) {
            size_t ncap = cap * 2 > n + (j - i) ? cap * 2 : n + (j - i);
            uint32_t *nids = realloc(ids, ncap * sizeof *ids);
            if (!nids) {
                free(ids);
                return mn__nomem();
            }
            ids = nids;
            cap = ncap;
        }
        size_t k = piece_tokens(bpe, s + i, j - i, end, ids + n);
        if (k == 0) {
            free(ids);
            return mn__nomem();
        }
        n += k;
        i = j;
    }
    *ids_out = ids;
    *n_out = n;
    return MN_OK;
}

static void bpe_free(mn_tokenizer *tk)
{
    struct bpe_tokenizer *t = (struct bpe_tokenizer *)tk;
    if (atomic_load(&t->ready))
        mn__bpe_release(&t->bpe);
    pthread_mutex_destroy(&t->lock);
    free(t->data);
    free(t->path);
    free(t);
}

static const struct mn_tokenizer_vt bpe_vt = {bpe_count, bpe_encode, bpe_free};

int mn__bpe_is(const mn_tokenizer *tk) { return tk && tk->vt == &bpe_vt; }

const struct mn_bpe *mn__bpe_of(const mn_tokenizer *tk) { return mn__bpe_is(tk) ? ranks(tk) : NULL; }

size_t mn__bpe_memory(const mn_tokenizer *tk)
{
    const struct bpe_tokenizer *t = mn__bpe_is(tk) ? (const struct bpe_tokenizer *)tk : NULL;
    if (!t)
        return 0;
    return sizeof *t + (atomic_load(&t->ready) ? t->bpe.mem : t->len);
}

mn_status mn__bpe_decode(const mn_tokenizer *tk, const uint32_t *ids, size_t n, char **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (!mn__bpe_is(tk))
        return mn__err(MN_INVALID, "tokenizer: decode needs a BPE encoding");
    const struct mn_bpe *bpe = ranks(tk);
    if (!bpe)
        return mn__nomem();
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] >= bpe->n_ranks || bpe->tok_off[ids[i] + 1] == bpe->tok_off[ids[i]])
            return mn__err(MN_INVALID, "tokenizer: id %u at %zu is not a token of %s", ids[i], i, tk->name);
        total += bpe->tok_off[ids[i] + 1] - bpe->tok_off[ids[i]];
    }
    char *buf = malloc(total + 1);
    if (!buf)
        return mn__nomem();
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = bpe->tok_off[ids[i] + 1] - bpe->tok_off[ids[i]];
        memcpy(buf + o, bpe->blob + bpe->tok_off[ids[i]], l);
        o += l;
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    return MN_OK;
}

/* ---- opening ----------------------------------------------------------------------------------- */

/* Reads the whole file; MN_UNAVAILABLE when it does not exist. */
static mn_status read_file(const char *path, uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return mn__err(MN_UNAVAILABLE, "tokenizer: ranks file %s not found (run scripts/fetch-ranks)", path);
        return mn__err(MN_IO, "tokenizer: cannot open %s: %s", path, strerror(errno));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 || (uint64_t)sb.st_size > MAX_FILE_BYTES) {
        close(fd);
        return MN_CORRUPT_AT("tokenizer: %s is not a ranks file (size)", path);
    }
    size_t size = (size_t)sb.st_size, got = 0;
    uint8_t *buf = malloc(size);
    if (!buf) {
        close(fd);
        return mn__nomem();
    }
    while (got < size) {
        ssize_t r = read(fd, buf + got, size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int e = r < 0 ? errno : EIO;
            free(buf);
            close(fd);
            return mn__err(MN_IO, "tokenizer: cannot read %s: %s", path, strerror(e));
        }
        got += (size_t)r;
    }
    close(fd);
    *data = buf;
    *len = size;
    return MN_OK;
}

/* The file's SHA-256 against the pinned one: MN_OK with *pinned 1 for the pinned file, MN_OK with
 * *pinned 0 for another that the environment accepts (MNEMO_ACCEPT_UNKNOWN_RANKS=1), else
 * MN_CORRUPT naming both digests. */
static mn_status check_digest(const struct encoding *enc, const char *path, const uint8_t *data, size_t len,
                              int *pinned)
{
    char hex[MN_SHA256_HEX + 1];
    mn_status st = mn__sha256_hex(data, len, hex);
    if (st)
        return st;
    *pinned = strcmp(hex, enc->sha256) == 0;
    if (*pinned)
        return MN_OK;
    const char *acc = getenv("MNEMO_ACCEPT_UNKNOWN_RANKS");
    if (!acc || strcmp(acc, "1") != 0)
        return MN_CORRUPT_AT("tokenizer: %s has SHA-256 %s, not the pinned %s for %s "
                             "(set MNEMO_ACCEPT_UNKNOWN_RANKS=1 to use it anyway)",
                             path, hex, enc->sha256, enc->name);
    mn__log(MN_LOG_WARN, "tokenizer: using %s with unknown SHA-256 %s", path, hex);
    return MN_OK;
}

static mn_status open_file(const struct encoding *enc, const char *path, mn_tokenizer **out)
{
    uint8_t *data;
    size_t len;
    mn_status st = read_file(path, &data, &len);
    if (st != MN_OK)
        return st;
    int pinned = 0;
    st = check_digest(enc, path, data, len, &pinned);
    struct bpe_tokenizer *t = st ? NULL : calloc(1, sizeof *t);
    if (!st && (!t || !(t->path = strdup(path))))
        st = mn__nomem();
    if (st) {
        free(t);
        free(data);
        return st;
    }
    t->base.vt = &bpe_vt;
    t->base.name = enc->name;
    t->kind = enc->kind;
    t->data = data;
    t->len = len;
    pthread_mutex_init(&t->lock, NULL);
    /* a file that is not the pinned one is checked whole now, not at its first use */
    if (!pinned && (st = build_ranks(t)) != MN_OK) {
        bpe_free(&t->base);
        return st;
    }
    *out = &t->base;
    return MN_OK;
}

mn_status mn__bpe_open(const char *name, const char *data_dir, mn_tokenizer **out)
{
    *out = NULL;
    const struct encoding *enc = NULL;
    for (size_t i = 0; i < sizeof encodings / sizeof encodings[0]; i++)
        if (strcmp(encodings[i].name, name) == 0)
            enc = &encodings[i];
    if (!enc)
        return mn__err(MN_INVALID, "tokenizer: unknown BPE encoding '%s' (known: cl100k_base, o200k_base)", name);
    char path[4096];
    if (data_dir) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s.tiktoken", data_dir, name) >= sizeof path)
            return mn__err(MN_INVALID, "tokenizer: data folder path too long");
        return open_file(enc, path, out);
    }
    /* no folder given: the installed data, then the build tree's */
    static const char *const dirs[] = {
#ifdef MNEMO_DATADIR
        MNEMO_DATADIR,
#endif
#ifdef MNEMO_BUILD_DATADIR
        MNEMO_BUILD_DATADIR,
#endif
        NULL,
    };
    char tried[2 * sizeof path + 16] = "";
    for (size_t i = 0; dirs[i]; i++) {
        if ((size_t)snprintf(path, sizeof path, "%s/%s.tiktoken", dirs[i], name) >= sizeof path)
            continue;
        mn_status st = open_file(enc, path, out);
        if (st != MN_UNAVAILABLE)
            return st;
        size_t tl = strlen(tried);
        if ((size_t)snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", path) >= sizeof tried - tl)
            break;
    }
    return mn__err(MN_UNAVAILABLE, "tokenizer: ranks file for %s not found (tried %s; run scripts/fetch-ranks)",
                   name, tried[0] ? tried : "no data folder configured");
}
