/*
 * mnemo_memory.c — the public long-term memory functions of mnemo.h (mn_memory_*): checks,
 * ids and times, versions (a change closes the previous version and writes the next), and
 * search over memories (keyword through the store's FTS5 / tsvector index, semantic through the
 * memory vector index, hybrid by reciprocal rank fusion: engine/memory_search.c).
 * docs/memory.md.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "config/config.h"
#include "embed/embed.h"
#include "memory/fact.h"
#include "store/records.h"
#include "store/store_memory.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

#define DEFAULT_LIST_LIMIT 100
#define DEFAULT_TOP_K 10
#define MAX_QUERY_BYTES 65536

static mn_status check_memory_id(const char *id, char canon[MN_UUID_LEN + 1])
{
    if (!id || !mn_uuid_parse(id, canon))
        return mn__err(MN_INVALID, "id: '%s' is not a memory id (a UUID)", id ? id : "(null)");
    return MN_OK;
}

/* The current version of memory canon (closed or not). */
static mn_status current_version(mn_db *db, const char *canon, mn_memory **out)
{
    *out = NULL;
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.include_closed = 1;
    mn_store_memory_query sq = {&q, canon, 0, NULL, 0, mn_clock_now_ms(), 1, 0, NULL, 0};
    mn_memories *list = NULL;
    mn_status rc = mn__memory_query_run(db, &sq, &list);
    if (rc)
        return rc;
    if (list->count == 0) {
        mn_memories_free(list);
        return mn__err(MN_NOTFOUND, "memory %s: no such memory", canon);
    }
    *out = malloc(sizeof **out);
    if (!*out) {
        mn_memories_free(list);
        return mn__nomem();
    }
    **out = list->items[0];
    list->count = 0;
    mn_memories_free(list);
    return MN_OK;
}

/* Closed: deleted (a delete with a future `at` too: it cannot be deleted twice), or its
 * validity ended. */
static int is_closed(const mn_memory *m, int64_t now)
{
    return (m->change && strcmp(m->change, "delete") == 0) || (m->valid_to != 0 && m->valid_to <= now);
}

/* ---- provenance ------------------------------------------------------------------------------ */

struct sources_seen {
    const char *ns;
    const int64_t *ids;
    size_t n;
    unsigned char *found; /* found[i]: ids[i] is a message of a session of ns */
};

static int source_seen(void *user, const mn_message *m, const char *ns)
{
    struct sources_seen *s = user;
    if (strcmp(ns, s->ns) == 0)
        for (size_t i = 0; i < s->n; i++)
            s->found[i] |= s->ids[i] == m->id;
    return 0;
}

/* Provenance names namespace ns's own messages and sessions: one of another namespace is refused
 * with the words of a missing one, so that a memory never points into another namespace (where
 * its sources would, say, keep a message from being erased with the memories made from it) and
 * the refusal tells nothing of what another namespace holds. A session_id that is not a UUID
 * names no session: a label (Mem0's run_id). */
static mn_status check_provenance(mn_db *db, const char *ns, const int64_t *sources, size_t n, const char *session_id)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = MN_OK;
    if (session_id && mn_uuid_parse(session_id, canon)) {
        mn_session *s = NULL;
        rc = db->store->ops->session_get(db->store, canon, &s);
        int other = !rc && strcmp(s->ns, ns) != 0;
        mn_records_session_free(s);
        if (rc == MN_NOTFOUND || other)
            return mn__err(MN_NOTFOUND, "session_id: session %s not found in namespace '%s'", canon, ns);
        if (rc)
            return rc;
    }
    if (!n)
        return MN_OK;
    struct sources_seen seen = {ns, sources, n, calloc(n, 1)};
    if (!seen.found)
        return mn__nomem();
    rc = db->store->ops->search->messages_get(db->store, sources, n, source_seen, &seen);
    for (size_t i = 0; !rc && i < n; i++)
        if (!seen.found[i])
            rc = mn__err(MN_NOTFOUND, "sources: message %lld not found in namespace '%s'", (long long)sources[i], ns);
    free(seen.found);
    return rc;
}

/* ---- writing --------------------------------------------------------------------------------- */

