/*
 * test_api.c — libmnemo through include/mnemo.h only: sessions, appends (single, batch,
 * idempotent, lazy creation), history paging, the table of bad inputs (each refused with the
 * right status and a message naming the field, and nothing written), export → import → export
 * byte equality, handles shared by threads, misuse detection.
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
#include <time.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[64];

static mn_db *open_db(const char *name, const char *max_bytes)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    /* threads below write at once: their lock waits are bounded generously, not by the speed of
     * a loaded machine (the default bound is tested by unit/test_busy) */
    assert_int_equal(mn_config_set(cfg, "memory.busy_timeout_ms", "120000", NULL), MN_OK);
    if (max_bytes)
        assert_int_equal(mn_config_set(cfg, "memory.max_message_bytes", max_bytes, NULL), MN_OK);
    mn_db *db = NULL;
    if (mn_open_path(test_db_target(path), cfg, &db) != MN_OK)
        fail_msg("open: %s", mn_errmsg());
    mn_config_free(cfg);
    return db;
}

static char *create(mn_db *db)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

/* Everything stored, as export text: the "nothing changed" witness. */
struct sink {
    char *data;
    size_t len;
};

static int sink_write(void *user, const char *bytes, size_t len)
{
    struct sink *s = user;
    char *n = realloc(s->data, s->len + len + 1);
    if (!n)
        return 1;
    memcpy(n + s->len, bytes, len);
    s->data = n;
    s->len += len;
    s->data[s->len] = '\0';
    return 0;
}

static char *export_all(mn_db *db)
{
    struct sink s = {NULL, 0};
    assert_int_equal(mn_export(db, NULL, 0, sink_write, &s), MN_OK);
    return s.data;
}

static void sessions_and_messages(void **state)
{
    (void)state;
    mn_db *db = open_db("basic", NULL);
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.system_prompt = "Be brief.";
    o.metadata = "{ \"user\" : \"ana\" }";
    o.ns = "team-a";
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    assert_string_equal(s->metadata, "{\"user\":\"ana\"}"); /* stored canonical */
    assert_string_equal(s->ns, "team-a");
    assert_null(s->title);
    char id[40];
    snprintf(id, sizeof id, "%s", s->id);
    mn_session_free(s);

    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = "How do I\nrevert a commit?";
    mn_message *out = NULL;
    assert_int_equal(mn_append(db, id, &m, 0, &out), MN_OK);
    assert_int_equal(out->seq, 1);
    assert_int_equal(out->tokens, 7); /* 25 characters / 4, rounded up */
    int64_t first_id = out->id;
    mn_message_free(out);

    assert_int_equal(mn_session_get(db, id, &s), MN_OK);
    assert_string_equal(s->title, "How do I revert a commit?");
    assert_int_equal(s->message_count, 1);
    mn_session_free(s);

    /* idempotent retry */
    m.idempotency_key = "turn-2";
    m.content = "second";
    assert_int_equal(mn_append(db, id, &m, 0, &out), MN_OK);
    int64_t second_id = out->id;
    mn_message_free(out);
    assert_int_equal(mn_append(db, id, &m, 0, &out), MN_OK); /* the retry */
    assert_int_equal(out->id, second_id);
    assert_string_equal(out->content, "second");
    mn_message_free(out);
    m.content = "second, changed";
    assert_int_equal(mn_append(db, id, &m, 0, &out), MN_CONFLICT);
    assert_null(out);
    m.content = "second";
    assert_true(second_id > first_id);

    /* batch: all or nothing */
    mn_message_in batch[3] = {MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT};
    batch[0].content = "a";
    batch[1].role = MN_ROLE_ASSISTANT;
    batch[1].content = "b";
    batch[2].role = MN_ROLE_TOOL;
    batch[2].content = "c"; /* no tool_call_id: the whole batch is refused */
    mn_messages *l = NULL;
    assert_int_equal(mn_append_batch(db, id, batch, 3, 0, &l), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "message 2: tool_call_id"));
    assert_null(l);
    batch[2].tool_call_id = "x";
    assert_int_equal(mn_append_batch(db, id, batch, 3, 0, &l), MN_OK);
    assert_int_equal(l->count, 3);
    assert_int_equal(l->items[2].seq, 5);
    mn_messages_free(l);

    mn_history_opts h = MN_HISTORY_OPTS_INIT;
    h.limit = 2;
    h.tail = 1;
    assert_int_equal(mn_history(db, id, &h, &l), MN_OK);
    assert_int_equal(l->count, 2);
    assert_string_equal(l->items[0].content, "b");
    assert_string_equal(l->items[1].content, "c");
    mn_messages_free(l);

    /* lazy creation */
    const char *lazy = "0190f0f0-1111-7000-8000-000000000001";
    m.idempotency_key = NULL;
    assert_int_equal(mn_append(db, lazy, &m, 0, NULL), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), lazy));
    assert_int_equal(mn_append(db, lazy, &m, MN_APPEND_CREATE, NULL), MN_OK);
    assert_int_equal(mn_session_get(db, lazy, &s), MN_OK);
    assert_string_equal(s->ns, "default");
    mn_session_free(s);

    mn_sessions *sl = NULL;
    assert_int_equal(mn_session_list(db, NULL, 0, 0, &sl), MN_OK);
    assert_int_equal(sl->count, 2);
    assert_string_equal(sl->items[0].id, lazy); /* most recently updated first */
    mn_sessions_free(sl);
    assert_int_equal(mn_session_list(db, "team-a", 0, 0, &sl), MN_OK);
    assert_int_equal(sl->count, 1);
    mn_sessions_free(sl);

    assert_int_equal(mn_session_delete(db, id), MN_OK);
    assert_int_equal(mn_history(db, id, NULL, &l), MN_NOTFOUND);
    mn_stats st;
    assert_int_equal(mn_stats_get(db, &st), MN_OK);
    assert_int_equal(st.sessions, 1);
    assert_int_equal(st.messages, 1);
    mn_close(db);
}

