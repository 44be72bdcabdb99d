/*
 * context.h — building what a model gets next: the `window` strategy (newest messages that fit
 * the budget, tool calls kept with their results), token accounting with per-message framing,
 * and rendering as OpenAI, Anthropic or text with a report of what was kept and dropped.
 * Design notes: docs/context.md.
 */
#ifndef MN_CONTEXT_H
#define MN_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "store/store.h"
#include "token/token.h"
#include "util/arena.h"

/* Framing per message in chat formats: 3 tokens of separators plus the role (one token in
 * cl100k_base and o200k_base), one more when a name is set, and the reply priming once per
 * context — the rule of OpenAI's token-counting guide. The name's own tokens are in the
 * message's stored count (mn_message_tokens). */
#define MN_FRAME_PER_MESSAGE 4
#define MN_FRAME_PER_NAME 1
#define MN_FRAME_REPLY 3

struct mn_window {
    struct mn_arena arena;
    mn_message *items; /* kept history, oldest to newest */
    size_t count, cap;
    const char *system_prompt;
    int64_t max_tokens;
    int64_t system_tokens, message_tokens, framing_tokens;
    int64_t total_messages;
    int64_t dropped_budget, dropped_orphan, dropped_unmatched;
    int over_budget;
};

/* Framing tokens one message costs. */
int64_t mn_context_frame_tokens(const mn_message *m);
/* Chooses the messages of session s for a budget of max_tokens. w must be zeroed. */
mn_status mn_window_build(mn_store *st, const mn_tokenizer *tk, const mn_session *s, int64_t max_tokens,
                          struct mn_window *w);
void mn_window_release(struct mn_window *w);
/* Renders the kept messages and the report (both malloc'd, caller frees). */
mn_status mn_context_render(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                            char **rendered, char **report);

#endif