/* Embeds m's text when an embedder is configured (*vec NULL otherwise; caller frees). */
static mn_status embed_text(mn_db *db, const char *text, float **vec, uint32_t *dim)
{
    *vec = NULL;
    *dim = 0;
    if (strcmp(mn_config_str(db->cfg, "embedder.name"), "none") == 0)
        return MN_OK;
    mn_embedder *e = NULL;
    mn_status rc = mn__search_embedder(db, &e);
    if (!rc)
        rc = mn_embed_texts_alloc(e, &text, 1, vec, dim);
    return rc;
}

static mn_status store_version(mn_db *db, const mn_memory *m, mn_memory **out)
{
    float *vec = NULL;
    uint32_t dim = 0;
    mn_status rc = MN_OK;
    /* *out is made before the write: once the version is stored, the call cannot fail (a retry
     * would store it twice) */
    mn_memory *copy = out ? malloc(sizeof *copy) : NULL;
    if (out && (!copy || (rc = mn_fact_copy(copy, m)))) {
        free(copy);
        return rc ? rc : mn__nomem();
    }
    rc = embed_text(db, m->text, &vec, &dim);
    if (!rc)
        rc = db->store->ops->memory->write(db->store, m, vec, dim);
    if (!rc && vec) /* the memory vector index follows, off the write's path (docs/memory.md) */
        mn__memory_index_later(db, 1);
    free(vec);
    if (!rc && out) {
        *out = copy;
        copy = NULL;
    }
    mn_memory_free(copy);
    return rc;
}

mn_status mn_memory_add(mn_db *db, const mn_memory_in *in, mn_memory **out)
{
    if (out)
        *out = NULL;
    mn_memory_in loaded; /* the caller's struct as this version knows it (util/abi.h) */
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = mn_fact_check_in(in, 0, &loaded);
    if (rc)
        return rc;
    in = &loaded;
    int64_t now = mn_clock_now_ms();
    char id[MN_UUID_LEN + 1];
    if ((rc = mn_uuid_v7(now, id)))
        return rc;
    mn_memory m = {0};
    m.id = id;
    m.version = 1;
    m.text = (char *)in->text;
    m.kind = (char *)(in->kind ? in->kind : "fact");
    m.ns = (char *)(in->ns ? in->ns : "default");
    m.user_id = (char *)in->user_id;
    m.agent_id = (char *)in->agent_id;
    m.session_id = (char *)in->session_id;
    m.metadata = (char *)(in->metadata ? in->metadata : "{}");
    m.sources = (int64_t *)in->sources;
    m.n_sources = in->n_sources;
    m.pinned = in->pinned > 0;
    m.token_cap = in->token_cap > 0 ? in->token_cap : 0;
    m.valid_from = in->valid_from ? in->valid_from : now;
    m.valid_to = in->valid_to;
    if (m.valid_to && m.valid_to <= m.valid_from)
        return mn__err(MN_INVALID, "valid_to: must be after valid_from");
    m.recorded_at = now;
    m.change = "add";
    m.actor = (char *)(in->actor ? in->actor : "api");
    m.reason = (char *)in->reason;
    if ((rc = check_provenance(db, m.ns, m.sources, m.n_sources, m.session_id)))
        return rc;
    return store_version(db, &m, out);
}

mn_status mn_memory_get(mn_db *db, const char *id, mn_memory **out)
{
    *out = NULL;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = check_memory_id(id, canon);
    return rc ? rc : current_version(db, canon, out);
}

mn_status mn_memory_get_in(mn_db *db, const char *ns, const char *id, mn_memory **out)
{
    mn_status rc = mn_memory_get(db, id, out);
    if (rc || !ns || strcmp((*out)->ns, ns) == 0)
        return rc;
    char canon[MN_UUID_LEN + 1];
    mn_uuid_parse(id, canon);
    mn_memory_free(*out);
    *out = NULL;
    return mn__err(MN_NOTFOUND, "memory %s: no such memory", canon); /* the words of a missing one */
}

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

