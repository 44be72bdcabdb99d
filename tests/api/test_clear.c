/*
 * test_clear.c — seed 000's /clear and seed 003's clear(), prune(max_messages) and role "agent"
 * through mnemo.h: a clear takes the history out of the context but keeps it stored and
 * searchable, hides the summary written before it, is undone (within the turn limit); clearing
 * with the state resets both in one call; the turn limit changes after creation and applies at
 * once; "agent" is stored as assistant; every bad argument is refused before anything changes.
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

static void add(mn_db *db, const char *id, const char *role, const char *text)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    assert_int_equal(mn_role_parse(role, &m.role), MN_OK);
    m.content = text;
    assert_int_equal(mn_append(db, id, &m, 0, NULL), MN_OK);
}

static size_t active_count(mn_db *db, const char *id)
{
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, id, NULL, &l), MN_OK);
    size_t n = l->count;
    mn_messages_free(l);
    return n;
}

static size_t all_count(mn_db *db, const char *id)
{
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.all = 1;
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, id, &o, &l), MN_OK);
    size_t n = l->count;
    mn_messages_free(l);
    return n;
}

static size_t context_kept(mn_db *db, const char *id)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = "summary"; /* the strategy that shows the stored summary */
    o.flags = MN_CONTEXT_NO_FOLD;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, id, &o, &c), MN_OK);
    size_t n = c->kept;
    mn_context_free(c);
    return n;
}

static void clear_keeps_and_undoes(void **state)
{
    (void)state;
    mn_db *db = open_db("clear");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    for (int i = 0; i < 5; i++) {
        char q[64];
        snprintf(q, sizeof q, "question %d about zebras", i);
        add(db, s->id, "user", q);
        add(db, s->id, "agent", "An answer that goes on at length, so that a summary of it is shorter: zebras have"
                                " stripes, the stripes differ between animals, and nobody knows for sure why they"
                                " have them; heat, flies and camouflage are the usual guesses, none proven.");
    }
    char *ev = NULL;
    assert_int_equal(mn_compact(db, s->id, &ev), MN_OK); /* a summary, written before the clear */
    assert_non_null(strstr(ev, "\"ok\""));
    mn_free(ev);
    mn_summary *sum = NULL;
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_OK);
    mn_summary_free(sum);
    assert_true(context_kept(db, s->id) > 0);

    int64_t n = -1;
    assert_int_equal(mn_session_clear(db, s->id, 0, &n), MN_OK);
    assert_int_equal(n, 10);
    assert_int_equal(active_count(db, s->id), 0);
    assert_int_equal(all_count(db, s->id), 10); /* still stored */
    mn_context *w = NULL;
    assert_int_equal(mn_context_build(db, s->id, NULL, &w), MN_OK); /* window */
    assert_int_equal(w->kept, 0);
    mn_context_free(w);
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_NOTFOUND); /* the old summary is out too */
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "zebras", MN_SEARCH_KEYWORD, 10, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 10); /* searchable: every question and answer names them */
    mn_search_hits_free(h);
    mn_session *after = NULL;
    assert_int_equal(mn_session_get(db, s->id, &after), MN_OK);
    assert_int_equal(after->message_count, 10);
    assert_int_equal(after->inactive_count, 10);
    mn_session_free(after);

    add(db, s->id, "user", "a fresh start");
    assert_int_equal(active_count(db, s->id), 1);
    assert_int_equal(context_kept(db, s->id), 1);
    mn_context_opts so = MN_CONTEXT_OPTS_INIT;
    so.strategy = "summary";
    so.flags = MN_CONTEXT_NO_FOLD;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, s->id, &so, &c), MN_OK);
    assert_null(strstr(c->rendered, "zebras")); /* neither the messages nor the old summary */
    assert_non_null(strstr(c->rendered, "a fresh start"));
    assert_int_equal(c->dropped, 0); /* the cleared ones are no candidates: not "dropped for the budget" */
    assert_non_null(strstr(c->report, "\"total\":1,"));
    mn_context_free(c);
    assert_int_equal(mn_context_build(db, s->id, NULL, &c), MN_OK); /* window: the same count */
    assert_int_equal(c->dropped, 0);
    assert_non_null(strstr(c->report, "\"total\":1,"));
    mn_context_free(c);

    assert_int_equal(mn_session_clear(db, s->id, MN_CLEAR_UNDO, &n), MN_OK);
    assert_int_equal(n, 10);
    assert_int_equal(active_count(db, s->id), 11);
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_OK); /* back with its messages */
    mn_summary_free(sum);
    assert_int_equal(mn_session_get(db, s->id, &after), MN_OK);
    assert_int_equal(after->inactive_count, 0);
    mn_session_free(after);
    assert_int_equal(mn_session_clear(db, s->id, MN_CLEAR_UNDO, &n), MN_OK);
    assert_int_equal(n, 0); /* nothing left to undo */

    /* refused before anything changes */
    assert_int_equal(mn_session_clear(db, s->id, 1u << 7, &n), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "flags"));
    assert_int_equal(mn_session_clear(db, s->id, MN_CLEAR_UNDO | MN_CLEAR_STATE, &n), MN_INVALID);
    assert_int_equal(mn_session_clear(db, "not\ta-uuid", 0, &n), MN_INVALID);
    assert_int_equal(mn_session_clear(db, "0190a000-0000-7000-8000-0000000000ff", 0, &n), MN_NOTFOUND);
    assert_int_equal(active_count(db, s->id), 11);
    mn_session_free(s);
    mn_close(db);
}

