/*
 * open.c — opening and closing a database handle (mn_open_path, mn_close, and the two handles
 * `mnemo migrate` holds): the configuration's snapshot, the store, the tokenizer shared by every
 * handle of the process, search, the memory worker, and the daily auto-prune; and mn_upgrade,
 * which opens the store alone, so that opening migrates its schema.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "config/config.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/banned.h"

static void auto_prune(mn_db *db);

/* "~/x" → "$HOME/x". */
char *mn__expand_path(const char *path)
{
    const char *home = getenv("HOME");
    if (path[0] == '~' && path[1] == '/' && home) {
        struct mn_buf b = MN_BUF_INIT;
        if (mn__buf_adds(&b, home) || mn__buf_adds(&b, path + 1)) {
            mn__buf_release(&b);
            return NULL;
        }
        return mn__buf_detach(&b, NULL);
    }
    return strdup(path);
}

/* Finds the directory holding `name`.tiktoken: the configured one, the user's data directory,
 * the installed one, then the build tree's. */
static void find_data_dir(const char *configured, const char *name, char *out, size_t cap)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    char user[4096] = "";
    if (xdg && *xdg)
        snprintf(user, sizeof user, "%s/mnemo", xdg);
    else if (home)
        snprintf(user, sizeof user, "%s/.local/share/mnemo", home);
    const char *candidates[] = {configured ? configured : "", user, MNEMO_DATADIR, MNEMO_BUILD_DATADIR};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (!*candidates[i])
            continue;
        char file[4200];
        snprintf(file, sizeof file, "%s/%s.tiktoken", candidates[i], name);
        FILE *f = fopen(file, "rb");
        if (f) {
            fclose(f);
            snprintf(out, cap, "%s", candidates[i]);
            return;
        }
    }
    snprintf(out, cap, "%s", *candidates[0] ? candidates[0] : user);
}

/* Loaded tokenizers, shared by every handle for the life of the process: loading a rank file
 * costs milliseconds and megabytes, and its tables never change. */
static pthread_mutex_t tokenizers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char name[32];
    char dir[4096];
    mn_tokenizer *tk;
} tokenizers[16];
static size_t n_tokenizers;

static mn_status shared_tokenizer(const char *name, const char *dir, mn_tokenizer **out)
{
    mn_status rc = MN_OK;
    *out = NULL;
    pthread_mutex_lock(&tokenizers_lock);
    for (size_t i = 0; i < n_tokenizers && !*out; i++)
        if (strcmp(tokenizers[i].name, name) == 0 && strcmp(tokenizers[i].dir, dir) == 0)
            *out = tokenizers[i].tk;
    if (!*out) {
        if (strlen(name) >= sizeof tokenizers[0].name || strlen(dir) >= sizeof tokenizers[0].dir)
            rc = mn__err(MN_INVALID, "tokenizer: name or data directory too long");
        else if (n_tokenizers == sizeof tokenizers / sizeof tokenizers[0])
            rc = mn__err(MN_UNAVAILABLE, "tokenizer: too many different encodings loaded");
        else if (!(rc = mn__token_open(name, dir, out))) {
            snprintf(tokenizers[n_tokenizers].name, sizeof tokenizers[0].name, "%s", name);
            snprintf(tokenizers[n_tokenizers].dir, sizeof tokenizers[0].dir, "%s", dir);
            tokenizers[n_tokenizers++].tk = *out;
        }
    }
    pthread_mutex_unlock(&tokenizers_lock);
    return rc;
}

/* The tokenizer for a configured name: "auto" is cl100k_base when its rank file is there, else
 * the heuristic. */
mn_status mn__resolve_tokenizer(const char *name, const char *configured_dir, mn_tokenizer **out)
{
    char dir[4096];
    if (strcmp(name, "heuristic") == 0)
        return shared_tokenizer(name, "", out);
    if (strcmp(name, "auto") == 0) {
        find_data_dir(configured_dir, "cl100k_base", dir, sizeof dir);
        if (shared_tokenizer("cl100k_base", dir, out) == MN_OK)
            return MN_OK;
        mn__log(MN_LOG_INFO, "tokenizer: cl100k_base unavailable (%s); using the heuristic", mn_errmsg());
        mn__err_clear();
        return shared_tokenizer("heuristic", "", out);
    }
    find_data_dir(configured_dir, name, dir, sizeof dir);
    return shared_tokenizer(name, dir, out);
}

static mn_status open_tokenizer(mn_db *db)
{
    return mn__resolve_tokenizer(mn__config_str(db->cfg, "tokenizer.name"), mn__config_str(db->cfg, "tokenizer.data_dir"),
                             &db->tk);
}

/* The database remembers which tokenizer counted its messages; a change is worth a warning. */
static mn_status note_tokenizer(mn_db *db)
{
    char *recorded = NULL;
    mn_status rc = db->store->ops->meta_get(db->store, "tokenizer", &recorded);
    if (rc)
        return rc;
    const char *now = mn__token_name(db->tk);
    if (!recorded)
        rc = db->store->ops->meta_set(db->store, "tokenizer", now);
    else if (strcmp(recorded, now) != 0)
        mn__log(MN_LOG_WARN, "%s: messages were counted with tokenizer %s, this handle counts with %s (mnemo reindex --tokens recounts)", db->store->label,
                recorded, now);
    free(recorded);
    return rc;
}

