/*
 * test_index_io.c — unit tests of the index file (src/index/io.c): save/load round trips give
 * identical searches (hnsw, flat, int8, with tombstones, empty), damaged files are refused with
 * MN_CORRUPT and never crash (truncation at every length of a small file, bad magic, version,
 * flipped bytes with and without a fixed-up checksum), atomic save, mn__index_open rebuilds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "index/index_int.h"
#include "unit/test_index_data.h"

static char tmpdir[512];

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("MNEMO_TEST_TMP");
    if (!base || !*base)
        base = "/tmp";
    mkdir(base, 0755);
    snprintf(tmpdir, sizeof tmpdir, "%s/index_io.%d", base, (int)getpid());
    mkdir(tmpdir, 0755);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", tmpdir, name); }

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long l = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)l + 1);
    assert_int_equal(fread(b, 1, (size_t)l, f), (size_t)l);
    fclose(f);
    *len = (size_t)l;
    return b;
}

static void spit(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static mn_index *make(size_t n, uint32_t d, enum mn_index_kind kind, enum mn_index_quant quant, const float *x)
{
    struct mn_index_params p = MN_INDEX_PARAMS_INIT;
    p.dim = d;
    p.kind = kind;
    p.quant = quant;
    p.M = 6;
    p.ef_construction = 40;
    mn_index *ix = NULL;
    assert_int_equal(mn__index_create(&p, &ix), MN_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mn__index_add(ix, (int64_t)i * 3 - 100, x + i * d), MN_OK);
    return ix;
}

static void same_searches(mn_index *a, mn_index *b, const float *q, size_t nq, size_t d)
{
    for (size_t i = 0; i < nq; i++) {
        struct mn_index_hit ha[10], hb[10];
        size_t na, nb;
        assert_int_equal(mn__index_search(a, q + i * d, 10, NULL, ha, &na), MN_OK);
        assert_int_equal(mn__index_search(b, q + i * d, 10, NULL, hb, &nb), MN_OK);
        assert_int_equal(na, nb);
        for (size_t j = 0; j < na; j++) {
            assert_int_equal(ha[j].id, hb[j].id);
            assert_true(ha[j].score == hb[j].score);
        }
    }
}

static void round_trip(void **state)
{
    (void)state;
    size_t n = 1200, d = 24, nq = 30;
    float *cs = td_centres(12, d, 61);
    float *x = td_points(n, d, cs, 12, 1.5, 62);
    float *q = td_points(nq, d, cs, 12, 1.5, 63);
    char path[600];
    path_in(path, sizeof path, "rt.idx");
    const struct {
        enum mn_index_kind kind;
        enum mn_index_quant quant;
        size_t n;
    } cases[] = {{MN_INDEX_HNSW, MN_INDEX_F32, n}, {MN_INDEX_HNSW, MN_INDEX_INT8, n},
                 {MN_INDEX_FLAT, MN_INDEX_F32, n}, {MN_INDEX_FLAT, MN_INDEX_INT8, n},
                 {MN_INDEX_HNSW, MN_INDEX_F32, 0}, {MN_INDEX_HNSW, MN_INDEX_F32, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mn_index *a = make(cases[c].n, (uint32_t)d, cases[c].kind, cases[c].quant, x);
        for (size_t i = 0; i + 5 < cases[c].n; i += 5) /* tombstones travel too */
            assert_int_equal(mn__index_remove(a, (int64_t)i * 3 - 100), MN_OK);
        assert_int_equal(mn__index_save(a, path), MN_OK);
        mn_index *b = NULL;
        assert_int_equal(mn__index_load(path, &b), MN_OK);
        assert_int_equal(mn__index_count(a), mn__index_count(b));
        struct mn_index_stats sa, sb;
        mn__index_stats(a, &sa);
        mn__index_stats(b, &sb);
        assert_int_equal(sa.deleted, sb.deleted);
        assert_int_equal(sa.max_level, sb.max_level);
        struct mn_index_params pa, pb;
        mn__index_params_get(a, &pa);
        mn__index_params_get(b, &pb);
        assert_int_equal(pa.dim, pb.dim);
        assert_int_equal(pa.M, pb.M);
        assert_int_equal(pa.kind, pb.kind);
        assert_int_equal(pa.quant, pb.quant);
        same_searches(a, b, q, nq, d);
        /* both keep working identically after the load: same adds give the same graph */
        for (size_t i = 0; i < 20; i++) {
            assert_int_equal(mn__index_add(a, 100000 + (int64_t)i, q + i * d), MN_OK);
            assert_int_equal(mn__index_add(b, 100000 + (int64_t)i, q + i * d), MN_OK);
        }
        same_searches(a, b, q, nq, d);
        /* saved again, byte for byte the same file */
        char p2[600];
        path_in(p2, sizeof p2, "rt2.idx");
        assert_int_equal(mn__index_save(a, path), MN_OK);
        assert_int_equal(mn__index_save(b, p2), MN_OK);
        size_t l1, l2;
        unsigned char *b1 = slurp(path, &l1), *b2 = slurp(p2, &l2);
        assert_int_equal(l1, l2);
        assert_memory_equal(b1, b2, l1);
        free(b1);
        free(b2);
        mn__index_free(a);
        mn__index_free(b);
    }
    free(cs);
    free(x);
    free(q);
}

