/*
 * commit.c — group commit for `mnemo serve`: appends that arrive together share one transaction
 * and one fsync (mn_append_many, one savepoint per request). A request thread queues its append
 * and waits; the committer thread takes everything queued (up to MAX_GROUP), commits it in one
 * go and wakes each request with its own result, so nothing is acknowledged before its commit.
 * srv_commit_stop drains the queue before it returns. Without a running committer (mnemo mcp,
 * the fuzz targets) srv_append is mn_append_many with one request. srv_append_submit queues
 * without waiting, for the HTTP event loop: its callback runs on the committer thread after the
 * commit.
 * After a group is acknowledged the committer also drains the keyword index log (a chunk of
 * search.fts_drain rows when that many are waiting; docs/search.md), which appends on the
 * handle then leave to it (mn_keyword_drain_defer).
 * More than one committer (server.committers; PostgreSQL, where writers of different sessions do
 * not wait for each other): a committer takes only requests for sessions no other group in
 * flight holds, so one group's commit round trip overlaps the next group, the groups never wait
 * on each other's session row locks, and the appends of one session still commit in the order
 * they were queued.
 * A session another writer holds (another node's group; a paused or wedged node's open
 * transaction): every group skips it (MN_APPEND_DEFER), and its requests go back to the queue,
 * first, to be tried again after a backoff (1 ms doubling to 50 ms). One whose session stayed
 * held MAX_DEFERRALS tries goes, with its session's other queued requests, to a waiter thread
 * that waits in the database's lock queue (behind the holder, fairly, at most
 * memory.busy_timeout_ms): no committer, and no append to another session, ever waits for it.
 * When that wait ends in MN_BUSY, the session's requests queued meanwhile get the same answer
 * instead of a wait of their own. Each group's outcomes go to the readiness check (health.c),
 * whose database prober runs while the committers do.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/server.h"

enum { MAX_GROUP = 1024, MAX_COMMITTERS = 16, MAX_WAITERS = 4, MAX_DEFERRALS = 4, MAX_BACKOFF_MS = 50 };

struct pending {
    mn_append_request req; /* borrowed strings and messages */
    mn_append_result res;
    int done;
    int deferred;   /* times another writer held its session (MN_APPEND_DEFER): queued again */
    int64_t due_ns; /* deferred: not tried again before this (CLOCK_MONOTONIC) */
    pthread_cond_t wake; /* its own: a commit wakes only the requests it holds */
    /* asynchronous submitters (srv_append_submit): called after the commit instead of a wake;
     * the pending record is then the committer's to free */
    void (*on_done)(void *user, mn_status st, mn_messages *stored, const char *err);
    void *user;
    struct pending *next;
};

static struct {
    pthread_mutex_t lock;
    /* both on CLOCK_MONOTONIC (srv_commit_start): threads wait for a backoff's end. Committers
     * wait on work; waiters on stale_work, woken only while a stale request is queued: a wake of
     * every waiter per request cost ~15% of the CPU of a durable append (bench/server). */
    pthread_cond_t work, stale_work;
    struct pending *head, *tail;
    size_t depth, n_stale; /* queued requests, and how many of them are stale */
    int running, stop;
    mn_db *db;
    /* slots 0 .. n_threads-1 are committers, n_threads .. n_threads+n_waiters-1 waiters */
    int n_threads, n_waiters, idle_waiters;
    pthread_t threads[MAX_COMMITTERS + MAX_WAITERS];
    /* the requests of the groups in flight, by slot: their sessions are not taken by another */
    struct pending **held[MAX_COMMITTERS + MAX_WAITERS];
    size_t n_held[MAX_COMMITTERS + MAX_WAITERS];
    uint64_t groups, appends, deferrals; /* for /metrics */
} q = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER, .stale_work = PTHREAD_COND_INITIALIZER};

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits on c (q.lock held) until woken, or until due_ns when it is not 0. */
static void wait_work(pthread_cond_t *c, int64_t due_ns)
{
    if (!due_ns) {
        pthread_cond_wait(c, &q.lock);
        return;
    }
    struct timespec ts = {(time_t)(due_ns / 1000000000), (long)(due_ns % 1000000000)};
    pthread_cond_timedwait(c, &q.lock, &ts);
}

