/*
 * test_service.c — the functions a service needs, through mnemo.h: mn_append_many (group commit:
 * one transaction, per-request results, a bad request leaves the others, order within a session,
 * idempotency, creation), mn_message_delete (counters follow) and mn_session_update.
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
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static char *new_session(mn_db *db, char id[64])
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    snprintf(id, 64, "%s", s->id);
    mn_session_free(s);
    return id;
}

/* Appends r (one message, MN_APPEND_CREATE) to session id with namespace ns and struct size:
 * the request's status is want_st, and then the session is in namespace want_ns (NULL: there
 * is no session id). */
static void assert_append_ns(mn_db *db, mn_append_request *r, const char *id, const char *ns, size_t size,
                             mn_status want_st, const char *want_ns)
{
    mn_append_result res;
    mn_session *s = NULL;
    r->session_id = id;
    r->ns = ns;
    r->size = size;
    assert_int_equal(mn_append_many(db, r, 1, 0, &res), MN_OK);
    assert_int_equal(res.status, want_st);
    assert_int_equal(mn_session_get(db, id, &s), want_ns ? MN_OK : MN_NOTFOUND);
    if (want_ns)
        assert_string_equal(s->ns, want_ns);
    mn_session_free(s);
}

static void many_commits_each_request(void **state)
{
    (void)state;
    mn_db *db = open_db("many");
    char a[64], b[64];
    new_session(db, a);
    new_session(db, b);
    mn_message_in m[6];
    for (int i = 0; i < 6; i++) {
        m[i] = (mn_message_in)MN_MESSAGE_IN_INIT;
        m[i].content = "hello";
    }
    m[2].role = MN_ROLE_TOOL; /* no tool_call_id: invalid */
    m[4].idempotency_key = "k1";
    m[5].idempotency_key = "k1";
    mn_append_request r[6];
    for (int i = 0; i < 6; i++) {
        r[i] = (mn_append_request)MN_APPEND_REQUEST_INIT;
        r[i].session_id = i % 2 ? b : a;
        r[i].msgs = &m[i];
        r[i].n = 1;
    }
    r[3].session_id = "0190a0b0-0000-7000-8000-000000000001"; /* missing session */
    r[5].session_id = a;                                      /* the same key again: a retry */
    mn_append_result res[6];
    assert_int_equal(mn_append_many(db, r, 6, 1, res), MN_OK);
    assert_int_equal(res[0].status, MN_OK);
    assert_int_equal(res[1].status, MN_OK);
    assert_int_equal(res[2].status, MN_INVALID);
    assert_non_null(strstr(res[2].errmsg, "tool_call_id"));
    assert_null(res[2].stored);
    assert_int_equal(res[3].status, MN_NOTFOUND);
    assert_int_equal(res[4].status, MN_OK);
    assert_int_equal(res[5].status, MN_OK);
    assert_int_equal(res[0].stored->items[0].seq, 1);
    assert_int_equal(res[4].stored->items[0].seq, 2);
    assert_int_equal(res[5].stored->items[0].id, res[4].stored->items[0].id); /* idempotent */
    assert_int_equal(res[1].stored->items[0].seq, 1);
    for (int i = 0; i < 6; i++)
        mn_messages_free(res[i].stored);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, a, &s), MN_OK);
    assert_int_equal(s->message_count, 2);
    mn_session_free(s);
    /* create flag; without results stored */
    r[0].session_id = "0190a0b0-0000-7000-8000-000000000002";
    r[0].flags = MN_APPEND_CREATE;
    assert_int_equal(mn_append_many(db, r, 1, 0, res), MN_OK);
    assert_int_equal(res[0].status, MN_OK);
    assert_null(res[0].stored);
    assert_int_equal(mn_session_get(db, r[0].session_id, &s), MN_OK);
    assert_int_equal(s->message_count, 1);
    mn_session_free(s);
    /* with ns, the session must be in it: a new one is made there, in the append's transaction;
     * another namespace's is MN_NOTFOUND (and gets nothing); a bad namespace refuses the request
     * and makes nothing; a caller built before ns existed (a smaller struct) appends anywhere and
     * has its sessions made in "default" */
    const char *fresh = "0190a0b0-0000-7000-8000-000000000003", *other = "0190a0b0-0000-7000-8000-000000000004";
    assert_append_ns(db, &r[0], fresh, "team-x", sizeof r[0], MN_OK, "team-x");
    assert_append_ns(db, &r[0], fresh, "team-x", sizeof r[0], MN_OK, "team-x");
    assert_append_ns(db, &r[0], a, "team-x", sizeof r[0], MN_NOTFOUND, "default");
    assert_append_ns(db, &r[0], other, "no spaces", sizeof r[0], MN_INVALID, NULL);
    assert_append_ns(db, &r[0], fresh, "team-y", sizeof r[0], MN_NOTFOUND, "team-x");
    assert_append_ns(db, &r[0], other, "team-x", offsetof(mn_append_request, ns), MN_OK, "default");
    assert_append_ns(db, &r[0], fresh, "team-y", offsetof(mn_append_request, ns), MN_OK, "team-x");
    assert_int_equal(mn_session_get(db, fresh, &s), MN_OK);
    assert_int_equal(s->message_count, 3); /* the refused one stored nothing */
    mn_session_free(s);
    /* one group, two namespaces creating one id: the second finds the first's row, and refuses it */
    r[0].session_id = "0190a0b0-0000-7000-8000-000000000005";
    r[0].size = sizeof r[0];
    r[0].ns = "team-x";
    r[1] = r[0];
    r[1].ns = "team-y";
    assert_int_equal(mn_append_many(db, r, 2, 0, res), MN_OK);
    assert_int_equal(res[0].status, MN_OK);
    assert_int_equal(res[1].status, MN_NOTFOUND);
    assert_non_null(strstr(res[1].errmsg, "not found"));
    assert_int_equal(mn_session_get(db, r[0].session_id, &s), MN_OK);
    assert_string_equal(s->ns, "team-x");
    assert_int_equal(s->message_count, 1);
    mn_session_free(s);
    r[0].size = sizeof r[0];
    r[0].ns = NULL;
    assert_int_equal(mn_append_many(db, r, 0, 0, res), MN_INVALID);
    r[0].size = 0;
    assert_int_equal(mn_append_many(db, r, 1, 0, res), MN_OK);
    assert_int_equal(res[0].status, MN_MISUSE);
    mn_close(db);
}

