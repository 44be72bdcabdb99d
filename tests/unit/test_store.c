/*
 * test_store.c — the store conformance suite: every operation of store.h, run against each
 * backend: SQLite on a real file (unit/test_store) and PostgreSQL (pg/unit/test_store, see
 * tests/test_db.h). A backend passes when it keeps these promises: sequence numbers, idempotency,
 * atomic batches, cascade deletes, ordering, import rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/append.h"
#include "store/store.h"
#include "test_db.h"

static char dir[256];
static char path[512];
static mn_store *the_store; /* cmocka hands tests a copy of the group state: keep it here */

static int setup(void **state)
{
    if (test_tmpdir(dir, sizeof dir, "store") != 0)
        return -1;
    char file[400];
    snprintf(file, sizeof file, "%s/sub/dir/store.db", dir); /* parent directories are created */
    snprintf(path, sizeof path, "%s", test_db_target(file));
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 1};
    mn_store *st = NULL;
    if (mn__store_open(path, &o, &st) != MN_OK) {
        fprintf(stderr, "open: %s\n", mn_errmsg());
        return -1;
    }
    the_store = st;
    (void)state;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    the_store->ops->close(the_store);
    return test_rmdir(dir);
}

static mn_session session(const char *id, const char *ns, int64_t updated)
{
    mn_session s;
    memset(&s, 0, sizeof s);
    s.id = id;
    s.ns = ns;
    s.metadata = "{}";
    s.created_at = s.updated_at = updated;
    return s;
}

static mn_message msg(mn_role role, const char *content, const char *key)
{
    mn_message m;
    memset(&m, 0, sizeof m);
    m.role = role;
    m.content = content;
    m.idempotency_key = key;
    m.tokens = 5;
    m.created_at = 1000;
    m.active = 1;
    return m;
}

#define SID1 "0190f0f0-0000-7000-8000-000000000001"
#define SID2 "0190f0f0-0000-7000-8000-000000000002"
#define SID3 "0190f0f0-0000-7000-8000-000000000003"

static void sessions_and_appends(void **state)
{
    (void)state;
    mn_store *st = the_store;
    mn_session s1 = session(SID1, "a", 100), s2 = session(SID2, "b", 200);
    assert_int_equal(st->ops->session_insert(st, &s1), MN_OK);
    assert_int_equal(st->ops->session_insert(st, &s2), MN_OK);
    assert_int_equal(st->ops->session_insert(st, &s1), MN_CONFLICT);

    mn_message batch[3] = {msg(MN_ROLE_USER, "one", NULL), msg(MN_ROLE_ASSISTANT, "two", "k2"),
                           msg(MN_ROLE_USER, "three", NULL)};
    mn_store_append req = {batch, 3, NULL, "title one", 0, 500, 0, 0, NULL};
    mn_messages *out = NULL;
    assert_int_equal(mn__engine_append(st, SID1, &req, &out), MN_OK);
    assert_int_equal(out->count, 3);
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(out->items[i].seq, (int64_t)i + 1);
    assert_true(out->items[0].id < out->items[1].id);
    int64_t id_two = out->items[1].id;
    mn_messages_free(out);

    /* an idempotent retry returns the stored row and stores nothing */
    mn_message again = msg(MN_ROLE_ASSISTANT, "two", "k2");
    mn_store_append retry = {&again, 1, NULL, NULL, 0, 600, 0, 0, NULL};
    assert_int_equal(mn__engine_append(st, SID1, &retry, &out), MN_OK);
    assert_int_equal(out->count, 1);
    assert_int_equal(out->items[0].id, id_two);
    assert_string_equal(out->items[0].content, "two");
    mn_messages_free(out);
    /* the same key for another message is refused */
    mn_message other = msg(MN_ROLE_ASSISTANT, "two, changed", "k2");
    mn_store_append clash = {&other, 1, NULL, NULL, 0, 650, 0, 0, NULL};
    out = NULL;
    assert_int_equal(mn__engine_append(st, SID1, &clash, &out), MN_CONFLICT);
    assert_non_null(strstr(mn_errmsg(), "k2"));
    assert_null(out);

    mn_session *got = NULL;
    assert_int_equal(st->ops->session_get(st, SID1, &got), MN_OK);
    assert_int_equal(got->message_count, 3);
    assert_int_equal(got->token_count, 15);
    assert_int_equal(got->updated_at, 500); /* the retry changed nothing */
    assert_string_equal(got->title, "title one");
    assert_string_equal(got->metadata, "{}");
    mn_session_free(got);

    /* a later title never replaces the first */
    mn_message four = msg(MN_ROLE_USER, "four", NULL);
    mn_store_append later = {&four, 1, NULL, "another title", 0, 700, 0, 0, NULL};
    assert_int_equal(mn__engine_append(st, SID1, &later, NULL), MN_OK);
    assert_int_equal(st->ops->session_get(st, SID1, &got), MN_OK);
    assert_string_equal(got->title, "title one");
    assert_int_equal(got->message_count, 4);
    mn_session_free(got);

    /* unknown session: not found, unless asked to create it */
    mn_message five = msg(MN_ROLE_USER, "five", NULL);
    mn_store_append missing = {&five, 1, NULL, NULL, 0, 800, 0, 0, NULL};
    assert_int_equal(mn__engine_append(st, SID3, &missing, NULL), MN_NOTFOUND);
    mn_session s3 = session(SID3, "default", 800);
    missing.create = &s3;
    assert_int_equal(mn__engine_append(st, SID3, &missing, &out), MN_OK);
    assert_int_equal(out->items[0].seq, 1);
    mn_messages_free(out);

    /* list: most recently updated first, filtered by namespace, paged */
    mn_sessions *l = NULL;
    assert_int_equal(st->ops->session_list(st, NULL, 10, 0, &l), MN_OK);
    assert_int_equal(l->count, 3);
    assert_string_equal(l->items[0].id, SID3);
    assert_string_equal(l->items[1].id, SID1);
    assert_string_equal(l->items[2].id, SID2);
    mn_sessions_free(l);
    assert_int_equal(st->ops->session_list(st, "b", 10, 0, &l), MN_OK);
    assert_int_equal(l->count, 1);
    mn_sessions_free(l);
    assert_int_equal(st->ops->session_list(st, NULL, 1, 1, &l), MN_OK);
    assert_int_equal(l->count, 1);
    assert_string_equal(l->items[0].id, SID1);
    mn_sessions_free(l);
}

