/*
 * test_erasure.c — deleting erases (docs/erasure.md). Each case stores a unique word in a
 * session's messages, makes every copy mnemo keeps of it (the keyword index, an offloaded tool
 * output file, a summary), checks that the word is in the files, then deletes the session
 * (mn_session_delete, mn_prune, mn_gc) or the messages (mn_message_delete) and checks that the
 * word is in no file under the test's folder any more: the SQLite database, its WAL (after a
 * passive checkpoint, which leaves the WAL file as it is), the offloaded outputs. On PostgreSQL
 * the server's files are not ours to read: the rows must be gone (SQL), the files too, and
 * mn_vacuum must run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

struct fx {
    char dir[256], path[300];
    const char *target;
    mn_db *db;
};

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f || test_tmpdir(f->dir, sizeof f->dir, "erasure") != 0)
        return -1;
    char xdg[300];
    snprintf(xdg, sizeof xdg, "%s/xdg-data", f->dir); /* the offload folder of a PostgreSQL database */
    setenv("XDG_DATA_HOME", xdg, 1);
    snprintf(f->path, sizeof f->path, "%s/memory.db", f->dir);
    f->target = test_db_target(f->path);
    mn_config *cfg = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "tokenizer.name", "heuristic", NULL) ||
        mn_config_set(cfg, "context.tool_output_offload", "on", NULL) ||
        mn_config_set(cfg, "context.tool_output_offload_threshold_tokens", "100", NULL) ||
        mn_config_set(cfg, "context.tool_output_protect_tokens", "1000", NULL) ||
        mn_open_path(f->target, cfg, &f->db))
        return -1;
    mn_config_free(cfg);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    mn_close(f->db);
    test_rmdir(f->dir);
    free(f);
    return 0;
}

/* 1 when `word` is in some file under the test folder (SQLite: after a passive checkpoint). */
static int on_disk(struct fx *f, const char *word)
{
    char cmd[1200];
    if (!test_db_pg()) {
        snprintf(cmd, sizeof cmd, "sqlite3 '%s' 'PRAGMA wal_checkpoint' >/dev/null", f->path);
        assert_int_equal(system(cmd), 0);
    }
    snprintf(cmd, sizeof cmd, "grep -rlaF '%s' '%s' >&2", word, f->dir);
    return system(cmd) == 0;
}

/* Rows of the PostgreSQL database that still hold word (0 on SQLite: the files say it). */
static int in_rows(struct fx *f, const char *word)
{
    if (!test_db_pg())
        return 0;
    char sql[600], out[64];
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM messages WHERE content LIKE '%%%s%%')"
             " + (SELECT count(*) FROM summaries WHERE text LIKE '%%%s%%')"
             " + (SELECT count(*) FROM events WHERE data LIKE '%%%s%%')"
             " + (SELECT count(*) FROM sessions WHERE title LIKE '%%%s%%')",
             word, word, word, word);
    assert_int_equal(test_db_sql(f->target, sql, out, sizeof out), 0);
    return atoi(out);
}

static int64_t add(mn_db *db, const char *sid, mn_role role, const char *content, const char *calls,
                   const char *call_id)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = content;
    m.tool_calls = calls;
    m.tool_call_id = call_id;
    m.name = call_id ? "run_tests" : NULL;
    mn_message *out = NULL;
    assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

/* A session whose first user message (id *user_id) and first tool output (id *tool_id, seq 3)
 * hold `word`; then builds its context (offloading the old outputs), compacts it (the summary
 * folds the first message) and runs a keyword search (the index takes the word in). */
static void fill(struct fx *f, const char *word, int64_t ttl_ms, char sid[64], int64_t *user_id, int64_t *tool_id)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.ttl_ms = ttl_ms;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(f->db, &o, &s), MN_OK);
    snprintf(sid, 64, "%s", s->id);
    mn_session_free(s);
    char text[5000], calls[200], id[16];
    for (int i = 0; i < 6; i++) {
        snprintf(text, sizeof text, "Please fix issue %d, the %s one. Then report.", i, i == 0 ? word : "other");
        int64_t u = add(f->db, sid, MN_ROLE_USER, text, NULL, NULL);
        snprintf(id, sizeof id, "c%d", i);
        snprintf(calls, sizeof calls,
                 "[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"run_tests\",\"arguments\":\"{}\"}}]",
                 id);
        add(f->db, sid, MN_ROLE_ASSISTANT, NULL, calls, NULL);
        int n = snprintf(text, sizeof text, "E: %s failed in src/app.c\n", i == 0 ? word : "test");
        memset(text + n, 'x', 3000);
        text[n + 3000] = '\0';
        int64_t t = add(f->db, sid, MN_ROLE_TOOL, text, NULL, id);
        add(f->db, sid, MN_ROLE_ASSISTANT, "Fixed it; tests pass.", NULL, NULL);
        if (i == 0) {
            *user_id = u;
            *tool_id = t;
        }
    }
    mn_context_opts co = MN_CONTEXT_OPTS_INIT;
    co.max_tokens = 100000;
    mn_context *ctx = NULL;
    assert_int_equal(mn_context_build(f->db, sid, &co, &ctx), MN_OK);
    mn_context_free(ctx);
    char off[600];
    struct stat st;
    if (test_db_pg())
        snprintf(off, sizeof off, "%s/xdg-data/mnemo/tool-outputs/%s/3.txt", f->dir, sid);
    else
        snprintf(off, sizeof off, "%s/tool-outputs/%s/3.txt", f->dir, sid);
    assert_int_equal(stat(off, &st), 0); /* the first tool output was offloaded */
    char *event = NULL;
    assert_int_equal(mn_compact(f->db, sid, &event), MN_OK);
    mn_free(event);
    mn_summary *sum = NULL;
    assert_int_equal(mn_summary_get(f->db, sid, &sum), MN_OK);
    assert_non_null(strstr(sum->text, word)); /* the summary folded the first request */
    mn_summary_free(sum);
    mn_search_hits *hits = NULL;
    assert_int_equal(mn_search(f->db, word, MN_SEARCH_KEYWORD, 10, NULL, 0, &hits), MN_OK);
    assert_int_equal(hits->count, 2);
    mn_search_hits_free(hits);
    assert_true(on_disk(f, word));
}

