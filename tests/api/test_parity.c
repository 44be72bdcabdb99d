/*
 * test_parity.c — the library capabilities issue #14 asked for, through mnemo.h: files with a
 * limit, the thread hand-over summary, message edit (tokens, keyword index, vectors, summaries,
 * counts and events in step), the search metadata filter on keyword, semantic and hybrid search
 * (and an old-size filter still accepted), and forgetting a namespace for real. Runs on SQLite
 * (api/parity) and on PostgreSQL (pg/api/parity).
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

static char dir[200];

static mn_db *open_db(const char *name, const char *embedder)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    if (embedder)
        assert_int_equal(mn_config_set(cfg, "embedder.name", embedder, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static int64_t append(mn_db *db, const char *sid, mn_role role, const char *text, const char *tool, const char *files,
                      const char *metadata)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = role;
    m.content = text;
    m.tool_name = tool;
    m.files = files;
    m.metadata = metadata;
    mn_message *out = NULL;
    assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

static mn_session *new_session(mn_db *db, const char *ns, const char *tool)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.ns = ns;
    o.tool_name = tool;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    return s;
}

static size_t keyword_hits(mn_db *db, const char *query, const mn_search_filter *f)
{
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, query, MN_SEARCH_KEYWORD, 100, f, 0, &h), MN_OK);
    size_t n = h->count;
    mn_search_hits_free(h);
    return n;
}

static void files_limit_and_thread_summary(void **state)
{
    (void)state;
    mn_db *db = open_db("handover", NULL);
    mn_session *s = new_session(db, "team", "chat");
    append(db, s->id, MN_ROLE_USER, "Help me debug this function", "chat", "[\"/b.go\"]", NULL);
    append(db, s->id, MN_ROLE_ASSISTANT, "Line 42 looks wrong", "chat", "[\"/a.go\"]", NULL);
    append(db, s->id, MN_ROLE_USER, "Now review it", "debug", "[\"/c.go\"]", NULL);
    append(db, s->id, MN_ROLE_USER, "And a last look", "codereview", "[\"/d.go\"]", NULL);

    mn_strings *l = NULL;
    assert_int_equal(mn_session_files_n(db, s->id, 2, &l), MN_OK);
    assert_int_equal(l->count, 2);
    assert_string_equal(l->items[0], "/d.go"); /* newest first */
    assert_string_equal(l->items[1], "/c.go");
    mn_strings_free(l);
    assert_int_equal(mn_session_files_n(db, s->id, 0, &l), MN_OK); /* 0: all, unique */
    assert_int_equal(l->count, 4);
    assert_string_equal(l->items[2], "/a.go");
    assert_string_equal(l->items[3], "/b.go");
    mn_strings_free(l);
    assert_int_equal(mn_session_files_n(db, "not-a-uuid", 1, &l), MN_NOTFOUND); /* a key naming nothing */
    assert_null(l);
    assert_int_equal(mn_session_files_n(db, "", 1, &l), MN_INVALID);
    assert_null(l);
    assert_int_equal(mn_session_files_n(db, "0190d7a4-0000-7000-8000-000000000000", 1, &l), MN_NOTFOUND);

    mn_thread_summary *t = NULL;
    assert_int_equal(mn_thread_summary_get(db, s->id, 3, &t), MN_OK);
    assert_string_equal(t->thread_id, s->id);
    assert_string_equal(t->ns, "team");
    assert_string_equal(t->tool_name, "chat");
    assert_int_equal(t->started, s->created_at);
    assert_int_equal(t->turns, 3);
    assert_int_equal(t->messages, 4);
    assert_int_equal(t->tools_used.count, 3); /* in order of first use */
    assert_string_equal(t->tools_used.items[0], "chat");
    assert_string_equal(t->tools_used.items[1], "debug");
    assert_string_equal(t->tools_used.items[2], "codereview");
    assert_int_equal(t->files.count, 3);
    assert_string_equal(t->files.items[0], "/d.go");
    assert_non_null(strstr(t->text, "## Conversation Context\n\n**Thread ID:** "));
    assert_non_null(strstr(t->text, "**Tool:** chat\n**Turns:** 3\n**Tools Used:** chat, debug, codereview\n"));
    assert_non_null(strstr(t->text, "**Files:** /d.go, /c.go, /a.go\n"));
    char *json = NULL;
    assert_int_equal(mn_thread_summary_to_json(t, &json), MN_OK);
    char want[200];
    snprintf(want, sizeof want, "{\"thread_id\":\"%s\",\"namespace\":\"team\",", s->id);
    assert_memory_equal(json, want, strlen(want));
    assert_non_null(strstr(json, "\"tool\":\"chat\""));
    assert_non_null(strstr(json, "\"turns\":3,\"messages\":4,"));
    assert_non_null(strstr(json, "\"tools_used\":[\"chat\",\"debug\",\"codereview\"],\"files\":[\"/d.go\",\"/c.go\",\"/a.go\"]"));
    mn_free(json);
    mn_thread_summary_free(t);

    /* a plain session: no tool, nothing used */
    mn_session *p = new_session(db, NULL, NULL);
    assert_int_equal(mn_thread_summary_get(db, p->id, 0, &t), MN_OK);
    assert_null(t->tool_name);
    assert_int_equal(t->tools_used.count, 0);
    assert_int_equal(t->files.count, 0);
    assert_null(strstr(t->text, "**Tool:**"));
    assert_int_equal(mn_thread_summary_to_json(t, &json), MN_OK);
    assert_non_null(strstr(json, "\"tool\":null"));
    assert_non_null(strstr(json, "\"tools_used\":[],\"files\":[]"));
    mn_free(json);
    mn_thread_summary_free(t);
    assert_int_equal(mn_thread_summary_get(db, "nope", 0, &t), MN_NOTFOUND); /* a key naming nothing */
    assert_null(t);
    mn_session_free(p);
    mn_session_free(s);
    mn_close(db);
}

