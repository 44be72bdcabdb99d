/*
 * summarize.c — the summariser registry, the input shape of seed 004 (EXISTING_SUMMARY /
 * NEW_TURNS), staged folding (input over the summariser's budget goes in pieces, each call
 * within it, the summary carried from stage to stage), the token cap, the `none` provider, and
 * the parser of OpenAI / Ollama chat responses. Design notes: docs/context.md.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "summarize/summarize.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

#define STAGE_OVERHEAD 200 /* tokens for the instructions and the shape's fixed lines */

#define PROMPT_FILE_MAX (64 * 1024)

static char *dup_or_null(const char *s) { return s ? strdup(s) : NULL; }

/* Reads the prompt file into *out (NUL-terminated). */
static mn_status read_prompt(const char *file, char **out)
{
    *out = NULL;
    FILE *f = fopen(file, "rb");
    if (!f)
        return mn__err(MN_IO, "summarizer.prompt_file: cannot read '%s': %s", file, strerror(errno));
    char *text = malloc(PROMPT_FILE_MAX + 2);
    if (!text) {
        fclose(f);
        return mn__nomem();
    }
    errno = 0;
    size_t len = fread(text, 1, PROMPT_FILE_MAX + 1, f);
    int bad = ferror(f) ? (errno ? errno : EIO) : 0; /* a directory opens, then reads EISDIR */
    fclose(f);
    mn_status rc = MN_OK;
    if (bad)
        rc = mn__err(MN_IO, "summarizer.prompt_file: cannot read '%s': %s", file, strerror(bad));
    else if (len > PROMPT_FILE_MAX)
        rc = mn__err(MN_TOOBIG, "summarizer.prompt_file: '%s' is larger than %d bytes", file, PROMPT_FILE_MAX);
    else if (!mn__utf8_valid(text, len, NULL))
        rc = mn__err(MN_INVALID, "summarizer.prompt_file: '%s' is not valid UTF-8", file);
    text[len] = '\0';
    size_t blank = 0;
    while (blank < len && isspace((unsigned char)text[blank]))
        blank++;
    if (!rc && blank == len)
        rc = mn__err(MN_INVALID, "summarizer.prompt_file: '%s' is empty", file);
    if (rc) {
        free(text);
        return rc;
    }
    *out = text;
    return MN_OK;
}

mn_status mn__summarizer_open(const mn_summarizer_cfg *cfg, mn_summarizer **out)
{
    *out = NULL;
    const struct mn_summarizer_vt *vt = NULL;
    const char *name = cfg->name ? cfg->name : "extractive";
    if (strcmp(name, "extractive") == 0)
        vt = &mn_summarizer_extractive_vt;
    else if (strcmp(name, "llm") == 0)
        vt = &mn_summarizer_llm_vt;
    else if (strcmp(name, "none") == 0)
        vt = &mn_summarizer_none_vt;
    else
        return mn__err(MN_INVALID, "summarizer.name: '%s' is not one of: llm, extractive, none", name);
    if (vt == &mn_summarizer_llm_vt && cfg->protocol && strcmp(cfg->protocol, "openai") != 0 &&
        strcmp(cfg->protocol, "ollama") != 0)
        return mn__err(MN_INVALID, "summarizer.protocol: '%s' is not one of: openai, ollama", cfg->protocol);
    mn_summarizer *s = calloc(1, sizeof *s);
    if (!s)
        return mn__nomem();
    s->vt = vt;
    s->cfg = *cfg;
    s->cfg.name = vt->name;
    s->cfg.protocol = dup_or_null(cfg->protocol ? cfg->protocol : "openai");
    s->cfg.base_url = dup_or_null(cfg->base_url ? cfg->base_url : "");
    s->cfg.model = dup_or_null(cfg->model ? cfg->model : "");
    s->cfg.api_key = dup_or_null(cfg->api_key);
    s->cfg.prompt_file = NULL;
    if (!s->cfg.protocol || !s->cfg.base_url || !s->cfg.model || (cfg->api_key && !s->cfg.api_key)) {
        mn__summarizer_free(s);
        return mn__nomem();
    }
    if (cfg->prompt_file && *cfg->prompt_file) {
        mn_status rc = read_prompt(cfg->prompt_file, &s->prompt);
        if (rc) {
            mn__summarizer_free(s);
            return rc;
        }
    }
    *out = s;
    return MN_OK;
}

void mn__summarizer_free(mn_summarizer *s)
{
    if (!s)
        return;
    free((char *)s->cfg.protocol);
    free((char *)s->cfg.base_url);
    free((char *)s->cfg.model);
    free((char *)s->cfg.api_key);
    free(s->prompt);
    free(s);
}

const char *mn__summarizer_name(const mn_summarizer *s) { return s->vt->name; }

