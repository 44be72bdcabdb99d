/*
 * provider.c — chat requests and streamed replies (provider.h).
 */
#include <stdio.h>
#include <string.h>

#include "chat/provider.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

mn_status mn__chat_request_body(const char *protocol, const char *model, const char *messages, char **out)
{
    *out = NULL;
    json_error_t e;
    json_t *msgs = json_loads(messages, 0, &e);
    if (!msgs)
        return mn__err(MN_INTERNAL, "chat: the context is not JSON: %s", e.text);
    json_t *req = json_pack("{s:s, s:o, s:b}", "model", model, "messages", msgs, "stream", 1);
    if (req && strcmp(protocol, "ollama") != 0) /* the usage arrives in a last chunk */
        json_object_set_new(req, "stream_options", json_pack("{s:b}", "include_usage", 1));
    *out = req ? mn__json_dump(req) : NULL;
    json_decref(req);
    return *out ? MN_OK : mn__nomem();
}

void mn__chat_parse_init(struct mn_chat_parse *p, const char *protocol, mn_chat_delta_fn fn, void *user)
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

/* At most cap - 1 bytes of text (len bytes) into out, on one line: control characters become
 * spaces (trailing ones dropped), a UTF-8 character cut at the end is left out. */
static void clip(const char *text, size_t len, char *out, size_t cap)
{
    size_t n = len < cap - 1 ? len : cap - 1;
    if (n < len)
        while (n && ((unsigned char)text[n] & 0xC0) == 0x80) /* text[n] continues a character */
            n--;
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? ' ' : text[i];
    while (n && out[n - 1] == ' ') /* a last newline */
        n--;
    out[n] = '\0';
}

/* A data line the reply cannot be made from: the stream is broken, the transfer stops. */
static int broken(struct mn_chat_parse *p, const char *why, const char *line, size_t len)
{
    char excerpt[81];
    clip(line, len, excerpt, sizeof excerpt);
    snprintf(p->error, sizeof p->error, "the stream is broken: %.140s: %s%s", why, excerpt,
             len >= sizeof excerpt ? "…" : "");
    return p->broken = 1;
}

/* A line of the stream that is not JSON (e says why): the stream is broken there. what names
 * the line: "a data line" (SSE) or "a line" (NDJSON). */
static int not_json(struct mn_chat_parse *p, const char *what, const json_error_t *e, const char *line, size_t len)
{
    if (json_error_code(e) == json_error_null_character)
        return broken(p, "a chunk holds a NUL character (\\u0000), which a reply cannot hold", line, len);
    char why[200];
    snprintf(why, sizeof why, "%s is not JSON (%s)", what, e->text);
    return broken(p, why, line, len);
}

/* An NDJSON object after lines that are not JSON: those lines were not the start of a plain
 * answer spread over lines but part of a stream, broken at its first line. */
static int broken_before(struct mn_chat_parse *p)
{
    const char *first = p->plain.data;
    size_t len = strcspn(first, "\n");
    json_error_t e;
    json_t *o = json_loadb(first, len, 0, &e); /* not JSON: for the reason */
    json_decref(o);
    return not_json(p, "a line", &e, first, len);
}

/* Whether a chunk has the OpenAI shape the reply is read from: an object; "choices", when
 * present, an array of objects whose "delta" (or "message") is an object with a string or null
 * "content". */
static const char *chunk_shape(const json_t *o)
{
    if (!json_is_object(o))
        return "a data line is JSON but not an object";
    json_t *choices = json_object_get(o, "choices");
    if (!choices)
        return NULL;
    if (!json_is_array(choices))
        return "a chunk's choices is not an array";
    size_t i;
    json_t *choice;
    json_array_foreach(choices, i, choice) {
        if (!json_is_object(choice))
            return "a chunk's choice is not an object";
        json_t *delta = json_object_get(choice, "delta");
        if (!delta)
            delta = json_object_get(choice, "message");
        if (delta && !json_is_object(delta))
            return "a chunk's delta is not an object";
        json_t *content = json_object_get(delta, "content");
        if (content && !json_is_string(content) && !json_is_null(content))
            return "a chunk's content is not a string";
    }
    return NULL;
}

