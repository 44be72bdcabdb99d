/*
 * io.c — the vector index file (format version 1, described field by field in index.h): atomic
 * save (write aside, fsync, rename, fsync the directory), a loader from a file or from memory
 * that validates every field before the index is used, the streaming checksum, and
 * mn__index_open, which rebuilds from the stored vectors when the file is missing or unusable.
 */
#include "index/index_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/banned.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the index file is written in host order, which must be little-endian"
#endif

#define HEADER_SIZE 96
static const char MAGIC[8] = {'M', 'N', 'E', 'M', 'O', 'I', 'D', 'X'};

size_t mn__index_save_fail_after;

/* ---- checksum: 64-bit words, xxhash64-style round per word ---------------------------------- */

#define P1 0x9e3779b185ebca87ull
#define P2 0xc2b2ae3d27d4eb4full
#define P3 0x165667b19e3779f9ull

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t round64(uint64_t h, uint64_t w) { return rotl64(h ^ (w * P2), 31) * P1; }

void mn__cksum_init(struct mn__cksum *c)
{
    c->h = P3;
    c->pend = 0;
    c->npend = 0;
    c->total = 0;
}

void mn__cksum_update(struct mn__cksum *c, const void *data, size_t len)
{
    const uint8_t *p = data;
    c->total += len;
    while (len > 0 && c->npend > 0) {
        c->pend |= (uint64_t)*p++ << (8 * c->npend);
        len--;
        if (++c->npend == 8) {
            c->h = round64(c->h, c->pend);
            c->pend = 0;
            c->npend = 0;
        }
    }
    uint64_t h = c->h;
    for (; len >= 8; len -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = round64(h, w);
    }
    c->h = h;
    for (; len > 0; len--) {
        c->pend |= (uint64_t)*p++ << (8 * c->npend);
        c->npend++;
    }
}

