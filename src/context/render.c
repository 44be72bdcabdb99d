/*
 * render.c — turns a chosen window into what a provider takes: OpenAI chat messages, the
 * Anthropic Messages shape (system apart, tool_use / tool_result blocks, one user or assistant
 * turn per run of blocks), or plain text; and writes the report. Output depends only on the
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
    if ((rc = mn_buf_adds(b, "{\"role\":\"")) || (rc = mn_buf_adds(b, role)) ||
        (rc = mn_buf_adds(b, "\",\"content\":")) || (rc = mn_buf_add_json_str(b, content)))
        return rc;
    if (m && m->name && ((rc = mn_buf_adds(b, ",\"name\":")) || (rc = mn_buf_add_json_str(b, m->name))))
        return rc;
    if (m && m->tool_calls && ((rc = mn_buf_adds(b, ",\"tool_calls\":")) || (rc = mn_buf_adds(b, m->tool_calls))))
        return rc;
    if (m && m->tool_call_id &&
        ((rc = mn_buf_adds(b, ",\"tool_call_id\":")) || (rc = mn_buf_add_json_str(b, m->tool_call_id))))
        return rc;
    return mn_buf_addc(b, '}');
}

static char *render_openai(const struct mn_window *w)
{
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mn_buf_addc(&b, '[');
    if (!rc && w->system_prompt)
        rc = openai_message(&b, "system", NULL, w->system_prompt);
    for (size_t i = 0; i < w->count && !rc; i++) {
        if (i || w->system_prompt)
            rc = mn_buf_addc(&b, ',');
        if (!rc)
            rc = openai_message(&b, mn_role_name(w->items[i].role), &w->items[i], w->items[i].content);
    }
    if (!rc)
        rc = mn_buf_addc(&b, ']');
    if (rc) {
        mn_buf_release(&b);
        return NULL;
    }
    return mn_buf_detach(&b, NULL);
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

/* Appends blocks to the last message when it has the same role, else starts a new one. */
static json_t *turn_blocks(json_t *messages, const char *role)
{
    json_t *last = json_array_get(messages, json_array_size(messages) - 1);
    if (last && strcmp(json_string_value(json_object_get(last, "role")), role) == 0)
        return json_object_get(last, "content");
    json_t *o = json_object(), *blocks = json_array();
    if (!o || !blocks || json_object_set_new(o, "role", json_string(role)) ||
        json_object_set_new(o, "content", blocks) || json_array_append_new(messages, o))
        return NULL;
    return blocks;
}

static int add_text(json_t *blocks, const char *text)
{
    json_t *b = json_pack("{s:s, s:s}", "type", "text", "text", text);
    return !b || json_array_append_new(blocks, b);
}

