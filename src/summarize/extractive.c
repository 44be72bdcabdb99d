/*
 * extractive.c — the `extractive` summariser: a summary with no model. It reads the shaped input
 * (summarize.c), carries the existing summary's items over, and adds from the new turns the goal,
 * finished work, decisions, errors with their resolutions, open tasks, numbers, file paths and
 * tool names. Over the token cap it drops the oldest items of the least important sections
 * first. Deterministic: the same input gives the same bytes.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summarize/summarize.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

#define ITEM_CHARS 160

enum { S_DONE, S_DECISIONS, S_ERRORS, S_TASKS, S_FACTS, S_FILES, S_TOOLS, N_SECTIONS };
static const char *const section_names[N_SECTIONS] = {"Done", "Decisions", "Errors and fixes", "Open tasks",
                                                      "Facts", "Files", "Tools"};
static const size_t section_max[N_SECTIONS] = {10, 12, 10, 8, 8, 30, 20};
/* the order in which items go when over the cap: least important first */
static const int drop_order[N_SECTIONS] = {S_FACTS, S_DECISIONS, S_DONE, S_FILES, S_ERRORS, S_TOOLS, S_TASKS};

struct list {
    char **items;
    long *counts; /* tools: calls seen */
    size_t n, cap;
};

struct ex {
    char *goal;
    struct list s[N_SECTIONS];
    int oom;
    char *last_tool; /* tool of the previous "Tool" entry */
};

static void list_release(struct list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->items[i]);
    free(l->items);
    free(l->counts);
}

static void list_remove(struct list *l, size_t i)
{
    free(l->items[i]);
    memmove(l->items + i, l->items + i + 1, (l->n - i - 1) * sizeof *l->items);
    memmove(l->counts + i, l->counts + i + 1, (l->n - i - 1) * sizeof *l->counts);
    l->n--;
}

/* Adds text (a copy of s[0..len), trimmed); an equal item moves to the end. Keeps the newest max. */
static void add_item(struct ex *e, int sec, const char *s, size_t len, long count)
{
    struct list *l = &e->s[sec];
    while (len && isspace((unsigned char)*s))
        s++, len--;
    while (len && (isspace((unsigned char)s[len - 1]) || s[len - 1] == '-'))
        len--;
    if (!len)
        return;
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->items[i]) == len && memcmp(l->items[i], s, len) == 0) {
            if (__builtin_add_overflow(count, l->counts[i], &count))
                count = LONG_MAX; /* counts come from summaries the model wrote: saturate */
            list_remove(l, i);
            break;
        }
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **items = realloc(l->items, cap * sizeof *items);
        long *counts = items ? realloc(l->counts, cap * sizeof *counts) : NULL;
        if (items)
            l->items = items;
        if (!items || !counts) {
            e->oom = 1;
            return;
        }
        l->counts = counts;
        l->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) {
        e->oom = 1;
        return;
    }
    memcpy(copy, s, len);
    copy[len] = '\0';
    l->items[l->n] = copy;
    l->counts[l->n++] = count;
    while (l->n > section_max[sec])
        list_remove(l, 0);
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

static int has_word(const char *s, size_t len, const char *const *words)
{
    char low[ITEM_CHARS * 4 + 1];
    size_t n = len < sizeof low - 1 ? len : sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    low[n] = '\0';
    for (; *words; words++)
        if (strstr(low, *words))
            return 1;
    return 0;
}

static const char *const error_words[] = {"error", "fail", "exception", "traceback", "panic", "not found",
                                          "denied", "cannot", "refused", "segmentation", NULL};
static const char *const done_words[] = {"done", "fixed", "pass", "completed", "implemented", "added", "updated",
                                         "works now", "resolved", "merged", "created", "applied", NULL};
static const char *const decision_words[] = {"decid", "i will", "we will", "let's", "going to", "chose", "instead",
                                             "switch", "plan:", "use ", "should", "must", "always", "never", NULL};
static const char *const task_words[] = {"todo", "next step", "remaining", "still need", "later", "follow up",
                                         "follow-up", NULL};

static int has_digit(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (isdigit((unsigned char)s[i]))
            return 1;
    return 0;
}

