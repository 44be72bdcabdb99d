/*
 * fts_counts.c — the document counts of rare phrases a connection keeps.
 *
 * Why: the handle's kept counts (search.c, sqlite_store.df) are 512 at most, the phrases common
 * enough to earn best rows and bitmaps. A context's retrieval searches with 20 to 60 words, most
 * of them rare, and a server building contexts of a thousand sessions sees tens of thousands of
 * them: each counted again cost a statement (~45 µs at a million messages, a seek in each of the
 * index's segments; milliseconds for a phrase in thousands of rows, read in full), 40% of a
 * random session's context. The rare ones are kept here instead, and so are the counts of the
 * common ones the handle let go past 512: a phrase, its count and the message id it is valid up
 * to, in a hash table of at most COUNTS_MAX entries (~5 MB; when full it is emptied and fills
 * again). Valid and brought forward as the kept counts are (search.c, df_get).
 */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_int.h"
#include "util/banned.h"

#define COUNTS_MAX 65536 /* entries; the table has twice as many slots */

struct mn_sqlite_counts {
    struct mn_sqlite_count *slot;
    size_t n;
};

static struct mn_sqlite_count *slot_of(struct mn_sqlite_counts *c, const char *phrase, size_t len, uint32_t h)
{
    size_t mask = 2 * COUNTS_MAX - 1, i = h & mask;
    while (c->slot[i].phrase &&
           !(c->slot[i].hash == h && c->slot[i].len == len && memcmp(c->slot[i].phrase, phrase, len) == 0))
        i = (i + 1) & mask;
    return &c->slot[i];
}

struct mn_sqlite_count *mn__sqlite_count_find(struct sqlite_store *s, const char *phrase, size_t len)
{
    struct mn_sqlite_counts *c = s->counts;
    if (!c || !c->n)
        return NULL;
    struct mn_sqlite_count *e = slot_of(c, phrase, len, mn__sqlite_hash(phrase, len));
    return e->phrase ? e : NULL;
}

void mn__sqlite_counts_free(struct sqlite_store *s)
{
    struct mn_sqlite_counts *c = s->counts;
    if (!c)
        return;
    for (size_t i = 0; c->n && i < 2 * COUNTS_MAX; i++)
        free(c->slot[i].phrase);
    free(c->slot);
    free(c);
    s->counts = NULL;
}

void mn__sqlite_count_put(struct sqlite_store *s, const char *phrase, size_t len, int64_t n, int64_t upto)
{
    struct mn_sqlite_counts *c = s->counts;
    if (c && c->n >= COUNTS_MAX)
        mn__sqlite_counts_free(s), c = NULL;
    if (!c) {
        if (!(c = calloc(1, sizeof *c)) || !(c->slot = calloc(2 * COUNTS_MAX, sizeof *c->slot))) {
            free(c);
            return; /* nothing kept: counted again next time */
        }
        s->counts = c;
    }
    uint32_t h = mn__sqlite_hash(phrase, len);
    struct mn_sqlite_count *e = slot_of(c, phrase, len, h);
    if (!e->phrase) {
        if (!(e->phrase = malloc(len ? len : 1)))
            return;
        memcpy(e->phrase, phrase, len);
        e->len = len, e->hash = h;
        c->n++;
    }
    e->n = n, e->upto = upto;
}
