/*
 * memory_bench.c — long-term memory benchmark (issue #17), through the public header only.
 *
 *   memory-bench recall  --db PATH [--users N] [--sessions S] [--seed X] [--extractor offline|llm]
 *                        [--llm-url URL] [--llm-model M] [--embedder none|hash] [--truth FILE]
 *   memory-bench build   --db PATH [--n N] [--users U] [--seed X] [--embedder none|hash]
 *   memory-bench latency --db PATH [--users U] [--queries Q] [--seed X] [--embedder none|hash]
 *   memory-bench append  --db PATH [--n N] [--sessions S] [--extract off|offline|llm] [--seed X]
 *
 * recall: a LoCoMo-style conversation set made from the seed (N users, S sessions each, a month
 * or so apart, filler turns and facts that change over time: a city stated three times in
 * different words, a drink preference, a deploy key rotated twice, an editor). The clock is set
 * per message with MNEMO_TEST_NOW_MS (mnemo reads it for created_at and valid_from), each session
 * is extracted right after its turns (mn_memory_extract), then for every user and key the current
 * value and the value as of a past date (the middle of each earlier value's interval) are asked
 * of mn_memory_search (as_of 0 / as_of the date, the user's scope) and of mn_search over the
 * user's messages (baseline; `until` the date for the as-of questions). One JSON line per
 * (source, mode, question kind): recall@1 and @5 of the right value, and wrong@1 (the top hit
 * names another value of the same key). Then one line per key for the current questions.
 *
 * build: N memories (mn_memory_add, one transaction each: there is no batch call) spread over U
 * users; latency: p50/p99 of keyword mn_memory_search (two common words over all memories and in a
 * user's scope; one rare term) and of mn_memory_list with a user filter (now, and as of a date); append: N mn_append round robin on
 * S sessions with memory.extract as given, per-append latency and throughput, then the time
 * until the background worker has made every memory the offline extractor should make.
 * Each prints JSON lines on stdout. See bench/README.md "Long-term memory".
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mnemo.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned long long rng = 0x9E3779B97F4A7C15ULL;
static unsigned rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}
static void seed_rng(unsigned long long s)
{
    rng = 0x9E3779B97F4A7C15ULL ^ (s * 0x2545F4914F6CDD1DULL);
    for (int i = 0; i < 8; i++)
        rnd();
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void set_now(long long ms)
{
    char v[32];
    snprintf(v, sizeof v, "%lld", ms);
    setenv("MNEMO_TEST_NOW_MS", v, 1);
}

static int fail(const char *what)
{
    fprintf(stderr, "memory-bench: %s: %s\n", what, mn_errmsg());
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * The generator.
 */
#define DAY 86400000LL
#define T0 1735689600000LL /* 2025-01-01T00:00:00Z */

static const char *const CITIES[] = {"Lisbon", "Porto", "Berlin", "Madrid", "Oslo", "Vienna", "Prague", "Dublin",
                                     "Warsaw", "Athens", "Helsinki", "Zurich", "Munich", "Lyon", "Seville",
                                     "Krakow", "Tallinn", "Riga", "Vilnius", "Bergen", "Ghent", "Utrecht",
                                     "Bologna", "Naples", "Valencia", "Bilbao", "Geneva", "Salzburg", "Leipzig",
                                     "Hamburg", "Cologne", "Antwerp"};
#define NCITIES (sizeof CITIES / sizeof CITIES[0])
static const char *const DRINKS[] = {"tea", "coffee", "matcha", "espresso", "cocoa", "kombucha", "lemonade", "chai"};
#define NDRINKS (sizeof DRINKS / sizeof DRINKS[0])
static const char *const EDITORS[] = {"vim", "emacs", "helix", "vscode", "nano", "zed", "kakoune", "sublime"};
#define NEDITORS (sizeof EDITORS / sizeof EDITORS[0])

enum { K_CITY, K_DRINK, K_DEPLOY, K_EDITOR, NKEYS };
static const char *const KEY_NAME[NKEYS] = {"city", "drink", "deploy_key", "editor"};
/* Two ways to ask: the user's question as an agent would pass it, and a few key words. */
static const char *const KEYWORDS[NKEYS] = {"city where user lives", "drink user prefers", "deploy key", "editor"};
static const char *const QUESTION[NKEYS] = {"Which city does the user live in?", "What does the user prefer to drink?",
                                            "What is the user's deploy key?", "Which editor does the user use?"};