void mn__sum_result_release(mn_sum_result *r)
{
    free(r->text);
    free(r->model);
    memset(r, 0, sizeof *r);
}

/* ---- shaping --------------------------------------------------------------------------------- */

/* Appends text, cut to head + tail when it has more than max_chars characters (0: no cut). */
static mn_status add_cut(struct mn_buf *b, const char *text, size_t max_chars)
{
    size_t len = strlen(text);
    if (!mn__utf8_valid(text, len, NULL) || max_chars == 0)
        return mn__buf_add(b, text, len);
    size_t chars = mn__utf8_chars(text, len);
    if (chars <= max_chars)
        return mn__buf_add(b, text, len);
    size_t head = mn__utf8_prefix(text, len, max_chars / 2);
    size_t tail_start = mn__utf8_prefix(text, len, chars - max_chars / 4);
    mn_status rc = mn__buf_add(b, text, head);
    if (!rc)
        rc = mn__buf_addf(b, " […cut, %zu chars total…] ", chars);
    if (!rc)
        rc = mn__buf_add(b, text + tail_start, len - tail_start);
    return rc;
}

/* One message as lines of the NEW_TURNS section (no turn header). */
static mn_status shape_message(struct mn_buf *b, const mn_message *m, size_t tool_chars)
{
    mn_status rc = MN_OK;
    const char *content = m->content ? m->content : "";
    switch (m->role) {
    case MN_ROLE_SYSTEM:
        rc = mn__buf_adds(b, "System: ");
        break;
    case MN_ROLE_USER:
        rc = mn__buf_adds(b, "User: ");
        break;
    case MN_ROLE_ASSISTANT:
        if (*content)
            rc = mn__buf_adds(b, "Assistant: ");
        break;
    case MN_ROLE_TOOL:
        rc = mn__buf_addf(b, "Tool %s (%s): ", m->name ? m->name : "result", m->tool_call_id ? m->tool_call_id : "");
        break;
    }
    if (!rc && (m->role != MN_ROLE_ASSISTANT || *content)) {
        rc = add_cut(b, content, m->role == MN_ROLE_TOOL ? tool_chars : 4 * tool_chars);
        if (!rc)
            rc = mn__buf_addc(b, '\n');
    }
    if (!rc && m->tool_calls) {
        json_t *calls = json_loads(m->tool_calls, 0, NULL);
        size_t k;
        json_t *c;
        json_array_foreach(calls, k, c)
        {
            json_t *fn = json_object_get(c, "function");
            const char *name = json_string_value(json_object_get(fn, "name"));
            const char *args = json_string_value(json_object_get(fn, "arguments"));
            if ((rc = mn__buf_addf(b, "Assistant calls: %s(", name ? name : "?")) ||
                (rc = add_cut(b, args ? args : "", tool_chars)) || (rc = mn__buf_adds(b, ")\n")))
                break;
        }
        json_decref(calls);
    }
    return rc;
}

static mn_status shape_begin(struct mn_buf *b, const char *existing)
{
    mn_status rc = mn__buf_adds(b, "=== EXISTING_SUMMARY ===\n");
    if (!rc)
        rc = mn__buf_adds(b, existing && *existing ? existing : "NONE");
    if (!rc)
        rc = mn__buf_adds(b, "\n=== END_EXISTING_SUMMARY ===\n\n=== NEW_TURNS ===\n");
    return rc;
}

mn_status mn__summarize_shape(struct mn_buf *b, const char *existing, const mn_message *msgs, size_t n,
                             size_t tool_chars)
{
    mn_status rc = shape_begin(b, existing);
    int turn = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        if (msgs[i].role == MN_ROLE_USER || turn == 0)
            rc = mn__buf_addf(b, "%sTurn %d:\n", turn ? "\n" : "", turn + 1), turn++;
        if (!rc)
            rc = shape_message(b, &msgs[i], tool_chars);
    }
    if (!rc)
        rc = mn__buf_adds(b, "=== END_NEW_TURNS ===\n");
    return rc;
}

/* ---- the cap --------------------------------------------------------------------------------- */

char *mn__summarize_cap(const mn_tokenizer *tk, const char *text, int64_t cap)
{
    size_t len = strlen(text);
    if (cap <= 0 || (int64_t)mn__token_count(tk, text, len) <= cap)
        return strdup(text);
    /* binary search on characters for the longest prefix within the cap, then back to a line */
    size_t chars = mn__utf8_valid(text, len, NULL) ? mn__utf8_chars(text, len) : len;
    size_t lo = 0, hi = chars;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        size_t bytes = mn__utf8_valid(text, len, NULL) ? mn__utf8_prefix(text, len, mid) : mid;
        if ((int64_t)mn__token_count(tk, text, bytes) <= cap)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t bytes = mn__utf8_valid(text, len, NULL) ? mn__utf8_prefix(text, len, lo) : lo;
    size_t line = bytes;
    while (line > 0 && text[line - 1] != '\n')
        line--;
    if (line > bytes / 2)
        bytes = line;
    while (bytes > 0 && (text[bytes - 1] == '\n' || text[bytes - 1] == ' '))
        bytes--;
    char *out = malloc(bytes + 1);
    if (out) {
        memcpy(out, text, bytes);
        out[bytes] = '\0';
    }
    return out;
}

