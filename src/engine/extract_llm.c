/*
 * extract_llm.c — the `llm` memory extractor (docs/memory.md "Extraction"). Two prompts
 * to the summarizer.* chat endpoint: the new turns → candidate facts (strict JSON), then per
 * candidate, with the most similar live memories of exactly the session's scope → one decision:
 * add, update, invalidate or nothing (strict JSON). Every answer is validated before anything is
 * written; a malformed one changes nothing and is logged as a session event
 * ("memory_extract_rejected").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "config/config.h"
#include "http/http.h"
#include "memory/extract.h"
#include "memory/fact.h"
#include "summarize/summarize.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define MAX_CANDIDATES 20
#define SIMILAR 5

static const char SYSTEM[] =
    "You maintain an assistant's long-term memory. Answer with one JSON object and nothing else.";
static const char CANDIDATES[] =
    "MNEMO_MEMORY_CANDIDATES\n"
    "List the durable facts, preferences, instructions and events about the user or the project stated in these"
    " turns, as {\"facts\":[{\"text\":\"short self-contained sentence\",\"kind\":\"fact|preference|instruction|"
    "event\",\"sources\":[message ids]}]}. Only what was said, never guesses; {\"facts\":[]} when there is none.\n";
static const char DECIDE[] =
    "MNEMO_MEMORY_DECIDE\n"; /* followed by {"candidate":…,"existing":[…]} and the instructions inside it */
static const char DECIDE_RULES[] =
    "Decide what to do with the candidate given the existing memories: {\"action\":\"add\",\"text\":…} for a new"
    " fact, {\"action\":\"update\",\"id\":…,\"text\":…} when it changes an existing one, {\"action\":"
    "\"invalidate\",\"id\":…} when it says an existing one is no longer true, {\"action\":\"nothing\"} when it is"
    " already known. An optional \"reason\" says why.";

/* One chat call; *text is the reply (caller frees). */
static mn_status chat(mn_db *db, const char *prompt, char **text)
{
    *text = NULL;
    const char *base = mn__config_str(db->cfg, "summarizer.base_url"), *model = mn__config_str(db->cfg, "summarizer.model");
    const char *protocol = mn__config_str(db->cfg, "summarizer.protocol");
    if (!*base || !*model)
        return mn__err(MN_UNAVAILABLE, "extractor llm: summarizer.base_url and summarizer.model must be set");
    const char *key_env = mn__config_str(db->cfg, "summarizer.api_key_env");
    const char *key = key_env && *key_env ? getenv(key_env) : NULL;
    int ollama = strcmp(protocol, "ollama") == 0;
    struct mn_buf url = MN_BUF_INIT;
    size_t blen = strlen(base);
    mn_status rc = mn__buf_add(&url, base, blen && base[blen - 1] == '/' ? blen - 1 : blen);
    if (!rc)
        rc = mn__buf_adds(&url, ollama ? "/api/chat" : "/v1/chat/completions");
    json_t *req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:b}", "model", model, "messages", "role", "system",
                            "content", SYSTEM, "role", "user", "content", prompt, "stream", 0);
    char *body = req ? mn__json_dump(req) : NULL;
    json_decref(req);
    if (!rc && !body)
        rc = mn__nomem();
    mn_http_resp resp;
    memset(&resp, 0, sizeof resp);
    if (!rc) {
        mn_http_req hr = {url.data, body, key && *key ? key : NULL, mn__config_int(db->cfg, "summarizer.timeout_ms"),
                          (int)mn__config_int(db->cfg, "summarizer.retries"),
                          mn__config_int(db->cfg, "summarizer.backoff_ms")};
        rc = mn__http_post_json(&hr, &resp);
    }
    if (!rc && resp.status != 200)
        rc = mn__err(MN_UNAVAILABLE, "extractor llm: HTTP %ld from %s", resp.status, url.data);
    int64_t p, q;
    if (!rc)
        rc = mn__summarize_parse_response(protocol, resp.body, resp.len, text, &p, &q);
    mn__http_resp_release(&resp);
    free(body);
    mn__buf_release(&url);
    return rc;
}

/* Logs a rejected answer as an event of the session. */
static void rejected(mn_db *db, const char *sid, const char *stage, const char *why, const char *answer)
{
    json_t *o = json_pack("{s:s, s:s, s:s%}", "stage", stage, "error", why, "answer", answer ? answer : "",
                          answer ? strlen(answer) < 500 ? strlen(answer) : 500 : 0);
    char *data = o ? mn__json_dump(o) : NULL;
    json_decref(o);
    if (data)
        db->store->ops->event_insert(db->store, sid, "memory_extract_rejected", data, mn__clock_now_ms());
    free(data);
    mn__log(MN_LOG_WARN, "memory extraction: %s answer rejected: %s", stage, why);
}

