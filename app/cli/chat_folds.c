/*
 * chat_folds.c — `mnemo chat`'s background folds: a fold queue on the handle and one worker
 * thread, so that a due fold never delays a reply (chat_folds.h, docs/chat.md "Folding").
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/chat_folds.h"

/* The queue's function, called by the build inside mn_chat_reply: keeps the job until
 * folds_release. Non-zero (the build then folds itself, within context.fold_timeout_ms) only for
 * names longer than any real one. */
static int fold_stage(void *user, const mn_fold_job *job)
{
    struct folds *f = user;
    const char *strategy = job->strategy ? job->strategy : "";
    if (strlen(job->session_id) >= sizeof f->staged.session_id || strlen(strategy) >= sizeof f->staged.strategy)
        return -1;
    pthread_mutex_lock(&f->lock);
    snprintf(f->staged.session_id, sizeof f->staged.session_id, "%s", job->session_id);
    snprintf(f->staged.strategy, sizeof f->staged.strategy, "%s", strategy);
    f->staged.max_tokens = job->max_tokens;
    f->staged.model_window = job->model_window;
    f->has_staged = 1;
    pthread_mutex_unlock(&f->lock);
    return 0;
}

/* After a reply (stored, failed or interrupted): the staged job goes to the worker. */
void folds_release(struct folds *f)
{
    if (!f->running)
        return;
    pthread_mutex_lock(&f->lock);
    if (f->has_staged) {
        f->has_staged = 0;
        size_t i = 0;
        while (i < f->njobs && strcmp(f->jobs[i].session_id, f->staged.session_id) != 0)
            i++;
        if (i < f->njobs)
            f->jobs[i] = f->staged; /* one job per session, with the newest budget */
        else if (f->njobs < FOLD_JOBS)
            f->jobs[f->njobs++] = f->staged;
        pthread_cond_broadcast(&f->changed);
    }
    pthread_mutex_unlock(&f->lock);
}

static void *fold_worker(void *arg)
{
    struct folds *f = arg;
    pthread_mutex_lock(&f->lock);
    for (;;) {
        while (!f->njobs && !f->stopping)
            pthread_cond_wait(&f->changed, &f->lock);
        if (f->stopping)
            break;
        struct fold_job j = f->jobs[0];
        f->njobs--;
        memmove(f->jobs, f->jobs + 1, f->njobs * sizeof *f->jobs);
        f->busy = 1;
        pthread_mutex_unlock(&f->lock);
        mn_fold_job fj = {j.session_id, *j.strategy ? j.strategy : NULL, j.max_tokens, j.model_window};
        /* what came of it is the session's event (mnemo events); an error here (the session was
         * deleted meanwhile, the store) has nobody to tell: the fold is still due if it matters */
        (void)mn_fold_run(f->db, &fj, NULL);
        pthread_mutex_lock(&f->lock);
        f->busy = 0;
        pthread_cond_broadcast(&f->changed);
    }
    pthread_mutex_unlock(&f->lock);
    return NULL;
}

/* Starts the worker and sets the queue. Without a thread, builds fold themselves within
 * context.fold_timeout_ms, as the library does alone. */
void folds_start(struct folds *f, mn_db *db)
{
    memset(f, 0, sizeof *f);
    f->db = db;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&f->lock, NULL);
    pthread_cond_init(&f->changed, &ca);
    pthread_condattr_destroy(&ca);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the worker takes no signal: Ctrl-C reaches the reader */
    int rc = pthread_create(&f->thread, NULL, fold_worker, f);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0 && mn_fold_queue_set(db, fold_stage, f) == MN_OK)
        f->running = 1;
    else if (rc == 0) { /* not reached: the handle is good */
        f->stopping = 1;
        pthread_join(f->thread, NULL);
    }
}

static struct timespec mono_after(int64_t ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(ms / 1000);
    t.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static int mono_before(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Leaving: waits for the waiting jobs and the fold in flight at most wait_ms, less when Ctrl-C
 * comes (`interrupted`; one from before leaving counts: Ctrl-C is how a script leaves). tty: the
 * terminal echoed that Ctrl-C as ^C, the next line starts on a line of its own. Returns 0 with
 * the worker joined and the queue removed, 1 when a fold is still running: then the worker still
 * uses the handle, which must stay open; the caller ends the process. */
int folds_stop(struct folds *f, int64_t wait_ms, int tty, volatile sig_atomic_t *interrupted)
{
    if (!f->running)
        return 0;
    pthread_mutex_lock(&f->lock);
    if ((f->njobs || f->busy) && wait_ms > 0 && !*interrupted) {
        printf("[finishing the summary fold: up to %lld ms; Ctrl-C leaves now]\n", (long long)wait_ms);
        fflush(stdout);
        struct timespec end = mono_after(wait_ms), now = mono_after(0);
        while ((f->njobs || f->busy) && !*interrupted && mono_before(&now, &end)) {
            struct timespec slice = mono_after(100); /* Ctrl-C is seen within 0.1 s */
            pthread_cond_timedwait(&f->changed, &f->lock, mono_before(&slice, &end) ? &slice : &end);
            now = mono_after(0);
        }
    }
    int folding = f->busy;
    f->stopping = 1;
    f->njobs = 0; /* still due: the next build of their sessions queues them again */
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->lock);
    if (folding) {
        if (*interrupted && tty)
            printf("\n");
        printf("[left the summary fold unfinished: nothing changed, the session's next context folds again]\n");
        return 1;
    }
    pthread_join(f->thread, NULL);
    mn_fold_queue_set(f->db, NULL, NULL);
    pthread_cond_destroy(&f->changed);
    pthread_mutex_destroy(&f->lock);
    f->running = 0;
    return 0;
}

