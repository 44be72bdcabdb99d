/*
 * governance.c — the records context governance keeps for a session (docs/context.md): pinned
 * messages, the latest summary, and the events log (compactions, failures) as JSON.
 */
#include "engine/engine.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

mn_status mn__pin_message(mn_db *db, const char *canon, int64_t message_id, int pinned)
{
    return db->store->ops->message_pin(db->store, canon, message_id, pinned);
}

mn_status mn__get_summary(mn_db *db, const char *canon, mn_summary **out)
{
    return db->store->ops->summary_latest(db->store, canon, out);
}

struct events {
    json_t *arr;
    int oom;
};

static int add_event(void *user, int64_t id, const char *kind, const char *data, int64_t at)
{
    struct events *ev = user;
    json_t *d = json_loads(data ? data : "{}", 0, NULL);
    json_t *o = json_pack("{s:I, s:s, s:I, s:o}", "id", (json_int_t)id, "kind", kind ? kind : "", "created_at",
                          (json_int_t)at, "data", d ? d : json_object());
    if (!o || json_array_append_new(ev->arr, o)) {
        ev->oom = 1;
        return 1;
    }
    return 0;
}

mn_status mn__list_events(mn_db *db, const char *canon, size_t limit, char **out)
{
    struct events ev = {json_array(), 0};
    if (!ev.arr)
        return mn__nomem();
    mn_status rc = db->store->ops->events_list(db->store, canon, limit, add_event, &ev);
    if (!rc && ev.oom)
        rc = mn__nomem();
    if (!rc && !(*out = mn__json_dump(ev.arr)))
        rc = mn__nomem();
    json_decref(ev.arr);
    return rc;
}
