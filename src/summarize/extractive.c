/*
 * extractive.c — the `extractive` summariser: a summary with no model. It reads the shaped input
 * (summarize.c), carries the existing summary's items over (anchoring), and adds from the new
 * turns what an agent needs to continue: the goal, the user's constraints and preferences,
 * decisions, errors with their fixes, finished work, open tasks (requests not yet done; a
 * question that got an answer is not one), facts with numbers, versions or identifiers,
 * commands, file paths and tool names. No section has a silent cap: when the summary is over
 * the token cap, items go in order of least specific first, oldest first among equals (items
 * matching the compaction's instructions last), and the summary says how many were left out.
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
    int score;  /* section weight + specificity + 100 × focus */
    int focus;  /* match with the instructions (focus_of) */
    int sec;
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
    char **focus; /* instruction words, lower case */
    size_t n_focus;
};

static void item_remove(struct ex *e, size_t i)
{
    free(e->items[i].text);
    memmove(e->items + i, e->items + i + 1, (e->n - i - 1) * sizeof *e->items);
    e->n--;
}

static int is_word_char(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

/* Specificity: what makes an item hard to rediscover — paths, identifiers, versions, numbers,
 * code spans. */
static int specificity(const char *s)
{
    int score = 0;
    for (const char *p = s; *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        const char *st = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t n = (size_t)(p - st);
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
            score += 3; /* a path or URL */
        else if (digits && (alpha || marks))
            score += 2; /* an identifier or a version */
        else if (digits)
            score += 1; /* a number */
        else if (alpha && (marks > 1 || upper) && n > 3)
            score += 1; /* snake_case, camelCase */
        if (memchr(st, '`', n))
            score += 1;
    }
    return score > 12 ? 12 : score;
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
    int score = section_weight[sec] + specificity(copy) + 100 * focus;
    if (sec == S_FILES && e->in_tool)
        score -= 2;
    if (sec == S_TOOLS) /* a tool the agent keeps calling */
        score += count < 10 ? (int)count : 10;
    e->items[e->n++] = (struct item){copy, count, e->clock++, score, focus, sec};
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
                                             " go with", "settled on", " agreed", " picked", NULL};
static const char *const constraint_words[] = {"never", "always", "don't", "do not", " must", "prefer", "avoid",
                                               " only ", "no more than", "at most", "at least", "without",
                                               "make sure", "budget", " should", "need to", "i want", "i'd like",
                                               "not allowed", "required", "deadline", "by friday", NULL};
static const char *const task_words[] = {"todo", "to do:", "next step", "remaining", "still need", "later",
                                         "follow up", "follow-up", "open question", "pending", "not yet", NULL};
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

static int resolve_error(struct ex *e, const char *tool, const char *line, size_t len);

static void on_assistant_sentence(struct ex *e, const char *s, size_t len)
{
    size_t n = clip(s, len);
    /* "I fixed it by …" after an error of these turns: the error's fix, kept with it */
    if (has_word(s, len, fix_words) && !has_word(s, len, task_words) && resolve_error(e, NULL, s, len))
        return;
    if (has_word(s, len, task_words))
        add_item(e, S_TASKS, s, n, 1);
    else if (has_word(s, len, error_words))
        add_item(e, S_ERRORS, s, n, 1);
    else if (has_word(s, len, decision_words))
        add_item(e, S_DECISIONS, s, n, 1);
    else if (has_word(s, len, done_words))
        add_item(e, S_DONE, s, n, 1);
    else if (has_digit(s, len) || specificity(s) >= 3)
        add_item(e, S_FACTS, s, n, 1);
}

static void on_user_sentence(struct ex *e, const char *s, size_t len)
{
    size_t n = clip(s, len);
    if (has_word(s, len, constraint_words))
        add_item(e, S_CONSTRAINTS, s, n, 1);
    else if (has_word(s, len, error_words))
        add_item(e, S_ERRORS, s, n, 1);
    else if (has_word(s, len, decision_words))
        add_item(e, S_DECISIONS, s, n, 1);
    else if (has_word(s, len, task_words))
        add_item(e, S_TASKS, s, n, 1);
    else if (has_digit(s, len) || specificity(s) >= 3)
        add_item(e, S_FACTS, s, n, 1);
}

/* Marks the newest unresolved error of `tool` (NULL: of any source, seen in these new turns)
 * as resolved by `line`; returns whether one was. */
static int resolve_error(struct ex *e, const char *tool, const char *line, size_t len)
{
    size_t tl = tool ? strlen(tool) : 0;
    for (size_t i = e->n; i-- > 0;) {
        struct item *it = &e->items[i];
        if (it->sec != S_ERRORS || strstr(it->text, " → resolved"))
            continue;
        if (tool ? strncmp(it->text, tool, tl) != 0 || it->text[tl] != ':' : it->age < e->new_from)
            continue;
        size_t keep = clip(line, len);
        if (keep > ITEM_CHARS / 2) { /* the fix's first line, shortened */
            keep = ITEM_CHARS / 2;
            while (keep > 0 && ((unsigned char)line[keep] & 0xC0) == 0x80)
                keep--;
        }
        struct mn_buf b = MN_BUF_INIT;
        if (mn_buf_adds(&b, it->text) || mn_buf_adds(&b, " → resolved: ") || mn_buf_add(&b, line, keep)) {
            e->oom = 1;
            mn_buf_release(&b);
            return 1;
        }
        char *text = mn_buf_detach(&b, NULL);
        if (!text) {
            e->oom = 1;
            return 1;
        }
        free(it->text);
        it->text = text;
        it->score += 2; /* an error with its fix */
        it->focus = focus_of(e, text, S_ERRORS);
        return 1;
    }
    return 0;
}

struct turn {
    char *request;  /* the user's first sentence */
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

static int is_question(const char *s, size_t len)
{
    return (len && s[len - 1] == '?') || starts_with_any(s, len, question_starts);
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

/* One entry of NEW_TURNS ("User: …", "Tool x (id): …", …), continuation lines included. */
static void on_entry(struct ex *e, struct turn *t, const char *s, size_t len)
{
    if (len >= 6 && strncmp(s, "User: ", 6) == 0) {
        s += 6, len -= 6;
        end_turn(e, t);
        size_t first = 0;
        while (first < len && s[first] != '\n' &&
               !(s[first] == '?' || ((s[first] == '.' || s[first] == '!') && first + 1 < len && s[first + 1] == ' ')))
            first++;
        if (first < len && s[first] != '\n')
            first++;
        size_t n = clip(s, first);
        if (!e->goal && n) {
            e->goal = malloc(n + 1);
            if (!e->goal)
                e->oom = 1;
            else
                memcpy(e->goal, s, n), e->goal[n] = '\0';
        }
        if (has_word(s, n, constraint_words) || has_word(s, n, decision_words)) /* a rule, not a request */
            on_user_sentence(e, s, n);
        else if (starts_with_any(s, n, ack_starts)) /* "Thanks, 3 more to go": no task */
            on_user_sentence(e, s, n);
        else if (n) {
            t->request = malloc(n + 1);
            if (!t->request)
                e->oom = 1;
            else
                memcpy(t->request, s, n), t->request[n] = '\0';
            t->question = is_question(s, n);
        }
        sentences(e, s + first, len - first, on_user_sentence);
        path_tokens(e, s, len);
        code_spans(e, s, len);
    } else if (len >= 17 && strncmp(s, "Assistant calls: ", 17) == 0) {
        s += 17, len -= 17;
        size_t n = 0;
        while (n < len && s[n] != '(')
            n++;
        add_item(e, S_TOOLS, s, n, 1);
        path_tokens(e, s + n, len - n);
        call_commands(e, s + n, len - n);
    } else if (len >= 11 && strncmp(s, "Assistant: ", 11) == 0) {
        s += 11, len -= 11;
        t->answered = 1;
        if (has_word(s, len, done_words))
            t->completed = 1;
        sentences(e, s, len, on_assistant_sentence);
        path_tokens(e, s, len);
        code_spans(e, s, len);
    } else if (len >= 5 && strncmp(s, "Tool ", 5) == 0) {
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
        /* errors: the first line that names one; otherwise a success resolves an earlier error */
        size_t st = 0;
        int found = 0;
        for (size_t i = 0; i <= blen && !found; i++) {
            if (i < blen && body[i] != '\n')
                continue;
            if (i > st && has_word(body + st, i - st, error_words)) {
                struct mn_buf b = MN_BUF_INIT;
                if (mn_buf_addf(&b, "%s: ", tool) || mn_buf_add(&b, body + st, clip(body + st, i - st)))
                    e->oom = 1;
                else
                    add_item(e, S_ERRORS, b.data, b.len, 1);
                mn_buf_release(&b);
                found = 1;
            }
            st = i + 1;
        }
        if (!found && blen) {
            size_t first = 0;
            while (first < blen && body[first] != '\n')
                first++;
            resolve_error(e, tool, body, first);
        }
        e->in_tool = 1;
        path_tokens(e, body, blen < 4000 ? blen : 4000);
        e->in_tool = 0;
    } else if (len >= 8 && strncmp(s, "System: ", 8) == 0) {
        s += 8, len -= 8;
        add_item(e, S_CONSTRAINTS, s, clip(s, len), 1);
    }
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
            free(e->goal);
            e->goal = malloc(n - 5);
            if (!e->goal)
                e->oom = 1;
            else
                memcpy(e->goal, line + 6, n - 6), e->goal[n - 6] = '\0';
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
        bad |= mn_buf_addf(&b, "Goal: %s\n", e->goal) != MN_OK;
    for (size_t i = 0; i < e->n; i++) {
        const struct item *it = order[i];
        int first = i == 0 || order[i - 1]->sec != it->sec;
        int last = i + 1 == e->n || order[i + 1]->sec != it->sec;
        if (it->sec < FIRST_INLINE) {
            if (first)
                bad |= mn_buf_addf(&b, "%s:\n", section_names[it->sec]) != MN_OK;
            bad |= mn_buf_addf(&b, "- %s\n", it->text) != MN_OK;
            continue;
        }
        if (first)
            bad |= mn_buf_addf(&b, "%s: ", section_names[it->sec]) != MN_OK;
        bad |= mn_buf_addf(&b, "%s%s", first ? "" : ", ", it->text) != MN_OK;
        if (it->sec == S_TOOLS && it->count > 1)
            bad |= mn_buf_addf(&b, " ×%ld", it->count) != MN_OK;
        if (last)
            bad |= mn_buf_addc(&b, '\n') != MN_OK;
    }
    if (e->left_out)
        bad |= mn_buf_addf(&b, LEFT_OUT "%ld older, less specific item%s, to stay within %lld tokens\n", e->left_out,
                           e->left_out == 1 ? "" : "s", (long long)cap_tokens) != MN_OK;
    free(order);
    if (bad) {
        mn_buf_release(&b);
        return NULL;
    }
    if (b.len && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
    return mn_buf_detach(&b, NULL);
}

/* Cut order: lowest score first, then oldest. */
static int cmp_cut(const void *x, const void *y)
{
    const struct item *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    return a->age < b->age ? -1 : a->age > b->age;
}

static int64_t tokens(const mn_tokenizer *tk, const char *s) { return (int64_t)mn_token_count(tk, s, strlen(s)); }

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

/* Removes items in cut order until the rendering fits the cap; returns the rendering. */
static char *fit(struct ex *e, const mn_tokenizer *tk, int64_t cap)
{
    char *text = render(e, cap);
    if (!text || cap <= 0)
        return text;
    int64_t total = tokens(tk, text);
    if (total <= cap || e->n == 0)
        return text; /* (no items: the goal alone is over the cap; the caller cuts it) */
    penalise_templates(e);
    if (e->oom) {
        free(text);
        return NULL;
    }
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

char *mn_summarize_extract(const char *shaped, const mn_tokenizer *tk, int64_t cap_tokens, const char *instructions)
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
    char *text = e.oom ? NULL : fit(&e, tk, cap_tokens);
    if (text && cap_tokens > 0 && tokens(tk, text) > cap_tokens) { /* the goal alone is over the cap */
        char *cut = mn_summarize_cap(tk, text, cap_tokens);
        free(text);
        text = cut;
    }
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
    out->text = mn_summarize_extract(shaped, in->tk, cap, in->instructions);
    if (!out->text)
        return mn__nomem();
    if (!*out->text) {
        free(out->text);
        if (!(out->text = strdup("(no details to keep)")))
            return mn__nomem();
    }
    return MN_OK;
}

static void extractive_free(mn_summarizer *s) { mn_summarizer_free(s); }

const struct mn_summarizer_vt mn_summarizer_extractive_vt = {"extractive", extractive_call, extractive_free};
