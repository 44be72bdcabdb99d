/*
 * test_store_target.c — database targets as text (src/store/target.c): which backend a target
 * names, the SQLite file behind a sqlite: prefix, whether files can be kept beside it (vector
 * index, offloads) and in which folder, and the masked form messages show.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "store/target.h"
#include "test_db.h"

static void kinds(void **state)
{
    (void)state;
    assert_int_equal(mn__store_target_kind("postgres://u@h/db"), MN_TARGET_POSTGRES);
    assert_int_equal(mn__store_target_kind("postgresql://u@h/db"), MN_TARGET_POSTGRES);
    assert_int_equal(mn__store_target_kind("host=h dbname=db"), MN_TARGET_POSTGRES);
    assert_int_equal(mn__store_target_kind("/var/lib/mnemo/mnemo.db"), MN_TARGET_SQLITE);
    assert_int_equal(mn__store_target_kind("sqlite:x.db"), MN_TARGET_SQLITE);
    assert_int_equal(mn__store_target_kind("mysql://h/db"), MN_TARGET_SQLITE); /* a (strange) file name */
}

static void paths(void **state)
{
    (void)state;
    assert_string_equal(mn__store_target_path("a/b.db"), "a/b.db");
    assert_string_equal(mn__store_target_path("sqlite:a/b.db"), "a/b.db");
    assert_string_equal(mn__store_target_path("sqlite:///abs/b.db"), "/abs/b.db");
    assert_null(mn__store_target_path("postgresql://u@h/db"));
    assert_null(mn__store_target_path("host=h dbname=db"));
}

static void folders(void **state)
{
    (void)state;
    char dir[256];
    assert_int_equal(mn__store_target_folder("/x/y/z.db", dir, sizeof dir), 1);
    assert_string_equal(dir, "/x/y");
    assert_int_equal(mn__store_target_folder("sqlite:rel/z.db", dir, sizeof dir), 1);
    assert_string_equal(dir, "rel");
    assert_int_equal(mn__store_target_folder("z.db", dir, sizeof dir), 1);
    assert_string_equal(dir, ".");
    assert_int_equal(mn__store_target_folder("/z.db", dir, sizeof dir), 1);
    assert_string_equal(dir, "/");
    /* no folder of its own: PostgreSQL in either spelling (a keyword string has no "://", which
     * the tests above the store used to look for), in-memory and URI databases */
    assert_int_equal(mn__store_target_folder("postgres://u:pw@h/db", dir, sizeof dir), 0);
    assert_int_equal(mn__store_target_folder("host=/tmp/sock dbname=db", dir, sizeof dir), 0);
    assert_int_equal(mn__store_target_local("host=/tmp/sock dbname=db"), 0);
    assert_int_equal(mn__store_target_local(":memory:"), 0);
    assert_int_equal(mn__store_target_local("file:x.db?mode=memory"), 0);
    assert_int_equal(mn__store_target_local("sqlite:"), 0);
    assert_int_equal(mn__store_target_local("x.db"), 1);
}

static void masks(void **state)
{
    (void)state;
    char *m = mn__store_target_mask("postgresql://me:s3cret@h/db?sslpassword=k3y");
    assert_non_null(m);
    assert_null(strstr(m, "s3cret"));
    assert_null(strstr(m, "k3y"));
    assert_non_null(strstr(m, "me:***@h/db"));
    free(m);
    m = mn__store_target_mask("host=h password=s3cret dbname=db");
    assert_null(strstr(m, "s3cret"));
    assert_non_null(strstr(m, "dbname=db"));
    free(m);
    m = mn__store_target_mask("/data/mnemo.db");
    assert_string_equal(m, "/data/mnemo.db");
    free(m);
}

/* mn__store_open takes the sqlite: spelling too: the file is the path behind it. */
static void open_with_prefix(void **state)
{
    (void)state;
    char dir[256], target[300], file[300];
    assert_int_equal(test_tmpdir(dir, sizeof dir, "mn-target"), 0);
    snprintf(target, sizeof target, "sqlite://%s/t.db", dir);
    snprintf(file, sizeof file, "%s/t.db", dir);
    mn_store_opts o = {.busy_timeout_ms = 1000, .sync_full = 0};
    mn_store *st = NULL;
    assert_int_equal(mn__store_open(target, &o, &st), MN_OK);
    st->ops->close(st);
    assert_int_equal(access(file, F_OK), 0);
    assert_int_equal(test_rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(kinds), cmocka_unit_test(paths), cmocka_unit_test(folders),
                                       cmocka_unit_test(masks), cmocka_unit_test(open_with_prefix)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
