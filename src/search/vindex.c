/*
 * vindex.c — the per-handle vector index over a kind of stored vectors (a source: messages'
 * embeddings with embed_log, or memory versions' memory_vectors with memory_vector_log). The
 * database is the truth; "<db>.hnsw" (messages) or "<db>.memories.hnsw" (memories) is a cache
 * with a small state file ("….state") naming the change log position it reflects and the
 * checksum of the index file it belongs to.
 *
 * Writers (mn__vsearch_update: after vectors are stored by mn_embed_pending, backfill, reindex,
 * the server's embedding worker) keep the index current: they build it from scratch on every
 * core when there is none (or when most vectors are new), otherwise add the embed_log changes,
 * and save it now and then (atomically, under an exclusive lock on "<db>.hnsw.lock").
 * Searches never build or change the index: they map the saved file (mn__index_map: a fresh
 * process searches within milliseconds), search it with the ids changed since hidden, and scan
 * exactly the vectors stored since it was saved (at most TAIL_MAX), then merge the two lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "search/search.h"
#include "store/store_search.h"
#include "store/target.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/file.h"
#include "util/banned.h"

#define STATE_MAGIC "mnemo-index-state 1"
#define EXACT_CANDIDATES 50000 /* filters passing at most this many ids hand them over as candidates */
#define TAIL_MAX 100000        /* vectors past the index a search scans exactly, at most */
#define SAVE_EVERY_MS 30000    /* a writer saves at most this often (and on close) */
#define RECHECK_MS 1000        /* a reader looks for a newer saved file at most this often */

struct mn_vsearch {
    pthread_mutex_t lock;
    mn_store *st;
    struct mn_vsource src;
    struct mn_index_params params; /* for new indexes; ef_search for every search */
    char *path; /* NULL: in memory only */
    mn_index *ix;
    uint32_t dim;
    int opened;        /* the saved file was tried */
    int64_t applied;   /* embed_log position reflected by ix */
    int64_t saved_at;  /* applied when last mapped/saved (-1: never) */
    int64_t saved_ms, checked_ms;
    unsigned threads;  /* for builds from scratch; 0 = every core */
};

mn_status mn__vsearch_new_source(mn_store *st, const char *db_path, const struct mn_index_params *params,
                                const struct mn_vsource *src, mn_vsearch **out)
{
    *out = NULL;
    mn_vsearch *v = calloc(1, sizeof *v);
    if (!v)
        return mn__nomem();
    v->st = st;
    v->src = *src;
    v->params = *params;
    v->saved_at = -1;
    /* a database without a file of this machine (PostgreSQL, in memory) has no place to keep
     * the index beside: memory only, built by this process's writers */
    if (db_path && mn__store_target_local(db_path)) {
        const char *file = mn__store_target_path(db_path);
        size_t n = strlen(file) + strlen(src->suffix) + 1;
        if (!(v->path = malloc(n))) {
            free(v);
            return mn__nomem();
        }
        snprintf(v->path, n, "%s%s", file, src->suffix);
    }
    pthread_mutex_init(&v->lock, NULL);
    *out = v;
    return MN_OK;
}

mn_status mn__vsearch_new(mn_store *st, const char *db_path, const struct mn_index_params *params, mn_vsearch **out)
{
    const struct mn_store_search_ops *o = st->ops->search;
    struct mn_vsource src = {".hnsw", o->vec_scan, o->vec_changes, o->vec_get};
    return mn__vsearch_new_source(st, db_path, params, &src, out);
}

void mn__vsearch_set_threads(mn_vsearch *v, unsigned threads)
{
    pthread_mutex_lock(&v->lock);
    v->threads = threads;
    pthread_mutex_unlock(&v->lock);
}

/* ---- the lock file and the state file -------------------------------------------------------- */