static void cleared_range(mn_db *db, const char *id, int64_t from, int64_t upto)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, id, &s), MN_OK);
    assert_int_equal(s->cleared_from, from);
    assert_int_equal(s->cleared_seq, upto);
    assert_int_equal(s->inactive_count, s->message_count - (int64_t)active_count(db, id));
    mn_session_free(s);
}

/* An undo brings back what the clears moved out, never what the turn limit had moved out before
 * them, even once the limit is gone ("raising or removing the limit brings nothing back"). */
static void undo_restores_only_what_the_clears_moved(void **state)
{
    (void)state;
    mn_db *db = open_db("undo-range");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    add(db, s->id, "user", "u1");
    add(db, s->id, "assistant", "a1");
    add(db, s->id, "user", "u2");
    add(db, s->id, "assistant", "a2");
    assert_int_equal(mn_session_set_max_turns(db, s->id, 2), MN_OK); /* u1, a1 out */
    assert_int_equal(mn_session_set_max_turns(db, s->id, 0), MN_OK);
    assert_int_equal(active_count(db, s->id), 2);
    int64_t n = -1;
    assert_int_equal(mn_session_clear(db, s->id, 0, &n), MN_OK);
    assert_int_equal(n, 2);
    cleared_range(db, s->id, 3, 4);
    add(db, s->id, "user", "u3");
    assert_int_equal(mn_session_clear(db, s->id, 0, &n), MN_OK); /* a second clear: one range */
    assert_int_equal(n, 1);
    cleared_range(db, s->id, 3, 5);
    assert_int_equal(mn_session_clear(db, s->id, MN_CLEAR_UNDO, &n), MN_OK);
    assert_int_equal(n, 3); /* u2, a2, u3: not u1 and a1 */
    assert_int_equal(active_count(db, s->id), 3);
    cleared_range(db, s->id, 0, 0);
    /* a clear of nothing records an empty range */
    assert_int_equal(mn_session_clear(db, s->id, 0, &n), MN_OK);
    assert_int_equal(mn_session_clear(db, s->id, 0, &n), MN_OK);
    assert_int_equal(n, 0);
    cleared_range(db, s->id, 3, 5);
    assert_int_equal(mn_session_clear(db, s->id, MN_CLEAR_UNDO, &n), MN_OK);
    assert_int_equal(n, 3);
    mn_session_free(s);
    mn_close(db);
}

/* A fold after the clear covers seqs past the cleared ones: kept, it would hide the messages an
 * undo brings back (neither in the summary nor sent). The undo drops it, with an event. */
static void undo_drops_the_summaries_written_since_the_clear(void **state)
{
    (void)state;
    mn_db *db = open_db("undo-fold");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    add(db, s->id, "user", "first question about okapis");
    add(db, s->id, "assistant", "first answer about okapis");
    int64_t n = -1;
    assert_int_equal(mn_session_clear(db, s->id, 0, &n), MN_OK);
    for (int i = 0; i < 4; i++) {
        add(db, s->id, "user", "a later question about zebras");
        add(db, s->id, "assistant", "An answer that goes on at length, so that a summary of it is shorter: zebras have"
                                    " stripes, the stripes differ between animals, and nobody knows for sure why.");
    }
    char *ev = NULL;
    assert_int_equal(mn_compact(db, s->id, &ev), MN_OK);
    assert_non_null(strstr(ev, "\"ok\""));
    mn_free(ev);
    mn_summary *sum = NULL;
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_OK);
    assert_true(sum->covers_upto > 2);
    mn_summary_free(sum);
    assert_int_equal(mn_session_clear(db, s->id, MN_CLEAR_UNDO, &n), MN_OK);
    assert_int_equal(n, 2);
    assert_int_equal(mn_summary_get(db, s->id, &sum), MN_NOTFOUND);
    char *events = NULL;
    assert_int_equal(mn_events_json(db, s->id, 10, &events), MN_OK);
    assert_non_null(strstr(events, "clear_undone"));
    mn_free(events);
    mn_context_opts so = MN_CONTEXT_OPTS_INIT;
    so.strategy = "summary";
    so.flags = MN_CONTEXT_NO_FOLD;
    so.max_tokens = 100000;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, s->id, &so, &c), MN_OK);
    assert_non_null(strstr(c->rendered, "okapis")); /* the messages brought back are sent */
    assert_int_equal(c->kept, 10);
    mn_context_free(c);
    mn_session_free(s);
    mn_close(db);
}

