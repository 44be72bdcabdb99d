/*
 * mem0.c — routes shaped like Mem0's memory API, so that the `mem0ai` package's MemoryClient
 * pointed at `mnemo serve` (its `host` option) works unchanged for add, search, get, get-all,
 * update, history and delete (docs/memory.md, "Mem0-compatible routes"). Mem0's scope maps to
 * mnemo's: app_id is the namespace (a key bound to a namespace is that namespace), user_id and
 * agent_id are the memory's, run_id is its session_id. `add` keeps the messages in one session
 * per scope (its metadata's memory_scope says which) and runs the configured extractor over them
 * (offline when memory.extract is off), so every memory names the messages it came from; with
 * infer false each message becomes a memory as it is; with async_mode the extraction is queued as
 * a library extraction job, whose state GET /v1/event/{id} names as Mem0 does (the library says
 * what done is: mn_memory_extract_job). Mem0's delete closes the memory (its
 * history stays; a closed memory is not found by get) and erases the raw messages it came from
 * that no live memory still names; delete-all erases the scope sessions whole
 * (mn_memory_erase_sources decides what goes). Handlers of the operation table (ops.c); Mem0's
 * filters are mem0_filter.c's, its entities and batches mem0_entities.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/mem0_int.h"

#define ACTOR "mem0"

mn_status m0_ok(struct srv_call *c, json_t *result)
{
    if (!result)
        return srv_fail(c, MN_NOMEM, "out of memory");
    c->result = result;
    return MN_OK;
}

static const char *param_str(struct srv_call *c, const char *name)
{
    return json_string_value(json_object_get(c->params, name));
}

/* ---- scope ----------------------------------------------------------------------------------- */

static const char **scope_field(struct m0_scope *s, const char *key)
{
    return strcmp(key, "app_id") == 0 ? &s->app : strcmp(key, "user_id") == 0 ? &s->user
           : strcmp(key, "agent_id") == 0 ? &s->agent : strcmp(key, "run_id") == 0 ? &s->run : NULL;
}

/* The scope from the top-level entity parameters (add, delete-all). */
static void scope_of(struct srv_call *c, struct m0_scope *s)
{
    memset(s, 0, sizeof *s);
    const char *keys[] = {"app_id", "user_id", "agent_id", "run_id"};
    for (size_t i = 0; i < 4; i++)
        *scope_field(s, keys[i]) = param_str(c, keys[i]);
}

/* The namespace: the key's when bound (app_id must then be it), else app_id; writing without
 * either: "default"; reading: any. */
static mn_status scope_ns(struct srv_call *c, const struct m0_scope *s, int writing, const char **ns)
{
    if (c->ns) {
        if (s->app && strcmp(s->app, c->ns) != 0) {
            c->http = 403;
            return srv_fail(c, MN_INVALID, "app_id: this API key is bound to namespace '%s'", c->ns);
        }
        *ns = c->ns;
    } else {
        *ns = s->app ? s->app : writing ? "default" : NULL;
    }
    return MN_OK;
}

static mn_status scope_query(struct srv_call *c, const struct m0_scope *s, mn_memory_query *q)
{
    q->user_id = s->user;
    q->agent_id = s->agent;
    q->session_id = s->run;
    return scope_ns(c, s, 0, &q->ns);
}

/* ---- the Mem0 shapes ------------------------------------------------------------------------- */

