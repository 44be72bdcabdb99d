/*
 * retention.c — the fact-retention benchmark (issues #12, #38): do built contexts still carry
 * what an agent needs after older turns are folded? It generates scripted conversations
 * deterministically in two sets — `tuned` (the set the summariser was tuned on) and `held-out`
 * (heldout.h: other domains, files, decisions, tools, phrasing, filler words and seed) — each in
 * three shapes: plain, tool-heavy (a tool call and a 12-line result per turn) and agent loops (2
 * to 4 tool calls per turn, user filler made of a few repeated words, a third of it phrased as a
 * rule). It plants tagged facts in the first turns (a path, an id, a version, a number, a
 * constraint, a decision, an error and its fix, an open task), buries them, and for each strategy
 * and budget replays the conversation into a fresh session of a temporary SQLite database,
 * building the context after every 5th user turn (so folds happen as they would in use, with the
 * extractive summariser) and measuring the share of tagged facts present in the last context.
 * `window+compact` runs `mn_compact` before its last build.
 * Public header only. Usage: retention [DB_DIR] (run.sh wraps it). RETENTION_SET=tuned or
 * held-out runs one set; RETENTION_MISSES=1 lists the facts missing from each context;
 * RETENTION_SHOW=set:strategy:budget:conv prints one context.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mnemo.h"

#define N_CONV 60      /* per set: 40 plain or tool-heavy (the first benchmark's), 20 agent loops */
#define N_FILLER 36
#define N_LOOP_TURNS 24
#define MAX_MSGS 320

enum { SHAPE_PLAIN, SHAPE_TOOLS, SHAPE_LOOP, N_SHAPES };
static const char *const shape_names[N_SHAPES] = {"plain", "tool-heavy", "agent loop"};

enum { F_PATH, F_ID, F_VERSION, F_NUMBER, F_CONSTRAINT, F_DECISION, F_ERROR, F_FIX, F_TASK, N_FACTS };
static const char *const fact_names[N_FACTS] = {"path", "id", "version", "number", "constraint",
                                                "decision", "error", "fix", "open task"};

struct msg {
    mn_role role;
    char *content, *calls, *call_id, *name;
};

struct conv {
    const char *domain;
    int shape;
    char needle[N_FACTS][512];
    struct msg m[MAX_MSGS];
    size_t n;
};

