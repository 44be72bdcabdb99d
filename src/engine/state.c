/*
 * state.c — a session's state (docs/threads.md): each change (merge params, wait, result, plan,
 * clear) applied by memory/state.c inside the store's read-modify-write of the row, and the
 * state as shown to a caller, its secrets redacted unless asked for (state.sensitive_params).
 */
#include <stdlib.h>

#include "engine/engine.h"
#include "config/config.h"
#include "memory/state.h"
#include "util/banned.h"

static mn_status apply_change(void *user, const char *current, char **next)
{
    return mn__state_apply(current, user, next);
}

mn_status mn__change_state(mn_db *db, const char *canon, struct mn_state_change *c)
{
    return db->store->ops->state_update(db->store, canon, apply_change, c);
}

mn_status mn__get_state(mn_db *db, const char *canon, int reveal, char **out)
{
    char *raw = NULL;
    mn_status rc = db->store->ops->state_get(db->store, canon, &raw);
    if (rc)
        return rc;
    rc = mn__state_render(raw, mn__config_str(db->cfg, "state.sensitive_params"), reveal, out);
    free(raw);
    return rc;
}
