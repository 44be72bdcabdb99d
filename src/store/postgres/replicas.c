/*
 * replicas.c — reads on PostgreSQL hot standbys (postgres.replicas): which replica serves a
 * read, how long a read waits for one to replay what it must see, and the WAL positions that
 * decide it. pg.c sends here only the reads (PG_AUTOCOMMIT and PG_SNAPSHOT bodies) of threads
 * whose reads the engine opened to replicas; writes, claims and background work stay on the
 * primary. The guarantee, in docs/scale-out.md: a read sees every commit of this handle, every
 * commit up to the position the thread was given (read_after, a client's token from another
 * node), and every commit made more than postgres.replica_max_lag_ms before it; a replica that
 * cannot show that within postgres.replica_max_lag_ms leaves the read to the primary.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/postgres/pg_int.h"
#include "store/target.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

/* A replica that could not be reached is tried again after this long. */
#define DOWN_RETRY_MS 1000
/* How often the primary's position is noted (a read asks it when the last note is older). */
#define MARK_EVERY_MS 100

static _Thread_local const struct pg_store *tl_reads;    /* the handle whose reads may go to replicas */
static _Thread_local const struct pg_store *tl_after_of; /* the handle tl_after is a position of */
static _Thread_local uint64_t tl_after;

static const char SQL_PRIMARY_AT[] = "SELECT pg_current_wal_insert_lsn()::text";
/* pg_last_wal_replay_lsn is NULL on a server that is not a standby: then what it has written */
static const char SQL_REPLAYED[] = "SELECT coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text";

static int64_t mono_ms(void) { return mn__clock_mono_ns() / 1000000; }

/* A WAL position as PostgreSQL writes it ("16/B374D848": two hex numbers of 32 bits). */
static int parse_lsn(const char *t, uint64_t *out)
{
    unsigned hi = 0, lo = 0;
    int used = 0;
    if (!t || strlen(t) > 17 || sscanf(t, "%8X/%8X%n", &hi, &lo, &used) != 2 || t[used] != '\0')
        return 0;
    *out = (uint64_t)hi << 32 | lo;
    return 1;
}

static void format_lsn(uint64_t v, char out[32])
{
    if (v)
        snprintf(out, 32, "%X/%X", (unsigned)(v >> 32), (unsigned)(v & 0xFFFFFFFFu));
    else
        out[0] = '\0';
}

static mn_status ask_lsn(struct pg_conn *c, const char *sql, uint64_t *out)
{
    PGresult *r = NULL;
    mn_status rc = mn__pg_query(c, sql, NULL, 0, "replica position", &r);
    if (!rc && (PQntuples(r) != 1 || !parse_lsn(PQgetvalue(r, 0, 0), out)))
        rc = mn__err(MN_UNAVAILABLE, "replica position: the server answered no WAL position");
    PQclear(r);
    return rc;
}

/* Notes that the primary was at lsn at ms (under the lock): the marks, oldest first, span a
 * little more than max_lag_ms. */
static void mark(struct pg_store *s, int64_t ms, uint64_t lsn)
{
    size_t cap = sizeof s->marks / sizeof s->marks[0], drop = 0;
    while (drop + 1 < s->n_marks && s->marks[drop + 1].ms <= ms - s->max_lag_ms)
        drop++; /* the newest mark past the bound stays: it is the floor */
    if (s->n_marks - drop == cap)
        drop++;
    memmove(s->marks, s->marks + drop, (s->n_marks - drop) * sizeof s->marks[0]);
    s->n_marks -= drop;
    s->marks[s->n_marks++] = (struct pg_mark){ms, lsn};
}

/* What a replica must have replayed to be at most max_lag_ms behind the primary (under the
 * lock): the primary's position at the newest mark that old, 0 when there is none. */
static uint64_t lag_floor(const struct pg_store *s, int64_t now)
{
    uint64_t floor = 0;
    for (size_t i = 0; i < s->n_marks && s->marks[i].ms <= now - s->max_lag_ms; i++)
        floor = s->marks[i].lsn;
    return floor;
}

void mn__pg_note_commit(struct pg_store *s, struct pg_conn *c)
{
    uint64_t lsn = 0;
    if (ask_lsn(c, SQL_PRIMARY_AT, &lsn) != MN_OK)
        return; /* the commit stands; a later one moves the position */
    uint64_t was = atomic_load(&s->position);
    while (was < lsn && !atomic_compare_exchange_weak(&s->position, &was, lsn))
        ;
    pthread_mutex_lock(&s->lock);
    mark(s, mono_ms(), lsn);
    pthread_mutex_unlock(&s->lock);
}

