/*
 * test_erasure_vectors.c — an erased vector leaves every vector index, in memory and on disk
 * (docs/erasure.md). A handle with the hash embedder stores messages (and memories), saves the
 * index, then deletes one message, a session or a memory; a second handle that had the index
 * loaded writes and closes too. Every save after the erasure (the writer's, the second
 * handle's, the shutdown's) must write an index without the erased vector: its exact bytes (the
 * stored blob, read before the delete) are in no file under the test folder. On PostgreSQL the
 * indexes live in memory only: the rows must be gone and searches must not return them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_db.h"

struct fx {
    char dir[256], path[300];
    const char *target;
};

static mn_db *open_db(struct fx *f)
{
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.name", "hash", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.dim", "64", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "embedder.mode", "inline", NULL), MN_OK);
    assert_int_equal(mn_open_path(f->target, cfg, &db), MN_OK);
    mn_config_free(cfg);
    return db;
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof *f);
    if (!f || test_tmpdir(f->dir, sizeof f->dir, "erasure-vec") != 0)
        return -1;
    snprintf(f->path, sizeof f->path, "%s/memory.db", f->dir);
    f->target = test_db_target(f->path);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;
    test_rmdir(f->dir);
    free(f);
    return 0;
}

static char *new_session(mn_db *db)
{
    mn_session *s = NULL;
    assert_int_equal(mn_session_create(db, NULL, &s), MN_OK);
    char *id = strdup(s->id);
    mn_session_free(s);
    return id;
}

static int64_t add(mn_db *db, const char *sid, const char *content)
{
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = content;
    mn_message *out = NULL;
    assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
    int64_t id = out->id;
    mn_message_free(out);
    return id;
}

/* Ten messages of distinct words, the first of which is returned (its id). */
static int64_t fill(mn_db *db, const char *sid, const char *word)
{
    char text[200];
    int64_t first = 0;
    for (int i = 0; i < 10; i++) {
        snprintf(text, sizeof text, "%s number %d talks about %s%d and nothing else", word, i, word, i * 7);
        int64_t id = add(db, sid, text);
        if (!i)
            first = id;
    }
    return first;
}

/* The stored vector of a row (SQLite), as bytes: the exact bytes a saved index would hold. */
static size_t stored_vector(struct fx *f, const char *sql, unsigned char *out, size_t cap)
{
    char cmd[1000], hex[2200] = "";
    snprintf(cmd, sizeof cmd, "sqlite3 '%s' \"%s\"", f->path, sql);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(hex, sizeof hex, p));
    assert_int_equal(pclose(p), 0);
    hex[strcspn(hex, "\n")] = '\0';
    size_t n = strlen(hex) / 2;
    assert_true(n > 0 && n <= cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (unsigned char)v;
    }
    return n;
}

static int file_holds(const char *path, const unsigned char *needle, size_t n)
{
    struct stat st;
    FILE *fp = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
    if (!fp)
        return 0;
    long len = (long)st.st_size;
    unsigned char *b = len > 0 ? malloc((size_t)len) : NULL;
    int found = 0;
    if (b && fread(b, 1, (size_t)len, fp) == (size_t)len)
        for (long i = 0; !found && i + (long)n <= len; i++)
            found = memcmp(b + i, needle, n) == 0;
    free(b);
    fclose(fp);
    return found;
}

/* 1 when some file directly under the test folder holds the bytes. */
static int on_disk(struct fx *f, const unsigned char *needle, size_t n)
{
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    struct dirent *e;
    char path[600];
    int found = 0;
    while (!found && (e = readdir(d)))
        if (snprintf(path, sizeof path, "%s/%s", f->dir, e->d_name) < (int)sizeof path)
            found = file_holds(path, needle, n);
    closedir(d);
    return found;
}

static int exists(struct fx *f, const char *suffix)
{
    char path[400];
    struct stat st;
    snprintf(path, sizeof path, "%s%s", f->path, suffix);
    return stat(path, &st) == 0;
}

static size_t semantic_hits(mn_db *db, const char *query, int64_t id)
{
    mn_search_hits *hits = NULL;
    assert_int_equal(mn_search(db, query, MN_SEARCH_SEMANTIC, 50, NULL, 0, &hits), MN_OK);
    size_t found = 0;
    for (size_t i = 0; i < hits->count; i++)
        found += hits->items[i].message.id == id;
    mn_search_hits_free(hits);
    return found;
}

enum erase_kind { ERASE_MESSAGE, ERASE_SESSION };

