/*
 * state.h — per-session state for ask-user flows (seed 003): its JSON shape, the changes that
 * can be made to it, and redaction of sensitive parameters. The store runs a change inside one
 * transaction (state_update); these functions are the pure part.
 *
 * Shape: {"params": {…}, "waiting_for_param": string|null, "last_intent_id": string|null,
 *         "last_result": any|null, "plan_execution": any|null}
 */
#ifndef MN_MEMORY_STATE_H
#define MN_MEMORY_STATE_H

#include <jansson.h>

#include "mnemo.h"

#define MN_STATE_MAX_BYTES (1 << 20)

enum mn_state_op { MN_STATE_MERGE, MN_STATE_WAIT, MN_STATE_RESULT, MN_STATE_PLAN, MN_STATE_CLEAR };

struct mn_state_change {
    enum mn_state_op op;
    json_t *value;    /* MERGE: the params object; RESULT: the result (or NULL); PLAN: the plan or NULL */
    const char *text; /* WAIT: the awaited param (NULL clears); RESULT: the intent id (or NULL) */
};

/* Applies a change to the current state text (NULL: empty state); *next gets the new text
 * (malloc'd). Errors: MN_TOOBIG (over 1 MiB), MN_CORRUPT (stored state is not an object). */
mn_status mn__state_apply(const char *current, const struct mn_state_change *change, char **next);
/* The state as shown to a caller: the full shape, the value of every sensitive member, at any
 * depth, replaced by "[redacted]" unless reveal. *out malloc'd. */
mn_status mn__state_render(const char *current, const char *sensitive, int reveal, char **out);
/* True when name is in the comma-separated list (any case), or holds a secret word (password,
 * passwd, secret, token, api_key/apikey, authorization, credential, private_key, … in any case,
 * with '_', '-', '.' and spaces ignored). */
int mn__state_is_sensitive(const char *sensitive, const char *name);

#endif
