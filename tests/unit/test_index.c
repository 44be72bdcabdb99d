/*
 * test_index.c — unit tests of src/index (search side): HNSW recall against the flat oracle on
 * clustered data, filtered search (every path gives the exact answer, k whenever k exist),
 * deletes and compaction, int8 memory and re-ranked recall, arguments, concurrent searches.
 * Sizes are small for sanitizer builds; MNEMO_TEST_BIG=1 runs the 20k-vector versions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "index/index.h"
#include "unit/test_index_data.h"

static int big(void)
{
    const char *e = getenv("MNEMO_TEST_BIG");
    return e && *e && *e != '0';
}

static int64_t id_of(size_t i) { return (int64_t)i * 7 + 3; }
static size_t row_of(int64_t id) { return (size_t)((id - 3) / 7); }

static mn_index *build(const float *x, size_t n, uint32_t d, enum mn_index_kind kind, enum mn_index_quant quant,
                       uint32_t efc)
{
    struct mn_index_params p = MN_INDEX_PARAMS_INIT;
    p.dim = d;
    p.kind = kind;
    p.quant = quant;
    p.ef_construction = efc;
    mn_index *ix = NULL;
    assert_int_equal(mn__index_create(&p, &ix), MN_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mn__index_add(ix, id_of(i), x + i * d), MN_OK);
    assert_int_equal(mn__index_count(ix), n);
    return ix;
}

static size_t overlap(const struct mn_index_hit *a, size_t na, const struct mn_index_hit *b, size_t nb)
{
    size_t hit = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            if (a[i].id == b[j].id) {
                hit++;
                break;
            }
    return hit;
}

static void assert_sorted(const struct mn_index_hit *h, size_t n)
{
    for (size_t i = 1; i < n; i++)
        assert_true(h[i - 1].score > h[i].score || (h[i - 1].score == h[i].score && h[i - 1].id < h[i].id));
}

static void assert_same_hits(const struct mn_index_hit *a, size_t na, const struct mn_index_hit *b, size_t nb)
{
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(a[i].id, b[i].id);
        assert_true(a[i].score == b[i].score);
    }
}

/* ---- recall -------------------------------------------------------------------------------- */

static void recall_vs_flat(void **state)
{
    (void)state;
    size_t n = big() ? 20000 : 3000, d = 64, nq = big() ? 200 : 50, k = 10;
    float *cs = td_centres(50, d, 1);
    float *x = td_points(n, d, cs, 50, 1.5, 2);
    float *q = td_points(nq, d, cs, 50, 1.5, 3);
    mn_index *h = build(x, n, (uint32_t)d, MN_INDEX_HNSW, MN_INDEX_F32, 100);
    mn_index *f = build(x, n, (uint32_t)d, MN_INDEX_FLAT, MN_INDEX_F32, 100);
    struct mn_index_hit hh[10], fh[10];
    size_t hits = 0, nh, nf;
    struct mn_index_search_info info;
    struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
    o.ef = 64;
    o.info = &info;
    for (size_t i = 0; i < nq; i++) {
        assert_int_equal(mn__index_search(h, q + i * d, k, &o, hh, &nh), MN_OK);
        assert_int_equal(info.path, MN_INDEX_PATH_GRAPH);
        assert_int_equal(nh, k);
        assert_sorted(hh, nh);
        assert_int_equal(mn__index_search(f, q + i * d, k, NULL, fh, &nf), MN_OK);
        assert_int_equal(nf, k);
        assert_sorted(fh, nf);
        hits += overlap(hh, nh, fh, nf);
        /* a hit found by both has the same score */
        for (size_t a = 0; a < nh; a++)
            for (size_t b = 0; b < nf; b++)
                if (hh[a].id == fh[b].id)
                    assert_true(hh[a].score == fh[b].score);
    }
    double recall = (double)hits / (double)(nq * k);
    printf("  hnsw recall@10 (n=%zu, d=%zu, ef=64) = %.4f\n", n, d, recall);
    assert_true(recall >= 0.95);

    struct mn_index_stats st;
    mn__index_stats(h, &st);
    assert_int_equal(st.live, n);
    assert_int_equal(st.deleted, 0);
    assert_true(st.max_level >= 1);
    assert_non_null(st.kernel);
    assert_true(st.memory_bytes > n * d * sizeof(float));
    mn__index_free(h);
    mn__index_free(f);
    free(cs);
    free(x);
    free(q);
}

