/*
 * provider.h — the chat side of a model provider: the streamed request body for an
 * OpenAI-compatible /v1/chat/completions ("stream": true, usage included) or Ollama's /api/chat
 * (NDJSON), and an incremental parser of what comes back — SSE events, NDJSON lines, or one
 * plain JSON completion from a server that does not stream — into text deltas and usage.
 */
#ifndef MN_CHAT_PROVIDER_H
#define MN_CHAT_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "util/buf.h"

/* The request body (malloc'd) for `messages` (an OpenAI chat messages JSON array). */
mn_status mn__chat_request_body(const char *protocol, const char *model, const char *messages, char **out);

typedef int (*mn_chat_delta_fn)(void *user, const char *text, size_t len);

struct mn_chat_parse {
    int ollama;
    mn_chat_delta_fn fn; /* gets each piece of reply text; non-zero stops */
    void *user;
    struct mn_buf line;  /* the incomplete line */
    struct mn_buf plain; /* lines that are not SSE events (a non-streamed answer) */
    struct mn_buf text;  /* the whole reply so far */
    int64_t prompt_tokens, completion_tokens, cached_tokens; /* -1: not reported */
    int done;            /* [DONE] or "done": true seen */
    int objects;         /* JSON lines read: from the first one on, a line that is not JSON breaks the stream */
    char error[256];     /* an error the stream carried, or why it is broken */
    int stop;            /* fn asked to stop */
    int broken;          /* a data line that is not JSON or not a chunk: the reply is lost */
};

void mn__chat_parse_init(struct mn_chat_parse *p, const char *protocol, mn_chat_delta_fn fn, void *user);
/* Feeds bytes; returns non-zero when the caller should stop (fn said so, out of memory, or the
 * stream is broken — an SSE data line, or an NDJSON line once the stream has begun, that is not
 * JSON or not of the chunk's shape: then finish returns the error). */
int mn__chat_parse_feed(struct mn_chat_parse *p, const char *data, size_t len);
/* Ends the stream: parses a last line without newline and a non-streamed answer. Errors
 * (MN_UNAVAILABLE, one line): a broken stream (a data line that is not JSON, or not a JSON object
 * of the chunk's shape), lines that are neither a stream nor JSON, an error the provider sent. */
mn_status mn__chat_parse_finish(struct mn_chat_parse *p);
void mn__chat_parse_release(struct mn_chat_parse *p);
/* The message of an error answer body ({"error":{"message"}} or {"error":"…"}), else the body cut
 * at 200 bytes, into out, on one line (control characters become spaces). */
void mn__chat_error_text(const char *body, char *out, size_t cap);

#endif
