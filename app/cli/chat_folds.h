/*
 * chat_folds.h — the background folds of `mnemo chat` (chat_folds.c).
 */
#ifndef MN_CLI_CHAT_FOLDS_H
#define MN_CLI_CHAT_FOLDS_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "mnemo.h"

/*
 * The handle has a fold queue (mn_fold_queue_set), so a reply's context build (fold mode
 * background) never folds: it uses the stored summary and hands the due fold over as a job. The
 * job waits (staged) until the reply is stored or given up, so that the fold covers the reply and
 * does not compete with it for the provider; then one worker thread runs it (mn_fold_run) while
 * the user types, however long the summariser takes (summarizer.timeout_ms and retries bound it).
 * The next context uses the summary once it is stored. Leaving waits for the worker at most
 * context.fold_timeout_ms (Ctrl-C: no longer); a fold still running then is given up with the
 * process, which changes nothing stored: its claim on the session expires
 * (summarizer.claim_seconds) and the next build finds the fold due again. */

#define FOLD_JOBS 8 /* sessions with a fold waiting; a job past them is dropped, and queued again by
                       the next build of its session (the fold is still due) */

struct fold_job {
    char session_id[64], strategy[16];
    int64_t max_tokens, model_window;
};

struct folds {
    pthread_mutex_t lock;
    pthread_cond_t changed; /* a job came, the worker went idle, or stop */
    pthread_t thread;
    int running;            /* the worker was started and the queue set */
    mn_db *db;
    struct fold_job staged; /* from the build of the reply under way */
    int has_staged;
    struct fold_job jobs[FOLD_JOBS]; /* ready, oldest first, one per session */
    size_t njobs;
    int busy;               /* the worker is folding */
    int stopping;
};

/* Sets the handle's fold queue and starts the worker (nothing happens when it cannot start: the
 * builds then fold themselves, within context.fold_timeout_ms). */
void folds_start(struct folds *f, mn_db *db);
/* The reply is stored or given up: the fold its build found due may run now. */
void folds_release(struct folds *f);
/* Leaving: waits for the worker at most wait_ms (until *interrupted), then stops it. Returns 0
 * with the worker joined and the queue removed, 1 when a fold is still running: the worker still
 * uses the handle, which must stay open; the caller ends the process. */
int folds_stop(struct folds *f, int64_t wait_ms, int tty, volatile sig_atomic_t *interrupted);

#endif