/* mn__index_add_batch: the graph does not depend on the thread count (the saved files are
 * byte-identical for 1, 2 and 4 threads) and its recall against exact search is that of the
 * sequential build's test above. */
static void batch_build_same_graph_any_threads(void **state)
{
    (void)state;
    size_t n = big() ? 20000 : 3000, d = 64, nq = big() ? 200 : 50, k = 10;
    float *cs = td_centres(50, d, 1);
    float *x = td_points(n, d, cs, 50, 1.5, 2);
    float *q = td_points(nq, d, cs, 50, 1.5, 3);
    int64_t *ids = malloc(n * sizeof *ids);
    for (size_t i = 0; i < n; i++)
        ids[i] = id_of(i);
    const unsigned threads[] = {1, 2, 4};
    unsigned char *first = NULL;
    size_t first_len = 0;
    mn_index *f = build(x, n, (uint32_t)d, MN_INDEX_FLAT, MN_INDEX_F32, 100);
    for (size_t t = 0; t < 3; t++) {
        struct mn_index_params p = MN_INDEX_PARAMS_INIT;
        p.dim = (uint32_t)d;
        p.ef_construction = 100;
        mn_index *h = NULL;
        assert_int_equal(mn__index_create(&p, &h), MN_OK);
        assert_int_equal(mn__index_add_batch(h, ids, x, n, threads[t]), MN_OK);
        assert_int_equal(mn__index_count(h), n);
        /* the same graph: the saved bytes are equal */
        char path[128];
        snprintf(path, sizeof path, "/tmp/mnemo-batch-%d-%zu.idx", (int)getpid(), t);
        assert_int_equal(mn__index_save(h, path), MN_OK);
        FILE *fp = fopen(path, "rb");
        assert_non_null(fp);
        fseek(fp, 0, SEEK_END);
        size_t len = (size_t)ftell(fp);
        fseek(fp, 0, SEEK_SET);
        unsigned char *bytes = malloc(len);
        assert_int_equal(fread(bytes, 1, len, fp), len);
        fclose(fp);
        unlink(path);
        if (!first) {
            first = bytes;
            first_len = len;
        } else {
            assert_int_equal(len, first_len);
            assert_memory_equal(bytes, first, len);
            free(bytes);
        }
        /* recall against exact search, as recall_vs_flat */
        struct mn_index_hit hh[10], fh[10];
        size_t hits = 0, nh, nf;
        struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
        o.ef = 64;
        for (size_t i = 0; i < nq; i++) {
            assert_int_equal(mn__index_search(h, q + i * d, k, &o, hh, &nh), MN_OK);
            assert_int_equal(mn__index_search(f, q + i * d, k, NULL, fh, &nf), MN_OK);
            assert_int_equal(nh, k);
            hits += overlap(hh, nh, fh, nf);
        }
        double recall = (double)hits / (double)(nq * k);
        printf("  batch build, %u threads: recall@10 (n=%zu, d=%zu, ef=64) = %.4f\n", threads[t], n, d, recall);
        assert_true(recall >= 0.95);
        /* a batch refuses an id already present, naming it */
        assert_int_equal(mn__index_add_batch(h, ids, x, 1, threads[t]), MN_CONFLICT);
        mn__index_free(h);
    }
    free(first);
    mn__index_free(f);
    free(ids);
    free(cs);
    free(x);
    free(q);
}

/* ---- filters ------------------------------------------------------------------------------- */

struct filt {
    size_t mod, rem; /* accept rows with row % mod == rem */
    size_t calls;
};

static int accept_mod(void *user, int64_t id)
{
    struct filt *f = user;
    f->calls++;
    return row_of(id) % f->mod == f->rem;
}