json_t *m0_iso_time(int64_t ms)
{
    if (ms <= 0)
        return json_null();
    time_t t = (time_t)(ms / 1000);
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return json_null();
    char b[48];
    snprintf(b, sizeof b, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
             tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
    return json_string(b);
}

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static const char *event_of(const mn_memory *m)
{
    return strcmp(m->change, "update") == 0 ? "UPDATE" : strcmp(m->change, "delete") == 0 ? "DELETE" : "ADD";
}

/* A memory as Mem0 shows one; created_at is when it became true, updated_at when this version
 * was recorded. mnemo's own fields (version, sources, validity) ride along. */
static json_t *m0_memory(const mn_memory *m)
{
    json_t *meta = json_loads(m->metadata ? m->metadata : "{}", 0, NULL), *src = json_array();
    for (size_t i = 0; src && i < m->n_sources; i++)
        json_array_append_new(src, json_integer(m->sources[i]));
    return json_pack("{s:s,s:s,s:o,s:o,s:s,s:o,s:o,s:[s],s:o,s:o,s:n,s:b,s:I,s:o,s:o,s:o}", "id", m->id, "memory",
                     m->text, "user_id", str_or_null(m->user_id), "agent_id", str_or_null(m->agent_id), "app_id",
                     m->ns, "run_id", str_or_null(m->session_id), "metadata", meta ? meta : json_object(),
                     "categories", m->kind, "created_at", m0_iso_time(m->valid_from), "updated_at",
                     m0_iso_time(m->recorded_at), "expiration_date", "immutable", 0, "version", (json_int_t)m->version,
                     "sources", src ? src : json_array(), "valid_from", m0_iso_time(m->valid_from), "valid_to",
                     m0_iso_time(m->valid_to));
}

/* Closed: deleted, or its validity ended. */
static int closed(const mn_memory *m, int64_t now_ms)
{
    return strcmp(m->change, "delete") == 0 || (m->valid_to && m->valid_to <= now_ms);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Memory id in the key's namespace, closed or not: another namespace's is not found whatever
 * its state (mn_memory_get_in, as on mnemo's own routes). field names the id in messages. */
static mn_status memory_in_ns(struct srv_call *c, const char *field, const char *id, mn_memory **out)
{
    mn_status st = mn_memory_get_in(c->db, c->ns, id, out);
    /* Mem0 answers a malformed id 400 "Invalid memory_id" (the client's ValidationError) */
    if (st == MN_INVALID)
        return srv_fail(c, MN_INVALID, "%s: Invalid memory_id '%.60s' (a memory id is a UUID)", field, id);
    if (st == MN_NOTFOUND)
        return srv_fail(c, MN_NOTFOUND, "memory %.60s: no such memory", id);
    return st ? srv_fail_lib(c, st) : MN_OK;
}

static mn_status path_memory(struct srv_call *c, mn_memory **out)
{
    return memory_in_ns(c, "memory_id", param_str(c, "memory_id"), out);
}

mn_status m0_live_memory(struct srv_call *c, const char *field, const char *id, mn_memory **out)
{
    *out = NULL;
    mn_memory *m = NULL;
    mn_status st = memory_in_ns(c, field, id, &m);
    if (st)
        return st;
    if (closed(m, now_ms())) {
        mn_memory_free(m);
        return srv_fail(c, MN_NOTFOUND, "memory %.60s: deleted (its history stays: GET /v1/memories/%.60s/history/)",
                      id, id);
    }
    *out = m;
    return MN_OK;
}

/* The live memory of the path, in the key's namespace. */
static mn_status live_memory(struct srv_call *c, mn_memory **out)
{
    return m0_live_memory(c, "memory_id", param_str(c, "memory_id"), out);
}

/* ---- ping ------------------------------------------------------------------------------------ */

mn_status srv_op_mem0_ping(struct srv_call *c)
{
    return m0_ok(c, json_pack("{s:s,s:n,s:n,s:n,s:o}", "status", "ok", "org_id", "project_id", "user_email",
                             "namespace", str_or_null(c->ns)));
}

/* ---- add ------------------------------------------------------------------------------------- */

/* 64-bit FNV-1a over the scope, NUL-separated, from seed. */
static uint64_t fnv(uint64_t h, const char *const *parts, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (const unsigned char *p = (const unsigned char *)(parts[i] ? parts[i] : "\x01"); *p; p++)
            h = (h ^ *p) * 0x100000001b3ULL;
        h = (h ^ 0) * 0x100000001b3ULL;
    }
    return h;
}

/* The session that keeps a scope's messages: a UUID (version 8) made from the scope, so each
 * scope finds its own without a lookup table. */
static void scope_session_id(const char *ns, const struct m0_scope *s, char out[37])
{
    const char *parts[] = {"mem0", ns, s->user, s->agent, s->run};
    uint64_t a = fnv(0xcbf29ce484222325ULL, parts, 5), b = fnv(0x84222325cbf29ce4ULL, parts, 5);
    snprintf(out, 37, "%08x-%04x-8%03x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
             (unsigned)a & 0xfff, (unsigned)((b >> 48) & 0x3fff) | 0x8000, (unsigned long long)(b & 0xffffffffffffULL));
}

static mn_status scope_session(struct srv_call *c, const char *ns, const struct m0_scope *s, char id[37])
{
    scope_session_id(ns, s, id);
    mn_session *sess = NULL;
    mn_status st = mn_session_get_in(c->db, ns, id, &sess);
    mn_session_free(sess);
    if (st != MN_NOTFOUND)
        return st ? srv_fail_lib(c, st) : MN_OK;
    json_t *scope = json_object(), *meta = NULL;
    if (s->user)
        json_object_set_new(scope, "user_id", json_string(s->user));
    if (s->agent)
        json_object_set_new(scope, "agent_id", json_string(s->agent));
    if (s->run)
        json_object_set_new(scope, "session_id", json_string(s->run));
    meta = json_pack("{s:o,s:s}", "memory_scope", scope, "source", "mem0");
    char *meta_text = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
    json_decref(meta);
    char title[160];
    snprintf(title, sizeof title, "Mem0 memories%s%.40s%s%.40s%s%.40s", s->user ? " of user " : "",
             s->user ? s->user : "", s->agent ? " for agent " : "", s->agent ? s->agent : "", s->run ? " in run " : "",
             s->run ? s->run : "");
    mn_session_opts o = MN_SESSION_OPTS_INIT;
    o.id = id;
    o.ns = ns;
    o.title = title;
    o.metadata = meta_text;
    o.ttl_ms = -1;
    o.max_turns = -1;
    st = meta_text ? mn_session_create(c->db, &o, NULL) : MN_NOMEM;
    free(meta_text);
    if (st == MN_CONFLICT) /* another request made it first */
        st = MN_OK;
    return st ? srv_fail_lib(c, st) : MN_OK;
}

/* run_id becomes the memories' session_id, which the library takes only as a session of the
 * namespace when it is a session id (a UUID; any other text is a label): refused here, before
 * anything is written, with the answer a missing session gets (another namespace's, expired or
 * not, included: mn_session_get_in). */
static mn_status run_param(struct srv_call *c, const char *ns, const char *run)
{
    char id[37];
    /* not a UUID (a session key resolves to another text, a label to nothing): a label */
    if (!run || mn_session_resolve(c->db, ns, run, id) != MN_OK || strcasecmp(id, run) != 0)
        return MN_OK;
    mn_session *s = NULL;
    mn_status st = mn_session_get_in(c->db, ns, run, &s);
    mn_session_free(s);
    if (st == MN_NOTFOUND)
        return srv_fail(c, MN_NOTFOUND, "run_id: session %.60s not found in namespace '%.60s'", run, ns);
    if (st == MN_EXPIRED) /* this namespace's thread, expired */
        return MN_OK;
    return st ? srv_fail_lib(c, st) : MN_OK;
}

/* The messages as mnemo messages (contents borrowed from params). */
static mn_status read_messages(struct srv_call *c, mn_message_in *out, size_t *n)
{
    json_t *list = json_object_get(c->params, "messages");
    size_t i;
    json_t *m;
    *n = 0;
    json_array_foreach(list, i, m) {
        if (!json_is_object(m))
            return srv_fail(c, MN_INVALID, "messages[%zu]: must be an object {role, content}", i);
        const char *role = json_string_value(json_object_get(m, "role"));
        json_t *content = json_object_get(m, "content");
        const char *k;
        json_t *v;
        json_object_foreach(m, k, v) {
            if (strcmp(k, "role") && strcmp(k, "content") && strcmp(k, "name"))
                return srv_fail(c, MN_INVALID, "messages[%zu].%.40s: unknown field (role, content, name)", i, k);
        }
        mn_message_in in = MN_MESSAGE_IN_INIT;
        if (!role || mn_role_parse(role, &in.role) != MN_OK || in.role == MN_ROLE_TOOL)
            return srv_fail(c, MN_INVALID, "messages[%zu].role: must be user, assistant or system", i);
        if (!json_is_string(content))
            return srv_fail(c, MN_INVALID, "messages[%zu].content: must be a string", i);
        in.content = json_string_value(content);
        in.name = json_string_value(json_object_get(m, "name"));
        out[(*n)++] = in;
    }
    return MN_OK;
}

/* The messages an add appended (their ids). */
struct added {
    int64_t *ids;
    size_t n;
};

static int has_source(const mn_memory *m, const struct added *a)
{
    for (size_t i = 0; i < m->n_sources; i++)
        for (size_t j = 0; j < a->n; j++)
            if (m->sources[i] == a->ids[j])
                return 1;
    return 0;
}

/* The version of m that came from a's messages, recorded since `since`: m itself, else one of its
 * history when a later version replaced it (an event read after another add); NULL when none.
 * *hist: the history read, which the caller frees. */
static const mn_memory *version_from(mn_db *db, const mn_memory *m, const struct added *a, int64_t since,
                                     mn_memories **hist)
{
    *hist = NULL;
    if (has_source(m, a))
        return m;
    if (m->version < 2 || mn_memory_history(db, m->id, hist))
        return NULL;
    for (size_t i = 0; i < (*hist)->count; i++) {
        const mn_memory *v = mn_memories_at(*hist, i);
        if (v->recorded_at >= since && has_source(v, a))
            return v;
    }
    return NULL;
}

/* What an add changed: the versions of the scope's memories that came from its messages, recorded
 * since it began (a memory changed since then is the only one that can hold one). */
static mn_status changed_by(struct srv_call *c, const char *ns, const struct m0_scope *s, const struct added *a,
                            int64_t since, json_t *out)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = ns;
    q.user_id = s->user;
    q.agent_id = s->agent;
    q.session_id = s->run;
    q.include_closed = 1;
    q.limit = 1000;
    mn_memories *l = NULL;
    mn_status st = mn_memory_list(c->db, &q, &l);
    if (st)
        return srv_fail_lib(c, st);
    for (size_t i = 0; i < l->count; i++) {
        const mn_memory *m = mn_memories_at(l, i);
        mn_memories *hist = NULL;
        const mn_memory *v = m->recorded_at < since ? NULL : version_from(c->db, m, a, since, &hist);
        json_t *o = v ? m0_memory(v) : NULL;
        if (o) {
            json_object_set_new(o, "event", json_string(event_of(v)));
            json_object_set_new(o, "data", json_pack("{s:s}", "memory", v->text));
            json_array_append_new(out, o);
        }
        mn_memories_free(hist);
    }
    mn_memories_free(l);
    return MN_OK;
}

/* The ids of list's messages with seq up to upto; NULL a->ids when out of memory. */
static void added_of(const mn_messages *list, int64_t upto, struct added *a)
{
    a->n = 0;
    a->ids = malloc((list->count ? list->count : 1) * sizeof *a->ids);
    for (size_t i = 0; a->ids && i < list->count; i++)
        if (mn_messages_at(list, i)->seq <= upto)
            a->ids[a->n++] = mn_messages_at(list, i)->id;
}

#define QUEUED_MSG "Memory processing has been queued for background execution"

/* async_mode: the extraction of the scope session sid queued as a job whose data is the add's
 * scope and where its messages begin (the event route reads both back); Mem0's answer. */
static mn_status queue_extraction(struct srv_call *c, const char *ns, const struct m0_scope *s, const char *sid,
                                  const mn_messages *stored)
{
    json_t *d = json_pack("{s:o,s:o,s:o,s:s,s:I}", "user_id", str_or_null(s->user), "agent_id", str_or_null(s->agent),
                          "run_id", str_or_null(s->run), "app_id", ns, "from_seq",
                          (json_int_t)mn_messages_at(stored, 0)->seq);
    char *data = d ? json_dumps(d, JSON_COMPACT) : NULL, *job = NULL;
    json_decref(d);
    mn_status st = data ? mn_memory_extract_queue(c->db, sid, data, &job) : MN_NOMEM;
    free(data);
    if (st) {
        mn_free(job);
        return st == MN_NOMEM ? srv_fail(c, st, "out of memory") : srv_fail_lib(c, st);
    }
    st = m0_ok(c, json_pack("{s:s,s:s,s:s}", "message", QUEUED_MSG, "status", "PENDING", "event_id", job));
    mn_free(job);
    return st;
}

mn_status srv_op_mem0_add(struct srv_call *c)
{
    struct m0_scope s;
    const char *ns = NULL;
    scope_of(c, &s);
    if (scope_ns(c, &s, 1, &ns))
        return c->status;
    int infer = !json_is_false(json_object_get(c->params, "infer"));
    json_t *ts = json_object_get(c->params, "timestamp"), *meta = json_object_get(c->params, "metadata");
    if (infer && ts)
        return srv_fail(c, MN_INVALID, "timestamp: only with infer false (extracted facts are true from when they "
                                     "were said)");
    mn_message_in msgs[100];
    size_t n = 0;
    char sid[37];
    if (read_messages(c, msgs, &n) || run_param(c, ns, s.run) || scope_session(c, ns, &s, sid))
        return c->status;
    int64_t since = now_ms();
    char err[256] = "";
    mn_messages *stored = NULL;
    mn_append_request req = {sizeof req, sid, msgs, n, 0, ns};
    mn_status st = srv_append(c->db, &req, &stored, err);
    if (st)
        return srv_fail(c, st, "%s", err[0] ? err : mn_status_str(st));
    char *meta_text = meta ? json_dumps(meta, JSON_COMPACT) : NULL;
    for (size_t i = 0; !infer && !st && i < stored->count; i++) {
        const mn_message *m = mn_messages_at(stored, i);
        if (m->role == MN_ROLE_SYSTEM || !m->content || !m->content[0])
            continue;
        mn_memory_in in = MN_MEMORY_IN_INIT;
        in.text = m->content;
        in.ns = ns;
        in.user_id = s.user;
        in.agent_id = s.agent;
        in.session_id = s.run;
        in.metadata = meta_text;
        in.sources = &m->id;
        in.n_sources = 1;
        in.pinned = 0;
        in.token_cap = 0;
        in.valid_from = ts ? (int64_t)json_integer_value(ts) * 1000 : 0;
        in.actor = ACTOR;
        in.reason = "added through the Mem0 API (infer false)";
        if ((st = mn_memory_add(c->db, &in, NULL)))
            srv_fail_lib(c, st);
    }
    free(meta_text);
    if (!st && infer && json_is_true(json_object_get(c->params, "async_mode"))) {
        st = queue_extraction(c, ns, &s, sid, stored);
        mn_messages_free(stored);
        return st;
    }
    if (!st && infer && (st = mn_memory_extract(c->db, sid, NULL, NULL)))
        srv_fail_lib(c, st);
    json_t *out = json_array();
    struct added a = {NULL, 0};
    if (!st) {
        added_of(stored, INT64_MAX, &a);
        st = out && a.ids ? changed_by(c, ns, &s, &a, since, out) : srv_fail(c, MN_NOMEM, "out of memory");
    }
    free(a.ids);
    mn_messages_free(stored);
    if (st) {
        json_decref(out);
        return c->status;
    }
    return m0_ok(c, out);
}

/* ---- events ---------------------------------------------------------------------------------- */

static const char *const status_names[] = {
    [MN_EXTRACT_PENDING] = "PENDING",
    [MN_EXTRACT_RUNNING] = "RUNNING",
    [MN_EXTRACT_DONE] = "SUCCEEDED",
    [MN_EXTRACT_FAILED] = "FAILED",
};

/* A SUCCEEDED event's results: what its add's messages (from_seq .. upto_seq of the scope
 * session) changed, as the synchronous add lists them. */
static mn_status event_results(struct srv_call *c, const mn_extract_job *job, json_t *payload, json_t *out)
{
    struct m0_scope s = {job->ns, json_string_value(json_object_get(payload, "user_id")),
                         json_string_value(json_object_get(payload, "agent_id")),
                         json_string_value(json_object_get(payload, "run_id"))};
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.after_seq = (int64_t)json_integer_value(json_object_get(payload, "from_seq")) - 1;
    ho.limit = job->upto_seq > ho.after_seq ? (size_t)(job->upto_seq - ho.after_seq) : 1; /* seqs are unique */
    ho.all = 1;
    mn_messages *msgs = NULL;
    mn_status st = mn_history(c->db, job->session_id, &ho, &msgs);
    if (st)
        return srv_fail_lib(c, st);
    struct added a;
    added_of(msgs, job->upto_seq, &a);
    st = a.ids ? changed_by(c, job->ns, &s, &a, job->queued_at, out) : srv_fail(c, MN_NOMEM, "out of memory");
    free(a.ids);
    mn_messages_free(msgs);
    return st;
}

/* Mem0's GET /v1/event/{event_id}/: an async add's extraction job, in Mem0's shape. */
mn_status srv_op_mem0_event(struct srv_call *c)
{
    const char *id = param_str(c, "event_id");
    mn_extract_job *job = NULL;
    mn_status st = mn_memory_extract_job(c->db, c->ns, id, &job);
    if (st == MN_INVALID)
        return srv_fail(c, st, "event_id: Invalid event_id '%.60s' (an event id is a UUID)", id);
    if (st == MN_NOTFOUND)
        return srv_fail(c, st, "event %.60s: Event not found or you don't have permission to access it", id);
    if (st)
        return srv_fail_lib(c, st);
    json_t *payload = json_loads(job->data, 0, NULL), *results = json_array();
    if (!json_is_object(payload)) {
        json_decref(payload);
        payload = json_object();
    }
    if (!payload || !results)
        st = srv_fail(c, MN_NOMEM, "out of memory");
    else if (job->state == MN_EXTRACT_DONE)
        st = event_results(c, job, payload, results);
    int64_t end = job->finished_at;
    json_t *o = st ? NULL
                   : json_pack("{s:s,s:s,s:s,s:O,s:n,s:O,s:o,s:o,s:n,s:o,s:o,s:o}", "id", job->id, "event_type", "ADD",
                               "status", status_names[job->state], "payload", payload, "metadata", "results", results,
                               "created_at", m0_iso_time(job->queued_at), "updated_at",
                               m0_iso_time(end ? end : job->queued_at), "started_at", "completed_at",
                               m0_iso_time(end), "latency", end ? json_integer(end - job->queued_at) : json_null(),
                               "error", str_or_null(job->error));
    if (o) { /* mnemo's own: where the job reads from */
        json_object_set_new(json_object_get(o, "payload"), "session_id", json_string(job->session_id));
        json_object_set_new(json_object_get(o, "payload"), "upto_seq", json_integer(job->upto_seq));
    }
    json_decref(payload);
    json_decref(results);
    mn_extract_job_free(job);
    return st ? st : m0_ok(c, o);
}

/* ---- get, update, delete, history ------------------------------------------------------------ */

mn_status srv_op_mem0_get(struct srv_call *c)
{
    mn_memory *m = NULL;
    if (live_memory(c, &m))
        return c->status;
    mn_status st = m0_ok(c, m0_memory(m));
    mn_memory_free(m);
    return st;
}

/* The metadata of an update: Mem0's replaces the old, but the "key" the extractor gave the memory
 * ("my city is …" → "home") stays, or a later statement of it would no longer find the memory
 * and add a second live fact of the same key. Another "key" is refused. *text: caller frees. */
static mn_status update_metadata(struct srv_call *c, const mn_memory *m, json_t *meta, char **text)
{
    *text = NULL;
    if (!meta)
        return MN_OK;
    json_t *old = json_loads(m->metadata ? m->metadata : "{}", 0, NULL);
    json_t *key = json_object_get(old, "key"), *given = json_object_get(meta, "key");
    json_t *merged = json_copy(meta);
    mn_status st = merged ? MN_OK : srv_fail(c, MN_NOMEM, "out of memory");
    if (!st && json_is_string(key) && given && !json_equal(given, key))
        st = srv_fail(c, MN_INVALID, "metadata.key: this memory's is '%.60s', kept for extraction (it finds the "
                                   "memory by it)", json_string_value(key));
    else if (!st && json_is_string(key) && json_object_set(merged, "key", key))
        st = srv_fail(c, MN_NOMEM, "out of memory");
    if (!st && !(*text = json_dumps(merged, JSON_COMPACT)))
        st = srv_fail(c, MN_NOMEM, "out of memory");
    json_decref(merged);
    json_decref(old);
    return st;
}

mn_status srv_op_mem0_update(struct srv_call *c)
{
    mn_memory *m = NULL;
    if (live_memory(c, &m))
        return c->status;
    json_t *meta = json_object_get(c->params, "metadata"), *ts = json_object_get(c->params, "timestamp");
    const char *text = param_str(c, "text");
    mn_status st = MN_OK;
    char *meta_text = NULL;
    if (!text && !meta && !ts)
        st = srv_fail(c, MN_INVALID, "text: give text, metadata or timestamp to change");
    else
        st = update_metadata(c, m, meta, &meta_text);
    mn_memory_in in = MN_MEMORY_IN_INIT;
    in.text = text;
    in.metadata = meta_text;
    in.valid_from = ts ? (int64_t)json_integer_value(ts) * 1000 : 0;
    in.actor = ACTOR;
    in.reason = "updated through the Mem0 API";
    mn_memory *u = NULL;
    if (!st && (st = mn_memory_update(c->db, m->id, &in, &u)))
        srv_fail_lib(c, st);
    free(meta_text);
    if (!st)
        st = m0_ok(c, m0_memory(u));
    mn_memory_free(u);
    mn_memory_free(m);
    return st;
}

/* The session that keeps the messages of memory m's scope (scope_session_id). */
static void memory_scope_session(const mn_memory *m, char out[37])
{
    struct m0_scope s = {m->ns, m->user_id, m->agent_id, m->session_id};
    scope_session_id(m->ns, &s, out);
}

/* Erases the raw messages of scope session sid that no live memory names any more (memory_id:
 * only those it came from; NULL: the whole session). A scope whose session was never made (its
 * memories came through mnemo's own API) has none. The library decides what goes. */
static mn_status erase_scope_sources(struct srv_call *c, const char *sid, const char *memory_id)
{
    mn_status st = mn_memory_erase_sources(c->db, sid, memory_id, NULL);
    return st == MN_NOTFOUND ? MN_OK : st ? srv_fail_lib(c, st) : MN_OK;
}

mn_status m0_delete_memory(struct srv_call *c, const mn_memory *m)
{
    char sid[37];
    memory_scope_session(m, sid);
    mn_status st = mn_memory_delete(c->db, m->id, 0, ACTOR, "deleted through the Mem0 API");
    return st ? srv_fail_lib(c, st) : erase_scope_sources(c, sid, m->id);
}

mn_status srv_op_mem0_delete(struct srv_call *c)
{
    mn_memory *m = NULL;
    if (live_memory(c, &m))
        return c->status;
    mn_status st = m0_delete_memory(c, m);
    mn_memory_free(m);
    return st ? st : m0_ok(c, json_pack("{s:s}", "message", "Memory deleted successfully!"));
}

/* The scope sessions a delete-all empties, each once. */
struct sids {
    char (*id)[37];
    size_t n, cap;
};

static int sids_add(struct sids *l, const char sid[37])
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->id[i], sid) == 0)
            return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char (*p)[37] = realloc(l->id, cap * sizeof *p);
        if (!p)
            return -1;
        l->id = p;
        l->cap = cap;
    }
    memcpy(l->id[l->n++], sid, 37);
    return 0;
}

