/*
 * test_context_memories.c — long-term memories in a built context through mnemo.h
 * (mn_context_opts.memories; docs/context.md "Memories"): off by default and on from the
 * configuration; the block right after the system prompt; memory blocks always there and cut to
 * their token_cap; relevant memories ranked, in scope, never closed ones; the limit of
 * memories_top_k; and a property sweep over budgets and random memory sets: exact counts that
 * add up, the budget kept unless the mandatory part is over it, every listed id in the text
 * once. Runs on SQLite and, as pg/api/test_context_memories, on PostgreSQL. The report is read
 * with jansson (linked for this test in tests/CMakeLists.txt).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[256];

static mn_db *open_db(const char *name, const char *enabled)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    if (enabled)
        assert_int_equal(mn_config_set(cfg, "memory.context.enabled", enabled, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static char *session(mn_db *db, const char *ns, const char *metadata)
{
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.ns = ns;
    so.system_prompt = "You are a concise assistant.";
    so.metadata = metadata;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &so, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static void say(mn_db *db, const char *sid, mn_role role, const char *text)
{
    mn_message_in in = MN_MESSAGE_IN_INIT;
    in.role = role;
    in.content = text;
    assert_int_equal(mn_append(db, sid, &in, 0, NULL), MN_OK);
}

struct mem {
    const char *text, *ns, *user_id, *session_id;
    int pinned;
    int64_t cap;
};

static char *remember(mn_db *db, struct mem m)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = m.text;
    in.ns = m.ns;
    in.user_id = m.user_id;
    in.session_id = m.session_id;
    in.pinned = m.pinned;
    in.token_cap = m.cap;
    mn_memory *out = NULL;
    assert_int_equal(mn_memory_add(db, &in, &out), MN_OK);
    char *id = strdup(out->id);
    mn_memory_free(out);
    return id;
}

struct built {
    json_t *report, *rendered;
    int64_t tokens;
};

static struct built build(mn_db *db, const char *sid, int memories, size_t top_k, int64_t max_tokens)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.memories = memories;
    o.memories_top_k = top_k;
    o.max_tokens = max_tokens;
    o.rag = -1; /* the history's share is what this file checks; retrieval takes its own */
    mn_context *ctx = NULL;
    assert_int_equal(mn_context_build(db, sid, &o, &ctx), MN_OK);
    struct built b = {json_loads(ctx->report, 0, NULL), json_loads(ctx->rendered, 0, NULL), ctx->tokens};
    assert_non_null(b.report);
    assert_non_null(b.rendered);
    mn_context_free(ctx);
    return b;
}

static void built_free(struct built *b)
{
    json_decref(b->report);
    json_decref(b->rendered);
}

/* The content of the memory block (the message right after the system prompt), or NULL. */
static const char *block(const struct built *b)
{
    json_t *m = json_array_get(b->rendered, 1);
    const char *c = json_string_value(json_object_get(m, "content"));
    return c && strncmp(c, "LONG-TERM MEMORY", 16) == 0 ? c : NULL;
}

static json_t *included(const struct built *b)
{
    return json_object_get(json_object_get(b->report, "memories"), "included");
}

static int listed(const struct built *b, const char *id)
{
    size_t i;
    json_t *e;
    json_array_foreach(included(b), i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "id")), id) == 0)
            return 1;
    }
    return 0;
}

