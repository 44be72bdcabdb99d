/*
 * test_tmp.h — scratch directories for tests. Apart from test_db.h (which includes it) so that
 * a test of SQLite alone can use them without being run on PostgreSQL too (tests/CMakeLists.txt
 * adds a pg/ variant of every test that includes test_db.h).
 *
 *   test_tmpdir(dir, cap, tag)   makes a fresh scratch directory $MNEMO_TEST_TMP/TAG-XXXXXX
 *                                (or /tmp/…); returns 0 or -1, like a cmocka setup
 *   test_rmdir(dir)              removes it; returns system()'s status
 */
#ifndef MNEMO_TEST_TMP_H
#define MNEMO_TEST_TMP_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static inline int test_tmpdir(char *dir, size_t cap, const char *tag)
{
    const char *tmp = getenv("MNEMO_TEST_TMP");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    mkdir(tmp, 0700);
    if ((size_t)snprintf(dir, cap, "%s/%s-XXXXXX", tmp, tag) >= cap)
        return -1;
    return mkdtemp(dir) ? 0 : -1;
}

static inline int test_rmdir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd);
}

#endif
