/*
 * pretok.c — the pre-tokenisation of cl100k_base and o200k_base: their split regexes (pat_str)
 * written out by hand as the backtracking engine of tiktoken (Rust fancy-regex) runs them,
 * leftmost-first alternation and greedy quantifiers, over Unicode 16.0 classes. Invalid UTF-8 is
 * split as its replacement character would be. docs/tokenizer.md walks through each rule.
 */
#include "token/bpe_int.h"

#include <stdbool.h>

#include "util/banned.h"

/* Classes of the ASCII characters (the common case, no table walk). */
static const uint8_t ascii_cls[128] = {
    /* 0x00 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, MN_UC_WS, MN_UC_CRLF, MN_UC_WS, MN_UC_WS, MN_UC_CRLF, 0, 0,
    /* 0x10 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x20 */ MN_UC_WS, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* 0x30 */ MN_UC_N, MN_UC_N, MN_UC_N, MN_UC_N, MN_UC_N, MN_UC_N, MN_UC_N, MN_UC_N, MN_UC_N, MN_UC_N,
    0, 0, 0, 0, 0, 0,
    /* 0x40 */ 0, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU,
    MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU,
    /* 0x50 */ MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU, MN_UC_LU,
    MN_UC_LU, 0, 0, 0, 0, 0,
    /* 0x60 */ 0, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL,
    MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL,
    /* 0x70 */ MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL, MN_UC_LL,
    MN_UC_LL, 0, 0, 0, 0, 0,
};

/* Decodes one character the way Rust's from_utf8_lossy (and WHATWG's decoder) does: a
 * well-formed sequence is one character; otherwise the maximal subpart (a lead byte and the
 * continuation bytes that could still follow it) is one replacement character, class OTHER. */
