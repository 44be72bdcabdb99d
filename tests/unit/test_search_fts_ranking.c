/*
 * test_search_fts_ranking.c — keyword search returns exactly what the single joined query of
 * before (kept here only, as the reference) returns: the same ids in the same order with the same
 * bm25, for random corpora (a small vocabulary, so scores tie), random queries, random filters
 * (session, namespace, role, since, until, metadata, and combinations) and limits 1..50. The
 * plan thresholds (mn_sqlite_fts_tuning) are drawn too, so the id-list, rounds and joined plans,
 * and the bounded top-k (mnemo_bm25 with kept counts, rarer phrases first, all-phrases first,
 * common phrases from their best rows with depths down to one row, a set's rows of its rare
 * phrases scored one by one or not at all, the phrases held in memory from none to all, a
 * session's search counted from the session's own text), all
 * answer the same questions; a second test keeps comparing while appends, deletes and edits
 * through two handles change the store between searches (kept counts, best rows and the rows
 * held in memory must follow).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mnemo.h"
#include "test_sql.h"
#include "search/search.h"
#include "store/sqlite/sqlite_int.h"
#include "util/buf.h"

static uint64_t rs;
static unsigned rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs >> 11);
}

static const char *const vocab[] = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                                    "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi",
                                    "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega",
                                    "running", "runs", "ran", "café", "naïve", "x",
                                    /* pieces of several tokens, overlapping ones too ("bar bar") */
                                    "foo_bar", "bar_bar", "état—civil"};
#define NVOCAB (sizeof vocab / sizeof *vocab)

/* Small ids are common words (skewed), so many messages match and scores tie. */
static const char *word(void)
{
    unsigned z = rnd() % (unsigned)NVOCAB;
    return vocab[z * z / NVOCAB];
}

static const char *const namespaces[] = {"default", "ns-a", "ns-b"};

#define NSESS 9

struct corpus {
    char dir[512], path[600];
    char sessions[NSESS][40];
    int64_t tmin, tmax;
};

/* The reference: the joined query keyword search ran before it was planned. */
static void reference(sqlite3 *db, const char *match, const mn_search_filter *f, size_t limit, int64_t *ids,
                      double *scores, size_t *n)
{
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SELECT messages_fts.rowid, bm25(messages_fts) FROM messages_fts"
             " JOIN messages m ON m.id = messages_fts.rowid"
             " JOIN sessions s ON s.sid = m.session_sid WHERE messages_fts MATCH ?1%s%s%s%s%s%s"
             " ORDER BY bm25(messages_fts), messages_fts.rowid LIMIT ?2",
             f->session_id ? " AND s.id = ?10" : "", f->ns ? " AND s.namespace = ?11" : "",
             f->role >= 0 ? " AND m.role = ?12" : "", f->since ? " AND m.created_at >= ?13" : "",
             f->until ? " AND m.created_at < ?14" : "",
             f->metadata ? " AND NOT EXISTS (SELECT 1 FROM json_each(?15) j WHERE"
                           " coalesce(json_type(m.metadata, '$.\"' || j.key || '\"'), 'missing') NOT IN (j.type,"
                           " CASE WHEN j.type IN ('integer', 'real') THEN 'integer' ELSE j.type END,"
                           " CASE WHEN j.type IN ('integer', 'real') THEN 'real' ELSE j.type END)"
                           " OR json_extract(m.metadata, '$.\"' || j.key || '\"') IS NOT j.value)"
                         : "");
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)limit);
    if (f->session_id)
        sqlite3_bind_text(st, 10, f->session_id, -1, SQLITE_STATIC);
    if (f->ns)
        sqlite3_bind_text(st, 11, f->ns, -1, SQLITE_STATIC);
    if (f->role >= 0)
        sqlite3_bind_text(st, 12, mn_role_name((mn_role)f->role), -1, SQLITE_STATIC);
    if (f->since)
        sqlite3_bind_int64(st, 13, f->since);
    if (f->until)
        sqlite3_bind_int64(st, 14, f->until);
    if (f->metadata)
        sqlite3_bind_text(st, 15, f->metadata, -1, SQLITE_STATIC);
    *n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        ids[*n] = sqlite3_column_int64(st, 0);
        scores[*n] = -sqlite3_column_double(st, 1);
        ++*n;
    }
    sqlite3_finalize(st);
}

/* A read-only connection to the database with its keyword index's file (schema.h, version 11)
 * attached: the reference queries name messages_fts, messages and sessions as the store does. */
