/*
 * test_session_keys.c — a session named by the caller's own string (mn_session_opts.key): the
 * ids frameworks pass ("user-42-chat") name a mnemo session wherever its UUID does, unique in a
 * namespace, made on first use by an append that may create, and carried by export and import.
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

static char dir[160];
static int seq_db;

static mn_db *open_db(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/keys%d.db", dir, seq_db++);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static mn_status add(mn_db *db, const char *ref, const char *ns, unsigned flags, const char *text)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = text;
    mn_append_request r = MN_APPEND_REQUEST_INIT;
    r.session_id = ref;
    r.msgs = &m;
    r.n = 1;
    r.flags = flags;
    r.ns = ns;
    mn_append_result res;
    memset(&res, 0, sizeof res);
    mn_status rc = mn_append_many(db, &r, 1, 0, &res);
    return rc ? rc : res.status;
}

/* Made with a key, named by it everywhere a session id goes; the id stays a UUID. */
static void a_key_names_the_session(void **state)
{
    (void)state;
    mn_db *db = open_db();
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.key = "user-42-chat";
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    assert_string_equal(s->key, "user-42-chat");
    assert_int_equal(strlen(s->id), 36);
    char id[40];
    snprintf(id, sizeof id, "%s", s->id);
    mn_session_free(s);

    assert_int_equal(mn_append(db, "user-42-chat", &(mn_message_in){.size = sizeof(mn_message_in), .role = MN_ROLE_USER,
                                                                    .content = "hello by key"},
                               0, NULL),
                     MN_OK);
    mn_messages *h = NULL;
    assert_int_equal(mn_history(db, id, NULL, &h), MN_OK); /* the UUID sees what the key wrote */
    assert_int_equal(h->count, 1);
    assert_string_equal(mn_messages_at(h, 0)->content, "hello by key");
    mn_messages_free(h);
    assert_int_equal(mn_session_get(db, "user-42-chat", &s), MN_OK);
    assert_string_equal(s->id, id);
    assert_int_equal(s->message_count, 1);
    mn_session_free(s);
    assert_int_equal(mn_session_get_in(db, NULL, "user-42-chat", &s), MN_OK);
    assert_string_equal(s->id, id);
    mn_session_free(s);

    /* unique in its namespace; the same key in another namespace is another session */
    assert_int_equal(mn_session_create(db, &o, NULL), MN_CONFLICT);
    assert_non_null(strstr(mn_errmsg(), "user-42-chat"));
    o.ns = "beta";
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    assert_string_not_equal(s->id, id);
    mn_session_free(s);
    assert_int_equal(mn_session_get_in(db, "beta", "user-42-chat", &s), MN_OK);
    assert_string_equal(s->ns, "beta");
    mn_session_free(s);
    /* a namespace-bound caller sees its own namespace's session by the key */
    assert_int_equal(mn_session_get_in(db, "beta", "user-42-chat", &s), MN_OK);
    assert_string_equal(s->ns, "beta");
    mn_session_free(s);

    /* front ends resolve a reference in their caller's namespace first */
    char ref[37];
    assert_int_equal(mn_session_resolve(db, NULL, "user-42-chat", ref), MN_OK);
    assert_string_equal(ref, id);
    assert_int_equal(mn_session_resolve(db, "gamma", "user-42-chat", ref), MN_NOTFOUND);
    assert_int_equal(mn_session_resolve(db, NULL, "0190A1B2-0000-7000-8000-00000000000F", ref), MN_OK);
    assert_string_equal(ref, "0190a1b2-0000-7000-8000-00000000000f"); /* made canonical, not looked up */
    assert_int_equal(mn_session_resolve(db, "bad ns", "user-42-chat", ref), MN_INVALID);

    /* a key that names nothing is missing; bad keys are refused by name */
    assert_int_equal(mn_session_get(db, "no-such-chat", &s), MN_NOTFOUND);
    assert_int_equal(mn_session_delete(db, "no-such-chat"), MN_NOTFOUND);
    o.ns = NULL;
    o.key = "";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID);
    o.key = "0190a1b2-0000-7000-8000-000000000001";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "is a UUID"));
    o.key = "tab\there";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_INVALID);
    char longkey[300];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    o.key = longkey;
    assert_int_equal(mn_session_create(db, &o, NULL), MN_TOOBIG);
    longkey[256] = 0; /* 256 bytes: the limit itself */
    assert_int_equal(mn_session_create(db, &o, NULL), MN_OK);

    /* deleting by the key frees it for a new session */
    assert_int_equal(mn_session_delete(db, "user-42-chat"), MN_OK);
    assert_int_equal(mn_session_get(db, id, &s), MN_NOTFOUND);
    o.key = "user-42-chat";
    assert_int_equal(mn_session_create(db, &o, NULL), MN_OK);
    mn_close(db);
}

/* An append that may create makes the keyed session on first use, in the request's namespace;
 * without create a missing key is MN_NOTFOUND. */