mn_status m0_delete_scope(struct srv_call *c, const struct m0_scope *s, int64_t *deleted)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    *deleted = 0;
    if (scope_query(c, s, &q))
        return c->status;
    q.limit = 1000;
    /* the sessions that keep the scope's messages: the one `add` with these ids writes to, and
     * each deleted memory's; every memory they were made for is closed now, so they go whole */
    struct sids sessions = {0};
    const char *wns = NULL;
    char sid[37];
    scope_ns(c, s, 1, &wns);
    scope_session_id(wns, s, sid);
    mn_status st = sids_add(&sessions, sid) ? MN_NOMEM : MN_OK;
    for (int round = 0; !st && round < M0_MAX_ROUNDS; round++) {
        mn_memories *l = NULL;
        if ((st = mn_memory_list(c->db, &q, &l)))
            break;
        size_t count = l->count;
        for (size_t i = 0; !st && i < count; i++) {
            const mn_memory *m = mn_memories_at(l, i);
            memory_scope_session(m, sid);
            if (sids_add(&sessions, sid))
                st = MN_NOMEM;
            else
                st = mn_memory_delete(c->db, m->id, 0, ACTOR, "deleted through the Mem0 API");
        }
        *deleted += (int64_t)count;
        mn_memories_free(l);
        if (count < q.limit)
            break;
    }
    if (st)
        srv_fail_lib(c, st);
    for (size_t i = 0; !st && i < sessions.n; i++)
        st = erase_scope_sources(c, sessions.id[i], NULL);
    free(sessions.id);
    return st;
}

