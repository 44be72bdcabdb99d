/*
 * test_config.c — unit tests of src/config: defaults, YAML layering with sources, type checks
 * with messages naming file, line and key, environment precedence, and the values `config show`
 * prints with their secrets masked.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "config/config.h"
#include "config/settings.h"

static mn_config *fresh(void)
{
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    return cfg;
}

static void defaults_have_sources(void **state)
{
    (void)state;
    mn_config *cfg = fresh();
    const char *v, *src;
    assert_int_equal(mn_config_get(cfg, "memory.max_history_tokens", &v, &src), MN_OK);
    assert_string_equal(v, "4096");
    assert_string_equal(src, "default");
    assert_int_equal(mn_config_get(cfg, "memory.durability", &v, NULL), MN_OK);
    assert_string_equal(v, "full");
    assert_int_equal(mn_config_get(cfg, "no.such.key", &v, NULL), MN_NOTFOUND);
    assert_true(mn_config_count() >= 9);
    assert_null(mn_config_key(mn_config_count()));
    mn_config_free(cfg);
}

static void yaml_nested_and_flow(void **state)
{
    (void)state;
    mn_config *cfg = fresh();
    const char *y = "memory:\n  max_history_tokens: 2048\n  durability: normal\n"
                    "  strategy: window\ntokenizer: {name: heuristic}\nvector_store:\n  dim: 384\n";
    assert_int_equal(mn__config_load_yaml(cfg, y, strlen(y), "a.yaml", "file a.yaml"), MN_OK);
    const char *v, *src;
    mn_config_get(cfg, "memory.max_history_tokens", &v, &src);
    assert_string_equal(v, "2048");
    assert_string_equal(src, "file a.yaml");
    assert_string_equal(mn__config_str(cfg, "tokenizer.name"), "heuristic");
    assert_int_equal(mn__config_int(cfg, "memory.max_history_tokens"), 2048);
    mn_config_free(cfg);
}

static void yaml_errors_name_line_and_key(void **state)
{
    (void)state;
    static const struct {
        const char *yaml, *needle;
    } cases[] = {
        {"memory:\n  max_history_tokens: lots\n", "line 2"},
        {"memory:\n  max_history_tokens: 0\n", "memory.max_history_tokens"},
        {"memory:\n  durability: sometimes\n", "full normal"},
        {"memory: [1, 2\n", "b.yaml"},
        {"memory:\n  storage_path: [a, b]\n", "single value"},
        {"- a\n- b\n", "b.yaml"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mn_config *cfg = fresh();
        mn_status rc = mn__config_load_yaml(cfg, cases[i].yaml, strlen(cases[i].yaml), "b.yaml", "file b.yaml");
        assert_int_equal(rc, MN_INVALID);
        if (!strstr(mn_errmsg(), cases[i].needle))
            fail_msg("case %zu: '%s' does not mention '%s'", i, mn_errmsg(), cases[i].needle);
        assert_string_equal(mn__config_str(cfg, "memory.durability"), "full"); /* valid keys still default */
        mn_config_free(cfg);
    }
}

static void append(char **p, const char *s)
{
    size_t n = strlen(s);
    memcpy(*p, s, n + 1);
    *p += n;
}

/* A file that nests `levels` deep: the top mapping, then `levels - 1` more under `memory`, as flow
 * lists (`[`), flow mappings (`{a: `), block lists on one line (`- - `) or indented mappings. */
static char *nested_yaml(int levels, char kind)
{
    char *y = malloc(64 + (size_t)levels * (kind == 'i' ? (size_t)levels + 8 : 8)), *p = y;
    assert_non_null(y);
    append(&p, kind == '[' || kind == '{' ? "memory: " : "memory:\n");
    for (int i = 1; i < levels; i++) {
        if (kind == 'i') {
            memset(p, ' ', (size_t)i);
            p += i;
        }
        append(&p, kind == '[' ? "[" : kind == '{' ? "{a: " : kind == '-' ? "- " : "a:\n");
    }
    if (kind == 'i')
        p[-1] = ' '; /* the last key's value */
    append(&p, "x");
    for (int i = 1; i < levels && (kind == '[' || kind == '{'); i++)
        append(&p, kind == '[' ? "]" : "}");
    append(&p, "\n");
    return y;
}

