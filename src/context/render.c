/*
 * render.c — turns a chosen window into what a provider takes: OpenAI chat messages, the
 * Anthropic Messages shape (only requests the Messages API accepts: the rules are listed above
 * render_anthropic), or plain text; and writes the report. Output depends only on the
 * window, so the same inputs give the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "context/context.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define CHECK(expr)                                                                                                  \
    do {                                                                                                             \
        if ((expr) != 0)                                                                                             \
            goto nomem;                                                                                              \
    } while (0)

/* OpenAI chat messages, written straight into a buffer: the hot path of every context build.
 * Stored text is valid UTF-8 and stored tool calls are canonical compact JSON, so both go in
 * as they are; the bytes equal jansson's compact dump of the same objects. */
static mn_status openai_message(struct mn_buf *b, const char *role, const mn_message *m, const char *content)
{
    mn_status rc;
    if ((rc = mn__buf_adds(b, "{\"role\":\"")) || (rc = mn__buf_adds(b, role)) ||
        (rc = mn__buf_adds(b, "\",\"content\":")) || (rc = mn__buf_add_json_str(b, content)))
        return rc;
    if (m && m->name && ((rc = mn__buf_adds(b, ",\"name\":")) || (rc = mn__buf_add_json_str(b, m->name))))
        return rc;
    if (m && m->tool_calls && ((rc = mn__buf_adds(b, ",\"tool_calls\":")) || (rc = mn__buf_adds(b, m->tool_calls))))
        return rc;
    if (m && m->tool_call_id &&
        ((rc = mn__buf_adds(b, ",\"tool_call_id\":")) || (rc = mn__buf_add_json_str(b, m->tool_call_id))))
        return rc;
    return mn__buf_addc(b, '}');
}

static char *render_openai(const struct mn_window *w)
{
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn__buf_addc(&b, '[');
    if (!rc && w->system_prompt)
        rc = openai_message(&b, "system", NULL, w->system_prompt);
    for (size_t i = 0; i < w->count && !rc; i++) {
        if (i || w->system_prompt)
            rc = mn__buf_addc(&b, ',');
        if (!rc)
            rc = openai_message(&b, mn_role_name(w->items[i].role), &w->items[i], w->items[i].content);
    }
    if (!rc)
        rc = mn__buf_addc(&b, ']');
    if (rc) {
        mn__buf_release(&b);
        return NULL;
    }
    return mn__buf_detach(&b, NULL);
}

/* tool_use input: the parsed arguments when they are a JSON object, else them as a string. */
static json_t *tool_input(json_t *args)
{
    const char *text = json_string_value(args);
    json_t *v = text ? json_loads(text, 0, NULL) : NULL;
    if (json_is_object(v))
        return v;
    json_decref(v);
    v = json_object();
    if (v && text && json_object_set_new(v, "arguments", json_string(text)))
        json_decref(v), v = NULL;
    return v;
}

/* ---- anthropic ----------------------------------------------------------------------------
 * The Messages API's rules (docs.anthropic.com, Messages and tool use), each kept here:
 *  1. system is a top-level field, never a turn; it is left out when there is none;
 *  2. user and assistant turns alternate: consecutive messages of one role are one turn;
 *  3. the first turn is a user turn;
 *  4. no empty content: no turn without blocks, no text block without non-blank text;
 *  5. each tool_use is answered by a tool_result in the very next (user) turn, and each
 *     tool_result answers a tool_use of the turn right before it; in that user turn the
 *     tool_result blocks come first, any text after them;
 *  6. a final assistant turn (a prefill) does not end with white space. */

#define CONTINUES "(continuing an earlier conversation)"

static int blank(const char *s)
{
    for (; s && *s; s++)
        if (!strchr(" \t\r\n\f\v", *s))
            return 0;
    return 1;
}

static const char *block_type(json_t *b) { return json_string_value(json_object_get(b, "type")); }

static int is_type(json_t *b, const char *type) { return strcmp(block_type(b) ? block_type(b) : "", type) == 0; }