mn_status srv_op_mem0_delete_all(struct srv_call *c)
{
    struct m0_scope s;
    int64_t deleted = 0;
    scope_of(c, &s);
    if (!s.app && !s.user && !s.agent && !s.run)
        return srv_fail(c, MN_INVALID, "user_id: give at least one of user_id, agent_id, app_id, run_id");
    if (m0_delete_scope(c, &s, &deleted))
        return c->status;
    return m0_ok(c, json_pack("{s:s,s:I}", "message", "Memories deleted successfully!", "deleted", (json_int_t)deleted));
}

mn_status srv_op_mem0_history(struct srv_call *c)
{
    const char *id = param_str(c, "memory_id");
    mn_memory *cur = NULL;
    mn_status st = path_memory(c, &cur);
    mn_memory_free(cur);
    if (st)
        return st;
    mn_memories *l = NULL;
    if ((st = mn_memory_history(c->db, id, &l)))
        return srv_fail_lib(c, st);
    json_t *out = json_array();
    const char *prev = NULL;
    for (size_t i = 0; out && i < l->count; i++) {
        const mn_memory *m = mn_memories_at(l, i);
        int del = strcmp(m->change, "delete") == 0;
        char hid[80];
        snprintf(hid, sizeof hid, "%s-v%lld", m->id, (long long)m->version);
        json_array_append_new(
            out, json_pack("{s:s,s:s,s:[],s:o,s:o,s:o,s:o,s:[s],s:s,s:o,s:o,s:s,s:o}", "id", hid, "memory_id", m->id,
                           "input", "old_memory", str_or_null(prev), "new_memory", del ? json_null() : json_string(m->text),
                           "user_id", str_or_null(m->user_id), "agent_id", str_or_null(m->agent_id), "categories",
                           m->kind, "event", event_of(m), "created_at", m0_iso_time(m->recorded_at), "updated_at",
                           m0_iso_time(m->recorded_at), "actor", m->actor, "reason", str_or_null(m->reason)));
        prev = m->text;
    }
    mn_memories_free(l);
    return m0_ok(c, out);
}

