/*
 * cmd_tokens.c — `mnemo tokens` (count or list the tokens of a text) and `mnemo reindex
 * --tokens` (recount every stored message after a change of tokenizer).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

/* Loading the encoding's ranks (read, SHA-256, parse: ~10-20 ms) runs on a second thread while
 * the main one reads the input; counting then finds the tokenizer loaded. A failure here is
 * ignored: the count below loads again and reports it. */
static void *load_encoding(void *encoding)
{
    size_t n;
    mn_count_tokens(encoding, "", 0, &n);
    return NULL;
}

/* A regular file is read with one read() into a buffer of its size (no stdio copy, no regrowth);
 * anything else (standard input, a pipe) through cli_read_all. */
static char *read_input(const char *path, size_t *len)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *what = is_stdin ? "standard input" : path;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "mnemo: cannot read %s: %s\n", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    char *text = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (text = malloc((size_t)st.st_size + 1))) {
        size_t got = 0, want = (size_t)st.st_size;
        ssize_t r = 1;
        while (got < want && (r = read(fd, text + got, want - got)) != 0)
            if (r > 0)
                got += (size_t)r;
            else if (errno != EINTR)
                break;
        if (r < 0) {
            fprintf(stderr, "mnemo: cannot read %s: %s\n", what, strerror(errno));
            free(text);
            text = NULL;
        } else if (memchr(text, '\0', got)) {
            fprintf(stderr, "mnemo: %s contains a NUL byte; content must be UTF-8 text\n", what);
            free(text);
            text = NULL;
        } else {
            text[got] = '\0';
            *len = got;
        }
    } else {
        FILE *f = is_stdin ? stdin : fdopen(fd, "rb");
        if (f) {
            text = cli_read_all(f, what, len);
            if (!is_stdin)
                fclose(f); /* closes fd */
            return text;
        }
        fprintf(stderr, "mnemo: cannot read %s: %s\n", what, strerror(errno));
    }
    if (!is_stdin)
        close(fd);
    return text;
}

int cmd_tokens(const struct cli_global *g, struct cli_args *a)
{
    const char *encoding = cli_opt(a, "encoding");
    const char *path = a->npos ? a->pos[0] : "-";
    long long threads = 0;
    if (cli_local_number(a, "threads", 0, 1024, &threads))
        return EXIT_USAGE;
    char configured[64] = "";
    if (!encoding) { /* the configured tokenizer, with "auto" resolved as a database handle would */
        mn_config *cfg = cli_config(g);
        if (!cfg)
            return 1;
        const char *name = NULL, *data_dir = NULL;
        mn_config_get(cfg, "tokenizer.name", &name, NULL);
        mn_config_get(cfg, "tokenizer.data_dir", &data_dir, NULL);
        snprintf(configured, sizeof configured, "%s", name);
        if (*data_dir) /* mn_count_tokens takes its data directory from the environment */
            setenv("MNEMO_DATA_DIR", data_dir, 1);
        mn_config_free(cfg);
        encoding = configured;
        if (strcmp(encoding, "auto") == 0) {
            size_t probe;
            encoding = mn_count_tokens("cl100k_base", "", 0, &probe) == MN_OK ? "cl100k_base" : "heuristic";
        }
    }
    pthread_t loader;
    int loading = pthread_create(&loader, NULL, load_encoding, (void *)encoding) == 0;
    size_t len = 0;
    char *text = read_input(path, &len);
    if (loading)
        pthread_join(loader, NULL);
    if (!text)
        return 1;
    int status = 0;
    if (cli_flag(a, "ids")) {
        uint32_t *ids = NULL;
        size_t n = 0;
        mn_status rc = mn_encode_tokens(encoding, text, len, &ids, &n);
        if (rc)
            status = cli_fail(rc);
        else {
            if (cli_flag(a, "json"))
                printf("{\"encoding\":\"%s\",\"tokens\":%zu,\"bytes\":%zu,\"ids\":[", encoding, n, len);
            for (size_t i = 0; i < n; i++)
                printf("%s%u", i ? (cli_flag(a, "json") ? "," : " ") : "", ids[i]);
            puts(cli_flag(a, "json") ? "]}" : "");
        }
        mn_free(ids);
    } else {
        size_t n = 0;
        mn_status rc = mn_count_tokens_threads(encoding, text, len, (unsigned)threads, &n);
        if (rc)
            status = cli_fail(rc);
        else if (cli_flag(a, "json"))
            printf("{\"encoding\":\"%s\",\"tokens\":%zu,\"bytes\":%zu}\n", encoding, n, len);
        else
            printf("%zu\n", n);
    }
    free(text);
    return status;
}

static void show_progress(void *user, int64_t done, int64_t total)
{
    (void)user;
    cli_progress("recounting tokens:", (long long)done, (long long)total);
}

int cmd_reindex(const struct cli_global *g, struct cli_args *a)
{
    if (cli_flag(a, "embeddings") && cli_flag(a, "tokens"))
        return cli_usage_error("reindex: --tokens and --embeddings run one at a time");
    if (cli_flag(a, "embeddings"))
        return cmd_reindex_embeddings(g, a);
    if (!cli_flag(a, "tokens"))
        return cli_usage_error("reindex: say what to rebuild: --tokens or --embeddings");
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int64_t n = 0;
    mn_status rc = mn_reindex_tokens(db, show_progress, NULL, &n);
    if (!rc && cli_flag(a, "json"))
        printf("{\"recounted\":%lld,\"tokenizer\":\"%s\"}\n", (long long)n, mn_db_tokenizer(db));
    else if (!rc)
        printf("recounted %lld messages with %s\n", (long long)n, mn_db_tokenizer(db));
    mn_close(db);
    return rc ? cli_fail(rc) : 0;
}