/* Nesting is bounded (64 levels, docs/config.md): 20,000 `[` overflowed the stack. */
static void yaml_nesting_is_bounded(void **state)
{
    (void)state;
    static const char kinds[] = {'[', '{', '-', 'i'};
    static const struct {
        int levels;
        mn_status want;
    } cases[] = {{64, MN_OK}, {65, MN_INVALID}, {20000, MN_INVALID}};
    for (size_t k = 0; k < sizeof kinds; k++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            if (kinds[k] == 'i' && cases[i].levels > 1000) /* indentation grows as the square */
                continue;
            char *y = nested_yaml(cases[i].levels, kinds[k]);
            mn_config *cfg = fresh();
            mn_status rc = mn__config_load_yaml(cfg, y, strlen(y), "deep.yaml", "file deep.yaml");
            if (rc != cases[i].want)
                fail_msg("'%c' %d levels: %s, want %s (%s)", kinds[k], cases[i].levels, mn_status_name(rc),
                         mn_status_name(cases[i].want), mn_errmsg());
            const char *msg = mn_errmsg();
            if (rc && (!strstr(msg, "deep.yaml: line ") || !strstr(msg, "nested deeper than 64 levels")))
                fail_msg("'%c' %d levels: '%s' does not name the file and the limit", kinds[k], cases[i].levels, msg);
            mn_config_free(cfg);
            free(y);
        }
    }
}

static void environment_beats_files_and_flags_beat_environment(void **state)
{
    (void)state;
    char dir[] = "/tmp/mnemo-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256];
    snprintf(file, sizeof file, "%s/c.yaml", dir);
    FILE *f = fopen(file, "w");
    fputs("memory:\n  max_history_tokens: 1000\n  busy_timeout_ms: 10\n", f);
    fclose(f);
    setenv("MNEMO_MAX_HISTORY_TOKENS", "2000", 1);
    mn_config *cfg = fresh();
    assert_int_equal(mn_config_load(cfg, file), MN_OK);
    const char *v, *src;
    mn_config_get(cfg, "memory.max_history_tokens", &v, &src);
    assert_string_equal(v, "2000");
    assert_string_equal(src, "env MNEMO_MAX_HISTORY_TOKENS");
    mn_config_get(cfg, "memory.busy_timeout_ms", &v, &src);
    assert_string_equal(v, "10");
    assert_true(strstr(src, "c.yaml") != NULL);
    assert_int_equal(mn_config_set(cfg, "memory.max_history_tokens", "3000", NULL), MN_OK);
    mn_config_get(cfg, "memory.max_history_tokens", &v, &src);
    assert_string_equal(v, "3000");
    assert_string_equal(src, "flag");
    assert_int_equal(mn_config_set(cfg, "memory.max_history_tokens", "-1", NULL), MN_INVALID);
    assert_int_equal(mn_config_set(cfg, "bogus", "1", NULL), MN_INVALID);
    unsetenv("MNEMO_MAX_HISTORY_TOKENS");
    setenv("MNEMO_DURABILITY", "never", 1);
    mn_config *cfg2 = fresh();
    assert_int_equal(mn_config_load(cfg2, file), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "MNEMO_DURABILITY"));
    unsetenv("MNEMO_DURABILITY");
    assert_int_equal(mn_config_load(cfg2, "/nonexistent/mnemo.yaml"), MN_IO);
    mn_config_free(cfg2);
    mn_config_free(cfg);
    remove(file);
    rmdir(dir);
}

/* The typed snapshot has every key of keys.def, typed, with the value the configuration holds:
 * defaults, and a value set by name (a misspelt field name would not compile). */