/* Fixes the trailing checksum of a damaged image so that the structural checks are reached. */
static void fix_checksum(unsigned char *b, size_t len)
{
    if (len < 8)
        return;
    uint64_t s = mn__index_checksum(b, len - 8);
    memcpy(b + len - 8, &s, 8);
}

static void corrupt_files_refused(void **state)
{
    (void)state;
    size_t n = 40, d = 8;
    float *cs = td_centres(4, d, 71);
    float *x = td_points(n, d, cs, 4, 1.5, 72);
    char path[600], bad[600];
    path_in(path, sizeof path, "good.idx");
    path_in(bad, sizeof bad, "bad.idx");
    enum mn_index_quant quants[2] = {MN_INDEX_F32, MN_INDEX_INT8};
    for (int qi = 0; qi < 2; qi++) {
        mn_index *a = make(n, (uint32_t)d, MN_INDEX_HNSW, quants[qi], x);
        assert_int_equal(mn__index_save(a, path), MN_OK);
        size_t len;
        unsigned char *img = slurp(path, &len);
        unsigned char *w = malloc(len);
        mn_index *b = NULL;
        /* every truncation, from memory; a few through a file */
        for (size_t l = 0; l < len; l++) {
            assert_int_equal(mn__index_load_mem(img, l, &b), MN_CORRUPT);
            assert_null(b);
        }
        for (size_t l = 0; l < len; l += len / 7) {
            spit(bad, img, l);
            assert_int_equal(mn__index_load(bad, &b), MN_CORRUPT);
            assert_non_null(strstr(mn_errmsg(), bad));
        }
        /* one byte longer */
        memcpy(w, img, len);
        unsigned char *longer = malloc(len + 1);
        memcpy(longer, img, len);
        longer[len] = 0;
        assert_int_equal(mn__index_load_mem(longer, len + 1, &b), MN_CORRUPT);
        free(longer);
        /* bad magic */
        w[0] = 'X';
        assert_int_equal(mn__index_load_mem(w, len, &b), MN_CORRUPT);
        assert_non_null(strstr(mn_errmsg(), "magic"));
        /* other versions, even with a valid checksum */
        uint32_t versions[] = {0, 1, 3, 0xffffffffu};
        for (size_t v = 0; v < 4; v++) {
            memcpy(w, img, len);
            memcpy(w + 8, &versions[v], 4);
            fix_checksum(w, len);
            assert_int_equal(mn__index_load_mem(w, len, &b), MN_CORRUPT);
            assert_non_null(strstr(mn_errmsg(), "version"));
        }
        /* each byte flipped: refused by the checksum */
        for (size_t i = 0; i < len; i++) {
            memcpy(w, img, len);
            w[i] ^= 0x41;
            assert_int_equal(mn__index_load_mem(w, len, &b), MN_CORRUPT);
        }
        /* each byte set to several values with the checksum fixed: refused or loaded, and a
         * loaded one answers searches without reading out of bounds (ASan watches) */
        const unsigned char vals[] = {0x00, 0x7f, 0xff};
        size_t loaded = 0;
        for (size_t i = 0; i + 8 < len; i++) {
            for (size_t v = 0; v < sizeof vals; v++) {
                memcpy(w, img, len);
                if (w[i] == vals[v])
                    continue;
                w[i] = vals[v];
                fix_checksum(w, len);
                mn_status rc = mn__index_load_mem(w, len, &b);
                assert_true(rc == MN_OK || rc == MN_CORRUPT);
                if (rc == MN_OK) {
                    loaded++;
                    struct mn_index_hit h[5];
                    size_t nh;
                    assert_int_equal(mn__index_search(b, x, 5, NULL, h, &nh), MN_OK);
                    assert_int_equal(mn__index_add(b, 1 << 30, x + d), MN_OK);
                    mn__index_free(b);
                    b = NULL;
                }
            }
        }
        assert_true(loaded > 0); /* e.g. a changed vector component still loads */
        free(w);
        free(img);
        mn__index_free(a);
    }
    /* not there; a directory */
    mn_index *b = NULL;
    path_in(bad, sizeof bad, "missing.idx");
    assert_int_equal(mn__index_load(bad, &b), MN_NOTFOUND);
    assert_int_equal(mn__index_load(tmpdir, &b), MN_IO);
    assert_int_equal(mn__index_load_mem(NULL, 0, &b), MN_CORRUPT);
    free(cs);
    free(x);
}

