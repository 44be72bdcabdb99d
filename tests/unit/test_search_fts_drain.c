/*
 * test_search_fts_drain.c — the keyword index's backlog (the messages past its watermark, and
 * msg_log) is drained as messages arrive
 * (search.fts_drain; docs/search.md, "Keeping the keyword index current"): thousands of appends,
 * edits, deletes and batches larger than a chunk, through the library on a real SQLite file, keep
 * the log within a bound (its row count read beside the handle), and keyword search then answers
 * exactly what a store that drains only at search time answers (same ids, same bm25). Also: the
 * deferred mode (mnemo serve: appends leave the drain to mn_keyword_drain), mn_keyword_drain with
 * all = 1, an older backlog worked off by later appends, short-lived handles (one append each),
 * FTS5's own integrity check, and the migration of a version-6 database with a log left behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_sql.h"

#define CHUNK 100
#define NSESS 5
#define NMSG 4000
#define BATCH 250 /* larger than a chunk */

static uint64_t rs = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs >> 11);
}

static const char *const vocab[] = {"alpha", "beta",  "gamma",   "delta", "epsilon", "zeta", "eta",   "theta",
                                    "iota",  "kappa", "lambda",  "mu",    "nu",      "xi",   "omicron", "pi",
                                    "rho",   "sigma", "tau",     "upsilon", "phi",   "chi",  "psi",   "omega",
                                    "running", "runs", "ran",    "café",  "naïve",   "x"};
#define NVOCAB (sizeof vocab / sizeof *vocab)

static void text(char *out, size_t cap)
{
    size_t len = 0, words = 3 + rnd() % 12;
    out[0] = '\0';
    for (size_t i = 0; i < words; i++) {
        unsigned z = rnd() % (unsigned)NVOCAB;
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", vocab[z * z / NVOCAB]);
    }
}

static char base[512];

static void tmpdir(char *dir, size_t cap, const char *name)
{
    const char *tmp = getenv("MNEMO_TEST_TMP");
    snprintf(base, sizeof base, "%s", tmp && *tmp ? tmp : "/tmp");
    mkdir(base, 0700);
    snprintf(dir, cap, "%s/%s-XXXXXX", base, name);
    assert_non_null(mkdtemp(dir));
}

static void rmdir_all(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static mn_db *open_db(const char *path, const char *drain)
{
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "search.fts_drain", drain, NULL), MN_OK);
    mn_status rc = mn_open_path(path, cfg, &db);
    mn_config_free(cfg);
    if (rc)
        fail_msg("open %s: %s", path, mn_errmsg());
    return db;
}

/* The rows waiting for the keyword index, read on a connection of its own (WAL: it sees every
 * commit): the log at or below the index's watermark (rows above it are dropped, not applied), and
 * the messages with text past the watermark (in the index's file, attached by test_sql_open_kw). */
static int64_t log_rows(sqlite3 *c)
{
    return test_sql_int(c, "SELECT (SELECT count(*) FROM msg_log WHERE message_id <= w) + (SELECT count(*) FROM"
                           " messages WHERE content IS NOT NULL AND id > w) FROM (SELECT coalesce((SELECT"
                           " CAST(value AS INTEGER) FROM fts_meta WHERE key = 'fts.indexed_upto'), 0) AS w)");
}

static char *new_session(mn_db *db)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static int64_t append_one(mn_db *db, const char *sid, int i, const char *content)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
    m.content = content;
    mn_message *out = NULL;
    assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

static void append_batch(mn_db *db, const char *sid, char texts[][200], size_t n)
{
    mn_message_in *in = calloc(n, sizeof *in);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = texts[i];
        in[i] = m;
    }
    assert_int_equal(mn_append_batch(db, sid, in, n, 0, NULL), MN_OK);
    free(in);
}

