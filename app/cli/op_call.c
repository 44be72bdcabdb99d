/*
 * op_call.c — the commands that run one API operation (cli_run_op) with parameters built from
 * their options (cmd_checkpoint.c, cmd_document.c): building the parameters, running the
 * operation once on a handle of its own, printing its answer.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The options each command cannot do without, as a usage error naming the first one missing. */
int cli_require(const struct cli_args *a, const char *const *names)
{
    for (; *names; names++)
        if (!cli_opt(a, *names))
            return cli_usage_error("%s: --%s is required (see mnemo %s --help)", a->command, *names, a->command);
    return 0;
}

/* params[field] = text (NULL: left out). 0, or 1 after printing. */
int cli_param_text(json_t *params, const char *field, const char *text)
{
    if (!text)
        return 0;
    if (json_object_set_new(params, field, json_string(text)) == 0)
        return 0;
    fprintf(stderr, "mnemo: %s: not valid UTF-8\n", field); /* jansson refuses only that (or OOM) */
    return 1;
}

/* params[field] = the JSON text (NULL: left out), parsed as strictly as a REST body; the
 * operation checks its type. 0, or 1 after printing (in the library's words for bad JSON). */
int cli_param_json(json_t *params, const char *field, const char *text)
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

/* Runs operation op with params (released here): 0 with *result, or 1 after printing. */
int cli_op_once(const struct cli_global *g, const char *op, json_t *params, json_t **result)
{
    mn_db *db = cli_open(g);
    int status = !db || cli_run_op(db, op, params, result);
    json_decref(params);
    mn_close(db);
    return status;
}

int cli_print_json(const json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text)
        return cli_fail(MN_NOMEM);
    puts(text);
    free(text);
    return 0;
}

const char *cli_member(const json_t *o, const char *name)
{
    const char *s = json_string_value(json_object_get(o, name));
    return s ? s : "";
}
