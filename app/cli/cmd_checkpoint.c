/*
 * cmd_checkpoint.c — `mnemo checkpoint put|writes|show|list|delete`: a thread's graph checkpoints
 * and pending writes (LangGraph; docs/checkpoints.md). Each command runs its API operation
 * (cli_run_op): the library has no JSON form of a checkpoint, and the operation's answer is the
 * one REST and MCP give, so --json prints exactly that and errors name the same fields.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The options each command cannot do without, as a usage error naming the first one missing. */
static int require(const struct cli_args *a, const char *const *names)
{
    for (; *names; names++)
        if (!cli_opt(a, *names))
            return cli_usage_error("%s: --%s is required (see mnemo %s --help)", a->command, *names, a->command);
    return 0;
}

/* params[field] = text (NULL: left out). 0, or 1 after printing. */
static int put_text(json_t *params, const char *field, const char *text)
{
    if (!text)
        return 0;
    if (json_object_set_new(params, field, json_string(text)) == 0)
        return 0;
    fprintf(stderr, "mnemo: %s: not valid UTF-8\n", field); /* jansson refuses only that (or OOM) */
    return 1;
}

/* The value of option `name`, "-" being standard input (a checkpoint or a batch of writes may be
 * megabytes, past what an argument can hold); *buf keeps what was read, for the caller to free.
 * 0, or 1 after printing. */
static int text_opt(const struct cli_args *a, const char *name, const char **text, char **buf)
{
    *text = cli_opt(a, name);
    *buf = NULL;
    if (!*text || strcmp(*text, "-") != 0)
        return 0;
    *text = *buf = cli_read_all(stdin, "standard input", NULL);
    return *buf ? 0 : 1;
}

/* params[field] = the JSON text (NULL: left out), parsed as strictly as a REST body; the
 * operation checks its type. 0, or 1 after printing (in the library's words for bad JSON). */
static int put_json(json_t *params, const char *field, const char *text)
{
    if (!text)
        return 0;
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!v) {
        fprintf(stderr, "mnemo: %s: malformed JSON: %s at line %d column %d\n", field, jerr.text, jerr.line,
                jerr.column);
        return 1;
    }
    return json_object_set_new(params, field, v) ? cli_fail(MN_NOMEM) : 0;
}

/* The parameters the commands share: the thread (the argument), its namespace, the subgraph and
 * the checkpoint, those of them the command has. NULL after printing. */