#define MAXV 3
struct key_truth {
    int n;                 /* values stated, 1..MAXV */
    int session[MAXV];     /* in which session each value is stated */
    int turn[MAXV];        /* at which user turn of it */
    char value[MAXV][32];  /* the value */
    char said[MAXV][160];  /* the user's words */
    long long from[MAXV];  /* when it was said: true from then */
};
struct user {
    char ns[32], uid[32];
    long long start[16]; /* session start times */
    struct key_truth k[NKEYS];
};

/* Filler (user questions: '?' so the offline extractor never takes them; assistant answers).
 * They mention other cities, drinks, keys and editors: distractors for the keyword baseline. */
static const char *const USER_FILLER[] = {
    "Can you help me plan a weekend trip to %s?",
    "What is the weather usually like in %s in spring?",
    "How do I generate a new SSH key for my laptop?",
    "Any idea what drink to bring to a party on Friday?",
    "Which editor theme works best in dark mode?",
    "How do I fix a flaky unit test in CI?",
    "Could you summarise the release notes for me?",
    "What is a good recipe for a quick dinner tonight?",
    "Is %s expensive compared to other cities?",
    "How should I structure the database migration?",
    "Can you review this pull request description?",
    "What are good museums to visit in %s?",
    "How do I rotate credentials without downtime?",
    "What should I read about distributed consensus?",
};
#define NUF (sizeof USER_FILLER / sizeof USER_FILLER[0])
static const char *const ASSISTANT_FILLER[] = {
    "Sure, here is a short plan with three options and rough costs.",
    "Here is what I found; the main points are listed below.",
    "That depends on the setup, but the usual approach is to start small and measure.",
    "Good question: there are two common answers, and the second fits your case better.",
    "I would split it into steps and check each one before moving on.",
    "Many people like %s for that; it is worth a look.",
};
#define NAF (sizeof ASSISTANT_FILLER / sizeof ASSISTANT_FILLER[0])

static const char *distractor_city(const struct user *u)
{
    for (;;) {
        const char *c = CITIES[rnd() % NCITIES];
        int used = 0;
        for (int i = 0; i < u->k[K_CITY].n; i++)
            used |= strcmp(c, u->k[K_CITY].value[i]) == 0;
        if (!used)
            return c;
    }
}

/* Distinct values for a key, from a list. */
static void pick_values(struct key_truth *kt, const char *const *list, size_t nlist)
{
    for (int i = 0; i < kt->n; i++) {
        const char *v;
        int dup;
        do {
            v = list[rnd() % nlist];
            dup = 0;
            for (int j = 0; j < i; j++)
                dup |= strcmp(v, kt->value[j]) == 0;
        } while (dup);
        snprintf(kt->value[i], sizeof kt->value[i], "%s", v);
    }
}

