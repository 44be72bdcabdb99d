/*
 * document_fields.c — what a document's value is read for (docs/documents.md): the texts at its
 * index field paths, in LangGraph's path syntax, to embed; and the search filter, value keys
 * compared with JSON values or LangGraph's operators. Pure functions over jansson values.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/document.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define FILTER_MAX_KEYS 64

/* ---- texts at a field path ------------------------------------------------------------------- */

/* The next token of path at *pos: a name, "[…]" or "{…}" (brackets balanced), skipping '.'. */
static int next_token(const char *path, size_t *pos, size_t *start, size_t *len)
{
    size_t i = *pos;
    while (path[i] == '.')
        i++;
    if (!path[i])
        return 0;
    *start = i;
    if (path[i] == '[' || path[i] == '{') {
        char open = path[i], close = open == '[' ? ']' : '}';
        int depth = 0;
        do {
            depth += path[i] == open ? 1 : path[i] == close ? -1 : 0;
            i++;
        } while (path[i] && depth > 0);
    } else {
        while (path[i] && path[i] != '.' && path[i] != '[' && path[i] != '{')
            i++;
    }
    *len = i - *start;
    *pos = i;
    return 1;
}

struct texts {
    char **items;
    size_t n, max;
    mn_status rc;
};

static void add_text(struct texts *t, char *s)
{
    if (!s) {
        t->rc = t->rc ? t->rc : mn__nomem();
        return;
    }
    if (t->rc || t->n == t->max) {
        if (!t->rc)
            t->rc = mn__err(MN_INVALID, "index: the fields give more than %zu texts", t->max);
        free(s);
        return;
    }
    t->items[t->n++] = s;
}

/* A leaf as LangGraph's String() / JSON.stringify(v, null, 2) gives it; null gives nothing. */
static void add_leaf(struct texts *t, const json_t *v)
{
    if (json_is_null(v))
        return;
    if (json_is_string(v))
        add_text(t, strdup(json_string_value(v)));
    else if (json_is_object(v) || json_is_array(v))
        add_text(t, json_dumps(v, JSON_INDENT(2)));
    else
        add_text(t, json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17)));
}

static void extract(struct texts *t, const json_t *v, const char *path, size_t pos, int first);

/* "{a,b.c}": each field's leaf, through object keys only. */
static void extract_fields(struct texts *t, const json_t *v, const char *tok, size_t len)
{
    if (!json_is_object(v))
        return;
    char *list = strndup(tok + 1, len - 2);
    if (!list) {
        add_text(t, NULL);
        return;
    }
    char *save = NULL;
    for (char *f = strtok_r(list, ",", &save); f && !t->rc; f = strtok_r(NULL, ",", &save)) {
        while (*f == ' ')
            f++;
        size_t e = strlen(f);
        while (e > 0 && f[e - 1] == ' ')
            f[--e] = '\0';
        const json_t *cur = v;
        size_t pos = 0, s, l;
        while (cur && next_token(f, &pos, &s, &l)) {
            char *name = strndup(f + s, l);
            if (!name) {
                add_text(t, NULL);
                break;
            }
            cur = json_is_object(cur) ? json_object_get(cur, name) : NULL;
            free(name);
        }
        if (cur && !json_is_null(cur) && pos > 0)
            add_leaf(t, cur);
    }
    free(list);
}

static void extract(struct texts *t, const json_t *v, const char *path, size_t pos, int first)
{
    size_t s, len;
    size_t next = pos;
    if (t->rc)
        return;
    if (!next_token(path, &next, &s, &len)) {
        add_leaf(t, v);
        return;
    }
    const char *tok = path + s;
    if (first && len == 1 && tok[0] == '$') {
        add_text(t, json_dumps(v, JSON_INDENT(2)));
        return;
    }
    if (tok[0] == '[') {
        if (!json_is_array(v) || tok[len - 1] != ']')
            return;
        if (len == 3 && tok[1] == '*') {
            size_t i;
            json_t *it;
            json_array_foreach(v, i, it) extract(t, it, path, next, 0);
            return;
        }
        char *end = NULL;
        long long idx = strtoll(tok + 1, &end, 10);
        if (end != tok + len - 1)
            return;
        long long n = (long long)json_array_size(v);
        if (idx < 0)
            idx += n;
        if (idx >= 0 && idx < n)
            extract(t, json_array_get(v, (size_t)idx), path, next, 0);
    } else if (tok[0] == '{') {
        if (tok[len - 1] == '}')
            extract_fields(t, v, tok, len);
    } else if (len == 1 && tok[0] == '*') {
        size_t i;
        const char *k;
        json_t *it;
        if (json_is_array(v))
            json_array_foreach(v, i, it) extract(t, it, path, next, 0);
        else if (json_is_object(v))
            json_object_foreach((json_t *)v, k, it) extract(t, it, path, next, 0);
    } else if (json_is_object(v)) {
        char *name = strndup(tok, len);
        if (!name) {
            add_text(t, NULL);
            return;
        }
        const json_t *child = json_object_get(v, name);
        free(name);
        if (child)
            extract(t, child, path, next, 0);
    }
}

