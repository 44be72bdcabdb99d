/*
 * extractive.c — the `extractive` summariser: a summary with no model. It reads the shaped input
 * (summarize.c), carries the existing summary's items over (anchoring), and adds from the new
 * turns what an agent needs to continue: the goal (the first real request, verbatim: not "Good."
 * or "Thanks"), the user's constraints and preferences (a question is not one), decisions,
 * errors with the fix that names them (or directly follows them), finished work (a user's "CI is
 * green now." included), open tasks (requests not yet done; a question that got an answer is not
 * one), facts with numbers, versions or identifiers, commands, file paths and tool names.
 * Ranking: an item is worth its kind plus what is hard to rediscover in it (paths, identifiers,
 * versions, numbers), less the share of its words that the conversation repeats everywhere;
 * items made of such words (a run of near-identical messages) are not listed at all, nor are
 * acknowledgements or duplicates. No section has a silent cap: when the summary is over the
 * token cap, items go in order of least worth first, oldest first among equals (items matching
 * the compaction's instructions last), and the summary says how many were left out.
 * Deterministic: the same input gives the same bytes. Design notes: docs/context.md.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "summarize/summarize.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

#define ITEM_CHARS 160

enum {
    S_CONSTRAINTS, S_DECISIONS, S_ERRORS, S_DONE, S_TASKS, S_FACTS, S_COMMANDS, S_FILES, S_TOOLS, N_SECTIONS
};
static const char *const section_names[N_SECTIONS] = {
    "Constraints", "Decisions", "Errors and fixes", "Done", "Open tasks", "Facts", "Commands", "Files", "Tools"};
/* what an item is worth before its own specificity: what the agent cannot rediscover ranks high */
static const int section_weight[N_SECTIONS] = {8, 5, 5, 2, 6, 4, 4, 2, 5};
#define FIRST_INLINE S_FILES /* Files and Tools render on one line each */
#define LEFT_OUT "Left out: "

struct item {
    char *text;
    long count; /* tools: calls seen */
    long age;   /* insertion order: lower is older */
    int score;  /* section weight + specificity + 100 × focus, less repetition (rank) */
    int focus;  /* match with the instructions (focus_of) */
    int sec;
    int turn;   /* the user turn it came from (0: the existing summary) */
};

/* How many documents (messages of the new turns, items of the existing summary) each word
 * shape appears in: an open-addressing table. */
#define SHAPE_CHARS 32
struct shapes {
    char (*key)[SHAPE_CHARS];
    unsigned *docs;   /* documents that have the shape */
    size_t *last;     /* the document counted last: a document counts once */
    size_t cap, used; /* cap: a power of two */
    size_t n_docs;
};

struct ex {
    char *goal;
    struct item *items;
    size_t n, cap;
    long clock;
    long left_out; /* items cut, this summary and the ones before */
    int oom;
    int in_tool; /* parsing a tool's output: the paths it lists are worth less than named ones */
    long new_from; /* the age of the first item of the new turns (older ones: the existing summary) */
    int turn;      /* user turns seen in the new turns */
    const char *msg; /* the assistant message being read, for matching a fix with its error */
    size_t msg_len;
    const char *prev; /* its sentence before the one being read, or NULL */
    char **focus; /* instruction words, lower case */
    size_t n_focus;
    struct shapes df; /* word repetition across the input */
};

static void item_remove(struct ex *e, size_t i)
{
    free(e->items[i].text);
    memmove(e->items + i, e->items + i + 1, (e->n - i - 1) * sizeof *e->items);
    e->n--;
}

static int is_word_char(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* What one word s[0..n) says that is hard to rediscover: 3 a path or URL, 2 an identifier or a
 * version, 1 a number or a snake_case / camelCase name, 0 a plain word. Outer punctuation does
 * not count ("12." is a number, not a version). */
static int word_worth(const char *st, size_t n)
{
    while (n && strchr("([{\"'<", *st))
        st++, n--;
    while (n && strchr(".,;:!?)]}\"'>", st[n - 1]))
        n--;
    int digits = 0, alpha = 0, upper = 0, marks = 0, slash = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char c = (unsigned char)st[k];
        digits += isdigit(c) != 0;
        alpha += isalpha(c) != 0;
        upper += k > 0 && isupper(c);
        marks += c == '_' || c == '-' || c == '.' || c == ':' || c == '#' || c == '=';
        slash += c == '/';
    }
    if (slash && alpha)
        return 3;
    if (digits && (alpha || marks))
        return 2;
    if (digits)
        return 1;
    return alpha && (marks > 1 || upper) && n > 3;
}

