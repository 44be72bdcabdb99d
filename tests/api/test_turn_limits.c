/*
 * test_turn_limits.c — seed 002's turn limit through mnemo.h: a turn is every appended message of
 * any role, except that an assistant tool call and the results answering it are one turn; a
 * session keeps its newest max_turns turns active after every append, whatever the role, and
 * mn_session_set_max_turns (seed 003's prune(max_messages)) keeps as many at once. A random sweep
 * checks it against a model: never over the limit, never a result without its call.
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

static char dir[160];

static mn_db *open_db(const char *name, const char *trim)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "threads.trim", trim, NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK); /* many small appends */
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static char *new_session(mn_db *db, int64_t max_turns)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.max_turns = max_turns;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

/* An assistant message calling the tools ids[0..n-1]. */
static mn_message_in call_msg(char *buf, size_t cap, const char *const *ids, int n)
{
    size_t len = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s{\"id\":\"%s\",\"type\":\"function\",\"function\":"
                                "{\"name\":\"ls\",\"arguments\":\"{}\"}}", i ? "," : "", ids[i]);
    snprintf(buf + len, cap - len, "]");
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_ASSISTANT;
    m.tool_calls = buf;
    return m;
}

static void add(mn_db *db, const char *id, mn_role role, const char *text)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = text;
    assert_int_equal(mn_append(db, id, &m, 0, NULL), MN_OK);
}

static void add_result(mn_db *db, const char *id, const char *call_id)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_TOOL;
    m.content = "README.md src/";
    m.tool_call_id = call_id;
    assert_int_equal(mn_append(db, id, &m, 0, NULL), MN_OK);
}

/* The active history as one line: role initials (u a t s, c for a call) and contents. */
static void active_text(mn_db *db, const char *id, char *out, size_t cap)
{
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, id, NULL, &l), MN_OK);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < l->count; i++) {
        const mn_message *m = mn_messages_at(l, i);
        const char *what = m->tool_calls ? "call" : m->role == MN_ROLE_TOOL ? m->tool_call_id : m->content;
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", what ? what : "-");
    }
    mn_messages_free(l);
}

static size_t count(mn_db *db, const char *id, int all)
{
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.all = all;
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, id, &o, &l), MN_OK);
    size_t n = l->count;
    mn_messages_free(l);
    return n;
}

/* The report: five questions and answers with limit 3 kept six messages. */
static void pairs_count_every_message(void **state)
{
    (void)state;
    mn_db *db = open_db("pairs", "keep");
    char *id = new_session(db, 3);
    char q[16], a[16], got[256];
    for (int i = 1; i <= 5; i++) {
        snprintf(q, sizeof q, "q%d", i);
        snprintf(a, sizeof a, "a%d", i);
        add(db, id, MN_ROLE_USER, q);
        add(db, id, MN_ROLE_ASSISTANT, a);
    }
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "a4 q5 a5");
    assert_int_equal(count(db, id, 1), 10); /* threads.trim keep: the rest stays stored */
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, id, &s), MN_OK);
    assert_int_equal(s->inactive_count, 7);
    mn_session_free(s);
    free(id);
    mn_close(db);
}

/* Seed 002's runaway protection: assistant messages alone are turns too. */
static void assistant_only_appends_are_limited(void **state)
{
    (void)state;
    mn_db *db = open_db("assistant", "keep");
    char *id = new_session(db, 3);
    char a[16], got[256];
    for (int i = 1; i <= 5; i++) {
        snprintf(a, sizeof a, "a%d", i);
        add(db, id, MN_ROLE_ASSISTANT, a);
    }
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "a3 a4 a5");
    free(id);
    mn_close(db);
}

/* A call and its two results are one turn: the limit takes or keeps them together, whether they
 * come one by one or in one batch. */
