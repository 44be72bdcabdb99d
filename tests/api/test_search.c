/*
 * test_search.c — search through mnemo.h: keyword search with hostile query text, semantic and
 * hybrid search with the hash embedder, filters (exactly k at 0.1% selectivity), deletes
 * reaching the index, rebuild after the index file is deleted or damaged, the embedder identity
 * check, RAG in mn_context_build and mn_relevant_context, concurrent writers from two processes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

static char dir[64];

static mn_db *open_db(const char *name, const char *embedder, const char *mode)
{
    char path[160];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.durability", "normal", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", embedder, NULL), MN_OK);
    if (mode)
        assert_int_equal(mn_config_set(cfg, "embedder.mode", mode, NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static mn_session *add_session(mn_db *db, const char *ns, const char *const *texts, size_t n)
{
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.ns = ns;
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, &o, &s), MN_OK);
    mn_message_in *in = calloc(n, sizeof *in);
    for (size_t i = 0; i < n; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = texts[i];
        in[i] = m;
    }
    assert_int_equal(mn_append_batch(db, s->id, in, n, 0, NULL), MN_OK);
    free(in);
    return s;
}

static const char *const docs[] = {
    "How do I configure the postgres connection pool?",
    "Use pgbouncer in transaction mode for postgres connection pooling.",
    "The weather in Paris is sunny today.",
    "My cat likes to eat fish on Fridays.",
    "He said \"AND\" OR (NEAR* ^ -- col:umn {x} 'quoted'",
    "Ünïcödé façade naïve café — 東京 タワー",
};
#define N_DOCS (sizeof docs / sizeof docs[0])

static void keyword_hostile_queries(void **state)
{
    (void)state;
    mn_db *db = open_db("kw", "none", NULL);
    mn_session *s = add_session(db, NULL, docs, N_DOCS);
    static const char *const nasty[] = {
        "\"", "\"\"", "'", "AND", "OR", "NOT", "NEAR", "NEAR(a b, 3)", "*", "a*", "^start", "(", ")", "((a)",
        "a AND", "OR b", "col:umn", "{x y}", "-x", "+", "\\", "a\"b", "NOT NOT", "東京", "café", "\xc2\xa0",
        "!!!", "a OR b AND (c", "x'); DROP TABLE messages; --", "🙂", "AND OR NOT NEAR",
    };
    for (size_t i = 0; i < sizeof nasty / sizeof nasty[0]; i++) {
        mn_search_hits *h = NULL;
        mn_status rc = mn_search(db, nasty[i], MN_SEARCH_KEYWORD, 5, NULL, 0, &h);
        if (rc)
            fail_msg("query '%s': %s", nasty[i], mn_errmsg());
        mn_search_hits_free(h);
    }
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "postgres pooling", MN_SEARCH_AUTO, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->mode, MN_SEARCH_KEYWORD); /* no embedder */
    assert_true(h->count >= 2);
    assert_true(strstr(h->items[0].message.content, "postgres") != NULL);
    assert_int_equal(h->items[0].keyword_rank, 1);
    assert_true(h->items[0].bm25 > 0);
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "near", MN_SEARCH_KEYWORD, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 1); /* the word itself, found as a word */
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "cafe", MN_SEARCH_KEYWORD, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 1); /* diacritics folded */
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "", MN_SEARCH_KEYWORD, 5, NULL, 0, &h), MN_INVALID);
    assert_int_equal(mn_search(db, "bad\xff", MN_SEARCH_KEYWORD, 5, NULL, 0, &h), MN_INVALID);
    assert_int_equal(mn_search(db, "x", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_UNAVAILABLE);
    assert_int_equal(mn_search(db, "x", MN_SEARCH_KEYWORD, 5000, NULL, 0, &h), MN_INVALID);
    /* deletes reach the keyword index */
    assert_int_equal(mn_session_delete(db, s->id), MN_OK);
    assert_int_equal(mn_search(db, "postgres", MN_SEARCH_KEYWORD, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 0);
    mn_search_hits_free(h);
    mn_session_free(s);
    mn_close(db);
}

static void semantic_hybrid_and_deletes(void **state)
{
    (void)state;
    mn_db *db = open_db("sem", "hash", NULL);
    mn_session *s = add_session(db, "team-a", docs, N_DOCS);
    int64_t embedded = -1, queued = -1;
    assert_int_equal(mn_embed_counts(db, &embedded, &queued), MN_OK);
    assert_int_equal(embedded, 0);
    assert_int_equal(queued, (int64_t)N_DOCS); /* queued, not embedded, on append */
    size_t done = 0;
    assert_int_equal(mn_embed_pending(db, 0, &done), MN_OK);
    assert_int_equal(done, N_DOCS);
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "postgres connection pool", MN_SEARCH_SEMANTIC, 3, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 3);
    assert_true(strstr(h->items[0].message.content, "postgres") != NULL);
    assert_true(h->items[0].similarity > h->items[2].similarity);
    assert_string_equal(h->items[0].ns, "team-a");
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "postgres connection pool", MN_SEARCH_SEMANTIC, 3, NULL, 0.99, &h), MN_OK);
    assert_int_equal(h->count, 0);
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "pgbouncer pooling", MN_SEARCH_AUTO, 3, NULL, 0, &h), MN_OK);
    assert_int_equal(h->mode, MN_SEARCH_HYBRID);
    assert_int_equal(h->items[0].message.id, 2); /* first in both lists */
    assert_int_equal(h->items[0].semantic_rank, 1);
    assert_int_equal(h->items[0].keyword_rank, 1);
    assert_true(h->items[0].score > 1.0 / 61 && h->items[0].score <= 2.0 / 61 + 1e-12);
    mn_search_hits_free(h);
    /* filters */
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.role = MN_ROLE_ASSISTANT;
    assert_int_equal(mn_search(db, "postgres", MN_SEARCH_SEMANTIC, 10, &f, 0, &h), MN_OK);
    assert_int_equal(h->count, N_DOCS / 2);
    for (size_t i = 0; i < h->count; i++)
        assert_int_equal(h->items[i].message.role, MN_ROLE_ASSISTANT);
    mn_search_hits_free(h);
    f.role = -1;
    f.ns = "team-b";
    assert_int_equal(mn_search(db, "postgres", MN_SEARCH_HYBRID, 10, &f, 0, &h), MN_OK);
    assert_int_equal(h->count, 0);
    mn_search_hits_free(h);
    /* relevant context: seed 000's block */
    char *text = NULL;
    assert_int_equal(mn_relevant_context(db, "postgres pooling", 1000, NULL, &text), MN_OK);
    assert_true(strncmp(text, "RELEVANT CONTEXT FROM PAST CONVERSATIONS:\n---\n[", 46) == 0);
    assert_true(strstr(text, "[ASSISTANT]: Use pgbouncer") != NULL);
    assert_true(strcmp(text + strlen(text) - 3, "---") == 0);
    mn_free(text);
    assert_int_equal(mn_relevant_context(db, "postgres pooling", 12, NULL, &text), MN_OK);
    assert_true(strlen(text) < 200); /* the budget keeps one line at most */
    mn_free(text);
    /* deleting the session removes its vectors from the index */
    assert_int_equal(mn_session_delete(db, s->id), MN_OK);
    assert_int_equal(mn_search(db, "postgres connection pool", MN_SEARCH_SEMANTIC, 3, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 0);
    mn_search_hits_free(h);
    assert_int_equal(mn_embed_counts(db, &embedded, &queued), MN_OK);
    assert_int_equal(embedded, 0);
    mn_session_free(s);
    mn_close(db);
}

