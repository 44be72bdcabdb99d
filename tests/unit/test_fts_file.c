/*
 * test_fts_file.c — the keyword index in a file of its own, "<db>.keywords" (schema.h, version 11;
 * src/store/sqlite/fts_file.c, docs/search.md), on real SQLite files:
 *  - indexing new messages does not need the database's write lock (another connection holds it
 *    and the drain still indexes everything), while applying a delete does (it writes the log);
 *  - appends do not need the index file's lock (another connection holds it and appends go on),
 *    and a search afterwards finds every message;
 *  - the file is derived data: missing, of another database, or ahead of a database restored from
 *    an older copy, it is started again and indexed from the messages, so no hit names a message
 *    the database does not hold;
 *  - a process stopped between the two files' commits of a step that applied a delete: the next
 *    open neither applies it twice nor leaves its text in the log;
 *  - appends that outrun the indexer thread wait for it: what waits for the index stays bounded;
 *  - messages without text do not leave an append waiting for a thread that stopped;
 *  - a step holds at most about 16 MiB of messages in memory;
 *  - mn_vacuum shrinks the index's file as well as the database;
 *  - a private (in-memory) database keeps its index in memory.
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
#include "test_tmp.h"

struct fx {
    char dir[400], path[500];
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f || test_tmpdir(f->dir, sizeof f->dir, "fts-file") != 0)
        return -1;
    snprintf(f->path, sizeof f->path, "%s/a.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    test_rmdir(f->dir);
    free(f);
    return 0;
}

static mn_db *open_db(const char *path, const char *drain)
{
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.busy_timeout_ms", "300", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "search.fts_drain", drain, NULL), MN_OK);
    mn_status rc = mn_open_path(path, cfg, &db);
    mn_config_free(cfg);
    if (rc)
        fail_msg("open %s: %s", path, mn_errmsg());
    return db;
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

/* n messages "WORD number i", returning the last id. */
static int64_t append_n(mn_db *db, const char *sid, const char *word, int n)
{
    int64_t last = 0;
    for (int i = 0; i < n; i++) {
        char text[80];
        snprintf(text, sizeof text, "%s number %d", word, i);
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = MN_ROLE_USER;
        m.content = text;
        mn_message *out = NULL;
        if (mn_append(db, sid, &m, 0, &out) != MN_OK)
            fail_msg("append %d: %s", i, mn_errmsg());
        last = out->id;
        mn_message_free(out);
    }
    return last;
}

static size_t hits(mn_db *db, const char *query)
{
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, query, MN_SEARCH_KEYWORD, 1000, NULL, 0, &h), MN_OK);
    size_t n = h->count;
    mn_search_hits_free(h);
    return n;
}

