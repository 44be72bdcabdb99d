/*
 * migrate.c — mn_migrate: copies one database into another (SQLite ↔ PostgreSQL, or the same
 * backend twice) through the store operations only: sessions and messages in one import
 * transaction, then each session's summary, events, state and checkpoints, then the meta keys,
 * the stored vectors, the long-term memories and the documents.
 * What moves and what does not: docs/scale-out.md ("Moving data") and docs/cli.md (migrate).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/engine.h"
#include "config/config.h"
#include "store/store_search.h"
#include "store/target.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

#define PROGRESS_EVERY 500
#define VEC_BATCH 256
#define EVENTS_MAX 1000000

/* A SQLite target as its file path (without sqlite: or sqlite://); PostgreSQL as it is. */
static const char *strip_scheme(const char *target)
{
    const char *path = mn__store_target_path(target);
    return path ? path : target;
}

/* The target for messages, its secrets as *** (target.h). */
static void masked(const char *t, char *out, size_t cap)
{
    char *m = mn__store_target_mask(t);
    snprintf(out, cap, "%s", m ? m : "(the database)");
    free(m);
}

struct copy {
    mn_db *src, *dst;
    mn_status rc;
    mn_import_stats st;
    int64_t done, total;
    mn_progress_fn progress;
    void *user;
    char (*ids)[MN_UUID_LEN + 1]; /* every source session, for the second pass */
    size_t n_ids, cap_ids;
    struct mn__import_rows rows;
};

static void tick(struct copy *c, int force)
{
    c->done++;
    if (c->progress && (force || c->done % PROGRESS_EVERY == 0))
        c->progress(c->user, c->done, c->total);
}

static int on_session(void *user, const mn_session *s)
{
    struct copy *c = user;
    int added = 0;
    if (c->n_ids == c->cap_ids) {
        size_t cap = c->cap_ids ? c->cap_ids * 2 : 64;
        void *n = realloc(c->ids, cap * sizeof *c->ids);
        if (!n) {
            c->rc = mn__nomem();
            return 1;
        }
        c->ids = n;
        c->cap_ids = cap;
    }
    snprintf(c->ids[c->n_ids++], MN_UUID_LEN + 1, "%s", s->id);
    c->rc = mn__import_session_row(c->dst->store, &c->rows, s, &added);
    if (c->rc)
        c->rc = mn__err(c->rc, "migrate: session %s: %s", s->id, mn_errmsg());
    c->st.sessions_added += added;
    c->st.sessions_skipped += !added;
    tick(c, 0);
    return c->rc != MN_OK;
}

static int on_message(void *user, const mn_message *m)
{
    struct copy *c = user;
    int added = 0;
    c->rc = mn__import_message_row(c->dst->store, &c->rows, m, &added);
    if (c->rc)
        c->rc = mn__err(c->rc, "migrate: message %lld of session %s: %s", (long long)m->id, m->session_id,
                        mn_errmsg());
    c->st.messages_added += added;
    c->st.messages_skipped += !added;
    tick(c, 0);
    return c->rc != MN_OK;
}

/* ---- per-session records: copied when the destination session has none of that kind ------------- */

struct event {
    char *kind, *data;
    int64_t at;
};
struct events {
    struct event *items;
    size_t n, cap;
    int failed;
};

static int collect_event(void *user, int64_t id, const char *kind, const char *data, int64_t at)
{
    struct events *e = user;
    (void)id;
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 16;
        void *n = realloc(e->items, cap * sizeof *e->items);
        if (!n) {
            e->failed = 1;
            return 1;
        }
        e->items = n;
        e->cap = cap;
    }
    struct event *ev = &e->items[e->n];
    ev->kind = strdup(kind ? kind : "");
    ev->data = strdup(data ? data : "{}");
    ev->at = at;
    e->n++;
    if (!ev->kind || !ev->data) {
        e->failed = 1;
        return 1;
    }
    return 0;
}

static void events_release(struct events *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->items[i].kind);
        free(e->items[i].data);
    }
    free(e->items);
}