/* Specificity of s[0..len): the worth of its words, a code span one more, at most 12. */
static int specificity(const char *s, size_t len)
{
    int score = 0;
    for (const char *p = s, *end = s + len; p < end;) {
        while (p < end && isspace((unsigned char)*p))
            p++;
        const char *st = p;
        while (p < end && !isspace((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - st);
        score += word_worth(st, n) + (memchr(st, '`', n) != NULL);
    }
    return score > 12 ? 12 : score;
}

/* Whether s names something (a path, an identifier, a version), beyond bare numbers. */
static int names_thing(const char *s)
{
    for (const char *p = s; *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        const char *st = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        if (word_worth(st, (size_t)(p - st)) >= 2)
            return 1;
    }
    return 0;
}

/* ---- word repetition ------------------------------------------------------------------------- */

/* Words that carry no meaning of their own: they are not counted as common or rare. */
static const char *const function_words[] = {"the", "and", "for", "with", "that", "this", "from", "are", "was",
                                             "were", "has", "have", "had", "you", "your", "our", "its", "but",
                                             "into", "than", "then", "they", "them", "their", "there", "what",
                                             "which", NULL};

/* The next word of [*p, end) as a shape: lower case, a run of digits as '#', outer punctuation
 * off, cut to SHAPE_CHARS - 1 bytes; advances *p. Returns 0 at the end. out is "" for a word
 * that does not count: under three characters without a digit ("we", "to"), a function word, or
 * this file's own arrow. */
static int next_shape(const char **p, const char *end, char out[SHAPE_CHARS])
{
    const char *s = *p;
    while (s < end && isspace((unsigned char)*s))
        s++;
    if (s >= end)
        return 0;
    const char *st = s;
    while (s < end && !isspace((unsigned char)*s))
        s++;
    *p = s;
    const char *en = s;
    while (st < en && ispunct((unsigned char)*st))
        st++;
    while (en > st && ispunct((unsigned char)en[-1]))
        en--;
    size_t o = 0;
    int digit = 0;
    for (const char *q = st; q < en && o < SHAPE_CHARS - 1; q++) {
        if (isdigit((unsigned char)*q)) {
            while (q + 1 < en && isdigit((unsigned char)q[1]))
                q++;
            out[o++] = '#';
            digit = 1;
        } else
            out[o++] = (char)tolower((unsigned char)*q);
    }
    out[o] = '\0';
    int skip = (o < 3 && !digit) || strcmp(out, "→") == 0;
    for (const char *const *f = function_words; *f && !skip; f++)
        skip = strcmp(*f, out) == 0;
    if (skip)
        out[0] = '\0';
    return 1;
}

static void shapes_release(struct shapes *m)
{
    free(m->key);
    free(m->docs);
    free(m->last);
    memset(m, 0, sizeof *m);
}

/* Room for about `words` distinct shapes. Returns -1 when out of memory, with an empty table
 * (cap 0: it counts nothing, and the caller reads on to the end). */
static int shapes_init(struct shapes *m, size_t words)
{
    memset(m, 0, sizeof *m);
    for (m->cap = 64; m->cap < 2 * words; m->cap *= 2)
        ;
    m->key = calloc(m->cap, sizeof *m->key);
    m->docs = calloc(m->cap, sizeof *m->docs);
    m->last = calloc(m->cap, sizeof *m->last);
    if (m->key && m->docs && m->last)
        return 0;
    shapes_release(m);
    return -1;
}

static size_t shapes_slot(const struct shapes *m, const char *key)
{
    uint32_t h = 2166136261u;
    for (const char *k = key; *k; k++)
        h = (h ^ (unsigned char)*k) * 16777619u;
    size_t i = h & (m->cap - 1);
    while (m->key[i][0] && strcmp(m->key[i], key) != 0)
        i = (i + 1) & (m->cap - 1);
    return i;
}

/* In how many documents the shape w appears. */
static unsigned shapes_docs(const struct shapes *m, const char *w) { return m->cap ? m->docs[shapes_slot(m, w)] : 0; }

/* Counts the words of s[0..len) as one more document. A full table counts no more (the
 * caller sized it for the whole input, so this does not happen). */
static void shapes_doc(struct shapes *m, const char *s, size_t len)
{
    if (!m->cap)
        return;
    m->n_docs++;
    char w[SHAPE_CHARS];
    for (const char *p = s, *end = s + len; next_shape(&p, end, w);) {
        if (!*w)
            continue;
        size_t k = shapes_slot(m, w);
        if (!m->key[k][0]) {
            if (2 * (m->used + 1) > m->cap)
                return;
            memcpy(m->key[k], w, SHAPE_CHARS);
            m->used++;
        }
        if (m->last[k] != m->n_docs)
            m->docs[k]++, m->last[k] = m->n_docs;
    }
}

/* How well an item matches the instructions: 2 for each instruction word in its text, 1 for
 * each in its section's name. */
static int focus_of(const struct ex *e, const char *text, int sec)
{
    int score = 0;
    for (size_t f = 0; f < e->n_focus; f++) {
        const char *w = e->focus[f];
        size_t wl = strlen(w);
        for (int pass = 0; pass < 2; pass++) {
            const char *hay = pass ? section_names[sec] : text;
            int found = 0;
            for (const char *p = hay; *p && !found; p++) {
                size_t k = 0;
                while (k < wl && p[k] && tolower((unsigned char)p[k]) == w[k])
                    k++;
                found = k == wl;
            }
            score += found ? 2 - pass : 0;
        }
    }
    return score;
}

/* Adds text (a copy of s[0..len), trimmed) to a section; an equal item becomes the newest. */
static void add_item(struct ex *e, int sec, const char *s, size_t len, long count)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && (isspace((unsigned char)s[len - 1]) || s[len - 1] == '-'))
        len--;
    if (!len)
        return;
    for (size_t i = 0; i < e->n; i++)
        if (e->items[i].sec == sec && strlen(e->items[i].text) == len && memcmp(e->items[i].text, s, len) == 0) {
            if (__builtin_add_overflow(count, e->items[i].count, &count))
                count = LONG_MAX; /* counts come from summaries a model may have written: saturate */
            item_remove(e, i);
            break;
        }
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 32;
        struct item *items = realloc(e->items, cap * sizeof *items);
        if (!items) {
            e->oom = 1;
            return;
        }
        e->items = items;
        e->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        e->oom = 1;
        return;
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    int focus = focus_of(e, copy, sec);
    int score = section_weight[sec] + specificity(copy, len) + 100 * focus;
    if (sec == S_FILES && e->in_tool)
        score -= 2;
    if (sec == S_TOOLS && count > 1) /* a tool in use; how often it was called adds nothing more */
        score += 1;
    e->items[e->n++] = (struct item){copy, count, e->clock++, score, focus, sec, e->turn};
}

