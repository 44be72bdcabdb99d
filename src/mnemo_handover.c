/*
 * mnemo_handover.c — what one tool hands to the next about a thread (seed 002): the newest files
 * with a limit (GetRecentFiles(maxFiles)) and the thread summary (BuildContextSummary: id, start,
 * tool, turns, tools used, files) as a record, JSON and Markdown. Reads only.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "store/records.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

/* Cuts a list to its first max entries (0: keep all); the strings stay in its arena. */
static void strings_cut(mn_strings *l, size_t max)
{
    if (max && l->count > max)
        l->count = max;
}

mn_status mn_session_files_n(mn_db *db, const char *session_id, size_t max_files, mn_strings **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_files_n: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)) || (rc = mn__live_session(db, canon, NULL)))
        return rc;
    if ((rc = db->store->ops->session_files(db->store, canon, out)))
        return rc;
    strings_cut(*out, max_files);
    return MN_OK;
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
    if (rc || (rc = db->store->ops->session_files(db->store, canon, &s->files)))
        return rc;
    strings_cut(s->files, max_files);
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

mn_status mn_thread_summary_get(mn_db *db, const char *session_id, size_t max_files, mn_thread_summary **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_thread_summary_get: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, canon)))
        return rc;
    struct summary_impl *s = calloc(1, sizeof *s);
    if (!s)
        return mn__nomem();
    if ((rc = fill(db, canon, max_files, s))) {
        mn_thread_summary_free(&s->pub);
        return rc;
    }
    *out = &s->pub;
    return MN_OK;
}

void mn_thread_summary_free(mn_thread_summary *p)
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

static mn_status add_string_array(struct mn_buf *b, const char *key, const mn_strings *l)
{
    mn_status rc = mn__buf_addf(b, ",\"%s\":[", key);
    for (size_t i = 0; !rc && i < l->count; i++) {
        if (i)
            rc = mn__buf_addc(b, ',');
        if (!rc)
            rc = mn__buf_add_json_str(b, l->items[i]);
    }
    return rc ? rc : mn__buf_addc(b, ']');
}

/* A JSON string, or null for NULL. */
static mn_status add_member(struct mn_buf *b, const char *key, const char *value)
{
    mn_status rc = mn__buf_addf(b, ",\"%s\":", key);
    if (!rc)
        rc = value ? mn__buf_add_json_str(b, value) : mn__buf_adds(b, "null");
    return rc;
}

mn_status mn_thread_summary_to_json(const mn_thread_summary *s, char **out)
{
    if (!s || !out)
        return mn__err(MN_MISUSE, "mn_thread_summary_to_json: NULL argument");
    *out = NULL;
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn__buf_adds(&b, "{\"thread_id\":");
    if (!rc)
        rc = mn__buf_add_json_str(&b, s->thread_id);
    if (!rc)
        rc = add_member(&b, "namespace", s->ns);
    if (!rc)
        rc = add_member(&b, "title", s->title);
    if (!rc)
        rc = add_member(&b, "tool", s->tool_name);
    if (!rc)
        rc = mn__buf_addf(&b, ",\"started\":%lld,\"updated_at\":%lld", (long long)s->started, (long long)s->updated_at);
    if (!rc)
        rc = s->expires_at ? mn__buf_addf(&b, ",\"expires_at\":%lld", (long long)s->expires_at)
                           : mn__buf_adds(&b, ",\"expires_at\":null");
    if (!rc)
        rc = mn__buf_addf(&b, ",\"turns\":%lld,\"messages\":%lld,\"tokens\":%lld", (long long)s->turns,
                         (long long)s->messages, (long long)s->tokens);
    if (!rc)
        rc = add_string_array(&b, "tools_used", &s->tools_used);
    if (!rc)
        rc = add_string_array(&b, "files", &s->files);
    if (!rc)
        rc = add_member(&b, "text", s->text);
    if (!rc)
        rc = mn__buf_addc(&b, '}');
    if (rc) {
        mn__buf_release(&b);
        return rc;
    }
    *out = mn__buf_detach(&b, NULL);
    return *out ? MN_OK : mn__nomem();
}
