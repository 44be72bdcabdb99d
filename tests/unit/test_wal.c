/*
 * test_wal.c — the SQLite store's write-ahead log stays bounded and sized to the commits
 * (src/store/sqlite/sqlite.c, wal_hook): one append a transaction keeps it near SQLite's 1,000
 * pages; commits of many pages (group commits) let it grow to about 256 commits, never past
 * 40,000 pages. The log's size is read from the file after every commit (it is reused, never
 * shrunk, so its size is the most it ever held).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mnemo.h"
#include "test_tmp.h"

#define PAGE 4096 /* SQLite's default page size, which mnemo keeps */
#define FRAME (24 + PAGE)

static char dir[256];

static int setup(void **state)
{
    (void)state;
    return test_tmpdir(dir, sizeof dir, "wal");
}

static int teardown(void **state)
{
    (void)state;
    return test_rmdir(dir);
}

static mn_db *open_db(const char *name, char *wal, size_t cap)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s.db", dir, name);
    snprintf(wal, cap, "%s-wal", path);
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "search.fts_drain", "0", NULL), MN_OK); /* commits of appends only */
    mn_db *db = NULL;
    if (mn_open_path(path, cfg, &db) != MN_OK)
        fail_msg("open: %s", mn_errmsg());
    mn_config_free(cfg);
    return db;
}

static char *create(mn_db *db)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

/* The log's frames: its size less the header, in frames (0 when there is no log yet). */
static long log_frames(const char *wal)
{
    struct stat st;
    return stat(wal, &st) == 0 && st.st_size > 32 ? (long)((st.st_size - 32) / FRAME) : 0;
}

static char *text(size_t n, unsigned seed)
{
    char *t = malloc(n + 1);
    assert_non_null(t);
    for (size_t i = 0; i < n; i++)
        t[i] = (i + seed) % 7 == 6 ? ' ' : (char)('a' + (i * 31 + seed) % 26);
    t[n] = '\0';
    return t;
}

static int64_t stored(mn_db *db, const char *id)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_get(db, id, &s), MN_OK);
    int64_t n = s->message_count;
    mn_session_free(s);
    return n;
}

/* 3,000 appends, one a transaction, round robin over 10 sessions: a few pages a commit, so the
 * log is copied into the file at SQLite's 1,000 pages (it was 10,000, 40 MB, for every load). */
static void single_appends_keep_a_small_log(void **state)
{
    (void)state;
    char wal[320];
    mn_db *db = open_db("single", wal, sizeof wal);
    char *ids[10];
    for (int i = 0; i < 10; i++)
        ids[i] = create(db);
    long most = 0;
    for (int i = 0; i < 3000; i++) {
        char *t = text(200 + (size_t)(i % 5) * 150, (unsigned)i);
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = t;
        assert_int_equal(mn_append(db, ids[i % 10], &m, 0, NULL), MN_OK);
        free(t);
        long f = log_frames(wal);
        most = f > most ? f : most;
    }
    /* a commit here writes under 20 pages: the log never holds more than 1,000 and one commit */
    assert_true(most > 500);
    assert_true(most <= 1000 + 20);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(stored(db, ids[i]), 300);
        free(ids[i]);
    }
    mn_close(db);
}

/* 110 batches of 100 messages of 16,000 characters (~400 pages a commit, ~43,000 in all): the
 * log grows past 1,000 pages and past 64 commits (the single appends' rule) to the 40,000 at
 * most, where it is copied into the file and reused. */
static void large_commits_grow_the_log_to_its_cap(void **state)
{
    (void)state;
    char wal[320];
    mn_db *db = open_db("batches", wal, sizeof wal);
    char *id = create(db);
    char *t = text(16000, 3);
    mn_message_in batch[100];
    for (int i = 0; i < 100; i++) {
        batch[i] = (mn_message_in)MN_MESSAGE_IN_INIT;
        batch[i].role = i % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        batch[i].content = t;
    }
    long most = 0;
    for (int b = 0; b < 110; b++) {
        assert_int_equal(mn_append_batch(db, id, batch, 100, 0, NULL), MN_OK);
        long f = log_frames(wal);
        most = f > most ? f : most;
    }
    assert_true(most >= 40000); /* reached the cap */
    assert_true(most <= 40000 + 500); /* the cap and one commit */
    assert_int_equal(stored(db, id), 11000);
    free(t);
    free(id);
    mn_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(single_appends_keep_a_small_log),
        cmocka_unit_test(large_commits_grow_the_log_to_its_cap),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