/* Same operations on A (drains every CHUNK rows) and B (drains only at search time). */
static void bounded_and_same_results(void **state)
{
    (void)state;
    char dir[600], pa[700], pb[700];
    tmpdir(dir, sizeof dir, "fts-drain");
    snprintf(pa, sizeof pa, "%s/a.db", dir);
    snprintf(pb, sizeof pb, "%s/b.db", dir);
    mn_db *a = open_db(pa, "100"), *b = open_db(pb, "0");
    sqlite3 *ca = test_sql_open_kw(pa, SQLITE_OPEN_READWRITE), *cb = test_sql_open_kw(pb, SQLITE_OPEN_READWRITE);
    char *sa[NSESS], *sb[NSESS];
    for (int k = 0; k < NSESS; k++) {
        sa[k] = new_session(a);
        sb[k] = new_session(b);
    }
    static int64_t ids[NMSG + 8 * BATCH];
    static int sess[NMSG + 8 * BATCH], gone[NMSG + 8 * BATCH];
    static char batch[BATCH][200];
    size_t n = 0;
    int64_t max_log = 0, edits = 0, deletes = 0;
    char buf[200];
    for (int i = 0; i < NMSG; i++) {
        int k = i % NSESS;
        text(buf, sizeof buf);
        int64_t id = append_one(a, sa[k], i, buf);
        assert_int_equal(append_one(b, sb[k], i, buf), id); /* same ids in both stores */
        ids[n] = id;
        sess[n++] = k;
        if (i % 97 == 96) { /* an edit of an earlier message: its old text out, the new one in */
            size_t j = rnd() % n;
            if (!gone[j]) {
                text(buf, sizeof buf);
                mn_status ra = mn_message_edit(a, sa[sess[j]], ids[j], buf, NULL, NULL);
                assert_int_equal(mn_message_edit(b, sb[sess[j]], ids[j], buf, NULL, NULL), ra);
                edits += ra == MN_OK;
            }
        }
        if (i % 131 == 130) {
            size_t j = rnd() % n;
            if (!gone[j]) {
                mn_status ra = mn_message_delete(a, sa[sess[j]], ids[j]);
                assert_int_equal(mn_message_delete(b, sb[sess[j]], ids[j]), ra);
                gone[j] = ra == MN_OK;
                deletes += ra == MN_OK;
            }
        }
        if (i % 1000 == 999) {
            for (int t = 0; t < BATCH; t++)
                text(batch[t], sizeof batch[t]);
            append_batch(a, sa[k], batch, BATCH);
            append_batch(b, sb[k], batch, BATCH);
        }
        int64_t rows = log_rows(ca);
        if (rows > max_log)
            max_log = rows;
    }
    /* between two drains a handle logs fewer than CHUNK rows, plus one append's own (a batch),
     * plus the edits of the period; a drain takes what was logged and a chunk more, on the indexer
     * thread, and an append waits while the thread is more than four chunks behind */
    assert_true(max_log < 5 * CHUNK + BATCH);
    assert_true(edits > 10);
    assert_true(deletes > 10);
    assert_true(log_rows(cb) > 0); /* B's log waits for a search (a delete applies it too: mn__sqlite_fts_erase) */

    int64_t pending = -1, applied = -1;
    assert_int_equal(mn_keyword_drain(a, 0, &applied, &pending), MN_OK);
    assert_true(pending >= log_rows(ca)); /* the indexer thread may drain after the count */

    int nonempty = 0;
    for (int q = 0; q < 60; q++) {
        char query[64];
        unsigned z1 = rnd() % (unsigned)NVOCAB, z2 = rnd() % (unsigned)NVOCAB;
        snprintf(query, sizeof query, q % 3 ? "%s" : "%s %s", vocab[z1], vocab[z2]);
        size_t k = 1 + rnd() % 50;
        mn_search_hits *ha = NULL, *hb = NULL;
        assert_int_equal(mn_search(a, query, MN_SEARCH_KEYWORD, k, NULL, 0, &ha), MN_OK);
        assert_int_equal(mn_search(b, query, MN_SEARCH_KEYWORD, k, NULL, 0, &hb), MN_OK);
        assert_int_equal(ha->count, hb->count);
        for (size_t i = 0; i < ha->count; i++) {
            const mn_search_hit *x = mn_search_hits_at(ha, i), *y = mn_search_hits_at(hb, i);
            if (x->message.id != y->message.id || x->bm25 != y->bm25 || strcmp(x->message.content, y->message.content))
                fail_msg("query \"%s\": hit %zu is #%lld (%.17g) while draining, #%lld (%.17g) at search", query, i,
                         (long long)x->message.id, x->bm25, (long long)y->message.id, y->bm25);
        }
        nonempty += ha->count > 0;
        mn_search_hits_free(ha);
        mn_search_hits_free(hb);
    }
    assert_true(nonempty > 40);
    assert_int_equal(log_rows(ca), 0); /* the search applied the remainder */
    assert_int_equal(log_rows(cb), 0);
    /* the index is consistent (contentless: its own structures) */
    assert_int_equal(sqlite3_exec(ca, "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    for (int k = 0; k < NSESS; k++) {
        free(sa[k]);
        free(sb[k]);
    }
    sqlite3_close(ca);
    sqlite3_close(cb);
    mn_close(a);
    mn_close(b);
    rmdir_all(dir);
}

/* Deferred: appends leave the log to mn_keyword_drain; all = 1 empties it. */
static void deferred_and_all(void **state)
{
    (void)state;
    char dir[600], path[700], buf[200];
    tmpdir(dir, sizeof dir, "fts-drain-defer");
    snprintf(path, sizeof path, "%s/d.db", dir);
    mn_db *db = open_db(path, "100");
    sqlite3 *c = test_sql_open_kw(path, SQLITE_OPEN_READWRITE);
    char *sid = new_session(db);
    assert_int_equal(mn_keyword_drain_defer(db, 1), MN_OK);
    for (int i = 0; i < 3 * CHUNK; i++) {
        text(buf, sizeof buf);
        append_one(db, sid, i, buf);
    }
    assert_int_equal(log_rows(c), 3 * CHUNK); /* nothing drained by the appends */
    int64_t applied = 0, pending = 0;
    assert_int_equal(mn_keyword_drain(db, 0, &applied, &pending), MN_OK);
    assert_int_equal(applied, 3 * CHUNK);
    assert_int_equal(pending, 0);
    for (int i = 0; i < 10; i++) {
        text(buf, sizeof buf);
        append_one(db, sid, i, buf);
    }
    assert_int_equal(mn_keyword_drain(db, 0, &applied, &pending), MN_OK);
    assert_int_equal(applied, 0); /* fewer than a chunk: left for later */
    assert_int_equal(pending, 10);
    assert_int_equal(mn_keyword_drain(db, 1, &applied, &pending), MN_OK);
    assert_int_equal(applied, 10);
    assert_int_equal(pending, 0);
    assert_int_equal(mn_keyword_drain_defer(db, 0), MN_OK);
    free(sid);
    sqlite3_close(c);
    mn_close(db);
    rmdir_all(dir);
}

/* A backlog written with the drain off is worked off by later appends, a chunk more each time. */
static void older_backlog(void **state)
{
    (void)state;
    char dir[600], path[700], buf[200];
    tmpdir(dir, sizeof dir, "fts-drain-old");
    snprintf(path, sizeof path, "%s/o.db", dir);
    mn_db *db = open_db(path, "0");
    char *sid = new_session(db);
    for (int i = 0; i < 5 * CHUNK; i++) {
        text(buf, sizeof buf);
        append_one(db, sid, i, buf);
    }
    mn_close(db);
    sqlite3 *c = test_sql_open_kw(path, SQLITE_OPEN_READWRITE);
    assert_int_equal(log_rows(c), 5 * CHUNK);
    db = open_db(path, "100");
    for (int i = 0; i < 10 * CHUNK; i++) {
        text(buf, sizeof buf);
        append_one(db, sid, i, buf);
    }
    mn_close(db); /* waits for the drains asked of the indexer thread */
    assert_true(log_rows(c) < CHUNK);
    /* short-lived handles, one append each (the CLI): a handle counts the log it finds at open,
     * so the one that finds a chunk's worth drains it */
    int64_t max_log = 0;
    for (int i = 0; i < 5 * CHUNK / 2; i++) {
        db = open_db(path, "100");
        text(buf, sizeof buf);
        append_one(db, sid, i, buf);
        mn_close(db);
        int64_t rows = log_rows(c);
        max_log = rows > max_log ? rows : max_log;
    }
    assert_true(max_log <= CHUNK);
    db = open_db(path, "100");
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "alpha", MN_SEARCH_KEYWORD, 5, NULL, 0, &h), MN_OK);
    assert_true(h->count > 0);
    mn_search_hits_free(h);
    assert_int_equal(sqlite3_exec(c, "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    free(sid);
    sqlite3_close(c);
    mn_close(db);
    rmdir_all(dir);
}

static void exec_ok(sqlite3 *c, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(c, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", sql, err);
}

static int64_t keyword_count(mn_db *db, const char *query)
{
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, query, MN_SEARCH_KEYWORD, 50, NULL, 0, &h), MN_OK);
    int64_t n = (int64_t)h->count;
    mn_search_hits_free(h);
    return n;
}

