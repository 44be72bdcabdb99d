/*
 * message.h — the rules a message must satisfy before it is stored (roles, UTF-8, JSON fields,
 * sizes), the row it becomes, and the title a session takes from its first user message.
 */
#ifndef MN_MEMORY_MESSAGE_H
#define MN_MEMORY_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"
#include "token/token.h"
#include "util/arena.h"

/* A derived title's length in characters. The store derives the same title in SQL to find the
 * message a title came from (sqlite/sqlite.c TITLE_OF, postgres/messages.c, the schema-13
 * backfill in both schema.h): they cut at 100 too, and change with it. */
#define MN_TITLE_CHARS 100
#define MN_MAX_NAME_BYTES 256
#define MN_MAX_IDEM_BYTES 200
#define MN_MAX_JSON_FIELD_BYTES (1 << 20)
#define MN_MAX_TITLE_BYTES 4096
#define MN_MAX_SYSTEM_PROMPT_BYTES (1 << 20)
/* The last seq a session's message can have, on both backends: SQLite keys a message by
 * sid * 2^32 + seq (sqlite/schema.h). An append past it is refused (engine/append.c). */
#define MN_MAX_SEQ 4294967295LL

/* Checks `in` and fills `row` (strings borrowed from `in` or copied into `a` in canonical
 * form), with its token count and time. On failure the message names the field; `label`
 * (e.g. "message 3: ") is put before it. */
mn_status mn__message_prepare(const mn_message_in *in, size_t max_bytes, const mn_tokenizer *tk, int64_t now_ms,
                             struct mn_arena *a, const char *label, mn_message *row);
/* The stored token count of a message: its content, tool-call JSON, name and tool_call_id —
 * every text of the message a provider bills, except the per-message framing, which depends
 * on the output format (context.h). */
int64_t mn__message_tokens(const mn_tokenizer *tk, const mn_message *m);
/* Checks a stored-form message (from an import): the same rules as prepare, no rewriting. */
mn_status mn__message_check_row(const mn_message *m, size_t max_bytes, const char *label);
/* The title for a first user message: the first 100 characters, cut on a UTF-8 boundary, with
 * line breaks turned into spaces. Arena-allocated; NULL on OOM. */
char *mn__message_title(struct mn_arena *a, const char *content);

/* Checks optional text fields shared with sessions: valid UTF-8, at most max bytes. */
mn_status mn__check_text(const char *field, const char *s, size_t max, const char *label);
/* Checks that text is a JSON object (metadata) and returns its canonical compact form in `a`. */
mn_status mn__check_json_object(const char *field, const char *text, struct mn_arena *a, const char *label,
                               const char **canon);

#endif
