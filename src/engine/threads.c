/*
 * threads.c — the thread use cases of src/mnemo_threads.c and src/mnemo_handover.c: which session
 * a resume continues (the newest one that is still alive), the files a thread touched and whether
 * a file's content is new to it, and the summary one tool hands to the next (seed 002).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "store/records.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/sha256.h"
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

mn_status mn__record_file(mn_db *db, const char *canon, const char *path, const char *content, size_t len,
                          int *include)
{
    char sha[MN_SHA256_HEX + 1];
    mn_status rc = mn__sha256_hex(content ? content : "", len, sha);
    return rc ? rc : db->store->ops->file_seen(db->store, canon, path, sha, mn__clock_now_ms(), include);
}

/* ---- the hand-over: files and the thread summary ---- */

/* Cuts a list to its first max entries (0: keep all); the strings stay in its arena. */
static void strings_cut(mn_strings *l, size_t max)
{
    if (max && l->count > max)
        l->count = max;
}

mn_status mn__list_session_files(mn_db *db, const char *canon, size_t max_files, mn_strings **out)
{
    mn_status rc = db->store->ops->session_files(db->store, canon, out);
    if (!rc)
        strings_cut(*out, max_files);
    return rc;
}

struct summary_impl {
    mn_thread_summary pub; /* first: the public pointer is the impl pointer */
    mn_session *session;
    mn_strings *files;
    struct mn_strings_impl *tools;
    char *text;
};

/* Collects the distinct tool names of a newest-first scan in order of first use: each name seen
 * again (further back in time) moves to the front. */
struct tools_scan {
    char **names;
    size_t n, cap;
    int oom;
};

static int tools_visit(void *user, const mn_message *m)
{
    struct tools_scan *t = user;
    if (!m->tool_name || !*m->tool_name)
        return 0;
    size_t at = 0;
    while (at < t->n && strcmp(t->names[at], m->tool_name) != 0)
        at++;
    char *name;
    if (at < t->n) {
        name = t->names[at];
    } else {
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 8;
            char **grown = realloc(t->names, cap * sizeof *grown);
            if (!grown) {
                t->oom = 1;
                return 1;
            }
            t->names = grown;
            t->cap = cap;
        }
        if (!(name = strdup(m->tool_name))) {
            t->oom = 1;
            return 1;
        }
        t->n++;
    }
    memmove(t->names + 1, t->names, at * sizeof *t->names);
    t->names[0] = name;
    return 0;
}

static void tools_release(struct tools_scan *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->names[i]);
    free(t->names);
}

/* "a, b, c" */
static mn_status add_joined(struct mn_buf *b, const char *label, const mn_strings *l)
{
    mn_status rc = l->count ? mn__buf_addf(b, "**%s:** ", label) : MN_OK;
    for (size_t i = 0; !rc && i < l->count; i++)
        rc = mn__buf_addf(b, "%s%s", i ? ", " : "", l->items[i]);
    return !rc && l->count ? mn__buf_adds(b, "\n") : rc;
}

static mn_status render_text(struct summary_impl *s)
{
    const mn_thread_summary *p = &s->pub;
    char started[40];
    mn__clock_iso(p->started, started, sizeof started);
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn__buf_addf(&b, "## Conversation Context\n\n**Thread ID:** %s\n**Started:** %s\n", p->thread_id,
                               started);
    if (!rc && p->tool_name)
        rc = mn__buf_addf(&b, "**Tool:** %s\n", p->tool_name);
    if (!rc)
        rc = mn__buf_addf(&b, "**Turns:** %lld\n", (long long)p->turns);
    if (!rc && p->tools_used.count > 1) /* seed 002: the line only when the thread changed tools */
        rc = add_joined(&b, "Tools Used", &p->tools_used);
    if (!rc)
        rc = add_joined(&b, "Files", &p->files);
    if (rc) {
        mn__buf_release(&b);
        return rc;
    }
    s->text = mn__buf_detach(&b, NULL);
    return s->text ? MN_OK : mn__nomem();
}

static mn_status fill(mn_db *db, const char *canon, size_t max_files, struct summary_impl *s)
{
    mn_status rc = mn__live_session(db, canon, &s->session);
    if (rc || (rc = mn__list_session_files(db, canon, max_files, &s->files)))
        return rc;
    struct tools_scan t = {0};
    rc = db->store->ops->scan_newest(db->store, canon, tools_visit, &t);
    if (!rc && t.oom)
        rc = mn__nomem();
    if (!rc && !(s->tools = calloc(1, sizeof *s->tools)))
        rc = mn__nomem();
    for (size_t i = 0; !rc && i < t.n; i++)
        if (mn__records_strings_push(s->tools, t.names[i]))
            rc = mn__nomem();
    tools_release(&t);
    if (rc)
        return rc;
    const mn_session *x = s->session;
    mn_thread_summary *p = &s->pub;
    p->thread_id = x->id;
    p->ns = x->ns;
    p->title = x->title;
    p->tool_name = x->tool_name;
    p->started = x->created_at;
    p->updated_at = x->updated_at;
    p->expires_at = x->expires_at;
    p->turns = x->turn_count;
    p->messages = x->message_count;
    p->tokens = x->token_count;
    p->tools_used = s->tools->pub;
    p->files = *s->files;
    if ((rc = render_text(s)))
        return rc;
    p->text = s->text;
    return MN_OK;
}

mn_status mn__get_thread_summary(mn_db *db, const char *canon, size_t max_files, mn_thread_summary **out)
{
    struct summary_impl *s = calloc(1, sizeof *s);
    if (!s)
        return mn__nomem();
    mn_status rc = fill(db, canon, max_files, s);
    if (rc) {
        mn__free_thread_summary(&s->pub);
        return rc;
    }
    *out = &s->pub;
    return MN_OK;
}

void mn__free_thread_summary(mn_thread_summary *p)
{
    if (!p)
        return;
    struct summary_impl *s = (struct summary_impl *)p;
    mn__records_session_free(s->session);
    mn_strings_free(s->files);
    if (s->tools)
        mn_strings_free(&s->tools->pub);
    free(s->text);
    free(s);
}
