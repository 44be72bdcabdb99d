/*
 * fts_tops.c — the best rows of common phrases, and the threshold algorithm that ranks a keyword
 * query's common phrases from them without reading their postings (fts_rank.h; docs/search.md,
 * "Keyword search at scale"). A query of one rare and one common word used to rank every row of
 * the common word (a third of the store: 200 ms at a million messages) because the rare word had
 * fewer than k rows; here it scores a few dozen rows.
 */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/fts_rank.h"
#include "store/sqlite/sqlite_int.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

long mn_sqlite_fts_tops_ranked;

#define TOPS_MAX_TF 1024 /* a row with the phrase more often: the phrase's tops are not used */

struct top_row {
    int64_t id, d; /* message id, row size in tokens */
};

struct tops_bucket { /* the rows that have the phrase tf times */
    int64_t total;   /* how many */
    size_t n;        /* kept: the first n by (d, id) */
    struct top_row *row;
};

struct mn_sqlite_tops {
    int64_t upto; /* the rows up to this message id are counted */
    size_t depth;
    int ntf, too_many;
    struct tops_bucket *b; /* b[tf - 1] */
};

int mn__sqlite_tops_broken(const struct mn_sqlite_tops *t) { return t && t->too_many; }

void mn__sqlite_tops_free(struct mn_sqlite_tops *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->ntf; i++)
        free(t->b[i].row);
    free(t->b);
    free(t);
}

/* Counts a row in its bucket and keeps it when it is among the depth best. Rows come in id order,
 * so a row as large as the last kept one ranks after it. */
static mn_status tops_add(struct mn_sqlite_tops *t, int64_t tf, int64_t d, int64_t id)
{
    if (tf < 1 || tf > TOPS_MAX_TF) { /* (a matching row has the phrase at least once) */
        t->too_many = 1;
        return MN_OK;
    }
    if (tf > t->ntf) {
        struct tops_bucket *b = realloc(t->b, (size_t)tf * sizeof *b);
        if (!b)
            return mn__nomem();
        memset(b + t->ntf, 0, (size_t)(tf - t->ntf) * sizeof *b);
        t->b = b;
        t->ntf = (int)tf;
    }
    struct tops_bucket *k = &t->b[tf - 1];
    k->total++;
    if (k->n == t->depth && d >= k->row[k->n - 1].d)
        return MN_OK;
    if (!k->row && !(k->row = malloc(t->depth * sizeof *k->row)))
        return mn__nomem();
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->row[mid].d <= d)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t kept = k->n < t->depth ? k->n : t->depth - 1;
    memmove(&k->row[lo + 1], &k->row[lo], (kept - lo) * sizeof *k->row);
    k->row[lo] = (struct top_row){id, d};
    if (k->n < t->depth)
        k->n++;
    return MN_OK;
}

mn_status mn__sqlite_phrase_scan(struct sqlite_store *s, const char *sql, const char *phrase, size_t len, int64_t after,
                                mn_status (*row)(void *user, int64_t id, int64_t value), void *user)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, sql, &st);
    if (rc)
        return rc;
    int r;
    sqlite3_bind_text(st, 1, phrase, (int)len, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, after);
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW)
        rc = row(user, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
    return mn__sqlite_finish(s, st, r, rc, "keyword search");
}

static mn_status tops_row(void *user, int64_t id, int64_t tfd)
{
    return tops_add(user, tfd >> 32, tfd & 0xffffffff, id);
}

/* Each row of the phrase past ?2 with its count and size: mnemo_tfd (search.c) gives tf·2³² + d. */
static const char SQL_TOPS_SCAN[] = "SELECT messages_fts.rowid, mnemo_tfd(messages_fts, d.sz)" FROM_SIZED
                                    " WHERE messages_fts MATCH ?1 AND messages_fts.rowid > ?2";

