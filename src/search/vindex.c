/*
 * vindex.c — the per-handle vector index over the stored vectors. The database is the truth;
 * "<db>.hnsw" is a cache with a small state file "<db>.hnsw.state" naming the embed_log
 * position it reflects and the checksum of the index file it belongs to. Opening loads both
 * (or rebuilds from the stored vectors), every query first applies the embed_log entries past
 * that position (other processes' writes included), and closing saves when the index moved on.
 * Saves and rebuilds hold an exclusive lock on "<db>.hnsw.lock" so that two processes never
 * pair one's index file with the other's state.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "search/search.h"
#include "store/store_search.h"
#include "util/err.h"
#include "util/banned.h"

#define STATE_MAGIC "mnemo-index-state 1"
#define EXACT_CANDIDATES 50000 /* filters passing at most this many ids hand them over as candidates */

struct mn_vsearch {
    pthread_mutex_t lock;
    mn_store *st;
    struct mn_index_params params; /* for new indexes; ef_search for every search */
    char *path; /* NULL: in memory only */
    mn_index *ix;
    uint32_t dim;
    int loaded;        /* a load or rebuild happened */
    int64_t applied;   /* embed_log position reflected by ix */
    int64_t saved_at;  /* applied when last loaded/saved (-1: never) */
};

mn_status mn_vsearch_new(mn_store *st, const char *db_path, const struct mn_index_params *params, mn_vsearch **out)
{
    *out = NULL;
    mn_vsearch *v = calloc(1, sizeof *v);
    if (!v)
        return mn__nomem();
    v->st = st;
    v->params = *params;
    v->saved_at = -1;
    /* a database URL (PostgreSQL) has no file to keep the index beside: memory only, rebuilt
     * from the stored vectors when the handle opens */
    if (db_path && *db_path && strcmp(db_path, ":memory:") != 0 && strncmp(db_path, "file:", 5) != 0 &&
        !strstr(db_path, "://")) {
        size_t n = strlen(db_path) + 8;
        if (!(v->path = malloc(n))) {
            free(v);
            return mn__nomem();
        }
        snprintf(v->path, n, "%s.hnsw", db_path);
    }
    pthread_mutex_init(&v->lock, NULL);
    *out = v;
    return MN_OK;
}

/* ---- the lock file and the state file -------------------------------------------------------- */