mn_status mn_memory_update(mn_db *db, const char *id, const mn_memory_in *in, mn_memory **out)
{
    if (out)
        *out = NULL;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = check_memory_id(id, canon);
    mn_memory_in loaded; /* the caller's struct as this version knows it (util/abi.h) */
    if (!rc && !(rc = mn_fact_check_in(in, 1, &loaded)))
        in = &loaded;
    mn_memory *cur = NULL;
    if (!rc)
        rc = current_version(db, canon, &cur);
    if (rc)
        return rc;
    int64_t now = mn_clock_now_ms();
    if (is_closed(cur, now)) {
        rc = mn__err(MN_INVALID, "memory %s: closed (deleted or no longer true); add a new memory instead", canon);
        mn_memory_free(cur);
        return rc;
    }
    char *sources = NULL, *cur_sources = mn_fact_sources_json(cur->sources, cur->n_sources);
    if (in->sources)
        sources = mn_fact_sources_json(in->sources, in->n_sources);
    int unchanged = (!in->text || strcmp(in->text, cur->text) == 0) && (!in->kind || strcmp(in->kind, cur->kind) == 0) &&
                    (!in->metadata || same_str(in->metadata, cur->metadata)) &&
                    (!in->sources || same_str(sources, cur_sources)) && (in->pinned < 0 || in->pinned == cur->pinned) &&
                    (in->token_cap < 0 || in->token_cap == cur->token_cap) && !in->valid_from && !in->valid_to;
    free(sources);
    free(cur_sources);
    if (unchanged) { /* nothing to record: re-running an update changes nothing */
        if (out)
            *out = cur;
        else
            mn_memory_free(cur);
        return MN_OK;
    }
    mn_memory m = *cur;
    m.version = cur->version + 1;
    if (in->text)
        m.text = (char *)in->text;
    if (in->kind)
        m.kind = (char *)in->kind;
    if (in->metadata)
        m.metadata = (char *)in->metadata;
    if (in->sources) {
        m.sources = (int64_t *)in->sources;
        m.n_sources = in->n_sources;
    }
    if (in->pinned >= 0)
        m.pinned = in->pinned;
    if (in->token_cap >= 0)
        m.token_cap = in->token_cap;
    m.valid_from = in->valid_from ? in->valid_from : now;
    m.valid_to = in->valid_to ? in->valid_to : cur->valid_to; /* an end not given is kept */
    m.recorded_at = now;
    m.superseded_at = 0;
    m.change = "update";
    m.actor = (char *)(in->actor ? in->actor : "api");
    m.reason = (char *)in->reason;
    m.score = 0;
    if (in->sources)
        rc = check_provenance(db, cur->ns, in->sources, in->n_sources, NULL);
    if (!rc && m.valid_to && m.valid_to <= m.valid_from)
        rc = in->valid_to ? mn__err(MN_INVALID, "valid_to: must be after valid_from")
                          : mn__err(MN_INVALID, "valid_from: must be before the memory's valid_to (%lld), which an update"
                                                " keeps unless it gives valid_to",
                                    (long long)m.valid_to);
    if (!rc)
        rc = store_version(db, &m, out);
    mn_memory_free(cur);
    return rc;
}

mn_status mn_memory_delete(mn_db *db, const char *id, int64_t at, const char *actor, const char *reason)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = check_memory_id(id, canon);
    if (!rc && at < 0)
        rc = mn__err(MN_INVALID, "at: must not be negative");
    if (!rc && actor && strlen(actor) > MN_FACT_MAX_ACTOR)
        rc = mn__err(MN_TOOBIG, "actor: over the limit of %d bytes", MN_FACT_MAX_ACTOR);
    if (!rc && reason && strlen(reason) > MN_FACT_MAX_REASON)
        rc = mn__err(MN_TOOBIG, "reason: over the limit of %d bytes", MN_FACT_MAX_REASON);
    mn_memory *cur = NULL;
    if (!rc)
        rc = current_version(db, canon, &cur);
    if (rc)
        return rc;
    int64_t now = mn_clock_now_ms();
    mn_memory m = *cur;
    m.version = cur->version + 1;
    m.valid_to = at ? at : now;
    /* deleted before it began, or in the millisecond it was added: it is never true. Had the
     * latter been true for that millisecond, a read in it after the delete returned would still
     * find the memory. */
    int never_true = !at && now <= cur->valid_from;
    if (never_true)
        m.valid_to = cur->valid_from;
    m.recorded_at = now;
    m.superseded_at = 0;
    m.change = "delete";
    m.actor = (char *)(actor ? actor : "api");
    m.reason = (char *)reason;
    if (is_closed(cur, now))
        rc = mn__err(MN_INVALID, "memory %s: already closed", canon);
    else if (cur->valid_to && at > cur->valid_to) /* a delete ends a validity, never extends it */
        rc = mn__err(MN_INVALID, "at: after the memory's valid_to (%lld), when it stops being true already",
                     (long long)cur->valid_to);
    else if (!never_true && m.valid_to <= m.valid_from)
        rc = mn__err(MN_INVALID, "at: must be after the memory's valid_from");
    if (!rc)
        rc = store_version(db, &m, NULL);
    mn_memory_free(cur);
    return rc;
}