/* Notes the primary's position when the last note is MARK_EVERY_MS old (one thread at a time:
 * the others go on with the marks there are). */
static void mark_primary(struct pg_store *s, int64_t now)
{
    pthread_mutex_lock(&s->lock);
    int due = (s->n_marks == 0 || s->marks[s->n_marks - 1].ms <= now - MARK_EVERY_MS) && !s->marking;
    s->marking |= due;
    pthread_mutex_unlock(&s->lock);
    if (!due)
        return;
    struct pg_conn *c = NULL;
    uint64_t lsn = 0;
    int ok = mn__pg_acquire(s, &s->primary, &c) == MN_OK;
    ok = ok && ask_lsn(c, SQL_PRIMARY_AT, &lsn) == MN_OK;
    if (c)
        mn__pg_release(s, c);
    pthread_mutex_lock(&s->lock);
    if (ok)
        mark(s, mono_ms(), lsn);
    else if (s->n_marks) /* the primary is away: ask again after DOWN_RETRY_MS */
        s->marks[s->n_marks - 1].ms = now + DOWN_RETRY_MS - MARK_EVERY_MS;
    s->marking = 0;
    pthread_mutex_unlock(&s->lock);
}

static struct pg_replica *replica_of(struct pg_store *s, struct pg_pool *pool)
{
    for (size_t i = 0; i < s->n_replicas; i++)
        if (&s->replicas[i].pool == pool)
            return &s->replicas[i];
    return NULL;
}

void mn__pg_replica_down(struct pg_store *s, struct pg_pool *pool)
{
    struct pg_replica *r = replica_of(s, pool);
    if (!r)
        return;
    pthread_mutex_lock(&s->lock);
    r->down_until_ms = mono_ms() + DOWN_RETRY_MS;
    int tell = !r->down_logged;
    r->down_logged = 1;
    pthread_mutex_unlock(&s->lock);
    atomic_fetch_add(&s->counts.down, 1);
    if (tell)
        mn__log(MN_LOG_WARN, "replica %s cannot be reached (%s): its reads go to the primary, and it is tried"
                " again every %d ms", pool->masked, mn_errmsg(), DOWN_RETRY_MS);
}

/* Whether replica r, on its connection c, has replayed `need` (within max_lag_ms) and the lag
 * floor (at once: one behind that is lagging past the bound). */
static int caught_up(struct pg_store *s, struct pg_replica *r, struct pg_conn *c, uint64_t need, uint64_t floor)
{
    int64_t now = mono_ms();
    pthread_mutex_lock(&s->lock);
    /* one that stalled (paused replay, a long query holding it back) is asked, not waited for */
    int64_t deadline = r->stalled_until_ms > now ? now : now + s->max_lag_ms;
    pthread_mutex_unlock(&s->lock);
    for (int attempt = 0;; attempt++) {
        uint64_t replayed = 0;
        if (ask_lsn(c, SQL_REPLAYED, &replayed) != MN_OK) {
            mn__pg_replica_down(s, c->pool);
            return 0;
        }
        pthread_mutex_lock(&s->lock);
        if (replayed > r->replayed)
            r->replayed = replayed;
        pthread_mutex_unlock(&s->lock);
        if (replayed < floor) {
            atomic_fetch_add(&s->counts.lagging, 1);
            return 0;
        }
        if (replayed >= need)
            return 1;
        if (attempt == 0 && deadline > now)
            atomic_fetch_add(&s->counts.waited, 1);
        if (mono_ms() >= deadline) {
            pthread_mutex_lock(&s->lock);
            r->stalled_until_ms = mono_ms() + DOWN_RETRY_MS;
            pthread_mutex_unlock(&s->lock);
            atomic_fetch_add(&s->counts.lagging, 1);
            return 0;
        }
        mn__clock_sleep_ms(attempt < 3 ? 1 << attempt : 8); /* replay on loopback takes ~1 ms */
    }
}

