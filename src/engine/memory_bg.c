/*
 * memory_bg.c — extraction in the background (docs/memory.md): with memory.extract set to
 * offline or llm, each committed append queues its session; one worker thread per handle,
 * started on first use, runs mn_memory_extract on each queued session, so the append never
 * waits for it (nor for an LLM). The queue holds each session once; a full queue drops the
 * newest request — the per-session watermark lets the next turn's run catch up. The worker waits
 * DEBOUNCE_MS after the queue fills before it takes what is queued, so that a session's appends in
 * that time make one run (one watermark write) instead of one each: without it a busy writer paid
 * a second commit per append (bench/README.md, "Append cost of background extraction"). mn_close
 * finishes the run in progress and drops the rest (the next extraction reads those turns).
 *
 * The same worker keeps the memory vector index current after single memory writes
 * (mn__memory_index_later): an add or update returns without inserting into the HNSW graph (about
 * a millisecond a vector) or saving it (the whole file, every 30 s at most). Until the worker has
 * run, searches scan the vectors the index lacks exactly (docs/memory.md). A handle closed
 * before then indexes them at close when they are many (CLOSE_CATCH_UP), else leaves them to the
 * next writer or `mnemo reindex`; bulk writers (import, migrate) update the index themselves.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "engine/engine.h"
#include "config/config.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

#define QUEUE_CAP 256
#define DEBOUNCE_MS 100
#define CLOSE_CATCH_UP 1000 /* memory vectors not yet indexed that mn_close indexes */
#define OPTIN_KEY "memory.extract.optin"
#define OPTIN_RECHECK_MS 1000 /* how often a handle looks whether another one saw a session opt in */

struct mn_memory_bg {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int started, stop;
    char queue[QUEUE_CAP][MN_UUID_LEN + 1];
    size_t n;
    char taken[QUEUE_CAP][MN_UUID_LEN + 1]; /* the worker's batch, outside the lock */
    int64_t runs; /* extraction runs finished (for tests and stats) */
    size_t index_added; /* memory vectors written since the worker last updated the index */
    int index_due, index_busy;
    int optin;             /* some session opted in (meta memory.extract.optin), seen by this handle */
    int64_t optin_read_ms; /* when the meta key was last read */
};

/* Waits DEBOUNCE_MS, or until stop (lock held). */
static void debounce(struct mn_memory_bg *bg)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += DEBOUNCE_MS * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    while (!bg->stop && pthread_cond_timedwait(&bg->wake, &bg->lock, &until) != ETIMEDOUT) {
    }
}

static void *worker(void *arg)
{
    mn_db *db = arg;
    struct mn_memory_bg *bg = db->memory_bg;
    pthread_mutex_lock(&bg->lock);
    for (;;) {
        while (!bg->stop && bg->n == 0 && !bg->index_due)
            pthread_cond_wait(&bg->wake, &bg->lock);
        debounce(bg);
        if (bg->stop)
            break;
        if (bg->index_due) { /* one update for every write of the debounce period */
            size_t added = bg->index_added;
            bg->index_due = 0;
            bg->index_added = 0;
            bg->index_busy = 1;
            pthread_mutex_unlock(&bg->lock);
            mn__memory_index_update(db, 0, added);
            pthread_mutex_lock(&bg->lock);
            bg->index_busy = 0;
            pthread_cond_broadcast(&bg->wake);
        }
        /* take the whole queue: appends from now on queue their session again */
        size_t n = bg->n;
        memcpy(bg->taken, bg->queue, n * sizeof bg->queue[0]);
        bg->n = 0;
        pthread_mutex_unlock(&bg->lock);
        for (size_t i = 0; i < n; i++) {
            mn_extract_stats st;
            mn_status rc = mn__memory_extract(db, bg->taken[i], NULL, 1, &st);
            if (rc)
                mn__log(MN_LOG_WARN, "background memory extraction, session %s: %s", bg->taken[i], mn_errmsg());
            pthread_mutex_lock(&bg->lock);
            bg->runs++;
            int stop = bg->stop;
            pthread_mutex_unlock(&bg->lock);
            if (stop)
                break;
        }
        pthread_mutex_lock(&bg->lock);
    }
    pthread_mutex_unlock(&bg->lock);
    return NULL;
}

/* Starts the worker when it is not running (lock held); 0 when it cannot start. */
static int start(mn_db *db, struct mn_memory_bg *bg)
{
    if (!bg->started && pthread_create(&bg->thread, NULL, worker, db) == 0)
        bg->started = 1;
    return bg->started;
}

/* With memory.extract off, whether some session opted in: the meta key, read at most once a
 * second, without bg->lock held (on PostgreSQL the read is a round trip). */
