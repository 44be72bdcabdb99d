/*
 * mnemo_memory_bg.c — extraction in the background (docs/memory.md): with memory.extract set to
 * offline or llm, each committed append queues its session; one worker thread per handle,
 * started on first use, runs mn_memory_extract on each queued session, so the append never
 * waits for it (nor for an LLM). The queue holds each session once; a full queue drops the
 * newest request — the per-session watermark lets the next turn's run catch up. The worker waits
 * DEBOUNCE_MS after the queue fills before it takes what is queued, so that a session's appends in
 * that time make one run (one watermark write) instead of one each: without it a busy writer paid
 * a second commit per append (bench/README.md, "Append cost of background extraction"). mn_close
 * finishes the run in progress and drops the rest (the next extraction reads those turns).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mnemo_int.h"
#include "config/config.h"
#include "util/err.h"
#include "util/banned.h"

#define QUEUE_CAP 256
#define DEBOUNCE_MS 100

struct mn_memory_bg {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int started, stop;
    char queue[QUEUE_CAP][MN_UUID_LEN + 1];
    size_t n;
    char taken[QUEUE_CAP][MN_UUID_LEN + 1]; /* the worker's batch, outside the lock */
    int64_t runs; /* extraction runs finished (for tests and stats) */
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
        while (!bg->stop && bg->n == 0)
            pthread_cond_wait(&bg->wake, &bg->lock);
        debounce(bg);
        if (bg->stop)
            break;
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

void mn__memory_after_append(mn_db *db, const char *session_id)
{
    if (strcmp(mn_config_str(db->cfg, "memory.extract"), "off") == 0 || !db->memory_bg)
        return;
    struct mn_memory_bg *bg = db->memory_bg;
    pthread_mutex_lock(&bg->lock);
    if (!bg->started && pthread_create(&bg->thread, NULL, worker, db) == 0)
        bg->started = 1;
    int queued = 0;
    for (size_t i = 0; i < bg->n && !queued; i++)
        queued = strcmp(bg->queue[i], session_id) == 0;
    if (!queued && bg->n < QUEUE_CAP) {
        memcpy(bg->queue[bg->n], session_id, MN_UUID_LEN + 1);
        bg->n++;
        pthread_cond_signal(&bg->wake);
    }
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
    pthread_cond_signal(&bg->wake);
    pthread_mutex_unlock(&bg->lock);
    if (bg->started)
        pthread_join(bg->thread, NULL);
    pthread_mutex_destroy(&bg->lock);
    pthread_cond_destroy(&bg->wake);
    free(bg);
    db->memory_bg = NULL;
}
