/*
 * test_store_rows.c — conformance of the row primitives (store/store_rows.h) on each backend:
 * SQLite on a real file (unit/test_store_rows) and PostgreSQL (pg/unit/test_store_rows). A
 * backend conforms when a missing session or message is MN_NOTFOUND naming it, every primitive
 * does what the header says to the rows the store reads back (counters never below 0 where the
 * header says so, left alone where it says so), and every one rolls back with its transaction.
 * The reads a fork makes are checked for what they give.
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
#define TURNS "01900000-0000-7000-8000-000000000a03"  /* the turn primitives' session */
#define RANGES "01900000-0000-7000-8000-000000000a04" /* messages_remove's */
#define READS "01900000-0000-7000-8000-000000000a05"  /* the fork's reads' */

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
    mn_store_appended c = {sid, 2, 2, 7, 2, 1000, 0, "first words", 1}; /* the title is message 1's */
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
    if (mn__store_open(test_db_target(file), &o, &the_store) != MN_OK) {
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
    assert_int_equal(the_store->ops->history(the_store, SID, &all, NULL, &h), MN_OK);
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

/* ---- the turn limit's and the clear's primitives ------------------------------------------- */

/* A session of six messages: user (3 tokens), assistant (2), tool (5), user (1), tool (4),
 * assistant (2); seqs 1 to 6, all active. */
static const mn_role six_roles[6] = {MN_ROLE_USER, MN_ROLE_ASSISTANT, MN_ROLE_TOOL,
                                     MN_ROLE_USER, MN_ROLE_TOOL,      MN_ROLE_ASSISTANT};
static const int64_t six_tokens[6] = {3, 2, 5, 1, 4, 2};

static mn_status six_body(mn_store_tx *tx, void *arg)
{
    const char *id = arg;
    const struct mn_store_append_ops *o = the_store->ops->append;
    mn_session s;
    memset(&s, 0, sizeof s);
    s.id = id;
    s.ns = "default";
    s.metadata = "{}";
    s.created_at = s.updated_at = 1000;
    int64_t sid = 0;
    mn_status rc = o->session_create(tx, &s, &sid);
    for (int i = 0; !rc && i < 6; i++) {
        mn_message m;
        memset(&m, 0, sizeof m);
        m.role = six_roles[i];
        m.content = "words";
        m.tool_call_id = six_roles[i] == MN_ROLE_TOOL ? "c1" : NULL;
        m.session_id = id;
        m.seq = i + 1;
        m.tokens = six_tokens[i];
        m.created_at = 1000;
        m.active = 1;
        rc = o->message_insert(tx, sid, &m);
    }
    mn_store_appended c = {sid, 6, 6, 17, 2, 1000, 0, NULL, 0};
    return rc ? rc : o->session_appended(tx, &c);
}

static void six_messages(const char *id)
{
    assert_int_equal(the_store->ops->append->write(the_store, six_body, (void *)id), MN_OK);
}

/* The active flags of session id's messages by seq ("101101"; "-" for a seq not stored). */
static void actives(const char *id, char *out, size_t cap)
{
    mn_messages *h = NULL;
    mn_history_opts all = MN_HISTORY_OPTS_INIT;
    all.all = 1;
    assert_int_equal(the_store->ops->history(the_store, id, &all, NULL, &h), MN_OK);
    size_t n = 0;
    for (int64_t seq = 1; seq <= 6 && n + 1 < cap; seq++) {
        char c = '-';
        for (size_t i = 0; i < h->count; i++)
            if (h->items[i].seq == seq)
                c = h->items[i].active ? '1' : '0';
        out[n++] = c;
    }
    out[n] = '\0';
    mn_messages_free(h);
}

static void expect_actives(const char *id, const char *want)
{
    char got[8];
    actives(id, got, sizeof got);
    assert_string_equal(got, want);
}

struct turns {
    const char *session_id;
    int fail;                /* return MN_INVALID after the primitives ran */
    mn_store_turns_row row;  /* turns_row's */
    mn_store_turns_row next; /* turns_write's (sid: the row's) */
    int drop_state;
};

static mn_status turns_body(mn_store_tx *tx, void *arg)
{
    struct turns *t = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_status rc = o->turns_row(tx, t->session_id, &t->row);
    t->next.sid = t->row.sid;
    if (!rc)
        rc = o->turns_write(tx, &t->next, 5000);
    if (!rc && t->drop_state)
        rc = o->state_drop(tx, t->row.sid);
    return rc ? rc : t->fail ? MN_INVALID : MN_OK;
}

static mn_status state_set(void *user, const char *current, char **next)
{
    (void)user;
    (void)current;
    return (*next = strdup("{\"k\":1}")) ? MN_OK : MN_NOMEM;
}

static void expect_turns(int64_t max_turns, int64_t cleared_seq, int64_t cleared_from, int64_t updated_at,
                         int has_state)
{
    mn_session *s = NULL;
    assert_int_equal(the_store->ops->session_get(the_store, TURNS, &s), MN_OK);
    assert_int_equal(s->max_turns, max_turns);
    assert_int_equal(s->cleared_seq, cleared_seq);
    assert_int_equal(s->cleared_from, cleared_from);
    assert_int_equal(s->updated_at, updated_at);
    assert_int_equal(s->message_count, 6); /* the counters are someone else's */
    mn_session_free(s);
    char *state = NULL;
    assert_int_equal(the_store->ops->state_get(the_store, TURNS, &state), MN_OK);
    assert_int_equal(state != NULL, has_state);
    free(state);
}

/* turns_row reads and locks the row (MN_NOTFOUND naming a missing session); turns_write writes the
 * limit and the clear fields and updated_at, never last_seq; state_drop takes the state. */
static void turns_row_write_and_state_drop(void **state)
{
    (void)state;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    six_messages(TURNS);
    assert_int_equal(the_store->ops->state_update(the_store, TURNS, state_set, NULL), MN_OK);
    struct turns missing = {MISSING, 0, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, 0};
    assert_int_equal(o->write(the_store, turns_body, &missing), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), MISSING));

    struct turns t = {TURNS, 1, {0, 0, 0, 0, 0}, {0, 99, 3, 5, 2}, 1};
    assert_int_equal(o->write(the_store, turns_body, &t), MN_INVALID);
    assert_true(t.row.sid > 0);
    assert_int_equal(t.row.last_seq, 6);
    assert_int_equal(t.row.max_turns, 0);
    assert_int_equal(t.row.cleared_seq, 0);
    assert_int_equal(t.row.cleared_from, 0);
    expect_turns(0, 0, 0, 1000, 1); /* rolled back */

    t.fail = 0;
    assert_int_equal(o->write(the_store, turns_body, &t), MN_OK);
    expect_turns(3, 5, 2, 5000, 0);
    t.next = (mn_store_turns_row){0, 0, 0, 0, 0};
    t.drop_state = 0;
    assert_int_equal(o->write(the_store, turns_body, &t), MN_OK);
    assert_int_equal(t.row.last_seq, 6); /* turns_write left it */
    assert_int_equal(t.row.max_turns, 3);
    assert_int_equal(t.row.cleared_seq, 5);
    assert_int_equal(t.row.cleared_from, 2);
    expect_turns(0, 0, 0, 5000, 0);
}

