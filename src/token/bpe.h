/*
 * bpe.h — the byte-level BPE encodings cl100k_base and o200k_base (tiktoken-compatible), as
 * tokenizer providers, plus what tests, benchmarks and fuzz targets need beyond token.h:
 * decoding ids back to bytes and the memory a loaded encoding holds.
 * Design notes and exactness evidence: docs/tokenizer.md.
 */
#ifndef MN_TOKEN_BPE_H
#define MN_TOKEN_BPE_H

#include <stddef.h>
#include <stdint.h>

#include "token/token.h"

/* Opens encoding `name` ("cl100k_base" or "o200k_base") from `<data_dir>/<name>.tiktoken`.
 * data_dir NULL: the installed data folder, then the build tree's build/share/mnemo.
 * The file's SHA-256 must be the pinned one (see bpe.c) unless the environment has
 * MNEMO_ACCEPT_UNKNOWN_RANKS=1. The rank table is built on the first count, encode or decode (a
 * file that is not the pinned one is built at open, so its errors are open's); count, encode and
 * decode may be called from any number of threads at once, the first use included.
 * Errors: MN_INVALID (unknown name), MN_UNAVAILABLE (no such file; the message names the path),
 * MN_CORRUPT (unknown hash or a malformed file), MN_IO, MN_NOMEM. */
mn_status mn__bpe_open(const char *name, const char *data_dir, mn_tokenizer **out);

/* True when tk was opened by mn__bpe_open. */
int mn__bpe_is(const mn_tokenizer *tk);

/* The bytes of ids[0..n) into *out (caller frees with free(); NUL-terminated for convenience,
 * *out_len excludes the NUL). decode(encode(x)) == x for all bytes x.
 * Errors: MN_INVALID (tk is not a BPE tokenizer, or an id that is no token), MN_NOMEM. */
mn_status mn__bpe_decode(const mn_tokenizer *tk, const uint32_t *ids, size_t n, char **out, size_t *out_len);

/* Bytes of heap the encoding holds: the rank table, hash table and token bytes once built (first
 * use), the ranks file's bytes before. */
size_t mn__bpe_memory(const mn_tokenizer *tk);

#endif
