/*
 * cmd_chat.c — `mnemo chat [SESSION | --resume]`: an interactive chat with a model, mnemo as its
 * memory (docs/chat.md). A new session is created with the first user turn (seed 001: lazily).
 * Each user turn is appended before the model is asked; the reply streams and is stored by
 * mn_chat_reply when whole. Slash commands drive the engine's operations. Ctrl-C stops a reply
 * (the user turn stays, the partial reply is dropped); Ctrl-D or /exit leaves. Reads plain lines
 * when standard input is not a terminal, so it can be scripted. A due fold never delays a reply:
 * it runs on a thread of its own after the reply is stored (docs/chat.md "Folding").
 */
#include <jansson.h>
#include <readline/history.h>
#include <readline/readline.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli/chat_folds.h"
#include "cli/cli.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

struct chat {
    mn_db *db;
    char id[64]; /* "": no session yet, the next user turn creates one */
    int tty;
    mn_context_opts ctx;
    const char *model;
    char *system; /* the system prompt of a session chat creates (--system, chat.system_prompt); NULL: none */
    struct folds folds;
};

static int on_text(void *user, const char *text, size_t len)
{
    (void)user;
    if (interrupted)
        return 1;
    if (len) {
        fwrite(text, 1, len, stdout);
        fflush(stdout);
    }
    return 0;
}

/* Readline's key reader while a question waits for its answer: like rl_getc, except that Ctrl-C
 * ends the question (an Enter; the caller sees `interrupted`) instead of being read past. */
static int key_or_interrupt(FILE *in)
{
    for (;;) {
        unsigned char key;
        ssize_t n = read(fileno(in), &key, 1);
        if (n == 1)
            return key;
        if (n == 0 || errno != EINTR)
            return EOF;
        rl_check_signals(); /* readline's handler hands SIGINT on to on_sigint */
        if (interrupted)
            return '\n';
    }
}

