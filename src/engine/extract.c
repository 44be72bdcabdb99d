/*
 * extract.c — memory extraction (mn_memory_extract and the background worker's runs): reads a
 * session's messages past its extraction watermark, asks the extractor for candidates
 * (memory/extract.h; the llm one: extract_llm.c) and decides, per candidate, add / update /
 * nothing against the live memories of the session's scope (its namespace, narrowed by the
 * "memory_scope" of its metadata). Idempotent: the watermark (meta "memory.extracted.<session>")
 * skips turns already read, and an older statement never overwrites a newer one. docs/memory.md
 * ("Extraction").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/engine.h"
#include "config/config.h"
#include "memory/extract.h"
#include "memory/fact.h"
#include "store/records.h"
#include "util/err.h"
#include "util/banned.h"

struct run {
    mn_db *db;
    const struct mn_extract_scope *sc;
    const mn_message *m;
    mn_extract_stats *st;
    mn_status rc;
};

static int64_t max_source(const mn_memory *m)
{
    int64_t max = 0;
    for (size_t i = 0; i < m->n_sources; i++)
        if (m->sources[i] > max)
            max = m->sources[i];
    return max;
}

mn_status mn__extract_scope(const mn_session *s, struct mn_extract_scope *sc)
{
    memset(sc, 0, sizeof *sc);
    sc->ns = s->ns;
    json_t *meta = json_loads(s->metadata ? s->metadata : "{}", 0, NULL);
    json_t *scope = json_object_get(meta, "memory_scope");
    sc->hold = meta;
    if (!scope)
        return MN_OK;
    if (!json_is_object(scope))
        return mn__err(MN_INVALID, "session metadata memory_scope: must be an object");
    const char *names[] = {"user_id", "agent_id", "session_id", "extract"};
    const char **fields[] = {&sc->user_id, &sc->agent_id, &sc->session_id, &sc->extract};
    const char *k;
    json_t *v;
    json_object_foreach(scope, k, v) {
        size_t i = 0;
        while (i < 4 && strcmp(k, names[i]) != 0)
            i++;
        if (i == 4)
            return mn__err(MN_INVALID,
                           "session metadata memory_scope.%.40s: unknown (user_id, agent_id, session_id, extract)", k);
        const char *e = json_string_value(v);
        if (i == 3 && (!e || (strcmp(e, "off") && strcmp(e, "offline") && strcmp(e, "llm"))))
            return mn__err(MN_INVALID, "session metadata memory_scope.extract: must be off, offline or llm");
        if (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > MN_FACT_MAX_SCOPE_ID)
            return mn__err(MN_INVALID, "session metadata memory_scope.%s: must be a string of 1 to %d bytes", k,
                           MN_FACT_MAX_SCOPE_ID);
        *fields[i] = json_string_value(v);
    }
    return MN_OK;
}

void mn__extract_scope_release(struct mn_extract_scope *sc)
{
    json_decref(sc->hold);
    memset(sc, 0, sizeof *sc);
}

static int in_scope(const struct mn_extract_scope *sc, const mn_memory *m)
{
    return mn__extract_in_scope(m, sc->ns, sc->user_id, sc->agent_id, sc->session_id);
}

#define FIND_PAGE 1000

/* The live memory of the scope with this kind and key (keyed) or text (not keyed). A query
 * leaves an unset id unfiltered ("any"), so the memories of other users, agents and sessions of
 * the namespace come along: they are skipped, page after page, so that none of them hides the
 * scope's own memory. */
static mn_status find(struct run *r, const struct mn_candidate *c, mn_memory **out)
{
    *out = NULL;
    char meta[MN_EXTRACT_MAX_KEY + 16];
    snprintf(meta, sizeof meta, "{\"key\":\"%s\"}", c->key); /* keys are letters, spaces, - and ' */
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = r->sc->ns;
    q.user_id = r->sc->user_id;
    q.agent_id = r->sc->agent_id;
    q.session_id = r->sc->session_id;
    q.kind = c->kind;
    q.metadata = c->key[0] ? meta : NULL;
    q.limit = FIND_PAGE;
    mn_status rc = MN_OK;
    for (size_t page_len = FIND_PAGE; !rc && !*out && page_len == FIND_PAGE; q.offset += FIND_PAGE) {
        mn_memories *l = NULL;
        rc = mn__list_memories(r->db, &q, &l);
        page_len = rc ? 0 : l->count;
        for (size_t i = 0; !rc && i < l->count && !*out; i++) {
            mn_memory *m = &l->items[i];
            if (!in_scope(r->sc, m) || (!c->key[0] && strcmp(m->text, c->text) != 0))
                continue;
            *out = malloc(sizeof **out);
            if (!*out)
                rc = mn__nomem();
            else {
                **out = *m;
                memset(m, 0, sizeof *m);
            }
        }
        mn__memories_list_free(l);
    }
    return rc;
}

