/*
 * util.c — option parsing, configuration and database opening, error printing and small
 * output helpers shared by the CLI commands.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "server/server.h"

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mnemo: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_USAGE;
}

int cli_fail(mn_status rc)
{
    fprintf(stderr, "mnemo: %s\n", mn_errmsg()[0] ? mn_errmsg() : mn_status_str(rc));
    return 1;
}

/* Other spellings of options: older ones, from before option names were the API's (t0110), and
 * `search --limit`, the name every other listing command gives its count (the API's is top_k).
 * Each is accepted where the command has the option it names and none of its own spelled so
 * (`history --all` is history's own option; `memory list --all` is --include-closed). */
static const struct {
    const char *old, *name;
} aliases[] = {{"system", "system-prompt"}, {"tool", "tool-name"}, {"ttl", "ttl-seconds"}, {"upto", "upto-seq"},
               {"key", "idempotency-key"}, {"pin", "pinned"},      {"session", "session-id"}, {"user", "user-id"},
               {"agent", "agent-id"},      {"source", "sources"},  {"all", "include-closed"}, {"limit", "top-k"}};

/* The option of opts spelled name[0..len), by its name or else an older spelling; -1 if none. */
static int find_opt(const struct cli_opt *opts, const char *name, size_t len)
{
    for (int k = 0; opts[k].name; k++)
        if (strlen(opts[k].name) == len && strncmp(opts[k].name, name, len) == 0)
            return k;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strlen(aliases[i].old) == len && strncmp(aliases[i].old, name, len) == 0)
            return find_opt(opts, aliases[i].name, strlen(aliases[i].name));
    return -1;
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, struct cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->opts = cmd->opts;
    a->command = cmd->name;
    a->op = cli_command_ranges(cmd);
    enum { CAP = sizeof a->values / sizeof a->values[0] };
    for (int k = 0; cmd->opts[k].name; k++)
        if (k == CAP) /* a command table that outgrew struct cli_args: caught by any test of it */
            return cli_usage_error("%s: more than %d options; enlarge cli_args.values", cmd->name, CAP), -1;
    int only_positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!only_positional && strcmp(arg, "--") == 0) {
            only_positional = 1;
            continue;
        }
        if (!only_positional && arg[0] == '-' && arg[1] == '-') {
            const char *name = arg + 2, *eq = strchr(name, '=');
            size_t len = eq ? (size_t)(eq - name) : strlen(name);
            int k = find_opt(cmd->opts, name, len);
            if (k < 0)
                return cli_usage_error("%s: unknown option %s (see mnemo %s --help)", cmd->name, arg, cmd->name), -1;
            /* both spellings of one option: which one was meant is a guess, so neither wins */
            if (a->given[k] && (strcspn(a->given[k], "=") != len || strncmp(a->given[k], name, len) != 0))
                return cli_usage_error("%s: --%.*s and --%.*s are one option; give it once", cmd->name,
                                       (int)strcspn(a->given[k], "="), a->given[k], (int)len, name),
                       -1;
            a->given[k] = name;
            if (cmd->opts[k].takes_value) {
                if (eq)
                    a->values[k] = eq + 1;
                else if (i + 1 < argc)
                    a->values[k] = argv[++i];
                else
                    return cli_usage_error("%s: option --%.*s needs a value", cmd->name, (int)len, name), -1;
            } else {
                if (eq)
                    return cli_usage_error("%s: option --%.*s takes no value", cmd->name, (int)len, name), -1;
                a->values[k] = "";
            }
            continue;
        }
        if (a->npos == (int)(sizeof a->pos / sizeof a->pos[0]))
            return cli_usage_error("%s: too many arguments", cmd->name), -1;
        a->pos[a->npos++] = arg;
    }
    if (a->npos < cmd->min_pos || (cmd->max_pos >= 0 && a->npos > cmd->max_pos))
        return cli_usage_error("usage: mnemo %s %s", cmd->name, cmd->usage), -1;
    return 0;
}

const char *cli_opt(const struct cli_args *a, const char *name)
{
    for (int k = 0; a->opts[k].name; k++)
        if (strcmp(a->opts[k].name, name) == 0)
            return a->values[k];
    return NULL;
}

int cli_flag(const struct cli_args *a, const char *name) { return cli_opt(a, name) != NULL; }

const char *cli_typed(const struct cli_args *a, const char *name, char *buf, size_t cap)
{
    for (int k = 0; a->opts[k].name; k++)
        if (strcmp(a->opts[k].name, name) == 0 && a->given[k]) {
            snprintf(buf, cap, "%.*s", (int)strcspn(a->given[k], "="), a->given[k]);
            return buf;
        }
    return name;
}

