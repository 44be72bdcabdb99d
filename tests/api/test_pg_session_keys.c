/*
 * test_pg_session_keys.c — the PostgreSQL schema step 16 → 17 (src/store/postgres/schema.h): a
 * session's id and its key in a namespace are kept unique by the tables session_ids and
 * session_keys (each distributed by its own key on Citus, docs/scale-out.md), not by unique
 * keys of sessions, which is distributed by sid. A version-16 database is migrated; then a taken
 * id or key is still MN_CONFLICT and claims nothing, a deleted or forgotten session frees its id
 * and key, and sessions made at once from two handles under the same keys end up one a key. On
 * SQLite the same calls run without the migration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[256];

static const char PG_SCHEMA_16[] = TEST_PG_UNDO_17 " UPDATE mnemo_schema SET version = 16";

/* The claims agree with the sessions: "sessions ids keys" counted, each claim naming its row. */
static const char SQL_CLAIMS[] =
    "SELECT (SELECT count(*) FROM sessions) || ' ' ||"
    " (SELECT count(*) FROM session_ids i JOIN sessions s ON s.id = i.id AND s.sid = i.sid) || ' ' ||"
    " (SELECT count(*) FROM session_keys k JOIN sessions s ON s.namespace = k.namespace AND s.key = k.key"
    "  AND s.sid = k.sid) || ' ' || (SELECT count(*) FROM session_ids) || ' ' || (SELECT count(*) FROM session_keys)";

static const char *ID1 = "0190f0f0-0000-7000-8000-0000000000a1";
static const char *ID2 = "0190f0f0-0000-7000-8000-0000000000a2";
static const char *ID3 = "0190f0f0-0000-7000-8000-0000000000a3";

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

static void sql_is(const char *name, const char *text, const char *want)
{
    if (!test_db_pg())
        return;
    char out[512];
    assert_int_equal(test_db_sql(target(name), text, out, sizeof out), 0);
    assert_string_equal(out, want);
}

static mn_status create(mn_db *db, const char *id, const char *ns, const char *key)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.id = id;
    o.ns = ns;
    o.key = key;
    return mn_session_create(db, &o, NULL);
}

static void key_names(mn_db *db, const char *ns, const char *key, const char *want)
{
    char id[37];
    assert_int_equal(mn_session_resolve(db, ns, key, id), MN_OK);
    assert_string_equal(id, want);
}

/* A version-16 database with three sessions, two of them keyed. Opening it migrates to 17: the
 * claims hold every id and key, sessions has no unique key but sid. Then the rules are the
 * same as before: taken ids and keys conflict and leave nothing claimed, a key is unique in its
 * namespace only, a delete or a namespace forget frees ids and keys for new sessions. */
