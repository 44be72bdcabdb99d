/*
 * fold.c — background folds for `mnemo serve` (seed 004 §9.2): a context build whose fold is
 * due queues it here (mn_fold_queue_set) and answers with the stored summary; a few worker
 * threads run the queued folds (mn_fold_run). One job per session is queued at a time; the
 * library's per-session claim (busy_until) keeps one fold of a session in flight across threads,
 * processes and nodes. On stop, queued jobs are dropped (the next build queues them again: the
 * fold is still due) and a fold in flight finishes (bounded by the summariser's timeouts);
 * nothing stored changes unless a fold completes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

#define FOLD_THREADS 2
#define FOLD_QUEUE_MAX 1024 /* jobs beyond it are refused: the build then folds within its deadline */

struct job {
    char session_id[64], strategy[16];
    int64_t max_tokens, model_window;
    struct job *next;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;
    struct job *head, *tail;
    size_t depth;
    int stopping, running;
    mn_db *db;
    pthread_t threads[FOLD_THREADS];
    int nthreads;
} q = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER};

static int queued(const char *sid)
{
    for (struct job *j = q.head; j; j = j->next)
        if (strcmp(j->session_id, sid) == 0)
            return 1;
    return 0;
}

static int enqueue(void *user, const mn_fold_job *job)
{
    (void)user;
    if (strlen(job->session_id) >= sizeof q.head->session_id || strlen(job->strategy) >= sizeof q.head->strategy)
        return -1;
    pthread_mutex_lock(&q.lock);
    int rc = 0;
    if (q.stopping || q.depth >= FOLD_QUEUE_MAX)
        rc = -1;
    else if (!queued(job->session_id)) {
        struct job *j = calloc(1, sizeof *j);
        if (!j)
            rc = -1;
        else {
            /* both lengths were checked above */
            snprintf(j->session_id, sizeof j->session_id, "%s", job->session_id);
            snprintf(j->strategy, sizeof j->strategy, "%s", job->strategy);
            j->max_tokens = job->max_tokens;
            j->model_window = job->model_window;
            if (q.tail)
                q.tail->next = j;
            else
                q.head = j;
            q.tail = j;
            q.depth++;
            pthread_cond_signal(&q.work);
        }
    }
    pthread_mutex_unlock(&q.lock);
    return rc;
}

static void *fold_thread(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&q.lock);
    while (1) {
        while (!q.head && !q.stopping)
            pthread_cond_wait(&q.work, &q.lock);
        if (q.stopping)
            break;
        struct job *j = q.head;
        q.head = j->next;
        if (!q.head)
            q.tail = NULL;
        q.depth--;
        pthread_mutex_unlock(&q.lock);
        mn_fold_job fj = {j->session_id, j->strategy, j->max_tokens, j->model_window};
        char *outcome = NULL;
        mn_status st = mn_fold_run(q.db, &fj, &outcome);
        if (st)
            srv_log("warn", "msg=\"background fold failed\" session=%s error=\"%s\"", j->session_id, mn_errmsg());
        else
            srv_log("debug", "msg=\"background fold\" session=%s fold=%s", j->session_id, outcome ? outcome : "");
        mn_free(outcome);
        free(j);
        pthread_mutex_lock(&q.lock);
    }
    pthread_mutex_unlock(&q.lock);
    return NULL;
}

int srv_folds_start(mn_db *db)
{
    q.db = db;
    q.stopping = 0;
    for (int i = 0; i < FOLD_THREADS; i++)
        if (pthread_create(&q.threads[q.nthreads], NULL, fold_thread, NULL) == 0)
            q.nthreads++;
    if (q.nthreads == 0)
        return -1; /* builds fold themselves, within context.fold_timeout_ms */
    return mn_fold_queue_set(db, enqueue, NULL) == MN_OK ? 0 : -1;
}

void srv_folds_stop(void)
{
    if (!q.db)
        return;
    mn_fold_queue_set(q.db, NULL, NULL);
    pthread_mutex_lock(&q.lock);
    q.stopping = 1;
    while (q.head) {
        struct job *j = q.head;
        q.head = j->next;
        free(j);
    }
    q.tail = NULL;
    q.depth = 0;
    pthread_cond_broadcast(&q.work);
    pthread_mutex_unlock(&q.lock);
    for (int i = 0; i < q.nthreads; i++)
        pthread_join(q.threads[i], NULL);
    q.nthreads = 0;
    q.db = NULL;
}

size_t srv_folds_depth(void)
{
    pthread_mutex_lock(&q.lock);
    size_t d = q.depth;
    pthread_mutex_unlock(&q.lock);
    return d;
}