int cli_contradict(const struct cli_args *a, const char *x, const char *y)
{
    if (!cli_flag(a, x) || !cli_flag(a, y))
        return 0;
    char bx[64], by[64];
    cli_usage_error("--%s and --%s contradict each other", cli_typed(a, x, bx, sizeof bx), cli_typed(a, y, by, sizeof by));
    return -1;
}

/* The declaration of option `name` (`-` read as `_`) in a->op, the operation whose ranges the
 * command takes (cmd_api.c), or NULL. */
static const struct srv_param *declared(const struct cli_args *a, const char *name)
{
    char param[64];
    size_t n = strlen(name);
    if (!a->op || n >= sizeof param)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        param[i] = name[i] == '-' ? '_' : name[i];
    return srv_param_find(a->op, param);
}

/* The declaration of `name`, a parameter of type t. A command asking for one its operation does
 * not declare is a bug (the range would have to be written in the CLI again): it aborts, whether
 * or not the option was given, so that any test running the command finds it. */
static const struct srv_param *must_declare(const struct cli_args *a, const char *name, enum srv_ptype t)
{
    const struct srv_param *p = declared(a, name);
    if (p && p->type == t)
        return p;
    fprintf(stderr,
            "mnemo: bug: `mnemo %s` asks for the declared range of %s, but its operation %s declares no %s "
            "parameter of that name (app/server/ops.c, app/cli/cmd_api.c); an option of the command's own "
            "takes cli_local_number\n",
            a->command, name, a->op ? a->op->name : "(none)", srv_ptype_name(t));
    abort();
}

/* The declared range of an integer parameter: no bound declared is the whole of long long. */
static long long lowest(const struct srv_param *p) { return p->has_min ? (long long)p->min : LLONG_MIN; }
static long long highest(const struct srv_param *p) { return p->has_max ? (long long)p->max : LLONG_MAX; }

/* " from MIN to MAX" or " from MIN up": the declared range in a message. */
static void range_text(const struct srv_param *p, char *buf, size_t cap)
{
    if (p->has_max)
        snprintf(buf, cap, " from %lld to %lld", lowest(p), (long long)p->max);
    else
        snprintf(buf, cap, " from %lld up", lowest(p));
}

/* text as a whole number within p's range into *out: 0, else -1 after a usage error naming what. */
static int whole_in(const struct srv_param *p, const char *what, const char *text, long long *out)
{
    if (cli_whole(text, lowest(p), highest(p), out) == 0)
        return 0;
    char range[96];
    range_text(p, range, sizeof range);
    cli_usage_error("%s: '%s' is not a whole number%s", what, text, range);
    return -1;
}

int cli_number(const struct cli_args *a, const char *name, long long *out)
{
    const struct srv_param *p = must_declare(a, name, PT_INTEGER);
    const char *v = cli_opt(a, name);
    if (!v)
        return 0;
    char b[64], what[80];
    snprintf(what, sizeof what, "--%s", cli_typed(a, name, b, sizeof b));
    return whole_in(p, what, v, out);
}

long long cli_default(const struct cli_args *a, const char *name)
{
    const struct srv_param *p = must_declare(a, name, PT_INTEGER);
    long long n;
    if (!p->def || cli_whole(p->def, lowest(p), highest(p), &n)) {
        fprintf(stderr, "mnemo: bug: parameter %s of operation %s declares no default (app/server/ops.c)\n", p->name,
                a->op->name);
        abort();
    }
    return n;
}

int cli_param_whole(const struct cli_args *a, const char *param, const char *text, const char *what, long long *out)
{
    return whole_in(must_declare(a, param, PT_INTEGER), what, text, out);
}

int cli_fraction(const struct cli_args *a, const char *name, double *out)
{
    const struct srv_param *p = must_declare(a, name, PT_NUMBER);
    const char *v = cli_opt(a, name);
    if (!v)
        return 0;
    errno = 0;
    double x = strtod(v, NULL);
    /* NaN fails both comparisons */
    if (!srv_number_text(v, 1) || errno || !(x >= (double)lowest(p) && x <= (double)highest(p))) {
        char b[64], range[96];
        range_text(p, range, sizeof range);
        cli_usage_error("--%s: '%s' is not a number%s", cli_typed(a, name, b, sizeof b), v, range);
        return -1;
    }
    *out = x;
    return 0;
}

int cli_whole(const char *text, long long min, long long max, long long *out)
{
    errno = 0; /* plain text (srv_number_text) is read whole: only its range can fail */
    long long n = strtoll(text, NULL, 10);
    if (!srv_number_text(text, 0) || errno || n < min || n > max)
        return -1;
    *out = n;
    return 0;
}