/* Adds or updates the memory of one candidate of message r->m; nonzero (r->rc) on error. */
static int apply(struct run *r, const struct mn_candidate *c)
{
    r->st->candidates++;
    mn_memory *have = NULL;
    if ((r->rc = find(r, c, &have)))
        return 1;
    int64_t src = r->m->id;
    char reason[64];
    snprintf(reason, sizeof reason, "said in message %lld", (long long)src);
    if (have && (strcmp(have->text, c->text) == 0 || src <= max_source(have))) {
        r->st->unchanged++; /* the same, or an older statement than the one it holds */
    } else if (have) {
        mn_memory_in in = MN_MEMORY_IN_INIT;
        in.text = c->text;
        in.sources = &src;
        in.n_sources = 1;
        in.valid_from = r->m->created_at > have->valid_from ? r->m->created_at : 0;
        in.actor = "extractor:offline";
        in.reason = reason;
        r->rc = mn__update_memory(r->db, have->id, &in, NULL);
        r->st->updated += r->rc == MN_OK;
    } else {
        char meta[MN_EXTRACT_MAX_KEY + 16];
        snprintf(meta, sizeof meta, "{\"key\":\"%s\"}", c->key);
        mn_memory_in in = MN_MEMORY_IN_INIT;
        in.text = c->text;
        in.kind = c->kind;
        in.ns = r->sc->ns;
        in.user_id = r->sc->user_id;
        in.agent_id = r->sc->agent_id;
        in.session_id = r->sc->session_id;
        in.metadata = c->key[0] ? meta : NULL;
        in.sources = &src;
        in.n_sources = 1;
        in.pinned = 0;
        in.token_cap = 0;
        in.valid_from = r->m->created_at;
        in.actor = "extractor:offline";
        in.reason = reason;
        r->rc = mn__add_memory(r->db, &in, NULL);
        r->st->added += r->rc == MN_OK;
    }
    mn__free_memory(have);
    return r->rc != MN_OK;
}

/* The candidates of one message, in the order they were said. */
struct said {
    struct mn_candidate *items;
    size_t count, cap;
    mn_status rc;
};

static int collect(void *user, const struct mn_candidate *c)
{
    struct said *s = user;
    if (s->count == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        struct mn_candidate *items = realloc(s->items, cap * sizeof *items);
        if (!items) {
            s->rc = mn__nomem();
            return 1;
        }
        s->items = items;
        s->cap = cap;
    }
    s->items[s->count++] = *c;
    return 0;
}

/* A keyed candidate said again later in the same message: the later statement is the one that
 * holds ("my color is blue. My color is red." keeps red), and both come from the same message, so
 * the order of the sources cannot tell them apart. */
static int restated(const struct said *s, size_t i)
{
    const struct mn_candidate *c = &s->items[i];
    for (size_t j = i + 1; c->key[0] && j < s->count; j++)
        if (strcmp(s->items[j].kind, c->kind) == 0 && strcmp(s->items[j].key, c->key) == 0)
            return 1;
    return 0;
}

/* The offline extractor over one user message. */
static mn_status extract_offline(struct run *r)
{
    struct said s = {NULL, 0, 0, MN_OK};
    mn__extract_offline(r->m->content, collect, &s);
    r->rc = s.rc;
    for (size_t i = 0; !r->rc && i < s.count; i++) {
        if (restated(&s, i)) {
            r->st->candidates++;
            r->st->unchanged++;
        } else {
            apply(r, &s.items[i]);
        }
    }
    free(s.items);
    return r->rc;
}

mn_status mn__extract_memories(mn_db *db, const char *session_id, const char *extractor, int background,
                             mn_extract_stats *stats)
{
    mn_extract_stats st = {0, 0, 0, 0, 0, 0, 0};
    if (stats)
        *stats = st;
    char canon[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (!rc)
        rc = mn__session_ref(db, NULL, session_id, canon);
    if (!rc && extractor && strcmp(extractor, "llm") != 0 && strcmp(extractor, "offline") != 0)
        rc = mn__err(MN_INVALID, "extractor: '%s' is not one of offline, llm", extractor);
    if (rc)
        return rc;
    mn_session *s = NULL;
    if ((rc = mn__live_session(db, canon, &s)))
        return rc;
    struct mn_extract_scope sc;
    if ((rc = mn__extract_scope(s, &sc))) {
        mn__extract_scope_release(&sc);
        mn__records_session_free(s);
        return rc;
    }
    if (!extractor) { /* the session's memory_scope.extract, else the database's memory.extract */
        extractor = sc.extract ? sc.extract : mn__config_str(db->cfg, "memory.extract");
        if (strcmp(extractor, "off") == 0 && background) {
            mn__extract_scope_release(&sc);
            mn__records_session_free(s);
            return MN_OK;
        }
        if (strcmp(extractor, "off") == 0)
            extractor = "offline";
    }
    int llm = strcmp(extractor, "llm") == 0;
    char key[MN_EXTRACT_MARK_KEY_CAP];
    mn__extract_mark_key(canon, key);
    char *mark = NULL;
    rc = db->store->ops->meta_get(db->store, key, &mark);
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.after_seq = mark ? strtoll(mark, NULL, 10) : 0;
    ho.all = 1;
    free(mark);
    mn_messages *msgs = NULL;
    if (!rc) /* the session is live: checked above */
        rc = db->store->ops->history(db->store, canon, &ho, NULL, &msgs);
    struct run r = {db, &sc, NULL, &st, MN_OK};
    int malformed = 0;
    if (!rc && llm)
        rc = mn__memory_extract_llm(db, s, &sc, msgs, &st, &malformed);
    for (size_t i = 0; !rc && !llm && i < msgs->count; i++) {
        const mn_message *m = &msgs->items[i];
        if (m->role != MN_ROLE_USER || !m->content)
            continue;
        st.messages++;
        r.m = m;
        rc = extract_offline(&r);
    }
    if (!rc && msgs->count && !malformed) {
        char seq[32];
        snprintf(seq, sizeof seq, "%lld", (long long)msgs->items[msgs->count - 1].seq);
        rc = db->store->ops->meta_set(db->store, key, seq);
    }
    mn__extract_scope_release(&sc);
    mn__records_message_list_free(msgs);
    mn__records_session_free(s);
    if (!rc && stats)
        *stats = st;
    return rc;
}