/* Queued messages are invisible to the semantic list: a semantic or hybrid search says how many
 * of those passing its filter wait (issue #20: "no matches" used to give no hint). */
static void not_embedded_counted(void **state)
{
    (void)state;
    mn_db *db = open_db("queued", "hash", "queue");
    mn_session *a = add_session(db, "team-a", docs, 4), *b = add_session(db, "team-b", docs, 2);
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "postgres connection pool", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 0); /* nothing embedded yet */
    assert_int_equal(h->not_embedded, 6);
    mn_search_hits_free(h);
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.session_id = a->id;
    assert_int_equal(mn_search(db, "postgres connection pool", MN_SEARCH_HYBRID, 5, &f, 0, &h), MN_OK);
    assert_int_equal(h->not_embedded, 4); /* the filter applies to the count */
    assert_true(h->count > 0);            /* found by keyword meanwhile */
    assert_int_equal(h->items[0].semantic_rank, 0);
    mn_search_hits_free(h);
    f.session_id = NULL;
    f.ns = "team-b";
    f.role = MN_ROLE_ASSISTANT;
    assert_int_equal(mn_search(db, "postgres", MN_SEARCH_SEMANTIC, 5, &f, 0, &h), MN_OK);
    assert_int_equal(h->not_embedded, 1);
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "postgres", MN_SEARCH_KEYWORD, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->not_embedded, 0); /* keyword search sees every message */
    mn_search_hits_free(h);
    size_t done = 0;
    assert_int_equal(mn_embed_pending(db, 2, &done), MN_OK);
    assert_int_equal(done, 2);
    assert_int_equal(mn_search(db, "postgres connection pool", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->not_embedded, 4);
    mn_search_hits_free(h);
    assert_int_equal(mn_embed_pending(db, 0, &done), MN_OK);
    assert_int_equal(mn_search(db, "postgres connection pool", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->not_embedded, 0);
    assert_true(h->count > 0 && h->items[0].semantic_rank == 1);
    char *json = NULL; /* the JSON stays the array of hits */
    assert_int_equal(mn_search_hits_to_json(h, &json), MN_OK);
    assert_int_equal(json[0], '[');
    mn_free(json);
    mn_search_hits_free(h);
    mn_session_free(a);
    mn_session_free(b);
    mn_close(db);
}

/* 999 messages and a session holding 1 more (0.1%): a filtered search returns exactly that one. */
static void filtered_exact_k_and_rebuild(void **state)
{
    (void)state;
    mn_db *db = open_db("big", "hash", NULL);
    enum { N = 999 };
    char **texts = calloc(N, sizeof *texts);
    for (int i = 0; i < N; i++) {
        texts[i] = malloc(96);
        snprintf(texts[i], 96, "note %d about topic%d and item%d with words w%d", i, i % 37, i % 11, i % 5);
    }
    mn_session *big = add_session(db, NULL, (const char *const *)texts, N);
    static const char *const few[] = {"unrelated gardening tips"};
    mn_session *small = add_session(db, NULL, few, 1);
    int64_t done = 0;
    assert_int_equal(mn_embed_backfill(db, NULL, NULL, &done), MN_OK);
    assert_int_equal(done, N + 1);
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.session_id = small->id;
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "note about topic3", MN_SEARCH_SEMANTIC, 1, &f, 0, &h), MN_OK);
    assert_int_equal(h->count, 1);
    assert_string_equal(h->items[0].message.content, few[0]);
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "note about topic3", MN_SEARCH_SEMANTIC, 10, &f, 0, &h), MN_OK);
    assert_int_equal(h->count, 1); /* min(k, matching) */
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "note 17 about topic17", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 5);
    int64_t best = h->items[0].message.id;
    mn_search_hits_free(h);
    mn_close(db);
    /* the backfill built and saved the index: a search in a new handle uses it as it is. Deleted,
     * searches scan the stored vectors exactly (never building it on the request path) until a
     * writer (mn_embed_pending) builds it again. On PostgreSQL a node keeps its index in memory
     * only (docs/scale-out.md): a new handle scans exactly until its writer builds one. */
    char path[200];
    snprintf(path, sizeof path, "%s/big.db.hnsw", dir);
    if (!test_db_pg()) {
        assert_int_equal(access(path, F_OK), 0);
        assert_int_equal(unlink(path), 0);
    } else
        assert_int_equal(access(path, F_OK), -1);
    db = open_db("big", "hash", NULL);
    assert_int_equal(mn_search(db, "note 17 about topic17", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 5);
    assert_int_equal(h->items[0].message.id, best);
    assert_int_equal(h->index_indexed, 0);
    assert_int_equal(h->index_scanned, N + 1); /* every stored vector, exactly */
    assert_int_equal(h->index_truncated, 0);
    mn_search_hits_free(h);
    if (!test_db_pg())
        assert_int_equal(access(path, F_OK), -1); /* the search did not build it */
    assert_int_equal(mn_embed_pending(db, 0, NULL), MN_OK); /* the writer's step builds it */
    if (!test_db_pg())
        assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(mn_search(db, "note 17 about topic17", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->items[0].message.id, best);
    assert_int_equal(h->index_indexed, N + 1);
    assert_int_equal(h->index_scanned, 0);
    mn_search_hits_free(h);
    mn_close(db);
    /* damaged: one byte flipped in the middle (an id): the mapping is refused, the search
     * scans exactly and answers the same */
    if (!test_db_pg()) {
        FILE *fp = fopen(path, "r+b");
        assert_non_null(fp);
        fseek(fp, 5000, SEEK_SET);
        int c = fgetc(fp);
        fseek(fp, 5000, SEEK_SET);
        fputc(c ^ 0x55, fp);
        fclose(fp);
    }
    db = open_db("big", "hash", NULL);
    assert_int_equal(mn_search(db, "note 17 about topic17", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 5);
    assert_int_equal(h->items[0].message.id, best);
    assert_int_equal(h->index_indexed, 0);
    mn_search_hits_free(h);
    mn_close(db);
    /* another embedder's query is refused, naming both */
    char p2[160];
    snprintf(p2, sizeof p2, "%s/big.db", dir);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", "hash", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.dim", "128", NULL), MN_OK);
    assert_int_equal(mn_open_path(test_db_target(p2), cfg, &db), MN_OK);
    assert_int_equal(mn_search(db, "note", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h), MN_CONFLICT);
    assert_non_null(strstr(mn_errmsg(), "hash/hash-v1/384"));
    assert_non_null(strstr(mn_errmsg(), "hash/hash-v1/128"));
    /* hybrid makes its semantic list on another thread: the same refusal, the same message here */
    assert_int_equal(mn_search(db, "note", MN_SEARCH_HYBRID, 5, NULL, 0, &h), MN_CONFLICT);
    assert_non_null(strstr(mn_errmsg(), "hash/hash-v1/384"));
    assert_non_null(strstr(mn_errmsg(), "hash/hash-v1/128"));
    mn_close(db);
    mn_config_free(cfg);
    for (int i = 0; i < N; i++)
        free(texts[i]);
    free(texts);
    mn_session_free(big);
    mn_session_free(small);
}

