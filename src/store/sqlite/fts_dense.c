/*
 * fts_dense.c — the rows of very common phrases held in memory, and a keyword query ranked from
 * them (fts_rank.h; docs/search.md, "Very common phrases in memory").
 *
 * Why: a phrase in a third of the store has a third of the store in its postings, and every plan
 * that needs its count in a row reads them all (FTS5 decodes ~30 ns a posting: a rare word with
 * two such words, or two such words alone, took 20-160 ms at a million messages, and a session's
 * search read them in full to keep its thousand rows). Held here as a bitmap over message ids
 * (the rows with the phrase) and the rows that have it more than once with their count, with
 * every row's size in tokens (one array per connection), a row's count of the phrase is a bit
 * test, and the query's bm25 is computed here with the same doubles mnemo_bm25 gives
 * (fts_rank.h's mn_bm25_idf and mn_bm25_term, in the phrases' order).
 */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/fts_rank.h"
#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

long mn_sqlite_fts_dense_ranked, mn_sqlite_fts_rows_ranked;

struct big_tf { /* a row that has the phrase 255 times or more */
    int64_t id, tf;
};

struct mn_sqlite_dense {
    int64_t upto;   /* the rows up to this message id are here */
    uint64_t *bits; /* bit id: the row has the phrase */
    uint64_t *more; /* bit id: the row has it more than once */
    size_t nwords;
    uint8_t *tf;    /* the counts of the rows in `more`, in id order (255: in big) */
    size_t ntf, captf;
    struct big_tf *big; /* in id order */
    size_t nbig, capbig;
    int64_t last; /* the last id added */
};

void mn__sqlite_dense_free(struct mn_sqlite_dense *d)
{
    if (!d)
        return;
    free(d->bits);
    free(d->more);
    free(d->tf);
    free(d->big);
    free(d);
}

/* Room for n entries past the last, with an eighth more so that appends do not reallocate each
 * time (doubling would hold up to twice the store). */
static size_t roomy(size_t n)
{
    return n + n / 8 + 1024;
}

size_t mn__sqlite_dense_bytes(const struct mn_sqlite_dense *d)
{
    return d ? sizeof *d + 2 * d->nwords * sizeof *d->bits + d->captf + d->capbig * sizeof *d->big : 0;
}

size_t mn__sqlite_dense_estimate(int64_t upto, int64_t rows)
{
    return 2 * roomy((size_t)upto / 64 + 1) * sizeof(uint64_t) + (size_t)rows;
}

size_t mn__sqlite_sizes_bytes(const struct mn_sqlite_sizes *z, int64_t upto)
{
    return (size_t)upto < z->n ? z->n * sizeof *z->d : roomy((size_t)upto + 1) * sizeof *z->d;
}

void mn__sqlite_sizes_free(struct mn_sqlite_sizes *z)
{
    free(z->d);
    *z = (struct mn_sqlite_sizes){0};
}

static mn_status grow_words(struct mn_sqlite_dense *d, size_t want)
{
    if (want <= d->nwords)
        return MN_OK;
    size_t n = roomy(want);
    uint64_t *b = realloc(d->bits, n * sizeof *b);
    if (b)
        d->bits = b;
    uint64_t *m = b ? realloc(d->more, n * sizeof *m) : NULL;
    if (!m)
        return mn__nomem();
    d->more = m;
    memset(d->bits + d->nwords, 0, (n - d->nwords) * sizeof *b);
    memset(d->more + d->nwords, 0, (n - d->nwords) * sizeof *m);
    d->nwords = n;
    return MN_OK;
}

/* Rows come in rising id order, so the counts stay in id order. */
static mn_status dense_add(void *user, int64_t id, int64_t tf)
{
    struct mn_sqlite_dense *d = user;
    if (id <= d->last || tf < 1) /* the counts' order is the ids' */
        return mn__err(MN_CORRUPT, "keyword search: a phrase's rows out of order or without it (id %lld)",
                       (long long)id);
    d->last = id;
    mn_status rc = grow_words(d, (size_t)id / 64 + 1);
    if (rc)
        return rc;
    d->bits[id / 64] |= (uint64_t)1 << (id % 64);
    if (tf == 1)
        return MN_OK;
    if (d->ntf == d->captf) {
        size_t cap = roomy(d->captf);
        uint8_t *a = realloc(d->tf, cap);
        if (!a)
            return mn__nomem();
        d->tf = a;
        d->captf = cap;
    }
    d->more[id / 64] |= (uint64_t)1 << (id % 64);
    d->tf[d->ntf++] = (uint8_t)(tf < 255 ? tf : 255);
    if (tf < 255)
        return MN_OK;
    struct big_tf *b = mn__sqlite_grow(d->big, &d->capbig, d->nbig, sizeof *b, 16);
    if (!b)
        return mn__nomem();
    d->big = b;
    d->big[d->nbig++] = (struct big_tf){id, tf};
    return MN_OK;
}

