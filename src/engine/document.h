/*
 * document.h — the engine's private parts of documents (docs/documents.md): reading a value's
 * texts at index field paths (LangGraph's path syntax) and matching the search filter, both in
 * document_fields.c; the use cases themselves are declared in engine.h.
 */
#ifndef MN_ENGINE_DOCUMENT_H
#define MN_ENGINE_DOCUMENT_H

#include <stddef.h>

#include <jansson.h>

#include "mnemo.h"

/* The texts at each field path of `fields` (a JSON array of strings) in value, in order, as
 * LangGraph's getTextAtPath gives them: "$" the whole value as indented JSON, "a.b" a key's, "[*]"
 * every item's, "[i]" / "[-i]" one item's, "*" every member's, "{a,b.c}" several fields'; a
 * string as it is, a number or boolean as its JSON, an object or array as indented JSON, null
 * and what is missing as nothing. More than max texts: MN_INVALID. Caller frees *texts with
 * mn__document_texts_free. */
mn_status mn__document_texts(const json_t *value, const json_t *fields, size_t max, char ***texts, size_t *n);
void mn__document_texts_free(char **texts, size_t n);
/* Whether path is a well-formed field path: brackets closed, an index "*" or an integer. */
int mn__document_field_ok(const char *path);

/* Checks a search filter: an object of at most 64 keys, each mapped to a JSON value or to an
 * object of operators ($eq $ne $gt $gte $lt $lte $in $nin) with arguments of the right type;
 * an unknown '$' key is refused by name. MN_INVALID. */
mn_status mn__document_filter_check(const json_t *filter);
/* Whether value (a JSON object) passes a checked filter. */
int mn__document_filter_match(const json_t *filter, const json_t *value);

#endif