/* The index behind the stored vectors (a writer added vectors it has not saved yet): another
 * handle searches what the saved index holds plus an exact scan of the rest, says so, and
 * returns the same top hits as an exact scan of everything. */
/* A search within one session ranks its messages as the search of every session does (the same
 * ids, order and scores, the other sessions' hits left out), whichever path each backend takes
 * for it (SQLite: the session's text walked; PostgreSQL: the session's rows matched one by one).
 * Random texts over a small vocabulary, so that the query's words are common in every session;
 * with a role filter too. */
static void keyword_session_ranks_as_all(void **state)
{
    (void)state;
    static const char *const words[] = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf",
                                        "hotel", "india", "juliet", "kilo", "lima", "mike", "november"};
    enum { NW = sizeof words / sizeof words[0], SESSIONS = 5, PER = 40, QUERIES = 12 };
    mn_db *db = open_db("scoped", "none", NULL);
    unsigned seed = 20261201;
    char ids[SESSIONS][40];
    for (int s = 0; s < SESSIONS; s++) {
        char *texts[PER];
        for (int i = 0; i < PER; i++) {
            texts[i] = calloc(1, 256);
            int n = 2 + (int)(rand_r(&seed) % 12);
            for (int w = 0; w < n; w++) {
                strcat(texts[i], words[rand_r(&seed) % (s % 2 ? NW : NW / 2)]); /* odd sessions: more words */
                strcat(texts[i], " ");
            }
        }
        mn_session *ss = add_session(db, NULL, (const char *const *)texts, PER);
        snprintf(ids[s], sizeof ids[s], "%s", ss->id);
        mn_session_free(ss);
        for (int i = 0; i < PER; i++)
            free(texts[i]);
    }
    for (int q = 0; q < QUERIES; q++) {
        char query[128] = "";
        for (int w = 0, n = 1 + q % 4; w < n; w++) {
            strcat(query, words[rand_r(&seed) % NW]);
            strcat(query, " ");
        }
        mn_search_filter f = MN_SEARCH_FILTER_INIT;
        f.role = q % 3 == 2 ? MN_ROLE_USER : -1;
        mn_search_hits *all = NULL;
        assert_int_equal(mn_search(db, query, MN_SEARCH_KEYWORD, 1000, &f, 0, &all), MN_OK);
        for (int s = 0; s < SESSIONS; s++) {
            f.session_id = ids[s];
            mn_search_hits *one = NULL;
            assert_int_equal(mn_search(db, query, MN_SEARCH_KEYWORD, 1000, &f, 0, &one), MN_OK);
            size_t k = 0;
            for (size_t i = 0; i < all->count; i++) {
                if (strcmp(all->items[i].message.session_id, ids[s]) != 0)
                    continue;
                assert_true(k < one->count);
                assert_int_equal(one->items[k].message.id, all->items[i].message.id);
                assert_true(one->items[k].bm25 == all->items[i].bm25);
                k++;
            }
            assert_int_equal(k, one->count);
            mn_search_hits_free(one);
        }
        mn_search_hits_free(all);
    }
    mn_close(db);
}

