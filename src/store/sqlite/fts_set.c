/*
 * fts_set.c — a keyword search in one session, counted from the session's own text.
 *
 * Why: a context's retrieval searches its session with the user's message, often 20 to 60 words,
 * each a phrase of the query. At a million messages most of those words are in a third of the
 * store, and reading their postings to keep a session's thousand rows took 0.1 to 3 s
 * (bench/README.md, "Retrieval in a session at 1M"). The session's messages, split into tokens by
 * the index's own tokenizer (the same text, the same tokenizer), give each row's count of each
 * phrase and its size in tokens as the index has them; ranked with the index's document counts
 * and average size (mn__sqlite_dense_rank), the scores are the same doubles.
 *
 * How: the connection keeps the session's tokens in memory, each word once (a dictionary of the
 * session's words) and each message as the list of its words' numbers. A search finds each
 * phrase's words in the dictionary and walks the lists once for all phrases. Indexing the
 * messages into a TEMP FTS5 table instead, as this file did first, cost ~20 µs a message and
 * reading the table's postings back as much again; splitting into tokens is most of what is left.
 *
 * The tokens are kept between searches, for the sessions searched last (SET_KEEP_BYTES a
 * connection: a server builds the contexts of many conversations in turn, and each turn's search
 * should split only that turn's messages): the next search of a session kept adds only the
 * messages the index took in since. A session's tokens are split again when the index's
 * watermark went back (a rebuild) and when a change below the watermark was applied (meta
 * fts.deletes moved: an edit, a delete or an import may have changed a text they hold). Which of
 * the rows a search may return is still the filter's set: a clear or a role filter needs nothing
 * new.
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/fts_rank.h"
#include "store/sqlite/sqlite_int.h"
#include "util/err.h"
#include "util/banned.h"

long mn_sqlite_fts_set_scanned, mn_sqlite_fts_set_split, mn_sqlite_fts_recent_counted;

/* FTS5 cuts longer tokens to this many bytes, in documents and queries alike (fts5Int.h). */
#define FTS5_MAX_TOKEN_SIZE 32768

static const char SQL_SET_SID[] = "SELECT sid FROM sessions WHERE id = ?1";
static const char SQL_SET_TEXTS[] = "SELECT id, content FROM messages WHERE " MN_SQLITE_IN_SESSION("pos", "?1")
                                    " AND id > ?2 AND id <= ?3 AND content IS NOT NULL";
/* the same rows found by id (+pos: not by the session's range, which reads all of its rows) */
static const char SQL_SET_NEWER[] = "SELECT id, content FROM messages WHERE id > ?2 AND id <= ?3 AND "
                                    MN_SQLITE_IN_SESSION("+pos", "?1") " AND content IS NOT NULL";
static const char SQL_RECENT_TEXTS[] = "SELECT id, content FROM messages WHERE id > ?1 AND id <= ?2"
                                       " AND content IS NOT NULL ORDER BY id";

struct set_row {
    int64_t id;
    size_t at;     /* its first word in words[] */
    uint32_t ntok; /* its size in tokens, as the index counts them */
};

struct set_word { /* a word of the dictionary: chars[off, off + len) */
    uint32_t off, len, hash;
};

/* What a connection keeps of the sessions searched last, at most (the one searched is kept
 * whatever its size): a session of a thousand messages of 120 tokens takes ~0.5 MB of word
 * numbers and its dictionary up to ~1.5 MB more (the benchmark's made-up words; fewer in prose). */
#define SET_KEEP_BYTES ((size_t)128 << 20)

struct set_session { /* session sid's messages with an id past lo up to hi, while fts.deletes was gen */
    int64_t sid, lo, hi, gen;
    uint64_t used; /* the connection's clock when it was last searched */
    struct set_row *row;
    size_t nrow, cap_row;
    uint32_t *words; /* each row's words, by number, in order */
    size_t nwords, cap_words;
    struct set_word *dict;
    size_t ndict, cap_dict;
    char *chars;
    size_t nchars, cap_chars;
    uint32_t *slot; /* open addressing: a word's number + 1, 0 for none */
    size_t nslot;   /* a power of two, at least twice ndict */
};

struct mn_sqlite_set_text {
    fts5_tokenizer api;
    Fts5Tokenizer *tok;
    struct set_session **kept, *cur; /* cur: the session of the search under way */
    size_t nkept;
    struct set_session *recent; /* every message indexed last (mn__sqlite_recent_counts) */
    uint64_t clock;
    uint64_t *first; /* per word of the session walked, during a search: the phrases that begin
                      * with it (else 0) */
    size_t nfirst;
};