mn_status mn_memory_forget(mn_db *db, const char *id)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = check_memory_id(id, canon);
    int64_t removed = 0;
    if (!rc)
        rc = db->store->ops->memory->forget(db->store, canon, &removed);
    if (!rc && removed == 0)
        rc = mn__err(MN_NOTFOUND, "memory %s: no such memory", canon);
    if (!rc) /* the memory vector index kept its vectors as tombstones: it goes (erasure.md) */
        mn__erased_memories(db);
    return rc;
}

/* ---- reading --------------------------------------------------------------------------------- */

mn_status mn_memory_history(mn_db *db, const char *id, mn_memories **out)
{
    *out = NULL;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = check_memory_id(id, canon);
    if (rc)
        return rc;
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, canon, 1, NULL, 0, mn_clock_now_ms(), 0, 0, NULL, 0};
    if ((rc = mn__memory_query_run(db, &sq, out)))
        return rc;
    if ((*out)->count == 0) {
        mn_memories_free(*out);
        *out = NULL;
        return mn__err(MN_NOTFOUND, "memory %s: no such memory", canon);
    }
    return MN_OK;
}

/* Checks q (NULL: none) and points *q at its copy as this version knows it (util/abi.h). */
static mn_status check_query_arg(const mn_memory_query **q, mn_memory_query *loaded)
{
    mn_status rc = *q ? mn_fact_check_query(*q, loaded) : MN_OK;
    if (!rc && *q)
        *q = loaded;
    return rc;
}

mn_status mn_memory_list(mn_db *db, const mn_memory_query *q, mn_memories **out)
{
    *out = NULL;
    mn_status rc = mn__check_db(db);
    mn_memory_query loaded;
    if (!rc)
        rc = check_query_arg(&q, &loaded);
    if (rc)
        return rc;
    mn_memory_query dflt = MN_MEMORY_QUERY_INIT;
    if (!q)
        q = &dflt;
    mn_store_memory_query sq = {q, NULL, 0, NULL, 0, mn_clock_now_ms(), q->limit ? q->limit : DEFAULT_LIST_LIMIT,
                                q->offset, NULL, 0};
    return mn__memory_query_run(db, &sq, out);
}

mn_status mn_memory_search(mn_db *db, const char *query, mn_search_mode mode, const mn_memory_query *q,
                           mn_memories **out)
{
    *out = NULL;
    mn_status rc = mn__check_db(db);
    mn_memory_query loaded;
    if (!rc)
        rc = check_query_arg(&q, &loaded);
    if (!rc && (!query || !*query))
        rc = mn__err(MN_INVALID, "query: must not be empty");
    if (!rc && strlen(query) > MAX_QUERY_BYTES)
        rc = mn__err(MN_TOOBIG, "query: over the limit of %d bytes", MAX_QUERY_BYTES);
    if (!rc && !mn_utf8_valid(query, strlen(query), NULL))
        rc = mn__err(MN_INVALID, "query: not valid UTF-8");
    if (!rc && (unsigned)mode > MN_SEARCH_HYBRID)
        rc = mn__err(MN_INVALID, "mode: %d is not a search mode", (int)mode);
    if (rc)
        return rc;
    mn_memory_query dflt = MN_MEMORY_QUERY_INIT;
    if (!q)
        q = &dflt;
    return mn__memory_search_run(db, query, mode, q, q->limit ? q->limit : DEFAULT_TOP_K, out);
}

/* ---- records --------------------------------------------------------------------------------- */

void mn_memory_free(mn_memory *m)
{
    if (!m)
        return;
    mn_fact_release(m);
    free(m);
}

void mn_memories_free(mn_memories *list) { mn__memories_list_free(list); }

mn_status mn_memory_to_json(const mn_memory *m, char **out)
{
    *out = NULL;
    json_t *o = m ? mn_fact_json(m, 0) : NULL;
    if (!o)
        return m ? mn__nomem() : mn__err(MN_MISUSE, "memory: NULL");
    *out = mn_json_dump(o);
    json_decref(o);
    return *out ? MN_OK : mn__nomem();
}