static void index_behind_scans_the_rest(void **state)
{
    (void)state;
    enum { N1 = 700, N2 = 300, K = 10 }; /* N2: more than one catch-up batch (vindex.c, 256) */
    char *texts[N1 + N2];
    for (int i = 0; i < N1 + N2; i++) {
        texts[i] = malloc(96);
        snprintf(texts[i], 96, "%s %d about topic%d and item%d", i < N1 ? "note" : "later note", i, i % 23, i % 7);
    }
    mn_db *w = open_db("behind", "hash", NULL);
    mn_session *s1 = add_session(w, NULL, (const char *const *)texts, N1);
    assert_int_equal(mn_embed_backfill(w, NULL, NULL, NULL), MN_OK); /* builds and saves */
    mn_session *s2 = add_session(w, NULL, (const char *const *)texts + N1, N2);
    size_t done = 0;
    assert_int_equal(mn_embed_pending(w, 0, &done), MN_OK); /* indexed in memory, not saved yet */
    assert_int_equal(done, N2);
    const char *q = "later note about topic5 and item3";
    mn_search_hits *hw = NULL, *hb = NULL, *hx = NULL;
    /* the writer caught its index up in batches read under the store's lock and applied after */
    assert_int_equal(mn_search(w, q, MN_SEARCH_SEMANTIC, K, NULL, 0, &hw), MN_OK);
    assert_int_equal(hw->index_indexed, N1 + N2);
    assert_int_equal(hw->index_scanned, 0);
    mn_db *r = open_db("behind", "hash", NULL);
    assert_int_equal(mn_search(r, q, MN_SEARCH_SEMANTIC, K, NULL, 0, &hb), MN_OK);
    mn_close(r);
    if (!test_db_pg()) {
        assert_int_equal(hb->index_indexed, N1);
        assert_int_equal(hb->index_scanned, N2);
    } else { /* no file: a new handle scans everything */
        assert_int_equal(hb->index_indexed, 0);
        assert_int_equal(hb->index_scanned, N1 + N2);
    }
    /* exact: the same search with no index file at all */
    char path[200], aside[220];
    snprintf(path, sizeof path, "%s/behind.db.hnsw", dir);
    snprintf(aside, sizeof aside, "%s.aside", path);
    if (!test_db_pg())
        assert_int_equal(rename(path, aside), 0);
    r = open_db("behind", "hash", NULL);
    assert_int_equal(mn_search(r, q, MN_SEARCH_SEMANTIC, K, NULL, 0, &hx), MN_OK);
    mn_close(r);
    assert_int_equal(hx->index_indexed, 0);
    assert_int_equal(hx->index_scanned, N1 + N2);
    assert_int_equal(hb->count, K);
    assert_int_equal(hx->count, K);
    int later = 0;
    for (size_t i = 0; i < K; i++) {
        assert_int_equal(hb->items[i].message.id, hx->items[i].message.id);
        assert_int_equal(hw->items[i].message.id, hx->items[i].message.id);
        later += strncmp(hb->items[i].message.content, "later", 5) == 0;
    }
    assert_true(later > 0); /* the scanned rest did take part */
    if (!test_db_pg())
        assert_int_equal(rename(aside, path), 0);
    mn_search_hits_free(hw);
    mn_search_hits_free(hb);
    mn_search_hits_free(hx);
    mn_close(w);
    mn_session_free(s1);
    mn_session_free(s2);
    for (int i = 0; i < N1 + N2; i++)
        free(texts[i]);
}

