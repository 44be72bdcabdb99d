/*
 * test_store_memories.c — the memory row primitives (store/store_memory.h) on each backend:
 * SQLite (unit/test_store_memories) and PostgreSQL (pg/unit/test_store_memories). `put` stores a
 * version as it is (its superseded_at and valid_to included, nothing closed) and once only;
 * `end` changes the two times of the one version it names and nothing else; between begin and
 * commit, query, put and end all run in that transaction (a rollback leaves nothing); a vector
 * comes back bit for bit; forget removes every version. Which versions a change closes is the
 * engine's (api/test_memory).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/store_memory.h"
#include "test_db.h"

static char dir[256], file[400];
static mn_store *st;

static const char ID[] = "01900000-0000-7000-8000-000000000001";

static int setup(void **state)
{
    (void)state;
    if (test_tmpdir(dir, sizeof dir, "store-memories") != 0)
        return -1;
    snprintf(file, sizeof file, "%s/memories.db", dir);
    mn_store_opts o = {.busy_timeout_ms = 2000, .sync_full = 0};
    if (mn__store_open(test_db_target(file), &o, &st) != MN_OK) {
        fprintf(stderr, "open: %s\n", mn_errmsg());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (st)
        st->ops->close(st);
    return test_rmdir(dir);
}

/* Version v of memory ID, valid from `from`, recorded at `at`, open. */
static mn_memory version(int64_t v, const char *text, int64_t from, int64_t at)
{
    mn_memory m;
    memset(&m, 0, sizeof m);
    m.id = (char *)ID;
    m.version = v;
    m.text = (char *)text;
    m.kind = "fact";
    m.ns = "default";
    m.metadata = "{}";
    m.valid_from = from;
    m.recorded_at = at;
    m.change = v == 1 ? "add" : "update";
    m.actor = "test";
    return m;
}

struct row {
    int64_t version, valid_to, superseded_at;
    char text[32];
};

struct rows {
    struct row r[8];
    int n;
};

static int keep(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25, (void)vec, (void)dim;
    struct rows *rs = user;
    if (rs->n < 8) {
        struct row *r = &rs->r[rs->n++];
        r->version = m->version;
        r->valid_to = m->valid_to;
        r->superseded_at = m->superseded_at;
        snprintf(r->text, sizeof r->text, "%s", m->text);
    }
    return 0;
}

/* Every version of ID, oldest first. */
static struct rows versions(void)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, ID, 1, NULL, 0, 0, 0, 0, NULL, 0};
    struct rows rs = {.n = 0};
    assert_int_equal(st->ops->memory->query(st, &sq, keep, &rs), MN_OK);
    return rs;
}

static void forget_all(void)
{
    int64_t removed = 0;
    assert_int_equal(st->ops->memory->forget(st, ID, &removed), MN_OK);
}

static void put_stores_as_given_and_once(void **state)
{
    (void)state;
    mn_memory v1 = version(1, "tea", 100, 100), v2 = version(2, "coffee", 200, 200);
    v1.superseded_at = 150; /* as an import hands it: put closes nothing and opens nothing */
    v1.valid_to = 120;
    int added = 0;
    assert_int_equal(st->ops->memory->put(st, &v1, NULL, 0, &added), MN_OK);
    assert_int_equal(added, 1);
    assert_int_equal(st->ops->memory->put(st, &v2, NULL, 0, &added), MN_OK);
    assert_int_equal(added, 1);
    mn_memory again = version(1, "other text", 1, 1);
    assert_int_equal(st->ops->memory->put(st, &again, NULL, 0, &added), MN_OK);
    assert_int_equal(added, 0);
    struct rows rs = versions();
    assert_int_equal(rs.n, 2);
    assert_string_equal(rs.r[0].text, "tea");
    assert_int_equal(rs.r[0].superseded_at, 150);
    assert_int_equal(rs.r[0].valid_to, 120);
    assert_int_equal(rs.r[1].superseded_at, 0);
    assert_int_equal(rs.r[1].valid_to, 0);
    forget_all();
}