static int lock_file(const char *path)
{
    char name[4200];
    snprintf(name, sizeof name, "%s.lock", path);
    int fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
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

/* The trailer checksum of an index file (its last 8 bytes); 0 when unreadable. */
static uint64_t file_checksum(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint64_t sum = 0;
    unsigned char b[8];
    if (f && fseek(f, -8, SEEK_END) == 0 && fread(b, 1, 8, f) == 8)
        for (int i = 7; i >= 0; i--)
            sum = sum << 8 | b[i];
    if (f)
        fclose(f);
    return sum;
}

static int read_state(const char *path, uint64_t *sum, int64_t *seq, uint32_t *dim)
{
    char name[4200], magic[64] = "";
    snprintf(name, sizeof name, "%s.state", path);
    FILE *f = fopen(name, "r");
    if (!f)
        return 0;
    unsigned long long s = 0;
    long long q = -1;
    unsigned d = 0;
    int ok = fscanf(f, "%63[^\n]\nchecksum %llx\nlog_seq %lld\ndim %u", magic, &s, &q, &d) == 4 &&
             strcmp(magic, STATE_MAGIC) == 0 && q >= 0;
    fclose(f);
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
    mn_status rc = mn_index_save(v->ix, v->path);
    if (!rc)
        rc = write_state(v->path, file_checksum(v->path), v->applied, v->dim);
    if (!rc)
        v->saved_at = v->applied;
    return rc;
}

/* ---- building -------------------------------------------------------------------------------- */

/* Full-precision vectors for an int8 index's re-ranking come from the database. */
static int fetch_vector(void *user, int64_t id, float *out)
{
    mn_vsearch *v = user;
    return v->st->ops->search->vec_get(v->st, id, out, v->dim) != MN_OK;
}

static mn_status new_index(mn_vsearch *v, uint32_t dim, mn_index **out)
{
    struct mn_index_params p = v->params;
    p.dim = dim;
    mn_status rc = mn_index_create(&p, out);
    if (!rc)
        mn_index_set_source(*out, fetch_vector, v);
    return rc;
}

struct scan_ctx {
    mn_vsearch *v;
    mn_status rc;
};

static int scan_add(void *user, int64_t id, const float *vec, uint32_t dim)
{
    struct scan_ctx *c = user;
    if (!c->v->ix) {
        c->v->dim = dim;
        if ((c->rc = new_index(c->v, dim, &c->v->ix)))
            return 1;
    }
    if (dim != c->v->dim)
        return 0; /* one identity per database: another dimension is a leftover, skipped */
    mn_status rc = mn_index_add(c->v->ix, id, vec);
    if (rc && rc != MN_INVALID) { /* a zero vector is never stored; anything else stops */
        c->rc = rc;
        return 1;
    }
    return 0;
}

static mn_status rebuild(mn_vsearch *v)
{
    mn_index_free(v->ix);
    v->ix = NULL;
    v->dim = 0;
    struct scan_ctx c = {v, MN_OK};
    int64_t seq = 0;
    mn_status rc = v->st->ops->search->vec_scan(v->st, scan_add, &c, &seq);
    if (!rc)
        rc = c.rc;
    if (rc) {
        mn_index_free(v->ix);
        v->ix = NULL;
        return rc;
    }
    v->applied = seq;
    v->loaded = 1;
    return MN_OK;
}

/* Loads the file when its state matches it, else rebuilds and saves. */
static mn_status load_or_rebuild(mn_vsearch *v, const char **info)
{
    if (!v->path) {
        *info = "rebuilt";
        return rebuild(v);
    }
    int fd = lock_file(v->path);
    uint64_t sum = 0;
    int64_t seq = 0;
    uint32_t dim = 0;
    mn_status rc = MN_OK;
    int have_state = read_state(v->path, &sum, &seq, &dim);
    mn_index *ix = NULL;
    mn_status lrc = have_state ? mn_index_load(v->path, &ix) : MN_NOTFOUND;
    struct mn_index_params p;
    if (!lrc)
        mn_index_params_get(ix, &p);
    if (!lrc && p.dim == dim && file_checksum(v->path) == sum) {
        v->ix = ix;
        mn_index_set_ef_search(ix, v->params.ef_search); /* a loaded file keeps its M and ef_construction */
        mn_index_set_source(ix, fetch_vector, v);
        v->dim = dim;
        v->applied = v->saved_at = seq;
        v->loaded = 1;
        *info = "loaded";
    } else {
        mn_index_free(ix);
        if (lrc == MN_CORRUPT || (!lrc && have_state))
            mn__log(MN_LOG_WARN, "%s: %s; rebuilding it from the stored vectors", v->path,
                    lrc ? mn_errmsg() : "the index does not match its state file");
        else if (lrc == MN_IO)
            mn__log(MN_LOG_WARN, "%s: %s; rebuilding it in memory", v->path, mn_errmsg());
        mn__err_clear();
        *info = "rebuilt";
        rc = rebuild(v);
        if (!rc && v->ix) {
            mn_status src = save_locked(v);
            if (src)
                mn__log(MN_LOG_WARN, "%s: the rebuilt index was not saved: %s", v->path, mn_errmsg());
            mn__err_clear();
        }
    }
    unlock_file(fd);
    return rc;
}

/* ---- catching up ----------------------------------------------------------------------------- */

struct change_ctx {
    mn_vsearch *v;
    mn_status rc;
    int restart; /* a vector of another dimension: rebuild */
};

static int apply_change(void *user, int64_t seq, int64_t id, int op, const float *vec, uint32_t dim)
{
    struct change_ctx *c = user;
    mn_vsearch *v = c->v;
    if (v->ix && mn_index_contains(v->ix, id) && (c->rc = mn_index_remove(v->ix, id)))
        return 1;
    if (op == 1 && vec) {
        if (v->ix && dim != v->dim) {
            c->restart = 1;
            return 1;
        }
        if (!v->ix) {
            v->dim = dim;
            if ((c->rc = new_index(v, dim, &v->ix)))
                return 1;
        }
        mn_status rc = mn_index_add(v->ix, id, vec);
        if (rc && rc != MN_INVALID) {
            c->rc = rc;
            return 1;
        }
    }
    return 0;
}

static mn_status sync_locked(mn_vsearch *v, const char **info)
{
    const char *what = "current";
    mn_status rc = MN_OK;
    if (!v->loaded && (rc = load_or_rebuild(v, &what)))
        return rc;
    for (int round = 0; round < 2; round++) {
        struct change_ctx c = {v, MN_OK, 0};
        int64_t last = v->applied;
        rc = v->st->ops->search->vec_changes(v->st, v->applied, apply_change, &c, &last);
        v->applied = last;
        if (!rc)
            rc = c.rc;
        if (rc || !c.restart)
            break;
        what = "rebuilt"; /* the stored vectors changed dimension (reindex): start over */
        if ((rc = rebuild(v)))
            break;
    }
    if (info)
        *info = what;
    return rc;
}

mn_status mn_vsearch_sync(mn_vsearch *v, const char **info)
{
    pthread_mutex_lock(&v->lock);
    mn_status rc = sync_locked(v, info);
    pthread_mutex_unlock(&v->lock);
    return rc;
}

size_t mn_vsearch_count(mn_vsearch *v)
{
    pthread_mutex_lock(&v->lock);
    size_t n = v->ix ? mn_index_count(v->ix) : 0;
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

static int accept_sorted(void *user, int64_t id)
{
    const struct idset *s = user;
    return bsearch(&id, s->ids, s->n, sizeof id, cmp_i64) != NULL;
}

static int filtering(const mn_search_filter *f)
{
    return f && (f->session_id || f->ns || f->role >= 0 || f->since || f->until);
}

mn_status mn_vsearch_query(mn_vsearch *v, const float *q, uint32_t dim, size_t k, const mn_search_filter *f,
                           struct mn_index_hit *hits, size_t *n)
{
    *n = 0;
    pthread_mutex_lock(&v->lock);
    mn_status rc = sync_locked(v, NULL);
    if (!rc && v->ix && dim != v->dim)
        rc = mn__err(MN_CONFLICT, "the query has %u dimensions, the stored vectors %u (mnemo reindex --embeddings)",
                     dim, v->dim);
    struct idset set = {NULL, 0, 0, 0};
    if (!rc && v->ix && filtering(f)) {
        rc = v->st->ops->search->vec_filter(v->st, f, collect_id, &set);
        if (!rc && set.oom)
            rc = mn__nomem();
    }
    if (!rc && v->ix && (!filtering(f) || set.n)) {
        struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
        if (filtering(f) && set.n <= EXACT_CANDIDATES) {
            o.candidates = set.ids;
            o.n_candidates = set.n;
        } else if (filtering(f)) {
            qsort(set.ids, set.n, sizeof *set.ids, cmp_i64);
            o.accept = accept_sorted;
            o.user = &set;
            o.n_accept_hint = set.n;
        }
        rc = mn_index_search(v->ix, q, k, &o, hits, n);
    }
    free(set.ids);
    pthread_mutex_unlock(&v->lock);
    return rc;
}

/* ---- saving ---------------------------------------------------------------------------------- */

static mn_status save_if_newer(mn_vsearch *v)
{
    if (!v->path || !v->ix || v->applied == v->saved_at)
        return MN_OK;
    int fd = lock_file(v->path);
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

mn_status mn_vsearch_save(mn_vsearch *v)
{
    pthread_mutex_lock(&v->lock);
    mn_status rc = save_if_newer(v);
    pthread_mutex_unlock(&v->lock);
    return rc;
}

void mn_vsearch_free(mn_vsearch *v)
{
    if (!v)
        return;
    if (save_if_newer(v)) {
        mn__log(MN_LOG_WARN, "%s: the vector index was not saved (it is rebuilt on next use): %s", v->path,
                mn_errmsg());
        mn__err_clear();
    }
    mn_index_free(v->ix);
    pthread_mutex_destroy(&v->lock);
    free(v->path);
    free(v);
}
