/*
 * fts_rank.h — what the keyword ranking of the SQLite backend shares between search.c (the plans,
 * mnemo_bm25, MaxScore) and fts_tops.c (the best rows of common phrases). Only src/store/sqlite/
 * includes it. Design notes: docs/search.md, "Keyword search at scale".
 */
#ifndef MN_STORE_SQLITE_FTS_RANK_H
#define MN_STORE_SQLITE_FTS_RANK_H

#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"

#define BM25_MAX_PHRASES 64 /* MN_FTS_MAX_TERMS; mnemo_bm25 then takes 66 arguments (SQLite allows 127) */

struct scored {
    int64_t id;
    double score; /* bm25 as FTS5 gives it: smaller is better */
};

struct scored_list {
    struct scored *r;
    size_t n, cap;
};

mn_status mn__sqlite_scored_push(struct scored_list *l, int64_t id, double score);
/* Whether (score, id) ranks before r: a smaller score, ties by smaller id (the search's order). */
static inline int mn_sqlite_ranks_before(double score, int64_t id, const struct scored *r)
{
    return score < r->score || (score == r->score && id < r->id);
}
/* Keeps (id, score) among the best `want` rows so far, best[0..*n) best first (fts_tops.c). */
void mn__sqlite_best_insert(struct scored *best, size_t *n, size_t want, int64_t id, double score);

/* The phrases of a query as mn__fts_query writes it ("a" OR "b" OR …), each with its document
 * count n. */
struct phrases {
    const char *at[BM25_MAX_PHRASES];
    size_t len[BM25_MAX_PHRASES];
    int64_t n[BM25_MAX_PHRASES];
    int m;
};

/* bm25 as fts5_aux.c computes it, one phrase at a time, in its operations and order (so the same
 * doubles): the phrase's idf among nrow rows of which nhit have it, and what a phrase with that
 * idf, found freq times in a row of d tokens, adds to the row's score (avgdl: tokens per row). No
 * fused multiply-add: libsqlite3's bm25 rounds each operation. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
static inline double mn_bm25_idf(int64_t nrow, int64_t nhit)
{
    double idf = log((nrow - nhit + 0.5) / (nhit + 0.5));
    return idf <= 0.0 ? 1e-6 : idf;
}

static inline double mn_bm25_term(double idf, double freq, double d, double avgdl)
{
    const double k1 = 1.2; /* fts5_aux.c's constants */
    const double b = 0.75;
    return idf * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + b * d / avgdl)));
}

/* "mnemo_bm25(messages_fts, ?3, d.sz, ?16, ?17, …)" for m phrases, and its values: the skip ?3,
 * the counts ?16 on. FROM_SIZED reads the row's size record d.sz beside the match. */
#define FROM_SIZED " FROM messages_fts LEFT JOIN messages_fts_docsize d ON d.id = messages_fts.rowid"
struct mn_buf;
mn_status mn__sqlite_given_sql(struct mn_buf *b, int m);
void mn__sqlite_given_bind(sqlite3_stmt *st, const struct phrases *p, int skip);

/* The ids a session or namespace filter lets through, sorted, for one search (fts_idset.c).
 * mnemo_in(?N, rowid) tests a match against the set bound at ?N; `at` is where the last test
 * stopped. `bounded`: the set spans little enough of the ids that FTS5 should be given its
 * smallest and largest (a rowid range costs FTS5 about a quarter more per posting read). */
struct mn_sqlite_idset {
    int64_t *id;
    size_t n, at;
    int bounded, by_row; /* by_row: search.c's set_group_ranked may score rows one by one */
};
struct sqlite_store;
/* Reads the ids st gives (its first column) into *set; on failure *set is empty. */
mn_status mn__sqlite_idset_read(struct sqlite_store *s, sqlite3_stmt *st, struct mn_sqlite_idset *set);
void mn__sqlite_idset_free(struct mn_sqlite_idset *set);
/* The smallest and largest id (an empty range, lo > hi, for an empty set). */
int64_t mn__sqlite_idset_lo(const struct mn_sqlite_idset *set);
int64_t mn__sqlite_idset_hi(const struct mn_sqlite_idset *set);
/* Binds set as parameter `at` of st for mnemo_in; set must outlive st's steps. */
void mn__sqlite_idset_bind(sqlite3_stmt *st, int at, struct mn_sqlite_idset *set);
/* Registers mnemo_in on db (an SQLite result code). */
int mn__sqlite_idset_register(sqlite3 *db);

/* Calls row(user, id, value) for each row of `phrase` past message id `after`, in id order: sql
 * (cached) selects rowid and a value, with ?1 the phrase and ?2 after (fts_tops.c). */
mn_status mn__sqlite_phrase_scan(struct sqlite_store *s, const char *sql, const char *phrase, size_t len, int64_t after,
                                mn_status (*row)(void *user, int64_t id, int64_t value), void *user);

