/*
 * cmd_chat.c — `mnemo chat [SESSION]`: an interactive chat with a model, mnemo as its memory
 * (docs/chat.md). Each user turn is appended before the model is asked; the reply streams and is
 * stored by mn_chat_reply when whole. Slash commands drive the engine's operations. Ctrl-C stops
 * a reply (the user turn stays, the partial reply is dropped); Ctrl-D or /exit leaves. Reads
 * plain lines when standard input is not a terminal, so it can be scripted. A due fold never
 * delays a reply: it runs on a thread of its own after the reply is stored (docs/chat.md
 * "Folding").
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
    char id[64];
    int tty;
    mn_context_opts ctx;
    const char *model;
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

/* "tokens 123/4096 · kept 4 · dropped 2 · folded 6 · trimmed 1" from a context report. */
static void context_line(const char *report, char *out, size_t cap)
{
    json_t *r = json_loads(report, 0, NULL);
    int n = snprintf(out, cap, "context %lld/%lld tokens · %lld kept", jint(r, "tokens"), jint(r, "max_tokens"),
                     jint(r, "messages.kept"));
    if (jint(r, "messages.dropped") && n > 0 && (size_t)n < cap)
        n += snprintf(out + n, cap - (size_t)n, " · %lld dropped", jint(r, "messages.dropped"));
    if (jint(r, "summary.folded") && n > 0 && (size_t)n < cap)
        n += snprintf(out + n, cap - (size_t)n, " · %lld folded into the summary", jint(r, "summary.folded"));
    if (jint(r, "governance.tool_outputs.trimmed") && n > 0 && (size_t)n < cap)
        n += snprintf(out + n, cap - (size_t)n, " · %lld tool outputs trimmed", jint(r, "governance.tool_outputs.trimmed"));
    if (strcmp(jstr(r, "fold.outcome"), "queued") == 0 && n > 0 && (size_t)n < cap)
        snprintf(out + n, cap - (size_t)n, " · folding into the summary in the background");
    json_decref(r);
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

static void print_usage_part(const char *name, long long v)
{
    if (v >= 0)
        printf(" %s %lld", name, v);
}

/* 1 when the newest message of the active history is a user turn still waiting for its answer
 * (after an error or an interruption), else 0 after saying why there is nothing to retry. */
static int retry_ready(struct chat *c)
{
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
    char line[512];
    context_line(r->report, line, sizeof line);
    printf("\n[%s · model usage:", line);
    if (r->prompt_tokens < 0 && r->completion_tokens < 0)
        printf(" not reported");
    print_usage_part("prompt", r->prompt_tokens);
    print_usage_part("completion", r->completion_tokens);
    print_usage_part("cached", r->cached_tokens);
    printf(" · session: %lld turns, %lld prompt + %lld completion tokens", (long long)r->session_turns,
           (long long)r->session_prompt_tokens, (long long)r->session_completion_tokens);
    if (r->session_cached_tokens)
        printf(", %lld cached", (long long)r->session_cached_tokens);
    printf("]\n");
    mn_chat_result_free(r);
}

static int new_session(struct chat *c)
{
    mn_session *s = NULL;
    mn_status rc = mn_session_create(c->db, NULL, &s);
    if (rc) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return -1;
    }
    snprintf(c->id, sizeof c->id, "%s", s->id);
    mn_session_free(s);
    printf("session %s (new)\n", c->id);
    return 0;
}

static int use_session(struct chat *c, const char *id)
{
    mn_session *s = NULL;
    mn_status rc = mn_session_resume(c->db, NULL, id, &s);
    if (rc) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return -1;
    }
    snprintf(c->id, sizeof c->id, "%s", s->id);
    printf("session %s (%lld messages) %s\n", s->id, (long long)s->message_count, s->title ? s->title : "");
    mn_session_free(s);
    return 0;
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
    if (mn_history(c->db, c->id, &ho, &l)) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        return;
    }
    for (size_t i = 0; i < l->count; i++)
        printf("#%lld %-9s %s\n", (long long)l->items[i].id, mn_role_name(l->items[i].role),
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
    for (size_t i = 0; i < h->count; i++)
        printf("#%lld %s %.100s\n", (long long)h->items[i].message.id, mn_role_name(h->items[i].message.role),
               h->items[i].message.content ? h->items[i].message.content : "");
    if (!h->count)
        printf("no matches\n");
    mn_search_hits_free(h);
}

