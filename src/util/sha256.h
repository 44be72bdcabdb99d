/*
 * sha256.h — SHA-256 of a buffer as lower-case hex, over OpenSSL's libcrypto.
 */
#ifndef MN_UTIL_SHA256_H
#define MN_UTIL_SHA256_H

#include <stddef.h>

#include "mnemo.h"

#define MN_SHA256_HEX 64

/* Writes the 64 hex digits and a NUL into out. Errors: MN_INTERNAL (libcrypto failed). */
mn_status mn__sha256_hex(const void *data, size_t len, char out[MN_SHA256_HEX + 1]);

#endif
