/*
 * test_embed_remote.c — the `openai` and `ollama` embedders against the local fake server
 * tests/fake_llm/fake_embed.js: both protocols, batching, replies out of order, retries on 429,
 * errors (500, 400, a short reply) reported as MN_UNAVAILABLE naming the server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "embed/embed.h"
#include "mnemo.h"
#include "test_db.h"
#include "fake_server.h"

static struct fake_server server;

static int start_server(void **state)
{
    (void)state;
    return fake_server_start(&server, MNEMO_TEST_DATA "/../fake_llm/fake_embed.js");
}

static int stop_server(void **state)
{
    (void)state;
    fake_server_stop(&server);
    return 0;
}

static mn_embedder *open_remote(const char *name, const char *model, int64_t batch)
{
    if (!*server.base_url)
        skip();
    /* a generous per-request timeout: it only ends a hung test */
    mn_embed_cfg c = {name, model, server.base_url, "sk-test", 0, 60000, batch, 3, 1};
    mn_embedder *e = NULL;
    assert_int_equal(mn__embed_open(&c, &e), MN_OK);
    return e;
}

static void both_protocols(void **state)
{
    (void)state;
    const char *texts[] = {"alpha", "beta gamma", "alpha", "delta", "epsilon"};
    for (int p = 0; p < 2; p++) {
        mn_embedder *e = open_remote(p ? "ollama" : "openai", "ok", 2); /* 3 requests of 2, 2, 1 */
        assert_int_equal(mn__embed_dim(e), 0);
        float *v = NULL;
        uint32_t dim = 0;
        assert_int_equal(mn__embed_texts_alloc(e, texts, 5, &v, &dim), MN_OK);
        assert_int_equal(dim, 8);
        assert_int_equal(mn__embed_dim(e), 8);
        assert_memory_equal(v, v + 2 * 8, 8 * sizeof *v); /* same text, same vector, in input order */
        double n = 0;
        for (int i = 0; i < 8; i++)
            n += (double)v[8 + i] * v[8 + i];
        assert_true(fabs(n - 1) < 1e-5);
        assert_true(memcmp(v, v + 8, 8 * sizeof *v) != 0);
        free(v);
        mn__embed_free(e);
    }
}

static void retries_and_errors(void **state)
{
    (void)state;
    const char *texts[] = {"one"};
    float *v = NULL;
    uint32_t dim = 0;
    mn_embedder *e = open_remote("openai", "flaky429", 8);
    assert_int_equal(mn__embed_texts_alloc(e, texts, 1, &v, &dim), MN_OK); /* two 429s, then ok */
    free(v);
    mn__embed_free(e);
    static const char *const bad[] = {"err500", "bad400", "short"};
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < 3; i++) {
            e = open_remote(p ? "ollama" : "openai", bad[i], 8);
            assert_int_equal(mn__embed_texts_alloc(e, texts, 1, &v, &dim), MN_UNAVAILABLE);
            assert_null(v);
            assert_non_null(strstr(mn_errmsg(), "embedder"));
            if (i == 1)
                assert_non_null(strstr(mn_errmsg(), "model not found"));
            mn__embed_free(e);
        }
    /* nothing listening */
    mn_embed_cfg c = {"ollama", "ok", "http://127.0.0.1:1", NULL, 0, 2000, 8, 0, 1};
    assert_int_equal(mn__embed_open(&c, &e), MN_OK);
    assert_int_equal(mn__embed_texts_alloc(e, texts, 1, &v, &dim), MN_UNAVAILABLE);
    mn__embed_free(e);
}

/* Through the public API: an openai-protocol embedder configured for a database. */
static void through_the_api(void **state)
{
    (void)state;
    if (!*server.base_url)
        skip();
    char dir[] = "/tmp/mnemo-embed-remote-XXXXXX", path[80];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/db", dir);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", "openai", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.model", "ok", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.base_url", server.base_url, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.content = "remote vectors please";
    assert_int_equal(mn_append(db, "01890a5d-ac96-774b-bcce-b302099a8057", &m, MN_APPEND_CREATE, NULL), MN_OK);
    size_t done = 0;
    assert_int_equal(mn_embed_pending(db, 0, &done), MN_OK);
    assert_int_equal(done, 1);
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "remote vectors please", MN_SEARCH_SEMANTIC, 3, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 1);
    assert_true(h->items[0].similarity > 0.999);
    mn_search_hits_free(h);
    mn_close(db);
    mn_config_free(cfg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(both_protocols),
        cmocka_unit_test(retries_and_errors),
        cmocka_unit_test(through_the_api),
    };
    return cmocka_run_group_tests_name("embed_remote", tests, start_server, stop_server);
}
