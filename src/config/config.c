/*
 * config.c — mnemo's configuration: a table of known keys with types, defaults and environment
 * names; values layered from defaults, the user file, the project file, the environment and
 * explicit settings, each remembering where it came from (mnemo config show).
 * Reference: docs/config.md.
 */
#include "config/config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "util/err.h"
#include "util/url.h"
#include "util/banned.h"

enum key_type { T_INT, T_STRING, T_ENUM, T_BOOL, T_REAL };

struct key_def {
    const char *key;
    const char *env;
    enum key_type type;
    const char *def; /* NULL: computed (storage_path) */
    int64_t min, max;
    const char *choices; /* T_ENUM: space-separated */
};

/* Seed compatibility (harombe's `memory:` section, seed 000): other names a value may have. */
static const struct alias {
    const char *key, *name, *canonical;
} aliases[] = {
    {"memory.strategy", "simple", "window"},
    {"memory.strategy", "summarization", "summary"},
};

/* Keys read for compatibility that mnemo does not use, or uses only one way: a value other than
 * `ignored_unless` is accepted with one warning naming what to do instead, and `config show`
 * says so in its source. */
static const struct compat_note {
    const char *key, *ignored_unless, *note;
} compat_notes[] = {
    {"memory.enabled", "true", "not used: mnemo always stores what it is given; to keep a conversation out of"
                               " memory, do not append it"},
    {"memory.vector_store.backend", "", "not used: mnemo has no ChromaDB; vectors live in its HNSW index in the database"},
    {"memory.vector_store.persist_directory", "", "not used: vectors are stored with the messages in"
                                           " memory.storage_path"},
    {"memory.vector_store.collection_name", "", "not used: sessions are separated by namespace, not by collection"},
};

/* The table: documentation order. docs/config.md describes each key. */
static const struct key_def keys[] = {
#define MN_KEY(field, key, env, type, def, min, max, choices) {key, env, type, def, min, max, choices},
#include "config/keys.def"
#undef MN_KEY
};
#define N_KEYS (sizeof keys / sizeof keys[0])

struct value {
    char *text;
    char *source;
};

struct mn_config {
    struct value v[N_KEYS];
    /* "FILE: line N" when a file set memory.vector_store.embedding_provider, for the message that
     * refuses it after the layers above it are read (map_vector_store); else empty */
    char provider_at[512];
};

size_t mn_config_count(void) { return N_KEYS; }

const char *mn_config_key(size_t i) { return i < N_KEYS ? keys[i].key : NULL; }

static int find_key(const char *key)
{
    for (size_t i = 0; i < N_KEYS; i++)
        if (strcmp(keys[i].key, key) == 0)
            return (int)i;
    return -1;
}

/* Checks `text` against the key's type; writes the canonical form into out. */
static mn_status check_value(const struct key_def *k, const char *text, char *out, size_t cap)
{
    if (k->type == T_INT) {
        char *end;
        errno = 0;
        long long n = strtoll(text, &end, 10);
        if (errno || end == text || *end || n < k->min || n > k->max)
            return mn__err(MN_INVALID, "%s: '%s' is not a whole number from %lld to %lld", k->key, text,
                           (long long)k->min, (long long)k->max);
        snprintf(out, cap, "%lld", n);
        return MN_OK;
    }
    if (k->type == T_BOOL) {
        static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
        for (size_t i = 0; i < 4; i++) {
            if (strcasecmp(text, yes[i]) == 0)
                return snprintf(out, cap, "true"), MN_OK;
            if (strcasecmp(text, no[i]) == 0)
                return snprintf(out, cap, "false"), MN_OK;
        }
        return mn__err(MN_INVALID, "%s: '%s' is not true or false", k->key, text);
    }
    if (k->type == T_REAL) {
        char *end;
        errno = 0;
        double x = strtod(text, &end);
        if (errno || end == text || *end || isnan(x) || x < (double)k->min || x > (double)k->max)
            return mn__err(MN_INVALID, "%s: '%s' is not a number from %lld to %lld", k->key, text, (long long)k->min,
                           (long long)k->max);
        snprintf(out, cap, "%g", x);
        return MN_OK;
    }
    if (k->type == T_ENUM) {
        size_t len = strlen(text);
        for (size_t a = 0; a < sizeof aliases / sizeof aliases[0]; a++)
            if (strcmp(aliases[a].key, k->key) == 0 && strcmp(aliases[a].name, text) == 0)
                return snprintf(out, cap, "%s", aliases[a].canonical), MN_OK;
        for (const char *p = k->choices; *p;) {
            size_t w = strcspn(p, " ");
            if (w == len && strncmp(p, text, len) == 0)
                return snprintf(out, cap, "%s", text), MN_OK;
            p += w + (p[w] == ' ');
        }
        return mn__err(MN_INVALID, "%s: '%s' is not one of: %s", k->key, text, k->choices);
    }
    if (strlen(text) >= cap)
        return mn__err(MN_INVALID, "%s: value is longer than %zu bytes", k->key, cap - 1);
    snprintf(out, cap, "%s", text);
    return MN_OK;
}