mn_status mn_memories_to_json(const mn_memories *list, char **out)
{
    *out = NULL;
    json_t *a = json_array();
    mn_status rc = a ? MN_OK : mn__nomem();
    for (size_t i = 0; !rc && list && i < list->count; i++) {
        json_t *o = mn_fact_json(&list->items[i], 1);
        if (!o || json_array_append_new(a, o))
            rc = mn__nomem();
    }
    if (!rc && !(*out = mn_json_dump(a)))
        rc = mn__nomem();
    json_decref(a);
    return rc;
}

/* ---- export, import, migrate ----------------------------------------------------------------- */

struct export_ctx {
    mn_write_fn write;
    void *user;
    mn_status rc;
};

static int export_row(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25;
    (void)vec;
    (void)dim;
    struct export_ctx *e = user;
    json_t *o = json_object();
    json_t *body = mn_fact_json(m, 0);
    if (!o || !body || json_object_set_new(o, "type", json_string("memory")) || json_object_update(o, body)) {
        json_decref(o);
        json_decref(body);
        e->rc = mn__nomem();
        return 1;
    }
    json_decref(body);
    char *text = mn_json_dump(o);
    json_decref(o);
    if (!text) {
        e->rc = mn__nomem();
        return 1;
    }
    size_t len = strlen(text);
    int bad = e->write(e->user, text, len) != 0 || e->write(e->user, "\n", 1) != 0;
    free(text);
    if (bad) {
        e->rc = mn__err(MN_IO, "export: write failed");
        return 1;
    }
    return 0;
}

mn_status mn__memory_export(mn_db *db, mn_write_fn write, void *user)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, NULL, 1, NULL, 0, mn_clock_now_ms(), 0, 0, NULL, 0};
    struct export_ctx e = {write, user, MN_OK};
    mn_status rc = db->store->ops->memory->query(db->store, &sq, export_row, &e);
    return rc ? rc : e.rc;
}

int mn__memory_line(const char *line, size_t len)
{
    static const char head[] = "{\"type\":\"memory\"";
    return len >= sizeof head - 1 && memcmp(line, head, sizeof head - 1) == 0;
}

/* Stores one version as it is, with a vector from this handle's embedder when it has one. */
static mn_status import_version(mn_db *db, const mn_memory *m, int *added)
{
    float *vec = NULL;
    uint32_t dim = 0;
    mn_status rc = embed_text(db, m->text, &vec, &dim);
    if (!rc)
        rc = db->store->ops->memory->import(db->store, m, vec, dim, added);
    free(vec);
    return rc;
}

mn_status mn__memory_import_line(mn_db *db, const char *line, size_t len, int *added)
{
    *added = 0;
    json_error_t e;
    json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        return mn__err(MN_CORRUPT, "memory line: %s", o ? "not an object" : e.text);
    }
    mn_memory m;
    char *meta = NULL;
    mn_status rc = mn_fact_from_json(o, &m, &meta);
    char canon[MN_UUID_LEN + 1];
    if (!rc && !mn_uuid_parse(m.id, canon))
        rc = mn__err(MN_INVALID, "memory: id: '%s' is not a UUID", m.id);
    if (!rc)
        rc = import_version(db, &m, added);
    free(m.sources);
    free(meta);
    json_decref(o);
    return rc;
}

struct copy_ctx {
    mn_db *dst;
    mn_status rc;
    size_t added;
};

static int copy_row(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25;
    (void)vec;
    (void)dim;
    struct copy_ctx *c = user;
    int added = 0;
    c->rc = import_version(c->dst, m, &added);
    c->added += (size_t)added;
    return c->rc != MN_OK;
}

mn_status mn__memory_copy(mn_db *src, mn_db *dst)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, NULL, 1, NULL, 0, mn_clock_now_ms(), 0, 0, NULL, 0};
    struct copy_ctx c = {dst, MN_OK, 0};
    mn_status rc = dst->store->ops->begin(dst->store);
    if (rc)
        return rc;
    rc = src->store->ops->memory->query(src->store, &sq, copy_row, &c);
    if (!rc)
        rc = c.rc;
    if (rc)
        dst->store->ops->rollback(dst->store);
    else
        rc = dst->store->ops->commit(dst->store);
    if (!rc && c.added) /* the destination's memory vector index follows */
        mn__memory_index_update(dst, 0, c.added);
    return rc;
}
