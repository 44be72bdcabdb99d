/*
 * cmd_memory.c — `mnemo memory add|list|get|search|history|update|delete|forget|extract|
 * extract-queue|extract-job`: long-term memories (docs/memory.md). Times are taken as ms since the
 * epoch or as ISO-8601 dates ("2026-03-01", "2026-03-01T12:00:00Z", UTC). extract-queue and
 * extract-job run their API operations (cli_run_op), so that --json prints the job object REST
 * and MCP answer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"

static int print_memory_json(const mn_memory *m)
{
    char *json = NULL;
    mn_status rc = mn_memory_to_json(m, &json);
    if (rc)
        return cli_fail(rc);
    printf("%s\n", json);
    mn_free(json);
    return 0;
}

static void print_line(const mn_memory *m, int with_score)
{
    char from[32], to[32];
    cli_time(m->valid_from, from, sizeof from);
    if (m->valid_to)
        cli_time(m->valid_to, to, sizeof to);
    else
        snprintf(to, sizeof to, "now");
    if (with_score)
        printf("%.4f  ", m->score);
    printf("%s v%lld %s%s  [%s .. %s]  %s\n", m->id, (long long)m->version, m->kind, m->pinned ? " pinned" : "", from,
           to, m->text);
}

static int print_list(const mn_memories *l, int json, int with_score)
{
    if (json) {
        char *t = NULL;
        mn_status rc = mn_memories_to_json(l, &t);
        if (rc)
            return cli_fail(rc);
        printf("%s\n", t);
        mn_free(t);
        return 0;
    }
    for (size_t i = 0; i < l->count; i++)
        print_line(&l->items[i], with_score);
    return 0;
}

/* --sources 12,13 → ids (at most MN_MEMORY_MAX_SOURCES + 1 so that the library names the limit). */
static int sources_opt(const struct cli_args *a, int64_t *ids, size_t *n)
{
    *n = 0;
    const char *v = cli_opt(a, "sources");
    if (!v)
        return 0;
    while (*v) {
        char *end;
        errno = 0;
        long long id = strtoll(v, &end, 10);
        if (errno || end == v || id <= 0 || (*end && *end != ',')) {
            char typed[64];
            return cli_usage_error("--%s: '%s' is not a comma-separated list of message ids",
                                   cli_typed(a, "sources", typed, sizeof typed), cli_opt(a, "sources")),
                   -1;
        }
        if (*n <= MN_MEMORY_MAX_SOURCES)
            ids[(*n)++] = id;
        v = *end ? end + 1 : end;
    }
    return 0;
}

static int read_scope(const struct cli_args *a, mn_memory_query *q)
{
    q->ns = cli_opt(a, "namespace");
    q->user_id = cli_opt(a, "user-id");
    q->agent_id = cli_opt(a, "agent-id");
    q->session_id = cli_opt(a, "session-id");
    q->kind = cli_opt(a, "kind");
    q->metadata = cli_opt(a, "metadata");
    long long as_of = 0, limit = 0;
    if (cli_time_opt(a, "as-of", &as_of) || cli_number(a, "limit", &limit))
        return -1;
    q->as_of = as_of;
    q->limit = (size_t)limit;
    q->include_closed = cli_flag(a, "include-closed");
    if (cli_contradict(a, "pinned", "unpinned"))
        return -1;
    if (cli_flag(a, "pinned") || cli_flag(a, "unpinned"))
        q->pinned = cli_flag(a, "pinned"); /* REST's pinned: true / false */
    return 0;
}

int cmd_memory_add(const struct cli_global *g, struct cli_args *a)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    int64_t ids[MN_MEMORY_MAX_SOURCES + 1];
    long long from = 0, to = 0, cap = 0;
    in.text = a->pos[0];
    in.kind = cli_opt(a, "kind");
    in.ns = cli_opt(a, "namespace");
    in.user_id = cli_opt(a, "user-id");
    in.agent_id = cli_opt(a, "agent-id");
    in.session_id = cli_opt(a, "session-id");
    in.metadata = cli_opt(a, "metadata");
    in.reason = cli_opt(a, "reason");
    in.actor = "cli";
    in.pinned = cli_flag(a, "pinned");
    if (sources_opt(a, ids, &in.n_sources) || cli_time_opt(a, "valid-from", &from) || cli_time_opt(a, "valid-to", &to) ||
        cli_number(a, "token-cap", &cap))
        return EXIT_USAGE;
    in.sources = ids;
    in.valid_from = from;
    in.valid_to = to;
    in.token_cap = cap;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_memory *m = NULL;
    mn_status rc = mn_memory_add(db, &in, &m);
    int status = rc ? cli_fail(rc) : cli_flag(a, "json") ? print_memory_json(m) : (printf("%s\n", m->id), 0);
    mn_memory_free(m);
    mn_close(db);
    return status;
}

