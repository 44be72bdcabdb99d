/*
 * test_store_rows.c — conformance of the row primitives (store/store_rows.h) on each backend:
 * SQLite on a real file (unit/test_store_rows) and PostgreSQL (pg/unit/test_store_rows). A
 * backend conforms when a missing session or message is MN_NOTFOUND naming it, every primitive
 * does what the header says to the rows the store reads back (counters never below 0 where the
 * header says so), and every one rolls back with its transaction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_append.h"
#include "store/store_rows.h"
#include "test_db.h"

#define SID "01900000-0000-7000-8000-000000000a01"
#define MISSING "01900000-0000-7000-8000-000000000a02"

static char dir[256];
static mn_store *the_store;
static int64_t first_id; /* the first message's id */

struct seed {
    int64_t ids[2];
};

/* A session with two user messages (3 and 4 tokens); its title comes from the first. */
static mn_status seed_body(mn_store_tx *tx, void *arg)
{
    struct seed *sd = arg;
    const struct mn_store_append_ops *o = the_store->ops->append;
    mn_session s;
    memset(&s, 0, sizeof s);
    s.id = SID;
    s.ns = "default";
    s.metadata = "{}";
    s.created_at = s.updated_at = 1000;
    int64_t sid = 0;
    mn_status rc = o->session_create(tx, &s, &sid);
    const char *texts[2] = {"first words", "second words here"};
    for (int i = 0; !rc && i < 2; i++) {
        mn_message m;
        memset(&m, 0, sizeof m);
        m.role = MN_ROLE_USER;
        m.content = texts[i];
        m.session_id = SID;
        m.seq = i + 1;
        m.tokens = 3 + i;
        m.created_at = 1000;
        m.active = 1;
        if (!(rc = o->message_insert(tx, sid, &m)))
            sd->ids[i] = m.id;
    }
    mn_store_appended c = {sid, 2, 2, 7, 2, 1000, "first words"};
    return rc ? rc : o->session_appended(tx, &c);
}

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "store-rows") != 0)
        return -1;
    char file[400];
    snprintf(file, sizeof file, "%s/rows.db", dir);
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 0};
    if (mn_store_open(test_db_target(file), &o, &the_store) != MN_OK) {
        fprintf(stderr, "open: %s\n", mn_errmsg());
        return -1;
    }
    struct seed sd = {{0, 0}};
    if (the_store->ops->append->write(the_store, seed_body, &sd) != MN_OK) {
        fprintf(stderr, "seed: %s\n", mn_errmsg());
        return -1;
    }
    first_id = sd.ids[0];
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    the_store->ops->close(the_store);
    return test_rmdir(dir);
}

struct lookup {
    const char *session_id;
    int64_t message_id;
    mn_store_message_row row;
};

static mn_status lookup_body(mn_store_tx *tx, void *arg)
{
    struct lookup *l = arg;
    return the_store->ops->rows->message_row(tx, l->session_id, l->message_id, &l->row);
}

static void message_row_and_not_found(void **state)
{
    (void)state;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    struct lookup l = {SID, first_id, {0, 0, 0, 0, 0}};
    assert_int_equal(o->write(the_store, lookup_body, &l), MN_OK);
    assert_int_equal(l.row.seq, 1);
    assert_int_equal(l.row.tokens, 3);
    assert_int_equal(l.row.user, 1);
    assert_int_equal(l.row.active, 1);
    assert_true(l.row.sid > 0);
    l.message_id = first_id + 1000;
    assert_int_equal(o->write(the_store, lookup_body, &l), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), "message"));
    l.session_id = MISSING;
    l.message_id = first_id;
    assert_int_equal(o->write(the_store, lookup_body, &l), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), MISSING));
}

struct change {
    int fail;        /* return MN_INVALID after every primitive ran */
    int64_t dropped; /* out: summaries_drop's count */
};

/* Every primitive once on the first message: new text, its title, +2 tokens, vector, summaries,
 * an event. */
static mn_status change_body(mn_store_tx *tx, void *arg)
{
    struct change *c = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_store_message_row row;
    mn_status rc = o->message_row(tx, SID, first_id, &row);
    if (!rc)
        rc = o->title_follow(tx, row.sid, row.seq, "rewritten first words");
    if (!rc)
        rc = o->message_rewrite(tx, first_id, "rewritten first words", "{\"k\":1}", 5);
    if (!rc)
        rc = o->session_counts(tx, row.sid, 0, 2, 0, 0, 2000);
    if (!rc)
        rc = o->vector_stale(tx, first_id);
    if (!rc)
        rc = o->summaries_drop(tx, row.sid, row.seq, &c->dropped);
    if (!rc)
        rc = o->event_add(tx, row.sid, "row_test", "{\"n\":1}", 2000);
    if (!rc)
        o->erased(tx);
    return rc ? rc : c->fail ? MN_INVALID : MN_OK;
}

static int count_events(void *user, int64_t id, const char *kind, const char *data, int64_t at)
{
    (void)id;
    (void)at;
    int *n = user;
    *n += strcmp(kind, "row_test") == 0 && strcmp(data, "{\"n\":1}") == 0;
    return 0;
}

