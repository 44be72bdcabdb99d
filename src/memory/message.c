/*
 * message.c — validation of messages before anything is written (DESIGN.md §6), their stored
 * form (JSON fields canonicalised, token counts), and titles from first prompts.
 */
#include "memory/message.h"

#include <string.h>

#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

mn_status mn__check_text(const char *field, const char *s, size_t max, const char *label)
{
    if (!s)
        return MN_OK;
    size_t len = strlen(s), bad;
    if (len > max)
        return mn__err(MN_TOOBIG, "%s%s: %zu bytes exceeds the limit of %zu", label, field, len, max);
    if (!mn__utf8_valid(s, len, &bad))
        return mn__err(MN_INVALID, "%s%s: invalid UTF-8 at byte %zu", label, field, bad);
    return MN_OK;
}

/* Parses JSON text for a field, reporting with the label; checks the size first. */
static mn_status parse_field(const char *field, const char *text, const char *label, json_t **out)
{
    mn_status rc = mn__check_text(field, text, MN_MAX_JSON_FIELD_BYTES, label);
    if (rc)
        return rc;
    rc = mn__json_parse(text, field, out);
    if (rc) {
        return mn__err(rc, "%s%s", label, mn_errmsg());
    }
    return MN_OK;
}

static mn_status canon(json_t *v, struct mn_arena *a, const char **out)
{
    char *s = mn__json_dump(v);
    json_decref(v);
    if (!s)
        return mn__nomem();
    *out = mn__arena_strndup(a, s, strlen(s));
    free(s);
    return *out ? MN_OK : mn__nomem();
}

mn_status mn__check_json_object(const char *field, const char *text, struct mn_arena *a, const char *label,
                               const char **out)
{
    json_t *v;
    mn_status rc = parse_field(field, text, label, &v);
    if (rc)
        return rc;
    if (!json_is_object(v)) {
        json_decref(v);
        return mn__err(MN_INVALID, "%s%s: must be a JSON object", label, field);
    }
    return canon(v, a, out);
}

/* OpenAI tool calls: a non-empty array of {"id", "type": "function", "function": {"name",
 * "arguments"}}; ids unique within the message. A missing type or arguments is filled in
 * ("function", "{}"), so that what is stored is what a provider accepts. */
static mn_status check_tool_calls(json_t *v, const char *label)
{
    if (!json_is_array(v) || json_array_size(v) == 0)
        return mn__err(MN_INVALID, "%stool_calls: must be a non-empty JSON array", label);
    size_t i;
    json_t *call;
    json_array_foreach(v, i, call)
    {
        json_t *id = json_object_get(call, "id"), *type = json_object_get(call, "type");
        json_t *fn = json_object_get(call, "function");
        json_t *name = json_object_get(fn, "name"), *args = json_object_get(fn, "arguments");
        if (!json_is_object(call))
            return mn__err(MN_INVALID, "%stool_calls[%zu]: must be an object", label, i);
        if (!json_is_string(id) || json_string_length(id) == 0 || json_string_length(id) > MN_MAX_NAME_BYTES)
            return mn__err(MN_INVALID, "%stool_calls[%zu].id: must be a string of 1 to %d bytes", label, i,
                           MN_MAX_NAME_BYTES);
        if (type && (!json_is_string(type) || strcmp(json_string_value(type), "function") != 0))
            return mn__err(MN_INVALID, "%stool_calls[%zu].type: must be \"function\"", label, i);
        if (!json_is_object(fn) || !json_is_string(name) || json_string_length(name) == 0)
            return mn__err(MN_INVALID, "%stool_calls[%zu].function.name: must be a non-empty string", label, i);
        if (args && !json_is_string(args))
            return mn__err(MN_INVALID, "%stool_calls[%zu].function.arguments: must be a string (JSON text)", label,
                           i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(json_string_value(json_object_get(json_array_get(v, j), "id")), json_string_value(id)) == 0)
                return mn__err(MN_INVALID, "%stool_calls[%zu].id: '%s' appears twice", label, i,
                               json_string_value(id));
        if ((!type && json_object_set_new(call, "type", json_string("function"))) ||
            (!args && json_object_set_new(fn, "arguments", json_string("{}"))))
            return mn__nomem();
    }
    return MN_OK;
}

static mn_status check_files(json_t *v, const char *label)
{
    if (!json_is_array(v))
        return mn__err(MN_INVALID, "%sfiles: must be a JSON array of path strings", label);
    size_t i;
    json_t *p;
    json_array_foreach(v, i, p)
    {
        if (!json_is_string(p) || json_string_length(p) == 0)
            return mn__err(MN_INVALID, "%sfiles[%zu]: must be a non-empty string", label, i);
    }
    return MN_OK;
}

/* The checks shared by new messages and imported rows; JSON fields come back canonical in
 * *tool_calls, *files and *metadata when `a` is given. */