int cmd_memory_list(const struct cli_global *g, struct cli_args *a)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    long long offset = 0;
    if (read_scope(a, &q) || cli_number(a, "offset", &offset))
        return EXIT_USAGE;
    q.offset = (size_t)offset;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_memories *l = NULL;
    mn_status rc = mn_memory_list(db, &q, &l);
    int status = rc ? cli_fail(rc) : print_list(l, cli_flag(a, "json"), 0);
    mn_memories_free(l);
    mn_close(db);
    return status;
}

int cmd_memory_search(const struct cli_global *g, struct cli_args *a)
{
    mn_memory_query q = MN_MEMORY_QUERY_INIT;
    mn_search_mode mode = MN_SEARCH_AUTO;
    if (cli_opt(a, "mode") && mn_search_mode_parse(cli_opt(a, "mode"), &mode) != MN_OK)
        return cli_usage_error("--%s", mn_errmsg());
    if (read_scope(a, &q))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_memories *l = NULL;
    mn_status rc = mn_memory_search(db, a->pos[0], mode, &q, &l);
    int status = rc ? cli_fail(rc) : print_list(l, cli_flag(a, "json"), 1);
    mn_memories_free(l);
    mn_close(db);
    return status;
}

int cmd_memory_show(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_memory *m = NULL;
    mn_status rc = mn_memory_get(db, a->pos[0], &m);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json"))
        status = print_memory_json(m);
    else {
        char t[32];
        printf("id:          %s (version %lld)\ntext:        %s\nkind:        %s\nnamespace:   %s\n", m->id,
               (long long)m->version, m->text, m->kind, m->ns);
        if (m->user_id)
            printf("user:        %s\n", m->user_id);
        if (m->agent_id)
            printf("agent:       %s\n", m->agent_id);
        if (m->session_id)
            printf("session:     %s\n", m->session_id);
        printf("metadata:    %s\n", m->metadata);
        printf("sources:    ");
        for (size_t i = 0; i < m->n_sources; i++)
            printf(" %lld", (long long)m->sources[i]);
        cli_time(m->valid_from, t, sizeof t);
        printf("\nvalid from:  %s\n", t);
        if (m->valid_to) {
            cli_time(m->valid_to, t, sizeof t);
            printf("valid to:    %s\n", t);
        }
        cli_time(m->recorded_at, t, sizeof t);
        printf("recorded:    %s by %s (%s)%s%s\n", t, m->actor, m->change, m->reason ? ": " : "",
               m->reason ? m->reason : "");
        if (m->pinned)
            printf("pinned:      yes (token cap %lld)\n", (long long)m->token_cap);
    }
    mn_memory_free(m);
    mn_close(db);
    return status;
}

int cmd_memory_history(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_memories *l = NULL;
    mn_status rc = mn_memory_history(db, a->pos[0], &l);
    int status = 0;
    if (rc)
        status = cli_fail(rc);
    else if (cli_flag(a, "json"))
        status = print_list(l, 1, 0);
    else
        for (size_t i = 0; i < l->count; i++) {
            const mn_memory *m = &l->items[i];
            char rec[32];
            cli_time(m->recorded_at, rec, sizeof rec);
            printf("v%lld %-6s %s by %s%s%s\n   ", (long long)m->version, m->change, rec, m->actor,
                   m->reason ? ": " : "", m->reason ? m->reason : "");
            print_line(m, 0);
        }
    mn_memories_free(l);
    mn_close(db);
    return status;
}

int cmd_memory_update(const struct cli_global *g, struct cli_args *a)
{
    mn_memory_in in = MN_MEMORY_IN_INIT;
    int64_t ids[MN_MEMORY_MAX_SOURCES + 1];
    long long from = 0, to = 0, cap = -1;
    in.text = cli_opt(a, "text");
    in.kind = cli_opt(a, "kind");
    in.metadata = cli_opt(a, "metadata");
    in.reason = cli_opt(a, "reason");
    in.actor = "cli";
    if (sources_opt(a, ids, &in.n_sources) || cli_time_opt(a, "valid-from", &from) || cli_time_opt(a, "valid-to", &to) ||
        cli_number(a, "token-cap", &cap)) /* absent: cap stays -1, unchanged */
        return EXIT_USAGE;
    if (cli_opt(a, "sources"))
        in.sources = ids;
    in.valid_from = from;
    in.valid_to = to;
    in.token_cap = cap;
    if (cli_contradict(a, "pinned", "unpinned"))
        return EXIT_USAGE;
    if (cli_flag(a, "pinned"))
        in.pinned = 1;
    if (cli_flag(a, "unpinned"))
        in.pinned = 0;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_memory *m = NULL;
    mn_status rc = mn_memory_update(db, a->pos[0], &in, &m);
    int status = rc ? cli_fail(rc)
                    : cli_flag(a, "json") ? print_memory_json(m)
                                          : (printf("%s v%lld\n", m->id, (long long)m->version), 0);
    mn_memory_free(m);
    mn_close(db);
    return status;
}