uint64_t mn__cksum_final(const struct mn__cksum *c)
{
    uint64_t h = c->h;
    if (c->npend)
        h = round64(h, c->pend);
    h ^= c->total * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

uint64_t mn__index_checksum(const void *data, size_t len)
{
    struct mn__cksum c;
    mn__cksum_init(&c);
    mn__cksum_update(&c, data, len);
    return mn__cksum_final(&c);
}

static void put32(uint8_t *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static void put64(uint8_t *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }
static uint32_t get32(const uint8_t *b, size_t off)
{
    uint32_t v;
    memcpy(&v, b + off, 4);
    return v;
}
static uint64_t get64(const uint8_t *b, size_t off)
{
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
}

/* ---- layout: every section starts on a 64-byte boundary, so that a mapped file can be used in
 * place (aligned u32/f32/i64 arrays); the gaps are zero bytes ------------------------------------ */

struct layout {
    uint64_t ids, level, flags, upoff, scales, vecs, links0, upper, sum, total;
};

static uint64_t align64(uint64_t x) { return (x + 63) & ~(uint64_t)63; }

/* Offsets of every section for n slots (n < 2^32, dim <= 65536: no overflow). */
static void layout_of(uint64_t n, uint32_t dim, uint32_t M, int hnsw, int quant, uint64_t upper_words,
                      struct layout *L)
{
    uint64_t o = HEADER_SIZE;
    memset(L, 0, sizeof *L);
    L->ids = o = align64(o);
    o += n * 8;
    L->level = o = align64(o);
    o += n;
    L->flags = o = align64(o);
    o += n;
    if (hnsw) {
        L->upoff = o = align64(o);
        o += n * 4;
    }
    if (quant) {
        L->scales = o = align64(o);
        o += n * 4;
    }
    L->vecs = o = align64(o);
    o += n * dim * (quant ? 1 : 4);
    if (hnsw) {
        L->links0 = o = align64(o);
        o += n * (1 + 2 * (uint64_t)M) * 4;
        L->upper = o = align64(o);
        o += upper_words * 4;
    }
    L->sum = o = align64(o);
    L->total = o + 8;
}

/* ---- save ---------------------------------------------------------------------------------- */

struct writer {
    int fd;
    const char *path;
    uint8_t *buf;
    size_t len, cap;
    uint64_t flushed;
    struct mn__cksum ck;
};

static mn_status w_flush(struct writer *w)
{
    size_t off = 0;
    while (off < w->len) {
        size_t n = w->len - off;
        if (mn__index_save_fail_after) {
            if (w->flushed >= mn__index_save_fail_after)
                return mn__err(MN_IO, "index save %s: simulated failure after %zu bytes", w->path,
                               mn__index_save_fail_after);
            if (n > mn__index_save_fail_after - w->flushed)
                n = (size_t)(mn__index_save_fail_after - w->flushed);
        }
        ssize_t r = write(w->fd, w->buf + off, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return mn__err(MN_IO, "index save %s: %s", w->path, strerror(errno));
        }
        off += (size_t)r;
        w->flushed += (uint64_t)r;
    }
    w->len = 0;
    return MN_OK;
}

static mn_status w_put(struct writer *w, const void *data, size_t n)
{
    const uint8_t *p = data;
    mn__cksum_update(&w->ck, data, n);
    while (n > 0) {
        size_t room = w->cap - w->len;
        size_t c = n < room ? n : room;
        memcpy(w->buf + w->len, p, c);
        w->len += c;
        p += c;
        n -= c;
        if (w->len == w->cap) {
            mn_status rc = w_flush(w);
            if (rc != MN_OK)
                return rc;
        }
    }
    return MN_OK;
}

/* The checksum of the header's first 88 bytes and the per-slot sections a mapped index trusts
 * (ids, levels, flags, upper offsets, int8 scales): mn__index_map verifies it, which costs 14-18
 * bytes a slot instead of the whole file, and catches a damaged id (a wrong answer) at once. */
static uint64_t meta_checksum(const uint8_t *h88, const mn_index *ix)
{
    struct mn__cksum c;
    size_t n = ix->n;
    mn__cksum_init(&c);
    mn__cksum_update(&c, h88, 88);
    mn__cksum_update(&c, ix->ids, n * sizeof(int64_t));
    mn__cksum_update(&c, ix->level, n);
    mn__cksum_update(&c, ix->flags, n);
    if (ix->p.kind == MN_INDEX_HNSW)
        mn__cksum_update(&c, ix->upoff, n * sizeof(uint32_t));
    if (ix->p.quant == MN_INDEX_INT8)
        mn__cksum_update(&c, ix->scales, n * sizeof(float));
    return mn__cksum_final(&c);
}

/* Zero bytes up to file offset `off`. */
static mn_status w_pad(struct writer *w, uint64_t off)
{
    static const uint8_t zero[64];
    mn_status rc = MN_OK;
    while (rc == MN_OK && w->ck.total < off) {
        uint64_t gap = off - w->ck.total;
        rc = w_put(w, zero, gap < sizeof zero ? (size_t)gap : sizeof zero);
    }
    return rc;
}

static void header_encode(const mn_index *ix, uint8_t *h)
{
    memset(h, 0, HEADER_SIZE);
    memcpy(h, MAGIC, 8);
    put32(h, 8, MN_INDEX_FILE_VERSION);
    put32(h, 12, HEADER_SIZE);
    put32(h, 16, (uint32_t)ix->p.kind);
    put32(h, 20, (uint32_t)ix->p.quant);
    put32(h, 24, ix->p.dim);
    put32(h, 28, ix->p.M);
    put32(h, 32, ix->p.ef_construction);
    put32(h, 36, ix->p.ef_search);
    put64(h, 40, ix->n);
    put64(h, 48, ix->n_deleted);
    put64(h, 56, ix->p.kind == MN_INDEX_HNSW ? ix->upper_n : 0);
    put32(h, 64, ix->entry);
    put32(h, 68, ix->max_level > 0 ? (uint32_t)ix->max_level : 0);
    put64(h, 72, ix->rng);
    put64(h, 80, ix->p.seed);
    put64(h, 88, meta_checksum(h, ix));
}

static mn_status write_all(const mn_index *ix, struct writer *w)
{
    uint8_t h[HEADER_SIZE];
    header_encode(ix, h);
    size_t n = ix->n, d = ix->p.dim;
    int hnsw = ix->p.kind == MN_INDEX_HNSW, quant = ix->p.quant == MN_INDEX_INT8;
    struct layout L;
    layout_of(n, ix->p.dim, ix->p.M, hnsw, quant, hnsw ? ix->upper_n : 0, &L);
    mn_status rc;
#define SECTION(off, ptr, bytes)                                                                  \
    if ((rc = w_pad(w, off)) != MN_OK || (rc = w_put(w, ptr, bytes)) != MN_OK)                    \
        return rc;
    if ((rc = w_put(w, h, HEADER_SIZE)) != MN_OK)
        return rc;
    SECTION(L.ids, ix->ids, n * sizeof(int64_t));
    SECTION(L.level, ix->level, n);
    SECTION(L.flags, ix->flags, n);
    if (hnsw) {
        SECTION(L.upoff, ix->upoff, n * sizeof(uint32_t));
    }
    if (quant) {
        SECTION(L.scales, ix->scales, n * sizeof(float));
        SECTION(L.vecs, ix->codes, n * d);
    } else {
        SECTION(L.vecs, ix->vecs, n * d * sizeof(float));
    }
    if (hnsw) {
        SECTION(L.links0, ix->links0, n * ix->stride0 * sizeof(uint32_t));
        SECTION(L.upper, ix->upper, ix->upper_n * sizeof(uint32_t));
    }
#undef SECTION
    if ((rc = w_pad(w, L.sum)) != MN_OK)
        return rc;
    uint64_t sum = mn__cksum_final(&w->ck);
    if ((rc = w_put(w, &sum, 8)) != MN_OK)
        return rc;
    return w_flush(w);
}

static mn_status fsync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return mn__nomem();
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    mn_status rc = MN_OK;
    if (fd < 0 || fsync(fd) != 0)
        rc = mn__err(MN_IO, "index save: cannot sync directory %s: %s", dir, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(dir);
    return rc;
}

mn_status mn__index_save(mn_index *ix, const char *path)
{
    if (!ix || ix->magic != MN__INDEX_MAGIC)
        return mn__err(MN_MISUSE, "index: bad handle");
    if (!path || !*path)
        return mn__err(MN_INVALID, "index save: path is empty");
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 5);
    struct writer w = {-1, NULL, NULL, 0, 1u << 20, 0, {0, 0, 0, 0}};
    w.buf = malloc(w.cap);
    if (!tmp || !w.buf) {
        free(tmp);
        free(w.buf);
        return mn__nomem();
    }
    memcpy(tmp, path, pl);
    memcpy(tmp + pl, ".tmp", 5);
    w.path = tmp;
    mn__cksum_init(&w.ck);
    mn_status rc;
    w.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w.fd < 0) {
        rc = mn__err(MN_IO, "index save: cannot create %s: %s", tmp, strerror(errno));
        goto out;
    }
    pthread_rwlock_rdlock(&ix->lock);
    rc = write_all(ix, &w);
    pthread_rwlock_unlock(&ix->lock);
    if (rc != MN_OK)
        goto out;
    if (fsync(w.fd) != 0) {
        rc = mn__err(MN_IO, "index save: cannot sync %s: %s", tmp, strerror(errno));
        goto out;
    }
    int fd = w.fd;
    w.fd = -1;
    if (close(fd) != 0) {
        rc = mn__err(MN_IO, "index save: cannot close %s: %s", tmp, strerror(errno));
        goto out;
    }
    if (rename(tmp, path) != 0) {
        rc = mn__err(MN_IO, "index save: cannot rename %s to %s: %s", tmp, path, strerror(errno));
        goto out;
    }
    rc = fsync_dir(path);
out:
    if (w.fd >= 0)
        close(w.fd);
    if (rc != MN_OK)
        unlink(tmp); /* never leave a partial file behind; the old `path` is untouched */
    free(tmp);
    free(w.buf);
    return rc;
}

