/*
 * jsonl.c — the JSON shapes of sessions and messages, shared by `--json` output and the export
 * format, and the strict parser for import lines (see jsonl.h, docs/format.md).
 */
#include "memory/jsonl.h"

#include <string.h>

#include "memory/message.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/uuid.h"
#include "util/banned.h"

mn_status mn__check_namespace(const char *ns)
{
    size_t len = ns ? strlen(ns) : 0;
    if (len == 0 || len > 128)
        return mn__err(MN_INVALID, "namespace: must be 1 to 128 characters");
    for (size_t i = 0; i < len; i++) {
        char c = ns[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._:@-", c)))
            return mn__err(MN_INVALID, "namespace: '%s' has a character outside [A-Za-z0-9._:@-]", ns);
    }
    return MN_OK;
}

mn_status mn__check_session_key(const char *key)
{
    char canon[MN_UUID_LEN + 1];
    size_t len = key ? strlen(key) : 0, bad = 0;
    if (len == 0)
        return mn__err(MN_INVALID, "key: empty (a session key is 1 to %d bytes)", MN_MAX_SESSION_KEY_BYTES);
    if (len > MN_MAX_SESSION_KEY_BYTES)
        return mn__err(MN_TOOBIG, "key: %zu bytes exceeds the limit of %d", len, MN_MAX_SESSION_KEY_BYTES);
    if (!mn__utf8_valid(key, len, &bad))
        return mn__err(MN_INVALID, "key: invalid UTF-8 at byte %zu", bad);
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
            return mn__err(MN_INVALID, "key: a control character at byte %zu", i);
    if (mn__uuid_parse(key, canon)) /* a UUID names a session by its id: as a key it would be ambiguous */
        return mn__err(MN_INVALID, "key: '%s' is a UUID; a session's UUID is its id", key);
    return MN_OK;
}

json_t *mn__jsonl_session(const mn_session *s, int with_type)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if ((with_type && mn__json_set_str(o, "type", "session")) || mn__json_set_str(o, "id", s->id) ||
        mn__json_set_str(o, "namespace", s->ns) || mn__json_set_str(o, "title", s->title) ||
        mn__json_set_str(o, "system_prompt", s->system_prompt) || mn__json_set_raw(o, "metadata", s->metadata) ||
        mn__json_set_str(o, "tool_name", s->tool_name) || mn__json_set_str(o, "parent_id", s->parent_id) ||
        (s->key && mn__json_set_str(o, "key", s->key)) || json_object_set_new(o, "created_at", json_integer(s->created_at)) ||
        json_object_set_new(o, "updated_at", json_integer(s->updated_at)) ||
        json_object_set_new(o, "expires_at", json_integer(s->expires_at)) ||
        json_object_set_new(o, "ttl_ms", json_integer(s->ttl_ms)) ||
        json_object_set_new(o, "max_turns", json_integer(s->max_turns)) ||
        json_object_set_new(o, "cleared_seq", json_integer(s->cleared_seq)) ||
        json_object_set_new(o, "cleared_from", json_integer(s->cleared_from))) {
        json_decref(o);
        return NULL;
    }
    if (!with_type && (json_object_set_new(o, "message_count", json_integer(s->message_count)) ||
                       json_object_set_new(o, "token_count", json_integer(s->token_count)) ||
                       json_object_set_new(o, "turn_count", json_integer(s->turn_count)) ||
                       json_object_set_new(o, "inactive_count", json_integer(s->inactive_count)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* "key": then a JSON string or null (s may be NULL). */
static mn_status field_str(struct mn_buf *b, const char *key, const char *s)
{
    mn_status rc = mn__buf_adds(b, key);
    return rc ? rc : mn__buf_add_json_str(b, s);
}

/* "key": then stored canonical JSON text (written by mn__json_dump on the way in) or null. */
static mn_status field_raw(struct mn_buf *b, const char *key, const char *json_text)
{
    mn_status rc = mn__buf_adds(b, key);
    return rc ? rc : mn__buf_adds(b, json_text ? json_text : "null");
}

mn_status mn__jsonl_message_buf(struct mn_buf *b, const mn_message *m, int with_type)
{
    /* The same bytes as building the object with jansson and dumping it compactly (keys in
     * this order), without the tree: history and export are hot paths. */
    mn_status rc = mn__buf_adds(b, with_type ? "{\"type\":\"message\",\"id\":" : "{\"id\":");
    if (!rc)
        rc = mn__buf_add_i64(b, m->id);
    if (!rc)
        rc = field_str(b, ",\"session_id\":", m->session_id);
    if (!rc && !(rc = mn__buf_adds(b, ",\"seq\":")))
        rc = mn__buf_add_i64(b, m->seq);
    if (!rc)
        rc = field_str(b, ",\"role\":", mn_role_name(m->role));
    if (!rc)
        rc = field_str(b, ",\"content\":", m->content);
    if (!rc)
        rc = field_raw(b, ",\"tool_calls\":", m->tool_calls);
    if (!rc)
        rc = field_str(b, ",\"tool_call_id\":", m->tool_call_id);
    if (!rc)
        rc = field_str(b, ",\"name\":", m->name);
    if (!rc)
        rc = field_str(b, ",\"tool_name\":", m->tool_name);
    if (!rc)
        rc = field_str(b, ",\"model\":", m->model);
    if (!rc)
        rc = field_raw(b, ",\"files\":", m->files);
    if (!rc)
        rc = field_raw(b, ",\"metadata\":", m->metadata);
    if (!rc)
        rc = field_str(b, ",\"idempotency_key\":", m->idempotency_key);
    if (!rc && !(rc = mn__buf_adds(b, ",\"tokens\":")) && !(rc = mn__buf_add_i64(b, m->tokens)) &&
        !(rc = mn__buf_adds(b, m->pinned ? ",\"pinned\":true,\"created_at\":" : ",\"pinned\":false,\"created_at\":")) &&
        !(rc = mn__buf_add_i64(b, m->created_at)))
        rc = mn__buf_adds(b, m->active ? ",\"active\":true}" : ",\"active\":false}");
    return rc;
}

json_t *mn__jsonl_message(const mn_message *m, int with_type)
{
    struct mn_buf b = MN_BUF_INIT;
    json_t *o = mn__jsonl_message_buf(&b, m, with_type) ? NULL : json_loadb(b.data, b.len, 0, NULL);
    mn__buf_release(&b);
    return o;
}

/* ---- parsing --------------------------------------------------------------------------------- */

/* An optional string member: absent or null → NULL; anything else must be a string. */
static mn_status opt_str(json_t *o, const char *key, struct mn_arena *a, const char **out)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return MN_OK;
    if (!json_is_string(v))
        return mn__err(MN_INVALID, "%s: must be a string or null", key);
    if (memchr(json_string_value(v), '\0', json_string_length(v)))
        return mn__err(MN_INVALID, "%s: contains a NUL character", key);
    *out = mn__arena_strndup(a, json_string_value(v), json_string_length(v));
    return *out ? MN_OK : mn__nomem();
}

/* An optional JSON member kept as canonical text (arrays, objects). */
static mn_status opt_json(json_t *o, const char *key, struct mn_arena *a, const char **out)
{
    json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return MN_OK;
    char *text = mn__json_dump(v);
    if (!text)
        return mn__nomem();
    *out = mn__arena_strndup(a, text, strlen(text));
    free(text);
    return *out ? MN_OK : mn__nomem();
}

/* Bounds of the integers an export line may carry besides jsonl.h's: every sum the store and the
 * context walk make of them then stays far inside int64_t. */
#define MAX_TTL_MS (366LL * 86400000)     /* as mn_session_create */
#define MAX_TURNS 1000000LL               /* as mn_session_create */
#define MAX_TOKENS 1000000000LL           /* the count is recounted on import anyway */

static mn_status req_int(json_t *o, const char *key, int64_t min, int64_t max, int64_t *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
        return mn__err(MN_INVALID, "%s: must be an integer from %lld to %lld", key, (long long)min, (long long)max);
    *out = json_integer_value(v);
    return MN_OK;
}

/* An optional non-negative integer member; absent → 0. */
static mn_status opt_int(json_t *o, const char *key, int64_t max, int64_t *out)
{
    *out = 0;
    return json_object_get(o, key) ? req_int(o, key, 0, max, out) : MN_OK;
}

static mn_status req_uuid(json_t *o, const char *key, struct mn_arena *a, const char **out)
{
    char canon[MN_UUID_LEN + 1];
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v) || !mn__uuid_parse(json_string_value(v), canon))
        return mn__err(MN_INVALID, "%s: must be a UUID", key);
    *out = mn__arena_strndup(a, canon, MN_UUID_LEN);
    return *out ? MN_OK : mn__nomem();
}

static mn_status parse_session(json_t *o, struct mn_arena *a, mn_session *s)
{
    mn_status rc;
    const char *parent;
    if ((rc = req_uuid(o, "id", a, &s->id)) || (rc = opt_str(o, "namespace", a, &s->ns)) ||
        (rc = opt_str(o, "title", a, &s->title)) || (rc = opt_str(o, "system_prompt", a, &s->system_prompt)) ||
        (rc = opt_json(o, "metadata", a, &s->metadata)) || (rc = opt_str(o, "tool_name", a, &s->tool_name)) ||
        (rc = opt_str(o, "parent_id", a, &parent)) || (rc = opt_str(o, "key", a, &s->key)) ||
        (rc = req_int(o, "created_at", 0, MN_EXPORT_MAX_TIME_MS, &s->created_at)) ||
        (rc = req_int(o, "updated_at", 0, MN_EXPORT_MAX_TIME_MS, &s->updated_at)) ||
        (rc = req_int(o, "expires_at", 0, MN_EXPORT_MAX_TIME_MS, &s->expires_at)) ||
        (rc = opt_int(o, "ttl_ms", MAX_TTL_MS, &s->ttl_ms)) || (rc = opt_int(o, "max_turns", MAX_TURNS, &s->max_turns)) ||
        (rc = opt_int(o, "cleared_seq", MN_EXPORT_MAX_SEQ, &s->cleared_seq)) ||
        (rc = opt_int(o, "cleared_from", MN_EXPORT_MAX_SEQ, &s->cleared_from)))
        return rc;
    if (!s->ns)
        s->ns = "default";
    if ((rc = mn__check_namespace(s->ns)) || (s->key && (rc = mn__check_session_key(s->key))))
        return rc;
    char canon_parent[MN_UUID_LEN + 1];
    if (parent && !mn__uuid_parse(parent, canon_parent))
        return mn__err(MN_INVALID, "parent_id: must be a UUID");
    s->parent_id = parent ? mn__arena_strndup(a, canon_parent, MN_UUID_LEN) : NULL;
    if (parent && !s->parent_id)
        return mn__nomem();
    /* the checks of `session new --metadata` (an object, its size, at most 64 levels deep) */
    if (s->metadata && (rc = mn__check_json_object("metadata", s->metadata, a, "", &s->metadata)))
        return rc;
    if ((rc = mn__check_text("title", s->title, MN_MAX_TITLE_BYTES, "")) ||
        (rc = mn__check_text("system_prompt", s->system_prompt, MN_MAX_SYSTEM_PROMPT_BYTES, "")) ||
        (rc = mn__check_text("tool_name", s->tool_name, MN_MAX_NAME_BYTES, "")))
        return rc;
    return MN_OK;
}

static mn_status parse_message(json_t *o, size_t max_bytes, struct mn_arena *a, mn_message *m)
{
    mn_status rc;
    const char *role;
    int64_t tokens;
    if ((rc = req_uuid(o, "session_id", a, &m->session_id)) || (rc = req_int(o, "id", 1, MN_EXPORT_MAX_ID, &m->id)) ||
        (rc = req_int(o, "seq", 1, MN_EXPORT_MAX_SEQ, &m->seq)) || (rc = opt_str(o, "role", a, &role)) ||
        (rc = opt_str(o, "content", a, &m->content)) || (rc = opt_json(o, "tool_calls", a, &m->tool_calls)) ||
        (rc = opt_str(o, "tool_call_id", a, &m->tool_call_id)) || (rc = opt_str(o, "name", a, &m->name)) ||
        (rc = opt_str(o, "tool_name", a, &m->tool_name)) || (rc = opt_str(o, "model", a, &m->model)) ||
        (rc = opt_json(o, "files", a, &m->files)) || (rc = opt_json(o, "metadata", a, &m->metadata)) ||
        (rc = opt_str(o, "idempotency_key", a, &m->idempotency_key)) || (rc = req_int(o, "tokens", 0, MAX_TOKENS, &tokens)) ||
        (rc = req_int(o, "created_at", 0, MN_EXPORT_MAX_TIME_MS, &m->created_at)))
        return rc;
    if ((rc = mn_role_parse(role, &m->role)))
        return rc;
    m->tokens = tokens;
    json_t *pinned = json_object_get(o, "pinned");
    if (pinned && !json_is_boolean(pinned))
        return mn__err(MN_INVALID, "pinned: must be true or false");
    m->pinned = json_is_true(pinned);
    json_t *active = json_object_get(o, "active");
    if (active && !json_is_boolean(active))
        return mn__err(MN_INVALID, "active: must be true or false");
    m->active = !json_is_false(active); /* absent: active */
    return mn__message_check_row(m, max_bytes, "");
}

mn_status mn__jsonl_parse_line(const char *line, size_t len, size_t max_bytes, struct mn_arena *a,
                              struct mn_jsonl_item *out)
{
    memset(out, 0, sizeof *out);
    json_error_t e;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
    if (!o)
        return mn__err(MN_INVALID, "malformed JSON: %s at column %d", e.text, e.column);
    mn_status rc;
    const char *type = json_string_value(json_object_get(o, "type"));
    const char *format = json_string_value(json_object_get(o, "format"));
    if (!json_is_object(o))
        rc = mn__err(MN_INVALID, "each line must be a JSON object");
    else if (format) {
        json_t *version = json_object_get(o, "version");
        out->kind = MN_JSONL_HEADER;
        if (strcmp(format, MN_EXPORT_FORMAT) != 0)
            rc = mn__err(MN_INVALID, "format: '%s' is not %s", format, MN_EXPORT_FORMAT);
        else if (!json_is_integer(version) || json_integer_value(version) != MN_EXPORT_VERSION)
            rc = mn__err(MN_INVALID, "version: this mnemo reads export version %d only", MN_EXPORT_VERSION);
        else
            rc = MN_OK;
    } else if (type && strcmp(type, "session") == 0) {
        out->kind = MN_JSONL_SESSION;
        rc = parse_session(o, a, &out->session);
    } else if (type && strcmp(type, "message") == 0) {
        out->kind = MN_JSONL_MESSAGE;
        rc = parse_message(o, max_bytes, a, &out->message);
    } else
        rc = mn__err(MN_INVALID, "type: must be \"session\" or \"message\"");
    json_decref(o);
    return rc;
}
