/*
 * test_checkpoints.c — graph checkpoints through mnemo.h (docs/checkpoints.md): a thread named
 * by any string is a session made on its first checkpoint; the newest is the greatest id; list
 * filters by thread, subgraph, before, metadata and limit; pending writes keep a non-negative
 * idx's first write and replace a negative one's; namespaces keep threads apart; delete takes
 * the checkpoints and leaves the session; session delete, export and import carry them; bad
 * input is refused by name. Runs on SQLite (api/checkpoints) and PostgreSQL (pg/api/checkpoints).
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

static mn_db *open_db(const char *name)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static mn_status put(mn_db *db, const char *ns, const char *thread, const char *cns, const char *id,
                     const char *parent, const char *metadata)
{
    mn_checkpoint_in in = MN_CHECKPOINT_IN_INIT;
    in.ns = ns;
    in.thread = thread;
    in.checkpoint_ns = cns;
    in.id = id;
    in.parent_id = parent;
    in.type = "json";
    in.data = "eyJ2Ijo0fQ==";
    in.metadata = metadata;
    return mn_checkpoint_put(db, &in);
}

/* The ids of a list, joined by spaces. */
static void ids_of(mn_checkpoints *l, char *out, size_t cap)
{
    out[0] = '\0';
    for (size_t i = 0; i < l->count; i++) {
        const mn_checkpoint *cp = mn_checkpoints_at(l, i);
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s", i ? " " : "", cp->id);
    }
}

static void list_ids(mn_db *db, const mn_checkpoint_query *q, const char *want)
{
    mn_checkpoints *l = NULL;
    assert_int_equal(mn_checkpoint_list(db, q, &l), MN_OK);
    char got[512];
    ids_of(l, got, sizeof got);
    assert_string_equal(got, want);
    mn_checkpoints_free(l);
}

static void threads_by_any_name(void **state)
{
    (void)state;
    mn_db *db = open_db("names");
    assert_int_equal(put(db, NULL, "user-42-chat", NULL, "1", NULL, "{\"step\":-1,\"source\":\"input\"}"), MN_OK);
    assert_int_equal(put(db, NULL, "user-42-chat", NULL, "2", "1", "{\"step\":0,\"source\":\"loop\"}"), MN_OK);
    assert_int_equal(put(db, NULL, "user-42-chat", "sub:1", "3", NULL, "{\"step\":0}"), MN_OK);
    /* the thread is a session with that key */
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, "user-42-chat", &s), MN_OK);
    assert_string_equal(s->key, "user-42-chat");
    char sid[37];
    strcpy(sid, s->id);
    mn_session_free(s);

    mn_checkpoints *l = NULL;
    assert_int_equal(mn_checkpoint_get(db, NULL, "user-42-chat", NULL, NULL, &l), MN_OK);
    const mn_checkpoint *cp = mn_checkpoints_at(l, 0);
    assert_string_equal(cp->id, "2"); /* the newest of the root graph, not the subgraph's 3 */
    assert_string_equal(cp->parent_id, "1");
    assert_string_equal(cp->thread, "user-42-chat");
    assert_string_equal(cp->session_id, sid);
    assert_string_equal(cp->checkpoint_ns, "");
    assert_string_equal(cp->type, "json");
    assert_string_equal(cp->data, "eyJ2Ijo0fQ==");
    assert_string_equal(cp->metadata, "{\"step\":0,\"source\":\"loop\"}");
    mn_checkpoints_free(l);
    /* by id, and by the session's UUID in place of the key */
    assert_int_equal(mn_checkpoint_get(db, NULL, sid, NULL, "1", &l), MN_OK);
    assert_null(mn_checkpoints_at(l, 0)->parent_id);
    assert_null(mn_checkpoints_at(l, 1));
    mn_checkpoints_free(l);
    assert_int_equal(mn_checkpoint_get(db, NULL, "user-42-chat", NULL, "9", &l), MN_NOTFOUND);
    assert_null(l);
    assert_int_equal(mn_checkpoint_get(db, NULL, "nobody", NULL, NULL, &l), MN_NOTFOUND);

    /* a UUID naming nothing makes the session with that id */
    const char *uuid = "0193a6f0-0000-7000-8000-000000000001";
    assert_int_equal(put(db, NULL, uuid, NULL, "1", NULL, NULL), MN_OK);
    assert_int_equal(mn_session_get(db, uuid, &s), MN_OK);
    assert_null(s->key);
    mn_session_free(s);
    assert_int_equal(mn_checkpoint_get(db, NULL, uuid, NULL, NULL, &l), MN_OK);
    assert_string_equal(mn_checkpoints_at(l, 0)->thread, uuid);
    assert_string_equal(mn_checkpoints_at(l, 0)->metadata, "{}");
    mn_checkpoints_free(l);

    /* the same id again replaces the checkpoint */
    assert_int_equal(put(db, NULL, "user-42-chat", NULL, "2", "1", "{\"step\":5}"), MN_OK);
    assert_int_equal(mn_checkpoint_get(db, NULL, "user-42-chat", NULL, "2", &l), MN_OK);
    assert_string_equal(mn_checkpoints_at(l, 0)->metadata, "{\"step\":5}");
    mn_checkpoints_free(l);
    mn_close(db);
}

