/*
 * mem0_int.h — what the files of the Mem0-shaped routes share (mem0.c, the routes;
 * mem0_filter.c, Mem0's filters; mem0_entities.c, entities and batches): the checked filter and
 * the bound on the memories a route matches a filter against itself. Design notes in
 * docs/memory.md, "Mem0-compatible routes".
 */
#ifndef MNEMO_SERVER_MEM0_INT_H
#define MNEMO_SERVER_MEM0_INT_H

#include "server/server.h"

/* Reading a whole scope (delete-all, counting, entities): at most this many pages of 1000. */
#define M0_MAX_ROUNDS 1000
/* A filter the library cannot apply is matched here against at most this many memories (the
 * library's largest page): the scope its equalities name, or a search's hits. */
#define M0_MAX_CANDIDATES 1000
/* A filter nests AND, OR and NOT at most this deep, and holds at most this many conditions,
 * operators and listed values in all. */
#define M0_MAX_FILTER_DEPTH 8
#define M0_MAX_FILTER_TERMS 256

/* Mem0's entity ids: app_id is the namespace, run_id the memory's session_id; NULL: not given
 * (any, when reading). */
struct m0_scope {
    const char *app, *user, *agent, *run;
};

/* GET /v1/event/{event_id}: an async add's extraction job in Mem0's event shape (mem0.c). */
mn_status srv_op_mem0_event(struct srv_call *c);

/* The call's result (NULL: out of memory); MN_OK. */
mn_status m0_ok(struct srv_call *c, json_t *result);
/* ms since the epoch as Mem0 writes a time ("2025-01-31T12:00:00.000Z"); null when 0. */
json_t *m0_iso_time(int64_t ms);
/* The live memory `id` in the key's namespace (*out: free with mn_memory_free): a malformed id
 * is 400 naming `field`, a missing, deleted or other namespace's one 404. */
mn_status m0_live_memory(struct srv_call *c, const char *field, const char *id, mn_memory **out);
/* Closes memory m and erases the raw messages it came from that no live memory names. */
mn_status m0_delete_memory(struct srv_call *c, const mn_memory *m);
/* Closes every live memory of scope s and erases the scope sessions they came from; *deleted:
 * how many. */
mn_status m0_delete_scope(struct srv_call *c, const struct m0_scope *s, int64_t *deleted);

/* A Mem0 filter (filters of getAll and search), checked. The equalities every match must have
 * (NULL: none) narrow the library's query; when `evaluate` is set some condition is one the
 * library cannot apply, and each memory of that query is matched with m0_filter_match. */
struct m0_filter {
    json_t *root; /* the filters object (borrowed from the call's params), or NULL */
    int evaluate;
    const char *ns, *user, *agent, *run, *kind; /* borrowed from root */
    char *metadata;                             /* JSON object of scalars, or NULL (owned) */
};

/* Checks filters (NULL: none) into f: an unknown field or operator, a value of the wrong type,
 * nesting deeper than M0_MAX_FILTER_DEPTH or more than M0_MAX_FILTER_TERMS terms is
 * MN_INVALID naming the path ("filters.AND[1].created_at.gte: …"); an app_id other than the
 * namespace of the call's key is 403. Release f after either outcome. */
mn_status m0_filter_parse(struct srv_call *c, json_t *filters, struct m0_filter *f);
/* 1 when memory m matches f's filter. */
int m0_filter_match(const struct m0_filter *f, const mn_memory *m);
void m0_filter_release(struct m0_filter *f);
/* The library query of f's equalities, in the call's namespace (its key's, else f's app_id,
 * else any). Borrows from f. */
void m0_filter_query(struct srv_call *c, const struct m0_filter *f, mn_memory_query *q);

#endif
