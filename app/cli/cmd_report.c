/*
 * cmd_report.c — text for people from the JSON the library returns: the context report
 * (`mnemo context --report`, `mnemo demo`), its warnings (over budget, too big for the model
 * window), and session events (`mnemo compact`, `mnemo events`). `--json` prints the JSON
 * itself; the text shows the main figures, messages by their position #N (docs/cli.md).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static long long num(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static const char *plural(long long n) { return n == 1 ? "" : "s"; }

/* "extractive" or "llm gpt-4o", then ", 3 attempts" when retried, then ", 12 ms". */
static void print_summarizer(FILE *f, const json_t *ev)
{
    fprintf(f, "%s", str(ev, "summarizer"));
    if (json_is_string(json_object_get(ev, "model")))
        fprintf(f, " %s", str(ev, "model"));
    if (num(ev, "attempts") > 1)
        fprintf(f, ", %lld attempts", num(ev, "attempts"));
    fprintf(f, ", %lld ms", num(ev, "duration_ms"));
}

/* A compaction event (what mn_compact returns and `events` lists) as one sentence. */
static void print_compaction(FILE *f, const json_t *ev)
{
    const char *outcome = str(ev, "outcome");
    long long n = num(ev, "messages_folded");
    if (strcmp(outcome, "nothing_to_fold") == 0) {
        fprintf(f, "nothing to fold: %s", str(ev, "reason"));
        if (json_object_get(ev, "kept_turns"))
            fprintf(f, " (%lld)", num(ev, "kept_turns"));
        return;
    }
    if (strcmp(outcome, "ok") == 0) {
        fprintf(f, "folded %lld message%s (%lld turn%s, up to #%lld) into summary %lld: %lld tokens -> %lld (", n,
                plural(n), num(ev, "turns_folded"), plural(num(ev, "turns_folded")), num(ev, "covers_upto"),
                num(ev, "summary_id"), num(ev, "tokens_before"), num(ev, "tokens_after"));
        print_summarizer(f, ev);
        fputc(')', f);
    } else if (strcmp(outcome, "rolled_back") == 0) {
        fprintf(f, "rolled back: a summary of %lld message%s (up to #%lld) would not be shorter (%lld tokens -> %lld); "
                   "nothing changed (", n, plural(n), num(ev, "covers_upto"), num(ev, "tokens_before"),
                num(ev, "tokens_after"));
        print_summarizer(f, ev);
        fputc(')', f);
    } else {
        fprintf(f, "%s", outcome);
        if (json_is_string(json_object_get(ev, "error")))
            fprintf(f, ": %s", str(ev, "error"));
        if (n) {
            fprintf(f, "; nothing changed (%lld message%s up to #%lld, ", n, plural(n), num(ev, "covers_upto"));
            print_summarizer(f, ev);
            fputc(')', f);
        }
    }
    if (json_is_string(json_object_get(ev, "instructions")))
        fprintf(f, "; instructions: \"%s\"", str(ev, "instructions"));
}

/* Members of an event of a kind this file does not know, as key=value (scalars only). */
static void print_scalars(FILE *f, const json_t *data)
{
    const char *key;
    json_t *v;
    const char *sep = ": ";
    json_object_foreach((json_t *)data, key, v) {
        if (json_is_string(v))
            fprintf(f, "%s%s=%s", sep, key, json_string_value(v));
        else if (json_is_integer(v))
            fprintf(f, "%s%s=%lld", sep, key, (long long)json_integer_value(v));
        else if (json_is_real(v))
            fprintf(f, "%s%s=%g", sep, key, json_real_value(v));
        else if (json_is_boolean(v))
            fprintf(f, "%s%s=%s", sep, key, json_is_true(v) ? "true" : "false");
        else
            continue;
        sep = ", ";
    }
}

