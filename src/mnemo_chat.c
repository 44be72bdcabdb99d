/*
 * mnemo_chat.c — one chat turn against a model with mnemo as its memory (mnemo.h "Chat"): the
 * session's context exactly as mn_context_build renders it (OpenAI messages), sent to the
 * configured provider with streaming, the reply handed over piece by piece and stored only when
 * it is whole; the usage the provider reports is kept on the reply and summed in the session's
 * metadata ("chat" member).
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "chat/provider.h"
#include "http/stream.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

struct settings {
    const char *model, *protocol, *base_url, *key;
    int64_t timeout_ms;
};

/* The chat model and its server (docs/chat.md "The model"): chat.model, else summarizer.model;
 * the server is chat.* when chat.base_url is set, else summarizer.* as a whole, so that a protocol
 * or key variable of one server never goes to the other's URL. */
static mn_status settings(mn_db *db, const mn_chat_opts *o, struct settings *s)
{
    const struct mn_settings *c = &db->settings;
    s->model = o && o->model && *o->model ? o->model : c->chat_model;
    if (!*s->model)
        s->model = c->summarizer_model;
    int own = *c->chat_base_url != '\0';
    s->protocol = own ? c->chat_protocol : c->summarizer_protocol;
    s->base_url = own ? c->chat_base_url : c->summarizer_base_url;
    const char *key_env = own ? c->chat_api_key_env : c->summarizer_api_key_env;
    s->key = *key_env ? getenv(key_env) : NULL;
    s->timeout_ms = own ? c->chat_timeout_ms : c->summarizer_timeout_ms;
    if (!*s->model && !*s->base_url)
        return mn__err(MN_UNAVAILABLE, "no chat model: set chat.model (MNEMO_CHAT_MODEL) and chat.base_url"
                                       " (MNEMO_CHAT_BASE_URL), with chat.protocol openai or ollama");
    if (!*s->model)
        return mn__err(MN_UNAVAILABLE, "no chat model: set chat.model (MNEMO_CHAT_MODEL) or summarizer.model");
    if (!*s->base_url)
        return mn__err(MN_UNAVAILABLE, "no chat server: set chat.base_url (MNEMO_CHAT_BASE_URL), e.g."
                                       " http://localhost:11434 with chat.protocol ollama");
    return MN_OK;
}

mn_status mn_chat_ready(mn_db *db, const char **model)
{
    if (model)
        *model = NULL;
    mn_status rc = mn__check_db(db);
    if (rc)
        return rc;
    struct settings s;
    if ((rc = settings(db, NULL, &s)))
        return rc;
    if (model)
        *model = s.model;
    return MN_OK;
}

static mn_status url_for(const struct settings *s, struct mn_buf *url)
{
    size_t len = strlen(s->base_url);
    while (len && s->base_url[len - 1] == '/')
        len--;
    mn_status rc = mn__buf_add(url, s->base_url, len);
    if (rc)
        return rc;
    if (strcmp(s->protocol, "ollama") == 0)
        return mn__buf_adds(url, "/api/chat");
    if (len >= 3 && strncmp(s->base_url + len - 3, "/v1", 3) == 0)
        return mn__buf_adds(url, "/chat/completions");
    return mn__buf_adds(url, "/v1/chat/completions");
}

struct turn {
    struct mn_chat_parse parse;
    mn_chat_stream_fn fn;
    void *user;
};

static int on_delta(void *user, const char *text, size_t len)
{
    struct turn *t = user;
    return t->fn ? t->fn(t->user, text, len) : 0;
}

static int on_chunk(void *user, const char *data, size_t len)
{
    struct turn *t = user;
    if (len == 0) /* a tick: may the transfer go on? */
        return t->fn ? t->fn(t->user, "", 0) : 0;
    return mn__chat_parse_feed(&t->parse, data, len);
}

/* {"prompt_tokens","completion_tokens","cached_tokens"} with the values the provider reported. */
static json_t *usage_json(const mn_chat_result *r)
{
    json_t *u = json_object();
    if (u && r->prompt_tokens >= 0)
        json_object_set_new(u, "prompt_tokens", json_integer(r->prompt_tokens));
    if (u && r->completion_tokens >= 0)
        json_object_set_new(u, "completion_tokens", json_integer(r->completion_tokens));
    if (u && r->cached_tokens >= 0)
        json_object_set_new(u, "cached_tokens", json_integer(r->cached_tokens));
    return u;
}

static int64_t add_to(json_t *o, const char *key, int64_t v)
{
    int64_t sum = json_integer_value(json_object_get(o, key)) + (v > 0 ? v : 0);
    json_object_set_new(o, key, json_integer(sum));
    return sum;
}

/* Adds this turn's usage to the session metadata's "chat" member. */
static mn_status add_usage(mn_db *db, const char *id, mn_chat_result *r)
{
    mn_session *s = NULL;
    mn_status rc = mn__live_session(db, id, &s); /* id: canonical (mn_chat_reply) */
    if (rc)
        return rc;
    json_t *meta = json_loads(s->metadata, 0, NULL);
    mn__free_session(s);
    if (!json_is_object(meta)) {
        json_decref(meta);
        meta = json_object();
    }
    json_t *chat = json_object_get(meta, "chat");
    if (!json_is_object(chat)) {
        chat = json_object();
        json_object_set_new(meta, "chat", chat);
    }
    r->session_turns = add_to(chat, "turns", 1);
    r->session_prompt_tokens = add_to(chat, "prompt_tokens", r->prompt_tokens);
    r->session_completion_tokens = add_to(chat, "completion_tokens", r->completion_tokens);
    r->session_cached_tokens = add_to(chat, "cached_tokens", r->cached_tokens);
    char *text = mn__json_dump(meta);
    json_decref(meta);
    rc = text ? mn__update_session(db, id, NULL, text) : mn__nomem();
    free(text);
    return rc;
}

