/*
 * arena.h — a bump allocator for short-lived work and for records handed out as one block:
 * many small allocations, one release.
 */
#ifndef MN_UTIL_ARENA_H
#define MN_UTIL_ARENA_H

#include <stddef.h>

struct mn_arena_chunk;
struct mn_arena {
    struct mn_arena_chunk *head;
};

#define MN_ARENA_INIT {NULL}

/* Zeroed, 16-byte aligned memory; NULL on OOM. */
void *mn__arena_alloc(struct mn_arena *a, size_t n);
/* A copy of s[0..len) with a NUL after it; NULL on OOM. */
char *mn__arena_strndup(struct mn_arena *a, const char *s, size_t len);
/* A copy of s, or NULL when s is NULL; *oom set to 1 when the copy failed. */
char *mn__arena_strdup(struct mn_arena *a, const char *s, int *oom);
void mn__arena_release(struct mn_arena *a);

#endif
