/*
 * index.h — the vector index: approximate nearest neighbours by cosine similarity over
 * (int64 id, float vector) pairs. Two kinds: `hnsw` (a hierarchical navigable small-world
 * graph) and `flat` (exact brute force, the recall oracle). Optional int8 quantised storage with
 * re-ranking on full precision. Persisted in the file format described below. Design notes and
 * measurements: docs/index.md.
 *
 * Vectors. mn__index_add copies the vector and L2-normalises the copy, so callers may pass raw
 * embeddings; the score of a hit is the cosine similarity (the inner product of the unit
 * vectors), in [-1, 1], larger is nearer. A zero, NaN or infinite vector is refused with
 * MN_INVALID. Queries are normalised the same way (this changes no ranking, only makes scores
 * cosines).
 *
 * Thread-safety. One index may be shared by threads. mn__index_search, mn__index_count,
 * mn__index_contains, mn__index_memory_bytes and mn__index_save take a read lock and run
 * concurrently with each other; mn__index_add, mn__index_remove, mn__index_compact,
 * mn__index_set_ef_search and mn__index_set_source take the write lock and are serialised against
 * everything else. Callbacks (filter, fetch) run under the read lock and must not call back into
 * the same index's writers.
 *
 * Errors are statuses of mnemo.h with a message from mn_errmsg(): MN_INVALID (bad argument),
 * MN_CONFLICT (id already present), MN_NOTFOUND (no such id, no such file), MN_TOOBIG (index
 * full: 2^32 - 2 slots), MN_NOMEM, MN_IO (file system), MN_CORRUPT (file unreadable). Nothing
 * aborts: out of memory leaves the index as it was before the call.
 *
 * ------------------------------------------------------------------------------------------------
 * File format, version 2 (MN_INDEX_FILE_VERSION). All integers little-endian. Every section
 * (and the trailer) starts at the next multiple of 64 bytes; the gaps are zero bytes, so that a
 * mapped file's arrays are aligned (mn__index_map). Version 1 was the same without the gaps.
 *
 *   header, 96 bytes
 *     0  u8[8] magic            "MNEMOIDX"
 *     8  u32   version          2
 *    12  u32   header_size      96
 *    16  u32   kind             0 = hnsw, 1 = flat
 *    20  u32   quant            0 = float32 vectors, 1 = int8 codes with a float32 scale each
 *    24  u32   dim              1 .. 65536
 *    28  u32   M                hnsw: 2 .. 128 (links per node on levels >= 1, 2*M on level 0)
 *    32  u32   ef_construction  1 .. 65536
 *    36  u32   ef_search        1 .. 65536
 *    40  u64   n                slots, live and deleted (< 2^32 - 1)
 *    48  u64   n_deleted        slots whose deleted flag is set
 *    56  u64   upper_words      u32 words in the upper-level link pool (0 for flat)
 *    64  u32   entry            hnsw entry point slot; 0xFFFFFFFF when n = 0 (and for flat)
 *    68  u32   max_level        level of the entry point (0 .. 31)
 *    72  u64   rng              state of the level generator (so that adds after a load
 *                               continue the same sequence)
 *    80  u64   seed             the creation seed (informational)
 *    88  u64   meta checksum    of header bytes 0..87, then the ids, levels, flags, upper_off
 *                               and (int8) scales arrays, unpadded (mn__index_checksum); checked
 *                               by mn__index_map, which skips the whole-file checksum
 *   sections, in this order (slot i is row i of each)
 *     ids        n x i64        caller ids; live ids are unique
 *     levels     n x u8         top level of each slot (0 for flat)
 *     flags      n x u8         bit 0: deleted (tombstone); other bits 0
 *     upper_off  n x u32        hnsw only: offset in the upper pool of the slot's level-1 list
 *     vectors    quant 0: n x dim x f32, unit length
 *                quant 1: n x f32 scales, then n x dim x i8 codes in [-127, 127];
 *                         component j of slot i is scale[i] * code[i][j]
 *     links0     hnsw only: n x (1 + 2M) x u32: count, then count neighbour slots, rest 0
 *                (readers ignore the unused words)
 *     upper      hnsw only: upper_words x u32; a slot of level L > 0 owns L lists of (1 + M)
 *                words at upper_off: count, then neighbour slots (level 1 first)
 *   trailer
 *     u64 checksum of every preceding byte (mn__index_checksum in index_int.h: 64-bit words
 *     mixed xxhash64-style, the tail zero-padded, the byte count folded in)
 *
 * The file size must be exactly what the header implies. A loader refuses, with MN_CORRUPT and
 * a message saying what is wrong: another magic, another version, a size mismatch (truncated or
 * extended), a bad checksum, a field out of range, a neighbour or offset out of bounds, a
 * duplicate live id, a non-finite vector. Version changes bump MN_INDEX_FILE_VERSION; older
 * files are refused the same way, and mn__index_open rebuilds them from the stored vectors.
 */