/* Plans user u: its sessions' times, which values are said when and in which words. */
static void plan_user(struct user *u, int idx, int nsess, int turns)
{
    memset(u, 0, sizeof *u);
    snprintf(u->ns, sizeof u->ns, "mb-u%04d", idx);
    snprintf(u->uid, sizeof u->uid, "u%04d", idx);
    long long t = T0 + (long long)(rnd() % 20) * DAY;
    for (int s = 0; s < nsess; s++) {
        u->start[s] = t + (long long)(rnd() % (8 * 3600)) * 1000;
        t += (long long)(20 + rnd() % 21) * DAY; /* 20-40 days apart */
    }
    /* city: three values, early / middle / late; drink and editor: two; deploy key: three */
    int third = nsess / 3 > 0 ? nsess / 3 : 1;
    struct key_truth *c = &u->k[K_CITY], *d = &u->k[K_DRINK], *k = &u->k[K_DEPLOY], *e = &u->k[K_EDITOR];
    c->n = 3, d->n = 2, k->n = 3, e->n = 2;
    c->session[0] = 0, c->session[1] = third + (int)(rnd() % (unsigned)third), c->session[2] = nsess - 1 - (int)(rnd() % 2);
    d->session[0] = (int)(rnd() % 2), d->session[1] = nsess / 2 + (int)(rnd() % (unsigned)third);
    k->session[0] = 0, k->session[1] = third + (int)(rnd() % 2), k->session[2] = 2 * third + (int)(rnd() % 2);
    e->session[0] = 1, e->session[1] = nsess - 2;
    pick_values(c, CITIES, NCITIES);
    pick_values(d, DRINKS, NDRINKS);
    pick_values(e, EDITORS, NEDITORS);
    for (int i = 0; i < k->n; i++)
        snprintf(k->value[i], sizeof k->value[i], "dk-%04x%02x", rnd() & 0xffff, (unsigned)(idx * 3 + i) & 0xff);
    for (int key = 0; key < NKEYS; key++)
        for (int i = 0; i < u->k[key].n; i++) {
            struct key_truth *kt = &u->k[key];
            kt->turn[i] = 1 + (int)(rnd() % (unsigned)(turns - 2));
            for (int clash = 1; clash;) { /* one statement per user turn: move on to a free turn */
                clash = 0;
                for (int k2 = 0; k2 <= key; k2++)
                    for (int j = 0; j < (k2 == key ? i : u->k[k2].n); j++)
                        if (u->k[k2].session[j] == kt->session[i] && u->k[k2].turn[j] == kt->turn[i])
                            clash = 1;
                if (clash)
                    kt->turn[i] = 1 + kt->turn[i] % (turns - 1);
            }
            char v[sizeof kt->value[i]]; /* a copy: gcc -Wrestrict sees value and said as one object */
            memcpy(v, kt->value[i], sizeof v);
            unsigned form = rnd() % 3;
            switch (key) {
            case K_CITY:
                if (i == 0)
                    snprintf(kt->said[i], sizeof kt->said[i], form ? "My city is %s." : "I live in %s.", v);
                else if (i == 1)
                    snprintf(kt->said[i], sizeof kt->said[i], "Big news. I moved to %s last week.", v);
                else
                    snprintf(kt->said[i], sizeof kt->said[i], form == 0 ? "I moved to %s." : "My city is %s now.", v);
                break;
            case K_DRINK:
                snprintf(kt->said[i], sizeof kt->said[i], i ? "I prefer %s these days." : "I prefer %s in the morning.", v);
                break;
            case K_DEPLOY:
                snprintf(kt->said[i], sizeof kt->said[i],
                         i ? "We rotated the credentials today. My deploy key is %s." : "My deploy key is %s.", v);
                break;
            default:
                snprintf(kt->said[i], sizeof kt->said[i], i ? "I switched tools. My editor is %s." : "My editor is %s.", v);
                break;
            }
        }
}

/* The value of key at time t (-1: nothing said yet). */
static int value_at(const struct key_truth *kt, long long t)
{
    int v = -1;
    for (int i = 0; i < kt->n; i++)
        if (kt->from[i] <= t)
            v = i;
    return v;
}

/* ---------------------------------------------------------------------------------------------
 * recall
 */
/* text contains word w (case-insensitive, at word boundaries)? */
static int has_word(const char *text, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = text; p && *p; p++) {
        if (strncasecmp(p, w, n) == 0 && (p == text || !isalnum((unsigned char)p[-1]) || p[-1] == '-') &&
            !isalnum((unsigned char)p[n]) && p[n] != '-')
            return 1;
    }
    return 0;
}

struct tally {
    long n, r1, r5, wrong1;
};

/* One question's hits (texts best first). */
static void score(struct tally *t, const char *const *texts, size_t count, const struct key_truth *kt, int want)
{
    t->n++;
    for (size_t i = 0; i < count && i < 5; i++)
        if (has_word(texts[i], kt->value[want])) {
            t->r5++;
            if (i == 0)
                t->r1++;
            break;
        }
    if (count > 0 && !has_word(texts[0], kt->value[want]))
        for (int j = 0; j < kt->n; j++)
            if (j != want && has_word(texts[0], kt->value[j])) {
                t->wrong1++;
                break;
            }
}

static int style;
static void print_tally(const char *extractor, const char *source, const char *mode, const char *question,
                        const struct tally *t)
{
    double n = t->n ? (double)t->n : 1;
    printf("{\"extractor\":\"%s\",\"source\":\"%s\",\"mode\":\"%s\",\"query\":\"%s\",\"question\":\"%s\","
           "\"n\":%ld,\"recall_at_1\":%.3f,\"recall_at_5\":%.3f,\"wrong_at_1\":%.3f}\n",
           extractor, source, mode, style ? "keywords" : "question", question, t->n, (double)t->r1 / n, (double)t->r5 / n, (double)t->wrong1 / n);
}

