/*
 * test_pg_message_keys.c — the PostgreSQL schema step 15 → 16 (src/store/postgres/schema.h):
 * messages keyed by (id, session_sid), embeddings and embed_queue carrying session_sid in their
 * keys and their foreign keys to messages(id, session_sid), as a distributed PostgreSQL (Citus)
 * needs (docs/scale-out.md). A version-15 database with embedded and queued messages in two
 * sessions is migrated; then semantic search, the queue (new appends, an edit's re-embedding,
 * a drain), another handle's vector index following the log, and deletes still work. On SQLite
 * the same calls run without the migration.
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

/* The PostgreSQL schema of version 15 from a database of version 16: what 15 → 16 changed
 * undone. */
static const char PG_SCHEMA_15[] = TEST_PG_UNDO_17 TEST_PG_UNDO_16 " UPDATE mnemo_schema SET version = 15";

/* Every vector and queue row names its message's session: "vectors queued" when all do. */
static const char SQL_SIDS[] =
    "SELECT (SELECT count(*) FILTER (WHERE e.session_sid = m.session_sid) || '/' || count(*) FROM embeddings e"
    "        LEFT JOIN messages m ON m.id = e.message_id) || ' ' ||"
    "       (SELECT count(*) FILTER (WHERE q.session_sid = m.session_sid) || '/' || count(*) FROM embed_queue q"
    "        LEFT JOIN messages m ON m.id = q.message_id)";

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
    assert_int_equal(mn_config_set(cfg, "embedder.name", "hash", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(target(name), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static void sql(const char *name, const char *text, char *out, size_t cap)
{
    assert_int_equal(test_db_sql(target(name), text, out, cap), 0);
}

static void sql_is(const char *name, const char *text, const char *want)
{
    char out[512];
    sql(name, text, out, sizeof out);
    assert_string_equal(out, want);
}

static char *new_session(mn_db *db)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static int64_t add(mn_db *db, const char *sid, const char *content)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = content;
    mn_message *out = NULL;
    assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

/* The id of the best semantic hit for query, 0 when none; *queued gets not_embedded. */
static int64_t top(mn_db *db, const char *query, int64_t *queued)
{
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, query, MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    int64_t id = h->count ? h->items[0].message.id : 0;
    if (queued)
        *queued = h->not_embedded;
    mn_search_hits_free(h);
    return id;
}

static void drain(mn_db *db, size_t want)
{
    size_t done = 0;
    assert_int_equal(mn_embed_pending(db, 0, &done), MN_OK);
    assert_int_equal(done, want);
}

/* A version-15 database: session a with three embedded messages and two queued, session b with
 * one embedded. Opening it migrates to 16: every vector and queue row names its message's
 * session, the keys and foreign keys carry it, the step logs no change. Then search, appends
 * (queued by the trigger with their session), an edit (its vector dropped and queued again),
 * a drain, another handle's index and the deletes work as before. */
static void migration_to_16(void **state)
{
    (void)state;
    char seq[64] = "", text[300];
    int64_t queued = -1;
    mn_db *db = open_db("mig");
    char *a = new_session(db), *b = new_session(db);
    int64_t lake = add(db, a, "We rented a cabin by the lake for the summer holidays");
    add(db, a, "The invoice for the cloud servers arrived on Tuesday");
    int64_t violin = add(db, a, "My daughter started violin lessons last autumn");
    int64_t garden = add(db, b, "Tomatoes and basil grow well together in the garden");
    drain(db, 4);
    int64_t bread = add(db, a, "Sourdough bread needs a starter fed every day");
    add(db, a, "The train to Lisbon leaves at seven in the morning");
    mn_close(db);
    if (test_db_pg()) {
        sql("mig", PG_SCHEMA_15, NULL, 0);
        sql("mig", "SELECT max(seq) FROM embed_log", seq, sizeof seq);
    }

    db = open_db("mig"); /* migrates */
    if (test_db_pg()) {
        sql_is("mig", "SELECT version FROM mnemo_schema", "17"); /* 15 → 16 → 17 */
        sql_is("mig", SQL_SIDS, "4/4 2/2");
        sql_is("mig", "SELECT max(seq) FROM embed_log", seq); /* the step logged nothing */
        sql_is("mig",
               "SELECT string_agg(conrelid::regclass || ' ' || pg_get_constraintdef(oid), ', ' ORDER BY conrelid::regclass::text,"
               " contype) FROM pg_constraint WHERE conrelid IN ('messages'::regclass, 'embeddings'::regclass,"
               " 'embed_queue'::regclass) AND contype IN ('p', 'f')",
               "embed_queue FOREIGN KEY (message_id, session_sid) REFERENCES messages(id, session_sid) ON DELETE CASCADE,"
               " embed_queue PRIMARY KEY (message_id, session_sid),"
               " embeddings FOREIGN KEY (message_id, session_sid) REFERENCES messages(id, session_sid) ON DELETE CASCADE,"
               " embeddings PRIMARY KEY (message_id, session_sid),"
               " messages PRIMARY KEY (id, session_sid)");
        sql_is("mig",
               "SELECT string_agg(attrelid::regclass || ' ' || attnotnull, ', ' ORDER BY attrelid::regclass::text)"
               " FROM pg_attribute WHERE attrelid IN ('embeddings'::regclass, 'embed_queue'::regclass)"
               " AND attname = 'session_sid'",
               "embed_queue true, embeddings true");
    }
    assert_int_equal(top(db, "cabin by the lake", &queued), lake);
    assert_int_equal(queued, 2);
    assert_int_equal(top(db, "tomatoes basil garden", NULL), garden);

    /* an append is queued with its session; an edit drops the vector and queues it again */
    int64_t chess = add(db, b, "Grandfather taught me to play chess in the park");
    mn_message *edited = NULL;
    assert_int_equal(mn_message_edit(db, a, violin, "My daughter started cello lessons last autumn", NULL, &edited),
                     MN_OK);
    mn_message_free(edited);
    if (test_db_pg())
        sql_is("mig", SQL_SIDS, "3/3 4/4");
    drain(db, 4);
    if (test_db_pg())
        sql_is("mig", SQL_SIDS, "7/7 0/0");
    assert_int_equal(top(db, "cello lessons", &queued), violin);
    assert_int_equal(queued, 0);
    assert_int_equal(top(db, "sourdough starter bread", NULL), bread);

    /* another handle's index follows the vectors written and dropped here, through the log */
    mn_db *other = open_db("mig");
    assert_int_equal(top(other, "chess in the park", NULL), chess);
    assert_int_equal(mn_message_delete(db, a, lake), MN_OK);
    assert_int_equal(mn_session_delete(db, b), MN_OK);
    int64_t hit = top(other, "cabin by the lake", NULL);
    assert_true(hit != lake);
    hit = top(other, "chess in the park", NULL);
    assert_true(hit != chess && hit != garden);
    mn_close(other);
    if (test_db_pg()) {
        sql_is("mig", SQL_SIDS, "4/4 0/0"); /* lake's and b's two vectors went with their messages */
        snprintf(text, sizeof text, "SELECT string_agg(op::text, ' ' ORDER BY seq) FROM embed_log WHERE seq > %s", seq);
        sql_is("mig", text, "0 1 1 1 1 0 0 0"); /* the edit dropped one, the drain wrote four, the deletes dropped three */
    }
    free(a);
    free(b);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "pgmsgkeys");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(migration_to_16),
    };
    return cmocka_run_group_tests_name("pg_message_keys", tests, setup, teardown);
}
