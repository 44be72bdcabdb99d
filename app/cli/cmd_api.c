/*
 * cmd_api.c — the CLI's view of the operation table (app/server/ops.c, STYLE.md "one table
 * drives the surface"): which API operation each command performs, the one its words name (and
 * so the ranges of its numeric options, util.c), the one-line summaries the help shows for those commands (taken from
 * the table, never written twice), the API line and parameters under `mnemo COMMAND --help`, and
 * `mnemo api`, which lists every operation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "server/server.h"

/* Commands that perform no operation but take one's parameters: their numeric options take that
 * operation's ranges. */
static const struct {
    const char *cmd, *op;
} ranged[] = {
    {"chat", "context_build"},                      /* --max-tokens: the budget of the contexts it builds */
    {"pin", "message_pin"}, {"unpin", "message_pin"}, /* --message-id */
};

/* The operation a command performs: the one its words name (docs/names.md: "session
 * set-max-turns" performs session_set_max_turns), or NULL. */
const struct srv_op *cli_command_op(const struct cli_cmd *c)
{
    char name[64];
    size_t n = 0;
    for (const char *p = c->name; *p && n + 1 < sizeof name; p++)
        name[n++] = *p == ' ' || *p == '-' ? '_' : *p;
    name[n] = '\0';
    for (size_t i = 0; i < srv_nops; i++)
        if (strcmp(srv_ops[i].name, name) == 0)
            return &srv_ops[i];
    return NULL;
}

/* The command performing op, or NULL. */
static const char *op_command(const struct srv_op *op)
{
    for (const struct cli_cmd *c = cli_commands; c->name; c++)
        if (cli_command_op(c) == op)
            return c->name;
    return NULL;
}

const struct srv_op *cli_command_ranges(const struct cli_cmd *c)
{
    for (size_t i = 0; i < sizeof ranged / sizeof ranged[0]; i++)
        if (strcmp(ranged[i].cmd, c->name) == 0)
            return srv_op_find(ranged[i].op);
    return cli_command_op(c);
}

const char *cli_command_summary(const struct cli_cmd *c)
{
    const struct srv_op *op = cli_command_op(c);
    return op ? op->summary : c->summary ? c->summary : "";
}

/* "POST /v1/sessions/{session_id}/messages · MCP tool append (read-only)" */
static void print_route(FILE *f, const struct srv_op *op)
{
    fprintf(f, "%s %s", op->method, op->path);
    if (op->flags & OP_TOOL)
        fprintf(f, " · MCP tool %s%s%s", op->name, op->flags & OP_READONLY ? " (read-only)" : "",
                op->flags & OP_DESTRUCTIVE ? " (destructive)" : "");
}

void cli_print_command_op(const struct cli_cmd *c)
{
    const struct srv_op *op = cli_command_op(c);
    if (!op)
        return;
    printf("\nAPI: ");
    print_route(stdout, op);
    printf(" (mnemo serve; docs/http-api.md)\n");
    int first = 1;
    for (const struct srv_param *p = op->params; p && p->name; p++) {
        if (strcmp(p->name, "session_id") == 0 && p->required)
            continue; /* the ID argument */
        if (first)
            printf("API parameters:\n");
        first = 0;
        char limits[96] = "";
        if (p->has_min && p->has_max)
            snprintf(limits, sizeof limits, " %lld..%lld", (long long)p->min, (long long)p->max);
        else if (p->has_min)
            snprintf(limits, sizeof limits, " >= %lld", (long long)p->min);
        else if (p->has_max)
            snprintf(limits, sizeof limits, " at most %lld", (long long)p->max);
        printf("  %-22s %s%s%s%s%s%s\n", p->name, srv_ptype_name(p->type), limits, p->required ? ", required" : "",
               p->enums ? " (" : "", p->enums ? p->enums : "", p->enums ? ")" : "");
        if (p->desc)
            printf("  %-22s %s\n", "", p->desc);
    }
}

int cli_run_op(mn_db *db, const char *name, json_t *params, json_t **result)
{
    struct srv_call c = {0};
    c.db = db;
    c.params = params;
    if (srv_call_op(srv_op_find(name), &c) != MN_OK) {
        fprintf(stderr, "mnemo: %s\n", c.msg[0] ? c.msg : mn_status_str(c.status));
        json_decref(c.result);
        return 1;
    }
    *result = c.result;
    return 0;
}

int cmd_api(const struct cli_global *g, struct cli_args *a)
{
    (void)g;
    if (cli_flag(a, "json")) {
        json_t *arr = json_array();
        for (size_t i = 0; i < srv_nops; i++) {
            const struct srv_op *op = &srv_ops[i];
            json_array_append_new(
                arr, json_pack("{s:s,s:o,s:s,s:s,s:s,s:b,s:b,s:b,s:s?,s:o,s:o}", "name", op->name, "aliases",
                               srv_op_alias_list(op), "method", op->method, "path", op->path, "summary", op->summary,
                               "mcp_tool", (op->flags & OP_TOOL) != 0, "read_only", (op->flags & OP_READONLY) != 0,
                               "destructive", (op->flags & OP_DESTRUCTIVE) != 0, "cli_command", op_command(op),
                               "params", srv_op_input_schema(op, -1), "result", srv_op_schema(op->result)));
        }
        char *text = json_dumps(arr, JSON_INDENT(2));
        json_decref(arr);
        if (!text)
            return cli_fail(MN_NOMEM);
        puts(text);
        free(text);
        return 0;
    }
    printf("The operations of the HTTP API (mnemo serve), one table for routes, MCP tools and help:\n\n");
    for (size_t i = 0; i < srv_nops; i++) {
        const struct srv_op *op = &srv_ops[i];
        const char *cmd = op_command(op) ? op_command(op) : "";
        printf("  %-26s ", op->name);
        print_route(stdout, op);
        printf("\n      %s%s%s%s\n", op->summary, *cmd ? " (mnemo " : "", cmd, *cmd ? ")" : "");
    }
    return 0;
}
