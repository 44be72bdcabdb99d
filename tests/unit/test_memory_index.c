/*
 * test_memory_index.c — semantic search over long-term memories through the memory vector index
 * (search/vindex.c over memory_vectors and memory_vector_log; docs/memory.md, "Semantic search"),
 * on a real database (a SQLite file; pg/unit/test_memory_index on PostgreSQL): thousands of
 * memories, then updates (superseded versions), deletes (closed) and forgets (erased). Checked
 * against an exact cosine scan the test makes from the same embedder's vectors:
 *   - scoped (one user) search returns the exact top 10 (the same scores, only that user's
 *     current memories);
 *   - unscoped search has recall@10 >= 0.95 and never returns a superseded, closed or forgotten
 *     version; as of a past moment it returns the versions valid then;
 *   - the writers keep the index current: this handle has one, the saved file is there, and a
 *     second handle finds it (SQLite: "<db>.memories.hnsw");
 *   - a database of schema version 6 (no memory_vector_log) is migrated, searched exactly until a
 *     writer builds the index from a full scan, then through it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"
#include "embed/embed.h"
#include "engine/engine.h"
#include "search/search.h"
#include "store/sqlite/schema.h"
#include "test_db.h"

#define N 2000
#define USERS 20
#define T0 1800000000000LL
#define DAY 86400000LL

static char dir[512];

static uint64_t rs = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs >> 11);
}

static const char *const WORDS[] = {"project", "deploy",  "server",  "database", "meeting", "budget",  "travel",
                                    "family",  "garden",  "music",   "report",   "invoice", "kitchen", "weekend",
                                    "library", "client",  "release", "backup",   "cluster", "coffee",  "bicycle",
                                    "holiday", "review",  "design",  "network",  "storage", "doctor",  "school",
                                    "friend",  "concert", "running", "painting", "python",  "kernel",  "camera"};
#define NWORDS (sizeof WORDS / sizeof *WORDS)

static void make_text(char *out, size_t cap, int i)
{
    int len = snprintf(out, cap, "note %d:", i);
    for (int w = 0, nw = 3 + (int)(rnd() % 6); w < nw; w++)
        len += snprintf(out + len, cap - (size_t)len, " %s", WORDS[rnd() % NWORDS]);
}

static void set_now(long long ms)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", ms);
    setenv("MNEMO_TEST_NOW_MS", v, 1);
}

static mn_db *open_db(const char *path)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", "hash", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "search.index_threads", "2", NULL), MN_OK);
    mn_db *db = NULL;
    assert_int_equal(mn_open_path(test_db_target(path), cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

/* What the test knows of each memory. */
struct mem {
    char id[40];
    int user;
    int version;            /* current version */
    int closed, forgotten;  /* deleted (closed) / erased */
    float *v1, *cur;        /* the vectors of version 1 and of the current version */
};

static struct mem mems[N];
static uint32_t dim;

static float *embed(mn_db *db, const char *text)
{
    mn_embedder *e = NULL;
    float *v = NULL;
    assert_int_equal(mn__search_embedder(db, &e), MN_OK);
    assert_int_equal(mn__embed_texts_alloc(e, &text, 1, &v, &dim), MN_OK);
    return v;
}

static double cosine(const float *a, const float *b)
{
    double d = 0, na = 0, nb = 0;
    for (uint32_t i = 0; i < dim; i++) {
        d += (double)a[i] * b[i];
        na += (double)a[i] * a[i];
        nb += (double)b[i] * b[i];
    }
    return na > 0 && nb > 0 ? d / sqrt(na * nb) : 0;
}

static int find_mem(const char *id)
{
    for (int i = 0; i < N; i++)
        if (strcmp(mems[i].id, id) == 0)
            return i;
    return -1;
}

/* The exact top k scores (descending) of the memories passing: user (-1: any), as_of (0: now). */
static int exact_top(const float *q, int user, int as_of, double *top, int k)
{
    int n = 0;
    for (int i = 0; i < N; i++) {
        const struct mem *m = &mems[i];
        if (!m->v1 || m->forgotten || (user >= 0 && m->user != user) || (!as_of && m->closed))
            continue;
        double s = cosine(q, as_of ? m->v1 : m->cur);
        if (n == k && s <= top[k - 1])
            continue;
        int pos = n < k ? n++ : k - 1;
        while (pos > 0 && top[pos - 1] < s) {
            top[pos] = top[pos - 1];
            pos--;
        }
        top[pos] = s;
    }
    return n;
}

