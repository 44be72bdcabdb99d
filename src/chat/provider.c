/*
 * provider.c — chat requests and streamed replies (provider.h).
 */
#include <stdio.h>
#include <string.h>

#include "chat/provider.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

mn_status mn_chat_request_body(const char *protocol, const char *model, const char *messages, char **out)
{
    *out = NULL;
    json_error_t e;
    json_t *msgs = json_loads(messages, 0, &e);
    if (!msgs)
        return mn__err(MN_INTERNAL, "chat: the context is not JSON: %s", e.text);
    json_t *req = json_pack("{s:s, s:o, s:b}", "model", model, "messages", msgs, "stream", 1);
    if (req && strcmp(protocol, "ollama") != 0) /* the usage arrives in a last chunk */
        json_object_set_new(req, "stream_options", json_pack("{s:b}", "include_usage", 1));
    *out = req ? mn_json_dump(req) : NULL;
    json_decref(req);
    return *out ? MN_OK : mn__nomem();
}

void mn_chat_parse_init(struct mn_chat_parse *p, const char *protocol, mn_chat_delta_fn fn, void *user)
{
    memset(p, 0, sizeof *p);
    p->ollama = strcmp(protocol, "ollama") == 0;
    p->fn = fn;
    p->user = user;
    p->line = (struct mn_buf)MN_BUF_INIT;
    p->plain = (struct mn_buf)MN_BUF_INIT;
    p->text = (struct mn_buf)MN_BUF_INIT;
    p->prompt_tokens = p->completion_tokens = p->cached_tokens = -1;
}

static int emit(struct mn_chat_parse *p, const char *text)
{
    if (!text || !*text)
        return 0;
    if (mn_buf_adds(&p->text, text))
        return p->stop = 1;
    if (p->fn(p->user, text, strlen(text)))
        return p->stop = 1;
    return 0;
}

static void take_usage(struct mn_chat_parse *p, json_t *o)
{
    json_t *u = json_object_get(o, "usage");
    if (json_is_object(u)) { /* OpenAI */
        json_t *v;
        if (json_is_integer(v = json_object_get(u, "prompt_tokens")))
            p->prompt_tokens = json_integer_value(v);
        if (json_is_integer(v = json_object_get(u, "completion_tokens")))
            p->completion_tokens = json_integer_value(v);
        if (json_is_integer(v = json_object_get(json_object_get(u, "prompt_tokens_details"), "cached_tokens")))
            p->cached_tokens = json_integer_value(v);
    }
    json_t *v; /* Ollama */
    if (json_is_integer(v = json_object_get(o, "prompt_eval_count")))
        p->prompt_tokens = json_integer_value(v);
    if (json_is_integer(v = json_object_get(o, "eval_count")))
        p->completion_tokens = json_integer_value(v);
}

static void take_error(struct mn_chat_parse *p, json_t *o)
{
    json_t *err = json_object_get(o, "error");
    if (!err)
        return;
    const char *msg = json_string_value(json_is_object(err) ? json_object_get(err, "message") : err);
    snprintf(p->error, sizeof p->error, "%s", msg ? msg : "the provider reported an error");
}

/* One JSON object of any shape: a streamed chunk, an NDJSON line or a whole completion. */
static int object(struct mn_chat_parse *p, json_t *o)
{
    take_error(p, o);
    take_usage(p, o);
    if (p->ollama) {
        if (json_is_true(json_object_get(o, "done")))
            p->done = 1;
        return emit(p, json_string_value(json_object_get(json_object_get(o, "message"), "content")));
    }
    json_t *choice = json_array_get(json_object_get(o, "choices"), 0);
    json_t *delta = json_object_get(choice, "delta");
    if (!delta)
        delta = json_object_get(choice, "message"); /* not streamed */
    return emit(p, json_string_value(json_object_get(delta, "content")));
}

static int one_line(struct mn_chat_parse *p, const char *line, size_t len)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (len == 0)
        return 0;
    if (!p->ollama && len >= 5 && strncmp(line, "data:", 5) == 0) {
        line += 5, len -= 5;
        while (len && *line == ' ')
            line++, len--;
        if (len == 6 && strncmp(line, "[DONE]", 6) == 0) {
            p->done = 1;
            return 0;
        }
    } else if (!p->ollama) { /* not an event: part of a plain JSON answer, or an SSE comment/field */
        if (line[0] == ':' || strncmp(line, "event:", 6) == 0 || strncmp(line, "id:", 3) == 0)
            return 0;
        if (mn_buf_add(&p->plain, line, len) || mn_buf_addc(&p->plain, '\n'))
            return p->stop = 1;
        return 0;
    }
    json_t *o = json_loadb(line, len, 0, NULL);
    if (!o) {
        if (p->ollama && (mn_buf_add(&p->plain, line, len) || mn_buf_addc(&p->plain, '\n')))
            return p->stop = 1;
        return 0;
    }
    int r = object(p, o);
    json_decref(o);
    return r;
}

int mn_chat_parse_feed(struct mn_chat_parse *p, const char *data, size_t len)
{
    for (size_t i = 0; i < len && !p->stop; i++) {
        if (data[i] != '\n') {
            if (mn_buf_addc(&p->line, data[i]))
                return p->stop = 1;
            continue;
        }
        one_line(p, p->line.data, p->line.len);
        mn_buf_reset(&p->line);
    }
    return p->stop;
}

mn_status mn_chat_parse_finish(struct mn_chat_parse *p)
{
    if (p->line.len) {
        one_line(p, p->line.data, p->line.len);
        mn_buf_reset(&p->line);
    }
    if (p->plain.len && !p->stop) {
        json_t *o = json_loadb(p->plain.data, p->plain.len, 0, NULL);
        if (o) {
            object(p, o);
            p->done = 1;
            json_decref(o);
        } else if (!p->text.len)
            return mn__err(MN_UNAVAILABLE, "chat: the provider's answer is neither a stream nor JSON: %.120s",
                           p->plain.data);
    }
    if (p->error[0])
        return mn__err(MN_UNAVAILABLE, "chat: the provider reported: %s", p->error);
    return MN_OK;
}

void mn_chat_parse_release(struct mn_chat_parse *p)
{
    mn_buf_release(&p->line);
    mn_buf_release(&p->plain);
    mn_buf_release(&p->text);
}

void mn_chat_error_text(const char *body, char *out, size_t cap)
{
    json_t *o = body ? json_loads(body, 0, NULL) : NULL;
    json_t *err = json_object_get(o, "error");
    const char *msg = json_string_value(json_is_object(err) ? json_object_get(err, "message") : err);
    if (msg)
        snprintf(out, cap, "%s", msg);
    else
        snprintf(out, cap, "%.200s", body ? body : "");
    for (char *c = out; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    json_decref(o);
}
