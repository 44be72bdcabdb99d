/*
 * params.c — the operations' parameter declarations at work: the generic validator that runs
 * before every handler (an undeclared name, a wrong type, a value outside its limits is refused
 * naming the parameter, never ignored; only query-string and path text is converted to a number
 * or a boolean), and the JSON Schemas generated from the declarations for MCP tools/list,
 * /openapi.json and `mnemo api`. A limit is written once, in the table (ops.c).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/server.h"

const char *srv_ptype_name(enum srv_ptype t)
{
    switch (t) {
    case PT_STRING: return "string";
    case PT_INTEGER: return "integer";
    case PT_NUMBER: return "number";
    case PT_BOOLEAN: return "boolean";
    case PT_OBJECT: return "object";
    case PT_ARRAY: return "array";
    case PT_ANY: return "any JSON value";
    default: return "value";
    }
}

const struct srv_param *srv_param_find(const struct srv_op *op, const char *name)
{
    for (const struct srv_param *p = op->params; p && p->name; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

enum srv_pin srv_param_in(const struct srv_op *op, const struct srv_param *p)
{
    char pat[80];
    snprintf(pat, sizeof pat, "{%s}", p->name);
    if (strstr(op->path, pat))
        return PIN_PATH;
    /* a list of objects has no query-string form: a DELETE carries it in a JSON body (Mem0's batch) */
    if (strcmp(op->method, "DELETE") == 0 && p->type == PT_ARRAY && p->items && strstr(p->items, "\"object\""))
        return PIN_BODY;
    return strcmp(op->method, "GET") == 0 || strcmp(op->method, "DELETE") == 0 ? PIN_QUERY : PIN_BODY;
}

/* ---- schemas --------------------------------------------------------------------------------- */

json_t *srv_param_schema(const struct srv_param *p)
{
    json_t *s = json_object();
    if (p->type != PT_ANY) {
        if (p->alt)
            json_object_set_new(s, "type", json_pack("[s,s]", srv_ptype_name(p->type), srv_ptype_name(p->alt)));
        else
            json_object_set_new(s, "type", json_string(srv_ptype_name(p->type)));
    }
    if (p->type == PT_INTEGER || p->type == PT_NUMBER) {
        if (p->has_min)
            json_object_set_new(s, "minimum", json_integer(p->min));
        if (p->has_max)
            json_object_set_new(s, "maximum", json_integer(p->max));
    } else if (p->type == PT_STRING && p->has_max) {
        json_object_set_new(s, "maxLength", json_integer(p->max));
    } else if (p->type == PT_ARRAY) {
        if (p->has_min)
            json_object_set_new(s, "minItems", json_integer(p->min));
        if (p->has_max)
            json_object_set_new(s, "maxItems", json_integer(p->max));
    }
    if (p->enums) {
        json_t *e = json_array();
        for (const char *q = p->enums; *q;) {
            size_t n = strcspn(q, "|");
            json_array_append_new(e, json_stringn(q, n));
            q += n + (q[n] == '|');
        }
        /* an array's enum is its items' (include: a list of those values) */
        if (p->type == PT_ARRAY)
            json_object_set_new(s, "items", json_pack("{s:s,s:o}", "type", "string", "enum", e));
        else
            json_object_set_new(s, "enum", e);
    }
    if (p->def) {
        json_t *d = json_loads(p->def, JSON_DECODE_ANY, NULL);
        if (d)
            json_object_set_new(s, "default", d);
    }
    if (p->items && !json_object_get(s, "items")) {
        json_t *it = json_loads(p->items, 0, NULL);
        if (it)
            json_object_set_new(s, "items", it);
    }
    if (p->desc)
        json_object_set_new(s, "description", json_string(p->desc));
    return s;
}

json_t *srv_op_input_schema(const struct srv_op *op, int only_in)
{
    json_t *props = json_object(), *req = json_array();
    for (const struct srv_param *p = op->params; p && p->name; p++) {
        if (only_in >= 0 && (int)srv_param_in(op, p) != only_in)
            continue;
        json_object_set_new(props, p->name, srv_param_schema(p));
        if (p->required)
            json_array_append_new(req, json_string(p->name));
    }
    json_t *s = json_pack("{s:s,s:o,s:b}", "type", "object", "properties", props, "additionalProperties", 0);
    if (json_array_size(req))
        json_object_set_new(s, "required", req);
    else
        json_decref(req);
    return s;
}

