/*
 * auth.c — API keys of `mnemo serve`: server.api_keys holds "sha256hex:namespace" entries
 * (comma-separated; namespace "*" sees every namespace). Only the SHA-256 of a key is stored;
 * a request's bearer token is hashed and compared in constant time with every entry. The
 * legacy --api-key-env / MNEMO_API_KEY key (from the environment, never stored) is one more
 * entry. Notes: docs/http-api.md, "Authentication".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>

#include "server/server.h"

struct srv_key {
    unsigned char hash[32];
    char ns[129]; /* "" = every namespace */
};

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int sha256(const char *s, size_t len, unsigned char out[32])
{
    unsigned int n = 0;
    return EVP_Digest(s, len, out, &n, EVP_sha256(), NULL) == 1 && n == 32 ? 0 : -1;
}

int srv_keys_parse(const char *spec, const char *plain_key, const char *plain_ns, struct srv_keys *out, char *err,
                   size_t errcap)
{
    memset(out, 0, sizeof *out);
    size_t cap = 1 + (plain_key ? 1 : 0);
    for (const char *p = spec ? spec : ""; *p; p++)
        cap += *p == ',';
    if (!(out->keys = calloc(cap, sizeof *out->keys)))
        return snprintf(err, errcap, "out of memory"), -1;
    const char *p = spec ? spec : "";
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        while (len && (*p == ' ' || *p == '\t'))
            p++, len--;
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        if (len) {
            struct srv_key *k = &out->keys[out->n];
            const char *colon = memchr(p, ':', len);
            size_t nslen = colon ? len - (size_t)(colon - p) - 1 : 0;
            int ok = colon && colon - p == 64 && nslen >= 1 && nslen <= 128;
            for (int i = 0; ok && i < 32; i++) {
                int hi = hexval((unsigned char)p[2 * i]), lo = hexval((unsigned char)p[2 * i + 1]);
                ok = hi >= 0 && lo >= 0;
                k->hash[i] = (unsigned char)(hi * 16 + lo);
            }
            if (!ok) {
                srv_keys_free(out);
                return snprintf(err, errcap,
                                "server.api_keys: entry %zu is not \"<64 hex digits of SHA-256>:<namespace or *>\"",
                                out->n + 1),
                       -1;
            }
            if (!(nslen == 1 && colon[1] == '*'))
                snprintf(k->ns, sizeof k->ns, "%.*s", (int)nslen, colon + 1);
            out->n++;
        }
        p += len;
        while (*p && *p != ',')
            p++;
        if (*p == ',')
            p++;
    }
    if (plain_key && plain_ns && !plain_ns[0]) { /* "" would be every namespace: fail closed */
        srv_keys_free(out);
        return snprintf(err, errcap, "--key-namespace: empty; name the namespace the key is bound to"), -1;
    }
    if (plain_key) {
        struct srv_key *k = &out->keys[out->n];
        if (sha256(plain_key, strlen(plain_key), k->hash) != 0) {
            srv_keys_free(out);
            return snprintf(err, errcap, "SHA-256 is unavailable"), -1;
        }
        if (plain_ns)
            snprintf(k->ns, sizeof k->ns, "%s", plain_ns);
        out->n++;
    }
    return 0;
}

void srv_keys_free(struct srv_keys *k)
{
    if (k->keys)
        memset(k->keys, 0, k->n * sizeof *k->keys);
    free(k->keys);
    memset(k, 0, sizeof *k);
}

int srv_keys_check(const struct srv_keys *k, const char *authorization, const char **ns)
{
    *ns = NULL;
    /* Bearer, and Token as Mem0's client sends it (mem0.c); a scheme's name is case-insensitive
     * (RFC 9110, 11.1) */
    const char *tok = !authorization                                   ? NULL
                      : strncasecmp(authorization, "Bearer ", 7) == 0 ? authorization + 7
                      : strncasecmp(authorization, "Token ", 6) == 0  ? authorization + 6
                                                                       : NULL;
    if (!tok)
        return 0;
    unsigned char h[32];
    if (!*tok || sha256(tok, strlen(tok), h) != 0)
        return 0;
    int found = -1;
    for (size_t i = 0; i < k->n; i++) { /* every entry is compared: the time does not tell which matched */
        unsigned diff = 0;
        for (int j = 0; j < 32; j++)
            diff |= (unsigned)(h[j] ^ k->keys[i].hash[j]);
        if (diff == 0 && found < 0)
            found = (int)i;
    }
    if (found < 0)
        return 0;
    *ns = k->keys[found].ns[0] ? k->keys[found].ns : NULL;
    return 1;
}