/* One event of `mnemo events`: "KIND (…): what happened". */
static void print_event(FILE *f, const char *kind, const json_t *data)
{
    fprintf(f, "%s", kind);
    if (strcmp(kind, "compaction") == 0) {
        if (json_is_true(json_object_get(data, "automatic")))
            fprintf(f, " (automatic, trigger %s): ", str(data, "trigger"));
        else if (json_is_string(json_object_get(data, "trigger")))
            fprintf(f, " (%s): ", str(data, "trigger"));
        else
            fprintf(f, ": ");
        print_compaction(f, data);
    } else if (strcmp(kind, "message_edited") == 0)
        fprintf(f, ": #%lld, %lld -> %lld tokens", num(data, "seq"), num(data, "tokens_before"),
                num(data, "tokens_after"));
    else if (strcmp(kind, "summary_dropped") == 0) {
        fprintf(f, " (%s): %lld summar%s dropped", str(data, "reason"), num(data, "summaries"),
                num(data, "summaries") == 1 ? "y" : "ies");
        if (json_object_get(data, "seq"))
            fprintf(f, ", covering #%lld", num(data, "seq"));
        else if (json_object_get(data, "cleared_seq"))
            fprintf(f, ", past #%lld", num(data, "cleared_seq"));
    } else if (strcmp(kind, "memory_extract_rejected") == 0)
        fprintf(f, " (%s): %s", str(data, "stage"), str(data, "error"));
    else
        print_scalars(f, data);
}

/* The library's JSON did not parse (out of memory): the JSON is better than nothing. */
static void print_raw(const char *json, json_t *parsed)
{
    puts(json);
    json_decref(parsed);
}

void cli_print_compaction_text(const char *event_json)
{
    json_t *ev = json_loads(event_json, 0, NULL);
    if (!json_is_object(ev)) {
        print_raw(event_json, ev);
        return;
    }
    print_compaction(stdout, ev);
    putchar('\n');
    json_decref(ev);
}

void cli_print_events_text(const char *events_json)
{
    json_t *arr = json_loads(events_json, 0, NULL);
    if (!json_is_array(arr)) {
        print_raw(events_json, arr);
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        char when[32];
        cli_time(num(e, "created_at"), when, sizeof when);
        printf("%s  ", when);
        print_event(stdout, str(e, "kind"), json_object_get(e, "data"));
        putchar('\n');
    }
    if (json_array_size(arr) == 0)
        puts("no events");
    json_decref(arr);
}

/* "messages: 2 of 5 kept (#4 to #5), 3 dropped (3 for the budget)" */
static void print_messages_line(FILE *f, const json_t *r)
{
    const json_t *m = json_object_get(r, "messages"), *d = json_object_get(r, "dropped");
    long long kept = num(m, "kept"), dropped = num(m, "dropped");
    fprintf(f, "messages: %lld of %lld kept", kept, num(m, "total"));
    if (kept == 1)
        fprintf(f, " (#%lld)", num(m, "first_kept_seq"));
    else if (kept > 1)
        fprintf(f, " (#%lld to #%lld)", num(m, "first_kept_seq"), num(m, "last_kept_seq"));
    if (dropped) {
        fprintf(f, ", %lld dropped", dropped);
        static const char *const why[][2] = {{"budget", "for the budget"},
                                             {"orphan_tool_result", "tool results without their call"},
                                             {"unmatched_tool_call", "tool calls without all their results"}};
        const char *sep = " (";
        long long rest = dropped;
        for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
            if (num(d, why[i][0])) {
                fprintf(f, "%s%lld %s", sep, num(d, why[i][0]), why[i][1]);
                rest -= num(d, why[i][0]);
                sep = ", ";
            }
        if (rest > 0 && json_is_object(json_object_get(r, "summary"))) { /* dropped.budget leaves them out */
            fprintf(f, "%s%lld in the summary", sep, rest);
            sep = ", ";
        }
        if (strcmp(sep, ", ") == 0)
            fputc(')', f);
    }
    fputc('\n', f);
}

static void print_rag(FILE *f, const json_t *rag)
{
    fprintf(f, "retrieval (%s, scope %s): ", str(rag, "mode"), str(rag, "scope"));
    size_t n = json_array_size(json_object_get(rag, "injected"));
    if (json_is_string(json_object_get(rag, "skipped")))
        fprintf(f, "skipped: %s", str(rag, "skipped"));
    else if (n) {
        fprintf(f, "%zu past message%s injected, %lld tokens", n, n == 1 ? "" : "s", num(rag, "tokens_added"));
        if (num(rag, "left_out_for_budget"))
            fprintf(f, ", %lld left out for the budget", num(rag, "left_out_for_budget"));
    } else
        fprintf(f, "nothing relevant");
    if (num(rag, "not_embedded"))
        fprintf(f, " (%lld message%s not embedded yet)", num(rag, "not_embedded"), plural(num(rag, "not_embedded")));
    fputc('\n', f);
}