static void filtered_search_is_exact(void **state)
{
    (void)state;
    size_t n = big() ? 20000 : 10000, d = 16, nq = 20, k = 10;
    float *cs = td_centres(40, d, 11);
    float *x = td_points(n, d, cs, 40, 1.5, 12);
    float *q = td_points(nq, d, cs, 40, 1.5, 13);
    mn_index *h = build(x, n, (uint32_t)d, MN_INDEX_HNSW, MN_INDEX_F32, 64);
    mn_index *f = build(x, n, (uint32_t)d, MN_INDEX_FLAT, MN_INDEX_F32, 64);
    /* 0.1% and 1% of the vectors, and a filter matching fewer than k */
    size_t mods[] = {1000, 100, n / 4};
    for (size_t m = 0; m < sizeof mods / sizeof mods[0]; m++) {
        struct filt fl = {mods[m], 7, 0};
        size_t matching = (n + mods[m] - 1 - 7) / mods[m];
        int64_t *cand = malloc(matching * 2 * sizeof *cand);
        size_t nc = 0;
        for (size_t i = 7; i < n; i += mods[m]) {
            cand[nc++] = id_of(i);
            cand[nc++] = id_of(i); /* duplicates are ignored */
        }
        for (size_t i = 0; i < nq; i++) {
            struct mn_index_hit want[10], got[10];
            size_t nw, ng;
            struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
            o.accept = accept_mod;
            o.user = &fl;
            assert_int_equal(mn__index_search(f, q + i * d, k, &o, want, &nw), MN_OK);
            assert_int_equal(nw, matching < k ? matching : k);
            for (size_t j = 0; j < nw; j++)
                assert_int_equal(row_of(want[j].id) % mods[m], 7);

            struct mn_index_search_info info;
            o.info = &info;
            /* 1: hint says selective: exact scan */
            o.n_accept_hint = matching;
            assert_int_equal(mn__index_search(h, q + i * d, k, &o, got, &ng), MN_OK);
            assert_int_equal(info.path, MN_INDEX_PATH_EXACT);
            assert_same_hits(got, ng, want, nw);
            /* 2: no hint: the graph walk gives up or falls back, never under-returns */
            o.n_accept_hint = 0;
            assert_int_equal(mn__index_search(h, q + i * d, k, &o, got, &ng), MN_OK);
            assert_same_hits(got, ng, want, nw);
            /* 3: forced graph walk with the filter inside it: explores until k accepted */
            o.path = MN_INDEX_PATH_GRAPH;
            assert_int_equal(mn__index_search(h, q + i * d, k, &o, got, &ng), MN_OK);
            assert_int_equal(ng, nw);
            assert_true(overlap(got, ng, want, nw) >= nw - 1);
            o.path = MN_INDEX_PATH_AUTO;
            /* 4: candidate list */
            struct mn_index_search_opts oc = MN_INDEX_SEARCH_OPTS_INIT;
            oc.candidates = cand;
            oc.n_candidates = nc;
            assert_int_equal(mn__index_search(h, q + i * d, k, &oc, got, &ng), MN_OK);
            assert_same_hits(got, ng, want, nw);
        }
        free(cand);
    }
    /* a broad filter (50%) goes through the graph and still returns k good hits */
    struct filt half = {2, 1, 0};
    struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
    struct mn_index_search_info info;
    o.accept = accept_mod;
    o.user = &half;
    o.n_accept_hint = n / 2;
    o.info = &info;
    size_t hits = 0;
    for (size_t i = 0; i < nq; i++) {
        struct mn_index_hit want[10], got[10];
        size_t nw, ng;
        assert_int_equal(mn__index_search(f, q + i * d, k, &o, want, &nw), MN_OK);
        assert_int_equal(mn__index_search(h, q + i * d, k, &o, got, &ng), MN_OK);
        assert_int_equal(info.path, MN_INDEX_PATH_GRAPH);
        assert_int_equal(ng, k);
        for (size_t j = 0; j < ng; j++)
            assert_int_equal(row_of(got[j].id) % 2, 1);
        hits += overlap(got, ng, want, nw);
    }
    assert_true((double)hits / (double)(nq * k) >= 0.95);
    /* candidates naming unknown ids only: nothing */
    int64_t nobody[3] = {-1, -2, 1};
    struct mn_index_search_opts oc = MN_INDEX_SEARCH_OPTS_INIT;
    oc.candidates = nobody;
    oc.n_candidates = 3;
    struct mn_index_hit got[10];
    size_t ng = 99;
    assert_int_equal(mn__index_search(h, q, k, &oc, got, &ng), MN_OK);
    assert_int_equal(ng, 0);
    mn__index_free(h);
    mn__index_free(f);
    free(cs);
    free(x);
    free(q);
}

