/*
 * io.c — mn_export and mn_import: a database, or some of its sessions, as the JSON lines of
 * memory/jsonl.h (docs/format.md) and back. An export writes the header, each session with its
 * messages (counted against the session's message_count, so a damaged index cannot end it short
 * unnoticed), then the checkpoints, and for a whole database the long-term memories and the
 * documents; an import stores every line in one transaction, or nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "store/records.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

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

mn_status mn__export_sessions(mn_db *db, const char *const *ids, size_t n, mn_write_fn write, void *user)
{
    mn_status rc = MN_OK;
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
        mn__records_session_free(s);
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

static mn_status import_lines(mn_db *db, struct line_reader *r, struct mn__import_rows *rows, mn_import_stats *st,
                              int64_t *lineno, size_t *memories, int *optin)
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
        if (seen_header && mn__memory_line(line, len)) { /* engine/memory_io.c */
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
            rc = mn__import_session_row(db->store, rows, &it.session, &added);
            *optin |= added && mn__memory_optin_wanted(it.session.metadata);
            st->sessions_added += added;
            st->sessions_skipped += !added;
        } else if (!rc && it.kind == MN_JSONL_MESSAGE) {
            /* the stored count is this database's tokenizer's, never the file's: a count the
             * file made up would pass any budget */
            it.message.tokens = mn__message_tokens(db->tk, &it.message);
            rc = mn__import_message_row(db->store, rows, &it.message, &added);
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

mn_status mn__import_sessions(mn_db *db, mn_read_fn read, void *user, mn_import_stats *st)
{
    struct line_reader r = {read, user, MN_BUF_INIT, 0, 0, MN_OK};
    mn__buf_init(&r.buf, MN_IMPORT_MAX_LINE + 65536);
    int64_t lineno = 0;
    size_t memories = 0;
    int optin = 0;
    struct mn__import_rows rows = {0};
    mn_status rc = db->store->ops->begin(db->store);
    if (!rc) {
        rc = import_lines(db, &r, &rows, st, &lineno, &memories, &optin);
        if (rc && lineno > 0)
            rc = mn__err(rc, "import line %lld: %s", (long long)lineno, mn_errmsg());
        if (!rc)
            rc = mn__import_rows_end(db->store, &rows);
        if (rc)
            db->store->ops->rollback(db->store);
        else
            rc = db->store->ops->commit(db->store);
        mn__import_rows_free(&rows);
    }
    if (!rc)
        mn__analyze_after_load(db->store);
    if (!rc && memories) /* the memory vector index follows, once the rows are committed */
        mn__memory_index_update(db, 0, memories);
    if (!rc && optin) /* a session opted in to background extraction (docs/memory.md) */
        mn__memory_optin_set(db);
    mn__buf_release(&r.buf);
    return rc;
}
