/*
 * test_conninfo.c — PostgreSQL targets as text (store/target.c, issue 13 item 9): a
 * password never shows however the parameter is spelt (percent-encoded, any case, sslpassword),
 * libpq keyword/value strings are PostgreSQL targets, a password-looking SQLite path is refused
 * before any file is made, and a libpq error that quotes the password is scrubbed.
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

static void masked(const char *target, const char *want)
{
    char *m = mn__store_pg_mask(target);
    assert_non_null(m);
    assert_string_equal(m, want);
    assert_null(strstr(m, "S3cr"));
    free(m);
}

static void mask_every_spelling(void **state)
{
    (void)state;
    masked("postgresql://u:S3cr3t@h/db", "postgresql://u:***@h/db");
    masked("postgresql://u@h/db?password=S3cr3t&sslmode=disable", "postgresql://u@h/db?password=***&sslmode=disable");
    masked("postgresql://u@h/db?passwor%64=S3cr3t", "postgresql://u@h/db?passwor%64=***");
    masked("postgresql://u@h/db?PASSWORD=S3cr3t", "postgresql://u@h/db?PASSWORD=***");
    masked("postgresql://u@h/db?sslmode=require&sslpassword=S3cr3t", "postgresql://u@h/db?sslmode=require&sslpassword=***");
    masked("postgresql://u@h/db?%73slpassword=S3cr3t", "postgresql://u@h/db?%73slpassword=***");
    masked("host=/tmp dbname=d password=S3cr3t user=u", "host=/tmp dbname=d password=*** user=u");
    masked("host=/tmp password = 'S3cr \\' 3t' sslpassword=S3crX", "host=/tmp password = *** sslpassword=***");
}

static void keyword_strings_are_postgres(void **state)
{
    (void)state;
    assert_true(mn__store_is_pg_keywords("host=/tmp dbname=x password=S3cr3t"));
    assert_true(mn__store_is_pg_keywords("  dbname = x"));
    assert_false(mn__store_is_pg_keywords("/var/lib/mnemo/memory.db"));
    assert_false(mn__store_is_pg_keywords("notakeyword=1"));
    /* a misspelt connection string is refused before a file by that name exists */
    mn_store_opts o = {.busy_timeout_ms = 1000};
    mn_store *st = NULL;
    assert_int_equal(mn__store_open("hots=/nowhere password=S3cr3t", &o, &st), MN_INVALID);
    assert_null(strstr(mn_errmsg(), "S3cr"));
    assert_int_equal(access("hots=/nowhere password=S3cr3t", F_OK), -1);
    /* a keyword string goes to libpq: unreachable here, and the error has no password */
    assert_int_equal(mn__store_open("host=/nonexistent-dir dbname=x password=S3cr3t connect_timeout=1", &o, &st),
                     MN_UNAVAILABLE);
    assert_null(strstr(mn_errmsg(), "S3cr"));
    assert_non_null(strstr(mn_errmsg(), "password=***"));
}

static void scrub_quoted_secrets(void **state)
{
    (void)state;
    char msg[256];
    snprintf(msg, sizeof msg, "invalid percent-encoded token: \"S3cr%%zz3t\" and S3cr3t");
    mn__store_pg_scrub("postgresql://u@h/db?password=S3cr%zz3t&x=S3cr3t", msg);
    assert_string_equal(msg, "invalid percent-encoded token: \"***\" and S3cr3t");
    snprintf(msg, sizeof msg, "missing \"=\" after \"S3cr3t\" in connection info string");
    mn__store_pg_scrub("host=h password=S3cr3t", msg);
    assert_null(strstr(msg, "S3cr3t"));
    snprintf(msg, sizeof msg, "bad %s", "Pa ss");
    mn__store_pg_scrub("postgresql://u:Pa%20ss@h/db", msg);
    assert_string_equal(msg, "bad ***");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mask_every_spelling),
        cmocka_unit_test(keyword_strings_are_postgres),
        cmocka_unit_test(scrub_quoted_secrets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