/* The first ITEM_CHARS bytes of s[0..len), cut back to a UTF-8 boundary. */
static size_t clip(const char *s, size_t len)
{
    if (len <= ITEM_CHARS)
        return len;
    size_t n = ITEM_CHARS;
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* Whether lower-cased s[0..len) contains one of words (each may start with a space meaning "at a
 * word start"). */
static int has_word(const char *s, size_t len, const char *const *words)
{
    char low[ITEM_CHARS * 4 + 2];
    size_t n = len < sizeof low - 2 ? len : sizeof low - 2;
    low[0] = ' ';
    for (size_t i = 0; i < n; i++)
        low[i + 1] = (char)tolower((unsigned char)s[i]);
    low[n + 1] = '\0';
    for (; *words; words++)
        if (strstr(low, *words))
            return 1;
    return 0;
}

static const char *const error_words[] = {"error", "fail", "exception", "traceback", "panic", "not found",
                                          "denied", "cannot", "refused", "segmentation", "crash", "timed out",
                                          "timeout", " bug", NULL};
static const char *const done_words[] = {"done", "fixed", " pass", "completed", "implemented", " added", "updated",
                                         "works now", "resolved", "merged", " created", "applied", "booked",
                                         "confirmed", "sent", "finished", "reviewed", "looks fine", "looks good",
                                         "checked", NULL};
static const char *const fix_words[] = {"fixed", "resolved", "solved", "works now", "passes now", "workaround",
                                        NULL};
static const char *const decision_words[] = {"decid", " i will", " we will", " we'll", "let's", "going to",
                                             " chose", " choose", "instead", "switch", "plan:", " use ",
                                             " go with", "settled on", " agreed", " picked", " we keep",
                                             " we stick", " stick with", " we stay", " stay with", " stay on", NULL};
static const char *const constraint_words[] = {"never", "always", "don't", "do not", " must", "prefer", "avoid",
                                               " only ", "no more than", "at most", "at least", "without",
                                               "make sure", "budget", " should", "need to", "i want", "i'd like",
                                               "not allowed", "required", "deadline", "by friday", NULL};
static const char *const task_words[] = {"todo", "to do:", "next step", "remaining", "still need", "later",
                                         "follow up", "follow-up", "open question", "open task", "pending",
                                         "not yet", NULL};
/* task words that win over a rule's words: "we still need to write the guide" is work left */
static const char *const strong_task_words[] = {"todo", "to do:", "next step", "still need", "follow up",
                                                "follow-up", "open task", "pending", "not yet", NULL};
/* a user reporting success ("CI is green now.") reports work done, not work to do */
static const char *const success_words[] = {" green", " pass", "passing", " works", " working", "succeed",
                                            "success", " fixed", " resolved", " merged", " deployed", " is done",
                                            " are done", "all done", "all good", "looks good", NULL};
/* … unless the sentence asks for it ("get the tests passing", "make sure it works") */
static const char *const request_marks[] = {"please", " can you", " could you", " would you", " make ", " get ",
                                            " need to", " needs to", " must ", " should", " want ", "let's",
                                            " fix ", " keep ", " try ", "ensure", "don't", "do not", "never",
                                            "always", NULL};
/* a request phrased with a rule's words is still the user's goal ("I want a script that …") */
static const char *const request_starts[] = {"please", "can you", "could you", "would you", "i want", "i'd like",
                                             "i would like", "i need", "we need", "help me", NULL};
static const char *const question_starts[] = {"what", "why", "how", "which", "where", "when", "who", "is ", "are ",
                                              "does", "do ", "did", "was ", "were ", "could", "can ", "would",
                                              "will ", "should", "have ", "has ", NULL};
static const char *const ack_starts[] = {"thank", "ok", "great", "sure", "yes", "no ", "no,", "cool", "perfect",
                                         "fine", "nice", "got it", "sounds", "alright", "good", "awesome", "hi ",
                                         "hello", "hey", "wow", "lol", "understood", "right", NULL};
static const char *const command_starts[] = {"make", "npm ", "npx ", "git ", "pip ", "python", "cargo ", "go ",
                                             "./", "sudo ", "docker ", "kubectl ", "curl ", "pytest", "ctest",
                                             "cmake ", "mnemo ", "yarn ", "pnpm ", "node ", "bash ", "sh ",
                                             "psql ", "sqlite3 ", "apt", "brew ", "terraform ", "ls ", "grep ",
                                             "sed ", "rm ", "mv ", "cp ", "cd ", "gcc ", "clang ", NULL};

static int has_digit(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (isdigit((unsigned char)s[i]))
            return 1;
    return 0;
}

static int starts_with_any(const char *s, size_t len, const char *const *words)
{
    for (; *words; words++) {
        size_t wl = strlen(*words);
        if (len >= wl && strncasecmp(s, *words, wl) == 0)
            return 1;
    }
    return 0;
}

static void add_command(struct ex *e, const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s))
        s++, len--;
    if (len >= 3 && len <= ITEM_CHARS && starts_with_any(s, len, command_starts))
        add_item(e, S_COMMANDS, s, len, 1);
}

/* Commands in `code spans` of s[0..len). */
static void code_spans(struct ex *e, const char *s, size_t len)
{
    for (const char *p = s, *end = s + len; p < end;) {
        const char *a = memchr(p, '`', (size_t)(end - p));
        if (!a)
            break;
        const char *b = memchr(a + 1, '`', (size_t)(end - a - 1));
        if (!b)
            break;
        add_command(e, a + 1, (size_t)(b - a - 1));
        p = b + 1;
    }
}

/* Calls fn on each sentence of s[0..len). */
static void sentences(struct ex *e, const char *s, size_t len, void (*fn)(struct ex *, const char *, size_t))
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        int end = i == len || s[i] == '\n' ||
                  ((s[i] == '.' || s[i] == '!' || s[i] == '?' || s[i] == ';') &&
                   (i + 1 == len || s[i + 1] == ' ' || s[i + 1] == '\n'));
        if (!end)
            continue;
        size_t stop = i < len && s[i] != '\n' ? i + 1 : i;
        if (stop > start)
            fn(e, s + start, stop - start);
        start = i + 1;
    }
}