static void a_call_and_its_results_are_one_turn(void **state)
{
    (void)state;
    mn_db *db = open_db("call", "keep");
    static const char *const ids[] = {"c1", "c2"};
    char buf[512], got[256];
    char *id = new_session(db, 2);
    add(db, id, MN_ROLE_USER, "q1");
    mn_message_in call = call_msg(buf, sizeof buf, ids, 2);
    assert_int_equal(mn_append(db, id, &call, 0, NULL), MN_OK);
    add_result(db, id, "c1");
    add_result(db, id, "c2");
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "q1 call c1 c2"); /* two turns: within the limit */
    add(db, id, MN_ROLE_ASSISTANT, "done");
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "call c1 c2 done"); /* q1 out; the call stays with its results */
    add(db, id, MN_ROLE_USER, "q2");
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "done q2"); /* the call goes with both its results */
    free(id);

    id = new_session(db, 1); /* limit 1: the call comes first, its results join its turn */
    add(db, id, MN_ROLE_USER, "q1");
    assert_int_equal(mn_append(db, id, &call, 0, NULL), MN_OK);
    add_result(db, id, "c1");
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "call c1");
    add_result(db, id, "c2");
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "call c1 c2");
    free(id);

    id = new_session(db, 2); /* one batch, and the limit set later on a boundary inside it */
    mn_message_in batch[5] = {MN_MESSAGE_IN_INIT, call, MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT};
    batch[0].content = "q1";
    batch[2].role = batch[3].role = MN_ROLE_TOOL;
    batch[2].content = batch[3].content = "out";
    batch[2].tool_call_id = "c1";
    batch[3].tool_call_id = "c2";
    batch[4].role = MN_ROLE_ASSISTANT;
    batch[4].content = "done";
    assert_int_equal(mn_append_batch(db, id, batch, 5, 0, NULL), MN_OK);
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "call c1 c2 done");
    assert_int_equal(mn_session_set_max_turns(db, id, 1), MN_OK);
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "done");
    free(id);
    mn_close(db);
}

/* mnemo session limit S 10 on 30 messages: ten stay, at once, on both trim settings. */
static void set_max_turns_keeps_that_many(void **state)
{
    (void)state;
    for (int del = 0; del <= 1; del++) {
        mn_db *db = open_db(del ? "set-delete" : "set-keep", del ? "delete" : "keep");
        char *id = new_session(db, 0);
        for (int i = 0; i < 15; i++) {
            add(db, id, MN_ROLE_USER, "q");
            add(db, id, MN_ROLE_ASSISTANT, "a");
        }
        assert_int_equal(mn_session_set_max_turns(db, id, 10), MN_OK);
        assert_int_equal(count(db, id, 0), 10);
        assert_int_equal(count(db, id, 1), del ? 10 : 30);
        mn_session *s = NULL;
        assert_int_equal(mn_session_get(db, id, &s), MN_OK);
        assert_int_equal(s->message_count - s->inactive_count, 10);
        mn_session_free(s);
        add(db, id, MN_ROLE_ASSISTANT, "one more");
        assert_int_equal(count(db, id, 0), 10); /* and after every append */
        free(id);
        mn_close(db);
    }
}

/* An undo of a clear brings back what the limit keeps counting in the same unit: the call's turn
 * whole, and nothing past the limit. */
static void undo_counts_the_same_turns(void **state)
{
    (void)state;
    mn_db *db = open_db("undo", "keep");
    static const char *const ids[] = {"c1"};
    char buf[256], got[256];
    char *id = new_session(db, 2);
    add(db, id, MN_ROLE_USER, "q1");
    mn_message_in call = call_msg(buf, sizeof buf, ids, 1);
    assert_int_equal(mn_append(db, id, &call, 0, NULL), MN_OK);
    add_result(db, id, "c1");
    int64_t n = -1;
    assert_int_equal(mn_session_clear(db, id, 0, &n), MN_OK);
    assert_int_equal(n, 3);
    add(db, id, MN_ROLE_USER, "q2");
    assert_int_equal(mn_session_clear(db, id, MN_CLEAR_UNDO, &n), MN_OK);
    assert_int_equal(n, 2);
    active_text(db, id, got, sizeof got);
    assert_string_equal(got, "call c1 q2");
    free(id);
    mn_close(db);
}

/* ---- the sweep -------------------------------------------------------------------------------- */

#define SWEEP_MESSAGES 40

struct model {
    mn_role role[SWEEP_MESSAGES + 8];
    int n;
    int from; /* the oldest active message: raising the limit brings nothing back */
};

static uint64_t rng_state;
static unsigned rnd(unsigned below)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % below);
}

/* The limit applied to the model: what stays active starts at the limit-th newest turn start (a
 * message that is not a tool result), or where it started before when that is newer. */
static void model_trim(struct model *m, int limit)
{
    int starts = 0;
    for (int i = m->n - 1; i >= 0; i--)
        if (m->role[i] != MN_ROLE_TOOL && ++starts == limit) {
            if (i > m->from)
                m->from = i;
            return;
        }
}

/* The active history against the model, and the properties in their own words: at most `limit`
 * turns, no result without its call, no call without the results stored for it. */