/* Parses a reply that must be exactly one JSON object. */
static json_t *strict_object(const char *text, const char **why)
{
    json_error_t e;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &e);
    if (!o || !json_is_object(o)) {
        json_decref(o);
        *why = "not one JSON object";
        return NULL;
    }
    return o;
}

static const char *check_text(json_t *t)
{
    if (!json_is_string(t) || json_string_length(t) == 0)
        return "text: must be a non-empty string";
    if (json_string_length(t) > MN_MEMORY_MAX_TEXT)
        return "text: too long";
    return NULL;
}

/* Validates {"facts":[{"text","kind","sources"}…]}; why is set when it is not that. */
static const char *check_candidates(json_t *o, const mn_messages *msgs)
{
    json_t *facts = json_object_get(o, "facts");
    if (!json_is_array(facts) || json_object_size(o) != 1)
        return "expected {\"facts\": [...]} and nothing else";
    if (json_array_size(facts) > MAX_CANDIDATES)
        return "too many facts";
    size_t i;
    json_t *f;
    json_array_foreach(facts, i, f) {
        const char *why = json_is_object(f) ? check_text(json_object_get(f, "text")) : "a fact must be an object";
        if (why)
            return why;
        json_t *k = json_object_get(f, "kind");
        if (!json_is_string(k) || mn__fact_check_kind(json_string_value(k)) != MN_OK)
            return "kind: must be an a-z_ word";
        json_t *src = json_object_get(f, "sources");
        if (src && !json_is_array(src))
            return "sources: must be an array";
        size_t j;
        json_t *id;
        json_array_foreach(src, j, id) {
            int known = 0;
            for (size_t m = 0; json_is_integer(id) && m < msgs->count && !known; m++)
                known = msgs->items[m].id == json_integer_value(id);
            if (!known)
                return "sources: not one of the turns' message ids";
        }
    }
    return NULL;
}

struct decision {
    const char *action, *id, *text, *reason;
};

static const char *check_decision(json_t *o, const mn_memories *existing, struct decision *d)
{
    d->action = json_string_value(json_object_get(o, "action"));
    d->id = json_string_value(json_object_get(o, "id"));
    d->text = json_string_value(json_object_get(o, "text"));
    d->reason = json_string_value(json_object_get(o, "reason"));
    if (!d->action)
        return "action: required";
    int add = !strcmp(d->action, "add"), upd = !strcmp(d->action, "update"), inv = !strcmp(d->action, "invalidate");
    if (!add && !upd && !inv && strcmp(d->action, "nothing") != 0)
        return "action: not one of add, update, invalidate, nothing";
    if ((add || upd) && check_text(json_object_get(o, "text")))
        return check_text(json_object_get(o, "text"));
    if (upd || inv) {
        int offered = 0;
        for (size_t i = 0; d->id && i < existing->count && !offered; i++)
            offered = strcmp(existing->items[i].id, d->id) == 0;
        if (!offered)
            return "id: not one of the existing memories offered";
    }
    return NULL;
}

/* Keeps the first SIMILAR memories of exactly the scope in l; the number of memories it had. */
static size_t keep_in_scope(const struct mn_extract_scope *sc, mn_memories *l)
{
    size_t had = l->count, kept = 0;
    for (size_t i = 0; i < had; i++) {
        if (kept < SIMILAR &&
            mn__extract_in_scope(&l->items[i], sc->ns, sc->user_id, sc->agent_id, sc->session_id))
            l->items[kept++] = l->items[i];
        else
            mn__fact_release(&l->items[i]);
    }
    l->count = kept;
    return had;
}

/* The most similar live memories of exactly the scope to the candidate. The search leaves an
 * unset id unfiltered ("any"), so it is asked for 4 times more hits until SIMILAR of the scope's
 * own are among them or there are no more: another user's memory is never offered (an update or
 * invalidation could only name what was offered). */
static mn_status similar(mn_db *db, const struct mn_extract_scope *sc, const char *text, mn_memories **out)
{
    *out = NULL;
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    q.ns = sc->ns;
    q.user_id = sc->user_id;
    q.agent_id = sc->agent_id;
    q.session_id = sc->session_id;
    for (q.limit = SIMILAR * 4;; q.limit = q.limit * 4 < MN_FACT_MAX_LIMIT ? q.limit * 4 : MN_FACT_MAX_LIMIT) {
        mn__memories_list_free(*out);
        *out = NULL;
        mn_status rc = mn__search_memories(db, text, MN_SEARCH_AUTO, &q, out);
        if (rc)
            return rc;
        size_t had = keep_in_scope(sc, *out);
        if ((*out)->count == SIMILAR || had < q.limit || q.limit == MN_FACT_MAX_LIMIT)
            return MN_OK;
    }
}