/* Each row of the phrase past ?2 with its count (mnemo_tf, search.c). */
static const char SQL_DENSE_SCAN[] = "SELECT rowid, mnemo_tf(messages_fts) FROM messages_fts"
                                     " WHERE messages_fts MATCH ?1 AND rowid > ?2 ORDER BY rowid";

mn_status mn__sqlite_dense_update(struct sqlite_store *s, struct mn_sqlite_dense **dp, const char *phrase, size_t len,
                                 int64_t upto)
{
    struct mn_sqlite_dense *d = *dp;
    if (d && d->upto > upto) {
        mn__sqlite_dense_free(d);
        d = *dp = NULL;
    }
    if (d && d->upto == upto)
        return MN_OK;
    if (!d) {
        if (!(d = calloc(1, sizeof *d)))
            return mn__nomem();
        d->upto = d->last = -1;
    }
    mn_status rc = mn__sqlite_phrase_scan(s, SQL_DENSE_SCAN, phrase, len, d->upto, dense_add, d);
    if (rc) { /* a half-read phrase would miss rows: nothing kept */
        mn__sqlite_dense_free(d);
        *dp = NULL;
        return rc;
    }
    d->upto = upto;
    *dp = d;
    return MN_OK;
}

/* The size records of the rows past ?1, in id order (one read of the table the first time: rows
 * with rare phrases need theirs too, and very common phrases cover most rows anyway). */
static const char SQL_SIZES_SCAN[] = "SELECT id, sz FROM messages_fts_docsize WHERE id > ?1";

mn_status mn__sqlite_sizes_update(struct sqlite_store *s, struct mn_sqlite_sizes *z, int64_t upto)
{
    if (z->upto > upto)
        mn__sqlite_sizes_free(z);
    if (z->upto == upto)
        return MN_OK;
    if ((size_t)upto >= z->n) {
        size_t n = roomy((size_t)upto + 1);
        uint32_t *a = realloc(z->d, n * sizeof *a);
        if (!a)
            return mn__nomem();
        memset(a + z->n, 0, (n - z->n) * sizeof *a);
        z->d = a;
        z->n = n;
    }
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_query(s, SQL_SIZES_SCAN, &st, ARGS(ARG_INT(z->upto)));
    if (rc)
        return rc;
    int r;
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        int ntok = 0;
        if (id > 0 && id <= upto && mn__sqlite_docsize(sqlite3_column_value(st, 1), &ntok))
            z->d[id] = (uint32_t)ntok;
    }
    if ((rc = mn__sqlite_finish(s, st, r, MN_OK, "keyword search"))) {
        mn__sqlite_sizes_free(z);
        return rc;
    }
    z->upto = upto;
    return MN_OK;
}

/* ---- ranking ---------------------------------------------------------------------------------- */

struct mn_sqlite_rare_row { /* one row of one phrase that is not held here */
    int64_t id, tf;
    int phrase;
    int ntok; /* the row's size in tokens when read from the session's tokens (fts_set.c); -1: in sizes */
};

void mn__sqlite_rare_free(struct mn_sqlite_rare *r)
{
    free(r->row);
    *r = (struct mn_sqlite_rare){0};
}

