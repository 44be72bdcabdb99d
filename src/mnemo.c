/*
 * mnemo.c — the public functions of mnemo.h: check the handle and the arguments, dispatch to
 * memory, context and store, and leave a message for mn_errmsg(). No SQL, no policy beyond
 * argument checks lives here.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "config/config.h"
#include "context/context.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "store/records.h"
#include "store/store.h"
#include "token/token.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/uuid.h"
#include "util/banned.h"

#define MAX_LIST MN_SESSION_LIST_MAX

const char *mn_version(void) { return MN_VERSION_STRING; }

int mn_version_number(void) { return MN_VERSION_NUMBER; }

/* ---- open / close ---------------------------------------------------------------------------- */

mn_status mn_upgrade(const char *path, const mn_config *cfg, mn_progress_fn progress, void *user, int *from_version)
{
    mn__err_clear();
    int found = 0;
    mn_config *own = NULL;
    mn_status rc = cfg ? mn__config_copy(cfg, &own) : mn_config_new(&own);
    char *target = NULL;
    if (!rc && !(target = mn__expand_path(path ? path : mn__config_str(own, "memory.storage_path"))))
        rc = mn__nomem();
    mn_store *store = NULL;
    if (!rc) {
        mn_store_opts so = mn__store_opts(own, progress, user);
        so.found_version = &found;
        rc = mn__store_open(target, &so, &store); /* migrates, reporting its longest step */
    }
    if (from_version)
        *from_version = rc ? 0 : found;
    if (store)
        store->ops->close(store);
    free(target);
    mn_config_free(own);
    return rc;
}

mn_status mn_open_path(const char *path, const mn_config *cfg, mn_db **out)
{
    mn__err_clear();
    if (!out)
        return mn__err(MN_MISUSE, "mn_open: out is NULL");
    *out = NULL;
    return mn__open_db(path, cfg, out);
}

mn_status mn_open(const mn_config *cfg, mn_db **out) { return mn_open_path(NULL, cfg, out); }

void mn_close(mn_db *db) { mn__close_db(db); }

const char *mn_db_path(const mn_db *db) { return db && db->magic == DB_MAGIC ? db->store->label : NULL; }

const char *mn_db_tokenizer(const mn_db *db) { return db && db->magic == DB_MAGIC ? mn__token_name(db->tk) : NULL; }

int mn_db_append_writers(const mn_db *db) { return db && db->magic == DB_MAGIC ? db->store->ops->append_writers : 1; }

/* ---- sessions -------------------------------------------------------------------------------- */

/* A limit from the options: 0 takes the thread default (for threads) or none; -1 none. */
static mn_status thread_limit(const char *field, int64_t value, int64_t min, int64_t max, int thread, int64_t dflt,
                              int64_t *out)
{
    if (value < -1 || (value > 0 && (value < min || value > max)))
        return mn__err(MN_INVALID, "%s: %lld is not -1, 0 or from %lld to %lld", field, (long long)value,
                       (long long)min, (long long)max);
    *out = value == 0 ? (thread ? dflt : 0) : value < 0 ? 0 : value;
    return MN_OK;
}

/* Fills a new session row from opts; strings stay borrowed from opts or live in `a`. */
static mn_status session_row(const mn_db *db, const mn_session_opts *o, struct mn_arena *a, char id[MN_UUID_LEN + 1],
                             mn_session *s)
{
    static const mn_session_opts defaults = MN_SESSION_OPTS_INIT;
    if (!o)
        o = &defaults;
    mn_session_opts loaded = defaults;
    mn_status rc = MN__ABI_LOAD(mn_session_opts, &loaded, o, max_turns);
    if (rc)
        return rc;
    o = &loaded;
    memset(s, 0, sizeof *s);
    int64_t now = mn__clock_now_ms();
    rc = o->id ? mn__check_id(o->id, id) : mn__uuid_v7(now, id);
    if (rc)
        return rc;
    s->id = id;
    s->ns = o->ns ? o->ns : "default";
    if ((rc = mn__check_namespace(s->ns)) || (rc = mn__check_text("title", o->title, MN_MAX_TITLE_BYTES, "")) ||
        (rc = mn__check_text("system_prompt", o->system_prompt, MN_MAX_SYSTEM_PROMPT_BYTES, "")) ||
        (rc = mn__check_text("tool_name", o->tool_name, MN_MAX_NAME_BYTES, "")))
        return rc;
    if (o->key && (rc = mn__check_session_key(o->key)))
        return rc;
    s->key = o->key;
    s->metadata = "{}";
    if (o->metadata && (rc = mn__check_json_object("metadata", o->metadata, a, "", &s->metadata)))
        return rc;
    s->title = o->title && *o->title ? o->title : NULL;
    s->system_prompt = o->system_prompt;
    s->tool_name = o->tool_name;
    s->created_at = s->updated_at = now;
    int thread = o->tool_name != NULL;
    if ((rc = thread_limit("ttl_ms", o->ttl_ms, 1000, 366LL * 86400000, thread,
                           db->settings.threads_ttl_seconds * 1000, &s->ttl_ms)) ||
        (rc = thread_limit("max_turns", o->max_turns, 1, 1000000, thread, db->settings.threads_max_turns,
                           &s->max_turns)))
        return rc;
    s->expires_at = s->ttl_ms ? now + s->ttl_ms : 0;
    return MN_OK;
}