static void print_memories(FILE *f, const json_t *mem)
{
    const json_t *in = json_object_get(mem, "included"), *out = json_object_get(mem, "left_out");
    size_t i, blocks = 0, budget = 0, cap = 0;
    json_t *e;
    json_array_foreach((json_t *)in, i, e) blocks += json_is_true(json_object_get(e, "pinned"));
    json_array_foreach((json_t *)out, i, e) {
        budget += strcmp(str(e, "reason"), "budget") == 0;
        cap += strcmp(str(e, "reason"), "token_cap") == 0;
    }
    fprintf(f, "memories (%s): %zu in (%zu block%s, %zu relevant), %lld tokens", str(mem, "mode"),
            json_array_size(in), blocks, blocks == 1 ? "" : "s", json_array_size(in) - blocks, num(mem, "tokens"));
    if (json_array_size(out))
        fprintf(f, "; %zu left out (%zu for the budget, %zu past a token cap)", json_array_size(out), budget, cap);
    if (json_is_string(json_object_get(mem, "skipped")))
        fprintf(f, "; no search: %s", str(mem, "skipped"));
    fputc('\n', f);
}

static void print_governance(FILE *f, const json_t *gov)
{
    const json_t *t = json_object_get(gov, "tool_outputs"), *loop = json_object_get(gov, "loop");
    if (num(t, "trimmed") || num(t, "offloaded") || num(t, "offload_failed"))
        fprintf(f,
                "tool outputs: %lld trimmed, %lld offloaded (%lld failed), %lld characters removed, %lld tokens "
                "saved\n",
                num(t, "trimmed"), num(t, "offloaded"), num(t, "offload_failed"), num(t, "chars_removed"),
                num(t, "tokens_saved"));
    if (json_is_object(loop))
        fprintf(f, "loop: %s repeated %lld times since #%lld\n", str(loop, "tool"), num(loop, "repeats"),
                num(loop, "since_seq"));
}