static const struct compat_note *note_of(const char *key, const char *value)
{
    for (size_t n = 0; n < sizeof compat_notes / sizeof compat_notes[0]; n++)
        if (strcmp(compat_notes[n].key, key) == 0 && strcmp(compat_notes[n].ignored_unless, value) != 0)
            return &compat_notes[n];
    return NULL;
}

/* Sets key i. The source label says what a value became when it was given under another name
 * ("…; from 'simple'") or is not used ("…; not used: …"). */
static mn_status set_index(mn_config *cfg, int i, const char *text, const char *source)
{
    char canon[4096], label[4600];
    mn_status rc = check_value(&keys[i], text, canon, sizeof canon);
    if (rc)
        return rc;
    const struct compat_note *note = strcmp(source, "default") != 0 ? note_of(keys[i].key, canon) : NULL;
    if (strcmp(canon, text) != 0 && keys[i].type == T_ENUM)
        snprintf(label, sizeof label, "%s; from '%s'", source, text);
    else if (note && !strstr(source, "; not used"))
        snprintf(label, sizeof label, "%s; %s", source, note->note);
    else
        snprintf(label, sizeof label, "%s", source);
    char *t = strdup(canon), *s = strdup(label);
    if (!t || !s) {
        free(t);
        free(s);
        return mn__nomem();
    }
    free(cfg->v[i].text);
    free(cfg->v[i].source);
    cfg->v[i].text = t;
    cfg->v[i].source = s;
    if (strcmp(keys[i].key, "memory.vector_store.embedding_provider") == 0)
        cfg->provider_at[0] = '\0'; /* walk_node records the line of a file's value after this */
    return MN_OK;
}

/* ---- harombe's vector store (seed 000) chooses the embedder ----------------------------------
 * memory.vector_store.embedding_provider and .embedding_model become embedder.name and
 * embedder.model, and for ollama embedder.base_url becomes harombe's default Ollama host; each
 * labelled "<source>; from memory.vector_store.<key>". Explicit embedder.* values (any source but
 * the default and this mapping) win; an explicit embedder.name turns the whole mapping off, as
 * does vector_store.enabled: false. Recomputed after each file, after the environment and after
 * mn_config_set of one of these keys, so the result does not depend on the order of the keys.
 * A provider mnemo does not have is refused once every layer is read (`final`): a later layer's
 * explicit embedder.name makes it unused. docs/config.md, "Harombe configuration files". */
#define MAPPED_FROM "; from memory.vector_store."
#define HAROMBE_OLLAMA_HOST "http://localhost:11434" /* harombe's ollama.host default */

static int mapped(const mn_config *cfg, int i) { return strstr(cfg->v[i].source, MAPPED_FROM) != NULL; }

static int explicit_value(const mn_config *cfg, int i)
{
    return strcmp(cfg->v[i].source, "default") != 0 && !mapped(cfg, i);
}

/* Sets key `to` to `text`, labelled as coming from key `from`, unless `to` is explicit; with
 * text NULL, puts a mapped value of `to` back to its default. */