mn_status mn_session_create(mn_db *db, const mn_session_opts *opts, mn_session **out)
{
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (rc)
        return rc;
    struct mn_arena a = MN_ARENA_INIT;
    char id[MN_UUID_LEN + 1];
    mn_session s, *copy = NULL;
    rc = session_row(db, opts, &a, id, &s);
    /* *out is made before the insert: once the session is stored, the call cannot fail (a retry
     * would find the id taken) */
    if (!rc && out && !(copy = mn__records_session_copy(&s)))
        rc = mn__nomem();
    if (!rc)
        rc = db->store->ops->session_insert(db->store, &s);
    if (rc == MN_CONFLICT && s.key) { /* say which was taken: the key, or else the id */
        mn_session *keyed = NULL;
        if (db->store->ops->session_by_key(db->store, s.ns, s.key, &keyed) == MN_OK)
            rc = mn__err(MN_CONFLICT, "key: '%.200s' already names session %s in namespace %s", s.key, keyed->id, s.ns);
        else
            rc = mn__err(MN_CONFLICT, "session %s already exists", id);
        mn_session_free(keyed);
    }
    if (rc == MN_CONFLICT && opts && opts->id) { /* another namespace's id looks missing, not taken */
        mn_session *other = NULL;
        if (db->store->ops->session_get(db->store, id, &other) == MN_OK && strcmp(other->ns, s.ns) != 0)
            rc = mn__err(MN_NOTFOUND, "session %s not found", id);
        mn_session_free(other);
    }
    if (!rc)
        mn__memory_optin_note(db, s.metadata);
    if (!rc && out) {
        *out = copy;
        copy = NULL;
    }
    mn__records_session_free(copy);
    mn__arena_release(&a);
    return rc;
}

mn_status mn_session_get(mn_db *db, const char *id, mn_session **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_get: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, id, canon)))
        return rc;
    return mn__live_session(db, canon, out);
}

mn_status mn_session_get_in(mn_db *db, const char *ns, const char *id, mn_session **out)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_get_in: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, ns, id, canon)))
        return rc;
    mn_session *s = NULL;
    if ((rc = db->store->ops->session_get(db->store, canon, &s)))
        return rc;
    int other = ns && strcmp(s->ns, ns) != 0;
    mn_session_free(s);
    if (other) /* checked before expiry: an expired session of another namespace says nothing either */
        return mn__err(MN_NOTFOUND, "session %s not found", canon);
    return mn__live_session(db, canon, out);
}

mn_status mn_session_resolve(mn_db *db, const char *ns, const char *ref, char out[37])
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_resolve: out is NULL");
    *out = '\0';
    if (rc || (ns && (rc = mn__check_namespace(ns))))
        return rc;
    return mn__session_ref(db, ns, ref, out);
}

mn_status mn_session_list(mn_db *db, const char *ns, size_t limit, size_t offset, mn_sessions **out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_session_list: out is NULL");
    *out = NULL;
    if (rc || (ns && (rc = mn__check_namespace(ns))))
        return rc;
    if (limit > MAX_LIST)
        return mn__err(MN_INVALID, "limit: %zu is over the maximum of %d", limit, MAX_LIST);
    return db->store->ops->session_list(db->store, ns, limit ? limit : 20, offset, out);
}

