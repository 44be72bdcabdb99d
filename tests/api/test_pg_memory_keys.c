/*
 * test_pg_memory_keys.c — the PostgreSQL schema step 14 → 15 (src/store/postgres/schema.h):
 * memories keyed by (id, vid), memory_vectors by (memory_id, vid) with its foreign key to
 * memories(id, vid), memory_vector_log carrying memory_id, as a distributed PostgreSQL (Citus)
 * needs (docs/scale-out.md). A version-14 database with memories, versions and vectors is
 * migrated; then search, history, the vector index's catch-up from the log and forget still
 * work. On SQLite the same calls run without the migration.
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

/* The PostgreSQL schema of version 14 from a database of version 15: what 14 → 15 changed
 * undone (the log trigger's function is left: the step makes it again, and nothing writes a
 * vector before it runs). */
static const char PG_SCHEMA_14[] = TEST_PG_UNDO_17 TEST_PG_UNDO_15 TEST_PG_UNDO_16
    " UPDATE mnemo_schema SET version = 14";

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
    assert_int_equal(mn_config_set(cfg, "embedder.name", "hash", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(target(name), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

/* Runs sql on the database `name` (PostgreSQL only); out gets its output. */
static void sql(const char *name, const char *text, char *out, size_t cap)
{
    assert_int_equal(test_db_sql(target(name), text, out, cap), 0);
}

/* Adds a memory with text; returns its id (caller frees). */
static char *add(mn_db *db, const char *text)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = text;
    in.pinned = 0; /* -1 keeps, for an update */
    in.token_cap = 0;
    mn_memory *m = NULL;
    assert_int_equal(mn_memory_add(db, &in, &m), MN_OK);
    char *id = strdup(m->id);
    mn_memory_free(m);
    return id;
}

static void update(mn_db *db, const char *id, const char *text)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = text;
    assert_int_equal(mn_memory_update(db, id, &in, NULL), MN_OK);
}

/* The id of the best semantic hit for query (caller frees), or NULL when none. */
static char *top(mn_db *db, const char *query)
{
    mn_memories *s = NULL;
    assert_int_equal(mn_memory_search(db, query, MN_SEARCH_SEMANTIC, NULL, &s), MN_OK);
    char *id = s->count ? strdup(s->items[0].id) : NULL;
    mn_memories_free(s);
    return id;
}

static void top_is(mn_db *db, const char *query, const char *want)
{
    char *id = top(db, query);
    assert_non_null(id);
    assert_string_equal(id, want);
    free(id);
}

static void versions_are(mn_db *db, const char *id, size_t n)
{
    mn_memories *h = NULL;
    assert_int_equal(mn_memory_history(db, id, &h), MN_OK);
    assert_int_equal(h->count, n);
    mn_memories_free(h);
}

/* A version-14 database: two memories (one with two versions) and one forgotten, whose log rows
 * stay. Opening it migrates to 15: every vector and log row names its memory (a forgotten one's
 * rows none), the keys are the memory's id and the version's, the step logs no change; then
 * search, history, another handle's writes (read from the log) and forget work as before. */
static void migration_to_15(void **state)
{
    (void)state;
    char out[512], seq[64];
    mn_db *db = open_db("mig");
    char *pg = add(db, "The project database is PostgreSQL on three nodes");
    char *tea = add(db, "Alice drinks green tea every morning");
    char *gone = add(db, "A memory forgotten before the upgrade");
    update(db, tea, "Alice drinks green tea every morning and jasmine tea at night");
    assert_int_equal(mn_memory_forget(db, gone), MN_OK);
    top_is(db, "jasmine tea at night", tea);
    mn_close(db);
    if (test_db_pg()) {
        sql("mig", PG_SCHEMA_14, NULL, 0);
        sql("mig", "SELECT max(seq) FROM memory_vector_log", seq, sizeof seq);
    }

    db = open_db("mig"); /* migrates */
    if (test_db_pg()) {
        sql("mig", "SELECT version FROM mnemo_schema", out, sizeof out);
        assert_string_equal(out, "17"); /* 14 → 15 → … → 17 */
        sql("mig",
            "SELECT count(*) || ' ' || count(*) FILTER (WHERE v.memory_id = m.id) FROM memory_vectors v"
            " JOIN memories m ON m.vid = v.vid",
            out, sizeof out);
        assert_string_equal(out, "3 3"); /* three versions with a vector, each naming its memory */
        sql("mig",
            "SELECT count(*) FILTER (WHERE l.memory_id = m.id) || ' ' || count(*) FILTER (WHERE m.vid IS NULL"
            " AND l.memory_id IS NULL) || ' ' || count(*) FROM memory_vector_log l LEFT JOIN memories m"
            " ON m.vid = l.vid",
            out, sizeof out);
        assert_string_equal(out, "3 2 5"); /* the forgotten memory's insert and delete name none */
        sql("mig", "SELECT max(seq) FROM memory_vector_log", out, sizeof out);
        assert_string_equal(out, seq); /* the step logged nothing */
        sql("mig",
            "SELECT string_agg(conname || ' ' || pg_get_constraintdef(oid), ', ' ORDER BY conname) FROM pg_constraint"
            " WHERE conrelid IN ('memories'::regclass, 'memory_vectors'::regclass) AND contype IN ('p', 'f')",
            out, sizeof out);
        assert_string_equal(out, "memories_pkey PRIMARY KEY (id, vid),"
                                 " memory_vectors_memory_id_vid_fkey FOREIGN KEY (memory_id, vid)"
                                 " REFERENCES memories(id, vid) ON DELETE CASCADE,"
                                 " memory_vectors_pkey PRIMARY KEY (memory_id, vid)");
        sql("mig", "SELECT attnotnull FROM pg_attribute WHERE attrelid = 'memory_vectors'::regclass"
                   " AND attname = 'memory_id'", out, sizeof out);
        assert_string_equal(out, "t");
    }
    assert_int_equal(mn_embed_pending(db, 0, NULL), MN_OK); /* builds the memory vector index: a full scan */
    top_is(db, "jasmine tea at night", tea);
    top_is(db, "PostgreSQL database on three nodes", pg);
    versions_are(db, tea, 2);

    /* another handle's writes reach this one's vector index through the log (the entries past its
     * position, read beside it) */
    mn_db *other = open_db("mig");
    char *coffee = add(other, "Bob takes his espresso with oat milk");
    update(other, pg, "The project database is PostgreSQL on five nodes");
    top_is(db, "espresso with oat milk", coffee);
    versions_are(db, pg, 2);
    assert_int_equal(mn_memory_forget(other, tea), MN_OK);
    char *hit = top(db, "jasmine tea at night");
    assert_true(!hit || strcmp(hit, tea) != 0);
    free(hit);
    mn_close(other);
    if (test_db_pg()) {
        sql("mig", "SELECT count(*) FROM memory_vectors WHERE memory_id = ANY (SELECT id FROM memories)", out,
            sizeof out);
        assert_string_equal(out, "3"); /* pg's two versions and coffee's one; tea's gone with it */
        char text[200];
        snprintf(text, sizeof text, "SELECT string_agg(op || ':' || (memory_id IS NOT NULL), ' ' ORDER BY seq)"
                                    " FROM memory_vector_log WHERE seq > %s", seq);
        sql("mig", text, out, sizeof out);
        assert_string_equal(out, "1:true 1:true 0:true 0:true"); /* coffee, pg's new version, tea's two gone */
    }
    free(pg);
    free(tea);
    free(gone);
    free(coffee);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "pgmemkeys");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(migration_to_15),
    };
    return cmocka_run_group_tests_name("pg_memory_keys", tests, setup, teardown);
}
