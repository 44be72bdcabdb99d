/*
 * summarize.h — summarisers: providers that turn an existing summary plus new messages into an
 * updated summary, capped in tokens. Chosen by name from config (summarizer.name): "llm"
 * (OpenAI-compatible /v1/chat/completions or Ollama /api/chat over src/http), "extractive" (no
 * model: keeps decisions, paths, tools, errors and fixes, open tasks, numbers) and "none" (always
 * fails, so the caller uses the static marker). Input larger than the summariser's own budget is
 * folded in stages, each call within the budget. Design notes: docs/context.md.
 */
#ifndef MN_SUMMARIZE_H
#define MN_SUMMARIZE_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "token/token.h"
#include "util/buf.h"

typedef struct mn_summarizer mn_summarizer;

/* Settings of a summariser, read from the configuration by the caller. Strings are borrowed. */
typedef struct mn_summarizer_cfg {
    const char *name;        /* "llm", "extractive", "none" */
    const char *protocol;    /* llm: "openai" or "ollama" */
    const char *base_url;    /* llm: server root, e.g. http://127.0.0.1:11434 */
    const char *model;       /* llm: the model */
    const char *api_key;     /* llm: bearer token or NULL (the value, read from the named env var) */
    int64_t timeout_ms, backoff_ms;
    int retries;
    int64_t input_budget;    /* tokens one call may take (instructions + existing summary + turns) */
    const char *prompt_file; /* llm: a file whose text replaces the built-in instructions; NULL or "" = built in */
} mn_summarizer_cfg;

/* One fold request. msgs are the messages to fold, oldest first. */
typedef struct mn_sum_input {
    const char *existing; /* the previous summary, or NULL */
    const mn_message *msgs;
    size_t n;
    int64_t cap_tokens;   /* the summary's cap */
    const mn_tokenizer *tk;
    int64_t deadline_ms;  /* absolute, on mn__clock_now_ms()'s scale; 0 = none */
    const char *instructions; /* the compaction's focus ("keep the API decisions"), or NULL */
} mn_sum_input;

typedef struct mn_sum_result {
    char *text;  /* malloc'd */
    char *model; /* malloc'd or NULL */
    int64_t prompt_tokens, completion_tokens; /* usage reported by the model (llm), else 0 */
    int calls;   /* provider calls made (stages) */
    int attempts; /* HTTP attempts, retries included */
} mn_sum_result;

struct mn_summarizer_vt {
    const char *name;
    /* One call on a shaped input (mn__summarize_shape) that fits the budget → out->text (and
     * model, usage). `in` is the whole request (tokenizer, instructions, deadline). */
    mn_status (*call)(mn_summarizer *s, const char *shaped, int64_t cap_tokens, const mn_sum_input *in,
                      mn_sum_result *out);
    void (*free)(mn_summarizer *s);
};

struct mn_summarizer {
    const struct mn_summarizer_vt *vt;
    mn_summarizer_cfg cfg; /* strings copied */
    char *strings;         /* backing store of cfg's strings */
    char *prompt;          /* the text of cfg.prompt_file, or NULL (the built-in prompt) */
};

/* Opens the summariser cfg->name, reading cfg->prompt_file when set (at most 64 KiB).
 * Errors: MN_INVALID (unknown name, bad protocol, an empty prompt file), MN_IO (the prompt
 * file cannot be read, naming it), MN_TOOBIG, MN_NOMEM. */
mn_status mn__summarizer_open(const mn_summarizer_cfg *cfg, mn_summarizer **out);
void mn__summarizer_free(mn_summarizer *s);
const char *mn__summarizer_name(const mn_summarizer *s);

/* Folds in->msgs into in->existing, in stages when the input is over the budget. On success
 * out->text is the new summary, at most cap_tokens tokens. On failure nothing is returned and
 * the message says why (MN_UNAVAILABLE for provider failures, "none" always fails). */
mn_status mn__summarize(mn_summarizer *s, const mn_sum_input *in, mn_sum_result *out);
void mn__sum_result_release(mn_sum_result *r);

/* The input shape (seed 004): === EXISTING_SUMMARY === … === NEW_TURNS === Turn 1: … Tool
 * outputs longer than `tool_chars` characters are cut to head + tail. Appends to b. */
mn_status mn__summarize_shape(struct mn_buf *b, const char *existing, const mn_message *msgs, size_t n,
                             size_t tool_chars);
/* Cuts text to at most cap tokens on a line (else character) boundary, keeping the start;
 * returns a malloc'd copy. */
char *mn__summarize_cap(const mn_tokenizer *tk, const char *text, int64_t cap);

/* Parses a chat response of `protocol` ("openai" or "ollama"): the reply text (malloc'd), and
 * usage. finish_reason / done_reason "length" is MN_UNAVAILABLE ("cut off at the token limit").
 * Errors: MN_UNAVAILABLE (an error object, no choices, empty reply), MN_INVALID (not JSON). */
mn_status mn__summarize_parse_response(const char *protocol, const char *body, size_t len, char **text,
                                      int64_t *prompt_tokens, int64_t *completion_tokens);

/* Providers. */
extern const struct mn_summarizer_vt mn_summarizer_extractive_vt;
extern const struct mn_summarizer_vt mn_summarizer_llm_vt;
extern const struct mn_summarizer_vt mn_summarizer_none_vt;

/* The extractive summary of a shaped input (used by the extractive provider). Items whose words
 * match `instructions` (NULL: none) are listed first in their section and cut last. */
char *mn__summarize_extract(const char *shaped, const mn_tokenizer *tk, int64_t cap_tokens, const char *instructions);

/* Removes reasoning blocks (<think>…</think>, any letter case, also one left open at the end,
 * and <thinking>…</thinking>) from text in place, then trims surrounding white space. */
void mn__summarize_strip_think(char *text);

#endif