/* The content array of the last turn when it has `role`, else of a new turn (rule 2). */
static json_t *turn_blocks(json_t *messages, const char *role)
{
    json_t *last = json_array_get(messages, json_array_size(messages) - 1);
    if (last && strcmp(json_string_value(json_object_get(last, "role")), role) == 0)
        return json_object_get(last, "content");
    json_t *o = json_object(), *blocks = json_array();
    if (!o || !blocks || json_object_set_new(o, "role", json_string(role)) ||
        json_object_set_new(o, "content", blocks) || json_array_append_new(messages, o)) {
        json_decref(o);
        return NULL;
    }
    return blocks;
}

static int add_text(json_t *blocks, const char *text)
{
    if (blank(text)) /* rule 4 */
        return 0;
    json_t *b = json_pack("{s:s, s:s}", "type", "text", "text", text);
    return !b || json_array_append_new(blocks, b);
}

/* Inserts a tool_result after the turn's other tool_results and before its text (rule 5). */
static int add_result(json_t *blocks, json_t *b)
{
    size_t k = 0;
    while (k < json_array_size(blocks) && is_type(json_array_get(blocks, k), "tool_result"))
        k++;
    return !b || json_array_insert_new(blocks, k, b);
}

static json_t *result_block(const char *id, const char *content)
{
    json_t *b = json_pack("{s:s, s:s}", "type", "tool_result", "tool_use_id", id ? id : "");
    if (b && !blank(content) && json_object_set_new(b, "content", json_string(content)))
        json_decref(b), b = NULL;
    return b;
}

static int has_block(json_t *blocks, const char *type, const char *key, const char *id)
{
    size_t k;
    json_t *b;
    json_array_foreach(blocks, k, b)
    {
        if (is_type(b, type) && strcmp(json_string_value(json_object_get(b, key)) ? json_string_value(json_object_get(b, key)) : "", id) == 0)
            return 1;
    }
    return 0;
}

/* Rule 5 across turns: a tool_use without its result in the next turn is removed; a tool_result
 * without its tool_use in the turn before becomes text after the results. */
static int pair_tools(json_t *messages)
{
    for (size_t i = 0; i < json_array_size(messages); i++) {
        json_t *m = json_array_get(messages, i), *blocks = json_object_get(m, "content");
        int assistant = strcmp(json_string_value(json_object_get(m, "role")), "assistant") == 0;
        json_t *next = json_object_get(json_array_get(messages, i + 1), "content");
        json_t *prev = i ? json_object_get(json_array_get(messages, i - 1), "content") : NULL;
        size_t orphans = 0;
        for (size_t k = 0; k < json_array_size(blocks);) {
            json_t *b = json_array_get(blocks, k);
            if (assistant && is_type(b, "tool_use")) {
                const char *id = json_string_value(json_object_get(b, "id"));
                if (!next || !has_block(next, "tool_result", "tool_use_id", id ? id : "")) {
                    json_array_remove(blocks, k);
                    continue;
                }
            } else if (!assistant && is_type(b, "tool_result")) {
                const char *id = json_string_value(json_object_get(b, "tool_use_id"));
                if (!prev || !has_block(prev, "tool_use", "id", id ? id : "")) {
                    const char *content = json_string_value(json_object_get(b, "content"));
                    struct mn_buf t = MN_BUF_INIT;
                    int bad = mn__buf_addf(&t, "[result of tool call %s]%s%s", id ? id : "", content ? "\n" : "",
                                          content ? content : "") != MN_OK;
                    json_t *text = bad ? NULL : json_pack("{s:s, s:s}", "type", "text", "text", t.data);
                    mn__buf_release(&t);
                    /* in its place among the texts: after the answered results, before later text */
                    size_t at = 0;
                    while (at < json_array_size(blocks) &&
                           (at == k || is_type(json_array_get(blocks, at), "tool_result")))
                        at++;
                    at += orphans++;
                    if (!text || json_array_insert_new(blocks, at, text) || json_array_remove(blocks, k))
                        return 1;
                    continue;
                }
            }
            k++;
        }
    }
    return 0;
}

/* Rules 2, 3, 4 and 6 after pairing: no empty turn, same-role turns merged (tool_results first),
 * a user turn first, no trailing white space in a final assistant turn. */