static mn_status map_value(mn_config *cfg, int to, const char *text, int from)
{
    if (!text)
        return mapped(cfg, to) ? set_index(cfg, to, keys[to].def, "default") : MN_OK;
    if (explicit_value(cfg, to))
        return MN_OK;
    char label[4600];
    snprintf(label, sizeof label, "%s%s%s", cfg->v[from].source, MAPPED_FROM,
             keys[from].key + strlen("memory.vector_store."));
    return set_index(cfg, to, text, label);
}

/* enabled_at: where vector_store.enabled was set when a file being read set it, else NULL. */
static mn_status map_vector_store(mn_config *cfg, int final, const char *enabled_at)
{
    static const struct key_def as_bool = {"memory.vector_store.enabled", "", T_BOOL, "", 0, 0, NULL};
    int en = find_key("memory.vector_store.enabled"), pr = find_key("memory.vector_store.embedding_provider"),
        mo = find_key("memory.vector_store.embedding_model"), name = find_key("embedder.name"),
        model = find_key("embedder.model"), url = find_key("embedder.base_url");
    char on_off[8] = "", canon[64] = "";
    const char *enabled = cfg->v[en].text, *provider = cfg->v[pr].text;
    if (*enabled && check_value(&as_bool, enabled, on_off, sizeof on_off))
        return mn__err(MN_INVALID, "%s: memory.vector_store.enabled: '%s' is not true or false",
                       enabled_at ? enabled_at : cfg->v[en].source, enabled);
    int on = *provider && strcmp(on_off, "false") != 0 && !explicit_value(cfg, name);
    if (on && check_value(&keys[name], provider, canon, sizeof canon)) {
        if (final)
            return mn__err(MN_INVALID, "%s: memory.vector_store.embedding_provider: '%s' is not an embedder mnemo"
                           " has (%s); set embedder.name and embedder.model instead, or"
                           " memory.vector_store.enabled: false",
                           *cfg->provider_at ? cfg->provider_at : cfg->v[pr].source, provider, keys[name].choices);
        on = 0; /* for now: a layer read later may set embedder.name */
    }
    mn_status rc = map_value(cfg, name, on ? canon : NULL, pr);
    if (!rc)
        rc = map_value(cfg, model, on && *cfg->v[mo].text ? cfg->v[mo].text : NULL, mo);
    if (!rc)
        rc = map_value(cfg, url, on && strcmp(canon, "ollama") == 0 ? HAROMBE_OLLAMA_HOST : NULL, pr);
    return rc;
}

/* The keys map_vector_store reads. */
static int maps_vector_store(const char *key)
{
    static const char *const used[] = {"memory.vector_store.enabled", "memory.vector_store.embedding_provider",
                                       "memory.vector_store.embedding_model", "embedder.name", "embedder.model",
                                       "embedder.base_url"};
    for (size_t i = 0; i < sizeof used / sizeof used[0]; i++)
        if (strcmp(key, used[i]) == 0)
            return 1;
    return 0;
}

static void default_storage_path(char *out, size_t cap)
{
    const char *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(out, cap, "%s/mnemo/memory.db", xdg);
    else
        snprintf(out, cap, "%s/.local/share/mnemo/memory.db", home && *home ? home : ".");
}

mn_status mn_config_new(mn_config **out)
{
    mn__err_clear();
    *out = NULL;
    mn_config *cfg = calloc(1, sizeof *cfg);
    if (!cfg)
        return mn__nomem();
    for (size_t i = 0; i < N_KEYS; i++) {
        char path[4096];
        const char *def = keys[i].def;
        if (!def) {
            default_storage_path(path, sizeof path);
            def = path;
        }
        mn_status rc = set_index(cfg, (int)i, def, "default");
        if (rc) {
            mn_config_free(cfg);
            return rc;
        }
    }
    *out = cfg;
    return MN_OK;
}