static void listing(void **state)
{
    (void)state;
    mn_db *db = open_db("list");
    const char *meta[] = {"{\"source\":\"input\",\"step\":-1}", "{\"source\":\"loop\",\"step\":0}",
                          "{\"source\":\"loop\",\"step\":1,\"tags\":[\"a\"]}", "{\"source\":\"loop\",\"step\":2}"};
    char id[8];
    for (int i = 0; i < 4; i++) {
        snprintf(id, sizeof id, "c%d", i);
        assert_int_equal(put(db, NULL, "t1", NULL, id, NULL, meta[i]), MN_OK);
    }
    assert_int_equal(put(db, NULL, "t2", NULL, "c5", NULL, meta[1]), MN_OK);
    assert_int_equal(put(db, "other", "t3", NULL, "c9", NULL, meta[1]), MN_OK);

    mn_checkpoint_query q = MN_CHECKPOINT_QUERY_INIT;
    list_ids(db, &q, "c5 c3 c2 c1 c0"); /* every thread of the default namespace, newest first */
    q.thread = "t1";
    list_ids(db, &q, "c3 c2 c1 c0");
    q.limit = 2;
    list_ids(db, &q, "c3 c2");
    q.limit = 0;
    q.before = "c2";
    list_ids(db, &q, "c1 c0");
    q.before = NULL;
    q.filter = "{\"source\":\"loop\"}";
    list_ids(db, &q, "c3 c2 c1");
    q.filter = "{\"source\":\"loop\",\"step\":1,\"tags\":[\"a\"]}"; /* values compare as JSON */
    list_ids(db, &q, "c2");
    q.filter = "{\"step\":\"1\"}";
    list_ids(db, &q, "");
    q.filter = "{\"source\":\"loop\"}";
    q.limit = 1;
    list_ids(db, &q, "c3"); /* the limit counts matches */
    q = (mn_checkpoint_query)MN_CHECKPOINT_QUERY_INIT;
    q.thread = "no-such-thread";
    list_ids(db, &q, ""); /* a thread with nothing saved: empty, not an error */
    q.thread = NULL;
    q.ns = "other";
    list_ids(db, &q, "c9");
    q.ns = NULL;
    q.checkpoint_ns = "sub";
    list_ids(db, &q, "");
    /* namespaces keep threads apart: t3 is another namespace's */
    mn_checkpoints *l = NULL;
    assert_int_equal(mn_checkpoint_get(db, NULL, "t3", NULL, NULL, &l), MN_NOTFOUND);
    /* and so is its UUID: missing to the default namespace, which cannot make it either */
    mn_session *s = NULL;
    assert_int_equal(mn_session_get_in(db, "other", "t3", &s), MN_OK);
    char other[37];
    strcpy(other, s->id);
    mn_session_free(s);
    assert_int_equal(mn_checkpoint_get(db, NULL, other, NULL, NULL, &l), MN_NOTFOUND);
    assert_int_equal(put(db, NULL, other, NULL, "c10", NULL, NULL), MN_NOTFOUND);
    mn_checkpoint_write w = {"t", "", 0, "c", "json", "v"};
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, other, NULL, "c9", &w, 1), MN_NOTFOUND);
    assert_int_equal(mn_checkpoint_get(db, "other", other, NULL, NULL, &l), MN_OK); /* untouched */
    assert_string_equal(mn_checkpoints_at(l, 0)->id, "c9");
    mn_checkpoints_free(l);
    mn_close(db);
}