/* Wakes the threads that may take what is queued now (q.lock held): the committers, and the
 * waiters only while a stale request is queued. */
static void wake_takers(void)
{
    pthread_cond_broadcast(&q.work);
    if (q.n_stale)
        pthread_cond_broadcast(&q.stale_work);
}

/* Session ids compare without case: the queue keeps them as clients sent them, and a UUID's
 * upper- and lower-case forms name the same session. */
static int listed(const char *id, const char *const *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcasecmp(ids[i], id) == 0)
            return 1;
    return 0;
}

/* Whether a group in flight in another slot than `self` holds session id (q.lock held). */
static int held_elsewhere(int self, const char *id)
{
    for (int t = 0; t < q.n_threads + q.n_waiters; t++)
        if (t != self)
            for (size_t i = 0; i < q.n_held[t]; i++)
                if (strcasecmp(q.held[t][i]->req.session_id, id) == 0)
                    return 1;
    return 0;
}

static int stale(const struct pending *p) { return p->deferred >= MAX_DEFERRALS; }

/* Unlinks p (whose predecessor is prev) from the queue (q.lock held). */
static void unlink_pending(struct pending *prev, struct pending *p)
{
    if (prev)
        prev->next = p->next;
    else
        q.head = p->next;
    if (q.tail == p)
        q.tail = prev;
    q.depth--;
    q.n_stale -= stale(p);
}

/* A committer's group (q.lock held): in queue order, up to MAX_GROUP requests whose session no
 * other group in flight holds, that are not waiting out a backoff, that are not stale while a
 * waiter is idle to take them, and that no earlier request of their session stays behind (skip:
 * room for MAX_GROUP ids). *due_ns gets the earliest backoff end of those left (0: none). */
static size_t take(int self, struct pending **batch, const char **skip, int64_t now, int64_t *due_ns)
{
    size_t n = 0, n_skip = 0;
    *due_ns = 0;
    struct pending *prev = NULL, *p = q.head;
    while (p && n < MAX_GROUP) {
        struct pending *next = p->next;
        const char *id = p->req.session_id;
        int leave = listed(id, skip, n_skip) || held_elsewhere(self, id) || p->due_ns > now ||
                    (stale(p) && q.idle_waiters > 0);
        if (leave) {
            if (p->due_ns > now && (!*due_ns || p->due_ns < *due_ns))
                *due_ns = p->due_ns;
            if (n_skip == MAX_GROUP)
                break; /* the rest waits for the next group: order before size */
            skip[n_skip++] = id;
            prev = p;
        } else {
            batch[n++] = p;
            unlink_pending(prev, p);
        }
        p = next;
    }
    return n;
}

/* A waiter's group (q.lock held): the first stale request that is due, whose session nothing
 * else holds and no earlier request stays behind, with every later request of its session. */
static size_t take_stale(int self, struct pending **batch, const char **skip, int64_t now, int64_t *due_ns)
{
    size_t n = 0, n_skip = 0;
    *due_ns = 0;
    const char *id = NULL;
    struct pending *prev = NULL, *p = q.head;
    while (p && n < MAX_GROUP) {
        struct pending *next = p->next;
        const char *pid = p->req.session_id;
        if (id ? strcasecmp(pid, id) == 0 : !listed(pid, skip, n_skip) && !held_elsewhere(self, pid) &&
                                                stale(p) && p->due_ns <= now) {
            id = pid;
            batch[n++] = p;
            unlink_pending(prev, p);
        } else {
            if (!id && stale(p) && p->due_ns > now && (!*due_ns || p->due_ns < *due_ns))
                *due_ns = p->due_ns;
            if (!id && n_skip < MAX_GROUP)
                skip[n_skip++] = pid;
            else if (!id)
                break;
            prev = p;
        }
        p = next;
    }
    return n;
}

/* Hands a finished append its result (q.lock held): wakes a waiting thread, or keeps it for
 * the callback the committer calls after unlocking (list *cbs). */
static void finish(struct pending *p, struct pending **cbs)
{
    p->done = 1;
    if (p->on_done) {
        p->next = *cbs;
        *cbs = p;
    } else {
        pthread_cond_signal(&p->wake);
    }
}

