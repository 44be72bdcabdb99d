/*
 * buf.h — the one string builder: never NULL data, always NUL-terminated, a hard size cap
 * (MN_TOOBIG past it) and detach to hand the bytes to a caller.
 */
#ifndef MN_UTIL_BUF_H
#define MN_UTIL_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "mnemo.h"

struct mn_buf {
    char *data; /* points at a static "" until the first append */
    size_t len;
    size_t cap;
    size_t max; /* 0 = the default cap (1 GiB) */
};

#define MN_BUF_INIT {mn__buf_empty, 0, 0, 0}
extern char mn__buf_empty[1];

void mn__buf_init(struct mn_buf *b, size_t max);
mn_status mn__buf_add(struct mn_buf *b, const void *data, size_t len);
mn_status mn__buf_adds(struct mn_buf *b, const char *s);
mn_status mn__buf_addc(struct mn_buf *b, char c);
mn_status mn__buf_addf(struct mn_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends v in decimal (what "%lld" prints, without printf's cost on hot paths). */
mn_status mn__buf_add_i64(struct mn_buf *b, int64_t v);
/* Appends s as a JSON string literal (quotes, escapes; the same bytes jansson's compact dump
 * writes for valid UTF-8), or null when s is NULL. s must be valid UTF-8. */
mn_status mn__buf_add_json_str(struct mn_buf *b, const char *s);
void mn__buf_reset(struct mn_buf *b);
/* Hands the bytes (malloc'd, NUL-terminated) to the caller and leaves b empty; NULL on OOM. */
char *mn__buf_detach(struct mn_buf *b, size_t *len);
void mn__buf_release(struct mn_buf *b);

#endif