static void history_and_scan(void **state)
{
    (void)state;
    mn_store *st = the_store;
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    mn_messages *l = NULL;
    assert_int_equal(st->ops->history(st, SID1, &o, NULL, &l), MN_OK);
    assert_int_equal(l->count, 4);
    assert_string_equal(l->items[3].content, "four");
    mn_messages_free(l);
    o.limit = 2;
    o.tail = 1;
    assert_int_equal(st->ops->history(st, SID1, &o, NULL, &l), MN_OK);
    assert_int_equal(l->count, 2);
    assert_int_equal(l->items[0].seq, 3); /* newest two, oldest first */
    assert_int_equal(l->items[1].seq, 4);
    mn_messages_free(l);
    o.tail = 0;
    o.after_seq = 1;
    assert_int_equal(st->ops->history(st, SID1, &o, NULL, &l), MN_OK);
    assert_int_equal(l->items[0].seq, 2);
    mn_messages_free(l);
    assert_int_equal(st->ops->history(st, "0190f0f0-0000-7000-8000-00000000dead", &o, NULL, &l), MN_NOTFOUND);

    /* the session's expiry comes with its messages (mn_history checks it without a read of its
     * own), for a session with messages, and for one with none */
    int64_t expires_at = -1;
    o = (mn_history_opts)MN_HISTORY_OPTS_INIT;
    assert_int_equal(st->ops->history(st, SID1, &o, &expires_at, &l), MN_OK);
    assert_int_equal(expires_at, 0);
    assert_int_equal(l->count, 4);
    mn_messages_free(l);
    mn_session ttl = session("0190f0f0-0000-7000-8000-0000000000e1", "a", 300);
    ttl.ttl_ms = 60000;
    ttl.expires_at = 4102444800000LL;
    assert_int_equal(st->ops->session_insert(st, &ttl), MN_OK);
    assert_int_equal(st->ops->history(st, ttl.id, &o, &expires_at, &l), MN_OK);
    assert_int_equal(expires_at, 4102444800000LL);
    assert_int_equal(l->count, 0);
    mn_messages_free(l);
    assert_int_equal(st->ops->session_delete(st, ttl.id), MN_OK);
}

