/*
 * memblock.c — long-term memories in a context (docs/context.md "Memories"): the block of
 * memories placed right after the system prompt as one system message, and fitting it into the
 * room a build leaves. Pure: it reads no store. The invariant: the block's cost (its tokens,
 * counted whole with the context's tokenizer, plus the framing of one message) never exceeds the
 * room given to mn__memblock_fit; relevant memories leave first (lowest score first), then the
 * memory blocks are cut (the last one first) and, when not even a cut fits, left out.
 */
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/utf8.h"
#include "util/banned.h"

#define CUT_TRIES 6 /* attempts to fit a cut text when tokenisation at the seams differs */

static const char HEAD[] = "LONG-TERM MEMORY (known from earlier conversations; [memory id] kind: text):\n";
static const char PINNED[] = "Memory blocks:\n";
static const char RELEVANT[] = "Relevant memories:\n";

static int64_t count(const mn_tokenizer *tk, const char *s, size_t len) { return (int64_t)mn__token_count(tk, s, len); }

/* "[id] kind: text\n" of item it. */
static mn_status add_line(struct mn_buf *b, const mn_memblock_item *it)
{
    return mn__buf_addf(b, "[%s] %s: %s\n", it->m->id, it->m->kind, it->text);
}

/* The longest start of text whose tokens, with "…" after it, are at most max; NULL when
 * nothing fits (or on OOM: the caller treats both as "left out"). */
static char *keep_start(const mn_tokenizer *tk, const char *text, int64_t max)
{
    size_t len = strlen(text), chars = mn__utf8_chars(text, len);
    if (max <= 1)
        return NULL;
    size_t lo = 0, hi = chars; /* the largest prefix (in characters) that fits */
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (count(tk, text, mn__utf8_prefix(text, len, mid)) + 1 <= max)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == 0)
        return NULL;
    struct mn_buf b = MN_BUF_INIT;
    if (mn__buf_add(&b, text, mn__utf8_prefix(text, len, lo)) || mn__buf_adds(&b, "…")) {
        mn__buf_release(&b);
        return NULL;
    }
    return mn__buf_detach(&b, NULL);
}

/* Cuts it's text so that its own tokens are at most max (tries again when the seam counts
 * differently); it->in is cleared when nothing fits. */
static mn_status cut_to(const mn_tokenizer *tk, mn_memblock_item *it, int64_t max, const char *why)
{
    const char *src = it->m->text;
    for (int i = 0; i < CUT_TRIES; i++) {
        char *t = keep_start(tk, src, max);
        if (!t)
            break;
        int64_t n = count(tk, t, strlen(t));
        if (n <= max) {
            free(it->text);
            it->text = t;
            it->tokens = n;
            it->cut = 1;
            return MN_OK;
        }
        free(t);
        max -= n - max;
    }
    it->in = 0;
    it->left_out = why;
    return MN_OK;
}

mn_status mn__memblock_init(mn_memblock *b, const mn_tokenizer *tk, const mn_memory *pinned, size_t np,
                           const mn_memory *rel, size_t nr)
{
    memset(b, 0, sizeof *b);
    if (!(b->items = calloc(np + nr + 1, sizeof *b->items)))
        return mn__nomem();
    for (size_t i = 0; i < np + nr; i++) {
        mn_memblock_item *it = &b->items[b->n++];
        it->m = i < np ? &pinned[i] : &rel[i - np];
        it->in = 1;
        if (!(it->text = strdup(it->m->text)))
            return mn__nomem();
        it->tokens = count(tk, it->text, strlen(it->text));
        if (it->m->pinned && it->m->token_cap > 0 && it->tokens > it->m->token_cap) {
            mn_status rc = cut_to(tk, it, it->m->token_cap, "token_cap");
            if (rc)
                return rc;
        }
    }
    return MN_OK;
}

