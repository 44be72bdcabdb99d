/*
 * state.c — the session state object (see state.h): defaults, shallow merges of params,
 * waiting-for and result bookkeeping, redaction of sensitive values.
 */
#include "memory/state.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

/* The stored state with every member present. */
static mn_status load(const char *current, json_t **out)
{
    json_t *s = current ? json_loads(current, 0, NULL) : json_object();
    if (!json_is_object(s)) {
        json_decref(s);
        return MN_CORRUPT_AT("stored session state is not a JSON object");
    }
    static const char *const members[] = {"waiting_for_param", "last_intent_id", "last_result", "plan_execution"};
    int bad = !json_is_object(json_object_get(s, "params")) && json_object_set_new(s, "params", json_object());
    for (size_t i = 0; i < sizeof members / sizeof members[0]; i++)
        if (!json_object_get(s, members[i]))
            bad |= json_object_set_new(s, members[i], json_null());
    if (bad) {
        json_decref(s);
        return mn__nomem();
    }
    *out = s;
    return MN_OK;
}

static mn_status merge(json_t *s, json_t *params)
{
    json_t *have = json_object_get(s, "params");
    const char *key;
    json_t *v;
    const char *waiting = json_string_value(json_object_get(s, "waiting_for_param"));
    json_object_foreach(params, key, v)
    {
        if (json_is_null(v))
            json_object_del(have, key); /* null removes a parameter */
        else if (json_object_set(have, key, v))
            return mn__nomem();
        if (waiting && strcmp(waiting, key) == 0 && !json_is_null(v)) /* the awaited answer arrived */
            waiting = NULL, json_object_set_new(s, "waiting_for_param", json_null());
    }
    return MN_OK;
}

mn_status mn__state_apply(const char *current, const struct mn_state_change *c, char **next)
{
    json_t *s = NULL;
    mn_status rc = load(current, &s);
    if (rc)
        return rc;
    switch (c->op) {
    case MN_STATE_MERGE:
        rc = merge(s, c->value);
        break;
    case MN_STATE_WAIT:
        rc = json_object_set_new(s, "waiting_for_param", c->text ? json_string(c->text) : json_null()) ? mn__nomem()
                                                                                                       : MN_OK;
        break;
    case MN_STATE_RESULT:
        if (c->text && json_object_set_new(s, "last_intent_id", json_string(c->text)))
            rc = mn__nomem();
        if (!rc && c->value && json_object_set(s, "last_result", c->value))
            rc = mn__nomem();
        break;
    case MN_STATE_PLAN:
        rc = json_object_set(s, "plan_execution", c->value ? c->value : json_null()) ? mn__nomem() : MN_OK;
        break;
    case MN_STATE_CLEAR:
        json_decref(s);
        s = NULL;
        rc = load(NULL, &s);
        break;
    }
    if (!rc) {
        *next = mn__json_dump(s);
        if (!*next)
            rc = mn__nomem();
        else if (strlen(*next) > MN_STATE_MAX_BYTES) {
            free(*next);
            *next = NULL;
            rc = mn__err(MN_TOOBIG, "state: %d bytes is the limit of a session's state", MN_STATE_MAX_BYTES);
        }
    }
    json_decref(s);
    return rc;
}

/* Name fragments that mark a secret whatever state.sensitive_params says: compared with the
 * name lower-cased and stripped of '_', '-', '.' and spaces ("API-Key" → "apikey"). */
static const char *const secret_words[] = {"password", "passwd", "passphrase", "secret", "token", "apikey",
                                           "authorization", "credential", "privatekey", "accesskey", "cookie",
                                           "sessionkey", "signingkey", NULL};

int mn__state_is_sensitive(const char *sensitive, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = sensitive; p && *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        size_t w = strcspn(p, ",");
        size_t t = w;
        while (t && p[t - 1] == ' ')
            t--;
        if (t == len && t && strncasecmp(p, name, len) == 0)
            return 1;
        p += w;
    }
    char folded[128];
    size_t n = 0;
    for (const char *q = name; *q && n + 1 < sizeof folded; q++)
        if (*q != '_' && *q != '-' && *q != '.' && *q != ' ')
            folded[n++] = (char)tolower((unsigned char)*q);
    folded[n] = '\0';
    for (const char *const *wd = secret_words; *wd; wd++)
        if (strstr(folded, *wd))
            return 1;
    return 0;
}

/* Replaces the value of every sensitive member, at any depth of objects and arrays. */
static int redact(json_t *v, const char *sensitive)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *it;
        json_array_foreach(v, i, it)
        if (redact(it, sensitive))
            return -1;
        return 0;
    }
    if (!json_is_object(v))
        return 0;
    const char *key;
    json_t *it;
    json_object_foreach(v, key, it)
    {
        if (mn__state_is_sensitive(sensitive, key)) {
            if (json_object_set_new(v, key, json_string("[redacted]")))
                return -1;
        } else if (redact(it, sensitive))
            return -1;
    }
    return 0;
}

mn_status mn__state_render(const char *current, const char *sensitive, int reveal, char **out)
{
    json_t *s = NULL;
    mn_status rc = load(current, &s);
    if (rc)
        return rc;
    /* params, last_result and plan_execution alike; the bookkeeping names are not secrets */
    if (!reveal && redact(s, sensitive)) {
        json_decref(s);
        return mn__nomem();
    }
    *out = mn__json_dump(s);
    json_decref(s);
    return *out ? MN_OK : mn__nomem();
}