static sqlite3 *open_ref(const char *path)
{
    return test_sql_open_kw(path, SQLITE_OPEN_READONLY);
}

static void make_corpus(mn_db *db, struct corpus *c)
{
    c->tmin = INT64_MAX;
    c->tmax = 0;
    for (int s = 0; s < NSESS; s++) {
        mn_session_opts o = MN_SESSION_OPTS_INIT;
        o.ns = namespaces[s % 3];
        mn_session *ss = NULL;
        assert_int_equal(mn_session_create(db, &o, &ss), MN_OK);
        snprintf(c->sessions[s], sizeof c->sessions[s], "%s", ss->id);
        mn_session_free(ss);
    }
    int n = 150 + (int)(rnd() % 350);
    for (int i = 0; i < n; i++) {
        char text[4096] = "";
        int words = 1 + (int)(rnd() % 30);
        for (int w = 0; w < words; w++) {
            strcat(text, w ? " " : "");
            strcat(text, word());
        }
        if (rnd() % 40 == 0) { /* one word 255 times or more: counts past a byte */
            size_t len = strlen(text);
            for (int w = 255 + (int)(rnd() % 40); w > 0; w--, len += 7)
                memcpy(text + len, " lambda", 7);
            text[len] = '\0';
        }
        static const char *const meta[] = {NULL, "{\"k\":1}", "{\"k\":2}", "{\"k\":1,\"t\":\"x\"}", "{\"t\":\"y\"}"};
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = rnd() % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        m.content = text;
        m.metadata = meta[rnd() % 5];
        mn_message *out = NULL;
        const char *sid = c->sessions[rnd() % NSESS];
        assert_int_equal(mn_append(db, sid, &m, 0, &out), MN_OK);
        if (out->created_at < c->tmin)
            c->tmin = out->created_at;
        if (out->created_at > c->tmax)
            c->tmax = out->created_at;
        /* some deletes leave delete markers in the index */
        if (rnd() % 17 == 0)
            assert_int_equal(mn_message_delete(db, sid, out->id), MN_OK);
        mn_message_free(out);
        if (i == n / 2) { /* half of it indexed, the rest pending: a second batch of segments */
            mn_search_hits *h = NULL;
            assert_int_equal(mn_search(db, "alpha", MN_SEARCH_KEYWORD, 1, NULL, 0, &h), MN_OK);
            mn_search_hits_free(h);
        }
    }
}

static void random_filter(const struct corpus *c, mn_search_filter *f)
{
    mn_search_filter init = MN_SEARCH_FILTER_INIT;
    *f = init;
    unsigned pick = rnd();
    if (pick % 4 == 0)
        f->session_id = c->sessions[rnd() % NSESS];
    if (pick / 4 % 3 == 0)
        f->ns = namespaces[rnd() % 3];
    if (pick / 12 % 3 == 0)
        f->role = rnd() % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
    int64_t span = c->tmax - c->tmin + 2;
    if (pick / 36 % 4 == 0)
        f->since = c->tmin + (int64_t)(rnd() % (unsigned)span);
    if (pick / 144 % 4 == 0)
        f->until = c->tmin + (int64_t)(rnd() % (unsigned)span);
    if (f->since && f->until && f->until <= f->since) /* the API refuses an empty range */
        f->until = f->since + 1 + (int64_t)(rnd() % (unsigned)span);
    static const char *const meta[] = {"{\"k\":1}", "{\"t\":\"x\"}", "{\"k\":2.0}", "{\"k\":1,\"t\":\"x\"}", "{\"z\":null}"};
    if (pick / 576 % 4 == 0)
        f->metadata = meta[rnd() % 5];
}