/* The newest event of a kind in the session's event list (JSON text), or NULL. */
static int has_event(mn_db *db, const char *sid, const char *needle)
{
    char *json = NULL;
    assert_int_equal(mn_events_json(db, sid, 50, &json), MN_OK);
    int found = strstr(json, needle) != NULL;
    mn_free(json);
    return found;
}

static void message_edit(void **state)
{
    (void)state;
    mn_db *db = open_db("edit", "hash");
    mn_session *s = new_session(db, NULL, NULL);
    int64_t first = append(db, s->id, MN_ROLE_USER, "the zebra password is hunter2", NULL, NULL, NULL);
    int64_t second = append(db, s->id, MN_ROLE_ASSISTANT, "noted", NULL, NULL, "{\"k\":1}");
    size_t done = 0;
    assert_int_equal(mn_embed_pending(db, 0, &done), MN_OK);
    assert_int_equal(done, 2);
    assert_int_equal(keyword_hits(db, "hunter2", NULL), 1);
    mn_session *before = NULL;
    assert_int_equal(mn_session_get(db, s->id, &before), MN_OK);
    assert_string_equal(before->title, "the zebra password is hunter2");

    /* refused before anything is written */
    assert_int_equal(mn_message_edit(db, s->id, first, NULL, NULL, NULL), MN_INVALID);
    assert_int_equal(mn_message_edit(db, s->id, 0, "x", NULL, NULL), MN_INVALID);
    assert_int_equal(mn_message_edit(db, s->id, first, "\xff\xfe", NULL, NULL), MN_INVALID);
    assert_int_equal(mn_message_edit(db, s->id, first, "x", "[1]", NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "metadata"));
    assert_int_equal(mn_message_edit(db, s->id, first + 1000, "x", NULL, NULL), MN_NOTFOUND);
    mn_session *other = new_session(db, NULL, NULL);
    assert_int_equal(mn_message_edit(db, other->id, first, "x", NULL, NULL), MN_NOTFOUND); /* not its message */

    mn_message *m = NULL;
    const char *text = "the zebra secret was redacted by the user, a much longer text than before";
    assert_int_equal(mn_message_edit(db, s->id, first, text, "{\"edited\":true}", &m), MN_OK);
    assert_int_equal(m->id, first);
    assert_int_equal(m->seq, 1);
    assert_int_equal(m->role, MN_ROLE_USER);
    assert_string_equal(m->content, text);
    assert_string_equal(m->metadata, "{\"edited\":true}");
    assert_true(m->tokens > before->token_count / 2); /* recounted: the new text is longer */
    mn_message_free(m);

    /* the index follows: the old word is gone, the new one found */
    assert_int_equal(keyword_hits(db, "hunter2", NULL), 0);
    assert_int_equal(keyword_hits(db, "redacted", NULL), 1);
    /* the session's counts follow, the title taken from the old text is the new text's */
    mn_session *after = NULL;
    assert_int_equal(mn_session_get(db, s->id, &after), MN_OK);
    mn_messages *h = NULL;
    assert_int_equal(mn_history(db, s->id, NULL, &h), MN_OK);
    assert_int_equal(after->token_count, h->items[0].tokens + h->items[1].tokens);
    assert_int_equal(after->message_count, 2);
    assert_int_equal(strncmp(after->title, "the zebra secret was redacted", 29), 0);
    mn_messages_free(h);
    /* the old vector went and the message waits to be embedded again */
    int64_t embedded = 0, queued = 0;
    assert_int_equal(mn_embed_counts(db, &embedded, &queued), MN_OK);
    assert_int_equal(embedded, 1);
    assert_int_equal(queued, 1);
    assert_true(has_event(db, s->id, "\"message_edited\""));

    /* metadata NULL keeps it */
    assert_int_equal(mn_message_edit(db, s->id, second, "noted, thanks", NULL, &m), MN_OK);
    assert_string_equal(m->metadata, "{\"k\":1}");
    mn_message_free(m);

    /* a new text of whitespace only gives no title: the old one goes, the next user message sets one */
    mn_session_free(after);
    assert_int_equal(mn_message_edit(db, s->id, first, " \n\t ", NULL, NULL), MN_OK);
    assert_int_equal(mn_session_get(db, s->id, &after), MN_OK);
    assert_null(after->title);
    mn_session_free(after);
    append(db, s->id, MN_ROLE_USER, "  what next?", NULL, NULL, NULL);
    assert_int_equal(mn_session_get(db, s->id, &after), MN_OK);
    assert_string_equal(after->title, "what next?");

    mn_session_free(before);
    mn_session_free(after);
    mn_session_free(other);
    mn_session_free(s);
    mn_close(db);
}