/* ---- deletes ------------------------------------------------------------------------------- */

static void deletes_never_returned(void **state)
{
    (void)state;
    size_t n = 2000, d = 32, nq = 30, k = 10;
    float *cs = td_centres(30, d, 21);
    float *x = td_points(n, d, cs, 30, 1.5, 22);
    float *q = td_points(nq, d, cs, 30, 1.5, 23);
    mn_index *h = build(x, n, (uint32_t)d, MN_INDEX_HNSW, MN_INDEX_F32, 64);
    mn_index *f = build(x, n, (uint32_t)d, MN_INDEX_FLAT, MN_INDEX_F32, 64);
    uint8_t *gone = calloc(n, 1);
    uint64_t s = 99;
    size_t removed = 0;
    /* the rows nearest to every query go first, so that deleted nodes sit on the search paths */
    for (size_t i = 0; i < nq; i++) {
        struct mn_index_hit hh[10];
        size_t nh;
        assert_int_equal(mn__index_search(f, q + i * d, 5, NULL, hh, &nh), MN_OK);
        for (size_t j = 0; j < nh; j++) {
            size_t r = row_of(hh[j].id);
            if (!gone[r]) {
                assert_int_equal(mn__index_remove(h, hh[j].id), MN_OK);
                assert_int_equal(mn__index_remove(f, hh[j].id), MN_OK);
                gone[r] = 1;
                removed++;
            }
        }
    }
    while (removed < n * 4 / 10) {
        size_t r = (size_t)(td_next(&s) % n);
        if (gone[r])
            continue;
        assert_int_equal(mn__index_remove(h, id_of(r)), MN_OK);
        assert_int_equal(mn__index_remove(f, id_of(r)), MN_OK);
        gone[r] = 1;
        removed++;
    }
    assert_int_equal(mn__index_remove(h, id_of(0) + 1), MN_NOTFOUND);
    size_t r0 = 0;
    while (!gone[r0])
        r0++;
    assert_int_equal(mn__index_remove(h, id_of(r0)), MN_NOTFOUND); /* twice */
    assert_int_equal(mn__index_count(h), n - removed);
    assert_false(mn__index_contains(h, id_of(r0)));

    for (int pass = 0; pass < 2; pass++) {
        size_t hits = 0;
        for (size_t i = 0; i < nq; i++) {
            struct mn_index_hit hh[10], fh[10];
            size_t nh, nf;
            assert_int_equal(mn__index_search(h, q + i * d, k, NULL, hh, &nh), MN_OK);
            assert_int_equal(mn__index_search(f, q + i * d, k, NULL, fh, &nf), MN_OK);
            assert_int_equal(nh, k);
            for (size_t j = 0; j < nh; j++)
                assert_false(gone[row_of(hh[j].id)]);
            hits += overlap(hh, nh, fh, nf);
        }
        assert_true((double)hits / (double)(nq * k) >= 0.9);
        struct mn_index_stats st;
        mn__index_stats(h, &st);
        if (pass == 0) {
            assert_int_equal(st.deleted, removed);
            assert_int_equal(mn__index_compact(h), MN_OK);
            mn__index_stats(h, &st);
            assert_int_equal(st.deleted, 0);
            assert_int_equal(st.live, n - removed);
        }
    }
    /* a removed id can come back */
    assert_int_equal(mn__index_add(h, id_of(r0), x + r0 * d), MN_OK);
    assert_true(mn__index_contains(h, id_of(r0)));
    struct mn_index_hit hh[10];
    size_t nh;
    assert_int_equal(mn__index_search(h, x + r0 * d, 1, NULL, hh, &nh), MN_OK);
    assert_int_equal(nh, 1);
    assert_int_equal(hh[0].id, id_of(r0));

    /* delete all but 4: k = 10 returns exactly those 4 */
    size_t left = 0;
    for (size_t r = 0; r < n; r++) {
        if (!mn__index_contains(h, id_of(r)))
            continue;
        if (left < 4) {
            left++;
            continue;
        }
        assert_int_equal(mn__index_remove(h, id_of(r)), MN_OK);
    }
    assert_int_equal(mn__index_count(h), 4);
    struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
    o.path = MN_INDEX_PATH_GRAPH;
    assert_int_equal(mn__index_search(h, q, k, &o, hh, &nh), MN_OK);
    assert_int_equal(nh, 4);
    assert_int_equal(mn__index_search(h, q, k, NULL, hh, &nh), MN_OK);
    assert_int_equal(nh, 4);
    free(gone);
    mn__index_free(h);
    mn__index_free(f);
    free(cs);
    free(x);
    free(q);
}

