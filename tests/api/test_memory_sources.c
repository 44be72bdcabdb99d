/*
 * test_memory_sources.c — a memory's provenance through mnemo.h: sources and session_id name the
 * memory's own namespace (another namespace's message or session is refused with the words of a
 * missing one), mn_memory_get_in, and mn_memory_erase_sources (the messages a memory came from
 * go once no live memory of the namespace names them; a memory of another namespace neither keeps
 * nor erases anything). Runs on SQLite and, as pg/api/test_memory_sources, on PostgreSQL.
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

/* A new session of namespace ns (metadata may be NULL); its id in out. */
static void session(mn_db *db, const char *ns, const char *metadata, char out[37])
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.ns = ns;
    o.metadata = metadata;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    snprintf(out, 37, "%s", s->id);
    mn_session_free(s);
}

static int64_t say(mn_db *db, const char *sid, const char *text)
{
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.role = MN_ROLE_USER;
    in.content = text;
    mn_message *m = NULL;
    assert_int_equal(mn_append(db, sid, &in, 0, &m), MN_OK);
    int64_t id = m->id;
    mn_message_free(m);
    return id;
}

/* mn_memory_add of text in ns with these sources and session_id; the status, *id the new id. */
static mn_status remember(mn_db *db, const char *ns, const char *text, const int64_t *src, size_t n,
                          const char *session_id, char id[37])
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = text;
    in.ns = ns;
    in.sources = src;
    in.n_sources = n;
    in.session_id = session_id;
    in.pinned = 0;
    in.token_cap = 0;
    mn_memory *m = NULL;
    mn_status st = mn_memory_add(db, &in, &m);
    if (!st && id)
        snprintf(id, 37, "%s", m->id);
    mn_memory_free(m);
    return st;
}

static int messages(mn_db *db, const char *sid)
{
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.all = 1;
    mn_messages *l = NULL;
    if (mn_history(db, sid, &ho, &l) != MN_OK)
        return -1;
    int n = (int)l->count;
    mn_messages_free(l);
    return n;
}

static void provenance_is_the_namespace_own(void **state)
{
    (void)state;
    mn_db *db = open_db("provenance");
    char a[37], b[37], id[37];
    session(db, "alpha", NULL, a);
    session(db, "beta", NULL, b);
    int64_t ma = say(db, a, "alpha's words"), mb = say(db, b, "beta's words");

    int64_t theirs[] = {mb, ma}, missing[] = {mb, 999999};
    assert_int_equal(remember(db, "beta", "spoof", theirs, 2, NULL, NULL), MN_NOTFOUND);
    char foreign[256];
    snprintf(foreign, sizeof foreign, "%s", mn_errmsg());
    assert_int_equal(remember(db, "beta", "spoof", missing, 2, NULL, NULL), MN_NOTFOUND);
    char msg[64];
    snprintf(msg, sizeof msg, "sources: message %lld not found in namespace 'beta'", (long long)ma);
    assert_string_equal(foreign, msg); /* a missing one reads the same, its id aside */
    assert_string_equal(mn_errmsg(), "sources: message 999999 not found in namespace 'beta'");

    assert_int_equal(remember(db, "beta", "spoof", NULL, 0, a, NULL), MN_NOTFOUND);
    snprintf(foreign, sizeof foreign, "session_id: session %s not found in namespace 'beta'", a);
    assert_string_equal(mn_errmsg(), foreign);
    assert_int_equal(remember(db, "beta", "spoof", NULL, 0, "0190a000-0000-7000-8000-0000000000ff", NULL),
                     MN_NOTFOUND);
    assert_int_equal(remember(db, "beta", "a label", NULL, 0, "run-1", NULL), MN_OK);
    assert_int_equal(remember(db, "beta", "mine", &mb, 1, b, id), MN_OK);

    mn_memory_in up = MN_MEMORY_IN_INIT;
    up.sources = &ma;
    up.n_sources = 1;
    assert_int_equal(mn_memory_update(db, id, &up, NULL), MN_NOTFOUND);
    assert_non_null(strstr(mn_errmsg(), "sources: message"));

    /* mn_memory_get_in: another namespace's memory is missing, closed or not */
    mn_memory *m = NULL;
    assert_int_equal(mn_memory_get_in(db, "beta", id, &m), MN_OK);
    mn_memory_free(m);
    assert_int_equal(mn_memory_delete(db, id, 0, NULL, NULL), MN_OK);
    assert_int_equal(mn_memory_get_in(db, "alpha", id, &m), MN_NOTFOUND);
    assert_null(m);
    snprintf(msg, sizeof msg, "memory %s: no such memory", id);
    assert_string_equal(mn_errmsg(), msg);
    assert_int_equal(mn_memory_get_in(db, NULL, id, &m), MN_OK);
    mn_memory_free(m);
    mn_close(db);
}

struct text {
    const char *p;
    size_t len, off;
};

static long read_text(void *user, char *buf, size_t cap)
{
    struct text *t = user;
    size_t n = t->len - t->off < cap ? t->len - t->off : cap;
    memcpy(buf, t->p + t->off, n);
    t->off += n;
    return (long)n;
}