/* ---- load ---------------------------------------------------------------------------------- */

struct reader {
    const uint8_t *mem; /* load from memory, or */
    int fd;             /* from this file */
    size_t len, pos;
    const char *name;
    struct mn__cksum ck;
};

static mn_status r_get(struct reader *r, void *dst, size_t n)
{
    if (n == 0)
        return MN_OK;
    if (n > r->len - r->pos)
        return MN_CORRUPT_AT("index %s: truncated at byte %zu", r->name, r->len);
    if (r->mem) {
        memcpy(dst, r->mem + r->pos, n);
    } else {
        uint8_t *p = dst;
        size_t got = 0;
        while (got < n) {
            ssize_t k = read(r->fd, p + got, n - got);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return mn__err(MN_IO, "index %s: %s", r->name, strerror(errno));
            if (k == 0)
                return MN_CORRUPT_AT("index %s: truncated at byte %zu", r->name, r->pos + got);
            got += (size_t)k;
        }
    }
    r->pos += n;
    mn__cksum_update(&r->ck, dst, n);
    return MN_OK;
}

/* Skips the zero bytes before file offset `off`. */
static mn_status r_skip(struct reader *r, uint64_t off)
{
    uint8_t pad[64];
    while (r->pos < off) {
        size_t gap = off - r->pos < sizeof pad ? (size_t)(off - r->pos) : sizeof pad;
        mn_status rc = r_get(r, pad, gap);
        if (rc != MN_OK)
            return rc;
        for (size_t i = 0; i < gap; i++)
            if (pad[i])
                return MN_CORRUPT_AT("index %s: padding byte %zu is not zero", r->name, r->pos - gap + i);
    }
    return MN_OK;
}