/* The slot of the word p[0..n) (its number + 1 there, or 0 where it would go). */
static size_t word_slot(const struct set_session *t, const char *p, size_t n, uint32_t h)
{
    size_t i = h & (t->nslot - 1);
    for (;;) {
        uint32_t v = t->slot[i];
        if (!v)
            return i;
        const struct set_word *w = &t->dict[v - 1];
        if (w->hash == h && w->len == n && memcmp(t->chars + w->off, p, n) == 0)
            return i;
        i = (i + 1) & (t->nslot - 1);
    }
}

static int rehash(struct set_session *t)
{
    size_t n = t->nslot ? t->nslot * 2 : 4096;
    uint32_t *slot = calloc(n, sizeof *slot);
    if (!slot)
        return 0;
    free(t->slot);
    t->slot = slot;
    t->nslot = n;
    for (size_t k = 0; k < t->ndict; k++) {
        size_t i = t->dict[k].hash & (n - 1);
        while (slot[i])
            i = (i + 1) & (n - 1);
        slot[i] = (uint32_t)k + 1;
    }
    return 1;
}

/* The word's number, added to the dictionary when new; -1 when memory runs out. */
static int64_t word_intern(struct set_session *t, const char *p, size_t n)
{
    if ((t->ndict + 1) * 2 > t->nslot && !rehash(t))
        return -1;
    uint32_t h = mn__sqlite_hash(p, n);
    size_t i = word_slot(t, p, n, h);
    if (t->slot[i])
        return t->slot[i] - 1;
    struct set_word *d = mn__sqlite_grow(t->dict, &t->cap_dict, t->ndict, sizeof *d, 1024);
    if (!d)
        return -1;
    t->dict = d;
    char *c = t->nchars + n > UINT32_MAX ? NULL : mn__sqlite_grow(t->chars, &t->cap_chars, t->nchars + n, 1, 16384);
    if (!c)
        return -1;
    t->chars = c;
    memcpy(c + t->nchars, p, n);
    d[t->ndict] = (struct set_word){(uint32_t)t->nchars, (uint32_t)n, h};
    t->nchars += n;
    t->slot[i] = (uint32_t)++t->ndict;
    return t->ndict - 1;
}

/* The tokens of a message, interned and appended to words[]. */
static int on_token(void *user, int flags, const char *p, int n, int start, int end)
{
    (void)start, (void)end;
    struct set_session *t = user;
    if (flags & FTS5_TOKEN_COLOCATED) /* a synonym: not counted in the size (the tokenizer makes none) */
        return SQLITE_OK;
    int64_t w = word_intern(t, p, n < FTS5_MAX_TOKEN_SIZE ? (size_t)n : FTS5_MAX_TOKEN_SIZE);
    uint32_t *a = w < 0 ? NULL : mn__sqlite_grow(t->words, &t->cap_words, t->nwords, sizeof *a, 65536);
    if (!a)
        return SQLITE_NOMEM;
    t->words = a;
    a[t->nwords++] = (uint32_t)w;
    return SQLITE_OK;
}

/* The index's tokenizer (MN_SQLITE_KW_TOKENIZE: porter over unicode61, diacritics removed). */
static mn_status tokenizer_open(struct sqlite_store *s, struct mn_sqlite_set_text *t)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT fts5(?1)", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
        sqlite3_step(st);
    }
    sqlite3_finalize(st);
    void *ctx = NULL;
    const char *args[] = {"unicode61", "remove_diacritics", "2"};
    if (!api || api->xFindTokenizer(api, "porter", &ctx, &t->api) != SQLITE_OK ||
        t->api.xCreate(ctx, args, 3, &t->tok) != SQLITE_OK)
        return mn__err(MN_INTERNAL, "keyword search in a session: the FTS5 tokenizer porter is not available");
    return MN_OK;
}

static void session_free(struct set_session *t)
{
    free(t->row);
    free(t->words);
    free(t->dict);
    free(t->chars);
    free(t->slot);
    free(t);
}

static size_t session_bytes(const struct set_session *t)
{
    return t->cap_row * sizeof *t->row + t->cap_words * sizeof *t->words + t->cap_dict * sizeof *t->dict +
           t->cap_chars + t->nslot * sizeof *t->slot;
}

void mn__sqlite_set_free(struct sqlite_store *s)
{
    struct mn_sqlite_set_text *t = s->kwset;
    if (!t)
        return;
    if (t->tok)
        t->api.xDelete(t->tok);
    for (size_t i = 0; i < t->nkept; i++)
        session_free(t->kept[i]);
    if (t->recent)
        session_free(t->recent);
    free(t->kept);
    free(t->first);
    free(t);
    s->kwset = NULL;
}

