/*
 * mnemo_config.c — the configuration as `mnemo config show` prints it (mn_config_get_shown,
 * mnemo.h): each value with its secrets as ***, by the engine's rule (engine/mask.c).
 */
#include "mnemo_int.h"
#include "config/config.h"
#include "util/err.h"
#include "util/banned.h"

mn_status mn_config_get_shown(const mn_config *cfg, const char *key, char **value, const char **source)
{
    if (value)
        *value = NULL;
    if (!cfg || !value)
        return mn__err(MN_MISUSE, "mn_config_get_shown: NULL argument");
    const char *v = NULL;
    mn_status rc = mn_config_get(cfg, key, &v, source);
    if (rc)
        return rc;
    *value = mn__mask_setting(key, v);
    return *value ? MN_OK : mn__nomem();
}