mn_status mn_session_delete(mn_db *db, const char *id)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__session_ref(db, NULL, id, canon)))
        return rc;
    return mn__delete_session(db, canon);
}

mn_status mn_prune(mn_db *db, int days, int64_t *deleted)
{
    mn_status rc = mn__check_db(db);
    int64_t n = 0;
    if (deleted)
        *deleted = 0;
    if (rc)
        return rc;
    if (days < 1 || days > 36500)
        return mn__err(MN_INVALID, "days: %d is not from 1 to 36500", days);
    rc = mn__sessions_prune(db, days, &n);
    if (deleted)
        *deleted = n;
    return rc;
}

void mn_session_free(mn_session *s) { mn__records_session_free(s); }

void mn_sessions_free(mn_sessions *list) { mn__records_session_list_free(list); }

/* ---- messages -------------------------------------------------------------------------------- */

/* mn_append, mn_append_batch: src/engine/append.c. */

mn_status mn_history(mn_db *db, const char *session_id, const mn_history_opts *opts, mn_messages **out)
{
    static const mn_history_opts defaults = MN_HISTORY_OPTS_INIT;
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_history: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    if (!opts)
        opts = &defaults;
    mn_history_opts loaded = defaults;
    if ((rc = MN__ABI_LOAD(mn_history_opts, &loaded, opts, all)))
        return rc;
    opts = &loaded;
    if (opts->after_seq < 0)
        return mn__err(MN_INVALID, "after_seq: must not be negative");
    if ((rc = mn__live_session(db, id, NULL)))
        return rc;
    return db->store->ops->history(db->store, id, opts, out);
}

void mn_message_free(mn_message *m) { mn__records_message_free(m); }

void mn_messages_free(mn_messages *list) { mn__records_message_list_free(list); }

static mn_status to_json(json_t *v, char **out)
{
    *out = v ? mn__json_dump(v) : NULL;
    json_decref(v);
    return *out ? MN_OK : mn__nomem();
}

mn_status mn_message_to_json(const mn_message *m, char **out)
{
    mn__err_clear();
    if (!m || !out)
        return mn__err(MN_MISUSE, "mn_message_to_json: NULL argument");
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn__jsonl_message_buf(&b, m, 0);
    *out = rc ? NULL : mn__buf_detach(&b, NULL);
    mn__buf_release(&b);
    return rc ? rc : *out ? MN_OK : mn__nomem();
}

mn_status mn_messages_to_json(const mn_messages *list, size_t offset, size_t n, char **out)
{
    mn__err_clear();
    if (!list || !out)
        return mn__err(MN_MISUSE, "mn_messages_to_json: NULL argument");
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn__buf_addc(&b, '[');
    for (size_t i = offset; !rc && i < list->count && i - offset < n; i++)
        rc = (i > offset ? mn__buf_addc(&b, ',') : MN_OK) ? MN_NOMEM : mn__jsonl_message_buf(&b, &list->items[i], 0);
    if (!rc)
        rc = mn__buf_addc(&b, ']');
    *out = rc ? NULL : mn__buf_detach(&b, NULL);
    mn__buf_release(&b);
    return rc ? mn__err(rc, "mn_messages_to_json: out of memory or over the size cap")
              : *out ? MN_OK : mn__nomem();
}

mn_status mn_session_to_json(const mn_session *s, char **out)
{
    mn__err_clear();
    if (!s || !out)
        return mn__err(MN_MISUSE, "mn_session_to_json: NULL argument");
    return to_json(mn__jsonl_session(s, 0), out);
}

/* ---- context --------------------------------------------------------------------------------- */

mn_status mn_format_parse(const char *name, mn_format *out)
{
    mn__err_clear();
    static const char *const names[] = {"openai", "anthropic", "text"};
    for (int i = 0; name && i < 3; i++)
        if (strcmp(name, names[i]) == 0) {
            *out = (mn_format)i;
            return MN_OK;
        }
    return mn__err(MN_INVALID, "format: '%s' is not one of openai, anthropic, text", name ? name : "(null)");
}

