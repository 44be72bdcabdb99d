/*
 * settings.c — fills struct mn_settings (settings.h) from a configuration, key by key from
 * config/keys.def.
 */
#include "config/config.h"
#include "config/settings.h"
#include "util/banned.h"

#define GET_T_INT(cfg, key) mn__config_int(cfg, key)
#define GET_T_REAL(cfg, key) mn__config_real(cfg, key)
#define GET_T_BOOL(cfg, key) mn__config_bool(cfg, key)
#define GET_T_STRING(cfg, key) mn__config_str(cfg, key)
#define GET_T_ENUM(cfg, key) mn__config_str(cfg, key)

void mn__settings_fill(struct mn_settings *s, const mn_config *cfg)
{
#define MN_KEY(field, key, env, type, def, min, max, choices) s->field = GET_##type(cfg, key);
#include "config/keys.def"
#undef MN_KEY
}