static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; p && (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void off_by_default_and_from_config(void **state)
{
    (void)state;
    mn_db *db = open_db("config", NULL);
    char *sid = session(db, "cfg", NULL);
    free(remember(db, (struct mem){"Answer in French.", "cfg", NULL, NULL, 1, 0}));
    say(db, sid, MN_ROLE_USER, "Hello");
    struct built b = build(db, sid, 0, 0, 1000);
    assert_null(json_object_get(b.report, "memories"));
    assert_null(block(&b));
    built_free(&b);
    b = build(db, sid, 1, 0, 1000); /* asked for */
    assert_non_null(block(&b));
    assert_null(json_object_get(json_object_get(b.report, "memories"), "source"));
    built_free(&b);
    mn_close(db);

    db = open_db("config", "true");
    b = build(db, sid, 0, 0, 1000); /* as configured */
    assert_non_null(block(&b));
    assert_string_equal(json_string_value(json_object_get(json_object_get(b.report, "memories"), "source")),
                        "memory.context.enabled");
    built_free(&b);
    b = build(db, sid, -1, 0, 1000); /* off for this call */
    assert_null(json_object_get(b.report, "memories"));
    built_free(&b);
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.memories = 1;
    o.memories_top_k = MN_CONTEXT_MAX_MEMORIES_TOP_K + 1; /* the limit, crossed */
    mn_context *ctx = NULL;
    assert_int_equal(mn_context_build(db, sid, &o, &ctx), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "memories_top_k"));
    assert_null(ctx);
    o.memories_top_k = MN_CONTEXT_MAX_MEMORIES_TOP_K;
    assert_int_equal(mn_context_build(db, sid, &o, &ctx), MN_OK);
    mn_context_free(ctx);
    /* a caller built before 0.5 passes the smaller size: memories are then as configured */
    o = (mn_context_opts)MN_CONTEXT_OPTS_INIT;
    o.size = offsetof(mn_context_opts, memories);
    o.memories = -1; /* past its size: never read */
    assert_int_equal(mn_context_build(db, sid, &o, &ctx), MN_OK);
    assert_non_null(strstr(ctx->report, "\"memories\""));
    mn_context_free(ctx);
    free(sid);
    mn_close(db);
}

static void blocks_and_relevant(void **state)
{
    (void)state;
    mn_db *db = open_db("relevant", NULL);
    char *sid = session(db, "acme", "{\"user_id\":\"alice\"}");
    char *other = session(db, "acme", NULL);
    char long_text[2000];
    memset(long_text, 0, sizeof long_text);
    for (int i = 0; i < 50; i++)
        strcat(long_text, "The user profile says many things. ");
    char *profile = remember(db, (struct mem){long_text, "acme", NULL, NULL, 1, 20});
    char *rules = remember(db, (struct mem){"Project rules: tests first.", "acme", NULL, NULL, 1, 0});
    char *city = remember(db, (struct mem){"User lives in Lisbon", "acme", "alice", NULL, 0, 0});
    mn_memory_in ch = MN_MEMORY_IN_INIT;
    ch.text = "User lives in Porto"; /* the Lisbon version is closed (superseded) */
    assert_int_equal(mn_memory_update(db, city, &ch, NULL), MN_OK);
    char *tea = remember(db, (struct mem){"User lives on tea", "acme", NULL, NULL, 0, 0});
    assert_int_equal(mn_memory_delete(db, tea, 0, NULL, NULL), MN_OK); /* closed: deleted */
    char *bob = remember(db, (struct mem){"User lives in Oslo", "acme", "bob", NULL, 0, 0});
    char *elsewhere = remember(db, (struct mem){"User lives in a tent", "acme", NULL, other, 0, 0});
    char *here = remember(db, (struct mem){"User lives near the sea", "acme", NULL, sid, 0, 0});
    char *foreign = remember(db, (struct mem){"User lives in Rome", "other", NULL, NULL, 1, 0});
    free(remember(db, (struct mem){"Unrelated: the build uses cmake", "acme", NULL, NULL, 0, 0}));
    say(db, sid, MN_ROLE_USER, "Where does the user live? lives");

    struct built b = build(db, sid, 1, 0, 4000);
    const char *text = block(&b);
    assert_non_null(text);
    /* the system prompt first, the block right after it */
    assert_string_equal(json_string_value(json_object_get(json_array_get(b.rendered, 0), "content")),
                        "You are a concise assistant.");
    assert_true(listed(&b, profile));
    assert_true(listed(&b, rules));
    assert_true(listed(&b, city));
    assert_true(listed(&b, here));
    assert_false(listed(&b, tea));
    assert_false(listed(&b, bob));
    assert_false(listed(&b, elsewhere));
    assert_false(listed(&b, foreign));
    assert_null(strstr(text, "Lisbon"));
    assert_null(strstr(text, "tea"));
    assert_non_null(strstr(text, "User lives in Porto"));
    /* the profile is cut to its cap of 20 tokens */
    size_t i;
    json_t *e;
    json_array_foreach(included(&b), i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        if (strcmp(id, profile) == 0) {
            assert_true(json_is_true(json_object_get(e, "cut")));
            assert_true(json_integer_value(json_object_get(e, "tokens")) <= 20);
            assert_true(json_is_null(json_object_get(e, "score")));
        }
        if (strcmp(id, city) == 0) {
            assert_int_equal(json_integer_value(json_object_get(e, "version")), 2);
            assert_true(json_is_number(json_object_get(e, "score")));
        }
        assert_false(json_is_true(json_object_get(e, "pinned")) && i > 1); /* blocks come first */
    }
    assert_null(strstr(text, long_text));
    built_free(&b);

    b = build(db, sid, 1, 1, 4000); /* top_k 1: the blocks and one relevant memory */
    assert_int_equal(json_array_size(included(&b)), 3);
    built_free(&b);

    /* a short budget: relevant memories leave first, the blocks are cut, never over the budget */
    b = build(db, sid, 1, 0, 60);
    assert_true(b.tokens <= 60);
    assert_false(json_is_true(json_object_get(b.report, "over_budget")));
    json_t *out = json_object_get(json_object_get(b.report, "memories"), "left_out");
    assert_true(json_array_size(out) > 0);
    json_array_foreach(out, i, e)
    {
        assert_string_equal(json_string_value(json_object_get(e, "reason")), "budget");
    }
    built_free(&b);
    free(profile), free(rules), free(city), free(tea), free(bob), free(elsewhere), free(here), free(foreign);
    free(sid);
    free(other);
    mn_close(db);
}