static void delete_one_message(void **state)
{
    (void)state;
    mn_db *db = open_db("delete");
    char a[64];
    new_session(db, a);
    mn_message_in m = MN_MESSAGE_IN_INIT;
    mn_message *u = NULL, *x = NULL;
    m.content = "first question";
    assert_int_equal(mn_append(db, a, &m, 0, &u), MN_OK);
    m.role = MN_ROLE_ASSISTANT;
    m.content = "an answer";
    assert_int_equal(mn_append(db, a, &m, 0, &x), MN_OK);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, a, &s), MN_OK);
    int64_t tokens = s->token_count;
    mn_session_free(s);
    assert_int_equal(mn_message_delete(db, a, u->id), MN_OK);
    assert_int_equal(mn_message_delete(db, a, u->id), MN_NOTFOUND);
    assert_int_equal(mn_message_delete(db, a, 0), MN_INVALID);
    char b[64];
    new_session(db, b);
    assert_int_equal(mn_message_delete(db, b, x->id), MN_NOTFOUND); /* not that session's */
    assert_int_equal(mn_session_get(db, a, &s), MN_OK);
    assert_int_equal(s->message_count, 1);
    assert_int_equal(s->turn_count, 0);
    assert_int_equal(s->token_count, tokens - u->tokens);
    mn_session_free(s);
    mn_messages *h = NULL;
    assert_int_equal(mn_history(db, a, NULL, &h), MN_OK);
    assert_int_equal(h->count, 1);
    assert_int_equal(h->items[0].id, x->id);
    mn_messages_free(h);
    /* the next append still gets a new seq */
    mn_message *y = NULL;
    assert_int_equal(mn_append(db, a, &m, 0, &y), MN_OK);
    assert_int_equal(y->seq, 3);
    mn_message_free(u);
    mn_message_free(x);
    mn_message_free(y);
    mn_close(db);
}

static void update_session(void **state)
{
    (void)state;
    mn_db *db = open_db("update");
    char a[64];
    new_session(db, a);
    assert_int_equal(mn_session_update(db, a, "My title", "{\"topic\":\"x\"}"), MN_OK);
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, a, &s), MN_OK);
    assert_string_equal(s->title, "My title");
    assert_string_equal(s->metadata, "{\"topic\":\"x\"}");
    mn_session_free(s);
    assert_int_equal(mn_session_update(db, a, NULL, "{}"), MN_OK);
    assert_int_equal(mn_session_get(db, a, &s), MN_OK);
    assert_string_equal(s->title, "My title");
    assert_string_equal(s->metadata, "{}");
    mn_session_free(s);
    assert_int_equal(mn_session_update(db, a, NULL, "[1]"), MN_INVALID);
    assert_int_equal(mn_session_update(db, a, "\xff", NULL), MN_INVALID);
    assert_int_equal(mn_session_update(db, "0190a0b0-0000-7000-8000-000000000009", "t", NULL), MN_NOTFOUND);
    assert_int_equal(mn_session_update(db, "no\tpe", "t", NULL), MN_INVALID);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mnemo-service-XXXXXX");
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
        cmocka_unit_test(many_commits_each_request),
        cmocka_unit_test(delete_one_message),
        cmocka_unit_test(update_session),
    };
    return cmocka_run_group_tests_name("service", tests, setup, teardown);
}