/* Runs the callbacks of asynchronous appends (without q.lock: they may queue work). */
static void run_callbacks(struct pending *cbs)
{
    while (cbs) {
        struct pending *p = cbs;
        cbs = p->next;
        const char *err = p->res.errmsg[0] ? p->res.errmsg : mn_status_str(p->res.status);
        p->on_done(p->user, p->res.status, p->res.status ? NULL : p->res.stored, p->res.status ? err : NULL);
        if (p->res.status)
            mn_messages_free(p->res.stored);
        free(p);
    }
}

/* The requests of a group whose session another writer held go back to the head of the queue,
 * in their order, each to be tried again after its backoff (q.lock held); *n_back gets how many. */
static void requeue_held(struct pending **batch, const mn_append_request *reqs, const mn_append_result *res,
                         size_t n, int64_t now, size_t *n_back)
{
    struct pending *first = NULL, *last = NULL;
    *n_back = 0;
    for (size_t i = 0; i < n; i++)
        if (res[i].status == MN_BUSY && (reqs[i].flags & MN_APPEND_DEFER)) {
            struct pending *p = batch[i];
            p->deferred++;
            int64_t ms = p->deferred < 7 ? (int64_t)1 << (p->deferred - 1) : MAX_BACKOFF_MS;
            p->due_ns = now + (ms < MAX_BACKOFF_MS ? ms : MAX_BACKOFF_MS) * 1000000;
            if (last)
                last->next = p;
            else
                first = p;
            last = p;
            q.depth++;
            q.n_stale += stale(p);
            batch[i] = NULL;
            (*n_back)++;
        }
    if (first) {
        last->next = q.head;
        if (!q.head)
            q.tail = last;
        q.head = first;
    }
}

/* A waiter's wait for session id ended in MN_BUSY (r): the requests of that session queued
 * meanwhile get the same answer (q.lock held) rather than a wait of their own. */
static void answer_queued(const char *id, const mn_append_result *r, struct pending **cbs, size_t *n_answered)
{
    struct pending *prev = NULL, *p = q.head;
    while (p) {
        struct pending *next = p->next;
        if (strcasecmp(p->req.session_id, id) == 0) {
            unlink_pending(prev, p);
            p->res.status = r->status;
            memcpy(p->res.errmsg, r->errmsg, sizeof p->res.errmsg);
            p->res.stored = NULL;
            finish(p, cbs);
            (*n_answered)++;
        } else {
            prev = p;
        }
        p = next;
    }
}

/* A failure of the node or of the database, as readiness counts them (not a client's mistake). */
static int server_failure(mn_status st)
{
    return st == MN_BUSY || st == MN_UNAVAILABLE || st == MN_IO || st == MN_INTERNAL || st == MN_NOMEM ||
           st == MN_CORRUPT;
}

