/*
 * mnemo.c — the public functions of mnemo.h for the handle, sessions, messages, the context,
 * export and import, tokens and stats: check the handle and the arguments, call the engine
 * (src/engine/), and leave a message for mn_errmsg(). They never reach the store themselves.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "token/token.h"
#include "util/buf.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define MAX_LIST MN_SESSION_LIST_MAX

const char *mn_version(void) { return MN_VERSION_STRING; }

int mn_version_number(void) { return MN_VERSION_NUMBER; }

/* ---- open / close ---------------------------------------------------------------------------- */

mn_status mn_upgrade(const char *path, const mn_config *cfg, mn_progress_fn progress, void *user, int *from_version)
{
    mn__err_clear();
    return mn__upgrade_db(path, cfg, progress, user, from_version);
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

const char *mn_db_path(const mn_db *db) { return db && db->magic == DB_MAGIC ? mn__get_db_label(db) : NULL; }

const char *mn_db_tokenizer(const mn_db *db) { return db && db->magic == DB_MAGIC ? mn__token_name(db->tk) : NULL; }

int mn_db_append_writers(const mn_db *db) { return db && db->magic == DB_MAGIC ? mn__get_append_writers(db) : 1; }
int mn_db_reads_local(const mn_db *db) { return db && db->magic == DB_MAGIC ? mn__get_reads_local(db) : 0; }

/* ---- sessions -------------------------------------------------------------------------------- */

mn_status mn_session_create(mn_db *db, const mn_session_opts *opts, mn_session **out)
{
    static const mn_session_opts defaults = MN_SESSION_OPTS_INIT;
    mn_status rc = mn__check_db(db);
    if (out)
        *out = NULL;
    if (rc)
        return rc;
    mn_session_opts loaded = defaults;
    if ((rc = MN__ABI_LOAD(mn_session_opts, &loaded, opts ? opts : &defaults, max_turns)))
        return rc;
    return mn__create_session(db, &loaded, out);
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
    return mn__get_session_in(db, ns, canon, out);
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
    return MN__ON_REPLICA(db, mn__list_sessions(db, ns, limit ? limit : 20, offset, out));
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

void mn_session_free(mn_session *s) { mn__free_session(s); }

void mn_sessions_free(mn_sessions *list) { mn__free_sessions(list); }

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
    return MN__ON_REPLICA(db, mn__read_history(db, id, opts, out));
}

void mn_message_free(mn_message *m) { mn__free_message(m); }

void mn_messages_free(mn_messages *list) { mn__free_messages(list); }

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
    return MN__ON_REPLICA(db, mn__context_for(db, id, opts, out));
}

void mn_context_free(mn_context *ctx) { mn__free_context(ctx); }
/* ---- export / import ------------------------------------------------------------------------- */

mn_status mn_export(mn_db *db, const char *const *ids, size_t n, mn_write_fn write, void *user)
{
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    if (!write || (n && !ids))
        return mn__err(MN_MISUSE, "mn_export: NULL argument");
    return MN__ON_REPLICA(db, mn__export_sessions(db, ids, n, write, user));
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
    rc = mn__import_sessions(db, read, user, &st);
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

mn_status mn_reindex_tokens(mn_db *db, mn_progress_fn progress, void *user, int64_t *recounted)
{
    mn_status rc = mn__check_db(db);
    int64_t n = 0;
    if (recounted)
        *recounted = 0;
    if (rc)
        return rc;
    rc = mn__recount_tokens(db, progress, user, &n);
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
    return rc ? rc : mn__read_stats(db, out);
}

mn_status mn_stats_json(mn_db *db, char **out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_stats_json: out is NULL");
    *out = NULL;
    return rc ? rc : mn__format_stats(db, out);
}

/* ---- read replicas --------------------------------------------------------------------------- */

mn_status mn_db_position(mn_db *db, char out[MN_POSITION_MAX])
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_db_position: out is NULL");
    out[0] = '\0';
    if (!rc)
        mn__get_position(db, out);
    return rc;
}

mn_status mn_db_read_after(mn_db *db, const char *position)
{
    mn_status rc = mn__check_db(db);
    return rc ? rc : mn__set_read_after(db, position);
}

mn_status mn_replica_stats_get(mn_db *db, mn_replica_stats *out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_replica_stats_get: out is NULL");
    memset(out, 0, sizeof *out);
    if (!rc)
        mn__get_replica_stats(db, out);
    return rc;
}