static void search_metadata_filter(void **state)
{
    (void)state;
    mn_db *db = open_db("meta", "hash");
    mn_session *s = new_session(db, NULL, NULL);
    append(db, s->id, MN_ROLE_USER, "deploy the billing service", NULL, NULL, "{\"env\":\"prod\",\"n\":1}");
    append(db, s->id, MN_ROLE_USER, "deploy the billing service again", NULL, NULL, "{\"env\":\"dev\",\"n\":2}");
    append(db, s->id, MN_ROLE_USER, "deploy the billing service once more", NULL, NULL, NULL);
    assert_int_equal(mn_embed_pending(db, 0, NULL), MN_OK);
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    assert_int_equal(keyword_hits(db, "deploy", &f), 3);
    f.metadata = "{\"env\":\"prod\"}";
    const mn_search_mode modes[] = {MN_SEARCH_KEYWORD, MN_SEARCH_SEMANTIC, MN_SEARCH_HYBRID};
    for (size_t i = 0; i < 3; i++) {
        mn_search_hits *h = NULL;
        assert_int_equal(mn_search(db, "deploy billing", modes[i], 10, &f, 0, &h), MN_OK);
        if (h->count != 1)
            fail_msg("mode %s: %zu hits", mn_search_mode_name(modes[i]), h->count);
        assert_string_equal(h->items[0].message.metadata, "{\"env\":\"prod\",\"n\":1}");
        mn_search_hits_free(h);
    }
    f.metadata = "{\"n\":2.0}"; /* numbers compare as numbers */
    assert_int_equal(keyword_hits(db, "deploy", &f), 1);
    f.metadata = "{\"env\":\"prod\",\"n\":2}"; /* every key must match */
    assert_int_equal(keyword_hits(db, "deploy", &f), 0);
    f.metadata = "{\"missing\":null}"; /* a key that is absent does not equal null */
    assert_int_equal(keyword_hits(db, "deploy", &f), 0);
    f.metadata = "{}";
    assert_int_equal(keyword_hits(db, "deploy", &f), 3);

    /* refused, naming the fault */
    mn_search_hits *h = NULL;
    const char *bad[] = {"[1]", "{\"a\":{\"b\":1}}", "{\"a\":[1]}", "{\"bad key\":1}", "not json",
                         ("{\"k1\":1,\"k2\":1,\"k3\":1,\"k4\":1,\"k5\":1,\"k6\":1,\"k7\":1,\"k8\":1,\"k9\":1,"
                         "\"k10\":1,\"k11\":1,\"k12\":1,\"k13\":1,\"k14\":1,\"k15\":1,\"k16\":1,\"k17\":1}")};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f.metadata = bad[i];
        assert_int_equal(mn_search(db, "deploy", MN_SEARCH_KEYWORD, 10, &f, 0, &h), MN_INVALID);
        assert_non_null(strstr(mn_errmsg(), "filter.metadata"));
        assert_null(h);
    }
    f.metadata = "{\"k1\":1,\"k2\":1,\"k3\":1,\"k4\":1,\"k5\":1,\"k6\":1,\"k7\":1,\"k8\":1,\"k9\":1,"
                 "\"k10\":1,\"k11\":1,\"k12\":1,\"k13\":1,\"k14\":1,\"k15\":1,\"k16\":1}"; /* the limit itself */
    assert_int_equal(keyword_hits(db, "deploy", &f), 0);

    /* a caller built before the field existed passes the smaller size: no metadata condition */
    mn_search_filter old = MN_SEARCH_FILTER_INIT;
    old.size = offsetof(mn_search_filter, metadata);
    old.metadata = "{\"env\":\"prod\"}"; /* beyond its size: never read */
    assert_int_equal(keyword_hits(db, "deploy", &old), 3);
    old.size = offsetof(mn_search_filter, since);
    assert_int_equal(mn_search(db, "deploy", MN_SEARCH_KEYWORD, 10, &old, 0, &h), MN_MISUSE);
    mn_session_free(s);
    mn_close(db);
}

