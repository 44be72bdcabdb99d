/*
 * mem0_filter.c — Mem0's memory filters for the Mem0-shaped routes (mem0.c): AND, OR and NOT
 * of conditions on user_id, agent_id, run_id, app_id, categories, created_at / updated_at /
 * timestamp, metadata keys, keywords (the text) and memory_ids, with Mem0's operators. Checked
 * once; the equalities every match must have become the library's query, and the rest is matched
 * here against each memory of it (docs/memory.md, "Filters").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/mem0_int.h"

enum field { F_USER, F_AGENT, F_RUN, F_APP, F_CATEGORIES, F_CREATED, F_UPDATED, F_METADATA, F_KEYWORDS, F_IDS };
enum op { O_EQ, O_NE, O_IN, O_NIN, O_GT, O_GTE, O_LT, O_LTE, O_CONTAINS, O_ICONTAINS, O_NONE };

static const struct {
    const char *name;
    enum field field;
} fields[] = {{"user_id", F_USER},       {"agent_id", F_AGENT},         {"run_id", F_RUN},
              {"app_id", F_APP},         {"categories", F_CATEGORIES},  {"created_at", F_CREATED},
              {"timestamp", F_CREATED},  {"updated_at", F_UPDATED},     {"metadata", F_METADATA},
              {"keywords", F_KEYWORDS},  {"memory_ids", F_IDS}};
static const char *const op_names[] = {"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "icontains"};

#define OPS_ID ((1u << O_EQ) | (1u << O_NE) | (1u << O_IN) | (1u << O_NIN) | (1u << O_CONTAINS) | (1u << O_ICONTAINS))
#define OPS_TIME ((1u << O_EQ) | (1u << O_NE) | (1u << O_GT) | (1u << O_GTE) | (1u << O_LT) | (1u << O_LTE))
#define OPS_TEXT ((1u << O_CONTAINS) | (1u << O_ICONTAINS))
#define OPS_ALL 0x3ffu

static int field_of(const char *name)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (strcmp(fields[i].name, name) == 0)
            return (int)fields[i].field;
    return -1;
}

static const char *field_name(enum field f)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].field == f)
            return fields[i].name;
    return "?";
}

static enum op op_of(const char *name)
{
    for (int i = 0; i < O_NONE; i++)
        if (strcmp(op_names[i], name) == 0)
            return (enum op)i;
    return O_NONE;
}

static unsigned ops_of(enum field f)
{
    return f == F_CREATED || f == F_UPDATED ? OPS_TIME : f == F_KEYWORDS ? OPS_TEXT : f == F_METADATA ? OPS_ALL : OPS_ID;
}

/* "eq, ne, in" … for the operators in mask. */
static const char *ops_list(unsigned mask, char *b, size_t cap)
{
    size_t n = 0;
    b[0] = '\0';
    for (int i = 0; i < O_NONE; i++)
        if (mask & (1u << i)) {
            int w = snprintf(b + n, cap - n, "%s%s", n ? ", " : "", op_names[i]);
            if (w < 0 || (size_t)w >= cap - n)
                break;
            n += (size_t)w;
        }
    return b;
}

/* ---- time values ----------------------------------------------------------------------------- */

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (**p < '0' || **p > '9')
            return -1;
        v = v * 10 + (**p - '0');
    }
    *out = v;
    return 0;
}

/* An ISO 8601 date or date-time ("2025-01-01", "2025-01-01T08:30:00.250Z", "… +02:00"; no zone:
 * UTC) as ms since the epoch, years 1970 to 9999; or an integer: seconds since the epoch, as
 * Mem0's timestamp. -1 when it is neither. */
static int64_t time_value(json_t *v)
{
    if (json_is_integer(v)) {
        json_int_t s = json_integer_value(v);
        return s >= 0 && s <= 253402300799 ? (int64_t)s * 1000 : -1;
    }
    const char *p = json_string_value(v);
    int y, mo, d, h = 0, mi = 0, s = 0, ms = 0, off = 0;
    if (!p || digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d))
        return -1;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi))
            return -1;
        if (*p == ':' && (p++, digits(&p, 2, &s)))
            return -1;
        if (*p == '.') {
            int scale = 100;
            for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
                ms += (*p - '0') * scale;
            if (p[-1] == '.')
                return -1;
        }
        if (*p == 'Z' || *p == 'z') {
            p++;
        } else if (*p == '+' || *p == '-') {
            int sign = *p++ == '-' ? -1 : 1, oh, om;
            if (digits(&p, 2, &oh) || (*p == ':' && !*++p) || digits(&p, 2, &om) || oh > 23 || om > 59)
                return -1;
            off = sign * (oh * 60 + om);
        }
    }
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (*p || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || s > 59)
        return -1;
    if (mo == 2 && d == 29 && (y % 4 || (y % 100 == 0 && y % 400)))
        return -1;
    int64_t t = ((days_from_civil(y, (unsigned)mo, (unsigned)d) * 24 + h) * 60 + mi - off) * 60 + s;
    return t < 0 ? -1 : t * 1000 + ms;
}