struct reads {
    int64_t n;
    int active_only;
    int64_t seq; /* out: turn_start's, or first_active's when n is 0 */
};

static mn_status reads_body(mn_store_tx *tx, void *arg)
{
    struct reads *r = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_store_turns_row row;
    mn_status rc = o->turns_row(tx, TURNS, &row);
    if (rc)
        return rc;
    return r->n ? o->turn_start(tx, row.sid, r->n, r->active_only, &r->seq) : o->first_active(tx, row.sid, &r->seq);
}

/* turn_start's seq (n > 0), or first_active's (n 0). */
static int64_t read_seq(int64_t n, int active_only)
{
    struct reads r = {n, active_only, -1};
    assert_int_equal(the_store->ops->rows->write(the_store, reads_body, &r), MN_OK);
    return r.seq;
}

struct activate {
    const char *session_id;
    int64_t from, upto;
    int active, fail;
    int64_t changed;
};

static mn_status activate_body(mn_store_tx *tx, void *arg)
{
    struct activate *a = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_store_turns_row row;
    mn_status rc = o->turns_row(tx, a->session_id, &row);
    if (!rc)
        rc = o->messages_activate(tx, row.sid, a->from, a->upto, a->active, &a->changed);
    return rc ? rc : a->fail ? MN_INVALID : MN_OK;
}

