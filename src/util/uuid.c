/*
 * uuid.c — UUIDv7 generation from getrandom(2), and parsing to canonical lower-case text.
 */
#include "util/uuid.h"

#include <string.h>
#include <sys/random.h>

#include "util/err.h"
#include "util/banned.h"

static const char hex[] = "0123456789abcdef";

mn_status mn__uuid_v7(int64_t ms, char out[MN_UUID_LEN + 1])
{
    unsigned char b[16];
    if (getrandom(b + 6, 10, 0) != 10)
        return mn__err(MN_IO, "uuid: no random bytes available");
    for (int i = 0; i < 6; i++)
        b[i] = (unsigned char)((uint64_t)ms >> (40 - 8 * i));
    b[6] = (unsigned char)(0x70 | (b[6] & 0x0F)); /* version 7 */
    b[8] = (unsigned char)(0x80 | (b[8] & 0x3F)); /* variant 10 */
    char *p = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        *p++ = hex[b[i] >> 4];
        *p++ = hex[b[i] & 15];
    }
    *p = '\0';
    return MN_OK;
}

bool mn__uuid_parse(const char *s, char out[MN_UUID_LEN + 1])
{
    if (!s || strlen(s) != MN_UUID_LEN)
        return false;
    char tmp[MN_UUID_LEN + 1];
    for (int i = 0; i < MN_UUID_LEN; i++) {
        char c = s[i];
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (c != '-')
                return false;
        } else if (c >= '0' && c <= '9') {
        } else if (c >= 'a' && c <= 'f') {
        } else if (c >= 'A' && c <= 'F')
            c = (char)(c - 'A' + 'a');
        else
            return false;
        tmp[i] = c;
    }
    tmp[MN_UUID_LEN] = '\0';
    if (out)
        memcpy(out, tmp, sizeof tmp);
    return true;
}