/* Calls fn on each sentence of s[0..len). */
static void sentences(struct ex *e, const char *s, size_t len, void (*fn)(struct ex *, const char *, size_t))
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        int end = i == len || s[i] == '\n' ||
                  ((s[i] == '.' || s[i] == '!' || s[i] == '?') && (i + 1 == len || s[i + 1] == ' ' || s[i + 1] == '\n'));
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
        int slash = memchr(tok, '/', n) != NULL, alpha = 0, ok = 1;
        for (size_t k = 0; k < n; k++) {
            unsigned char c = (unsigned char)tok[k];
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
        if (ok && alpha && ((slash && n > 2 && !(n == 1)) || ext) && !(slash && tok[0] == '/' && n < 3))
            add_item(e, S_FILES, tok, n, 1);
    }
}

static void on_assistant_sentence(struct ex *e, const char *s, size_t len)
{
    if (has_word(s, len, task_words))
        add_item(e, S_TASKS, s, clip(s, len), 1);
    else if (has_word(s, len, decision_words))
        add_item(e, S_DECISIONS, s, clip(s, len), 1);
    else if (has_word(s, len, done_words))
        add_item(e, S_DONE, s, clip(s, len), 1);
    else if (has_digit(s, len))
        add_item(e, S_FACTS, s, clip(s, len), 1);
}

static void on_user_sentence(struct ex *e, const char *s, size_t len)
{
    if (has_word(s, len, decision_words))
        add_item(e, S_DECISIONS, s, clip(s, len), 1);
    else if (has_digit(s, len))
        add_item(e, S_FACTS, s, clip(s, len), 1);
}

/* Marks the newest unresolved error of `tool` as resolved by `line`. */
static void resolve_error(struct ex *e, const char *tool, const char *line, size_t len)
{
    struct list *l = &e->s[S_ERRORS];
    size_t tl = strlen(tool);
    for (size_t i = l->n; i-- > 0;) {
        if (strncmp(l->items[i], tool, tl) != 0 || l->items[i][tl] != ':' || strstr(l->items[i], " → resolved"))
            continue;
        struct mn_buf b = MN_BUF_INIT;
        if (mn_buf_adds(&b, l->items[i]) || mn_buf_adds(&b, " → resolved: ") || mn_buf_add(&b, line, clip(line, len) / 2)) {
            e->oom = 1;
            mn_buf_release(&b);
            return;
        }
        size_t blen;
        char *text = mn_buf_detach(&b, &blen);
        if (!text) {
            e->oom = 1;
            return;
        }
        free(l->items[i]);
        l->items[i] = text;
        return;
    }
}

struct turn {
    char *request;   /* the user's first sentence */
    int completed;
};

static void end_turn(struct ex *e, struct turn *t)
{
    if (t->request)
        add_item(e, t->completed ? S_DONE : S_TASKS, t->request, strlen(t->request), 1);
    free(t->request);
    t->request = NULL;
    t->completed = 0;
}

/* One entry of NEW_TURNS ("User: …", "Tool x (id): …", …), continuation lines included. */
static void on_entry(struct ex *e, struct turn *t, const char *s, size_t len)
{
    if (len >= 6 && strncmp(s, "User: ", 6) == 0) {
        s += 6, len -= 6;
        end_turn(e, t);
        size_t first = 0;
        while (first < len && s[first] != '\n' && !(s[first] == '?' || (s[first] == '.' && first + 1 < len && s[first + 1] == ' ')))
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
        t->request = malloc(n + 1);
        if (!t->request)
            e->oom = 1;
        else
            memcpy(t->request, s, n), t->request[n] = '\0';
        sentences(e, s + first, len - first, on_user_sentence); /* the request itself is a task */
        path_tokens(e, s, len);
    } else if (len >= 17 && strncmp(s, "Assistant calls: ", 17) == 0) {
        s += 17, len -= 17;
        size_t n = 0;
        while (n < len && s[n] != '(')
            n++;
        add_item(e, S_TOOLS, s, n, 1);
        path_tokens(e, s + n, len - n);
    } else if (len >= 11 && strncmp(s, "Assistant: ", 11) == 0) {
        s += 11, len -= 11;
        if (has_word(s, len, done_words))
            t->completed = 1;
        sentences(e, s, len, on_assistant_sentence);
        path_tokens(e, s, len);
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
        path_tokens(e, body, blen < 4000 ? blen : 4000);
    } else if (len >= 8 && strncmp(s, "System: ", 8) == 0) {
        s += 8, len -= 8;
        add_item(e, S_DECISIONS, s, clip(s, len), 1);
    }
}