struct bad_case {
    const char *what;
    mn_role role;
    const char *content, *tool_calls, *tool_call_id, *metadata, *files, *key, *session;
    mn_status expect;
    const char *needle;
};

static void bad_inputs_change_nothing(void **state)
{
    (void)state;
    mn_db *db = open_db("bad", "1000");
    char *id = create(db);
    mn_message_in ok = MN_MESSAGE_IN_INIT;
    ok.content = "fine";
    assert_int_equal(mn_append(db, id, &ok, 0, NULL), MN_OK);
    char big[1002];
    memset(big, 'x', 1001);
    big[1001] = '\0';
    const char *call = "[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]";
    const struct bad_case cases[] = {
        {"invalid UTF-8", MN_ROLE_USER, "bad \xff byte", NULL, NULL, NULL, NULL, NULL, NULL, MN_INVALID, "content: invalid UTF-8"},
        {"overlong UTF-8", MN_ROLE_USER, "\xc0\xaf", NULL, NULL, NULL, NULL, NULL, NULL, MN_INVALID, "UTF-8"},
        {"malformed tool_calls", MN_ROLE_ASSISTANT, NULL, "[{\"id\":", NULL, NULL, NULL, NULL, NULL, MN_INVALID, "tool_calls: malformed JSON"},
        {"tool_calls not an array", MN_ROLE_ASSISTANT, NULL, "{}", NULL, NULL, NULL, NULL, NULL, MN_INVALID, "tool_calls: must be a non-empty JSON array"},
        {"tool call without name", MN_ROLE_ASSISTANT, NULL, "[{\"id\":\"c\",\"function\":{}}]", NULL, NULL, NULL, NULL, NULL, MN_INVALID, "function.name"},
        {"duplicate call ids", MN_ROLE_ASSISTANT, NULL, "[{\"id\":\"c\",\"function\":{\"name\":\"f\"}},{\"id\":\"c\",\"function\":{\"name\":\"g\"}}]", NULL, NULL, NULL, NULL, NULL, MN_INVALID, "appears twice"},
        {"tool_calls on a user message", MN_ROLE_USER, "x", call, NULL, NULL, NULL, NULL, NULL, MN_INVALID, "only an assistant"},
        {"metadata not an object", MN_ROLE_USER, "x", NULL, NULL, "[1]", NULL, NULL, NULL, MN_INVALID, "metadata: must be a JSON object"},
        {"metadata malformed", MN_ROLE_USER, "x", NULL, NULL, "{'a':1}", NULL, NULL, NULL, MN_INVALID, "metadata: malformed JSON"},
        {"metadata duplicate keys", MN_ROLE_USER, "x", NULL, NULL, "{\"a\":1,\"a\":2}", NULL, NULL, NULL, MN_INVALID, "metadata"},
        {"files not strings", MN_ROLE_USER, "x", NULL, NULL, NULL, "[1]", NULL, NULL, MN_INVALID, "files[0]"},
        {"unknown role", (mn_role)7, "x", NULL, NULL, NULL, NULL, NULL, NULL, MN_INVALID, "role"},
        {"tool without call id", MN_ROLE_TOOL, "x", NULL, NULL, NULL, NULL, NULL, NULL, MN_INVALID, "tool_call_id: required"},
        {"call id on a user message", MN_ROLE_USER, "x", NULL, "c", NULL, NULL, NULL, NULL, MN_INVALID, "only a tool message"},
        {"no content", MN_ROLE_USER, NULL, NULL, NULL, NULL, NULL, NULL, NULL, MN_INVALID, "content: required"},
        {"content over the limit", MN_ROLE_USER, big, NULL, NULL, NULL, NULL, NULL, NULL, MN_TOOBIG, "memory.max_message_bytes"},
        {"empty idempotency key", MN_ROLE_USER, "x", NULL, NULL, NULL, NULL, "", NULL, MN_INVALID, "idempotency_key"},
        {"session key naming nothing", MN_ROLE_USER, "x", NULL, NULL, NULL, NULL, NULL, "sess-1", MN_NOTFOUND,
         "'sess-1' not found"},
        {"session key with a control character", MN_ROLE_USER, "x", NULL, NULL, NULL, NULL, NULL, "sess\n1",
         MN_INVALID, "control character"},
        {"unknown session", MN_ROLE_USER, "x", NULL, NULL, NULL, NULL, NULL, "0190f0f0-2222-7000-8000-000000000001", MN_NOTFOUND, "not found"},
    };
    char *before = export_all(db);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct bad_case *c = &cases[i];
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = c->role;
        m.content = c->content;
        m.tool_calls = c->tool_calls;
        m.tool_call_id = c->tool_call_id;
        m.metadata = c->metadata;
        m.files = c->files;
        m.idempotency_key = c->key;
        mn_message *out = (mn_message *)1;
        mn_status rc = mn_append(db, c->session ? c->session : id, &m, 0, &out);
        if (rc != c->expect || !strstr(mn_errmsg(), c->needle))
            fail_msg("%s: got %s '%s', want %s containing '%s'", c->what, mn_status_name(rc), mn_errmsg(),
                     mn_status_name(c->expect), c->needle);
        assert_null(out);
    }
    char *after = export_all(db);
    assert_string_equal(before, after);
    free(before);
    free(after);
    /* and the database still works */
    assert_int_equal(mn_append(db, id, &ok, 0, NULL), MN_OK);

    /* session creation refusals */
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.metadata = "not json";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID);
    o.metadata = NULL;
    o.ns = "bad namespace!";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID);
    o.ns = NULL;
    o.id = id;
    assert_int_equal(mn_session_create(db, &o, NULL), MN_CONFLICT);
    mn_session_opts unsized = MN_SESSION_OPTS_INIT;
    unsized.size = 0;
    assert_int_equal(mn_session_create(db, &unsized, NULL), MN_MISUSE);
    assert_int_equal(mn_prune(db, 0, NULL), MN_INVALID);
    mn_context_opts co = MN_CONTEXT_OPTS_INIT;
    mn_context *ctx = NULL;
    co.strategy = "psychic";
    assert_int_equal(mn_context_build(db, id, &co, &ctx), MN_INVALID);
    co.strategy = NULL;
    co.max_tokens = -5;
    assert_int_equal(mn_context_build(db, id, &co, &ctx), MN_INVALID);
    free(id);
    mn_close(db);
}