mn_status mn_config_set(mn_config *cfg, const char *key, const char *value, const char *source)
{
    mn__err_clear();
    int i = key ? find_key(key) : -1;
    if (i < 0)
        return mn__err(MN_INVALID, "config: unknown key '%s'", key ? key : "(null)");
    if (!value)
        return mn__err(MN_INVALID, "%s: value is missing", key);
    if (!maps_vector_store(key))
        return set_index(cfg, i, value, source ? source : "flag");
    /* a value the mapping refuses leaves the configuration as it was */
    char *old_text = strdup(cfg->v[i].text), *old_source = strdup(cfg->v[i].source);
    mn_status rc = old_text && old_source ? set_index(cfg, i, value, source ? source : "flag") : mn__nomem();
    if (!rc)
        rc = map_vector_store(cfg, 1, NULL);
    if (rc && old_text && old_source && set_index(cfg, i, old_text, old_source) == MN_OK)
        (void)map_vector_store(cfg, 1, NULL); /* as it was before: valid, and the message stays */
    free(old_text);
    free(old_source);
    return rc;
}

mn_status mn_config_get(const mn_config *cfg, const char *key, const char **value, const char **source)
{
    mn__err_clear();
    int i = key ? find_key(key) : -1;
    if (i < 0)
        return mn__err(MN_NOTFOUND, "config: unknown key '%s'", key ? key : "(null)");
    if (value)
        *value = cfg->v[i].text;
    if (source)
        *source = cfg->v[i].source;
    return MN_OK;
}

const char *mn__config_str(const mn_config *cfg, const char *key)
{
    int i = find_key(key);
    return i < 0 ? "" : cfg->v[i].text;
}

int64_t mn__config_int(const mn_config *cfg, const char *key) { return strtoll(mn__config_str(cfg, key), NULL, 10); }

int mn__config_bool(const mn_config *cfg, const char *key) { return strcmp(mn__config_str(cfg, key), "true") == 0; }

double mn__config_real(const mn_config *cfg, const char *key) { return strtod(mn__config_str(cfg, key), NULL); }

mn_status mn__config_copy(const mn_config *cfg, mn_config **out)
{
    mn_status rc = mn_config_new(out);
    for (size_t i = 0; !rc && i < N_KEYS; i++)
        rc = set_index(*out, (int)i, cfg->v[i].text, cfg->v[i].source);
    if (rc) {
        mn_config_free(*out);
        *out = NULL;
    }
    return rc;
}

void mn_config_free(mn_config *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < N_KEYS; i++) {
        free(cfg->v[i].text);
        free(cfg->v[i].source);
    }
    free(cfg);
}

/* ---- YAML ------------------------------------------------------------------------------------ */

/* Mappings and lists in a file nest at most this deep, the top mapping being level 1: walk_node
 * recurses once a level, and 20,000 `[` overflowed the stack. Settings are three levels deep;
 * the bound is the one JSON a caller hands in has (MN_MAX_JSON_DEPTH). docs/config.md says so. */
#define MAX_NESTING 64