static void path_tokens(struct ex *e, const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        while (i < len && (isspace((unsigned char)s[i]) || strchr("\"'`()[]{},;<>=", s[i])))
            i++;
        size_t st = i;
        while (i < len && !isspace((unsigned char)s[i]) && !strchr("\"'`()[]{},;<>=", s[i]))
            i++;
        size_t n = i - st;
        while (n && strchr(".:!?", s[st + n - 1]))
            n--;
        if (n < 3 || n > 120 || memchr(s + st, '\\', n))
            continue;
        if ((n > 4 && strncmp(s + st, "http", 4) == 0) || memchr(s + st, '@', n))
            continue;
        const char *tok = s + st;
        const char *dot = NULL;
        int slash = 0, alpha = 0, ok = 1;
        for (size_t k = 0; k < n; k++) {
            unsigned char c = (unsigned char)tok[k];
            slash += c == '/';
            if (c == '.')
                dot = tok + k;
            alpha |= isalpha(c);
            if (!(isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~' || c >= 0x80))
                ok = 0;
        }
        int ext = 0;
        if (dot && dot > tok && dot < tok + n - 1) {
            size_t el = (size_t)(tok + n - dot - 1);
            ext = el >= 1 && el <= 5 && isalpha((unsigned char)dot[1]);
            for (size_t k = 1; ext && k <= el; k++)
                ext = isalnum((unsigned char)dot[k]);
        }
        /* "and/or", "km/h": a path has a dot, or two slashes, or starts with / ~ . */
        int pathish = slash && (dot || slash >= 2 || tok[0] == '/' || tok[0] == '~' || tok[0] == '.');
        if (ok && alpha && (pathish || ext) && !(slash && tok[0] == '/' && n < 3))
            add_item(e, S_FILES, tok, n, 1);
    }
}

/* s[0..len) without the white space around it. */
static const char *trim(const char *s, size_t *len)
{
    while (*len && isspace((unsigned char)*s))
        s++, (*len)--;
    while (*len && isspace((unsigned char)s[*len - 1]))
        (*len)--;
    return s;
}

/* A question ends with '?', or starts like one and ends without '.' or '!' ("what about the
 * cache"); "Do not touch it." is a rule. */
static int is_question(const char *s, size_t len)
{
    s = trim(s, &len);
    if (!len)
        return 0;
    if (s[len - 1] == '?')
        return 1;
    if (s[len - 1] == '.' || s[len - 1] == '!' || strncasecmp(s, "do not", 6) == 0)
        return 0;
    return starts_with_any(s, len, question_starts);
}

/* "Good.", "Thanks!", "ok", "Great, thanks.": an acknowledgement of at most four words that
 * names nothing. It is neither a goal nor an item. */
static int is_ack(const char *s, size_t len)
{
    s = trim(s, &len);
    if (!len || !starts_with_any(s, len, ack_starts) || has_digit(s, len) || specificity(s, len))
        return 0;
    int words = 0;
    for (size_t i = 0; i < len; i++)
        words += !isspace((unsigned char)s[i]) && (i == 0 || isspace((unsigned char)s[i - 1]));
    return words <= 4;
}

/* "CI is green now.", "The tests pass.": a report of success, not a request. */
static int is_success(const char *s, size_t len)
{
    return !is_question(s, len) && has_word(s, len, success_words) && !has_word(s, len, request_marks) &&
           !has_word(s, len, error_words);
}

/* ---- errors and their fixes ------------------------------------------------------------------ */

/* Words that appear in any error or fix and so tell nothing about which one is meant. */
static const char *const generic_words[] = {"error", "errors", "failed", "fails", "failure", "fixed", "fixes",
                                            "with", "that", "this", "from", "after", "before", "then", "when",
                                            "have", "were", "does", "exist", "exists", "found", "passes",
                                            "into", "there", "their", "which", "what", "works", "again", "still",
                                            "also", "because", "test", "tests", "check", "now", NULL};

/* The next word of s[*pos..len) that can name a thing — a file, an identifier, a tool: four
 * characters or more, or letters with digits, not a generic word. Returns its length (0: none
 * left); *at is its start. Words are split at punctuation other than _ . - and trimmed of . -. */
static size_t next_name(const char *s, size_t len, size_t *pos, const char **at)
{
    while (*pos < len) {
        size_t i = *pos;
        while (i < len && !(isalnum((unsigned char)s[i]) || s[i] == '_'))
            i++;
        size_t st = i;
        while (i < len && (isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
            i++;
        *pos = i;
        size_t n = i - st;
        while (n && (s[st + n - 1] == '.' || s[st + n - 1] == '-'))
            n--;
        int digits = 0, alpha = 0, generic = 0;
        for (size_t k = 0; k < n; k++)
            digits |= isdigit((unsigned char)s[st + k]), alpha |= isalpha((unsigned char)s[st + k]);
        for (const char *const *g = generic_words; *g && !generic; g++)
            generic = strlen(*g) == n && strncasecmp(*g, s + st, n) == 0;
        if (!generic && alpha && (n >= 4 || (digits && n >= 2))) {
            *at = s + st;
            return n;
        }
    }
    return 0;
}

/* How many of a's naming words b also has (case-insensitive, whole words). */
static int mentions(const char *a, size_t alen, const char *b)
{
    int shared = 0;
    size_t pa = 0, na;
    const char *wa;
    while ((na = next_name(a, alen, &pa, &wa))) {
        size_t pb = 0, nb, blen = strlen(b);
        const char *wb;
        while ((nb = next_name(b, blen, &pb, &wb)))
            if (nb == na && strncasecmp(wa, wb, na) == 0) {
                shared++;
                break;
            }
    }
    return shared;
}

static int is_open_error(const struct item *it) { return it->sec == S_ERRORS && !strstr(it->text, " → resolved"); }

/* The open error a fix sentence s is about: the one that shares the most names with the
 * sentence (twice) and its message (a file, an identifier, the tool), newest among equals; with
 * none shared, the newest error of this very turn (the fix follows it). -1: none, and the fix is
 * not joined to an unrelated error. */
static long error_for_fix(const struct ex *e, const char *s, size_t len)
{
    long best = -1, adjacent = -1;
    int best_score = 0;
    for (size_t i = e->n; i-- > 0;) {
        const struct item *it = &e->items[i];
        if (!is_open_error(it))
            continue;
        int score = 2 * mentions(s, len, it->text) + (e->msg ? mentions(e->msg, e->msg_len, it->text) : 0);
        if (score > best_score)
            best = (long)i, best_score = score;
        if (adjacent < 0 && it->age >= e->new_from && it->turn == e->turn)
            adjacent = (long)i;
    }
    return best >= 0 ? best : adjacent;
}

/* Joins the fix line[0..len) (its start, at most `cap` bytes) to error item i: "error →
 * resolved: fix". */
static void attach_fix(struct ex *e, size_t i, const char *line, size_t len, size_t cap)
{
    struct item *it = &e->items[i];
    line = trim(line, &len);
    size_t keep = clip(line, len);
    if (keep > cap) {
        keep = cap;
        while (keep > 0 && ((unsigned char)line[keep] & 0xC0) == 0x80)
            keep--;
    }
    struct mn_buf b = MN_BUF_INIT;
    if (mn__buf_adds(&b, it->text) || mn__buf_adds(&b, " → resolved: ") || mn__buf_add(&b, line, keep)) {
        e->oom = 1;
        mn__buf_release(&b);
        return;
    }
    char *text = mn__buf_detach(&b, NULL);
    if (!text) {
        e->oom = 1;
        return;
    }
    free(it->text);
    it->text = text;
    it->score += 2; /* an error with its fix */
    it->focus = focus_of(e, text, S_ERRORS);
}

/* A success of `tool` resolves the newest open error of that tool; returns whether one was. */
static int resolve_tool_error(struct ex *e, const char *tool, const char *line, size_t len)
{
    size_t tl = strlen(tool);
    for (size_t i = e->n; i-- > 0;) {
        const struct item *it = &e->items[i];
        if (is_open_error(it) && strncmp(it->text, tool, tl) == 0 && it->text[tl] == ':') {
            attach_fix(e, i, line, len, ITEM_CHARS / 2); /* the output's first line, shortened */
            return 1;
        }
    }
    return 0;
}

/* ---- sentences --------------------------------------------------------------------------------- */

static void classify_assistant_sentence(struct ex *e, const char *s, size_t len);

static void on_assistant_sentence(struct ex *e, const char *s, size_t len)
{
    s = trim(s, &len);
    classify_assistant_sentence(e, s, len);
    e->prev = s;
}

static void classify_assistant_sentence(struct ex *e, const char *s, size_t len)
{
    size_t n = clip(s, len);
    /* "I fixed it by …": the fix of the error it names, or of the error just before it */
    if (has_word(s, len, fix_words) && !has_word(s, len, task_words)) {
        long i = error_for_fix(e, s, len);
        const char *cause = e->prev; /* the sentence before, when it names the error, says why */
        if (i >= 0 && cause && mentions(cause, (size_t)(s - cause), e->items[i].text)) {
            attach_fix(e, (size_t)i, cause, (size_t)(s + len - cause), ITEM_CHARS);
            return;
        }
        if (i >= 0) {
            attach_fix(e, (size_t)i, s, len, ITEM_CHARS / 2);
            return;
        }
    }
    if (has_word(s, len, task_words))
        add_item(e, S_TASKS, s, n, 1);
    else if (has_word(s, len, error_words))
        add_item(e, S_ERRORS, s, n, 1);
    else if (has_word(s, len, decision_words))
        add_item(e, S_DECISIONS, s, n, 1);
    else if (has_word(s, len, done_words))
        add_item(e, S_DONE, s, n, 1);
    else if (has_digit(s, len) || specificity(s, len) >= 3)
        add_item(e, S_FACTS, s, n, 1);
}

/* A user's sentence after the first: a question is not a rule (its answer is what counts), a
 * report of success is done work, work still to do wins over a rule's words. */
static void on_user_sentence(struct ex *e, const char *s, size_t len)
{
    s = trim(s, &len);
    size_t n = clip(s, len);
    if (is_question(s, len) || is_ack(s, len))
        return;
    if (is_success(s, len))
        add_item(e, S_DONE, s, n, 1);
    else if (has_word(s, len, strong_task_words))
        add_item(e, S_TASKS, s, n, 1);
    else if (has_word(s, len, constraint_words))
        add_item(e, S_CONSTRAINTS, s, n, 1);
    else if (has_word(s, len, error_words))
        add_item(e, S_ERRORS, s, n, 1);
    else if (has_word(s, len, decision_words))
        add_item(e, S_DECISIONS, s, n, 1);
    else if (has_word(s, len, task_words))
        add_item(e, S_TASKS, s, n, 1);
    else if (has_digit(s, len) || specificity(s, len) >= 3)
        add_item(e, S_FACTS, s, n, 1);
}

struct turn {
    char *request;  /* the user's first substantive sentence, when it asks for work */
    int question;   /* the request asks something */
    int answered;   /* the assistant replied with text */
    int completed;  /* the assistant reported the work done */
};

static void end_turn(struct ex *e, struct turn *t)
{
    /* the goal line already stands for the first request */
    if (t->request && !(t->question && t->answered) && !(e->goal && strcmp(e->goal, t->request) == 0))
        add_item(e, t->completed ? S_DONE : S_TASKS, t->request, strlen(t->request), 1);
    free(t->request);
    memset(t, 0, sizeof *t);
}

/* "key":"value" string values of the JSON text s[0..len) for keys command / cmd: commands. */
static void call_commands(struct ex *e, const char *s, size_t len)
{
    static const char *const keys[] = {"\"command\":\"", "\"cmd\":\"", NULL};
    for (const char *const *k = keys; *k; k++) {
        size_t kl = strlen(*k);
        for (const char *p = s, *end = s + len; p + kl < end; p++) {
            if (strncmp(p, *k, kl) != 0)
                continue;
            const char *v = p + kl, *q = v;
            while (q < end && *q != '"')
                q += *q == '\\' ? 2 : 1;
            if (q <= end)
                add_item(e, S_COMMANDS, v, clip(v, (size_t)(q - v)), 1);
            p = q < end ? q : end - 1;
        }
    }
}

/* The length of the first sentence of s[0..len): through '?', or '.' / '!' before a space, or
 * up to a line end. */
static size_t first_sentence(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && s[i] != '\n' &&
           !(s[i] == '?' || ((s[i] == '.' || s[i] == '!') && i + 1 < len && s[i + 1] == ' ')))
        i++;
    return i < len && s[i] != '\n' ? i + 1 : i;
}

static char *dup_n(struct ex *e, const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        e->oom = 1;
    else
        memcpy(d, s, n), d[n] = '\0';
    return d;
}

/* The first substantive sentence s[0..n) of a user message. A request (or a question) is the
 * turn's request, and the goal when there is none yet; a rule, a decision or a report of success
 * is an item of its section (and the goal only when phrased as a request: "I want …"). */
static void on_user_first(struct ex *e, struct turn *t, const char *s, size_t n)
{
    if (n > 5 && strncasecmp(s, "goal:", 5) == 0) { /* the summary says "Goal: " itself */
        s += 5, n -= 5;
        s = trim(s, &n);
    }
    int question = is_question(s, n);
    int rule = !question && (has_word(s, n, constraint_words) || has_word(s, n, decision_words) ||
                             has_word(s, n, strong_task_words));
    int request = !rule && !is_success(s, n) && !starts_with_any(s, n, ack_starts);
    if (!e->goal && (request || (rule && starts_with_any(s, n, request_starts))))
        e->goal = dup_n(e, s, n);
    if (question || request) {
        t->request = dup_n(e, s, n);
        t->question = question;
    } else
        on_user_sentence(e, s, n);
}

static void on_user(struct ex *e, struct turn *t, const char *s, size_t len)
{
    end_turn(e, t);
    e->turn++;
    path_tokens(e, s, len);
    code_spans(e, s, len);
    /* leading acknowledgements ("Good.", "Thanks!") carry nothing */
    size_t at = 0, n;
    while (at < len && isspace((unsigned char)s[at]))
        at++;
    while (at < len && (n = first_sentence(s + at, len - at)) && is_ack(s + at, n))
        for (at += n; at < len && isspace((unsigned char)s[at]);)
            at++;
    if (at >= len)
        return;
    n = first_sentence(s + at, len - at);
    const char *f = trim(s + at, &n);
    if (n)
        on_user_first(e, t, f, clip(f, n));
    size_t rest = (size_t)(f + n - s);
    sentences(e, s + rest, len - rest, on_user_sentence);
}

static void on_calls(struct ex *e, const char *s, size_t len)
{
    size_t n = 0;
    while (n < len && s[n] != '(')
        n++;
    add_item(e, S_TOOLS, s, n, 1);
    path_tokens(e, s + n, len - n);
    call_commands(e, s + n, len - n);
}

static void on_assistant(struct ex *e, struct turn *t, const char *s, size_t len)
{
    t->answered = 1;
    if (has_word(s, len, done_words))
        t->completed = 1;
    e->msg = s, e->msg_len = len;
    sentences(e, s, len, on_assistant_sentence);
    e->msg = e->prev = NULL, e->msg_len = 0;
    path_tokens(e, s, len);
    code_spans(e, s, len);
}

/* "Tool NAME (id): output": the first line that names an error is one; otherwise a success
 * resolves the tool's open error. Paths it lists are worth less than named ones. */
static void on_tool(struct ex *e, const char *s, size_t len)
{
    const char *colon = memchr(s, ':', len);
    const char *paren = memchr(s, '(', len);
    size_t nl = paren && paren < s + len ? (size_t)(paren - s - 5) : 0;
    while (nl && s[5 + nl - 1] == ' ')
        nl--;
    char tool[128];
    snprintf(tool, sizeof tool, "%.*s", (int)(nl < 120 ? nl : 120), s + 5);
    const char *body = colon ? colon + 1 : s + len;
    size_t blen = (size_t)(s + len - body);
    while (blen && *body == ' ')
        body++, blen--;
    size_t st = 0;
    int found = 0;
    for (size_t i = 0; i <= blen && !found; i++) {
        if (i < blen && body[i] != '\n')
            continue;
        if (i > st && has_word(body + st, i - st, error_words)) {
            struct mn_buf b = MN_BUF_INIT;
            if (mn__buf_addf(&b, "%s: ", tool) || mn__buf_add(&b, body + st, clip(body + st, i - st)))
                e->oom = 1;
            else
                add_item(e, S_ERRORS, b.data, b.len, 1);
            mn__buf_release(&b);
            found = 1;
        }
        st = i + 1;
    }
    if (!found && blen) {
        size_t first = 0;
        while (first < blen && body[first] != '\n')
            first++;
        resolve_tool_error(e, tool, body, first);
    }
    e->in_tool = 1;
    path_tokens(e, body, blen < 4000 ? blen : 4000);
    e->in_tool = 0;
}

/* One entry of NEW_TURNS ("User: …", "Tool x (id): …", …), continuation lines included. */
static void on_entry(struct ex *e, struct turn *t, const char *s, size_t len)
{
    shapes_doc(&e->df, s, len);
    if (len >= 6 && strncmp(s, "User: ", 6) == 0)
        on_user(e, t, s + 6, len - 6);
    else if (len >= 17 && strncmp(s, "Assistant calls: ", 17) == 0)
        on_calls(e, s + 17, len - 17);
    else if (len >= 11 && strncmp(s, "Assistant: ", 11) == 0)
        on_assistant(e, t, s + 11, len - 11);
    else if (len >= 5 && strncmp(s, "Tool ", 5) == 0)
        on_tool(e, s, len);
    else if (len >= 8 && strncmp(s, "System: ", 8) == 0)
        add_item(e, S_CONSTRAINTS, s + 8, clip(s + 8, len - 8), 1);
}

/* Items of an existing summary in this file's format (older section names included); other
 * text becomes facts. */
static void parse_existing(struct ex *e, const char *s, size_t len)
{
    int sec = S_FACTS;
    size_t st = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != '\n')
            continue;
        const char *line = s + st;
        size_t n = i - st;
        st = i + 1;
        if (!n)
            continue;
        if (n > 6 && strncmp(line, "Goal: ", 6) == 0) {
            free(e->goal); /* an acknowledgement taken for a goal by an older version is none */
            e->goal = is_ack(line + 6, n - 6) ? NULL : dup_n(e, line + 6, n - 6);
            continue;
        }
        if (n > strlen(LEFT_OUT) && strncmp(line, LEFT_OUT, strlen(LEFT_OUT)) == 0) {
            long k = strtol(line + strlen(LEFT_OUT), NULL, 10);
            if (k > 0 && e->left_out <= LONG_MAX - k)
                e->left_out += k;
            continue;
        }
        int header = -1;
        for (int k = 0; k < N_SECTIONS; k++) {
            size_t hl = strlen(section_names[k]);
            if (n > hl && strncmp(line, section_names[k], hl) == 0 && line[hl] == ':')
                header = k;
        }
        if (header >= FIRST_INLINE) { /* "Files: a, b" / "Tools: x ×3, y" */
            const char *p = line + strlen(section_names[header]) + 1, *end = line + n;
            while (p < end) {
                while (p < end && (*p == ' ' || *p == ','))
                    p++;
                const char *q = p;
                while (q < end && *q != ',')
                    q++;
                const char *x = header == S_TOOLS ? strstr(p, " ×") : NULL;
                long count = 1;
                size_t il = (size_t)(q - p);
                if (x && x < q) {
                    count = strtol(x + 3, NULL, 10);
                    il = (size_t)(x - p);
                }
                add_item(e, header, p, il, count > 0 ? count : 1);
                p = q;
            }
            continue;
        }
        if (header >= 0) {
            sec = header;
            continue;
        }
        if (n > 2 && line[0] == '-' && line[1] == ' ')
            add_item(e, sec, line + 2, n - 2, 1);
        else
            add_item(e, S_FACTS, line, clip(line, n), 1);
    }
}