static void check_active(mn_db *db, const char *id, const struct model *m, int limit, const char *where)
{
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, id, NULL, &l), MN_OK);
    int keep = m->from, turns = 0;
    if ((int)l->count != m->n - keep)
        fail_msg("%s: %zu active messages, the model keeps %d", where, l->count, m->n - keep);
    for (size_t i = 0; i < l->count; i++) {
        const mn_message *x = mn_messages_at(l, i);
        if (x->seq != keep + (int64_t)i + 1)
            fail_msg("%s: active message %zu has seq %lld, the model's %d", where, i, (long long)x->seq,
                     keep + (int)i + 1);
        turns += x->role != MN_ROLE_TOOL;
        if (x->role == MN_ROLE_TOOL) { /* its call is active, right before it or its siblings */
            size_t j = i;
            while (j > 0 && mn_messages_at(l, j - 1)->role == MN_ROLE_TOOL)
                j--;
            if (j == 0 || !mn_messages_at(l, j - 1)->tool_calls)
                fail_msg("%s: the tool result at seq %lld is active without its call", where, (long long)x->seq);
        }
    }
    if (turns > limit)
        fail_msg("%s: %d turns active, the limit is %d", where, turns, limit);
    mn_messages_free(l);
}

/* One random session of questions, answers, system notes and tool calls with one to three
 * results (appended one by one or as one batch), starting with limit `limit`; now and then the
 * limit changes (mn_session_set_max_turns) and applies at once. */
static void sweep_session(mn_db *db, int del, int limit)
{
    char *id = new_session(db, limit);
    struct model m = {{0}, 0, 0};
    char where[96], buf[1024], cid[3][16];
    while (m.n < SWEEP_MESSAGES) {
        unsigned pick = rnd(10);
        if (pick < 6) { /* user, assistant or system: a turn of its own */
            mn_role r = pick < 3 ? MN_ROLE_USER : pick < 5 ? MN_ROLE_ASSISTANT : MN_ROLE_SYSTEM;
            add(db, id, r, "text");
            m.role[m.n++] = r;
            model_trim(&m, limit);
        } else { /* a call with its results */
            int k = 1 + (int)rnd(3);
            const char *ids[3];
            for (int i = 0; i < k; i++) {
                snprintf(cid[i], sizeof cid[i], "c%d-%d", m.n, i);
                ids[i] = cid[i];
            }
            mn_message_in batch[4];
            batch[0] = call_msg(buf, sizeof buf, ids, k);
            for (int i = 0; i < k; i++) {
                batch[i + 1] = (mn_message_in)MN_MESSAGE_IN_INIT;
                batch[i + 1].role = MN_ROLE_TOOL;
                batch[i + 1].content = "out";
                batch[i + 1].tool_call_id = ids[i];
            }
            int one_batch = rnd(2) == 0;
            if (one_batch)
                assert_int_equal(mn_append_batch(db, id, batch, (size_t)k + 1, 0, NULL), MN_OK);
            for (int i = 0; i <= k; i++) {
                if (!one_batch)
                    assert_int_equal(mn_append(db, id, &batch[i], 0, NULL), MN_OK);
                m.role[m.n++] = i ? MN_ROLE_TOOL : MN_ROLE_ASSISTANT;
                model_trim(&m, limit);
                if (!one_batch && i < k) { /* the call still waiting for some of its results */
                    snprintf(where, sizeof where, "trim %s, limit %d, message %d", del ? "delete" : "keep", limit,
                             m.n);
                    check_active(db, id, &m, limit, where);
                }
            }
        }
        if (rnd(12) == 0) { /* a new limit, applied at once */
            limit = 1 + (int)rnd(8);
            assert_int_equal(mn_session_set_max_turns(db, id, limit), MN_OK);
            model_trim(&m, limit);
        }
        snprintf(where, sizeof where, "trim %s, limit %d, message %d", del ? "delete" : "keep", limit, m.n);
        check_active(db, id, &m, limit, where);
    }
    if (del) /* nothing inactive is left behind */
        assert_int_equal(count(db, id, 1), count(db, id, 0));
    free(id);
}

/* Every limit from 1 to 8, threads.trim keep and delete in turn, from a fixed seed. */
static void sweep_never_over_the_limit_never_split(void **state)
{
    (void)state;
    mn_db *db[2] = {open_db("sweep-keep", "keep"), open_db("sweep-delete", "delete")};
    rng_state = 0x9e3779b97f4a7c15ULL;
    for (int limit = 1; limit <= 8; limit++)
        sweep_session(db[limit & 1], limit & 1, limit);
    mn_close(db[0]);
    mn_close(db[1]);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "mnemo-turn-limits");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairs_count_every_message),
        cmocka_unit_test(assistant_only_appends_are_limited),
        cmocka_unit_test(a_call_and_its_results_are_one_turn),
        cmocka_unit_test(set_max_turns_keeps_that_many),
        cmocka_unit_test(undo_counts_the_same_turns),
        cmocka_unit_test(sweep_never_over_the_limit_never_split),
    };
    return cmocka_run_group_tests_name("turn_limits", tests, setup, teardown);
}