static mn_status copy_events(struct copy *c, const char *sid)
{
    struct events have = {NULL, 0, 0, 0}, src = {NULL, 0, 0, 0};
    mn_status rc = c->dst->store->ops->events_list(c->dst->store, sid, 1, collect_event, &have);
    if (!rc && have.n == 0)
        rc = c->src->store->ops->events_list(c->src->store, sid, EVENTS_MAX, collect_event, &src);
    if (!rc && (have.failed || src.failed))
        rc = mn__nomem();
    for (size_t i = src.n; i > 0 && !rc && have.n == 0; i--) { /* newest first: insert oldest first */
        struct event *ev = &src.items[i - 1];
        rc = c->dst->store->ops->event_insert(c->dst->store, sid, ev->kind, ev->data, ev->at);
    }
    events_release(&have);
    events_release(&src);
    return rc;
}

static mn_status copy_summary(struct copy *c, const char *sid)
{
    mn_summary *have = NULL, *s = NULL;
    mn_status rc = c->dst->store->ops->summary_latest(c->dst->store, sid, &have);
    mn_summary_free(have);
    if (rc != MN_NOTFOUND)
        return rc; /* the destination has one (kept), or a real error */
    rc = c->src->store->ops->summary_latest(c->src->store, sid, &s);
    if (rc == MN_NOTFOUND) {
        mn__err_clear();
        return MN_OK;
    }
    if (!rc)
        rc = c->dst->store->ops->summary_insert(c->dst->store, sid, s, NULL);
    mn_summary_free(s);
    return rc;
}

static mn_status keep_or_take(void *user, const char *current, char **next)
{
    *next = strdup(current ? current : (const char *)user);
    return *next ? MN_OK : mn__nomem();
}

static mn_status copy_state(struct copy *c, const char *sid)
{
    char *have = NULL, *s = NULL;
    mn_status rc = c->dst->store->ops->state_get(c->dst->store, sid, &have);
    if (!rc && !have)
        rc = c->src->store->ops->state_get(c->src->store, sid, &s);
    if (!rc && !have && s)
        rc = c->dst->store->ops->state_update(c->dst->store, sid, keep_or_take, s);
    free(have);
    free(s);
    return rc;
}

/* ---- vectors (only into a destination that was empty: message ids are then the source's) ------ */

struct vecs {
    struct copy *c;
    const char *embedder, *model;
    uint32_t dim;
    int64_t ids[VEC_BATCH];
    float *buf;
    size_t n;
    int64_t moved;
    mn_status rc;
};

static mn_status vec_flush(struct vecs *v)
{
    if (!v->n)
        return MN_OK;
    mn_status rc = v->c->dst->store->ops->search->vec_put(v->c->dst->store, v->ids, v->n, v->buf, NULL, v->dim,
                                                          v->embedder, v->model, mn__clock_now_ms());
    v->moved += (int64_t)v->n;
    v->n = 0;
    return rc;
}

static int on_vector(void *user, int64_t id, const float *vec, uint32_t dim)
{
    struct vecs *v = user;
    if (dim != v->dim) /* rows of another dimension are not searchable anyway: leave them */
        return 0;
    v->ids[v->n] = id;
    memcpy(v->buf + v->n * dim, vec, dim * sizeof *vec);
    if (++v->n == VEC_BATCH)
        v->rc = vec_flush(v);
    return v->rc != MN_OK;
}

/* "embedder/model/dim" → parts (model may itself contain '/'). */
static mn_status copy_vectors(struct copy *c)
{
    char *ident = NULL;
    mn_status rc = c->src->store->ops->meta_get(c->src->store, "embed.identity", &ident);
    if (rc || !ident)
        return rc;
    char *first = strchr(ident, '/'), *last = strrchr(ident, '/');
    char *end = NULL;
    unsigned long dim = last ? strtoul(last + 1, &end, 10) : 0;
    if (!first || first == last || !end || *end || dim == 0 || dim > 65536) {
        rc = mn__err(MN_CORRUPT, "migrate: the source's embed.identity '%s' is not embedder/model/dim", ident);
        free(ident);
        return rc;
    }
    *first = *last = '\0';
    struct vecs v = {c, ident, first + 1, (uint32_t)dim, {0}, malloc((size_t)VEC_BATCH * dim * sizeof(float)), 0, 0,
                     MN_OK};
    if (!v.buf)
        rc = mn__nomem();
    int64_t log_seq = 0;
    if (!rc)
        rc = c->src->store->ops->search->vec_scan(c->src->store, on_vector, &v, &log_seq);
    if (!rc)
        rc = v.rc;
    if (!rc)
        rc = vec_flush(&v);
    free(v.buf);
    free(ident);
    return rc;
}

