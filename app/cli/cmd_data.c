/*
 * cmd_data.c — `mnemo export|import|prune|stats|config show|version`.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"

static int write_file(void *user, const char *bytes, size_t len)
{
    return fwrite(bytes, 1, len, (FILE *)user) != len;
}

/* The files that make up a SQLite database (sqlite/sqlite.c, docs/format.md): an export renamed
 * over one of them would destroy what it was reading. */
static const char *const db_files[] = {"",          "-wal",          "-shm",          "-journal", ".keywords",
                                       ".keywords-wal", ".keywords-shm", ".keywords-journal", ".hnsw"};

/* Whether the file st describes is one of the open database's files: compared by device and
 * inode, so no spelling (relative, through a link, a hard link) gets past it. A PostgreSQL
 * database has no such files: its label stats as nothing. */
static int is_db_file(const struct stat *st, const char *db_path)
{
    char path[PATH_MAX];
    struct stat sb;
    for (size_t i = 0; i < sizeof db_files / sizeof db_files[0]; i++)
        if (snprintf(path, sizeof path, "%s%s", db_path, db_files[i]) < (int)sizeof path && stat(path, &sb) == 0 &&
            sb.st_dev == st->st_dev && sb.st_ino == st->st_ino)
            return 1;
    return 0;
}

/* Where `export --out` writes: f, and when tmp is set, the file to rename over `out` at the end. */
struct export_out {
    FILE *f;
    const char *out;
    char tmp[PATH_MAX + 32], target[PATH_MAX];
};

/* Opens the destination (after the database, so that a -wal file the open made is seen); on
 * failure prints why and returns the exit status. */
static int export_out_open(struct export_out *o, const char *out, const char *db_path)
{
    struct stat st, lst;
    o->f = stdout;
    o->out = NULL;
    if (!out)
        return 0;
    /* a symbolic link is written through (renaming over it would replace the link, and leave its
     * file as it was); what cannot be replaced is written straight: a device or a pipe
     * (/dev/stdout, a FIFO, >(gzip)), and a dangling link's file, made through it */
    int exists = stat(out, &st) == 0;
    int link = lstat(out, &lst) == 0 && S_ISLNK(lst.st_mode);
    if (exists && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "mnemo: --out %s: is a directory\n", out);
        return 1;
    }
    if (exists && is_db_file(&st, db_path)) {
        fprintf(stderr, "mnemo: --out %s: is the database being exported (%s); name another file\n", out, db_path);
        return 1;
    }
    if (exists && S_ISREG(st.st_mode) && link && realpath(out, o->target))
        out = o->target;
    if ((exists && !S_ISREG(st.st_mode)) || (!exists && link)) {
        if (!(o->f = fopen(out, "wb"))) {
            fprintf(stderr, "mnemo: cannot write %s: %s\n", out, strerror(errno));
            return 1;
        }
        return 0; /* nothing to rename; closed at the end */
    }
    /* write aside, then rename: a failed export never leaves half a file */
    if (snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", out, (long)getpid()) >= (int)sizeof o->tmp)
        return cli_usage_error("--out: path too long");
    if (!(o->f = fopen(o->tmp, "wb"))) {
        fprintf(stderr, "mnemo: cannot write %s: %s\n", o->tmp, strerror(errno));
        return 1;
    }
    o->out = out;
    /* the file replaced keeps its mode (a private 0600 export stays private); a new one takes
     * the umask's */
    if (exists && fchmod(fileno(o->f), st.st_mode & 07777) != 0) {
        fprintf(stderr, "mnemo: cannot set the mode of %s: %s\n", o->tmp, strerror(errno));
        fclose(o->f);
        unlink(o->tmp);
        return 1;
    }
    return 0;
}