static int opted_in(mn_db *db, struct mn_memory_bg *bg)
{
    int64_t now = mn_clock_mono_ns() / 1000000;
    pthread_mutex_lock(&bg->lock);
    int known = bg->optin, due = !known && (!bg->optin_read_ms || now - bg->optin_read_ms >= OPTIN_RECHECK_MS);
    if (due)
        bg->optin_read_ms = now;
    pthread_mutex_unlock(&bg->lock);
    if (!due)
        return known;
    char *v = NULL;
    int on = db->store->ops->meta_get(db->store, OPTIN_KEY, &v) == MN_OK && v && strcmp(v, "1") == 0;
    free(v);
    mn__err_clear();
    pthread_mutex_lock(&bg->lock);
    bg->optin |= on;
    pthread_mutex_unlock(&bg->lock);
    return on;
}

int mn__memory_optin_wanted(const char *metadata)
{
    json_t *meta = metadata ? json_loads(metadata, 0, NULL) : NULL;
    const char *e = json_string_value(json_object_get(json_object_get(meta, "memory_scope"), "extract"));
    int on = e && (strcmp(e, "offline") == 0 || strcmp(e, "llm") == 0);
    json_decref(meta);
    return on;
}

void mn__memory_optin_note(mn_db *db, const char *metadata)
{
    if (mn__memory_optin_wanted(metadata))
        mn__memory_optin_set(db);
}

void mn__memory_optin_set(mn_db *db)
{
    struct mn_memory_bg *bg = db->memory_bg;
    if (!bg)
        return;
    pthread_mutex_lock(&bg->lock);
    int known = bg->optin;
    pthread_mutex_unlock(&bg->lock);
    if (known)
        return;
    if (db->store->ops->meta_set(db->store, OPTIN_KEY, "1") != MN_OK) { /* the next such write tries again */
        mn__log(MN_LOG_WARN, "%s: cannot note that a session opted in to memory extraction: %s",
                db->store->label, mn_errmsg());
        mn__err_clear();
        return;
    }
    pthread_mutex_lock(&bg->lock);
    bg->optin = 1;
    pthread_mutex_unlock(&bg->lock);
}

void mn__memory_after_append(mn_db *db, const char *session_id)
{
    struct mn_memory_bg *bg = db->memory_bg;
    if (!bg)
        return;
    /* off for the database: only sessions whose memory_scope.extract opts in, once one did (the
     * worker reads each session's scope and skips the others) */
    if (strcmp(mn_config_str(db->cfg, "memory.extract"), "off") == 0 && !opted_in(db, bg))
        return;
    pthread_mutex_lock(&bg->lock);
    if (bg->stop) { /* closing */
        pthread_mutex_unlock(&bg->lock);
        return;
    }
    start(db, bg);
    int queued = 0;
    for (size_t i = 0; i < bg->n && !queued; i++)
        queued = strcmp(bg->queue[i], session_id) == 0;
    if (!queued && bg->n < QUEUE_CAP) {
        memcpy(bg->queue[bg->n], session_id, MN_UUID_LEN + 1);
        bg->n++;
        pthread_cond_broadcast(&bg->wake);
    }
    pthread_mutex_unlock(&bg->lock);
}

void mn__memory_index_later(mn_db *db, size_t added)
{
    struct mn_memory_bg *bg = db->memory_bg;
    int later = 0;
    if (bg) {
        pthread_mutex_lock(&bg->lock);
        if (!bg->stop && start(db, bg)) {
            bg->index_added += added;
            bg->index_due = 1;
            pthread_cond_broadcast(&bg->wake);
            later = 1;
        }
        pthread_mutex_unlock(&bg->lock);
    }
    if (!later) /* no worker (out of threads): the writer does it */
        mn__memory_index_update(db, 0, added);
}

void mn__memory_index_wait(mn_db *db)
{
    struct mn_memory_bg *bg = db->memory_bg;
    if (!bg)
        return;
    pthread_mutex_lock(&bg->lock);
    while (!bg->stop && (bg->index_due || bg->index_busy))
        pthread_cond_wait(&bg->wake, &bg->lock);
    pthread_mutex_unlock(&bg->lock);
}

mn_status mn__memory_bg_open(mn_db *db)
{
    db->memory_bg = calloc(1, sizeof *db->memory_bg);
    if (!db->memory_bg)
        return mn__nomem();
    pthread_mutex_init(&db->memory_bg->lock, NULL);
    pthread_cond_init(&db->memory_bg->wake, NULL);
    return MN_OK;
}

void mn__memory_bg_close(mn_db *db)
{
    struct mn_memory_bg *bg = db->memory_bg;
    if (!bg)
        return;
    pthread_mutex_lock(&bg->lock);
    bg->stop = 1;
    pthread_cond_broadcast(&bg->wake);
    pthread_mutex_unlock(&bg->lock);
    if (bg->started)
        pthread_join(bg->thread, NULL);
    /* a handle that wrote many memories (a bulk of single adds) leaves the index current: the
     * work is due anyway, and done here at once (on every core when most vectors are new) it
     * spares the next process a long exact scan; a few writes are left to the next writer */
    if (bg->index_added >= CLOSE_CATCH_UP)
        mn__memory_index_update(db, 0, bg->index_added);
    pthread_mutex_destroy(&bg->lock);
    pthread_cond_destroy(&bg->wake);
    free(bg);
    db->memory_bg = NULL;
}