/* ---- staged folding -------------------------------------------------------------------------- */

static int64_t count(const mn_tokenizer *tk, const char *s, size_t len) { return (int64_t)mn__token_count(tk, s, len); }

mn_status mn__summarize(mn_summarizer *s, const mn_sum_input *in, mn_sum_result *out)
{
    memset(out, 0, sizeof *out);
    int64_t budget = s->cfg.input_budget > 0 ? s->cfg.input_budget : 12000;
    int64_t cap = in->cap_tokens > 0 ? in->cap_tokens : 500;
    if (budget < 2 * cap + STAGE_OVERHEAD + 64)
        return mn__err(MN_INVALID, "summarizer.input_budget_tokens: %lld is too small for a summary cap of %lld"
                       " (at least %lld)", (long long)budget, (long long)cap, (long long)(2 * cap + STAGE_OVERHEAD + 64));
    size_t tool_chars = 2000;
    char *summary = in->existing && *in->existing ? strdup(in->existing) : NULL;
    if (in->existing && *in->existing && !summary)
        return mn__nomem();
    struct mn_buf piece = MN_BUF_INIT, shaped = MN_BUF_INIT;
    mn_status rc = MN_OK;
    size_t i = 0;
    while (i < in->n && !rc) {
        /* the room for turns in this stage: the budget less the summary so far and its cap */
        int64_t room = budget - STAGE_OVERHEAD - cap - (summary ? count(in->tk, summary, strlen(summary)) : 0);
        mn__buf_reset(&shaped);
        if ((rc = shape_begin(&shaped, summary)))
            break;
        int turn = 0;
        size_t j = i;
        int64_t used = 0;
        while (j < in->n && !rc) {
            mn__buf_reset(&piece);
            if (in->msgs[j].role == MN_ROLE_USER || turn == 0)
                rc = mn__buf_addf(&piece, "%sTurn %d:\n", turn ? "\n" : "", turn + 1);
            if (!rc)
                rc = shape_message(&piece, &in->msgs[j], tool_chars);
            if (rc)
                break;
            int64_t t = count(in->tk, piece.data, piece.len);
            if (used + t > room) {
                if (j > i)
                    break;
                /* a single message over the room: cut it to what fits */
                size_t keep = piece.len;
                while (keep > 16 && count(in->tk, piece.data, keep) > room)
                    keep = keep * 3 / 4;
                while (keep > 0 && (piece.data[keep] & 0xC0) == 0x80)
                    keep--;
                if (keep <= 16) {
                    rc = mn__err(MN_TOOBIG, "summarizer: the existing summary leaves no room for new turns"
                                 " within summarizer.input_budget_tokens (%lld)", (long long)budget);
                    break;
                }
                if ((rc = mn__buf_add(&shaped, piece.data, keep)) || (rc = mn__buf_adds(&shaped, " […cut]\n")))
                    break;
                j++;
                turn += in->msgs[j - 1].role == MN_ROLE_USER || turn == 0;
                used = room;
                break;
            }
            if ((rc = mn__buf_add(&shaped, piece.data, piece.len)))
                break;
            turn += in->msgs[j].role == MN_ROLE_USER || turn == 0;
            used += t;
            j++;
        }
        if (rc || (rc = mn__buf_adds(&shaped, "=== END_NEW_TURNS ===\n")))
            break;
        mn_sum_result r;
        memset(&r, 0, sizeof r);
        rc = s->vt->call(s, shaped.data, cap, in, &r);
        out->calls++;
        out->attempts += r.attempts ? r.attempts : 1;
        out->prompt_tokens += r.prompt_tokens;
        out->completion_tokens += r.completion_tokens;
        if (!rc) {
            char *capped = mn__summarize_cap(in->tk, r.text ? r.text : "", cap);
            if (!capped)
                rc = mn__nomem();
            free(summary);
            summary = capped;
            free(out->model);
            out->model = r.model;
            r.model = NULL;
        }
        mn__sum_result_release(&r);
        i = j;
    }
    mn__buf_release(&piece);
    mn__buf_release(&shaped);
    if (!rc && !summary)
        rc = mn__err(MN_UNAVAILABLE, "summarizer: nothing to summarise");
    if (rc) {
        free(summary);
        free(out->model);
        out->model = NULL;
        return rc;
    }
    out->text = summary;
    return MN_OK;
}

/* ---- none ------------------------------------------------------------------------------------ */