static json_t *render_anthropic(const struct mn_window *w)
{
    struct mn_buf sys = MN_BUF_INIT;
    json_t *root = json_object(), *messages = json_array();
    if (!root || !messages || json_object_set_new(root, "messages", messages))
        goto nomem;
    if (w->system_prompt)
        CHECK(mn_buf_adds(&sys, w->system_prompt));
    for (size_t i = 0; i < w->count; i++) {
        const mn_message *m = &w->items[i];
        if (m->role == MN_ROLE_SYSTEM) { /* Anthropic has no system turns: they join the system text */
            CHECK(sys.len ? mn_buf_adds(&sys, "\n\n") : MN_OK);
            CHECK(mn_buf_adds(&sys, m->content ? m->content : ""));
            continue;
        }
        int assistant = m->role == MN_ROLE_ASSISTANT;
        json_t *blocks = turn_blocks(messages, assistant ? "assistant" : "user");
        if (!blocks)
            goto nomem;
        if (m->role == MN_ROLE_TOOL) {
            json_t *b = json_pack("{s:s, s:s, s:s}", "type", "tool_result", "tool_use_id", m->tool_call_id,
                                  "content", m->content ? m->content : "");
            CHECK(!b || json_array_append_new(blocks, b));
            continue;
        }
        if (m->content && *m->content)
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
    CHECK(mn_json_set_str(root, "system", w->system_prompt || sys.len ? sys.data : NULL));
    mn_buf_release(&sys);
    return root;
nomem:
    mn_buf_release(&sys);
    json_decref(root);
    return NULL;
}

static char *render_text(const struct mn_window *w)
{
    struct mn_buf b = MN_BUF_INIT;
    if (w->system_prompt)
        CHECK(mn_buf_addf(&b, "system: %s\n\n", w->system_prompt));
    for (size_t i = 0; i < w->count; i++) {
        const mn_message *m = &w->items[i];
        if (m->role == MN_ROLE_TOOL)
            CHECK(mn_buf_addf(&b, "tool (%s): ", m->tool_call_id));
        else
            CHECK(mn_buf_addf(&b, "%s: ", mn_role_name(m->role)));
        CHECK(mn_buf_adds(&b, m->content ? m->content : ""));
        if (m->tool_calls) {
            json_t *calls = json_loads(m->tool_calls, 0, NULL);
            size_t k;
            json_t *c;
            json_array_foreach(calls, k, c)
            {
                json_t *fn = json_object_get(c, "function");
                const char *args = json_string_value(json_object_get(fn, "arguments"));
                if (mn_buf_addf(&b, "%s[call %s] %s(%s)", (m->content && *m->content) || k ? "\n" : "",
                                json_string_value(json_object_get(c, "id")),
                                json_string_value(json_object_get(fn, "name")), args ? args : "")) {
                    json_decref(calls);
                    goto nomem;
                }
            }
            json_decref(calls);
        }
        CHECK(mn_buf_adds(&b, "\n\n"));
    }
    return mn_buf_detach(&b, NULL);
nomem:
    mn_buf_release(&b);
    return NULL;
}

static json_t *report(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt)
{
    static const char *const fmt_names[] = {"openai", "anthropic", "text"};
    int64_t total = w->system_tokens + w->message_tokens + w->framing_tokens;
    int64_t kept = (int64_t)w->count - w->synthetic; /* a summary or marker is not a history message */
    int64_t dropped_budget = w->total_messages - kept - w->dropped_orphan - w->dropped_unmatched - w->summarized;
    const mn_message *first = NULL, *last = NULL;
    for (size_t i = 0; i < w->count; i++)
        if (w->items[i].seq > 0) {
            first = first ? first : &w->items[i];
            last = &w->items[i];
        }
    json_t *r = json_pack(
        "{s:s, s:s, s:s, s:I, s:I, s:b, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:o, s:o}, s:{s:I, s:I, s:I}}",
        "strategy", strategy, "format", fmt_names[fmt], "tokenizer", tokenizer, "max_tokens",
        (json_int_t)w->max_tokens, "tokens", (json_int_t)total, "over_budget", w->over_budget || total > w->max_tokens,
        "parts", "system", (json_int_t)w->system_tokens, "messages", (json_int_t)w->message_tokens, "framing",
        (json_int_t)w->framing_tokens, "messages", "total", (json_int_t)w->total_messages, "kept",
        (json_int_t)kept, "dropped", (json_int_t)(w->total_messages - kept), "first_kept_seq",
        first ? json_integer(first->seq) : json_null(), "last_kept_seq",
        last ? json_integer(last->seq) : json_null(), "dropped", "budget",
        (json_int_t)(dropped_budget > 0 ? dropped_budget : 0), "orphan_tool_result", (json_int_t)w->dropped_orphan,
        "unmatched_tool_call", (json_int_t)w->dropped_unmatched);
    return r;
}

mn_status mn_context_render(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                            char **rendered, char **report_out)
{
    return mn_context_render_ex(w, strategy, tokenizer, fmt, NULL, rendered, report_out);
}

mn_status mn_context_render_ex(const struct mn_window *w, const char *strategy, const char *tokenizer, mn_format fmt,
                               const json_t *extra, char **rendered, char **report_out)
{
    *rendered = *report_out = NULL;
    if (fmt == MN_FORMAT_TEXT)
        *rendered = render_text(w);
    else if (fmt == MN_FORMAT_OPENAI)
        *rendered = render_openai(w);
    else {
        json_t *v = render_anthropic(w);
        *rendered = v ? mn_json_dump(v) : NULL;
        json_decref(v);
    }
    json_t *r = report(w, strategy, tokenizer, fmt);
    if (r && extra && json_object_update(r, (json_t *)extra) != 0) {
        json_decref(r);
        r = NULL;
    }
    *report_out = r ? mn_json_dump(r) : NULL;
    json_decref(r);
    if (!*rendered || !*report_out) {
        free(*rendered);
        free(*report_out);
        *rendered = *report_out = NULL;
        return mn__nomem();
    }
    return MN_OK;
}
