/*
 * json.h — small helpers over jansson: strict parsing of caller JSON with a message naming the
 * field, and canonical compact serialisation (the same value always gives the same bytes).
 */
#ifndef MN_UTIL_JSON_H
#define MN_UTIL_JSON_H

#include <jansson.h>

#include "mnemo.h"

/* Arrays and objects in JSON a caller hands in nest at most this deep: stored deeper, it broke
 * reads later (SQLite's JSON functions stop near 2,000 levels, a wrapping answer's re-parse at
 * jansson's 2,048). */
#define MN_MAX_JSON_DEPTH 64

/* Parses text as JSON (strict: one value, valid UTF-8, no duplicate keys, at most
 * MN_MAX_JSON_DEPTH levels). On failure returns MN_INVALID with "<field>: <why> at line L column
 * C" or "<field>: nested deeper than N levels", or MN_NOMEM. */
mn_status mn__json_parse(const char *text, const char *field, json_t **out);
/* json_loads that tells a failed allocation from bad text: NULL with *oom set when memory ran
 * out anywhere in the parse (then any value jansson made is released: it may hold a damaged
 * string), else json_loads' result. e may be NULL. */
json_t *mn__json_loads(const char *text, size_t flags, json_error_t *e, int *oom);
/* Compact serialisation with keys in insertion order; NULL on OOM. Caller frees with free(). */
char *mn__json_dump(const json_t *v);
/* Adds a string member, or null when s is NULL. Returns MN_NOMEM on failure. */
mn_status mn__json_set_str(json_t *obj, const char *key, const char *s);
/* Adds a member parsed from JSON text (stored by mnemo, so already valid), or null when NULL. */
mn_status mn__json_set_raw(json_t *obj, const char *key, const char *json_text);

#endif