static void namespace_forget(void **state)
{
    (void)state;
    mn_db *db = open_db("forget", "hash");
    mn_session *a1 = new_session(db, "acme", NULL), *a2 = new_session(db, "acme", "chat"),
               *b = new_session(db, "other", NULL);
    append(db, a1->id, MN_ROLE_USER, "acme secret plan alpha", NULL, NULL, NULL);
    append(db, a2->id, MN_ROLE_USER, "acme secret plan beta", NULL, "[\"/x\"]", NULL);
    append(db, b->id, MN_ROLE_USER, "other secret plan gamma", NULL, NULL, NULL);
    assert_int_equal(mn_state_merge_params(db, a1->id, "{\"order_id\":\"O-1\"}"), MN_OK);
    assert_int_equal(mn_embed_pending(db, 0, NULL), MN_OK);
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.pinned = 0;
    in.token_cap = 0;
    in.text = "acme likes tea";
    in.ns = "acme";
    mn_memory *mem = NULL;
    assert_int_equal(mn_memory_add(db, &in, &mem), MN_OK);
    mn_memory_in ch = MN_MEMORY_IN_INIT;
    ch.text = "acme likes green tea";
    assert_int_equal(mn_memory_update(db, mem->id, &ch, NULL), MN_OK); /* two versions */
    in.text = "other likes coffee";
    in.ns = "other";
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_OK);

    mn_forget_stats st = {-1, -1};
    assert_int_equal(mn_namespace_forget(db, NULL, &st), MN_INVALID);
    assert_int_equal(mn_namespace_forget(db, "bad ns!", &st), MN_INVALID);
    assert_int_equal(mn_namespace_forget(db, "acme", &st), MN_OK);
    assert_int_equal(st.sessions, 2);
    assert_int_equal(st.memories, 1);

    mn_session *g = NULL;
    assert_int_equal(mn_session_get(db, a1->id, &g), MN_NOTFOUND);
    assert_int_equal(mn_session_get(db, a2->id, &g), MN_NOTFOUND);
    char *state_json = NULL;
    assert_int_equal(mn_state_get(db, a1->id, 0, &state_json), MN_NOTFOUND);
    mn_memory *gone = NULL;
    assert_int_equal(mn_memory_get(db, mem->id, &gone), MN_NOTFOUND);
    assert_null(gone);
    mn_memories *hist = NULL;
    assert_int_equal(mn_memory_history(db, mem->id, &hist), MN_NOTFOUND);
    assert_int_equal(keyword_hits(db, "secret", NULL), 1); /* only the other namespace's */
    int64_t embedded = 0;
    assert_int_equal(mn_embed_counts(db, &embedded, NULL), MN_OK);
    assert_int_equal(embedded, 1);
    mn_sessions *l = NULL;
    assert_int_equal(mn_session_list(db, "acme", 0, 0, &l), MN_OK);
    assert_int_equal(l->count, 0);
    mn_sessions_free(l);
    mn_memories *ml = NULL;
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = "other";
    assert_int_equal(mn_memory_list(db, &q, &ml), MN_OK);
    assert_int_equal(ml->count, 1);
    mn_memories_free(ml);
    /* again: nothing left, not an error */
    assert_int_equal(mn_namespace_forget(db, "acme", &st), MN_OK);
    assert_int_equal(st.sessions, 0);
    assert_int_equal(st.memories, 0);

    /* the list limit is the constant front ends use */
    assert_int_equal(mn_session_list(db, NULL, MN_SESSION_LIST_MAX, 0, &l), MN_OK);
    mn_sessions_free(l);
    assert_int_equal(mn_session_list(db, NULL, MN_SESSION_LIST_MAX + 1, 0, &l), MN_INVALID);
    mn_memory_free(mem);
    mn_session_free(a1);
    mn_session_free(a2);
    mn_session_free(b);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "parity");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(files_limit_and_thread_summary),
        cmocka_unit_test(message_edit),
        cmocka_unit_test(search_metadata_filter),
        cmocka_unit_test(namespace_forget),
    };
    return cmocka_run_group_tests_name("parity", tests, setup, teardown);
}