/* ---- int8 ---------------------------------------------------------------------------------- */

struct source {
    const float *x;
    size_t d;
    size_t calls;
};

static int fetch_row(void *user, int64_t id, float *out)
{
    struct source *s = user;
    s->calls++;
    memcpy(out, s->x + row_of(id) * s->d, s->d * sizeof *out);
    return 0;
}

static void int8_memory_and_recall(void **state)
{
    (void)state;
    size_t n = big() ? 10000 : 1000, d = 384, nq = 30, k = 10;
    float *cs = td_centres(30, d, 31);
    float *x = td_points(n, d, cs, 30, 1.5, 32);
    float *q = td_points(nq, d, cs, 30, 1.5, 33);
    mn_index *h32 = build(x, n, (uint32_t)d, MN_INDEX_HNSW, MN_INDEX_F32, 64);
    mn_index *h8 = build(x, n, (uint32_t)d, MN_INDEX_HNSW, MN_INDEX_INT8, 64);
    mn_index *f = build(x, n, (uint32_t)d, MN_INDEX_FLAT, MN_INDEX_F32, 64);
    size_t m32 = mn__index_memory_bytes(h32), m8 = mn__index_memory_bytes(h8);
    printf("  memory f32 %zu bytes, int8 %zu bytes (%.1f%%)\n", m32, m8, 100.0 * (double)m8 / (double)m32);
    assert_true((double)m8 <= 0.40 * (double)m32);
    struct source src = {x, d, 0};
    size_t hits_plain = 0, hits_rr = 0;
    for (int rr = 0; rr < 2; rr++) {
        if (rr)
            mn__index_set_source(h8, fetch_row, &src);
        for (size_t i = 0; i < nq; i++) {
            struct mn_index_hit hh[10], fh[10];
            size_t nh, nf;
            assert_int_equal(mn__index_search(h8, q + i * d, k, NULL, hh, &nh), MN_OK);
            assert_int_equal(mn__index_search(f, q + i * d, k, NULL, fh, &nf), MN_OK);
            assert_int_equal(nh, k);
            assert_sorted(hh, nh);
            size_t o = overlap(hh, nh, fh, nf);
            if (rr) {
                hits_rr += o;
                /* re-ranked scores are the full-precision cosines */
                for (size_t a = 0; a < nh; a++)
                    for (size_t b = 0; b < nf; b++)
                        if (hh[a].id == fh[b].id)
                            assert_true(fabsf(hh[a].score - fh[b].score) < 1e-5f);
            } else {
                hits_plain += o;
            }
        }
    }
    double r0 = (double)hits_plain / (double)(nq * k), r1 = (double)hits_rr / (double)(nq * k);
    printf("  int8 recall@10: codes only %.4f, re-ranked %.4f (%zu fetches)\n", r0, r1, src.calls);
    assert_true(src.calls > 0);
    assert_true(r1 >= 0.95);
    /* int8 flat with re-ranking agrees with f32 flat */
    mn_index *f8 = build(x, n, (uint32_t)d, MN_INDEX_FLAT, MN_INDEX_INT8, 64);
    mn__index_set_source(f8, fetch_row, &src);
    size_t hits = 0;
    for (size_t i = 0; i < nq; i++) {
        struct mn_index_hit hh[10], fh[10];
        size_t nh, nf;
        assert_int_equal(mn__index_search(f8, q + i * d, k, NULL, hh, &nh), MN_OK);
        assert_int_equal(mn__index_search(f, q + i * d, k, NULL, fh, &nf), MN_OK);
        hits += overlap(hh, nh, fh, nf);
    }
    assert_true((double)hits / (double)(nq * k) >= 0.99);
    mn__index_free(f8);
    mn__index_free(h32);
    mn__index_free(h8);
    mn__index_free(f);
    free(cs);
    free(x);
    free(q);
}