/* ---- get all, search ------------------------------------------------------------------------- */

/* How many memories q matches (live), counted a page of 1000 at a time. */
static mn_status count_live(struct srv_call *c, mn_memory_query q, int64_t *count)
{
    *count = 0;
    q.limit = 1000;
    for (int round = 0; round < M0_MAX_ROUNDS; round++) {
        q.offset = (size_t)round * q.limit;
        mn_memories *l = NULL;
        mn_status st = mn_memory_list(c->db, &q, &l);
        if (st)
            return srv_fail_lib(c, st);
        size_t n = l->count;
        mn_memories_free(l);
        *count += (int64_t)n;
        if (n < q.limit)
            break;
    }
    return MN_OK;
}

static json_t *page_link(json_int_t page, json_int_t size)
{
    char b[80];
    snprintf(b, sizeof b, "/v3/memories/?page=%lld&page_size=%lld", (long long)page, (long long)size);
    return json_string(b);
}

/* A filter matched here refused past the bound: a partial answer would look whole. */
static mn_status too_wide(struct srv_call *c, const char *what)
{
    return srv_fail(c, MN_INVALID, "filters: a filter with conditions other than equalities is matched over at most "
                                 "%d %s, and there are more: narrow it with an equality on user_id, agent_id, "
                                 "run_id, app_id, categories or a metadata key", M0_MAX_CANDIDATES, what);
}