/* A text context with retrieval over every session, whatever the similarity. */
static mn_context_opts rag_everywhere(void)
{
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.rag = 1;
    o.rag_min_similarity = -1;
    o.rag_scope = MN_RAG_SCOPE_ALL;
    o.format = MN_FORMAT_TEXT;
    return o;
}

/* The hits injected into a context, from its report's "rag.injected". */
static int injected_count(const char *report)
{
    const char *at = strstr(report, "\"injected\":["), *end = at ? strchr(at, ']') : NULL;
    int n = 0;
    for (const char *p = at; p && (p = strstr(p + 1, "\"id\":")) && p < end;)
        n++;
    return n;
}

/* Over a sweep of budgets the block holds the most hits that fit: within the budget, never fewer
 * than a block another budget showed to fit in this one (the history, one message, is the same
 * in each), and the hits left out for the budget are the rest. */
static void rag_block_most_that_fit(void **state)
{
    (void)state;
    mn_db *db = open_db("ragfit", "hash", "inline");
    char texts[30][160];
    const char *past[30];
    for (int i = 0; i < 30; i++) {
        snprintf(texts[i], sizeof texts[i], "the deploy key number %d lives in vault under ops/deploy/%d%s", i, i * 7,
                 i % 3 ? " with a longer note about rotating it every quarter" : "");
        past[i] = texts[i];
    }
    mn_session *old = add_session(db, NULL, past, 30);
    static const char *const now[] = {"where is the deploy key stored in vault?"};
    mn_session *s = add_session(db, NULL, now, 1);
    mn_context_opts o = rag_everywhere();
    o.rag_top_k = 30;
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
    int all = injected_count(c->report);
    int64_t budget[64], tokens[64];
    int n[64], k = 0;
    budget[0] = c->tokens;
    mn_context_free(c);
    assert_true(all >= 20);
    for (; k < 64 && budget[k] > 20; k++) {
        o.max_tokens = budget[k];
        assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
        tokens[k] = c->tokens;
        n[k] = injected_count(c->report);
        assert_true(tokens[k] <= budget[k]);
        char left[64];
        snprintf(left, sizeof left, "\"left_out_for_budget\":%d", all - n[k]);
        if (n[k] < all && n[k] > 0)
            assert_non_null(strstr(c->report, left));
        mn_context_free(c);
        if (k + 1 < 64)
            budget[k + 1] = budget[k] - 1 - budget[k] / 9;
    }
    assert_int_equal(n[0], all);
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            if (tokens[j] <= budget[i] && n[i] < n[j])
                fail_msg("budget %lld: %d hits, yet %d fit in %lld tokens", (long long)budget[i], n[i], n[j],
                         (long long)tokens[j]);
    mn_session_free(old);
    mn_session_free(s);
    mn_close(db);
}