static int64_t activate_in(const char *id, int64_t from, int64_t upto, int active)
{
    struct activate a = {id, from, upto, active, 0, -1};
    assert_int_equal(the_store->ops->rows->write(the_store, activate_body, &a), MN_OK);
    return a.changed;
}

/* turn_start counts the messages that are not tool results, newest first (the active ones only
 * when asked); first_active finds the oldest active one; messages_activate moves a range and
 * counts what it moved, leaving the counters. */
static void turn_start_first_active_and_activate(void **state)
{
    (void)state;
    /* not tool results: seqs 6, 4, 2, 1 newest first */
    assert_int_equal(read_seq(1, 0), 6);
    assert_int_equal(read_seq(2, 0), 4);
    assert_int_equal(read_seq(3, 1), 2);
    assert_int_equal(read_seq(4, 0), 1);
    assert_int_equal(read_seq(5, 0), 0);
    assert_int_equal(read_seq(0, 0), 1);

    struct activate fail = {TURNS, 1, 6, 0, 1, 0};
    assert_int_equal(the_store->ops->rows->write(the_store, activate_body, &fail), MN_INVALID);
    expect_actives(TURNS, "111111"); /* rolled back */
    assert_int_equal(activate_in(TURNS, 1, 2, 0), 2);
    assert_int_equal(activate_in(TURNS, 1, 2, 0), 0); /* already inactive */
    expect_actives(TURNS, "001111");
    assert_int_equal(read_seq(2, 1), 4);
    assert_int_equal(read_seq(3, 1), 0); /* 6 and 4 are the only active ones */
    assert_int_equal(read_seq(3, 0), 2); /* counting the inactive ones too */
    assert_int_equal(read_seq(0, 0), 3);
    assert_int_equal(activate_in(TURNS, 2, 4, 0), 2);
    expect_actives(TURNS, "000011");
    assert_int_equal(read_seq(0, 0), 5);
    assert_int_equal(activate_in(TURNS, -5, 100, 0), 2); /* a range past the session's ends is clamped */
    expect_actives(TURNS, "000000");
    assert_int_equal(read_seq(0, 0), 0);
    assert_int_equal(read_seq(1, 1), 0);
    assert_int_equal(activate_in(TURNS, 2, 4, 1), 3);
    expect_actives(TURNS, "011100");
    assert_int_equal(activate_in(TURNS, 4, 2, 1), 0); /* an empty range */
    mn_session *s = NULL;
    assert_int_equal(the_store->ops->session_get(the_store, TURNS, &s), MN_OK);
    assert_int_equal(s->inactive_count, 0); /* the counters are the caller's */
    assert_int_equal(s->message_count, 6);
    mn_session_free(s);
}

struct range_removal {
    const char *session_id;
    int64_t from, upto;
    int fail;
    mn_store_removed gone;
};

static mn_status range_body(mn_store_tx *tx, void *arg)
{
    struct range_removal *r = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_store_turns_row row;
    mn_status rc = o->turns_row(tx, r->session_id, &row);
    if (!rc)
        rc = o->messages_remove(tx, row.sid, r->from, r->upto, &r->gone);
    return rc ? rc : r->fail ? MN_INVALID : MN_OK;
}

static mn_store_removed remove_range(const char *id, int64_t from, int64_t upto)
{
    struct range_removal r = {id, from, upto, 0, {-1, -1, -1}};
    assert_int_equal(the_store->ops->rows->write(the_store, range_body, &r), MN_OK);
    return r.gone;
}

/* messages_remove deletes a range of one session only and says what went (how many, their
 * tokens, the inactive ones), leaving the counters. */
