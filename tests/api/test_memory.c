/*
 * test_memory.c — long-term memory through mnemo.h: add/get/list, every limit crossed,
 * versions (update closes the previous version), "as of" a past moment, delete (closes) vs
 * forget (erases, history included), provenance, filters by scope, kind and metadata, keyword,
 * semantic (hash embedder) and hybrid search. Runs on SQLite and, as pg/api/test_memory, on
 * PostgreSQL. The clock is injected with MNEMO_TEST_NOW_MS.
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

static char dir[256];

static mn_db *open_db(const char *name, const char *embedder)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    if (embedder)
        assert_int_equal(mn_config_set(cfg, "embedder.name", embedder, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static void set_now(long long ms)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", ms);
    setenv("MNEMO_TEST_NOW_MS", v, 1);
}

#define T0 1800000000000LL
#define DAY 86400000LL

/* Adds in (not pinned, no cap); the new memory's id, which the caller frees. */
static char *add_in(mn_db *db, mn_memory_in *in)
{
    in->pinned = 0;
    in->token_cap = 0;
    mn_memory *m = NULL;
    assert_int_equal(mn_memory_add(db, in, &m), MN_OK);
    char *id = strdup(m->id);
    mn_memory_free(m);
    return id;
}

static char *add(mn_db *db, const char *text, const char *user, const char *kind, const char *meta)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = text;
    in.user_id = user;
    in.kind = kind;
    in.metadata = meta;
    return add_in(db, &in);
}

static int listed(mn_db *db, const mn_memory_query *q, const char *text)
{
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, q, &l), MN_OK);
    int found = 0;
    for (size_t i = 0; i < l->count; i++)
        found += strcmp(l->items[i].text, text) == 0;
    mn_memories_free(l);
    return found;
}

static void add_get_and_limits(void **state)
{
    (void)state;
    set_now(T0);
    mn_db *db = open_db("limits", NULL);
    /* provenance names messages of the memory's namespace: messages 1 and 2 of "default" */
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    mn_message_in said = MN_MESSAGE_IN_INIT;
    said.role = MN_ROLE_USER;
    said.content = "I like tea";
    assert_int_equal(mn_append(db, s->id, &said, 0, NULL), MN_OK);
    assert_int_equal(mn_append(db, s->id, &said, 0, NULL), MN_OK);
    mn_session_free(s);
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.pinned = 0;
    in.token_cap = 0;
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_INVALID); /* no text */
    assert_non_null(strstr(mn_errmsg(), "text"));
    in.text = "";
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_INVALID);
    char *big = malloc(MN_MEMORY_MAX_TEXT + 2);
    memset(big, 'a', MN_MEMORY_MAX_TEXT + 1);
    big[MN_MEMORY_MAX_TEXT + 1] = 0;
    in.text = big;
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_TOOBIG);
    big[MN_MEMORY_MAX_TEXT] = 0; /* exactly at the limit */
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_OK);
    free(big);
    in.text = "likes tea";
    in.kind = "Bad Kind";
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "kind"));
    in.kind = "preference";
    in.metadata = "[1]";
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "metadata"));
    in.metadata = "{\"topic\":\"drinks\"}";
    int64_t src[MN_MEMORY_MAX_SOURCES + 1];
    for (int i = 0; i <= MN_MEMORY_MAX_SOURCES; i++)
        src[i] = i + 1;
    in.sources = src;
    in.n_sources = MN_MEMORY_MAX_SOURCES + 1;
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_TOOBIG);
    assert_non_null(strstr(mn_errmsg(), "sources"));
    in.n_sources = 2;
    in.token_cap = MN_MEMORY_MAX_TOKEN_CAP + 1;
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_INVALID);
    in.token_cap = 0;
    in.valid_from = T0;
    in.valid_to = T0 - 1;
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "valid_to"));
    in.valid_from = in.valid_to = 0;
    in.user_id = "alice";
    mn_memory *m = NULL;
    assert_int_equal(mn_memory_add(db, &in, &m), MN_OK);
    assert_int_equal(m->version, 1);
    assert_int_equal(m->recorded_at, T0);
    assert_int_equal(m->valid_from, T0);
    assert_int_equal(m->valid_to, 0);
    mn_memory *g = NULL;
    assert_int_equal(mn_memory_get(db, m->id, &g), MN_OK);
    assert_string_equal(g->text, "likes tea");
    assert_string_equal(g->kind, "preference");
    assert_string_equal(g->ns, "default");
    assert_string_equal(g->user_id, "alice");
    assert_null(g->agent_id);
    assert_string_equal(g->actor, "api");
    assert_int_equal(g->n_sources, 2); /* provenance kept */
    assert_int_equal(g->sources[1], 2);
    char *json = NULL;
    assert_int_equal(mn_memory_to_json(g, &json), MN_OK);
    assert_non_null(strstr(json, "\"sources\":[1,2]"));
    assert_non_null(strstr(json, "\"metadata\":{\"topic\":\"drinks\"}"));
    mn_free(json);
    mn_memory_free(g);
    assert_int_equal(mn_memory_get(db, "not-a-uuid", &g), MN_INVALID);
    assert_int_equal(mn_memory_get(db, "0190a000-0000-7000-8000-000000000000", &g), MN_NOTFOUND);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.limit = 1001;
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "limit"));
    q.limit = 0;
    q.metadata = "{\"a\":{\"b\":1}}";
    assert_int_equal(mn_memory_list(db, &q, &l), MN_INVALID);
    q.metadata = "{\"bad key\":1}";
    assert_int_equal(mn_memory_list(db, &q, &l), MN_INVALID);
    /* an update cannot move a memory to another scope */
    mn_memory_in up = MN_MEMORY_IN_INIT;
    up.user_id = "bob";
    assert_int_equal(mn_memory_update(db, m->id, &up, NULL), MN_INVALID);
    mn_memory_free(m);
    mn_close(db);
}