mn_status mn_context_build(mn_db *db, const char *session_id, const mn_context_opts *opts, mn_context **out)
{
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_context_build: out is NULL");
    *out = NULL;
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    return mn__context_for(db, id, opts, out);
}

void mn_context_free(mn_context *ctx) { mn__free_context(ctx); }
/* ---- export / import ------------------------------------------------------------------------- */

struct export_state {
    mn_write_fn write;
    void *user;
    struct mn_buf line;
    /* A damaged index can make a read end early without an error: each session's messages are
     * counted against the session's own message_count. */
    char session[MN_UUID_LEN + 1];
    int64_t expected, seen;
    mn_status rc;
    char msg[256];
};

/* The messages of the previous session were all read (else MN_CORRUPT in e->rc). */
static int session_complete(struct export_state *e)
{
    if (e->session[0] && e->seen != e->expected) {
        e->rc = MN_CORRUPT;
        snprintf(e->msg, sizeof e->msg, "export: session %s has %lld messages but %lld could be read: the database"
                 " is damaged (PRAGMA integrity_check on SQLite)", e->session, (long long)e->expected,
                 (long long)e->seen);
    }
    return e->rc != MN_OK;
}

/* A line could not be made (out of memory, over the buffer's cap): its status goes in e->rc, as
 * a non-zero return alone is a failed write (MN_IO). Returns 1. */
static int line_failed(struct export_state *e, mn_status rc)
{
    e->rc = rc;
    snprintf(e->msg, sizeof e->msg, "%s", mn_errmsg());
    return 1;
}

static int emit(struct export_state *e, json_t *v)
{
    char *text = v ? mn__json_dump(v) : NULL;
    json_decref(v);
    mn__buf_reset(&e->line);
    mn_status rc = text ? mn__buf_adds(&e->line, text) : mn__nomem();
    if (!rc)
        rc = mn__buf_addc(&e->line, '\n');
    free(text);
    return rc ? line_failed(e, rc) : e->write(e->user, e->line.data, e->line.len) != 0;
}

static int export_session(void *user, const mn_session *s)
{
    struct export_state *e = user;
    if (session_complete(e))
        return 1;
    snprintf(e->session, sizeof e->session, "%s", s->id);
    e->expected = s->message_count;
    e->seen = 0;
    return emit(user, mn__jsonl_session(s, 1));
}

static int export_message(void *user, const mn_message *m)
{
    struct export_state *e = user;
    e->seen++;
    mn__buf_reset(&e->line);
    mn_status rc = mn__jsonl_message_buf(&e->line, m, 1);
    if (!rc)
        rc = mn__buf_addc(&e->line, '\n');
    return rc ? line_failed(e, rc) : e->write(e->user, e->line.data, e->line.len) != 0;
}

static int cmp_id_then_place(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    int c = strcmp(x, y);
    return c ? c : (x > y) - (x < y);
}

/* Drops the repeats of list (n canonical ids, list[i] == canon[i]): each session is written
 * once, where it was first named. Sorting pointers into canon keeps the first of equal ids first
 * (its address is the lowest). Returns the new count. */
static size_t unique_ids(const char **list, char (*canon)[MN_UUID_LEN + 1], size_t n)
{
    const char **sorted = malloc(n * sizeof *sorted);
    if (!sorted)
        return 0;
    memcpy(sorted, list, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_id_then_place);
    for (size_t i = 1; i < n; i++)
        if (strcmp(sorted[i], sorted[i - 1]) == 0)
            list[(size_t)(sorted[i] - canon[0]) / sizeof *canon] = NULL;
    free(sorted);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (list[i])
            list[kept++] = list[i];
    return kept;
}