static unsigned utf8_class_multi(const uint8_t *s, size_t len, size_t i, unsigned *clen)
{
    uint8_t b = s[i];
    size_t avail = len - i;
    unsigned need;
    uint8_t lo = 0x80, hi = 0xBF;
    uint32_t cp;
    if (b >= 0xC2 && b <= 0xDF) {
        need = 2;
        cp = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 3;
        cp = b & 0x0F;
        if (b == 0xE0)
            lo = 0xA0;
        else if (b == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 4;
        cp = b & 0x07;
        if (b == 0xF0)
            lo = 0x90;
        else if (b == 0xF4)
            hi = 0x8F; /* nothing past U+10FFFF */
    } else {
        *clen = 1; /* a stray continuation byte, C0, C1, F5..FF */
        return MN_UC_OTHER;
    }
    for (unsigned k = 1; k < need; k++) {
        if (k >= avail || s[i + k] < lo || s[i + k] > hi) {
            *clen = k;
            return MN_UC_OTHER;
        }
        cp = cp << 6 | (s[i + k] & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    *clen = need;
    return mn__ucls(cp);
}

static inline unsigned cls_at(const uint8_t *s, size_t len, size_t i, unsigned *clen)
{
    if (s[i] < 0x80) {
        *clen = 1;
        return ascii_cls[s[i]];
    }
    return utf8_class_multi(s, len, i, clen);
}

unsigned mn__utf8_class(const uint8_t *s, size_t len, size_t i, unsigned *clen) { return cls_at(s, len, i, clen); }

/* Class sets. L = \p{L}; P = [^\s\p{L}\p{N}]; X = [^\r\n\p{L}\p{N}]; for o200k, U and W are
 * [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and [\p{Ll}\p{Lm}\p{Lo}\p{M}]. */
#define SET(c) (1u << (c))
#define IN(set, c) (((set) >> (c)) & 1u)
static const unsigned SET_L = SET(MN_UC_LU) | SET(MN_UC_LL) | SET(MN_UC_LO);
static const unsigned SET_P = SET(MN_UC_OTHER) | SET(MN_UC_M);
static const unsigned SET_X = SET(MN_UC_OTHER) | SET(MN_UC_M) | SET(MN_UC_WS);
static const unsigned SET_U = SET(MN_UC_LU) | SET(MN_UC_LO) | SET(MN_UC_M);
static const unsigned SET_W = SET(MN_UC_LL) | SET(MN_UC_LO) | SET(MN_UC_M);
static const unsigned SET_S = SET(MN_UC_WS) | SET(MN_UC_CRLF);

/* The end of the run of characters in `set` that starts at i. */
static inline size_t scan(const uint8_t *s, size_t len, size_t i, unsigned set)
{
    while (i < len) {
        unsigned l;
        if (!IN(set, cls_at(s, len, i, &l)))
            break;
        i += l;
    }
    return i;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i]: its length, or 0. Case-insensitive as Rust's regex
 * is, by simple case folding: 's' also matches U+017F LATIN SMALL LETTER LONG S; no other
 * character folds to t, r, e, v, m, l or d. */
static inline size_t contraction(const uint8_t *s, size_t len, size_t i)
{
    if (i + 1 >= len || s[i] != '\'')
        return 0;
    /* b | 0x20 equals one of these lower-case letters only for that letter and its capital */
    switch (s[i + 1] | 0x20) {
    case 's':
    case 't':
    case 'm':
    case 'd':
        return 2;
    case 'r':
    case 'v':
        return i + 2 < len && (s[i + 2] | 0x20) == 'e' ? 3 : 0;
    case 'l':
        return i + 2 < len && (s[i + 2] | 0x20) == 'l' ? 3 : 0;
    default:
        return s[i + 1] == 0xC5 && i + 2 < len && s[i + 2] == 0xBF ? 3 : 0; /* 's' as U+017F */
    }
}

/* The white-space alternatives, tried when s[i] is white space and nothing before matched:
 *   \s*[\r\n]+   : the run up to and including its last CR or LF, if it has one;
 *   \s+(?!\S)    : the whole run at the end of the text, else all of it but its last character;
 *   \s+          : a run of one character followed by something else. */
static size_t whitespace(const uint8_t *s, size_t len, size_t i)
{
    size_t j = i, last_nl_end = 0, last_start = i;
    size_t nchars = 0;
    while (j < len) {
        unsigned l;
        unsigned c = cls_at(s, len, j, &l);
        if (!IN(SET_S, c))
            break;
        last_start = j;
        j += l;
        nchars++;
        if (c == MN_UC_CRLF)
            last_nl_end = j;
    }
    if (last_nl_end)
        return last_nl_end;
    if (j == len || nchars < 2)
        return j;
    return last_start;
}

/* cl100k_base:
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t cl100k_next(const uint8_t *s, size_t len, size_t i)
{
    unsigned l0, l1;
    unsigned c0 = cls_at(s, len, i, &l0);
    size_t m = contraction(s, len, i);
    if (m)
        return i + m;
    if (IN(SET_L, c0))
        return scan(s, len, i + l0, SET_L);
    if (IN(SET_X, c0) && i + l0 < len && IN(SET_L, cls_at(s, len, i + l0, &l1)))
        return scan(s, len, i + l0 + l1, SET_L);
    if (c0 == MN_UC_N) {
        size_t j = i + l0;
        for (int k = 0; k < 2 && j < len && cls_at(s, len, j, &l1) == MN_UC_N; k++)
            j += l1;
        return j;
    }
    size_t j = 0;
    if (IN(SET_P, c0))
        j = scan(s, len, i + l0, SET_P);
    else if (s[i] == ' ' && i + 1 < len && IN(SET_P, cls_at(s, len, i + 1, &l1)))
        j = scan(s, len, i + 1 + l1, SET_P);
    if (j) {
        while (j < len && (s[j] == '\r' || s[j] == '\n'))
            j++;
        return j;
    }
    return whitespace(s, len, i);
}

/* The first o200k_base alternative from j (after the optional prefix):
 * [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 * U* takes its whole run; if a lower-case letter follows, W+ takes the run from there; else U*
 * gives back characters until one it gave back is in W: that one alone is W+. 0: no match. */
static size_t o200k_upper_lower(const uint8_t *s, size_t len, size_t j)
{
    size_t k = j, last_w_end = 0;
    unsigned c = MN_UC_OTHER, l;
    while (k < len) {
        c = cls_at(s, len, k, &l);
        if (!IN(SET_U, c))
            break;
        k += l;
        if (IN(SET_W, c))
            last_w_end = k;
    }
    size_t e;
    if (k < len && c == MN_UC_LL) /* the only class in W and not in U */
        e = scan(s, len, k + l, SET_W);
    else if (last_w_end)
        e = last_w_end;
    else
        return 0;
    return e + contraction(s, len, e);
}

/* o200k_base:
 * [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 * |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
 * |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t o200k_next(const uint8_t *s, size_t len, size_t i)
{
    unsigned l0, l1;
    unsigned c0 = cls_at(s, len, i, &l0);
    bool prefix = IN(SET_X, c0) && i + l0 < len;
    size_t e;
    /* alternative 1, with the prefix, then without */
    if (prefix && (e = o200k_upper_lower(s, len, i + l0)))
        return e;
    if (IN(SET_U | SET_W, c0) && (e = o200k_upper_lower(s, len, i)))
        return e;
    /* alternative 2: U+ W* C?, with the prefix, then without */
    if (prefix && (e = scan(s, len, i + l0, SET_U)) > i + l0) {
        e = scan(s, len, e, SET_W);
        return e + contraction(s, len, e);
    }
    if (IN(SET_U, c0)) {
        e = scan(s, len, i + l0, SET_U);
        e = scan(s, len, e, SET_W);
        return e + contraction(s, len, e);
    }
    if (c0 == MN_UC_N) {
        size_t j = i + l0;
        for (int k = 0; k < 2 && j < len && cls_at(s, len, j, &l1) == MN_UC_N; k++)
            j += l1;
        return j;
    }
    size_t j = 0;
    if (IN(SET_P, c0))
        j = scan(s, len, i + l0, SET_P);
    else if (s[i] == ' ' && i + 1 < len && IN(SET_P, cls_at(s, len, i + 1, &l1)))
        j = scan(s, len, i + 1 + l1, SET_P);
    if (j) {
        while (j < len && (s[j] == '\r' || s[j] == '\n' || s[j] == '/'))
            j++;
        return j;
    }
    return whitespace(s, len, i);
}

size_t mn__pretok_next(enum mn_pretok_kind kind, const uint8_t *s, size_t len, size_t pos)
{
    return kind == MN_PRETOK_O200K ? o200k_next(s, len, pos) : cl100k_next(s, len, pos);
}

/* Whether every split of s[0..len) by either encoding's regex has a piece boundary at b, with
 * the pieces of s[0..b) and s[b..len) the same as those of the whole text on each side (so the
 * two halves can be counted apart and summed). Two cases, each true for both regexes:
 *
 *   s[b-1] is LF and s[b] is neither white space (\s, CR and LF included) nor '/'. The only
 *   alternatives whose match can hold a CR or LF are the punctuation run's tail [\r\n]*
 *   ([\r\n/]* in o200k) and the white-space ones: X, the optional prefix of the letter
 *   alternatives, excludes CR/LF, and no letter, digit, punctuation or contraction class holds
 *   it. The tail is greedy with nothing after it, so it stops right before s[b]; a white-space
 *   run that holds the LF ends at b (s[b] is no \s), and \s*[\r\n]+ matches it up to its last
 *   CR/LF, which is s[b-1]. So the piece holding s[b-1] ends at b.
 *
 *   s[b-1] is an ASCII digit and s[b] is no \p{N}. The only alternative that can match a digit
 *   is \p{N}{1,3} (X and the punctuation class exclude \p{N}), so the piece holding s[b-1] is
 *   digits only and ends at or before b.
 *
 * Neither regex looks behind, so the matches from b on do not depend on s[0..b). Cutting the
 * text at b changes no earlier piece either: the only matchers that read past s[b-1] are the
 * ones above that stop on s[b] (the CR/LF tail, the white-space run, which holds an LF so
 * \s+(?!\S) is never tried, and \p{N}{1,3}), and the end of the text stops them at the same
 * place. s[b-1] is ASCII, so s[b] starts a character in both the whole text and its tail.
 * tests/unit/test_token_par.c checks every position of random texts against the whole split. */
int mn__pretok_safe_cut(const uint8_t *s, size_t len, size_t b)
{
    if (b == 0 || b >= len)
        return 0;
    uint8_t p = s[b - 1];
    unsigned l, c;
    if (p == '\n') {
        if (s[b] == '/')
            return 0;
        c = cls_at(s, len, b, &l);
        return c != MN_UC_WS && c != MN_UC_CRLF;
    }
    if (p >= '0' && p <= '9')
        return cls_at(s, len, b, &l) != MN_UC_N;
    return 0;
}