struct yaml_walk {
    yaml_parser_t parser;
    mn_config *cfg;
    const char *file;
    const char *source;
    const char *text;      /* the file's text and length, for where a reader error is */
    size_t len;
    size_t set_at[N_KEYS]; /* the line (from 1) that set each key in this file; 0: none */
    int documents;
};

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* A project file (.mnemo/config.yaml, checked in with someone else's repository) must not send
 * conversations to a remote model server, nor choose which environment variable's secret goes
 * with them (DESIGN.md §5): remote URLs and API-key variables need an explicit trust flag. */
static int trusted(const struct yaml_walk *w, const char *key, const char *value)
{
    if (strncmp(w->source, "project file", 12) != 0)
        return 1;
    const char *trust = getenv("MNEMO_TRUST_PROJECT_CONFIG");
    if (trust && strcmp(trust, "1") == 0)
        return 1;
    if (ends_with(key, ".api_key_env"))
        return !*value;
    if (ends_with(key, ".base_url"))
        return !*value || mn__url_is_loopback(value);
    if (strcmp(key, "summarizer.prompt_file") == 0) /* its text goes to the model: only a file of the project */
        return !*value || (value[0] != '/' && value[0] != '~' && strncmp(value, "../", 3) != 0 &&
                           !strstr(value, "/../") && !ends_with(value, "/..") && strcmp(value, "..") != 0);
    return 1;
}

static mn_status yaml_fail(struct yaml_walk *w, const char *what)
{
    size_t line = w->parser.problem_mark.line + 1, column = w->parser.problem_mark.column + 1;
    if (w->parser.error == YAML_READER_ERROR) { /* bad bytes: libyaml gives their offset only */
        line = column = 1;
        for (size_t i = 0; i < w->parser.problem_offset && i < w->len; i++) {
            column = w->text[i] == '\n' ? 1 : column + 1;
            line += w->text[i] == '\n';
        }
    }
    return mn__err(MN_INVALID, "%s: %s at line %zu column %zu", w->file, what, line, column);
}

/* Reads one node whose first event is `ev` (already taken); `path` is its dotted key, `level` its
 * nesting (1: the top). Scalars under known keys are set; everything else under unknown keys is
 * skipped with a warning. */
static mn_status walk_node(struct yaml_walk *w, yaml_event_t *ev, const char *path, int level)
{
    if (ev->type == YAML_SCALAR_EVENT) {
        if (!*path)
            return mn__err(MN_INVALID, "%s: expected a mapping of settings at the top level", w->file);
        int i = find_key(path);
        if (i < 0) {
            mn__log(MN_LOG_WARN, "%s: unknown setting '%s' ignored", w->file, path);
            return MN_OK;
        }
        const char *value = (const char *)ev->data.scalar.value;
        size_t line = ev->start_mark.line + 1;
        if (w->set_at[i]) /* which one was meant? the later used to win without a word */
            return mn__err(MN_INVALID, "%s: line %zu: %s is set twice (first at line %zu)", w->file, line, path,
                           w->set_at[i]);
        w->set_at[i] = line;
        if (!trusted(w, path, value))
            return mn__err(MN_INVALID, "%s: line %zu: %s comes from the project file, which may name only a local"
                           " (loopback) model server, no API key variable and only a prompt file inside the"
                           " project; set it in the user file or the environment, or trust this project with"
                           " MNEMO_TRUST_PROJECT_CONFIG=1",
                           w->file, ev->start_mark.line + 1, path);
        mn_status rc = set_index(w->cfg, i, value, w->source);
        if (rc) {
            return mn__err(MN_INVALID, "%s: line %zu: %s", w->file, ev->start_mark.line + 1, mn_errmsg());
        }
        if (strcmp(path, "memory.vector_store.embedding_provider") == 0)
            snprintf(w->cfg->provider_at, sizeof w->cfg->provider_at, "%s: line %zu", w->file, line);
        const struct compat_note *note = note_of(path, w->cfg->v[i].text);
        if (note)
            mn__log(MN_LOG_WARN, "%s: line %zu: %s: '%s' %s", w->file, ev->start_mark.line + 1, path, value, note->note);
        return MN_OK;
    }
    if (ev->type == YAML_SEQUENCE_START_EVENT || ev->type == YAML_MAPPING_START_EVENT) {
        int mapping = ev->type == YAML_MAPPING_START_EVENT;
        if (level > MAX_NESTING)
            return mn__err(MN_INVALID, "%s: line %zu: nested deeper than %d levels", w->file,
                           ev->start_mark.line + 1, MAX_NESTING);
        if (!mapping && find_key(path) >= 0)
            return mn__err(MN_INVALID, "%s: line %zu: %s must be a single value, not a list", w->file,
                           ev->start_mark.line + 1, path);
        for (;;) {
            yaml_event_t k;
            if (!yaml_parser_parse(&w->parser, &k))
                return yaml_fail(w, w->parser.problem ? w->parser.problem : "YAML error");
            if (k.type == YAML_MAPPING_END_EVENT || k.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&k);
                return MN_OK;
            }
            char child[512];
            yaml_event_t v;
            mn_status rc = MN_OK;
            if (mapping) {
                if (k.type != YAML_SCALAR_EVENT) {
                    yaml_event_delete(&k);
                    return mn__err(MN_INVALID, "%s: mapping keys must be plain names", w->file);
                }
                snprintf(child, sizeof child, "%s%s%s", path, *path ? "." : "", (const char *)k.data.scalar.value);
                yaml_event_delete(&k);
                if (!yaml_parser_parse(&w->parser, &v))
                    return yaml_fail(w, w->parser.problem ? w->parser.problem : "YAML error");
                rc = walk_node(w, &v, child, level + 1);
                yaml_event_delete(&v);
            } else {
                snprintf(child, sizeof child, "%s[]", path);
                rc = walk_node(w, &k, child, level + 1);
                yaml_event_delete(&k);
            }
            if (rc)
                return rc;
        }
    }
    if (ev->type == YAML_ALIAS_EVENT)
        return mn__err(MN_INVALID, "%s: line %zu: aliases are not supported", w->file, ev->start_mark.line + 1);
    return yaml_fail(w, "unexpected YAML content");
}