void mn__pg_replica_pick(struct pg_store *s, struct pg_conn **out)
{
    *out = NULL;
    int64_t now = mono_ms();
    mark_primary(s, now);
    uint64_t need = atomic_load(&s->position);
    if (tl_after_of == s && tl_after > need)
        need = tl_after;
    pthread_mutex_lock(&s->lock);
    uint64_t floor = lag_floor(s, now);
    size_t first = s->next_replica++;
    pthread_mutex_unlock(&s->lock);
    for (size_t k = 0; k < s->n_replicas; k++) {
        struct pg_replica *r = &s->replicas[(first + k) % s->n_replicas];
        pthread_mutex_lock(&s->lock);
        int down = r->down_until_ms > now, known = r->replayed >= need && r->replayed >= floor;
        pthread_mutex_unlock(&s->lock);
        struct pg_conn *c = NULL;
        if (down)
            continue;
        if (mn__pg_acquire(s, &r->pool, &c) != MN_OK) {
            mn__pg_replica_down(s, &r->pool);
            continue;
        }
        if (known || caught_up(s, r, c, need, floor)) {
            pthread_mutex_lock(&s->lock);
            int back = r->down_logged;
            r->down_logged = 0;
            pthread_mutex_unlock(&s->lock);
            if (back)
                mn__log(MN_LOG_INFO, "replica %s is back: it serves reads again", r->pool.masked);
            atomic_fetch_add(&s->counts.on_replica, 1);
            *out = c;
            return;
        }
        mn__pg_release(s, c);
    }
    atomic_fetch_add(&s->counts.on_primary, 1);
}

int mn__pg_replica_reads(struct pg_store *s) { return s->n_replicas > 0 && tl_reads == s; }

mn_status mn__pg_replicas_open(struct pg_store *s, const char *urls, int64_t max_lag_ms)
{
    s->max_lag_ms = max_lag_ms;
    const char *sep = " \t\r\n";
    size_t n = 0;
    for (const char *p = urls ? urls + strspn(urls, sep) : ""; *p; p += strcspn(p, sep), p += strspn(p, sep))
        n++;
    if (!n)
        return MN_OK;
    if (!(s->replicas = calloc(n, sizeof *s->replicas)))
        return mn__nomem();
    for (const char *p = urls + strspn(urls, sep); *p && s->n_replicas < n; p += strspn(p, sep)) {
        size_t len = strcspn(p, sep);
        char *url = strndup(p, len);
        if (!url)
            return mn__nomem();
        struct pg_replica *r = &s->replicas[s->n_replicas++];
        mn_status rc = mn__store_target_kind(url) == MN_TARGET_POSTGRES
                           ? mn__pg_pool_init(&r->pool, url)
                           : mn__err(MN_INVALID, "postgres.replicas: a replica is a PostgreSQL URL"
                                                 " (postgresql://…), not \"%.60s\"", url);
        free(url);
        if (rc)
            return rc;
        p += len;
    }
    return MN_OK;
}

void mn__pg_replicas_close(struct pg_store *s)
{
    for (size_t i = 0; i < s->n_replicas; i++)
        mn__pg_pool_close(&s->replicas[i].pool);
    free(s->replicas);
    s->replicas = NULL;
    s->n_replicas = 0;
}

/* ---- store.h's mn_store_replica_ops ---------------------------------------------------------- */

static void op_reads(mn_store *st, int on) { tl_reads = on ? PG(st) : NULL; }

static void op_position(mn_store *st, char out[32]) { format_lsn(atomic_load(&PG(st)->position), out); }

static mn_status op_read_after(mn_store *st, const char *token)
{
    uint64_t lsn = 0;
    if (token && *token && !parse_lsn(token, &lsn))
        return mn__err(MN_INVALID, "read-after position: \"%.40s\" is not a position this database gave", token);
    tl_after_of = lsn ? PG(st) : NULL;
    tl_after = lsn;
    return MN_OK;
}

static void op_stats(mn_store *st, mn_store_replica_stats *out)
{
    struct pg_store *s = PG(st);
    memset(out, 0, sizeof *out);
    out->replicas = (int64_t)s->n_replicas;
    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->n_replicas; i++)
        out->replicas_up += !s->replicas[i].down_logged;
    pthread_mutex_unlock(&s->lock);
    out->on_replica = atomic_load(&s->counts.on_replica);
    out->on_primary = atomic_load(&s->counts.on_primary);
    out->waited = atomic_load(&s->counts.waited);
    out->lagging = atomic_load(&s->counts.lagging);
    out->down = atomic_load(&s->counts.down);
}

const struct mn_store_replica_ops mn_pg_replica_ops = {
    .reads = op_reads,
    .position = op_position,
    .read_after = op_read_after,
    .stats = op_stats,
};