static void build(mn_db *db)
{
    char text[256];
    set_now(T0);
    for (int i = 0; i < N; i++) {
        make_text(text, sizeof text, i);
        mn_memory_in in = MN_MEMORY_IN_INIT;
        char uid[16];
        snprintf(uid, sizeof uid, "u%02d", i % USERS);
        in.text = text;
        in.user_id = uid;
        in.pinned = 0;
        in.token_cap = 0;
        in.valid_from = T0 - DAY;
        mn_memory *out = NULL;
        assert_int_equal(mn_memory_add(db, &in, &out), MN_OK);
        snprintf(mems[i].id, sizeof mems[i].id, "%s", out->id);
        mn_memory_free(out);
        mems[i].user = i % USERS;
        mems[i].version = 1;
        mems[i].v1 = mems[i].cur = embed(db, text);
    }
    /* forget drops the index (erasure); the next writer builds it again from a full scan */
    for (int i = 0; i < N; i += 40) {
        assert_int_equal(mn_memory_forget(db, mems[i].id), MN_OK);
        mems[i].forgotten = 1;
    }
    set_now(T0 + DAY);
    for (int i = 1; i < N; i += 6) {
        if (mems[i].forgotten)
            continue;
        make_text(text, sizeof text, N + i);
        mn_memory_in ch = MN_MEMORY_IN_INIT;
        ch.text = text;
        assert_int_equal(mn_memory_update(db, mems[i].id, &ch, NULL), MN_OK);
        mems[i].version = 2;
        mems[i].cur = embed(db, text);
    }
    set_now(T0 + 2 * DAY);
    for (int i = 3; i < N; i += 20) {
        if (mems[i].forgotten)
            continue;
        assert_int_equal(mn_memory_delete(db, mems[i].id, 0, NULL, NULL), MN_OK);
        mems[i].closed = 1;
    }
    set_now(T0 + 3 * DAY);
}

/* Searches q semantically (user -1: any; as_of 0: now) and checks every hit is a version that
 * passes; returns the hits' recall of the exact top 10, and (exact_scores) asserts the scores are
 * the exact top 10's. */
static double check_query(mn_db *db, const char *qtext, int user, int64_t as_of, int exact_scores)
{
    float *q = embed(db, qtext);
    mn_memory_query mq = MN_MEMORY_QUERY_INIT;
    char uid[16];
    if (user >= 0) {
        snprintf(uid, sizeof uid, "u%02d", user);
        mq.user_id = uid;
    }
    mq.as_of = as_of;
    mq.limit = 10;
    mn_memories *res = NULL;
    assert_int_equal(mn_memory_search(db, qtext, MN_SEARCH_SEMANTIC, &mq, &res), MN_OK);
    double top[10];
    int n = exact_top(q, user, as_of != 0, top, 10);
    assert_int_equal((int)res->count, n < 10 ? n : 10);
    int found = 0;
    for (size_t i = 0; i < res->count; i++) {
        const mn_memory *m = mn_memories_at(res, i);
        int at = find_mem(m->id);
        assert_true(at >= 0);
        const struct mem *t = &mems[at];
        assert_false(t->forgotten);
        if (user >= 0)
            assert_int_equal(t->user, user);
        if (as_of) {
            /* the version valid then: the first, or the delete that ended it later (same text) */
            assert_true(m->version == 1 || (t->closed && t->cur == t->v1 && strcmp(m->change, "delete") == 0));
        } else {
            assert_false(t->closed);                 /* never a closed one as current */
            assert_int_equal(m->version, t->version); /* never a superseded one */
        }
        for (size_t j = 0; j < i; j++) /* one version of a memory at most */
            assert_string_not_equal(mn_memories_at(res, j)->id, m->id);
        double s = cosine(q, as_of ? t->v1 : t->cur);
        assert_true(fabs(s - m->score) < 1e-4); /* the score is the version's own */
        if (exact_scores)
            assert_true(fabs(s - top[i]) < 1e-4);
        if (s >= top[(n < 10 ? n : 10) - 1] - 1e-6)
            found++;
    }
    free(q);
    mn_memories_free(res);
    return (double)found / (n < 10 ? n : 10);
}

