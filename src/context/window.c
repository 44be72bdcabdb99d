/*
 * window.c — the `window` strategy: walk the history newest to oldest and keep whole units
 * while they fit. A unit is one message, or an assistant tool call together with all of its
 * results; a tool result without its call, or a call without all its results, is never sent
 * (providers reject both) and is reported as dropped. The walk stops at the first unit that
 * does not fit, so what is kept is always the recent end of the conversation.
 */
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "store/records.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

int64_t mn__context_frame_tokens(const mn_message *m)
{
    return MN_FRAME_PER_MESSAGE + (m->name ? MN_FRAME_PER_NAME : 0);
}

struct scan {
    struct mn_window *w;
    int64_t left;
    mn_message *pending; /* tool results met so far (newest first), waiting for their call */
    size_t npending, cap_pending;
    int64_t pending_cost;
    int64_t scanned;
    int64_t stop_seq; /* stop at messages this old (the summary covers them); 0: none */
    int force;        /* keep the first unit whatever its cost (the newest unit) */
    int turn;         /* collect: walk on to the current turn's user message and keep it */
    int skipping;     /* the budget ran out inside the current turn: look for its user message only */
    int64_t skipped;
    int kept_any;
    mn_status rc;
};

static int fail_nomem(struct scan *sc)
{
    sc->rc = mn__nomem();
    return 1;
}

static int push(mn_message **items, size_t *count, size_t *cap, const mn_message *m)
{
    if (*count == *cap) {
        size_t ncap = *cap ? *cap * 2 : 32;
        mn_message *n = realloc(*items, ncap * sizeof *n);
        if (!n)
            return -1;
        *items = n;
        *cap = ncap;
    }
    (*items)[(*count)++] = *m;
    return 0;
}

/* A stored count is clamped to 2^40 (a database written before import recounted could hold any
 * count): the sums of a walk then cannot overflow. */
static int64_t cost_of(const mn_message *m)
{
    int64_t t = m->tokens < 0 ? 0 : m->tokens > (1LL << 40) ? (1LL << 40) : m->tokens;
    return t + mn__context_frame_tokens(m);
}

/* 1 when the ids of the pending results are exactly the ids of the call's tool_calls, else 0;
 * -1 when out of memory. */
static int calls_answered(const mn_message *call, const mn_message *results, size_t n)
{
    int oom;
    json_t *calls = mn__json_loads(call->tool_calls, 0, NULL, &oom);
    if (oom)
        return -1;
    int ok = json_is_array(calls) && json_array_size(calls) == n;
    for (size_t i = 0; ok && i < n; i++) {
        int found = 0;
        for (size_t j = 0; j < n && !found; j++) {
            json_t *id = json_object_get(json_array_get(calls, j), "id");
            found = json_is_string(id) && strcmp(json_string_value(id), results[i].tool_call_id) == 0;
        }
        for (size_t k = 0; k < i && found; k++) /* the same id answered twice is not a match */
            found = strcmp(results[k].tool_call_id, results[i].tool_call_id) != 0;
        ok = found;
    }
    json_decref(calls);
    return ok;
}

static int keep(struct scan *sc, const mn_message *m)
{
    struct mn_window *w = sc->w;
    if (push(&w->items, &w->count, &w->cap, m))
        return fail_nomem(sc);
    w->message_tokens += m->tokens;
    w->framing_tokens += mn__context_frame_tokens(m);
    return 0;
}

/* MN_CONTEXT_DETAIL: the waiting tool results are dropped, for this reason. */
static void mark_pending(const struct scan *sc, const char *fate)
{
    for (size_t i = 0; i < sc->npending; i++)
        mn__gov_mark(sc->w->gov, sc->pending[i].seq, fate);
}

/* Messages of the current turn the walk passes over to find its user message before it gives up
 * (a session of tool steps with no user message for this long has no current turn to keep). */
#define TURN_SKIP_MAX 100000

/* The current turn's user message, kept whatever the budget; the walk ends there. */
static int keep_turn_start(struct scan *sc, const mn_message *msg)
{
    mn_message m;
    if (mn__records_message_fill(&sc->w->arena, &m, msg))
        return fail_nomem(sc);
    sc->scanned++;
    keep(sc, &m);
    return 1;
}

/* The budget ran out at m: the walk ends, unless it is still inside the current turn, whose user
 * message it then looks for (m itself when it is that message). */
static int out_of_room(struct scan *sc, const mn_message *m)
{
    if (!sc->turn)
        return 1;
    if (m->role == MN_ROLE_USER) {
        keep(sc, m);
        return 1;
    }
    sc->skipping = 1;
    sc->w->turn_skipped++; /* m's unit */
    return 0;
}

