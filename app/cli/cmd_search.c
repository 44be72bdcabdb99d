/*
 * cmd_search.c — `mnemo search QUERY`, `mnemo embed --backfill|--pending` and
 * `mnemo reindex --embeddings` (docs/search.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

/* The embedder the configuration names ("none" when unset), copied into name[size]; 0 or an
 * exit status. */
static int embedder_name(const struct cli_global *g, char *name, size_t size)
{
    mn_config *cfg = cli_config(g);
    if (!cfg)
        return 1;
    const char *v = NULL;
    if (mn_config_get(cfg, "embedder.name", &v, NULL) != MN_OK || !v)
        v = "none";
    snprintf(name, size, "%s", v);
    mn_config_free(cfg);
    return 0;
}

/* --embed-first is for the local `hash` embedder only: a remote one may be slow or cost money,
 * so that is `mnemo embed --pending`, asked for by name. Checked before the database opens. */
static int embed_first_check(const struct cli_global *g)
{
    char name[64];
    if (embedder_name(g, name, sizeof name))
        return 1;
    if (strcmp(name, "hash") != 0)
        return cli_usage_error("--embed-first embeds only with the local hash embedder (embedder.name is %s):"
                               " run `mnemo embed --pending` first", name);
    return 0;
}

/* Embeds what is queued before the search. */
static int embed_first(mn_db *db)
{
    size_t done = 0;
    mn_status rc = mn_embed_pending(db, 0, &done);
    if (rc)
        return cli_fail(rc);
    if (done)
        fprintf(stderr, "embedded %zu message%s first\n", done, done == 1 ? "" : "s");
    return 0;
}

/* On stderr (stdout stays the hits): what a semantic or hybrid search could not see. Queued
 * messages of its scope wait for `mnemo embed --pending`. Messages never queued, stored before
 * the embedder was turned on, wait for `mnemo embed --backfill`. The library counts only the
 * vectors and the queue of the whole database (mn_embed_counts), and a message without text
 * never gets a vector, so the messages beyond those are told only when they outnumber the
 * vectors: none embedded yet, or a database mostly never embedded; a few tool calls without
 * text beside a backfilled history say nothing. */
static void not_embedded_hint(const struct cli_global *g, mn_db *db, const mn_search_hits *hits)
{
    char name[64];
    if (hits->mode == MN_SEARCH_KEYWORD || embedder_name(g, name, sizeof name))
        return;
    if (hits->not_embedded > 0)
        fprintf(stderr, "%lld message%s not embedded yet; run `mnemo embed --pending`%s\n",
                (long long)hits->not_embedded, hits->not_embedded == 1 ? " is" : "s are",
                strcmp(name, "hash") == 0 ? " or pass --embed-first" : "");
    mn_stats st;
    int64_t embedded = 0, queued = 0;
    if (mn_stats_get(db, &st) != MN_OK || mn_embed_counts(db, &embedded, &queued) != MN_OK)
        return;
    long long never = (long long)(st.messages - embedded - queued);
    if (never > 0 && never > (long long)embedded)
        fprintf(stderr,
                "%lld message%s no vector and %s not queued for embedding (stored before the embedder was turned "
                "on): run `mnemo embed --backfill`\n",
                never, never == 1 ? " has" : "s have", never == 1 ? "is" : "are");
}

int cmd_search(const struct cli_global *g, struct cli_args *a)
{
    mn_search_mode mode = MN_SEARCH_AUTO;
    if (cli_opt(a, "mode") && mn_search_mode_parse(cli_opt(a, "mode"), &mode) != MN_OK)
        return cli_usage_error("--%s", mn_errmsg());
    if (cli_flag(a, "report") && !cli_flag(a, "json"))
        return cli_usage_error("--report is a part of the JSON output: add --json");
    long long top_k = cli_default(a, "top-k");
    if (cli_number(a, "top-k", &top_k))
        return EXIT_USAGE;
    mn_search_filter f = MN_SEARCH_FILTER_INIT;
    f.session_id = cli_opt(a, "session-id");
    f.ns = cli_opt(a, "namespace");
    if (cli_opt(a, "role")) {
        mn_role r;
        if (mn_role_parse(cli_opt(a, "role"), &r) != MN_OK)
            return cli_usage_error("--role: %s", mn_errmsg());
        f.role = (int)r;
    }
    long long since = 0, until = 0;
    if (cli_time_opt(a, "since", &since) || cli_time_opt(a, "until", &until))
        return EXIT_USAGE;
    f.since = since;
    f.until = until;
    f.metadata = cli_opt(a, "metadata");
    double min_sim = 0;
    if (cli_fraction(a, "min-similarity", &min_sim))
        return EXIT_USAGE;
    int st;
    if (cli_flag(a, "embed-first") && (st = embed_first_check(g)))
        return st;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    if (cli_flag(a, "embed-first")) {
        st = embed_first(db);
        if (st) {
            mn_close(db);
            return st;
        }
    }
    mn_search_hits *hits = NULL;
    mn_status rc = mn_search(db, a->pos[0], mode, (size_t)top_k, &f, min_sim, &hits);
    int status = 0;
    if (!rc)
        not_embedded_hint(g, db, hits);
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json")) {
        char *json = NULL;
        if ((rc = mn_search_hits_to_json(hits, &json)))
            status = cli_fail(rc);
        else if (cli_flag(a, "report"))
            printf("{\"hits\":%s,\"index\":{\"indexed\":%lld,\"scanned\":%lld,\"truncated\":%s},"
                   "\"not_embedded\":%lld,\"keyword_unindexed\":%lld,\"keyword_scanned\":%lld}\n",
                   json, (long long)hits->index_indexed, (long long)hits->index_scanned,
                   hits->index_truncated ? "true" : "false", (long long)hits->not_embedded,
                   (long long)hits->keyword_unindexed, (long long)hits->keyword_scanned);
        else
            printf("%s\n", json);
        mn_free(json);
    } else {
        for (size_t i = 0; i < hits->count; i++) {
            const mn_search_hit *h = &hits->items[i];
            const char *c = h->message.content ? h->message.content : "";
            int len = (int)strlen(c) > 160 ? 160 : (int)strlen(c);
            while (len > 0 && len < (int)strlen(c) && ((unsigned char)c[len] & 0xC0) == 0x80)
                len--; /* cut on a character boundary */
            printf("%2zu. %.4f  %s #%lld (%s)\n    ", i + 1, h->score, h->message.session_id,
                   (long long)h->message.seq, mn_role_name(h->message.role));
            for (int j = 0; j < len; j++)
                putchar(c[j] == '\n' ? ' ' : c[j]);
            printf("%s\n", len < (int)strlen(c) ? "…" : "");
        }
        if (hits->count == 0)
            printf("no matches (%s search)\n", mn_search_mode_name(hits->mode));
        if (hits->index_scanned || hits->index_truncated) /* the index is behind the stored vectors */
            printf("(vector index: %lld indexed, %lld stored since scanned exactly%s)\n",
                   (long long)hits->index_indexed, (long long)hits->index_scanned,
                   hits->index_truncated ? "; more not searched: run mnemo embed --pending" : "");
        if (hits->keyword_unindexed) /* the keyword index is being made again, in the background */
            printf("(keyword index: %lld messages not indexed yet, the newest %lld of them scanned%s)\n",
                   (long long)hits->keyword_unindexed, (long long)hits->keyword_scanned,
                   hits->keyword_scanned < hits->keyword_unindexed ? "; the rest not searched: they are being indexed"
                                                                   " in the background" : "");
    }
    mn_search_hits_free(hits);
    mn_close(db);
    return status;
}