/* Flags, levels, the deleted count and the entry point: the per-slot bytes every search relies
 * on (cheap: two bytes a slot). Sets ix->n_deleted and ix->max_level. */
static mn_status check_slots(mn_index *ix, const char *name, uint64_t n_deleted, uint32_t max_level_f)
{
    size_t n = ix->n;
    int hnsw = ix->p.kind == MN_INDEX_HNSW;
    size_t del = 0;
    for (size_t i = 0; i < n; i++) {
        if (ix->flags[i] & ~MN__INDEX_FLAG_DELETED)
            return MN_CORRUPT_AT("index %s: slot %zu has unknown flags 0x%x", name, i, ix->flags[i]);
        del += ix->flags[i] & MN__INDEX_FLAG_DELETED;
        if (ix->level[i] > (hnsw ? max_level_f : 0))
            return MN_CORRUPT_AT("index %s: slot %zu has level %u over the top level %u", name, i, ix->level[i],
                                 hnsw ? max_level_f : 0);
    }
    if (del != n_deleted)
        return MN_CORRUPT_AT("index %s: %zu deleted slots, header says %llu", name, del,
                             (unsigned long long)n_deleted);
    ix->n_deleted = del;
    if (hnsw) {
        if (n > 0 && (ix->entry >= n || ix->level[ix->entry] != max_level_f))
            return MN_CORRUPT_AT("index %s: bad entry point %u", name, ix->entry);
        if (n == 0 && (ix->entry != MN__INDEX_NONE || max_level_f != 0))
            return MN_CORRUPT_AT("index %s: an empty graph with an entry point", name);
        ix->max_level = n ? (int)max_level_f : -1;
    } else if (ix->entry != MN__INDEX_NONE) {
        return MN_CORRUPT_AT("index %s: a flat index with an entry point", name);
    }
    return MN_OK;
}

/* Vectors and links: everything a writer (which walks every level and rewrites lists) needs
 * checked. A mapped index skips this (its walks check bounds as they go) until it is written. */
static mn_status check_data(mn_index *ix, const char *name)
{
    size_t n = ix->n, d = ix->p.dim;
    if (ix->p.quant == MN_INDEX_INT8) {
        for (size_t i = 0; i < n; i++)
            if (!isfinite(ix->scales[i]) || ix->scales[i] < 0)
                return MN_CORRUPT_AT("index %s: slot %zu has a bad scale", name, i);
        for (size_t i = 0; i < n * d; i++)
            if (ix->codes[i] == -128)
                return MN_CORRUPT_AT("index %s: slot %zu has a code of -128", name, i / d);
    } else {
        for (size_t i = 0; i < n * d; i++)
            if (!isfinite(ix->vecs[i]) || fabsf(ix->vecs[i]) > 1.0001f)
                return MN_CORRUPT_AT("index %s: slot %zu is not a unit vector", name, i / d);
    }
    if (ix->p.kind != MN_INDEX_HNSW)
        return MN_OK;
    for (size_t i = 0; i < n; i++) {
        const uint32_t *l = ix->links0 + i * ix->stride0;
        if (l[0] > ix->M0)
            return MN_CORRUPT_AT("index %s: slot %zu has %u links, at most %u", name, i, l[0], ix->M0);
        for (uint32_t j = 1; j <= l[0]; j++)
            if (l[j] >= n)
                return MN_CORRUPT_AT("index %s: slot %zu links to %u, past the end", name, i, l[j]);
        int L = ix->level[i];
        if (L == 0) {
            if (ix->upoff[i] != 0)
                return MN_CORRUPT_AT("index %s: slot %zu has no upper levels but an offset", name, i);
            continue;
        }
        if ((uint64_t)ix->upoff[i] + (uint64_t)L * ix->strideU > ix->upper_n)
            return MN_CORRUPT_AT("index %s: slot %zu upper links past the pool", name, i);
        for (int lv = 1; lv <= L; lv++) {
            const uint32_t *u = mn__links(ix, (uint32_t)i, lv);
            if (u[0] > ix->p.M)
                return MN_CORRUPT_AT("index %s: slot %zu level %d has %u links, at most %u", name, i, lv, u[0],
                                     ix->p.M);
            for (uint32_t j = 1; j <= u[0]; j++)
                if (u[j] >= n || ix->level[u[j]] < lv)
                    return MN_CORRUPT_AT("index %s: slot %zu level %d links to %u, not on that level", name, i,
                                         lv, u[j]);
        }
    }
    return MN_OK;
}