static json_t *thread_params(const struct cli_args *a)
{
    json_t *p = json_object();
    if (!p) {
        cli_fail(MN_NOMEM);
        return NULL;
    }
    if (put_text(p, "thread_id", a->npos ? a->pos[0] : NULL) || put_text(p, "namespace", cli_opt(a, "namespace")) ||
        put_text(p, "checkpoint_ns", cli_opt(a, "checkpoint-ns")) ||
        put_text(p, "checkpoint_id", cli_opt(a, "checkpoint-id"))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* Runs operation op with params (released here): 0 with *result, or 1 after printing. */
static int run(const struct cli_global *g, const char *op, json_t *params, json_t **result)
{
    mn_db *db = cli_open(g);
    int status = !db || cli_run_op(db, op, params, result);
    json_decref(params);
    mn_close(db);
    return status;
}

static int print_json(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        return cli_fail(MN_NOMEM);
    puts(text);
    free(text);
    return 0;
}

static const char *member(const json_t *o, const char *name)
{
    const char *s = json_string_value(json_object_get(o, name));
    return s ? s : "";
}

/* The checkpoint_ns as people read it: the root graph's "" shown as "(root)". */
static const char *ns_text(const json_t *cp)
{
    const char *ns = member(cp, "checkpoint_ns");
    return *ns ? ns : "(root)";
}

int cmd_checkpoint_put(const struct cli_global *g, struct cli_args *a)
{
    static const char *const needed[] = {"checkpoint-id", "type", "checkpoint", NULL};
    if (require(a, needed))
        return EXIT_USAGE;
    json_t *p = thread_params(a), *r = NULL;
    if (!p)
        return 1;
    const char *data;
    char *buf;
    int bad = text_opt(a, "checkpoint", &data, &buf) || put_text(p, "checkpoint", data) ||
              put_text(p, "type", cli_opt(a, "type")) ||
              put_text(p, "parent_checkpoint_id", cli_opt(a, "parent-checkpoint-id")) ||
              put_json(p, "metadata", cli_opt(a, "metadata"));
    free(buf);
    if (bad) {
        json_decref(p);
        return 1;
    }
    if (run(g, "checkpoint_put", p, &r))
        return 1;
    int status = 0;
    if (cli_flag(a, "json"))
        status = print_json(r);
    else
        printf("saved checkpoint %s of thread %s%s%s%s\n", member(r, "checkpoint_id"), member(r, "thread_id"),
               *member(r, "checkpoint_ns") ? " (checkpoint_ns " : "", member(r, "checkpoint_ns"),
               *member(r, "checkpoint_ns") ? ")" : "");
    json_decref(r);
    return status;
}

int cmd_checkpoint_writes(const struct cli_global *g, struct cli_args *a)
{
    static const char *const needed[] = {"checkpoint-id", "writes", NULL};
    if (require(a, needed))
        return EXIT_USAGE;
    json_t *p = thread_params(a), *r = NULL;
    if (!p)
        return 1;
    const char *writes;
    char *buf;
    int bad = text_opt(a, "writes", &writes, &buf) || put_json(p, "writes", writes);
    free(buf);
    if (bad) {
        json_decref(p);
        return 1;
    }
    if (run(g, "checkpoint_put_writes", p, &r))
        return 1;
    int status = 0;
    if (cli_flag(a, "json"))
        status = print_json(r);
    else
        printf("stored %lld writes\n", (long long)json_integer_value(json_object_get(r, "stored")));
    json_decref(r);
    return status;
}

/* One checkpoint for people: its fields, a line a pending write; the serialized texts by size
 * (--json has them). */
static void print_checkpoint(const json_t *cp)
{
    char created[32];
    cli_time(json_integer_value(json_object_get(cp, "created_at")), created, sizeof created);
    const char *parent = json_string_value(json_object_get(cp, "parent_checkpoint_id"));
    char *metadata = json_dumps(json_object_get(cp, "metadata"), JSON_COMPACT);
    printf("thread:        %s\nsession:       %s\ncheckpoint:    %s\ncheckpoint_ns: %s\nparent:        %s\n",
           member(cp, "thread_id"), member(cp, "session_id"), member(cp, "checkpoint_id"), ns_text(cp),
           parent ? parent : "-");
    printf("created:       %s UTC\ntype:          %s\nsize:          %zu bytes\nmetadata:      %s\n", created,
           member(cp, "type"), strlen(member(cp, "checkpoint")), metadata ? metadata : "");
    free(metadata);
    json_t *writes = json_object_get(cp, "pending_writes"), *w;
    size_t i;
    printf("writes:        %zu\n", json_array_size(writes));
    json_array_foreach(writes, i, w)
    {
        const char *path = member(w, "task_path");
        printf("  %s%s%s #%lld %s (%s, %zu bytes)\n", member(w, "task_id"), *path ? " " : "", path,
               (long long)json_integer_value(json_object_get(w, "idx")), member(w, "channel"), member(w, "type"),
               strlen(member(w, "value")));
    }
}

int cmd_checkpoint_show(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = thread_params(a), *r = NULL;
    if (!p || run(g, "checkpoint_get", p, &r))
        return 1;
    const json_t *cp = json_object_get(r, "checkpoint");
    int status = 0;
    if (cli_flag(a, "json"))
        status = print_json(cp);
    else
        print_checkpoint(cp);
    json_decref(r);
    return status;
}

int cmd_checkpoint_list(const struct cli_global *g, struct cli_args *a)
{
    long long limit = 0;
    if (cli_number(a, "limit", &limit))
        return EXIT_USAGE;
    json_t *p = thread_params(a), *r = NULL;
    if (!p)
        return 1;
    if (put_text(p, "before", cli_opt(a, "before")) || put_json(p, "filter", cli_opt(a, "filter")) ||
        (cli_opt(a, "limit") && json_object_set_new(p, "limit", json_integer(limit)))) {
        json_decref(p);
        return 1;
    }
    if (run(g, "checkpoint_list", p, &r))
        return 1;
    const json_t *list = json_object_get(r, "checkpoints"), *cp;
    size_t i;
    int status = 0;
    if (cli_flag(a, "json"))
        status = print_json(list);
    else {
        if (json_array_size(list))
            printf("%-36s  %-19s  %6s  %-13s  %-20s  %s\n", "CHECKPOINT", "CREATED (UTC)", "WRITES", "CHECKPOINT_NS",
                   "THREAD", "METADATA");
        json_array_foreach(list, i, cp)
        {
            char created[32];
            cli_time(json_integer_value(json_object_get(cp, "created_at")), created, sizeof created);
            char *metadata = json_dumps(json_object_get(cp, "metadata"), JSON_COMPACT);
            printf("%-36s  %-19s  %6zu  %-13s  %-20s  %s\n", member(cp, "checkpoint_id"), created,
                   json_array_size(json_object_get(cp, "pending_writes")), ns_text(cp), member(cp, "thread_id"),
                   metadata ? metadata : "");
            free(metadata);
        }
    }
    json_decref(r);
    return status;
}

int cmd_checkpoint_delete(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = thread_params(a), *r = NULL;
    if (!p || run(g, "checkpoint_delete_thread", p, &r))
        return 1;
    int status = 0;
    if (cli_flag(a, "json"))
        status = print_json(r);
    else
        printf("deleted %lld checkpoints of thread %s\n", (long long)json_integer_value(json_object_get(r, "deleted")),
               a->pos[0]);
    json_decref(r);
    return status;
}