int cli_local_number(const struct cli_args *a, const char *name, long long min, long long max, long long *out)
{
    const struct srv_param *p = declared(a, name);
    if (p) { /* a second copy of a declared range, free to drift from it */
        fprintf(stderr, "mnemo: bug: `mnemo %s` gives --%s a range of its own, but operation %s declares it (take "
                        "it with cli_number)\n", a->command, name, a->op->name);
        abort();
    }
    const char *v = cli_opt(a, name);
    if (v && cli_whole(v, min, max, out)) {
        char b[64];
        cli_usage_error("--%s: '%s' is not a whole number from %lld to %lld", cli_typed(a, name, b, sizeof b), v, min,
                        max);
        return -1;
    }
    return 0;
}

static void log_to_stderr(void *user, mn_log_level level, const char *message)
{
    (void)user;
    fprintf(stderr, "mnemo: %s: %s\n", level >= MN_LOG_ERROR ? "error" : "warning", message);
}

mn_config *cli_config(const struct cli_global *g)
{
    mn_set_log(log_to_stderr, NULL, MN_LOG_WARN);
    mn_config *cfg = NULL;
    mn_status rc = mn_config_new(&cfg);
    if (!rc)
        rc = mn_config_load(cfg, g->config);
    if (!rc && g->db)
        rc = mn_config_set(cfg, "memory.storage_path", g->db, "flag --db");
    if (!rc && g->replicas[0])
        rc = mn_config_set(cfg, "postgres.replicas", g->replicas, "flag --db-replica");
    if (rc) {
        cli_fail(rc);
        mn_config_free(cfg);
        return NULL;
    }
    return cfg;
}

/* A database that lives only as long as the process (":memory:", or a SQLite "file:" URI such
 * as file:x.db?mode=memory): a command would acknowledge writes that are gone when it exits. */
static int in_memory(const char *target)
{
    if (strncmp(target, "sqlite:", 7) == 0)
        target += strncmp(target + 7, "//", 2) == 0 ? 9 : 7;
    return strcmp(target, ":memory:") == 0 || strncmp(target, "file:", 5) == 0;
}

mn_db *cli_open(const struct cli_global *g)
{
    mn_config *cfg = cli_config(g);
    if (!cfg)
        return NULL;
    const char *target = NULL, *source = NULL;
    if (mn_config_get(cfg, "memory.storage_path", &target, &source) == MN_OK && target && in_memory(target)) {
        fprintf(stderr,
                "mnemo: the database '%s' (%s) would live only as long as this command: give a file's path "
                "(':memory:' and SQLite 'file:' URIs are for the library)\n",
                target, source ? source : "memory.storage_path");
        mn_config_free(cfg);
        return NULL;
    }
    mn_db *db = NULL;
    mn_status rc = mn_open(cfg, &db);
    mn_config_free(cfg);
    if (rc) {
        cli_fail(rc);
        return NULL;
    }
    return db;
}

char *cli_read_path(const char *path, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "mnemo: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    char *text = cli_read_all(f, f == stdin ? "standard input" : path, len);
    if (f != stdin)
        fclose(f);
    return text;
}

char *cli_read_all(FILE *f, const char *what, size_t *len_out)
{
    size_t len = 0, cap = 65536;
    char *buf = malloc(cap);
    if (!buf) {
        fprintf(stderr, "mnemo: out of memory\n");
        return NULL;
    }
    for (;;) {
        if (cap - len < 65536) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                fprintf(stderr, "mnemo: out of memory reading %s\n", what);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        fprintf(stderr, "mnemo: cannot read %s: %s\n", what, strerror(errno));
        return NULL;
    }
    buf[len] = '\0';
    if (memchr(buf, '\0', len)) {
        free(buf);
        fprintf(stderr, "mnemo: %s contains a NUL byte; content must be UTF-8 text\n", what);
        return NULL;
    }
    if (len_out)
        *len_out = len;
    return buf;
}

void cli_time(long long ms, char *out, size_t cap)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(out, cap, "%Y-%m-%d %H:%M:%S", &tm);
}