/* ---- the validator --------------------------------------------------------------------------- */

mn_status srv_invalid(struct srv_call *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->status = MN_INVALID;
    c->invalid_params = 1;
    return MN_INVALID;
}

/* "a, b, c": the declared names, for the message about an unknown one. */
static void names(const struct srv_op *op, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    for (const struct srv_param *p = op->params; p && p->name && n + 1 < cap; p++) {
        int w = snprintf(out + n, cap - n, "%s%s", n ? ", " : "", p->name);
        if (w < 0)
            break;
        n += (size_t)w < cap - n ? (size_t)w : cap - n - 1;
    }
}

static size_t utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static int in_enum(const char *list, const char *v)
{
    size_t vl = strlen(v);
    for (const char *q = list; *q;) {
        size_t n = strcspn(q, "|");
        if (n == vl && strncmp(q, v, n) == 0)
            return 1;
        q += n + (q[n] == '|');
    }
    return 0;
}

/* "a, b or c" from "a|b|c". */
static void enum_text(const char *list, char *out, size_t cap)
{
    size_t n = 0, total = strlen(list);
    const char *last = strrchr(list, '|');
    for (size_t i = 0; i < total && n + 5 < cap; i++) {
        if (list + i == last) {
            memcpy(out + n, " or ", 4);
            n += 4;
        } else if (list[i] == '|') {
            memcpy(out + n, ", ", 2);
            n += 2;
        } else {
            out[n++] = list[i];
        }
    }
    out[n] = '\0';
}

/* Whether p's string value is text standing for another type: a REST query-string or path value
 * ("60", "true"). A JSON body and MCP arguments carry their own types: "60"
 * there is a string, refused where a number is declared (converting it let "pinned": "" pin). */
static int given_as_text(const struct srv_call *c, const struct srv_param *p)
{
    return c->text_params && json_object_get(c->text_params, p->name);
}

int srv_number_text(const char *text, int real)
{
    const char *p = text + (*text == '-');
    size_t whole = strspn(p, "0123456789");
    if (!whole)
        return 0;
    p += whole;
    if (real && *p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        if (!frac)
            return 0;
        p += 1 + frac;
    }
    if (real && (*p == 'e' || *p == 'E')) {
        p += 1 + (p[1] == '+' || p[1] == '-');
        size_t exp = strspn(p, "0123456789");
        if (!exp)
            return 0;
        p += exp;
    }
    return *p == '\0';
}