static void versions_and_as_of(void **state)
{
    (void)state;
    set_now(T0);
    mn_db *db = open_db("versions", NULL);
    char *id = add(db, "lives in Paris", "alice", NULL, NULL);
    set_now(T0 + 10 * DAY);
    mn_memory_in up = MN_MEMORY_IN_INIT;
    up.text = "lives in Berlin";
    up.reason = "moved";
    mn_memory *m = NULL;
    assert_int_equal(mn_memory_update(db, id, &up, &m), MN_OK);
    assert_int_equal(m->version, 2);
    assert_string_equal(m->id, id);
    mn_memory_free(m);
    /* re-running the same update changes nothing */
    assert_int_equal(mn_memory_update(db, id, &up, &m), MN_OK);
    assert_int_equal(m->version, 2);
    mn_memory_free(m);
    set_now(T0 + 20 * DAY);
    up.text = "lives in Lisbon";
    assert_int_equal(mn_memory_update(db, id, &up, NULL), MN_OK);
    set_now(T0 + 30 * DAY);

    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.user_id = "alice";
    assert_int_equal(listed(db, &q, "lives in Lisbon"), 1);
    assert_int_equal(listed(db, &q, "lives in Paris"), 0);
    q.as_of = T0 + 5 * DAY;
    assert_int_equal(listed(db, &q, "lives in Paris"), 1);
    assert_int_equal(listed(db, &q, "lives in Berlin"), 0);
    q.as_of = T0 + 15 * DAY;
    assert_int_equal(listed(db, &q, "lives in Berlin"), 1);
    assert_int_equal(listed(db, &q, "lives in Paris"), 0);
    assert_int_equal(listed(db, &q, "lives in Lisbon"), 0);
    q.as_of = T0 - DAY; /* before anything was true */
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 0);
    mn_memories_free(l);

    mn_memories *h = NULL;
    assert_int_equal(mn_memory_history(db, id, &h), MN_OK);
    assert_int_equal(h->count, 3);
    assert_string_equal(h->items[0].text, "lives in Paris");
    assert_int_equal(h->items[0].valid_to, T0 + 10 * DAY);      /* closed where Berlin began */
    assert_int_equal(h->items[0].superseded_at, T0 + 10 * DAY);
    assert_string_equal(h->items[1].change, "update");
    assert_string_equal(h->items[1].reason, "moved");
    assert_int_equal(h->items[2].superseded_at, 0);
    mn_memories_free(h);

    /* a correction of what was never true: valid_from = the old valid_from */
    mn_memory *cur = NULL;
    assert_int_equal(mn_memory_get(db, id, &cur), MN_OK);
    up.text = "lives in Lisbon, Portugal";
    up.valid_from = cur->valid_from;
    assert_int_equal(mn_memory_update(db, id, &up, NULL), MN_OK);
    mn_memory_free(cur);
    q.as_of = T0 + 25 * DAY;
    assert_int_equal(listed(db, &q, "lives in Lisbon, Portugal"), 1);
    assert_int_equal(listed(db, &q, "lives in Lisbon"), 0);

    /* delete closes; the fact stays true for the past */
    set_now(T0 + 40 * DAY);
    assert_int_equal(mn_memory_delete(db, id, 0, "test", "wrong user"), MN_OK);
    assert_int_equal(mn_memory_delete(db, id, 0, NULL, NULL), MN_INVALID); /* already closed */
    /* added and deleted in the same millisecond (the clock stands still here): never true, so a
     * read in that millisecond no longer finds it */
    mn_memory_in quick = MN_MEMORY_IN_INIT;
    quick.text = "A fact taken back at once";
    quick.pinned = 0;
    quick.token_cap = 0;
    mn_memory *qm = NULL;
    assert_int_equal(mn_memory_add(db, &quick, &qm), MN_OK);
    assert_int_equal(mn_memory_delete(db, qm->id, 0, NULL, NULL), MN_OK);
    assert_int_equal(mn_memory_delete(db, qm->id, 0, NULL, NULL), MN_INVALID); /* already closed */
    mn_memory *qc = NULL;
    assert_int_equal(mn_memory_get(db, qm->id, &qc), MN_OK);
    assert_string_equal(qc->change, "delete");
    assert_int_equal(qc->valid_to, qm->valid_from);
    mn_memory_free(qc);
    mn_memory_query now_q = MN_MEMORY_QUERY_INIT;
    assert_int_equal(listed(db, &now_q, "A fact taken back at once"), 0);
    mn_memory_free(qm);
    assert_int_equal(mn_memory_update(db, id, &up, NULL), MN_INVALID);
    q.as_of = 0;
    assert_int_equal(listed(db, &q, "lives in Lisbon, Portugal"), 0);
    q.include_closed = 1;
    assert_int_equal(listed(db, &q, "lives in Lisbon, Portugal"), 1);
    q.include_closed = 0;
    q.as_of = T0 + 35 * DAY;
    assert_int_equal(listed(db, &q, "lives in Lisbon, Portugal"), 1);
    assert_int_equal(mn_memory_history(db, id, &h), MN_OK);
    assert_int_equal(h->count, 5);
    assert_string_equal(h->items[4].change, "delete");
    assert_string_equal(h->items[4].actor, "test");
    assert_int_equal(h->items[4].valid_to, T0 + 40 * DAY);
    mn_memories_free(h);

    /* forget erases every version */
    assert_int_equal(mn_memory_forget(db, id), MN_OK);
    assert_int_equal(mn_memory_history(db, id, &h), MN_NOTFOUND);
    assert_int_equal(mn_memory_get(db, id, &cur), MN_NOTFOUND);
    assert_int_equal(mn_memory_forget(db, id), MN_NOTFOUND);
    q.as_of = T0 + 5 * DAY;
    assert_int_equal(listed(db, &q, "lives in Paris"), 0);
    mn_memories *s = NULL;
    assert_int_equal(mn_memory_search(db, "Paris", MN_SEARCH_KEYWORD, &q, &s), MN_OK);
    assert_int_equal(s->count, 0); /* gone from the keyword index too */
    mn_memories_free(s);
    free(id);
    mn_close(db);
}

