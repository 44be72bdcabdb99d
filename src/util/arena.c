/*
 * arena.c — chunked bump allocation (see arena.h). Chunks double up to 1 MiB; an allocation
 * larger than a chunk gets a chunk of its own.
 */
#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/banned.h"

struct mn_arena_chunk {
    struct mn_arena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *mn__arena_alloc(struct mn_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0)
        n = 16;
    struct mn_arena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = c ? c->cap * 2 : 4096;
        if (cap > ((size_t)1 << 20))
            cap = (size_t)1 << 20;
        if (cap < n)
            cap = n;
        if (cap > SIZE_MAX - sizeof *c)
            return NULL;
        struct mn_arena_chunk *nc = malloc(sizeof *nc + cap);
        if (!nc)
            return NULL;
        nc->used = 0;
        nc->cap = cap;
        nc->next = a->head;
        a->head = nc;
        c = nc;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *mn__arena_strndup(struct mn_arena *a, const char *s, size_t len)
{
    if (len == SIZE_MAX)
        return NULL;
    char *p = mn__arena_alloc(a, len + 1);
    if (p) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}

char *mn__arena_strdup(struct mn_arena *a, const char *s, int *oom)
{
    if (!s)
        return NULL;
    char *p = mn__arena_strndup(a, s, strlen(s));
    if (!p)
        *oom = 1;
    return p;
}

void mn__arena_release(struct mn_arena *a)
{
    struct mn_arena_chunk *c = a->head;
    while (c) {
        struct mn_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}
