/*
 * test_store_bounds.c — what the append algorithm does when another writer holds a session, and
 * the commit token a PostgreSQL group leaves, on the store (PostgreSQL only: pg/unit/
 * test_store_bounds; the SQLite run skips). The fault suite tests/cli/t1550-nodes-faults.sh
 * drives the same behaviour through two `mnemo serve` nodes; docs/scale-out.md explains it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/append.h"
#include "store/store.h"
#include "store/store_append.h"
#include "test_db.h"

#define S_HELD "0190f0f0-0000-7000-8000-00000000b001"
#define S_FREE "0190f0f0-0000-7000-8000-00000000b002"

static char dir[256];
static char target[400];
static mn_store *the_store;

static mn_store *open_store(void)
{
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 0};
    mn_store *st = NULL;
    assert_int_equal(mn__store_open(target, &o, &st), MN_OK);
    return st;
}

static int setup(void **state)
{
    (void)state;
    if (!test_db_pg())
        return 0;
    if (test_tmpdir(dir, sizeof dir, "store-bounds") != 0)
        return -1;
    char file[300];
    snprintf(file, sizeof file, "%s/bounds.db", dir);
    snprintf(target, sizeof target, "%s", test_db_target(file));
    the_store = open_store();
    const char *ids[2] = {S_HELD, S_FREE};
    for (int i = 0; i < 2; i++) {
        mn_session s;
        memset(&s, 0, sizeof s);
        s.id = ids[i];
        s.ns = "default";
        s.metadata = "{}";
        s.created_at = s.updated_at = 100;
        assert_int_equal(the_store->ops->session_insert(the_store, &s), MN_OK);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (!test_db_pg())
        return 0;
    the_store->ops->close(the_store);
    return test_rmdir(dir);
}

/* Appends one user message to session id on st in a group of one; returns its status. */
static mn_status append_one(mn_store *st, const char *id, const char *text, int defer, char errmsg[256])
{
    mn_message m;
    memset(&m, 0, sizeof m);
    m.role = MN_ROLE_USER;
    m.content = text;
    m.tokens = 1;
    m.created_at = 1000;
    m.active = 1;
    mn_store_append req = {&m, 1, NULL, NULL, 0, 1000, 0, defer, NULL};
    mn_status result = MN_OK;
    char msgs[1][256];
    assert_int_equal(mn__engine_append_many(st, &id, &req, 1, &result, msgs, NULL), MN_OK);
    snprintf(errmsg, 256, "%s", msgs[0]);
    return result;
}

struct held {
    mn_status result;
    char errmsg[256];
};

/* Holds S_HELD in a transaction of the other handle while this one appends to it. */
static mn_status held_body(mn_store_tx *tx, void *arg)
{
    struct held *h = arg;
    mn_store_append_row row;
    assert_int_equal(the_store->ops->append->session_lock(tx, S_HELD, &row), MN_OK);
    h->result = append_one(the_store, S_HELD, "while held", 1, h->errmsg);
    return MN_OK;
}

/* A group of one request that says defer leaves a session another writer holds at once, as a
 * larger group does: it comes back MN_BUSY, unrun, instead of waiting for the lock (and then
 * again, as it did). */
static void one_request_skips_held(void **state)
{
    (void)state;
    if (!test_db_pg())
        skip();
    mn_store *other = open_store();
    struct held h = {MN_OK, ""};
    assert_int_equal(other->ops->append->write(other, held_body, &h), MN_OK);
    other->ops->close(other);
    assert_int_equal(h.result, MN_BUSY);
    assert_non_null(strstr(h.errmsg, "held by another writer"));
    char errmsg[256];
    assert_int_equal(append_one(the_store, S_HELD, "once free", 1, errmsg), MN_OK);
}

/* A group's transaction records its token in its connection's row of meta, so that a node that
 * lost the answer to COMMIT can read whether it went through. */
static void group_records_token(void **state)
{
    (void)state;
    if (!test_db_pg())
        skip();
    char errmsg[256], out[256] = "";
    assert_int_equal(append_one(the_store, S_FREE, "with a token", 0, errmsg), MN_OK);
    assert_int_equal(test_db_sql(target, "SELECT count(*) FROM meta WHERE key LIKE 'commit:%' AND value LIKE '%:%'",
                                 out, sizeof out),
                     0);
    assert_true(strtol(out, NULL, 10) >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_request_skips_held),
        cmocka_unit_test(group_records_token),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