static char *dupf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *dupf(const char *fmt, ...)
{
    char buf[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return strdup(buf);
}

static void add(struct conv *c, mn_role role, char *content, char *calls, char *call_id, char *name)
{
    if (c->n < MAX_MSGS)
        c->m[c->n++] = (struct msg){role, content, calls, call_id, name};
}

static unsigned rnd(unsigned *s) { return (*s = *s * 1103515245u + 12345u) >> 8; }

/* Domain vocabulary: what the facts and the ordinary work look like. */
struct domain {
    const char *name, *tool, *dir, *idp, *product, *unit, *constraint, *decision, *error, *fix, *task;
    const char *const filler_user[6], *const filler_asst[6];
};

/* Agent loops: the words user filler is made of, rule-like openings, the tools called. */
struct loop_vocab {
    const char *words[8];
    int n_words;
    const char *rules[3];
    const char *tools[4];
    int n_tools;
};

/* A set of conversations: its domains, seeds, loop vocabulary, how its early turns plant the
 * facts, and its last question. */
struct set {
    const char *name;
    const struct domain *domains; /* 4 */
    unsigned seed0, seed_step;
    int v0, v_step;
    const struct loop_vocab *loop;
    void (*plant)(struct conv *c, const struct domain *d, int k, int v);
    const char *last_question;
};

static const struct domain tuned_domains[] = {
    {"coding", "run_shell", "src/store", "ENG", "libsqlite", "ms timeout", "Never edit vendor/legacy_%d.h by hand",
     "We decided to use write-ahead logging with batch size %d", "error E%d: undefined reference to parse_row_%d",
     "fixed it by linking libparse%d", "Later we still need to write the migration guide for schema %d",
     {"Can you explain how the page cache works here?", "Let's look at the next function.",
      "How would you structure the tests for this?", "Walk me through the retry logic again.",
      "What does this loop actually do?", "Go on with the refactoring."},
     {"The cache keeps recently used pages in memory so repeated reads avoid the disk.",
      "This function validates its input first and then hands the rows to the writer.",
      "I would keep each test small and name it after the behaviour it checks.",
      "Each retry waits twice as long as the one before, up to a limit.",
      "It walks the list once and stops at the first entry that matches.",
      "The refactoring moves the parsing into its own helper so the caller reads simply."}},
    {"travel", "search_flights", "trips/itinerary", "BK", "TripPlanner app", "EUR budget",
     "I never take red-eye flights, keep arrivals before %d pm", "We decided to stay at Hotel Aurora %d",
     "payment error PD-%d: card declined for booking code %d", "fixed it by paying with the card ending 42%d",
     "Later we still need to book the airport transfer for day %d",
     {"What is the weather usually like there in spring?", "Can you suggest a museum for the afternoon?",
      "How long is the train ride between the two cities?", "Is it easy to get around by public transport?",
      "What should I pack for a week?", "Any tips for restaurants near the old town?"},
     {"Spring is mild there, with some rain, so a light jacket is a good idea.",
      "The modern art museum is a good choice; it is quieter in the afternoon.",
      "The train is comfortable and runs often through the day.",
      "Yes, the trams and buses cover the centre well and tickets are simple.",
      "Pack layers, comfortable shoes and an umbrella for a week like that.",
      "The small places on the side streets tend to be better than the main square."}},
    {"support", "lookup_ticket", "support/exports", "CASE", "Acme Router firmware", "GB data cap",
     "Do not reset the customer's settings without asking, unit %d is in production",
     "We decided to replace the power adapter model PA-%d", "error code RT-%d: WAN link down after update %d",
     "fixed it by rolling back to the build ending %d", "Later we still need to send the RMA form for unit %d",
     {"The customer says the lights are blinking, what does that mean?", "Can you check their account status?",
      "How do I explain the warranty terms simply?", "What should I tell them about the outage?",
      "Is there a known issue with this model?", "How do we close the ticket properly?"},
     {"Blinking lights usually mean the device is looking for a connection.",
      "Their account is active and in good standing.",
      "The warranty covers defects, not damage, for a fixed period from purchase.",
      "Tell them the team is working on it and that updates will follow.",
      "There are a few reports, but nothing that matches their symptoms exactly.",
      "Summarise the resolution, confirm with the customer, then close it."}},
    {"research", "search_papers", "notes/papers", "DOI-10.5555", "scikit-learn", "participants",
     "Only cite peer-reviewed sources, nothing before %d",
     "We decided to use a mixed-effects model with %d random intercepts",
     "error in analysis AN-%d: singular fit on block %d", "fixed it by dropping the slope for session %d",
     "Later we still need to rerun the power analysis for cohort %d",
     {"What does the literature say about this effect?", "Can you summarise the method section?",
      "How should I phrase the limitations?", "Is this sample size reasonable?",
      "What is a good way to visualise these results?", "How do I respond to the reviewer's comment?"},
     {"Most studies report a small but consistent effect under these conditions.",
      "They recruited through two sites and used the same protocol at both.",
      "State the limits plainly and say how future work could address them.",
      "It is reasonable for the design, though more would narrow the intervals.",
      "A dot plot with intervals shows both the spread and the estimate.",
      "Thank the reviewer, address the point directly and point to the change."}},
};

/* The early turns of a tuned conversation: the facts, as people say them. */
static void plant_tuned(struct conv *c, const struct domain *d, int k, int v)
{
    snprintf(c->needle[F_PATH], 512, "%s/item_%d.%s", d->dir, v, k % 4 == 0 ? "c" : k % 4 == 3 ? "md" : "pdf");
    snprintf(c->needle[F_ID], 512, "%s-%d", d->idp, 4000 + v);
    snprintf(c->needle[F_VERSION], 512, "%d.%d.%d", 2 + k % 3, k % 10, (k * 3) % 17);
    snprintf(c->needle[F_NUMBER], 512, "%d %s", 1000 + v * 13, d->unit);
    char buf[512];
    snprintf(buf, sizeof buf, d->constraint, v);
    snprintf(c->needle[F_CONSTRAINT], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->decision, v);
    snprintf(c->needle[F_DECISION], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->error, v, v + 1);
    snprintf(c->needle[F_ERROR], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->fix, v % 10);
    snprintf(c->needle[F_FIX], 512, "%s", buf);
    snprintf(buf, sizeof buf, d->task, v % 7 + 1);
    snprintf(c->needle[F_TASK], 512, "%s", buf);

    add(c, MN_ROLE_USER,
        dupf("I need help with %s in %s, tracked as %s. %s. We are on %s %s.", d->name, c->needle[F_PATH],
             c->needle[F_ID], c->needle[F_CONSTRAINT], d->product, c->needle[F_VERSION]),
        NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, dupf("Understood. I will keep to that. The limit to respect is %s.", c->needle[F_NUMBER]), NULL,
        NULL, NULL);
    add(c, MN_ROLE_USER, dupf("What do you suggest for the approach?"), NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, dupf("%s, since it fits the limits best.", c->needle[F_DECISION]), NULL, NULL, NULL);
    add(c, MN_ROLE_USER, dupf("Please run the first check."), NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, NULL, dupf("[{\"id\":\"f1\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{\\\"target\\\":\\\"%s\\\"}\"}}]", d->tool, c->needle[F_ID]),
        NULL, NULL);
    add(c, MN_ROLE_TOOL, dupf("%s\nstatus: failed", c->needle[F_ERROR]), NULL, strdup("f1"), strdup(d->tool));
    add(c, MN_ROLE_ASSISTANT, dupf("I %s, and the check passes now.", c->needle[F_FIX]), NULL, NULL, NULL);
    add(c, MN_ROLE_USER, dupf("Good. %s.", c->needle[F_TASK]), NULL, NULL, NULL);
    add(c, MN_ROLE_ASSISTANT, dupf("Noted, I will keep that on the list."), NULL, NULL, NULL);
}

/* The ordinary work that buries the facts: questions and answers, with a tool call and a
 * 12-line listing per turn when tool-heavy. */
static void bury_plain(struct conv *c, const struct domain *d, unsigned *seed)
{
    for (int t = 0; t < N_FILLER; t++) {
        unsigned r = rnd(seed);
        add(c, MN_ROLE_USER, strdup(d->filler_user[r % 6]), NULL, NULL, NULL);
        if (c->shape == SHAPE_TOOLS) {
            char id[16];
            snprintf(id, sizeof id, "t%d", t);
            add(c, MN_ROLE_ASSISTANT, NULL,
                dupf("[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{\\\"page\\\":%d}\"}}]",
                     id, d->tool, t),
                NULL, NULL);
            char out[1600];
            size_t o = 0;
            for (int l = 0; l < 12 && o < sizeof out - 120; l++)
                o += (size_t)snprintf(out + o, sizeof out - o, "%s/page%d/entry_%d.txt (%u bytes): %s\n", d->dir, t, l,
                                      1000 + (r >> (l % 8)) % 9000, d->filler_asst[(r + (unsigned)l) % 6]);
            add(c, MN_ROLE_TOOL, strdup(out), NULL, strdup(id), strdup(d->tool));
        }
        add(c, MN_ROLE_ASSISTANT, dupf("%s %s See %s/notes_%d.md, section %u.", d->filler_asst[(r >> 3) % 6],
                                       d->filler_asst[(r >> 6) % 6], d->dir, t, (r >> 9) % 40 + 1),
            NULL, NULL, NULL);
    }
}

/* Five words of the loop vocabulary, chosen by seed. */
static void loop_phrase(char *out, size_t cap, const struct loop_vocab *lv, unsigned *seed)
{
    size_t o = 0;
    out[0] = '\0';
    for (int w = 0; w < 5 && o < cap; w++)
        o += (size_t)snprintf(out + o, cap - o, "%s%s", w ? " " : "", lv->words[rnd(seed) % (unsigned)lv->n_words]);
}

/* An agent loop: per turn a user message of repeated words (a third of them phrased as a rule,
 * "we should always keep window shard …"), 2 to 4 tool calls with 5-line outputs, a short reply. */
static void bury_loop(struct conv *c, const struct domain *d, const struct loop_vocab *lv, unsigned *seed)
{
    for (int t = 0; t < N_LOOP_TURNS; t++) {
        char phrase[160], p2[160];
        loop_phrase(phrase, sizeof phrase, lv, seed);
        if (t % 3 == 1)
            add(c, MN_ROLE_USER, dupf("%s %s (turn %d)", lv->rules[rnd(seed) % 3], phrase, t + 7), NULL, NULL, NULL);
        else
            add(c, MN_ROLE_USER, dupf("%s (turn %d)", phrase, t + 7), NULL, NULL, NULL);
        int calls = 2 + (int)(rnd(seed) % 3);
        for (int j = 0; j < calls; j++) {
            const char *tool = lv->tools[rnd(seed) % (unsigned)lv->n_tools];
            char id[24];
            snprintf(id, sizeof id, "l%d_%d", t, j);
            add(c, MN_ROLE_ASSISTANT, NULL,
                dupf("[{\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{\\\"q\\\":\\\"%s\\\"}\"}}]",
                     id, tool, lv->words[rnd(seed) % (unsigned)lv->n_words]),
                NULL, NULL);
            char out[1200];
            size_t o = 0;
            for (int l = 0; l < 5; l++) {
                loop_phrase(p2, sizeof p2, lv, seed);
                o += (size_t)snprintf(out + o, sizeof out - o, "%s/%s_%u.dat: %s %u\n", d->dir,
                                      lv->words[rnd(seed) % (unsigned)lv->n_words], rnd(seed) % 400, p2, rnd(seed) % 90);
            }
            add(c, MN_ROLE_TOOL, strdup(out), NULL, strdup(id), strdup(tool));
        }
        add(c, MN_ROLE_ASSISTANT, dupf("Went through the %s output for turn %d.", phrase, t + 7), NULL, NULL, NULL);
    }
}

/* Agent loops of the tuned set (the words of the report in issue #38). */
static const struct loop_vocab tuned_loop = {
    {"window", "shard", "query", "index", "merge", "buffer"}, 6,
    {"we should always keep", "never drop the", "make sure to keep"},
    {"run_shell", "read_file", "grep_code"}, 3,
};

static const struct set tuned_set = {"tuned", tuned_domains, 1000u, 7919u, 100, 37, &tuned_loop, plant_tuned,
                                     "Where are we now, and what is left?"};

#include "heldout.h"

/* Conversation k of a set. The first 40 of the tuned set are the first benchmark's, unchanged. */
static void make_conv(struct conv *c, const struct set *set, int k)
{
    const struct domain *d = &set->domains[k % 4];
    unsigned seed = set->seed0 + (unsigned)k * set->seed_step;
    int v = set->v0 + k * set->v_step;
    memset(c, 0, sizeof *c);
    c->domain = d->name;
    c->shape = k >= 40 ? SHAPE_LOOP : (k / 4) % 2 ? SHAPE_TOOLS : SHAPE_PLAIN;
    set->plant(c, d, k, v);
    if (c->shape == SHAPE_LOOP)
        bury_loop(c, d, set->loop, &seed);
    else
        bury_plain(c, d, &seed);
    add(c, MN_ROLE_USER, strdup(set->last_question), NULL, NULL, NULL);
    for (int f = 0; f < N_FACTS; f++) { /* a fact the conversation does not say cannot be kept */
        int said = 0;
        for (size_t i = 0; i < c->n && !said; i++)
            said = c->m[i].content && strstr(c->m[i].content, c->needle[f]);
        if (!said || c->n >= MAX_MSGS) {
            fprintf(stderr, "retention: %s conversation %d: fact '%s' not planted (or too long)\n", set->name, k,
                    c->needle[f]);
            exit(1);
        }
    }
}

static void free_conv(struct conv *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->m[i].content);
        free(c->m[i].calls);
        free(c->m[i].call_id);
        free(c->m[i].name);
    }
}

