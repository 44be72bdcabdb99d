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
 *
 * Extraction jobs (mn_memory_extract_queue, mn_memory_extract_job; Mem0's async add): a session
 * queued "forced" runs whatever memory.extract says, and the job is kept in the database — a
 * "memory_extract_queued" event of the session, found by id through meta memory.extract.job.<id>
 * — so that its state can be asked after a restart. Each forced run writes a "memory_extract_run"
 * event (the turns it covered, ok or failed and why); the job's state is read from the watermark,
 * those events and this worker's queue (docs/memory.md, "Async add and its event").
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "engine/engine.h"
#include "config/config.h"
#include "store/records.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

#define QUEUE_CAP 256
#define DEBOUNCE_MS 100
#define CLOSE_CATCH_UP 1000 /* memory vectors not yet indexed that mn_close indexes */
#define OPTIN_KEY "memory.extract.optin"
#define OPTIN_RECHECK_MS 1000 /* how often a handle looks whether another one saw a session opt in */

#define JOB_KEY "memory.extract.job." /* meta: a job's id -> its session */
#define EV_QUEUED "memory_extract_queued"
#define EV_RUN "memory_extract_run"
#define JOB_DATA_MAX 4096
#define JOB_SCAN_FIRST 64   /* a job's session events read first (the newest: a job being polled) */
#define JOB_SCAN_MAX 10000  /* and at most: an older job is not found */

struct entry {
    char id[MN_UUID_LEN + 1];
    int forced; /* a job's (mn_memory_extract_queue): runs whatever memory.extract says */
};

struct mn_memory_bg {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int started, stop;
    struct entry queue[QUEUE_CAP];
    size_t n;
    struct entry taken[QUEUE_CAP]; /* the worker's batch: taken[pos] runs now, the rest wait */
    size_t n_taken, pos;
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

/* The seq of session_id's newest message (0: none), inactive ones included. */
static mn_status newest_seq(mn_db *db, const char *session_id, int64_t *seq)
{
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.limit = 1;
    o.tail = 1;
    o.all = 1;
    mn_messages *l = NULL;
    mn_status rc = db->store->ops->history(db->store, session_id, &o, NULL, &l);
    *seq = !rc && l->count ? l->items[0].seq : 0;
    mn__records_message_list_free(l);
    return rc;
}

/* One run of the worker. A forced run (a job's) is recorded as a session event: the turns it
 * covered (those up to the newest when it started) and whether it read them; an answer of the
 * llm extractor it rejected counts as a failure, as the turns stay unread until a later run. */
static void run(mn_db *db, const struct entry *e)
{
    int64_t upto = 0;
    if (e->forced && newest_seq(db, e->id, &upto))
        upto = 0; /* the run fails the same way below */
    mn_extract_stats st = {0, 0, 0, 0, 0, 0, 0};
    mn_status rc = mn__extract_memories(db, e->id, NULL, !e->forced, &st);
    if (rc)
        mn__log(MN_LOG_WARN, "background memory extraction, session %s: %s", e->id, mn_errmsg());
    if (!e->forced)
        return;
    const char *why = rc ? (mn_errmsg()[0] ? mn_errmsg() : mn_status_str(rc))
                         : st.rejected ? "the extractor's answer was malformed, nothing changed (see the "
                                         "memory_extract_rejected event); a later run reads these turns again"
                                       : NULL;
    json_t *ev = json_pack("{s:s,s:I}", "outcome", why ? "failed" : "ok", "upto_seq", (json_int_t)upto);
    if (ev && why)
        json_object_set_new(ev, "error", json_string(why));
    char *text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
    json_decref(ev);
    if (!text || db->store->ops->event_insert(db->store, e->id, EV_RUN, text, mn__clock_now_ms()) != MN_OK)
        mn__log(MN_LOG_WARN, "background memory extraction, session %s: cannot record the run: %s", e->id,
                text ? mn_errmsg() : "out of memory");
    free(text);
    mn__err_clear();
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
        bg->n_taken = n;
        bg->pos = 0;
        pthread_mutex_unlock(&bg->lock);
        for (size_t i = 0; i < n; i++) {
            run(db, &bg->taken[i]);
            pthread_mutex_lock(&bg->lock);
            bg->runs++;
            bg->pos = i + 1;
            int stop = bg->stop;
            pthread_mutex_unlock(&bg->lock);
            if (stop)
                break;
        }
        pthread_mutex_lock(&bg->lock);
        bg->n_taken = bg->pos = 0;
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
    int64_t now = mn__clock_mono_ns() / 1000000;
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

/* Queues session_id (lock held) unless it is queued already — a forced request makes the queued
 * one forced — or the handle is closing; a full queue drops it (the watermark lets a later run
 * catch up; a job's next read queues it again). */
static void enqueue(mn_db *db, struct mn_memory_bg *bg, const char *session_id, int forced)
{
    if (bg->stop)
        return;
    start(db, bg);
    size_t i = 0;
    while (i < bg->n && strcmp(bg->queue[i].id, session_id) != 0)
        i++;
    if (i < bg->n) {
        bg->queue[i].forced |= forced;
    } else if (bg->n < QUEUE_CAP) {
        memcpy(bg->queue[bg->n].id, session_id, MN_UUID_LEN + 1);
        bg->queue[bg->n].forced = forced;
        bg->n++;
        pthread_cond_broadcast(&bg->wake);
    }
}

/* Queues a job's session. */
static void enqueue_forced(mn_db *db, const char *session_id)
{
    struct mn_memory_bg *bg = db->memory_bg;
    if (!bg)
        return;
    pthread_mutex_lock(&bg->lock);
    enqueue(db, bg, session_id, 1);
    pthread_mutex_unlock(&bg->lock);
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
    if (strcmp(mn__config_str(db->cfg, "memory.extract"), "off") == 0 && !opted_in(db, bg))
        return;
    pthread_mutex_lock(&bg->lock);
    enqueue(db, bg, session_id, 0);
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

/* ---- extraction jobs ------------------------------------------------------------------------- */

mn_status mn_memory_extract_queue(mn_db *db, const char *session_id, const char *data, char **job_id)
{
    char canon[MN_UUID_LEN + 1], id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (job_id)
        *job_id = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)))
        return rc;
    if (data && strlen(data) > JOB_DATA_MAX)
        return mn__err(MN_TOOBIG, "data: %zu bytes, at most %d", strlen(data), JOB_DATA_MAX);
    json_t *d = data ? json_loads(data, JSON_REJECT_DUPLICATES, NULL) : json_object();
    if (!json_is_object(d)) {
        json_decref(d);
        return data ? mn__err(MN_INVALID, "data: must be a JSON object") : mn__nomem();
    }
    int64_t upto = 0, now = mn__clock_now_ms();
    char *text = NULL;
    if (!(rc = mn__live_session(db, canon, NULL)) && !(rc = newest_seq(db, canon, &upto)) &&
        !(rc = mn__uuid_v7(now, id))) {
        json_t *ev = json_pack("{s:s,s:I,s:O}", "job", id, "upto_seq", (json_int_t)upto, "data", d);
        text = ev ? json_dumps(ev, JSON_COMPACT) : NULL;
        json_decref(ev);
        rc = text ? MN_OK : mn__nomem();
    }
    json_decref(d);
    /* the event first: a job the meta key names always has its record */
    if (!rc && !(rc = db->store->ops->event_insert(db->store, canon, EV_QUEUED, text, now))) {
        char key[sizeof JOB_KEY + MN_UUID_LEN];
        snprintf(key, sizeof key, JOB_KEY "%s", id);
        rc = db->store->ops->meta_set(db->store, key, canon);
    }
    free(text);
    if (!rc && job_id && !(*job_id = strdup(id)))
        rc = mn__nomem();
    if (!rc)
        enqueue_forced(db, canon);
    return rc;
}

/* A job's run (memory_extract_run), recorded after the job's own event. */
struct run_rec {
    int ok;
    int64_t upto, at;
    char *error;
};

/* The newest events of a job's session down to the job's own (newest first). */
struct job_scan {
    const char *id;
    size_t seen;
    int found;
    int64_t upto, at;
    char *data;
    struct run_rec *runs;
    size_t n_runs;
    mn_status rc;
};

static void job_scan_release(struct job_scan *sc)
{
    for (size_t i = 0; i < sc->n_runs; i++)
        free(sc->runs[i].error);
    free(sc->runs);
    free(sc->data);
    sc->runs = NULL;
    sc->data = NULL;
    sc->n_runs = 0;
    sc->seen = 0;
}

static int job_scan_event(void *user, int64_t ev_id, const char *kind, const char *data, int64_t at)
{
    struct job_scan *sc = user;
    sc->seen++;
    int queued = strcmp(kind, EV_QUEUED) == 0;
    if (!queued && strcmp(kind, EV_RUN) != 0)
        return 0;
    json_t *j = json_loads(data, 0, NULL);
    int64_t upto = (int64_t)json_integer_value(json_object_get(j, "upto_seq"));
    const char *job = json_string_value(json_object_get(j, "job"));
    if (queued && job && strcmp(job, sc->id) == 0) {
        json_t *d = json_object_get(j, "data");
        sc->found = 1;
        sc->upto = upto;
        sc->at = at;
        if (!(sc->data = d ? json_dumps(d, JSON_COMPACT) : strdup("{}")))
            sc->rc = mn__nomem();
    } else if (!queued) {
        const char *outcome = json_string_value(json_object_get(j, "outcome"));
        const char *err = json_string_value(json_object_get(j, "error"));
        struct run_rec *r = realloc(sc->runs, (sc->n_runs + 1) * sizeof *r);
        if (r) {
            sc->runs = r;
            r += sc->n_runs++;
            *r = (struct run_rec){outcome && strcmp(outcome, "ok") == 0, upto, at, err ? strdup(err) : NULL};
        }
        if (!r || (err && !r->error))
            sc->rc = mn__nomem();
    }
    json_decref(j);
    return sc->found || sc->rc;
}

/* Finds job sc->id among session_id's newest events: the first few, else up to JOB_SCAN_MAX. */
static mn_status job_scan(mn_db *db, const char *session_id, struct job_scan *sc)
{
    size_t limits[] = {JOB_SCAN_FIRST, JOB_SCAN_MAX};
    for (size_t i = 0; i < 2; i++) {
        job_scan_release(sc);
        mn_status rc = db->store->ops->events_list(db->store, session_id, limits[i], job_scan_event, sc);
        if (rc || sc->rc || sc->found || sc->seen < limits[i])
            return rc ? rc : sc->rc;
    }
    return MN_OK;
}

/* Whether every message of session_id up to seq upto has been read by an extraction: the
 * watermark is past it, or the messages between the watermark and it were erased since. */
void mn__extract_mark_key(const char *session_id, char key[MN_EXTRACT_MARK_KEY_CAP])
{
    snprintf(key, MN_EXTRACT_MARK_KEY_CAP, "memory.extracted.%s", session_id);
}

static mn_status extracted_upto(mn_db *db, const char *session_id, int64_t upto, int *done)
{
    char key[MN_EXTRACT_MARK_KEY_CAP], *mark = NULL;
    mn__extract_mark_key(session_id, key);
    mn_status rc = db->store->ops->meta_get(db->store, key, &mark);
    int64_t after = mark ? strtoll(mark, NULL, 10) : 0;
    free(mark);
    *done = after >= upto;
    if (rc || *done)
        return rc;
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.after_seq = after;
    o.limit = 1;
    o.all = 1;
    mn_messages *l = NULL;
    if (!(rc = db->store->ops->history(db->store, session_id, &o, NULL, &l)))
        *done = l->count == 0 || l->items[0].seq > upto;
    mn__records_message_list_free(l);
    return rc;
}

/* Where session_id stands with this handle's worker: 2 being extracted now, 1 queued, 0 neither. */
static int held(mn_db *db, const char *session_id)
{
    struct mn_memory_bg *bg = db->memory_bg;
    int at = 0;
    if (!bg)
        return 0;
    pthread_mutex_lock(&bg->lock);
    if (bg->pos < bg->n_taken && strcmp(bg->taken[bg->pos].id, session_id) == 0)
        at = 2;
    for (size_t i = bg->pos + 1; !at && i < bg->n_taken; i++)
        at = strcmp(bg->taken[i].id, session_id) == 0;
    for (size_t i = 0; !at && i < bg->n; i++)
        at = strcmp(bg->queue[i].id, session_id) == 0;
    pthread_mutex_unlock(&bg->lock);
    return at;
}

static mn_status job_not_found(const char *id)
{
    return mn__err(MN_NOTFOUND, "extraction job %s not found", id);
}

/* The job's state from the scan (the runs recorded after it that covered its turns), the
 * watermark, and where its session stood with the worker before either was read (at, as held()
 * says): a run writes the watermark, then its event, and only then lets the session go. */
static mn_status job_state(mn_db *db, const struct job_scan *sc, int at, mn_extract_job *job)
{
    int done = 0;
    mn_status rc = extracted_upto(db, job->session_id, job->upto_seq, &done);
    if (rc)
        return rc;
    const struct run_rec *ok = NULL, *failed = NULL; /* the first of each after the job (runs: newest first) */
    for (size_t i = sc->n_runs; i-- > 0;) {
        const struct run_rec *r = &sc->runs[i];
        if (r->upto < job->upto_seq) /* started before the job's turns were there */
            continue;
        if (r->ok && !ok)
            ok = r;
        if (!r->ok && !failed)
            failed = r;
    }
    if (done && (ok || !at)) {
        job->state = MN_EXTRACT_DONE;
        job->finished_at = ok ? ok->at : 0;
    } else if (done) { /* read by another run; the job's own, which records the end, is under way */
        job->state = MN_EXTRACT_RUNNING;
    } else if (failed) {
        job->state = MN_EXTRACT_FAILED;
        job->finished_at = failed->at;
        if (!(job->error = strdup(failed->error ? failed->error : "the extraction failed")))
            return mn__nomem();
    } else {
        job->state = at == 2 ? MN_EXTRACT_RUNNING : MN_EXTRACT_PENDING;
        if (!at) /* lost with the process that queued it, or dropped from a full queue */
            enqueue_forced(db, job->session_id);
    }
    return MN_OK;
}

mn_status mn_memory_extract_job(mn_db *db, const char *ns, const char *job_id, mn_extract_job **out)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_memory_extract_job: out is NULL");
    *out = NULL;
    if (rc)
        return rc;
    if (!job_id || !mn__uuid_parse(job_id, id))
        return mn__err(MN_INVALID, "job id '%.60s' is not a UUID", job_id ? job_id : "(null)");
    char key[sizeof JOB_KEY + MN_UUID_LEN], *sid = NULL;
    snprintf(key, sizeof key, JOB_KEY "%s", id);
    if ((rc = db->store->ops->meta_get(db->store, key, &sid)))
        return rc;
    mn_session *s = NULL;
    rc = sid ? db->store->ops->session_get(db->store, sid, &s) : MN_NOTFOUND;
    free(sid);
    /* a session deleted (its events went with it) and one of another namespace look the same */
    if (rc == MN_NOTFOUND || (!rc && ns && strcmp(s->ns, ns) != 0)) {
        mn__records_session_free(s);
        return job_not_found(id);
    }
    if (rc)
        return rc;
    struct job_scan sc = {.id = id};
    int at = held(db, s->id);
    mn_extract_job *job = calloc(1, sizeof *job);
    if (!job)
        rc = mn__nomem();
    else if (!(rc = job_scan(db, s->id, &sc)) && !sc.found)
        rc = job_not_found(id); /* its session was made again with the same id, or the job is too old */
    if (!rc && (!(job->id = strdup(id)) || !(job->session_id = strdup(s->id)) || !(job->ns = strdup(s->ns))))
        rc = mn__nomem();
    if (!rc) {
        job->data = sc.data;
        sc.data = NULL;
        job->upto_seq = sc.upto;
        job->queued_at = sc.at;
        rc = job_state(db, &sc, at, job);
    }
    job_scan_release(&sc);
    mn__records_session_free(s);
    if (rc)
        mn_extract_job_free(job);
    else
        *out = job;
    return rc;
}

void mn_extract_job_free(mn_extract_job *job)
{
    if (!job)
        return;
    free(job->id);
    free(job->session_id);
    free(job->ns);
    free(job->data);
    free(job->error);
    free(job);
}