/* Every build of the sweep: the parts add up to the total; the total is within the budget unless
 * the mandatory part alone is over it (then no memory is in); the block's count is exact; the
 * items' tokens and text_tokens add up to it; each listed id is in the text once, none twice. */
static void check_build(const struct built *b, int64_t max_tokens)
{
    json_t *r = b->report, *parts = json_object_get(r, "parts");
    int64_t total = json_integer_value(json_object_get(r, "tokens"));
    assert_int_equal(total, b->tokens);
    assert_int_equal(total, json_integer_value(json_object_get(parts, "system")) +
                                json_integer_value(json_object_get(parts, "messages")) +
                                json_integer_value(json_object_get(parts, "framing")));
    int over = json_is_true(json_object_get(r, "over_budget"));
    assert_int_equal(over, total > max_tokens);
    json_t *mem = json_object_get(r, "memories");
    assert_non_null(mem);
    const char *text = block(b);
    if (over)
        assert_int_equal(json_array_size(included(b)), 0);
    if (!text) {
        assert_int_equal(json_array_size(included(b)), 0);
        assert_int_equal(json_integer_value(json_object_get(mem, "tokens")), 0);
        return;
    }
    size_t n = 0;
    assert_int_equal(mn_count_tokens("heuristic", text, strlen(text), &n), MN_OK);
    assert_int_equal((int64_t)n, json_integer_value(json_object_get(mem, "tokens")));
    int64_t sum = json_integer_value(json_object_get(mem, "text_tokens"));
    size_t i;
    json_t *e;
    json_array_foreach(included(b), i, e)
    {
        const char *id = json_string_value(json_object_get(e, "id"));
        assert_int_equal(occurrences(text, id), 1);
        sum += json_integer_value(json_object_get(e, "tokens"));
    }
    assert_int_equal(sum, (int64_t)n);
}

/* What the block does not take goes to the history: the same messages as a build without
 * memories whose budget is the total less the block as sent (its tokens and framing). A block
 * cut or left out for the newest unit used to keep the share it asked for, unused. */
