/*
 * import_rows.c — a session row and its message rows stored as an export has them, for import
 * (io.c) and migrate (migrate.c) alike. An import never derives a title, so where an imported
 * session's title came from is found as its messages come in: the first of its user messages
 * whose title (mn__message_title) the session's title is — the rule append follows when it takes
 * a title (append.c), so that editing that message retitles the copy as it would the original.
 * None found (a title the user set): title_seq stays 0.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "memory/message.h"
#include "util/arena.h"
#include "util/err.h"
#include "util/banned.h"

/* Records the origin found for the session followed, if any, and follows none. */
static mn_status settle(mn_store *st, struct mn__import_rows *r)
{
    mn_status rc = r->id && r->seq ? st->ops->import_title_from(st, r->id, r->seq) : MN_OK;
    mn__import_rows_free(r);
    return rc;
}

mn_status mn__import_session_row(mn_store *st, struct mn__import_rows *r, const mn_session *s, int *added)
{
    mn_status rc = settle(st, r);
    if (rc || (rc = st->ops->import_session(st, s, added)) || !*added || !s->title)
        return rc;
    r->id = strdup(s->id);
    r->title = strdup(s->title);
    if (!r->id || !r->title) {
        mn__import_rows_free(r);
        return mn__nomem();
    }
    return MN_OK;
}

/* Whether m is the first message of the session followed that gives its title. */
static mn_status gives_title(const struct mn__import_rows *r, const mn_message *m, int *yes)
{
    *yes = 0;
    if (!r->id || r->seq || m->role != MN_ROLE_USER || !m->content || strcmp(m->session_id, r->id) != 0)
        return MN_OK;
    struct mn_arena a = MN_ARENA_INIT;
    const char *title = mn__message_title(&a, m->content);
    if (title)
        *yes = strcmp(title, r->title) == 0;
    mn__arena_release(&a);
    return title ? MN_OK : mn__nomem();
}

mn_status mn__import_message_row(mn_store *st, struct mn__import_rows *r, const mn_message *m, int *added)
{
    mn_status rc = st->ops->import_message(st, m, added);
    int yes = 0;
    if (!rc && *added && !(rc = gives_title(r, m, &yes)) && yes)
        r->seq = m->seq;
    return rc;
}

mn_status mn__import_rows_end(mn_store *st, struct mn__import_rows *r) { return settle(st, r); }

void mn__import_rows_free(struct mn__import_rows *r)
{
    free(r->id);
    free(r->title);
    *r = (struct mn__import_rows){0};
}