static const char *const strategies[] = {"summary", "chunked", "hybrid", "window+compact"};
#define N_STRATEGIES 4
static const int64_t budgets[] = {500, 1000, 2000, 4000, 8000};
#define N_BUDGETS 5

static void die(const char *what)
{
    fprintf(stderr, "retention: %s: %s\n", what, mn_errmsg());
    exit(1);
}

/* Replays c into a new session and returns the last context (text format), malloc'd. */
static char *replay(mn_db *db, const struct conv *c, const char *strategy, int64_t budget)
{
    int compact = strcmp(strategy, "window+compact") == 0;
    mn_session_opts so = MN_SESSION_OPTS_INIT;
    so.system_prompt = "You are a helpful assistant.";
    mn_session *s = NULL;
    if (mn_session_create(db, &so, &s) != MN_OK)
        die("session");
    mn_context_opts o = MN_CONTEXT_OPTS_INIT;
    o.strategy = compact ? "window" : strategy;
    o.max_tokens = budget;
    o.format = MN_FORMAT_TEXT;
    char *last = NULL;
    int users = 0;
    for (size_t i = 0; i < c->n; i++) {
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = c->m[i].role;
        m.content = c->m[i].content;
        m.tool_calls = c->m[i].calls;
        m.tool_call_id = c->m[i].call_id;
        m.name = c->m[i].name;
        if (mn_append(db, s->id, &m, 0, NULL) != MN_OK)
            die("append");
        int is_last = i + 1 == c->n;
        if (m.role == MN_ROLE_USER && (++users % 5 == 0 || is_last)) {
            if (is_last && compact) {
                char *ev = NULL;
                if (mn_compact(db, s->id, &ev) != MN_OK)
                    die("compact");
                mn_free(ev);
            }
            mn_context *ctx = NULL;
            if (mn_context_build(db, s->id, &o, &ctx) != MN_OK)
                die("context");
            free(last);
            last = strdup(ctx->rendered);
            mn_context_free(ctx);
        }
    }
    mn_session_free(s);
    return last;
}

