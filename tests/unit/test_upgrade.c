/*
 * test_upgrade.c — schema version 10 (messages keyed by session, docs/format.md) and the ones
 * after it (to 16: inactive_count recounted, the checkpoint and document tables) on a copy of a
 * real older database:
 * tests/data/schema9/mnemo.db was written by the mnemo of commit 0cb100a
 * (schema 9) through its CLI — three sessions with user, assistant, tool-call and tool messages,
 * an idempotency key, an edit, a pin, a turn limit that left messages inactive, a fork, two
 * deleted messages (one of them the newest id), embeddings of every message (hash embedder), a
 * memory, and a keyword index with a backlog past its watermark (tests/data/schema9/README.md).
 *
 * mn_upgrade migrates a copy in one transaction, reporting progress; every message keeps its
 * id, session, seq and fields; the keyword index moves to its own file (version 11) with the same
 * rows, watermark and bm25 scores; the keyword and vector indexes still find them; ids are never
 * reused after the migration; a session's delete takes its messages and their vectors along;
 * an interrupted migration (a row whose session is gone) leaves the file at version 9.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "mnemo.h"

static char dir[600];

#define SESSION_A "0190a000-0000-7000-8000-00000000000a"
#define SESSION_B "0190a000-0000-7000-8000-00000000000b"
#define SESSION_C "0190a000-0000-7000-8000-00000000000c"

/* Every message as one line of text, in id order: what a migration must keep. */
static const char SQL_ROWS[] =
    "SELECT group_concat(line, char(10)) FROM (SELECT m.id || '|' || s.id || '|' || m.seq || '|' || m.role || '|'"
    " || coalesce(m.content, '-') || '|' || coalesce(m.tool_calls, '-') || '|' || coalesce(m.tool_call_id, '-')"
    " || '|' || coalesce(m.name, '-') || '|' || coalesce(m.files, '-') || '|' || coalesce(m.metadata, '-') || '|'"
    " || coalesce(m.idem_key, '-') || '|' || m.tokens || '|' || m.pinned || '|' || m.active || '|' || m.created_at"
    " AS line FROM messages m JOIN sessions s ON s.sid = m.session_sid ORDER BY m.id)";
/* The messages out of the active history (the fixture's turn limit left some). */
static const char SQL_INACTIVE_MESSAGES[] = "SELECT count(*) FROM messages WHERE active = 0";
/* The keyword index's answer to a query of many matches, with its scores, and its watermark. */
static const char SQL_RANKED[] =
    "SELECT group_concat(r, ' ') FROM (SELECT rowid || ':' || printf('%.9f', bm25(messages_fts)) AS r"
    " FROM messages_fts WHERE messages_fts MATCH 'quokka OR alpha OR answer OR question'"
    " ORDER BY bm25(messages_fts), rowid)";

static char *text_of(const char *path, const char *sql)
{
    sqlite3 *c = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &c, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(c));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    const unsigned char *t = sqlite3_column_text(st, 0);
    char *out = strdup(t ? (const char *)t : "");
    sqlite3_finalize(st);
    sqlite3_close(c);
    return out;
}

static int64_t int_of(const char *path, const char *sql)
{
    char *t = text_of(path, sql);
    int64_t v = strtoll(t, NULL, 10);
    free(t);
    return v;
}

static void copy_fixture(const char *to)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "cp '%s/schema9/mnemo.db' '%s'", MNEMO_TEST_DATA, to);
    assert_int_equal(system(cmd), 0);
}

static mn_config *config(void)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", "hash", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "cl100k_base", NULL), MN_OK);
    return cfg;
}

struct progress {
    int calls;
    int64_t last_done, total;
    int monotone;
};

static void on_progress(void *user, int64_t done, int64_t total)
{
    struct progress *p = user;
    if (done < p->last_done || (p->calls && total != p->total))
        p->monotone = 0;
    p->calls++;
    p->last_done = done;
    p->total = total;
}

struct text {
    const char *s;
    size_t at;
};

static long read_text(void *user, char *buf, size_t cap)
{
    struct text *t = user;
    size_t n = strlen(t->s + t->at);
    n = n < cap ? n : cap;
    memcpy(buf, t->s + t->at, n);
    t->at += n;
    return (long)n;
}