static void messages_remove_range(void **state)
{
    (void)state;
    six_messages(RANGES);
    char before[8];
    actives(TURNS, before, sizeof before); /* the session beside it */
    struct range_removal fail = {RANGES, 1, 6, 1, {0, 0, 0}};
    assert_int_equal(the_store->ops->rows->write(the_store, range_body, &fail), MN_INVALID);
    expect_actives(RANGES, "111111"); /* rolled back */

    assert_int_equal(activate_in(RANGES, 3, 3, 0), 1);
    mn_store_removed g = remove_range(RANGES, 5, 4); /* an empty range */
    assert_int_equal(g.messages, 0);
    assert_int_equal(g.tokens, 0);
    assert_int_equal(g.inactive, 0);
    g = remove_range(RANGES, 2, 3);
    assert_int_equal(g.messages, 2);
    assert_int_equal(g.tokens, 7);
    assert_int_equal(g.inactive, 1);
    expect_actives(RANGES, "1--111");
    g = remove_range(RANGES, -5, 4); /* clamped: seq 1 and 4 are what is left of it */
    assert_int_equal(g.messages, 2);
    assert_int_equal(g.tokens, 4);
    assert_int_equal(g.inactive, 0);
    expect_actives(RANGES, "----11");
    g = remove_range(RANGES, 0, INT64_MAX);
    assert_int_equal(g.messages, 2);
    assert_int_equal(g.tokens, 6);
    expect_actives(RANGES, "------");
    expect_actives(TURNS, before); /* the other session's messages stayed */
    mn_session *s = NULL;
    assert_int_equal(the_store->ops->session_get(the_store, RANGES, &s), MN_OK);
    assert_int_equal(s->message_count, 6); /* the counters are the caller's */
    assert_int_equal(s->token_count, 17);
    mn_session_free(s);
}

/* ---- a fork's reads, its title and the watermarks' meta_drop ---------------------------- */

struct read {
    const char *session_id;
    int64_t after, upto;
    size_t limit, stop_after; /* fn stops the read after that many (0: never) */
    mn_store_session_row row;
    char id[40], seqs[64]; /* the record's id; the seqs read, "1,2,4" */
    size_t n;
    int tool_ok; /* seq 5 came back whole: a tool result of call c1, 4 tokens, of its session */
};

static int read_session(void *user, const mn_session *s)
{
    struct read *r = user;
    snprintf(r->id, sizeof r->id, "%s", s->id);
    return 0;
}

static int read_message(void *user, const mn_message *m)
{
    struct read *r = user;
    size_t len = strlen(r->seqs);
    snprintf(r->seqs + len, sizeof r->seqs - len, "%s%lld", len ? "," : "", (long long)m->seq);
    if (m->seq == 5)
        r->tool_ok = m->role == MN_ROLE_TOOL && m->tokens == 4 && m->active && strcmp(m->tool_call_id, "c1") == 0 &&
                     strcmp(m->content, "words") == 0 && strcmp(m->session_id, r->session_id) == 0;
    return ++r->n == r->stop_after;
}

static mn_status read_body(mn_store_tx *tx, void *arg)
{
    struct read *r = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    r->seqs[0] = r->id[0] = '\0';
    r->n = 0;
    mn_status rc = o->session_read(tx, r->session_id, read_session, r, &r->row);
    return rc ? rc : o->messages_read(tx, r->row.sid, r->session_id, r->after, r->upto, r->limit, read_message, r);
}

/* The seqs messages_read gives of READS. */
static const char *read_seqs(int64_t after, int64_t upto, size_t limit, size_t stop_after)
{
    static struct read r;
    r = (struct read){READS, after, upto, limit, stop_after, {0, 0}, "", "", 0, 0};
    assert_int_equal(the_store->ops->rows->write(the_store, read_body, &r), MN_OK);
    assert_string_equal(r.id, READS);
    return r.seqs;
}

/* session_read gives the record, its row id and title_seq (MN_NOTFOUND naming a missing one);
 * messages_read the active messages of a range of one session, in order, at most limit, until
 * its callback stops it. */