mn_status mn__sqlite_tops_update(struct sqlite_store *s, struct mn_sqlite_tops **tp, const char *phrase, size_t len,
                                int64_t upto)
{
    size_t depth = mn_sqlite_fts_tuning.top_depth > 0 ? (size_t)mn_sqlite_fts_tuning.top_depth : 1;
    struct mn_sqlite_tops *t = *tp;
    if (t && (t->depth != depth || t->upto > upto)) {
        mn__sqlite_tops_free(t);
        t = *tp = NULL;
    }
    if (t && t->upto == upto)
        return MN_OK;
    if (!t) {
        if (!(t = calloc(1, sizeof *t)))
            return mn__nomem();
        t->depth = depth;
        t->upto = -1;
    }
    mn_status rc = mn__sqlite_phrase_scan(s, SQL_TOPS_SCAN, phrase, len, t->upto, tops_row, t);
    if (rc) { /* a half-read phrase would miss rows: nothing kept */
        mn__sqlite_tops_free(t);
        *tp = NULL;
        return rc;
    }
    t->upto = upto;
    *tp = t;
    return MN_OK;
}

/* ---- threshold algorithm ----------------------------------------------------------------------- */

/* Rows scored past this many (besides want) and the search goes back to ranking every row: each
 * costs a lookup of the query's phrases at one id (~40 µs). */
#define TA_MAX_SCORED 128

/* A small set of message ids (open addressing; cap a power of two above twice the entries). */
struct idset {
    int64_t *slot;
    size_t cap;
};

