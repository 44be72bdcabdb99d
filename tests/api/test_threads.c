/*
 * test_threads.c — threads and state through mnemo.h: defaults and validation of TTL and turn
 * limits, expiry reported as MN_EXPIRED (with an injected clock), gc and prune (which forget the
 * extraction watermark of what they delete), what a fork copies, file-content dedup by SHA-256,
 * state changes and redaction, concurrent merges from threads.
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
    assert_null(l); /* the messages read with the expiry are not handed out */
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

static void say(mn_db *db, const char *id, const char *text)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = text;
    assert_int_equal(mn_append(db, id, &m, 0, NULL), MN_OK);
}

/* The user messages an offline extraction of session id reads (those past its watermark). */
static int64_t extracted(mn_db *db, const char *id)
{
    mn_extract_stats st;
    assert_int_equal(mn_memory_extract(db, id, "offline", &st), MN_OK);
    return st.messages;
}

/* A session gc (expired) or prune (idle) deleted and made again with its id is extracted from
 * its first message, as after mn_session_delete: the deleted one's extraction watermark (seq 3)
 * went with it, else it would skip the new session's first three turns. */
static void gc_and_prune_forget_the_watermark(void **state)
{
    (void)state;
    const long long day = 86400000LL;
    const char *id = "01900000-0000-7000-8000-00000000e0b1";
    mn_db *db = open_db("watermark");
    for (int prune = 0; prune < 2; prune++) {
        long long t0 = 1800000000000LL + prune * 10 * day;
        set_now(t0);
        mn_session_opts o = MN_SESSION_OPTS_INIT;
        o.id = id;
        o.tool_name = prune ? NULL : "chat";
        o.ttl_ms = prune ? 0 : 60000;
        assert_int_equal(mn_session_create(db, &o, NULL), MN_OK);
        say(db, id, "Hello there.");
        say(db, id, "Fine, thanks.");
        say(db, id, "Nothing to note.");
        assert_int_equal(extracted(db, id), 3);
        int64_t n = 0;
        set_now(t0 + 2 * day);
        assert_int_equal(prune ? mn_prune(db, 1, &n) : mn_gc(db, &n), MN_OK);
        assert_int_equal(n, 1);
        o.tool_name = NULL;
        o.ttl_ms = 0;
        assert_int_equal(mn_session_create(db, &o, NULL), MN_OK);
        say(db, id, "Remember that the backup runs nightly.");
        assert_int_equal(extracted(db, id), 1);
        assert_int_equal(mn_session_delete(db, id), MN_OK);
    }
    mn_close(db);
    unsetenv("MNEMO_TEST_NOW_MS");
}

/* Appends in to session id; the new message's id. */
static int64_t add(mn_db *db, const char *id, const mn_message_in *in)
{
    mn_message *m = NULL;
    assert_int_equal(mn_append(db, id, in, 0, &m), MN_OK);
    int64_t mid = m->id;
    mn_message_free(m);
    return mid;
}

/* A fork copies the session (namespace, title, system prompt, metadata, tool name, limits, the
 * source as parent; a TTL counts from the fork) and its active messages up to upto_seq, numbered
 * from 1, each whole (role, text, tool calls, names, model, files, metadata, idempotency key,
 * tokens, pinned flag, time) under a new id; the title follows the copy of the message it came
 * from, and stays put when that one was not copied. */
