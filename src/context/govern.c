/*
 * govern.c — tool-output governance, applied inside every context walk before a unit is costed:
 * trimming old tool results to head + tail, offloading them to files when prunable tool output
 * is large, and loop detection (the same tool call, name + arguments, repeated in a row).
 * Design notes: docs/context.md ("Tool-output governance").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "context/context.h"
#include "memory/message.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/sha256.h"
#include "util/utf8.h"
#include "util/banned.h"

#define PREVIEW_CHARS 240 /* head and tail of an offloaded output's preview, each */

/* The text governance measures: JSON content serialised compactly, other text as stored. */
static char *measured_text(struct mn_arena *a, const char *content, int *oom)
{
    const char *p = content;
    while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
        p++;
    if (*p == '{' || *p == '[') {
        json_t *v = json_loads(content, 0, NULL);
        char *dump = v ? mn__json_dump(v) : NULL;
        json_decref(v);
        if (dump) {
            char *copy = mn__arena_strndup(a, dump, strlen(dump));
            free(dump);
            *oom = !copy;
            return copy;
        }
    }
    return (char *)content;
}

/* head + marker + tail of text (chars characters), as a new arena string. */
static char *head_tail(struct mn_arena *a, const char *text, size_t len, size_t chars, size_t head_chars,
                       size_t tail_chars, const char *marker_fmt, const char *arg)
{
    size_t head = mn__utf8_prefix(text, len, head_chars);
    size_t tail_start = mn__utf8_prefix(text, len, chars - tail_chars);
    struct mn_buf b = MN_BUF_INIT;
    char *out = NULL;
    if (!mn__buf_add(&b, text, head) && !mn__buf_adds(&b, "\n") && !mn__buf_addf(&b, marker_fmt, chars, arg) &&
        !mn__buf_adds(&b, "\n") && !mn__buf_add(&b, text + tail_start, len - tail_start))
        out = mn__arena_strndup(a, b.data, b.len);
    mn__buf_release(&b);
    return out;
}

/* Writes the full output once (temp file + rename); the path into path. */
static int offload_write(const struct mn_gov *g, const mn_message *m, const char *text, size_t len, char *path,
                         size_t cap)
{
    char dir[4096];
    if (!g->offload_dir || !*g->offload_dir || !m->session_id)
        return -1;
    if ((size_t)snprintf(dir, sizeof dir, "%s/tool-outputs/%s", g->offload_dir, m->session_id) >= sizeof dir)
        return -1;
    if ((size_t)snprintf(path, cap, "%s/%lld.txt", dir, (long long)m->seq) >= cap)
        return -1;
    struct stat st;
    if (stat(path, &st) == 0 && (size_t)st.st_size == len)
        return 0; /* written by an earlier build */
    char parent[4200];
    if ((size_t)snprintf(parent, sizeof parent, "%s/tool-outputs", g->offload_dir) >= sizeof parent)
        return -1;
    if ((mkdir(parent, 0700) != 0 && errno != EEXIST) || (mkdir(dir, 0700) != 0 && errno != EEXIST))
        return -1;
    char tmp[4400];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return -1;
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int bad = fwrite(text, 1, len, f) != len;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

void mn__gov_mark(const struct mn_gov *g, int64_t seq, const char *fate)
{
    char key[24];
    if (!g || !g->marks || seq <= 0)
        return;
    snprintf(key, sizeof key, "%lld", (long long)seq);
    json_object_set_new(g->marks, key, json_string(fate)); /* on OOM the detail is short, never wrong */
}

mn_status mn__gov_results(struct mn_gov *g, struct mn_arena *a, mn_message *results, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mn_message *m = &results[i];
        int64_t before = m->tokens;
        g->seen_tool_tokens += before;
        /* results[0] is the newest; the walk has met the call, older than all of them, last */
        int64_t age = g->walked - 1 - (int64_t)n + (int64_t)i;
        if (age < g->protect_messages || !m->content)
            continue;
        int oom = 0;
        const char *text = measured_text(a, m->content, &oom);
        if (oom)
            return mn__nomem();
        size_t len = strlen(text);
        if (!mn__utf8_valid(text, len, NULL))
            continue;
        size_t chars = mn__utf8_chars(text, len);
        char *out = NULL;
        int protect = g->seen_tool_tokens <= g->protect_tokens;
        if (g->offload && !protect && !g->decided) {
            /* everything older than this is prunable: the total minus what the walk has passed */
            int64_t prunable = g->total_tool_tokens - (g->seen_tool_tokens - before);
            g->decided = 1;
            g->active = prunable > g->offload_threshold;
        }
        if (g->offload && g->active && !protect && chars > 2 * PREVIEW_CHARS + 64) {
            char path[4300];
            if (offload_write(g, m, text, len, path, sizeof path) == 0) {
                out = head_tail(a, text, len, chars, PREVIEW_CHARS, PREVIEW_CHARS,
                                "[…offloaded, %zu chars total; full output in %s]", path);
                if (!out)
                    return mn__nomem();
                g->offloaded++;
                mn__gov_mark(g, m->seq, "offloaded");
            } else
                g->offload_failed++;
        }
        if (!out && g->trim_chars > 0 && chars > (size_t)g->trim_chars) {
            size_t keep = (size_t)g->trim_chars;
            out = head_tail(a, text, len, chars, keep / 2, keep / 2, "[…truncated, %zu chars total]%s", "");
            if (!out)
                return mn__nomem();
            g->trimmed++;
            mn__gov_mark(g, m->seq, "trimmed");
        }
        if (!out)
            continue;
        g->chars_removed += (int64_t)chars - (int64_t)mn__utf8_chars(out, strlen(out));
        m->content = out;
        m->tokens = mn__message_tokens(g->tk, m);
        g->tokens_saved += before - m->tokens;
    }
    return MN_OK;
}