/* Render order inside a section: items matching the instructions first, then oldest first. */
static int render_order(const struct item *a, const struct item *b)
{
    if (a->focus != b->focus)
        return b->focus - a->focus;
    return a->age < b->age ? -1 : a->age > b->age;
}

static int cmp_render(const void *x, const void *y)
{
    const struct item *a = *(const struct item *const *)x, *b = *(const struct item *const *)y;
    if (a->sec != b->sec)
        return a->sec - b->sec;
    return render_order(a, b);
}

static char *render(const struct ex *e, int64_t cap_tokens)
{
    struct mn_buf b = MN_BUF_INIT;
    const struct item **order = malloc((e->n ? e->n : 1) * sizeof *order);
    if (!order)
        return NULL;
    for (size_t i = 0; i < e->n; i++)
        order[i] = &e->items[i];
    if (e->n)
        qsort(order, e->n, sizeof *order, cmp_render);
    int bad = 0;
    if (e->goal)
        bad |= mn__buf_addf(&b, "Goal: %s\n", e->goal) != MN_OK;
    for (size_t i = 0; i < e->n; i++) {
        const struct item *it = order[i];
        int first = i == 0 || order[i - 1]->sec != it->sec;
        int last = i + 1 == e->n || order[i + 1]->sec != it->sec;
        if (it->sec < FIRST_INLINE) {
            if (first)
                bad |= mn__buf_addf(&b, "%s:\n", section_names[it->sec]) != MN_OK;
            bad |= mn__buf_addf(&b, "- %s\n", it->text) != MN_OK;
            continue;
        }
        if (first)
            bad |= mn__buf_addf(&b, "%s: ", section_names[it->sec]) != MN_OK;
        bad |= mn__buf_addf(&b, "%s%s", first ? "" : ", ", it->text) != MN_OK;
        if (it->sec == S_TOOLS && it->count > 1)
            bad |= mn__buf_addf(&b, " ×%ld", it->count) != MN_OK;
        if (last)
            bad |= mn__buf_addc(&b, '\n') != MN_OK;
    }
    if (e->left_out)
        bad |= mn__buf_addf(&b, LEFT_OUT "%ld older, less specific item%s, to stay within %lld tokens\n", e->left_out,
                           e->left_out == 1 ? "" : "s", (long long)cap_tokens) != MN_OK;
    free(order);
    if (bad) {
        mn__buf_release(&b);
        return NULL;
    }
    if (b.len && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
    return mn__buf_detach(&b, NULL);
}

/* Cut order: lowest score first, then oldest. */
static int cmp_cut(const void *x, const void *y)
{
    const struct item *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    return a->age < b->age ? -1 : a->age > b->age;
}

static int64_t tokens(const mn_tokenizer *tk, const char *s) { return (int64_t)mn__token_count(tk, s, strlen(s)); }

/* The shape of an item: lower case, each run of digits as one '#'. "See notes_3.md, section
 * 12." and "See notes_4.md, section 7." share one. */
static char *skeleton(const char *s)
{
    char *out = malloc(strlen(s) + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = s; *p; p++) {
        if (isdigit((unsigned char)*p)) {
            while (isdigit((unsigned char)p[1]))
                p++;
            *o++ = '#';
        } else
            *o++ = (char)tolower((unsigned char)*p);
    }
    *o = '\0';
    return out;
}

/* Items of one section that share their shape with TEMPLATE_MIN - 1 others or more are the
 * output of a routine (listings, generated replies, "see file N"): each says little the others do
 * not, so they go before items stated once, whatever their numbers and paths. */
#define TEMPLATE_MIN 3
#define TEMPLATE_PENALTY 6
static void penalise_templates(struct ex *e)
{
    char **sk = calloc(e->n ? e->n : 1, sizeof *sk);
    if (!sk) {
        e->oom = 1;
        return;
    }
    for (size_t i = 0; i < e->n; i++)
        if (!(sk[i] = skeleton(e->items[i].text)))
            e->oom = 1;
    for (size_t i = 0; i < e->n && !e->oom; i++) {
        int same = 0;
        for (size_t j = 0; j < e->n && same < TEMPLATE_MIN; j++)
            same += e->items[j].sec == e->items[i].sec && strcmp(sk[i], sk[j]) == 0;
        if (same >= TEMPLATE_MIN)
            e->items[i].score -= TEMPLATE_PENALTY;
    }
    for (size_t i = 0; i < e->n; i++)
        free(sk[i]);
    free(sk);
}

/* ---- repetition: filler and duplicates ------------------------------------------------------ */

/* Words said in many messages are the conversation's filler or its running topic: they tell one
 * item from another no more than "the" does. An item made mostly of such words (two thirds or
 * more, numbers in a common place like "turn 9" included) that names nothing rare is filler —
 * one of a run of near-identical messages — and is not listed; other items lose points in
 * proportion to their common words. So repeating words lowers an item's worth; what is said
 * once (a path, a version, a decision) keeps it. Counted over the messages of the new turns and
 * the items of the existing summary, so a short fold still sees the run it is part of. */
#define COMMON_MIN_DOCS 5 /* a word in this many documents or more … */
#define COMMON_SHARE 10   /* … and in 1/COMMON_SHARE of them, is common */
#define COMMON_PENALTY 4  /* points off an item all of whose words are common, in proportion */

static int is_text(const struct item *it) { return it->sec < FIRST_INLINE; }

/* Takes points off `it` for its common words; returns whether it is filler. An item that
 * matches the instructions is never filler. */
static int weigh_repetition(struct item *it, const struct shapes *m, unsigned common)
{
    int counted = 0, n_common = 0, rare_name = 0;
    char w[SHAPE_CHARS];
    const char *p = it->text, *end = it->text + strlen(it->text);
    for (const char *word = p; next_shape(&p, end, w); word = p) {
        if (!*w)
            continue;
        int is_common = shapes_docs(m, w) >= common;
        counted++;
        n_common += is_common;
        while (isspace((unsigned char)*word))
            word++;
        rare_name |= !is_common && word_worth(word, (size_t)(p - word)) >= 2;
    }
    it->score -= counted ? COMMON_PENALTY * n_common / counted : 0;
    return counted && 3 * n_common >= 2 * counted && !rare_name && !it->focus;
}

/* Drops filler items. A run of filler that names things (build ids, files) keeps its newest
 * item per section — the latest state —; one that names nothing ("window shard query (turn
 * 9)") keeps none. Dropped filler is not counted as left out: it was not cut for room. */
static void drop_filler(struct ex *e)
{
    for (size_t i = 0; i < e->n; i++) /* the existing summary's items are documents too */
        if (e->items[i].age < e->new_from)
            shapes_doc(&e->df, e->items[i].text, strlen(e->items[i].text));
    size_t n_docs = e->df.n_docs;
    unsigned common = n_docs / COMMON_SHARE > COMMON_MIN_DOCS ? (unsigned)(n_docs / COMMON_SHARE) : COMMON_MIN_DOCS;
    char *filler = calloc(e->n ? e->n : 1, 1);
    if (!filler) {
        e->oom = 1;
        return;
    }
    for (size_t i = 0; i < e->n; i++)
        filler[i] = is_text(&e->items[i]) && weigh_repetition(&e->items[i], &e->df, common);
    for (int sec = 0; sec < FIRST_INLINE; sec++)
        for (size_t i = e->n; i-- > 0;)
            if (filler[i] && e->items[i].sec == sec && names_thing(e->items[i].text)) {
                filler[i] = 0;
                break;
            }
    for (size_t i = e->n; i-- > 0;)
        if (filler[i])
            item_remove(e, i);
    free(filler);
}

/* Whether needle occurs in hay, letter case aside. */
static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0)
            return 1;
    return 0;
}

