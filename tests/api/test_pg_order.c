/*
 * test_pg_order.c — a session's latest summary and its events come back in the order they were
 * written, not in the order of their ids: on a distributed PostgreSQL (Citus) nodes draw ids
 * from ranges of their own (docs/scale-out.md). On PostgreSQL the id sequences are set back
 * between writes, so that later rows get smaller ids; on SQLite the same calls run in id order.
 * And the PostgreSQL schema step 13 → 14 (src/store/postgres/schema.h): keys (session_sid, id),
 * the order column n filled in id order, events without a session gone.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[256];

/* The PostgreSQL schema of version 13 from a database of version 15: what 13 → 14 changed undone,
 * and 14 → 15 (test_pg_memory_keys.c). */
static const char PG_SCHEMA_13[] = TEST_PG_UNDO_17 TEST_PG_UNDO_14 TEST_PG_UNDO_15 TEST_PG_UNDO_16
    " UPDATE mnemo_schema SET version = 13";

/* The database `name`'s path or URL (valid until the next call: on SQLite it is the path). */
static const char *target(const char *name)
{
    static char path[400];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    return test_db_target(path);
}

static mn_db *open_db(const char *name)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(target(name), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

/* Runs sql on the database `name` (PostgreSQL only); out (may be NULL) gets its output. */
static void sql(const char *name, const char *text, char *out, size_t cap)
{
    assert_int_equal(test_db_sql(target(name), text, out, cap), 0);
}

/* The next summary and event ids drawn on PostgreSQL: `at` (nothing on SQLite). */
static void ids_from(const char *name, int at)
{
    char text[160];
    if (!test_db_pg())
        return;
    snprintf(text, sizeof text, "ALTER SEQUENCE summaries_id_seq RESTART WITH %d; ALTER SEQUENCE events_id_seq"
                                " RESTART WITH %d", at, at);
    sql(name, text, NULL, 0);
}

/* Appends n long messages (user and assistant by turns); *last (may be NULL) gets the last one's id. */
static void add(mn_db *db, const char *sid, int n, int64_t *last)
{
    for (int i = 0; i < n; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        char text[400];
        snprintf(text, sizeof text, "message %d about src/f%d.c and a long explanation that goes on and on about"
                                    " nothing in particular, so that a summary of it is much shorter", i, i);
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = text;
        mn_message *out = NULL;
        assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
        if (last)
            *last = out->id;
        mn_message_free(out);
    }
}

static void compact(mn_db *db, const char *sid)
{
    char *ev = NULL;
    assert_int_equal(mn_compact(db, sid, &ev), MN_OK);
    if (!strstr(ev, "\"outcome\":\"ok\""))
        fail_msg("compact: %s", ev);
    mn_free(ev);
}

/* The latest summary's covers_upto; *id gets its id. */
static int64_t latest(mn_db *db, const char *sid, int64_t *id)
{
    mn_summary *s = NULL;
    assert_int_equal(mn_summary_get(db, sid, &s), MN_OK);
    int64_t upto = s->covers_upto;
    *id = s->id;
    mn_summary_free(s);
    return upto;
}

/* Asserts that the session's newest events, newest first, hold the texts in want (in order). */
static void events_are(mn_db *db, const char *sid, size_t limit, const char *const *want, size_t n)
{
    char *list = NULL;
    assert_int_equal(mn_events_json(db, sid, limit, &list), MN_OK);
    const char *at = list;
    for (size_t i = 0; i < n; i++) {
        const char *p = strstr(at, want[i]);
        if (!p)
            fail_msg("event %zu (%s) not found in order in %s", i, want[i], list);
        at = p + strlen(want[i]);
    }
    mn_free(list);
}

/* Two folds and an edit, each drawing smaller ids than the one before on PostgreSQL: the latest
 * summary is the last written, the events come newest first. */
static void order_is_the_order_written(void **state)
{
    (void)state;
    mn_db *db = open_db("order");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    int64_t first = 0, second = 0, last = 0;
    add(db, s->id, 12, NULL);
    ids_from("order", 1000);
    compact(db, s->id);
    assert_int_equal(latest(db, s->id, &first), 6);
    add(db, s->id, 6, &last);
    ids_from("order", 500);
    compact(db, s->id);
    assert_int_equal(latest(db, s->id, &second), 12);
    if (test_db_pg())
        assert_true(second < first); /* the later summary, the smaller id */
    const char *const folds[] = {"\"covers_upto\":12", "\"covers_upto\":6"};
    events_are(db, s->id, 10, folds, 2);
    events_are(db, s->id, 1, folds, 1);

    /* an event written in a transaction of its own (store_rows.h), not by a fold */
    ids_from("order", 100);
    assert_int_equal(mn_message_edit(db, s->id, last, "edited, after the summaries", NULL, NULL), MN_OK);
    const char *const all[] = {"\"kind\":\"message_edited\"", "\"covers_upto\":12", "\"covers_upto\":6"};
    events_are(db, s->id, 10, all, 3);
    assert_int_equal(latest(db, s->id, &second), 12); /* the edit was of a message no summary covers */
    mn_session_free(s);
    mn_close(db);
}

/* A version-13 database: opening it migrates to 14, numbering each session's summaries and
 * events in id order (the order they had), dropping events without a session; the new keys hold,
 * and a later summary with a smaller id is the latest. */
static void pg_migration_to_14(void **state)
{
    (void)state;
    if (!test_db_pg())
        skip();
    char out[256];
    mn_db *db = open_db("mig");
    mn_session *s = NULL, *t = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    assert_int_equal(mn_session_create(db, NULL, &t), MN_OK);
    ids_from("mig", 1000);
    add(db, s->id, 12, NULL);
    add(db, t->id, 12, NULL);
    compact(db, s->id);
    compact(db, t->id);
    add(db, s->id, 6, NULL);
    compact(db, s->id);
    mn_close(db);
    sql("mig", PG_SCHEMA_13, NULL, 0);
    sql("mig", "INSERT INTO events (session_sid, kind, data, created_at) VALUES (NULL, 'orphan', '{}', 1)", NULL, 0);

    db = open_db("mig"); /* migrates */
    sql("mig", "SELECT version FROM mnemo_schema", out, sizeof out);
    assert_string_equal(out, "17"); /* 13 → 14 → … → 17 */
    sql("mig",
        "SELECT string_agg(x.t || ':' || x.n, ',' ORDER BY x.t, x.n) FROM (SELECT 's' || (id - 1000) AS t, n"
        " FROM summaries UNION ALL SELECT 'e' || (id - 1000), n FROM events) x",
        out, sizeof out);
    assert_string_equal(out, "e0:1,e1:1,e2:2,s0:1,s1:1,s2:2"); /* by session, in id order; no orphan */
    sql("mig",
        "SELECT string_agg(pg_get_constraintdef(oid), ',' ORDER BY conname) FROM pg_constraint"
        " WHERE conname IN ('summaries_pkey', 'events_pkey')",
        out, sizeof out);
    assert_string_equal(out, "PRIMARY KEY (session_sid, id),PRIMARY KEY (session_sid, id)");
    sql("mig", "SELECT attnotnull FROM pg_attribute WHERE attrelid = 'events'::regclass AND attname = 'session_sid'",
        out, sizeof out);
    assert_string_equal(out, "t");
    sql("mig", "SELECT count(*) FROM pg_class WHERE relname IN ('summaries_by_session', 'events_by_session')", out,
        sizeof out);
    assert_string_equal(out, "0");

    int64_t before = 0, after = 0;
    assert_int_equal(latest(db, s->id, &before), 12);
    ids_from("mig", 500);
    add(db, s->id, 6, NULL);
    compact(db, s->id);
    assert_int_equal(latest(db, s->id, &after), 18);
    assert_true(after < before);
    const char *const folds[] = {"\"covers_upto\":18", "\"covers_upto\":12", "\"covers_upto\":6"};
    events_are(db, s->id, 10, folds, 3);
    mn_session_free(s);
    mn_session_free(t);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "pgorder");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_is_the_order_written),
        cmocka_unit_test(pg_migration_to_14),
    };
    return cmocka_run_group_tests_name("pg_order", tests, setup, teardown);
}