static void *worker(void *arg)
{
    int self = (int)(intptr_t)arg;
    mn_append_request *reqs = calloc(MAX_GROUP, sizeof *reqs);
    mn_append_result *res = calloc(MAX_GROUP, sizeof *res);
    struct pending **batch = calloc(MAX_GROUP, sizeof *batch);
    const char **skip = calloc(MAX_GROUP, sizeof *skip);
    int ready = reqs && res && batch && skip;
    pthread_mutex_lock(&q.lock);
    int waiter = self >= q.n_threads;
    if (waiter && !ready) { /* the committers keep trying stale requests themselves */
        pthread_mutex_unlock(&q.lock);
        goto out;
    }
    for (;;) {
        size_t n = 0;
        for (;;) { /* something this thread may take, or the end */
            int64_t due = 0, now = mono_ns();
            if (q.head && ready &&
                (n = waiter ? take_stale(self, batch, skip, now, &due) : take(self, batch, skip, now, &due)))
                break;
            if (q.head && !ready)
                break; /* out of memory for the arrays: answered below, one at a time */
            if (!q.head && q.stop)
                break;
            q.idle_waiters += waiter;
            wait_work(waiter ? &q.stale_work : &q.work, due);
            q.idle_waiters -= waiter;
        }
        if (!q.head && !n && q.stop)
            break;
        q.held[self] = batch;
        q.n_held[self] = n;
        pthread_mutex_unlock(&q.lock);
        mn_status st = MN_NOMEM;
        if (n) {
            /* a committer's group skips the sessions another writer holds (they come back
             * MN_BUSY, unrun); a waiter's waits for its one session */
            for (size_t i = 0; i < n; i++) {
                reqs[i] = batch[i]->req;
                if (!waiter)
                    reqs[i].flags |= MN_APPEND_DEFER;
            }
            st = mn_append_many(q.db, reqs, n, 1, res);
        }
        pthread_mutex_lock(&q.lock);
        struct pending *cbs = NULL;
        size_t ok = 0, failed = 0, back = 0, answered = 0;
        char failure[256] = ""; /* the last failure, for readiness */
        const mn_append_result *busy = NULL; /* a waiter's wait that ended in MN_BUSY */
        if (!n && q.head) { /* out of memory for the arrays: answer one request at a time */
            struct pending *p = q.head;
            unlink_pending(NULL, p);
            p->res.status = MN_NOMEM;
            snprintf(p->res.errmsg, sizeof p->res.errmsg, "out of memory");
            finish(p, &cbs);
            failed++;
            snprintf(failure, sizeof failure, "out of memory");
        }
        q.n_held[self] = 0; /* its sessions are free for the other threads */
        if (n && !st && !waiter)
            requeue_held(batch, reqs, res, n, mono_ns(), &back);
        for (size_t i = 0; i < n; i++) {
            if (!batch[i])
                continue;
            batch[i]->res = res[i];
            if (st && !res[i].status)
                batch[i]->res.status = st;
            mn_status r = batch[i]->res.status;
            if (waiter && r == MN_BUSY && !busy)
                busy = &res[i];
            if (!r)
                ok++;
            else if (server_failure(r)) {
                failed++;
                snprintf(failure, sizeof failure, "%s", res[i].errmsg[0] ? res[i].errmsg : mn_status_str(r));
            }
            finish(batch[i], &cbs);
            answered++;
        }
        if (busy) { /* the session stayed held for the whole wait */
            size_t more = 0;
            mn_append_result r = {busy->status, "", NULL};
            memcpy(r.errmsg, busy->errmsg, sizeof r.errmsg);
            answer_queued(reqs[0].session_id, &r, &cbs, &more);
            answered += more;
            failed += more;
        }
        q.groups += n > 0;
        q.appends += answered;
        q.deferrals += back;
        wake_takers(); /* sessions freed, requests queued again */
        pthread_mutex_unlock(&q.lock);
        srv_health_appends(ok, failed, waiter ? n : 0, failed ? failure : NULL);
        if (cbs)
            run_callbacks(cbs);
        /* the group is acknowledged: now the keyword index catches up, a chunk at a time, when
         * search.fts_drain rows are waiting (appends that arrive meanwhile queue for the next
         * group); a failure leaves the rows for the next drain or search */
        if (n && mn_keyword_drain(q.db, 0, NULL, NULL) != MN_OK)
            srv_log("warn", "msg=\"keyword index drain failed\" error=\"%s\"", mn_errmsg());
        pthread_mutex_lock(&q.lock);
    }
    pthread_mutex_unlock(&q.lock);
out:
    free(reqs);
    free(res);
    free(batch);
    free(skip);
    return NULL;
}

static pthread_once_t work_once = PTHREAD_ONCE_INIT;

/* q.work times its waits on the monotonic clock: a backoff must not stretch when the wall
 * clock is set back. */
void srv_cond_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a) == 0) {
        if (pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0) {
            pthread_cond_destroy(c);
            pthread_cond_init(c, &a);
        }
        pthread_condattr_destroy(&a);
    }
}

static void work_init(void)
{
    srv_cond_monotonic(&q.work);
    srv_cond_monotonic(&q.stale_work);
}