static void save_is_atomic(void **state)
{
    (void)state;
    size_t n = 300, d = 16;
    float *cs = td_centres(4, d, 81);
    float *x = td_points(n, d, cs, 4, 1.5, 82);
    char path[600], tmp[620];
    path_in(path, sizeof path, "atomic.idx");
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    mn_index *a = make(n, (uint32_t)d, MN_INDEX_HNSW, MN_INDEX_F32, x);
    assert_int_equal(mn__index_save(a, path), MN_OK);
    assert_int_equal(access(tmp, F_OK), -1);
    size_t good_len;
    unsigned char *good = slurp(path, &good_len);

    /* a leftover .tmp from a crashed save is never read, and the next save replaces it */
    spit(tmp, "garbage", 7);
    mn_index *b = NULL;
    assert_int_equal(mn__index_load(path, &b), MN_OK);
    assert_int_equal(mn__index_count(b), n);
    mn__index_free(b);

    /* a save that dies part-way (at several points) leaves the old file intact */
    for (size_t i = 0; i < 50; i++)
        assert_int_equal(mn__index_add(a, 10000 + (int64_t)i, x + i * d), MN_OK);
    size_t cuts[] = {1, 95, 4096, good_len - 1};
    for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; c++) {
        mn__index_save_fail_after = cuts[c];
        assert_int_equal(mn__index_save(a, path), MN_IO);
        mn__index_save_fail_after = 0;
        size_t l;
        unsigned char *now = slurp(path, &l);
        assert_int_equal(l, good_len);
        assert_memory_equal(now, good, l);
        free(now);
        assert_int_equal(access(tmp, F_OK), -1); /* the partial file is removed */
        assert_int_equal(mn__index_load(path, &b), MN_OK);
        assert_int_equal(mn__index_count(b), n);
        mn__index_free(b);
    }
    /* and a complete save replaces it */
    assert_int_equal(mn__index_save(a, path), MN_OK);
    assert_int_equal(mn__index_load(path, &b), MN_OK);
    assert_int_equal(mn__index_count(b), n + 50);
    mn__index_free(b);
    /* unwritable place: MN_IO naming the file */
    assert_int_equal(mn__index_save(a, "/nonexistent-dir/x.idx"), MN_IO);
    assert_non_null(strstr(mn_errmsg(), "/nonexistent-dir/x.idx"));
    free(good);
    mn__index_free(a);
    free(cs);
    free(x);
}

struct src {
    const float *x;
    size_t n, d, i;
    int calls;
};

static int next_vec(void *user, int64_t *id, const float **vec)
{
    struct src *s = user;
    if (s->i == 0)
        s->calls++;
    if (s->i >= s->n)
        return 0;
    *id = (int64_t)s->i;
    *vec = s->x + s->i * s->d;
    s->i++;
    return 1;
}