int mn__document_field_ok(const char *path)
{
    size_t pos = 0, s, len;
    while (next_token(path, &pos, &s, &len)) {
        const char *tok = path + s;
        if (tok[0] == '[') {
            char *end = NULL;
            if (len < 3 || tok[len - 1] != ']')
                return 0;
            if (!(len == 3 && tok[1] == '*') && (strtoll(tok + 1, &end, 10), end != tok + len - 1))
                return 0;
        } else if (tok[0] == '{') {
            if (len < 3 || tok[len - 1] != '}')
                return 0;
        } else if (memchr(tok, ']', len) || memchr(tok, '}', len)) {
            return 0;
        }
    }
    return 1;
}

mn_status mn__document_texts(const json_t *value, const json_t *fields, size_t max, char ***texts, size_t *n)
{
    struct texts t = {calloc(max ? max : 1, sizeof(char *)), 0, max, MN_OK};
    if (!t.items)
        return mn__nomem();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) extract(&t, value, json_string_value(f), 0, 1);
    if (t.rc) {
        mn__document_texts_free(t.items, t.n);
        return t.rc;
    }
    *texts = t.items;
    *n = t.n;
    return MN_OK;
}

void mn__document_texts_free(char **texts, size_t n)
{
    for (size_t i = 0; texts && i < n; i++)
        free(texts[i]);
    free(texts);
}

/* ---- the filter ------------------------------------------------------------------------------ */

static const char *const OPERATORS[] = {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"};
enum { OP_EQ, OP_NE, OP_GT, OP_GTE, OP_LT, OP_LTE, OP_IN, OP_NIN, OP_COUNT };

static int operator_of(const char *k)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (strcmp(k, OPERATORS[i]) == 0)
            return i;
    return -1;
}

/* An object of operators (LangGraph's isFilterOperators): every key one of them. */
static int is_operators(const json_t *v)
{
    if (!json_is_object(v))
        return 0;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)v, k, x) if (operator_of(k) < 0) return 0;
    return 1;
}

mn_status mn__document_filter_check(const json_t *filter)
{
    if (!json_is_object(filter))
        return mn__err(MN_INVALID, "filter: not a JSON object");
    if (json_object_size(filter) > FILTER_MAX_KEYS)
        return mn__err(MN_INVALID, "filter: %zu keys, at most %d", json_object_size(filter), FILTER_MAX_KEYS);
    const char *key, *op;
    json_t *v, *arg;
    json_object_foreach((json_t *)filter, key, v)
    {
        if (!json_is_object(v))
            continue;
        json_object_foreach(v, op, arg)
        {
            int o = operator_of(op);
            if (op[0] == '$' && o < 0)
                return mn__err(MN_INVALID, "filter.%.100s: unknown operator '%.20s' (%s)", key, op,
                               "$eq $ne $gt $gte $lt $lte $in $nin");
            if ((o == OP_IN || o == OP_NIN) && !json_is_array(arg))
                return mn__err(MN_INVALID, "filter.%.100s.%s: not an array", key, op);
            if (o >= OP_GT && o <= OP_LTE && !json_is_number(arg) && !json_is_string(arg))
                return mn__err(MN_INVALID, "filter.%.100s.%s: not a number or a string", key, op);
        }
    }
    return MN_OK;
}

/* Whether item (NULL: absent) is in the array list. */
static int in_list(const json_t *item, const json_t *list)
{
    size_t i;
    json_t *x;
    json_array_foreach(list, i, x) if (item && json_equal((json_t *)item, x)) return 1;
    return 0;
}

/* The order of item against arg for $gt…$lte: numbers by value, strings by bytes; another
 * pair is not comparable (*ok 0). */
static int compare(const json_t *item, const json_t *arg, int *ok)
{
    *ok = 1;
    if (json_is_number(item) && json_is_number(arg)) {
        double a = json_number_value(item), b = json_number_value(arg);
        return a < b ? -1 : a > b;
    }
    if (json_is_string(item) && json_is_string(arg))
        return strcmp(json_string_value(item), json_string_value(arg));
    *ok = 0;
    return 0;
}

static int operator_holds(int o, const json_t *item, const json_t *arg)
{
    int ok = 0, c;
    switch (o) {
    case OP_EQ:
        return item && json_equal((json_t *)item, (json_t *)arg);
    case OP_NE:
        return !item || !json_equal((json_t *)item, (json_t *)arg);
    case OP_IN:
        return in_list(item, arg);
    case OP_NIN:
        return !in_list(item, arg);
    default:
        c = item ? compare(item, arg, &ok) : 0;
        if (!ok)
            return 0;
        return o == OP_GT ? c > 0 : o == OP_GTE ? c >= 0 : o == OP_LT ? c < 0 : c <= 0;
    }
}

int mn__document_filter_match(const json_t *filter, const json_t *value)
{
    const char *key, *op;
    json_t *want, *arg;
    json_object_foreach((json_t *)filter, key, want)
    {
        const json_t *item = json_object_get(value, key);
        if (is_operators(want)) {
            json_object_foreach(want, op, arg) if (!operator_holds(operator_of(op), item, arg)) return 0;
        } else if (!item || !json_equal((json_t *)item, want)) {
            return 0;
        }
    }
    return 1;
}
