/*
 * test_handover.c — the hand-over as seed 002 has it (issue #42), through mnemo.h: the
 * "**Tools Used:**" line only for more than one tool; the file list walked newest message first
 * and each message's files in the order it lists them, a path kept at its first place; distinct
 * path strings as distinct files; and file_should_include's "different path = include". Runs on
 * SQLite (api/handover) and on PostgreSQL (pg/api/handover).
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

static mn_db *open_db(const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static void append(mn_db *db, const char *sid, const char *tool, const char *files)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = "look";
    m.tool_name = tool;
    m.files = files;
    assert_int_equal(mn_append(db, sid, &m, 0, NULL), MN_OK);
}

static char *new_thread(mn_db *db, const char *tool)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.tool_name = tool;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static void tools_used_line_for_more_than_one_tool(void **state)
{
    (void)state;
    mn_db *db = open_db("tools");
    char *id = new_thread(db, "chat");
    append(db, id, "chat", NULL);
    append(db, id, "chat", NULL);
    mn_thread_summary *t = NULL;
    assert_int_equal(mn_thread_summary_get(db, id, 0, &t), MN_OK);
    assert_null(strstr(t->text, "Tools Used")); /* one tool: no line */
    assert_non_null(strstr(t->text, "**Turns:** 2\n"));
    assert_int_equal(t->tools_used.count, 1); /* the record still names it */
    assert_string_equal(t->tools_used.items[0], "chat");
    char *json = NULL;
    assert_int_equal(mn_thread_summary_to_json(t, &json), MN_OK);
    assert_non_null(strstr(json, "\"tools_used\":[\"chat\"]"));
    assert_null(strstr(json, "Tools Used"));
    mn_free(json);
    mn_thread_summary_free(t);

    append(db, id, "debug", NULL);
    assert_int_equal(mn_thread_summary_get(db, id, 0, &t), MN_OK);
    assert_non_null(strstr(t->text, "**Turns:** 3\n**Tools Used:** chat, debug\n"));
    mn_thread_summary_free(t);
    free(id);
    mn_close(db);
}

/* n messages oldest first (each a files JSON array, NULL: none), and the list expected back. */
static const struct files_case {
    const char *what;
    size_t n;
    const char *messages[4];
    const char *want[6];
} files_cases[] = {
    {"one message: the order it lists them", 1, {"[\"b.c\",\"a.c\"]"}, {"b.c", "a.c"}},
    {"newest message first", 2, {"[\"a.c\"]", "[\"b.c\"]"}, {"b.c", "a.c"}},
    {"an older mention is not repeated",
     3,
     {"[\"a.c\",\"z.c\"]", NULL, "[\"c.c\",\"a.c\"]"},
     {"c.c", "a.c", "z.c"}},
    {"a repeat inside a message keeps its first place", 1, {"[\"b.c\",\"a.c\",\"b.c\"]"}, {"b.c", "a.c"}},
    {"distinct path strings are distinct files",
     2,
     {"[\"src/a.c\",\"/abs/src/a.c\"]", "[\"a.c\",\"./a.c\",\"src/a.c\"]"},
     {"a.c", "./a.c", "src/a.c", "/abs/src/a.c"}},
};

static size_t count_of(const char *const *want)
{
    size_t n = 0;
    while (n < 6 && want[n])
        n++;
    return n;
}

static void check_list(const struct files_case *c, const mn_strings *l, size_t n)
{
    if (l->count != n)
        fail_msg("%s: %zu files, want %zu", c->what, l->count, n);
    for (size_t i = 0; i < n; i++)
        if (strcmp(l->items[i], c->want[i]) != 0)
            fail_msg("%s: file %zu is %s, want %s", c->what, i, l->items[i], c->want[i]);
}

static void files_newest_message_first_in_given_order(void **state)
{
    (void)state;
    mn_db *db = open_db("files");
    for (size_t k = 0; k < sizeof files_cases / sizeof *files_cases; k++) {
        const struct files_case *c = &files_cases[k];
        char *id = new_thread(db, "chat");
        for (size_t i = 0; i < c->n; i++)
            append(db, id, "chat", c->messages[i]);
        size_t n = count_of(c->want);
        mn_strings *l = NULL;
        assert_int_equal(mn_session_files(db, id, &l), MN_OK);
        check_list(c, l, n);
        mn_strings_free(l);
        assert_int_equal(mn_session_files_n(db, id, 0, &l), MN_OK);
        check_list(c, l, n);
        mn_strings_free(l);
        assert_int_equal(mn_session_files_n(db, id, 1, &l), MN_OK);
        check_list(c, l, 1);
        mn_strings_free(l);

        mn_thread_summary *t = NULL;
        assert_int_equal(mn_thread_summary_get(db, id, 0, &t), MN_OK);
        check_list(c, &t->files, n);
        char line[200] = "**Files:** ";
        for (size_t i = 0; i < n; i++)
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s%s", i ? ", " : "", c->want[i]);
        if (!strstr(t->text, line))
            fail_msg("%s: no \"%s\" in\n%s", c->what, line, t->text);
        mn_thread_summary_free(t);
        free(id);
    }
    mn_close(db);
}

/* Seed 002's FileDeduplicator: content is skipped only under the path it was first seen with;
 * under any other path it is included, again and again. */
static void file_dedup_as_seed(void **state)
{
    (void)state;
    static const struct {
        const char *path, *content;
        int include;
    } steps[] = {
        {"a.c", "X", 1},   {"a.c", "X", 0}, /* the same content under the same path: once */
        {"./a.c", "X", 1}, {"./a.c", "X", 1}, /* under another path: every time */
        {"a.c", "X", 0},   {"a.c", "Y", 1},   /* new content */
        {"b.c", "Y", 1},   {"b.c", "Y", 1},   {"a.c", "Y", 0},
    };
    mn_db *db = open_db("dedup");
    char *id = new_thread(db, NULL);
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
        int inc = -1;
        assert_int_equal(mn_file_should_include(db, id, steps[i].path, steps[i].content, 1, &inc), MN_OK);
        if (inc != steps[i].include)
            fail_msg("step %zu (%s, %s): include %d, want %d", i, steps[i].path, steps[i].content, inc,
                     steps[i].include);
    }
    mn_close(db);
    db = open_db("dedup"); /* durable */
    int inc = -1;
    assert_int_equal(mn_file_should_include(db, id, "./a.c", "X", 1, &inc), MN_OK);
    assert_int_equal(inc, 1);
    assert_int_equal(mn_file_should_include(db, id, "a.c", "X", 1, &inc), MN_OK);
    assert_int_equal(inc, 0);
    free(id);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "handover");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tools_used_line_for_more_than_one_tool),
        cmocka_unit_test(files_newest_message_first_in_given_order),
        cmocka_unit_test(file_dedup_as_seed),
    };
    return cmocka_run_group_tests_name("handover", tests, setup, teardown);
}
