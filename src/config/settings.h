/*
 * settings.h — the typed snapshot of a configuration (struct mn_settings), made from the one key
 * table config/keys.def: one field per key, named like the key with '.' as '_'
 * (context.fold_timeout_ms → context_fold_timeout_ms). A handle fills it once at open from its
 * own copy of the configuration, so the library reads db->settings.x and a misspelt key does not
 * compile. Strings are borrowed from that configuration.
 */
#ifndef MN_SETTINGS_H
#define MN_SETTINGS_H

#include <stdint.h>

#include "mnemo.h"

#define MN_SETTING_T_INT int64_t
#define MN_SETTING_T_REAL double
#define MN_SETTING_T_BOOL int
#define MN_SETTING_T_STRING const char *
#define MN_SETTING_T_ENUM const char *

struct mn_settings {
#define MN_KEY(field, key, env, type, def, min, max, choices) MN_SETTING_##type field;
#include "config/keys.def"
#undef MN_KEY
};

/* Fills s from cfg (every key); s borrows cfg's strings, so cfg must outlive s. */
void mn__settings_fill(struct mn_settings *s, const mn_config *cfg);

#endif