/* Adds text valid over [from, to) (0: not given) for user "vt". */
static char *add_valid(mn_db *db, const char *text, int64_t from, int64_t to)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = text;
    in.user_id = "vt";
    in.valid_from = from;
    in.valid_to = to;
    return add_in(db, &in);
}

static void update_text(mn_db *db, const char *id, const char *text, int64_t from)
{
    mn_memory_in up = MN_MEMORY_IN_INIT;
    up.text = text;
    up.valid_from = from;
    assert_int_equal(mn_memory_update(db, id, &up, NULL), MN_OK);
}

/* The one text of user vt's memories as of a moment (0: now), or "" when none; fails on more. */
static const char *only_text(mn_db *db, int64_t as_of, char *buf, size_t cap)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.user_id = "vt";
    q.as_of = as_of;
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_true(l->count <= 1);
    snprintf(buf, cap, "%s", l->count ? l->items[0].text : "");
    mn_memories_free(l);
    return buf;
}

/* Valid time: at most one version of a memory is valid at any instant; an update keeps the end
 * it does not change; a delete never extends a validity; "now" is what is valid now. */
static void valid_time_rules(void **state)
{
    (void)state;
    char t[64];
    set_now(T0);
    mn_db *db = open_db("valid_time", NULL);

    /* a later update valid from between two earlier versions takes over from its valid_from on */
    char *city = add_valid(db, "City: Lisbon", T0 - 60 * DAY, 0);
    update_text(db, city, "City: Porto", T0 - 30 * DAY);
    update_text(db, city, "City: Braga", T0 - 45 * DAY);
    assert_string_equal(only_text(db, T0 - 50 * DAY, t, sizeof t), "City: Lisbon");
    assert_string_equal(only_text(db, T0 - 40 * DAY, t, sizeof t), "City: Braga");
    assert_string_equal(only_text(db, T0 - 20 * DAY, t, sizeof t), "City: Braga");
    assert_string_equal(only_text(db, 0, t, sizeof t), "City: Braga");
    assert_int_equal(mn_memory_forget(db, city), MN_OK);

    /* an update that does not give valid_to keeps it */
    char *job = add_valid(db, "Contract ends in June", 0, T0 + 30 * DAY);
    update_text(db, job, "The Acme contract ends in June", 0);
    mn_memory *m = NULL;
    assert_int_equal(mn_memory_get(db, job, &m), MN_OK);
    assert_int_equal(m->version, 2);
    assert_int_equal(m->valid_to, T0 + 30 * DAY);
    mn_memory_free(m);
    /* a delete at a moment after the end would extend it: refused, nothing written */
    assert_int_equal(mn_memory_delete(db, job, T0 + 40 * DAY, NULL, NULL), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "valid_to"));
    assert_int_equal(mn_memory_get(db, job, &m), MN_OK);
    assert_int_equal(m->version, 2);
    mn_memory_free(m);
    assert_int_equal(mn_memory_delete(db, job, T0 + 10 * DAY, NULL, NULL), MN_OK);
    assert_int_equal(mn_memory_get(db, job, &m), MN_OK);
    assert_int_equal(m->valid_to, T0 + 10 * DAY);
    mn_memory_free(m);
    assert_int_equal(mn_memory_forget(db, job), MN_OK);

    /* a fact valid from tomorrow is not true now, only as of then */
    char *plan = add_valid(db, "Starts at the new job", T0 + DAY, 0);
    assert_string_equal(only_text(db, 0, t, sizeof t), "");
    assert_string_equal(only_text(db, T0 + 2 * DAY, t, sizeof t), "Starts at the new job");
    /* deleted before it began: it never becomes true */
    assert_int_equal(mn_memory_delete(db, plan, 0, NULL, NULL), MN_OK);
    assert_int_equal(mn_memory_get(db, plan, &m), MN_OK);
    assert_string_equal(m->change, "delete");
    assert_int_equal(m->valid_to, T0 + DAY);
    mn_memory_free(m);
    assert_string_equal(only_text(db, T0 + 2 * DAY, t, sizeof t), "");
    free(city);
    free(job);
    free(plan);
    mn_close(db);
}