static int idset_add(struct idset *s, int64_t id) /* 1 when new */
{
    size_t i = (size_t)((uint64_t)id * 0x9E3779B97F4A7C15ULL >> 20) & (s->cap - 1);
    while (s->slot[i]) {
        if (s->slot[i] == id + 1)
            return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->slot[i] = id + 1; /* ids are ≥ 1 (0 marks a free slot) */
    return 1;
}

void mn__sqlite_best_insert(struct scored *best, size_t *n, size_t want, int64_t id, double score)
{
    size_t i = *n;
    if (i == want && !mn_sqlite_ranks_before(score, id, &best[want - 1]))
        return;
    if (i == want)
        i--;
    while (i > 0 && mn_sqlite_ranks_before(score, id, &best[i - 1])) {
        best[i] = best[i - 1];
        i--;
    }
    best[i] = (struct scored){id, score};
    if (*n < want)
        (*n)++;
}

static const char SQL_TOTALS[] = "SELECT mnemo_fts_total(messages_fts, 0), mnemo_fts_total(messages_fts, 1)"
                                 " FROM messages_fts WHERE messages_fts MATCH ?1 LIMIT 1";

mn_status mn__sqlite_fts_totals(struct sqlite_store *s, const char *phrase, size_t len, int64_t *nrow, int64_t *ntoken)
{
    sqlite3_stmt *st = NULL;
    mn_status rc = mn__sqlite_stmt(s, SQL_TOTALS, &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, phrase, (int)len, SQLITE_STATIC);
    int r = sqlite3_step(st);
    *nrow = r == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    *ntoken = r == SQLITE_ROW ? sqlite3_column_int64(st, 1) : 0;
    return mn__sqlite_finish(s, st, r, MN_OK, "keyword search");
}

struct ta {
    const struct mn_sqlite_tops *t;
    double idf;
    size_t *pos; /* per bucket: the next row to take */
};

/* What the next row of bucket i of c can add at most; *open: it has a kept row left to take. */
static double bucket_head(const struct ta *c, int i, double avgdl, int *open)
{
    const struct tops_bucket *k = &c->t->b[i];
    *open = c->pos[i] < k->n;
    if (*open)
        return mn_bm25_term(c->idf, (double)(i + 1), (double)k->row[c->pos[i]].d, avgdl);
    if (k->total > (int64_t)k->n) /* rows not kept: no smaller than the last kept one */
        return mn_bm25_term(c->idf, (double)(i + 1), (double)k->row[k->n - 1].d, avgdl);
    return 0;
}

mn_status mn__sqlite_tops_rank(struct sqlite_store *s, const char *match, const struct phrases *p, const int *common,
                              struct mn_sqlite_tops *const *tops, int nc, const struct scored_list *seeds, int all_seen,
                              size_t want, struct scored_list *out, int *done)
{
    *done = 0;
    for (int j = 0; j < nc; j++)
        if (mn__sqlite_tops_broken(tops[j]))
            return MN_OK;
    if (nc < 1 || want < 1)
        return MN_OK;
    int64_t nrow = 0, ntoken = 0;
    mn_status rc = mn__sqlite_fts_totals(s, p->at[common[0]], p->len[common[0]], &nrow, &ntoken);
    if (rc || nrow <= 0)
        return rc;
    double avgdl = (double)ntoken / (double)nrow;
    struct ta c[BM25_MAX_PHRASES];
    size_t npos = 0;
    for (int j = 0; j < nc; j++)
        npos += (size_t)tops[j]->ntf;
    size_t *pos = calloc(npos + 1, sizeof *pos);
    struct scored *best = calloc(want, sizeof *best);
    struct idset seen = {NULL, 1};
    while (seen.cap < 2 * (TA_MAX_SCORED + want + seeds->n + 1))
        seen.cap *= 2;
    seen.slot = calloc(seen.cap, sizeof *seen.slot);
    struct mn_buf sql = MN_BUF_INIT;
    sqlite3_stmt *score = NULL;
    if (!pos || !best || !seen.slot)
        rc = mn__nomem();
    for (int j = 0, at = 0; !rc && j < nc; at += tops[j]->ntf, j++)
        c[j] = (struct ta){tops[j], mn_bm25_idf(nrow, p->n[common[j]]), pos + at};
    if (!rc && !(rc = mn__buf_adds(&sql, "SELECT ")) && !(rc = mn__sqlite_given_sql(&sql, p->m)) &&
        !(rc = mn__buf_adds(&sql, FROM_SIZED " WHERE messages_fts MATCH ?1 AND messages_fts.rowid = ?4"))) {
        int r = sqlite3_prepare_v2(s->db, sql.data, -1, &score, NULL);
        if (r != SQLITE_OK)
            rc = mn__sqlite_fail(s, r, "keyword search");
    }
    size_t nbest = 0, scored = 0;
    for (size_t i = 0; !rc && i < seeds->n; i++)
        if (idset_add(&seen, seeds->r[i].id))
            mn__sqlite_best_insert(best, &nbest, want, seeds->r[i].id, seeds->r[i].score);
    if (!rc) {
        sqlite3_bind_text(score, 1, match, -1, SQLITE_STATIC);
        mn__sqlite_given_bind(score, p, 0);
    }
    while (!rc) {
        /* what a row not taken yet can score at most: the sum of each phrase's largest head,
         * without the smallest when the rows with every common phrase are among the seeds */
        double most[BM25_MAX_PHRASES], bound = 0, top = 0;
        int tj = -1, ti = -1, least = 0;
        for (int j = 0; j < nc; j++) {
            most[j] = 0;
            for (int i = 0; i < c[j].t->ntf; i++) {
                int open = 0;
                double h = bucket_head(&c[j], i, avgdl, &open);
                most[j] = h > most[j] ? h : most[j];
                if (open && h > top)
                    top = h, tj = j, ti = i;
            }
            least = most[j] < most[least] ? j : least;
        }
        for (int j = 0; j < nc; j++)
            bound += all_seen && j == least ? 0 : most[j];
        if (bound == 0 || (nbest == want && -best[want - 1].score > bound * (1 + 1e-9))) {
            *done = 1; /* (bound 0: every row of the common phrases was taken) */
            break;
        }
        if (tj < 0 || scored >= TA_MAX_SCORED + want)
            break; /* the kept rows do not reach: the caller ranks every row */
        int64_t id = c[tj].t->b[ti].row[c[tj].pos[ti]++].id;
        if (!idset_add(&seen, id))
            continue;
        scored++;
        sqlite3_bind_int64(score, 4, id);
        int r = sqlite3_step(score);
        if (r == SQLITE_ROW)
            mn__sqlite_best_insert(best, &nbest, want, id, sqlite3_column_double(score, 0));
        else if (r != SQLITE_DONE)
            rc = mn__sqlite_fail(s, r, "keyword search");
        sqlite3_reset(score);
    }
    if (!rc && *done) {
        out->n = 0;
        for (size_t i = 0; !rc && i < nbest; i++)
            rc = mn__sqlite_scored_push(out, best[i].id, best[i].score);
        if (rc)
            *done = 0;
        else
            __atomic_fetch_add(&mn_sqlite_fts_tops_ranked, 1, __ATOMIC_RELAXED);
    }
    sqlite3_finalize(score);
    mn__buf_release(&sql);
    free(seen.slot);
    free(best);
    free(pos);
    return rc;
}