static int rare_cmp(const void *a, const void *b)
{
    const struct mn_sqlite_rare_row *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

/* The query's state while rows are scored in rising id order. */
struct ranker {
    const struct phrases *p;
    struct mn_sqlite_dense *const *dense; /* per phrase; NULL: not held */
    struct tf_cursor {                    /* per phrase: how many rows of `more` lie below id */
        int64_t id;
        size_t below;
    } *cursor;
    double idf[BM25_MAX_PHRASES], freq[BM25_MAX_PHRASES], avgdl;
    struct scored *best;
    size_t nbest, want;
};

static int has_bit(const struct mn_sqlite_dense *d, int64_t id)
{
    return (size_t)id / 64 < d->nwords && (d->bits[id / 64] >> (id % 64) & 1);
}

/* The set bits of b in ids [from, to). */
static size_t bits_between(const uint64_t *b, size_t nwords, int64_t from, int64_t to)
{
    size_t n = 0;
    for (int64_t at = from; at < to && (size_t)at / 64 < nwords;) {
        uint64_t w = b[at / 64] >> (at % 64);
        int64_t span = 64 - at % 64;
        if (to - at < span) {
            w &= ((uint64_t)1 << (to - at)) - 1;
            span = to - at;
        }
        n += (size_t)__builtin_popcountll(w);
        at += span;
    }
    return n;
}

/* The count of held phrase i in row id (ids asked in rising order). */
static double dense_tf(struct ranker *k, int i, int64_t id)
{
    const struct mn_sqlite_dense *d = k->dense[i];
    if (!has_bit(d, id))
        return 0;
    if (!(d->more[id / 64] >> (id % 64) & 1))
        return 1;
    struct tf_cursor *c = &k->cursor[i];
    if (id < c->id) /* (not asked: every pass rises) */
        c->id = 0, c->below = 0;
    c->below += bits_between(d->more, d->nwords, c->id, id);
    c->id = id;
    uint8_t tf = c->below < d->ntf ? d->tf[c->below] : 1;
    if (tf < 255)
        return tf;
    size_t lo = 0, hi = d->nbig;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->big[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < d->nbig && d->big[lo].id == id ? (double)d->big[lo].tf : 255;
}

/* Scores row id of d tokens, whose counts of the phrases not held are in k->freq already; as
 * mnemo_bm25 sums, phrase by phrase in the query's order. */
static void score_row(struct ranker *k, int64_t id, double d)
{
    double score = 0.0;
    for (int i = 0; i < k->p->m; i++) {
        double f = k->dense[i] ? dense_tf(k, i, id) : k->freq[i];
        score += mn_bm25_term(k->idf[i], f, d, k->avgdl);
    }
    mn__sqlite_best_insert(k->best, &k->nbest, k->want, id, -1.0 * score);
}

static mn_status rare_push(void *user, int64_t id, int64_t tf, int phrase, int ntok)
{
    struct mn_sqlite_rare *out = user;
    struct mn_sqlite_rare_row *a = mn__sqlite_grow(out->row, &out->cap, out->n, sizeof *a, 1024);
    if (!a)
        return mn__nomem();
    out->row = a;
    a[out->n++] = (struct mn_sqlite_rare_row){id, tf, phrase, ntok};
    return MN_OK;
}

/* The rows of the phrases not held (in the set, when there is one), sorted by id: from their
 * postings, or (out->from_set) from the session's tokens the connection holds (fts_set.c). */
static mn_status rare_rows(struct sqlite_store *s, const struct phrases *p, struct mn_sqlite_dense *const *dense,
                           struct mn_sqlite_idset *set, struct mn_sqlite_rare *out)
{
    mn_status rc = out->from_set ? mn__sqlite_set_rows(s, p, set, rare_push, out) : MN_OK;
    for (int i = 0; i < p->m && !rc && !out->from_set; i++) {
        if (dense[i])
            continue;
        sqlite3_stmt *st = NULL;
        int r = sqlite3_prepare_v2(s->db,
                                   !set ? "SELECT rowid, mnemo_tf(messages_fts) FROM messages_fts WHERE messages_fts MATCH ?1"
                                   : set->bounded ? "SELECT rowid, mnemo_tf(messages_fts) FROM messages_fts WHERE messages_fts"
                                                    " MATCH ?1 AND rowid BETWEEN ?4 AND ?5 AND mnemo_in(?6, rowid)"
                                                  : "SELECT rowid, mnemo_tf(messages_fts) FROM messages_fts"
                                                    " WHERE messages_fts MATCH ?1 AND mnemo_in(?6, rowid)",
                                   -1, &st, NULL);
        if (r != SQLITE_OK) {
            rc = mn__sqlite_fail(s, r, "keyword search");
            break;
        }
        sqlite3_bind_text(st, 1, p->at[i], (int)p->len[i], SQLITE_STATIC);
        if (set && set->bounded) {
            sqlite3_bind_int64(st, 4, mn__sqlite_idset_lo(set));
            sqlite3_bind_int64(st, 5, mn__sqlite_idset_hi(set));
        }
        if (set)
            mn__sqlite_idset_bind(st, 6, set);
        while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
            rc = rare_push(out, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), i, -1);
        if (!rc && r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "keyword search");
        sqlite3_finalize(st);
    }
    size_t sorted = 1; /* (a session's tokens come in id order, mostly) */
    while (sorted < out->n && out->row[sorted - 1].id <= out->row[sorted].id)
        sorted++;
    if (!rc && sorted < out->n)
        qsort(out->row, out->n, sizeof *out->row, rare_cmp);
    if (rc)
        mn__sqlite_rare_free(out);
    else
        out->read = 1;
    return rc;
}

/* Whether a row with none of the rare phrases could still enter: the want-th best scores at
 * most what the held phrases can add (2.2·idf each: tf/(tf + x) < 1). */
static int others_may_enter(const struct ranker *k)
{
    if (k->nbest < k->want)
        return 1;
    double bound = 0;
    for (int i = 0; i < k->p->m; i++)
        if (k->dense[i])
            bound += 2.2 * k->idf[i];
    return -k->best[k->want - 1].score <= bound * (1 + 1e-9);
}

/* Every row with a held phrase and none of the rare ones (rare[0..nrare), sorted) is scored: the
 * set's ids, or the union of the bitmaps. */
static void score_held_rows(struct ranker *k, const struct mn_sqlite_sizes *z, const struct mn_sqlite_rare_row *rare,
                            size_t nrare, const struct mn_sqlite_idset *set)
{
    size_t r = 0, nwords = 0;
    int m = k->p->m;
    for (int i = 0; i < m; i++)
        if (k->dense[i] && k->dense[i]->nwords > nwords)
            nwords = k->dense[i]->nwords;
    for (int i = 0; i < m; i++)
        k->cursor[i] = (struct tf_cursor){0, 0}, k->freq[i] = 0;
    if (set) {
        for (size_t j = 0; j < set->n; j++) {
            int64_t id = set->id[j];
            while (r < nrare && rare[r].id < id)
                r++;
            if (r < nrare && rare[r].id == id)
                continue;
            int any = 0;
            for (int i = 0; i < m && !any; i++)
                any = k->dense[i] && has_bit(k->dense[i], id);
            if (any && (size_t)id < z->n)
                score_row(k, id, (double)z->d[id]);
        }
        return;
    }
    for (size_t w = 0; w < nwords; w++) {
        uint64_t word = 0;
        for (int i = 0; i < m; i++)
            if (k->dense[i] && w < k->dense[i]->nwords)
                word |= k->dense[i]->bits[w];
        while (word) {
            int64_t id = (int64_t)(w * 64 + (size_t)__builtin_ctzll(word));
            word &= word - 1;
            while (r < nrare && rare[r].id < id)
                r++;
            if ((r < nrare && rare[r].id == id) || (size_t)id >= z->n)
                continue;
            score_row(k, id, (double)z->d[id]);
        }
    }
}

mn_status mn__sqlite_dense_rank(struct sqlite_store *s, const struct phrases *p,
                               struct mn_sqlite_dense *const *dense, const struct mn_sqlite_sizes *z,
                               struct mn_sqlite_idset *set, struct mn_sqlite_rare *rare, size_t want, int held_too,
                               struct scored_list *out, int *done)
{
    *done = 0;
    int first = -1;
    for (int i = 0; i < p->m && first < 0; i++)
        if (dense[i])
            first = i;
    if (p->m < 1 || want < 1)
        return MN_OK;
    int most = 0; /* the totals are read through a row of the phrase with most rows */
    for (int i = 1; i < p->m; i++)
        most = p->n[i] > p->n[most] ? i : most;
    int64_t nrow = 0, ntoken = 0;
    mn_status rc = mn__sqlite_fts_totals(s, p->at[most], p->len[most], &nrow, &ntoken);
    if (rc || nrow <= 0)
        return rc;
    struct ranker k = {.p = p, .dense = dense, .want = want};
    k.avgdl = (double)ntoken / (double)nrow;
    for (int i = 0; i < p->m; i++)
        k.idf[i] = mn_bm25_idf(nrow, p->n[i]);
    k.best = calloc(want, sizeof *k.best);
    k.cursor = calloc(BM25_MAX_PHRASES, sizeof *k.cursor);
    if (!k.best || !k.cursor)
        rc = mn__nomem();
    if (!rc && !rare->read)
        rc = rare_rows(s, p, dense, set, rare);
    const struct mn_sqlite_rare_row *row = rare->row;
    size_t nrare = rare->n;
    /* the rows of the rare phrases, each scored once with all its counts */
    for (size_t j = 0; !rc && j < nrare;) {
        size_t e = j;
        for (int i = 0; i < p->m; i++)
            k.freq[i] = 0;
        for (; e < nrare && row[e].id == row[j].id; e++)
            k.freq[row[e].phrase] = (double)row[e].tf;
        double d = row[j].ntok >= 0 ? row[j].ntok : (size_t)row[j].id < z->n ? (double)z->d[row[j].id] : 0;
        score_row(&k, row[j].id, d);
        j = e;
    }
    int enter = !rc && first >= 0 && others_may_enter(&k); /* (none held: every match was read) */
    if (enter && held_too)
        score_held_rows(&k, z, row, nrare, set);
    if (!rc && (!enter || held_too)) {
        out->n = 0;
        for (size_t i = 0; !rc && i < k.nbest; i++)
            rc = mn__sqlite_scored_push(out, k.best[i].id, k.best[i].score);
        if (!rc) {
            *done = 1;
            __atomic_fetch_add(first >= 0 ? &mn_sqlite_fts_dense_ranked : &mn_sqlite_fts_rows_ranked, 1,
                               __ATOMIC_RELAXED);
        }
    }
    free(k.best);
    free(k.cursor);
    return rc;
}