/* *wider: whether q holds more than M0_MAX_CANDIDATES live memories. */
static mn_status scope_wider(mn_db *db, mn_memory_query q, int *wider)
{
    mn_memories *l = NULL;
    q.offset = M0_MAX_CANDIDATES;
    q.limit = 1;
    mn_status st = mn_memory_list(db, &q, &l);
    *wider = !st && l->count;
    mn_memories_free(l);
    return st;
}

/* The page of the memories of q that match f (which the library cannot apply), and how many
 * match: every memory of q is read, so q may hold at most M0_MAX_CANDIDATES. */
static mn_status list_matching(struct srv_call *c, const struct m0_filter *f, mn_memory_query q, size_t from,
                               size_t size, int64_t *total, json_t *results)
{
    q.limit = M0_MAX_CANDIDATES;
    mn_memories *l = NULL;
    mn_status st = mn_memory_list(c->db, &q, &l);
    int wider = 0;
    if (!st && l->count == q.limit)
        st = scope_wider(c->db, q, &wider);
    if (st || wider) {
        mn_memories_free(l);
        return st ? srv_fail_lib(c, st) : too_wide(c, "memories of the scope its equalities name");
    }
    size_t n = 0;
    for (size_t i = 0; i < l->count; i++) {
        const mn_memory *m = mn_memories_at(l, i);
        if (!m0_filter_match(f, m))
            continue;
        if (n >= from && n - from < size)
            json_array_append_new(results, m0_memory(m));
        n++;
    }
    mn_memories_free(l);
    *total = (int64_t)n;
    return MN_OK;
}

