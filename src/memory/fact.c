/*
 * fact.c — checks, copies and JSON of long-term memory records (fact.h; docs/memory.md). The
 * limits live in mnemo.h (MN_MEMORY_MAX_*) and fact.h; every refusal names the field.
 */
#include <stdlib.h>
#include <string.h>

#include "memory/fact.h"
#include "memory/jsonl.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

mn_status mn__fact_check_kind(const char *kind)
{
    size_t n = strlen(kind);
    if (n == 0 || n > MN_FACT_MAX_KIND)
        return mn__err(MN_INVALID, "kind: must be 1 to %d characters of a-z and _", MN_FACT_MAX_KIND);
    for (size_t i = 0; i < n; i++)
        if (!((kind[i] >= 'a' && kind[i] <= 'z') || kind[i] == '_'))
            return mn__err(MN_INVALID, "kind: '%s' has a character outside a-z and _", kind);
    return MN_OK;
}

static mn_status check_text(const char *field, const char *v, size_t max, int required)
{
    if (!v)
        return required ? mn__err(MN_INVALID, "%s: required", field) : MN_OK;
    size_t n = strlen(v);
    if (required && n == 0)
        return mn__err(MN_INVALID, "%s: must not be empty", field);
    if (n > max)
        return mn__err(MN_TOOBIG, "%s: %zu bytes is over the limit of %zu", field, n, max);
    if (!mn__utf8_valid(v, n, NULL))
        return mn__err(MN_INVALID, "%s: not valid UTF-8", field);
    return MN_OK;
}

/* A scope (on a write and on a read alike): each id unset or 1 to MN_FACT_MAX_SCOPE_ID bytes of
 * UTF-8. An empty one would match no memory on a read: a blank filter is a mistake named. */
static mn_status check_scope(const char *ns, const char *user_id, const char *agent_id, const char *session_id)
{
    const char *names[] = {"namespace", "user_id", "agent_id", "session_id"};
    const char *ids[] = {ns, user_id, agent_id, session_id};
    mn_status rc = MN_OK;
    for (int i = 0; i < 4 && !rc; i++) {
        rc = check_text(names[i], ids[i], MN_FACT_MAX_SCOPE_ID, 0);
        if (!rc && ids[i] && !*ids[i])
            rc = mn__err(MN_INVALID, "%s: must not be empty (leave it unset instead)", names[i]);
    }
    return rc;
}

static mn_status check_metadata(const char *metadata, int scalars_only)
{
    if (!metadata)
        return MN_OK;
    mn_status rc = check_text("metadata", metadata, MN_MEMORY_MAX_METADATA, 0);
    json_t *v = NULL;
    if (!rc)
        rc = mn__json_parse(metadata, "metadata", &v);
    if (rc)
        return rc;
    if (!json_is_object(v))
        rc = mn__err(MN_INVALID, "metadata: must be a JSON object");
    else if (scalars_only && json_object_size(v) > MN_FACT_MAX_FILTER_KEYS)
        rc = mn__err(MN_INVALID, "metadata: %zu filter keys is over the limit of %d", json_object_size(v),
                     MN_FACT_MAX_FILTER_KEYS);
    const char *key;
    json_t *val;
    json_object_foreach(v, key, val)
    {
        if (rc || !scalars_only)
            break;
        for (const char *p = key; *p && !rc; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                  *p == '-'))
                rc = mn__err(MN_INVALID, "metadata: filter key '%s' may hold only A-Z a-z 0-9 _ -", key);
        if (!rc && !*key)
            rc = mn__err(MN_INVALID, "metadata: empty filter key");
        if (!rc && (json_is_object(val) || json_is_array(val) || json_is_null(val)))
            rc = mn__err(MN_INVALID, "metadata: filter value of '%s' must be a string, number or boolean", key);
    }
    json_decref(v);
    return rc;
}

