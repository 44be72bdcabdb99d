/*
 * mask.c — a setting's value as `mnemo config show` prints it (mn_config_get_shown): its secrets
 * as ***. The rule for database targets and URLs is the store's own (store/target.h), which the
 * configuration layer sits below; docs/config.md "config show" lists what it covers.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "store/target.h"
#include "util/buf.h"
#include "util/banned.h"

/* server.api_keys as "***:NAMESPACE, …": a key's hash is what a guess is checked against, and an
 * entry that is not "<64 hex digits>:NAMESPACE" (a key pasted as it is) is all ***. */
static char *mask_api_keys(const char *spec)
{
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = MN_OK;
    for (const char *p = spec; !rc && *p;) {
        size_t len = strcspn(p, ","), lead = strspn(p, " \t");
        if (lead > len)
            lead = len;
        const char *colon = memchr(p + lead, ':', len - lead);
        int hashed = colon && colon - (p + lead) == 64 && strspn(p + lead, "0123456789abcdefABCDEF") >= 64;
        if (!(rc = mn__buf_add(&b, p, lead)) && len > lead && !(rc = mn__buf_adds(&b, "***")) && hashed)
            rc = mn__buf_add(&b, colon, len - (size_t)(colon - p));
        p += len;
        if (!rc && *p == ',' && !(rc = mn__buf_addc(&b, ',')))
            p++;
    }
    char *out = rc ? NULL : mn__buf_detach(&b, NULL);
    mn__buf_release(&b);
    return out;
}

char *mn__mask_setting(const char *key, const char *value)
{
    if (strcmp(key, "memory.storage_path") == 0)
        return mn__store_target_mask(value);
    if (strlen(key) > 9 && strcmp(key + strlen(key) - 9, ".base_url") == 0) /* every model server's */
        return mn__store_pg_mask(value); /* the same rule on any URL: user info's password, secret parameters */
    if (strcmp(key, "server.api_keys") == 0)
        return mask_api_keys(value);
    return strdup(value);
}