/* Forgets the rows and words held, keeping the memory. */
static void session_clear(struct set_session *t, int64_t gen)
{
    t->nrow = t->nwords = t->ndict = t->nchars = 0;
    if (t->slot)
        memset(t->slot, 0, t->nslot * sizeof *t->slot);
    t->hi = 0, t->gen = gen;
}

static struct set_session *session_find(const struct mn_sqlite_set_text *t, int64_t sid)
{
    for (size_t i = 0; t && i < t->nkept; i++)
        if (t->kept[i]->sid == sid)
            return t->kept[i];
    return NULL;
}

/* The sessions searched longest ago go while those kept hold more than SET_KEEP_BYTES; `keep`,
 * the session searched now, stays. */
static void sessions_trim(struct mn_sqlite_set_text *t, const struct set_session *keep)
{
    size_t bytes = 0;
    for (size_t i = 0; i < t->nkept; i++)
        bytes += session_bytes(t->kept[i]);
    while (bytes > SET_KEEP_BYTES && t->nkept > 1) {
        size_t old = t->kept[0] == keep ? 1 : 0;
        for (size_t i = 0; i < t->nkept; i++)
            if (t->kept[i] != keep && t->kept[i]->used < t->kept[old]->used)
                old = i;
        bytes -= session_bytes(t->kept[old]);
        session_free(t->kept[old]);
        t->kept[old] = t->kept[--t->nkept];
    }
}

mn_status mn__sqlite_set_sid(struct sqlite_store *s, const char *session_id, int64_t *sid)
{
    *sid = 0;
    return mn__sqlite_int(s, SQL_SET_SID, "keyword search in a session", sid, NULL, ARGS(ARG_TEXT(session_id)));
}

int64_t mn__sqlite_set_missing(const struct sqlite_store *s, int64_t sid, int64_t upto, int64_t gen, int64_t part)
{
    const struct set_session *t = session_find(s->kwset, sid);
    if (!t || t->gen != gen || t->hi > upto)
        return part;
    /* the messages the index took in since, this session's share of them at most */
    int64_t since = upto - t->hi;
    return since < part ? since : part;
}

/* What the connection keeps, with its tokenizer, made when it is not. */
static mn_status text_get(struct sqlite_store *s, struct mn_sqlite_set_text **out)
{
    mn_status rc = MN_OK;
    if (!s->kwset) {
        if (!(s->kwset = calloc(1, sizeof *s->kwset)))
            return mn__nomem();
        if ((rc = tokenizer_open(s, s->kwset)))
            mn__sqlite_set_free(s);
    }
    *out = s->kwset;
    return rc;
}

/* The session sid kept, made when it is not. */
static mn_status session_get(struct sqlite_store *s, int64_t sid, struct set_session **out)
{
    struct mn_sqlite_set_text *t = NULL;
    mn_status rc = text_get(s, &t);
    if (rc)
        return rc;
    if ((*out = session_find(t, sid)))
        return MN_OK;
    struct set_session **k = realloc(t->kept, (t->nkept + 1) * sizeof *k), *e = calloc(1, sizeof *e);
    if (k)
        t->kept = k;
    if (!k || !e) {
        free(e);
        return mn__nomem();
    }
    e->sid = sid, e->gen = -1;
    t->kept[t->nkept++] = *out = e;
    return MN_OK;
}

/* The rows of st (id, text), split into tokens and added to t; st finished. */
static mn_status split_rows(struct sqlite_store *s, struct set_session *t, sqlite3_stmt *st)
{
    mn_status rc = MN_OK;
    int r = SQLITE_DONE;
    while (!rc && (r = sqlite3_step(st)) == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(st, 1);
        int len = sqlite3_column_bytes(st, 1);
        struct set_row *a = mn__sqlite_grow(t->row, &t->cap_row, t->nrow, sizeof *a, 1024);
        if (!a || !text) {
            rc = mn__nomem();
            break;
        }
        t->row = a;
        size_t at = t->nwords;
        int tr = s->kwset->api.xTokenize(s->kwset->tok, t, FTS5_TOKENIZE_DOCUMENT, text, len, on_token);
        if (tr != SQLITE_OK) {
            rc = tr == SQLITE_NOMEM ? mn__nomem() : mn__sqlite_fail(s, tr, "keyword search in a session");
            break;
        }
        a[t->nrow++] = (struct set_row){sqlite3_column_int64(st, 0), at, (uint32_t)(t->nwords - at)};
        __atomic_fetch_add(&mn_sqlite_fts_set_split, 1, __ATOMIC_RELAXED);
    }
    return mn__sqlite_finish(s, st, r, rc, "keyword search in a session");
}