mn_status mn_export(mn_db *db, const char *const *ids, size_t n, mn_write_fn write, void *user)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    if (!write || (n && !ids))
        return mn__err(MN_MISUSE, "mn_export: NULL argument");
    char(*canon)[MN_UUID_LEN + 1] = n ? calloc(n, sizeof *canon) : NULL;
    const char **list = n ? calloc(n, sizeof *list) : NULL;
    if (n && (!canon || !list))
        rc = mn__nomem();
    for (size_t i = 0; i < n && !rc; i++) {
        rc = mn__session_ref(db, NULL, ids[i], canon[i]);
        list[i] = canon[i];
    }
    if (!rc && n > 1 && !(n = unique_ids(list, canon, n)))
        rc = mn__nomem();
    struct export_state e = {write, user, MN_BUF_INIT, "", 0, 0, MN_OK, ""};
    for (size_t i = 0; i < n && !rc; i++) { /* nothing is written unless every named session exists */
        mn_session *s = NULL;
        rc = db->store->ops->session_get(db->store, list[i], &s);
        mn_session_free(s);
    }
    if (!rc && emit(&e, json_pack("{s:s, s:i}", "format", MN_EXPORT_FORMAT, "version", MN_EXPORT_VERSION)))
        rc = e.rc ? e.rc : mn__err(MN_IO, "export: write failed"); /* e.rc: its message below */
    if (!rc)
        rc = db->store->ops->export_scan(db->store, list, n, export_session, export_message, &e);
    if (e.rc || (!rc && session_complete(&e)))
        rc = mn__err(e.rc, "%s: %s", db->store->label, e.msg); /* the count check's, not the scan's */
    if (!rc) /* each session's graph checkpoints, after every session line */
        rc = mn__checkpoint_export(db, list, n, write, user);
    if (!rc && n == 0) /* a whole-database export carries the long-term memories too */
        rc = mn__memory_export(db, write, user);
    if (!rc && n == 0) /* and the documents (engine/document_io.c) */
        rc = mn__document_export(db, write, user);
    mn__buf_release(&e.line);
    free(canon);
    free(list);
    return rc;
}

/* Reads the stream in chunks and hands out complete lines. */
struct line_reader {
    mn_read_fn read;
    void *user;
    struct mn_buf buf;
    size_t start; /* where the next line begins in buf */
    int eof;
    mn_status rc; /* why next_line returned -1 */
};

/* line, len: the next line without its newline; returns 0 at the end, 1 with a line, or a
 * negative value after setting an error. */
static int next_line(struct line_reader *r, const char **line, size_t *len)
{
    for (;;) {
        char *nl = memchr(r->buf.data + r->start, '\n', r->buf.len - r->start);
        if (nl || (r->eof && r->start < r->buf.len)) {
            size_t end = nl ? (size_t)(nl - r->buf.data) : r->buf.len;
            *line = r->buf.data + r->start;
            *len = end - r->start;
            r->start = nl ? end + 1 : end;
            return 1;
        }
        if (r->eof)
            return 0;
        if (r->start > 0) { /* move the partial line to the front */
            memmove(r->buf.data, r->buf.data + r->start, r->buf.len - r->start);
            r->buf.len -= r->start;
            r->buf.data[r->buf.len] = '\0';
            r->start = 0;
        }
        if (r->buf.len > MN_IMPORT_MAX_LINE) {
            r->rc = mn__err(MN_TOOBIG, "a line is longer than %zu bytes", MN_IMPORT_MAX_LINE);
            return -1;
        }
        char chunk[65536];
        long got = r->read(r->user, chunk, sizeof chunk);
        if (got < 0) {
            r->rc = mn__err(MN_IO, "read failed");
            return -1;
        }
        if (got == 0)
            r->eof = 1;
        else if ((r->rc = mn__buf_add(&r->buf, chunk, (size_t)got)))
            return -1;
    }
}