static void check_state(const char *text, int64_t tokens, const char *title, int64_t total, int events)
{
    mn_messages *h = NULL;
    mn_history_opts all = MN_HISTORY_OPTS_INIT;
    assert_int_equal(the_store->ops->history(the_store, SID, &all, &h), MN_OK);
    assert_string_equal(h->items[0].content, text);
    assert_int_equal(h->items[0].tokens, tokens);
    assert_string_equal(h->items[1].content, "second words here"); /* the other row is untouched */
    mn_messages_free(h);
    mn_session *s = NULL;
    assert_int_equal(the_store->ops->session_get(the_store, SID, &s), MN_OK);
    assert_string_equal(s->title, title);
    assert_int_equal(s->token_count, total);
    mn_session_free(s);
    int n = 0;
    assert_int_equal(the_store->ops->events_list(the_store, SID, 100, count_events, &n), MN_OK);
    assert_int_equal(n, events);
}

static void primitives_change_and_roll_back(void **state)
{
    (void)state;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_summary sum = {0, NULL, 2, 2, "both", 1, NULL, "extractive", 1500};
    assert_int_equal(the_store->ops->summary_insert(the_store, SID, &sum, NULL), MN_OK);
    struct change fail = {1, 0}, ok = {0, 0};
    assert_int_equal(o->write(the_store, change_body, &fail), MN_INVALID);
    check_state("first words", 3, "first words", 7, 0);
    mn_summary *latest = NULL;
    assert_int_equal(the_store->ops->summary_latest(the_store, SID, &latest), MN_OK); /* still there */
    mn_summary_free(latest);
    assert_int_equal(o->write(the_store, change_body, &ok), MN_OK);
    check_state("rewritten first words", 5, "rewritten first words", 9, 1);
    assert_int_equal(ok.dropped, 1);
    assert_int_equal(the_store->ops->summary_latest(the_store, SID, &latest), MN_NOTFOUND);
}

static mn_status untitle_body(mn_store_tx *tx, void *arg)
{
    int64_t seq = *(int64_t *)arg;
    mn_store_message_row row;
    mn_status rc = the_store->ops->rows->message_row(tx, SID, first_id, &row);
    return rc ? rc : the_store->ops->rows->title_follow(tx, row.sid, seq, "");
}

/* "" takes the title away, but only from the message it came from. */
static void title_follows_its_message_only(void **state)
{
    (void)state;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    int64_t other = 2, own = 1;
    assert_int_equal(o->write(the_store, untitle_body, &other), MN_OK);
    mn_session *s = NULL;
    assert_int_equal(the_store->ops->session_get(the_store, SID, &s), MN_OK);
    assert_non_null(s->title);
    mn_session_free(s);
    assert_int_equal(o->write(the_store, untitle_body, &own), MN_OK);
    assert_int_equal(the_store->ops->session_get(the_store, SID, &s), MN_OK);
    assert_null(s->title);
    mn_session_free(s);
}

struct removal {
    int fail;
    int64_t id;
};

/* Removes a message and takes it off the session's counters (users and inactive never below 0). */
static mn_status remove_body(mn_store_tx *tx, void *arg)
{
    struct removal *r = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_store_message_row row;
    mn_status rc = o->message_row(tx, SID, r->id, &row);
    if (!rc)
        rc = o->message_remove(tx, r->id);
    if (!rc)
        rc = o->session_counts(tx, row.sid, -1, -row.tokens, -5, -1, 3000);
    if (!rc)
        o->erased(tx);
    return rc ? rc : r->fail ? MN_INVALID : MN_OK;
}

static void remove_counts_and_rolls_back(void **state)
{
    (void)state;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_session *s = NULL;
    assert_int_equal(the_store->ops->session_get(the_store, SID, &s), MN_OK);
    int64_t messages = s->message_count, tokens = s->token_count;
    mn_session_free(s);
    struct removal fail = {1, first_id + 1}, ok = {0, first_id + 1};
    assert_int_equal(o->write(the_store, remove_body, &fail), MN_INVALID);
    assert_int_equal(the_store->ops->session_get(the_store, SID, &s), MN_OK);
    assert_int_equal(s->message_count, messages);
    mn_session_free(s);
    assert_int_equal(o->write(the_store, remove_body, &ok), MN_OK);
    assert_int_equal(the_store->ops->session_get(the_store, SID, &s), MN_OK);
    assert_int_equal(s->message_count, messages - 1);
    assert_int_equal(s->token_count, tokens - 4);
    assert_int_equal(s->turn_count, 0); /* 2 user turns less 5: held at 0 */
    assert_int_equal(s->inactive_count, 0);
    mn_session_free(s);
    assert_int_equal(o->write(the_store, remove_body, &ok), MN_NOTFOUND); /* gone */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(message_row_and_not_found),
        cmocka_unit_test(primitives_change_and_roll_back),
        cmocka_unit_test(title_follows_its_message_only),
        cmocka_unit_test(remove_counts_and_rolls_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