static mn_status none_call(mn_summarizer *s, const char *shaped, int64_t cap, const mn_sum_input *in,
                           mn_sum_result *out)
{
    return mn__err(MN_UNAVAILABLE, "summarizer: 'none' is configured (summarizer.name), so folds use the static marker");
}

static void plain_free(mn_summarizer *s) { mn__summarizer_free(s); }

const struct mn_summarizer_vt mn_summarizer_none_vt = {"none", none_call, plain_free};

/* ---- reasoning blocks ------------------------------------------------------------------------ */

/* The byte offset of the first case-insensitive occurrence of `needle` in text, or -1. */
static long find_ci(const char *text, const char *needle)
{
    size_t n = strlen(needle);
    for (const char *p = text; *p; p++) {
        size_t k = 0;
        while (k < n && p[k] && tolower((unsigned char)p[k]) == needle[k])
            k++;
        if (k == n)
            return (long)(p - text);
    }
    return -1;
}

void mn__summarize_strip_think(char *text)
{
    static const char *const tags[][2] = {{"<think>", "</think>"}, {"<thinking>", "</thinking>"}};
    for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) {
        long open;
        while ((open = find_ci(text, tags[t][0])) >= 0) {
            long close = find_ci(text + open, tags[t][1]);
            if (close < 0) { /* left open: everything after it is reasoning */
                text[open] = '\0';
                break;
            }
            size_t from = (size_t)open + (size_t)close + strlen(tags[t][1]);
            memmove(text + open, text + from, strlen(text + from) + 1);
        }
        /* a stray closing tag (the opening one was in the prompt): what precedes it is reasoning */
        long stray;
        while ((stray = find_ci(text, tags[t][1])) >= 0) {
            size_t from = (size_t)stray + strlen(tags[t][1]);
            memmove(text, text + from, strlen(text + from) + 1);
        }
    }
    size_t st = 0, len = strlen(text);
    while (st < len && isspace((unsigned char)text[st]))
        st++;
    while (len > st && isspace((unsigned char)text[len - 1]))
        len--;
    memmove(text, text + st, len - st);
    text[len - st] = '\0';
}

/* ---- responses ------------------------------------------------------------------------------- */

static const char *error_text(json_t *root)
{
    json_t *e = json_object_get(root, "error");
    if (json_is_string(e))
        return json_string_value(e);
    if (json_is_object(e) && json_is_string(json_object_get(e, "message")))
        return json_string_value(json_object_get(e, "message"));
    return e ? "error" : NULL;
}

mn_status mn__summarize_parse_response(const char *protocol, const char *body, size_t len, char **text,
                                      int64_t *prompt_tokens, int64_t *completion_tokens)
{
    *text = NULL;
    *prompt_tokens = *completion_tokens = 0;
    json_error_t jerr;
    json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        return mn__err(MN_INVALID, "summarizer: the response is not a JSON object");
    }
    mn_status rc = MN_OK;
    const char *err = error_text(root);
    json_t *msg = NULL, *finish = NULL;
    int ollama = protocol && strcmp(protocol, "ollama") == 0;
    if (err)
        rc = mn__err(MN_UNAVAILABLE, "summarizer: the model answered with an error: %.200s", err);
    else if (ollama) {
        msg = json_object_get(root, "message");
        finish = json_object_get(root, "done_reason");
        json_t *p = json_object_get(root, "prompt_eval_count"), *c = json_object_get(root, "eval_count");
        *prompt_tokens = json_is_integer(p) ? json_integer_value(p) : 0;
        *completion_tokens = json_is_integer(c) ? json_integer_value(c) : 0;
    } else {
        json_t *choice = json_array_get(json_object_get(root, "choices"), 0);
        if (!json_is_object(choice))
            rc = mn__err(MN_UNAVAILABLE, "summarizer: the response has no choices");
        msg = json_object_get(choice, "message");
        finish = json_object_get(choice, "finish_reason");
        json_t *u = json_object_get(root, "usage");
        json_t *p = json_object_get(u, "prompt_tokens"), *c = json_object_get(u, "completion_tokens");
        *prompt_tokens = json_is_integer(p) ? json_integer_value(p) : 0;
        *completion_tokens = json_is_integer(c) ? json_integer_value(c) : 0;
    }
    const char *content = json_string_value(json_object_get(msg, "content"));
    if (!rc && json_is_string(finish) && strcmp(json_string_value(finish), "length") == 0)
        rc = mn__err(MN_UNAVAILABLE, "summarizer: the summary was cut off at the token limit (finish reason"
                     " 'length'); not used");
    else if (!rc && (!content || !*content))
        rc = mn__err(MN_UNAVAILABLE, "summarizer: the response has no text");
    else if (!rc && !(*text = strdup(content)))
        rc = mn__nomem();
    json_decref(root);
    return rc;
}