static mn_status copy_meta(struct copy *c)
{
    char *tk = NULL, *queue = NULL;
    mn_status rc = c->src->store->ops->meta_get(c->src->store, "tokenizer", &tk);
    if (!rc && tk) /* the stored token counts are the source's: say which tokenizer made them */
        rc = c->dst->store->ops->meta_set(c->dst->store, "tokenizer", tk);
    if (!rc)
        rc = c->src->store->ops->meta_get(c->src->store, "embed.queue", &queue);
    if (!rc && queue && strcmp(queue, "1") == 0)
        rc = c->dst->store->ops->search->queue_enable(c->dst->store, 1);
    free(tk);
    free(queue);
    char *optin = NULL; /* a session opted in to background extraction (docs/memory.md) */
    if (!rc)
        rc = c->src->store->ops->meta_get(c->src->store, "memory.extract.optin", &optin);
    if (!rc && optin && strcmp(optin, "1") == 0)
        rc = c->dst->store->ops->meta_set(c->dst->store, "memory.extract.optin", "1");
    free(optin);
    return rc;
}

/* The SQLite file header (sqlite.org/fileformat.html): a magic string, then the user_version
 * (mnemo's schema version) at byte 60 and the application_id at byte 68, both big-endian. */
#define SQLITE_HEADER_BYTES 100
#define SQLITE_MAGIC "SQLite format 3"
#define MNEMO_APPLICATION_ID 0x6D6E656DUL /* "mnem", as src/store/sqlite/schema.h sets it */

static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}

/* What the refusal of an older or foreign source adds when a -wal file is beside it: a process
 * that has the database open may hold newer pages there than the header shows. */
static const char *wal_hint(const char *path)
{
    char wal[4096];
    struct stat sb;
    if (snprintf(wal, sizeof wal, "%s-wal", path) < (int)sizeof wal && stat(wal, &sb) == 0 && sb.st_size > 0)
        return " (read from its header; a process that has it open may hold newer pages in its -wal file:"
               " stop it and try again)";
    return "";
}

/* A migration only reads its source, but opening a SQLite file migrates an older schema and gives
 * an empty file (or an empty SQLite database) a schema. So the source's header is read first,
 * without SQLite, and such a source is refused: the user upgrades it, or a copy, on purpose.
 * A file that is not SQLite at all is left to mn_open_path, which refuses it without writing. */
static mn_status check_source_file(const char *path)
{
    unsigned char h[SQLITE_HEADER_BYTES];
    FILE *f = fopen(path, "rb");
    if (!f)
        return mn__err(errno == ENOENT ? MN_NOTFOUND : MN_IO, "migrate: cannot read %s: %s", path, strerror(errno));
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    if (n == 0)
        return mn__err(MN_CORRUPT, "migrate: %s is an empty file, not a mnemo database", path);
    if (n < sizeof h || memcmp(h, SQLITE_MAGIC, sizeof SQLITE_MAGIC) != 0)
        return MN_OK;
    unsigned long version = be32(h + 60);
    if (be32(h + 68) != MNEMO_APPLICATION_ID)
        return mn__err(MN_CORRUPT, "migrate: %s is not a mnemo database%s", path, wal_hint(path));
    if (version < (unsigned long)MN_SCHEMA_VERSION_SQLITE)
        return mn__err(MN_INVALID,
                       "migrate: %s has schema version %lu, older than this mnemo's %d, and a migration only reads"
                       " its source: upgrade it first (mnemo --db %s upgrade), or a copy of it%s",
                       path, version, MN_SCHEMA_VERSION_SQLITE, path, wal_hint(path));
    return MN_OK;
}

