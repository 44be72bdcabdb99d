/*
 * fuzz_fts_query.c — user text as a keyword query: escaped by mn__fts_query and run by
 * mn_search against a small database, it must never be an FTS5 syntax error (any valid UTF-8
 * query gives MN_OK). The same bytes also go through the hash embedder and the embeddings reply
 * parser (both protocols).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "embed/embed.h"
#include "mnemo.h"
#include "search/search.h"
#include "util/utf8.h"

static mn_db *db;
static char path[64];

static void cleanup(void)
{
    char f[80];
    mn_close(db);
    for (int i = 0; i < 5; i++) {
        static const char *const ext[] = {"", "-wal", "-shm", ".hnsw", ".hnsw.lock"};
        snprintf(f, sizeof f, "%s%s", path, ext[i]);
        unlink(f);
    }
}

static void open_once(void)
{
    snprintf(path, sizeof path, "/tmp/mnemo-fuzz-fts-%d.db", (int)getpid());
    mn_config *cfg = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "tokenizer.name", "heuristic", NULL) ||
        mn_config_set(cfg, "memory.durability", "normal", NULL) || mn_open_path(path, cfg, &db))
        abort();
    mn_config_free(cfg);
    atexit(cleanup);
    static const char *const texts[] = {"hello world \"quoted\" AND OR NEAR", "café 東京 (paren) star* ^caret",
                                        "col:umn -minus +plus {brace}"};
    for (size_t i = 0; i < 3; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.content = texts[i];
        if (mn_append(db, "01890a5d-ac96-774b-bcce-b302099a8057", &m, MN_APPEND_CREATE, NULL))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!db)
        open_once();
    if (size > 4096)
        return 0;
    char *q = malloc(size + 1);
    if (!q)
        return 0;
    memcpy(q, data, size);
    q[size] = '\0';
    size_t len = strlen(q), bad;
    struct mn_buf b = MN_BUF_INIT;
    size_t terms = 0;
    if (mn__fts_query(q, &b, &terms))
        abort();
    size_t all = terms;
    if (mn__fts_query_content(q, &b, &terms) || terms > all || (all && !terms))
        abort(); /* a subset of the terms, never none of some */
    mn__buf_release(&b);
    if (len && mn__utf8_valid(q, len, &bad)) {
        mn_search_hits *h = NULL;
        mn_status rc = mn_search(db, q, MN_SEARCH_KEYWORD, 5, NULL, 0, &h);
        if (rc != MN_OK) {
            fprintf(stderr, "query %s: %s\n", q, mn_errmsg());
            abort();
        }
        mn_search_hits_free(h);
        mn_memories *m = NULL; /* memory search: the content query */
        if (mn_memory_search(db, q, MN_SEARCH_KEYWORD, NULL, &m) != MN_OK) {
            fprintf(stderr, "memory query %s: %s\n", q, mn_errmsg());
            abort();
        }
        mn_memories_free(m);
    }
    float v[64];
    mn__embed_hash(q, len, 64, v);
    float *out = NULL;
    uint32_t dim = 0;
    mn__embed_parse_reply("openai", (const char *)data, size, 2, &dim, &out);
    free(out);
    dim = 0;
    mn__embed_parse_reply("ollama", (const char *)data, size, 1, &dim, &out);
    free(out);
    free(q);
    return 0;
}