#ifndef MN_INDEX_H
#define MN_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"

#define MN_INDEX_FILE_VERSION 2u
#define MN_INDEX_MAX_K 10000u /* largest k a search accepts */

typedef struct mn_index mn_index;

enum mn_index_kind { MN_INDEX_HNSW = 0, MN_INDEX_FLAT = 1 };
enum mn_index_quant { MN_INDEX_F32 = 0, MN_INDEX_INT8 = 1 };

struct mn_index_params {
    uint32_t dim;                /* required, 1 .. 65536 */
    enum mn_index_kind kind;     /* MN_INDEX_HNSW (default) or MN_INDEX_FLAT */
    enum mn_index_quant quant;   /* MN_INDEX_F32 (default) or MN_INDEX_INT8 */
    uint32_t M;                  /* hnsw links per node (16); level 0 keeps 2*M */
    uint32_t ef_construction;    /* candidate list size while inserting (200) */
    uint32_t ef_search;          /* candidate list size while searching (64); raised to k */
    uint64_t seed;               /* level generator seed (42) */
    size_t capacity;             /* slots to allocate up front (0: grow as needed) */
    /* A filtered search whose filter passes at most this many vectors (by the caller's hint)
     * scans them exactly instead of walking the graph. 0 = automatic: max(1000, live / 20). */
    size_t exact_threshold;
};
#define MN_INDEX_PARAMS_INIT {0, MN_INDEX_HNSW, MN_INDEX_F32, 16, 200, 64, 42, 0, 0}

/* Where full-precision vectors come from in an int8 index, for re-ranking: writes the vector of
 * `id` (any length, it is normalised) into out[0..dim) and returns 0, or returns nonzero when it
 * has none (that hit then keeps its int8 score). Called under the index's read lock, possibly
 * from several threads at once. */
typedef int (*mn_index_fetch_fn)(void *user, int64_t id, float *out);

/* A filter: return nonzero to accept `id`. Called under the read lock; must not block long. */
typedef int (*mn_index_accept_fn)(void *user, int64_t id);

enum mn_index_path {
    MN_INDEX_PATH_AUTO = 0,  /* let the index choose (see mn__index_search) */
    MN_INDEX_PATH_GRAPH = 1, /* walk the graph (falls back to exact if it finds fewer than k) */
    MN_INDEX_PATH_EXACT = 2  /* scan every candidate */
};

/* What a search did (optional out-parameter). */
struct mn_index_search_info {
    enum mn_index_path path; /* GRAPH or EXACT: the path that produced the hits */
    int fell_back;           /* 1 when the graph walk found fewer than k and an exact scan ran */
    size_t visited;          /* vectors whose distance was computed */
};

