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

void mn_buf_init(struct mn_buf *b, size_t max)
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

mn_status mn_buf_add(struct mn_buf *b, const void *data, size_t len)
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

mn_status mn_buf_adds(struct mn_buf *b, const char *s) { return mn_buf_add(b, s, strlen(s)); }

mn_status mn_buf_addc(struct mn_buf *b, char c) { return mn_buf_add(b, &c, 1); }

mn_status mn_buf_addf(struct mn_buf *b, const char *fmt, ...)
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

mn_status mn_buf_add_json_str(struct mn_buf *b, const char *s)
{
    if (!s)
        return mn_buf_add(b, "null", 4);
    mn_status rc = mn_buf_addc(b, '"');
    const char *run = s;
    for (const char *p = s; !rc && *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue; /* clean bytes are copied in runs */
        rc = mn_buf_add(b, run, (size_t)(p - run));
        run = p + 1;
        if (rc)
            break;
        switch (c) {
        case '"':
            rc = mn_buf_add(b, "\\\"", 2);
            break;
        case '\\':
            rc = mn_buf_add(b, "\\\\", 2);
            break;
        case '\n':
            rc = mn_buf_add(b, "\\n", 2);
            break;
        case '\r':
            rc = mn_buf_add(b, "\\r", 2);
            break;
        case '\t':
            rc = mn_buf_add(b, "\\t", 2);
            break;
        case '\b':
            rc = mn_buf_add(b, "\\b", 2);
            break;
        case '\f':
            rc = mn_buf_add(b, "\\f", 2);
            break;
        default:
            rc = mn_buf_addf(b, "\\u%04X", c); /* as jansson writes it */
        }
    }
    if (!rc)
        rc = mn_buf_add(b, run, strlen(run));
    return rc ? rc : mn_buf_addc(b, '"');
}

void mn_buf_reset(struct mn_buf *b)
{
    b->len = 0;
    b->data[0] = '\0';
}

char *mn_buf_detach(struct mn_buf *b, size_t *len)
{
    char *p = b->cap ? b->data : strdup("");
    if (len)
        *len = b->len;
    mn_buf_init(b, b->max);
    return p;
}

void mn_buf_release(struct mn_buf *b)
{
    if (b->cap)
        free(b->data);
    mn_buf_init(b, b->max);
}
