/*
 * mem0_entities.c — Mem0's entity and batch routes for the Mem0-shaped API (mem0.c): the users,
 * agents and runs that have live memories (the client's users()), deleting one with its
 * memories (deleteUsers(), through delete-all's path, so the raw messages go too), and batch
 * update and delete of up to 1000 memories (docs/memory.md, "Mem0-compatible routes").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mem0_int.h"

#define ACTOR "mem0"
/* users() lists at most this many users, agents and runs (it sorts them all to page them). */
#define M0_MAX_ENTITIES 1000

/* ---- entities -------------------------------------------------------------------------------- */

/* Counts memory m for entity (type, name) in by_key ("type:name" → {type, name, n, first, last}). */
static int tally(json_t *by_key, const char *type, const char *name, const mn_memory *m)
{
    if (!name)
        return 0;
    char key[300];
    snprintf(key, sizeof key, "%s:%s", type, name);
    json_t *e = json_object_get(by_key, key);
    if (!e) {
        if (json_object_size(by_key) >= M0_MAX_ENTITIES)
            return 1;
        e = json_pack("{s:s,s:s,s:I,s:I,s:I}", "type", type, "name", name, "n", (json_int_t)0, "first",
                      (json_int_t)m->recorded_at, "last", (json_int_t)m->recorded_at);
        if (!e || json_object_set_new(by_key, key, e))
            return -1;
    }
    json_int_t first = json_integer_value(json_object_get(e, "first")), last = json_integer_value(json_object_get(e, "last"));
    json_object_set_new(e, "n", json_integer(json_integer_value(json_object_get(e, "n")) + 1));
    json_object_set_new(e, "first", json_integer(m->recorded_at < first ? m->recorded_at : first));
    json_object_set_new(e, "last", json_integer(m->recorded_at > last ? m->recorded_at : last));
    return 0;
}

static int type_rank(const char *t)
{
    return strcmp(t, "user") == 0 ? 0 : strcmp(t, "agent") == 0 ? 1 : 2;
}

/* Users first, then agents, then runs; by name within each. */
static int entity_order(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    const char *tx = json_string_value(json_object_get(x, "type")), *ty = json_string_value(json_object_get(y, "type"));
    int r = type_rank(tx) - type_rank(ty);
    return r ? r : strcmp(json_string_value(json_object_get(x, "name")), json_string_value(json_object_get(y, "name")));
}

static json_t *entities_link(json_int_t page, json_int_t size)
{
    char b[80];
    snprintf(b, sizeof b, "/v1/entities/?page=%lld&page_size=%lld", (long long)page, (long long)size);
    return json_string(b);
}

/* The entities of the key's namespace (any without a bound key), read from its live memories a
 * page of 1000 at a time. */
static mn_status gather(struct srv_call *c, json_t *by_key)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = c->ns;
    q.limit = 1000;
    for (int round = 0; round < M0_MAX_ROUNDS; round++) {
        mn_memories *l = NULL;
        q.offset = (size_t)round * q.limit;
        mn_status st = mn_memory_list(c->db, &q, &l);
        if (st)
            return srv_fail_lib(c, st);
        int r = 0;
        for (size_t i = 0; !r && i < l->count; i++) {
            const mn_memory *m = mn_memories_at(l, i);
            r = tally(by_key, "user", m->user_id, m);
            r = r ? r : tally(by_key, "agent", m->agent_id, m);
            r = r ? r : tally(by_key, "run", m->session_id, m);
        }
        size_t n = l->count;
        mn_memories_free(l);
        if (r < 0)
            return srv_fail(c, MN_NOMEM, "out of memory");
        if (r > 0)
            return srv_fail(c, MN_INVALID, "entities: more than %d users, agents and runs have memories here, and "
                                         "mnemo lists at most %d: read the memories by filters instead",
                            M0_MAX_ENTITIES, M0_MAX_ENTITIES);
        if (n < q.limit)
            return MN_OK;
    }
    return srv_fail(c, MN_INVALID, "entities: more than %d memories to read", M0_MAX_ROUNDS * 1000);
}

mn_status srv_op_mem0_entities(struct srv_call *c)
{
    json_int_t page = json_integer_value(json_object_get(c->params, "page"));
    json_int_t size = json_integer_value(json_object_get(c->params, "page_size"));
    json_t *by_key = json_object(), *results = json_array();
    json_t **all = NULL;
    size_t n = 0;
    mn_status st = by_key && results ? gather(c, by_key) : srv_fail(c, MN_NOMEM, "out of memory");
    if (!st && json_object_size(by_key) && !(all = malloc(json_object_size(by_key) * sizeof *all)))
        st = srv_fail(c, MN_NOMEM, "out of memory");
    const char *key;
    json_t *e;
    json_object_foreach(by_key, key, e) {
        if (all)
            all[n++] = e;
    }
    if (all)
        qsort(all, n, sizeof *all, entity_order);
    size_t from = (size_t)((page - 1) * size);
    for (size_t i = from; !st && i < n && i - from < (size_t)size; i++) {
        const char *name = json_string_value(json_object_get(all[i], "name"));
        json_array_append_new(
            results, json_pack("{s:s,s:s,s:s,s:o,s:o,s:I,s:o,s:o}", "id", name, "name", name, "type",
                               json_string_value(json_object_get(all[i], "type")), "created_at",
                               m0_iso_time(json_integer_value(json_object_get(all[i], "first"))), "updated_at",
                               m0_iso_time(json_integer_value(json_object_get(all[i], "last"))), "total_memories",
                               json_integer_value(json_object_get(all[i], "n")), "owner",
                               c->ns ? json_string(c->ns) : json_null(), "metadata", json_null()));
    }
    free(all);
    json_decref(by_key);
    if (st) {
        json_decref(results);
        return c->status;
    }
    int more = (size_t)(page * size) < n;
    return m0_ok(c, json_pack("{s:I,s:o,s:o,s:o}", "count", (json_int_t)n, "next",
                              more ? entities_link(page + 1, size) : json_null(), "previous",
                              page > 1 ? entities_link(page - 1, size) : json_null(), "results", results));
}