static void filters_and_search(void **state)
{
    (void)state;
    set_now(T0);
    mn_db *db = open_db("search", "hash");
    char *a = add(db, "Alice is vegetarian and avoids fish", "alice", "preference", "{\"topic\":\"food\",\"n\":3}");
    char *b = add(db, "Bob is vegetarian too", "bob", "preference", "{\"topic\":\"food\"}");
    char *c = add(db, "The project uses PostgreSQL 15", NULL, "fact", "{\"topic\":\"infra\"}");
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.user_id = "alice";
    assert_int_equal(listed(db, &q, "Bob is vegetarian too"), 0);
    assert_int_equal(listed(db, &q, "Alice is vegetarian and avoids fish"), 1);
    q.user_id = NULL;
    q.kind = "fact";
    assert_int_equal(listed(db, &q, "The project uses PostgreSQL 15"), 1);
    assert_int_equal(listed(db, &q, "Bob is vegetarian too"), 0);
    q.kind = NULL;
    q.metadata = "{\"topic\":\"food\"}";
    assert_int_equal(listed(db, &q, "Bob is vegetarian too"), 1);
    assert_int_equal(listed(db, &q, "The project uses PostgreSQL 15"), 0);
    q.metadata = "{\"n\":3}";
    assert_int_equal(listed(db, &q, "Alice is vegetarian and avoids fish"), 1);
    assert_int_equal(listed(db, &q, "Bob is vegetarian too"), 0);
    q.metadata = NULL;

    mn_memories *s = NULL;
    assert_int_equal(mn_memory_search(db, "vegetarian", MN_SEARCH_KEYWORD, &q, &s), MN_OK);
    assert_int_equal(s->count, 2);
    assert_true(s->items[0].score > 0);
    mn_memories_free(s);
    q.user_id = "bob";
    assert_int_equal(mn_memory_search(db, "vegetarian", MN_SEARCH_KEYWORD, &q, &s), MN_OK);
    assert_int_equal(s->count, 1);
    assert_string_equal(s->items[0].id, b);
    mn_memories_free(s);
    q.user_id = NULL;
    assert_int_equal(mn_memory_search(db, "which database does the project use postgresql", MN_SEARCH_SEMANTIC, &q,
                                      &s),
                     MN_OK);
    assert_true(s->count >= 1);
    assert_string_equal(s->items[0].id, c);
    mn_memories_free(s);
    q.limit = 1;
    assert_int_equal(mn_memory_search(db, "vegetarian fish", MN_SEARCH_HYBRID, &q, &s), MN_OK);
    assert_int_equal(s->count, 1);
    assert_string_equal(s->items[0].id, a);
    mn_memories_free(s);
    /* a semantic search with a filter returns every match that passes it (exact scan) */
    q.limit = 10;
    q.user_id = "bob";
    assert_int_equal(mn_memory_search(db, "PostgreSQL", MN_SEARCH_SEMANTIC, &q, &s), MN_OK);
    assert_int_equal(s->count, 1);
    assert_string_equal(s->items[0].id, b);
    mn_memories_free(s);
    assert_int_equal(mn_memory_search(db, "", MN_SEARCH_KEYWORD, &q, &s), MN_INVALID);
    free(a);
    free(b);
    free(c);
    mn_close(db);
}