/* How often the progress is shown: a batch can take microseconds (the hash embedder), and a
 * terminal redrawn after every one of them slowed a backfill down. */
enum { BAR_EVERY_MS = 200, LINE_EVERY_MS = 2000 };

struct progress {
    long long started_ms, last_ms;
    int tty, ended;
};

/* A bar with count, rate and ETA on a terminal, redrawn at most five times a second; a plain
 * line every 2 s otherwise. Both at the end of the embedding too, followed by a line for the
 * vector index, which the library updates next (a backfill builds it: most of its time). */
static void embed_progress(void *user, int64_t done, int64_t total)
{
    struct progress *p = user;
    long long now = cli_now_ms(), el = now - p->started_ms;
    int last = done >= total;
    if (p->ended || (!last && now - p->last_ms < (p->tty ? BAR_EVERY_MS : LINE_EVERY_MS)))
        return; /* messages stored meanwhile may take done past total: the end is shown once */
    p->last_ms = now;
    p->ended = last;
    double rate = el > 0 ? (double)done * 1000.0 / (double)el : 0;
    long long eta = rate > 0 && total > done ? (long long)((double)(total - done) / rate) : 0;
    if (p->tty) {
        int width = 30, fill = total > 0 ? (int)(done * width / total) : width;
        fprintf(stderr, "\rembedding [%.*s%*s] %lld/%lld %.0f/s ETA %llds ", fill, "##############################",
                width - fill, "", (long long)done, (long long)total, rate, eta);
        if (last)
            fputc('\n', stderr);
    } else
        fprintf(stderr, "embedded %lld/%lld (%.0f/s, ETA %llds)\n", (long long)done, (long long)total, rate, eta);
    if (last && total > 0)
        fprintf(stderr, "updating the vector index\n");
}

static int embed_all(const struct cli_global *g, struct cli_args *a, int reset)
{
    long long threads = 0;
    if (cli_local_number(a, "threads", 0, 1024, &threads))
        return EXIT_USAGE;
    if (cli_opt(a, "threads")) /* reaches the library as the setting search.index_threads */
        setenv("MNEMO_SEARCH_INDEX_THREADS", cli_opt(a, "threads"), 1);
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int tty = isatty(STDERR_FILENO);
    long long now = cli_now_ms();
    struct progress p = {now, tty ? now - BAR_EVERY_MS : now, tty, 0}; /* a terminal gets its bar at once */
    int64_t done = 0, embedded = 0, queued = 0;
    mn_status rc;
    if (reset)
        rc = mn_reindex_embeddings(db, embed_progress, &p, &done);
    else if (cli_flag(a, "pending")) {
        size_t n = 0;
        rc = mn_embed_pending(db, 0, &n);
        done = (int64_t)n;
    } else
        rc = mn_embed_backfill(db, embed_progress, &p, &done);
    if (!rc)
        rc = mn_embed_counts(db, &embedded, &queued);
    if (!rc && cli_flag(a, "json"))
        printf("{\"done\":%lld,\"embedded\":%lld,\"queued\":%lld}\n", (long long)done, (long long)embedded,
               (long long)queued);
    else if (!rc)
        printf("embedded %lld messages (%lld with a vector, %lld queued)\n", (long long)done, (long long)embedded,
               (long long)queued);
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}

int cmd_embed(const struct cli_global *g, struct cli_args *a)
{
    if (!cli_flag(a, "backfill") && !cli_flag(a, "pending"))
        return cli_usage_error("embed: say what to embed: --backfill or --pending");
    if (cli_contradict(a, "backfill", "pending"))
        return EXIT_USAGE;
    return embed_all(g, a, 0);
}

int cmd_reindex_embeddings(const struct cli_global *g, struct cli_args *a) { return embed_all(g, a, 1); }