/* Whether item a says nothing that item b (another text item; NULL: the goal) does not: the
 * same words (the one of the lighter section, or the older, goes), or words inside b's.
 * Commands stay: a command is worth its own line even when a sentence quotes it. */
static int repeats(const struct ex *e, const struct item *a, const struct item *b)
{
    if (a->sec == S_COMMANDS || (b && (!is_text(b) || a == b)))
        return 0;
    if (!b)
        return e->goal && contains_ci(e->goal, a->text);
    if (strcasecmp(a->text, b->text) == 0) {
        int wa = section_weight[a->sec], wb = section_weight[b->sec];
        return wa < wb || (wa == wb && a->age < b->age);
    }
    return strlen(a->text) < strlen(b->text) && contains_ci(b->text, a->text);
}

/* Dedupes the text items: one line per thing said. */
static void drop_repeats(struct ex *e)
{
    for (size_t i = e->n; i-- > 0;) {
        int drop = is_text(&e->items[i]) && repeats(e, &e->items[i], NULL);
        for (size_t j = 0; j < e->n && !drop; j++)
            drop = is_text(&e->items[i]) && repeats(e, &e->items[i], &e->items[j]);
        if (drop)
            item_remove(e, i);
    }
}

/* Before the cut: filler goes, duplicates go, routine output and repeated words cost points. */
static void rank(struct ex *e)
{
    drop_filler(e);
    drop_repeats(e);
    penalise_templates(e);
}