/* The id map of the live slots; a duplicate live id is refused. */
static mn_status build_map(mn_index *ix, const char *name)
{
    mn_status rc = mn__idmap_reserve(&ix->map, ix->n);
    for (size_t i = 0; rc == MN_OK && i < ix->n; i++) {
        if (ix->flags[i] & MN__INDEX_FLAG_DELETED)
            continue;
        if (mn__idmap_get(&ix->map, ix->ids[i]) != MN__INDEX_NONE)
            return MN_CORRUPT_AT("index %s: id %lld appears twice", name, (long long)ix->ids[i]);
        rc = mn__idmap_put(&ix->map, ix->ids[i], (uint32_t)i);
    }
    return rc;
}

/* What the header says. */
struct header {
    struct mn_index_params p;
    uint64_t n, n_del, upper_words, rng, meta;
    uint32_t entry, max_level;
    struct layout L;
};

/* Decodes and checks the header of a `len`-byte file. */
static mn_status header_decode(const uint8_t *h, size_t len, const char *name, struct header *o)
{
    if (len < HEADER_SIZE + 8)
        return MN_CORRUPT_AT("index %s: %zu bytes is too short for an index file", name, len);
    if (memcmp(h, MAGIC, 8) != 0)
        return MN_CORRUPT_AT("index %s: not a mnemo index file (bad magic)", name);
    uint32_t version = get32(h, 8);
    if (version != MN_INDEX_FILE_VERSION)
        return MN_CORRUPT_AT("index %s: file version %u, this build reads version %u (rebuild it)", name, version,
                             MN_INDEX_FILE_VERSION);
    if (get32(h, 12) != HEADER_SIZE)
        return MN_CORRUPT_AT("index %s: header size %u, expected %u", name, get32(h, 12), HEADER_SIZE);
    struct mn_index_params p = MN_INDEX_PARAMS_INIT;
    uint32_t kind = get32(h, 16), quant = get32(h, 20);
    if (kind > 1 || quant > 1)
        return MN_CORRUPT_AT("index %s: unknown kind %u or quantisation %u", name, kind, quant);
    p.kind = (enum mn_index_kind)kind;
    p.quant = (enum mn_index_quant)quant;
    p.dim = get32(h, 24);
    p.M = get32(h, 28);
    p.ef_construction = get32(h, 32);
    p.ef_search = get32(h, 36);
    p.seed = get64(h, 80);
    o->n = get64(h, 40);
    o->n_del = get64(h, 48);
    o->upper_words = get64(h, 56);
    o->entry = get32(h, 64);
    o->max_level = get32(h, 68);
    o->rng = get64(h, 72);
    if (p.dim < 1 || p.dim > 65536 || p.M < 2 || p.M > 128 || p.ef_construction < 1 || p.ef_construction > 65536 ||
        p.ef_search < 1 || p.ef_search > 65536)
        return MN_CORRUPT_AT("index %s: parameter out of range (dim %u, M %u, ef_construction %u, ef_search %u)",
                             name, p.dim, p.M, p.ef_construction, p.ef_search);
    o->meta = get64(h, 88);
    if (o->n >= MN__INDEX_NONE || o->n_del > o->n || o->upper_words > UINT32_MAX ||
        o->max_level > MN__INDEX_MAX_LEVEL ||
        (kind == MN_INDEX_FLAT && (o->upper_words || o->max_level)))
        return MN_CORRUPT_AT("index %s: header field out of range", name);
    layout_of(o->n, p.dim, p.M, kind == MN_INDEX_HNSW, (int)quant, o->upper_words, &o->L);
    if (o->L.total != (uint64_t)len)
        return MN_CORRUPT_AT("index %s: %zu bytes, the header implies %llu (truncated or damaged)", name, len,
                             (unsigned long long)o->L.total);
    p.capacity = (size_t)o->n;
    o->p = p;
    return MN_OK;
}