static int normalise_turns(json_t *messages)
{
    for (size_t i = 0; i < json_array_size(messages);) {
        json_t *m = json_array_get(messages, i);
        json_t *blocks = json_object_get(m, "content");
        if (json_array_size(blocks) == 0) {
            json_array_remove(messages, i);
            continue;
        }
        json_t *prev = i ? json_array_get(messages, i - 1) : NULL;
        if (prev && strcmp(json_string_value(json_object_get(prev, "role")), json_string_value(json_object_get(m, "role"))) == 0) {
            json_t *into = json_object_get(prev, "content");
            size_t k;
            json_t *b;
            json_array_foreach(blocks, k, b)
            {
                if (is_type(b, "tool_result") ? add_result(into, json_incref(b)) : json_array_append(into, b))
                    return 1;
            }
            json_array_remove(messages, i);
            continue;
        }
        i++;
    }
    json_t *first = json_array_get(messages, 0);
    if (first && strcmp(json_string_value(json_object_get(first, "role")), "user") != 0) {
        json_t *o = json_pack("{s:s, s:[{s:s, s:s}]}", "role", "user", "content", "type", "text", "text", CONTINUES);
        if (!o || json_array_insert_new(messages, 0, o))
            return 1;
    }
    json_t *last = json_array_get(messages, json_array_size(messages) - 1);
    if (last && strcmp(json_string_value(json_object_get(last, "role")), "assistant") == 0) {
        json_t *blocks = json_object_get(last, "content");
        json_t *b = json_array_get(blocks, json_array_size(blocks) - 1);
        if (is_type(b, "text")) {
            const char *text = json_string_value(json_object_get(b, "text"));
            size_t n = strlen(text);
            while (n && strchr(" \t\r\n\f\v", text[n - 1]))
                n--;
            if (json_object_set_new(b, "text", json_stringn(text, n)))
                return 1;
        }
    }
    return 0;
}

static json_t *render_anthropic(const struct mn_window *w)
{
    struct mn_buf sys = MN_BUF_INIT;
    json_t *root = json_object(), *messages = json_array();
    if (!root || !messages || json_object_set_new(root, "messages", messages))
        goto nomem;
    if (w->system_prompt && !blank(w->system_prompt))
        CHECK(mn__buf_adds(&sys, w->system_prompt));
    for (size_t i = 0; i < w->count; i++) {
        const mn_message *m = &w->items[i];
        if (m->role == MN_ROLE_SYSTEM) { /* rule 1: system turns join the system text */
            if (!blank(m->content)) {
                CHECK(sys.len ? mn__buf_adds(&sys, "\n\n") : MN_OK);
                CHECK(mn__buf_adds(&sys, m->content));
            }
            continue;
        }
        int assistant = m->role == MN_ROLE_ASSISTANT;
        json_t *blocks = turn_blocks(messages, assistant ? "assistant" : "user");
        if (!blocks)
            goto nomem;
        if (m->role == MN_ROLE_TOOL) {
            CHECK(add_result(blocks, result_block(m->tool_call_id, m->content)));
            continue;
        }
        CHECK(add_text(blocks, m->content));
        if (m->tool_calls) {
            json_t *calls = json_loads(m->tool_calls, 0, NULL);
            size_t k;
            json_t *c;
            json_array_foreach(calls, k, c)
            {
                json_t *fn = json_object_get(c, "function");
                json_t *b = json_pack("{s:s, s:O, s:O, s:o}", "type", "tool_use", "id", json_object_get(c, "id"),
                                      "name", json_object_get(fn, "name"),
                                      "input", tool_input(json_object_get(fn, "arguments")));
                if (!b || json_array_append_new(blocks, b)) {
                    json_decref(calls);
                    goto nomem;
                }
            }
            json_decref(calls);
        }
    }
    CHECK(pair_tools(messages));
    CHECK(normalise_turns(messages));
    if (sys.len)
        CHECK(mn__json_set_str(root, "system", sys.data));
    mn__buf_release(&sys);
    return root;
nomem:
    mn__buf_release(&sys);
    json_decref(root);
    return NULL;
}

