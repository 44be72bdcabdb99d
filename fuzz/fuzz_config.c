/*
 * fuzz_config.c — libFuzzer target for the YAML configuration reader (src/config/config.c):
 * any text must load or be refused with a message, never crash or leak.
 */
#include <stdint.h>
#include <stdlib.h>

#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mn_config *cfg = NULL;
    if (mn_config_new(&cfg) != MN_OK)
        abort();
    mn__config_load_yaml(cfg, (const char *)data, size, "fuzz.yaml", "fuzz");
    mn_config_free(cfg);
    return 0;
}