/* ---- checking ---------------------------------------------------------------------------------- */

struct check {
    struct srv_call *c;
    struct m0_filter *f;
    json_t *meta;   /* the metadata equalities every match has (pushed down) */
    size_t terms;
};

static mn_status too_many(struct check *k)
{
    return srv_fail(k->c, MN_INVALID, "filters: more than %d conditions, operators and listed values",
                    M0_MAX_FILTER_TERMS);
}

static mn_status count_term(struct check *k)
{
    return ++k->terms > M0_MAX_FILTER_TERMS ? too_many(k) : MN_OK;
}

/* An app_id the call's key does not cover: what the key may read is its namespace only. */
static mn_status check_app(struct check *k, const char *path, json_t *v)
{
    const char *ns = json_string_value(v);
    if (k->c->ns && ns && strcmp(ns, "*") != 0 && strcmp(ns, k->c->ns) != 0) {
        k->c->http = 403;
        return srv_fail(k->c, MN_INVALID, "%s: this API key is bound to namespace '%s'", path, k->c->ns);
    }
    return MN_OK;
}

/* The operand of `op` on field f. */
static mn_status check_operand(struct check *k, const char *path, enum field f, enum op op, json_t *v)
{
    if (op == O_IN || op == O_NIN) {
        if (!json_is_array(v) || json_array_size(v) == 0)
            return srv_fail(k->c, MN_INVALID, "%s: must be a non-empty list", path);
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            if (count_term(k))
                return k->c->status;
            if (f != F_METADATA && !json_is_string(e))
                return srv_fail(k->c, MN_INVALID, "%s[%zu]: must be a string", path, i);
            if (f == F_METADATA && (json_is_object(e) || json_is_array(e)))
                return srv_fail(k->c, MN_INVALID, "%s[%zu]: must be a string, number, boolean or null", path, i);
            if (f == F_APP && op == O_IN && check_app(k, path, e))
                return k->c->status;
        }
        return MN_OK;
    }
    if (op == O_CONTAINS || op == O_ICONTAINS)
        return json_is_string(v) ? MN_OK : srv_fail(k->c, MN_INVALID, "%s: must be a string", path);
    if (f == F_CREATED || f == F_UPDATED)
        return time_value(v) >= 0 ? MN_OK
                                  : srv_fail(k->c, MN_INVALID, "%s: must be an ISO 8601 date or date-time "
                                                               "(\"2025-01-31T12:00:00Z\") or seconds since the epoch",
                                             path);
    if (f == F_METADATA) {
        if ((op == O_EQ || op == O_NE) && !json_is_object(v) && !json_is_array(v))
            return MN_OK;
        if (op != O_EQ && op != O_NE && (json_is_string(v) || json_is_number(v)))
            return MN_OK;
        return srv_fail(k->c, MN_INVALID, "%s: must be a %s", path,
                        op == O_EQ || op == O_NE ? "string, number, boolean or null" : "string or number");
    }
    if (!json_is_string(v) || !json_string_length(v))
        return srv_fail(k->c, MN_INVALID, "%s: must be a non-empty string (or \"*\" for any)", path);
    return f == F_APP && op == O_EQ ? check_app(k, path, v) : MN_OK;
}

/* Hands an equality every match must have to the library's query, when it takes it; 1 when the
 * query applies it (now, or already with this very value). */
