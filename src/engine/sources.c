/*
 * sources.c — mn_memory_erase_sources: the messages of a session that memories were made from,
 * erased once no live memory of the session's namespace names them in any of its versions
 * (docs/erasure.md); all of a session's messages at once are one erasure of the session.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "store/records.h"
#include "store/store_memory.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

/* Message ids, sorted and unique once sorted_ids ran; keep[i]: a live memory names ids[i]. */
struct sources {
    const char *ns;
    int64_t *ids;
    size_t n, cap;
    unsigned char *keep;
    char **live; /* the ids of the namespace's live memories, sorted */
    size_t n_live, cap_live;
    int rows, oom;
};

static int push_id(struct sources *s, int64_t id)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        int64_t *p = realloc(s->ids, cap * sizeof *p);
        if (!p)
            return s->oom = 1;
        s->ids = p;
        s->cap = cap;
    }
    s->ids[s->n++] = id;
    return 0;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void sorted_ids(struct sources *s)
{
    if (s->n > 1)
        qsort(s->ids, s->n, sizeof *s->ids, cmp_id);
    size_t w = 0;
    for (size_t i = 0; i < s->n; i++)
        if (!w || s->ids[w - 1] != s->ids[i])
            s->ids[w++] = s->ids[i];
    s->n = w;
}

/* Every version of the memory: its sources are the candidates (of its namespace only). */
static int memory_sources(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25, (void)vec, (void)dim;
    struct sources *s = user;
    if (strcmp(m->ns, s->ns) != 0)
        return 0;
    s->rows++;
    for (size_t i = 0; i < m->n_sources; i++)
        if (push_id(s, m->sources[i]))
            return 1;
    return 0;
}

/* The candidates that are messages of the session (messages_get hands over the others too). */
struct in_session {
    const char *session_id;
    struct sources *kept;
};

static int message_of_session(void *user, const mn_message *m, const char *ns)
{
    (void)ns;
    struct in_session *k = user;
    return strcmp(m->session_id, k->session_id) == 0 && push_id(k->kept, m->id);
}

static int live_memory(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25, (void)vec, (void)dim;
    struct sources *s = user;
    if (s->n_live == s->cap_live) {
        size_t cap = s->cap_live ? s->cap_live * 2 : 64;
        char **p = realloc(s->live, cap * sizeof *p);
        if (!p)
            return s->oom = 1;
        s->live = p;
        s->cap_live = cap;
    }
    if (!(s->live[s->n_live] = strdup(m->id)))
        return s->oom = 1;
    s->n_live++;
    return 0;
}

/* Any version of a live memory: the candidates it names are kept. */
static int keep_named(void *user, const mn_memory *m, double bm25, const float *vec, uint32_t dim)
{
    (void)bm25, (void)vec, (void)dim;
    struct sources *s = user;
    const char *id = m->id;
    if (!bsearch(&id, s->live, s->n_live, sizeof *s->live, cmp_str))
        return 0;
    for (size_t i = 0; i < m->n_sources; i++) {
        int64_t *hit = bsearch(&m->sources[i], s->ids, s->n, sizeof *s->ids, cmp_id);
        if (hit)
            s->keep[hit - s->ids] = 1;
    }
    return 0;
}

/* Marks in s->keep the candidates a live memory of s->ns names, in any of its versions. */
static mn_status mark_kept(mn_db *db, struct sources *s)
{
    if (!(s->keep = calloc(s->n ? s->n : 1, 1)))
        return mn__nomem();
    if (!s->n)
        return MN_OK;
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = s->ns;
    int64_t now = mn__clock_now_ms();
    mn_store_memory_query live = {&q, NULL, 0, NULL, 0, now, 0, 0, NULL, 0};
    mn_status rc = db->store->ops->memory->query(db->store, &live, live_memory, s);
    if (!rc && s->oom)
        rc = mn__nomem();
    if (rc || !s->n_live)
        return rc;
    qsort(s->live, s->n_live, sizeof *s->live, cmp_str);
    mn_store_memory_query versions = {&q, NULL, 1, NULL, 0, now, 0, 0, NULL, 0};
    return db->store->ops->memory->query(db->store, &versions, keep_named, s);
}

static void sources_release(struct sources *s)
{
    for (size_t i = 0; i < s->n_live; i++)
        free(s->live[i]);
    free(s->live);
    free(s->ids);
    free(s->keep);
}

/* The candidates: the session's messages that memory_id names (NULL: all of them). */
static mn_status candidates(mn_db *db, const char *canon, const char *memory_id, struct sources *s)
{
    mn_status rc;
    if (!memory_id) {
        mn_history_opts ho = MN_HISTORY_OPTS_INIT;
        ho.all = 1;
        mn_messages *l = NULL;
        if ((rc = db->store->ops->history(db->store, canon, &ho, NULL, &l)))
            return rc;
        for (size_t i = 0; i < l->count && !s->oom; i++)
            push_id(s, l->items[i].id);
        mn__records_message_list_free(l);
        return s->oom ? mn__nomem() : MN_OK;
    }
    char mcanon[MN_UUID_LEN + 1];
    if (!mn__uuid_parse(memory_id, mcanon))
        return mn__err(MN_INVALID, "memory_id: '%.64s' is not a memory id (a UUID)", memory_id);
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    struct sources named = {s->ns, NULL, 0, 0, NULL, NULL, 0, 0, 0, 0};
    mn_store_memory_query sq = {&q, mcanon, 1, NULL, 0, mn__clock_now_ms(), 0, 0, NULL, 0};
    rc = db->store->ops->memory->query(db->store, &sq, memory_sources, &named);
    if (!rc && named.oom)
        rc = mn__nomem();
    if (!rc && !named.rows) /* another namespace's memory names nothing here */
        rc = mn__err(MN_NOTFOUND, "memory %s: no such memory", mcanon);
    if (!rc && named.n) {
        sorted_ids(&named);
        struct in_session k = {canon, s};
        rc = db->store->ops->search->messages_get(db->store, named.ids, named.n, message_of_session, &k);
        if (!rc && s->oom)
            rc = mn__nomem();
    }
    sources_release(&named);
    return rc;
}

mn_status mn__erase_memory_sources(mn_db *db, const char *canon, const char *memory_id, int64_t *erased)
{
    mn_session *sess = NULL;
    mn_status rc = db->store->ops->session_get(db->store, canon, &sess);
    if (rc)
        return rc;
    struct sources s = {sess->ns, NULL, 0, 0, NULL, NULL, 0, 0, 0, 0};
    rc = candidates(db, canon, memory_id, &s);
    if (!rc) {
        sorted_ids(&s);
        rc = mark_kept(db, &s);
    }
    size_t kept = 0;
    for (size_t i = 0; !rc && i < s.n; i++)
        kept += s.keep[i];
    if (!rc && !memory_id && !kept) { /* all of it: one erasure of the session, not one per message */
        /* mn__delete_session resets the extraction watermark too: Mem0 makes scope sessions
         * again with the same id */
        if (!(rc = mn__delete_session(db, canon)) && erased)
            *erased = (int64_t)s.n;
        s.n = 0;
    }
    for (size_t i = 0; !rc && i < s.n; i++) {
        if (s.keep[i])
            continue;
        rc = mn__delete_message(db, canon, s.ids[i]);
        if (rc == MN_NOTFOUND) /* deleted meanwhile by another caller: as good */
            rc = MN_OK;
        else if (!rc && erased)
            (*erased)++;
    }
    sources_release(&s);
    mn__records_session_free(sess);
    return rc;
}