/* Asks one question of memories (source 0) or messages (1); as_of 0: now. */
static int ask(mn_db *db, int source, mn_search_mode mode, const struct user *u, int key, long long as_of,
               struct tally *t, int want)
{
    const char *query = style ? KEYWORDS[key] : QUESTION[key];
    const char *texts[5] = {0};
    size_t count = 0;
    if (source == 0) {
        mn_memory_query q = MN_MEMORY_QUERY_INIT;
        q.ns = u->ns;
        q.user_id = u->uid;
        q.as_of = as_of;
        q.limit = 5;
        mn_memories *m = NULL;
        if (mn_memory_search(db, query, mode, &q, &m))
            return fail("mn_memory_search");
        for (size_t i = 0; i < m->count && i < 5; i++)
            texts[count++] = mn_memories_at(m, i)->text;
        score(t, texts, count, &u->k[key], want);
        mn_memories_free(m);
    } else {
        mn_search_filter f = MN_SEARCH_FILTER_INIT;
        f.ns = u->ns;
        f.until = as_of;
        mn_search_hits *h = NULL;
        if (mn_search(db, query, mode, 5, &f, 0, &h))
            return fail("mn_search");
        for (size_t i = 0; i < h->count && i < 5; i++)
            texts[count++] = mn_search_hits_at(h, i)->message.content ? mn_search_hits_at(h, i)->message.content : "";
        score(t, texts, count, &u->k[key], want);
        mn_search_hits_free(h);
    }
    return 0;
}

struct opts {
    const char *db, *extractor, *llm_url, *llm_model, *embedder, *truth, *extract;
    int users, sessions, turns, queries;
    long n;
    unsigned long long seed;
};

static mn_db *open_db(const struct opts *o, const char *extract)
{
    mn_config *cfg = NULL;
    mn_db *db = NULL;
    if (mn_config_new(&cfg) || mn_config_set(cfg, "tokenizer.name", "heuristic", NULL) ||
        mn_config_set(cfg, "memory.durability", "normal", NULL) ||
        mn_config_set(cfg, "memory.extract", extract, NULL) ||
        mn_config_set(cfg, "embedder.name", o->embedder, NULL) ||
        (o->llm_url && mn_config_set(cfg, "summarizer.base_url", o->llm_url, NULL)) ||
        (o->llm_model && mn_config_set(cfg, "summarizer.model", o->llm_model, NULL)) ||
        mn_open_path(o->db, cfg, &db)) {
        fail("open");
        db = NULL;
    }
    mn_config_free(cfg);
    return db;
}