mn_status mn__fact_check_in(const mn_memory_in *in, int is_update, mn_memory_in *loaded)
{
    *loaded = (mn_memory_in)MN_MEMORY_IN_INIT;
    if (MN__ABI_LOAD(mn_memory_in, loaded, in, reason))
        return MN_MISUSE;
    in = loaded;
    mn_status rc = check_text("text", in->text, MN_MEMORY_MAX_TEXT, !is_update);
    if (!rc && is_update && in->text && !*in->text)
        rc = mn__err(MN_INVALID, "text: must not be empty");
    if (!rc && in->kind)
        rc = mn__fact_check_kind(in->kind);
    if (!rc && is_update && (in->ns || in->user_id || in->agent_id || in->session_id))
        rc = mn__err(MN_INVALID, "scope: a memory's namespace, user, agent and session cannot change");
    if (!rc)
        rc = check_scope(in->ns, in->user_id, in->agent_id, in->session_id);
    if (!rc)
        rc = check_metadata(in->metadata, 0);
    if (!rc && in->n_sources > MN_MEMORY_MAX_SOURCES)
        rc = mn__err(MN_TOOBIG, "sources: %zu message ids is over the limit of %d", in->n_sources,
                     MN_MEMORY_MAX_SOURCES);
    if (!rc && in->n_sources && !in->sources)
        rc = mn__err(MN_INVALID, "sources: n_sources is %zu but sources is NULL", in->n_sources);
    for (size_t i = 0; !rc && i < in->n_sources; i++)
        if (in->sources[i] <= 0)
            rc = mn__err(MN_INVALID, "sources: message id %lld is not positive", (long long)in->sources[i]);
    if (!rc && (in->pinned < -1 || in->pinned > 1 || (!is_update && in->pinned < 0)))
        rc = mn__err(MN_INVALID, "pinned: must be 0 or 1");
    if (!rc && (in->token_cap > MN_MEMORY_MAX_TOKEN_CAP || in->token_cap < -1))
        rc = mn__err(MN_INVALID, "token_cap: must be 0 to %d", MN_MEMORY_MAX_TOKEN_CAP);
    if (!rc && (in->valid_from < 0 || in->valid_to < 0))
        rc = mn__err(MN_INVALID, "valid_from/valid_to: must not be negative");
    if (!rc && in->valid_to && in->valid_from && in->valid_to <= in->valid_from)
        rc = mn__err(MN_INVALID, "valid_to: must be after valid_from");
    if (!rc)
        rc = check_text("actor", in->actor, MN_FACT_MAX_ACTOR, 0);
    if (!rc)
        rc = check_text("reason", in->reason, MN_FACT_MAX_REASON, 0);
    return rc;
}

mn_status mn__fact_check_query(const mn_memory_query *q, mn_memory_query *loaded)
{
    *loaded = (mn_memory_query)MN_MEMORY_QUERY_INIT;
    if (MN__ABI_LOAD(mn_memory_query, loaded, q, offset))
        return MN_MISUSE;
    q = loaded;
    mn_status rc = check_scope(q->ns, q->user_id, q->agent_id, q->session_id);
    if (!rc && q->kind)
        rc = mn__fact_check_kind(q->kind);
    if (!rc)
        rc = check_metadata(q->metadata, 1);
    if (!rc && q->as_of < 0)
        rc = mn__err(MN_INVALID, "as_of: must not be negative");
    if (!rc && (q->pinned < -1 || q->pinned > 1))
        rc = mn__err(MN_INVALID, "pinned: must be -1, 0 or 1");
    if (!rc && q->limit > MN_FACT_MAX_LIMIT)
        rc = mn__err(MN_INVALID, "limit: %zu is over the limit of %d", q->limit, MN_FACT_MAX_LIMIT);
    return rc;
}

static int dup(char **dst, const char *src)
{
    *dst = NULL;
    if (!src)
        return 0;
    *dst = strdup(src);
    return *dst == NULL;
}