static void clear_with_state_resets_both(void **state)
{
    (void)state;
    mn_db *db = open_db("state");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    add(db, s->id, "user", "my order is O-12345");
    assert_int_equal(mn_state_merge_params(db, s->id, "{\"order_id\":\"O-12345\"}"), MN_OK);
    assert_int_equal(mn_state_set_waiting(db, s->id, "email"), MN_OK);
    char *before = NULL, *empty = NULL, *after = NULL;
    assert_int_equal(mn_state_get(db, s->id, 1, &before), MN_OK);
    assert_non_null(strstr(before, "O-12345"));
    assert_int_equal(mn_session_clear(db, s->id, MN_CLEAR_STATE, NULL), MN_OK);
    assert_int_equal(mn_state_get(db, s->id, 1, &after), MN_OK);
    mn_session *fresh = NULL;
    assert_int_equal(mn_session_create(db, NULL, &fresh), MN_OK);
    assert_int_equal(mn_state_get(db, fresh->id, 1, &empty), MN_OK);
    assert_string_equal(after, empty); /* the empty form */
    assert_int_equal(active_count(db, s->id), 0);
    assert_int_equal(all_count(db, s->id), 1);
    mn_free(before);
    mn_free(after);
    mn_free(empty);
    mn_session_free(fresh);
    mn_session_free(s);
    mn_close(db);
}

static void turn_limit_changes_after_creation(void **state)
{
    (void)state;
    mn_db *db = open_db("limit");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    for (int i = 0; i < 6; i++) {
        add(db, s->id, "user", "q");
        add(db, s->id, "assistant", "a");
    }
    assert_int_equal(mn_session_set_max_turns(db, s->id, 4), MN_OK);
    mn_session *after = NULL;
    assert_int_equal(mn_session_get(db, s->id, &after), MN_OK);
    assert_int_equal(after->max_turns, 4);
    assert_int_equal(after->message_count - after->inactive_count, 4); /* applied at once */
    mn_session_free(after);
    assert_int_equal(active_count(db, s->id), 4);
    add(db, s->id, "user", "q");
    assert_int_equal(active_count(db, s->id), 4); /* and on every append after */
    add(db, s->id, "assistant", "a");
    assert_int_equal(active_count(db, s->id), 4); /* whatever its role (turns: test_turn_limits.c) */
    /* the limits, crossed */
    assert_int_equal(mn_session_set_max_turns(db, s->id, -1), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "max_turns"));
    assert_int_equal(mn_session_set_max_turns(db, s->id, 1000001), MN_INVALID);
    assert_int_equal(mn_session_set_max_turns(db, s->id, 1000000), MN_OK);
    assert_int_equal(mn_session_set_max_turns(db, s->id, 0), MN_OK); /* none: nothing comes back */
    assert_int_equal(mn_session_get(db, s->id, &after), MN_OK);
    assert_int_equal(after->max_turns, 0);
    mn_session_free(after);
    assert_int_equal(active_count(db, s->id), 4);
    mn_session_free(s);
    mn_close(db);
}

static void role_agent_is_assistant(void **state)
{
    (void)state;
    mn_role r = MN_ROLE_USER;
    assert_int_equal(mn_role_parse("agent", &r), MN_OK);
    assert_int_equal(r, MN_ROLE_ASSISTANT);
    assert_int_equal(mn_role_parse("Agent", &r), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "agent"));
    mn_db *db = open_db("agent");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    add(db, s->id, "agent", "hello from the agent");
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, s->id, NULL, &l), MN_OK);
    assert_int_equal(l->items[0].role, MN_ROLE_ASSISTANT);
    assert_string_equal(mn_role_name(l->items[0].role), "assistant");
    mn_messages_free(l);
    mn_session_free(s);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mnemo-clear-XXXXXX");
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
        cmocka_unit_test(clear_keeps_and_undoes),
        cmocka_unit_test(undo_restores_only_what_the_clears_moved),
        cmocka_unit_test(undo_drops_the_summaries_written_since_the_clear),
        cmocka_unit_test(clear_with_state_resets_both),
        cmocka_unit_test(turn_limit_changes_after_creation),
        cmocka_unit_test(role_agent_is_assistant),
    };
    return cmocka_run_group_tests_name("clear", tests, setup, teardown);
}