/* final: this file is the last layer (mn_config_load reads the environment after it). */
static mn_status load_yaml(mn_config *cfg, const char *text, size_t len, const char *name, const char *source,
                           int final)
{
    struct yaml_walk w = {.cfg = cfg, .file = name, .source = source, .text = text, .len = len};
    yaml_parser_initialize(&w.parser);
    yaml_parser_set_input_string(&w.parser, (const unsigned char *)text, len);
    mn_status rc = MN_OK;
    for (int done = 0; !done && !rc;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&w.parser, &ev)) {
            rc = yaml_fail(&w, w.parser.problem ? w.parser.problem : "YAML error");
            break;
        }
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++w.documents > 1)
                rc = mn__err(MN_INVALID, "%s: line %zu: a second YAML document; a configuration file is one mapping",
                             name, ev.start_mark.line + 1);
            break;
        case YAML_STREAM_START_EVENT:
        case YAML_DOCUMENT_END_EVENT:
            break;
        case YAML_SCALAR_EVENT: /* an empty document parses as one empty scalar */
            if (ev.data.scalar.length != 0)
                rc = mn__err(MN_INVALID, "%s: expected a mapping of settings at the top level", name);
            break;
        case YAML_MAPPING_START_EVENT:
            rc = walk_node(&w, &ev, "", 1);
            break;
        default:
            rc = mn__err(MN_INVALID, "%s: expected a mapping of settings at the top level", name);
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&w.parser);
    char enabled_at[512];
    int en = find_key("memory.vector_store.enabled"), mo = find_key("memory.vector_store.embedding_model");
    snprintf(enabled_at, sizeof enabled_at, "%s: line %zu", name, w.set_at[en]);
    if (!rc)
        rc = map_vector_store(cfg, final, w.set_at[en] ? enabled_at : NULL);
    if (!rc && w.set_at[mo] && !*mn__config_str(cfg, "memory.vector_store.embedding_provider"))
        mn__log(MN_LOG_WARN, "%s: line %zu: memory.vector_store.embedding_model: '%s' not used without"
                " memory.vector_store.embedding_provider (ollama, openai)", name, w.set_at[mo], cfg->v[mo].text);
    return rc;
}

mn_status mn__config_load_yaml(mn_config *cfg, const char *text, size_t len, const char *name, const char *source)
{
    return load_yaml(cfg, text, len, name, source, 1);
}

static mn_status load_file(mn_config *cfg, const char *file, const char *source, int final)
{
    FILE *f = fopen(file, "rb");
    if (!f)
        return mn__err(MN_IO, "config file %s: %s", file, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            if (cap >= ((size_t)1 << 20)) {
                free(text);
                fclose(f);
                return mn__err(MN_TOOBIG, "config file %s: larger than 1 MiB", file);
            }
            char *n = realloc(text, cap = cap ? cap * 2 : 8192);
            if (!n) {
                free(text);
                fclose(f);
                return mn__nomem();
            }
            text = n;
        }
        errno = 0;
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f) ? (errno ? errno : EIO) : 0; /* a directory opens, then reads EISDIR */
    fclose(f);
    mn_status rc = bad ? mn__err(MN_IO, "config file %s: %s", file, strerror(bad))
                       : load_yaml(cfg, text ? text : "", len, file, source, final);
    free(text);
    return rc;
}