static int lock_file(const char *path)
{
    char name[4200];
    int n = snprintf(name, sizeof name, "%s.lock", path);
    if (n < 0 || (size_t)n >= sizeof name)
        return errno = ENAMETOOLONG, -1; /* a path too long to lock beside: as a lock not taken */
    int fd = open(name, O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    while (flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(fd);
            return -1;
        }
    return fd;
}

static void unlock_file(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

/* Opens a regular file for reading without blocking (a FIFO in its place is refused, never
 * waited on); -1 otherwise. */
static int open_regular(const char *name, off_t *size)
{
    int fd = open(name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        return -1;
    }
    if (fd >= 0)
        *size = st.st_size;
    return fd;
}

/* The trailer checksum of an open index file of `size` bytes (its last 8 bytes); 0 when
 * unreadable. */
static uint64_t fd_checksum(int fd, off_t size)
{
    uint64_t sum = 0;
    unsigned char b[8];
    if (size >= 8 && pread(fd, b, 8, size - 8) == 8)
        for (int i = 7; i >= 0; i--)
            sum = sum << 8 | b[i];
    return sum;
}

/* The same by name. */
static uint64_t file_checksum(const char *path)
{
    off_t size = 0;
    int fd = open_regular(path, &size);
    uint64_t sum = fd >= 0 ? fd_checksum(fd, size) : 0;
    if (fd >= 0)
        close(fd);
    return sum;
}

static int read_state(const char *path, uint64_t *sum, int64_t *seq, uint32_t *dim)
{
    char name[4200], text[256], magic[64] = "";
    snprintf(name, sizeof name, "%s.state", path);
    off_t size = 0;
    int fd = open_regular(name, &size);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0)
        return 0;
    text[got] = '\0';
    unsigned long long s = 0;
    long long q = -1;
    unsigned d = 0;
    int ok = sscanf(text, "%63[^\n]\nchecksum %llx\nlog_seq %lld\ndim %u", magic, &s, &q, &d) == 4 &&
             strcmp(magic, STATE_MAGIC) == 0 && q >= 0;
    if (ok) {
        *sum = s;
        *seq = q;
        *dim = d;
    }
    return ok;
}

static mn_status write_state(const char *path, uint64_t sum, int64_t seq, uint32_t dim)
{
    char name[4200], tmp[4300];
    snprintf(name, sizeof name, "%s.state", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", name);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return mn__err(MN_IO, "cannot write %s: %s", tmp, strerror(errno));
    int bad = fprintf(f, "%s\nchecksum %016" PRIx64 "\nlog_seq %" PRId64 "\ndim %u\n", STATE_MAGIC, sum, seq, dim) < 0;
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, name) != 0) {
        int e = errno;
        unlink(tmp);
        return mn__err(MN_IO, "cannot write %s: %s", name, strerror(e));
    }
    return MN_OK;
}

/* Saves ix and its state (lock held by the caller). */
static mn_status save_locked(mn_vsearch *v)
{
    mn_status rc = mn__index_save(v->ix, v->path);
    if (!rc)
        rc = write_state(v->path, file_checksum(v->path), v->applied, v->dim);
    if (!rc) {
        v->saved_at = v->applied;
        v->saved_ms = mn__clock_mono_ns() / 1000000;
    }
    return rc;
}

/* ---- opening the saved file ------------------------------------------------------------------ */

/* Full-precision vectors for an int8 index's re-ranking come from the database. */
static int fetch_vector(void *user, int64_t id, float *out)
{
    mn_vsearch *v = user;
    return v->src.get(v->st, id, out, v->dim) != MN_OK;
}

static void adopt(mn_vsearch *v, mn_index *ix, uint32_t dim, int64_t seq)
{
    mn__index_free(v->ix);
    v->ix = ix;
    mn__index_set_ef_search(ix, v->params.ef_search); /* a saved file keeps its M and ef_construction */
    mn__index_set_source(ix, fetch_vector, v);
    v->dim = dim;
    v->applied = v->saved_at = seq;
}

/* Maps the saved index when its state file matches it and it is newer than `after`; 1 when
 * adopted. Takes no lock: the state names the checksum of the file it belongs to, and a save
 * that slips in between reading the two is seen as a mismatch (tried once more). */
static int map_saved(mn_vsearch *v, int64_t after)
{
    for (int attempt = 0; v->path && attempt < 2; attempt++) {
        uint64_t sum = 0;
        int64_t seq = 0;
        uint32_t dim = 0;
        if (!read_state(v->path, &sum, &seq, &dim) || seq <= after)
            return 0;
        mn_index *ix = NULL;
        mn_status rc = mn__index_map(v->path, &ix);
        if (rc) {
            if (rc != MN_NOTFOUND)
                mn__log(MN_LOG_WARN, "%s: %s; searching the stored vectors exactly until it is rebuilt", v->path,
                        mn_errmsg());
            mn__err_clear();
            return 0;
        }
        struct mn_index_params p;
        mn__index_params_get(ix, &p);
        if (p.dim == dim && file_checksum(v->path) == sum) {
            adopt(v, ix, dim, seq);
            return 1;
        }
        mn__index_free(ix);
    }
    return 0;
}

