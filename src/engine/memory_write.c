/*
 * memory_write.c — the writes of long-term memories (docs/memory.md): versions, where a change
 * closes the previous version and writes the next (add, update, delete), forgetting a memory
 * with every version, and the checks each version gets, the same for every writer: the public
 * functions (mnemo_memory.c) and the extractors (extract.c, extract_llm.c).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "embed/embed.h"
#include "memory/fact.h"
#include "store/records.h"
#include "store/store_memory.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

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
    if (session_id && mn__uuid_parse(session_id, canon)) {
        mn_session *s = NULL;
        rc = db->store->ops->session_get(db->store, canon, &s);
        int other = !rc && strcmp(s->ns, ns) != 0;
        mn__records_session_free(s);
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

mn_status mn__memory_embed(mn_db *db, const char *text, float **vec, uint32_t *dim)
{
    *vec = NULL;
    *dim = 0;
    if (!mn__embedder_configured(db))
        return MN_OK;
    mn_embedder *e = NULL;
    mn_status rc = mn__search_embedder(db, &e);
    if (!rc)
        rc = mn__embed_texts_alloc(e, &text, 1, vec, dim);
    return rc;
}

/* ---- versions: at most one valid at any instant -------------------------------------------- */

struct version_row {
    int64_t version, valid_from, valid_to, superseded_at;
};

struct versions {
    struct version_row *v;
    size_t n, cap;
    mn_status rc;
};

static int keep_version(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25, (void)vec, (void)dim;
    struct versions *vs = user;
    if (vs->n == vs->cap) {
        size_t cap = vs->cap ? 2 * vs->cap : 8;
        struct version_row *v = realloc(vs->v, cap * sizeof *v);
        if (!v) {
            vs->rc = mn__nomem();
            return 1;
        }
        vs->v = v;
        vs->cap = cap;
    }
    vs->v[vs->n++] = (struct version_row){m->version, m->valid_from, m->valid_to, m->superseded_at};
    return 0;
}

/* Every stored version of memory id, oldest first. */
static mn_status read_versions(mn_store *st, const char *id, struct versions *vs)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_store_memory_query sq = {&q, id, 1, NULL, 0, mn__clock_now_ms(), 0, 0, NULL, 0};
    mn_status rc = st->ops->memory->query(st, &sq, keep_version, vs);
    return rc ? rc : vs->rc;
}

/* A new version m ends every earlier version's validity where m's begins, not only the one it
 * supersedes (an update valid from before the previous version began reaches back over it), and
 * closes any earlier one still current (superseded when m was recorded; an import of a newer
 * export closes what the database had). */
static mn_status end_earlier(mn_store *st, const mn_memory *m, const struct versions *vs)
{
    mn_status rc = MN_OK;
    for (size_t i = 0; i < vs->n && !rc; i++) {
        const struct version_row *v = &vs->v[i];
        if (v->version >= m->version)
            continue;
        int64_t superseded = v->superseded_at ? v->superseded_at : m->recorded_at;
        int64_t to = v->valid_to;
        if (!to || to > m->valid_from)
            to = v->valid_from > m->valid_from ? v->valid_from : m->valid_from;
        if (superseded != v->superseded_at || to != v->valid_to)
            rc = st->ops->memory->end(st, m->id, v->version, superseded, to);
    }
    return rc;
}

/* Inside a transaction: version 1 is a new memory; version v > 1 needs v-1 current. */
static mn_status write_version(mn_store *st, const mn_memory *m, const float *vec, uint32_t dim)
{
    struct versions vs = {0};
    mn_status rc = m->version > 1 ? read_versions(st, m->id, &vs) : MN_OK;
    const struct version_row *last = vs.n ? &vs.v[vs.n - 1] : NULL;
    if (!rc && m->version > 1 && (!last || last->version != m->version - 1 || last->superseded_at))
        rc = mn__err(MN_CONFLICT, "memory %s: version %lld is not the current version any more", m->id,
                     (long long)(m->version - 1));
    int added = 0;
    if (!rc && !(rc = st->ops->memory->put(st, m, vec, dim, &added)) && !added)
        rc = mn__err(MN_CONFLICT, "memory %s: version %lld exists", m->id, (long long)m->version);
    if (!rc)
        rc = end_earlier(st, m, &vs);
    free(vs.v);
    return rc;
}

mn_status mn__import_memory_version(mn_store *st, const mn_memory *m, const float *vec, uint32_t dim, int *added)
{
    mn_status rc = st->ops->memory->put(st, m, vec, dim, added);
    if (rc || !*added || m->version == 1)
        return rc;
    struct versions vs = {0}; /* a newer version than the database had closes the older ones */
    if (!(rc = read_versions(st, m->id, &vs)))
        rc = end_earlier(st, m, &vs);
    free(vs.v);
    return rc;
}

/* One version in one transaction. */
static mn_status commit_version(mn_store *st, const mn_memory *m, const float *vec, uint32_t dim)
{
    mn_status rc = st->ops->begin(st);
    if (rc)
        return rc;
    if ((rc = write_version(st, m, vec, dim)))
        st->ops->rollback(st);
    else
        rc = st->ops->commit(st);
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
    if (out && (!copy || (rc = mn__fact_copy(copy, m)))) {
        free(copy);
        return rc ? rc : mn__nomem();
    }
    rc = mn__memory_embed(db, m->text, &vec, &dim);
    if (!rc)
        rc = commit_version(db->store, m, vec, dim);
    if (!rc && vec) /* the memory vector index follows, off the write's path (docs/memory.md) */
        mn__memory_index_later(db, 1);
    free(vec);
    if (!rc && out) {
        *out = copy;
        copy = NULL;
    }
    mn__free_memory(copy);
    return rc;
}

