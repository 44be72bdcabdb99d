/*
 * mnemo_search.c — the public search functions of mnemo.h (mn_search, mn_relevant_context,
 * mn_embed_*): argument checks, then the engine (src/engine/search.c, rag.c).
 * Design notes: docs/search.md.
 */
#include <stdlib.h>
#include <string.h>

#include "mnemo_int.h"
#include "memory/jsonl.h"
#include "memory/message.h"
#include "util/abi.h"
#include "util/err.h"
#include "util/json.h"
#include "util/utf8.h"
#include "util/banned.h"

#define MAX_TOP_K 1000
#define MAX_QUERY_BYTES 65536

static const char *const mode_names[] = {"auto", "semantic", "keyword", "hybrid"};

mn_status mn_search_mode_parse(const char *name, mn_search_mode *out)
{
    for (int i = 0; name && i < 4; i++)
        if (strcmp(name, mode_names[i]) == 0) {
            *out = (mn_search_mode)i;
            return MN_OK;
        }
    return mn__err(MN_INVALID, "mode: '%s' is not one of auto, semantic, keyword, hybrid", name ? name : "(null)");
}

const char *mn_search_mode_name(mn_search_mode mode)
{
    return (unsigned)mode < 4 ? mode_names[mode] : NULL;
}

mn_status mn_embed_pending(mn_db *db, size_t max, size_t *done)
{
    mn_status rc = mn__check_db(db);
    int64_t n = 0;
    if (done)
        *done = 0;
    if (rc)
        return rc;
    rc = mn__embed_pending_messages(db, max, &n);
    if (done)
        *done = (size_t)n;
    return rc;
}

mn_status mn_keyword_drain(mn_db *db, int all, int64_t *applied, int64_t *pending)
{
    mn_status rc = mn__check_db(db);
    if (applied)
        *applied = 0;
    if (pending)
        *pending = 0;
    if (rc)
        return rc;
    return mn__drain_keywords(db, all, applied, pending);
}

mn_status mn_keyword_drain_defer(mn_db *db, int on)
{
    mn_status rc = mn__check_db(db);
    if (!rc)
        mn__defer_keyword_drain(db, on);
    return rc;
}

static mn_status fill_and_drain(mn_db *db, int reset, mn_progress_fn progress, void *user, int64_t *done)
{
    mn_status rc = mn__check_db(db);
    int64_t n = 0;
    if (done)
        *done = 0;
    if (rc)
        return rc;
    rc = mn__embed_fill(db, reset, progress, user, &n);
    if (done)
        *done = n;
    return rc;
}

mn_status mn_embed_backfill(mn_db *db, mn_progress_fn progress, void *user, int64_t *done)
{
    return fill_and_drain(db, 0, progress, user, done);
}

mn_status mn_reindex_embeddings(mn_db *db, mn_progress_fn progress, void *user, int64_t *done)
{
    return fill_and_drain(db, 1, progress, user, done);
}

mn_status mn_embed_counts(mn_db *db, int64_t *embedded, int64_t *queued)
{
    mn_status rc = mn__check_db(db);
    if (embedded)
        *embedded = 0;
    if (queued)
        *queued = 0;
    if (rc)
        return rc;
    return mn__count_embeddings(db, embedded, queued);
}

void mn_search_hits_free(mn_search_hits *hits) { mn__free_search_hits(hits); }

static mn_status check_filter(mn_db *db, const mn_search_filter *f, mn_search_filter *o, char canon[MN_UUID_LEN + 1])
{
    static const mn_search_filter none = MN_SEARCH_FILTER_INIT;
    *o = none;
    if (!f)
        return MN_OK;
    mn_status rc = MN__ABI_LOAD(mn_search_filter, o, f, until);
    if (rc)
        return rc;
    if (o->session_id) {
        if ((rc = mn__session_ref(db, o->ns, o->session_id, canon)))
            return rc;
        o->session_id = canon;
    }
    if (o->ns && (rc = mn__check_namespace(o->ns)))
        return rc;
    if (o->role < -1 || o->role > MN_ROLE_TOOL)
        return mn__err(MN_INVALID, "filter.role: %d is not -1 or a role (0 to 3)", o->role);
    if (o->since < 0 || o->until < 0 || (o->until && o->since >= o->until))
        return mn__err(MN_INVALID, "filter: since and until must be >= 0 and since < until");
    if (o->metadata && (rc = mn__check_filter_metadata(o->metadata)))
        return rc;
    return MN_OK;
}