/* ---- arguments ----------------------------------------------------------------------------- */

static void bad_arguments(void **state)
{
    (void)state;
    struct mn_index_params p = MN_INDEX_PARAMS_INIT;
    mn_index *ix = (mn_index *)1;
    assert_int_equal(mn__index_create(&p, &ix), MN_INVALID); /* dim 0 */
    assert_null(ix);
    assert_int_equal(mn__index_create(NULL, &ix), MN_INVALID);
    p.dim = 4;
    p.M = 1;
    assert_int_equal(mn__index_create(&p, &ix), MN_INVALID);
    p.M = 16;
    p.kind = (enum mn_index_kind)7;
    assert_int_equal(mn__index_create(&p, &ix), MN_INVALID);
    p.kind = MN_INDEX_HNSW;
    assert_int_equal(mn__index_create(&p, &ix), MN_OK);
    float zero[4] = {0, 0, 0, 0}, nan_[4] = {1, NAN, 0, 0}, inf_[4] = {INFINITY, 0, 0, 0}, v[4] = {1, 2, 3, 4};
    assert_int_equal(mn__index_add(ix, 1, zero), MN_INVALID);
    assert_int_equal(mn__index_add(ix, 1, nan_), MN_INVALID);
    assert_int_equal(mn__index_add(ix, 1, inf_), MN_INVALID);
    assert_int_equal(mn__index_add(ix, 1, NULL), MN_INVALID);
    assert_int_equal(mn__index_count(ix), 0);
    struct mn_index_hit h[4];
    size_t nh = 9;
    assert_int_equal(mn__index_search(ix, v, 3, NULL, h, &nh), MN_OK); /* empty index */
    assert_int_equal(nh, 0);
    assert_int_equal(mn__index_add(ix, 1, v), MN_OK);
    assert_int_equal(mn__index_add(ix, 1, v), MN_CONFLICT);
    assert_int_equal(mn__index_add(ix, INT64_MIN, v), MN_OK);
    assert_int_equal(mn__index_add(ix, INT64_MAX, v), MN_OK);
    assert_int_equal(mn__index_search(ix, zero, 3, NULL, h, &nh), MN_INVALID);
    assert_int_equal(mn__index_search(ix, v, MN_INDEX_MAX_K + 1, NULL, h, &nh), MN_INVALID);
    assert_int_equal(mn__index_search(ix, v, 3, NULL, NULL, &nh), MN_INVALID);
    assert_int_equal(mn__index_search(ix, v, 0, NULL, NULL, &nh), MN_OK);
    assert_int_equal(nh, 0);
    assert_int_equal(mn__index_search(ix, v, 4, NULL, h, &nh), MN_OK);
    assert_int_equal(nh, 3);
    assert_true(fabsf(h[0].score - 1.0f) < 1e-5f); /* the same direction, normalised */
    assert_int_equal(h[0].id, INT64_MIN);          /* ties: smaller id first */
    assert_int_equal(mn__index_set_ef_search(ix, 0), MN_INVALID);
    assert_int_equal(mn__index_set_ef_search(ix, 128), MN_OK);
    struct mn_index_params got;
    mn__index_params_get(ix, &got);
    assert_int_equal(got.ef_search, 128);
    assert_int_equal(mn__index_remove(ix, 1), MN_OK);
    assert_int_equal(mn__index_remove(ix, 1), MN_NOTFOUND);
    mn__index_free(ix);
    mn__index_free(NULL);
    assert_int_equal(mn__index_count(NULL), 0);
    assert_int_equal(mn__index_add(NULL, 1, v), MN_MISUSE);
}