mn_status mn__sqlite_set_cover(struct sqlite_store *s, int64_t sid, int64_t upto, int64_t gen)
{
    struct set_session *t = NULL;
    mn_status rc = session_get(s, sid, &t);
    if (rc)
        return rc;
    s->kwset->cur = t;
    t->used = ++s->kwset->clock;
    if (t->gen != gen || t->hi > upto)
        session_clear(t, gen);
    if (t->hi >= upto)
        return MN_OK;
    /* the messages since, among every session's: fewer rows than the session's when it is held */
    const char *sql = upto - t->hi <= (int64_t)t->nrow ? SQL_SET_NEWER : SQL_SET_TEXTS;
    sqlite3_stmt *st = NULL;
    if ((rc = mn__sqlite_query(s, sql, &st, ARGS(ARG_INT(sid), ARG_INT(t->hi), ARG_INT(upto)))) ||
        (rc = split_rows(s, t, st))) {
        session_clear(t, -1); /* a row may be half read: start again next time */
        return rc;
    }
    t->hi = upto;
    sessions_trim(s->kwset, t);
    return MN_OK;
}

/* The words of one phrase, in order: the numbers of the query's tokens; *n 0 when one of them is
 * not in the session (the phrase matches no row). */
struct phrase_words {
    const struct set_session *t;
    uint32_t w[256]; /* a piece is at most 256 bytes: 128 tokens */
    int n, missing, over;
};

static int on_query_token(void *user, int flags, const char *p, int n, int start, int end)
{
    (void)start, (void)end;
    struct phrase_words *q = user;
    if (flags & FTS5_TOKEN_COLOCATED)
        return SQLITE_OK;
    size_t len = n < FTS5_MAX_TOKEN_SIZE ? (size_t)n : FTS5_MAX_TOKEN_SIZE;
    uint32_t v = q->t->nslot ? q->t->slot[word_slot(q->t, p, len, mn__sqlite_hash(p, len))] : 0;
    if (!v)
        q->missing = 1;
    else if (q->n < (int)(sizeof q->w / sizeof q->w[0]))
        q->w[q->n++] = v - 1;
    else
        q->over = 1;
    return SQLITE_OK;
}

static int id_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The phrases i of p in `which` as the numbers of t's words ("piece": the quotes of
 * mn__fts_query taken off), and k->first marked with them; query_close undoes it. */
static mn_status query_open(struct sqlite_store *s, struct set_session *t, const struct phrases *p, uint64_t which,
                            struct phrase_words **out)
{
    struct mn_sqlite_set_text *k = s->kwset;
    struct phrase_words *q = calloc((size_t)p->m, sizeof *q);
    if (q && k->nfirst < t->ndict) {
        uint64_t *f = realloc(k->first, t->ndict * sizeof *f);
        if (f) {
            memset(f + k->nfirst, 0, (t->ndict - k->nfirst) * sizeof *f);
            k->first = f, k->nfirst = t->ndict;
        }
    }
    if (!q || k->nfirst < t->ndict) {
        free(q);
        return mn__nomem();
    }
    *out = q;
    mn_status rc = MN_OK;
    for (int i = 0; i < p->m && !rc; i++) {
        if (!(which >> i & 1))
            continue;
        q[i].t = t;
        int r = k->api.xTokenize(k->tok, &q[i], FTS5_TOKENIZE_QUERY, p->at[i] + 1, (int)p->len[i] - 2,
                                 on_query_token);
        if (r != SQLITE_OK)
            rc = mn__sqlite_fail(s, r, "keyword search in a session");
        else if (q[i].over)
            rc = mn__err(MN_INTERNAL, "keyword search in a session: a phrase of over %zu tokens",
                         sizeof q[i].w / sizeof q[i].w[0]);
        if (q[i].missing)
            q[i].n = 0;
        if (q[i].n)
            k->first[q[i].w[0]] |= (uint64_t)1 << i;
    }
    return rc;
}

static void query_close(struct mn_sqlite_set_text *k, struct phrase_words *q, int m)
{
    for (int i = 0; q && i < m; i++)
        if (q[i].n)
            k->first[q[i].w[0]] = 0;
    free(q);
}

/* The phrases row x has (a bit each), their counts added to tf: where a word begins a phrase,
 * the rest of the phrase is compared. */