/* A row's size in tokens from its messages_fts_docsize record (search.c); 0 when there is none. */
int mn__sqlite_docsize(sqlite3_value *v, int *ntok);

/* The index's rows and tokens, as mnemo_bm25 reads them (read through a row of `phrase`). */
mn_status mn__sqlite_fts_totals(struct sqlite_store *s, const char *phrase, size_t len, int64_t *nrow,
                               int64_t *ntoken);

/* The rows of very common phrases in memory (fts_dense.c): per phrase a bitmap over message ids
 * and the rows that have it more than once with their count, brought forward by reading the rows
 * past `upto`; per connection every indexed row's size in tokens (sqlite_int.h's
 * mn_sqlite_sizes). */
struct mn_sqlite_dense;
struct mn_sqlite_sizes;
void mn__sqlite_dense_free(struct mn_sqlite_dense *d);
void mn__sqlite_sizes_free(struct mn_sqlite_sizes *z);
/* The bytes d holds; about what a phrase of `rows` rows would hold with ids up to upto; what z
 * holds, or would, for ids up to upto. */
size_t mn__sqlite_dense_bytes(const struct mn_sqlite_dense *d);
size_t mn__sqlite_dense_estimate(int64_t upto, int64_t rows);
size_t mn__sqlite_sizes_bytes(const struct mn_sqlite_sizes *z, int64_t upto);
/* Makes *d (NULL: none yet) hold the phrase's rows up to message id upto. */
mn_status mn__sqlite_dense_update(struct sqlite_store *s, struct mn_sqlite_dense **d, const char *phrase, size_t len,
                                 int64_t upto);
/* Makes z hold the size of every indexed row up to message id upto. */
mn_status mn__sqlite_sizes_update(struct sqlite_store *s, struct mn_sqlite_sizes *z, int64_t upto);
/* The rows of a query's phrases not held, read by the first mn__sqlite_dense_rank of a search and
 * kept for its second; the caller frees them. */
struct mn_sqlite_rare {
    struct mn_sqlite_rare_row *row;
    size_t n, cap;
    int read;
    int from_set; /* read from the session's tokens the connection holds (fts_set.c) */
};
void mn__sqlite_rare_free(struct mn_sqlite_rare *r);
/* The best `want` rows of the query p (mn__fts_query's phrases, each with its count), in the set
 * when there is one, best first, into out with *done: dense[i] holds phrase i (NULL: its rows are
 * read from its postings, into rare unless read already); the same ids and doubles as
 * mnemo_bm25. Without held_too, *done only when no row without a phrase not held can enter (the
 * rows with only held phrases, a third of the store or more, are not read). */
mn_status mn__sqlite_dense_rank(struct sqlite_store *s, const struct phrases *p,
                               struct mn_sqlite_dense *const *dense, const struct mn_sqlite_sizes *z,
                               struct mn_sqlite_idset *set, struct mn_sqlite_rare *rare, size_t want, int held_too,
                               struct scored_list *out, int *done);

/* The best rows of common phrases (fts_tops.c). A phrase's tops hold, for each count tf of the
 * phrase in a row, the rows with that count of fewest tokens (ties: smaller id), at most `depth`
 * of them, and how many rows have that count: within one tf a row's share of the score never
 * rises as its size grows, whatever the store's average size, so these lists give the phrase's
 * rows in falling order of score without reading its postings. Built by one pass over the
 * phrase's postings, brought forward by reading the rows past `upto`. */
struct mn_sqlite_tops;
void mn__sqlite_tops_free(struct mn_sqlite_tops *t);
/* Whether t (NULL: not built) cannot be used: a row has the phrase more than 1,024 times. */
int mn__sqlite_tops_broken(const struct mn_sqlite_tops *t);
/* Makes *t (NULL: none yet; replaced when its depth is not the tuning's) hold the phrase's rows
 * up to message id upto. */
mn_status mn__sqlite_tops_update(struct sqlite_store *s, struct mn_sqlite_tops **t, const char *phrase, size_t len,
                                int64_t upto);
/*
 * The best `want` rows of the whole query `match` (phrases p), when the phrases common[0..nc-1]
 * (indexes into p, each with its tops) are the only ones a row outside `seeds` can have: `seeds`
 * holds, with full scores, the best `want` rows (all of them when fewer) of those that have one
 * of the other phrases, and with all_seen also of those that have every common phrase.
 * Threshold algorithm: the common phrases' rows are taken in falling order of their share, each
 * scored with the whole query, until the want-th best scores above what a row not taken yet
 * could. *done = 0 (out untouched) when the tops do not reach that far.
 */
mn_status mn__sqlite_tops_rank(struct sqlite_store *s, const char *match, const struct phrases *p, const int *common,
                              struct mn_sqlite_tops *const *tops, int nc, const struct scored_list *seeds, int all_seen,
                              size_t want, struct scored_list *out, int *done);

#endif