static void ranking_equals_reference(void **state)
{
    (void)state;
    const char *tmp = getenv("MNEMO_TEST_TMP");
    char base[400];
    snprintf(base, sizeof base, "%s", tmp && *tmp ? tmp : "/tmp");
    mkdir(base, 0700);
    struct mn_sqlite_fts_tuning saved = mn_sqlite_fts_tuning;
    static const size_t set_max[] = {0, 5, 60, 20000}, round_max[] = {1, 8, 100, 65536};
    static const int64_t df_keep[] = {1, 20, 2000}, group_div[] = {1, 4, 1000};
    static const int64_t seed_max[] = {-1, 0, 3, 30, INT64_MAX}, top_depth[] = {1, 2, 8, 64};
    static const size_t set_scored[] = {0, 2, 256};
    static const double set_share[] = {0, 1.0 / 400, 1};
    static const int64_t dense_div[] = {0, 1, 3, INT64_MAX};
    static const size_t dense_bytes[] = {0, 40000, (size_t)128 << 20};
    long tops_before = mn_sqlite_fts_tops_ranked, dense_before = mn_sqlite_fts_dense_ranked,
         rows_before = mn_sqlite_fts_rows_ranked, scanned_before = mn_sqlite_fts_set_scanned;
    int compared = 0, nonempty = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        rs = 0x9E3779B97F4A7C15ULL * seed;
        struct corpus c;
        snprintf(c.dir, sizeof c.dir, "%s/fts-ranking-XXXXXX", base);
        assert_non_null(mkdtemp(c.dir));
        snprintf(c.path, sizeof c.path, "%s/t.db", c.dir);
        mn_config *cfg = NULL;
        mn_db *db = NULL;
        assert_int_equal(mn_config_new(&cfg), MN_OK);
        assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
        assert_int_equal(mn_open_path(c.path, cfg, &db), MN_OK);
        make_corpus(db, &c);
        mn_search_hits *h = NULL; /* indexes what is pending before the reference reads */
        assert_int_equal(mn_search(db, "alpha", MN_SEARCH_KEYWORD, 1, NULL, 0, &h), MN_OK);
        mn_search_hits_free(h);
        sqlite3 *ref = open_ref(c.path);
        for (int q = 0; q < 150; q++) {
            char query[256] = "";
            int words = 1 + (int)(rnd() % 3);
            for (int w = 0; w < words; w++) {
                strcat(query, w ? " " : "");
                strcat(query, rnd() % 12 ? word() : "absent");
            }
            mn_search_filter f;
            random_filter(&c, &f);
            size_t limit = 1 + rnd() % 50;
            mn_sqlite_fts_tuning.set_max = set_max[rnd() % 4];
            mn_sqlite_fts_tuning.round_max = round_max[rnd() % 4];
            mn_sqlite_fts_tuning.df_keep = df_keep[rnd() % 3];
            mn_sqlite_fts_tuning.group_div = group_div[rnd() % 3];
            mn_sqlite_fts_tuning.seed_max = seed_max[rnd() % 5];
            mn_sqlite_fts_tuning.top_depth = top_depth[rnd() % 4];
            mn_sqlite_fts_tuning.set_scored = set_scored[rnd() % 3];
            mn_sqlite_fts_tuning.set_share = set_share[rnd() % 3];
            mn_sqlite_fts_tuning.dense_div = dense_div[rnd() % 4];
            mn_sqlite_fts_tuning.dense_bytes = dense_bytes[rnd() % 3]; /* none, a few phrases, all */
            mn_sqlite_fts_tuning.dense_row_bytes = 0;
            mn_sqlite_fts_tuning.rows_div = (int64_t[]){0, 16, 1}[rnd() % 3]; /* rare queries too: never, some, all */
            /* a session's search counted from its text: never, mostly, when its phrases are common */
            mn_sqlite_fts_tuning.set_scan = (int64_t[]){0, 1, 1, 16}[rnd() % 4];
            struct mn_buf match = MN_BUF_INIT;
            size_t terms = 0;
            assert_int_equal(mn__fts_query(query, &match, &terms), MN_OK);
            int64_t ids[50];
            double scores[50];
            size_t n = 0;
            reference(ref, match.data, &f, limit, ids, scores, &n);
            mn__buf_release(&match);
            mn_status rc = mn_search(db, query, MN_SEARCH_KEYWORD, limit, &f, 0, &h);
            if (rc)
                fail_msg("seed %llu query %d \"%s\": %s", (unsigned long long)seed, q, query, mn_errmsg());
            if (h->count != n)
                fail_msg("seed %llu query %d \"%s\" limit %zu (set_max %zu round_max %zu): %zu hits, reference %zu",
                         (unsigned long long)seed, q, query, limit, mn_sqlite_fts_tuning.set_max,
                         mn_sqlite_fts_tuning.round_max, h->count, n);
            for (size_t i = 0; i < n; i++) {
                const mn_search_hit *hit = mn_search_hits_at(h, i);
                if (hit->message.id != ids[i] || hit->bm25 != scores[i])
                    fail_msg("seed %llu query %d \"%s\": hit %zu is #%lld (%.17g), reference #%lld (%.17g)",
                             (unsigned long long)seed, q, query, i, (long long)hit->message.id, hit->bm25,
                             (long long)ids[i], scores[i]);
            }
            mn_search_hits_free(h);
            compared++;
            nonempty += n > 0;
        }
        sqlite3_close(ref);
        mn_close(db);
        mn_config_free(cfg);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", c.dir);
        assert_int_equal(system(cmd), 0);
    }
    mn_sqlite_fts_tuning = saved;
    assert_int_equal(compared, 750);
    assert_true(nonempty > 300); /* the comparisons were not all of empty lists */
    assert_true(mn_sqlite_fts_tops_ranked - tops_before > 20); /* the common phrases' best rows answered some */
    assert_true(mn_sqlite_fts_dense_ranked - dense_before > 20); /* and the phrases held in memory some */
    assert_true(mn_sqlite_fts_rows_ranked - rows_before > 5); /* and, with none held, the rows of every phrase */
    assert_true(mn_sqlite_fts_set_scanned - scanned_before > 10); /* and a session's text some */
}