static void erase_messages_vector(struct fx *f, enum erase_kind kind)
{
    mn_db *a = open_db(f), *b = open_db(f);
    char *gone = new_session(a), *kept = new_session(a);
    int64_t victim = fill(a, gone, "quokkasecret");
    fill(a, kept, "wombatkeeps");
    const char *probe = "quokkasecret number 0 talks about quokkasecret0 and nothing else";
    assert_int_equal(semantic_hits(b, probe, victim), 1); /* b has the index loaded */

    unsigned char vec[1024];
    size_t n = 0;
    if (!test_db_pg()) {
        char sql[200];
        snprintf(sql, sizeof sql, "SELECT hex(vector) FROM embeddings WHERE message_id = %lld", (long long)victim);
        n = stored_vector(f, sql, vec, sizeof vec);
        assert_true(exists(f, ".hnsw"));
        assert_true(on_disk(f, vec, n)); /* the probe sees the vector where it is */
    }
    if (kind == ERASE_MESSAGE)
        assert_int_equal(mn_message_delete(a, gone, victim), MN_OK);
    else
        assert_int_equal(mn_session_delete(a, gone), MN_OK);
    if (!test_db_pg())
        assert_false(on_disk(f, vec, n));

    /* later writes by both handles, then both shut down: each saves its index */
    fill(a, kept, "numbatlater");
    fill(b, kept, "bilbylater");
    assert_int_equal(semantic_hits(a, probe, victim), 0);
    assert_int_equal(semantic_hits(b, probe, victim), 0);
    mn_close(b);
    mn_close(a);
    if (!test_db_pg()) {
        assert_true(exists(f, ".hnsw")); /* a save did run after the erasure */
        assert_false(on_disk(f, vec, n));
    } else {
        char sql[200], out[32];
        snprintf(sql, sizeof sql, "SELECT count(*) FROM embeddings WHERE message_id = %lld", (long long)victim);
        assert_int_equal(test_db_sql(f->target, sql, out, sizeof out), 0);
        assert_string_equal(out, "0");
    }
    free(gone);
    free(kept);
}

static void erase_message_vector(void **state) { erase_messages_vector(*state, ERASE_MESSAGE); }
static void erase_session_vector(void **state) { erase_messages_vector(*state, ERASE_SESSION); }

static char *remember(mn_db *db, const char *text)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = text;
    in.pinned = 0;
    in.token_cap = 0;
    mn_memory *m = NULL;
    assert_int_equal(mn_memory_add(db, &in, &m), MN_OK);
    char *id = strdup(m->id);
    mn_memory_free(m);
    return id;
}

static void erase_memory_vector(void **state)
{
    struct fx *f = *state;
    mn_db *a = open_db(f);
    char text[100];
    for (int i = 0; i < 8; i++) {
        snprintf(text, sizeof text, "the user keeps kangaroo%d in the garden", i);
        free(remember(a, text));
    }
    char *victim = remember(a, "the user's locker code is platypus4821");
    unsigned char vec[1024];
    size_t n = 0;
    if (!test_db_pg()) {
        char sql[300];
        snprintf(sql, sizeof sql,
                 "SELECT hex(v.vector) FROM memory_vectors v JOIN memories m ON m.vid = v.vid WHERE m.id = '%s'", victim);
        n = stored_vector(f, sql, vec, sizeof vec);
    }
    size_t done = 0;
    assert_int_equal(mn_embed_pending(a, 0, &done), MN_OK); /* builds and saves the memory index */
    mn_close(a);
    if (!test_db_pg()) {
        assert_true(exists(f, ".memories.hnsw"));
        assert_true(on_disk(f, vec, n));
    }
    a = open_db(f);
    mn_memories *hits = NULL; /* the index is loaded again */
    assert_int_equal(mn_memory_search(a, "locker code platypus4821", MN_SEARCH_SEMANTIC, NULL, &hits), MN_OK);
    assert_true(hits->count > 0);
    assert_string_equal(hits->items[0].id, victim);
    mn_memories_free(hits);
    assert_int_equal(mn_memory_forget(a, victim), MN_OK);
    if (!test_db_pg())
        assert_false(on_disk(f, vec, n));
    free(remember(a, "the user waters kangaroo9 on sundays"));
    assert_int_equal(mn_embed_pending(a, 0, &done), MN_OK); /* the writer's catch-up */
    assert_int_equal(mn_memory_search(a, "locker code platypus4821", MN_SEARCH_SEMANTIC, NULL, &hits), MN_OK);
    for (size_t i = 0; i < hits->count; i++)
        assert_string_not_equal(hits->items[i].id, victim);
    mn_memories_free(hits);
    mn_close(a);
    if (!test_db_pg()) {
        assert_true(exists(f, ".memories.hnsw")); /* a save did run after the erasure */
        assert_false(on_disk(f, vec, n));
    }
    free(victim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(erase_message_vector, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_session_vector, setup, teardown),
        cmocka_unit_test_setup_teardown(erase_memory_vector, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
