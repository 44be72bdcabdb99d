/*
 * abi.h — reading the caller-filled, size-carrying structs of mnemo.h (the ABI policy at the top
 * of include/mnemo.h): a caller built against an older header passes a smaller `size`, one built
 * against a newer header a larger one. The library reads only what both know.
 */
#ifndef MN_UTIL_ABI_H
#define MN_UTIL_ABI_H

#include <stddef.h>

#include "mnemo.h"

/* The end of `member`: the smallest size that covers it (a struct's first published layout
 * ends at its last member then). */
#define MN__END(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* Loads the caller's struct `src` (its first member a size_t size) over `dst`, which holds the
 * defaults (the _INIT macro) and is dst_size bytes: the first min(src->size, dst_size) bytes are
 * copied, the newer members keep their defaults, and dst's size becomes dst_size. Refused with
 * MN_MISUSE naming `name`: a NULL src, a size below min_size (0 included: a struct not made with
 * its _INIT macro), or a larger size whose extra bytes are not all zero (members this library
 * does not know were set). */
mn_status mn__abi_load(void *dst, size_t dst_size, const void *src, size_t min_size, const char *name);

/* Element i of a caller's array of size-carrying structs: the stride is the size the first
 * element carries (every element carries the same), so an array built with an older or newer
 * header is walked as the caller laid it out. */
#define MN__ABI_ITEM(type, base, i) \
    ((const type *)(const void *)((const char *)(base) + (i) * ((base)->size < MN__END(type, size) ? sizeof(type) : (base)->size)))

/* MN__ABI_LOAD(type, &local, caller_ptr, last member of the first layout): the usual call. */
#define MN__ABI_LOAD(type, dst, src, last_v1_member) \
    mn__abi_load((dst), sizeof(type), (src), MN__END(type, last_v1_member), #type)

#endif