/* Kept facts of one set: by strategy and budget; by fact kind and by shape at budgets ≥ 2000. */
struct tally {
    long kept[N_STRATEGIES][N_BUDGETS];
    long by_fact[N_FACTS], by_fact_n;
    long by_shape[N_SHAPES], by_shape_n[N_SHAPES];
};

static void measure(mn_db *db, const struct set *set, const struct conv *convs, struct tally *t)
{
    memset(t, 0, sizeof *t);
    for (int si = 0; si < N_STRATEGIES; si++)
        for (int bi = 0; bi < N_BUDGETS; bi++)
            for (int k = 0; k < N_CONV; k++) {
                const struct conv *c = &convs[k];
                char *ctx = replay(db, c, strategies[si], budgets[bi]);
                char tag[160];
                snprintf(tag, sizeof tag, "%s:%s:%lld:%d", set->name, strategies[si], (long long)budgets[bi], k);
                if (getenv("RETENTION_SHOW") && strcmp(getenv("RETENTION_SHOW"), tag) == 0)
                    fprintf(stderr, "---- %s\n%s\n", tag, ctx ? ctx : "(none)");
                for (int f = 0; f < N_FACTS; f++) {
                    int in = ctx && strstr(ctx, c->needle[f]) != NULL;
                    t->kept[si][bi] += in;
                    if (budgets[bi] >= 2000) {
                        t->by_fact[f] += in;
                        t->by_fact_n += f == 0;
                        t->by_shape[c->shape] += in;
                        t->by_shape_n[c->shape]++;
                    }
                    if (!in && getenv("RETENTION_MISSES"))
                        fprintf(stderr, "miss: %s %s %lld conv %d (%s, %s): %s\n", set->name, strategies[si],
                                (long long)budgets[bi], k, c->domain, shape_names[c->shape], c->needle[f]);
                }
                free(ctx);
            }
}