struct mn_index_search_opts {
    size_t ef;                      /* 0: the index's ef_search; raised to k */
    mn_index_accept_fn accept;      /* NULL: every live vector passes */
    void *user;                     /* handed to accept */
    size_t n_accept_hint;           /* about how many ids pass `accept` (0: unknown) */
    const int64_t *candidates;      /* when set, only these ids are considered (exact scan);
                                       unknown and deleted ids are skipped, duplicates ignored */
    size_t n_candidates;
    enum mn_index_path path;        /* force a path (tests, benchmarks); AUTO normally */
    struct mn_index_search_info *info; /* filled when not NULL */
};
#define MN_INDEX_SEARCH_OPTS_INIT {0, NULL, NULL, 0, NULL, 0, MN_INDEX_PATH_AUTO, NULL}

struct mn_index_hit {
    int64_t id;
    float score; /* cosine similarity, larger is nearer */
};

/* Counters (mn_index_stats). */
struct mn_index_stats {
    size_t live;          /* searchable vectors */
    size_t deleted;       /* tombstones still in the graph (mn__index_compact drops them) */
    size_t memory_bytes;  /* the same figure as mn__index_memory_bytes */
    int max_level;        /* hnsw: top level of the graph; -1 when empty */
    const char *kernel;   /* distance kernels in use: "scalar", "avx2", "avx512", "neon" */
};

/* A new empty index; *out is caller-owned (mn__index_free). MN_INVALID names the bad parameter. */
mn_status mn__index_create(const struct mn_index_params *params, mn_index **out);
/* Frees the index; NULL is a no-op. No other call may be running on it. */
void mn__index_free(mn_index *ix);

/* Adds vector vec[0..dim) under `id` (normalised copy). MN_CONFLICT when `id` is live already
 * (remove it first to replace it), MN_INVALID for a zero or non-finite vector. */
mn_status mn__index_add(mn_index *ix, int64_t id, const float *vec);
/* Adds n vectors at once: ids[i] with vecs[i * dim .. (i + 1) * dim), linked on `threads`
 * threads (0: every core). The graph depends only on the vectors and their order, never on the
 * thread count: nodes are linked in chunks, each chunk's nodes finding their neighbours in
 * parallel in the graph as it was before the chunk plus, exactly, the chunk's earlier nodes,
 * then the reverse links are made in order (docs/index.md). Vectors with no direction are
 * skipped. MN_CONFLICT for an id already present (the vectors before it stay added). Builds
 * from scratch should use this; single adds go through mn__index_add. */
mn_status mn__index_add_batch(mn_index *ix, const int64_t *ids, const float *vecs, size_t n, unsigned threads);
/* Removes `id`: it is never returned again. The slot stays in the graph as a tombstone (other
 * nodes route through it) until mn__index_compact. MN_NOTFOUND when `id` is not live. */
mn_status mn__index_remove(mn_index *ix, int64_t id);
/* Rebuilds the graph without tombstones (live vectors keep their ids). Costs a full rebuild;
 * worth it when stats.deleted is a large share of the slots. On failure the index is
 * unchanged. */
mn_status mn__index_compact(mn_index *ix);

/* The k nearest live vectors to query[0..dim) that pass the filter, best first (ties: smaller id
 * first), into hits[0..k); *n_hits is how many were written: min(k, number of live vectors that
 * pass). opts may be NULL (no filter, default ef).
 *
 * Which path answers (opts->path AUTO):
 *  - candidates given: exact scan over the candidate ids (accept, if set, applies as well);
 *  - flat index, or fewer live vectors than 2 * ef: exact scan over everything;
 *  - accept given with n_accept_hint in 1 .. exact_threshold: exact scan over everything,
 *    computing distances only for the accepted ids;
 *  - otherwise the graph walk, with the filter applied inside it: rejected and deleted nodes are
 *    still followed but never enter the results, and the walk goes on until it holds ef accepted
 *    results or the graph is exhausted. Without a hint, the share of accepted nodes among the
 *    first max(1024, 16 * ef) visited estimates the filter's selectivity; when that predicts at
 *    most exact_threshold matches, an exact scan answers instead. If the walk visits more than a
 *    quarter of the slots it stops and an exact scan answers; if it returns fewer than k while
 *    more could exist, an exact scan answers. So a search returns k hits whenever k live
 *    matching vectors exist.
 * In an f32 index an exact scan is exact. In an int8 index distances are computed on the codes
 * and the best max(ef, k) are re-ranked on full precision when a fetch source is set
 * (mn__index_set_source); otherwise scores come from the codes.
 * Errors: MN_INVALID (NULL query, zero or non-finite query, k > MN_INDEX_MAX_K), MN_NOMEM. */