/* Flushes and closes the destination, renaming the temporary file over FILE when all went well. */
static int export_out_close(struct export_out *o, int status)
{
    if (fflush(o->f) != 0 || ferror(o->f) || (o->out && fsync(fileno(o->f)) != 0)) {
        if (!status)
            fprintf(stderr, "mnemo: export: write failed: %s\n", strerror(errno ? errno : EIO));
        status = 1;
    }
    if (o->f != stdout)
        fclose(o->f);
    if (o->out) {
        if (status == 0 && rename(o->tmp, o->out) != 0) {
            fprintf(stderr, "mnemo: cannot rename %s to %s: %s\n", o->tmp, o->out, strerror(errno));
            status = 1;
        }
        if (status)
            unlink(o->tmp);
    }
    return status;
}

int cmd_export(const struct cli_global *g, struct cli_args *a)
{
    const char *out = cli_opt(a, "out");
    if (out && !*out) /* before anything is done: not an export that fails at the rename */
        return cli_usage_error("export: --out needs a file name");
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    struct export_out o;
    int status = export_out_open(&o, out, mn_db_path(db));
    if (status) {
        mn_close(db);
        return status;
    }
    mn_status rc = mn_export(db, a->pos, (size_t)a->npos, write_file, o.f);
    status = rc ? cli_fail(rc) : 0;
    mn_close(db);
    return export_out_close(&o, status);
}

/* The import's input; err keeps the errno of a failed read, for a message naming the file. */
struct import_input {
    FILE *f;
    int err;
};

static long read_file(void *user, char *buf, size_t cap)
{
    struct import_input *in = user;
    errno = 0;
    size_t n = fread(buf, 1, cap, in->f);
    if (n == 0 && ferror(in->f)) {
        in->err = errno ? errno : EIO;
        return -1;
    }
    return (long)n;
}

int cmd_import(const struct cli_global *g, struct cli_args *a)
{
    const char *path = a->npos ? a->pos[0] : "-";
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "mnemo: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    int status = 1;
    mn_db *db = cli_open(g);
    if (db) {
        mn_import_stats st;
        struct import_input in = {f, 0};
        mn_status rc = mn_import(db, read_file, &in, &st);
        if (rc && in.err) /* the library knows only that a read failed: say which and why */
            fprintf(stderr, "mnemo: cannot read %s: %s\n", is_stdin ? "standard input" : path, strerror(in.err));
        else if (rc)
            status = cli_fail(rc);
        else {
            if (cli_flag(a, "json"))
                cli_print_import_stats_json(&st);
            else
                printf("imported %lld sessions (%lld already present), %lld messages (%lld already present)\n",
                       (long long)st.sessions_added, (long long)st.sessions_skipped, (long long)st.messages_added,
                       (long long)st.messages_skipped);
            status = 0;
        }
        mn_close(db);
    }
    if (f != stdin)
        fclose(f);
    return status;
}

int cmd_prune(const struct cli_global *g, struct cli_args *a)
{
    long long days = 0;
    if (cli_number(a, "days", &days))
        return EXIT_USAGE;
    if (!days) { /* no --days: memory.auto_prune_days, when set */
        mn_config *cfg = cli_config(g);
        const char *v = NULL;
        if (!cfg)
            return 1;
        mn_config_get(cfg, "memory.auto_prune_days", &v, NULL);
        days = strtoll(v, NULL, 10);
        mn_config_free(cfg);
        if (!days)
            return cli_usage_error("prune: give --days N, or set memory.auto_prune_days");
    }
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int64_t n = 0;
    mn_status rc = mn_prune(db, (int)days, &n);
    mn_close(db);
    if (rc)
        return cli_fail(rc);
    if (cli_flag(a, "json"))
        printf("{\"deleted\":%lld}\n", (long long)n);
    else
        printf("deleted %lld sessions not updated for %lld days\n", (long long)n, days);
    return 0;
}