static void open_saved(mn_vsearch *v)
{
    if (v->opened)
        return;
    v->opened = 1;
    map_saved(v, -1);
}

/* A reader picks up a newer file another process saved (cheap: a mapping), unless this handle
 * has changes of its own that are not saved. */
static void recheck_saved(mn_vsearch *v)
{
    int64_t now = mn__clock_mono_ns() / 1000000;
    if (!v->path || (v->ix && v->applied != v->saved_at) || now - v->checked_ms < RECHECK_MS)
        return;
    v->checked_ms = now;
    map_saved(v, v->ix ? v->applied : -1);
}

/* ---- building and catching up (writers) ------------------------------------------------------ */

struct collect {
    int64_t *ids;
    float *vecs;
    size_t n, cap;
    uint32_t dim;
    mn_status rc;
};

static int collect_vec(void *user, int64_t id, const float *vec, uint32_t dim)
{
    struct collect *c = user;
    if (!c->dim)
        c->dim = dim;
    if (dim != c->dim)
        return 0; /* one identity per database: another dimension is a leftover, skipped */
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4096;
        int64_t *ni = realloc(c->ids, cap * sizeof *ni);
        if (ni)
            c->ids = ni;
        float *nv = ni ? realloc(c->vecs, cap * (size_t)dim * sizeof *nv) : NULL;
        if (!nv) {
            c->rc = mn__nomem();
            return 1;
        }
        c->vecs = nv;
        c->cap = cap;
    }
    c->ids[c->n] = id;
    memcpy(c->vecs + c->n * (size_t)dim, vec, (size_t)dim * sizeof(float));
    c->n++;
    return 0;
}

/* Builds the index from every stored vector, on v->threads cores. */
static mn_status build(mn_vsearch *v)
{
    struct collect c = {NULL, NULL, 0, 0, 0, MN_OK};
    int64_t seq = 0;
    mn_status rc = v->src.scan(v->st, collect_vec, &c, &seq);
    if (!rc)
        rc = c.rc;
    mn_index *ix = NULL;
    if (!rc && c.n) {
        struct mn_index_params p = v->params;
        p.dim = c.dim;
        p.capacity = c.n;
        if (!(rc = mn__index_create(&p, &ix)))
            rc = mn__index_add_batch(ix, c.ids, c.vecs, c.n, v->threads);
        if (!rc)
            mn__index_set_source(ix, fetch_vector, v);
    }
    free(c.ids);
    free(c.vecs);
    if (rc) {
        mn__index_free(ix);
        return rc;
    }
    mn__index_free(v->ix);
    v->ix = ix;
    v->dim = c.dim;
    v->applied = seq;
    return MN_OK;
}

/* Changes are read from the store a batch at a time and applied to the index after the read:
 * the store's lock is held only while a batch is copied. Applying inside the read held it
 * through every HNSW insert of the batch, and the embedder's catch-up after 100,000 queued
 * messages kept session creation and searches waiting 9-115 s. */
enum { CATCH_UP_BATCH = 256 };

struct change_ctx {
    mn_vsearch *v;
    size_t n;
    int64_t ids[CATCH_UP_BATCH];
    unsigned char has[CATCH_UP_BATCH]; /* a vector to add after the removal */
    float *vecs;                       /* CATCH_UP_BATCH x v->dim */
    int64_t last;                      /* the seq of the last change copied */
    int restart;                       /* a vector of another dimension: rebuild */
};

static int copy_change(void *user, int64_t seq, int64_t id, int op, const float *vec, uint32_t dim)
{
    struct change_ctx *c = user;
    if (c->n == CATCH_UP_BATCH)
        return 1; /* read again after this batch is applied */
    int has = op == 1 && vec;
    if (has && dim != c->v->dim) {
        c->restart = 1;
        return 1;
    }
    c->ids[c->n] = id;
    c->has[c->n] = (unsigned char)has;
    if (has)
        memcpy(c->vecs + c->n * c->v->dim, vec, (size_t)dim * sizeof *vec);
    c->n++;
    c->last = seq;
    return 0;
}