static mn_status load(struct reader *r, mn_index **out)
{
    const char *name = r->name;
    uint8_t h[HEADER_SIZE];
    if (r->len < HEADER_SIZE + 8)
        return MN_CORRUPT_AT("index %s: %zu bytes is too short for an index file", name, r->len);
    mn_status rc = r_get(r, h, HEADER_SIZE);
    if (rc != MN_OK)
        return rc;
    struct header hd;
    if ((rc = header_decode(h, r->len, name, &hd)) != MN_OK)
        return rc;
    int hnsw = hd.p.kind == MN_INDEX_HNSW;
    mn_index *ix = NULL;
    if ((rc = mn__index_alloc(&hd.p, &ix)) != MN_OK)
        return rc == MN_INVALID ? MN_CORRUPT_AT("index %s: %s", name, mn_errmsg()) : rc;
    if (hnsw && (rc = mn__index_upper_reserve(ix, (size_t)hd.upper_words)) != MN_OK)
        goto fail;
    ix->n = (size_t)hd.n;
    ix->upper_n = hnsw ? (size_t)hd.upper_words : 0;
    ix->entry = hd.entry;
    ix->rng = hd.rng;
    size_t nn = (size_t)hd.n, d = hd.p.dim;
    const struct layout *L = &hd.L;
#define SECTION(off, ptr, bytes)                                                                  \
    if ((rc = r_skip(r, off)) != MN_OK || (rc = r_get(r, ptr, bytes)) != MN_OK)                   \
        goto fail;
    SECTION(L->ids, ix->ids, nn * 8);
    SECTION(L->level, ix->level, nn);
    SECTION(L->flags, ix->flags, nn);
    if (hnsw) {
        SECTION(L->upoff, ix->upoff, nn * 4);
    }
    if (hd.p.quant) {
        SECTION(L->scales, ix->scales, nn * 4);
        SECTION(L->vecs, ix->codes, nn * d);
    } else {
        SECTION(L->vecs, ix->vecs, nn * d * 4);
    }
    if (hnsw) {
        SECTION(L->links0, ix->links0, nn * ix->stride0 * 4);
        SECTION(L->upper, ix->upper, ix->upper_n * 4);
    }
#undef SECTION
    if ((rc = r_skip(r, L->sum)) != MN_OK)
        goto fail;
    uint64_t sum = mn__cksum_final(&r->ck), stored;
    if ((rc = r_get(r, &stored, 8)) != MN_OK)
        goto fail;
    if (sum != stored) {
        rc = MN_CORRUPT_AT("index %s: checksum mismatch (the file is damaged)", name);
        goto fail;
    }
    if ((rc = check_slots(ix, name, hd.n_del, hd.max_level)) != MN_OK || (rc = check_data(ix, name)) != MN_OK ||
        (rc = build_map(ix, name)) != MN_OK)
        goto fail;
    *out = ix;
    return MN_OK;
fail:
    mn__index_free(ix);
    return rc;
}

mn_status mn__index_load_mem(const void *data, size_t len, mn_index **out)
{
    if (!out)
        return mn__err(MN_INVALID, "index load: out is NULL");
    *out = NULL;
    if (!data && len)
        return mn__err(MN_INVALID, "index load: data is NULL");
    static const uint8_t none[1];
    struct reader r = {data ? data : none, -1, len, 0, "(memory)", {0, 0, 0, 0}};
    mn__cksum_init(&r.ck);
    return load(&r, out);
}

/* Opens `path` for reading without blocking (a FIFO in its place must not hang the caller) and
 * refuses anything but a regular file. */
static mn_status open_regular(const char *path, int *fd_out, size_t *len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return mn__err(MN_NOTFOUND, "index %s: no such file", path);
        return mn__err(MN_IO, "index %s: %s", path, strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        mn_status rc = mn__err(MN_IO, "index %s: %s", path, strerror(errno));
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return mn__err(MN_IO, "index %s: not a regular file", path);
    }
    *fd_out = fd;
    *len = (size_t)st.st_size;
    return MN_OK;
}

