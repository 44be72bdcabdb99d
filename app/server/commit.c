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
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/server.h"

enum { MAX_GROUP = 1024, MAX_COMMITTERS = 16, MAX_DEFERRALS = 4 };

struct pending {
    mn_append_request req; /* borrowed strings and messages */
    mn_append_result res;
    int done;
    int deferred; /* times another writer held its session (MN_APPEND_DEFER): queued again */
    pthread_cond_t wake; /* its own: a commit wakes only the requests it holds */
    /* asynchronous submitters (srv_append_submit): called after the commit instead of a wake;
     * the pending record is then the committer's to free */
    void (*on_done)(void *user, mn_status st, mn_messages *stored, const char *err);
    void *user;
    struct pending *next;
};

static struct {
    pthread_mutex_t lock;
    pthread_cond_t work;
    struct pending *head, *tail;
    size_t depth;
    int running, stop;
    mn_db *db;
    int n_threads;
    pthread_t threads[MAX_COMMITTERS];
    /* the requests of the groups in flight, by committer: their sessions are not taken by another */
    struct pending **held[MAX_COMMITTERS];
    size_t n_held[MAX_COMMITTERS];
    uint64_t groups, appends, deferrals; /* for /metrics */
} q = {.lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER};

/* Whether a group in flight on another committer than `self` holds session id (q.lock held).
 * Ids are compared without case: the queue keeps them as clients sent them, and a UUID's
 * upper- and lower-case forms name the same session. */
static int held_elsewhere(int self, const char *id)
{
    for (int t = 0; t < q.n_threads; t++)
        if (t != self)
            for (size_t i = 0; i < q.n_held[t]; i++)
                if (strcasecmp(q.held[t][i]->req.session_id, id) == 0)
                    return 1;
    return 0;
}

/* Takes into batch, in queue order, up to MAX_GROUP requests whose sessions no other committer
 * holds (q.lock held); what stays keeps its order. With one committer: everything queued. */
