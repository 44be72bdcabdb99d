/*
 * fact.h — the long-term memory record (mn_memory of mnemo.h) below the API: checks of what a
 * caller writes or asks for, deep copies and release, JSON rendering, and the provenance list
 * as stored ("[12,13]"). docs/memory.md describes the model.
 */
#ifndef MN_MEMORY_FACT_H
#define MN_MEMORY_FACT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "mnemo.h"

#define MN_FACT_MAX_KIND 32
#define MN_FACT_MAX_ACTOR 128
#define MN_FACT_MAX_REASON 1024
#define MN_FACT_MAX_SCOPE_ID 256
#define MN_FACT_MAX_LIMIT 1000
#define MN_FACT_MAX_FILTER_KEYS 16

/* Checks a kind: 1-32 characters of [a-z_]. */
mn_status mn__fact_check_kind(const char *kind);
/* Checks the fields set in `in` (add: text required; update: scope must be NULL). */
mn_status mn__fact_check_in(const mn_memory_in *in, int is_update, mn_memory_in *loaded);
/* Checks a query's fields (metadata: an object of scalars with [A-Za-z0-9_-] keys). */
mn_status mn__fact_check_query(const mn_memory_query *q, mn_memory_query *loaded);

/* Deep copy of src into dst (dst's previous contents are not freed). */
mn_status mn__fact_copy(mn_memory *dst, const mn_memory *src);
/* Frees what m owns and zeroes it. */
void mn__fact_release(mn_memory *m);

/* The provenance list as stored: "[1,2]"; caller frees. NULL on OOM. */
char *mn__fact_sources_json(const int64_t *ids, size_t n);
/* Parses a stored "[1,2]" into *ids (malloc'd; NULL when empty). */
mn_status mn__fact_sources_parse(const char *text, int64_t **ids, size_t *n);

/* Reads an exported record (mn__fact_json's shape) into *m: strings borrowed from o, sources
 * malloc'd (free m->sources). metadata is dumped into *metadata_text (caller frees). Checks
 * every field; errors name it (MN_INVALID). */
mn_status mn__fact_from_json(json_t *o, mn_memory *m, char **metadata_text);

/* The record as a JSON object (new reference; NULL on OOM). with_score adds "score". */
json_t *mn__fact_json(const mn_memory *m, int with_score);

#endif