static void gone(struct fx *f, const char *word)
{
    assert_false(on_disk(f, word));
    assert_int_equal(in_rows(f, word), 0);
    mn_search_hits *hits = NULL;
    assert_int_equal(mn_search(f->db, word, MN_SEARCH_KEYWORD, 10, NULL, 0, &hits), MN_OK);
    assert_int_equal(hits->count, 0);
    mn_search_hits_free(hits);
}

static void erase_session_delete(void **state)
{
    struct fx *f = *state;
    char sid[64], keep[64];
    int64_t u, t;
    fill(f, "zebracanarydelete", 0, sid, &u, &t);
    fill(f, "otterkeepsafe", 0, keep, &u, &t);
    assert_int_equal(mn_session_delete(f->db, sid), MN_OK);
    gone(f, "zebracanarydelete");
    assert_true(on_disk(f, "otterkeepsafe")); /* only the deleted session goes */
    assert_int_equal(mn_vacuum(f->db), MN_OK);
}

static void erase_message_delete(void **state)
{
    struct fx *f = *state;
    char sid[64];
    int64_t u, t;
    fill(f, "zebracanarymessage", 0, sid, &u, &t);
    assert_int_equal(mn_message_delete(f->db, sid, u), MN_OK);
    /* the summary that folded it went with it, and an event says so */
    mn_summary *sum = NULL;
    assert_int_equal(mn_summary_get(f->db, sid, &sum), MN_NOTFOUND);
    char *events = NULL;
    assert_int_equal(mn_events_json(f->db, sid, 10, &events), MN_OK);
    assert_non_null(strstr(events, "summary_dropped"));
    mn_free(events);
    assert_int_equal(mn_message_delete(f->db, sid, t), MN_OK); /* the offloaded output */
    gone(f, "zebracanarymessage");
    /* the next context folds again from what remains */
    char *event = NULL;
    assert_int_equal(mn_compact(f->db, sid, &event), MN_OK);
    mn_free(event);
    assert_int_equal(mn_summary_get(f->db, sid, &sum), MN_OK);
    mn_summary_free(sum);
    gone(f, "zebracanarymessage");
}

/* An edit to no text leaves no title: the one taken from the old text goes with it (and the
 * session no longer records a message its title came from, so a later delete has none to clear). */
static void erase_message_edit(void **state)
{
    struct fx *f = *state;
    char sid[64];
    int64_t u, t;
    fill(f, "zebracanaryedit", 0, sid, &u, &t);
    assert_int_equal(mn_message_edit(f->db, sid, u, "", NULL, NULL), MN_OK);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(f->db, sid, &s), MN_OK);
    assert_null(s->title);
    mn_session_free(s);
    assert_int_equal(mn_message_delete(f->db, sid, t), MN_OK); /* the offloaded output */
    gone(f, "zebracanaryedit");
    assert_int_equal(mn_message_delete(f->db, sid, u), MN_OK);
    gone(f, "zebracanaryedit");
}

static void erase_prune(void **state)
{
    struct fx *f = *state;
    char sid[64], now[32];
    int64_t u, t;
    snprintf(now, sizeof now, "%lld", (long long)(time(NULL) - 10 * 86400) * 1000);
    setenv("MNEMO_TEST_NOW_MS", now, 1); /* written ten days ago */
    fill(f, "zebracanaryprune", 0, sid, &u, &t);
    unsetenv("MNEMO_TEST_NOW_MS");
    int64_t n = 0;
    assert_int_equal(mn_prune(f->db, 1, &n), MN_OK);
    assert_int_equal(n, 1);
    gone(f, "zebracanaryprune");
}

static void erase_gc(void **state)
{
    struct fx *f = *state;
    char sid[64], now[32];
    int64_t u, t;
    snprintf(now, sizeof now, "%lld", (long long)(time(NULL) - 2 * 3600) * 1000);
    setenv("MNEMO_TEST_NOW_MS", now, 1); /* an hour's TTL, idle for two */
    fill(f, "zebracanarygc", 3600000, sid, &u, &t);
    unsetenv("MNEMO_TEST_NOW_MS");
    int64_t n = 0;
    assert_int_equal(mn_gc(f->db, &n), MN_OK);
    assert_int_equal(n, 1);
    gone(f, "zebracanarygc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(erase_session_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_message_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_message_edit, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_prune, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_gc, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
