/*
 * test_abi.c — the ABI policy at the top of mnemo.h, through mnemo.h only: a caller built
 * against an older header (simulated by passing the offset of a newer member as size) gets the
 * defaults of the members it does not know; size 0 and sizes below the first layout are
 * MN_MISUSE; a newer caller's unknown non-zero bytes are MN_MISUSE; arrays of caller structs are
 * walked by their own size; lists carry item_size and their _at accessors index them.
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

/* mn_context_opts' first layout ended at format (model_window and the rest came later): a
 * caller built then passes that size, and the library must not read the newer members (set
 * here to a value it would refuse) but give them their defaults. */
static void older_size_ignores_newer_members(void **state)
{
    (void)state;
    mn_db *db = open_db("older");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    /* mn_context_opts' first layout ended at format: the later members are not read */
    mn_context_opts c = MN_CONTEXT_OPTS_INIT;
    c.format = MN_FORMAT_TEXT;
    c.fold = 99; /* an unknown fold mode: refused if read */
    c.size = offsetof(mn_context_opts, model_window);
    mn_context *ctx = NULL;
    assert_int_equal(mn_context_build(db, s->id, &c, &ctx), MN_OK);
    mn_context_free(ctx);
    c.size = sizeof c;
    assert_int_equal(mn_context_build(db, s->id, &c, &ctx), MN_INVALID);

    /* the other structs have one layout so far: a size short of it is refused */
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.size = offsetof(mn_session_opts, max_turns);
    assert_int_equal(mn_session_create(db, &o, NULL), MN_MISUSE);
    mn_session_free(s);
    mn_close(db);
}

static void bad_sizes_are_misuse(void **state)
{
    (void)state;
    mn_db *db = open_db("bad");
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.size = 0; /* a zeroed struct, not made with _INIT */
    assert_int_equal(mn_session_create(db, &o, NULL), MN_MISUSE);
    assert_non_null(strstr(mn_errmsg(), "mn_session_opts.size is 0"));
    o.size = offsetof(mn_session_opts, id); /* below the first layout */
    assert_int_equal(mn_session_create(db, &o, NULL), MN_MISUSE);

    /* a newer caller: zero extra bytes are fine, non-zero ones are refused */
    struct {
        mn_session_opts o;
        int64_t newer;
    } big;
    memset(&big, 0, sizeof big);
    big.o = (mn_session_opts)MN_SESSION_OPTS_INIT;
    big.o.size = sizeof big;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &big.o, &s), MN_OK);
    big.newer = 1;
    assert_int_equal(mn_session_create(db, &big.o, NULL), MN_MISUSE);
    assert_non_null(strstr(mn_errmsg(), "does not know"));

    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "x";
    m.size = 0;
    assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_MISUSE);
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.size = 0;
    mn_search_hits *hits = NULL;
    assert_int_equal(mn_search(db, "x", MN_SEARCH_KEYWORD, 5, &f, 0, &hits), MN_MISUSE);
    mn_memory_in mi = MN_MEMORY_IN_INIT;
    mi.text = "a fact";
    mi.size = 0;
    assert_int_equal(mn_memory_add(db, &mi, NULL), MN_MISUSE);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.size = 0;
    mn_memories *mems = NULL;
    assert_int_equal(mn_memory_list(db, &q, &mems), MN_MISUSE);
    mn_session_free(s);
    mn_close(db);
}


static void arrays_and_accessors(void **state)
{
    (void)state;
    mn_db *db = open_db("arrays");
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    struct {
        mn_message_in m;
        char newer[16]; /* what a newer header would add: zero */
    } wide[2];
    memset(wide, 0, sizeof wide);
    const char *texts[] = {"first words", "second words"};
    for (int i = 0; i < 2; i++) {
        wide[i].m = (mn_message_in)MN_MESSAGE_IN_INIT;
        wide[i].m.size = sizeof wide[0];
        wide[i].m.content = texts[i];
    }
    mn_messages *stored = NULL;
    assert_int_equal(mn_append_batch(db, s->id, &wide[0].m, 2, 0, &stored), MN_OK);
    assert_int_equal(stored->count, 2);
    assert_int_equal(stored->item_size, sizeof(mn_message));
    assert_string_equal(mn_messages_at(stored, 1)->content, "second words");
    assert_ptr_equal(mn_messages_at(stored, 1), &stored->items[1]);
    assert_null(mn_messages_at(stored, 2));
    assert_null(mn_messages_at(NULL, 0));
    mn_messages_free(stored);

    mn_sessions *sl = NULL;
    assert_int_equal(mn_session_list(db, NULL, 0, 0, &sl), MN_OK);
    assert_int_equal(sl->item_size, sizeof(mn_session));
    assert_string_equal(mn_sessions_at(sl, 0)->id, s->id);
    assert_null(mn_sessions_at(sl, sl->count));
    mn_sessions_free(sl);

    mn_search_hits *hits = NULL;
    assert_int_equal(mn_search(db, "second", MN_SEARCH_KEYWORD, 5, NULL, 0, &hits), MN_OK);
    assert_int_equal(hits->item_size, sizeof(mn_search_hit));
    assert_int_equal(hits->count, 1);
    assert_string_equal(mn_search_hits_at(hits, 0)->message.content, "second words");
    assert_null(mn_search_hits_at(hits, 1));
    mn_search_hits_free(hits);

    mn_memory_in mi = MN_MEMORY_IN_INIT;
    mi.text = "the build is reproducible";
    mi.pinned = 0;
    mi.token_cap = 0;
    assert_int_equal(mn_memory_add(db, &mi, NULL), MN_OK);
    mn_memories *mems = NULL;
    assert_int_equal(mn_memory_list(db, NULL, &mems), MN_OK);
    assert_int_equal(mems->item_size, sizeof(mn_memory));
    assert_string_equal(mn_memories_at(mems, 0)->text, "the build is reproducible");
    assert_null(mn_memories_at(mems, 1));
    mn_memories_free(mems);

    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "see";
    m.files = "[\"a.c\",\"b.c\"]";
    assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
    mn_strings *files = NULL;
    assert_int_equal(mn_session_files(db, s->id, &files), MN_OK);
    assert_int_equal(files->count, 2);
    assert_non_null(mn_strings_at(files, 1));
    assert_null(mn_strings_at(files, 2));
    mn_strings_free(files);
    mn_session_free(s);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "mnemo-abi");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(older_size_ignores_newer_members),
        cmocka_unit_test(bad_sizes_are_misuse),
        cmocka_unit_test(arrays_and_accessors),
    };
    return cmocka_run_group_tests_name("abi", tests, setup, teardown);
}