static void delete_cascades_and_prune(void **state)
{
    (void)state;
    mn_store *st = the_store;
    assert_int_equal(st->ops->session_delete(st, SID1), MN_OK);
    assert_int_equal(st->ops->session_delete(st, SID1), MN_NOTFOUND);
    mn_store_stats s;
    assert_int_equal(st->ops->stats(st, 0, &s), MN_OK);
    assert_int_equal(s.sessions, 2);
    assert_int_equal(s.messages, 1);
    int64_t n = 0;
    mn_strings *ids = NULL;
    assert_int_equal(st->ops->session_prune(st, 300, &n, &ids), MN_OK); /* SID2 was updated at 200 */
    assert_int_equal(n, 1);
    assert_int_equal(ids->count, 1);
    assert_string_equal(ids->items[0], SID2);
    mn_strings_free(ids);
    assert_int_equal(st->ops->stats(st, 0, &s), MN_OK);
    assert_int_equal(s.sessions, 1);
}

static void import_is_idempotent(void **state)
{
    (void)state;
    mn_store *st = the_store;
    mn_session s = session("0190f0f0-0000-7000-8000-0000000000aa", "default", 50);
    mn_message m = msg(MN_ROLE_USER, "imported", NULL);
    m.session_id = s.id;
    m.id = 4242;
    m.seq = 1;
    int added = -1;
    assert_int_equal(st->ops->begin(st), MN_OK);
    assert_int_equal(st->ops->import_session(st, &s, &added), MN_OK);
    assert_int_equal(added, 1);
    assert_int_equal(st->ops->import_message(st, &m, &added), MN_OK);
    assert_int_equal(added, 1);
    assert_int_equal(st->ops->import_session(st, &s, &added), MN_OK);
    assert_int_equal(added, 0);
    assert_int_equal(st->ops->import_message(st, &m, &added), MN_OK);
    assert_int_equal(added, 0);
    assert_int_equal(st->ops->commit(st), MN_OK);
    mn_messages *l = NULL;
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    assert_int_equal(st->ops->history(st, s.id, &o, NULL, &l), MN_OK);
    assert_int_equal(l->count, 1);
    assert_int_equal(l->items[0].id, 4242); /* the exported id is kept when free */
    mn_messages_free(l);

    /* a rolled back import leaves nothing */
    mn_session t = session("0190f0f0-0000-7000-8000-0000000000bb", "default", 50);
    assert_int_equal(st->ops->begin(st), MN_OK);
    assert_int_equal(st->ops->import_session(st, &t, &added), MN_OK);
    st->ops->rollback(st);
    mn_session *got = NULL;
    assert_int_equal(st->ops->session_get(st, t.id, &got), MN_NOTFOUND);
}

static void meta_roundtrip(void **state)
{
    (void)state;
    mn_store *st = the_store;
    char *v = NULL;
    assert_int_equal(st->ops->meta_get(st, "nothing", &v), MN_OK);
    assert_null(v);
    assert_int_equal(st->ops->meta_set(st, "tokenizer", "x"), MN_OK);
    assert_int_equal(st->ops->meta_set(st, "tokenizer", "y"), MN_OK);
    assert_int_equal(st->ops->meta_get(st, "tokenizer", &v), MN_OK);
    assert_string_equal(v, "y");
    free(v);
}

static void reopen_keeps_everything(void **state)
{
    (void)state;
    mn_store *st = the_store;
    st->ops->close(st);
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 0};
    assert_int_equal(mn__store_open(path, &o, &st), MN_OK);
    the_store = st;
    mn_store_stats s;
    assert_int_equal(st->ops->stats(st, 0, &s), MN_OK);
    assert_int_equal(s.sessions, 2);
    assert_int_equal(s.schema_version, test_db_pg() ? MN_SCHEMA_VERSION_PG : MN_SCHEMA_VERSION_SQLITE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sessions_and_appends),     cmocka_unit_test(history_and_scan),
        cmocka_unit_test(delete_cascades_and_prune), cmocka_unit_test(import_is_idempotent),
        cmocka_unit_test(meta_roundtrip),           cmocka_unit_test(reopen_keeps_everything),
    };
    return cmocka_run_group_tests_name(test_db_pg() ? "store/postgres" : "store/sqlite", tests, setup, teardown);
}