mn_status mn__fact_copy(mn_memory *dst, const mn_memory *src)
{
    *dst = *src;
    int oom = dup(&dst->id, src->id);
    oom |= dup(&dst->text, src->text);
    oom |= dup(&dst->kind, src->kind);
    oom |= dup(&dst->ns, src->ns);
    oom |= dup(&dst->user_id, src->user_id);
    oom |= dup(&dst->agent_id, src->agent_id);
    oom |= dup(&dst->session_id, src->session_id);
    oom |= dup(&dst->metadata, src->metadata);
    oom |= dup(&dst->change, src->change);
    oom |= dup(&dst->actor, src->actor);
    oom |= dup(&dst->reason, src->reason);
    dst->sources = NULL;
    if (src->n_sources) {
        dst->sources = malloc(src->n_sources * sizeof *dst->sources);
        if (dst->sources)
            memcpy(dst->sources, src->sources, src->n_sources * sizeof *dst->sources);
        else
            oom = 1;
    }
    if (oom) {
        mn__fact_release(dst);
        return mn__nomem();
    }
    return MN_OK;
}

void mn__fact_release(mn_memory *m)
{
    if (!m)
        return;
    free(m->id);
    free(m->text);
    free(m->kind);
    free(m->ns);
    free(m->user_id);
    free(m->agent_id);
    free(m->session_id);
    free(m->metadata);
    free(m->sources);
    free(m->change);
    free(m->actor);
    free(m->reason);
    memset(m, 0, sizeof *m);
}

char *mn__fact_sources_json(const int64_t *ids, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, json_integer(ids[i])))
            break;
    char *s = a ? mn__json_dump(a) : NULL;
    json_decref(a);
    return s;
}

mn_status mn__fact_sources_parse(const char *text, int64_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    if (!text || !*text || strcmp(text, "[]") == 0)
        return MN_OK;
    json_t *a = NULL;
    mn_status rc = mn__json_parse(text, "sources", &a);
    if (rc)
        return rc;
    size_t count = json_is_array(a) ? json_array_size(a) : 0;
    if (count) {
        *ids = malloc(count * sizeof **ids);
        if (!*ids) {
            json_decref(a);
            return mn__nomem();
        }
        for (size_t i = 0; i < count; i++)
            (*ids)[i] = json_integer_value(json_array_get(a, i));
        *n = count;
    }
    json_decref(a);
    return MN_OK;
}

static int set_time(json_t *o, const char *key, int64_t ms)
{
    return json_object_set_new(o, key, ms ? json_integer(ms) : json_null());
}

json_t *mn__fact_json(const mn_memory *m, int with_score)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    int bad = mn__json_set_str(o, "id", m->id) != MN_OK;
    bad |= json_object_set_new(o, "version", json_integer(m->version));
    bad |= mn__json_set_str(o, "text", m->text) != MN_OK;
    bad |= mn__json_set_str(o, "kind", m->kind) != MN_OK;
    bad |= mn__json_set_str(o, "namespace", m->ns) != MN_OK;
    bad |= mn__json_set_str(o, "user_id", m->user_id) != MN_OK;
    bad |= mn__json_set_str(o, "agent_id", m->agent_id) != MN_OK;
    bad |= mn__json_set_str(o, "session_id", m->session_id) != MN_OK;
    bad |= mn__json_set_raw(o, "metadata", m->metadata ? m->metadata : "{}") != MN_OK;
    json_t *src = json_array();
    for (size_t i = 0; src && i < m->n_sources; i++)
        bad |= json_array_append_new(src, json_integer(m->sources[i]));
    bad |= json_object_set_new(o, "sources", src ? src : json_null());
    bad |= json_object_set_new(o, "pinned", json_boolean(m->pinned));
    bad |= json_object_set_new(o, "token_cap", json_integer(m->token_cap));
    bad |= set_time(o, "valid_from", m->valid_from);
    bad |= set_time(o, "valid_to", m->valid_to);
    bad |= set_time(o, "recorded_at", m->recorded_at);
    bad |= set_time(o, "superseded_at", m->superseded_at);
    bad |= mn__json_set_str(o, "change", m->change) != MN_OK;
    bad |= mn__json_set_str(o, "actor", m->actor) != MN_OK;
    bad |= mn__json_set_str(o, "reason", m->reason) != MN_OK;
    if (with_score)
        bad |= json_object_set_new(o, "score", json_real(m->score));
    if (bad || !src) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static const char *str_member(json_t *o, const char *key, int required, mn_status *rc)
{
    json_t *v = json_object_get(o, key);
    if (*rc)
        return NULL;
    if (!v || json_is_null(v)) {
        if (required)
            *rc = mn__err(MN_INVALID, "memory: %s: required", key);
        return NULL;
    }
    if (!json_is_string(v)) {
        *rc = mn__err(MN_INVALID, "memory: %s: must be a string", key);
        return NULL;
    }
    return json_string_value(v);
}