/* One check: mn_search on db against the reference on ref, read after the search (so both see
 * the index the search synced). */
static void check_one(mn_db *db, sqlite3 *ref, const struct corpus *c, const char *what, int q)
{
    char query[256] = "";
    int words = 1 + (int)(rnd() % 4);
    for (int w = 0; w < words; w++) {
        strcat(query, w ? " " : "");
        strcat(query, rnd() % 12 ? word() : "absent");
    }
    mn_search_filter f;
    random_filter(c, &f);
    size_t limit = 1 + rnd() % 50;
    mn_search_hits *h = NULL;
    mn_status rc = mn_search(db, query, MN_SEARCH_KEYWORD, limit, &f, 0, &h);
    if (rc)
        fail_msg("%s query %d \"%s\": %s", what, q, query, mn_errmsg());
    struct mn_buf match = MN_BUF_INIT;
    size_t terms = 0;
    assert_int_equal(mn__fts_query(query, &match, &terms), MN_OK);
    int64_t ids[50];
    double scores[50];
    size_t n = 0;
    reference(ref, match.data, &f, limit, ids, scores, &n);
    mn__buf_release(&match);
    if (h->count != n)
        fail_msg("%s query %d \"%s\" limit %zu: %zu hits, reference %zu", what, q, query, limit, h->count, n);
    for (size_t i = 0; i < n; i++) {
        const mn_search_hit *hit = mn_search_hits_at(h, i);
        if (hit->message.id != ids[i] || hit->bm25 != scores[i])
            fail_msg("%s query %d \"%s\": hit %zu is #%lld (%.17g), reference #%lld (%.17g)", what, q, query, i,
                     (long long)hit->message.id, hit->bm25, (long long)ids[i], scores[i]);
    }
    mn_search_hits_free(h);
}

/* The document counts a handle keeps (and the rarer-phrases-first ranking that uses them) stay
 * exact while the store changes under it: appends, deletes and edits through the same handle and
 * through a second one, between searches. */
