/*
 * target.c — database targets as text (target.h): which backend a target names, the SQLite
 * file and its folder, and for PostgreSQL: recognising a libpq keyword/value string
 * ("host=… dbname=… password=…") as one, and the copy of a target that messages show, with
 * every secret replaced by ***: the password of a URL's user info, and each parameter whose
 * name — after percent-decoding in a URL ("passwor%64") and in any case — is a secret
 * (password, sslpassword, or any name holding "pass", "secret" or "token").
 */
#include "store/target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/banned.h"

/* libpq's connection keywords (PostgreSQL 16 docs, "Parameter Key Words"). */
static const char *const keywords[] = {
    "host", "hostaddr", "port", "dbname", "user", "password", "passfile", "require_auth", "channel_binding",
    "connect_timeout", "client_encoding", "options", "application_name", "fallback_application_name",
    "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout",
    "replication", "gssencmode", "sslmode", "requiressl", "sslcompression", "sslcert", "sslkey", "sslpassword",
    "sslcertmode", "sslrootcert", "sslcrl", "sslcrldir", "sslsni", "requirepeer", "ssl_min_protocol_version",
    "ssl_max_protocol_version", "krbsrvname", "gsslib", "gssdelegation", "service", "target_session_attrs",
    "load_balance_hosts", NULL};

static int is_keyword(const char *name, size_t len)
{
    for (const char *const *k = keywords; *k; k++)
        if (strlen(*k) == len && strncmp(*k, name, len) == 0)
            return 1;
    return 0;
}

int mn__store_is_pg_keywords(const char *target)
{
    const char *p = target;
    while (isspace((unsigned char)*p))
        p++;
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_')
        n++;
    const char *q = p + n;
    while (isspace((unsigned char)*q))
        q++;
    return n > 0 && *q == '=' && is_keyword(p, n);
}

/* A parameter name that carries a secret (lower-cased, decoded). */
static int secret_name(const char *name)
{
    return strstr(name, "pass") != NULL || strstr(name, "secret") != NULL || strstr(name, "token") != NULL;
}

static int hexval(int c) { return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1; }

/* s[0..len), percent-decoded (decode) and lower-cased (lower), into out (cap bytes). */
static void decode_to(const char *s, size_t len, int decode, int lower, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < cap; i++) {
        int c = (unsigned char)s[i];
        if (decode && c == '%' && i + 2 < len && hexval((unsigned char)s[i + 1]) >= 0 &&
            hexval((unsigned char)s[i + 2]) >= 0) {
            c = hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]);
            i += 2;
        }
        out[o++] = (char)(lower ? tolower(c) : c);
    }
    out[o] = '\0';
}

static void name_of(const char *s, size_t len, int decode, char *out, size_t cap)
{
    decode_to(s, len, decode, 1, out, cap);
}

/* Each secret value found is reported here (as written in the target) besides being masked. */
struct secrets {
    const char *v[8];
    size_t len[8], n;
};

static void found(struct secrets *f, const char *v, size_t len)
{
    if (f && f->n < 8 && len > 0) {
        f->v[f->n] = v;
        f->len[f->n++] = len;
    }
}

/* key=value key='quoted \' value' …: each secret value becomes ***. */
static mn_status mask_keywords(const char *s, struct mn_buf *b, struct secrets *f)
{
    mn_status rc = MN_OK;
    const char *p = s;
    while (!rc && *p) {
        const char *eq = strchr(p, '=');
        if (!eq)
            return mn__buf_adds(b, p);
        const char *name = p;
        while (name < eq && isspace((unsigned char)*name))
            name++;
        size_t len = (size_t)(eq - name);
        while (len && isspace((unsigned char)name[len - 1]))
            len--;
        char lower[64];
        name_of(name, len, 0, lower, sizeof lower);
        rc = mn__buf_add(b, p, (size_t)(eq + 1 - p));
        const char *v = eq + 1;
        while (*v && isspace((unsigned char)*v))
            v++;
        const char *end = v;
        if (*end == '\'') {
            for (end++; *end && *end != '\''; end++)
                if (*end == '\\' && end[1])
                    end++;
            if (*end)
                end++;
        } else
            while (*end && !isspace((unsigned char)*end))
                end++;
        if (secret_name(lower))
            found(f, v, (size_t)(end - v));
        if (!rc && secret_name(lower) && !(rc = mn__buf_add(b, eq + 1, (size_t)(v - (eq + 1)))))
            rc = mn__buf_adds(b, "***");
        else if (!rc)
            rc = mn__buf_add(b, eq + 1, (size_t)(end - (eq + 1)));
        p = end;
    }
    return rc;
}

/* scheme://user:password@host/db?a=b&password=…: the user info's password and each secret
 * parameter become ***. */