static mn_status check_query(const char *query)
{
    if (!query || !*query)
        return mn__err(MN_INVALID, "query: empty");
    size_t len = strlen(query), bad;
    if (len > MAX_QUERY_BYTES)
        return mn__err(MN_TOOBIG, "query: %zu bytes is over the limit of %d", len, MAX_QUERY_BYTES);
    if (!mn__utf8_valid(query, len, &bad))
        return mn__err(MN_INVALID, "query: invalid UTF-8 at byte %zu", bad);
    return MN_OK;
}

mn_status mn_search(mn_db *db, const char *query, mn_search_mode mode, size_t top_k, const mn_search_filter *filter,
                    double min_similarity, mn_search_hits **out)
{
    mn_status rc = mn__check_db(db);
    if (!out)
        return mn__err(MN_MISUSE, "mn_search: out is NULL");
    *out = NULL;
    if (rc || (rc = check_query(query)))
        return rc;
    if ((unsigned)mode > MN_SEARCH_HYBRID)
        return mn__err(MN_INVALID, "mode: %d is not a search mode", (int)mode);
    if (top_k > MAX_TOP_K)
        return mn__err(MN_INVALID, "top_k: %zu is over the maximum of %d", top_k, MAX_TOP_K);
    if (!(min_similarity >= -1 && min_similarity <= 1))
        return mn__err(MN_INVALID, "min_similarity: must be from -1 to 1");
    mn_search_filter f;
    char canon[MN_UUID_LEN + 1];
    if ((rc = check_filter(db, filter, &f, canon)))
        return rc;
    return MN__ON_REPLICA(db, mn__search_run(db, query, mode, top_k ? top_k : 10, &f, min_similarity, out));
}

mn_status mn_search_hits_to_json(const mn_search_hits *hits, char **out)
{
    mn__err_clear();
    if (!hits || !out)
        return mn__err(MN_MISUSE, "mn_search_hits_to_json: NULL argument");
    *out = NULL;
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < hits->count; i++) {
        const mn_search_hit *h = &hits->items[i];
        json_t *o = json_pack("{s:I, s:f, s:f, s:f, s:i, s:i, s:s, s:o}", "rank", (json_int_t)(i + 1), "score",
                              h->score, "similarity", h->similarity, "bm25", h->bm25, "semantic_rank",
                              h->semantic_rank, "keyword_rank", h->keyword_rank, "namespace", h->ns, "message",
                              mn__jsonl_message(&h->message, 0));
        if (!o || json_array_append_new(arr, o)) {
            json_decref(arr);
            arr = NULL;
        }
    }
    *out = arr ? mn__json_dump(arr) : NULL;
    json_decref(arr);
    return *out ? MN_OK : mn__nomem();
}

mn_status mn_relevant_context(mn_db *db, const char *query, int64_t max_tokens, const mn_search_filter *filter,
                              char **text)
{
    mn_status rc = mn__check_db(db);
    if (!text)
        return mn__err(MN_MISUSE, "mn_relevant_context: text is NULL");
    *text = NULL;
    if (rc || (rc = check_query(query)))
        return rc;
    if (max_tokens < 1 || max_tokens > 1000000)
        return mn__err(MN_INVALID, "max_tokens: %lld is not from 1 to 1000000", (long long)max_tokens);
    mn_search_filter f;
    char canon[MN_UUID_LEN + 1];
    if ((rc = check_filter(db, filter, &f, canon)))
        return rc;
    return mn__find_relevant_context(db, query, max_tokens, &f, text);
}