static char *render_text(const struct mn_window *w)
{
    struct mn_buf b = MN_BUF_INIT;
    if (w->system_prompt)
        CHECK(mn__buf_addf(&b, "system: %s\n\n", w->system_prompt));
    for (size_t i = 0; i < w->count; i++) {
        const mn_message *m = &w->items[i];
        if (m->role == MN_ROLE_TOOL)
            CHECK(mn__buf_addf(&b, "tool (%s): ", m->tool_call_id));
        else
            CHECK(mn__buf_addf(&b, "%s: ", mn_role_name(m->role)));
        CHECK(mn__buf_adds(&b, m->content ? m->content : ""));
        if (m->tool_calls) {
            json_t *calls = json_loads(m->tool_calls, 0, NULL);
            size_t k;
            json_t *c;
            json_array_foreach(calls, k, c)
            {
                json_t *fn = json_object_get(c, "function");
                const char *args = json_string_value(json_object_get(fn, "arguments"));
                if (mn__buf_addf(&b, "%s[call %s] %s(%s)", (m->content && *m->content) || k ? "\n" : "",
                                json_string_value(json_object_get(c, "id")),
                                json_string_value(json_object_get(fn, "name")), args ? args : "")) {
                    json_decref(calls);
                    goto nomem;
                }
            }
            json_decref(calls);
        }
        CHECK(mn__buf_adds(&b, "\n\n"));
    }
    return mn__buf_detach(&b, NULL);
nomem:
    mn__buf_release(&b);
    return NULL;
}

/* ---- the report ---------------------------------------------------------------------------
 * Written straight into a buffer, like the OpenAI messages: every build writes one. The bytes
 * are jansson's compact dump of json_pack's object for these members, updated with extra (a
 * member of extra takes the place of the report's own of that name, the others follow in
 * extra's order); only extra's values go through jansson. */

static mn_status add_key(struct mn_buf *b, const char *key, int first)
{
    mn_status rc = first ? MN_OK : mn__buf_addc(b, ',');
    if (!rc)
        rc = mn__buf_add_json_str(b, key);
    return rc ? rc : mn__buf_addc(b, ':');
}

static int dump_to_buf(const char *data, size_t len, void *user)
{
    return mn__buf_add(user, data, len) ? -1 : 0;
}

static mn_status add_value(struct mn_buf *b, const json_t *v)
{
    return json_dump_callback(v, dump_to_buf, b, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(10))
               ? mn__nomem()
               : MN_OK;
}

/* "key":n, or extra's value of key in its place. */
static mn_status add_int(struct mn_buf *b, const json_t *extra, const char *key, int64_t n, int first)
{
    const json_t *v = extra ? json_object_get(extra, key) : NULL;
    mn_status rc = add_key(b, key, first);
    return rc ? rc : v ? add_value(b, v) : mn__buf_add_i64(b, n);
}

static mn_status add_str(struct mn_buf *b, const json_t *extra, const char *key, const char *s, int first)
{
    const json_t *v = extra ? json_object_get(extra, key) : NULL;
    mn_status rc = add_key(b, key, first);
    return rc ? rc : v ? add_value(b, v) : mn__buf_add_json_str(b, s);
}

static mn_status add_bool(struct mn_buf *b, const json_t *extra, const char *key, int yes)
{
    const json_t *v = extra ? json_object_get(extra, key) : NULL;
    mn_status rc = add_key(b, key, 0);
    return rc ? rc : v ? add_value(b, v) : mn__buf_adds(b, yes ? "true" : "false");
}

/* {"k1":n1,"k2":n2,…} of n members (values NULL-free), or extra's value of key. */
static mn_status add_ints(struct mn_buf *b, const json_t *extra, const char *key, const char *const *keys,
                          const int64_t *vals, size_t n)
{
    const json_t *v = extra ? json_object_get(extra, key) : NULL;
    mn_status rc = add_key(b, key, 0);
    if (rc || v)
        return rc ? rc : add_value(b, v);
    rc = mn__buf_addc(b, '{');
    for (size_t i = 0; i < n && !rc; i++)
        rc = add_int(b, NULL, keys[i], vals[i], i == 0);
    return rc ? rc : mn__buf_addc(b, '}');
}

/* The "messages" member: its seqs are null when no stored message was kept. */
static mn_status add_messages(struct mn_buf *b, const json_t *extra, int64_t total, int64_t kept,
                              const mn_message *first, const mn_message *last)
{
    const json_t *v = extra ? json_object_get(extra, "messages") : NULL;
    mn_status rc = add_key(b, "messages", 0);
    if (rc || v)
        return rc ? rc : add_value(b, v);
    static const char *const keys[] = {"total", "kept", "dropped"};
    const int64_t vals[] = {total, kept, total - kept};
    rc = mn__buf_addc(b, '{');
    for (size_t i = 0; i < 3 && !rc; i++)
        rc = add_int(b, NULL, keys[i], vals[i], i == 0);
    if (!rc)
        rc = first ? add_int(b, NULL, "first_kept_seq", first->seq, 0) : mn__buf_adds(b, ",\"first_kept_seq\":null");
    if (!rc)
        rc = last ? add_int(b, NULL, "last_kept_seq", last->seq, 0) : mn__buf_adds(b, ",\"last_kept_seq\":null");
    return rc ? rc : mn__buf_addc(b, '}');
}