static void session_and_messages_read(void **state)
{
    (void)state;
    six_messages(READS);
    assert_int_equal(activate_in(READS, 3, 3, 0), 1);
    struct read r = {READS, 0, INT64_MAX, 100, 0, {0, 0}, "", "", 0, 0};
    assert_int_equal(the_store->ops->rows->write(the_store, read_body, &r), MN_OK);
    assert_string_equal(r.id, READS);
    assert_true(r.row.sid > 0);
    assert_int_equal(r.row.title_seq, 0);
    assert_string_equal(r.seqs, "1,2,4,5,6"); /* not seq 3, inactive, nor the other sessions' */
    assert_true(r.tool_ok);
    assert_string_equal(read_seqs(1, 5, 2, 0), "2,4");
    assert_string_equal(read_seqs(4, INT64_MAX, 100, 0), "5,6");
    assert_string_equal(read_seqs(0, 6, 100, 2), "1,2"); /* stopped */
    assert_string_equal(read_seqs(0, 0, 100, 0), "");
    assert_string_equal(read_seqs(6, INT64_MAX, 100, 0), "");
    assert_string_equal(read_seqs(INT64_MAX, INT64_MAX, 100, 0), "");
    r.session_id = MISSING;
    assert_int_equal(the_store->ops->rows->write(the_store, read_body, &r), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), MISSING));
}

struct titling {
    int fail;
    int64_t seq;
};

/* title_from(seq), meta_drop of a key and of one never set, then a title_follow of seq. */
static mn_status titling_body(mn_store_tx *tx, void *arg)
{
    struct titling *t = arg;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    mn_store_turns_row row;
    mn_status rc = o->turns_row(tx, READS, &row);
    if (!rc)
        rc = o->title_from(tx, row.sid, t->seq);
    if (!rc)
        rc = o->meta_drop(tx, "rows.test");
    if (!rc)
        rc = o->meta_drop(tx, "rows.never");
    if (!rc)
        rc = o->title_follow(tx, row.sid, 4, "renamed");
    return rc ? rc : t->fail ? MN_INVALID : MN_OK;
}

static void expect_titling(const char *title, int64_t title_seq, const char *meta)
{
    mn_session *s = NULL;
    assert_int_equal(the_store->ops->session_get(the_store, READS, &s), MN_OK);
    if (title)
        assert_string_equal(s->title, title);
    else
        assert_null(s->title);
    mn_session_free(s);
    struct read r = {READS, 0, 0, 1, 0, {0, 0}, "", "", 0, 0};
    assert_int_equal(the_store->ops->rows->write(the_store, read_body, &r), MN_OK);
    assert_int_equal(r.row.title_seq, title_seq);
    char *v = NULL;
    assert_int_equal(the_store->ops->meta_get(the_store, "rows.test", &v), MN_OK);
    if (meta)
        assert_string_equal(v, meta);
    else
        assert_null(v);
    free(v);
}

/* title_from records the message a title came from, so title_follow follows it; meta_drop takes
 * a key away (one that is not there is no error); both roll back. */
static void title_from_and_meta_drop(void **state)
{
    (void)state;
    const struct mn_store_row_ops *o = the_store->ops->rows;
    assert_int_equal(the_store->ops->meta_set(the_store, "rows.test", "x"), MN_OK);
    struct titling fail = {1, 4}, other = {0, 2}, ok = {0, 4};
    assert_int_equal(o->write(the_store, titling_body, &fail), MN_INVALID);
    expect_titling(NULL, 0, "x"); /* rolled back */
    assert_int_equal(o->write(the_store, titling_body, &other), MN_OK);
    expect_titling(NULL, 2, NULL); /* the title came from seq 2: the follow of seq 4 left it */
    assert_int_equal(the_store->ops->meta_set(the_store, "rows.test", "y"), MN_OK);
    assert_int_equal(o->write(the_store, titling_body, &ok), MN_OK);
    expect_titling("renamed", 4, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(message_row_and_not_found),
        cmocka_unit_test(primitives_change_and_roll_back),
        cmocka_unit_test(title_follows_its_message_only),
        cmocka_unit_test(remove_counts_and_rolls_back),
        cmocka_unit_test(turns_row_write_and_state_drop),
        cmocka_unit_test(turn_start_first_active_and_activate),
        cmocka_unit_test(messages_remove_range),
        cmocka_unit_test(session_and_messages_read),
        cmocka_unit_test(title_from_and_meta_drop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