/* Removes items in cut order until the rendering fits the cap; returns the rendering. */
static char *fit(struct ex *e, const mn_tokenizer *tk, int64_t cap)
{
    char *text = render(e, cap);
    if (!text || cap <= 0)
        return text;
    int64_t total = tokens(tk, text);
    if (total <= cap || e->n == 0)
        return text; /* (no items: the goal alone is over the cap; the caller cuts it) */
    qsort(e->items, e->n, sizeof *e->items, cmp_cut); /* render order does not depend on array order */
    size_t cut = 0;
    while (text && total > cap && cut < e->n) {
        /* drop at least one item, and enough of them to cover the excess (a line's tokens) */
        int64_t excess = total - cap, freed = 0;
        while (cut < e->n && (freed < excess || freed == 0)) {
            freed += tokens(tk, e->items[cut].text) + 2;
            free(e->items[cut].text);
            e->items[cut].text = NULL;
            cut++;
            e->left_out++;
        }
        struct ex view = *e; /* the remaining items */
        view.items = e->items + cut;
        view.n = e->n - cut;
        free(text);
        text = render(&view, cap);
        total = text ? tokens(tk, text) : 0;
    }
    memmove(e->items, e->items + cut, (e->n - cut) * sizeof *e->items);
    e->n -= cut;
    return text;
}