/* is_source: the database must exist, and is only read. */
static mn_status open_side(const char *target, const mn_config *cfg, int is_source, mn_db **out)
{
    *out = NULL;
    if (!*target)
        return mn__err(MN_INVALID, "migrate: an empty database name");
    struct stat sb;
    mn_status rc;
    if (is_source && mn__store_target_kind(target) == MN_TARGET_SQLITE) {
        if (stat(target, &sb) != 0)
            return mn__err(errno == ENOENT ? MN_NOTFOUND : MN_IO, "migrate: no database at %s: %s", target,
                           strerror(errno));
        if ((rc = check_source_file(target)))
            return rc;
    }
    /* No embedder while migrating: opening must not queue or embed anything on either side. */
    mn_config *copy = NULL;
    rc = cfg ? mn__config_copy(cfg, &copy) : mn_config_new(&copy);
    if (!rc)
        rc = mn_config_set(copy, "embedder.name", "none", "migrate");
    if (!rc)
        rc = mn__open_db(target, copy, out);
    mn_config_free(copy);
    return rc;
}

mn_status mn__migrate_db(const char *from, const char *to, const mn_config *cfg, int append, mn_progress_fn progress,
                        void *user, mn_import_stats *stats)
{
    from = strip_scheme(from);
    to = strip_scheme(to);
    if (strcmp(from, to) == 0) {
        char shown[1024];
        masked(from, shown, sizeof shown);
        return mn__err(MN_INVALID, "migrate: the source and the destination are the same database (%s)", shown);
    }
    struct copy c;
    memset(&c, 0, sizeof c);
    c.progress = progress;
    c.user = user;
    mn_status rc = open_side(from, cfg, 1, &c.src);
    if (!rc)
        rc = open_side(to, cfg, 0, &c.dst);
    mn_store_stats ss, ds;
    if (!rc)
        rc = c.src->store->ops->stats(c.src->store, 0, &ss);
    if (!rc)
        rc = c.dst->store->ops->stats(c.dst->store, 0, &ds);
    if (!rc && ds.sessions > 0 && !append) {
        char shown[1024];
        masked(to, shown, sizeof shown);
        rc = mn__err(MN_CONFLICT,
                     "migrate: the destination %s already holds %lld sessions (append to it with --append)",
                     shown, (long long)ds.sessions);
    }
    int was_empty = !rc && ds.sessions == 0 && ds.messages == 0;
    if (!rc) {
        /* progress counts sessions and messages, then one step per session for its records */
        c.total = ss.sessions * 2 + ss.messages;
        rc = c.dst->store->ops->begin(c.dst->store);
        if (!rc) {
            mn_status scan = c.src->store->ops->export_scan(c.src->store, NULL, 0, on_session, on_message, &c);
            rc = c.rc ? c.rc : scan;
            if (!rc)
                rc = mn__import_rows_end(c.dst->store, &c.rows);
            if (rc)
                c.dst->store->ops->rollback(c.dst->store);
            else
                rc = c.dst->store->ops->commit(c.dst->store);
            mn__import_rows_free(&c.rows);
        }
    }
    for (size_t i = 0; i < c.n_ids && !rc; i++) {
        rc = copy_summary(&c, c.ids[i]);
        if (!rc)
            rc = copy_events(&c, c.ids[i]);
        if (!rc)
            rc = copy_state(&c, c.ids[i]);
        if (!rc) /* engine/checkpoint_io.c: those the destination lacks */
            rc = mn__checkpoint_copy(c.src->store, c.dst->store, c.ids[i], NULL);
        if (rc)
            rc = mn__err(rc, "migrate: session %s (sessions and messages are committed; run again with --append"
                             " to finish): %s", c.ids[i], mn_errmsg());
        tick(&c, 0);
    }
    if (!rc)
        rc = copy_meta(&c);
    if (!rc && was_empty)
        rc = copy_vectors(&c);
    if (!rc) /* long-term memories, every version (engine/memory_io.c) */
        rc = mn__memory_copy(c.src, c.dst);
    if (!rc) /* documents with their vectors (engine/document_io.c) */
        rc = mn__document_copy(c.src->store, c.dst->store, NULL);
    if (!rc)
        mn__analyze_after_load(c.dst->store);
    if (!rc && progress) {
        c.done = c.total - 1;
        tick(&c, 1);
    }
    if (!rc)
        *stats = c.st;
    free(c.ids);
    mn__close_db(c.src);
    mn__close_db(c.dst);
    return rc;
}