static double pct(long a, long b) { return 100.0 * (double)a / (double)(b ? b : 1); }

static void report(const struct set *set, const struct conv *convs, const struct tally *t)
{
    size_t lo = MAX_MSGS, hi = 0;
    for (int k = 0; k < N_CONV; k++) {
        lo = convs[k].n < lo ? convs[k].n : lo;
        hi = convs[k].n > hi ? convs[k].n : hi;
    }
    printf("## %s set: %d conversations (%d plain, %d tool-heavy, %d agent loops), %d tagged facts each, %zu to %zu"
           " messages\n\n",
           set->name, N_CONV, 20, 20, N_CONV - 40, N_FACTS, lo, hi);
    printf("| strategy | %lld | %lld | %lld | %lld | %lld |\n| --- | ---: | ---: | ---: | ---: | ---: |\n",
           (long long)budgets[0], (long long)budgets[1], (long long)budgets[2], (long long)budgets[3],
           (long long)budgets[4]);
    for (int si = 0; si < N_STRATEGIES; si++) {
        printf("| %s |", strategies[si]);
        for (int bi = 0; bi < N_BUDGETS; bi++)
            printf(" %.1f%% |", pct(t->kept[si][bi], (long)N_CONV * N_FACTS));
        printf("\n");
    }
    printf("\nBy fact kind and by shape, over all strategies at budgets of 2000 tokens and more:\n\n"
           "| fact | kept |\n| --- | ---: |\n");
    for (int f = 0; f < N_FACTS; f++)
        printf("| %s | %.1f%% |\n", fact_names[f], pct(t->by_fact[f], t->by_fact_n));
    printf("\n| shape | kept |\n| --- | ---: |\n");
    for (int sh = 0; sh < N_SHAPES; sh++)
        printf("| %s | %.1f%% |\n", shape_names[sh], pct(t->by_shape[sh], t->by_shape_n[sh]));
    printf("\n");
}