static void semantic_needs_embedder(void **state)
{
    (void)state;
    mn_db *db = open_db("noembed", NULL);
    mn_memories *s = NULL;
    assert_int_equal(mn_memory_search(db, "x", MN_SEARCH_SEMANTIC, NULL, &s), MN_UNAVAILABLE);
    assert_int_equal(mn_memory_search(db, "x", MN_SEARCH_AUTO, NULL, &s), MN_OK); /* keyword */
    mn_memories_free(s);
    mn_close(db);
}

static int64_t say(mn_db *db, const char *sid, mn_role role, const char *text)
{
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.role = role;
    in.content = text;
    mn_message *m = NULL;
    assert_int_equal(mn_append(db, sid, &in, 0, &m), MN_OK);
    int64_t id = m->id;
    mn_message_free(m);
    return id;
}

static void offline_extraction(void **state)
{
    (void)state;
    set_now(T0);
    mn_db *db = open_db("extract", NULL);
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.ns = "acme";
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &so, &s), MN_OK);
    int64_t m1 = say(db, s->id, MN_ROLE_USER, "Hi! I live in Lisbon. Please remember that the deploy key rotates monthly.");
    say(db, s->id, MN_ROLE_ASSISTANT, "Noted. I live in the cloud, remember that."); /* never from the assistant */
    say(db, s->id, MN_ROLE_USER, "Do I prefer tea? My favourite colour is green?"); /* questions are not facts */
    mn_extract_stats st;
    assert_int_equal(mn_memory_extract(db, s->id, "offline", &st), MN_OK);
    assert_int_equal(st.messages, 2);
    assert_int_equal(st.added, 2);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = "acme";
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 2);
    for (size_t i = 0; i < l->count; i++) {
        assert_int_equal(l->items[i].n_sources, 1); /* provenance: the message it came from */
        assert_int_equal(l->items[i].sources[0], m1);
        assert_string_equal(l->items[i].actor, "extractor:offline");
    }
    mn_memories_free(l);
    assert_int_equal(listed(db, &q, "User lives in Lisbon"), 1);
    assert_int_equal(listed(db, &q, "The deploy key rotates monthly"), 1);

    /* re-running over the same turns changes nothing */
    assert_int_equal(mn_memory_extract(db, s->id, NULL, &st), MN_OK);
    assert_int_equal(st.messages + st.added + st.updated, 0);

    /* a session deleted and made again with its id starts its extraction afresh: the watermark
     * of the deleted one (seq 3) would have skipped the new session's first three turns */
    mn_session_opts again = MN_SESSION_OPTS_INIT;
    again.ns = "acme";
    again.id = "01900000-0000-7000-8000-00000000e0a1";
    mn_session *r = NULL;
    assert_int_equal(mn_session_create(db, &again, &r), MN_OK);
    say(db, r->id, MN_ROLE_USER, "Hello there.");
    say(db, r->id, MN_ROLE_USER, "Fine, thanks.");
    say(db, r->id, MN_ROLE_USER, "Nothing to note.");
    assert_int_equal(mn_memory_extract(db, r->id, "offline", &st), MN_OK);
    assert_int_equal(mn_session_delete(db, r->id), MN_OK);
    mn_session_free(r);
    assert_int_equal(mn_session_create(db, &again, &r), MN_OK);
    say(db, r->id, MN_ROLE_USER, "Remember that the backup runs nightly.");
    assert_int_equal(mn_memory_extract(db, r->id, "offline", &st), MN_OK);
    assert_int_equal(st.messages, 1);
    assert_int_equal(st.added, 1);
    mn_session_free(r);

    /* a keyed fact said again with another value updates the memory, valid from when it was said */
    set_now(T0 + 30 * DAY);
    say(db, s->id, MN_ROLE_USER, "Big news! I moved to Porto. I prefer short answers.");
    say(db, s->id, MN_ROLE_USER, "Remember that the deploy key rotates monthly. From now on answer in English.");
    assert_int_equal(mn_memory_extract(db, s->id, "offline", &st), MN_OK);
    assert_int_equal(st.added, 2);     /* the preference and the instruction */
    assert_int_equal(st.updated, 1);   /* Lisbon → Porto */
    assert_int_equal(st.unchanged, 1); /* the deploy key, said again */
    assert_int_equal(listed(db, &q, "User lives in Porto"), 1);
    assert_int_equal(listed(db, &q, "User lives in Lisbon"), 0);
    assert_int_equal(listed(db, &q, "From now on answer in English"), 1);
    assert_int_equal(listed(db, &q, "User prefers short answers"), 1);
    q.as_of = T0 + DAY;
    assert_int_equal(listed(db, &q, "User lives in Lisbon"), 1);
    assert_int_equal(listed(db, &q, "User lives in Porto"), 0);
    assert_int_equal(mn_memory_extract(db, s->id, "offline", &st), MN_OK);
    assert_int_equal(st.added + st.updated, 0);

    /* a choice between two things is one preference, whichever way round it is said; a
     * preference without its alternative stays beside the others */
    set_now(T0 + 40 * DAY);
    say(db, s->id, MN_ROLE_USER, "I prefer tea over coffee.");
    assert_int_equal(mn_memory_extract(db, s->id, "offline", &st), MN_OK);
    assert_int_equal(st.added, 1);
    set_now(T0 + 50 * DAY);
    say(db, s->id, MN_ROLE_USER, "Actually, I prefer Coffee to tea. I prefer dark mode.");
    assert_int_equal(mn_memory_extract(db, s->id, "offline", &st), MN_OK);
    assert_int_equal(st.updated, 1); /* tea over coffee → coffee to tea */
    assert_int_equal(st.added, 1);   /* dark mode */
    q.as_of = 0;
    assert_int_equal(listed(db, &q, "User prefers Coffee to tea"), 1);
    assert_int_equal(listed(db, &q, "User prefers tea over coffee"), 0);
    assert_int_equal(listed(db, &q, "User prefers dark mode"), 1);
    assert_int_equal(listed(db, &q, "User prefers short answers"), 1);
    q.as_of = T0 + 45 * DAY;
    assert_int_equal(listed(db, &q, "User prefers tea over coffee"), 1);
    assert_int_equal(mn_memory_extract(db, s->id, "bogus", &st), MN_INVALID);
    assert_int_equal(mn_memory_extract(db, "0190a000-0000-7000-8000-000000000000", NULL, &st), MN_NOTFOUND);
    mn_session_free(s);
    mn_close(db);
}