static int memory_index_ready(mn_db *db)
{
    struct mn_vsearch *mvs = NULL;
    assert_int_equal(mn__memory_vsearch(db, &mvs), MN_OK);
    return mn__vsearch_ready(mvs);
}

static void search_against_exact(void **state)
{
    (void)state;
    char path[700], file[800];
    snprintf(path, sizeof path, "%s/mem.db", dir);
    mn_db *db = open_db(path);
    build(db);
    mn__memory_index_wait(db);
    assert_true(memory_index_ready(db)); /* the handle's worker built it after the writes */

    char qtext[128];
    double recall = 0;
    int nq = 40;
    for (int i = 0; i < nq; i++) {
        snprintf(qtext, sizeof qtext, "%s %s", WORDS[rnd() % NWORDS], WORDS[rnd() % NWORDS]);
        recall += check_query(db, qtext, -1, 0, 0);                /* unscoped */
        check_query(db, qtext, (int)(rnd() % USERS), 0, 1);        /* scoped: exact */
        check_query(db, qtext, (int)(rnd() % USERS), T0 + DAY / 2, 1); /* scoped, as of */
    }
    print_message("unscoped recall@10 %.3f\n", recall / nq);
    assert_true(recall / nq >= 0.95);
    /* unscoped as of: the versions valid then */
    for (int i = 0; i < 10; i++) {
        snprintf(qtext, sizeof qtext, "%s %s", WORDS[rnd() % NWORDS], WORDS[rnd() % NWORDS]);
        check_query(db, qtext, -1, T0 + DAY / 2, 0);
    }
    mn_close(db);

    /* a second handle finds the saved index (SQLite; PostgreSQL keeps it in memory only) */
    if (!test_db_pg()) {
        snprintf(file, sizeof file, "%s.memories.hnsw", path);
        assert_int_equal(access(file, F_OK), 0);
    }
    db = open_db(path);
    assert_int_equal(memory_index_ready(db), !test_db_pg());
    recall = 0;
    for (int i = 0; i < 20; i++) {
        snprintf(qtext, sizeof qtext, "%s %s", WORDS[rnd() % NWORDS], WORDS[rnd() % NWORDS]);
        recall += check_query(db, qtext, -1, 0, 0);
        check_query(db, qtext, (int)(rnd() % USERS), 0, 1);
    }
    assert_true(recall / 20 >= 0.95);
    /* forget: gone from the results at once, on this handle */
    snprintf(qtext, sizeof qtext, "%s", "note 5: kernel camera");
    mn_memory_query mq = MN_MEMORY_QUERY_INIT;
    mq.limit = 1;
    mn_memories *res = NULL;
    assert_int_equal(mn_memory_search(db, qtext, MN_SEARCH_SEMANTIC, &mq, &res), MN_OK);
    assert_int_equal(res->count, 1);
    char top_id[40];
    snprintf(top_id, sizeof top_id, "%s", mn_memories_at(res, 0)->id);
    mn_memories_free(res);
    assert_int_equal(mn_memory_forget(db, top_id), MN_OK);
    mems[find_mem(top_id)].forgotten = 1;
    check_query(db, qtext, -1, 0, 0);
    assert_int_equal(mn_memory_search(db, qtext, MN_SEARCH_SEMANTIC, &mq, &res), MN_OK);
    assert_true(res->count == 1 && strcmp(mn_memories_at(res, 0)->id, top_id) != 0);
    mn_memories_free(res);
    mn_close(db);
    for (int i = 0; i < N; i++) {
        if (mems[i].cur != mems[i].v1)
            free(mems[i].cur);
        free(mems[i].v1);
    }
    memset(mems, 0, sizeof mems);
    unsetenv("MNEMO_TEST_NOW_MS");
}

/* A version 6 database with memories and their vectors (made with the version 6 migrations),
 * opened by this version. */