struct source {
    const char *data;
    size_t len, pos, chunk;
};

static long source_read(void *user, char *buf, size_t cap)
{
    struct source *s = user;
    size_t n = s->len - s->pos;
    if (n > cap)
        n = cap;
    if (n > s->chunk)
        n = s->chunk; /* small chunks: lines cross read boundaries */
    memcpy(buf, s->data + s->pos, n);
    s->pos += n;
    return (long)n;
}

static void export_import_roundtrip(void **state)
{
    (void)state;
    mn_db *a = open_db("export-a", NULL);
    for (int k = 0; k < 3; k++) {
        mn_session_opts o = MN_SESSION_OPTS_INIT;
        o.system_prompt = k == 1 ? "system \"quoted\" \xe2\x82\xac" : NULL;
        o.metadata = "{\"k\":[1,2,{\"x\":null}]}";
        mn_session *s = NULL;
        assert_int_equal(mn_session_create(a, &o, &s), MN_OK);
        for (int i = 0; i < 20; i++) {
            mn_message_in m = MN_MESSAGE_IN_INIT;
            m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
            m.content = i % 3 ? "line one\nline two \xf0\x9f\x98\x80" : "plain";
            m.metadata = i % 4 ? NULL : "{\"n\":1}";
            m.files = i % 5 ? NULL : "[\"src/a.c\",\"README.md\"]";
            m.idempotency_key = i % 6 ? NULL : "k";
            m.pinned = i == 7;
            mn_append(a, s->id, &m, 0, NULL);
        }
        mn_session_free(s);
    }
    char *first = export_all(a);
    mn_db *b = open_db("export-b", NULL);
    struct source src = {first, strlen(first), 0, 7};
    mn_import_stats st;
    assert_int_equal(mn_import(b, source_read, &src, &st), MN_OK);
    assert_int_equal(st.sessions_added, 3);
    assert_int_equal(st.messages_added, 3 * 17); /* the key "k" (i = 0, 6, 12, 18) stored once */
    char *second = export_all(b);
    assert_string_equal(first, second);
    /* idempotent */
    src.pos = 0;
    assert_int_equal(mn_import(b, source_read, &src, &st), MN_OK);
    assert_int_equal(st.sessions_added, 0);
    assert_int_equal(st.sessions_skipped, 3);
    assert_int_equal(st.messages_skipped, 51);
    char *third = export_all(b);
    assert_string_equal(first, third);

    /* a bad line in the middle: refused, naming the line; nothing written */
    mn_db *c = open_db("export-c", NULL);
    size_t len = strlen(first);
    char *broken = malloc(len + 64);
    const char *cut = strchr(strchr(strchr(first, '\n') + 1, '\n') + 1, '\n') + 1; /* after line 3 */
    size_t head = (size_t)(cut - first);
    memcpy(broken, first, head);
    memcpy(broken + head, "{\"type\":\"message\",\"oops\n", 24);
    memcpy(broken + head + 24, cut, len - head + 1);
    struct source bad = {broken, strlen(broken), 0, 4096};
    assert_int_equal(mn_import(c, source_read, &bad, &st), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "line 4"));
    char *empty = export_all(c);
    assert_string_equal(empty, "{\"format\":\"mnemo-export\",\"version\":1}\n");
    struct source none = {"", 0, 0, 10};
    assert_int_equal(mn_import(c, source_read, &none, &st), MN_INVALID);
    struct source wrong = {"{\"format\":\"mnemo-export\",\"version\":9}\n", 38, 0, 100};
    assert_int_equal(mn_import(c, source_read, &wrong, &st), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "line 1"));
    free(broken);
    free(empty);
    free(first);
    free(second);
    free(third);
    mn_close(a);
    mn_close(b);
    mn_close(c);
}