static void end_changes_one_version(void **state)
{
    (void)state;
    int added = 0;
    for (int64_t v = 1; v <= 3; v++) {
        mn_memory m = version(v, "x", 100 * v, 100 * v);
        assert_int_equal(st->ops->memory->put(st, &m, NULL, 0, &added), MN_OK);
    }
    assert_int_equal(st->ops->memory->end(st, ID, 2, 350, 300), MN_OK);
    struct rows rs = versions();
    assert_int_equal(rs.n, 3);
    assert_int_equal(rs.r[0].superseded_at, 0);
    assert_int_equal(rs.r[0].valid_to, 0);
    assert_int_equal(rs.r[1].superseded_at, 350);
    assert_int_equal(rs.r[1].valid_to, 300);
    assert_int_equal(rs.r[2].superseded_at, 0);
    assert_int_equal(st->ops->memory->end(st, ID, 9, 1, 1), MN_OK); /* no such version: nothing */
    forget_all();
}

static void begin_commit_holds_every_primitive(void **state)
{
    (void)state;
    int added = 0;
    mn_memory v1 = version(1, "first", 100, 100), v2 = version(2, "second", 200, 200);
    assert_int_equal(st->ops->begin(st), MN_OK);
    assert_int_equal(st->ops->memory->put(st, &v1, NULL, 0, &added), MN_OK);
    assert_int_equal(versions().n, 1); /* the query sees the transaction's own row */
    st->ops->rollback(st);
    assert_int_equal(versions().n, 0);

    assert_int_equal(st->ops->memory->put(st, &v1, NULL, 0, &added), MN_OK);
    assert_int_equal(st->ops->begin(st), MN_OK);
    assert_int_equal(st->ops->memory->end(st, ID, 1, 200, 200), MN_OK);
    assert_int_equal(st->ops->memory->put(st, &v2, NULL, 0, &added), MN_OK);
    assert_int_equal(st->ops->commit(st), MN_OK);
    struct rows rs = versions();
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.r[0].superseded_at, 200);
    assert_int_equal(rs.r[1].version, 2);
    forget_all();
}

struct vec_seen {
    int n;
    int64_t vid;
    float v[4];
    uint32_t dim;
};

static int with_vector(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)m, (void)bm25, (void)vec, (void)dim;
    ++*(int *)user;
    return 0;
}

static int scanned(void *user, int64_t vid, const float *vec, uint32_t dim)
{
    struct vec_seen *s = user;
    s->n++;
    s->vid = vid;
    s->dim = dim;
    memcpy(s->v, vec, (dim < 4 ? dim : 4) * sizeof *vec);
    return 0;
}

static void vector_bit_for_bit_and_forget(void **state)
{
    (void)state;
    const float vec[4] = {0.1f, -2.5f, 1e-30f, 3.0f};
    mn_memory v1 = version(1, "with a vector", 100, 100), v2 = version(2, "without", 200, 200);
    int added = 0;
    assert_int_equal(st->ops->memory->put(st, &v1, vec, 4, &added), MN_OK);
    assert_int_equal(st->ops->memory->put(st, &v2, NULL, 0, &added), MN_OK);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, ID, 1, NULL, 1, 0, 0, 0, NULL, 0}; /* only versions with a vector */
    int n = 0;
    assert_int_equal(st->ops->memory->query(st, &sq, with_vector, &n), MN_OK);
    assert_int_equal(n, 1);
    struct vec_seen seen = {0};
    int64_t log_seq = 0;
    assert_int_equal(st->ops->memory->vec_scan(st, scanned, &seen, &log_seq), MN_OK);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.dim, 4);
    assert_memory_equal(seen.v, vec, sizeof vec);
    float back[4] = {0};
    assert_int_equal(st->ops->memory->vec_get(st, seen.vid, back, 4), MN_OK);
    assert_memory_equal(back, vec, sizeof vec);
    int64_t removed = 0;
    assert_int_equal(st->ops->memory->forget(st, ID, &removed), MN_OK);
    assert_int_equal(removed, 2);
    assert_int_equal(versions().n, 0);
    seen.n = 0;
    assert_int_equal(st->ops->memory->vec_scan(st, scanned, &seen, &log_seq), MN_OK);
    assert_int_equal(seen.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(put_stores_as_given_and_once),
        cmocka_unit_test(end_changes_one_version),
        cmocka_unit_test(begin_commit_holds_every_primitive),
        cmocka_unit_test(vector_bit_for_bit_and_forget),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