static int push_eq(struct check *k, enum field f, const char *mkey, json_t *v)
{
    const char *s = json_string_value(v);
    const char **slot = f == F_USER ? &k->f->user : f == F_AGENT ? &k->f->agent : f == F_RUN ? &k->f->run
                        : f == F_APP ? &k->f->ns : f == F_CATEGORIES ? &k->f->kind : NULL;
    if (slot) {
        /* ids the library could never store, and a kind outside its [a-z_]{1,32}: matched here */
        if (!s || strcmp(s, "*") == 0 || strlen(s) > 256 ||
            (f == F_CATEGORIES && (strlen(s) > 32 || strspn(s, "abcdefghijklmnopqrstuvwxyz_") != strlen(s))))
            return 0;
        if (!*slot)
            *slot = s;
        return *slot == s;
    }
    /* metadata: the library matches at most 16 keys of A-Z a-z 0-9 _ - to a string, number or
     * boolean */
    if (f != F_METADATA || !(json_is_string(v) || json_is_number(v) || json_is_boolean(v)) ||
        (s && strcmp(s, "*") == 0) || !*mkey ||
        strspn(mkey, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(mkey))
        return 0;
    if (!json_object_get(k->meta, mkey) && json_object_size(k->meta) < 16)
        json_object_set(k->meta, mkey, v);
    return json_object_get(k->meta, mkey) == v;
}

/* One condition "field": value; spine: every match must meet it (it may narrow the query). */
static mn_status check_cond(struct check *k, const char *path, enum field f, const char *mkey, json_t *v, int spine)
{
    char sub[256], ops[96];
    if (f == F_IDS) {
        k->f->evaluate = 1;
        if (!json_is_array(v) || json_array_size(v) == 0)
            return srv_fail(k->c, MN_INVALID, "%s: must be a non-empty list of memory ids", path);
        return check_operand(k, path, f, O_IN, v);
    }
    if (f == F_METADATA && !mkey) {
        if (!json_is_object(v))
            return srv_fail(k->c, MN_INVALID, "%s: must be an object of metadata keys and their conditions", path);
        const char *key;
        json_t *e;
        json_object_foreach(v, key, e) {
            snprintf(sub, sizeof sub, "%s.%.60s", path, key);
            if (count_term(k) || check_cond(k, sub, F_METADATA, key, e, spine))
                return k->c->status;
        }
        return MN_OK;
    }
    if (!json_is_object(v)) { /* eq implied */
        if (f == F_KEYWORDS)
            return srv_fail(k->c, MN_INVALID, "%s: must be an object of operators (contains, icontains)", path);
        if (check_operand(k, path, f, O_EQ, v))
            return k->c->status;
        if (!spine || !push_eq(k, f, mkey, v))
            k->f->evaluate = 1;
        return MN_OK;
    }
    if (json_object_size(v) == 0)
        return srv_fail(k->c, MN_INVALID, "%s: an empty object of operators (%s)", path, ops_list(ops_of(f), ops, sizeof ops));
    k->f->evaluate = 1;
    const char *name;
    json_t *operand;
    json_object_foreach(v, name, operand) {
        enum op op = op_of(name);
        snprintf(sub, sizeof sub, "%s.%.40s", path, name);
        if (count_term(k))
            return k->c->status;
        if (op == O_NONE)
            return srv_fail(k->c, MN_INVALID, "%s: unknown operator (%s)", sub, ops_list(OPS_ALL, ops, sizeof ops));
        if (!(ops_of(f) & (1u << op)))
            return srv_fail(k->c, MN_INVALID, "%s: not an operator of %s (%s)", sub, field_name(f),
                            ops_list(ops_of(f), ops, sizeof ops));
        if (check_operand(k, sub, f, op, operand))
            return k->c->status;
    }
    return MN_OK;
}

static mn_status check_node(struct check *k, const char *path, json_t *node, int depth, int spine);

/* AND, OR (a non-empty list of filter objects) or NOT (one, or a list: none of them). */
static mn_status check_logic(struct check *k, const char *path, const char *name, json_t *v, int depth, int spine)
{
    char sub[256];
    if (depth >= M0_MAX_FILTER_DEPTH)
        return srv_fail(k->c, MN_INVALID, "%s: nested deeper than %d levels of AND, OR and NOT", path,
                        M0_MAX_FILTER_DEPTH);
    int is_and = strcmp(name, "AND") == 0, is_not = strcmp(name, "NOT") == 0;
    if (!is_and) /* even of nothing: NOT {} matches no memory */
        k->f->evaluate = 1;
    if (is_not && json_is_object(v))
        return check_node(k, path, v, depth + 1, 0);
    if (!json_is_array(v) || json_array_size(v) == 0)
        return srv_fail(k->c, MN_INVALID, "%s: must be a non-empty list of filter objects", path);
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        if (snprintf(sub, sizeof sub, "%s[%zu]", path, i) >= (int)sizeof sub)
            memcpy(sub + sizeof sub - 4, "...", 4); /* a path this long is shown cut, marked */
        if (count_term(k) || check_node(k, sub, e, depth + 1, spine && is_and))
            return k->c->status;
    }
    return MN_OK;
}

