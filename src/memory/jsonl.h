/*
 * jsonl.h — the export format (docs/format.md): JSON Lines, a header line
 * {"format":"mnemo-export","version":1}, then each session line followed by its message lines.
 * Parsing is strict and separate from storing, so that the fuzz target can drive it alone.
 */
#ifndef MN_MEMORY_JSONL_H
#define MN_MEMORY_JSONL_H

#include <jansson.h>

#include "mnemo.h"
#include "util/arena.h"
#include "util/buf.h"

#define MN_EXPORT_FORMAT "mnemo-export"
#define MN_EXPORT_VERSION 1
#define MN_IMPORT_MAX_LINE ((size_t)64 << 20)

/* The bounds of the ids, seqs, versions and times an import line may carry (docs/format.md).
 * Each leaves room above it: a session imported at the last seq still takes two billion appends
 * before MN_MAX_SEQ, the ids given after the largest id stay exact in a JSON double (2^53), and
 * a memory's next version cannot overflow. */
#define MN_EXPORT_MAX_ID (1LL << 52)
#define MN_EXPORT_MAX_SEQ 2147483647LL     /* 2^31 - 1; also cleared_seq, cleared_from */
#define MN_EXPORT_MAX_VERSION 2147483647LL /* a memory's version */
#define MN_EXPORT_MAX_TIME_MS 253402300799999LL /* 9999-12-31T23:59:59.999Z */

enum mn_jsonl_kind { MN_JSONL_NONE, MN_JSONL_HEADER, MN_JSONL_SESSION, MN_JSONL_MESSAGE }; /* NONE: not parsed */

struct mn_jsonl_item {
    enum mn_jsonl_kind kind;
    mn_session session; /* MN_JSONL_SESSION */
    mn_message message; /* MN_JSONL_MESSAGE */
};

/* The JSON objects of a session and a message (the `--json` and export shapes); with_type puts
 * "type" first, as export lines have it. NULL on OOM. */
json_t *mn__jsonl_session(const mn_session *s, int with_type);
json_t *mn__jsonl_message(const mn_message *m, int with_type);
/* The message object appended to b as JSON text (the bytes jansson's compact dump of
 * mn__jsonl_message would give). Errors: MN_NOMEM, MN_TOOBIG (b's cap). */
mn_status mn__jsonl_message_buf(struct mn_buf *b, const mn_message *m, int with_type);

/* Parses one line (without its newline) into *out; strings live in `a`. max_bytes is the
 * content limit. Errors: MN_INVALID / MN_CORRUPT with a message naming the field. */
mn_status mn__jsonl_parse_line(const char *line, size_t len, size_t max_bytes, struct mn_arena *a,
                              struct mn_jsonl_item *out);

/* Checks a namespace name: 1-128 bytes of [A-Za-z0-9._:@-]. */
mn_status mn__check_namespace(const char *ns);
#define MN_MAX_SESSION_KEY_BYTES 256
/* Checks a session key (mn_session_opts.key): 1-256 bytes of UTF-8, no control character, not a
 * UUID (MN_INVALID, MN_TOOBIG). */
mn_status mn__check_session_key(const char *key);

#endif