static void open_rebuilds(void **state)
{
    (void)state;
    size_t n = 400, d = 16;
    float *cs = td_centres(4, d, 91);
    float *x = td_points(n, d, cs, 4, 1.5, 92);
    char path[600];
    path_in(path, sizeof path, "open.idx");
    struct mn_index_params p = MN_INDEX_PARAMS_INIT;
    p.dim = (uint32_t)d;
    struct src s = {x, n, d, 0, 0};
    mn_index *a = NULL, *b = NULL;
    int rebuilt = -1;
    /* missing: built and saved */
    assert_int_equal(mn__index_open(path, &p, next_vec, &s, &a, &rebuilt), MN_OK);
    assert_int_equal(rebuilt, 1);
    assert_int_equal(mn__index_count(a), n);
    /* present: loaded, the source is not read */
    s.i = 0;
    p.ef_search = 99;
    assert_int_equal(mn__index_open(path, &p, next_vec, &s, &b, &rebuilt), MN_OK);
    assert_int_equal(rebuilt, 0);
    assert_int_equal(s.calls, 1);
    struct mn_index_params got;
    mn__index_params_get(b, &got);
    assert_int_equal(got.ef_search, 99);
    same_searches(a, b, x, 20, d);
    mn__index_free(b);
    /* damaged, or from another version: rebuilt */
    size_t len;
    unsigned char *img = slurp(path, &len);
    uint32_t v1 = 1; /* the previous format version */
    memcpy(img + 8, &v1, 4);
    fix_checksum(img, len);
    spit(path, img, len);
    free(img);
    s.i = 0;
    assert_int_equal(mn__index_open(path, &p, next_vec, &s, &b, &rebuilt), MN_OK);
    assert_int_equal(rebuilt, 1);
    assert_int_equal(mn__index_count(b), n);
    mn__index_free(b);
    assert_int_equal(mn__index_load(path, &b), MN_OK); /* and saved again */
    mn__index_free(b);
    /* other parameters (M): rebuilt */
    s.i = 0;
    p.M = 8;
    assert_int_equal(mn__index_open(path, &p, next_vec, &s, &b, &rebuilt), MN_OK);
    assert_int_equal(rebuilt, 1);
    mn__index_params_get(b, &got);
    assert_int_equal(got.M, 8);
    mn__index_free(b);
    mn__index_free(a);
    free(cs);
    free(x);
}

/* A FIFO (or any non-regular file) in place of the index is refused at once, never read: before,
 * the open blocked forever waiting for a writer (issue 13, item 13). */
static void fifo_refused(void **state)
{
    (void)state;
    char path[600];
    path_in(path, sizeof path, "fifo.hnsw");
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    mn_index *ix = NULL;
    assert_int_equal(mn__index_load(path, &ix), MN_IO);
    assert_null(ix);
    assert_non_null(strstr(mn_errmsg(), "not a regular file"));
    unlink(path);
}

static void checksum_streams(void **state)
{
    (void)state;
    unsigned char buf[100];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(i * 37 + 11);
    uint64_t whole = mn__index_checksum(buf, sizeof buf);
    for (size_t a = 0; a < sizeof buf; a += 3)
        for (size_t b = a; b < sizeof buf; b += 7) {
            struct mn__cksum c;
            mn__cksum_init(&c);
            mn__cksum_update(&c, buf, a);
            mn__cksum_update(&c, buf + a, b - a);
            mn__cksum_update(&c, buf + b, sizeof buf - b);
            assert_true(mn__cksum_final(&c) == whole);
        }
    assert_true(mn__index_checksum(buf, 99) != whole);
    assert_true(mn__index_checksum(buf, 0) != mn__index_checksum("\0", 1));
}

/* mn__index_map: a second process opens the saved file in place (no rebuild, no copy) and
 * answers exactly as the process that built it; a damaged id is caught by the header's meta
 * checksum; a FIFO or a directory in place of the file is refused at once, never waited on. */