static mn_status store_reply(mn_db *db, const char *id, const char *model, mn_chat_result *r, const char *text)
{
    json_t *meta = json_pack("{s:o, s:I}", "usage", usage_json(r), "context_tokens", (json_int_t)r->context_tokens);
    char *meta_text = meta ? mn__json_dump(meta) : NULL;
    json_decref(meta);
    if (!meta_text)
        return mn__nomem();
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_ASSISTANT;
    m.content = text;
    m.model = model;
    m.metadata = meta_text;
    mn_status rc = mn_append(db, id, &m, 0, &r->reply);
    free(meta_text);
    return rc ? rc : add_usage(db, id, r);
}

mn_status mn_chat_reply(mn_db *db, const char *session_id, const mn_chat_opts *opts, mn_chat_stream_fn fn, void *user,
                        mn_chat_result **out)
{
    if (out)
        *out = NULL;
    char id[MN_UUID_LEN + 1];
    mn_status rc = mn__check_db(db);
    if (rc || (rc = mn__session_ref(db, NULL, session_id, id)))
        return rc;
    if (!out)
        return mn__err(MN_MISUSE, "mn_chat_reply: out is NULL");
    mn_chat_opts loaded = MN_CHAT_OPTS_INIT;
    if (opts && (rc = MN__ABI_LOAD(mn_chat_opts, &loaded, opts, model)))
        return rc;
    if (opts)
        opts = &loaded;
    struct settings st;
    if ((rc = settings(db, opts, &st)))
        return rc;
    mn_chat_result *r = calloc(1, sizeof *r);
    if (!r)
        return mn__nomem();
    r->prompt_tokens = r->completion_tokens = r->cached_tokens = -1;
    mn_context_opts co = MN_CONTEXT_OPTS_INIT;
    if (opts && opts->context && (rc = MN__ABI_LOAD(mn_context_opts, &co, opts->context, format))) {
        free(r);
        return rc;
    }
    co.size = sizeof co;
    co.format = MN_FORMAT_OPENAI;
    mn_context *ctx = NULL;
    struct mn_buf url = MN_BUF_INIT;
    char *body = NULL, *err_body = NULL;
    struct turn t;
    mn__chat_parse_init(&t.parse, st.protocol, on_delta, NULL);
    t.fn = fn;
    t.user = user;
    t.parse.user = &t;
    if ((rc = mn__context_for(db, id, &co, &ctx)))
        goto out;
    r->context_tokens = ctx->tokens;
    if (!(r->report = strdup(ctx->report)) || !(r->model = strdup(st.model))) {
        rc = mn__nomem();
        goto out;
    }
    if ((rc = url_for(&st, &url)) || (rc = mn__chat_request_body(st.protocol, st.model, ctx->rendered, &body)))
        goto out;
    mn_http_req hr = {url.data, body, st.key, st.timeout_ms > 0 ? st.timeout_ms : 30000, 0, 0};
    long status = 0;
    int stopped = 0;
    if ((rc = mn__http_post_stream(&hr, on_chunk, &t, &status, &err_body, &stopped))) {
        rc = mn__err(rc, "chat: %s", mn_errmsg());
        goto out;
    }
    if (t.parse.broken) { /* a chunk the reply cannot be made from: an error, nothing stored */
        rc = mn__chat_parse_finish(&t.parse);
        goto out;
    }
    if (stopped && !t.parse.stop) { /* stopped between chunks: nothing more to parse */
        r->interrupted = 1;
        goto out;
    }
    if (t.parse.stop) {
        r->interrupted = 1; /* the caller stopped the reply: nothing is stored */
        goto out;
    }
    if (status != 200) {
        char msg[256];
        mn__chat_error_text(err_body, msg, sizeof msg);
        rc = mn__err(MN_UNAVAILABLE, "chat: HTTP %ld from %s: %s", status, url.data, msg);
        goto out;
    }
    if ((rc = mn__chat_parse_finish(&t.parse)))
        goto out;
    r->prompt_tokens = t.parse.prompt_tokens;
    r->completion_tokens = t.parse.completion_tokens;
    r->cached_tokens = t.parse.cached_tokens;
    if (!t.parse.text.len) {
        rc = mn__err(MN_UNAVAILABLE, "chat: %s answered with an empty reply", url.data);
        goto out;
    }
    rc = store_reply(db, id, st.model, r, t.parse.text.data);
out:
    mn__chat_parse_release(&t.parse);
    mn__free_context(ctx);
    mn__buf_release(&url);
    free(body);
    free(err_body);
    if (rc) {
        mn_chat_result_free(r);
        return rc;
    }
    *out = r;
    return MN_OK;
}

void mn_chat_result_free(mn_chat_result *r)
{
    if (!r)
        return;
    mn__free_message(r->reply);
    free(r->report);
    free(r->model);
    free(r);
}