static void history_gets_the_rest(mn_db *db, const char *sid, const struct built *b, int64_t budget)
{
    json_t *mem = json_object_get(b->report, "memories");
    int64_t block = json_integer_value(json_object_get(mem, "tokens")) + json_integer_value(json_object_get(mem, "framing"));
    struct built plain = build(db, sid, -1, 0, budget - block > 0 ? budget - block : 1);
    json_t *kept = json_object_get(json_object_get(b->report, "messages"), "kept");
    json_t *plain_kept = json_object_get(json_object_get(plain.report, "messages"), "kept");
    if (json_integer_value(kept) != json_integer_value(plain_kept))
        fail_msg("budget %lld, block %lld: %lld messages kept, %lld without memories", (long long)budget,
                 (long long)block, (long long)json_integer_value(kept), (long long)json_integer_value(plain_kept));
    built_free(&plain);
}

/* A pinned block too big for what the newest turn leaves is left out; the history then has the
 * whole budget (a probe: at 50 tokens one message of three was kept, 13 tokens used, and at 60 a
 * cut block and one message). Every budget from 10 to 120. */
static void left_out_block_gives_its_share_back(void **state)
{
    (void)state;
    mn_db *db = open_db("share", NULL);
    char *sid = session(db, "share", NULL);
    say(db, sid, MN_ROLE_USER, "My city is Oslo.");
    say(db, sid, MN_ROLE_ASSISTANT, "Noted.");
    say(db, sid, MN_ROLE_USER, "Which city do I live in?");
    free(remember(db, (struct mem){"Project rules: tests first, always", "share", NULL, NULL, 1, 0}));
    int left_out = 0;
    for (int64_t budget = 10; budget <= 120; budget++) {
        struct built b = build(db, sid, 1, 5, budget);
        check_build(&b, budget);
        history_gets_the_rest(db, sid, &b, budget);
        left_out += !block(&b);
        built_free(&b);
    }
    assert_true(left_out > 0); /* the case is met */
    free(sid);
    mn_close(db);
}

static void budget_sweep(void **state)
{
    (void)state;
    mn_db *db = open_db("sweep", NULL);
    const char *env = getenv("MNEMO_PROPS_SEED");
    unsigned seed = env ? (unsigned)strtoul(env, NULL, 10) : 1717u;
    srand(seed);
    static const char *const words[] = {"user", "prefers", "coffee", "project", "uses", "postgres", "deploy",
                                        "key", "rotates", "monthly", "lives", "porto", "answer", "briefly"};
    for (int set = 0; set < 4; set++) {
        char ns[16];
        snprintf(ns, sizeof ns, "sweep%d", set);
        char *sid = session(db, ns, NULL);
        int n = 3 + rand() % 10;
        for (int k = 0; k < n; k++) {
            char text[1200] = "";
            int len = 1 + rand() % (k % 4 == 0 ? 120 : 12);
            for (int w = 0; w < len; w++) {
                strcat(text, words[rand() % 14]);
                strcat(text, w + 1 < len ? " " : ".");
            }
            int pinned = rand() % 4 == 0;
            char *id = remember(db, (struct mem){text, ns, NULL, NULL, pinned, pinned ? rand() % 80 : 0});
            if (rand() % 5 == 0)
                assert_int_equal(mn_memory_delete(db, id, 0, NULL, NULL), MN_OK);
            free(id);
        }
        for (int t = 0; t < 6; t++) {
            say(db, sid, MN_ROLE_USER, "Does the user prefer coffee? What does the project use?");
            say(db, sid, MN_ROLE_ASSISTANT, "Let me look at what I know about the user and the project.");
        }
        for (int64_t budget = 20; budget <= 4000; budget += 10 + rand() % (budget < 200 ? 20 : 150)) {
            struct built b = build(db, sid, 1, (size_t)(1 + rand() % 10), budget);
            check_build(&b, budget);
            history_gets_the_rest(db, sid, &b, budget);
            built_free(&b);
        }
        free(sid);
    }
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "ctxmem");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(off_by_default_and_from_config),
        cmocka_unit_test(blocks_and_relevant),
        cmocka_unit_test(budget_sweep),
        cmocka_unit_test(left_out_block_gives_its_share_back),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