static uint64_t row_match(const struct mn_sqlite_set_text *k, const struct set_session *t, const struct set_row *x,
                          const struct phrase_words *q, int64_t *tf)
{
    const uint32_t *w = t->words + x->at;
    uint64_t seen = 0;
    for (uint32_t at = 0; at < x->ntok; at++) {
        uint64_t f = k->first[w[at]];
        while (f) {
            int i = __builtin_ctzll(f);
            f &= f - 1;
            if ((uint32_t)q[i].n <= x->ntok - at && memcmp(w + at, q[i].w, (size_t)q[i].n * sizeof *w) == 0) {
                tf[i]++;
                seen |= (uint64_t)1 << i;
            }
        }
    }
    return seen;
}

mn_status mn__sqlite_set_rows(struct sqlite_store *s, const struct phrases *p, const struct mn_sqlite_idset *set,
                              mn_status (*row)(void *user, int64_t id, int64_t tf, int phrase, int ntok), void *user)
{
    struct mn_sqlite_set_text *k = s->kwset;
    struct set_session *t = k ? k->cur : NULL;
    if (!t || !t->nrow || p->m < 1)
        return MN_OK;
    struct phrase_words *q = NULL;
    mn_status rc = query_open(s, t, p, ~(uint64_t)0, &q);
    /* every row of the set, once */
    int64_t tf[BM25_MAX_PHRASES] = {0};
    for (size_t j = 0; j < t->nrow && !rc; j++) {
        const struct set_row *x = &t->row[j];
        /* (the rows are in the session's order, which need not be the ids') */
        if (set && !bsearch(&x->id, set->id, set->n, sizeof *set->id, id_cmp))
            continue;
        uint64_t seen = row_match(k, t, x, q, tf);
        while (seen && !rc) {
            int i = __builtin_ctzll(seen);
            seen &= seen - 1;
            rc = row(user, x->id, tf[i], i, (int)x->ntok);
            tf[i] = 0;
        }
    }
    query_close(k, q, p->m);
    return rc;
}

/* ---- the messages indexed last ------------------------------------------------------------ */

/* The window of the messages indexed last holds this many at most; past that, or when more than
 * tuning.recent_step came in since the last search (512 by default: splitting them, ~5 µs each,
 * would cost more than the statements it saves, ~45 µs a phrase and 64 phrases at most), it
 * starts again, empty, at the watermark, and the counts are brought forward by a statement each
 * until the next search. It never splits a message twice: it starts empty and takes in only what
 * the index took in since the last search. */
#define RECENT_ROWS 8192

mn_status mn__sqlite_recent_counts(struct sqlite_store *s, const struct phrases *p, int64_t upto, int64_t gen,
                                   int64_t *after, int64_t *more)
{
    struct mn_sqlite_set_text *k = NULL;
    mn_status rc = text_get(s, &k);
    if (rc)
        return rc;
    struct set_session *r = k->recent;
    if (!r && !(r = k->recent = calloc(1, sizeof *r)))
        return mn__nomem();
    if (r->gen != gen || r->hi > upto || r->nrow > RECENT_ROWS || upto - r->hi > mn_sqlite_fts_tuning.recent_step) {
        session_clear(r, gen);
        r->lo = r->hi = upto; /* (it covers nothing before upto) */
        return MN_OK;
    }
    if (r->hi < upto) {
        sqlite3_stmt *st = NULL;
        if ((rc = mn__sqlite_query(s, SQL_RECENT_TEXTS, &st, ARGS(ARG_INT(r->hi), ARG_INT(upto)))) ||
            (rc = split_rows(s, r, st))) {
            session_clear(r, -1);
            return rc;
        }
        r->hi = upto;
    }
    uint64_t which = 0;
    int64_t from = upto;
    for (int i = 0; i < p->m; i++)
        if (after[i] >= r->lo && after[i] < upto) {
            which |= (uint64_t)1 << i;
            from = after[i] < from ? after[i] : from;
        }
    if (!which)
        return MN_OK;
    struct phrase_words *q = NULL;
    rc = query_open(s, r, p, which, &q);
    size_t lo = 0, hi = r->nrow; /* the first row past `from` (the rows are in id order) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->row[mid].id <= from)
            lo = mid + 1;
        else
            hi = mid;
    }
    int64_t tf[BM25_MAX_PHRASES] = {0};
    for (size_t j = lo; j < r->nrow && !rc; j++) {
        uint64_t seen = row_match(k, r, &r->row[j], q, tf);
        while (seen) {
            int i = __builtin_ctzll(seen);
            seen &= seen - 1;
            more[i] += r->row[j].id > after[i];
        }
    }
    query_close(k, q, p->m);
    for (int i = 0; i < p->m && !rc; i++)
        if (which >> i & 1) {
            after[i] = -1;
            __atomic_fetch_add(&mn_sqlite_fts_recent_counted, 1, __ATOMIC_RELAXED);
        }
    return rc;
}