void cli_print_report_text(FILE *f, const char *report_json)
{
    json_t *r = json_loads(report_json, 0, NULL);
    if (!json_is_object(r)) { /* out of memory: the JSON is better than nothing */
        fprintf(f, "%s\n", report_json);
        json_decref(r);
        return;
    }
    fprintf(f, "strategy %s, format %s, tokenizer %s\n", str(r, "strategy"), str(r, "format"), str(r, "tokenizer"));
    const json_t *parts = json_object_get(r, "parts");
    fprintf(f, "tokens: %lld of %lld", num(r, "tokens"), num(r, "max_tokens"));
    if (json_is_true(json_object_get(r, "over_budget")))
        fprintf(f, ", %lld over the budget", num(r, "shortfall"));
    fprintf(f, " (system %lld, messages %lld, framing %lld)\n", num(parts, "system"), num(parts, "messages"),
            num(parts, "framing"));
    print_messages_line(f, r);
    const json_t *turn = json_object_get(r, "current_turn");
    if (json_is_object(turn)) {
        fprintf(f, "current turn: user message #%lld", num(turn, "user_seq"));
        if (num(turn, "steps"))
            fprintf(f, " and %lld step%s after it (%lld left out for the budget)", num(turn, "steps"),
                    plural(num(turn, "steps")), num(turn, "steps_dropped"));
        fputc('\n', f);
    }
    const json_t *sum = json_object_get(r, "summary");
    if (json_is_object(sum)) {
        fprintf(f, "summary %lld: covers up to #%lld (%lld message%s), %lld tokens, %s", num(sum, "id"),
                num(sum, "covers_upto"), num(sum, "folded"), plural(num(sum, "folded")), num(sum, "tokens"),
                str(sum, "summarizer"));
        if (json_is_string(json_object_get(sum, "model")))
            fprintf(f, " %s", str(sum, "model"));
        fprintf(f, "%s%s\n", json_is_true(json_object_get(sum, "cut")) ? ", cut to fit" : "",
                json_is_false(json_object_get(sum, "shown")) ? ", not sent" : "");
    }
    const json_t *fold = json_object_get(r, "fold");
    if (json_is_object(fold) && strcmp(str(fold, "outcome"), "none") != 0) {
        fprintf(f, "fold (%s", str(fold, "mode"));
        if (json_is_string(json_object_get(fold, "trigger")))
            fprintf(f, ", trigger %s", str(fold, "trigger"));
        fprintf(f, "): ");
        if (json_is_object(json_object_get(fold, "event")))
            print_compaction(f, json_object_get(fold, "event"));
        else
            fprintf(f, "%s", str(fold, "outcome"));
        fputc('\n', f);
    }
    if (num(r, "marker"))
        fprintf(f, "marker: stands for %lld message%s left out\n", num(r, "marker"), plural(num(r, "marker")));
    print_governance(f, json_object_get(r, "governance"));
    const json_t *pre = json_object_get(r, "preflight");
    if (json_is_object(pre))
        fprintf(f, "model window %lld: %lld needed (%lld + %lld reserved for the reply + %lld of safety margin), %s\n",
                num(pre, "model_window"), num(pre, "needed"), num(r, "tokens"), num(pre, "reserve_tokens"),
                num(pre, "safety_margin"), json_is_true(json_object_get(pre, "fits")) ? "fits" : "does not fit");
    if (json_is_object(json_object_get(r, "memories")))
        print_memories(f, json_object_get(r, "memories"));
    if (json_is_object(json_object_get(r, "rag")))
        print_rag(f, json_object_get(r, "rag"));
    const json_t *detail = json_object_get(r, "detail");
    if (json_is_array(detail)) {
        fprintf(f, "detail:\n");
        size_t i;
        json_t *e;
        json_array_foreach((json_t *)detail, i, e) {
            fprintf(f, "  #%-5lld %-17s", num(e, "seq"), str(e, "fate"));
            if (json_object_get(e, "tokens"))
                fprintf(f, " %lld tokens", num(e, "tokens"));
            fputc('\n', f);
        }
    }
    json_decref(r);
}

void cli_context_warnings(const char *report_json, long long max_tokens_flag)
{
    json_t *r = json_loads(report_json, 0, NULL);
    const json_t *pre = json_object_get(r, "preflight");
    long long tokens = num(r, "tokens"), budget = num(r, "max_tokens");
    if (json_is_true(json_object_get(r, "over_budget"))) {
        /* where the budget came from decides what to change */
        char from[96];
        const char *fix;
        if (max_tokens_flag) {
            snprintf(from, sizeof from, "--max-tokens %lld", budget);
            fix = "raise --max-tokens";
        } else if (json_is_object(pre)) {
            snprintf(from, sizeof from, "the history share (%lld) of the model window %lld", budget,
                     num(pre, "model_window"));
            fix = "give a larger --max-tokens";
        } else {
            snprintf(from, sizeof from, "memory.max_history_tokens %lld", budget);
            fix = "raise memory.max_history_tokens (or give --max-tokens)";
        }
        fprintf(stderr,
                "mnemo: warning: the context is over its budget: %lld tokens for %s (%lld over): the system prompt "
                "and the newest turn alone do not fit, so nothing older was sent; %s, or shorten the system prompt\n",
                tokens, from, num(r, "shortfall"), fix);
    }
    if (json_is_object(pre) && json_is_false(json_object_get(pre, "fits")))
        fprintf(stderr,
                "mnemo: warning: the context does not fit the model window of %lld tokens: %lld needed (%lld of "
                "context, %lld reserved for the reply, %lld of safety margin); lower --max-tokens, or "
                "context.reserve_tokens or context.safety_margin\n",
                num(pre, "model_window"), num(pre, "needed"), tokens, num(pre, "reserve_tokens"),
                num(pre, "safety_margin"));
    json_decref(r);
}