static mn_status import_lines(mn_db *db, struct line_reader *r, mn_import_stats *st, int64_t *lineno,
                              size_t *memories, int *optin)
{
    const char *line;
    size_t len;
    int got, seen_header = 0;
    while ((got = next_line(r, &line, &len)) == 1) {
        ++*lineno;
        if (len == 0 || (len == 1 && line[0] == '\r'))
            continue; /* blank lines are allowed */
        if (seen_header && mn__checkpoint_line(line, len)) { /* engine/checkpoint_io.c */
            mn_status crc = mn__checkpoint_import_line(db, line, len, NULL);
            if (crc)
                return crc;
            continue;
        }
        if (seen_header && mn__document_line(line, len)) { /* engine/document_io.c */
            mn_status drc = mn__document_import_line(db, line, len);
            if (drc)
                return drc;
            continue;
        }
        if (seen_header && mn__memory_line(line, len)) { /* mnemo_memory.c */
            int added_memory = 0;
            mn_status mrc = mn__memory_import_line(db, line, len, &added_memory);
            if (mrc)
                return mrc;
            *memories += (size_t)added_memory;
            continue;
        }
        struct mn_arena a = MN_ARENA_INIT;
        struct mn_jsonl_item it;
        int added = 0;
        mn_status rc = mn__jsonl_parse_line(line, len, db->max_message_bytes, &a, &it);
        if (!seen_header && it.kind != MN_JSONL_HEADER)
            rc = mn__err(MN_INVALID, "not a mnemo export: the first line must be the header"
                                     " {\"format\":\"%s\",\"version\":%d}", MN_EXPORT_FORMAT, MN_EXPORT_VERSION);
        else if (!rc && seen_header && it.kind == MN_JSONL_HEADER)
            rc = mn__err(MN_INVALID, "a header may only be the first line");
        seen_header = 1;
        if (!rc && it.kind == MN_JSONL_SESSION) {
            rc = db->store->ops->import_session(db->store, &it.session, &added);
            *optin |= added && mn__memory_optin_wanted(it.session.metadata);
            st->sessions_added += added;
            st->sessions_skipped += !added;
        } else if (!rc && it.kind == MN_JSONL_MESSAGE) {
            /* the stored count is this database's tokenizer's, never the file's: a count the
             * file made up would pass any budget */
            it.message.tokens = mn__message_tokens(db->tk, &it.message);
            rc = db->store->ops->import_message(db->store, &it.message, &added);
            if (rc == MN_NOTFOUND)
                rc = mn__err(MN_INVALID, "message %lld belongs to session %s, which has no session line before it",
                             (long long)it.message.id, it.message.session_id);
            else if (rc == MN_CONFLICT && it.message.idempotency_key)
                rc = mn__err(MN_CONFLICT, "message %lld: idempotency_key '%s' is already used by another message"
                             " of session %s", (long long)it.message.id, it.message.idempotency_key,
                             it.message.session_id);
            else if (rc == MN_CONFLICT)
                rc = mn__err(MN_CONFLICT, "message %lld of session %s: %s", (long long)it.message.id,
                             it.message.session_id, mn_errmsg());
            st->messages_added += added;
            st->messages_skipped += !added;
        }
        mn__arena_release(&a);
        if (rc)
            return rc;
    }
    if (got < 0)
        return r->rc;
    if (!seen_header)
        return mn__err(MN_INVALID, "not a mnemo export: the input is empty");
    return MN_OK;
}

mn_status mn_import(mn_db *db, mn_read_fn read, void *user, mn_import_stats *stats)
{
    mn_status rc = mn__check_db(db);
    mn_import_stats st = {0, 0, 0, 0};
    if (stats)
        *stats = st;
    if (rc)
        return rc;
    if (!read)
        return mn__err(MN_MISUSE, "mn_import: read is NULL");
    struct line_reader r = {read, user, MN_BUF_INIT, 0, 0, MN_OK};
    mn__buf_init(&r.buf, MN_IMPORT_MAX_LINE + 65536);
    int64_t lineno = 0;
    size_t memories = 0;
    int optin = 0;
    rc = db->store->ops->begin(db->store);
    if (!rc) {
        rc = import_lines(db, &r, &st, &lineno, &memories, &optin);
        if (rc) {
            if (lineno > 0)
                rc = mn__err(rc, "import line %lld: %s", (long long)lineno, mn_errmsg());
            db->store->ops->rollback(db->store);
        } else
            rc = db->store->ops->commit(db->store);
    }
    if (!rc && memories) /* the memory vector index follows, once the rows are committed */
        mn__memory_index_update(db, 0, memories);
    if (!rc && optin) /* a session opted in to background extraction (docs/memory.md) */
        mn__memory_optin_set(db);
    mn__buf_release(&r.buf);
    if (!rc && stats)
        *stats = st;
    return rc;
}

/* ---- tokens ---------------------------------------------------------------------------------- */

static mn_status encoding_tokenizer(const char *encoding, mn_tokenizer **out)
{
    mn__err_clear();
    if (!encoding)
        return mn__err(MN_INVALID, "encoding: NULL");
    if (strcmp(encoding, "auto") == 0)
        return mn__err(MN_INVALID, "encoding: name one (cl100k_base, o200k_base or heuristic)");
    return mn__resolve_tokenizer(encoding, getenv("MNEMO_DATA_DIR"), out);
}

