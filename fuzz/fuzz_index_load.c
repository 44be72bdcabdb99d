/*
 * fuzz_index_load.c — libFuzzer target for the vector index file loader (src/index/io.c): any
 * bytes must load or be refused with MN_CORRUPT, never crash or leak. When the last byte is
 * odd the input's last 8 bytes are replaced by the right checksum, so that the structural
 * checks behind the checksum are fuzzed too; a file that loads is searched and extended.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "index/index_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    if (size)
        memcpy(buf, data, size);
    if (size > 16 && (data[size - 1] & 1)) {
        uint64_t sum = mn__index_checksum(buf, size - 8);
        memcpy(buf + size - 8, &sum, 8);
    }
    mn_index *ix = NULL;
    mn_status rc = mn__index_load_mem(buf, size, &ix);
    if (rc == MN_OK) {
        struct mn_index_params p;
        mn__index_params_get(ix, &p);
        float *q = calloc(p.dim, sizeof *q);
        if (q) {
            for (uint32_t i = 0; i < p.dim; i++)
                q[i] = (float)((i * 7) % 5) - 2.0f;
            q[0] = 1.0f;
            struct mn_index_hit hits[8];
            size_t nh;
            mn__index_search(ix, q, 8, NULL, hits, &nh);
            struct mn_index_search_opts o = MN_INDEX_SEARCH_OPTS_INIT;
            o.path = MN_INDEX_PATH_GRAPH;
            mn__index_search(ix, q, 3, &o, hits, &nh);
            mn__index_add(ix, INT64_C(0x7fffffff12345678), q);
            mn__index_search(ix, q, 8, NULL, hits, &nh);
            mn__index_compact(ix);
            free(q);
        }
        mn__index_free(ix);
    } else if (rc != MN_CORRUPT && rc != MN_NOMEM) {
        abort(); /* from memory, only these two are possible */
    }
    free(buf);
    return 0;
}
