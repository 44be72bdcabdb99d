/*
 * cmd_document.c — `mnemo document put|get|delete|search|paths`: JSON documents at a path and a
 * key, LangGraph's store (docs/documents.md). Each command runs its API operation (cli_run_op),
 * as cmd_checkpoint.c does: the operation's answer is the JSON form of a document REST and MCP
 * give, so --json prints exactly that and errors name the same fields.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* params[the option's name, '_' for '-'] = option `name` as a whole number in the range its
 * operation declares (absent: left out). 0, EXIT_USAGE or 1 after printing. */
static int put_number(const struct cli_args *a, json_t *params, const char *name)
{
    long long n = 0;
    if (cli_number(a, name, &n))
        return EXIT_USAGE;
    if (!cli_opt(a, name))
        return 0;
    char field[32];
    size_t i = 0;
    for (; name[i] && i + 1 < sizeof field; i++)
        field[i] = name[i] == '-' ? '_' : name[i];
    field[i] = '\0';
    return json_object_set_new(params, field, json_integer(n)) ? cli_fail(MN_NOMEM) : 0;
}

/* A new parameter object with the namespace, and the document's address (PATH KEY, the
 * arguments) when the command takes one. NULL after printing. */
static json_t *doc_params(const struct cli_args *a, int address)
{
    json_t *p = json_object();
    if (!p) {
        cli_fail(MN_NOMEM);
        return NULL;
    }
    if (cli_param_text(p, "namespace", cli_opt(a, "namespace")) ||
        (address && (cli_param_text(p, "path", a->pos[0]) || cli_param_text(p, "key", a->pos[1])))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

/* refresh_ttl false when --no-refresh-ttl is given (the operation's default is true). */
static int put_refresh(const struct cli_args *a, json_t *params)
{
    if (!cli_flag(a, "no-refresh-ttl"))
        return 0;
    return json_object_set_new(params, "refresh_ttl", json_false()) ? cli_fail(MN_NOMEM) : 0;
}

int cmd_document_put(const struct cli_global *g, struct cli_args *a)
{
    static const char *const needed[] = {"value", NULL};
    if (cli_require(a, needed))
        return EXIT_USAGE;
    json_t *p = doc_params(a, 1), *r = NULL;
    if (!p)
        return 1;
    int status = put_number(a, p, "ttl-ms");
    if (status) {
        json_decref(p);
        return status;
    }
    /* a value may be up to 1 MiB, past what an argument can hold: "-" reads standard input */
    const char *value = cli_opt(a, "value");
    char *buf = NULL;
    if (strcmp(value, "-") == 0 && !(value = buf = cli_read_all(stdin, "standard input", NULL))) {
        json_decref(p);
        return 1;
    }
    int bad = cli_param_json(p, "value", value) || cli_param_json(p, "index", cli_opt(a, "index"));
    free(buf);
    if (bad) {
        json_decref(p);
        return 1;
    }
    if (cli_op_once(g, "document_put", p, &r))
        return 1;
    const json_t *d = json_object_get(r, "document");
    if (cli_flag(a, "json"))
        status = cli_print_json(d);
    else {
        json_int_t expires = json_integer_value(json_object_get(d, "expires_at"));
        char when[32] = "";
        if (expires)
            cli_time(expires, when, sizeof when);
        printf("saved document %s at path %s%s%s%s\n", cli_member(d, "key"), cli_member(d, "path"),
               expires ? " (expires " : "", when, expires ? " UTC)" : "");
    }
    json_decref(r);
    return status;
}

int cmd_document_get(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = doc_params(a, 1), *r = NULL;
    if (!p || put_refresh(a, p)) {
        json_decref(p);
        return 1;
    }
    if (cli_op_once(g, "document_get", p, &r))
        return 1;
    const json_t *d = json_object_get(r, "document");
    int status = cli_print_json(cli_flag(a, "json") ? d : json_object_get(d, "value"));
    json_decref(r);
    return status;
}

int cmd_document_delete(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = doc_params(a, 1), *r = NULL;
    if (!p || cli_op_once(g, "document_delete", p, &r))
        return 1;
    int status = 0;
    if (cli_flag(a, "json"))
        status = cli_print_json(r);
    else
        printf("%s document %s at path %s\n", json_integer_value(json_object_get(r, "deleted")) ? "deleted" : "no",
               a->pos[1], a->pos[0]);
    json_decref(r);
    return status;
}

int cmd_document_search(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = doc_params(a, 0), *r = NULL;
    if (!p)
        return 1;
    int status = put_number(a, p, "limit");
    if (!status)
        status = put_number(a, p, "offset");
    if (status) {
        json_decref(p);
        return status;
    }
    if (cli_param_text(p, "prefix", a->npos ? a->pos[0] : NULL) || cli_param_json(p, "filter", cli_opt(a, "filter")) ||
        cli_param_text(p, "query", cli_opt(a, "query")) || put_refresh(a, p)) {
        json_decref(p);
        return 1;
    }
    if (cli_op_once(g, "document_search", p, &r))
        return 1;
    const json_t *list = json_object_get(r, "documents"), *d;
    size_t i;
    /* tab-separated: a path or key holds no control character; a ranked search has a score
     * column, "-" for a document without a vector to compare */
    if (cli_flag(a, "json"))
        status = cli_print_json(list);
    else
        json_array_foreach(list, i, d)
        {
            char *value = json_dumps(json_object_get(d, "value"), JSON_COMPACT);
            const json_t *score = json_object_get(d, "score");
            char score_text[32] = "-";
            if (json_is_number(score))
                snprintf(score_text, sizeof score_text, "%.4f", json_number_value(score));
            printf("%s\t%s\t%s%s%s\n", cli_member(d, "path"), cli_member(d, "key"), cli_opt(a, "query") ? score_text : "",
                   cli_opt(a, "query") ? "\t" : "", value ? value : "");
            free(value);
        }
    json_decref(r);
    return status;
}

int cmd_document_paths(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = doc_params(a, 0), *r = NULL;
    if (!p)
        return 1;
    int status = put_number(a, p, "max-depth");
    if (!status)
        status = put_number(a, p, "limit");
    if (!status)
        status = put_number(a, p, "offset");
    if (status) {
        json_decref(p);
        return status;
    }
    if (cli_param_text(p, "prefix", cli_opt(a, "prefix")) || cli_param_text(p, "suffix", cli_opt(a, "suffix"))) {
        json_decref(p);
        return 1;
    }
    if (cli_op_once(g, "document_paths", p, &r))
        return 1;
    const json_t *list = json_object_get(r, "paths"), *path;
    size_t i;
    if (cli_flag(a, "json"))
        status = cli_print_json(list);
    else
        json_array_foreach(list, i, path) puts(json_string_value(path));
    json_decref(r);
    return status;
}
