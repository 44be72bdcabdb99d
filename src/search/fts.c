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

mn_status mn_fts_query(const char *text, struct mn_buf *out, size_t *terms)
{
    *terms = 0;
    mn_buf_reset(out);
    const unsigned char *p = (const unsigned char *)(text ? text : "");
    mn_status rc = MN_OK;
    while (*p && !rc && *terms < MN_FTS_MAX_TERMS) {
        while (*p && separator(*p))
            p++;
        if (!*p)
            break;
        const unsigned char *start = p;
        while (*p && !separator(*p))
            p++;
        size_t len = (size_t)(p - start);
        if (len > 256) { /* a longer token is cut, on a UTF-8 boundary */
            len = 256;
            while (len > 0 && (start[len] & 0xC0) == 0x80)
                len--;
        }
        if (*terms && (rc = mn_buf_adds(out, " OR ")))
            break;
        if ((rc = mn_buf_addc(out, '"')))
            break;
        /* no '"' can occur inside a token (it is a separator); the token is copied as is */
        if ((rc = mn_buf_add(out, start, len)) || (rc = mn_buf_addc(out, '"')))
            break;
        ++*terms;
    }
    return rc;
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

mn_status mn_rrf(const struct mn_ranked *a, size_t na, const struct mn_ranked *b, size_t nb, double k,
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