int cmd_memory_delete(const struct cli_global *g, struct cli_args *a)
{
    long long at = 0;
    if (cli_time_opt(a, "at", &at))
        return EXIT_USAGE;
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_memory_delete(db, a->pos[0], at, "cli", cli_opt(a, "reason"));
    int status = rc ? cli_fail(rc) : 0;
    if (!rc && cli_flag(a, "json"))
        printf("{\"closed\":\"%s\"}\n", a->pos[0]);
    mn_close(db);
    return status;
}

int cmd_memory_forget(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_status rc = mn_memory_forget(db, a->pos[0]);
    int status = rc ? cli_fail(rc) : 0;
    if (!rc && cli_flag(a, "json"))
        printf("{\"forgotten\":\"%s\"}\n", a->pos[0]);
    mn_close(db);
    return status;
}

int cmd_memory_extract(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    mn_extract_stats st;
    mn_status rc = mn_memory_extract(db, a->pos[0], cli_opt(a, "extractor"), &st);
    int status = rc ? cli_fail(rc) : 0;
    if (!rc && cli_flag(a, "json"))
        printf("{\"messages\":%lld,\"candidates\":%lld,\"added\":%lld,\"updated\":%lld,\"invalidated\":%lld,"
               "\"unchanged\":%lld,\"rejected\":%lld}\n",
               (long long)st.messages, (long long)st.candidates, (long long)st.added, (long long)st.updated,
               (long long)st.invalidated, (long long)st.unchanged, (long long)st.rejected);
    else if (!rc)
        printf("%lld messages read: %lld added, %lld updated, %lld unchanged\n", (long long)st.messages,
               (long long)st.added, (long long)st.updated, (long long)st.unchanged);
    mn_close(db);
    return status;
}

/* "job <id>: pending (session <sid>, up to seq N)", or the job object with --json. */
static int print_job(const struct cli_args *a, const json_t *job)
{
    if (cli_flag(a, "json")) {
        char *text = json_dumps(job, JSON_COMPACT);
        if (!text)
            return cli_fail(MN_NOMEM);
        puts(text);
        free(text);
        return 0;
    }
    const char *error = json_string_value(json_object_get(job, "error"));
    printf("job %s: %s (session %s, up to seq %lld)%s%s\n", json_string_value(json_object_get(job, "id")),
           json_string_value(json_object_get(job, "state")), json_string_value(json_object_get(job, "session_id")),
           (long long)json_integer_value(json_object_get(job, "upto_seq")), error ? ": " : "", error ? error : "");
    return 0;
}

int cmd_memory_queue(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = json_pack("{s:s}", "session_id", a->pos[0]), *r = NULL;
    if (!p)
        return cli_fail(MN_NOMEM);
    const char *data = cli_opt(a, "data");
    if (data) { /* parsed as strictly as a REST body; the operation checks that it is an object */
        json_error_t jerr;
        json_t *v = json_loads(data, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
        if (!v) {
            json_decref(p);
            return cli_usage_error("--data: malformed JSON: %s at line %d column %d", jerr.text, jerr.line,
                                   jerr.column);
        }
        json_object_set_new(p, "data", v);
    }
    mn_db *db = cli_open(g);
    int status = !db || cli_run_op(db, "memory_extract_queue", p, &r);
    if (!status)
        status = print_job(a, r);
    json_decref(r);
    json_decref(p);
    mn_close(db);
    return status;
}

/* A job this process reads is held by its own worker when the run that queued it was lost (the
 * library queues it again), and that worker ends with the process: so the command reads until
 * the job has ended, which makes asking with `mnemo memory extract-job` what runs a job queued
 * by a command (docs/memory.md, "REST and MCP"). */
#define JOB_POLL_NS 20000000L

int cmd_memory_job(const struct cli_global *g, struct cli_args *a)
{
    json_t *p = json_pack("{s:s}", "job_id", a->pos[0]), *r = NULL;
    if (!p)
        return cli_fail(MN_NOMEM);
    mn_db *db = cli_open(g);
    int status = !db;
    while (!status && !(status = cli_run_op(db, "memory_extract_job", p, &r))) {
        const char *state = json_string_value(json_object_get(r, "state"));
        if (strcmp(state, "pending") != 0 && strcmp(state, "running") != 0)
            break;
        json_decref(r);
        r = NULL;
        struct timespec pause = {0, JOB_POLL_NS};
        nanosleep(&pause, NULL);
    }
    if (!status)
        status = print_job(a, r);
    json_decref(r);
    json_decref(p);
    mn_close(db);
    return status;
}
