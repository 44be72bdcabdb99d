/*
 * abi.c — forward-compatible reading of size-carrying option structs (abi.h; the policy is at
 * the top of include/mnemo.h).
 */
#include "util/abi.h"

#include <string.h>

#include "util/err.h"
#include "util/banned.h"

mn_status mn__abi_load(void *dst, size_t dst_size, const void *src, size_t min_size, const char *name)
{
    if (!src)
        return mn__err(MN_MISUSE, "%s is NULL", name);
    size_t size;
    memcpy(&size, src, sizeof size);
    if (size < min_size)
        return mn__err(MN_MISUSE, "%s.size is %zu, below the %zu of its first layout (initialise it with its _INIT macro)",
                       name, size, min_size);
    if (size > dst_size) {
        const unsigned char *extra = (const unsigned char *)src + dst_size;
        for (size_t i = 0; i < size - dst_size; i++)
            if (extra[i])
                return mn__err(MN_MISUSE,
                               "%s.size is %zu and sets members this library (%s, size %zu) does not know: upgrade "
                               "libmnemo or leave them at their _INIT values of zero",
                               name, size, MN_VERSION_STRING, dst_size);
    }
    memcpy(dst, src, size < dst_size ? size : dst_size);
    memcpy(dst, &dst_size, sizeof dst_size);
    return MN_OK;
}