void mn__gov_note(struct mn_gov *g, const mn_message *m)
{
    if (g->loop_frozen || g->loop_repeat <= 0)
        return;
    if (m->role == MN_ROLE_USER) {
        g->loop_frozen = 1;
        return;
    }
    /* the signature: name + arguments of every call, canonical JSON, hashed */
    json_t *calls = json_loads(m->tool_calls, 0, NULL), *sig = json_array();
    size_t k;
    json_t *c;
    json_array_foreach(calls, k, c)
    {
        json_t *fn = json_object_get(c, "function");
        json_array_append(sig, json_object_get(fn, "name") ? json_object_get(fn, "name") : json_null());
        json_array_append(sig, json_object_get(fn, "arguments") ? json_object_get(fn, "arguments") : json_null());
    }
    char *text = mn__json_dump(sig);
    char hex[MN_SHA256_HEX + 1] = "";
    if (text)
        mn__sha256_hex(text, strlen(text), hex);
    const char *name = json_string_value(json_object_get(json_object_get(json_array_get(calls, 0), "function"), "name"));
    if (g->loop_run > 0 && strcmp(hex, g->loop_sig) == 0) {
        g->loop_run++;
        g->loop_seq = m->seq;
    } else if (g->loop_run == 0) {
        snprintf(g->loop_sig, sizeof g->loop_sig, "%s", hex);
        snprintf(g->loop_name, sizeof g->loop_name, "%s", name ? name : "?");
        g->loop_run = 1;
        g->loop_seq = m->seq;
    } else
        g->loop_frozen = 1;
    free(text);
    json_decref(sig);
    json_decref(calls);
}

json_t *mn__gov_report(const struct mn_gov *g)
{
    json_t *loop = g->loop_repeat > 0 && g->loop_run >= g->loop_repeat
                       ? json_pack("{s:s, s:I, s:I}", "tool", g->loop_name, "repeats", (json_int_t)g->loop_run,
                                   "since_seq", (json_int_t)g->loop_seq)
                       : json_null();
    return json_pack("{s:{s:I, s:I, s:I, s:I, s:I}, s:o}", "tool_outputs", "trimmed", (json_int_t)g->trimmed,
                     "offloaded", (json_int_t)g->offloaded, "offload_failed", (json_int_t)g->offload_failed,
                     "chars_removed", (json_int_t)g->chars_removed, "tokens_saved", (json_int_t)g->tokens_saved,
                     "loop", loop);
}