static void an_append_creates_on_first_use(void **state)
{
    (void)state;
    mn_db *db = open_db();
    assert_int_equal(add(db, "session-1", NULL, 0, "no create"), MN_NOTFOUND);
    assert_int_equal(add(db, "session-1", NULL, MN_APPEND_CREATE, "first"), MN_OK);
    assert_int_equal(add(db, "session-1", NULL, MN_APPEND_CREATE, "second"), MN_OK);
    assert_int_equal(add(db, "session-1", "beta", MN_APPEND_CREATE, "beta's"), MN_OK);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get_in(db, NULL, "session-1", &s), MN_OK);
    assert_int_equal(s->message_count, 2);
    assert_string_equal(s->key, "session-1");
    assert_string_equal(s->title, "first");
    mn_session_free(s);
    assert_int_equal(mn_session_get_in(db, "beta", "session-1", &s), MN_OK);
    assert_int_equal(s->message_count, 1);
    mn_session_free(s);
    mn_sessions *l = NULL;
    assert_int_equal(mn_session_list(db, NULL, 0, 0, &l), MN_OK);
    assert_int_equal(l->count, 2);
    mn_sessions_free(l);
    mn_close(db);
}

/* Writers racing to make the same keyed sessions: each append succeeds, whoever made the session
 * (the loser of the insert appends to the winner's), and each key names one session. */
#define RACERS 4
#define RACE_KEYS 100

struct racer {
    mn_db *db;
    int bad;
};

static void *race(void *arg)
{
    struct racer *r = arg;
    for (int k = 0; k < RACE_KEYS; k++) {
        char key[32];
        snprintf(key, sizeof key, "race-%d", k);
        if (add(r->db, key, NULL, MN_APPEND_CREATE, "hello") != MN_OK)
            r->bad++;
        mn_message_in m = MN_MESSAGE_IN_INIT; /* the single-request entry too */
        m.role = MN_ROLE_USER;
        m.content = "again";
        snprintf(key, sizeof key, "solo-%d", k);
        if (mn_append(r->db, key, &m, MN_APPEND_CREATE, NULL) != MN_OK)
            r->bad++;
    }
    return NULL;
}

static void racing_creates_all_land(void **state)
{
    (void)state;
    mn_db *db = open_db();
    pthread_t t[RACERS];
    struct racer r[RACERS];
    for (int i = 0; i < RACERS; i++) {
        r[i] = (struct racer){db, 0};
        assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < RACERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(r[i].bad, 0);
    }
    mn_sessions *l = NULL;
    assert_int_equal(mn_session_list(db, NULL, 1000, 0, &l), MN_OK);
    assert_int_equal(l->count, 2 * RACE_KEYS);
    for (size_t i = 0; i < l->count; i++)
        assert_int_equal(mn_sessions_at(l, i)->message_count, RACERS);
    mn_sessions_free(l);
    mn_close(db);
}

struct mem {
    char *data;
    size_t len, at;
};

static int mem_write(void *user, const char *bytes, size_t len)
{
    struct mem *m = user;
    m->data = realloc(m->data, m->len + len + 1);
    memcpy(m->data + m->len, bytes, len);
    m->len += len;
    m->data[m->len] = 0;
    return 0;
}

static long mem_read(void *user, char *buf, size_t cap)
{
    struct mem *m = user;
    size_t n = m->len - m->at < cap ? m->len - m->at : cap;
    memcpy(buf, m->data + m->at, n);
    m->at += n;
    return (long)n;
}

/* Export writes the key; import brings it back, so the key names the session in the copy. */
static void export_and_import_keep_the_key(void **state)
{
    (void)state;
    mn_db *db = open_db();
    assert_int_equal(add(db, "chat-7", "tenant-a", MN_APPEND_CREATE, "remember me"), MN_OK);
    struct mem m = {NULL, 0, 0};
    assert_int_equal(mn_export(db, NULL, 0, mem_write, &m), MN_OK);
    assert_non_null(strstr(m.data, "\"key\":\"chat-7\""));
    mn_close(db);
    mn_db *copy = open_db();
    assert_int_equal(mn_import(copy, mem_read, &m, NULL), MN_OK);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get_in(copy, "tenant-a", "chat-7", &s), MN_OK);
    assert_int_equal(s->message_count, 1);
    mn_session_free(s);
    /* a key in the file is checked as one given to mn_session_create */
    const char *bad = "{\"format\":\"mnemo-export\",\"version\":1}\n"
                      "{\"type\":\"session\",\"id\":\"0190a1b2-0000-7000-8000-0000000000aa\",\"key\":\"\","
                      "\"created_at\":1,\"updated_at\":1,\"expires_at\":0}\n";
    struct mem b = {(char *)bad, strlen(bad), 0};
    assert_int_equal(mn_import(copy, mem_read, &b, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "key"));
    free(m.data);
    mn_close(copy);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "mnemo-session-keys");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_key_names_the_session),
        cmocka_unit_test(an_append_creates_on_first_use),
        cmocka_unit_test(export_and_import_keep_the_key),
        cmocka_unit_test(racing_creates_all_land),
    };
    return cmocka_run_group_tests_name("session_keys", tests, setup, teardown);
}
