/*
 * extract.c — the offline extractor (extract.h): splits a user's message into sentences (at
 * . ! ? before white space or the end, and at line breaks) and matches each against a few
 * explicit patterns, case-insensitively, at the start of the sentence. Conservative by design:
 * no pattern, no memory.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "memory/extract.h"
#include "util/banned.h"

/* s starts with the words of `prefix` (case-insensitive, followed by a space or the end)? */
static const char *after(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncasecmp(s, prefix, n) != 0)
        return NULL;
    if (s[n] != ' ' && s[n] != ':' && s[n] != ',')
        return NULL;
    s += n;
    while (*s == ' ' || *s == ':' || *s == ',')
        s++;
    return *s ? s : NULL;
}

static void set(struct mn_candidate *c, const char *kind, const char *fmt, const char *rest, const char *key)
{
    c->kind = kind;
    snprintf(c->text, sizeof c->text, fmt, rest);
    snprintf(c->key, sizeof c->key, "%s", key ? key : "");
}

/* A short noun phrase (letters, spaces, - and '), lowercased into out[0..n]; 0 when it is not. */
static int phrase(const char *p, size_t n, char *out)
{
    while (n > 0 && p[n - 1] == ' ')
        n--;
    while (n > 0 && *p == ' ')
        p++, n--;
    if (n == 0 || n > MN_EXTRACT_MAX_KEY)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (!isalpha((unsigned char)p[i]) && p[i] != ' ' && p[i] != '-' && p[i] != '\'')
            return 0;
        out[i] = (char)tolower((unsigned char)p[i]);
    }
    out[n] = '\0';
    return 1;
}

/* "I prefer X over Y" (or "to Y", "rather than Y") is a choice between two things: keyed by the
 * pair in alphabetical order, so "I prefer Y to X" later updates it. A preference without its
 * alternative stays unkeyed: "I prefer tea" and "I prefer short answers" are both true at once. */
static void choice_key(const char *r, char key[MN_EXTRACT_MAX_KEY + 1])
{
    static const char *const sep[] = {" over ", " rather than ", " to ", NULL};
    for (int i = 0; sep[i]; i++) {
        const char *at = strstr(r, sep[i]);
        if (!at)
            continue;
        char a[MN_EXTRACT_MAX_KEY + 1], b[MN_EXTRACT_MAX_KEY + 1];
        const char *y = at + strlen(sep[i]);
        if (!phrase(r, (size_t)(at - r), a) || !phrase(y, strlen(y), b) || !strcmp(a, b))
            return;
        const char *lo = strcmp(a, b) < 0 ? a : b, *hi = lo == a ? b : a;
        size_t nl = strlen(lo), nh = strlen(hi);
        if (nl + 4 + nh <= MN_EXTRACT_MAX_KEY) { /* "lo or hi" */
            memcpy(key, lo, nl);
            memcpy(key + nl, " or ", 4);
            memcpy(key + nl + 4, hi, nh + 1);
        }
        return;
    }
}

/* One sentence (NUL-terminated, trimmed, without its final punctuation). 1 when it is a candidate. */
static int match(const char *s, struct mn_candidate *c)
{
    const char *r;
    static const char *const lead[] = {"please", "also", "and", "oh", "btw", "by the way", "ok", "okay", "actually", NULL};
    for (int again = 1; again;) { /* "Please remember that …", "Also, my …" */
        again = 0;
        for (int i = 0; lead[i]; i++)
            if ((r = after(s, lead[i]))) {
                s = r;
                again = 1;
            }
    }
    if ((r = after(s, "remember that")) || (strncasecmp(s, "remember:", 9) == 0 && (r = after(s, "remember")))) {
        set(c, "fact", "%s", r, NULL);
        c->text[0] = (char)toupper((unsigned char)c->text[0]);
        return 1;
    }
    if ((r = after(s, "from now on"))) {
        set(c, "instruction", "From now on %s", r, NULL);
        return 1;
    }
    if ((r = after(s, "I prefer")) || (r = after(s, "I'd prefer")) || (r = after(s, "I would prefer"))) {
        set(c, "preference", "User prefers %s", r, NULL);
        choice_key(r, c->key);
        return 1;
    }
    if ((r = after(s, "I live in")) || (r = after(s, "I moved to")) || (r = after(s, "I now live in")) ||
        (r = after(s, "I've moved to")) || (r = after(s, "I have moved to"))) {
        set(c, "fact", "User lives in %s", r, "home");
        return 1;
    }
    /* "my" and a space: "My, the weather is lovely" is an exclamation, not "my K is V" */
    if (strncasecmp(s, "my ", 3) == 0 && (r = after(s, "my"))) {
        const char *is = strstr(r, " is ");
        size_t klen = is ? (size_t)(is - r) : 0;
        if (!is || klen == 0 || klen > MN_EXTRACT_MAX_KEY || !is[4])
            return 0;
        char key[MN_EXTRACT_MAX_KEY + 1];
        if (!phrase(r, klen, key))
            return 0;
        c->kind = "fact";
        snprintf(c->text, sizeof c->text, "User's %.*s is %s", (int)klen, r, is + 4);
        /* where the user lives, however it is said, is one fact: "I live in" / "I moved to" */
        int home = !strcmp(key, "city") || !strcmp(key, "home") || !strcmp(key, "hometown") ||
                   !strcmp(key, "home town") || !strcmp(key, "town");
        snprintf(c->key, sizeof c->key, "%s", home ? "home" : key);
        return 1;
    }
    return 0;
}