static void rag_in_context(void **state)
{
    (void)state;
    mn_db *db = open_db("rag", "hash", "inline");
    static const char *const past[] = {"the deploy key lives in vault under ops/deploy", "ok noted"};
    mn_session *old = add_session(db, NULL, past, 2);
    static const char *const now[] = {"where is the deploy key stored in vault?"};
    mn_session *s = add_session(db, NULL, now, 1);
    int64_t queued = -1;
    assert_int_equal(mn_embed_counts(db, NULL, &queued), MN_OK);
    assert_int_equal(queued, 0); /* inline mode embedded on append */
    mn_context_opts o = rag_everywhere();
    mn_context *c = NULL;
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
    assert_non_null(strstr(c->rendered, "RELEVANT CONTEXT FROM PAST CONVERSATIONS:\n---\n[USER]: the deploy key"));
    /* a message of its own before the question, which is sent as it was said */
    const char *block = strstr(c->rendered, "RELEVANT CONTEXT"), *q = strstr(c->rendered, "where is the deploy");
    assert_true(block && q && block < q);
    assert_null(strstr(c->rendered, "USER QUESTION"));
    assert_non_null(strstr(c->report, "\"injected\":[{\"id\":1,"));
    int64_t with_rag = c->tokens;
    mn_context_free(c);
    /* the injection stays within the budget: one token short of it, the second hit goes first,
     * and with no room at all nothing is injected */
    o.max_tokens = with_rag - 1;
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
    assert_true(c->tokens <= o.max_tokens);
    assert_non_null(strstr(c->report, "\"left_out_for_budget\":1"));
    mn_context_free(c);
    o.max_tokens = 30;
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
    assert_true(c->tokens <= 30);
    assert_null(strstr(c->rendered, "RELEVANT CONTEXT"));
    assert_non_null(strstr(c->report, "no room within max_tokens"));
    mn_context_free(c);
    o.max_tokens = 0;
    /* scope session: nothing else in this session */
    o.rag_scope = MN_RAG_SCOPE_SESSION;
    assert_int_equal(mn_context_build(db, s->id, &o, &c), MN_OK);
    assert_null(strstr(c->rendered, "RELEVANT CONTEXT"));
    assert_non_null(strstr(c->report, "\"injected\":[]"));
    mn_context_free(c);
    /* the stored message stays the original */
    mn_messages *l = NULL;
    assert_int_equal(mn_history(db, s->id, NULL, &l), MN_OK);
    assert_string_equal(l->items[0].content, now[0]);
    mn_messages_free(l);
    mn_session_free(old);
    mn_session_free(s);
    mn_close(db);
}