int cmd_stats(const struct cli_global *g, struct cli_args *a)
{
    mn_db *db = cli_open(g);
    if (!db)
        return 1;
    int status = 0;
    if (cli_flag(a, "json")) {
        char *json = NULL;
        mn_status rc = mn_stats_json(db, &json);
        status = rc ? cli_fail(rc) : (puts(json), 0);
        mn_free(json);
    } else {
        mn_stats st;
        mn_status rc = mn_stats_get(db, &st);
        if (rc)
            status = cli_fail(rc);
        else {
            printf("database:          %s\ntokenizer:         %s\nschema version:    %d\n", mn_db_path(db),
                   mn_db_tokenizer(db), st.schema_version);
            printf("sessions:          %lld\nmessages:          %lld\ntokens:            %lld\n",
                   (long long)st.sessions, (long long)st.messages, (long long)st.tokens);
            printf("threads:           %lld (%lld expired, waiting for gc)\nturns:             %lld\n",
                   (long long)st.threads, (long long)st.expired_pending, (long long)st.turns);
            printf("bytes on disk:     %lld (+%lld in the write-ahead log)\n", (long long)st.db_bytes,
                   (long long)st.wal_bytes);
            if (st.messages)
                printf("bytes per message: %.0f\n", (double)(st.db_bytes + st.wal_bytes) / (double)st.messages);
        }
    }
    mn_close(db);
    return status;
}

/* Prints s as a JSON string. */
static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

int cmd_config_show(const struct cli_global *g, struct cli_args *a)
{
    mn_config *cfg = cli_config(g);
    if (!cfg)
        return 1;
    int json = cli_flag(a, "json"), width = 0; /* the key column fits the longest key */
    for (size_t i = 0; i < mn_config_count(); i++)
        if ((int)strlen(mn_config_key(i)) > width)
            width = (int)strlen(mn_config_key(i));
    if (json)
        fputc('{', stdout);
    for (size_t i = 0; i < mn_config_count(); i++) {
        const char *key = mn_config_key(i), *source = NULL;
        char *value = NULL; /* secrets as ***, as in every other output */
        mn_status rc = mn_config_get_shown(cfg, key, &value, &source);
        if (rc) {
            mn_config_free(cfg);
            return cli_fail(rc);
        }
        if (json) {
            printf("%s\"%s\":{\"value\":", i ? "," : "", key);
            json_str(value);
            fputs(",\"source\":", stdout);
            json_str(source);
            putchar('}');
        }
        else
            printf("%-*s %-40s (%s)\n", width, key, value, source);
        mn_free(value);
    }
    /* which tokenizer "auto" (or a named one) resolves to here */
    const char *name = NULL, *data_dir = NULL;
    mn_config_get(cfg, "tokenizer.name", &name, NULL);
    mn_config_get(cfg, "tokenizer.data_dir", &data_dir, NULL);
    if (*data_dir)
        setenv("MNEMO_DATA_DIR", data_dir, 1);
    size_t probe;
    const char *active = strcmp(name, "auto") != 0 ? name
                         : mn_count_tokens("cl100k_base", "", 0, &probe) == MN_OK ? "cl100k_base"
                                                                                : "heuristic";
    if (strcmp(name, "auto") != 0 && mn_count_tokens(name, "", 0, &probe) != MN_OK)
        active = "unavailable";
    if (json)
        printf(",\"tokenizer.active\":{\"value\":\"%s\",\"source\":\"resolved\"}}\n", active);
    else
        printf("%-*s %-40s (%s)\n", width, "tokenizer.active", active,
               strcmp(active, "unavailable") == 0 ? mn_errmsg() : "resolved from tokenizer.name");
    mn_config_free(cfg);
    return 0;
}

int cmd_version(const struct cli_global *g, struct cli_args *a)
{
    (void)g;
    if (a && cli_flag(a, "json"))
        printf("{\"version\":\"%s\",\"library\":\"%s\"}\n", MN_VERSION_STRING, mn_version());
    else
        printf("mnemo %s (library %s)\n", MN_VERSION_STRING, mn_version());
    return 0;
}