static mn_status decide(mn_db *db, const mn_session *s, const struct mn_extract_scope *sc, json_t *fact,
                        mn_extract_stats *st, int *malformed)
{
    const char *text = json_string_value(json_object_get(fact, "text"));
    const char *kind = json_string_value(json_object_get(fact, "kind"));
    mn_memories *ex = NULL;
    mn_status rc = similar(db, sc, text, &ex);
    if (rc)
        return rc;
    for (size_t i = 0; i < ex->count; i++)
        if (strcmp(ex->items[i].text, text) == 0) { /* already known, word for word: no need to ask */
            st->unchanged++;
            mn__memories_list_free(ex);
            return MN_OK;
        }
    json_t *list = json_array(), *req = NULL;
    for (size_t i = 0; list && i < ex->count; i++)
        json_array_append_new(list, json_pack("{s:s, s:s, s:s}", "id", ex->items[i].id, "text", ex->items[i].text,
                                              "kind", ex->items[i].kind));
    req = list ? json_pack("{s:O, s:o, s:s}", "candidate", fact, "existing", list, "rules", DECIDE_RULES) : NULL;
    char *req_text = req ? mn__json_dump(req) : NULL;
    json_decref(req);
    struct mn_buf prompt = MN_BUF_INIT;
    rc = req_text ? mn__buf_adds(&prompt, DECIDE) : mn__nomem();
    if (!rc)
        rc = mn__buf_adds(&prompt, req_text);
    free(req_text);
    char *answer = NULL;
    if (!rc)
        rc = chat(db, prompt.data, &answer);
    mn__buf_release(&prompt);
    const char *why = NULL;
    json_t *o = rc ? NULL : strict_object(answer, &why);
    struct decision d = {0};
    if (o && !(why = check_decision(o, ex, &d))) {
        json_t *src = json_object_get(fact, "sources");
        int64_t ids[MAX_CANDIDATES * 4];
        size_t n = 0, j;
        json_t *id;
        json_array_foreach(src, j, id) if (n < sizeof ids / sizeof ids[0]) ids[n++] = json_integer_value(id);
        mn_memory_in in = MN_MEMORY_IN_INIT;
        in.text = d.text;
        in.sources = n ? ids : NULL;
        in.n_sources = n;
        in.actor = "extractor:llm";
        in.reason = d.reason;
        if (!strcmp(d.action, "add")) {
            in.kind = kind;
            in.ns = sc->ns;
            in.user_id = sc->user_id;
            in.agent_id = sc->agent_id;
            in.session_id = sc->session_id;
            in.pinned = 0;
            in.token_cap = 0;
            rc = mn__add_memory(db, &in, NULL);
            st->added += rc == MN_OK;
        } else if (!strcmp(d.action, "update")) {
            rc = mn__update_memory(db, d.id, &in, NULL);
            st->updated += rc == MN_OK;
        } else if (!strcmp(d.action, "invalidate")) {
            rc = mn__delete_memory(db, d.id, 0, "extractor:llm", d.reason ? d.reason : "no longer true");
            st->invalidated += rc == MN_OK;
        } else {
            st->unchanged++;
        }
    } else if (!rc) {
        rejected(db, s->id, "decision", why, answer);
        st->rejected++;
        *malformed = 1;
    }
    json_decref(o);
    free(answer);
    mn__memories_list_free(ex);
    return rc;
}

mn_status mn__memory_extract_llm(mn_db *db, const mn_session *s, const struct mn_extract_scope *sc,
                                 const mn_messages *msgs, mn_extract_stats *st, int *malformed)
{
    struct mn_buf prompt = MN_BUF_INIT;
    mn_status rc = mn__buf_adds(&prompt, CANDIDATES);
    for (size_t i = 0; !rc && i < msgs->count; i++) {
        const mn_message *m = &msgs->items[i];
        if ((m->role != MN_ROLE_USER && m->role != MN_ROLE_ASSISTANT) || !m->content)
            continue;
        st->messages += m->role == MN_ROLE_USER;
        rc = mn__buf_addf(&prompt, "[%lld] %s: ", (long long)m->id, mn_role_name(m->role));
        for (const char *c = m->content; !rc && *c; c++) /* one line per turn */
            rc = mn__buf_addc(&prompt, *c == '\n' ? ' ' : *c);
        if (!rc)
            rc = mn__buf_addc(&prompt, '\n');
    }
    char *answer = NULL;
    if (!rc && st->messages)
        rc = chat(db, prompt.data, &answer);
    mn__buf_release(&prompt);
    if (rc || !answer)
        return rc;
    const char *why = NULL;
    json_t *o = strict_object(answer, &why);
    if (o)
        why = check_candidates(o, msgs);
    if (why) {
        rejected(db, s->id, "candidates", why, answer);
        st->rejected++;
        *malformed = 1;
    } else {
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(o, "facts"), i, f) {
            st->candidates++;
            if ((rc = decide(db, s, sc, f, st, malformed)))
                break;
        }
    }
    json_decref(o);
    free(answer);
    return rc;
}