static void erase_sources(void **state)
{
    (void)state;
    mn_db *db = open_db("erase");
    char s[37], s2[37], x[37], y[37], z[37];
    session(db, "alpha", NULL, s);
    session(db, "alpha", NULL, s2);
    int64_t m1 = say(db, s, "one"), m2 = say(db, s, "two"), m4 = say(db, s2, "four");
    say(db, s, "three");
    int64_t both[] = {m1, m2};
    assert_int_equal(remember(db, "alpha", "x", both, 2, NULL, x), MN_OK);
    assert_int_equal(remember(db, "alpha", "y", &m2, 1, NULL, y), MN_OK);
    assert_int_equal(remember(db, "alpha", "z", &m4, 1, NULL, z), MN_OK);
    /* a live memory of another namespace naming m1 (as an import may bring): it keeps nothing */
    char line[1024];
    int len = snprintf(line, sizeof line,
                       "{\"format\":\"mnemo-export\",\"version\":1}\n"
                       "{\"type\":\"memory\",\"id\":\"0190a000-0000-7000-8000-0000000000aa\",\"version\":1,"
                       "\"text\":\"theirs\",\"kind\":\"fact\",\"namespace\":\"beta\",\"metadata\":{},"
                       "\"sources\":[%lld],\"pinned\":false,\"token_cap\":0,\"valid_from\":1,\"recorded_at\":1,"
                       "\"change\":\"add\",\"actor\":\"api\"}\n",
                       (long long)m1);
    struct text t = {line, (size_t)len, 0};
    assert_int_equal(mn_import(db, read_text, &t, NULL), MN_OK);

    int64_t erased = -1;
    assert_int_equal(mn_memory_erase_sources(db, s, x, &erased), MN_OK);
    assert_int_equal(erased, 0); /* x is live: its own sources are named */
    assert_int_equal(mn_memory_delete(db, x, 0, NULL, NULL), MN_OK);
    assert_int_equal(mn_memory_erase_sources(db, s, x, &erased), MN_OK);
    assert_int_equal(erased, 1); /* m1 (beta's memory keeps nothing); m2: y still names it */
    assert_int_equal(messages(db, s), 2);
    assert_int_equal(mn_memory_erase_sources(db, s2, x, &erased), MN_OK);
    assert_int_equal(erased, 0); /* another session: untouched */
    assert_int_equal(mn_memory_erase_sources(db, s, "0190a000-0000-7000-8000-0000000000aa", &erased),
                     MN_NOTFOUND); /* beta's memory names nothing to erase here */
    assert_int_equal(mn_memory_erase_sources(db, s, NULL, &erased), MN_OK);
    assert_int_equal(erased, 1); /* "three": no memory names it; "two" stays for y */
    assert_int_equal(messages(db, s), 1);
    assert_int_equal(mn_memory_delete(db, y, 0, NULL, NULL), MN_OK);
    assert_int_equal(mn_memory_erase_sources(db, s, NULL, &erased), MN_OK);
    assert_int_equal(erased, 1);
    mn_session *gone = NULL;
    assert_int_equal(mn_session_get(db, s, &gone), MN_NOTFOUND); /* nothing kept: the session went whole */
    assert_int_equal(messages(db, s2), 1);
    assert_int_equal(mn_memory_erase_sources(db, s, NULL, NULL), MN_NOTFOUND);
    assert_int_equal(mn_memory_erase_sources(db, "nope", NULL, NULL), MN_NOTFOUND); /* a key naming nothing */
    assert_int_equal(mn_memory_erase_sources(db, "no\tpe", NULL, NULL), MN_INVALID);
    assert_int_equal(mn_memory_erase_sources(db, s2, "nope", NULL), MN_INVALID);
    mn_close(db);
}

/* A session erased whole and made again with its id (as the Mem0 routes' scope sessions are)
 * is extracted from its first message: the extraction watermark went with it. */
static void erased_session_made_again(void **state)
{
    (void)state;
    mn_db *db = open_db("again");
    const char *meta = "{\"memory_scope\":{\"user_id\":\"kim\"}}";
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.id = "0190a000-0000-7000-8000-0000000000cc";
    o.metadata = meta;
    assert_int_equal(mn_session_create(db, &o, NULL), MN_OK);
    say(db, o.id, "My city is Lisbon.");
    mn_extract_stats x;
    assert_int_equal(mn_memory_extract(db, o.id, "offline", &x), MN_OK);
    assert_int_equal(x.added, 1);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_memories *l = NULL;
    assert_int_equal(mn_memory_list(db, &q, &l), MN_OK);
    assert_int_equal(l->count, 1);
    assert_int_equal(mn_memory_delete(db, l->items[0].id, 0, NULL, NULL), MN_OK);
    mn_memories_free(l);
    assert_int_equal(mn_memory_erase_sources(db, o.id, NULL, NULL), MN_OK);
    assert_int_equal(mn_session_create(db, &o, NULL), MN_OK);
    say(db, o.id, "My city is Porto.");
    assert_int_equal(mn_memory_extract(db, o.id, "offline", &x), MN_OK);
    assert_int_equal(x.messages, 1);
    assert_int_equal(x.added, 1);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "memory_sources");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(provenance_is_the_namespace_own),
        cmocka_unit_test(erase_sources),
        cmocka_unit_test(erased_session_made_again),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
