/*
 * config.h — typed access to the configuration for the library's own modules. The public
 * functions (mn_config_new/load/set/get/…) are declared in mnemo.h.
 */
#ifndef MN_CONFIG_H
#define MN_CONFIG_H

#include <stdint.h>

#include "mnemo.h"

/* The value of a known key (never NULL); "" for an unknown key. Borrowed. */
const char *mn__config_str(const mn_config *cfg, const char *key);
/* The value of a known integer key. */
int64_t mn__config_int(const mn_config *cfg, const char *key);
/* The value of a known boolean key (true/false). */
int mn__config_bool(const mn_config *cfg, const char *key);
/* The value of a known real-number key. */
double mn__config_real(const mn_config *cfg, const char *key);
/* A deep copy (the handle keeps one). */
mn_status mn__config_copy(const mn_config *cfg, mn_config **out);
/* Layers YAML text; `name` names it in messages, `source` labels its values. */
mn_status mn__config_load_yaml(mn_config *cfg, const char *text, size_t len, const char *name, const char *source);
/* Layers one YAML file (at most 1 MiB); source labels its values. */
mn_status mn__config_load_file(mn_config *cfg, const char *file, const char *source);

#endif
