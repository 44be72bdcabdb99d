/*
 * idmap.c — the index's map from caller ids (int64) to slots (uint32): open addressing with
 * linear probing, load at most 1/2, backward-shift deletion (no tombstones).
 */
#include "index/index_int.h"

#include <stdlib.h>

#include "util/err.h"
#include "util/banned.h"

static size_t idhash(int64_t id, size_t mask)
{
    uint64_t x = (uint64_t)id;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (size_t)x & mask;
}

uint32_t mn__idmap_get(const struct mn__idmap *m, int64_t id)
{
    if (m->cap == 0)
        return MN__INDEX_NONE;
    size_t mask = m->cap - 1;
    for (size_t i = idhash(id, mask);; i = (i + 1) & mask) {
        if (m->vals[i] == MN__INDEX_NONE)
            return MN__INDEX_NONE;
        if (m->keys[i] == id)
            return m->vals[i];
    }
}

static void put_raw(int64_t *keys, uint32_t *vals, size_t mask, int64_t id, uint32_t slot)
{
    size_t i = idhash(id, mask);
    while (vals[i] != MN__INDEX_NONE)
        i = (i + 1) & mask;
    keys[i] = id;
    vals[i] = slot;
}

mn_status mn__idmap_reserve(struct mn__idmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : 16;
    while (cap / 2 < n) {
        if (cap > SIZE_MAX / 4 / sizeof(int64_t))
            return mn__err(MN_TOOBIG, "index id map: %zu entries is too many", n);
        cap *= 2;
    }
    if (cap == m->cap)
        return MN_OK;
    int64_t *keys = malloc(cap * sizeof *keys);
    uint32_t *vals = malloc(cap * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return mn__nomem();
    }
    for (size_t i = 0; i < cap; i++)
        vals[i] = MN__INDEX_NONE;
    for (size_t i = 0; i < m->cap; i++)
        if (m->vals[i] != MN__INDEX_NONE)
            put_raw(keys, vals, cap - 1, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return MN_OK;
}

mn_status mn__idmap_put(struct mn__idmap *m, int64_t id, uint32_t slot)
{
    mn_status rc = mn__idmap_reserve(m, m->n + 1);
    if (rc != MN_OK)
        return rc;
    put_raw(m->keys, m->vals, m->cap - 1, id, slot);
    m->n++;
    return MN_OK;
}

void mn__idmap_del(struct mn__idmap *m, int64_t id)
{
    if (m->cap == 0)
        return;
    size_t mask = m->cap - 1, i = idhash(id, mask);
    for (;; i = (i + 1) & mask) {
        if (m->vals[i] == MN__INDEX_NONE)
            return;
        if (m->keys[i] == id)
            break;
    }
    /* shift later members of the probe run back into the hole */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->vals[j] != MN__INDEX_NONE; j = (j + 1) & mask) {
        size_t home = idhash(m->keys[j], mask);
        /* j may move to hole when home is not cyclically within (hole, j] */
        if (((j - home) & mask) >= ((j - hole) & mask)) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->vals[hole] = MN__INDEX_NONE;
    m->n--;
}

void mn__idmap_release(struct mn__idmap *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
    m->cap = m->n = 0;
}