static void mapped_in_another_process(void **state)
{
    (void)state;
    size_t n = 2001, d = 24, nq = 20; /* an odd count: the sections are padded to stay aligned */
    float *cs = td_centres(10, d, 7);
    float *x = td_points(n, d, cs, 10, 1.0, 8);
    float *q = td_points(nq, d, cs, 10, 1.0, 9);
    struct mn_index_params p = MN_INDEX_PARAMS_INIT;
    p.dim = (uint32_t)d;
    p.ef_construction = 64;
    mn_index *ix = NULL;
    assert_int_equal(mn__index_create(&p, &ix), MN_OK);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(mn__index_add(ix, (int64_t)i + 1, x + i * d), MN_OK);
    assert_int_equal(mn__index_remove(ix, 5), MN_OK);
    char path[600];
    path_in(path, sizeof path, "mapped.idx");
    assert_int_equal(mn__index_save(ix, path), MN_OK);
    struct stat before;
    assert_int_equal(stat(path, &before), 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the second process: map, search, send the hits */
        mn_index *m = NULL;
        if (mn__index_map(path, &m) != MN_OK)
            _exit(2);
        for (size_t i = 0; i < nq; i++) {
            struct mn_index_hit h[10];
            size_t nh = 0;
            if (mn__index_search(m, q + i * d, 10, NULL, h, &nh) != MN_OK || nh != 10 ||
                write(fds[1], h, sizeof h) != (ssize_t)sizeof h)
                _exit(3);
        }
        mn__index_free(m);
        _exit(0);
    }
    close(fds[1]);
    for (size_t i = 0; i < nq; i++) {
        struct mn_index_hit want[10], got[10];
        size_t nh = 0, off = 0;
        assert_int_equal(mn__index_search(ix, q + i * d, 10, NULL, want, &nh), MN_OK);
        while (off < sizeof got) {
            ssize_t r = read(fds[0], (char *)got + off, sizeof got - off);
            assert_true(r > 0);
            off += (size_t)r;
        }
        for (size_t j = 0; j < 10; j++) {
            assert_int_equal(got[j].id, want[j].id);
            assert_true(got[j].score == want[j].score);
            assert_true(got[j].id != 5); /* removed before the save */
        }
    }
    close(fds[0]);
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    struct stat after; /* the file was only read */
    assert_int_equal(stat(path, &after), 0);
    assert_true(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);

    /* a mapped index becomes writable: the first add copies it to the heap */
    mn_index *m = NULL;
    assert_int_equal(mn__index_map(path, &m), MN_OK);
    assert_int_equal(mn__index_count(m), n - 1);
    assert_int_equal(mn__index_add(m, 5, x + 5 * d), MN_OK);
    assert_int_equal(mn__index_count(m), n);
    mn__index_free(m);

    /* one id changed (checksum of the whole file fixed, as a careful forger would): the header's
     * meta checksum refuses the mapping */
    size_t len = 0;
    unsigned char *img = slurp(path, &len);
    img[128] ^= 1; /* the first id */
    uint64_t sum = mn__index_checksum(img, len - 8);
    memcpy(img + len - 8, &sum, 8);
    char bad[600];
    path_in(bad, sizeof bad, "bad.idx");
    spit(bad, img, len);
    assert_int_equal(mn__index_map(bad, &m), MN_CORRUPT);
    assert_null(m);
    free(img);

    /* a FIFO and a directory in place of the file: refused without blocking */
    char fifo[600], dir[600];
    path_in(fifo, sizeof fifo, "fifo.idx");
    path_in(dir, sizeof dir, "dir.idx");
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(mn__index_map(fifo, &m), MN_IO);
    assert_non_null(strstr(mn_errmsg(), "not a regular file"));
    assert_int_equal(mn__index_load(fifo, &m), MN_IO);
    assert_non_null(strstr(mn_errmsg(), "not a regular file"));
    assert_int_equal(mn__index_map(dir, &m), MN_IO);
    assert_int_equal(mn__index_load(dir, &m), MN_IO);
    char missing[600];
    path_in(missing, sizeof missing, "missing.idx");
    assert_int_equal(mn__index_map(missing, &m), MN_NOTFOUND);
    mn__index_free(ix);
    free(cs);
    free(x);
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(corrupt_files_refused),
        cmocka_unit_test(save_is_atomic),
        cmocka_unit_test(open_rebuilds),
        cmocka_unit_test(checksum_streams),
        cmocka_unit_test(mapped_in_another_process),
        cmocka_unit_test(fifo_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
