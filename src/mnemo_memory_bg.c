/*
 * mnemo_memory_bg.c — extraction in the background (docs/memory.md): with memory.extract set to
 * offline or llm, each committed append queues its session; one worker thread per handle,
 * started on first use, runs mn_memory_extract on each queued session, so the append never
 * waits for it (nor for an LLM). The queue holds each session once; a full queue drops the
 * newest request — the per-session watermark lets the next turn's run catch up. mn_close
 * finishes the run in progress and drops the rest (the next extraction reads those turns).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "config/config.h"
#include "util/err.h"
#include "util/banned.h"

#define QUEUE_CAP 256

struct mn_memory_bg {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int started, stop;
    char queue[QUEUE_CAP][MN_UUID_LEN + 1];
    size_t n;
    int64_t runs; /* extraction runs finished (for tests and stats) */
};

static void *worker(void *arg)
{
    mn_db *db = arg;
    struct mn_memory_bg *bg = db->memory_bg;
    pthread_mutex_lock(&bg->lock);
    for (;;) {
        while (!bg->stop && bg->n == 0)
            pthread_cond_wait(&bg->wake, &bg->lock);
        if (bg->stop)
            break;
        char sid[MN_UUID_LEN + 1];
        memcpy(sid, bg->queue[0], sizeof sid);
        memmove(bg->queue[0], bg->queue[1], (bg->n - 1) * sizeof bg->queue[0]);
        bg->n--;
        pthread_mutex_unlock(&bg->lock);
        mn_extract_stats st;
        mn_status rc = mn__memory_extract(db, sid, NULL, 1, &st);
        if (rc)
            mn__log(MN_LOG_WARN, "background memory extraction, session %s: %s", sid, mn_errmsg());
        pthread_mutex_lock(&bg->lock);
        bg->runs++;
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