mn_status mn__index_search(mn_index *ix, const float *query, size_t k,
                          const struct mn_index_search_opts *opts, struct mn_index_hit *hits,
                          size_t *n_hits);

/* Sets the default ef_search (1 .. 65536). */
mn_status mn__index_set_ef_search(mn_index *ix, uint32_t ef);
/* Sets the full-precision source used to re-rank int8 results (NULL: none). Not persisted:
 * set it again after a load. Ignored by f32 indexes. */
void mn__index_set_source(mn_index *ix, mn_index_fetch_fn fetch, void *user);

size_t mn__index_count(mn_index *ix);           /* live vectors */
int mn__index_contains(mn_index *ix, int64_t id); /* 1 when id is live */
/* Bytes the index holds: vectors, graph, ids, id map, search scratch (allocated capacity). */
size_t mn__index_memory_bytes(mn_index *ix);
void mn__index_stats(mn_index *ix, struct mn_index_stats *out);
/* The parameters the index was created (or loaded) with. */
void mn__index_params_get(mn_index *ix, struct mn_index_params *out);

/* Writes the index to `path` atomically: the bytes go to "<path>.tmp", which is fsynced and
 * renamed over `path`, then the directory is fsynced. A crash at any point leaves either the old
 * file or the new one at `path`, never a mix; a stale "<path>.tmp" is overwritten by the next
 * save and never read. Saves of the same path must not run concurrently (one writer per file).
 * Errors: MN_IO (with the file name and errno text), MN_NOMEM. */
mn_status mn__index_save(mn_index *ix, const char *path);
/* Reads an index saved by mn__index_save; *out is caller-owned. MN_NOTFOUND when the file does
 * not exist, MN_IO when it cannot be read, MN_CORRUPT when it is not a valid index
 * file (see the format above). */
mn_status mn__index_load(const char *path, mn_index **out);
/* The same from bytes in memory (data[0..len)). */
mn_status mn__index_load_mem(const void *data, size_t len, mn_index **out);
/* Opens `path` in place: the file is memory-mapped read-only and searched from the mapping, so
 * opening costs the header, two bytes a slot (levels, flags) and the id map, not a read of the
 * vectors and links (milliseconds for 100k vectors; pages come in as searches touch them). The
 * checksum and the vector and link checks of mn__index_load are skipped; instead walks check
 * every neighbour and offset they follow, so a damaged file gives poor results, never an
 * out-of-bounds read. The first add, remove or compact copies the arrays to the heap after
 * those checks (MN_CORRUPT if they fail). Like mn__index_load, a FIFO or any other non-regular
 * file is refused (MN_IO) without blocking. Errors as mn__index_load. */
mn_status mn__index_map(const char *path, mn_index **out);

/* Supplies the stored vectors when an index has to be rebuilt: returns 1 with *id and *vec set
 * (vec valid until the next call), 0 at the end, or a negative value to abort (the rebuild then
 * fails with MN_IO). */
typedef int (*mn_index_next_fn)(void *user, int64_t *id, const float **vec);

/* Loads `path`; when it is missing, unreadable as an index (MN_CORRUPT: damaged, older or newer
 * version) or built with other parameters (kind, quant, dim, M, ef_construction), creates an
 * index with `params`, adds every vector `next` yields, and saves it to `path`. ef_search,
 * exact_threshold and capacity are taken from `params` either way. *rebuilt (may be NULL) says
 * which happened. MN_IO from the load (e.g. permissions) is returned as is, without rebuilding. */
mn_status mn__index_open(const char *path, const struct mn_index_params *params,
                        mn_index_next_fn next, void *user, mn_index **out, int *rebuilt);

#endif