static void fork_copies(void **state)
{
    (void)state;
    const long long t0 = 1800000000000LL;
    set_now(t0);
    mn_db *db = open_db("fork");
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.ns = "team";
    o.system_prompt = "Be brief.";
    o.metadata = "{\"k\":\"v\"}";
    o.tool_name = "chat";
    o.ttl_ms = 3600000;
    o.max_turns = 7;
    mn_session *src = NULL;
    assert_int_equal(mn_session_create(db, &o, &src), MN_OK);
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.content = "Old question";
    add(db, src->id, &in); /* seq 1: the title */
    in.role = MN_ROLE_ASSISTANT;
    in.content = "Old answer";
    add(db, src->id, &in);
    int64_t cleared = 0;
    assert_int_equal(mn_session_clear(db, src->id, 0, &cleared), MN_OK);
    assert_int_equal(cleared, 2);
    set_now(t0 + 1000);
    in = (mn_message_in)MN_MESSAGE_IN_INIT;
    in.content = "New question";
    in.idempotency_key = "k1";
    in.files = "[\"src/a.c\"]";
    add(db, src->id, &in); /* seq 3 */
    in = (mn_message_in)MN_MESSAGE_IN_INIT;
    in.role = MN_ROLE_ASSISTANT;
    in.tool_calls = "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}]";
    in.model = "m1";
    in.metadata = "{\"x\":1}";
    in.pinned = 1;
    add(db, src->id, &in); /* seq 4 */
    in = (mn_message_in)MN_MESSAGE_IN_INIT;
    in.role = MN_ROLE_TOOL;
    in.content = "42";
    in.tool_call_id = "c1";
    in.name = "lookup";
    in.tool_name = "grep";
    int64_t last_src = add(db, src->id, &in); /* seq 5 */
    in = (mn_message_in)MN_MESSAGE_IN_INIT;
    in.content = "Thanks";
    add(db, src->id, &in); /* seq 6 */

    set_now(t0 + 5000);
    mn_session *f = NULL;
    assert_int_equal(mn_session_fork(db, src->id, 0, &f), MN_OK);
    assert_string_equal(f->parent_id, src->id);
    assert_string_equal(f->ns, "team");
    assert_string_equal(f->title, "Old question");
    assert_string_equal(f->system_prompt, "Be brief.");
    assert_string_equal(f->metadata, "{\"k\":\"v\"}");
    assert_string_equal(f->tool_name, "chat");
    assert_int_equal(f->ttl_ms, 3600000);
    assert_int_equal(f->max_turns, 7);
    assert_int_equal(f->created_at, t0 + 5000);
    assert_int_equal(f->updated_at, t0 + 5000);
    assert_int_equal(f->expires_at, t0 + 5000 + 3600000);
    assert_int_equal(f->message_count, 4);
    assert_int_equal(f->turn_count, 2);
    assert_int_equal(f->inactive_count, 0);
    assert_int_equal(f->cleared_seq, 0);
    mn_history_opts all = MN_HISTORY_OPTS_INIT;
    all.all = 1;
    mn_messages *hs = NULL, *hf = NULL;
    assert_int_equal(mn_history(db, src->id, &all, &hs), MN_OK);
    assert_int_equal(mn_history(db, f->id, &all, &hf), MN_OK);
    assert_int_equal(hf->count, 4);
    int64_t tokens = 0;
    for (size_t i = 0; i < hf->count; i++) {
        const mn_message *a = mn_messages_at(hs, i + 2), *b = mn_messages_at(hf, i);
        assert_int_equal(b->seq, (int64_t)i + 1);
        assert_true(b->id > last_src + (int64_t)i);
        assert_string_equal(b->session_id, f->id);
        assert_int_equal(b->role, a->role);
#define SAME(field) (a->field == NULL ? assert_null(b->field) : assert_string_equal(b->field, a->field))
        SAME(content);
        SAME(tool_calls);
        SAME(tool_call_id);
        SAME(name);
        SAME(tool_name);
        SAME(model);
        SAME(files);
        SAME(metadata);
        SAME(idempotency_key);
#undef SAME
        assert_int_equal(b->tokens, a->tokens);
        assert_int_equal(b->pinned, a->pinned);
        assert_int_equal(b->created_at, a->created_at);
        assert_int_equal(b->active, 1);
        tokens += b->tokens;
    }
    assert_int_equal(f->token_count, tokens);
    assert_int_equal(mn_messages_at(hf, 1)->pinned, 1);
    assert_string_equal(mn_messages_at(hf, 0)->idempotency_key, "k1");
    int64_t first = mn_messages_at(hf, 0)->id;
    mn_messages_free(hf);
    mn_messages_free(hs);
    /* the title came from a message left behind: an edit of the copies leaves it */
    assert_int_equal(mn_message_edit(db, f->id, first, "Edited", NULL, NULL), MN_OK);
    mn_session *g = NULL;
    assert_int_equal(mn_session_get(db, f->id, &g), MN_OK);
    assert_string_equal(g->title, "Old question");
    mn_session_free(g);
    mn_session_free(f);

    /* up to seq 4: the active ones of 1 to 4 */
    assert_int_equal(mn_session_fork(db, src->id, 4, &f), MN_OK);
    assert_int_equal(f->message_count, 2);
    assert_int_equal(f->turn_count, 1);
    assert_int_equal(mn_history(db, f->id, &all, &hf), MN_OK);
    assert_int_equal(hf->count, 2);
    assert_string_equal(mn_messages_at(hf, 0)->content, "New question");
    assert_int_equal(mn_messages_at(hf, 1)->seq, 2);
    mn_messages_free(hf);
    mn_session_free(f);

    /* a title from a copied message (seq 3 there, 2 here) follows the copy */
    mn_session *u = NULL;
    assert_int_equal(mn_session_create(db, NULL, &u), MN_OK);
    in = (mn_message_in)MN_MESSAGE_IN_INIT;
    in.content = "first";
    int64_t gone = add(db, u->id, &in);
    in.role = MN_ROLE_ASSISTANT;
    in.content = "reply";
    add(db, u->id, &in);
    assert_int_equal(mn_message_delete(db, u->id, gone), MN_OK); /* the title goes with it */
    in.role = MN_ROLE_USER;
    in.content = "Gamma";
    add(db, u->id, &in);
    assert_int_equal(mn_session_fork(db, u->id, 0, &f), MN_OK);
    assert_string_equal(f->title, "Gamma");
    assert_int_equal(mn_history(db, f->id, &all, &hf), MN_OK);
    assert_int_equal(hf->count, 2);
    int64_t gamma = mn_messages_at(hf, 1)->id, reply = mn_messages_at(hf, 0)->id;
    mn_messages_free(hf);
    assert_int_equal(mn_message_edit(db, f->id, reply, "Epsilon", NULL, NULL), MN_OK);
    assert_int_equal(mn_session_get(db, f->id, &g), MN_OK);
    assert_string_equal(g->title, "Gamma");
    mn_session_free(g);
    assert_int_equal(mn_message_edit(db, f->id, gamma, "Delta", NULL, NULL), MN_OK);
    assert_int_equal(mn_session_get(db, f->id, &g), MN_OK);
    assert_string_equal(g->title, "Delta");
    mn_session_free(g);
    assert_int_equal(mn_session_get(db, u->id, &g), MN_OK);
    assert_string_equal(g->title, "Gamma"); /* the source's stays */
    mn_session_free(g);
    mn_session_free(f);

    /* errors: a missing or expired source, a negative upto */
    assert_int_equal(mn_session_fork(db, u->id, -1, &f), MN_INVALID);
    assert_null(f);
    assert_int_equal(mn_session_fork(db, "01900000-0000-7000-8000-00000000dead", 0, &f), MN_NOTFOUND);
    set_now(t0 + 7200000);
    assert_int_equal(mn_session_fork(db, src->id, 0, &f), MN_EXPIRED);
    mn_session_free(u);
    mn_session_free(src);
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
        cmocka_unit_test(gc_and_prune_forget_the_watermark),
        cmocka_unit_test(fork_copies),
        cmocka_unit_test(file_dedup),
        cmocka_unit_test(state_changes_and_redaction),
        cmocka_unit_test(concurrent_merges_all_land),
    };
    return cmocka_run_group_tests_name("threads", tests, setup, teardown);
}
