/*
 * sha256.c — SHA-256 via OpenSSL's one-shot EVP_Digest (used for file-content deduplication).
 */
#include "util/sha256.h"

#include <openssl/evp.h>

#include "util/err.h"
#include "util/banned.h"

mn_status mn__sha256_hex(const void *data, size_t len, char out[MN_SHA256_HEX + 1])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[32];
    unsigned int n = 0;
    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32)
        return mn__err(MN_INTERNAL, "sha256: libcrypto failed");
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[MN_SHA256_HEX] = '\0';
    return MN_OK;
}