/* The block text of the included items into b->text, counted whole into b->tokens. */
static mn_status render(mn_memblock *b, const mn_tokenizer *tk)
{
    free(b->text);
    b->text = NULL;
    b->tokens = 0;
    struct mn_buf t = MN_BUF_INIT;
    mn_status rc = MN_OK;
    int any = 0, section = -1;
    for (size_t i = 0; i < b->n && !rc; i++) {
        const mn_memblock_item *it = &b->items[i];
        if (!it->in)
            continue;
        if (!any && (rc = mn__buf_adds(&t, HEAD)))
            break;
        any = 1;
        if (section != it->m->pinned && (rc = mn__buf_adds(&t, it->m->pinned ? PINNED : RELEVANT)))
            break;
        section = it->m->pinned;
        rc = add_line(&t, it);
    }
    if (!rc && any) {
        t.data[--t.len] = '\0'; /* no newline at the end */
        b->tokens = count(tk, t.data, t.len);
        if (!(b->text = mn__buf_detach(&t, NULL)))
            rc = mn__nomem();
    }
    mn__buf_release(&t);
    return rc;
}

/* The cost of the block as one more message of the context. */
static int64_t cost(const mn_memblock *b) { return b->text ? b->tokens + MN_FRAME_PER_MESSAGE : 0; }

mn_status mn__memblock_fit(mn_memblock *b, const mn_tokenizer *tk, int64_t room)
{
    mn_status rc = render(b, tk);
    /* relevant memories leave first, the lowest score first (they are best first) */
    for (size_t i = b->n; !rc && cost(b) > room && i-- > 0;) {
        mn_memblock_item *it = &b->items[i];
        if (!it->in || it->m->pinned)
            continue;
        it->in = 0;
        it->left_out = "budget";
        rc = render(b, tk);
    }
    /* then the memory blocks are cut, the last one first; left out when not even a cut fits */
    for (size_t i = b->n; !rc && cost(b) > room && i-- > 0;) {
        mn_memblock_item *it = &b->items[i];
        for (int tries = 0; !rc && it->in && cost(b) > room && tries < CUT_TRIES; tries++) {
            int64_t want = it->tokens - (cost(b) - room);
            if (want < 2) {
                it->in = 0;
                it->left_out = "budget";
            } else if (!(rc = cut_to(tk, it, want, "budget")))
                it->cut = 1;
            if (!rc)
                rc = render(b, tk);
        }
        if (!rc && it->in && cost(b) > room) {
            it->in = 0;
            it->left_out = "budget";
            rc = render(b, tk);
        }
    }
    return rc;
}

int64_t mn__memblock_cost(const mn_memblock *b) { return cost(b); }

void mn__memblock_release(mn_memblock *b)
{
    for (size_t i = 0; b->items && i < b->n; i++)
        free(b->items[i].text);
    free(b->items);
    free(b->text);
    memset(b, 0, sizeof *b);
}

mn_status mn__window_insert(struct mn_window *w, size_t at, mn_role role, const char *session_id, const char *text,
                           int64_t tokens)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        mn_message *n = realloc(w->items, cap * sizeof *n);
        if (!n)
            return mn__nomem();
        w->items = n;
        w->cap = cap;
    }
    mn_message m;
    memset(&m, 0, sizeof m);
    m.role = role;
    m.session_id = session_id;
    m.metadata = "{}";
    if (!(m.content = mn__arena_strndup(&w->arena, text, strlen(text))))
        return mn__nomem();
    m.tokens = tokens;
    memmove(w->items + at + 1, w->items + at, (w->count - at) * sizeof *w->items);
    w->items[at] = m;
    w->count++;
    w->synthetic++;
    w->message_tokens += tokens;
    w->framing_tokens += mn__context_frame_tokens(&m);
    return MN_OK;
}

mn_status mn__window_put_first(struct mn_window *w, const char *session_id, const char *text, int64_t tokens)
{
    return mn__window_insert(w, 0, MN_ROLE_SYSTEM, session_id, text, tokens);
}