mn_status srv_op_mem0_entity_delete(struct srv_call *c)
{
    const char *type = json_string_value(json_object_get(c->params, "entity_type"));
    const char *id = json_string_value(json_object_get(c->params, "entity_id"));
    struct m0_scope s = {NULL, NULL, NULL, NULL};
    *(strcmp(type, "user") == 0 ? &s.user : strcmp(type, "agent") == 0 ? &s.agent : strcmp(type, "run") == 0 ? &s.run
                                                                                                              : &s.app) = id;
    int64_t deleted = 0;
    if (m0_delete_scope(c, &s, &deleted))
        return c->status;
    return m0_ok(c, json_pack("{s:s,s:I}", "message", "Entity deleted successfully.", "deleted", (json_int_t)deleted));
}

/* ---- batches --------------------------------------------------------------------------------- */

/* Checks every item of a batch before anything changes: {memory_id[, text]}, each id once, each a
 * live memory of the key's namespace. */
static mn_status batch_check(struct srv_call *c, json_t *items, int with_text)
{
    size_t i;
    json_t *it;
    char field[48];
    if (!json_array_size(items))
        return srv_invalid(c, "memories: must hold 1 to 1000 items");
    json_array_foreach(items, i, it) {
        const char *k;
        json_t *v;
        if (!json_is_object(it))
            return srv_invalid(c, "memories[%zu]: must be an object {memory_id%s}", i, with_text ? ", text" : "");
        json_object_foreach(it, k, v) {
            if (strcmp(k, "memory_id") != 0 && (!with_text || strcmp(k, "text") != 0))
                return srv_invalid(c, "memories[%zu].%.40s: unknown field (memory_id%s)", i, k, with_text ? ", text" : "");
        }
        const char *id = json_string_value(json_object_get(it, "memory_id"));
        json_t *text = json_object_get(it, "text");
        if (!id)
            return srv_invalid(c, "memories[%zu].memory_id: required, a string", i);
        if (with_text && (!json_is_string(text) || !json_string_length(text)))
            return srv_invalid(c, "memories[%zu].text: required, a non-empty string", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(id, json_string_value(json_object_get(json_array_get(items, j), "memory_id"))) == 0)
                return srv_invalid(c, "memories[%zu].memory_id: given twice (as memories[%zu])", i, j);
        snprintf(field, sizeof field, "memories[%zu].memory_id", i);
        mn_memory *m = NULL;
        if (m0_live_memory(c, field, id, &m))
            return c->status;
        mn_memory_free(m);
    }
    return MN_OK;
}

mn_status srv_op_mem0_batch_update(struct srv_call *c)
{
    json_t *items = json_object_get(c->params, "memories");
    if (batch_check(c, items, 1))
        return c->status;
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        mn_memory_in in = MN_MEMORY_IN_INIT;
        in.text = json_string_value(json_object_get(it, "text"));
        in.actor = ACTOR;
        in.reason = "updated through the Mem0 API (batch)";
        mn_status st = mn_memory_update(c->db, json_string_value(json_object_get(it, "memory_id")), &in, NULL);
        if (st)
            return srv_fail(c, st, "memories[%zu]: %s (the %zu before it were updated)", i,
                            mn_errmsg() && mn_errmsg()[0] ? mn_errmsg() : mn_status_str(st), i);
    }
    char msg[64];
    snprintf(msg, sizeof msg, "Successfully updated %zu memories", json_array_size(items));
    return m0_ok(c, json_pack("{s:s}", "message", msg));
}

mn_status srv_op_mem0_batch_delete(struct srv_call *c)
{
    json_t *items = json_object_get(c->params, "memories");
    if (batch_check(c, items, 0))
        return c->status;
    size_t i;
    json_t *it;
    char field[48];
    json_array_foreach(items, i, it) {
        mn_memory *m = NULL;
        snprintf(field, sizeof field, "memories[%zu].memory_id", i);
        mn_status st = m0_live_memory(c, field, json_string_value(json_object_get(it, "memory_id")), &m);
        if (!st)
            st = m0_delete_memory(c, m);
        mn_memory_free(m);
        if (st) {
            char why[sizeof c->msg];
            snprintf(why, sizeof why, "%s", c->msg);
            return srv_fail(c, st, "memories[%zu]: %.400s (the %zu before it were deleted)", i, why, i);
        }
    }
    char msg[64];
    snprintf(msg, sizeof msg, "Successfully deleted %zu memories", json_array_size(items));
    return m0_ok(c, json_pack("{s:s}", "message", msg));
}
