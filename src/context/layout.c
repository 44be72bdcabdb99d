/*
 * layout.c — the pure last step of every strategy: from parts already in memory (system prompt,
 * the old part — head or pinned units —, the stored summary, the recent messages) and a budget,
 * choose what the model gets. No I/O, no clock: the same parts give the same items.
 *
 * The budget order (docs/context.md "The budget order"): the newest unit (the newest message,
 * with all the results of a tool call), the current turn's user message (the task an agent's tool
 * steps work on) and the system prompt are always kept, even over the budget (then over_budget
 * and the shortfall say by how much); then the summary, cut to fit with its newest end kept;
 * then the current turn's older steps, newest first; then the old part; then, when every step is
 * in, older recent units, newest first. A marker that says how many messages were left out is
 * placed when it fits, in exchange for the oldest optional units kept.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "context/context.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/utf8.h"
#include "util/banned.h"

#define CUT_TRIES 6 /* attempts to fit a cut summary when tokenisation at the seams differs */

int64_t mn__context_cost(const mn_message *m) { return m->tokens + mn__context_frame_tokens(m); }

static int64_t cost_range(const mn_message *m, size_t from, size_t to)
{
    int64_t c = 0;
    for (size_t i = from; i < to; i++)
        c += mn__context_cost(&m[i]);
    return c;
}

static mn_status push_item(struct mn_window *w, const mn_message *m)
{
    if (w->count == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        mn_message *n = realloc(w->items, cap * sizeof *n);
        if (!n)
            return mn__nomem();
        w->items = n;
        w->cap = cap;
    }
    w->items[w->count++] = *m;
    w->message_tokens += m->tokens;
    w->framing_tokens += mn__context_frame_tokens(m);
    return MN_OK;
}

/* A message that is not stored (summary, marker): role user, seq 0, text in w's arena. */
static mn_status synth(struct mn_window *w, const mn_layout_in *in, const char *text, mn_message *out)
{
    memset(out, 0, sizeof *out);
    out->role = MN_ROLE_USER;
    out->session_id = in->session_id;
    out->metadata = "{}";
    if (!(out->content = mn__arena_strndup(&w->arena, text, strlen(text))))
        return mn__nomem();
    out->tokens = (int64_t)mn__token_count(in->tk, text, strlen(text));
    return MN_OK;
}

static mn_status summary_message(struct mn_window *w, const mn_layout_in *in, const char *text, mn_message *out)
{
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn__buf_addf(&b, "[Summary of %lld earlier messages]\n%s", (long long)in->summary_folded, text);
    if (!rc)
        rc = synth(w, in, b.data, out);
    mn__buf_release(&b);
    return rc;
}

static mn_status marker_message(struct mn_window *w, const mn_layout_in *in, int64_t n, mn_message *out)
{
    char text[160];
    snprintf(text, sizeof text, "[Earlier conversation trimmed — %lld messages removed to stay within context budget]",
             (long long)n);
    return synth(w, in, text, out);
}

/* The end of text within max tokens, cut on a line (else character) boundary, "…" in front;
 * NULL when nothing fits (or on OOM, which the caller treats the same: no summary). */
static char *keep_end(const mn_tokenizer *tk, const char *text, int64_t max)
{
    size_t len = strlen(text);
    if (max <= 1)
        return NULL;
    size_t chars = mn__utf8_chars(text, len);
    size_t lo = 0, hi = chars; /* smallest start (in characters) whose suffix fits */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t off = mn__utf8_prefix(text, len, mid);
        if ((int64_t)mn__token_count(tk, text + off, len - off) + 1 <= max)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t off = mn__utf8_prefix(text, len, lo);
    const char *nl = memchr(text + off, '\n', len - off);
    if (off > 0 && nl && (size_t)(nl - text) < off + (len - off) / 2)
        off = (size_t)(nl - text) + 1;
    if (off >= len)
        return NULL;
    struct mn_buf b = MN_BUF_INIT;
    if (mn__buf_adds(&b, off ? "…" : "") || mn__buf_add(&b, text + off, len - off)) {
        mn__buf_release(&b);
        return NULL;
    }
    return mn__buf_detach(&b, NULL);
}

/* The summary message within room tokens (cost, framing included): whole, else its end.
 * *shown 0 when not even a cut fits. */
