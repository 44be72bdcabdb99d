/*
 * uuid.h — UUIDv7 (RFC 9562: 48-bit Unix milliseconds, then random bits) and UUID text checks.
 */
#ifndef MN_UTIL_UUID_H
#define MN_UTIL_UUID_H

#include <stdbool.h>
#include <stdint.h>

#include "mnemo.h"

#define MN_UUID_LEN 36

/* Writes a new UUIDv7 for time `ms` into out (37 bytes with the NUL). Errors: MN_IO. */
mn_status mn__uuid_v7(int64_t ms, char out[MN_UUID_LEN + 1]);
/* True when s is a UUID in the 8-4-4-4-12 hex form (either case); out (optional) receives the
 * canonical lower-case text. */
bool mn__uuid_parse(const char *s, char out[MN_UUID_LEN + 1]);

#endif