mn_status mn__add_memory(mn_db *db, const mn_memory_in *in, mn_memory **out)
{
    if (out)
        *out = NULL;
    mn_memory_in loaded; /* the caller's struct as this version knows it (util/abi.h) */
    mn_status rc = mn__fact_check_in(in, 0, &loaded);
    if (rc)
        return rc;
    in = &loaded;
    int64_t now = mn__clock_now_ms();
    char id[MN_UUID_LEN + 1];
    if ((rc = mn__uuid_v7(now, id)))
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

/* The current version of memory canon, to be changed at *now (read after it): MN_INVALID with
 * closed_why when it is closed, as a closed memory takes no new version. */
static mn_status current_open(mn_db *db, const char *canon, const char *closed_why, mn_memory **cur, int64_t *now)
{
    mn_status rc = mn__memory_current(db, canon, cur);
    *now = mn__clock_now_ms();
    if (!rc && is_closed(*cur, *now)) {
        rc = mn__err(MN_INVALID, "memory %s: %s", canon, closed_why);
        mn__free_memory(*cur);
        *cur = NULL;
    }
    return rc;
}

static int same_str(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

/* Whether update in would record nothing new over cur: re-running an update changes nothing. */
static int unchanged(const mn_memory *cur, const mn_memory_in *in)
{
    char *sources = NULL, *cur_sources = mn__fact_sources_json(cur->sources, cur->n_sources);
    if (in->sources)
        sources = mn__fact_sources_json(in->sources, in->n_sources);
    int same = (!in->text || strcmp(in->text, cur->text) == 0) && (!in->kind || strcmp(in->kind, cur->kind) == 0) &&
               (!in->metadata || same_str(in->metadata, cur->metadata)) &&
               (!in->sources || same_str(sources, cur_sources)) && (in->pinned < 0 || in->pinned == cur->pinned) &&
               (in->token_cap < 0 || in->token_cap == cur->token_cap) && !in->valid_from && !in->valid_to;
    free(sources);
    free(cur_sources);
    return same;
}

/* The next version of cur with what in changes, recorded at now. */
static mn_memory next_version(const mn_memory *cur, const mn_memory_in *in, int64_t now)
{
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
    return m;
}

mn_status mn__update_memory(mn_db *db, const char *id, const mn_memory_in *in, mn_memory **out)
{
    if (out)
        *out = NULL;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__memory_check_id(id, canon);
    mn_memory_in loaded; /* the caller's struct as this version knows it (util/abi.h) */
    if (!rc && !(rc = mn__fact_check_in(in, 1, &loaded)))
        in = &loaded;
    mn_memory *cur = NULL;
    int64_t now = 0;
    const char *closed = "closed (deleted or no longer true); add a new memory instead";
    if (rc || (rc = current_open(db, canon, closed, &cur, &now)))
        return rc;
    if (unchanged(cur, in)) {
        if (out)
            *out = cur;
        else
            mn__free_memory(cur);
        return MN_OK;
    }
    mn_memory m = next_version(cur, in, now);
    if (in->sources)
        rc = check_provenance(db, cur->ns, in->sources, in->n_sources, NULL);
    if (!rc && m.valid_to && m.valid_to <= m.valid_from)
        rc = in->valid_to ? mn__err(MN_INVALID, "valid_to: must be after valid_from")
                          : mn__err(MN_INVALID, "valid_from: must be before the memory's valid_to (%lld), which an update"
                                                " keeps unless it gives valid_to",
                                    (long long)m.valid_to);
    if (!rc)
        rc = store_version(db, &m, out);
    mn__free_memory(cur);
    return rc;
}

static mn_status check_delete(const char *id, char canon[MN_UUID_LEN + 1], int64_t at, const char *actor,
                              const char *reason)
{
    mn_status rc = mn__memory_check_id(id, canon);
    if (!rc && at < 0)
        rc = mn__err(MN_INVALID, "at: must not be negative");
    if (!rc && actor && strlen(actor) > MN_FACT_MAX_ACTOR)
        rc = mn__err(MN_TOOBIG, "actor: over the limit of %d bytes", MN_FACT_MAX_ACTOR);
    if (!rc && reason && strlen(reason) > MN_FACT_MAX_REASON)
        rc = mn__err(MN_TOOBIG, "reason: over the limit of %d bytes", MN_FACT_MAX_REASON);
    return rc;
}

mn_status mn__delete_memory(mn_db *db, const char *id, int64_t at, const char *actor, const char *reason)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = check_delete(id, canon, at, actor, reason);
    mn_memory *cur = NULL;
    int64_t now = 0;
    if (rc || (rc = current_open(db, canon, "already closed", &cur, &now)))
        return rc;
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
    if (cur->valid_to && at > cur->valid_to) /* a delete ends a validity, never extends it */
        rc = mn__err(MN_INVALID, "at: after the memory's valid_to (%lld), when it stops being true already",
                     (long long)cur->valid_to);
    else if (!never_true && m.valid_to <= m.valid_from)
        rc = mn__err(MN_INVALID, "at: must be after the memory's valid_from");
    if (!rc)
        rc = store_version(db, &m, NULL);
    mn__free_memory(cur);
    return rc;
}

mn_status mn__forget_memory(mn_db *db, const char *id)
{
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__memory_check_id(id, canon);
    int64_t removed = 0;
    if (!rc)
        rc = db->store->ops->memory->forget(db->store, canon, &removed);
    if (!rc && removed == 0)
        rc = mn__err(MN_NOTFOUND, "memory %s: no such memory", canon);
    if (!rc) /* the memory vector index kept its vectors as tombstones: it goes (erasure.md) */
        mn__erased_memories(db);
    return rc;
}