/* Two processes append and embed at once; then every message has exactly one vector, found once. */
static void two_process_writers(void **state)
{
    (void)state;
    mn_db *db = open_db("conc", "hash", NULL);
    mn_session *s = add_session(db, NULL, docs, 1);
    mn_close(db);
    enum { PER = 60 };
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            mn_db *d = open_db("conc", "hash", k ? "inline" : NULL);
            int bad = 0;
            for (int i = 0; i < PER && !bad; i++) {
                char t[64];
                snprintf(t, sizeof t, "writer%d message %d zebra", k, i);
                mn_message_in m = MN_MESSAGE_IN_INIT;
                m.content = t;
                bad |= mn_append(d, s->id, &m, 0, NULL) != MN_OK;
                if (i % 10 == 0) {
                    size_t n;
                    bad |= mn_embed_pending(d, 0, &n) != MN_OK;
                    mn_search_hits *h = NULL;
                    bad |= mn_search(d, "zebra", MN_SEARCH_SEMANTIC, 5, NULL, 0, &h) != MN_OK;
                    mn_search_hits_free(h);
                }
            }
            mn_close(d);
            _exit(bad);
        }
    }
    for (int k = 0; k < 2; k++) {
        int st = 0;
        assert_int_equal(waitpid(kids[k], &st, 0), kids[k]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    db = open_db("conc", "hash", NULL);
    size_t n = 0;
    assert_int_equal(mn_embed_pending(db, 0, &n), MN_OK);
    int64_t embedded = 0;
    assert_int_equal(mn_embed_counts(db, &embedded, NULL), MN_OK);
    assert_int_equal(embedded, 2 * PER + 1);
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, "zebra message", MN_SEARCH_SEMANTIC, 1000, NULL, -1, &h), MN_OK);
    assert_int_equal(h->count, 2 * PER + 1); /* every vector once: no loss, no duplicate */
    for (size_t i = 1; i < h->count; i++)
        for (size_t j = 0; j < i; j++)
            assert_true(h->items[i].message.id != h->items[j].message.id);
    mn_search_hits_free(h);
    assert_int_equal(mn_search(db, "zebra", MN_SEARCH_KEYWORD, 1000, NULL, 0, &h), MN_OK);
    assert_int_equal(h->count, 2 * PER);
    mn_search_hits_free(h);
    mn_session_free(s);
    mn_close(db);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/mnemo-search-XXXXXX");
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
        cmocka_unit_test(keyword_hostile_queries),  cmocka_unit_test(semantic_hybrid_and_deletes),
        cmocka_unit_test(filtered_exact_k_and_rebuild), cmocka_unit_test(rag_in_context), cmocka_unit_test(rag_block_most_that_fit),
        cmocka_unit_test(two_process_writers),      cmocka_unit_test(not_embedded_counted),
        cmocka_unit_test(index_behind_scans_the_rest), cmocka_unit_test(keyword_session_ranks_as_all),
    };
    return cmocka_run_group_tests_name("search", tests, setup, teardown);
}