static mn_status fit_summary(struct mn_window *w, const mn_layout_in *in, int64_t room, mn_message *sm, int *shown,
                             int *cut)
{
    *shown = *cut = 0;
    mn_status rc = summary_message(w, in, in->summary, sm);
    if (rc || mn__context_cost(sm) <= room)
        return rc ? rc : (*shown = 1, MN_OK);
    *cut = 1;
    mn_message head;
    if ((rc = summary_message(w, in, "", &head)))
        return rc;
    int64_t want = room - mn__context_cost(&head) - 1;
    for (int i = 0; i < CUT_TRIES && want > 1; i++) {
        char *end = keep_end(in->tk, in->summary, want);
        if (!end)
            return MN_OK;
        rc = summary_message(w, in, end, sm);
        free(end);
        if (rc)
            return rc;
        int64_t over = mn__context_cost(sm) - room;
        if (over <= 0) {
            *shown = 1;
            return MN_OK;
        }
        want -= over;
    }
    return MN_OK;
}

/* Unit starts of m[0..n): every message that is not a tool result (a call's results follow it). */
static size_t *unit_starts(const mn_message *m, size_t n, size_t *count)
{
    size_t *s = malloc((n ? n : 1) * sizeof *s);
    *count = 0;
    for (size_t i = 0; s && i < n; i++)
        if (m[i].role != MN_ROLE_TOOL)
            s[(*count)++] = i;
    return s;
}

/* The end (one past) of unit u of nu units that start at st[] in m[0..n). */
static size_t unit_end(const size_t *st, size_t nu, size_t n, size_t u) { return u + 1 < nu ? st[u + 1] : n; }

/* Keeps units top-1, top-2, … down to lo (newest first) while they fit in *left, which is
 * reduced. Returns the index of the oldest unit kept (top when none). */
static size_t take_units(const mn_message *m, size_t n, const size_t *st, size_t nu, size_t lo, size_t top,
                         int64_t *left)
{
    size_t u = top;
    while (u > lo) {
        int64_t c = cost_range(m, st[u - 1], unit_end(st, nu, n, u - 1));
        if (c > *left)
            break;
        *left -= c;
        u--;
    }
    return u;
}

/* The unit holding the current turn's user message (the newest unit that starts with a stored
 * user message) when it is not the newest unit itself; nu when there is none. */
static size_t task_unit(const mn_message *m, const size_t *st, size_t nu)
{
    for (size_t u = nu; u-- > 0;)
        if (m[st[u]].role == MN_ROLE_USER && m[st[u]].seq > 0)
            return u + 1 < nu ? u : nu;
    return nu;
}

/* The recent part's choice: units [from, task) before the task, [steps, top) inside the current
 * turn (top: the newest unit), the task unit itself at `task` (== top when none). */
struct recent {
    const mn_message *m;
    size_t n, nu, top, task, steps, from;
    const size_t *st;
};

static int64_t unit_cost(const struct recent *r, size_t u)
{
    return cost_range(r->m, r->st[u], unit_end(r->st, r->nu, r->n, u));
}

/* Messages of the recent part left out: before the oldest unit kept, and between the task and the
 * oldest step kept. */
static int64_t recent_gone(const struct recent *r, size_t tail_from)
{
    size_t first = r->from < r->nu ? r->st[r->from] : r->n;
    int64_t gone = (int64_t)(first - tail_from);
    if (r->task < r->top)
        gone += (int64_t)(r->st[r->steps] - unit_end(r->st, r->nu, r->n, r->task));
    return gone;
}

/* Gives back the oldest optional unit kept (before the task, else the oldest step); 0 when none. */
static int64_t give_back(struct recent *r)
{
    if (r->from < (r->task < r->top ? r->task : r->top)) {
        int64_t c = unit_cost(r, r->from);
        r->from++;
        return c;
    }
    if (r->task < r->top && r->steps < r->top) {
        int64_t c = unit_cost(r, r->steps);
        r->steps++;
        return c;
    }
    return 0;
}

