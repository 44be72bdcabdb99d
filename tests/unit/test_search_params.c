/*
 * test_search_params.c — the HNSW settings of the configuration (search.hnsw_m,
 * search.hnsw_ef_construction) reach the index mnemo builds and saves beside the database.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "index/index.h"
#include "mnemo.h"
#include "test_db.h"

/* Builds a three-message database with the given settings and searches it; returns the top
 * hit's content (static) and leaves the saved index's parameters in *p. */
static const char *build_and_search(const char *quantize, struct mn_index_params *p)
{
    char dir[] = "/tmp/mnemo-sparams-XXXXXX", path[128], index_path[140];
    static char top[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/p.db", dir);
    snprintf(index_path, sizeof index_path, "%s.hnsw", path);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", "hash", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "search.hnsw_m", "8", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "search.hnsw_ef_construction", "50", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "search.quantize", quantize, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    static const char *const texts[] = {"alpha build failed", "beta tests pass", "gamma deploy done"};
    for (int i = 0; i < 3; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.content = texts[i];
        assert_int_equal(mn_append(db, s->id, &m, 0, NULL), MN_OK);
    }
    assert_int_equal(mn_embed_pending(db, 0, NULL), MN_OK);
    mn_search_hits *hits = NULL;
    assert_int_equal(mn_search(db, "alpha build failed", MN_SEARCH_SEMANTIC, 2, NULL, 0, &hits), MN_OK);
    assert_true(hits->count >= 1);
    snprintf(top, sizeof top, "%s", hits->items[0].message.content);
    mn_search_hits_free(hits);
    mn_session_free(s);
    mn_close(db); /* saves the index */
    mn_config_free(cfg);
    if (test_db_pg()) {
        /* A PostgreSQL node keeps its index in memory only (docs/scale-out.md): no file next to
         * a URL, so the parameters are checked on SQLite; the search above ran on both. */
        assert_int_equal(access(index_path, F_OK), -1);
        memset(p, 0, sizeof *p);
    } else {
        mn_index *ix = NULL;
        assert_int_equal(mn__index_load(index_path, &ix), MN_OK);
        mn__index_params_get(ix, p);
        mn__index_free(ix);
    }
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return top;
}

static void int8_vectors_rerank_on_stored_floats(void **state)
{
    (void)state;
    struct mn_index_params p;
    assert_string_equal(build_and_search("int8", &p), "alpha build failed");
    if (!test_db_pg()) /* the saved index file: SQLite only */
        assert_int_equal(p.quant, MN_INDEX_INT8);
    assert_string_equal(build_and_search("none", &p), "alpha build failed");
    if (!test_db_pg()) /* the saved index file: SQLite only */
        assert_int_equal(p.quant, MN_INDEX_F32);
}

static void configured_graph_parameters_are_used(void **state)
{
    (void)state;
    struct mn_index_params p;
    assert_string_equal(build_and_search("none", &p), "alpha build failed");
    if (!test_db_pg()) {
        assert_int_equal(p.M, 8);
        assert_int_equal(p.ef_construction, 50);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(configured_graph_parameters_are_used),
                                       cmocka_unit_test(int8_vectors_rerank_on_stored_floats)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