static void migration_from_v6(void **state)
{
    (void)state;
    if (test_db_pg())
        skip(); /* PostgreSQL's migrations run the same list (pg/schema.h); the test server starts empty */
    char path[700];
    snprintf(path, sizeof path, "%s/old.db", dir);
    mn_db *db = open_db(path); /* for its embedder only: the file is made below */
    mn_close(db);
    unlink(path);
    sqlite3 *s = NULL;
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    assert_int_equal(sqlite3_exec(s, "PRAGMA foreign_keys = ON", NULL, NULL, NULL), SQLITE_OK);
    for (int v = 0; v < 6; v++)
        assert_int_equal(sqlite3_exec(s, mn_sqlite_migrations[v], NULL, NULL, NULL), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d; PRAGMA user_version = 6", MN_SQLITE_APPLICATION_ID);
    assert_int_equal(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    static const char *const texts[] = {"the user lives in Lisbon", "the user prefers green tea",
                                        "the deploy key is dk-1f2e00"};
    mn_embedder *e = NULL;
    mn_embed_cfg c = {"hash", NULL, NULL, NULL, 0, 0, 0, 0, 0};
    assert_int_equal(mn__embed_open(&c, &e), MN_OK);
    for (int i = 0; i < 3; i++) {
        snprintf(sql, sizeof sql,
                 "INSERT INTO memories (id, version, text, kind, namespace, valid_from, recorded_at, change, actor)"
                 " VALUES ('0190a000-0000-7000-8000-00000000000%d', 1, '%s', 'fact', 'default', 1, 1, 'add', 'api')",
                 i, texts[i]);
        assert_int_equal(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
        float *v = NULL;
        uint32_t d = 0;
        assert_int_equal(mn__embed_texts_alloc(e, &texts[i], 1, &v, &d), MN_OK);
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_prepare_v2(s, "INSERT INTO memory_vectors (vid, dim, vector) VALUES (?1, ?2, ?3)",
                                            -1, &st, NULL),
                         SQLITE_OK);
        sqlite3_bind_int64(st, 1, sqlite3_last_insert_rowid(s));
        sqlite3_bind_int64(st, 2, d);
        sqlite3_bind_blob(st, 3, v, (int)(d * 4), SQLITE_TRANSIENT); /* little-endian f32 */
        assert_int_equal(sqlite3_step(st), SQLITE_DONE);
        sqlite3_finalize(st);
        free(v);
    }
    mn__embed_free(e);
    sqlite3_close(s);

    db = open_db(path); /* migrates to this version */
    assert_false(memory_index_ready(db)); /* no index yet: exact */
    mn_memory_query mq = MN_MEMORY_QUERY_INIT;
    mq.limit = 1;
    mn_memories *res = NULL;
    assert_int_equal(mn_memory_search(db, "green tea", MN_SEARCH_SEMANTIC, &mq, &res), MN_OK);
    assert_int_equal(res->count, 1);
    assert_string_equal(mn_memories_at(res, 0)->text, "the user prefers green tea");
    mn_memories_free(res);
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = "the user's editor is helix";
    in.pinned = 0;
    in.token_cap = 0;
    assert_int_equal(mn_memory_add(db, &in, NULL), MN_OK); /* the worker builds the index: all 4 */
    mn__memory_index_wait(db);
    assert_true(memory_index_ready(db));
    mn_close(db);

    db = open_db(path);
    assert_true(memory_index_ready(db)); /* the saved file */
    const char *qs[][2] = {{"green tea", "the user prefers green tea"},
                           {"lives in Lisbon", "the user lives in Lisbon"},
                           {"editor helix", "the user's editor is helix"}};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mn_memory_search(db, qs[i][0], MN_SEARCH_SEMANTIC, &mq, &res), MN_OK);
        assert_int_equal(res->count, 1);
        assert_string_equal(mn_memories_at(res, 0)->text, qs[i][1]);
        mn_memories_free(res);
    }
    mn_close(db);
    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(s, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), MN_SQLITE_SCHEMA_VERSION);
    sqlite3_finalize(st);
    /* the new vector was logged; the old ones needed no rows */
    assert_int_equal(sqlite3_prepare_v2(s, "SELECT count(*) FROM memory_vector_log", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1);
    sqlite3_finalize(st);
    sqlite3_close(s);
}

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "memindex");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(search_against_exact),
        cmocka_unit_test(migration_from_v6),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
