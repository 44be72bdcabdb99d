/*
 * fts_file.c — the keyword index's own file, "<db>.keywords" (schema.h, version 11), and the
 * thread that keeps it current.
 *
 * Why a file of its own: FTS5's work is about 35 us a message of the shared mix, as much as the
 * append itself, and one SQLite file has one writer, so an index in the database file could only
 * be written between appends (bench/README.md). In a second file it is written beside them: the
 * indexer handle (sqlite_int.h) locks only that file while it indexes new messages, reading the
 * database from a snapshot (search.c), on a thread of its own. The index is derived data: a
 * missing file, or one that belongs to another database (the id in meta 'fts.file' and in its
 * fts_meta differ) or to a later state of this one (its watermark past the largest id given), is
 * started again empty and indexed from the messages.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

#define KW_SUFFIX MN_SQLITE_KW_SUFFIX

/* The index's tables, created when missing or started again; the tokenizer is the one the
 * messages' index always had (schema.h, version 4). */
#define KW_TABLES                                                                                                \
    "CREATE TABLE IF NOT EXISTS kw.fts_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"                          \
    "CREATE TABLE IF NOT EXISTS kw.fts_applied (seq INTEGER PRIMARY KEY);"                                         \
    "CREATE VIRTUAL TABLE IF NOT EXISTS kw.messages_fts USING fts5(content, content = '', " MN_SQLITE_KW_TOKENIZE ");"

static mn_status kw_exec(struct sqlite_store *s, const char *sql)
{
    int r = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    return r == SQLITE_OK ? MN_OK : mn__sqlite_fail(s, r, "keyword index file");
}