static mn_status apply_changes(mn_vsearch *v, const struct change_ctx *c)
{
    for (size_t i = 0; i < c->n; i++) {
        mn_status rc = mn__index_contains(v->ix, c->ids[i]) ? mn__index_remove(v->ix, c->ids[i]) : MN_OK;
        if (!rc && c->has[i])
            rc = mn__index_add(v->ix, c->ids[i], c->vecs + i * v->dim);
        if (rc && rc != MN_INVALID)
            return rc; /* v->applied stays: applied again, a change is a removal and an add */
    }
    if (c->n)
        v->applied = c->last;
    return MN_OK;
}

static mn_status catch_up(mn_vsearch *v, int rebuild)
{
    if (rebuild || !v->ix)
        return build(v);
    struct change_ctx *c = calloc(1, sizeof *c);
    if (!c || !(c->vecs = malloc((size_t)CATCH_UP_BATCH * (v->dim ? v->dim : 1) * sizeof *c->vecs))) {
        free(c);
        return mn__nomem();
    }
    c->v = v;
    mn_status rc = MN_OK;
    do {
        c->n = 0;
        int64_t read_to = v->applied;
        rc = v->src.changes(v->st, v->applied, copy_change, c, &read_to);
        if (!rc)
            rc = apply_changes(v, c);
    } while (!rc && !c->restart && c->n == CATCH_UP_BATCH);
    int restart = c->restart;
    free(c->vecs);
    free(c);
    if (rc == MN_CORRUPT) { /* the mapped file failed its checks when first written: start over */
        mn__log(MN_LOG_WARN, "%s: %s; rebuilding it from the stored vectors", v->path ? v->path : "index",
                mn_errmsg());
        mn__err_clear();
        return build(v);
    }
    if (!rc && restart) /* the stored vectors changed dimension (reindex): start over */
        return build(v);
    return rc;
}

/* Saves the index when it has changes the file lacks. It first applies the change log: a vector
 * erased since (a removal in the log) must not be written out of this process's memory again
 * (docs/erasure.md); a catch-up that fails saves nothing. */
static mn_status save_if_newer(mn_vsearch *v)
{
    if (!v->path || !v->ix || v->applied == v->saved_at)
        return MN_OK;
    int fd = lock_file(v->path); /* before the catch-up: an erasure removes the file under it */
    mn_status crc = catch_up(v, 0);
    if (crc) {
        unlock_file(fd);
        return crc;
    }
    uint64_t sum;
    int64_t seq = -1;
    uint32_t dim;
    mn_status rc = MN_OK;
    /* another process saved a newer index meanwhile: keep it */
    if (!(read_state(v->path, &sum, &seq, &dim) && seq >= v->applied && dim == v->dim && file_checksum(v->path) == sum))
        rc = save_locked(v);
    unlock_file(fd);
    return rc;
}

mn_status mn__vsearch_update(mn_vsearch *v, int rebuild, size_t added)
{
    pthread_mutex_lock(&v->lock);
    open_saved(v);
    int had = v->ix != NULL;
    if (v->ix && added > mn__index_count(v->ix) / 2)
        rebuild = 1; /* many new vectors: one build on every core beats adding them one by one */
    mn_status rc = catch_up(v, rebuild);
    int64_t now = mn__clock_mono_ns() / 1000000;
    if (!rc && v->applied != v->saved_at && (rebuild || !had || now - v->saved_ms >= SAVE_EVERY_MS)) {
        if (save_if_newer(v)) { /* the index in memory is still right; the next save may work */
            mn__log(MN_LOG_WARN, "%s: the vector index was not saved: %s", v->path, mn_errmsg());
            mn__err_clear();
        }
    }
    pthread_mutex_unlock(&v->lock);
    return rc;
}

void mn__vsearch_erase_saved(const char *db_path, const char *suffix)
{
    char path[4200], state[4210];
    if (!db_path || !mn__store_target_local(db_path) ||
        (size_t)snprintf(path, sizeof path, "%s%s", mn__store_target_path(db_path), suffix) >= sizeof path ||
        access(path, F_OK) != 0)
        return;
    snprintf(state, sizeof state, "%s.state", path);
    int fd = lock_file(path); /* a save in another process has caught up before it writes, or waits */
    if (unlink(path) != 0 && errno != ENOENT)
        mn__log(MN_LOG_WARN, "erase: cannot remove %s: %s", path, strerror(errno));
    if (unlink(state) != 0 && errno != ENOENT)
        mn__log(MN_LOG_WARN, "erase: cannot remove %s: %s", state, strerror(errno));
    unlock_file(fd);
}

