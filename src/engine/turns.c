/*
 * turns.c — which of a session's messages are active, written once for every backend over the
 * store's row primitives (store/store_rows.h): the turn limit (after every append that stored a
 * message, and when the limit changes), clearing the active history, and undoing a clear
 * (mnemo.h "Clearing and turn limits"; seed 002's turns, seed 000's /clear).
 *
 * A turn is any message, except that a tool result belongs to the call before it: a turn starts
 * at every message but a tool result, so the limit never parts a call from its results. The
 * newest max_turns active turns stay active; the messages before them leave the active history
 * (threads.trim delete: are deleted), the session's counters following them.
 *
 * A clear marks every active message inactive — kept and searchable, out of every context — and
 * records the newest seq it covered in cleared_seq (which hides the summaries written before it)
 * and, at the first clear since the last undo, the oldest active seq in cleared_from. An undo
 * brings back cleared_from .. cleared_seq, those the turn limit keeps (the cleared turns counted
 * again) — never a message the limit had moved out before the clear — and drops the summaries
 * written since the clear: they folded what followed it and would hide the messages brought back
 * (the next context folds again).
 */
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "store/store_rows.h"
#include "util/clock.h"
#include "util/banned.h"

int mn__trim_delete(const mn_db *db) { return strcmp(db->settings.threads_trim, "delete") == 0; }

mn_status mn__turns_trim(const struct mn_store_row_ops *o, mn_store_tx *tx, int64_t sid, int64_t max_turns,
                         int trim_delete, int64_t now_ms)
{
    int64_t keep_from = 0;
    mn_status rc = o->turn_start(tx, sid, max_turns, 1, &keep_from);
    if (rc || keep_from <= 1)
        return rc; /* no more turns than the limit: one read */
    if (trim_delete) {
        mn_store_removed gone;
        if ((rc = o->messages_remove(tx, sid, 1, keep_from - 1, &gone)) || !gone.messages)
            return rc;
        return o->session_counts(tx, sid, -gone.messages, -gone.tokens, 0, -gone.inactive, now_ms);
    }
    int64_t moved = 0; /* the messages before keep_from that were still active */
    if ((rc = o->messages_activate(tx, sid, 1, keep_from - 1, 0, &moved)) || !moved)
        return rc;
    return o->session_counts(tx, sid, 0, 0, 0, moved, now_ms);
}

struct turns_change {
    const struct mn_store_row_ops *o;
    const char *session_id;
    int undo, with_state; /* a clear: undo it; reset the state too */
    int64_t max_turns;    /* a new limit (-1: a clear) */
    int trim_delete;
    int64_t now_ms;
    int64_t changed; /* out: the messages a clear moved */
};

static mn_status clear(const struct mn_store_row_ops *o, mn_store_tx *tx, mn_store_turns_row *row,
                       struct turns_change *c)
{
    mn_status rc = MN_OK;
    if (row->cleared_seq == 0) { /* the first clear since the last undo: where its undo starts */
        int64_t first = 0;
        if ((rc = o->first_active(tx, row->sid, &first)))
            return rc;
        row->cleared_from = first ? first : row->last_seq + 1;
    }
    row->cleared_seq = row->last_seq;
    if ((rc = o->messages_activate(tx, row->sid, 1, row->last_seq, 0, &c->changed)) ||
        (rc = o->turns_write(tx, row, c->now_ms)) ||
        (c->changed && (rc = o->session_counts(tx, row->sid, 0, 0, 0, c->changed, c->now_ms))))
        return rc;
    return c->with_state ? o->state_drop(tx, row->sid) : MN_OK;
}

static mn_status unclear(const struct mn_store_row_ops *o, mn_store_tx *tx, mn_store_turns_row *row,
                         struct turns_change *c)
{
    int64_t cleared = row->cleared_seq, keep_from = 0, dropped = 0;
    mn_status rc = MN_OK;
    if (cleared == 0)
        return MN_OK; /* nothing cleared: nothing to undo */
    if (row->max_turns > 0 && (rc = o->turn_start(tx, row->sid, row->max_turns, 0, &keep_from)))
        return rc;
    if (keep_from < row->cleared_from) /* a message out before the first clear stays out */
        keep_from = row->cleared_from;
    row->cleared_seq = row->cleared_from = 0;
    if ((rc = o->messages_activate(tx, row->sid, keep_from, cleared, 1, &c->changed)) ||
        (rc = o->turns_write(tx, row, c->now_ms)) ||
        (c->changed && (rc = o->session_counts(tx, row->sid, 0, 0, 0, -c->changed, c->now_ms))) ||
        (rc = o->summaries_drop(tx, row->sid, cleared + 1, &dropped)) || !dropped)
        return rc;
    char data[160];
    snprintf(data, sizeof data, "{\"reason\":\"clear_undone\",\"cleared_seq\":%lld,\"summaries\":%lld}",
             (long long)cleared, (long long)dropped);
    return o->event_add(tx, row->sid, "summary_dropped", data, c->now_ms);
}

static mn_status change_body(mn_store_tx *tx, void *arg)
{
    struct turns_change *c = arg;
    const struct mn_store_row_ops *o = c->o;
    mn_store_turns_row row;
    c->changed = 0;
    mn_status rc = o->turns_row(tx, c->session_id, &row);
    if (rc)
        return rc;
    if (c->max_turns < 0)
        return c->undo ? unclear(o, tx, &row, c) : clear(o, tx, &row, c);
    row.max_turns = c->max_turns;
    if ((rc = o->turns_write(tx, &row, c->now_ms)) || row.max_turns == 0)
        return rc;
    return mn__turns_trim(o, tx, row.sid, row.max_turns, c->trim_delete, c->now_ms);
}

mn_status mn__clear_session(mn_db *db, const char *canon, int undo, int with_state, int64_t *changed)
{
    struct turns_change c = {db->store->ops->rows, canon, undo, with_state, -1, 0, mn__clock_now_ms(), 0};
    mn_status rc = c.o->write(db->store, change_body, &c);
    *changed = rc ? 0 : c.changed;
    return rc;
}

mn_status mn__session_set_turns(mn_db *db, const char *canon, int64_t max_turns)
{
    struct turns_change c = {db->store->ops->rows, canon, 0, 0, max_turns, mn__trim_delete(db), mn__clock_now_ms(), 0};
    return c.o->write(db->store, change_body, &c);
}