mn_store_opts mn__store_opts(const mn_config *cfg, mn_progress_fn progress, void *user)
{
    mn_store_opts so = {mn__config_int(cfg, "memory.busy_timeout_ms"),
                        strcmp(mn__config_str(cfg, "memory.durability"), "full") == 0,
                        mn__config_int(cfg, "search.fts_drain"), progress, user, NULL,
                        mn__config_int(cfg, "postgres.statement_timeout_ms"),
                        mn__config_int(cfg, "postgres.idle_in_transaction_timeout_ms"),
                        mn__config_str(cfg, "postgres.replicas"),
                        mn__config_int(cfg, "postgres.replica_max_lag_ms")};
    return so;
}

mn_status mn__open_db(const char *path, const mn_config *cfg, mn_db **out)
{
    mn_db *db = calloc(1, sizeof *db);
    if (!db)
        return mn__nomem();
    mn_status rc = cfg ? mn__config_copy(cfg, &db->cfg) : mn_config_new(&db->cfg);
    if (!rc)
        mn__settings_fill(&db->settings, db->cfg);
    if (!rc && !(db->path = mn__expand_path(path ? path : mn__config_str(db->cfg, "memory.storage_path"))))
        rc = mn__nomem();
    if (!rc) {
        mn_store_opts so = mn__store_opts(db->cfg, NULL, NULL);
        db->max_message_bytes = (size_t)mn__config_int(db->cfg, "memory.max_message_bytes");
        rc = mn__store_open(db->path, &so, &db->store);
    }
    if (!rc)
        rc = open_tokenizer(db);
    if (!rc)
        rc = note_tokenizer(db);
    if (!rc)
        rc = mn__search_open(db);
    if (!rc)
        rc = mn__memory_bg_open(db);
    if (rc) {
        db->magic = DB_MAGIC;
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", mn_errmsg());
        mn__close_db(db);
        return mn__err(rc, "%s", msg);
    }
    db->magic = DB_MAGIC;
    auto_prune(db);
    *out = db;
    return MN_OK;
}

mn_status mn__upgrade_db(const char *path, const mn_config *cfg, mn_progress_fn progress, void *user,
                         int *from_version)
{
    int found = 0;
    mn_config *own = NULL;
    mn_status rc = cfg ? mn__config_copy(cfg, &own) : mn_config_new(&own);
    char *target = NULL;
    if (!rc && !(target = mn__expand_path(path ? path : mn__config_str(own, "memory.storage_path"))))
        rc = mn__nomem();
    mn_store *store = NULL;
    if (!rc) {
        mn_store_opts so = mn__store_opts(own, progress, user);
        so.found_version = &found;
        rc = mn__store_open(target, &so, &store); /* migrates, reporting its longest step */
    }
    if (from_version)
        *from_version = rc ? 0 : found;
    if (store)
        store->ops->close(store);
    free(target);
    mn_config_free(own);
    return rc;
}

/* memory.auto_prune_days for every opener, not only `mnemo serve` (seed 000 prunes at start):
 * at most once a day per database, the time recorded in the database ("prune.auto_at"), so a
 * command run a thousand times a day pays one read of meta. A failure is logged, never the
 * open's: the next open tries again. */
static void auto_prune(mn_db *db)
{
    int days = (int)db->settings.memory_auto_prune_days;
    if (days < 1)
        return;
    char *last = NULL, now[32];
    int64_t now_ms = mn__clock_now_ms();
    mn_status rc = db->store->ops->meta_get(db->store, "prune.auto_at", &last);
    int due = rc == MN_NOTFOUND || (!rc && (!last || now_ms - strtoll(last, NULL, 10) >= 86400000));
    free(last);
    if (rc == MN_NOTFOUND)
        rc = MN_OK;
    int64_t pruned = 0;
    if (!rc && due && !(rc = mn__sessions_prune(db, days, &pruned))) {
        snprintf(now, sizeof now, "%lld", (long long)now_ms);
        rc = db->store->ops->meta_set(db->store, "prune.auto_at", now);
        if (pruned)
            mn__log(MN_LOG_INFO, "%s: memory.auto_prune_days %d: %lld idle sessions deleted", db->store->label, days,
                    (long long)pruned);
    }
    if (rc) {
        mn__log(MN_LOG_WARN, "%s: memory.auto_prune_days: %s", db->store->label, mn_errmsg());
        mn__err_clear();
    }
}

void mn__close_db(mn_db *db)
{
    if (!db || db->magic != DB_MAGIC)
        return;
    mn__memory_bg_close(db); /* first: the worker's run in progress uses the handle */
    db->magic = 0;
    if (db->store)
        mn__search_close(db);
    if (db->store)
        db->store->ops->close(db->store);
    mn_config_free(db->cfg); /* db->tk is shared: see shared_tokenizer */
    free(db->path);
    free(db);
}

