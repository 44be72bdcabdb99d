/*
 * json.c — jansson helpers shared by validation, rendering and export (see json.h).
 */
#include "util/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/banned.h"

/* Whether v nests deeper than `left` more levels (a scalar is none). */
static int too_deep(const json_t *v, int left)
{
    if (!json_is_object(v) && !json_is_array(v))
        return 0;
    if (left == 0)
        return 1;
    const char *k;
    json_t *item;
    size_t i;
    if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            if (too_deep(item, left - 1))
                return 1;
        }
    } else {
        json_object_foreach((json_t *)v, k, item)
        {
            if (too_deep(item, left - 1))
                return 1;
        }
    }
    return 0;
}

/* jansson reports a failed allocation as a syntax error, or drops the character it could not save
 * and returns a value with a damaged string (lex_save ignores the failure). errno, cleared before
 * the parse, tells: malloc sets ENOMEM and nothing in the parse does otherwise. */
json_t *mn__json_loads(const char *text, size_t flags, json_error_t *e, int *oom)
{
    json_error_t own;
    if (!e)
        e = &own;
    errno = 0;
    json_t *v = json_loads(text, flags, e);
    *oom = errno == ENOMEM || (!v && json_error_code(e) == json_error_out_of_memory);
    if (*oom) {
        json_decref(v);
        return NULL;
    }
    return v;
}

mn_status mn__json_parse(const char *text, const char *field, json_t **out)
{
    json_error_t e;
    int oom;
    *out = NULL;
    json_t *v = mn__json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e, &oom);
    if (oom)
        return mn__nomem();
    if (!v)
        return mn__err(MN_INVALID, "%s: malformed JSON: %s at line %d column %d", field, e.text, e.line, e.column);
    if (too_deep(v, MN_MAX_JSON_DEPTH)) {
        json_decref(v);
        return mn__err(MN_INVALID, "%s: nested deeper than %d levels", field, MN_MAX_JSON_DEPTH);
    }
    *out = v;
    return MN_OK;
}

char *mn__json_dump(const json_t *v)
{
    /* 10 significant digits: 0.7 prints as 0.7, not 0.69999999999999996 */
    errno = 0;
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10));
    if (errno == ENOMEM) { /* jansson drops an object key it could not write and goes on (dump.c) */
        free(s);
        return NULL;
    }
    return s;
}

mn_status mn__json_set_str(json_t *obj, const char *key, const char *s)
{
    json_t *v = s ? json_string(s) : json_null();
    if (!v || json_object_set_new(obj, key, v) != 0)
        return mn__nomem();
    return MN_OK;
}

mn_status mn__json_set_raw(json_t *obj, const char *key, const char *json_text)
{
    int oom = 0; /* out of memory is no damage: the stored text may be fine */
    json_t *v = json_text ? mn__json_loads(json_text, JSON_DECODE_ANY, NULL, &oom) : json_null();
    if (!v)
        return oom ? mn__nomem() : mn__corrupt_at(__FILE__, __LINE__, "stored JSON in '%s' does not parse", key);
    if (json_object_set_new(obj, key, v) != 0)
        return mn__nomem();
    return MN_OK;
}