mn_status mn__vsearch_apply_changes(mn_vsearch *v)
{
    pthread_mutex_lock(&v->lock);
    mn_status rc = v->ix ? catch_up(v, 0) : MN_OK; /* nothing loaded: nothing to erase from memory */
    pthread_mutex_unlock(&v->lock);
    return rc;
}

mn_status mn__vsearch_copy_saved(const char *db_path, const char *suffix, const char *to, int *copied)
{
    *copied = 0;
    char path[4200], out[4200];
    if (!db_path || !mn__store_target_local(db_path))
        return MN_OK;
    if ((size_t)snprintf(path, sizeof path, "%s%s", mn__store_target_path(db_path), suffix) >= sizeof path ||
        (size_t)snprintf(out, sizeof out, "%s%s", to, suffix) >= sizeof out)
        return mn__err(MN_INVALID, "backup: the path of %s%s is too long", to, suffix);
    /* a save that slips in between reading the state and opening the file is seen as a
     * mismatch: read both again (as map_saved does) */
    for (int attempt = 0; attempt < 3; attempt++) {
        uint64_t sum = 0;
        int64_t seq = 0;
        uint32_t dim = 0;
        off_t size = 0;
        if (!read_state(path, &sum, &seq, &dim))
            return MN_OK;
        int fd = open_regular(path, &size);
        if (fd < 0)
            return MN_OK;
        if (fd_checksum(fd, size) != sum) {
            close(fd);
            continue;
        }
        mn_status rc = mn__file_copy(fd, out);
        close(fd);
        if (!rc)
            rc = write_state(out, sum, seq, dim);
        *copied = rc == MN_OK;
        return rc;
    }
    return MN_OK;
}

size_t mn__vsearch_count(mn_vsearch *v)
{
    pthread_mutex_lock(&v->lock);
    size_t n = v->ix ? mn__index_count(v->ix) : 0;
    pthread_mutex_unlock(&v->lock);
    return n;
}

/* ---- queries --------------------------------------------------------------------------------- */

struct idset {
    int64_t *ids;
    size_t n, cap;
    int oom;
};

static int collect_id(void *user, int64_t id, double score)
{
    (void)score;
    struct idset *s = user;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        int64_t *n = realloc(s->ids, cap * sizeof *n);
        if (!n) {
            s->oom = 1;
            return 1;
        }
        s->ids = n;
        s->cap = cap;
    }
    s->ids[s->n++] = id;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int in_sorted(const struct idset *s, int64_t id)
{
    return bsearch(&id, s->ids, s->n, sizeof id, cmp_i64) != NULL;
}

/* Ids as a set: open addressing, linear probing, 0 marks an empty slot (ids are positive). */
struct hashset {
    int64_t *keys;
    size_t cap, n;
};

static size_t hs_slot(const struct hashset *h, int64_t id)
{
    uint64_t x = (uint64_t)id * 0x9e3779b97f4a7c15ull;
    return (size_t)(x ^ (x >> 29)) & (h->cap - 1);
}

static int hs_has(const struct hashset *h, int64_t id)
{
    if (!h->cap)
        return 0;
    for (size_t i = hs_slot(h, id); h->keys[i]; i = (i + 1) & (h->cap - 1))
        if (h->keys[i] == id)
            return 1;
    return 0;
}

/* Adds id; 1 when new, 0 when present, -1 out of memory. */
static int hs_add(struct hashset *h, int64_t id)
{
    if (2 * (h->n + 1) > h->cap) {
        struct hashset g = {NULL, h->cap ? 2 * h->cap : 1024, 0};
        if (!(g.keys = calloc(g.cap, sizeof *g.keys)))
            return -1;
        for (size_t i = 0; i < h->cap; i++)
            if (h->keys[i])
                hs_add(&g, h->keys[i]);
        free(h->keys);
        *h = g;
    }
    size_t i = hs_slot(h, id);
    for (; h->keys[i]; i = (i + 1) & (h->cap - 1))
        if (h->keys[i] == id)
            return 0;
    h->keys[i] = id;
    h->n++;
    return 1;
}


/* Hits are ordered best first, ties by smaller id. */
static int worse(const struct mn_index_hit *a, const struct mn_index_hit *b)
{
    return a->score < b->score || (a->score == b->score && a->id > b->id);
}

static int hit_cmp(const void *pa, const void *pb)
{
    const struct mn_index_hit *a = pa, *b = pb;
    return worse(a, b) ? 1 : worse(b, a) ? -1 : 0;
}