static const char *const own_keys[] = {"strategy",    "format", "tokenizer", "max_tokens", "tokens",
                                       "over_budget", "parts",  "messages",  "dropped"};

static int own_key(const char *key)
{
    for (size_t i = 0; i < sizeof own_keys / sizeof own_keys[0]; i++)
        if (strcmp(key, own_keys[i]) == 0)
            return 1;
    return 0;
}

static char *report(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                    const json_t *extra)
{
    static const char *const fmt_names[] = {"openai", "anthropic", "text"};
    static const char *const part_keys[] = {"system", "messages", "framing"};
    static const char *const drop_keys[] = {"budget", "orphan_tool_result", "unmatched_tool_call"};
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens;
    int64_t kept = (int64_t)w->count - w->synthetic; /* a summary or marker is not a history message */
    int64_t dropped_budget = w->total_messages - kept - w->dropped_orphan - w->dropped_unmatched - w->summarized;
    const mn_message *first = NULL, *last = NULL;
    for (size_t i = 0; i < w->count; i++)
        if (w->items[i].seq > 0) {
            first = first ? first : &w->items[i];
            last = &w->items[i];
        }
    const int64_t parts[] = {w->system_tokens, w->message_tokens, w->framing_tokens};
    const int64_t drops[] = {dropped_budget > 0 ? dropped_budget : 0, w->dropped_orphan, w->dropped_unmatched};
    struct mn_buf b = MN_BUF_INIT;
    const char *key;
    const json_t *v;
    if (!strategy || !tokenizer) /* json_pack refused a NULL string */
        return NULL;
    mn_status rc = mn__buf_addc(&b, '{');
    if (!rc)
        rc = add_str(&b, extra, "strategy", strategy, 1);
    if (!rc)
        rc = add_str(&b, extra, "format", fmt_names[fmt], 0);
    if (!rc)
        rc = add_str(&b, extra, "tokenizer", tokenizer, 0);
    if (!rc)
        rc = add_int(&b, extra, "max_tokens", w->max_tokens, 0);
    if (!rc)
        rc = add_int(&b, extra, "tokens", total, 0);
    if (!rc)
        rc = add_bool(&b, extra, "over_budget", w->over_budget || total > w->max_tokens);
    if (!rc)
        rc = add_ints(&b, extra, "parts", part_keys, parts, 3);
    if (!rc)
        rc = add_messages(&b, extra, w->total_messages, kept, first, last);
    if (!rc)
        rc = add_ints(&b, extra, "dropped", drop_keys, drops, 3);
    json_object_foreach((json_t *)extra, key, v)
    {
        if (!rc && !own_key(key) && !(rc = add_key(&b, key, 0)))
            rc = add_value(&b, v);
    }
    if (!rc)
        rc = mn__buf_addc(&b, '}');
    if (rc) {
        mn__buf_release(&b);
        return NULL;
    }
    return mn__buf_detach(&b, NULL);
}

mn_status mn__context_render(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                            char **rendered, char **report_out)
{
    return mn__context_render_ex(w, strategy, tokenizer, fmt, NULL, rendered, report_out);
}

mn_status mn__context_render_ex(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                               const json_t *extra, char **rendered, char **report_out)
{
    *rendered = *report_out = NULL;
    if (fmt == MN_FORMAT_TEXT)
        *rendered = render_text(w);
    else if (fmt == MN_FORMAT_OPENAI)
        *rendered = render_openai(w);
    else {
        json_t *v = render_anthropic(w);
        *rendered = v ? mn__json_dump(v) : NULL;
        json_decref(v);
    }
    *report_out = report(w, strategy, tokenizer, fmt, extra);
    if (!*rendered || !*report_out) {
        free(*rendered);
        free(*report_out);
        *rendered = *report_out = NULL;
        return mn__nomem();
    }
    return MN_OK;
}