/* Another connection holding `file`'s write lock (BEGIN IMMEDIATE) until released. */
static sqlite3 *lock_file(const char *file)
{
    sqlite3 *c = NULL;
    assert_int_equal(sqlite3_open_v2(file, &c, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_exec(c, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    return c;
}

static void release(sqlite3 *c)
{
    assert_int_equal(sqlite3_exec(c, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(c);
}

static void indexes_beside_a_database_write_lock(void **state)
{
    struct fx *f = *state;
    mn_db *db = open_db(f->path, "100");
    char *sid = new_session(db);
    assert_int_equal(mn_keyword_drain_defer(db, 1), MN_OK); /* nothing indexed by the appends */
    int64_t last = append_n(db, sid, "walrus", 300);
    sqlite3 *held = lock_file(f->path);
    int64_t applied = -1, pending = -1;
    assert_int_equal(mn_keyword_drain(db, 1, &applied, &pending), MN_OK);
    assert_int_equal(applied, 300);
    assert_int_equal(pending, 0);
    assert_int_equal(hits(db, "walrus"), 300); /* and searched, beside the writer */
    release(held);
    /* a delete's removal is applied from the log (right after the delete, but the index's file is
     * held now, so it waits in the log), and that step takes the database's lock */
    char kw[600];
    snprintf(kw, sizeof kw, "%s.keywords", f->path);
    held = lock_file(kw);
    assert_int_equal(mn_message_delete(db, sid, last), MN_OK);
    release(held);
    held = lock_file(f->path);
    assert_int_equal(mn_keyword_drain(db, 1, &applied, &pending), MN_BUSY);
    release(held);
    assert_int_equal(mn_keyword_drain(db, 1, &applied, &pending), MN_OK);
    assert_int_equal(pending, 0);
    assert_int_equal(hits(db, "walrus"), 299);
    free(sid);
    mn_close(db);
}

static void appends_beside_an_index_lock(void **state)
{
    struct fx *f = *state;
    char kw[600];
    snprintf(kw, sizeof kw, "%s.keywords", f->path);
    mn_db *db = open_db(f->path, "100");
    char *sid = new_session(db);
    sqlite3 *held = lock_file(kw);
    append_n(db, sid, "narwhal", 450); /* every append succeeds; the drains wait (and are logged) */
    release(held);
    assert_int_equal(hits(db, "narwhal"), 450);
    free(sid);
    mn_close(db);
}

static void copy_file(const char *from, const char *to)
{
    char cmd[1400];
    assert_true(snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to) < (int)sizeof cmd);
    assert_int_equal(system(cmd), 0);
}

static void started_again_when_not_this_databases(void **state)
{
    struct fx *f = *state;
    char b[600], kw_a[700], kw_b[700], old[600];
    snprintf(b, sizeof b, "%s/b.db", f->dir);
    snprintf(kw_a, sizeof kw_a, "%s.keywords", f->path);
    snprintf(kw_b, sizeof kw_b, "%s.keywords", b);
    snprintf(old, sizeof old, "%s/a-old.db", f->dir);
    mn_db *db = open_db(f->path, "100");
    char *sa = new_session(db);
    append_n(db, sa, "alpaca", 5);
    assert_int_equal(hits(db, "alpaca"), 5);
    mn_close(db); /* the last close checkpoints: a.db alone is a whole copy */
    copy_file(f->path, old);
    db = open_db(b, "100");
    char *sb = new_session(db);
    append_n(db, sb, "bison", 7);
    assert_int_equal(hits(db, "bison"), 7);
    mn_close(db);

    /* another database's index file */
    copy_file(kw_a, kw_b);
    db = open_db(b, "100");
    assert_int_equal(hits(db, "alpaca"), 0);
    assert_int_equal(hits(db, "bison"), 7);
    mn_close(db);
    /* none at all */
    assert_int_equal(remove(kw_b), 0);
    db = open_db(b, "100");
    assert_int_equal(hits(db, "bison"), 7);
    mn_close(db);

    /* a database restored from an older copy, its index file newer: ids 6.. are given again */
    db = open_db(f->path, "100");
    append_n(db, sa, "dingo", 5);
    assert_int_equal(hits(db, "dingo"), 5);
    mn_close(db);
    copy_file(old, f->path);
    db = open_db(f->path, "100");
    assert_int_equal(hits(db, "dingo"), 0);
    append_n(db, sa, "emu", 1);
    assert_int_equal(hits(db, "dingo"), 0); /* not the new message that took a lost one's id */
    assert_int_equal(hits(db, "emu"), 1);
    assert_int_equal(hits(db, "alpaca"), 5);
    free(sa);
    free(sb);
    mn_close(db);
}

static void exec_ok(sqlite3 *c, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(c, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", sql, err);
}

/* A process stopped after the index's file committed a step that applied a delete, before the
 * delete's log row left the database (the two files commit one after the other): the next open
 * neither applies it again (a contentless delete of a row that is not there corrupts the index)
 * nor leaves its text in the log. */
static void stopped_between_the_two_commits(void **state)
{
    struct fx *f = *state;
    mn_db *db = open_db(f->path, "100");
    char *sid = new_session(db);
    append_n(db, sid, "gerenuk", 30);
    assert_int_equal(hits(db, "gerenuk"), 30);
    mn_close(db);
    sqlite3 *c = test_sql_open_kw(f->path, SQLITE_OPEN_READWRITE);
    /* the delete of the message 'gerenuk number 7' (its trigger logs the text), and the step
     * that applied it, committed in the index's file only */
    exec_ok(c, "DELETE FROM main.messages WHERE content = 'gerenuk number 7'");
    exec_ok(c, "INSERT INTO kw.messages_fts (messages_fts, rowid, content)"
               " SELECT 'delete', message_id, content FROM main.msg_log WHERE op = 0;"
               "INSERT INTO kw.fts_applied (seq) SELECT seq FROM main.msg_log;"
               "UPDATE sessions SET message_count = message_count - 1");
    sqlite3_close(c);
    db = open_db(f->path, "100");
    assert_int_equal(hits(db, "gerenuk"), 29);
    append_n(db, sid, "gerenuk", 1); /* and the index goes on from there */
    assert_int_equal(hits(db, "gerenuk"), 30);
    mn_close(db);
    c = test_sql_open_kw(f->path, SQLITE_OPEN_READWRITE);
    /* the log row and its mark are gone */
    assert_int_equal(test_sql_int(c, "SELECT (SELECT count(*) FROM main.msg_log) + (SELECT count(*) FROM kw.fts_applied)"),
                     0);
    exec_ok(c, "INSERT INTO kw.messages_fts (messages_fts, rank) VALUES ('integrity-check', 0)");
    sqlite3_close(c);
    free(sid);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* mn_vacuum returns the index file's free pages too (a delete's merge frees its old segments). */
static void vacuum_shrinks_the_index_file(void **state)
{
    struct fx *f = *state;
    char kw[600];
    snprintf(kw, sizeof kw, "%s.keywords", f->path);
    mn_db *db = open_db(f->path, "500");
    char *keep = new_session(db), *gone = new_session(db);
    append_n(db, keep, "quagga", 10);
    append_n(db, gone, "the capybara wallaby quokka numbat bilby tapir", 3000);
    assert_int_equal(hits(db, "capybara"), 1000); /* the search's own limit: all indexed */
    assert_int_equal(mn_vacuum(db), MN_OK);
    long before = file_size(kw);
    assert_int_equal(mn_session_delete(db, gone), MN_OK);
    assert_int_equal(hits(db, "capybara"), 0);
    assert_int_equal(mn_vacuum(db), MN_OK);
    long after = file_size(kw);
    if (!(before > 100000 && after < before / 4))
        fail_msg("index file %ld bytes before the delete, %ld after it and a vacuum", before, after);
    assert_int_equal(hits(db, "quagga"), 10);
    free(keep);
    free(gone);
    mn_close(db);
}

/* The messages past the index's watermark, read beside the handle. */
static int64_t unindexed(sqlite3 *side)
{
    return test_sql_int(side, "SELECT count(*) FROM main.messages WHERE id > coalesce((SELECT CAST(value AS INTEGER)"
                              " FROM kw.fts_meta WHERE key = 'fts.indexed_upto'), 0)");
}

/* Appends of messages that cost the indexer thread more than they cost the append (~1,500
 * characters of varied words): the append waits while the thread is four chunks behind, so what
 * waits for the index after an append is at most five chunks (four handed over, one not yet), and
 * everything is indexed in the end. */
static void appends_wait_for_the_indexer(void **state)
{
    struct fx *f = *state;
    mn_db *db = open_db(f->path, "50");
    char *sid = new_session(db);
    sqlite3 *side = test_sql_open_kw(f->path, SQLITE_OPEN_READONLY);
    unsigned x = 12345;
    int64_t most = 0;
    static char text[1600];
    for (int i = 0; i < 1500; i++) {
        size_t n = 0;
        while (n < sizeof text - 16) {
            x = x * 1103515245u + 12345u;
            n += (size_t)snprintf(text + n, sizeof text - n, "w%u ", (x >> 8) % 50000);
        }
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = MN_ROLE_USER;
        m.content = text;
        assert_int_equal(mn_append(db, sid, &m, 0, NULL), MN_OK);
        int64_t waiting = unindexed(side);
        most = waiting > most ? waiting : most;
    }
    if (most > 5 * 50)
        fail_msg("%lld messages waited for the index after an append (bound: 5 chunks of 50)", (long long)most);
    mn_close(db);
    assert_int_equal(unindexed(side), 0); /* the close waited for what was asked */
    sqlite3_close(side);
    free(sid);
}

/* Messages without text (assistant tool calls) ask the thread for nothing, yet its steps walk
 * their ids: 600 of them, then 250 with text (five chunks of 50, each asking for a chunk and
 * one more). The budget runs out among the ids without text; the thread goes on while the
 * append waits for it (it stopped there, and the append waited for ever; alarm: a hang fails). */
static void messages_without_text_do_not_stall_appends(void **state)
{
    struct fx *f = *state;
    mn_db *db = open_db(f->path, "50");
    char *sid = new_session(db);
    alarm(120);
    for (int i = 0; i < 600; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = MN_ROLE_ASSISTANT;
        m.tool_calls = "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]";
        assert_int_equal(mn_append(db, sid, &m, 0, NULL), MN_OK);
    }
    append_n(db, sid, "gnu", 250);
    alarm(0);
    assert_int_equal(hits(db, "gnu"), 250);
    free(sid);
    mn_close(db);
}

/* A step holds its messages in memory: past 16 MiB of text it stops, and the next one goes on. */
static void steps_cut_at_a_size(void **state)
{
    struct fx *f = *state;
    mn_db *db = open_db(f->path, "0");
    char *sid = new_session(db);
    size_t big = 1000000;
    char *text = malloc(big + 1);
    assert_non_null(text);
    for (size_t i = 0; i < big; i += 4)
        memcpy(text + i, "yak ", 4);
    text[big] = 0;
    for (int i = 0; i < 40; i++) { /* 40 MB: three steps */
        snprintf(text + big - 12, 13, " tail%06d", i);
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = MN_ROLE_USER;
        m.content = text;
        assert_int_equal(mn_append(db, sid, &m, 0, NULL), MN_OK);
    }
    int64_t applied = -1, pending = -1;
    assert_int_equal(mn_keyword_drain(db, 1, &applied, &pending), MN_OK);
    assert_int_equal(applied, 40);
    assert_int_equal(pending, 0);
    assert_int_equal(hits(db, "yak"), 40);
    assert_int_equal(hits(db, "tail000039"), 1);
    free(text);
    free(sid);
    mn_close(db);
}

static void private_database(void **state)
{
    (void)state;
    mn_db *db = open_db(":memory:", "2");
    char *sid = new_session(db);
    int64_t last = append_n(db, sid, "okapi", 9);
    assert_int_equal(hits(db, "okapi"), 9);
    assert_int_equal(mn_message_delete(db, sid, last), MN_OK);
    assert_int_equal(hits(db, "okapi"), 8);
    free(sid);
    mn_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(indexes_beside_a_database_write_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(appends_beside_an_index_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(started_again_when_not_this_databases, setup, teardown),
        cmocka_unit_test_setup_teardown(stopped_between_the_two_commits, setup, teardown),
        cmocka_unit_test_setup_teardown(vacuum_shrinks_the_index_file, setup, teardown),
        cmocka_unit_test_setup_teardown(appends_wait_for_the_indexer, setup, teardown),
        cmocka_unit_test_setup_teardown(messages_without_text_do_not_stall_appends, setup, teardown),
        cmocka_unit_test_setup_teardown(steps_cut_at_a_size, setup, teardown),
        cmocka_unit_test_setup_teardown(private_database, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