mn_status mn__context_layout(const mn_layout_in *in, struct mn_window *w, mn_layout_out *out)
{
    memset(out, 0, sizeof *out);
    mn_status rc = MN_OK;
    w->max_tokens = in->max_tokens;
    if (in->system_prompt) {
        if (!(w->system_prompt = mn__arena_strndup(&w->arena, in->system_prompt, strlen(in->system_prompt))))
            return mn__nomem();
        w->system_tokens = (int64_t)mn__token_count(in->tk, in->system_prompt, strlen(in->system_prompt));
        w->framing_tokens += MN_FRAME_PER_MESSAGE;
    }
    w->framing_tokens += MN_FRAME_REPLY;
    size_t nt = 0, no = 0;
    size_t *tu = unit_starts(in->tail, in->n_tail, &nt), *ou = unit_starts(in->old, in->n_old, &no);
    if (!tu || !ou) {
        rc = mn__nomem();
        goto done;
    }
    size_t tail_from = nt ? tu[0] : in->n_tail; /* leading tool results have no call: never sent */
    out->orphans = (int64_t)tail_from;
    struct recent r = {in->tail, in->n_tail, nt, nt ? nt - 1 : 0, 0, 0, 0, tu};
    r.task = nt ? task_unit(in->tail, tu, nt) : 0;
    if (r.task >= nt)
        r.task = r.top;

    /* 1. the newest unit, the current turn's user message and the system prompt, whatever the
     * budget */
    int64_t forced = nt ? unit_cost(&r, r.top) : 0;
    if (r.task < r.top)
        forced += unit_cost(&r, r.task);
    int64_t left = in->max_tokens - w->system_tokens - w->framing_tokens - forced;
    if (left < 0) {
        out->shortfall = -left;
        left = 0;
    }
    int64_t mem = in->mem_budget > 0 ? in->mem_budget - forced : INT64_MAX;
    if (mem < 0)
        mem = 0;

    /* 2. the summary, cut to fit */
    mn_message sm;
    int have_sum = 0;
    if (in->summary && (rc = fit_summary(w, in, left < mem ? left : mem, &sm, &have_sum, &out->summary_cut)))
        goto done;
    if (have_sum) {
        left -= mn__context_cost(&sm);
        mem -= mn__context_cost(&sm);
    }
    out->summary_shown = have_sum;
    if (in->summary && !have_sum)
        left = 0; /* strictly in order: nothing older without the summary that stands before it */

    /* 3. the current turn's older steps, newest first, while they fit */
    int64_t room = left < mem ? left : mem, room0 = room;
    r.steps = r.top;
    if (r.task < r.top)
        r.steps = take_units(in->tail, in->n_tail, tu, nt, r.task + 1, r.top, &room);
    left -= room0 - room;
    mem -= room0 - room;

    /* 4. the old part (head or pins), newest unit first, while it fits */
    size_t old_u = take_units(in->old, in->n_old, ou, no, 0, no, &left);
    size_t old_from = old_u < no ? ou[old_u] : in->n_old;
    out->old_dropped = (int64_t)(old_from - (no ? ou[0] : in->n_old));

    /* 5. units before the current turn, newest first, within the budget (and chunked's memory
     * budget); only when every step of the turn is in (the recent part stays contiguous) */
    room = left < mem ? left : mem, room0 = room;
    size_t before = r.task < r.top ? r.task : r.top;
    r.from = before;
    if (nt && (r.task == r.top || r.steps == r.task + 1))
        r.from = take_units(in->tail, in->n_tail, tu, nt, 0, before, &room);
    left -= room0 - room;

    /* 6. the marker, in exchange for the oldest optional units when it does not fit */
    mn_message mk;
    int have_marker = 0;
    int64_t gone = in->hidden + recent_gone(&r, tail_from), left0 = left;
    struct recent r0 = r;
    while (in->marker && gone > 0 && !have_marker) {
        if ((rc = marker_message(w, in, gone, &mk)))
            goto done;
        if (mn__context_cost(&mk) <= left)
            have_marker = 1;
        else {
            int64_t c = give_back(&r);
            if (!c) { /* no room for it at all: keep the units it would have taken */
                r = r0;
                left = left0;
                gone = in->hidden + recent_gone(&r, tail_from);
                break;
            }
            left += c;
            gone = in->hidden + recent_gone(&r, tail_from);
        }
    }
    if (in->marker)
        out->marker = have_marker ? gone : 0;

    /* the order of the context: old part, summary, marker, recent messages */
    for (size_t i = old_from; i < in->n_old && !rc; i++)
        rc = push_item(w, &in->old[i]);
    if (!rc && have_sum && !(rc = push_item(w, &sm)))
        w->synthetic++;
    if (!rc && have_marker && !(rc = push_item(w, &mk)))
        w->synthetic++;
    size_t kept_from = nt ? tu[r.from] : in->n_tail;
    size_t gap_from = r.task < r.top ? unit_end(tu, nt, in->n_tail, r.task) : in->n_tail;
    size_t gap_to = r.task < r.top ? tu[r.steps] : in->n_tail;
    for (size_t i = kept_from; i < in->n_tail && !rc; i++)
        if (i < gap_from || i >= gap_to)
            rc = push_item(w, &in->tail[i]);
    if (rc)
        goto done;
    out->tail_dropped = recent_gone(&r, tail_from);
    if (r.task < r.top) {
        out->turn_seq = in->tail[tu[r.task]].seq;
        out->turn_steps = (int64_t)(r.top - r.task - 1);
        out->turn_steps_dropped = (int64_t)(r.steps - r.task - 1);
    } else if (nt && in->tail[tu[r.top]].role == MN_ROLE_USER)
        out->turn_seq = in->tail[tu[r.top]].seq;
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens;
    w->over_budget = total > in->max_tokens;
    if (w->over_budget && out->shortfall < total - in->max_tokens)
        out->shortfall = total - in->max_tokens;
done:
    free(tu);
    free(ou);
    return rc;
}