static void ranking_equal_while_store_changes(void **state)
{
    (void)state;
    const char *tmp = getenv("MNEMO_TEST_TMP");
    char base[400];
    snprintf(base, sizeof base, "%s", tmp && *tmp ? tmp : "/tmp");
    mkdir(base, 0700);
    struct mn_sqlite_fts_tuning saved = mn_sqlite_fts_tuning;
    long tops_before = mn_sqlite_fts_tops_ranked, dense_before = mn_sqlite_fts_dense_ranked,
         scanned_before = mn_sqlite_fts_set_scanned, recent_before = mn_sqlite_fts_recent_counted;
    for (uint64_t seed = 11; seed <= 13; seed++) {
        rs = 0x9E3779B97F4A7C15ULL * seed;
        struct corpus c;
        snprintf(c.dir, sizeof c.dir, "%s/fts-changes-XXXXXX", base);
        assert_non_null(mkdtemp(c.dir));
        snprintf(c.path, sizeof c.path, "%s/t.db", c.dir);
        mn_config *cfg = NULL;
        mn_db *db = NULL, *other = NULL;
        assert_int_equal(mn_config_new(&cfg), MN_OK);
        assert_int_equal(mn_config_set(cfg, "tokenizer.name", "heuristic", NULL), MN_OK);
        assert_int_equal(mn_config_set(cfg, "search.fts_drain", seed == 12 ? "7" : "1000", NULL), MN_OK);
        assert_int_equal(mn_open_path(c.path, cfg, &db), MN_OK);
        assert_int_equal(mn_open_path(c.path, cfg, &other), MN_OK);
        make_corpus(db, &c);
        sqlite3 *ref = open_ref(c.path);
        mn_sqlite_fts_tuning.set_max = 20000;
        mn_sqlite_fts_tuning.round_max = 65536;
        mn_sqlite_fts_tuning.df_keep = seed == 13 ? 40 : 1; /* every count kept, or those of 40 rows or more */
        mn_sqlite_fts_tuning.set_share = seed % 2 ? 1 : 0; /* a set's rare rows scored one by one, or not */
        /* phrases in a third of the rows held in memory, none, or every phrase whose count is kept
         * (those under 40 rows not: the query is then ranked as before) */
        mn_sqlite_fts_tuning.dense_div = seed == 12 ? 0 : seed == 13 ? INT64_MAX : 3;
        int64_t last[64];
        int sess[64], nlast = 0;
        for (int q = 0; q < 240; q++) {
            mn_sqlite_fts_tuning.group_div = rnd() % 2 ? 1 : 4;
            mn_sqlite_fts_tuning.seed_max = rnd() % 3 ? (int64_t)(rnd() % 8) - 1 : INT64_MAX;
            mn_sqlite_fts_tuning.top_depth = rnd() % 2 ? 1 + (int64_t)(rnd() % 4) : 64;
            mn_sqlite_fts_tuning.set_scan = rnd() % 3 ? 1 : 0; /* a session's text kept while it changes */
            /* counts brought forward from the new texts, or (a window started again) not */
            mn_sqlite_fts_tuning.recent_step = rnd() % 4 ? 512 : 0;
            if (q % 6 == 5) { /* change the store through one of the handles */
                mn_db *w = rnd() % 2 ? db : other;
                int what = (int)(rnd() % 4);
                int si = (int)(rnd() % NSESS);
                if (what <= 1 || nlast == 0) {
                    char text[256] = "";
                    int words = 1 + (int)(rnd() % 20);
                    for (int i = 0; i < words; i++) {
                        strcat(text, i ? " " : "");
                        strcat(text, word());
                    }
                    mn_message_in m = MN_MESSAGE_IN_INIT;
                    m.role = MN_ROLE_USER;
                    m.content = text;
                    mn_message *out = NULL;
                    assert_int_equal(mn_append(w, c.sessions[si], &m, 0, &out), MN_OK);
                    if (nlast < 64) {
                        last[nlast] = out->id;
                        sess[nlast++] = si;
                    }
                    mn_message_free(out);
                } else {
                    int at = (int)(rnd() % (unsigned)nlast);
                    if (what == 2) {
                        assert_int_equal(mn_message_delete(w, c.sessions[sess[at]], last[at]), MN_OK);
                        last[at] = last[--nlast];
                        sess[at] = sess[nlast];
                    } else {
                        char text[128];
                        snprintf(text, sizeof text, "%s %s %s", word(), word(), word());
                        assert_int_equal(mn_message_edit(w, c.sessions[sess[at]], last[at], text, NULL, NULL), MN_OK);
                    }
                }
            }
            check_one(db, ref, &c, "changes", q);
        }
        sqlite3_close(ref);
        mn_close(other);
        mn_close(db);
        mn_config_free(cfg);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", c.dir);
        assert_int_equal(system(cmd), 0);
    }
    mn_sqlite_fts_tuning = saved;
    assert_true(mn_sqlite_fts_tops_ranked - tops_before > 10); /* best rows brought forward and dropped */
    assert_true(mn_sqlite_fts_dense_ranked - dense_before > 10); /* rows in memory brought forward and dropped */
    assert_true(mn_sqlite_fts_set_scanned - scanned_before > 20); /* a session's text brought forward and dropped */
    assert_true(mn_sqlite_fts_recent_counted - recent_before > 20); /* counts brought forward from new texts */
}

/* One search in session sid compared with the reference; it must have been counted from the
 * session's text (fts_set.c). */