/* The word that ends at `dot` (from the sentence start `from`) is a common abbreviation, whose
 * dot does not end the sentence: "Dr. Who", "St. Petersburg", "e.g. tea". */
static int abbreviation(const char *from, const char *dot)
{
    static const char *const words[] = {"mr", "mrs", "ms", "dr", "prof", "st", "mt",
                                        "jr", "sr", "vs", "e.g", "i.e", NULL};
    const char *w = dot;
    while (w > from && w[-1] != ' ' && w[-1] != '(' && w[-1] != '\t')
        w--;
    for (int i = 0; words[i]; i++)
        if ((size_t)(dot - w) == strlen(words[i]) && strncasecmp(w, words[i], (size_t)(dot - w)) == 0)
            return 1;
    return 0;
}

/* The length of the sentence at p, up to its final punctuation: a sentence ends at a line break,
 * or at . ! ? followed by white space or the end of the text (so never inside
 * "staging.example.com", "3.14" or "bob@example.org"), but not at the dot of an abbreviation.
 * *next is where the next one starts; *question is set when it ends with a "?". */
static size_t sentence(const char *p, const char **next, int *question)
{
    const char *e = p;
    for (;; e++) {
        if (*e == '\0' || *e == '\n')
            break;
        if (!strchr(".!?", *e))
            continue;
        const char *run = e; /* "?!", "...": one ending */
        while (run[1] && strchr(".!?", run[1]))
            run++;
        if (run[1] && !isspace((unsigned char)run[1])) {
            e = run;
            continue;
        }
        if (run == e && *e == '.' && abbreviation(p, e))
            continue;
        *question = memchr(e, '?', (size_t)(run - e + 1)) != NULL;
        *next = run + 1;
        return (size_t)(e - p);
    }
    *question = 0;
    *next = e;
    return (size_t)(e - p);
}

void mn__extract_offline(const char *text, int (*fn)(void *user, const struct mn_candidate *c), void *user)
{
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
            p++;
        const char *next;
        int question;
        size_t n = sentence(p, &next, &question);
        if (n > 0 && n <= MN_EXTRACT_MAX_SENTENCE && !question) {
            char s[MN_EXTRACT_MAX_SENTENCE + 1];
            memcpy(s, p, n);
            s[n] = '\0';
            while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == ',' || s[n - 1] == ';' || s[n - 1] == '\r'))
                s[--n] = '\0';
            struct mn_candidate c;
            if (n > 0 && match(s, &c) && fn(user, &c))
                return;
        }
        p = next;
    }
}

/* Two scope ids are the same: both unset, or equal. */
static int same_id(const char *want, const char *have)
{
    return want ? have && strcmp(want, have) == 0 : !have;
}

int mn__extract_in_scope(const mn_memory *m, const char *ns, const char *user_id, const char *agent_id,
                        const char *session_id)
{
    return same_id(ns, m->ns) && same_id(user_id, m->user_id) && same_id(agent_id, m->agent_id) &&
           same_id(session_id, m->session_id);
}