/* The page of the memories of q, and how many there are (the library counts). */
static mn_status list_page(struct srv_call *c, mn_memory_query q, size_t from, size_t size, int64_t *total,
                           json_t *results)
{
    if (count_live(c, q, total))
        return c->status;
    q.limit = size;
    q.offset = from;
    mn_memories *l = NULL;
    mn_status st = mn_memory_list(c->db, &q, &l);
    if (st)
        return srv_fail_lib(c, st);
    for (size_t i = 0; i < l->count; i++)
        json_array_append_new(results, m0_memory(mn_memories_at(l, i)));
    mn_memories_free(l);
    return MN_OK;
}

mn_status srv_op_mem0_list(struct srv_call *c)
{
    struct m0_filter f = {0};
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    json_int_t page = json_integer_value(json_object_get(c->params, "page"));
    json_int_t size = json_integer_value(json_object_get(c->params, "page_size"));
    size_t from = (size_t)((page - 1) * size);
    int64_t total = 0;
    json_t *results = json_array();
    mn_status st = results ? m0_filter_parse(c, json_object_get(c->params, "filters"), &f)
                           : srv_fail(c, MN_NOMEM, "out of memory");
    if (!st) {
        m0_filter_query(c, &f, &q);
        st = f.evaluate ? list_matching(c, &f, q, from, (size_t)size, &total, results)
                        : list_page(c, q, from, (size_t)size, &total, results);
    }
    m0_filter_release(&f);
    if (st) {
        json_decref(results);
        return c->status;
    }
    int more = (int64_t)(page * size) < total;
    return m0_ok(c, json_pack("{s:I,s:o,s:o,s:o}", "count", (json_int_t)total, "next",
                             more ? page_link(page + 1, size) : json_null(), "previous",
                             page > 1 ? page_link(page - 1, size) : json_null(), "results", results));
}

