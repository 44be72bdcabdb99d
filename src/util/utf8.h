/*
 * utf8.h — strict UTF-8 validation (no overlongs, no surrogates, nothing past U+10FFFF) and
 * cutting text on a character boundary.
 */
#ifndef MN_UTIL_UTF8_H
#define MN_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* True when s[0..len) is valid UTF-8. *bad_at (optional) gets the offset of the first bad byte. */
bool mn__utf8_valid(const char *s, size_t len, size_t *bad_at);
/* The byte length of the first `max_chars` characters of valid UTF-8 s[0..len). */
size_t mn__utf8_prefix(const char *s, size_t len, size_t max_chars);
/* Number of characters in valid UTF-8 s[0..len). */
size_t mn__utf8_chars(const char *s, size_t len);

#endif