static mn_checkpoint_write wr(const char *task, int64_t idx, const char *channel, const char *value)
{
    mn_checkpoint_write w = {task, "", idx, channel, "json", value};
    return w;
}

static void pending_writes(void **state)
{
    (void)state;
    mn_db *db = open_db("writes");
    assert_int_equal(put(db, NULL, "t", NULL, "c1", NULL, NULL), MN_OK);
    mn_checkpoint_write first[] = {wr("task-b", 0, "messages", "b0"), wr("task-a", 1, "x", "a1"),
                                   wr("task-a", 0, "x", "a0"), wr("task-a", -1, "__error__", "e1")};
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "t", NULL, "c1", first, 4), MN_OK);
    mn_checkpoint_write again[] = {wr("task-a", 0, "x", "a0-again"), wr("task-a", -1, "__error__", "e2")};
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "t", NULL, "c1", again, 2), MN_OK);
    mn_checkpoints *l = NULL;
    assert_int_equal(mn_checkpoint_get(db, NULL, "t", NULL, "c1", &l), MN_OK);
    const mn_checkpoint *cp = mn_checkpoints_at(l, 0);
    assert_int_equal(cp->n_writes, 4);
    /* by task id, then idx; idx >= 0 kept its first write, idx < 0 took the last */
    const char *want[][3] = {{"task-a", "__error__", "e2"}, {"task-a", "x", "a0"}, {"task-a", "x", "a1"},
                             {"task-b", "messages", "b0"}};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(cp->writes[i].task_id, want[i][0]);
        assert_string_equal(cp->writes[i].channel, want[i][1]);
        assert_string_equal(cp->writes[i].value, want[i][2]);
    }
    mn_checkpoints_free(l);
    /* writes may come first, even a thread's first: they show once their checkpoint is saved */
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "later", NULL, "c9", first, 1), MN_OK);
    assert_int_equal(mn_checkpoint_get(db, NULL, "later", NULL, "c9", &l), MN_NOTFOUND);
    assert_int_equal(put(db, NULL, "later", NULL, "c9", NULL, NULL), MN_OK);
    assert_int_equal(mn_checkpoint_get(db, NULL, "later", NULL, "c9", &l), MN_OK);
    assert_int_equal(mn_checkpoints_at(l, 0)->n_writes, 1);
    assert_string_equal(mn_checkpoints_at(l, 0)->writes[0].value, "b0");
    mn_checkpoints_free(l);
    mn_close(db);
}

static void deleting(void **state)
{
    (void)state;
    mn_db *db = open_db("delete");
    assert_int_equal(put(db, NULL, "t", NULL, "c1", NULL, NULL), MN_OK);
    assert_int_equal(put(db, NULL, "t", NULL, "c2", "c1", NULL), MN_OK);
    mn_checkpoint_write w = wr("task", 0, "x", "v");
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "t", NULL, "c2", &w, 1), MN_OK);
    int64_t removed = -1;
    assert_int_equal(mn_checkpoint_delete_thread(db, NULL, "t", &removed), MN_OK);
    assert_int_equal(removed, 2);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, "t", &s), MN_OK); /* the session stays */
    mn_session_free(s);
    mn_checkpoints *l = NULL;
    assert_int_equal(mn_checkpoint_get(db, NULL, "t", NULL, NULL, &l), MN_NOTFOUND);
    assert_int_equal(mn_checkpoint_delete_thread(db, NULL, "never-made", &removed), MN_OK);
    assert_int_equal(removed, 0);
    /* a session delete takes its checkpoints and writes */
    assert_int_equal(put(db, NULL, "t", NULL, "c3", NULL, NULL), MN_OK);
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "t", NULL, "c3", &w, 1), MN_OK);
    assert_int_equal(mn_session_delete(db, "t"), MN_OK);
    mn_checkpoint_query q = MN_CHECKPOINT_QUERY_INIT;
    list_ids(db, &q, "");
    mn_close(db);
}

struct sink {
    char *buf;
    size_t len;
    size_t pos;
};

static int sink_write(void *user, const char *bytes, size_t len)
{
    struct sink *k = user;
    char *p = realloc(k->buf, k->len + len + 1);
    if (!p)
        return 1;
    memcpy(p + k->len, bytes, len);
    k->len += len;
    p[k->len] = '\0';
    k->buf = p;
    return 0;
}