static void migration_to_17(void **state)
{
    (void)state;
    mn_db *db = open_db("mig");
    assert_int_equal(create(db, ID1, "a", "user-42-chat"), MN_OK);
    assert_int_equal(create(db, ID2, "a", NULL), MN_OK);
    assert_int_equal(create(db, ID3, "b", "user-42-chat"), MN_OK);
    mn_close(db);
    if (test_db_pg())
        assert_int_equal(test_db_sql(target("mig"), PG_SCHEMA_16, NULL, 0), 0);

    db = open_db("mig"); /* migrates */
    sql_is("mig", "SELECT version FROM mnemo_schema", "17");
    sql_is("mig", SQL_CLAIMS, "3 3 2 3 2");
    sql_is("mig",
           "SELECT string_agg(pg_get_constraintdef(oid), ', ' ORDER BY conname) FROM pg_constraint"
           " WHERE conrelid = 'sessions'::regclass AND contype IN ('p', 'u')",
           "PRIMARY KEY (sid)");
    sql_is("mig",
           "SELECT string_agg(indexname || ' ' || (indexdef LIKE 'CREATE UNIQUE%'), ', ' ORDER BY indexname)"
           " FROM pg_indexes WHERE tablename = 'sessions' AND indexname IN ('sessions_by_id', 'sessions_by_key')",
           "sessions_by_id false, sessions_by_key false");
    key_names(db, "a", "user-42-chat", ID1);
    key_names(db, "b", "user-42-chat", ID3);

    /* taken: the id (in its namespace or another), the key in its namespace; nothing is claimed */
    assert_int_equal(create(db, ID2, "a", NULL), MN_CONFLICT);
    assert_int_equal(create(db, ID2, "b", NULL), MN_NOTFOUND);
    const char *id4 = "0190f0f0-0000-7000-8000-0000000000a4";
    assert_int_equal(create(db, id4, "a", "user-42-chat"), MN_CONFLICT);
    sql_is("mig", SQL_CLAIMS, "3 3 2 3 2");
    assert_int_equal(create(db, id4, "c", "user-42-chat"), MN_OK); /* the id was not kept by the failure */
    sql_is("mig", SQL_CLAIMS, "4 4 3 4 3");

    /* an append that creates by key finds the keyed session */
    mn_append_request r = MN_APPEND_REQUEST_INIT;
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = "hello again";
    r.session_id = "user-42-chat";
    r.ns = "a";
    r.msgs = &m;
    r.n = 1;
    r.flags = MN_APPEND_CREATE;
    mn_append_result res;
    assert_int_equal(mn_append_many(db, &r, 1, 0, &res), MN_OK);
    assert_int_equal(res.status, MN_OK);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, ID1, &s), MN_OK);
    assert_int_equal(s->message_count, 1);
    mn_session_free(s);
    sql_is("mig", SQL_CLAIMS, "4 4 3 4 3");

    /* a delete frees the id and the key; a namespace forget frees its sessions' */
    assert_int_equal(mn_session_delete(db, ID1), MN_OK);
    sql_is("mig", SQL_CLAIMS, "3 3 2 3 2");
    assert_int_equal(create(db, ID1, "a", "user-42-chat"), MN_OK);
    mn_forget_stats st;
    assert_int_equal(mn_namespace_forget(db, "b", &st), MN_OK);
    assert_int_equal(st.sessions, 1);
    sql_is("mig", SQL_CLAIMS, "3 3 2 3 2");
    assert_int_equal(create(db, ID3, "b", "user-42-chat"), MN_OK);
    key_names(db, "b", "user-42-chat", ID3);
    sql_is("mig", SQL_CLAIMS, "4 4 3 4 3");
    mn_close(db);
}

enum { KEYS = 40 };

struct racer {
    mn_db *db;
    int created, taken;
};

/* Creates sessions keyed k0..k39 in namespace "race", a new id each: the other racer tries the
 * same keys at the same time. */
static void *race(void *arg)
{
    struct racer *r = arg;
    for (int i = 0; i < KEYS; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%d", i);
        mn_status rc = create(r->db, NULL, "race", key);
        if (rc == MN_OK)
            r->created++;
        else if (rc == MN_CONFLICT)
            r->taken++;
    }
    return NULL;
}

/* Two handles create sessions under the same keys at once: every key names one session, every
 * attempt is a session or a conflict, and no claim is left without its session. */
static void same_keys_at_once(void **state)
{
    (void)state;
    mn_db *dbs[2] = {open_db("race"), open_db("race")};
    struct racer r[2] = {{dbs[0], 0, 0}, {dbs[1], 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(r[0].created + r[1].created, KEYS);
    assert_int_equal(r[0].taken + r[1].taken, KEYS);
    mn_sessions *list = NULL;
    assert_int_equal(mn_session_list(dbs[0], "race", 1000, 0, &list), MN_OK);
    assert_int_equal(list->count, KEYS);
    mn_sessions_free(list);
    char want[64];
    snprintf(want, sizeof want, "%d %d %d %d %d", KEYS, KEYS, KEYS, KEYS, KEYS);
    sql_is("race", SQL_CLAIMS, want);
    mn_close(dbs[0]);
    mn_close(dbs[1]);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "pgseskeys");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(migration_to_17),
        cmocka_unit_test(same_keys_at_once),
    };
    return cmocka_run_group_tests_name("pg_session_keys", tests, setup, teardown);
}