long long cli_now_ms(void)
{
    const char *fixed = getenv("MNEMO_TEST_NOW_MS"); /* the library's test clock, for consistent output */
    if (fixed && *fixed)
        return strtoll(fixed, NULL, 10);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cli_time_left(long long expires_at, long long now, char *out, size_t cap)
{
    if (!expires_at)
        snprintf(out, cap, "-");
    else if (expires_at <= now)
        snprintf(out, cap, "expired");
    else {
        long long s = (expires_at - now) / 1000;
        if (s >= 3600)
            snprintf(out, cap, "%lldh%02lldm", s / 3600, s / 60 % 60);
        else
            snprintf(out, cap, "%lldm%02llds", s / 60, s % 60);
    }
}

void cli_progress(const char *label, long long done, long long total)
{
    if (!isatty(STDERR_FILENO))
        return;
    if (total > 0)
        fprintf(stderr, "\r%s %lld/%lld (%d%%)", label, done, total, (int)(done * 100 / total));
    else
        fprintf(stderr, "\r%s %lld", label, done);
    if (done == total)
        fputc('\n', stderr);
}

void cli_print_import_stats_json(const mn_import_stats *st)
{
    printf("{\"sessions_added\":%lld,\"sessions_skipped\":%lld,\"messages_added\":%lld,\"messages_skipped\":%lld}\n",
           (long long)st->sessions_added, (long long)st->sessions_skipped, (long long)st->messages_added,
           (long long)st->messages_skipped);
}

/* A time option: ms since the epoch, or an ISO-8601 date/time in UTC, within the declared range
 * (0, like the option's absence, is "unset"). 0 when absent. */
int cli_time_opt(const struct cli_args *a, const char *name, long long *out)
{
    const struct srv_param *p = must_declare(a, name, PT_INTEGER);
    const char *v = cli_opt(a, name);
    *out = 0;
    if (!v)
        return 0;
    if (cli_whole(v, lowest(p), highest(p), out) == 0)
        return 0;
    struct tm tm = {0};
    int y, mo, d, h = 0, mi = 0, s = 0, used = 0;
    if (sscanf(v, "%4d-%2d-%2d%n", &y, &mo, &d, &used) == 3) {
        const char *rest = v + used;
        int more = 0;
        if ((*rest == 'T' || *rest == ' ') && sscanf(rest + 1, "%2d:%2d%n", &h, &mi, &more) == 2) {
            rest += 1 + more;
            if (*rest == ':' && sscanf(rest + 1, "%2d%n", &s, &more) == 1)
                rest += 1 + more;
        }
        if (*rest == 'Z')
            rest++;
        if (!*rest && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 && h < 24 && mi < 60 && s < 61) {
            tm.tm_year = y - 1900;
            tm.tm_mon = mo - 1;
            tm.tm_mday = d;
            tm.tm_hour = h;
            tm.tm_min = mi;
            tm.tm_sec = s;
            time_t t = timegm(&tm);
            struct tm back;
            /* timegm carries 2026-02-31 over to March 3rd: a day the month does not have is refused;
             * a date is within the declared range as its ms would have to be (none before 1970) */
            if (gmtime_r(&t, &back) && back.tm_mday == d && back.tm_mon == mo - 1 &&
                (long long)t * 1000 >= lowest(p) && (long long)t * 1000 <= highest(p)) {
                *out = (long long)t * 1000;
                return 0;
            }
        }
    }
    char b[64], range[96];
    range_text(p, range, sizeof range);
    cli_usage_error("--%s: '%s' is not a time (ms since the epoch%s, or a date YYYY-MM-DD[THH:MM[:SS]][Z])",
                    cli_typed(a, name, b, sizeof b), v, range);
    return -1;
}

int cli_message_ref(const struct cli_args *a, const char *position, struct cli_msg_ref *r)
{
    r->seq = r->id = 0;
    const struct srv_param *p = must_declare(a, "message-id", PT_INTEGER);
    const char *id = cli_opt(a, "message-id");
    if (position && id)
        return cli_usage_error("give the message by the position or --message-id, not both");
    if (id) {
        if (cli_whole(id, lowest(p), highest(p), &r->id))
            return cli_usage_error("--message-id: '%s' is not a message id (a positive whole number; "
                                   "history --json shows it)", id);
        return 0;
    }
    if (!position) /* a caller's form that has neither */
        return cli_usage_error("give the message's position (the #N of mnemo history) or --message-id");
    /* "#3" as history prints it (quoted in a shell, where # starts a comment), or "3" */
    if (cli_whole(position[0] == '#' ? position + 1 : position, 1, 4294967295LL, &r->seq))
        return cli_usage_error("'%s' is not a position (N or #N, as mnemo history shows it: 1, 2, ...)", position);
    return 0;
}

int cli_message_resolve(mn_db *db, const char *session_id, struct cli_msg_ref *r)
{
    if (r->id)
        return 0;
    mn_history_opts o = MN_HISTORY_OPTS_INIT;
    o.after_seq = r->seq - 1;
    o.limit = 1;
    o.all = 1;
    mn_messages *l = NULL;
    mn_status rc = mn_history(db, session_id, &o, &l);
    if (rc)
        return cli_fail(rc);
    const mn_message *m = mn_messages_at(l, 0);
    if (m && m->seq == r->seq)
        r->id = m->id;
    mn_messages_free(l);
    if (!r->id) {
        fprintf(stderr, "mnemo: session %s has no message #%lld\n", session_id, r->seq);
        return 1;
    }
    return 0;
}