static long sink_read(void *user, char *buf, size_t cap)
{
    struct sink *k = user;
    size_t n = k->len - k->pos < cap ? k->len - k->pos : cap;
    memcpy(buf, k->buf + k->pos, n);
    k->pos += n;
    return (long)n;
}

static void export_import(void **state)
{
    (void)state;
    mn_db *db = open_db("export");
    assert_int_equal(put(db, NULL, "user-7", NULL, "c1", NULL, "{\"step\":-1}"), MN_OK);
    assert_int_equal(put(db, NULL, "user-7", "sub", "c2", "c1", "{\"step\":0}"), MN_OK);
    mn_checkpoint_write w = wr("task", -1, "__interrupt__", "stop");
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "user-7", "sub", "c2", &w, 1), MN_OK);
    struct sink k = {0};
    const char *ids[] = {"user-7"};
    assert_int_equal(mn_export(db, ids, 1, sink_write, &k), MN_OK);
    assert_non_null(strstr(k.buf, "{\"type\":\"checkpoint\""));
    mn_close(db);

    mn_db *fresh = open_db("import");
    mn_import_stats st;
    assert_int_equal(mn_import(fresh, sink_read, &k, &st), MN_OK);
    k.pos = 0;
    assert_int_equal(mn_import(fresh, sink_read, &k, &st), MN_OK); /* again: nothing doubles */
    mn_checkpoint_query q = MN_CHECKPOINT_QUERY_INIT;
    q.thread = "user-7";
    mn_checkpoints *l = NULL;
    assert_int_equal(mn_checkpoint_list(fresh, &q, &l), MN_OK);
    assert_int_equal(l->count, 2);
    const mn_checkpoint *cp = mn_checkpoints_at(l, 0);
    assert_string_equal(cp->id, "c2");
    assert_string_equal(cp->checkpoint_ns, "sub");
    assert_string_equal(cp->parent_id, "c1");
    assert_string_equal(cp->metadata, "{\"step\":0}");
    assert_int_equal(cp->n_writes, 1);
    assert_string_equal(cp->writes[0].channel, "__interrupt__");
    assert_int_equal(cp->writes[0].idx, -1);
    mn_checkpoints_free(l);
    free(k.buf);
    mn_close(fresh);
}

static void refusals(void **state)
{
    (void)state;
    mn_db *db = open_db("refusals");
    assert_int_equal(put(db, NULL, "t", NULL, "c1", NULL, "[1]"), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "metadata"));
    assert_int_equal(put(db, NULL, "t", NULL, "", NULL, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "checkpoint_id"));
    assert_int_equal(put(db, NULL, "", NULL, "c1", NULL, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "thread_id"));
    assert_int_equal(put(db, NULL, "a\tb", NULL, "c1", NULL, NULL), MN_INVALID);
    assert_int_equal(put(db, "bad ns!", "t", NULL, "c1", NULL, NULL), MN_INVALID);
    char long_id[300];
    memset(long_id, 'x', sizeof long_id - 1);
    long_id[sizeof long_id - 1] = '\0';
    assert_int_equal(put(db, NULL, "t", NULL, long_id, NULL, NULL), MN_INVALID);
    assert_int_equal(put(db, NULL, "t", NULL, "c1", NULL, NULL), MN_OK);
    mn_checkpoint_write w = wr("", 0, "x", "v");
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "t", NULL, "c1", &w, 1), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "writes[0].task_id"));
    assert_int_equal(mn_checkpoint_put_writes(db, NULL, "t", NULL, "c1", &w, 0), MN_INVALID);
    mn_checkpoint_query q = MN_CHECKPOINT_QUERY_INIT;
    q.filter = "[\"step\"]";
    mn_checkpoints *l = NULL;
    assert_int_equal(mn_checkpoint_list(db, &q, &l), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "filter"));
    assert_null(l);
    mn_checkpoint_in bad = {0}; /* not made with its _INIT macro */
    assert_int_equal(mn_checkpoint_put(db, &bad), MN_MISUSE);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "checkpoints");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(threads_by_any_name), cmocka_unit_test(listing), cmocka_unit_test(pending_writes),
        cmocka_unit_test(deleting),            cmocka_unit_test(export_import), cmocka_unit_test(refusals),
    };
    mn_checkpoints_free(NULL);
    return cmocka_run_group_tests(tests, setup, teardown);
}