static const char HELP[] =
    "/sessions         recent sessions (* marks this one)\n"
    "/load ID          continue session ID\n"
    "/new              start a new session\n"
    "/resume           continue the most recently active session\n"
    "/history [N]      the last N messages of the active history (default 10)\n"
    "/clear            clear the active history (kept and searchable; mnemo session clear ID --undo)\n"
    "/forget           delete this session and its messages (asks first)\n"
    "/compact [TEXT]   fold all but the last turns into the summary now\n"
    "/context          what the next request holds: parts and tokens\n"
    "/search TEXT      search stored messages\n"
    "/pin ID           pin a message of this session by its id, #ID in /history (kept verbatim by hybrid)\n"
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
            use_session(c, arg);
    } else if (strcmp(line, "/new") == 0)
        new_session(c);
    else if (strcmp(line, "/resume") == 0)
        use_session(c, NULL);
    else if (strcmp(line, "/history") == 0)
        cmd_history_n(c, arg);
    else if (strcmp(line, "/clear") == 0) {
        int64_t n = 0;
        if (!(rc = mn_session_clear(c->db, c->id, 0, &n)))
            printf("cleared %lld messages from the active history (still stored and searchable;"
                   " undo: mnemo session clear %s --undo)\n", (long long)n, c->id);
    } else if (strcmp(line, "/forget") == 0) {
        char question[128];
        int cancelled = 0;
        snprintf(question, sizeof question, "Delete session %s and all its messages?", c->id);
        if (!confirmed(c, question, &cancelled)) {
            if (cancelled)
                printf("%s[interrupted: session %s kept]\n", c->tty ? "" : "\n", c->id);
            else
                printf("kept\n");
        } else if (!(rc = mn_session_delete(c->db, c->id))) {
            printf("deleted session %s\n", c->id);
            new_session(c);
        }
    } else if (strcmp(line, "/compact") == 0) {
        mn_compact_opts co = MN_COMPACT_OPTS_INIT;
        co.instructions = arg && *arg ? arg : NULL; /* the focus of the summary */
        char *event = NULL;
        rc = mn_compact_ex(c->db, c->id, &co, &event);
        if (event)
            printf("%s\n", event);
        mn_free(event);
    } else if (strcmp(line, "/context") == 0)
        cmd_context_show(c);
    else if (strcmp(line, "/search") == 0)
        cmd_search_text(c, arg);
    else if (strcmp(line, "/pin") == 0) {
        long long mid = 0;
        if (!arg || !*arg)
            printf("usage: /pin ID (a message id of this session: /history shows them as #ID)\n");
        else if (cli_whole(arg, 1, INT64_MAX, &mid))
            fprintf(stderr, "mnemo: /pin: '%s' is not a message id (a positive whole number; /history shows them)\n",
                    arg);
        else if (!(rc = mn_session_message_pin(c->db, c->id, mid, 1)))
            printf("pinned #%lld\n", mid);
    } else if (strcmp(line, "/state") == 0) {
        char *state = NULL;
        if (!(rc = mn_state_get(c->db, c->id, 0, &state)))
            printf("%s\n", state);
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

/* context.fold_timeout_ms: the longest a person waits on a fold, here when leaving (3000 should
 * the configuration, which cli_open has just read, not give a number). */
static int64_t fold_wait_ms(const struct cli_global *g)
{
    mn_config *cfg = cli_config(g);
    const char *v = NULL;
    long long ms = 3000;
    if (cfg && mn_config_get(cfg, "context.fold_timeout_ms", &v, NULL) == MN_OK && v && cli_whole(v, 0, 600000, &ms))
        ms = 3000;
    mn_config_free(cfg);
    return ms;
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
    if (cli_number(a, "max-tokens", 1, 100000000, &max_tokens))
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
    c.tty = isatty(0);
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    c.db = db;
    int64_t fold_wait = fold_wait_ms(g); /* the configuration is good: cli_open read it */
    const char *model = NULL;
    if (mn_chat_ready(db, &model) != MN_OK) {
        fprintf(stderr, "mnemo: %s\n", mn_errmsg());
        mn_close(db);
        return EXIT_USAGE;
    }
    if (a->npos ? use_session(&c, a->pos[0]) : new_session(&c)) {
        mn_close(db);
        return 1;
    }
    printf("model %s · /help for commands · Ctrl-D leaves\n", model);
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
        else if (line[0]) {
            mn_message_in m = MN_MESSAGE_IN_INIT;
            m.role = MN_ROLE_USER;
            m.content = line;
            if (mn_append(db, c.id, &m, 0, NULL) != MN_OK)
                fprintf(stderr, "mnemo: %s\n", mn_errmsg());
            else
                reply(&c);
        }
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
        int rc = fflush(stdout) != 0 || ferror(stdout);
        if (rc)
            fprintf(stderr, "mnemo: chat: writing the output failed: %s\n", strerror(errno ? errno : EIO));
        fflush(stderr);
        _exit(rc);
    }
    sigaction(SIGINT, &old, NULL);
    mn_close(db);
    return 0;
}