static int cmd_recall(const struct opts *o)
{
    remove(o->db);
    mn_db *db = open_db(o, "off");
    if (!db)
        return 1;
    struct user *users = calloc((size_t)o->users, sizeof *users);
    FILE *truth = o->truth ? fopen(o->truth, "w") : NULL;
    seed_rng(o->seed);
    mn_extract_stats total = {0};
    long messages = 0;
    double t_append = 0, t_extract = 0;
    for (int ui = 0; ui < o->users; ui++) {
        struct user *u = &users[ui];
        plan_user(u, ui, o->sessions, o->turns);
        for (int s = 0; s < o->sessions; s++) {
            char meta[128];
            snprintf(meta, sizeof meta, "{\"memory_scope\":{\"user_id\":\"%s\"}}", u->uid);
            mn_session_opts so = MN_SESSION_OPTS_INIT;
            so.ns = u->ns;
            so.metadata = meta;
            mn_session *sess = NULL;
            set_now(u->start[s]);
            if (mn_session_create(db, &so, &sess))
                return fail("mn_session_create");
            for (int turn = 0; turn < o->turns; turn++) {
                long long t = u->start[s] + (long long)turn * 2 * 60000;
                char said[512] = "";
                for (int key = 0; key < NKEYS; key++)
                    for (int i = 0; i < u->k[key].n; i++)
                        if (u->k[key].session[i] == s && u->k[key].turn[i] == turn) {
                            snprintf(said, sizeof said, "%s", u->k[key].said[i]);
                            u->k[key].from[i] = t;
                        }
                if (!said[0])
                    snprintf(said, sizeof said, USER_FILLER[rnd() % NUF], distractor_city(u));
                char reply[256];
                const char *alt = rnd() % 2 ? EDITORS[rnd() % NEDITORS] : DRINKS[rnd() % NDRINKS];
                snprintf(reply, sizeof reply, ASSISTANT_FILLER[rnd() % NAF], alt);
                mn_message_in m = MN_MESSAGE_IN_INIT;
                m.role = MN_ROLE_USER;
                m.content = said;
                double a = now_s();
                set_now(t);
                if (mn_append(db, sess->id, &m, 0, NULL))
                    return fail("mn_append");
                m.role = MN_ROLE_ASSISTANT;
                m.content = reply;
                set_now(t + 30000);
                if (mn_append(db, sess->id, &m, 0, NULL))
                    return fail("mn_append");
                t_append += now_s() - a;
                messages += 2;
            }
            mn_extract_stats st;
            double a = now_s();
            if (mn_memory_extract(db, sess->id, o->extractor, &st))
                return fail("mn_memory_extract");
            t_extract += now_s() - a;
            total.messages += st.messages, total.candidates += st.candidates, total.added += st.added;
            total.updated += st.updated, total.unchanged += st.unchanged, total.invalidated += st.invalidated;
            total.rejected += st.rejected;
            mn_session_free(sess);
        }
        /* values in the order they were said (two statements may share a session) */
        for (int key = 0; key < NKEYS; key++) {
            struct key_truth *kt = &u->k[key];
            for (int i = 1; i < kt->n; i++)
                for (int j = i; j > 0 && kt->from[j] < kt->from[j - 1]; j--) {
                    struct key_truth tmp;
                    memcpy(tmp.value[0], kt->value[j], sizeof tmp.value[0]);
                    memcpy(kt->value[j], kt->value[j - 1], sizeof tmp.value[0]);
                    memcpy(kt->value[j - 1], tmp.value[0], sizeof tmp.value[0]);
                    memcpy(tmp.said[0], kt->said[j], sizeof tmp.said[0]);
                    memcpy(kt->said[j], kt->said[j - 1], sizeof tmp.said[0]);
                    memcpy(kt->said[j - 1], tmp.said[0], sizeof tmp.said[0]);
                    long long f = kt->from[j];
                    kt->from[j] = kt->from[j - 1], kt->from[j - 1] = f;
                }
            for (int i = 0; truth && i < kt->n; i++)
                fprintf(truth, "{\"user\":\"%s\",\"key\":\"%s\",\"value\":\"%s\",\"valid_from\":%lld,\"valid_to\":%lld,"
                               "\"said\":\"%s\"}\n",
                        u->uid, KEY_NAME[key], kt->value[i], kt->from[i], i + 1 < kt->n ? kt->from[i + 1] : 0LL,
                        kt->said[i]);
        }
    }
    if (truth)
        fclose(truth);
    if (strcmp(o->embedder, "none") != 0) {
        size_t done = 0;
        if (mn_embed_pending(db, 0, &done))
            return fail("mn_embed_pending");
    }
    unsetenv("MNEMO_TEST_NOW_MS");
    printf("{\"op\":\"recall_build\",\"extractor\":\"%s\",\"users\":%d,\"sessions\":%d,\"messages\":%ld,"
           "\"append_s\":%.2f,\"extract_s\":%.2f,\"read\":%lld,\"candidates\":%lld,\"added\":%lld,\"updated\":%lld,"
           "\"unchanged\":%lld,\"invalidated\":%lld,\"rejected\":%lld}\n",
           o->extractor, o->users, o->sessions, messages, t_append, t_extract, (long long)total.messages,
           (long long)total.candidates, (long long)total.added, (long long)total.updated, (long long)total.unchanged,
           (long long)total.invalidated, (long long)total.rejected);

    mn_search_mode modes[3] = {MN_SEARCH_KEYWORD, MN_SEARCH_SEMANTIC, MN_SEARCH_HYBRID};
    int nmodes = strcmp(o->embedder, "none") ? 3 : 1;
    for (style = 0; style < 2; style++)
    for (int source = 0; source < 2; source++)
        for (int mi = 0; mi < nmodes; mi++) {
            struct tally cur = {0}, past = {0}, per_key[NKEYS] = {{0}};
            for (int ui = 0; ui < o->users; ui++) {
                const struct user *u = &users[ui];
                for (int key = 0; key < NKEYS; key++) {
                    const struct key_truth *kt = &u->k[key];
                    if (kt->n == 0)
                        continue;
                    struct tally before = cur;
                    if (ask(db, source, modes[mi], u, key, 0, &cur, kt->n - 1))
                        return 1;
                    per_key[key].n += cur.n - before.n, per_key[key].r1 += cur.r1 - before.r1;
                    per_key[key].r5 += cur.r5 - before.r5, per_key[key].wrong1 += cur.wrong1 - before.wrong1;
                    for (int i = 0; i + 1 < kt->n; i++) {
                        long long mid = kt->from[i] + (kt->from[i + 1] - kt->from[i]) / 2;
                        if (value_at(kt, mid) != i)
                            continue;
                        if (ask(db, source, modes[mi], u, key, mid, &past, i))
                            return 1;
                    }
                }
            }
            const char *src = source ? "messages" : "memories", *mode = mn_search_mode_name(modes[mi]);
            print_tally(o->extractor, src, mode, "current", &cur);
            print_tally(o->extractor, src, mode, "as_of", &past);
            for (int key = 0; key < NKEYS; key++) {
                char name[64];
                snprintf(name, sizeof name, "current:%s", KEY_NAME[key]);
                print_tally(o->extractor, src, mode, name, &per_key[key]);
            }
            fflush(stdout);
        }
    free(users);
    mn_close(db);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * build / latency: a large memory store.
 */
static const char *const WORDS[] = {
    "project", "deploy", "server", "database", "meeting", "budget", "travel", "family", "garden", "music",
    "report", "invoice", "kitchen", "weekend", "library", "client", "contract", "release", "backup", "cluster",
    "coffee", "bicycle", "holiday", "schedule", "review", "design", "tooling", "network", "storage", "doctor",
    "school", "friend", "concert", "running", "painting", "python", "postgres", "kernel", "compiler", "camera"};
#define NWORDS (sizeof WORDS / sizeof WORDS[0])
static const char *const KINDS[] = {"fact", "preference", "instruction", "event"};

static int cmd_build(const struct opts *o)
{
    remove(o->db);
    mn_db *db = open_db(o, "off");
    if (!db)
        return 1;
    seed_rng(o->seed);
    double a = now_s();
    for (long i = 0; i < o->n; i++) {
        char text[256], uid[32];
        int len = snprintf(text, sizeof text, "User %ld note:", i);
        int nw = 5 + (int)(rnd() % 8);
        for (int w = 0; w < nw && len < 200; w++)
            len += snprintf(text + len, sizeof text - (size_t)len, " %s", WORDS[rnd() % NWORDS]);
        snprintf(uid, sizeof uid, "u%05ld", i % o->users);
        mn_memory_in in = MN_MEMORY_IN_INIT;
        in.text = text;
        in.kind = KINDS[rnd() % 4];
        in.user_id = uid;
        in.pinned = 0;
        in.token_cap = 0;
        in.valid_from = T0 + (long long)i * 60000;
        if (mn_memory_add(db, &in, NULL))
            return fail("mn_memory_add");
        if ((i + 1) % 20000 == 0)
            fprintf(stderr, "%ld memories, %.1f s\n", i + 1, now_s() - a);
    }
    double t = now_s() - a;
    printf("{\"op\":\"memory_build\",\"memories\":%ld,\"users\":%d,\"seconds\":%.2f,\"adds_per_s\":%.0f}\n", o->n,
           o->users, t, (double)o->n / t);
    mn_close(db);
    return 0;
}

static void report(const char *name, double *lat, int nq, double hits)
{
    qsort(lat, (size_t)nq, sizeof *lat, cmp_d);
    double sum = 0;
    for (int i = 0; i < nq; i++)
        sum += lat[i];
    printf("{\"case\":\"%s\",\"queries\":%d,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"mean_ms\":%.3f,\"hits_avg\":%.1f}\n", name,
           nq, lat[nq / 2] * 1e3, lat[nq * 99 / 100] * 1e3, sum / nq * 1e3, hits / nq);
    fflush(stdout);
}

static int cmd_latency(const struct opts *o)
{
    mn_db *db = open_db(o, "off");
    if (!db)
        return 1;
    int nq = o->queries;
    double *lat = calloc((size_t)nq, sizeof *lat);
    char (*qtext)[64] = calloc((size_t)nq, sizeof *qtext), (*qrare)[64] = calloc((size_t)nq, sizeof *qrare);
    char (*quid)[32] = calloc((size_t)nq, sizeof *quid);
    seed_rng(o->seed + 99);
    for (int i = 0; i < nq; i++) {
        snprintf(qtext[i], sizeof qtext[i], "%s %s", WORDS[rnd() % NWORDS], WORDS[rnd() % NWORDS]);
        snprintf(qrare[i], sizeof qrare[i], "%u", rnd() % 100000); /* one memory's number: a rare term */
        snprintf(quid[i], sizeof quid[i], "u%05u", rnd() % (unsigned)o->users);
    }
    static const char *const cases[] = {"search_keyword",  "search_keyword_user", "list_user",
                                        "list_user_as_of", "search_keyword_rare", "search_semantic",
                                        "search_semantic_user"};
    int ncases = strcmp(o->embedder, "none") ? 7 : 5; /* semantic: a store built with an embedder */
    for (int c = 0; c < ncases; c++) {
        double hits = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int i = 0; i < nq; i++) {
                mn_memory_query q = MN_MEMORY_QUERY_INIT;
                if ((c >= 1 && c <= 3) || c == 6)
                    q.user_id = quid[i];
                if (c == 3)
                    q.as_of = T0 + (long long)(rnd() % 100000) * 60000;
                q.limit = 10;
                mn_memories *m = NULL;
                double a = now_s();
                mn_status rc = c >= 5  ? mn_memory_search(db, qtext[i], MN_SEARCH_SEMANTIC, &q, &m)
                               : c == 4 ? mn_memory_search(db, qrare[i], MN_SEARCH_KEYWORD, &q, &m)
                               : c < 2  ? mn_memory_search(db, qtext[i], MN_SEARCH_KEYWORD, &q, &m)
                                        : mn_memory_list(db, &q, &m);
                double t = now_s() - a;
                if (rc)
                    return fail(cases[c]);
                if (pass == 1) {
                    lat[i] = t;
                    hits += (double)m->count;
                }
                mn_memories_free(m);
            }
        report(cases[c], lat, nq, hits);
    }
    free(lat);
    free(qtext);
    free(qrare);
    free(quid);
    mn_close(db);
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * append: the cost of background extraction.
 */
static int count_memories(mn_db *db, long *n)
{
    *n = 0;
    for (size_t off = 0;; off += 1000) {
        mn_memory_query q = MN_MEMORY_QUERY_INIT;
        q.limit = 1000;
        q.offset = off;
        mn_memories *m = NULL;
        if (mn_memory_list(db, &q, &m))
            return fail("mn_memory_list");
        size_t c = m->count;
        mn_memories_free(m);
        *n += (long)c;
        if (c < 1000)
            return 0;
    }
}

static int cmd_append(const struct opts *o)
{
    remove(o->db);
    unsetenv("MNEMO_TEST_NOW_MS");
    mn_db *db = open_db(o, o->extract);
    if (!db)
        return 1;
    int ns = o->sessions;
    char (*ids)[40] = calloc((size_t)ns, sizeof *ids);
    for (int s = 0; s < ns; s++) {
        mn_session *sess = NULL;
        if (mn_session_create(db, NULL, &sess))
            return fail("mn_session_create");
        snprintf(ids[s], sizeof ids[s], "%s", sess->id);
        mn_session_free(sess);
    }
    seed_rng(o->seed);
    double *lat = calloc((size_t)o->n, sizeof *lat);
    long facts = 0;
    double a0 = now_s();
    for (long i = 0; i < o->n; i++) {
        char text[256];
        mn_message_in m = MN_MESSAGE_IN_INIT;
        m.role = (i / ns) % 2 ? MN_ROLE_ASSISTANT : MN_ROLE_USER;
        if (m.role == MN_ROLE_USER && i % 5 == 0) { /* every 10th message: a fact the offline extractor keeps */
            snprintf(text, sizeof text, "Thanks. Remember that item %ld goes to the %s shelf.", i, WORDS[rnd() % NWORDS]);
            facts++;
        } else
            snprintf(text, sizeof text, "Message %ld about the %s and the %s, with a few more words of filler text.",
                     i, WORDS[rnd() % NWORDS], WORDS[rnd() % NWORDS]);
        m.content = text;
        double a = now_s();
        if (mn_append(db, ids[i % ns], &m, 0, NULL))
            return fail("mn_append");
        lat[i] = now_s() - a;
    }
    double t_app = now_s() - a0;
    long have = 0;
    double caught = -1;
    if (strcmp(o->extract, "off") != 0) {
        for (;;) {
            if (count_memories(db, &have))
                return 1;
            if (have >= facts) {
                caught = now_s() - a0 - t_app;
                break;
            }
            if (now_s() - a0 - t_app > 600)
                break;
            struct timespec ts = {0, 20000000};
            nanosleep(&ts, NULL);
        }
    }
    qsort(lat, (size_t)o->n, sizeof *lat, cmp_d);
    double sum = 0;
    for (long i = 0; i < o->n; i++)
        sum += lat[i];
    printf("{\"op\":\"append\",\"extract\":\"%s\",\"n\":%ld,\"sessions\":%d,\"seconds\":%.3f,\"msgs_per_s\":%.0f,"
           "\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f,\"lat_mean_us\":%.1f,\"facts\":%ld,\"memories\":%ld,"
           "\"catch_up_s\":%.3f}\n",
           o->extract, o->n, ns, t_app, (double)o->n / t_app, lat[o->n / 2] * 1e6, lat[o->n * 99 / 100] * 1e6,
           sum / (double)o->n * 1e6, facts, have, caught);
    free(lat);
    free(ids);
    mn_close(db);
    return 0;
}

static const char usage[] =
    "usage: memory-bench recall  --db PATH [--users N] [--sessions S] [--turns T] [--seed X]\n"
    "                            [--extractor offline|llm] [--llm-url URL] [--llm-model M] [--embedder none|hash]\n"
    "                            [--truth FILE]\n"
    "       memory-bench build   --db PATH [--n N] [--users U] [--seed X] [--embedder none|hash]\n"
    "       memory-bench latency --db PATH [--users U] [--queries Q] [--seed X] [--embedder none|hash]\n"
    "       memory-bench append  --db PATH [--n N] [--sessions S] [--extract off|offline|llm] [--seed X]\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    struct opts o = {NULL, "offline", NULL, NULL, "none", NULL, "off", 50, 8, 10, 200, 100000, 17};
    const char *cmd = argv[1];
    int is_build = strcmp(cmd, "build") == 0 || strcmp(cmd, "latency") == 0;
    if (is_build)
        o.users = 1000;
    if (strcmp(cmd, "append") == 0)
        o.n = 5000, o.sessions = 50;
    for (int i = 2; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "missing value for %s\n%s", k, usage);
            return 2;
        }
        if (!strcmp(k, "--db"))
            o.db = v;
        else if (!strcmp(k, "--users"))
            o.users = atoi(v);
        else if (!strcmp(k, "--sessions"))
            o.sessions = atoi(v);
        else if (!strcmp(k, "--turns"))
            o.turns = atoi(v);
        else if (!strcmp(k, "--queries"))
            o.queries = atoi(v);
        else if (!strcmp(k, "--n"))
            o.n = atol(v);
        else if (!strcmp(k, "--seed"))
            o.seed = strtoull(v, NULL, 10);
        else if (!strcmp(k, "--extractor"))
            o.extractor = v;
        else if (!strcmp(k, "--extract"))
            o.extract = v;
        else if (!strcmp(k, "--llm-url"))
            o.llm_url = v;
        else if (!strcmp(k, "--llm-model"))
            o.llm_model = v;
        else if (!strcmp(k, "--embedder"))
            o.embedder = v;
        else if (!strcmp(k, "--truth"))
            o.truth = v;
        else {
            fprintf(stderr, "unknown option %s\n%s", k, usage);
            return 2;
        }
    }
    if (!o.db || o.users < 1 || o.sessions < 4 || (o.sessions > 16 && !strcmp(cmd, "recall")) || o.turns < 4 || o.queries < 1 || o.n < 1) {
        fputs(usage, stderr);
        return 2;
    }
    if (!strcmp(cmd, "recall"))
        return cmd_recall(&o);
    if (!strcmp(cmd, "build"))
        return cmd_build(&o);
    if (!strcmp(cmd, "latency"))
        return cmd_latency(&o);
    if (!strcmp(cmd, "append"))
        return cmd_append(&o);
    fputs(usage, stderr);
    return 2;
}