/* An integer member from min to max; absent or null is 0 when min allows it. */
static int64_t int_member(json_t *o, const char *key, int64_t min, int64_t max, mn_status *rc)
{
    json_t *v = json_object_get(o, key);
    if (*rc || ((!v || json_is_null(v)) && min == 0))
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
        *rc = mn__err(MN_INVALID, "memory: %s: must be an integer from %lld to %lld", key, (long long)min,
                      (long long)max);
        return 0;
    }
    return json_integer_value(v);
}

mn_status mn__fact_from_json(json_t *o, mn_memory *m, char **metadata_text)
{
    mn_status rc = MN_OK;
    memset(m, 0, sizeof *m);
    *metadata_text = NULL;
    m->id = (char *)str_member(o, "id", 1, &rc);
    m->version = int_member(o, "version", 1, MN_EXPORT_MAX_VERSION, &rc);
    m->text = (char *)str_member(o, "text", 1, &rc);
    m->kind = (char *)str_member(o, "kind", 1, &rc);
    m->ns = (char *)str_member(o, "namespace", 1, &rc);
    m->user_id = (char *)str_member(o, "user_id", 0, &rc);
    m->agent_id = (char *)str_member(o, "agent_id", 0, &rc);
    m->session_id = (char *)str_member(o, "session_id", 0, &rc);
    m->change = (char *)str_member(o, "change", 1, &rc);
    m->actor = (char *)str_member(o, "actor", 1, &rc);
    m->reason = (char *)str_member(o, "reason", 0, &rc);
    m->token_cap = int_member(o, "token_cap", 0, MN_MEMORY_MAX_TOKEN_CAP, &rc);
    m->valid_from = int_member(o, "valid_from", 0, MN_EXPORT_MAX_TIME_MS, &rc);
    m->valid_to = int_member(o, "valid_to", 0, MN_EXPORT_MAX_TIME_MS, &rc);
    m->recorded_at = int_member(o, "recorded_at", 0, MN_EXPORT_MAX_TIME_MS, &rc);
    m->superseded_at = int_member(o, "superseded_at", 0, MN_EXPORT_MAX_TIME_MS, &rc);
    m->pinned = json_is_true(json_object_get(o, "pinned"));
    if (!rc && (strlen(m->text) > MN_MEMORY_MAX_TEXT || !*m->text))
        rc = mn__err(MN_INVALID, "memory: text: 1 to %d bytes", MN_MEMORY_MAX_TEXT);
    if (!rc)
        rc = mn__fact_check_kind(m->kind);
    json_t *meta = json_object_get(o, "metadata");
    if (!rc && meta && !json_is_object(meta))
        rc = mn__err(MN_INVALID, "memory: metadata: must be an object");
    if (!rc && !(*metadata_text = meta ? mn__json_dump(meta) : strdup("{}")))
        rc = mn__nomem();
    m->metadata = *metadata_text;
    json_t *src = json_object_get(o, "sources");
    size_t n = json_is_array(src) ? json_array_size(src) : 0;
    if (!rc && n > MN_MEMORY_MAX_SOURCES)
        rc = mn__err(MN_TOOBIG, "memory: sources: over the limit of %d", MN_MEMORY_MAX_SOURCES);
    if (!rc && n) {
        m->sources = malloc(n * sizeof *m->sources);
        if (!m->sources)
            rc = mn__nomem();
        for (size_t i = 0; !rc && i < n; i++) {
            json_t *v = json_array_get(src, i);
            if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > MN_EXPORT_MAX_ID)
                rc = mn__err(MN_INVALID, "memory: sources: message ids must be integers from 1 to %lld",
                             (long long)MN_EXPORT_MAX_ID);
            else
                m->sources[m->n_sources++] = json_integer_value(v);
        }
    }
    if (rc) {
        free(m->sources);
        free(*metadata_text);
        *metadata_text = NULL;
        memset(m, 0, sizeof *m);
    }
    return rc;
}