/* Items of an existing summary in this file's format; other text becomes facts. */
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
        int header = -1;
        for (int k = 0; k < N_SECTIONS; k++) {
            size_t hl = strlen(section_names[k]);
            if (n > hl && strncmp(line, section_names[k], hl) == 0 && line[hl] == ':')
                header = k;
        }
        if (header == S_FILES || header == S_TOOLS) { /* "Files: a, b" / "Tools: x ×3, y" */
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

static char *render(const struct ex *e)
{
    struct mn_buf b = MN_BUF_INIT;
    int bad = 0;
    if (e->goal)
        bad |= mn_buf_addf(&b, "Goal: %s\n", e->goal) != MN_OK;
    for (int k = 0; k < S_FILES; k++) {
        if (!e->s[k].n)
            continue;
        bad |= mn_buf_addf(&b, "%s:\n", section_names[k]) != MN_OK;
        for (size_t i = 0; i < e->s[k].n; i++)
            bad |= mn_buf_addf(&b, "- %s\n", e->s[k].items[i]) != MN_OK;
    }
    for (int k = S_FILES; k <= S_TOOLS; k++) {
        if (!e->s[k].n)
            continue;
        bad |= mn_buf_addf(&b, "%s: ", section_names[k]) != MN_OK;
        for (size_t i = 0; i < e->s[k].n; i++) {
            bad |= mn_buf_addf(&b, "%s%s", i ? ", " : "", e->s[k].items[i]) != MN_OK;
            if (k == S_TOOLS && e->s[k].counts[i] > 1)
                bad |= mn_buf_addf(&b, " ×%ld", e->s[k].counts[i]) != MN_OK;
        }
        bad |= mn_buf_addc(&b, '\n') != MN_OK;
    }
    if (bad) {
        mn_buf_release(&b);
        return NULL;
    }
    if (b.len && b.data[b.len - 1] == '\n')
        b.data[--b.len] = '\0';
    return mn_buf_detach(&b, NULL);
}

char *mn_summarize_extract(const char *shaped, const mn_tokenizer *tk, int64_t cap_tokens)
{
    struct ex e;
    memset(&e, 0, sizeof e);
    const char *ex_begin = strstr(shaped, "=== EXISTING_SUMMARY ===\n");
    const char *ex = ex_begin ? ex_begin + strlen("=== EXISTING_SUMMARY ===\n") : NULL;
    /* the end marker is searched after the begin marker: they share the newline between them */
    const char *ex_end = ex ? strstr(ex - 1, "\n=== END_EXISTING_SUMMARY ===") : NULL;
    if (ex_end && ex_end >= ex) {
        size_t n = (size_t)(ex_end - ex);
        if (!(n == 4 && strncmp(ex, "NONE", 4) == 0))
            parse_existing(&e, ex, n);
    }
    const char *turns = strstr(shaped, "=== NEW_TURNS ===\n");
    const char *turns_end = strstr(shaped, "=== END_NEW_TURNS ===");
    struct turn t = {NULL, 0};
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
    char *text = e.oom ? NULL : render(&e);
    /* over the cap: drop the oldest items of the least important sections first */
    for (int d = 0; text && cap_tokens > 0 && (int64_t)mn_token_count(tk, text, strlen(text)) > cap_tokens;) {
        while (d < N_SECTIONS && e.s[drop_order[d]].n == 0)
            d++;
        if (d == N_SECTIONS)
            break;
        list_remove(&e.s[drop_order[d]], 0);
        free(text);
        text = render(&e);
    }
    if (text && cap_tokens > 0 && (int64_t)mn_token_count(tk, text, strlen(text)) > cap_tokens) {
        char *cut = mn_summarize_cap(tk, text, cap_tokens);
        free(text);
        text = cut;
    }
    free(e.goal);
    for (int k = 0; k < N_SECTIONS; k++)
        list_release(&e.s[k]);
    return text;
}

static mn_status extractive_call(mn_summarizer *s, const char *shaped, int64_t cap, const mn_tokenizer *tk,
                                 mn_sum_result *out)
{
    out->text = mn_summarize_extract(shaped, tk, cap);
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