/* memory.extract is off for the database (the default): a session whose memory_scope.extract is
 * offline opts in, and its turns are extracted in the background; the others' are not. */
static void session_opts_in(void **state)
{
    (void)state;
    set_now(T0);
    mn_db *db = open_db("optin", NULL);
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.ns = "acme";
    mn_session *plain = NULL, *in = NULL;
    assert_int_equal(mn_session_create(db, &so, &plain), MN_OK);
    say(db, plain->id, MN_ROLE_USER, "I live in Lima."); /* before any session opted in */
    so.metadata = "{\"memory_scope\":{\"user_id\":\"ana\",\"extract\":\"offline\"}}";
    assert_int_equal(mn_session_create(db, &so, &in), MN_OK);
    say(db, in->id, MN_ROLE_USER, "I live in Quito.");
    say(db, plain->id, MN_ROLE_USER, "I live in Bogota.");
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = "acme";
    /* the worker runs about 100 ms after the append; wait for its result, generously */
    for (int i = 0; i < 400 && !listed(db, &q, "User lives in Quito"); i++)
        usleep(50000);
    assert_int_equal(listed(db, &q, "User lives in Quito"), 1);
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 1); /* nothing from the session that did not opt in */
    assert_string_equal(l->items[0].user_id, "ana");
    assert_string_equal(l->items[0].actor, "extractor:offline");
    mn_memories_free(l);
    mn_close(db);
    /* another handle knows from the database that a session opted in */
    set_now(T0 + DAY);
    db = open_db("optin", NULL);
    say(db, in->id, MN_ROLE_USER, "I moved to Cusco.");
    for (int i = 0; i < 400 && !listed(db, &q, "User lives in Cusco"); i++)
        usleep(50000);
    assert_int_equal(listed(db, &q, "User lives in Cusco"), 1);
    assert_int_equal(listed(db, &q, "User lives in Quito"), 0); /* updated: one home */
    mn_session_free(plain);
    mn_session_free(in);
    mn_close(db);
}