mn_status mn__config_load_file(mn_config *cfg, const char *file, const char *source)
{
    return load_file(cfg, file, source, 1);
}

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f)
        fclose(f);
    return f != NULL;
}

/* Edit distance between a and b, given up past 3 (names are short; only 0-2 matter). */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la >= 64 || lb >= 64 || (la > lb ? la - lb : lb - la) > 3)
        return 4;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0], best = row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);
            v = up + 1 < v ? up + 1 : v;
            v = row[j - 1] + 1 < v ? row[j - 1] + 1 : v;
            diag = up;
            row[j] = v;
            best = v < best ? v : best;
        }
        if (best > 3)
            return 4;
    }
    return row[lb];
}

/* A MNEMO_ variable within two edits of a setting's variable but not one (MNEMO_MAX_HISTORY_TOKEN;
 * one edit for every four letters after MNEMO_, so that short names are not all near MNEMO_DB)
 * is a warning naming the setting it looks like: it is ignored. Other MNEMO_ names are not
 * judged: the Python and TypeScript packages and the build read their own (MNEMO_BASE_URL …). */
static void warn_misspelt_env(void)
{
    extern char **environ;
    static const char *const others[] = {"MNEMO_DATA_DIR", "MNEMO_DATADIR", "MNEMO_BUILD_DATADIR", "MNEMO_API_KEY"};
    for (char **e = environ; e && *e; e++) {
        char name[64];
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : 0;
        if (n >= sizeof name || strncmp(*e, "MNEMO_", 6) != 0 || strncmp(*e, "MNEMO_TEST_", 11) == 0)
            continue;
        memcpy(name, *e, n);
        name[n] = '\0';
        int known = 0;
        for (size_t i = 0; !known && i < sizeof others / sizeof *others; i++)
            known = strcmp(name, others[i]) == 0;
        const char *near = NULL;
        for (size_t i = 0; !known && i < N_KEYS; i++) {
            size_t d = distance(name, keys[i].env);
            known = d == 0;
            if (d && d <= 2 && 4 * d <= strlen(keys[i].env) - 6 && !near) /* MNEMO_CI is not MNEMO_DB */
                near = keys[i].env;
        }
        if (!known && near)
            mn__log(MN_LOG_WARN, "environment: %s is not a setting and is ignored; did you mean %s?", name, near);
    }
}

mn_status mn_config_load(mn_config *cfg, const char *explicit_file)
{
    mn__err_clear();
    char buf[4200];
    mn_status rc = MN_OK;
    if (explicit_file) {
        snprintf(buf, sizeof buf, "file %s", explicit_file);
        rc = load_file(cfg, explicit_file, buf, 0);
    } else {
        char user[4000];
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (xdg && *xdg)
            snprintf(user, sizeof user, "%s/mnemo/config.yaml", xdg);
        else
            snprintf(user, sizeof user, "%s/.config/mnemo/config.yaml", home && *home ? home : ".");
        if (file_exists(user)) {
            snprintf(buf, sizeof buf, "user file %s", user);
            rc = load_file(cfg, user, buf, 0);
        }
        if (!rc && file_exists(".mnemo/config.yaml"))
            rc = load_file(cfg, ".mnemo/config.yaml", "project file .mnemo/config.yaml", 0);
    }
    if (!rc)
        warn_misspelt_env();
    for (size_t i = 0; !rc && i < N_KEYS; i++) {
        const char *v = getenv(keys[i].env);
        if (v && *v) {
            snprintf(buf, sizeof buf, "env %s", keys[i].env);
            rc = set_index(cfg, (int)i, v, buf);
            if (rc) {
                rc = mn__err(MN_INVALID, "environment %s: %s", keys[i].env, mn_errmsg());
            }
        }
    }
    return rc ? rc : map_vector_store(cfg, 1, NULL);
}