mn_status mn_count_tokens_threads(const char *encoding, const char *text, size_t len, unsigned threads,
                                  size_t *count)
{
    mn_tokenizer *tk;
    if (!count || (!text && len))
        return mn__err(MN_MISUSE, "mn_count_tokens: NULL argument");
    *count = 0;
    mn_status rc = encoding_tokenizer(encoding, &tk);
    if (!rc)
        *count = mn__token_count_threads(tk, text ? text : "", len, threads);
    return rc;
}

mn_status mn_count_tokens(const char *encoding, const char *text, size_t len, size_t *count)
{
    return mn_count_tokens_threads(encoding, text, len, 0, count);
}

mn_status mn_encode_tokens(const char *encoding, const char *text, size_t len, uint32_t **ids, size_t *n)
{
    mn_tokenizer *tk;
    if (!ids || !n || (!text && len))
        return mn__err(MN_MISUSE, "mn_encode_tokens: NULL argument");
    *ids = NULL;
    *n = 0;
    mn_status rc = encoding_tokenizer(encoding, &tk);
    if (rc)
        return rc;
    if (!tk->vt->encode)
        return mn__err(MN_INVALID, "encoding: %s counts tokens but has no token ids", mn__token_name(tk));
    return tk->vt->encode(tk, text ? text : "", len, ids, n);
}

struct recount {
    const mn_tokenizer *tk;
    mn_progress_fn progress;
    void *user;
};

static int64_t recount_one(void *user, const mn_message *m)
{
    const struct recount *r = user;
    return mn__message_tokens(r->tk, m);
}

static void recount_progress(void *user, int64_t done, int64_t total)
{
    const struct recount *r = user;
    if (r->progress)
        r->progress(r->user, done, total);
}

mn_status mn_reindex_tokens(mn_db *db, mn_progress_fn progress, void *user, int64_t *recounted)
{
    mn_status rc = mn__check_db(db);
    int64_t n = 0;
    if (recounted)
        *recounted = 0;
    if (rc)
        return rc;
    struct recount r = {db->tk, progress, user};
    rc = db->store->ops->recount_tokens(db->store, recount_one, &r, recount_progress, &n);
    if (!rc)
        rc = db->store->ops->meta_set(db->store, "tokenizer", mn__token_name(db->tk));
    if (recounted)
        *recounted = n;
    return rc;
}

/* ---- stats ----------------------------------------------------------------------------------- */

mn_status mn_stats_get(mn_db *db, mn_stats *out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_stats_get: out is NULL");
    memset(out, 0, sizeof *out);
    if (rc)
        return rc;
    mn_store_stats s;
    memset(&s, 0, sizeof s);
    if ((rc = db->store->ops->stats(db->store, mn__clock_now_ms(), &s)))
        return rc;
    out->sessions = s.sessions;
    out->messages = s.messages;
    out->tokens = s.tokens;
    out->db_bytes = s.db_bytes;
    out->wal_bytes = s.wal_bytes;
    out->schema_version = s.schema_version;
    out->threads = s.threads;
    out->turns = s.turns;
    out->expired_pending = s.expired_pending;
    return MN_OK;
}

mn_status mn_stats_json(mn_db *db, char **out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_stats_json: out is NULL");
    *out = NULL;
    if (rc)
        return rc;
    mn_store_stats s;
    memset(&s, 0, sizeof s);
    if ((rc = db->store->ops->stats(db->store, mn__clock_now_ms(), &s)))
        return rc;
    double per_msg = s.messages ? (double)(s.db_bytes + s.wal_bytes) / (double)s.messages : 0.0;
    return to_json(json_pack("{s:s, s:s, s:i, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "path", db->store->label,
                             "backend", db->store->ops->name, "schema_version", s.schema_version, "tokenizer",
                             mn__token_name(db->tk), "sessions", (json_int_t)s.sessions, "messages",
                             (json_int_t)s.messages, "tokens", (json_int_t)s.tokens, "threads",
                             (json_int_t)s.threads, "turns", (json_int_t)s.turns, "expired_pending",
                             (json_int_t)s.expired_pending, "db_bytes", (json_int_t)s.db_bytes, "wal_bytes",
                             (json_int_t)s.wal_bytes, "bytes_per_message", per_msg),
                   out);
}