/* A filter object: its members all hold (fields, and AND / OR / NOT). */
static mn_status check_node(struct check *k, const char *path, json_t *node, int depth, int spine)
{
    char sub[256];
    if (!json_is_object(node))
        return srv_fail(k->c, MN_INVALID, "%s: must be an object of conditions (a field, or AND, OR, NOT)", path);
    const char *key;
    json_t *v;
    json_object_foreach(node, key, v) {
        snprintf(sub, sizeof sub, "%s.%.40s", path, key);
        if (count_term(k))
            return k->c->status;
        if (strcmp(key, "AND") == 0 || strcmp(key, "OR") == 0 || strcmp(key, "NOT") == 0) {
            if (check_logic(k, sub, key, v, depth, spine))
                return k->c->status;
            continue;
        }
        int f = field_of(key);
        if (f < 0)
            return srv_fail(k->c, MN_INVALID, "%s: unknown filter (user_id, agent_id, app_id, run_id, categories, "
                                              "created_at, updated_at, timestamp, metadata, keywords, memory_ids, "
                                              "AND, OR, NOT)", sub);
        if (check_cond(k, sub, (enum field)f, NULL, v, spine))
            return k->c->status;
    }
    return MN_OK;
}

mn_status m0_filter_parse(struct srv_call *c, json_t *filters, struct m0_filter *f)
{
    memset(f, 0, sizeof *f);
    f->root = filters;
    if (!filters)
        return MN_OK;
    struct check k = {c, f, json_object(), 0};
    if (!k.meta)
        return srv_fail(c, MN_NOMEM, "out of memory");
    mn_status st = check_node(&k, "filters", filters, 0, 1);
    if (!st && json_object_size(k.meta) && !(f->metadata = json_dumps(k.meta, JSON_COMPACT)))
        st = srv_fail(c, MN_NOMEM, "out of memory");
    json_decref(k.meta);
    return st;
}

void m0_filter_release(struct m0_filter *f)
{
    free(f->metadata);
    f->metadata = NULL;
}

void m0_filter_query(struct srv_call *c, const struct m0_filter *f, mn_memory_query *q)
{
    q->ns = c->ns ? c->ns : f->ns;
    q->user_id = f->user;
    q->agent_id = f->agent;
    q->session_id = f->run;
    q->kind = f->kind;
    q->metadata = f->metadata;
}

/* ---- matching -------------------------------------------------------------------------------- */

struct subject {
    const mn_memory *m;
    json_t *meta; /* parsed on first use */
    int meta_read;
};

/* Whether needle is in hay, ASCII letters folded when fold is set. */
static int contains(const char *hay, const char *needle, int fold)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               (fold ? (hay[i] | (hay[i] >= 'A' && hay[i] <= 'Z' ? 0x20 : 0)) ==
                           (needle[i] | (needle[i] >= 'A' && needle[i] <= 'Z' ? 0x20 : 0))
                     : hay[i] == needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

/* JSON values equal, numbers by value (1 equals 1.0, as the library's metadata filter). */
static int json_same(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b))
        return json_is_integer(a) && json_is_integer(b) ? json_integer_value(a) == json_integer_value(b)
                                                        : json_number_value(a) == json_number_value(b);
    return json_equal(a, b);
}

/* <0, 0, >0 comparing a with b, both numbers or both strings; 2 when they do not compare. */
static int json_order(json_t *a, json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        double x = json_number_value(a), y = json_number_value(b);
        return x < y ? -1 : x > y;
    }
    if (json_is_string(a) && json_is_string(b)) {
        int r = strcmp(json_string_value(a), json_string_value(b));
        return r < 0 ? -1 : r > 0;
    }
    return 2;
}

static int in_list(json_t *list, json_t *v)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        if (json_same(e, v))
            return 1;
    }
    return 0;
}

static int ordered(enum op op, int r)
{
    return r != 2 && (op == O_GT ? r > 0 : op == O_GTE ? r >= 0 : op == O_LT ? r < 0 : op == O_LTE ? r <= 0 : 0);
}