static mn_status check_fields(mn_role role, const char *content, const char *tool_calls_text,
                              const char *tool_call_id, const char *name, const char *tool_name, const char *model,
                              const char *files_text, const char *metadata_text, const char *idem, size_t max_bytes,
                              const char *label, struct mn_arena *a, const char **tool_calls, const char **files,
                              const char **metadata)
{
    mn_status rc;
    if (!mn_role_name(role))
        return mn__err(MN_INVALID, "%srole: %d is not a role", label, (int)role);
    if (!content && !(role == MN_ROLE_ASSISTANT && tool_calls_text))
        return mn__err(MN_INVALID, "%scontent: required (only an assistant message with tool_calls may omit it)",
                       label);
    if ((rc = mn__check_text("content", content, max_bytes, label)))
        return rc == MN_TOOBIG ? mn__err(MN_TOOBIG, "%s (memory.max_message_bytes)", mn_errmsg()) : rc;
    if (role == MN_ROLE_TOOL && (!tool_call_id || !*tool_call_id))
        return mn__err(MN_INVALID, "%stool_call_id: required for a tool message", label);
    if (role != MN_ROLE_TOOL && tool_call_id)
        return mn__err(MN_INVALID, "%stool_call_id: only a tool message has one", label);
    if (role != MN_ROLE_ASSISTANT && tool_calls_text)
        return mn__err(MN_INVALID, "%stool_calls: only an assistant message has them", label);
    if ((rc = mn__check_text("tool_call_id", tool_call_id, MN_MAX_NAME_BYTES, label)) ||
        (rc = mn__check_text("name", name, MN_MAX_NAME_BYTES, label)) ||
        (rc = mn__check_text("tool_name", tool_name, MN_MAX_NAME_BYTES, label)) ||
        (rc = mn__check_text("model", model, MN_MAX_NAME_BYTES, label)) ||
        (rc = mn__check_text("idempotency_key", idem, MN_MAX_IDEM_BYTES, label)))
        return rc == MN_TOOBIG ? mn__err(MN_INVALID, "%s", mn_errmsg()) : rc;
    if (idem && !*idem)
        return mn__err(MN_INVALID, "%sidempotency_key: must not be empty", label);
    if (tool_calls_text) {
        json_t *v;
        if ((rc = parse_field("tool_calls", tool_calls_text, label, &v)))
            return rc;
        if ((rc = check_tool_calls(v, label))) {
            json_decref(v);
            return rc;
        }
        if (a && (rc = canon(v, a, tool_calls)))
            return rc;
        if (!a)
            json_decref(v);
    }
    if (files_text) {
        json_t *v;
        if ((rc = parse_field("files", files_text, label, &v)))
            return rc;
        if ((rc = check_files(v, label))) {
            json_decref(v);
            return rc;
        }
        if (a && (rc = canon(v, a, files)))
            return rc;
        if (!a)
            json_decref(v);
    }
    if (metadata_text) {
        if (a)
            return mn__check_json_object("metadata", metadata_text, a, label, metadata);
        struct mn_arena tmp = MN_ARENA_INIT;
        const char *ignored;
        rc = mn__check_json_object("metadata", metadata_text, &tmp, label, &ignored);
        mn__arena_release(&tmp);
        return rc;
    }
    return MN_OK;
}

mn_status mn__message_prepare(const mn_message_in *in, size_t max_bytes, const mn_tokenizer *tk, int64_t now_ms,
                             struct mn_arena *a, const char *label, mn_message *row)
{
    memset(row, 0, sizeof *row);
    mn_message_in loaded = MN_MESSAGE_IN_INIT;
    if (MN__ABI_LOAD(mn_message_in, &loaded, in, pinned))
        return mn__err(MN_MISUSE, "%s%s", label, mn_errmsg());
    in = &loaded;
    mn_status rc = check_fields(in->role, in->content, in->tool_calls, in->tool_call_id, in->name, in->tool_name,
                                in->model, in->files, in->metadata, in->idempotency_key, max_bytes, label, a,
                                &row->tool_calls, &row->files, &row->metadata);
    if (rc)
        return rc;
    row->role = in->role;
    row->content = in->content;
    row->tool_call_id = in->tool_call_id;
    row->name = in->name;
    row->tool_name = in->tool_name;
    row->model = in->model;
    row->idempotency_key = in->idempotency_key;
    row->pinned = in->pinned != 0;
    row->created_at = now_ms;
    row->active = 1;
    row->tokens = mn__message_tokens(tk, row);
    return MN_OK;
}

int64_t mn__message_tokens(const mn_tokenizer *tk, const mn_message *m)
{
    const char *parts[] = {m->content, m->tool_calls, m->name, m->tool_call_id};
    int64_t n = 0;
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i])
            n += (int64_t)mn__token_count(tk, parts[i], strlen(parts[i]));
    return n;
}

mn_status mn__message_check_row(const mn_message *m, size_t max_bytes, const char *label)
{
    return check_fields(m->role, m->content, m->tool_calls, m->tool_call_id, m->name, m->tool_name, m->model,
                        m->files, m->metadata, m->idempotency_key, max_bytes, label, NULL, NULL, NULL, NULL);
}

char *mn__message_title(struct mn_arena *a, const char *content)
{
    size_t len = strlen(content);
    while (len && (*content == ' ' || *content == '\n' || *content == '\t' || *content == '\r')) {
        content++;
        len--;
    }
    char *t = mn__arena_strndup(a, content, mn__utf8_prefix(content, len, MN_TITLE_CHARS));
    for (char *p = t; p && *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    return t;
}
