/*
 * target.h — database targets as text, the one place that knows their syntax (target.c). A
 * target is a PostgreSQL URL (postgres://, postgresql://), a libpq keyword/value string
 * ("host=… dbname=…"), or a SQLite file: a path, optionally written sqlite:PATH or
 * sqlite://PATH. Code above src/store/ asks these functions instead of looking at the text
 * (tests/lint/layers.sh checks that nothing there tests for "://").
 */
#ifndef MN_STORE_TARGET_H
#define MN_STORE_TARGET_H

#include <stddef.h>

enum mn_store_target_kind { MN_TARGET_SQLITE, MN_TARGET_POSTGRES };

enum mn_store_target_kind mn__store_target_kind(const char *target);
/* A SQLite target's file path, without a sqlite: or sqlite:// prefix (borrowed from target);
 * NULL for PostgreSQL. */
const char *mn__store_target_path(const char *target);
/* 1 when the target is a file of this machine that files can be kept beside (the .hnsw vector
 * index, offloaded tool results): a SQLite path, but not ":memory:" or a "file:" URI. */
int mn__store_target_local(const char *target);
/* For a local target: 1, and out gets the folder of its file ("." for a bare name); else 0. */
int mn__store_target_folder(const char *target, char *out, size_t cap);
/* The target as messages show it: every secret as *** (a URL's password, password=,
 * sslpassword=, any name with "pass", "secret" or "token", in any spelling). Caller frees; NULL
 * on OOM. */
char *mn__store_target_mask(const char *target);

/* PostgreSQL targets: 1 when target is a libpq keyword/value string; the masked copy (as
 * mn__store_target_mask); msg with each secret value of target blanked, in place. */
int mn__store_is_pg_keywords(const char *target);
char *mn__store_pg_mask(const char *target);
void mn__store_pg_scrub(const char *target, char *msg);

#endif