/* A session whose metadata names a memory_scope: its memories take that user, agent and session,
 * and its statements are compared only with that scope's memories. */
static mn_session *scoped_session(mn_db *db, const char *metadata)
{
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.ns = "acme";
    so.metadata = metadata;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &so, &s), MN_OK);
    return s;
}

static void scoped_extraction(void **state)
{
    (void)state;
    set_now(T0);
    mn_db *db = open_db("scoped", NULL);
    mn_session *alex = scoped_session(db, "{\"memory_scope\":{\"user_id\":\"alex\",\"session_id\":\"run-1\"}}");
    mn_session *sam = scoped_session(db, "{\"memory_scope\":{\"user_id\":\"sam\",\"agent_id\":\"bot\"}}");
    say(db, alex->id, MN_ROLE_USER, "My city is Lisbon.");
    say(db, sam->id, MN_ROLE_USER, "My city is Oslo.");
    mn_extract_stats st;
    assert_int_equal(mn_memory_extract(db, alex->id, "offline", &st), MN_OK);
    assert_int_equal(st.added, 1);
    assert_int_equal(mn_memory_extract(db, sam->id, "offline", &st), MN_OK);
    assert_int_equal(st.added, 1); /* another user's city: added, not an update of alex's */
    assert_int_equal(st.updated, 0);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.user_id = "alex";
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 1);
    assert_string_equal(l->items[0].text, "User's city is Lisbon");
    assert_string_equal(l->items[0].session_id, "run-1");
    assert_null(l->items[0].agent_id);
    mn_memories_free(l);
    q.user_id = "sam";
    q.agent_id = "bot";
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 1);
    assert_string_equal(l->items[0].text, "User's city is Oslo");
    assert_null(l->items[0].session_id);
    mn_memories_free(l);

    /* "my city is" and "I moved to" are one fact (key home): the move updates it */
    set_now(T0 + DAY);
    say(db, alex->id, MN_ROLE_USER, "I moved to Porto.");
    assert_int_equal(mn_memory_extract(db, alex->id, "offline", &st), MN_OK);
    assert_int_equal(st.updated, 1);
    assert_int_equal(st.added, 0);
    q.user_id = "alex";
    q.agent_id = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 1);
    assert_string_equal(l->items[0].text, "User lives in Porto");
    mn_memories_free(l);

    /* a bad memory_scope is refused, naming it; nothing is read */
    mn_session *bad = scoped_session(db, "{\"memory_scope\":{\"user\":\"x\"}}");
    say(db, bad->id, MN_ROLE_USER, "My city is Rome.");
    assert_int_equal(mn_memory_extract(db, bad->id, "offline", &st), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "memory_scope.user"));
    mn_session *bad2 = scoped_session(db, "{\"memory_scope\":[\"alex\"]}");
    say(db, bad2->id, MN_ROLE_USER, "My city is Rome.");
    assert_int_equal(mn_memory_extract(db, bad2->id, "offline", &st), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "memory_scope"));
    mn_session_free(bad);
    mn_session_free(bad2);
    mn_session_free(alex);
    mn_session_free(sam);
    mn_close(db);
}