static void session_search_equals(mn_db *db, sqlite3 *ref, const char *sid, const char *query, const char *what)
{
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.session_id = sid;
    long before = mn_sqlite_fts_set_scanned;
    mn_search_hits *h = NULL;
    assert_int_equal(mn_search(db, query, MN_SEARCH_KEYWORD, 50, &f, 0, &h), MN_OK);
    struct mn_buf match = MN_BUF_INIT;
    size_t terms = 0, n = 0;
    assert_int_equal(mn__fts_query(query, &match, &terms), MN_OK);
    int64_t ids[50];
    double scores[50];
    reference(ref, match.data, &f, 50, ids, scores, &n);
    mn__buf_release(&match);
    if (h->count != n)
        fail_msg("%s: %zu hits, reference %zu", what, h->count, n);
    for (size_t i = 0; i < n; i++) {
        const mn_search_hit *hit = mn_search_hits_at(h, i);
        if (hit->message.id != ids[i] || hit->bm25 != scores[i])
            fail_msg("%s: hit %zu is #%lld (%.17g), reference #%lld (%.17g)", what, i, (long long)hit->message.id,
                     hit->bm25, (long long)ids[i], scores[i]);
    }
    mn_search_hits_free(h);
    if (mn_sqlite_fts_set_scanned != before + 1)
        fail_msg("%s: not counted from the session's text", what);
}

/* The session's text kept between searches (fts_set.c) follows an edit, a delete and an append
 * in the session, a search of another session, and another handle's edit. */
static void session_text_follows_changes(void **state)
{
    (void)state;
    const char *tmp = getenv("MNEMO_TEST_TMP");
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/fts-set-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/t.db", dir);
    struct mn_sqlite_fts_tuning saved = mn_sqlite_fts_tuning;
    mn_sqlite_fts_tuning.set_scan = 1;
    mn_sqlite_fts_tuning.dense_div = 0;
    mn_db *db = NULL, *other = NULL;
    assert_int_equal(mn_open_path(path, NULL, &db), MN_OK);
    assert_int_equal(mn_open_path(path, NULL, &other), MN_OK);
    char sess[2][40];
    int64_t plain[2] = {0}, with[2] = {0};
    for (int s = 0; s < 2; s++) {
        mn_session *ss = NULL;
        assert_int_equal(mn_session_create(db, NULL, &ss), MN_OK);
        snprintf(sess[s], sizeof sess[s], "%s", ss->id);
        mn_session_free(ss);
        for (int i = 0; i < 12; i++) {
            mn_message_in m = MN_MESSAGE_IN_INIT;
            m.role = MN_ROLE_USER;
            m.content = i % 3 ? "alpha beta gamma delta" : "beta gamma";
            mn_message *out = NULL;
            assert_int_equal(mn_append(db, sess[s], &m, 0, &out), MN_OK);
            if (i % 3)
                with[s] = out->id;
            else
                plain[s] = out->id;
            mn_message_free(out);
        }
    }
    sqlite3 *ref = open_ref(path);
    session_search_equals(db, ref, sess[0], "alpha", "first search");
    assert_int_equal(mn_message_edit(db, sess[0], plain[0], "alpha alpha alpha", NULL, NULL), MN_OK);
    session_search_equals(db, ref, sess[0], "alpha", "after an edit");
    assert_int_equal(mn_message_delete(db, sess[0], with[0]), MN_OK);
    session_search_equals(db, ref, sess[0], "alpha", "after a delete");
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_ASSISTANT;
    m.content = "alpha";
    assert_int_equal(mn_append(db, sess[0], &m, 0, NULL), MN_OK);
    session_search_equals(db, ref, sess[0], "alpha", "after an append");
    session_search_equals(db, ref, sess[1], "alpha beta", "another session");
    long split = mn_sqlite_fts_set_split; /* both sessions kept: nothing split again */
    session_search_equals(db, ref, sess[0], "alpha", "the first session, kept");
    session_search_equals(db, ref, sess[1], "beta", "the other session, kept");
    assert_int_equal(mn_sqlite_fts_set_split, split);
    assert_int_equal(mn_message_edit(other, sess[1], with[1], "beta", NULL, NULL), MN_OK);
    session_search_equals(db, ref, sess[1], "alpha beta", "after another handle's edit");
    session_search_equals(db, ref, sess[0], "alpha", "the first session again");
    /* the tokenizer's work: stems, case, diacritics, pieces of several tokens, overlapping
     * instances of a phrase, a word the session lacks */
    m.content = "Bar_bar bar_bar FOO_bar runs Cafe etat, civil; état—civil";
    assert_int_equal(mn_append(db, sess[0], &m, 0, NULL), MN_OK);
    session_search_equals(db, ref, sess[0], "bar_bar foo_bar running café état—civil nowhere",
                          "the tokenizer's phrases");
    sqlite3_close(ref);
    mn_close(other);
    mn_close(db);
    mn_sqlite_fts_tuning = saved;
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ranking_equals_reference),
        cmocka_unit_test(ranking_equal_while_store_changes),
        cmocka_unit_test(session_text_follows_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