/* Vectors added in any order and with an initial capacity give a usable graph. */
static void capacity_and_growth(void **state)
{
    (void)state;
    size_t n = 700, d = 8;
    float *cs = td_centres(5, d, 41);
    float *x = td_points(n, d, cs, 5, 1.0, 42);
    struct mn_index_params p = MN_INDEX_PARAMS_INIT;
    p.dim = (uint32_t)d;
    p.M = 4;
    p.capacity = 100;
    mn_index *ix = NULL;
    assert_int_equal(mn__index_create(&p, &ix), MN_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mn__index_add(ix, (int64_t)(n - i), x + i * d), MN_OK);
    for (size_t i = 0; i < n; i += 50) {
        struct mn_index_hit h[1];
        size_t nh;
        struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
        o.path = MN_INDEX_PATH_GRAPH;
        assert_int_equal(mn__index_search(ix, x + i * d, 1, &o, h, &nh), MN_OK);
        assert_int_equal(nh, 1);
        assert_true(h[0].score > 0.999f);
    }
    mn__index_free(ix);
    free(cs);
    free(x);
}

/* ---- threads ------------------------------------------------------------------------------- */

struct thr {
    mn_index *ix;
    const float *q;
    size_t d, nq;
    int failures;
};

static void *searcher(void *arg)
{
    struct thr *t = arg;
    for (int rep = 0; rep < 5; rep++)
        for (size_t i = 0; i < t->nq; i++) {
            struct mn_index_hit h[10];
            size_t nh;
            if (mn__index_search(t->ix, t->q + i * t->d, 10, NULL, h, &nh) != MN_OK || nh != 10)
                t->failures++;
        }
    return NULL;
}

static void concurrent_searches_and_adds(void **state)
{
    (void)state;
    size_t n = 1500, d = 16, nq = 40;
    float *cs = td_centres(10, d, 51);
    float *x = td_points(n, d, cs, 10, 1.5, 52);
    float *q = td_points(nq, d, cs, 10, 1.5, 53);
    mn_index *ix = build(x, n / 2, (uint32_t)d, MN_INDEX_HNSW, MN_INDEX_F32, 32);
    struct thr t[3];
    pthread_t th[3];
    for (int i = 0; i < 3; i++) {
        t[i] = (struct thr){ix, q, d, nq, 0};
        assert_int_equal(pthread_create(&th[i], NULL, searcher, &t[i]), 0);
    }
    for (size_t i = n / 2; i < n; i++) {
        assert_int_equal(mn__index_add(ix, id_of(i), x + i * d), MN_OK);
        if (i % 10 == 0)
            assert_int_equal(mn__index_remove(ix, id_of(i - n / 2)), MN_OK);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(t[i].failures, 0);
    }
    mn__index_free(ix);
    free(cs);
    free(x);
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recall_vs_flat),
        cmocka_unit_test(batch_build_same_graph_any_threads),
        cmocka_unit_test(filtered_search_is_exact),
        cmocka_unit_test(deletes_never_returned),
        cmocka_unit_test(int8_memory_and_recall),
        cmocka_unit_test(bad_arguments),
        cmocka_unit_test(capacity_and_growth),
        cmocka_unit_test(concurrent_searches_and_adds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