static mn_status mask_url(const char *url, struct mn_buf *b, struct secrets *f)
{
    mn_status rc = MN_OK;
    const char *p = url, *scheme = strstr(url, "://");
    if (scheme) {
        const char *auth = scheme + 3, *end = auth + strcspn(auth, "/?#");
        const char *at = NULL;
        for (const char *q = auth; q < end; q++)
            if (*q == '@')
                at = q;
        const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
        if (colon) {
            found(f, colon + 1, (size_t)(at - colon - 1));
            if (!(rc = mn__buf_add(b, url, (size_t)(colon + 1 - url))))
                rc = mn__buf_adds(b, "***");
            p = at;
        }
    }
    const char *q = strchr(p, '?');
    if (!q)
        return rc ? rc : mn__buf_adds(b, p);
    if (!rc)
        rc = mn__buf_add(b, p, (size_t)(q + 1 - p));
    for (p = q + 1; !rc && *p;) {
        size_t len = strcspn(p, "&");
        const char *eq = memchr(p, '=', len);
        char lower[64];
        name_of(p, eq ? (size_t)(eq - p) : len, 1, lower, sizeof lower);
        if (eq && secret_name(lower)) {
            found(f, eq + 1, len - (size_t)(eq + 1 - p));
            if (!(rc = mn__buf_add(b, p, (size_t)(eq + 1 - p))))
                rc = mn__buf_adds(b, "***");
        } else
            rc = mn__buf_add(b, p, len);
        p += len;
        if (!rc && *p == '&') {
            rc = mn__buf_addc(b, '&');
            p++;
        }
    }
    return rc;
}

static int is_pg_url(const char *t) { return strncmp(t, "postgres://", 11) == 0 || strncmp(t, "postgresql://", 13) == 0; }

static mn_status mask(const char *target, struct mn_buf *b, struct secrets *f)
{
    return strstr(target, "://") ? mask_url(target, b, f) : mask_keywords(target, b, f);
}

/* ---- any target ------------------------------------------------------------------------------ */

enum mn_store_target_kind mn__store_target_kind(const char *target)
{
    return is_pg_url(target) || mn__store_is_pg_keywords(target) ? MN_TARGET_POSTGRES : MN_TARGET_SQLITE;
}

const char *mn__store_target_path(const char *target)
{
    if (mn__store_target_kind(target) == MN_TARGET_POSTGRES)
        return NULL;
    if (strncmp(target, "sqlite:", 7) != 0)
        return target;
    target += 7;
    return strncmp(target, "//", 2) == 0 ? target + 2 : target;
}

int mn__store_target_local(const char *target)
{
    const char *path = mn__store_target_path(target);
    return path && *path && strcmp(path, ":memory:") != 0 && strncmp(path, "file:", 5) != 0;
}

int mn__store_target_folder(const char *target, char *out, size_t cap)
{
    if (!mn__store_target_local(target))
        return 0;
    const char *path = mn__store_target_path(target), *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else
        snprintf(out, cap, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return 1;
}

char *mn__store_target_mask(const char *target)
{
    return mn__store_target_kind(target) == MN_TARGET_POSTGRES ? mn__store_pg_mask(target) : strdup(target);
}

char *mn__store_pg_mask(const char *target)
{
    struct mn_buf b = MN_BUF_INIT;
    mn_status rc = mask(target, &b, NULL);
    char *out = rc ? NULL : mn__buf_detach(&b, NULL);
    mn__buf_release(&b);
    return out;
}

/* Replaces each occurrence of needle[0..len) in msg by *** (or by as many * when shorter). */
static void blank(char *msg, const char *needle, size_t len)
{
    if (len == 0)
        return;
    for (char *p = strstr(msg, needle); p; p = strstr(p, needle)) {
        if (len < 3) {
            memset(p, '*', len);
            p += len;
            continue;
        }
        memcpy(p, "***", 3);
        memmove(p + 3, p + len, strlen(p + len) + 1);
        p += 3;
    }
}

void mn__store_pg_scrub(const char *target, char *msg)
{
    struct mn_buf b = MN_BUF_INIT;
    struct secrets f = {{0}, {0}, 0};
    mask(target, &b, &f);
    mn__buf_release(&b);
    for (size_t i = 0; i < f.n; i++) {
        char raw[512], decoded[512];
        size_t len = f.len[i] < sizeof raw - 1 ? f.len[i] : sizeof raw - 1;
        memcpy(raw, f.v[i], len);
        raw[len] = '\0';
        decode_to(raw, len, 1, 0, decoded, sizeof decoded); /* a URL's value, as libpq sees it */
        blank(msg, raw, len);
        blank(msg, decoded, strlen(decoded));
    }
}
