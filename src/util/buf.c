/*
 * buf.c — growable, capped, always-terminated byte strings (see buf.h).
 */
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/banned.h"

char mn__buf_empty[1];

#define BUF_DEFAULT_MAX ((size_t)1 << 30)

void mn__buf_init(struct mn_buf *b, size_t max)
{
    b->data = mn__buf_empty;
    b->len = b->cap = 0;
    b->max = max;
}

static mn_status grow(struct mn_buf *b, size_t extra)
{
    size_t max = b->max ? b->max : BUF_DEFAULT_MAX;
    if (extra > max || b->len > max - extra)
        return mn__err(MN_TOOBIG, "value exceeds %zu bytes", max);
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return MN_OK;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need)
        cap = cap < SIZE_MAX / 2 ? cap * 2 : need;
    char *p = realloc(b->cap ? b->data : NULL, cap);
    if (!p)
        return mn__nomem();
    if (!b->cap)
        p[0] = '\0';
    b->data = p;
    b->cap = cap;
    return MN_OK;
}

mn_status mn__buf_add(struct mn_buf *b, const void *data, size_t len)
{
    mn_status rc = grow(b, len);
    if (rc)
        return rc;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return MN_OK;
}

mn_status mn__buf_adds(struct mn_buf *b, const char *s) { return mn__buf_add(b, s, strlen(s)); }

mn_status mn__buf_addc(struct mn_buf *b, char c) { return mn__buf_add(b, &c, 1); }

mn_status mn__buf_addf(struct mn_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return mn__err(MN_INTERNAL, "format error");
    mn_status rc = grow(b, (size_t)n);
    if (rc)
        return rc;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return MN_OK;
}

mn_status mn__buf_add_i64(struct mn_buf *b, int64_t v)
{
    char tmp[24], *p = tmp + sizeof tmp;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return mn__buf_add(b, p, (size_t)(tmp + sizeof tmp - p));
}

/* How many bytes from p on need no escaping in a JSON string (none below 0x20, no '"', no
 * backslash). Eight at a time: a word is clean unless one of its bytes is less than 0x20 or
 * equals one of the two (the bit tricks may report a clean word as dirty, never the reverse;
 * the byte loop then finds the exact place). */
static size_t clean_run(const unsigned char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w, q, bs;
        memcpy(&w, p + i, 8);
        q = w ^ (ones * '"');
        bs = w ^ (ones * '\\');
        if ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) & highs)
            break;
    }
    while (i < n && p[i] >= 0x20 && p[i] != '"' && p[i] != '\\')
        i++;
    return i;
}

mn_status mn__buf_add_json_str(struct mn_buf *b, const char *s)
{
    if (!s)
        return mn__buf_add(b, "null", 4);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    mn_status rc = grow(b, n + 2); /* the usual case: nothing to escape */
    if (!rc)
        rc = mn__buf_addc(b, '"');
    while (!rc && n) {
        size_t k = clean_run(p, n);
        rc = mn__buf_add(b, p, k);
        p += k;
        n -= k;
        if (rc || !n)
            break;
        unsigned char c = *p++;
        n--;
        switch (c) {
        case '"':
            rc = mn__buf_add(b, "\\\"", 2);
            break;
        case '\\':
            rc = mn__buf_add(b, "\\\\", 2);
            break;
        case '\n':
            rc = mn__buf_add(b, "\\n", 2);
            break;
        case '\r':
            rc = mn__buf_add(b, "\\r", 2);
            break;
        case '\t':
            rc = mn__buf_add(b, "\\t", 2);
            break;
        case '\b':
            rc = mn__buf_add(b, "\\b", 2);
            break;
        case '\f':
            rc = mn__buf_add(b, "\\f", 2);
            break;
        default:
            rc = mn__buf_addf(b, "\\u%04X", c); /* as jansson writes it */
        }
    }
    return rc ? rc : mn__buf_addc(b, '"');
}

void mn__buf_reset(struct mn_buf *b)
{
    b->len = 0;
    if (b->cap) /* the shared empty buffer holds its NUL already: never written (threads share it) */
        b->data[0] = '\0';
}

char *mn__buf_detach(struct mn_buf *b, size_t *len)
{
    char *p = b->cap ? b->data : strdup("");
    if (len)
        *len = b->len;
    mn__buf_init(b, b->max);
    return p;
}

void mn__buf_release(struct mn_buf *b)
{
    if (b->cap)
        free(b->data);
    mn__buf_init(b, b->max);
}