static int visit(void *user, const mn_message *msg)
{
    struct scan *sc = user;
    struct mn_window *w = sc->w;
    mn_message m;
    if (sc->stop_seq > 0 && msg->seq <= sc->stop_seq)
        return 1;
    if (sc->skipping) { /* older steps of the current turn: the layout could not use them */
        w->turn_skipped += msg->role == MN_ROLE_ASSISTANT; /* a step: a call with its results */
        return msg->role == MN_ROLE_USER ? keep_turn_start(sc, msg) : ++sc->skipped > TURN_SKIP_MAX;
    }
    sc->scanned++;
    if (w->gov)
        w->gov->walked++;
    if (mn__records_message_fill(&w->arena, &m, msg))
        return fail_nomem(sc);
    if (m.role == MN_ROLE_TOOL) {
        if (push(&sc->pending, &sc->npending, &sc->cap_pending, &m))
            return fail_nomem(sc);
        sc->pending_cost += cost_of(&m);
        return 0;
    }
    int is_call = m.role == MN_ROLE_ASSISTANT && m.tool_calls;
    if (w->gov && (is_call || m.role == MN_ROLE_USER))
        mn__gov_note(w->gov, &m);
    if (sc->npending) {
        int answered = is_call ? calls_answered(&m, sc->pending, sc->npending) : 0;
        if (answered < 0)
            return fail_nomem(sc);
        if (answered) {
            if (w->gov) { /* governance rewrites the results before they are costed */
                if ((sc->rc = mn__gov_results(w->gov, &w->arena, sc->pending, sc->npending)))
                    return 1;
                sc->pending_cost = 0;
                for (size_t i = 0; i < sc->npending; i++)
                    sc->pending_cost += cost_of(&sc->pending[i]);
            }
            int64_t cost = cost_of(&m) + sc->pending_cost;
            if (cost > sc->left && !(sc->force && !sc->kept_any)) {
                sc->npending = 0; /* left out for the budget, with everything older */
                return out_of_room(sc, &m);
            }
            for (size_t i = 0; i < sc->npending; i++) /* results newest first, as the walk goes */
                if (keep(sc, &sc->pending[i]))
                    return 1;
            if (keep(sc, &m))
                return 1;
            sc->left -= cost;
            sc->kept_any = 1;
            sc->npending = 0;
            sc->pending_cost = 0;
            return 0;
        }
        if (is_call) {
            w->dropped_unmatched += (int64_t)sc->npending + 1;
            mark_pending(sc, "dropped_unmatched");
            mn__gov_mark(w->gov, m.seq, "dropped_unmatched");
            sc->npending = 0;
            sc->pending_cost = 0;
            return 0;
        }
        w->dropped_orphan += (int64_t)sc->npending;
        mark_pending(sc, "dropped_orphan");
        sc->npending = 0;
        sc->pending_cost = 0;
    }
    if (is_call) { /* no results follow it (yet) */
        w->dropped_unmatched++;
        mn__gov_mark(w->gov, m.seq, "dropped_unmatched");
        return 0;
    }
    int64_t cost = cost_of(&m);
    if (cost > sc->left && !(sc->force && !sc->kept_any))
        return out_of_room(sc, &m);
    sc->left -= cost;
    sc->kept_any = 1;
    if (m.role == MN_ROLE_USER)
        sc->turn = 0; /* the current turn's start is in: the rest is the plain window */
    return keep(sc, &m);
}

mn_status mn__window_collect(mn_store *st, const mn_session *s, int64_t stop_seq, int64_t max_tokens,
                            struct mn_window *w)
{
    struct scan sc = {.w = w, .left = max_tokens, .stop_seq = stop_seq, .force = 1, .turn = 1};
    mn_status rc = st->ops->scan_newest(st, s->id, visit, &sc);
    if (!rc)
        rc = sc.rc;
    if (!rc) { /* results at the very start of what was scanned have no call to go with */
        w->dropped_orphan += (int64_t)sc.npending;
        mark_pending(&sc, "dropped_orphan");
    }
    free(sc.pending);
    if (rc)
        return rc;
    for (size_t i = 0, j = w->count; i + 1 < j; i++, j--) { /* oldest to newest */
        mn_message t = w->items[i];
        w->items[i] = w->items[j - 1];
        w->items[j - 1] = t;
    }
    return MN_OK;
}

mn_status mn__window_walk(struct mn_window *w, const mn_message *msgs, size_t n, int64_t left, int64_t *used)
{
    size_t base = w->count;
    struct scan sc = {.w = w, .left = left};
    for (size_t i = n; i-- > 0;)
        if (visit(&sc, &msgs[i]))
            break;
    if (!sc.rc && sc.npending && sc.scanned == (int64_t)n) { /* results at the very start */
        w->dropped_orphan += (int64_t)sc.npending;
        mark_pending(&sc, "dropped_orphan");
    }
    free(sc.pending);
    if (used)
        *used = left - sc.left;
    if (sc.rc)
        return sc.rc;
    for (size_t i = base, j = w->count; i + 1 < j; i++, j--) { /* oldest to newest */
        mn_message t = w->items[i];
        w->items[i] = w->items[j - 1];
        w->items[j - 1] = t;
    }
    return MN_OK;
}

void mn__window_release(struct mn_window *w)
{
    free(w->items);
    mn__arena_release(&w->arena);
    memset(w, 0, sizeof *w);
}