static int emit(struct mn_chat_parse *p, const char *text)
{
    if (!text || !*text)
        return 0;
    if (mn__buf_adds(&p->text, text))
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
        if (line[0] == ':' || strncmp(line, "event:", 6) == 0 || strncmp(line, "id:", 3) == 0 ||
            strncmp(line, "retry:", 6) == 0)
            return 0;
        if (mn__buf_add(&p->plain, line, len) || mn__buf_addc(&p->plain, '\n'))
            return p->stop = 1;
        return 0;
    }
    json_error_t e;
    json_t *o = json_loadb(line, len, 0, &e);
    if (!o && !p->ollama) /* an SSE data line */
        return not_json(p, "a data line", &e, line, len);
    if (!o && p->objects) /* an NDJSON line once the stream has begun: broken, as an SSE data line */
        return not_json(p, "a line", &e, line, len);
    if (!o) { /* before any NDJSON object: part of a plain JSON answer, else finish says what it is */
        if (mn__buf_add(&p->plain, line, len) || mn__buf_addc(&p->plain, '\n'))
            return p->stop = 1;
        return 0;
    }
    if (p->ollama && p->plain.len) {
        json_decref(o);
        return broken_before(p);
    }
    p->objects++;
    const char *bad = p->ollama ? (json_is_object(o) ? NULL : "a line is JSON but not an object") : chunk_shape(o);
    if (bad) {
        json_decref(o);
        return broken(p, bad, line, len);
    }
    int r = object(p, o);
    json_decref(o);
    return r;
}

int mn__chat_parse_feed(struct mn_chat_parse *p, const char *data, size_t len)
{
    for (size_t i = 0; i < len && !p->stop && !p->broken; i++) {
        if (data[i] != '\n') {
            if (mn__buf_addc(&p->line, data[i]))
                return p->stop = 1;
            continue;
        }
        one_line(p, p->line.data, p->line.len);
        mn__buf_reset(&p->line);
    }
    return p->stop || p->broken;
}

mn_status mn__chat_parse_finish(struct mn_chat_parse *p)
{
    if (p->line.len && !p->broken) {
        one_line(p, p->line.data, p->line.len);
        mn__buf_reset(&p->line);
    }
    if (p->broken)
        return mn__err(MN_UNAVAILABLE, "chat: %s", p->error);
    if (p->plain.len && !p->stop) {
        json_t *o = json_loadb(p->plain.data, p->plain.len, 0, NULL);
        if (o && !chunk_shape(o)) {
            object(p, o);
            p->done = 1;
        } else { /* even after streamed text: lines that are not events break the reply */
            char excerpt[121];
            clip(p->plain.data, p->plain.len, excerpt, sizeof excerpt);
            json_decref(o);
            return mn__err(MN_UNAVAILABLE, "chat: the provider's answer is neither a stream nor JSON: %s%s", excerpt,
                           p->plain.len >= sizeof excerpt ? "…" : "");
        }
        json_decref(o);
    }
    if (p->error[0])
        return mn__err(MN_UNAVAILABLE, "chat: the provider reported: %s", p->error);
    return MN_OK;
}

void mn__chat_parse_release(struct mn_chat_parse *p)
{
    mn__buf_release(&p->line);
    mn__buf_release(&p->plain);
    mn__buf_release(&p->text);
}

void mn__chat_error_text(const char *body, char *out, size_t cap)
{
    json_t *o = body ? json_loads(body, 0, NULL) : NULL;
    json_t *err = json_object_get(o, "error");
    const char *msg = json_string_value(json_is_object(err) ? json_object_get(err, "message") : err);
    const char *text = msg ? msg : body ? body : "";
    size_t len = strlen(text);
    clip(text, msg || len < 200 ? len : 200, out, cap);
    json_decref(o);
}