static size_t hits_of(mn_db *db, const char *query, mn_search_mode mode, int64_t want_id)
{
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, query, mode, 10, NULL, 0, &h), MN_OK);
    size_t found = 0;
    for (size_t i = 0; i < h->count; i++)
        found += mn_search_hits_at(h, i)->message.id == want_id;
    size_t n = h->count;
    mn_search_hits_free(h);
    return want_id ? found : n;
}

static void upgrades_a_real_version_9_file(void **state)
{
    (void)state;
    char path[700];
    snprintf(path, sizeof path, "%s/v9.db", dir);
    copy_fixture(path);
    assert_int_equal(int_of(path, "PRAGMA user_version"), 9);
    char *before = text_of(path, SQL_ROWS);
    char *ranked = text_of(path, SQL_RANKED);
    int64_t watermark = int_of(path, "SELECT value FROM meta WHERE key = 'fts.indexed_upto'");
    assert_true(strlen(ranked) > 40 && watermark > 0);
    int64_t messages = int_of(path, "SELECT count(*) FROM messages");
    int64_t vectors = int_of(path, "SELECT count(*) FROM embeddings");
    assert_int_equal(messages, 32);
    assert_int_equal(vectors, 31); /* all but the tool call without text */
    assert_int_equal(int_of(path, "SELECT seq FROM sqlite_sequence WHERE name = 'messages'"), 34);
    assert_int_equal(int_of(path, "SELECT max(id) FROM messages"), 33); /* 34 was deleted */
    /* as an import of an earlier version left it: no inactive message counted (7: wrong for all) */
    assert_int_equal(int_of(path, SQL_INACTIVE_MESSAGES), 4);
    sqlite3 *c = NULL;
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    assert_int_equal(sqlite3_exec(c, "UPDATE sessions SET inactive_count = 7", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(c);

    mn_config *cfg = config();
    struct progress p = {0, 0, 0, 1};
    int from = -1;
    assert_int_equal(mn_upgrade(path, cfg, on_progress, &p, &from), MN_OK);
    assert_int_equal(from, 9);
    assert_true(p.calls >= 1 && p.monotone);
    assert_int_equal(p.total, messages);
    assert_int_equal(p.last_done, messages);

    /* the file: version 16, the same rows, ordered by session on the table's key */
    assert_int_equal(int_of(path, "PRAGMA user_version"), 16);
    char *after = text_of(path, SQL_ROWS);
    assert_string_equal(after, before);
    free(after);
    free(before);
    char *ok = text_of(path, "PRAGMA integrity_check");
    assert_string_equal(ok, "ok");
    free(ok);
    assert_int_equal(int_of(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    assert_int_equal(int_of(path, "SELECT count(*) FROM messages WHERE pos <> session_sid * 4294967296 + seq"), 0);
    assert_int_equal(int_of(path, "SELECT count(*) FROM embeddings"), vectors);
    assert_int_equal(int_of(path, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'messages.last_id'"), 34);
    assert_int_equal(int_of(path, "SELECT count(*) FROM sqlite_sequence WHERE name = 'messages'"), 0);
    /* the keyword index: in its own file, the same segments (scores), watermark and an id shared
     * with the database; none left in the database */
    char kw[720];
    snprintf(kw, sizeof kw, "%s.keywords", path);
    assert_int_equal(int_of(path, "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'messages_fts%'"), 0);
    char *moved = text_of(kw, SQL_RANKED);
    assert_string_equal(moved, ranked);
    free(moved);
    free(ranked);
    assert_int_equal(int_of(kw, "SELECT value FROM fts_meta WHERE key = 'fts.indexed_upto'"), watermark);
    char *id_db = text_of(path, "SELECT value FROM meta WHERE key = 'fts.file'");
    char *id_kw = text_of(kw, "SELECT value FROM fts_meta WHERE key = 'fts.file'");
    assert_int_equal(strlen(id_db), 32);
    assert_string_equal(id_kw, id_db);
    free(id_db);
    free(id_kw);
    ok = text_of(kw, "SELECT count(*) FROM (SELECT 1 FROM messages_fts WHERE messages_fts MATCH 'quokka')");
    assert_true(atoi(ok) > 0);
    free(ok);
    /* version 12: every session's minute, and the listing indexes on it */
    assert_int_equal(int_of(path, "SELECT count(*) FROM sessions WHERE updated_minute <> updated_at / 60000"), 0);
    assert_int_equal(int_of(path, "SELECT count(*) FROM sessions"), 4);
    assert_int_equal(int_of(path, "SELECT count(*) FROM pragma_index_info('sessions_by_updated')"
                                  " WHERE name = 'updated_minute'"), 1);

    /* version 13: every session's inactive_count recounted */
    assert_int_equal(int_of(path, "SELECT sum(inactive_count) FROM sessions"), 4);
    assert_int_equal(int_of(path, "SELECT count(*) FROM sessions s WHERE inactive_count <> (SELECT count(*)"
                                  " FROM messages WHERE session_sid = s.sid AND active = 0)"), 0);

    /* version 15: the graph checkpoint tables, empty */
    assert_int_equal(int_of(path, "SELECT count(*) FROM checkpoints"), 0);
    assert_int_equal(int_of(path, "SELECT count(*) FROM checkpoint_writes"), 0);

    /* version 16: the documents table, empty, keyed by (ns, path, key), with its expiry index */
    assert_int_equal(int_of(path, "SELECT count(*) FROM documents"), 0);
    char *doc_key = text_of(path, "SELECT group_concat(name, ',') FROM (SELECT name FROM pragma_index_info("
                                  "(SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'documents'"
                                  " AND name LIKE 'sqlite_autoindex%')) ORDER BY seqno)");
    assert_string_equal(doc_key, "ns,path,key");
    free(doc_key);
    assert_int_equal(int_of(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'documents_by_expiry'"), 1);

    /* a second upgrade has nothing to do */
    struct progress again = {0, 0, 0, 1};
    assert_int_equal(mn_upgrade(path, cfg, on_progress, &again, &from), MN_OK);
    assert_int_equal(again.calls, 0);
    assert_int_equal(from, 16);

    mn_db *db = NULL;
    assert_int_equal(mn_open_path(path, cfg, &db), MN_OK);
    /* a history reads the session in seq order, inactive messages on request */
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.all = 1;
    mn_messages *hist = NULL;
    assert_int_equal(mn_history(db, SESSION_A, &ho, &hist), MN_OK);
    assert_int_equal(hist->count, 14);
    for (size_t i = 0; i < hist->count; i++)
        assert_int_equal(mn_messages_at(hist, i)->seq, (int64_t)i + 1);
    assert_string_equal(mn_messages_at(hist, 13)->content, "lookup result: 42 quokkas counted");
    mn_messages_free(hist);
    ho.all = 0;
    assert_int_equal(mn_history(db, SESSION_B, &ho, &hist), MN_OK);
    assert_true(hist->count > 0 && hist->count < 12); /* the turn limit left the oldest inactive */
    mn_messages_free(hist);

    /* the keyword index (with the backlog past its watermark) and the vectors still find them */
    assert_int_equal(hits_of(db, "quokkas counted", MN_SEARCH_KEYWORD, 26), 1);
    assert_int_equal(hits_of(db, "alpha question 3", MN_SEARCH_KEYWORD, 33), 1); /* forked, past the watermark */
    assert_int_equal(hits_of(db, "wombat Tasmania", MN_SEARCH_KEYWORD, 4), 1);   /* the edited text */
    assert_int_equal(hits_of(db, "lookup result: 42 quokkas counted", MN_SEARCH_SEMANTIC, 26), 1);

    /* ids go on from the counter: 34 was taken (and deleted) before the migration */
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.role = MN_ROLE_USER;
    in.content = "gamma: after the upgrade";
    mn_message *m = NULL;
    assert_int_equal(mn_append(db, SESSION_C, &in, 0, &m), MN_OK);
    assert_int_equal(m->id, 35);
    assert_int_equal(m->seq, 3); /* seq 2 was deleted: seqs are never reused either */
    mn_message_free(m);
    mn_session *fork = NULL;
    assert_int_equal(mn_session_fork(db, SESSION_A, 4, &fork), MN_OK);
    assert_int_equal(mn_history(db, fork->id, NULL, &hist), MN_OK);
    assert_int_equal(hist->count, 4);
    assert_int_equal(mn_messages_at(hist, 0)->id, 36);
    assert_int_equal(mn_messages_at(hist, 3)->id, 39);
    assert_string_equal(mn_messages_at(hist, 3)->content, "alpha answer 2: the quokka lives on Rottnest");
    mn_messages_free(hist);
    mn_session_free(fork);
    assert_int_equal(mn_append(db, SESSION_C, &in, 0, &m), MN_OK);
    assert_int_equal(m->id, 40);
    mn_message_free(m);
    /* deleting an older message writes no counter; deleting the newest keeps its id taken */
    assert_int_equal(mn_message_delete(db, SESSION_A, 26), MN_OK);
    assert_int_equal(int_of(path, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'messages.last_id'"), 34);
    assert_int_equal(mn_message_delete(db, SESSION_C, 40), MN_OK);
    assert_int_equal(int_of(path, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'messages.last_id'"), 40);
    assert_int_equal(mn_append(db, SESSION_C, &in, 0, &m), MN_OK);
    assert_int_equal(m->id, 41);
    mn_message_free(m);

    /* deleting a session takes its messages, their vectors and their keyword entries along */
    assert_int_equal(mn_session_delete(db, SESSION_B), MN_OK);
    mn_close(db);
    assert_int_equal(int_of(path, "SELECT count(*) FROM messages WHERE session_sid = 2"), 0);
    assert_int_equal(int_of(path, "SELECT count(*) FROM embeddings e WHERE NOT EXISTS"
                                  " (SELECT 1 FROM messages m WHERE m.id = e.message_id)"),
                     0);
    assert_int_equal(mn_open_path(path, cfg, &db), MN_OK);
    assert_int_equal(hits_of(db, "wombat", MN_SEARCH_KEYWORD, 0), 0);
    assert_int_equal(hits_of(db, "quokka", MN_SEARCH_KEYWORD, 0), 10);
    /* a seq the table's key cannot hold (2^32 and up) is refused by an import, not misfiled */
    struct text t = {"{\"format\":\"mnemo-export\",\"version\":1}\n"
                     "{\"type\":\"message\",\"id\":900,\"session_id\":\"" SESSION_A "\",\"seq\":4294967297,"
                     "\"role\":\"user\",\"content\":\"x\",\"tokens\":1,\"created_at\":1}\n",
                     0};
    mn_import_stats ist;
    assert_int_equal(mn_import(db, read_text, &t, &ist), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "seq"));
    mn_close(db);
    mn_config_free(cfg);
}

/* A message whose session row is gone (foreign keys off in some older writer) would be lost by
 * the session-by-session copy: the migration refuses, rolls back, and the file stays at 9. */
static void orphans_roll_the_migration_back(void **state)
{
    (void)state;
    char path[700];
    snprintf(path, sizeof path, "%s/orphan.db", dir);
    copy_fixture(path);
    sqlite3 *c = NULL;
    assert_int_equal(sqlite3_open(path, &c), SQLITE_OK);
    assert_int_equal(sqlite3_exec(c, "PRAGMA foreign_keys = OFF; DELETE FROM sessions WHERE sid = 3", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(c);
    mn_config *cfg = config();
    assert_int_equal(mn_upgrade(path, cfg, NULL, NULL, NULL), MN_CORRUPT);
    assert_non_null(strstr(mn_errmsg(), "belong to no session"));
    mn_config_free(cfg);
    assert_int_equal(int_of(path, "PRAGMA user_version"), 9);
    assert_int_equal(int_of(path, "SELECT count(*) FROM messages WHERE session_sid = 3"), 1);
    assert_int_equal(int_of(path, "SELECT count(*) FROM sqlite_master WHERE name = 'messages_clustered'"), 0);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("MNEMO_TEST_TMP");
    tmp = tmp && *tmp ? tmp : "/tmp";
    mkdir(tmp, 0700);
    snprintf(dir, sizeof dir, "%s/upgrade-XXXXXX", tmp);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(upgrades_a_real_version_9_file),
        cmocka_unit_test(orphans_roll_the_migration_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