/* One line of input without its newline (malloc'd), NULL at the end. */
static char *read_line(const struct chat *c, const char *prompt)
{
    if (c->tty) {
        char *line = readline(prompt);
        if (line && *line)
            add_history(line);
        return line;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    return line;
}

/* Asks question and reads the answer: 1 for y or yes. Ctrl-C cancels (0, *cancelled set), as it
 * stops a reply elsewhere in chat; the end of input is no. */
static int confirmed(const struct chat *c, const char *question, int *cancelled)
{
    printf("%s [y/N] ", question);
    fflush(stdout);
    interrupted = 0; /* a Ctrl-C from before the question is not its answer */
    rl_getc_func_t *getc_before = rl_getc_function;
    rl_getc_function = key_or_interrupt;
    char *answer = read_line(c, "");
    rl_getc_function = getc_before;
    *cancelled = interrupted;
    int yes = !interrupted && answer && (strcmp(answer, "y") == 0 || strcmp(answer, "yes") == 0);
    free(answer);
    if (interrupted && !c->tty)
        clearerr(stdin); /* the read was interrupted, the input goes on */
    interrupted = 0;
    return yes;
}

static long long jint(json_t *o, const char *path)
{
    char key[64];
    snprintf(key, sizeof key, "%s", path);
    json_t *v = o;
    for (char *part = key; part && v;) { /* "a.b": each dot-separated member in turn */
        char *dot = strchr(part, '.');
        if (dot)
            *dot = '\0';
        v = json_object_get(v, part);
        part = dot ? dot + 1 : NULL;
    }
    return json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* The string at a dotted path of o ("" when absent or not a string). */
static const char *jstr(json_t *o, const char *path)
{
    char key[64];
    snprintf(key, sizeof key, "%s", path);
    json_t *v = o;
    for (char *part = key; part && v;) {
        char *dot = strchr(part, '.');
        if (dot)
            *dot = '\0';
        v = json_object_get(v, part);
        part = dot ? dot + 1 : NULL;
    }
    return json_is_string(v) ? json_string_value(v) : "";
}

/* One part of the status line: its words, shorter words for a narrow terminal, and its rank:
 * when the line is too wide, parts take their short form and then leave, rank 1 first; the
 * context's tokens (the highest rank) never leave. */
struct part {
    char full[192], brief[96]; /* room for every count at its largest */
    int rank, short_form, gone;
};
enum { PARTS = 8 };

/* The brief form the same as the full one: these counts are short in both (cut if not). */
static void copy_brief(struct part *q)
{
    size_t n = strnlen(q->full, sizeof q->brief - 1);
    memcpy(q->brief, q->full, n);
    q->brief[n] = '\0';
}

static struct part *add_part(struct part *p, size_t *n, int rank)
{
    struct part *q = &p[(*n)++];
    memset(q, 0, sizeof *q);
    q->rank = rank;
    return q;
}

/* v, or "?" when the provider did not report it (negative), into buf. */
static const char *count_or_unknown(long long v, char *buf, size_t cap)
{
    if (v < 0)
        return "?";
    snprintf(buf, cap, "%lld", v);
    return buf;
}

/* The parts of the status line after a reply: the context from its report, then the provider's
 * usage and the session's totals. */
static size_t status_parts(const mn_chat_result *r, struct part *p)
{
    json_t *j = json_loads(r->report, 0, NULL);
    size_t n = 0;
    struct part *q = add_part(p, &n, PARTS);
    snprintf(q->full, sizeof q->full, "context %lld/%lld tokens", jint(j, "tokens"), jint(j, "max_tokens"));
    snprintf(q->brief, sizeof q->brief, "ctx %lld/%lld", jint(j, "tokens"), jint(j, "max_tokens"));
    q = add_part(p, &n, 2);
    snprintf(q->full, sizeof q->full, "%lld kept", jint(j, "messages.kept"));
    copy_brief(q);
    if (jint(j, "messages.dropped")) {
        q = add_part(p, &n, 5);
        snprintf(q->full, sizeof q->full, "%lld dropped", jint(j, "messages.dropped"));
        copy_brief(q);
    }
    if (jint(j, "summary.folded")) {
        q = add_part(p, &n, 6);
        snprintf(q->full, sizeof q->full, "%lld folded into the summary", jint(j, "summary.folded"));
        snprintf(q->brief, sizeof q->brief, "%lld folded", jint(j, "summary.folded"));
    }
    if (jint(j, "governance.tool_outputs.trimmed")) {
        q = add_part(p, &n, 3);
        snprintf(q->full, sizeof q->full, "%lld tool outputs trimmed", jint(j, "governance.tool_outputs.trimmed"));
        snprintf(q->brief, sizeof q->brief, "%lld trimmed", jint(j, "governance.tool_outputs.trimmed"));
    }
    if (strcmp(jstr(j, "fold.outcome"), "queued") == 0) {
        q = add_part(p, &n, 7);
        snprintf(q->full, sizeof q->full, "folding into the summary in the background");
        snprintf(q->brief, sizeof q->brief, "folding");
    }
    json_decref(j);
    q = add_part(p, &n, 4);
    snprintf(q->full, sizeof q->full, "model usage:%s",
             r->prompt_tokens < 0 && r->completion_tokens < 0 ? " not reported" : "");
    const char *names[] = {"prompt", "completion", "cached"};
    const long long values[] = {r->prompt_tokens, r->completion_tokens, r->cached_tokens};
    for (size_t i = 0; i < 3; i++) {
        size_t len = strlen(q->full);
        if (values[i] >= 0)
            snprintf(q->full + len, sizeof q->full - len, " %s %lld", names[i], values[i]);
    }
    char a[24], b[24];
    snprintf(q->brief, sizeof q->brief, "usage %s+%s", count_or_unknown(r->prompt_tokens, a, sizeof a),
             count_or_unknown(r->completion_tokens, b, sizeof b));
    if (r->cached_tokens > 0)
        snprintf(q->brief + strlen(q->brief), sizeof q->brief - strlen(q->brief), ", %lld cached",
                 (long long)r->cached_tokens);
    q = add_part(p, &n, 1);
    snprintf(q->full, sizeof q->full, "session: %lld turns, %lld prompt + %lld completion tokens",
             (long long)r->session_turns, (long long)r->session_prompt_tokens, (long long)r->session_completion_tokens);
    if (r->session_cached_tokens)
        snprintf(q->full + strlen(q->full), sizeof q->full - strlen(q->full), ", %lld cached",
                 (long long)r->session_cached_tokens);
    snprintf(q->brief, sizeof q->brief, "session %lld turns", (long long)r->session_turns);
    return n;
}

/* Screen columns of UTF-8 text: one a character (the line holds no wide ones). */
static size_t columns_of(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

static void status_render(const struct part *p, size_t n, char *out, size_t cap)
{
    snprintf(out, cap, "[");
    size_t len = strlen(out);
    const char *sep = "";
    for (size_t i = 0; i < n; i++) {
        if (p[i].gone)
            continue;
        snprintf(out + len, cap - len, "%s%s", sep, p[i].short_form ? p[i].brief : p[i].full);
        len = strlen(out);
        sep = " · ";
    }
    snprintf(out + len, cap - len, "]");
}

/* The status line within width columns (0: no limit): first shorter words, the part of the
 * lowest rank first, then fewer parts in the same order, never a part cut. It stays a column
 * short of the width, so that no terminal wraps it. */
static void status_fit(struct part *p, size_t n, size_t width, char *out, size_t cap)
{
    status_render(p, n, out, cap);
    for (int step = 0; step < 2; step++)
        for (int rank = 1; rank <= PARTS - step; rank++)
            for (size_t i = 0; i < n; i++) {
                if (!width || columns_of(out) < width)
                    return;
                if (p[i].rank != rank)
                    continue;
                if (step)
                    p[i].gone = 1;
                else
                    p[i].short_form = 1;
                status_render(p, n, out, cap);
            }
}

/* The width the status line must fit: the terminal's, asked each time (it may have been
 * resized), else COLUMNS; 0 (no limit) for a pipe without COLUMNS. */
static size_t status_width(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    const char *v = getenv("COLUMNS");
    long long cols = 0;
    return v && !cli_whole(v, 1, 100000, &cols) ? (size_t)cols : 0;
}

/* Whether name is a strategy, asked of the configuration's own check (memory.strategy), so that a
 * bad --strategy stops chat before a session is made; else says so. */
static int strategy_known(const char *name)
{
    mn_config *cfg = NULL;
    int ok = mn_config_new(&cfg) == MN_OK && mn_config_set(cfg, "memory.strategy", name, "--strategy") == MN_OK;
    const char *why = mn_errmsg(), *key = strstr(why, "memory.strategy: ");
    if (!ok)
        cli_usage_error("--strategy: %s", key ? key + strlen("memory.strategy: ") : why);
    mn_config_free(cfg);
    return ok;
}

/* 1 when the newest message of the active history is a user turn still waiting for its answer
 * (after an error or an interruption), else 0 after saying why there is nothing to retry. */
static int retry_ready(struct chat *c)
{
    if (!c->id[0]) {
        printf("nothing to retry: the active history is empty\n");
        return 0;
    }
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.limit = 1;
    ho.tail = 1;
    mn_messages *l = NULL;
    if (mn_history(c->db, c->id, &ho, &l)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return 0;
    }
    int ready = l->count == 1 && l->items[0].role == MN_ROLE_USER;
    if (!ready)
        printf("nothing to retry: %s\n", l->count ? "the last message is not a user turn waiting for its answer"
                                                   : "the active history is empty");
    mn_messages_free(l);
    return ready;
}

/* Asks the model for the next reply; the user turn is already stored. */
static void reply(struct chat *c)
{
    mn_chat_opts o = MN_CHAT_OPTS_INIT;
    o.context = &c->ctx;
    mn_chat_result *r = NULL;
    interrupted = 0;
    mn_status rc = mn_chat_reply(c->db, c->id, &o, on_text, NULL, &r);
    folds_release(&c->folds); /* a fold the build found due runs now, while the user reads and types */
    interrupted = 0; /* the Ctrl-C that stopped this reply is spent */
    if (rc) {
        printf("\n");
        fflush(stdout); /* the error line after what was shown, also when stdout is a pipe */
        fprintf(stderr, "mnemo: %s (/retry asks again; your message is stored)\n", mn_errmsg());
        return;
    }
    if (r->interrupted) {
        printf("\n[interrupted: the partial reply was not stored; your message was]\n");
        mn_chat_result_free(r);
        return;
    }
    struct part parts[PARTS];
    char line[1024];
    status_fit(parts, status_parts(r, parts), status_width(), line, sizeof line);
    printf("\n%s\n", line);
    mn_chat_result_free(r);
}

/* Starts a new session lazily (seed 001): the next user turn creates it, so that a chat left
 * without a word leaves no empty session behind. */
static void new_session(struct chat *c)
{
    c->id[0] = '\0';
    printf("new session: it is created with your first message\n");
}

/* Stores the user turn text. The first turn of a new session creates it, with the system
 * prompt; when the turn cannot be stored, that session goes again (nothing was said in it).
 * Returns 0 when the turn is stored, else says why. */
static int say(struct chat *c, const char *text)
{
    int created = 0;
    if (!c->id[0]) {
        mn_session_opts so = MN_SESSION_OPTS_INIT;
        so.system_prompt = c->system;
        mn_session *s = NULL;
        if (mn_session_create(c->db, &so, &s)) {
            fprintf(stderr, "mnemo: %s\n", mn_errmsg());
            return -1;
        }
        snprintf(c->id, sizeof c->id, "%s", s->id);
        mn_session_free(s);
        created = 1;
    }
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = text;
    if (mn_append(c->db, c->id, &m, 0, NULL) != MN_OK) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        if (created) {
            (void)mn_session_delete(c->db, c->id); /* the error above is the one to tell */
            c->id[0] = '\0';
        }
        return -1;
    }
    if (created)
        printf("session %s (new)\n", c->id);
    return 0;
}

/* Continues session id, or the most recently active live one when id is NULL. On failure the
 * chat's session is unchanged and mn_errmsg says why. */
static mn_status use_session(struct chat *c, const char *id)
{
    mn_session *s = NULL;
    mn_status rc = mn_session_resume(c->db, NULL, id, &s);
    if (rc)
        return rc;
    snprintf(c->id, sizeof c->id, "%s", s->id);
    printf("session %s (%lld messages) %s\n", s->id, (long long)s->message_count, s->title ? s->title : "");
    mn_session_free(s);
    return MN_OK;
}

/* 1 when the chat has a session; else 0, after saying that nothing is there to `what` yet. */
/* One field of the state as a person reads it: text as is, nothing as "none", an object as
 * key=value pairs, anything else as compact JSON. */
static void print_field(const char *label, json_t *v)
{
    printf("%s: ", label);
    if (!v || json_is_null(v) || (json_is_object(v) && json_object_size(v) == 0)) {
        printf("none\n");
        return;
    }
    if (json_is_string(v)) {
        printf("%s\n", json_string_value(v));
        return;
    }
    if (json_is_object(v)) {
        const char *k;
        json_t *item;
        int first = 1;
        json_object_foreach(v, k, item)
        {
            char *text = json_dumps(item, JSON_ENCODE_ANY | JSON_COMPACT);
            printf("%s%s=%s", first ? "" : ", ", k, json_is_string(item) ? json_string_value(item) : text ? text : "?");
            free(text);
            first = 0;
        }
        printf("\n");
        return;
    }
    char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    printf("%s\n", text ? text : "?");
    free(text);
}

/* /state: the session's ask-user state, a field a line (`mnemo state get ID` prints the JSON). */
static void print_state(const char *state)
{
    static const struct {
        const char *key, *label;
    } fields[] = {{"params", "params"},
                  {"waiting_for_param", "waiting for"},
                  {"last_intent_id", "last intent"},
                  {"last_result", "last result"},
                  {"plan_execution", "plan"}};
    json_t *o = json_loads(state, 0, NULL);
    if (!json_is_object(o)) {
        printf("%s\n", state);
        json_decref(o);
        return;
    }
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        print_field(fields[i].label, json_object_get(o, fields[i].key));
    json_decref(o);
}

static int has_session(const struct chat *c, const char *what)
{
    if (!c->id[0])
        printf("nothing to %s yet: the session starts with your first message\n", what);
    return c->id[0] != '\0';
}

/* How many bytes of text to show for at most max of them: cut before a character, not in it. */
static int excerpt_len(const char *text, size_t max)
{
    size_t n = strlen(text);
    if (n <= max)
        return (int)n;
    while (max && ((unsigned char)text[max] & 0xC0) == 0x80)
        max--;
    return (int)max;
}

#define HISTORY_MAX 1000000 /* the most /history N shows */

static void cmd_history_n(struct chat *c, const char *arg)
{
    long long n = 10;
    if (arg && *arg && cli_whole(arg, 1, HISTORY_MAX, &n)) {
        fprintf(stderr, "mnemo: /history: '%s' is not a number of messages (a whole number from 1 to %d)\n", arg,
                HISTORY_MAX);
        return;
    }
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.limit = (size_t)n;
    ho.tail = 1;
    mn_messages *l = NULL;
    if (!c->id[0]) {
        printf("(no active history)\n");
        return;
    }
    if (mn_history(c->db, c->id, &ho, &l)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return;
    }
    for (size_t i = 0; i < l->count; i++) /* #N: the position in the session, as mnemo history shows it */
        printf("#%lld %-9s %s\n", (long long)l->items[i].seq, mn_role_name(l->items[i].role),
               l->items[i].content ? l->items[i].content : "(tool calls)");
    if (!l->count)
        printf("(no active history)\n");
    mn_messages_free(l);
}

static void cmd_sessions(struct chat *c)
{
    mn_sessions *l = NULL;
    if (mn_session_list(c->db, NULL, 10, 0, &l)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return;
    }
    for (size_t i = 0; i < l->count; i++) {
        char when[32];
        cli_time(l->items[i].updated_at, when, sizeof when);
        printf("%s %s  %s  %4lld msgs  %s\n", strcmp(l->items[i].id, c->id) == 0 ? "*" : " ", l->items[i].id, when,
               (long long)l->items[i].message_count, l->items[i].title ? l->items[i].title : "");
    }
    mn_sessions_free(l);
}

static void cmd_context_show(struct chat *c)
{
    if (!has_session(c, "send"))
        return;
    mn_context_opts o = c->ctx;
    o.flags |= MN_CONTEXT_NO_FOLD; /* looking must not change anything */
    mn_context *ctx = NULL;
    if (mn_context_build(c->db, c->id, &o, &ctx)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return;
    }
    json_t *r = json_loads(ctx->report, 0, NULL);
    printf("strategy %s · %lld of %lld tokens (system %lld, messages %lld, framing %lld)\n",
           json_string_value(json_object_get(r, "strategy")), jint(r, "tokens"), jint(r, "max_tokens"),
           jint(r, "parts.system"), jint(r, "parts.messages"), jint(r, "parts.framing"));
    printf("messages: %lld active, %lld kept, %lld dropped", jint(r, "messages.total"), jint(r, "messages.kept"),
           jint(r, "messages.dropped"));
    if (json_is_object(json_object_get(r, "summary"))) /* null: the session has no summary */
        printf(" · summary of %lld messages (%lld tokens)", jint(r, "summary.folded"), jint(r, "summary.tokens"));
    else
        printf(" · no summary");
    printf("\n");
    json_decref(r);
    mn_context_free(ctx);
}

static void cmd_search_text(struct chat *c, const char *q)
{
    mn_search_hits *h = NULL;
    if (!q || !*q) {
        printf("usage: /search TEXT\n");
        return;
    }
    if (mn_search(c->db, q, MN_SEARCH_AUTO, 5, NULL, 0, &h)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return;
    }
    for (size_t i = 0; i < h->count; i++) {
        const mn_message *m = &h->items[i].message;
        const char *text = m->content ? m->content : "";
        printf("#%lld %s %.*s", (long long)m->seq, mn_role_name(m->role), excerpt_len(text, 100), text);
        if (strcmp(m->session_id, c->id) != 0) /* #N is a position in that session */
            printf(" [session %s]", m->session_id);
        printf("\n");
    }
    if (!h->count)
        printf("no matches\n");
    mn_search_hits_free(h);
}

/* Every turn is stored as it is said (mn_append commits it): /save tells which session holds
 * them, and how to come back to it. */
static void slash_save(struct chat *c)
{
    if (!has_session(c, "save"))
        return;
    mn_session *s = NULL;
    if (mn_session_get(c->db, c->id, &s)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return;
    }
    printf("session %s saved: %lld messages, each stored as it was said (continue it: mnemo chat %s)\n", s->id,
           (long long)s->message_count, s->id);
    mn_session_free(s);
}

/* /delete ID (seed 001): deletes another session; the current one is /forget's, which asks. */
static mn_status slash_delete(struct chat *c, const char *id)
{
    if (!id || !*id) {
        printf("usage: /delete ID (a session: /sessions lists them; /forget deletes this one)\n");
        return MN_OK;
    }
    if (c->id[0] && strcasecmp(id, c->id) == 0) {
        fprintf(stderr, "mnemo: /delete: %s is the current session: /forget deletes it (it asks first)\n", c->id);
        return MN_OK;
    }
    mn_status rc = mn_session_delete(c->db, id);
    if (!rc)
        printf("deleted session %s\n", id);
    return rc;
}

/* /forget: deletes the current session once the user says yes; the chat goes on in a new one. */
static mn_status slash_forget(struct chat *c)
{
    if (!has_session(c, "forget"))
        return MN_OK;
    char question[128];
    int cancelled = 0;
    snprintf(question, sizeof question, "Delete session %s and all its messages?", c->id);
    if (!confirmed(c, question, &cancelled)) {
        if (cancelled)
            printf("%s[interrupted: session %s kept]\n", c->tty ? "" : "\n", c->id);
        else
            printf("kept\n");
        return MN_OK;
    }
    mn_status rc = mn_session_delete(c->db, c->id);
    if (!rc) {
        printf("deleted session %s\n", c->id);
        new_session(c);
    }
    return rc;
}

/* /pin N: pins the message at position N of this session (#N in /history). */
static mn_status slash_pin(struct chat *c, const char *arg)
{
    long long pos = 0;
    if (!arg || !*arg) {
        printf("usage: /pin N (the message at position #N of this session, as /history shows it)\n");
        return MN_OK;
    }
    if (cli_whole(arg, 1, INT64_MAX, &pos)) {
        fprintf(stderr, "mnemo: /pin: '%s' is not a position (a whole number from 1: the #N of /history)\n", arg);
        return MN_OK;
    }
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.after_seq = pos - 1;
    ho.limit = 1;
    ho.all = 1; /* a message out of the active history has its position too */
    mn_messages *l = NULL;
    mn_status rc = c->id[0] ? mn_history(c->db, c->id, &ho, &l) : MN_OK;
    if (!rc && (!l || l->count == 0 || l->items[0].seq != pos))
        fprintf(stderr, "mnemo: /pin: no message #%lld in this session (/history shows the positions)\n", pos);
    else if (!rc && !(rc = mn_session_message_pin(c->db, c->id, l->items[0].id, 1)))
        printf("pinned #%lld\n", pos);
    mn_messages_free(l);
    return rc;
}

/* Seed 001 §4.5: /compact asks the chat model itself (quality over speed) for a summary of
 * what it sees, with this prompt as the user turn, and leaves a history of two messages. */
static const char COMPACT_PROMPT[] =
    "Summarize the following conversation in a concise form that preserves:\n"
    "- Key decisions and outcomes\n"
    "- File paths and tool names referenced\n"
    "- Error resolutions and workarounds\n"
    "- Any pending tasks or next steps\n"
    "\n"
    "Be brief — this summary replaces the original messages to save context space.";
static const char COMPACT_FOCUS[] = "\n\nFocus of this compaction, from the user (keep what it names first): ";
static const char COMPACT_HEAD[] = "[Compacted conversation summary]\n";
static const char COMPACT_ACK[] = "Understood. I have the conversation context.";

/* a followed by b, malloc'd (the front end dies on OOM, as cli does elsewhere). */
static char *joined(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    if (!s) {
        fprintf(stderr, "mnemo: out of memory\n");
        exit(1);
    }
    memcpy(s, a, la);
    memcpy(s + la, b, lb + 1);
    return s;
}

/* Takes back a message /compact stored (its request or the answer): erased, as if never said. */
static void take_back(struct chat *c, const mn_message *m)
{
    if (m && mn_message_delete(c->db, c->id, m->id))
        fprintf(stderr, "mnemo: /compact: could not remove message #%lld: %s\n", (long long)m->seq, mn_errmsg());
}

/*
 * /compact [FOCUS] (seed 001 §4.5, docs/chat.md): the request is stored as a user turn so that
 * mn_chat_reply sends it after the context the model sees now (summary included); the answer is
 * the summary. Then the request and the answer are erased, the active history is cleared (kept,
 * searchable, undoable) and the two messages of the compacted history are appended. A failed or
 * interrupted summary takes the request back: nothing changes.
 */
static void slash_compact(struct chat *c, const char *focus)
{
    if (!has_session(c, "compact"))
        return;
    mn_history_opts ho = MN_HISTORY_OPTS_INIT;
    ho.limit = 1;
    mn_messages *l = NULL;
    if (mn_history(c->db, c->id, &ho, &l)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return;
    }
    size_t active = l->count;
    mn_messages_free(l);
    if (!active) {
        printf("nothing to compact: the active history is empty\n");
        return;
    }
    char *with_focus = focus && *focus ? joined(COMPACT_FOCUS, focus) : NULL;
    char *prompt = joined(COMPACT_PROMPT, with_focus ? with_focus : "");
    free(with_focus);
    mn_message_in m = MN_MESSAGE_IN_INIT;
    m.role = MN_ROLE_USER;
    m.content = prompt;
    mn_message *request = NULL;
    mn_status rc = mn_append(c->db, c->id, &m, 0, &request);
    free(prompt);
    if (rc) {
        fprintf(stderr, "mnemo: /compact: %s\n", mn_errmsg());
        return;
    }
    printf("[compacting: %s summarises the conversation]\n", c->model);
    mn_context_opts co = c->ctx;
    co.fold = MN_CONTEXT_FOLD_OFF; /* what it would fold is about to leave the active history */
    co.rag = -1;                   /* retrieval for the request's words would only add noise */
    mn_chat_opts o = MN_CHAT_OPTS_INIT;
    o.context = &co;
    mn_chat_result *r = NULL;
    interrupted = 0;
    rc = mn_chat_reply(c->db, c->id, &o, on_text, NULL, &r);
    interrupted = 0;
    printf("\n");
    fflush(stdout);
    if (rc || r->interrupted) {
        char why[512];
        snprintf(why, sizeof why, "%s", rc ? mn_errmsg() : "");
        take_back(c, request);
        if (rc)
            fprintf(stderr, "mnemo: /compact: %s (nothing compacted)\n", why);
        else
            printf("[interrupted: nothing compacted]\n");
        mn_chat_result_free(r);
        mn_message_free(request);
        return;
    }
    char *summary = joined(COMPACT_HEAD, r->reply->content ? r->reply->content : "");
    take_back(c, request);
    take_back(c, r->reply);
    mn_message_free(request);
    int64_t cleared = 0;
    mn_message_in two[2] = {MN_MESSAGE_IN_INIT, MN_MESSAGE_IN_INIT};
    two[0].role = MN_ROLE_USER;
    two[0].content = summary;
    two[1].role = MN_ROLE_ASSISTANT;
    two[1].content = COMPACT_ACK; /* mnemo's words, not the model's: no model is named */
    if ((rc = mn_session_clear(c->db, c->id, 0, &cleared)) || (rc = mn_append_batch(c->db, c->id, two, 2, 0, NULL)))
        fprintf(stderr, "mnemo: /compact: %s\n", mn_errmsg());
    else
        printf("[compacted: the active history is now the summary and its acknowledgement; %lld messages cleared"
               " (still stored and searchable; undo: mnemo session clear %s --undo)]\n",
               (long long)cleared, c->id);
    free(summary);
    mn_chat_result_free(r);
}

static const char HELP[] =
    "/sessions         recent sessions (* marks this one)\n"
    "/load ID          continue session ID\n"
    "/new              start a new session (created with your first message)\n"
    "/resume           continue the most recently active session\n"
    "/save             say which session holds this chat (every turn is stored as it is said)\n"
    "/delete ID        delete another session and its messages (/forget deletes this one)\n"
    "/history [N]      the last N messages of the active history (default 10), #N their position\n"
    "/clear            clear the active history (kept and searchable; mnemo session clear ID --undo)\n"
    "/forget           delete this session and its messages (asks first)\n"
    "/compact [FOCUS]  make the active history the chat model's summary of it (and an acknowledgement)\n"
    "/context          what the next request holds: parts and tokens\n"
    "/search TEXT      search stored messages (#N: the position in its session)\n"
    "/pin N            pin the message at position #N of this session (kept verbatim by hybrid)\n"
    "/state            the session's ask-user state\n"
    "/retry            ask again for the last user turn when it has no answer (after an error or Ctrl-C)\n"
    "/exit             leave (Ctrl-D too); Ctrl-C stops a reply\n";

/* Runs a slash command; returns 1 to leave. */
static int slash(struct chat *c, char *line)
{
    char *arg = strchr(line, ' ');
    if (arg) {
        *arg++ = '\0';
        while (*arg == ' ')
            arg++;
    }
    mn_status rc = MN_OK;
    if (strcmp(line, "/exit") == 0 || strcmp(line, "/quit") == 0)
        return 1;
    if (strcmp(line, "/help") == 0)
        fputs(HELP, stdout);
    else if (strcmp(line, "/sessions") == 0)
        cmd_sessions(c);
    else if (strcmp(line, "/load") == 0) {
        if (!arg || !*arg)
            printf("usage: /load ID\n");
        else
            rc = use_session(c, arg);
    } else if (strcmp(line, "/new") == 0)
        new_session(c);
    else if (strcmp(line, "/resume") == 0)
        rc = use_session(c, NULL);
    else if (strcmp(line, "/save") == 0)
        slash_save(c);
    else if (strcmp(line, "/delete") == 0)
        rc = slash_delete(c, arg);
    else if (strcmp(line, "/history") == 0)
        cmd_history_n(c, arg);
    else if (strcmp(line, "/clear") == 0) {
        int64_t n = 0;
        if (has_session(c, "clear") && !(rc = mn_session_clear(c->db, c->id, 0, &n)))
            printf("cleared %lld messages from the active history (still stored and searchable;"
                   " undo: mnemo session clear %s --undo)\n", (long long)n, c->id);
    } else if (strcmp(line, "/forget") == 0)
        rc = slash_forget(c);
    else if (strcmp(line, "/compact") == 0)
        slash_compact(c, arg);
    else if (strcmp(line, "/context") == 0)
        cmd_context_show(c);
    else if (strcmp(line, "/search") == 0)
        cmd_search_text(c, arg);
    else if (strcmp(line, "/pin") == 0)
        rc = slash_pin(c, arg);
    else if (strcmp(line, "/state") == 0) {
        char *state = NULL;
        if (has_session(c, "show") && !(rc = mn_state_get(c->db, c->id, 0, &state)))
            print_state(state);
        mn_free(state);
    } else if (strcmp(line, "/retry") == 0) {
        if (retry_ready(c))
            reply(c);
    }
    else
        printf("unknown command %s (/help lists them)\n", line);
    if (rc)
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
    return 0;
}

/* What chat reads of the configuration (cli_open has just read it, so it is good):
 * context.fold_timeout_ms, the longest a person waits on a fold, here when leaving (3000 should
 * it not give a number), and chat.system_prompt (*system malloc'd; NULL when empty). */
static void chat_settings(const struct cli_global *g, int64_t *fold_wait, char **system)
{
    mn_config *cfg = cli_config(g);
    const char *v = NULL;
    long long ms = 3000;
    if (cfg && mn_config_get(cfg, "context.fold_timeout_ms", &v, NULL) == MN_OK && v && cli_whole(v, 0, 600000, &ms))
        ms = 3000;
    *fold_wait = ms;
    v = NULL;
    *system = cfg && mn_config_get(cfg, "chat.system_prompt", &v, NULL) == MN_OK && v && *v ? strdup(v) : NULL;
    mn_config_free(cfg);
}

int cmd_chat(const struct cli_global *g, struct cli_args *a)
{
    struct chat c;
    memset(&c, 0, sizeof c);
    mn_context_opts co = MN_CONTEXT_OPTS_INIT;
    c.ctx = co;
    c.ctx.strategy = cli_opt(a, "strategy");
    if (c.ctx.strategy && !strategy_known(c.ctx.strategy))
        return EXIT_USAGE;
    long long max_tokens = 0;
    if (cli_number(a, "max-tokens", &max_tokens))
        return EXIT_USAGE;
    c.ctx.max_tokens = max_tokens;
    c.ctx.rag = cli_flag(a, "rag");
    const char *scope = cli_opt(a, "rag-scope");
    if (scope && strcmp(scope, "session") != 0 && strcmp(scope, "all") != 0)
        return cli_usage_error("--rag-scope: '%s' is not session or all", scope);
    c.ctx.rag_scope = !scope                       ? MN_RAG_SCOPE_DEFAULT /* memory.rag.scope */
                      : strcmp(scope, "all") == 0 ? MN_RAG_SCOPE_ALL
                                                  : MN_RAG_SCOPE_SESSION;
    c.ctx.fold = MN_CONTEXT_FOLD_BACKGROUND; /* with the queue below: the build never waits on a fold */
    int resume = cli_flag(a, "resume");
    const char *system = cli_opt(a, "system-prompt"); /* --system, its older spelling, too */
    if (system && (a->npos || resume)) {
        char typed[32];
        return cli_usage_error("--%s: the system prompt is for a new session; the session %s keeps its own",
                               cli_typed(a, "system-prompt", typed, sizeof typed),
                               a->npos ? "given" : "--resume continues");
    }
    c.tty = isatty(0);
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    c.db = db;
    int64_t fold_wait = 0;
    chat_settings(g, &fold_wait, &c.system);
    if (system) { /* --system over chat.system_prompt; "" for none */
        free(c.system);
        c.system = *system ? strdup(system) : NULL;
    }
    if (mn_chat_ready(db, &c.model) != MN_OK) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        free(c.system);
        mn_close(db);
        return EXIT_USAGE;
    }
    mn_status rc = a->npos || resume ? use_session(&c, a->npos ? a->pos[0] : NULL) : MN_OK;
    if (rc == MN_NOTFOUND && !a->npos) /* --resume with nothing to resume: a new chat it is */
        printf("no session to resume: no session is live\n");
    else if (rc) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        free(c.system);
        mn_close(db);
        return 1;
    }
    if (!c.id[0])
        new_session(&c);
    printf("model %s · /help for commands · Ctrl-D leaves\n", c.model);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint; /* no SA_RESTART: a blocked read returns */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    folds_start(&c.folds, db);
    for (;;) {
        fflush(stdout);
        char *line = read_line(&c, "you> ");
        if (!line)
            break; /* the end of input, or Ctrl-C at a prompt read without readline */
        interrupted = 0; /* a Ctrl-C at the prompt was the line editor's */
        int leave = 0;
        if (line[0] == '/')
            leave = slash(&c, line);
        else if (line[0] && say(&c, line) == 0)
            reply(&c);
        free(line);
        if (leave)
            break;
    }
    if (c.tty) {
        printf("\n");
        interrupted = 0; /* at a terminal Ctrl-C does not leave: one typed before is not for the wait */
    }
    if (folds_stop(&c.folds, fold_wait, c.tty, &interrupted)) {
        /* The worker is inside a fold, most likely in the summariser's request, which nothing can
         * cut short: the process ends here, and the request with it. Everything the chat wrote is
         * committed; the fold's own transaction, if it got that far, commits whole or not at all
         * (the store's guarantee), and its claim on the session expires. The handle stays open:
         * the worker still holds it. */
        errno = 0;
        int failed = fflush(stdout) != 0 || ferror(stdout);
        if (failed)
            fprintf(stderr, "mnemo: chat: writing the output failed: %s\n", strerror(errno ? errno : EIO));
        fflush(stderr);
        _exit(failed);
    }
    sigaction(SIGINT, &old, NULL);
    free(c.system);
    mn_close(db);
    return 0;
}