/* With a filter the library cannot apply, the search ranks the scope of its equalities (up to
 * M0_MAX_CANDIDATES hits) and the first top_k hits that match are kept: the ranking is the
 * scope's. Past the bound, fewer than top_k matching hits may not be all of them: refused. */
mn_status srv_op_mem0_search(struct srv_call *c)
{
    struct m0_filter f = {0};
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    if (json_is_true(json_object_get(c->params, "rerank")))
        return srv_fail(c, MN_INVALID, "rerank: mnemo has no reranker (the ranking is BM25, cosine or their fusion)");
    size_t top_k = (size_t)json_integer_value(json_object_get(c->params, "top_k"));
    json_t *th = json_object_get(c->params, "threshold");
    mn_search_mode mode = json_is_true(json_object_get(c->params, "keyword_search")) ? MN_SEARCH_KEYWORD : MN_SEARCH_AUTO;
    mn_memories *l = NULL;
    mn_status st = m0_filter_parse(c, json_object_get(c->params, "filters"), &f);
    if (!st) {
        m0_filter_query(c, &f, &q);
        q.limit = f.evaluate ? M0_MAX_CANDIDATES : top_k;
        if ((st = mn_memory_search(c->db, param_str(c, "query"), mode, &q, &l)))
            srv_fail_lib(c, st);
    }
    json_t *results = st ? NULL : json_array();
    size_t kept = 0;
    for (size_t i = 0; results && i < l->count && kept < top_k; i++) {
        const mn_memory *m = mn_memories_at(l, i);
        if (!m0_filter_match(&f, m))
            continue;
        kept++;
        if (th && m->score < json_number_value(th))
            continue;
        json_t *o = m0_memory(m);
        if (o)
            json_object_set_new(o, "score", json_real(m->score));
        json_array_append_new(results, o);
    }
    int wider = 0;
    if (results && f.evaluate && l->count == M0_MAX_CANDIDATES && kept < top_k) {
        /* the hits are the scope's memories: a scope of at most M0_MAX_CANDIDATES gave them all */
        if ((st = scope_wider(c->db, q, &wider)))
            srv_fail_lib(c, st);
        else if (wider)
            st = too_wide(c, "search hits");
    }
    mn_memories_free(l);
    m0_filter_release(&f);
    if (st) {
        json_decref(results);
        return c->status;
    }
    return m0_ok(c, json_pack("{s:o}", "results", results));
}