/* The value of one declared parameter checked (and converted from query or path text) in place. */
static mn_status check_one(struct srv_call *c, const struct srv_param *p, json_t *v)
{
    const char *name = p->name;
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    if (s && strlen(s) != json_string_length(v))
        return srv_invalid(c, "%s: must not contain NUL", name);
    enum srv_ptype t = p->type;
    if (p->alt && ((p->alt == PT_STRING && s) || (p->alt == PT_ARRAY && json_is_array(v)) ||
                   (p->alt == PT_BOOLEAN && (json_is_boolean(v) || (s && given_as_text(c, p))))))
        t = p->alt; /* the second form (metadata as JSON text, ids as a list, index as false) */
    int typed = t == PT_INTEGER || t == PT_NUMBER || t == PT_BOOLEAN;
    const char *text = s && typed && given_as_text(c, p) ? s : NULL; /* a string to convert */
    switch (t) {
    case PT_STRING:
        if (!s)
            return srv_invalid(c, "%s: must be a string", name);
        if (p->has_max && utf8_chars(s, strlen(s)) > (size_t)p->max)
            return srv_invalid(c, "%s: %zu characters is over the limit of %lld", name, utf8_chars(s, strlen(s)),
                       (long long)p->max);
        if (p->enums && !in_enum(p->enums, s)) {
            char e[256];
            enum_text(p->enums, e, sizeof e);
            return srv_invalid(c, "%s: '%.60s' is not one of %s", name, s, e);
        }
        return MN_OK;
    case PT_INTEGER: {
        long long n;
        if (json_is_integer(v)) {
            n = json_integer_value(v);
        } else if (text) {
            errno = 0; /* plain text (srv_number_text) is read whole: only its range can fail */
            n = strtoll(text, NULL, 10);
            if (!srv_number_text(text, 0) || errno)
                return srv_invalid(c, "%s: '%.60s' is not a whole number", name, text);
        } else {
            return srv_invalid(c, "%s: must be an integer", name);
        }
        if ((p->has_min && n < p->min) || (p->has_max && n > p->max)) {
            if (p->has_max)
                return srv_invalid(c, "%s: %lld is out of range %lld..%lld", name, n, (long long)p->min, (long long)p->max);
            return srv_invalid(c, "%s: %lld is below the minimum of %lld", name, n, (long long)p->min);
        }
        if (text)
            json_object_set_new(c->params, name, json_integer(n));
        return MN_OK;
    }
    case PT_NUMBER: {
        double d;
        if (json_is_number(v)) {
            d = json_number_value(v);
        } else if (text) {
            errno = 0;
            d = strtod(text, NULL);
            if (!srv_number_text(text, 1) || errno || !isfinite(d))
                return srv_invalid(c, "%s: '%.60s' is not a number", name, text);
        } else {
            return srv_invalid(c, "%s: must be a number", name);
        }
        if ((p->has_min && d < (double)p->min) || (p->has_max && d > (double)p->max))
            return srv_invalid(c, "%s: %g is out of range %lld..%lld", name, d, (long long)p->min, (long long)p->max);
        if (text)
            json_object_set_new(c->params, name, json_real(d));
        return MN_OK;
    }
    case PT_BOOLEAN:
        if (json_is_boolean(v))
            return MN_OK;
        /* only JSON's two spellings: "1", "0" or "" read as a boolean let a typo pass as a filter */
        if (text && !strcmp(text, "true")) {
            json_object_set_new(c->params, name, json_true());
            return MN_OK;
        }
        if (text && !strcmp(text, "false")) {
            json_object_set_new(c->params, name, json_false());
            return MN_OK;
        }
        return srv_invalid(c, "%s: must be true or false", name);
    case PT_OBJECT:
        return json_is_object(v) ? MN_OK : srv_invalid(c, "%s: must be an object", name);
    case PT_ARRAY:
        if (!json_is_array(v) && given_as_text(c, p))
            return srv_invalid(c, "%s: must be an array (in a query string: %s[]=... once for each item)", name, name);
        if (!json_is_array(v))
            return srv_invalid(c, "%s: must be an array", name);
        if (p->has_max && json_array_size(v) > (size_t)p->max)
            return srv_invalid(c, "%s: %zu items is over the limit of %lld", name, json_array_size(v), (long long)p->max);
        if (p->has_min && json_array_size(v) < (size_t)p->min)
            return srv_invalid(c, "%s: %zu items is under the minimum of %lld", name, json_array_size(v), (long long)p->min);
        if (p->enums) { /* each item one of the values, the one that is not named with its index */
            size_t i;
            json_t *item;
            json_array_foreach(v, i, item) {
                const char *is = json_string_value(item);
                if (!is || strlen(is) != json_string_length(item) || !in_enum(p->enums, is)) {
                    char e[512];
                    enum_text(p->enums, e, sizeof e);
                    if (!is)
                        return srv_invalid(c, "%s[%zu]: must be a string, one of %s", name, i, e);
                    return srv_invalid(c, "%s[%zu]: '%.60s' is not one of %s", name, i, is, e);
                }
            }
        }
        return MN_OK;
    default:
        return MN_OK;
    }
}

mn_status srv_params_check(struct srv_call *c)
{
    const struct srv_op *op = c->op;
    const char *k;
    json_t *v;
    void *tmp;
    /* undeclared names first: a misspelt filter must never widen a search or be dropped */
    json_object_foreach(c->params, k, v) {
        if (!srv_param_find(op, k)) {
            char known[600];
            names(op, known, sizeof known);
            return srv_invalid(c, "%.60s: not a parameter of %s (its parameters: %s)", k, op->name,
                       known[0] ? known : "none");
        }
    }
    /* null is absent */
    json_object_foreach_safe(c->params, tmp, k, v) {
        if (json_is_null(v))
            json_object_del(c->params, k);
    }
    for (const struct srv_param *p = op->params; p && p->name; p++) {
        json_t *val = json_object_get(c->params, p->name);
        if (!val) {
            if (p->required)
                return srv_invalid(c, "%s: required (%s)", p->name, p->desc ? p->desc : srv_ptype_name(p->type));
            if (p->def) {
                json_t *d = json_loads(p->def, JSON_DECODE_ANY, NULL);
                if (d)
                    json_object_set_new(c->params, p->name, d);
            }
            continue;
        }
        mn_status st = check_one(c, p, val);
        if (st)
            return st;
    }
    return MN_OK;
}