/* Property: a keyword search within one user's memories gives what a search over every user
 * gives for that user — the same memories in the same order with the same scores — whichever
 * plan the store picks for the scope (random texts, several users and queries). */
static void scoped_ranking_equals_filtered(void **state)
{
    (void)state;
    set_now(T0);
    mn_db *db = open_db("scoped_rank", NULL);
    static const char *words[] = {"deploy", "key", "city", "tea", "coffee", "vim", "rotates", "monthly",
                                  "project", "database", "staging", "user", "prefers", "lives"};
    unsigned seed = 12345;
    char text[200];
    for (int i = 0; i < 400; i++) {
        size_t n = 0;
        int len = 3 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 6;
        for (int w = 0; w < len; w++)
            n += (size_t)snprintf(text + n, sizeof text - n, "%s%s", w ? " " : "",
                                  words[((seed = seed * 1103515245u + 12345u) >> 16) % 14]);
        char user[16];
        snprintf(user, sizeof user, "u%u", ((seed = seed * 1103515245u + 12345u) >> 16) % 7);
        mn_memory_in in = MN_MEMORY_IN_INIT;
        in.text = text;
        in.user_id = user;
        in.pinned = 0;
        in.token_cap = 0;
        assert_int_equal(mn_memory_add(db, &in, NULL), MN_OK);
    }
    const char *queries[] = {"deploy key", "tea", "city lives", "project database staging", "vim prefers user"};
    for (size_t qi = 0; qi < 5; qi++) {
        mn_memory_query all = MN_MEMORY_QUERY_INIT;
        all.limit = 1000;
        mn_memories *everyone = NULL;
        assert_int_equal(mn_memory_search(db, queries[qi], MN_SEARCH_KEYWORD, &all, &everyone), MN_OK);
        for (int u = 0; u < 7; u++) {
            char user[16];
            snprintf(user, sizeof user, "u%d", u);
            mn_memory_query q = MN_MEMORY_QUERY_INIT;
            q.user_id = user;
            q.limit = 10;
            mn_memories *mine = NULL;
            assert_int_equal(mn_memory_search(db, queries[qi], MN_SEARCH_KEYWORD, &q, &mine), MN_OK);
            size_t k = 0;
            for (size_t i = 0; i < everyone->count && k < mine->count; i++) {
                if (strcmp(everyone->items[i].user_id, user) != 0)
                    continue;
                assert_string_equal(everyone->items[i].id, mine->items[k].id);
                assert_true(everyone->items[i].score == mine->items[k].score);
                k++;
            }
            assert_int_equal(k, mine->count);
            mn_memories_free(mine);
        }
        mn_memories_free(everyone);
    }
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "memory");
}

static int teardown(void **state)
{
    (void)state;
    unsetenv("MNEMO_TEST_NOW_MS");
    return test_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(add_get_and_limits),
        cmocka_unit_test(versions_and_as_of),
        cmocka_unit_test(valid_time_rules),
        cmocka_unit_test(filters_and_search),
        cmocka_unit_test(semantic_needs_embedder),
        cmocka_unit_test(offline_extraction),
        cmocka_unit_test(scoped_extraction),
        cmocka_unit_test(session_opts_in),
        cmocka_unit_test(scoped_ranking_equals_filtered),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