int srv_commit_start(mn_db *db, int committers)
{
    pthread_once(&work_once, work_init);
    if (committers < 1) /* 0: as many as the database's backend can overlap */
        committers = mn_db_append_writers(db);
    if (committers > MAX_COMMITTERS)
        committers = MAX_COMMITTERS;
    pthread_mutex_lock(&q.lock);
    q.db = db;
    q.stop = 0;
    q.n_threads = committers; /* the waiters' slots come after the committers' */
    q.n_waiters = 0;
    q.idle_waiters = 0;
    int started = 0, rc = 0;
    while (started < committers + MAX_WAITERS) {
        q.n_held[started] = 0;
        if ((rc = pthread_create(&q.threads[started], NULL, worker, (void *)(intptr_t)started)))
            break;
        started++;
        if (started > committers)
            q.n_waiters++;
    }
    if (started < committers) /* fewer committers than asked: the ones running do */
        q.n_threads = started;
    if (rc && started) /* without waiters the committers try stale requests themselves */
        rc = 0;
    q.running = rc == 0;
    /* the committer drains the keyword index log after each group, off the appends' path */
    if (q.running)
        mn_keyword_drain_defer(db, 1);
    pthread_mutex_unlock(&q.lock);
    if (q.running)
        srv_health_start(db);
    return rc == 0 ? 0 : -1;
}

void srv_commit_stop(void)
{
    pthread_mutex_lock(&q.lock);
    int running = q.running;
    q.stop = 1;
    pthread_cond_broadcast(&q.work);
    pthread_cond_broadcast(&q.stale_work);
    pthread_mutex_unlock(&q.lock);
    if (running) {
        for (int t = 0; t < q.n_threads + q.n_waiters; t++)
            pthread_join(q.threads[t], NULL); /* they drain the queue first */
        mn_keyword_drain_defer(q.db, 0);
        srv_health_stop();
    }
    pthread_mutex_lock(&q.lock);
    q.running = 0;
    pthread_mutex_unlock(&q.lock);
}

void srv_commit_stats(uint64_t *groups, uint64_t *appends, uint64_t *deferrals, size_t *depth, int *committers)
{
    pthread_mutex_lock(&q.lock);
    *committers = q.n_threads;
    *groups = q.groups;
    *appends = q.appends;
    *deferrals = q.deferrals;
    *depth = q.depth;
    pthread_mutex_unlock(&q.lock);
}

/* Queues p and wakes the threads (q.lock held). */
static void enqueue(struct pending *p)
{
    if (q.tail)
        q.tail->next = p;
    else
        q.head = p;
    q.tail = p;
    q.depth++;
    pthread_cond_broadcast(&q.work); /* the committer that may take it (a new request is not stale) */
}

int srv_append_submit(mn_db *db, const mn_append_request *req,
                      void (*done)(void *user, mn_status st, mn_messages *stored, const char *err), void *user)
{
    struct pending *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    *p = (struct pending){*req, {MN_OK, "", NULL}, 0, 0, 0, PTHREAD_COND_INITIALIZER, done, user, NULL};
    pthread_mutex_lock(&q.lock);
    if (!q.running || q.stop || q.db != db) {
        pthread_mutex_unlock(&q.lock);
        free(p);
        return -1;
    }
    enqueue(p);
    pthread_mutex_unlock(&q.lock);
    return 0;
}

mn_status srv_append(mn_db *db, const mn_append_request *req, mn_messages **out, char err[256])
{
    err[0] = '\0';
    *out = NULL;
    pthread_mutex_lock(&q.lock);
    struct pending p = {*req, {MN_OK, "", NULL}, 0, 0, 0, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL};
    if (!q.running || q.stop || q.db != db) { /* no committer: a group of one, on this thread */
        pthread_mutex_unlock(&q.lock);
        mn_status st = mn_append_many(db, req, 1, 1, &p.res);
        if (!st)
            st = p.res.status;
        if (st) {
            snprintf(err, 256, "%s", p.res.errmsg[0] ? p.res.errmsg : mn_errmsg());
            mn_messages_free(p.res.stored);
            return st;
        }
        *out = p.res.stored;
        return MN_OK;
    }
    enqueue(&p);
    while (!p.done)
        pthread_cond_wait(&p.wake, &q.lock);
    pthread_mutex_unlock(&q.lock);
    pthread_cond_destroy(&p.wake);
    if (p.res.status) {
        snprintf(err, 256, "%s", p.res.errmsg[0] ? p.res.errmsg : mn_status_str(p.res.status));
        mn_messages_free(p.res.stored);
        return p.res.status;
    }
    *out = p.res.stored;
    return MN_OK;
}