int main(int argc, char **argv)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "/tmp");
    char path[600];
    snprintf(path, sizeof path, "%s/retention-%d.db", dir, (int)getpid());
    mn_config *cfg = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "memory.durability", "normal", NULL) ||
        mn_config_set(cfg, "summarizer.name", "extractive", NULL) || mn_config_set(cfg, "tokenizer.name", "heuristic", NULL))
        die("config");
    mn_db *db = NULL;
    if (mn_open_path(path, cfg, &db) != MN_OK)
        die("open");
    mn_config_free(cfg);
    const struct set *sets[] = {&tuned_set, &heldout_set};
    const char *only = getenv("RETENTION_SET");
    static struct conv convs[N_CONV];
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        if (only && *only && strcmp(only, sets[i]->name) != 0)
            continue;
        for (int k = 0; k < N_CONV; k++)
            make_conv(&convs[k], sets[i], k);
        struct tally t;
        measure(db, sets[i], convs, &t);
        report(sets[i], convs, &t);
        for (int k = 0; k < N_CONV; k++)
            free_conv(&convs[k]);
    }
    mn_close(db);
    remove(path);
    char side[700];
    snprintf(side, sizeof side, "%s-wal", path);
    remove(side);
    snprintf(side, sizeof side, "%s-shm", path);
    remove(side);
    return 0;
}