/* Lower-cased words of the instructions of 3 letters and more, a final plural s removed, common
 * words left out. */
static void focus_words(struct ex *e, const char *instructions)
{
    static const char *const stop[] = {"the", "and", "keep", "all", "any", "about", "with", "for", "from", "that",
                                       "this", "what", "focus", "only", "please", "our", "into", "are", "was",
                                       "summary", "summarise", "summarize", "compact", "remember", NULL};
    if (!instructions)
        return;
    for (const char *p = instructions; *p;) {
        while (*p && !is_word_char((unsigned char)*p))
            p++;
        const char *st = p;
        while (*p && (is_word_char((unsigned char)*p) || *p == '-' || *p == '/' || *p == '.'))
            p++;
        size_t n = (size_t)(p - st);
        while (n && (st[n - 1] == '.' || st[n - 1] == '-'))
            n--;
        if (n > 3 && (st[n - 1] == 's' || st[n - 1] == 'S'))
            n--;
        if (n < 3 || n > 64)
            continue;
        char w[65];
        for (size_t k = 0; k < n; k++)
            w[k] = (char)tolower((unsigned char)st[k]);
        w[n] = '\0';
        int skip = 0;
        for (const char *const *s = stop; *s && !skip; s++)
            skip = strcmp(*s, w) == 0;
        if (skip)
            continue;
        char **f = realloc(e->focus, (e->n_focus + 1) * sizeof *f);
        if (!f) {
            e->oom = 1;
            return;
        }
        e->focus = f;
        if (!(e->focus[e->n_focus] = strdup(w))) {
            e->oom = 1;
            return;
        }
        e->n_focus++;
    }
}

char *mn__summarize_extract(const char *shaped, const mn_tokenizer *tk, int64_t cap_tokens, const char *instructions)
{
    struct ex e;
    memset(&e, 0, sizeof e);
    focus_words(&e, instructions);
    const char *ex_begin = strstr(shaped, "=== EXISTING_SUMMARY ===\n");
    const char *ex = ex_begin ? ex_begin + strlen("=== EXISTING_SUMMARY ===\n") : NULL;
    /* the end marker is searched after the begin marker: they share the newline between them */
    const char *ex_end = ex ? strstr(ex - 1, "\n=== END_EXISTING_SUMMARY ===") : NULL;
    if (ex_end && ex_end >= ex) {
        size_t n = (size_t)(ex_end - ex);
        if (!(n == 4 && strncmp(ex, "NONE", 4) == 0))
            parse_existing(&e, ex, n);
    }
    e.new_from = e.clock;
    if (shapes_init(&e.df, strlen(shaped) / 2 + 64))
        e.oom = 1;
    e.turn = 1; /* the new turns may begin inside a user turn */
    const char *turns = strstr(shaped, "=== NEW_TURNS ===\n");
    const char *turns_end = strstr(shaped, "=== END_NEW_TURNS ===");
    struct turn t;
    memset(&t, 0, sizeof t);
    if (turns && turns_end && turns_end > turns) {
        const char *p = turns + strlen("=== NEW_TURNS ===\n");
        const char *entry = NULL;
        while (p < turns_end) {
            const char *nl = memchr(p, '\n', (size_t)(turns_end - p));
            const char *end = nl ? nl : turns_end;
            size_t n = (size_t)(end - p);
            int starts = (n >= 5 && (strncmp(p, "User:", 5) == 0 || strncmp(p, "Tool ", 5) == 0)) ||
                         (n >= 10 && strncmp(p, "Assistant:", 10) == 0) ||
                         (n >= 16 && strncmp(p, "Assistant calls:", 16) == 0) ||
                         (n >= 7 && strncmp(p, "System:", 7) == 0) || (n >= 5 && strncmp(p, "Turn ", 5) == 0) ||
                         n == 0;
            if (starts) {
                if (entry)
                    on_entry(&e, &t, entry, (size_t)(p - entry) - (p > entry && p[-1] == '\n'));
                entry = n && strncmp(p, "Turn ", 5) != 0 ? p : NULL;
            }
            p = end + 1;
        }
        if (entry)
            on_entry(&e, &t, entry, (size_t)(turns_end - entry) - (turns_end > entry && turns_end[-1] == '\n'));
    }
    end_turn(&e, &t);
    if (!e.oom)
        rank(&e);
    char *text = e.oom ? NULL : fit(&e, tk, cap_tokens);
    if (text && cap_tokens > 0 && tokens(tk, text) > cap_tokens) { /* the goal alone is over the cap */
        char *cut = mn__summarize_cap(tk, text, cap_tokens);
        free(text);
        text = cut;
    }
    shapes_release(&e.df);
    free(e.goal);
    for (size_t i = 0; i < e.n; i++)
        free(e.items[i].text);
    free(e.items);
    for (size_t i = 0; i < e.n_focus; i++)
        free(e.focus[i]);
    free(e.focus);
    return text;
}

static mn_status extractive_call(mn_summarizer *s, const char *shaped, int64_t cap, const mn_sum_input *in,
                                 mn_sum_result *out)
{
    (void)s;
    out->text = mn__summarize_extract(shaped, in->tk, cap, in->instructions);
    if (!out->text)
        return mn__nomem();
    if (!*out->text) {
        free(out->text);
        if (!(out->text = strdup("(no details to keep)")))
            return mn__nomem();
    }
    return MN_OK;
}

static void extractive_free(mn_summarizer *s) { mn__summarizer_free(s); }

const struct mn_summarizer_vt mn_summarizer_extractive_vt = {"extractive", extractive_call, extractive_free};
