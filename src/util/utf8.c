/*
 * utf8.c — strict UTF-8 validation per RFC 3629 (Unicode Table 3-7 of well-formed sequences).
 */
#include "util/utf8.h"

#include "util/banned.h"

bool mn__utf8_valid(const char *str, size_t len, size_t *bad_at)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            n = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            if (c == 0xE0)
                lo = 0xA0; /* no overlongs */
            if (c == 0xED)
                hi = 0x9F; /* no surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F; /* nothing past U+10FFFF */
        } else
            goto bad;
        if (len - i <= n)
            goto bad;
        if (s[i + 1] < lo || s[i + 1] > hi)
            goto bad;
        for (size_t k = 2; k <= n; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                goto bad;
        i += n + 1;
    }
    return true;
bad:
    if (bad_at)
        *bad_at = i;
    return false;
}

size_t mn__utf8_prefix(const char *str, size_t len, size_t max_chars)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t chars = 0;
    for (size_t i = 0; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            if (chars == max_chars)
                return i;
            chars++;
        }
    }
    return len;
}

size_t mn__utf8_chars(const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t chars = 0;
    for (size_t i = 0; i < len; i++)
        chars += (s[i] & 0xC0) != 0x80;
    return chars;
}
