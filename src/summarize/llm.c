/*
 * llm.c — the `llm` summariser: one chat request per stage to an OpenAI-compatible
 * /v1/chat/completions or to Ollama's /api/chat ("stream": false), temperature 0, the reply
 * capped with max_tokens / num_predict. A reply cut off at the limit ("length") is a failure,
 * never a summary; reasoning blocks (<think>…</think>) are removed from the reply; usage tokens
 * are returned. The instructions are built in or read from summarizer.prompt_file; a
 * compaction's focus (mn_sum_input.instructions) follows them. Retries and timeouts are
 * src/http's.
 */
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "summarize/summarize.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

static const char SYSTEM[] = "You are a conversation summariser. Return only the summary.";

static const char INSTRUCTIONS[] =
    "Update the conversation summary so that it also covers NEW_TURNS. Keep the existing summary's facts unless"
    " the new turns change them. Preserve: the user's goal and rules; decisions and their reasons; file paths;"
    " tool names; errors and how they were resolved; work already finished (so it is not redone); open tasks"
    " and next steps; exact numbers, names and identifiers. Be brief, use short lines, no preamble. Stay within"
    " %lld tokens.\n\n";

static mn_status url_for(const mn_summarizer_cfg *c, struct mn_buf *url)
{
    size_t len = strlen(c->base_url);
    while (len && c->base_url[len - 1] == '/')
        len--;
    if (len == 0)
        return mn__err(MN_UNAVAILABLE, "summarizer.base_url is not set (the llm summariser needs a server)");
    mn_status rc = mn__buf_add(url, c->base_url, len);
    if (rc)
        return rc;
    if (strcmp(c->protocol, "ollama") == 0)
        return mn__buf_adds(url, "/api/chat");
    if (len >= 3 && strncmp(c->base_url + len - 3, "/v1", 3) == 0)
        return mn__buf_adds(url, "/chat/completions");
    return mn__buf_adds(url, "/v1/chat/completions");
}

/* The user message: instructions (built in, or the prompt file's text followed by the cap), the
 * caller's focus, then the shaped input. The prompt file is text, never a format string. */
static mn_status build_prompt(const mn_summarizer *s, const mn_sum_input *in, int64_t cap, const char *shaped,
                              struct mn_buf *prompt)
{
    mn_status rc = s->prompt ? mn__buf_adds(prompt, s->prompt) : mn__buf_addf(prompt, INSTRUCTIONS, (long long)cap);
    if (!rc && s->prompt)
        rc = mn__buf_addf(prompt, "\nStay within %lld tokens.\n\n", (long long)cap);
    if (!rc && in && in->instructions && *in->instructions)
        rc = mn__buf_addf(prompt, "Focus of this compaction, from the user (keep what it names first): %s\n\n",
                         in->instructions);
    if (!rc)
        rc = mn__buf_adds(prompt, shaped);
    return rc;
}

static mn_status llm_call(mn_summarizer *s, const char *shaped, int64_t cap, const mn_sum_input *in,
                          mn_sum_result *out)
{
    const mn_summarizer_cfg *c = &s->cfg;
    if (!c->model || !*c->model)
        return mn__err(MN_UNAVAILABLE, "summarizer.model is not set (the llm summariser needs a model)");
    struct mn_buf url = MN_BUF_INIT, prompt = MN_BUF_INIT;
    mn_status rc = url_for(c, &url);
    if (!rc)
        rc = build_prompt(s, in, cap, shaped, &prompt);
    char *body = NULL;
    if (!rc) {
        int ollama = strcmp(c->protocol, "ollama") == 0;
        json_t *req = json_pack("{s:s, s:[{s:s, s:s}, {s:s, s:s}], s:b}", "model", c->model, "messages", "role",
                                "system", "content", SYSTEM, "role", "user", "content", prompt.data, "stream", 0);
        if (req && ollama)
            json_object_set_new(req, "options", json_pack("{s:i, s:I}", "temperature", 0, "num_predict", (json_int_t)cap));
        else if (req) {
            json_object_set_new(req, "temperature", json_integer(0));
            json_object_set_new(req, "max_tokens", json_integer(cap));
        }
        body = req ? mn__json_dump(req) : NULL;
        json_decref(req);
        if (!body)
            rc = mn__nomem();
    }
    mn_http_resp resp;
    memset(&resp, 0, sizeof resp);
    if (!rc) {
        int64_t timeout = c->timeout_ms > 0 ? c->timeout_ms : 30000;
        int retries = c->retries;
        if (in->deadline_ms > 0) { /* a build waits no longer than its deadline: every attempt
                                      ends by it and no retry starts that could not */
            int64_t left = in->deadline_ms - mn__clock_now_ms();
            if (left < 100)
                left = 100;
            if (timeout > left)
                timeout = left;
            int64_t fit = left / timeout - 1;
            if (retries > fit)
                retries = fit > 0 ? (int)fit : 0;
        }
        mn_http_req hr = {url.data, body, c->api_key, timeout, retries, c->backoff_ms > 0 ? c->backoff_ms : 500};
        rc = mn__http_post_json(&hr, &resp);
        out->attempts = resp.attempts;
        if (rc)
            rc = mn__err(rc, "summarizer: %s", mn_errmsg());
    }
    if (!rc && resp.status != 200) {
        char *text = NULL;
        int64_t p, q;
        mn_status prc = mn__summarize_parse_response(c->protocol, resp.body, resp.len, &text, &p, &q);
        free(text);
        rc = mn__err(MN_UNAVAILABLE, "summarizer: HTTP %ld from %s after %d attempt(s)%s%.200s", resp.status, url.data,
                     resp.attempts, prc == MN_UNAVAILABLE ? ": " : "", prc == MN_UNAVAILABLE ? mn_errmsg() : "");
    }
    if (!rc)
        rc = mn__summarize_parse_response(c->protocol, resp.body, resp.len, &out->text, &out->prompt_tokens,
                                         &out->completion_tokens);
    if (!rc) {
        mn__summarize_strip_think(out->text);
        if (!*out->text)
            rc = mn__err(MN_UNAVAILABLE, "summarizer: the reply held only reasoning (<think>), no summary");
    }
    if (!rc && !(out->model = strdup(c->model)))
        rc = mn__nomem();
    mn__http_resp_release(&resp);
    free(body);
    mn__buf_release(&url);
    mn__buf_release(&prompt);
    return rc;
}

static void llm_free(mn_summarizer *s) { mn__summarizer_free(s); }

const struct mn_summarizer_vt mn_summarizer_llm_vt = {"llm", llm_call, llm_free};