/* A metadata key's value mv (NULL: absent) against op and its operand. */
static int match_meta(json_t *mv, enum op op, json_t *x)
{
    int wild = json_is_string(x) && strcmp(json_string_value(x), "*") == 0, present = mv && !json_is_null(mv);
    switch (op) {
    case O_EQ: return wild ? present : mv && json_same(mv, x);
    case O_NE: return wild ? !present : !mv || !json_same(mv, x);
    case O_IN: return mv && in_list(x, mv);
    case O_NIN: return !mv || !in_list(x, mv);
    case O_CONTAINS:
    case O_ICONTAINS: return json_is_string(mv) && contains(json_string_value(mv), json_string_value(x), op == O_ICONTAINS);
    default: return mv && ordered(op, json_order(mv, x));
    }
}

/* A text field s (NULL: unset) against op and its operand; "*" is any value that is set. */
static int match_text(const char *s, enum op op, json_t *x)
{
    const char *v = json_string_value(x);
    int wild = v && strcmp(v, "*") == 0;
    json_t *sv = NULL;
    int r;
    switch (op) {
    case O_EQ: return s && (wild || strcmp(s, v) == 0);
    case O_NE: return wild ? !s : !s || strcmp(s, v) != 0;
    case O_IN:
    case O_NIN:
        sv = s ? json_string(s) : NULL;
        r = sv && in_list(x, sv);
        json_decref(sv);
        return op == O_IN ? r : !r;
    case O_CONTAINS:
    case O_ICONTAINS: return s && contains(s, v, op == O_ICONTAINS);
    default: return 0;
    }
}

static int match_op(struct subject *s, enum field f, const char *mkey, enum op op, json_t *x)
{
    const mn_memory *m = s->m;
    if (f == F_CREATED || f == F_UPDATED) {
        int64_t t = f == F_CREATED ? m->valid_from : m->recorded_at, want = time_value(x);
        return op == O_EQ ? t == want : op == O_NE ? t != want : ordered(op, t < want ? -1 : t > want);
    }
    if (f == F_METADATA) {
        if (!s->meta_read) {
            s->meta = json_loads(m->metadata ? m->metadata : "{}", 0, NULL);
            s->meta_read = 1;
        }
        return match_meta(json_object_get(s->meta, mkey), op, x);
    }
    const char *text = f == F_USER ? m->user_id : f == F_AGENT ? m->agent_id : f == F_RUN ? m->session_id
                       : f == F_APP ? m->ns : f == F_CATEGORIES ? m->kind : f == F_KEYWORDS ? m->text : m->id;
    return match_text(text, op, x);
}

static int match_cond(struct subject *s, enum field f, const char *mkey, json_t *v)
{
    if (f == F_IDS)
        return match_op(s, f, NULL, O_IN, v);
    if (f == F_METADATA && !mkey) {
        const char *key;
        json_t *e;
        json_object_foreach(v, key, e) {
            if (!match_cond(s, F_METADATA, key, e))
                return 0;
        }
        return 1;
    }
    if (!json_is_object(v))
        return match_op(s, f, mkey, O_EQ, v);
    const char *name;
    json_t *operand;
    json_object_foreach(v, name, operand) {
        if (!match_op(s, f, mkey, op_of(name), operand))
            return 0;
    }
    return 1;
}

static int match_node(struct subject *s, json_t *node)
{
    const char *key;
    json_t *v;
    json_object_foreach(node, key, v) {
        int is_and = strcmp(key, "AND") == 0, is_or = strcmp(key, "OR") == 0, is_not = strcmp(key, "NOT") == 0;
        if (is_not && json_is_object(v)) {
            if (match_node(s, v))
                return 0;
        } else if (is_and || is_or || is_not) {
            size_t i, hits = 0;
            json_t *e;
            json_array_foreach(v, i, e) {
                hits += (size_t)match_node(s, e);
            }
            if (is_and ? hits < json_array_size(v) : is_or ? hits == 0 : hits > 0)
                return 0;
        } else if (!match_cond(s, (enum field)field_of(key), NULL, v)) {
            return 0;
        }
    }
    return 1;
}

int m0_filter_match(const struct m0_filter *f, const mn_memory *m)
{
    if (!f->root)
        return 1;
    struct subject s = {m, NULL, 0};
    int r = match_node(&s, f->root);
    json_decref(s.meta);
    return r;
}