/* The exact scan of the vectors past the index: the k best in a heap whose top is the worst. */
struct tail {
    const float *q; /* unit query */
    uint32_t dim;
    size_t k;
    const struct idset *filter; /* sorted ids passing the filter, or NULL */
    struct hashset seen;        /* every id met: hidden from the index's answer */
    struct mn_index_hit *heap;
    size_t nheap;
    size_t rows, scanned;
    uint32_t other_dim; /* a stored vector of another dimension */
    int truncated, oom;
};

static void heap_push(struct tail *t, struct mn_index_hit h)
{
    struct mn_index_hit *a = t->heap;
    if (t->nheap == t->k) {
        if (!worse(&a[0], &h))
            return;
        size_t i = 0; /* replace the worst, sift down */
        for (;;) {
            size_t l = 2 * i + 1, r = l + 1, m = i;
            const struct mn_index_hit *cur = m == i ? &h : &a[m];
            if (l < t->nheap && worse(&a[l], cur))
                m = l;
            if (r < t->nheap && worse(&a[r], m == i ? &h : &a[m]))
                m = r;
            if (m == i)
                break;
            a[i] = a[m];
            i = m;
        }
        a[i] = h;
        return;
    }
    size_t i = t->nheap++;
    while (i > 0 && worse(&h, &a[(i - 1) / 2])) {
        a[i] = a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    a[i] = h;
}

static int tail_vec(void *user, int64_t id, const float *vec, uint32_t dim)
{
    struct tail *t = user;
    if (++t->rows > TAIL_MAX) {
        t->truncated = 1;
        return 1;
    }
    int fresh = hs_add(&t->seen, id);
    if (fresh < 0) {
        t->oom = 1;
        return 1;
    }
    if (!fresh || !vec) /* a later row of the same id carries the same (current) vector */
        return 0;
    if (dim != t->dim) {
        t->other_dim = dim;
        return 0;
    }
    if (t->filter && !in_sorted(t->filter, id))
        return 0;
    double dot = 0, norm = 0;
    for (uint32_t i = 0; i < dim; i++) {
        dot += (double)t->q[i] * vec[i];
        norm += (double)vec[i] * vec[i];
    }
    t->scanned++;
    if (norm > 0) {
        struct mn_index_hit h = {id, (float)(dot / sqrt(norm))};
        heap_push(t, h);
    }
    return 0;
}

static int tail_change(void *user, int64_t seq, int64_t id, int op, const float *vec, uint32_t dim)
{
    (void)seq;
    (void)op;
    return tail_vec(user, id, vec, dim);
}

struct accept_ctx {
    const struct hashset *hidden;
    const struct idset *filter; /* sorted, or NULL */
};

static int accept_id(void *user, int64_t id)
{
    const struct accept_ctx *a = user;
    return !hs_has(a->hidden, id) && (!a->filter || in_sorted(a->filter, id));
}

int mn__vsearch_ready(mn_vsearch *v)
{
    pthread_mutex_lock(&v->lock);
    if (!v->opened)
        open_saved(v);
    else
        recheck_saved(v);
    int ready = v->ix != NULL;
    pthread_mutex_unlock(&v->lock);
    return ready;
}

mn_status mn__vsearch_query_ids(mn_vsearch *v, const float *q, uint32_t dim, size_t k, mn_vfilter_fn filter,
                               void *filter_arg, struct mn_index_hit *hits, size_t *n, struct mn_vsearch_info *info)
{
    *n = 0;
    struct mn_vsearch_info inf = {0, 0, 0};
    pthread_mutex_lock(&v->lock);
    if (!v->opened)
        open_saved(v);
    else
        recheck_saved(v);
    mn_status rc = MN_OK;
    if (v->ix && dim != v->dim)
        rc = mn__err(MN_CONFLICT, "the query has %u dimensions, the stored vectors %u (mnemo reindex --embeddings)",
                     dim, v->dim);
    struct idset set = {NULL, 0, 0, 0};
    if (!rc && filter) {
        rc = filter(filter_arg, collect_id, &set);
        if (!rc && set.oom)
            rc = mn__nomem();
        if (!rc && set.n)
            qsort(set.ids, set.n, sizeof *set.ids, cmp_i64);
    }
    float *qn = malloc((size_t)dim * sizeof *qn);
    struct tail t = {qn, dim, k, filter ? &set : NULL, {NULL, 0, 0}, calloc(k ? k : 1, sizeof *hits), 0, 0, 0,
                     0, 0, 0};
    if (!rc && (!qn || !t.heap))
        rc = mn__nomem();
    if (!rc) {
        double norm = 0;
        for (uint32_t i = 0; i < dim; i++)
            norm += (double)q[i] * q[i];
        for (uint32_t i = 0; i < dim; i++)
            qn[i] = norm > 0 ? (float)(q[i] / sqrt(norm)) : 0;
    }
    /* the vectors the index does not reflect: everything when there is none */
    if (!rc && (!filter || set.n)) {
        int64_t last = 0;
        if (v->ix)
            rc = v->src.changes(v->st, v->applied, tail_change, &t, &last);
        else
            rc = v->src.scan(v->st, tail_vec, &t, &last);
        if (!rc && t.oom)
            rc = mn__nomem();
        if (!rc && !v->ix && t.other_dim && !t.scanned)
            rc = mn__err(MN_CONFLICT, "the query has %u dimensions, the stored vectors %u (mnemo reindex --embeddings)",
                         dim, t.other_dim);
    }
    size_t m = 0;
    if (!rc && v->ix && (!filter || set.n)) {
        struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
        struct accept_ctx ac = {&t.seen, NULL};
        size_t live = mn__index_count(v->ix);
        if (filter && set.n <= EXACT_CANDIDATES) {
            o.candidates = set.ids;
            o.n_candidates = set.n;
        } else if (filter) {
            ac.filter = &set;
            o.n_accept_hint = set.n;
        } else if (t.seen.n) {
            o.n_accept_hint = live > t.seen.n ? live - t.seen.n : 1;
        }
        if (ac.filter || t.seen.n) {
            o.accept = accept_id;
            o.user = &ac;
        }
        rc = mn__index_search(v->ix, q, k, &o, hits, &m);
        inf.indexed = live;
    }
    if (!rc) { /* merge the index's hits and the tail's (disjoint: changed ids were hidden) */
        size_t total = m + t.nheap;
        struct mn_index_hit *all = malloc((total + 1) * sizeof *all);
        if (!all) {
            rc = mn__nomem();
        } else {
            memcpy(all, hits, m * sizeof *all);
            memcpy(all + m, t.heap, t.nheap * sizeof *all);
            qsort(all, total, sizeof *all, hit_cmp);
            *n = total < k ? total : k;
            memcpy(hits, all, *n * sizeof *all);
            free(all);
        }
        inf.scanned = t.scanned;
        inf.truncated = t.truncated;
    }
    free(t.seen.keys);
    free(t.heap);
    free(qn);
    free(set.ids);
    pthread_mutex_unlock(&v->lock);
    if (info)
        *info = inf;
    return rc;
}

/* Messages: the store's search filter. */
struct msg_filter {
    mn_store *st;
    const mn_search_filter *f;
};

static mn_status msg_filter_ids(void *arg, mn_store_score_fn fn, void *user)
{
    struct msg_filter *m = arg;
    return m->st->ops->search->vec_filter(m->st, m->f, fn, user);
}

mn_status mn__vsearch_query(mn_vsearch *v, const float *q, uint32_t dim, size_t k, const mn_search_filter *f,
                           struct mn_index_hit *hits, size_t *n, struct mn_vsearch_info *info)
{
    int filtering = f && (f->session_id || f->ns || f->role >= 0 || f->since || f->until || f->metadata);
    struct msg_filter m = {v->st, f};
    return mn__vsearch_query_ids(v, q, dim, k, filtering ? msg_filter_ids : NULL, &m, hits, n, info);
}

/* ---- saving ---------------------------------------------------------------------------------- */

mn_status mn__vsearch_save(mn_vsearch *v)
{
    pthread_mutex_lock(&v->lock);
    mn_status rc = save_if_newer(v);
    pthread_mutex_unlock(&v->lock);
    return rc;
}

void mn__vsearch_free(mn_vsearch *v)
{
    if (!v)
        return;
    if (save_if_newer(v)) {
        mn__log(MN_LOG_WARN, "%s: the vector index was not saved (the next writer saves it): %s", v->path,
                mn_errmsg());
        mn__err_clear();
    }
    mn__index_free(v->ix);
    pthread_mutex_destroy(&v->lock);
    free(v->path);
    free(v);
}