static size_t take(int self, struct pending **batch)
{
    size_t n = 0;
    struct pending *prev = NULL, *p = q.head;
    while (p && n < MAX_GROUP) {
        struct pending *next = p->next;
        if (q.n_threads > 1 && held_elsewhere(self, p->req.session_id)) {
            prev = p;
        } else {
            batch[n++] = p;
            if (prev)
                prev->next = next;
            else
                q.head = next;
            if (q.tail == p)
                q.tail = prev;
            q.depth--;
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

static void *committer(void *arg)
{
    int self = (int)(intptr_t)arg;
    mn_append_request *reqs = calloc(MAX_GROUP, sizeof *reqs);
    mn_append_result *res = calloc(MAX_GROUP, sizeof *res);
    struct pending **batch = calloc(MAX_GROUP, sizeof *batch);
    pthread_mutex_lock(&q.lock);
    for (;;) {
        size_t n = 0;
        for (;;) { /* something this committer may take, or the end */
            if (q.head && reqs && res && batch && (n = take(self, batch)))
                break;
            if (q.head && !(reqs && res && batch))
                break; /* out of memory for the arrays: answered below, one at a time */
            if (!q.head && q.stop)
                break;
            pthread_cond_wait(&q.work, &q.lock);
        }
        if (!q.head && !n && q.stop)
            break;
        q.held[self] = batch;
        q.n_held[self] = n;
        pthread_mutex_unlock(&q.lock);
        mn_status st = MN_NOMEM;
        if (n) {
            /* Another node's group may hold some of these sessions: with MN_APPEND_DEFER those
             * requests come back (MN_BUSY) instead of the whole group waiting for that commit.
             * A group of nothing but requests that came back waits instead, and so does one
             * holding a request that came back MAX_DEFERRALS times. */
            int fresh = 0, stale = 0;
            for (size_t i = 0; i < n; i++) {
                fresh |= batch[i]->deferred == 0;
                stale |= batch[i]->deferred >= MAX_DEFERRALS;
            }
            unsigned defer = fresh && !stale ? MN_APPEND_DEFER : 0;
            for (size_t i = 0; i < n; i++) {
                reqs[i] = batch[i]->req;
                reqs[i].flags |= defer;
            }
            st = mn_append_many(q.db, reqs, n, 1, res);
        }
        pthread_mutex_lock(&q.lock);
        struct pending *cbs = NULL;
        if (!n && q.head) { /* out of memory for the arrays: answer one request at a time */
            struct pending *p = q.head;
            q.head = p->next;
            q.depth--;
            if (!q.head)
                q.tail = NULL;
            p->res.status = MN_NOMEM;
            snprintf(p->res.errmsg, sizeof p->res.errmsg, "out of memory");
            finish(p, &cbs);
        }
        q.n_held[self] = 0; /* its sessions are free for the other committers */
        /* the requests another writer's lock kept out go first again, in their order */
        struct pending *first = NULL, *last = NULL;
        for (size_t i = 0; i < n; i++)
            if (!st && res[i].status == MN_BUSY && (reqs[i].flags & MN_APPEND_DEFER)) {
                batch[i]->deferred++;
                if (last)
                    last->next = batch[i];
                else
                    first = batch[i];
                last = batch[i];
                q.depth++;
                batch[i] = NULL;
            }
        if (first) {
            last->next = q.head;
            if (!q.head)
                q.tail = last;
            q.head = first;
        }
        size_t answered = 0;
        for (size_t i = 0; i < n; i++) {
            if (!batch[i])
                continue;
            batch[i]->res = res[i];
            if (st && !res[i].status)
                batch[i]->res.status = st;
            finish(batch[i], &cbs);
            answered++;
        }
        q.groups += n > 0;
        q.appends += answered;
        q.deferrals += n - answered;
        if (q.n_threads > 1)
            pthread_cond_broadcast(&q.work);
        pthread_mutex_unlock(&q.lock);
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
    free(reqs);
    free(res);
    free(batch);
    return NULL;
}

int srv_commit_start(mn_db *db, int committers)
{
    if (committers < 1) /* 0: as many as the database's backend can overlap */
        committers = mn_db_append_writers(db);
    if (committers > MAX_COMMITTERS)
        committers = MAX_COMMITTERS;
    pthread_mutex_lock(&q.lock);
    q.db = db;
    q.stop = 0;
    q.n_threads = 0;
    int rc = 0;
    while (q.n_threads < committers) {
        q.n_held[q.n_threads] = 0;
        if ((rc = pthread_create(&q.threads[q.n_threads], NULL, committer, (void *)(intptr_t)q.n_threads)))
            break;
        q.n_threads++;
    }
    if (rc && q.n_threads) /* fewer than asked: the ones running do */
        rc = 0;
    q.running = rc == 0;
    /* the committer drains the keyword index log after each group, off the appends' path */
    if (q.running)
        mn_keyword_drain_defer(db, 1);
    pthread_mutex_unlock(&q.lock);
    return rc == 0 ? 0 : -1;
}

void srv_commit_stop(void)
{
    pthread_mutex_lock(&q.lock);
    int running = q.running;
    q.stop = 1;
    pthread_cond_broadcast(&q.work);
    pthread_mutex_unlock(&q.lock);
    if (running) {
        for (int t = 0; t < q.n_threads; t++)
            pthread_join(q.threads[t], NULL); /* they drain the queue first */
        mn_keyword_drain_defer(q.db, 0);
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

int srv_append_submit(mn_db *db, const mn_append_request *req,
                      void (*done)(void *user, mn_status st, mn_messages *stored, const char *err), void *user)
{
    struct pending *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    *p = (struct pending){*req, {MN_OK, "", NULL}, 0, 0, PTHREAD_COND_INITIALIZER, done, user, NULL};
    pthread_mutex_lock(&q.lock);
    if (!q.running || q.stop || q.db != db) {
        pthread_mutex_unlock(&q.lock);
        free(p);
        return -1;
    }
    if (q.tail)
        q.tail->next = p;
    else
        q.head = p;
    q.tail = p;
    q.depth++;
    if (q.n_threads > 1)
        pthread_cond_broadcast(&q.work); /* the one that may take it */
    else
        pthread_cond_signal(&q.work);
    pthread_mutex_unlock(&q.lock);
    return 0;
}

mn_status srv_append(mn_db *db, const mn_append_request *req, mn_messages **out, char err[256])
{
    err[0] = '\0';
    *out = NULL;
    pthread_mutex_lock(&q.lock);
    struct pending p = {*req, {MN_OK, "", NULL}, 0, 0, PTHREAD_COND_INITIALIZER, NULL, NULL, NULL};
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
    if (q.tail)
        q.tail->next = &p;
    else
        q.head = &p;
    q.tail = &p;
    q.depth++;
    if (q.n_threads > 1)
        pthread_cond_broadcast(&q.work); /* the one that may take it */
    else
        pthread_cond_signal(&q.work);
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
