/*
 * cmd_checkpoint.c — `mnemo checkpoint put|put-writes|get|list|delete-thread`: a thread's graph
 * checkpoints and pending writes (LangGraph; docs/checkpoints.md). Each command runs its API
 * operation (cli_run_op): the library has no JSON form of a checkpoint, and the operation's answer
 * is the one REST and MCP give, so --json prints exactly that and errors name the same fields.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

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

/* The parameters the commands share: the thread (the argument), its namespace, the subgraph and
 * the checkpoint, those of them the command has. NULL after printing. */
static json_t *thread_params(const struct cli_args *a)
{
    json_t *p = json_object();
    if (!p) {
        cli_fail(MN_NOMEM);
        return NULL;
    }
    if (cli_param_text(p, "thread_id", a->npos ? a->pos[0] : NULL) || cli_param_text(p, "namespace", cli_opt(a, "namespace")) ||
        cli_param_text(p, "checkpoint_ns", cli_opt(a, "checkpoint-ns")) ||
        cli_param_text(p, "checkpoint_id", cli_opt(a, "checkpoint-id"))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* The checkpoint_ns as people read it: the root graph's "" shown as "(root)". */
static const char *ns_text(const json_t *cp)
{
    const char *ns = cli_member(cp, "checkpoint_ns");
    return *ns ? ns : "(root)";
}

int cmd_checkpoint_put(const struct cli_global *g, struct cli_args *a)
{
    static const char *const needed[] = {"checkpoint-id", "type", "checkpoint", NULL};
    if (cli_require(a, needed))
        return EXIT_USAGE;
    json_t *p = thread_params(a), *r = NULL;
    if (!p)
        return 1;
    const char *data;
    char *buf;
    int bad = text_opt(a, "checkpoint", &data, &buf) || cli_param_text(p, "checkpoint", data) ||
              cli_param_text(p, "type", cli_opt(a, "type")) ||
              cli_param_text(p, "parent_checkpoint_id", cli_opt(a, "parent-checkpoint-id")) ||
              cli_param_json(p, "metadata", cli_opt(a, "metadata"));
    free(buf);
    if (bad) {
        json_decref(p);
        return 1;
    }
    if (cli_op_once(g, "checkpoint_put", p, &r))
        return 1;
    int status = 0;
    if (cli_flag(a, "json"))
        status = cli_print_json(r);
    else
        printf("saved checkpoint %s of thread %s%s%s%s\n", cli_member(r, "checkpoint_id"), cli_member(r, "thread_id"),
               *cli_member(r, "checkpoint_ns") ? " (checkpoint_ns " : "", cli_member(r, "checkpoint_ns"),
               *cli_member(r, "checkpoint_ns") ? ")" : "");
    json_decref(r);
    return status;
}

int cmd_checkpoint_writes(const struct cli_global *g, struct cli_args *a)
{
    static const char *const needed[] = {"checkpoint-id", "writes", NULL};
    if (cli_require(a, needed))
        return EXIT_USAGE;
    json_t *p = thread_params(a), *r = NULL;
    if (!p)
        return 1;
    const char *writes;
    char *buf;
    int bad = text_opt(a, "writes", &writes, &buf) || cli_param_json(p, "writes", writes);
    free(buf);
    if (bad) {
        json_decref(p);
        return 1;
    }
    if (cli_op_once(g, "checkpoint_put_writes", p, &r))
        return 1;
    int status = 0;
    if (cli_flag(a, "json"))
        status = cli_print_json(r);
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
           cli_member(cp, "thread_id"), cli_member(cp, "session_id"), cli_member(cp, "checkpoint_id"), ns_text(cp),
           parent ? parent : "-");
    printf("created:       %s UTC\ntype:          %s\nsize:          %zu bytes\nmetadata:      %s\n", created,
           cli_member(cp, "type"), strlen(cli_member(cp, "checkpoint")), metadata ? metadata : "");
    free(metadata);
    json_t *writes = json_object_get(cp, "pending_writes"), *w;
    size_t i;
    printf("writes:        %zu\n", json_array_size(writes));
    json_array_foreach(writes, i, w)
    {
        const char *path = cli_member(w, "task_path");
        printf("  %s%s%s #%lld %s (%s, %zu bytes)\n", cli_member(w, "task_id"), *path ? " " : "", path,
               (long long)json_integer_value(json_object_get(w, "idx")), cli_member(w, "channel"), cli_member(w, "type"),
               strlen(cli_member(w, "value")));
    }
}

int cmd_checkpoint_show(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = thread_params(a), *r = NULL;
    if (!p || cli_op_once(g, "checkpoint_get", p, &r))
        return 1;
    const json_t *cp = json_object_get(r, "checkpoint");
    int status = 0;
    if (cli_flag(a, "json"))
        status = cli_print_json(cp);
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
    if (cli_param_text(p, "before", cli_opt(a, "before")) || cli_param_json(p, "filter", cli_opt(a, "filter")) ||
        (cli_opt(a, "limit") && json_object_set_new(p, "limit", json_integer(limit)))) {
        json_decref(p);
        return 1;
    }
    if (cli_op_once(g, "checkpoint_list", p, &r))
        return 1;
    const json_t *list = json_object_get(r, "checkpoints"), *cp;
    size_t i;
    int status = 0;
    if (cli_flag(a, "json"))
        status = cli_print_json(list);
    else {
        if (json_array_size(list))
            printf("%-36s  %-19s  %6s  %-13s  %-20s  %s\n", "CHECKPOINT", "CREATED (UTC)", "WRITES", "CHECKPOINT_NS",
                   "THREAD", "METADATA");
        json_array_foreach(list, i, cp)
        {
            char created[32];
            cli_time(json_integer_value(json_object_get(cp, "created_at")), created, sizeof created);
            char *metadata = json_dumps(json_object_get(cp, "metadata"), JSON_COMPACT);
            printf("%-36s  %-19s  %6zu  %-13s  %-20s  %s\n", cli_member(cp, "checkpoint_id"), created,
                   json_array_size(json_object_get(cp, "pending_writes")), ns_text(cp), cli_member(cp, "thread_id"),
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
    if (!p || cli_op_once(g, "checkpoint_delete_thread", p, &r))
        return 1;
    int status = 0;
    if (cli_flag(a, "json"))
        status = cli_print_json(r);
    else
        printf("deleted %lld checkpoints of thread %s\n", (long long)json_integer_value(json_object_get(r, "deleted")),
               a->pos[0]);
    json_decref(r);
    return status;
}