struct worker {
    mn_db *db;
    const char *sid;
    int n;
    int failures;
};

static void *append_many(void *arg)
{
    struct worker *w = arg;
    for (int i = 0; i < w->n; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.content = "from a thread";
        if (mn_append(w->db, w->sid, &m, 0, NULL) != MN_OK)
            w->failures++;
    }
    return NULL;
}

static void threads_share_a_handle_and_handles_share_a_file(void **state)
{
    (void)state;
    mn_db *db = open_db("threads", NULL);
    mn_db *other = open_db("threads", NULL); /* a second connection to the same file */
    char *sid = create(db);
    struct worker w[4] = {{db, sid, 50, 0}, {db, sid, 50, 0}, {other, sid, 50, 0}, {other, sid, 50, 0}};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, append_many, &w[i]);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].failures, 0);
    }
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, sid, NULL, &l), MN_OK);
    assert_int_equal(l->count, 200);
    for (size_t i = 0; i < l->count; i++)
        assert_int_equal(l->items[i].seq, (int64_t)i + 1);
    mn_messages_free(l);
    free(sid);
    mn_close(other);
    mn_close(db);
}

static void misuse_and_versions(void **state)
{
    (void)state;
    assert_string_equal(mn_version(), MN_VERSION_STRING);
    assert_int_equal(mn_version_number(), MN_VERSION_NUMBER);
    mn_session *s = (mn_session *)1;
    assert_int_equal(mn_session_get(NULL, "x", &s), MN_MISUSE);
    assert_null(s);
    assert_int_equal(mn_session_delete(NULL, "x"), MN_MISUSE);
    mn_close(NULL);
    mn_session_free(NULL);
    mn_sessions_free(NULL);
    mn_message_free(NULL);
    mn_messages_free(NULL);
    mn_context_free(NULL);
    mn_free(NULL);
    mn_config_free(NULL);
    assert_int_equal(mn_db_append_writers(NULL), 1);
    mn_db *db = open_db("writers", NULL); /* one writer at a time on SQLite, two groups on PostgreSQL */
    assert_int_equal(mn_db_append_writers(db), test_db_pg() ? 2 : 1);
    assert_int_equal(mn_db_reads_local(NULL), 0);
    assert_int_equal(mn_db_reads_local(db), test_db_pg() ? 0 : 1);
    mn_close(db);
    db = NULL;
    assert_int_equal(mn_open_path("/proc/definitely/not/here.db", NULL, &db), MN_IO);
    assert_non_null(strstr(mn_errmsg(), "/proc/definitely"));
    assert_null(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mnemo-api-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

/* Issue 13, item 10: a session of another namespace is MN_NOTFOUND, never MN_CONFLICT on a
 * create with its id nor MN_EXPIRED with its expiry time. */
static void other_namespace_looks_missing(void **state)
{
    (void)state;
    mn_db *db = open_db("ns-missing", NULL);
    const char *id = "0190f0f0-0000-7000-8000-00000000ab01";
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.id = id;
    o.ns = "alice";
    o.ttl_ms = 1000;
    assert_int_equal(mn_session_create(db, &o, NULL), MN_OK);
    o.ns = "bob";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_NOTFOUND);
    assert_null(strstr(mn_errmsg(), "alice"));
    o.ns = "alice";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_CONFLICT); /* its own namespace: taken */
    mn_session *s = NULL;
    assert_int_equal(mn_session_get_in(db, "alice", id, &s), MN_OK);
    mn_session_free(s);
    assert_int_equal(mn_session_get_in(db, "bob", id, &s), MN_NOTFOUND);
    char missing[200];
    snprintf(missing, sizeof missing, "%s", mn_errmsg());
    assert_int_equal(mn_session_get_in(db, "bob", "0190f0f0-0000-7000-8000-00000000ab02", &s), MN_NOTFOUND);
    assert_string_equal(strstr(missing, "not found"), strstr(mn_errmsg(), "not found"));
    /* expired: still not found for bob, with no time in the message */
    char later[32];
    snprintf(later, sizeof later, "%lld", (long long)time(NULL) * 1000 + 3600000);
    setenv("MNEMO_TEST_NOW_MS", later, 1);
    assert_int_equal(mn_session_get_in(db, "bob", id, &s), MN_NOTFOUND);
    assert_null(strstr(mn_errmsg(), "expired"));
    assert_int_equal(mn_session_get_in(db, "alice", id, &s), MN_EXPIRED);
    unsetenv("MNEMO_TEST_NOW_MS");
    mn_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sessions_and_messages),
        cmocka_unit_test(bad_inputs_change_nothing),
        cmocka_unit_test(export_import_roundtrip),
        cmocka_unit_test(threads_share_a_handle_and_handles_share_a_file),
        cmocka_unit_test(misuse_and_versions),
        cmocka_unit_test(other_namespace_looks_missing),
    };
    return cmocka_run_group_tests_name("api", tests, setup, teardown);
}
