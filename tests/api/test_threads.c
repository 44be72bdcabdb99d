/*
 * test_threads.c — threads and state through mnemo.h: defaults and validation of TTL and turn
 * limits, expiry reported as MN_EXPIRED (with an injected clock), gc, file-content dedup by
 * SHA-256, state changes and redaction, concurrent merges from threads.
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
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[64];

static mn_db *open_db(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    /* threads below write at once: their lock waits are bounded generously, not by the speed of
     * a loaded machine (the default bound is tested by unit/test_busy) */
    assert_int_equal(mn_config_set(cfg, "memory.busy_timeout_ms", "120000", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "state.sensitive_params", "token,pin", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static void set_now(long long ms)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", ms);
    setenv("MNEMO_TEST_NOW_MS", v, 1);
}

static void limits_and_expiry(void **state)
{
    (void)state;
    set_now(1800000000000LL);
    mn_db *db = open_db("limits");
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.tool_name = "chat";
    o.ttl_ms = -2;
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID);
    o.ttl_ms = 10;
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID); /* under a second */
    o.ttl_ms = 0;
    o.max_turns = 2000000;
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID);
    o.max_turns = 0;
    o.ttl_ms = 60000;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    assert_int_equal(s->ttl_ms, 60000);
    assert_int_equal(s->max_turns, 50);
    assert_int_equal(s->expires_at, 1800000060000LL);
    char id[40];
    snprintf(id, sizeof id, "%s", s->id);
    mn_session_free(s);

    mn_session_opts plain = MN_SESSION_OPTS_INIT;
    assert_int_equal(mn_session_create(db, &plain, &s), MN_OK);
    assert_int_equal(s->ttl_ms, 0);
    assert_int_equal(s->expires_at, 0);
    mn_session_free(s);

    set_now(1800000060000LL); /* the moment it expires */
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, id, NULL, &l), MN_EXPIRED);
    assert_non_null(strstr(mn_errmsg(), "expired at 2027-01-15T08:01:00.000Z"));
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "late";
    assert_int_equal(mn_append(db, id, &m, 0, NULL), MN_EXPIRED);
    mn_stats st;
    assert_int_equal(mn_stats_get(db, &st), MN_OK);
    assert_int_equal(st.threads, 1);
    assert_int_equal(st.expired_pending, 1);
    int64_t purged = 0;
    assert_int_equal(mn_gc(db, &purged), MN_OK);
    assert_int_equal(purged, 1);
    assert_int_equal(mn_history(db, id, NULL, &l), MN_NOTFOUND);
    assert_int_equal(mn_gc(db, &purged), MN_OK);
    assert_int_equal(purged, 0);
    mn_close(db);
    unsetenv("MNEMO_TEST_NOW_MS");
}

static void file_dedup(void **state)
{
    (void)state;
    mn_db *db = open_db("files");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    int inc = -1;
    const char *a = "int main(void) { return 0; }\n";
    assert_int_equal(mn_file_should_include(db, s->id, "src/main.c", a, strlen(a), &inc), MN_OK);
    assert_int_equal(inc, 1);
    assert_int_equal(mn_file_should_include(db, s->id, "src/main.c", a, strlen(a), &inc), MN_OK);
    assert_int_equal(inc, 0); /* same content, same path: sent once */
    assert_int_equal(mn_file_should_include(db, s->id, "src/copy.c", a, strlen(a), &inc), MN_OK);
    assert_int_equal(inc, 1); /* same content, another path: included */
    assert_int_equal(mn_file_should_include(db, s->id, "src/main.c", "changed", 7, &inc), MN_OK);
    assert_int_equal(inc, 1); /* new content */
    mn_session *other = NULL;
    assert_int_equal(mn_session_create(db, NULL, &other), MN_OK);
    assert_int_equal(mn_file_should_include(db, other->id, "src/main.c", a, strlen(a), &inc), MN_OK);
    assert_int_equal(inc, 1); /* per thread */
    assert_int_equal(mn_file_should_include(db, s->id, "bad\xff", a, strlen(a), &inc), MN_INVALID);
    assert_int_equal(mn_file_should_include(db, s->id, "", a, strlen(a), &inc), MN_INVALID);
    mn_session_free(other);
    mn_session_free(s);
    mn_close(db);
}

static void state_changes_and_redaction(void **state)
{
    (void)state;
    mn_db *db = open_db("state");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    assert_int_equal(mn_state_set_waiting(db, s->id, "token"), MN_OK);
    assert_int_equal(mn_state_merge_params(db, s->id, "{\"token\":\"sk-secret\",\"city\":\"Porto\"}"), MN_OK);
    char *json = NULL;
    assert_int_equal(mn_state_get(db, s->id, 0, &json), MN_OK);
    assert_null(strstr(json, "sk-secret"));
    assert_non_null(strstr(json, "\"token\":\"[redacted]\""));
    assert_non_null(strstr(json, "\"waiting_for_param\":null"));
    mn_free(json);
    assert_int_equal(mn_state_get(db, s->id, 1, &json), MN_OK);
    assert_non_null(strstr(json, "sk-secret"));
    mn_free(json);
    assert_int_equal(mn_state_merge_params(db, s->id, "[1]"), MN_INVALID);
    assert_int_equal(mn_state_merge_params(db, s->id, NULL), MN_INVALID);
    assert_int_equal(mn_state_set_result(db, s->id, "i1", "{bad"), MN_INVALID);
    assert_int_equal(mn_state_set_plan(db, s->id, "{\"steps\":[1,2]}"), MN_OK);
    assert_int_equal(mn_state_clear(db, s->id), MN_OK);
    assert_int_equal(mn_state_get(db, s->id, 1, &json), MN_OK);
    assert_string_equal(json, "{\"params\":{},\"waiting_for_param\":null,\"last_intent_id\":null,\"last_result\":null,"
                              "\"plan_execution\":null}");
    mn_free(json);
    mn_session_free(s);
    mn_close(db);
}

struct merger {
    mn_db *db;
    const char *sid;
    int who, failures;
};

static void *merge_many(void *arg)
{
    struct merger *m = arg;
    for (int i = 0; i < 40; i++) {
        char json[64];
        snprintf(json, sizeof json, "{\"t%d_%d\":%d}", m->who, i, i);
        if (mn_state_merge_params(m->db, m->sid, json) != MN_OK)
            m->failures++;
    }
    return NULL;
}

static void concurrent_merges_all_land(void **state)
{
    (void)state;
    mn_db *a = open_db("merges"), *b = open_db("merges");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(a, NULL, &s), MN_OK);
    struct merger m[4] = {{a, s->id, 0, 0}, {a, s->id, 1, 0}, {b, s->id, 2, 0}, {b, s->id, 3, 0}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, merge_many, &m[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(m[i].failures, 0);
    }
    char *json = NULL;
    assert_int_equal(mn_state_get(a, s->id, 0, &json), MN_OK);
    int keys = 0;
    for (const char *p = json; (p = strstr(p, "\"t")); p++)
        keys++;
    assert_int_equal(keys, 160);
    mn_free(json);
    mn_session_free(s);
    mn_close(a);
    mn_close(b);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mnemo-threads-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_and_expiry),
        cmocka_unit_test(file_dedup),
        cmocka_unit_test(state_changes_and_redaction),
        cmocka_unit_test(concurrent_merges_all_land),
    };
    return cmocka_run_group_tests_name("threads", tests, setup, teardown);
}