/* ATTACH `file` AS kw (bound, so any path works). */
static mn_status kw_attach(struct sqlite_store *s, const char *file)
{
    sqlite3_stmt *st = NULL;
    int r = sqlite3_prepare_v2(s->db, "ATTACH ?1 AS kw", -1, &st, NULL);
    if (r == SQLITE_OK) {
        sqlite3_bind_text(st, 1, file, -1, SQLITE_STATIC);
        r = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    return r == SQLITE_DONE ? MN_OK : mn__sqlite_fail(s, r, "keyword index file");
}

mn_status mn__sqlite_kw_attach_read(struct sqlite_store *c, int *attached)
{
    char file[4096];
    *attached = 0;
    if (snprintf(file, sizeof file, "%s" KW_SUFFIX, c->path) >= (int)sizeof file)
        return mn__err(MN_INVALID, "database path is too long");
    if (access(file, F_OK) != 0) /* none yet: the database's copy alone, indexed again at its open */
        return MN_OK;
    mn_status rc = kw_attach(c, file);
    *attached = rc == MN_OK;
    return rc;
}

mn_status mn__sqlite_kw_attach_rw(struct sqlite_store *s)
{
    if (s->no_readers && !s->kw_own) /* a private database: its index is private too */
        return kw_attach(s, ":memory:");
    char file[4096];
    if (snprintf(file, sizeof file, "%s" KW_SUFFIX, s->path) >= (int)sizeof file)
        return mn__err(MN_INVALID, "database path is too long");
    mn_status rc = kw_attach(s, file);
    /* as the database's (sqlite.c): WAL; a new file's switch may meet another process's */
    for (int attempt = 0; !rc; attempt++) {
        int r = sqlite3_exec(s->db, "PRAGMA kw.journal_mode = WAL", NULL, NULL, NULL);
        if (r == SQLITE_OK)
            break;
        if ((r & 0xFF) != SQLITE_BUSY || attempt >= 200)
            rc = mn__sqlite_fail(s, r, "keyword index file");
        else
            sqlite3_sleep(10);
    }
    return rc;
}

/* Whether the database has an id for its index file; whether the index's tables are there. */
static const char SQL_CHECK_KNOWN[] = "SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'fts.file')";
static const char SQL_CHECK_TABLES[] =
    "SELECT count(*) = 2 FROM kw.sqlite_schema WHERE name IN ('fts_meta', 'messages_fts')";
/* With the tables: whether the file carries the database's id and is not ahead of it. */
static const char SQL_CHECK_OURS[] =
    "SELECT (SELECT value FROM kw.fts_meta WHERE key = 'fts.file') IS (SELECT value FROM meta WHERE key = 'fts.file')"
    "  AND coalesce((SELECT CAST(value AS INTEGER) FROM kw.fts_meta WHERE key = 'fts.indexed_upto'), 0) <= " MN_SQLITE_LAST_ID;
static const char SQL_RESET[] =
    "INSERT INTO meta (key, value) SELECT 'fts.file', lower(hex(randomblob(16)))"
    " WHERE NOT EXISTS (SELECT 1 FROM meta WHERE key = 'fts.file');"
    "DROP TABLE IF EXISTS kw.messages_fts;"
    "DROP TABLE IF EXISTS kw.fts_applied;"
    "DROP TABLE IF EXISTS kw.fts_meta;" KW_TABLES
    "INSERT INTO kw.fts_meta (key, value) SELECT 'fts.file', value FROM meta WHERE key = 'fts.file';";

/* In one write transaction (both files): the index's tables exist and belong to this database,
 * else they start again empty. */
static mn_status kw_check(struct sqlite_store *s)
{
    int64_t known = 0, tables = 0, ours = 0;
    mn_status rc = mn__sqlite_begin_write(s);
    /* a missing mark table alone is no reason to index again: an empty one is always right */
    if (!rc)
        rc = kw_exec(s, "CREATE TABLE IF NOT EXISTS kw.fts_applied (seq INTEGER PRIMARY KEY)");
    if (!rc && !(rc = mn__sqlite_one_value(s, SQL_CHECK_KNOWN, &known)) &&
        !(rc = mn__sqlite_one_value(s, SQL_CHECK_TABLES, &tables)) && tables)
        rc = mn__sqlite_one_value(s, SQL_CHECK_OURS, &ours);
    if (!rc && !ours) {
        if (known && !s->no_readers)
            mn__log(MN_LOG_WARN, "%s" KW_SUFFIX ": keyword index missing, of another database or state; indexing again",
                    s->path);
        rc = kw_exec(s, SQL_RESET);
    }
    if (rc)
        mn__sqlite_rollback(s);
    else
        rc = mn__sqlite_commit(s);
    return rc;
}

mn_status mn__sqlite_kw_views(struct sqlite_store *c)
{
    return kw_exec(c, "CREATE TEMP VIEW IF NOT EXISTS fts_log_pending AS SELECT * FROM main.msg_log"
                      " WHERE seq NOT IN (SELECT seq FROM kw.fts_applied)");
}

static void kw_sync_destroy(struct sqlite_store *s)
{
    pthread_mutex_destroy(&s->kw_sig);
    pthread_cond_destroy(&s->kw_cond);
    pthread_cond_destroy(&s->kw_caught);
}

static void *indexer_main(void *arg)
{
    struct sqlite_store *s = arg;
    pthread_mutex_lock(&s->kw_sig);
    for (;;) {
        while (!s->kw_wake && !s->kw_stop)
            pthread_cond_wait(&s->kw_cond, &s->kw_sig);
        if (!s->kw_wake)
            break; /* stopped, nothing more asked for: what was asked is done before a close returns */
        s->kw_wake = 0;
        pthread_mutex_unlock(&s->kw_sig);
        mn__sqlite_fts_indexer_run(s);
        pthread_mutex_lock(&s->kw_sig);
    }
    pthread_mutex_unlock(&s->kw_sig);
    return NULL;
}

mn_status mn__sqlite_kw_start(struct sqlite_store *s)
{
    mn_status rc = kw_check(s);
    if (rc || s->no_readers) /* a private index stays attached read-write and is drained inline */
        return rc ? rc : mn__sqlite_kw_views(s);
    if ((rc = kw_exec(s, "DETACH kw")))
        return rc;
    if ((rc = mn__sqlite_open_indexer(s, &s->kw)))
        return rc;
    pthread_mutex_init(&s->kw_sig, NULL);
    pthread_cond_init(&s->kw_cond, NULL);
    pthread_cond_init(&s->kw_caught, NULL);
    s->kw_started = pthread_create(&s->kw_thread, NULL, indexer_main, s) == 0;
    if (!s->kw_started) /* appends then drain inline, on the indexer handle */
        kw_sync_destroy(s);
    return MN_OK;
}

void mn__sqlite_kw_ask(struct sqlite_store *s, int64_t rows, int64_t budget, int64_t bound)
{
    atomic_fetch_add(&s->kw->kw_budget, budget);
    pthread_mutex_lock(&s->kw_sig);
    s->kw_asked += rows;
    s->kw_behind += rows;
    s->kw_wake = 1;
    pthread_cond_signal(&s->kw_cond);
    /* Waiting, not draining here: an append that drained itself held the indexer's lock for the
     * whole backlog while the thread sat idle; waiting, it goes on as soon as the thread is back
     * under the bound, the two cores busy. */
    while (s->kw_behind > bound && !s->kw_stop)
        pthread_cond_wait(&s->kw_caught, &s->kw_sig);
    pthread_mutex_unlock(&s->kw_sig);
}

int64_t mn__sqlite_kw_asked(struct sqlite_store *s)
{
    pthread_mutex_lock(&s->kw_sig);
    int64_t asked = s->kw_asked;
    pthread_mutex_unlock(&s->kw_sig);
    return asked;
}

int mn__sqlite_kw_caught(struct sqlite_store *s, int64_t asked, int64_t consumed, int last, mn_status rc)
{
    pthread_mutex_lock(&s->kw_sig);
    if (rc) /* left for the next drain or search; nobody waits for it */
        s->kw_behind = 0;
    else if (last) /* everything handed over before the step was in its reach */
        s->kw_behind = s->kw_asked - asked;
    else /* the oldest first: ours, or another writer's (then the estimate errs low) */
        s->kw_behind = consumed < s->kw_behind ? s->kw_behind - consumed : 0;
    int behind = s->kw_behind > 0;
    pthread_cond_broadcast(&s->kw_caught);
    pthread_mutex_unlock(&s->kw_sig);
    return behind;
}

/* kw_background under kw_sig: set to `set` (1 or 0), or only read (-1); returns what it was. */
static int background(struct sqlite_store *s, int set)
{
    if (!s->kw_started)
        return 0;
    pthread_mutex_lock(&s->kw_sig);
    int was = s->kw_background;
    if (set >= 0)
        s->kw_background = set;
    pthread_mutex_unlock(&s->kw_sig);
    return was;
}

int mn__sqlite_kw_rebuilding(struct sqlite_store *s) { return background(s, -1); }

int mn__sqlite_kw_rebuild_start(struct sqlite_store *s) { return s->kw_started && !background(s, 1); }

void mn__sqlite_kw_rebuilt(struct sqlite_store *s) { background(s, 0); }

int mn__sqlite_kw_quitting(struct sqlite_store *s)
{
    if (!s->kw_started)
        return 0;
    pthread_mutex_lock(&s->kw_sig);
    int quit = s->kw_stop && s->kw_background;
    pthread_mutex_unlock(&s->kw_sig);
    return quit;
}

/* While the thread rebuilds, its steps (thousands of messages, and FTS5's merges of what they
 * wrote: seconds at times) hold the indexer's lock; a search on a reader of its own, with the
 * index's file attached read-only, reads the last committed state beside them instead. Opened
 * once, kept until the close. */
mn_status mn__sqlite_kw_searcher(struct sqlite_store *s, struct sqlite_store **out)
{
    mn_status rc = MN_OK;
    pthread_mutex_lock(&s->kw_sig);
    if (!s->kw_searcher) {
        struct sqlite_store *r = NULL;
        int attached = 0;
        rc = mn__sqlite_open_reader(s, &r);
        if (!rc && !(rc = mn__sqlite_kw_attach_read(r, &attached)) && !attached)
            rc = mn__err(MN_IO, "%s" KW_SUFFIX ": the keyword index file is missing", s->path);
        if (!rc)
            rc = mn__sqlite_kw_views(r);
        if (rc && r)
            mn__sqlite_close(r);
        else
            s->kw_searcher = r;
    }
    *out = s->kw_searcher;
    pthread_mutex_unlock(&s->kw_sig);
    return rc;
}

void mn__sqlite_kw_stop(struct sqlite_store *s)
{
    if (s->kw_started) {
        pthread_mutex_lock(&s->kw_sig);
        s->kw_stop = 1;
        pthread_cond_signal(&s->kw_cond);
        pthread_cond_broadcast(&s->kw_caught);
        pthread_mutex_unlock(&s->kw_sig);
        pthread_join(s->kw_thread, NULL);
        kw_sync_destroy(s);
        s->kw_started = 0;
    }
    if (s->kw)
        mn__sqlite_close(s->kw);
    s->kw = NULL;
    if (s->kw_searcher)
        mn__sqlite_close(s->kw_searcher);
    s->kw_searcher = NULL;
}
