/*
 * engine/filter.c — the search filter's metadata condition (mn_search_filter.metadata): checked
 * here before anything runs, applied by the store's filtered statements (sqlite/search.c,
 * postgres/search.c) on the keyword, semantic and hybrid paths alike.
 */
#include <stddef.h>
#include <string.h>

#include "engine/engine.h"
#include "util/err.h"
#include "util/json.h"
#include "util/banned.h"

#define MAX_KEYS 16
#define MAX_KEY_BYTES 64

static int key_ok(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > MAX_KEY_BYTES)
        return 0;
    for (const char *p = k; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
              *p == '-' || *p == '.'))
            return 0;
    return 1;
}

mn_status mn__check_filter_metadata(const char *metadata)
{
    json_t *o = NULL;
    mn_status rc = mn__json_parse(metadata, "filter.metadata", &o);
    if (rc)
        return rc;
    if (!json_is_object(o))
        rc = mn__err(MN_INVALID, "filter.metadata: not a JSON object");
    else if (json_object_size(o) > MAX_KEYS)
        rc = mn__err(MN_INVALID, "filter.metadata: %zu keys, at most %d", json_object_size(o), MAX_KEYS);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        if (rc)
            break;
        if (!key_ok(key))
            rc = mn__err(MN_INVALID, "filter.metadata: key '%.80s' is not 1 to %d bytes of [A-Za-z0-9_.-]", key,
                         MAX_KEY_BYTES);
        else if (json_is_object(v) || json_is_array(v))
            rc = mn__err(MN_INVALID, "filter.metadata.%s: not a scalar (string, number, true, false or null)", key);
    }
    json_decref(o);
    return rc;
}
