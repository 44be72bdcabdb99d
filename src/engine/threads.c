/*
 * threads.c — the thread use cases the public functions of src/mnemo_threads.c share with no
 * one else: which session a resume continues (the newest one that is still alive).
 */
#include "engine/engine.h"
#include "store/records.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

#define RESUME_PAGE 100

mn_status mn__resume_session(mn_db *db, const char *ns, mn_session **out)
{
    int64_t now = mn__clock_now_ms();
    mn_status rc = MN_OK;
    for (size_t offset = 0;; offset += RESUME_PAGE) { /* the newest session that is still alive */
        mn_sessions *l = NULL;
        if ((rc = db->store->ops->session_list(db->store, ns, RESUME_PAGE, offset, &l)))
            return rc;
        for (size_t i = 0; i < l->count && !*out; i++)
            if (l->items[i].expires_at == 0 || l->items[i].expires_at > now)
                rc = mn__live_session(db, l->items[i].id, out);
        size_t got = l->count;
        mn__records_session_list_free(l);
        if (rc || *out)
            return rc;
        if (got < RESUME_PAGE)
            return mn__err(MN_NOTFOUND, "no session to resume%s%s", ns ? " in namespace " : "", ns ? ns : "");
    }
}