/* A database of schema version 6 (every insert logged by a trigger), with a log a version-6
 * writer left behind (inserts, a delete of an indexed message), is migrated to version 7: the log
 * applied, the watermark set, the trigger gone; the index then matches the messages exactly. */
static void from_version_6(void **state)
{
    (void)state;
    char dir[600], path[700], buf[200];
    tmpdir(dir, sizeof dir, "fts-drain-v6");
    snprintf(path, sizeof path, "%s/v6.db", dir);
    mn_db *db = open_db(path, "0");
    char *sid = new_session(db);
    int64_t first = append_one(db, sid, 0, "the zebra crossing is indexed");
    for (int i = 1; i < CHUNK; i++) {
        text(buf, sizeof buf);
        append_one(db, sid, i, buf);
    }
    assert_int_equal(keyword_count(db, "zebra"), 1); /* the search indexed everything */
    mn_close(db);
    /* back to version 6, as a version-6 writer would leave it */
    sqlite3 *c = test_sql_open_kw(path, SQLITE_OPEN_READWRITE);
    exec_ok(c, "BEGIN; DELETE FROM meta WHERE key = 'fts.indexed_upto';"
               "CREATE TRIGGER messages_log_insert AFTER INSERT ON messages WHEN new.content IS NOT NULL"
               "  BEGIN INSERT INTO msg_log (message_id, op) VALUES (new.id, 1); END;"
               "DROP TABLE memory_vector_log; DROP TRIGGER memory_vectors_log_insert;" /* version 8's */
               "DROP TRIGGER memory_vectors_log_update; DROP TRIGGER memory_vectors_log_delete;"
               "CREATE TRIGGER messages_embed_queue AFTER INSERT ON messages" /* version 4's to 8 */
               "  WHEN new.content IS NOT NULL AND (SELECT value FROM meta WHERE key = 'embed.queue') = '1'"
               "  BEGIN INSERT OR IGNORE INTO embed_queue (message_id) VALUES (new.id); END;"
               "DELETE FROM meta WHERE key = 'messages.last_id'; DROP TRIGGER sessions_delete_messages;" /* 10's */
               "DELETE FROM meta WHERE key = 'fts.file';" /* 11's: the index back in the database */
               "DROP TRIGGER sessions_minute_insert; DROP TRIGGER sessions_minute_update;" /* 12's */
               "DROP INDEX sessions_by_ns_updated; DROP INDEX sessions_by_updated;"
               "ALTER TABLE sessions DROP COLUMN updated_minute;"
               "ALTER TABLE sessions DROP COLUMN cleared_from; ALTER TABLE sessions DROP COLUMN title_seq;" /* 13's */
               "DROP INDEX sessions_by_key; ALTER TABLE sessions DROP COLUMN key;"                          /* 14's */
               "DROP TABLE checkpoint_writes; DROP TABLE checkpoints;"                                       /* 15's */
               "DROP TABLE documents;"                                                                       /* 16's */
               "CREATE INDEX sessions_by_ns_updated ON sessions(namespace, updated_at);"
               "CREATE INDEX sessions_by_updated ON sessions(updated_at);"
               "CREATE VIRTUAL TABLE main.messages_fts USING fts5(content, content='messages', content_rowid='id',"
               "  tokenize='porter unicode61 remove_diacritics 2');"
               "INSERT INTO main.messages_fts (messages_fts) VALUES ('rebuild');"
               "PRAGMA user_version = 6; COMMIT;");
    char sql[700];
    snprintf(sql, sizeof sql,
             "INSERT INTO messages (pos, id, session_sid, seq, role, content, tokens, created_at)" /* version 10's */
             " SELECT pos + 1000, (SELECT max(id) FROM messages) + row_number() OVER (ORDER BY id), session_sid,"
             " seq + 1000, role, 'an okapi wrote this row ' || seq, 5, created_at FROM messages WHERE id <= %lld + 20;"
             "DELETE FROM messages WHERE id = %lld;"
             "INSERT INTO sqlite_sequence (name, seq) SELECT 'messages', max(id) FROM messages;", /* as AUTOINCREMENT */
             (long long)first, (long long)first);
    exec_ok(c, sql);
    assert_true(log_rows(c) > 20); /* 21 inserts and a delete logged, the watermark unset */
    db = open_db(path, "100"); /* migrates */
    assert_int_equal(log_rows(c), 0);
    assert_int_equal(keyword_count(db, "zebra"), 0);
    assert_int_equal(keyword_count(db, "okapi"), 21);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(c, "SELECT count(*) FROM sqlite_master WHERE name = 'messages_log_insert'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    /* no embedder ever queued: the queue's trigger is gone too (version 9) */
    assert_int_equal(sqlite3_prepare_v2(c, "SELECT count(*) FROM sqlite_master WHERE name = 'messages_embed_queue'",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    /* appends after the migration log nothing and are found */
    append_one(db, sid, 1, "a quokka arrived after the migration");
    assert_int_equal(keyword_count(db, "quokka"), 1);
    exec_ok(c, "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)");
    free(sid);
    sqlite3_close(c);
    mn_close(db);
    rmdir_all(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bounded_and_same_results),
        cmocka_unit_test(deferred_and_all),
        cmocka_unit_test(older_backlog),
        cmocka_unit_test(from_version_6),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