mn_status mn__index_load(const char *path, mn_index **out)
{
    if (!out)
        return mn__err(MN_INVALID, "index load: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return mn__err(MN_INVALID, "index load: path is empty");
    int fd;
    size_t len;
    mn_status rc = open_regular(path, &fd, &len);
    if (rc != MN_OK)
        return rc;
    struct reader r = {NULL, fd, len, 0, path, {0, 0, 0, 0}};
    mn__cksum_init(&r.ck);
    rc = load(&r, out);
    close(fd);
    return rc;
}

/* ---- map: open in place ------------------------------------------------------------------------ */

mn_status mn__index_map(const char *path, mn_index **out)
{
    if (!out)
        return mn__err(MN_INVALID, "index map: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return mn__err(MN_INVALID, "index map: path is empty");
    int fd;
    size_t len;
    mn_status rc = open_regular(path, &fd, &len);
    if (rc != MN_OK)
        return rc;
    if (len < HEADER_SIZE + 8) {
        close(fd);
        return MN_CORRUPT_AT("index %s: %zu bytes is too short for an index file", path, len);
    }
    void *base = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd); /* the mapping keeps the file */
    if (base == MAP_FAILED)
        return mn__err(MN_IO, "index %s: cannot map it: %s", path, strerror(e));
    const uint8_t *b = base;
    struct header hd;
    mn_index *ix = NULL;
    if ((rc = header_decode(b, len, path, &hd)) != MN_OK)
        goto fail;
    hd.p.capacity = 0; /* the arrays are the file's */
    if ((rc = mn__index_alloc(&hd.p, &ix)) != MN_OK) {
        if (rc == MN_INVALID)
            rc = MN_CORRUPT_AT("index %s: %s", path, mn_errmsg());
        goto fail;
    }
    int hnsw = hd.p.kind == MN_INDEX_HNSW;
    ix->map_base = base;
    ix->map_len = len;
    ix->n = ix->cap = (size_t)hd.n;
    ix->entry = hd.entry;
    ix->rng = hd.rng;
    ix->ids = (int64_t *)(void *)(b + hd.L.ids);
    ix->level = (uint8_t *)(b + hd.L.level);
    ix->flags = (uint8_t *)(b + hd.L.flags);
    if (hnsw) {
        ix->upoff = (uint32_t *)(void *)(b + hd.L.upoff);
        ix->links0 = (uint32_t *)(void *)(b + hd.L.links0);
        ix->upper = (uint32_t *)(void *)(b + hd.L.upper);
        ix->upper_n = ix->upper_cap = (size_t)hd.upper_words;
    }
    if (hd.p.quant) {
        ix->scales = (float *)(void *)(b + hd.L.scales);
        ix->codes = (int8_t *)(b + hd.L.vecs);
    } else {
        ix->vecs = (float *)(void *)(b + hd.L.vecs);
    }
    if (meta_checksum(b, ix) != hd.meta) {
        rc = MN_CORRUPT_AT("index %s: checksum mismatch in the header or ids (the file is damaged)", path);
        goto fail;
    }
    if ((rc = check_slots(ix, path, hd.n_del, hd.max_level)) != MN_OK || (rc = build_map(ix, path)) != MN_OK ||
        (rc = mn__scratch_fit(ix, ix->wscr)) != MN_OK)
        goto fail;
    *out = ix;
    return MN_OK;
fail:
    if (ix)
        mn__index_free(ix); /* unmaps */
    else
        munmap(base, len);
    return rc;
}

/* Copies a mapped index's arrays to the heap (checking the vectors and links first: writers walk
 * every level) and drops the mapping. Needs the write lock. */
mn_status mn__index_materialize(mn_index *ix)
{
    if (!ix->map_base)
        return MN_OK;
    const uint8_t *b = ix->map_base;
    uint64_t stored;
    memcpy(&stored, b + ix->map_len - 8, 8);
    if (mn__index_checksum(b, ix->map_len - 8) != stored)
        return MN_CORRUPT_AT("index (mapped): checksum mismatch (the file is damaged)");
    mn_status rc = check_data(ix, "(mapped)");
    if (rc != MN_OK)
        return rc;
    mn_index tmp = *ix; /* the mapped pointers */
    size_t n = ix->n;
    ix->ids = NULL;
    ix->level = ix->flags = NULL;
    ix->upoff = ix->links0 = ix->upper = NULL;
    ix->vecs = ix->scales = NULL;
    ix->codes = NULL;
    ix->cap = 0;
    ix->upper_cap = 0;
    ix->map_base = NULL;
    if ((rc = mn__index_reserve(ix, n > 64 ? n : 64)) != MN_OK ||
        (ix->p.kind == MN_INDEX_HNSW && (rc = mn__index_upper_reserve(ix, tmp.upper_n)) != MN_OK)) {
        free(ix->ids);
        free(ix->level);
        free(ix->flags);
        free(ix->upoff);
        free(ix->links0);
        free(ix->upper);
        free(ix->vecs);
        free(ix->scales);
        free(ix->codes);
        /* back to the mapped arrays (the id map and the writer's scratch stay: still valid) */
        ix->ids = tmp.ids;
        ix->level = tmp.level;
        ix->flags = tmp.flags;
        ix->upoff = tmp.upoff;
        ix->links0 = tmp.links0;
        ix->upper = tmp.upper;
        ix->vecs = tmp.vecs;
        ix->scales = tmp.scales;
        ix->codes = tmp.codes;
        ix->cap = tmp.cap;
        ix->upper_cap = tmp.upper_cap;
        ix->map_base = tmp.map_base;
        return rc;
    }
    size_t d = ix->p.dim;
    memcpy(ix->ids, tmp.ids, n * sizeof *ix->ids);
    memcpy(ix->level, tmp.level, n);
    memcpy(ix->flags, tmp.flags, n);
    if (ix->p.quant == MN_INDEX_INT8) {
        memcpy(ix->scales, tmp.scales, n * sizeof(float));
        memcpy(ix->codes, tmp.codes, n * d);
    } else {
        memcpy(ix->vecs, tmp.vecs, n * d * sizeof(float));
    }
    if (ix->p.kind == MN_INDEX_HNSW) {
        memcpy(ix->upoff, tmp.upoff, n * sizeof(uint32_t));
        memcpy(ix->links0, tmp.links0, n * ix->stride0 * sizeof(uint32_t));
        if (tmp.upper_n)
            memcpy(ix->upper, tmp.upper, tmp.upper_n * sizeof(uint32_t));
    }
    munmap(tmp.map_base, tmp.map_len);
    ix->map_len = 0;
    return MN_OK;
}

/* ---- open or rebuild ----------------------------------------------------------------------- */

mn_status mn__index_open(const char *path, const struct mn_index_params *params, mn_index_next_fn next, void *user,
                        mn_index **out, int *rebuilt)
{
    if (!out || !params || !next)
        return mn__err(MN_INVALID, "index open: params, next and out must not be NULL");
    *out = NULL;
    if (rebuilt)
        *rebuilt = 0;
    mn_index *ix = NULL;
    mn_status rc = mn__index_load(path, &ix);
    if (rc == MN_OK) {
        const struct mn_index_params *f = &ix->p;
        if (f->kind == params->kind && f->quant == params->quant && f->dim == params->dim && f->M == params->M &&
            f->ef_construction == params->ef_construction) {
            ix->p.ef_search = params->ef_search;
            ix->p.exact_threshold = params->exact_threshold;
            *out = ix;
            return MN_OK;
        }
        mn__log(MN_LOG_INFO, "index %s: built with other parameters; rebuilding", path);
        mn__index_free(ix);
        ix = NULL;
    } else if (rc == MN_CORRUPT) {
        mn__log(MN_LOG_WARN, "index %s: %s; rebuilding from the stored vectors", path, mn_errmsg());
    } else if (rc != MN_NOTFOUND) {
        return rc;
    }
    if ((rc = mn__index_create(params, &ix)) != MN_OK)
        return rc;
    for (;;) {
        int64_t id;
        const float *vec = NULL;
        int r = next(user, &id, &vec);
        if (r == 0)
            break;
        if (r < 0) {
            mn__index_free(ix);
            return mn__err(MN_IO, "index %s: the vector source failed during the rebuild", path);
        }
        if ((rc = mn__index_add(ix, id, vec)) != MN_OK) {
            rc = mn__err(rc, "index %s: rebuilding, id %lld: %s", path, (long long)id, mn_errmsg());
            mn__index_free(ix);
            return rc;
        }
    }
    if ((rc = mn__index_save(ix, path)) != MN_OK)
        mn__log(MN_LOG_WARN, "index %s: rebuilt but not saved: %s", path, mn_errmsg());
    mn__err_clear();
    if (rebuilt)
        *rebuilt = 1;
    *out = ix;
    return MN_OK;
}