static void settings_snapshot_follows_the_key_table(void **state)
{
    (void)state;
    mn_config *cfg = NULL;
    assert_int_equal(mn_config_new(&cfg), MN_OK);
    struct mn_settings s;
    mn__settings_fill(&s, cfg);
    assert_int_equal(s.memory_max_history_tokens, 4096);
    assert_int_equal(s.context_fold_timeout_ms, 3000);
    assert_string_equal(s.memory_strategy, "window");
    assert_int_equal(s.memory_rag_enabled, 1); /* retrieval is part of every context (issue 38) */
    assert_string_equal(s.memory_rag_scope, "session");
    assert_true(s.memory_rag_min_similarity > 0.69 && s.memory_rag_min_similarity < 0.71);
    assert_int_equal(mn_config_set(cfg, "context.fold_timeout_ms", "1234", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "summarizer.name", "none", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.rag.enabled", "false", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.rag.scope", "all", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.rag.scope", "everywhere", NULL), MN_INVALID);
    mn__settings_fill(&s, cfg);
    assert_int_equal(s.context_fold_timeout_ms, 1234);
    assert_string_equal(s.summarizer_name, "none");
    assert_int_equal(s.memory_rag_enabled, 0);
    assert_string_equal(s.memory_rag_scope, "all");
    for (size_t i = 0; mn_config_key(i); i++) /* one table: every key the config layer knows */
        assert_non_null(strchr(mn_config_key(i), '.'));
    mn_config_free(cfg);
}

/* harombe's `memory.vector_store` (seed 000) chooses mnemo's embedder: embedding_provider and
 * embedding_model become embedder.name and embedder.model, unless embedder.* is set explicitly
 * (from any layer) or vector_store.enabled is false; a provider mnemo does not have is refused
 * naming the key, the value and the line. */
static void vector_store_maps_to_the_embedder(void **state)
{
    (void)state;
    static const struct {
        const char *yaml;
        mn_status rc;
        const char *name, *model, *name_source; /* NULL name_source: "default" */
    } cases[] = {
        {"memory:\n  vector_store:\n    embedding_provider: ollama\n    embedding_model: nomic-embed-text\n", MN_OK,
         "ollama", "nomic-embed-text", "file v.yaml; from memory.vector_store.embedding_provider"},
        {"memory:\n  vector_store:\n    enabled: true\n    embedding_model: text-embedding-3-small\n"
         "    embedding_provider: openai\n", MN_OK, "openai", "text-embedding-3-small",
         "file v.yaml; from memory.vector_store.embedding_provider"},
        {"memory.vector_store.embedding_provider: ollama\n", MN_OK, "ollama", "",
         "file v.yaml; from memory.vector_store.embedding_provider"},
        /* explicit embedder.* wins, before or after the vector_store keys */
        {"embedder: {name: hash}\nmemory:\n  vector_store: {embedding_provider: ollama, embedding_model: m}\n", MN_OK,
         "hash", "", "file v.yaml"},
        {"memory:\n  vector_store: {embedding_provider: ollama, embedding_model: m}\nembedder: {name: hash}\n", MN_OK,
         "hash", "", "file v.yaml"},
        {"memory:\n  vector_store: {embedding_provider: ollama, embedding_model: m}\nembedder: {model: all-minilm}\n",
         MN_OK, "ollama", "all-minilm", "file v.yaml; from memory.vector_store.embedding_provider"},
        {"embedder: {name: openai}\nmemory:\n  vector_store: {embedding_provider: sentence-transformers}\n", MN_OK,
         "openai", "", "file v.yaml"},
        /* enabled: false turns the mapping off, and with it the check of the provider */
        {"memory:\n  vector_store:\n    enabled: false\n    embedding_provider: ollama\n", MN_OK, "none", "", NULL},
        {"memory:\n  vector_store:\n    embedding_provider: sentence-transformers\n    enabled: 'off'\n", MN_OK, "none",
         "", NULL},
        /* seed 000's own example: a provider mnemo does not have */
        {"memory:\n  vector_store:\n    enabled: true\n    embedding_model: sentence-transformers/all-MiniLM-L6-v2\n"
         "    embedding_provider: sentence-transformers\n", MN_INVALID, NULL, NULL, NULL},
        {"memory:\n  vector_store:\n    embedding_provider: cohere\n", MN_INVALID, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mn_config *cfg = fresh();
        mn_status rc = mn__config_load_yaml(cfg, cases[i].yaml, strlen(cases[i].yaml), "v.yaml", "file v.yaml");
        if (rc != cases[i].rc)
            fail_msg("case %zu: %s, want %s (%s)", i, mn_status_name(rc), mn_status_name(cases[i].rc), mn_errmsg());
        if (rc) {
            const char *msg = mn_errmsg();
            if (!strstr(msg, "v.yaml: line ") || !strstr(msg, "memory.vector_store.embedding_provider") ||
                !strstr(msg, strstr(cases[i].yaml, "cohere") ? "'cohere'" : "'sentence-transformers'"))
                fail_msg("case %zu: '%s' does not name the file, line, key and value", i, msg);
            mn_config_free(cfg);
            continue;
        }
        const char *v, *src;
        assert_int_equal(mn_config_get(cfg, "embedder.name", &v, &src), MN_OK);
        if (strcmp(v, cases[i].name) != 0 || strcmp(src, cases[i].name_source ? cases[i].name_source : "default") != 0)
            fail_msg("case %zu: embedder.name '%s' (%s), want '%s' (%s)", i, v, src, cases[i].name,
                     cases[i].name_source ? cases[i].name_source : "default");
        assert_string_equal(mn__config_str(cfg, "embedder.model"), cases[i].model);
        mn_config_free(cfg);
    }

    /* the same through mn_config_set (the Python package's config=, in any order) */
    mn_config *cfg = fresh();
    const char *v, *src;
    assert_int_equal(mn_config_set(cfg, "memory.vector_store.embedding_model", "nomic-embed-text", "python"), MN_OK);
    assert_string_equal(mn__config_str(cfg, "embedder.name"), "none"); /* a model alone chooses nothing */
    assert_int_equal(mn_config_set(cfg, "memory.vector_store.embedding_provider", "ollama", "python"), MN_OK);
    mn_config_get(cfg, "embedder.name", &v, &src);
    assert_string_equal(v, "ollama");
    assert_string_equal(src, "python; from memory.vector_store.embedding_provider");
    mn_config_get(cfg, "embedder.model", &v, &src);
    assert_string_equal(v, "nomic-embed-text");
    assert_string_equal(src, "python; from memory.vector_store.embedding_model");
    mn_config_get(cfg, "embedder.base_url", &v, &src); /* harombe's default Ollama host */
    assert_string_equal(v, "http://localhost:11434");
    assert_string_equal(src, "python; from memory.vector_store.embedding_provider");
    assert_int_equal(mn_config_set(cfg, "memory.vector_store.embedding_provider", "bert", "python"), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "memory.vector_store.embedding_provider: 'bert'"));
    assert_string_equal(mn__config_str(cfg, "memory.vector_store.embedding_provider"), "ollama"); /* unchanged */
    assert_string_equal(mn__config_str(cfg, "embedder.name"), "ollama");
    assert_int_equal(mn_config_set(cfg, "memory.vector_store.enabled", "false", "python"), MN_OK);
    assert_string_equal(mn__config_str(cfg, "embedder.name"), "none"); /* mapped values go with it */
    assert_string_equal(mn__config_str(cfg, "embedder.model"), "");
    assert_int_equal(mn_config_set(cfg, "memory.vector_store.enabled", "true", "python"), MN_OK);
    assert_string_equal(mn__config_str(cfg, "embedder.name"), "ollama");
    assert_int_equal(mn_config_set(cfg, "embedder.name", "openai", NULL), MN_OK); /* explicit: the model goes too */
    mn_config_get(cfg, "embedder.name", &v, &src);
    assert_string_equal(v, "openai");
    assert_string_equal(src, "flag");
    assert_string_equal(mn__config_str(cfg, "embedder.model"), "");
    assert_string_equal(mn__config_str(cfg, "embedder.base_url"), "");
    mn_config_free(cfg);
    cfg = fresh(); /* an explicit base URL stays, whichever is set first */
    assert_int_equal(mn_config_set(cfg, "embedder.base_url", "http://127.0.0.1:9", NULL), MN_OK);
    assert_int_equal(mn_config_set(cfg, "memory.vector_store.embedding_provider", "ollama", NULL), MN_OK);
    assert_string_equal(mn__config_str(cfg, "embedder.name"), "ollama");
    assert_string_equal(mn__config_str(cfg, "embedder.base_url"), "http://127.0.0.1:9");
    mn_config_free(cfg);

    /* the environment: a variable names itself; an explicit MNEMO_EMBEDDER wins over a file */
    char dir[] = "/tmp/mnemo-config-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char file[256];
    snprintf(file, sizeof file, "%s/h.yaml", dir);
    FILE *f = fopen(file, "w");
    fputs("memory:\n  vector_store:\n    embedding_provider: ollama\n    embedding_model: nomic-embed-text\n", f);
    fclose(f);
    setenv("MNEMO_EMBEDDER", "hash", 1);
    cfg = fresh();
    assert_int_equal(mn_config_load(cfg, file), MN_OK);
    assert_string_equal(mn__config_str(cfg, "embedder.name"), "hash");
    assert_string_equal(mn__config_str(cfg, "embedder.model"), "");
    mn_config_free(cfg);
    unsetenv("MNEMO_EMBEDDER");
    setenv("MNEMO_VECTOR_STORE_EMBEDDING_PROVIDER", "sentence-transformers", 1);
    cfg = fresh();
    assert_int_equal(mn_config_load(cfg, file), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "MNEMO_VECTOR_STORE_EMBEDDING_PROVIDER"));
    assert_non_null(strstr(mn_errmsg(), "'sentence-transformers'"));
    unsetenv("MNEMO_VECTOR_STORE_EMBEDDING_PROVIDER");
    mn_config_free(cfg);
    /* a file's unknown provider is refused with its line once every layer is read, unless a
     * later layer sets embedder.name */
    f = fopen(file, "w");
    fputs("memory:\n  vector_store:\n    embedding_provider: sentence-transformers\n", f);
    fclose(f);
    cfg = fresh();
    assert_int_equal(mn_config_load(cfg, file), MN_INVALID);
    assert_non_null(strstr(mn_errmsg(), "h.yaml: line 3: memory.vector_store.embedding_provider"));
    mn_config_free(cfg);
    setenv("MNEMO_EMBEDDER", "hash", 1);
    cfg = fresh();
    assert_int_equal(mn_config_load(cfg, file), MN_OK);
    assert_string_equal(mn__config_str(cfg, "embedder.name"), "hash");
    unsetenv("MNEMO_EMBEDDER");
    mn_config_free(cfg);
    remove(file);
    rmdir(dir);
}

/* mn_config_get_shown (src/mnemo_config.c): what `config show` prints, each secret as ***. */
static void shown_values_mask_secrets(void **state)
{
    (void)state;
    static const struct {
        const char *key, *value, *shown;
    } cases[] = {
        {"memory.storage_path", "postgresql://app:pw@db/mem", "postgresql://app:***@db/mem"},
        {"memory.storage_path", "postgres://app@db/mem?sslmode=require&PassWord=pw",
         "postgres://app@db/mem?sslmode=require&PassWord=***"},
        {"memory.storage_path", "host=db dbname=mem password='p w' sslpassword=k",
         "host=db dbname=mem password=*** sslpassword=***"},
        {"memory.storage_path", "/tmp/pass=word:x@y.db", "/tmp/pass=word:x@y.db"}, /* a SQLite file, as it is */
        {"summarizer.base_url", "http://me:pw@127.0.0.1:9/v1", "http://me:***@127.0.0.1:9/v1"},
        {"embedder.base_url", "https://api.example/v1?client_secret=pw&x=1",
         "https://api.example/v1?client_secret=***&x=1"},
        {"embedder.base_url", "", ""},
        {"server.api_keys", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789ABCDEF:team:a, k:*,",
         "***:team:a, ***,"},
        {"server.api_keys", "", ""},
        {"state.sensitive_params", "password", "password"}, /* names, not secrets */
    };
    mn_config *cfg = fresh();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(mn_config_set(cfg, cases[i].key, cases[i].value, "test"), MN_OK);
        char *shown = NULL;
        const char *src = NULL;
        assert_int_equal(mn_config_get_shown(cfg, cases[i].key, &shown, &src), MN_OK);
        if (strcmp(shown, cases[i].shown) != 0)
            fail_msg("case %zu: %s '%s' shown as '%s', want '%s'", i, cases[i].key, cases[i].value, shown,
                     cases[i].shown);
        assert_string_equal(src, "test");
        mn_free(shown);
    }
    char *shown = (char *)"untouched";
    assert_int_equal(mn_config_get_shown(cfg, "no.such.key", &shown, NULL), MN_NOTFOUND);
    assert_null(shown);
    mn_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_have_sources),
        cmocka_unit_test(settings_snapshot_follows_the_key_table),
        cmocka_unit_test(yaml_nested_and_flow),
        cmocka_unit_test(yaml_errors_name_line_and_key),
        cmocka_unit_test(yaml_nesting_is_bounded),
        cmocka_unit_test(environment_beats_files_and_flags_beat_environment),
        cmocka_unit_test(shown_values_mask_secrets),
        cmocka_unit_test(vector_store_maps_to_the_embedder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
