/*
 * fts.c — search helpers that need no database: escaping user text into an FTS5 MATCH
 * expression that can never be a syntax error, and reciprocal rank fusion.
 */
#include <stdlib.h>
#include <string.h>

#include "search/search.h"
#include "util/err.h"
#include "util/banned.h"

/* A token is a run of bytes that are not ASCII space or ASCII punctuation; everything else
 * (quotes, parentheses, operators, *, ^, :, +, -) separates tokens. Bare words AND, OR, NOT and
 * NEAR are quoted like any other, so they are searched for, never interpreted. */
static int separator(unsigned char c)
{
    return c < 0x80 && !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_');
}

/* English function words (lower case, sorted): they carry no topic, and in an OR query over short
 * texts they decide the ranking ("the" in one memory out of six made it first for every
 * question: bench/README.md, "Long-term memory"). */
static const char *const COMMON[] = {
    "a", "about", "am", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do",
    "does", "for", "from", "had", "has", "have", "he", "her", "his", "how", "i", "if", "in", "into", "is", "it",
    "its", "me", "my", "now", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what", "when", "where",
    "which", "who", "whom", "why", "will", "with", "would", "you", "your"};

static int cmp_word(const void *key, const void *elem) { return strcmp(key, *(const char *const *)elem); }

static int common(const unsigned char *w, size_t len)
{
    char low[16];
    if (len >= sizeof low)
        return 0;
    for (size_t i = 0; i < len; i++)
        low[i] = (char)(w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]);
    low[len] = '\0';
    return bsearch(low, COMMON, sizeof COMMON / sizeof COMMON[0], sizeof COMMON[0], cmp_word) != NULL;
}

/* Calls fn on each token of text (at most MN_FTS_MAX_TERMS), cut to 256 bytes on a UTF-8
 * boundary; stops at fn's non-zero return. */
static int tokens(const char *text, int (*fn)(void *user, const unsigned char *w, size_t len), void *user)
{
    const unsigned char *p = (const unsigned char *)(text ? text : "");
    for (int n = 0; *p && n < MN_FTS_MAX_TERMS; n++) {
        while (*p && separator(*p))
            p++;
        if (!*p)
            break;
        const unsigned char *start = p;
        while (*p && !separator(*p))
            p++;
        size_t len = (size_t)(p - start);
        if (len > 256) {
            len = 256;
            while (len > 0 && (start[len] & 0xC0) == 0x80)
                len--;
        }
        int rc = fn(user, start, len);
        if (rc)
            return rc;
    }
    return 0;
}

struct build {
    struct mn_buf *out;
    size_t *terms;
    int skip_common;
};

static int count_content(void *user, const unsigned char *w, size_t len)
{
    *(size_t *)user += !common(w, len);
    return 0;
}

static int add_term(void *user, const unsigned char *w, size_t len)
{
    struct build *b = user;
    if (b->skip_common && common(w, len))
        return 0;
    mn_status rc = MN_OK;
    if (*b->terms)
        rc = mn__buf_adds(b->out, " OR ");
    /* no '"' can occur inside a token (it is a separator); the token is copied as is */
    if (!rc && !(rc = mn__buf_addc(b->out, '"')) && !(rc = mn__buf_add(b->out, w, len)))
        rc = mn__buf_addc(b->out, '"');
    ++*b->terms;
    return (int)rc;
}

static mn_status query(const char *text, struct mn_buf *out, size_t *terms, int skip_common)
{
    *terms = 0;
    mn__buf_reset(out);
    struct build b = {out, terms, skip_common};
    return (mn_status)tokens(text, add_term, &b);
}

mn_status mn__fts_query(const char *text, struct mn_buf *out, size_t *terms)
{
    return query(text, out, terms, 0);
}

mn_status mn__fts_query_content(const char *text, struct mn_buf *out, size_t *terms)
{
    size_t content = 0;
    tokens(text, count_content, &content);
    return query(text, out, terms, content > 0);
}

static int cmp_ranked(const void *a, const void *b)
{
    const struct mn_ranked *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_id(const void *a, const void *b)
{
    const struct mn_ranked *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

mn_status mn__rrf(const struct mn_ranked *a, size_t na, const struct mn_ranked *b, size_t nb, double k,
                 struct mn_ranked **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    struct mn_ranked *all = malloc((na + nb + 1) * sizeof *all);
    if (!all)
        return mn__nomem();
    for (size_t i = 0; i < na; i++)
        all[i] = (struct mn_ranked){a[i].id, 1.0 / (k + (double)(i + 1))};
    for (size_t i = 0; i < nb; i++)
        all[na + i] = (struct mn_ranked){b[i].id, 1.0 / (k + (double)(i + 1))};
    size_t m = na + nb, w = 0;
    qsort(all, m, sizeof *all, cmp_id);
    for (size_t i = 0; i < m; i++) {
        if (w && all[w - 1].id == all[i].id)
            all[w - 1].score += all[i].score;
        else
            all[w++] = all[i];
    }
    qsort(all, w, sizeof *all, cmp_ranked);
    *out = all;
    *n = w;
    return MN_OK;
}
