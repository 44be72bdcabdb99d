/*
 * policy.c — the browser-origin policy of `mnemo serve` (docs/security.md): which Host values
 * are served (DNS rebinding), which Origin values may call (cross-site requests) and which
 * request bodies are taken (JSON only, so a page cannot send one without a CORS preflight).
 * Pure functions of header values: http.c asks them before routing.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server/server.h"

/* Splits "host[:port]" (host may be "[v6]") into host (lower case, brackets kept) and port
 * (0: none). 0 ok, -1 when it is not that shape. */
static int split_hostport(const char *s, size_t len, char *host, size_t cap, unsigned *port)
{
    size_t hl;
    const char *rest;
    *port = 0;
    if (len == 0)
        return -1;
    if (s[0] == '[') {
        const char *close = memchr(s, ']', len);
        if (!close)
            return -1;
        hl = (size_t)(close - s) + 1;
    } else {
        const char *colon = memchr(s, ':', len);
        hl = colon ? (size_t)(colon - s) : len;
    }
    if (hl == 0 || hl >= cap)
        return -1;
    for (size_t i = 0; i < hl; i++) {
        unsigned char ch = (unsigned char)s[i];
        /* letters, digits, '-', '.', and inside brackets ':' */
        if (!(isalnum(ch) || ch == '-' || ch == '.' || (s[0] == '[' && (ch == ':' || ch == '[' || ch == ']'))))
            return -1;
        host[i] = (char)tolower(ch);
    }
    host[hl] = '\0';
    rest = s + hl;
    if (rest == s + len)
        return 0;
    if (*rest != ':' || rest + 1 == s + len)
        return -1;
    unsigned long p = 0;
    for (const char *d = rest + 1; d < s + len; d++) {
        if (*d < '0' || *d > '9' || (p = p * 10 + (unsigned long)(*d - '0')) > 65535)
            return -1;
    }
    if (p == 0)
        return -1;
    *port = (unsigned)p;
    return 0;
}

int srv_origin_parse(const char *origin, char *scheme, size_t scap, char *host, size_t hcap, unsigned *port)
{
    if (!origin)
        return -1;
    const char *sep = strstr(origin, "://");
    if (!sep || (size_t)(sep - origin) >= scap)
        return -1;
    size_t sl = (size_t)(sep - origin);
    for (size_t i = 0; i < sl; i++)
        scheme[i] = (char)tolower((unsigned char)origin[i]);
    scheme[sl] = '\0';
    if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)
        return -1;
    const char *hp = sep + 3;
    /* an origin is scheme://host[:port] and nothing more: no userinfo, path, query or fragment */
    if (strpbrk(hp, "@/?#\\ ") != NULL)
        return -1;
    if (split_hostport(hp, strlen(hp), host, hcap, port) != 0)
        return -1;
    if (*port == 0)
        *port = strcmp(scheme, "https") == 0 ? 443 : 80;
    return 0;
}

static int loopback_name(const char *host)
{
    return strcmp(host, "localhost") == 0 || strcmp(host, "127.0.0.1") == 0 || strcmp(host, "[::1]") == 0;
}

/* Whether `value` equals an entry of the comma-separated list (case-insensitive; "*": any). */
static int in_list(const char *list, const char *value)
{
    size_t vl = strlen(value);
    while (list && *list) {
        while (*list == ' ' || *list == ',')
            list++;
        size_t n = strcspn(list, ",");
        size_t t = n;
        while (t && list[t - 1] == ' ')
            t--;
        if ((t == 1 && list[0] == '*') || (t == vl && t && strncasecmp(list, value, t) == 0))
            return 1;
        list += n;
    }
    return 0;
}

int srv_host_allowed(const struct srv_policy *p, const char *host_header)
{
    if (!p->check_host || !host_header)
        return 1; /* keys or a public address: the key is the guard; HTTP/1.0 without Host */
    char host[256];
    unsigned port;
    if (split_hostport(host_header, strlen(host_header), host, sizeof host, &port) != 0)
        return 0;
    if (loopback_name(host) || in_list(p->own_hosts, host))
        return 1;
    if (in_list(p->allowed_hosts, host_header))
        return 1;
    return in_list(p->allowed_hosts, host); /* an entry without port allows every port */
}

int srv_origin_allowed(const struct srv_policy *p, const char *origin, const char *host_header)
{
    if (!origin)
        return 1; /* not a browser's cross-origin call (browsers send Origin on those) */
    if (in_list(p->allowed_origins, origin))
        return 1;
    char scheme[8], host[256];
    unsigned port;
    if (srv_origin_parse(origin, scheme, sizeof scheme, host, sizeof host, &port) != 0)
        return 0; /* "null", userinfo tricks, paths: never the server's own */
    /* This server speaks http on its port: a page there with another scheme (https, whose
     * browser origin is another) was not loaded from it, whatever the host. */
    if (port == p->port && strcmp(scheme, "http") != 0)
        return 0;
    if (port == p->port && in_list(p->own_hosts, host))
        return 1; /* the server's own page: a name of an address it holds */
    if (host_header) { /* same origin: the page was loaded from the Host the request names */
        char hh[256];
        unsigned hport;
        if (split_hostport(host_header, strlen(host_header), hh, sizeof hh, &hport) == 0) {
            if (hport == 0)
                hport = strcmp(scheme, "https") == 0 ? 443 : 80;
            if (strcmp(hh, host) == 0 && hport == port)
                return srv_host_allowed(p, host_header);
        }
    }
    return 0;
}

/* The first entry of a comma-separated list that check() refuses, into bad; 0 when all pass. */
static int list_check(const char *list, int (*check)(const char *entry), char *bad, size_t cap)
{
    while (list && *list) {
        while (*list == ' ' || *list == ',')
            list++;
        size_t n = strcspn(list, ","), t = n;
        while (t && list[t - 1] == ' ')
            t--;
        char entry[300];
        if (t && (t >= sizeof entry || (snprintf(entry, sizeof entry, "%.*s", (int)t, list), !check(entry)))) {
            snprintf(bad, cap, "%.*s", (int)(t < 200 ? t : 200), list);
            return -1;
        }
        list += n;
    }
    return 0;
}

static int origin_entry(const char *e)
{
    char scheme[8], host[256];
    unsigned port;
    return strcmp(e, "*") == 0 || srv_origin_parse(e, scheme, sizeof scheme, host, sizeof host, &port) == 0;
}

static int host_entry(const char *e)
{
    char host[256];
    unsigned port;
    return strcmp(e, "*") == 0 || split_hostport(e, strlen(e), host, sizeof host, &port) == 0;
}

int srv_policy_check(const struct srv_policy *p, char *err, size_t cap)
{
    char bad[256];
    if (list_check(p->allowed_origins, origin_entry, bad, sizeof bad) != 0) {
        snprintf(err, cap, "server.allowed_origins: '%s' is not an origin (scheme://host[:port], or *)", bad);
        return -1;
    }
    if (list_check(p->allowed_hosts, host_entry, bad, sizeof bad) != 0) {
        snprintf(err, cap, "server.allowed_hosts: '%s' is not a host (host or host:port, or *)", bad);
        return -1;
    }
    return 0;
}

int srv_content_type_ok(const char *ctype, int ndjson)
{
    if (!ctype)
        return 0;
    while (*ctype == ' ')
        ctype++;
    size_t n = strcspn(ctype, "; ");
    if (n == 16 && strncasecmp(ctype, "application/json", 16) == 0)
        return 1;
    return ndjson && ((n == 20 && strncasecmp(ctype, "application/x-ndjson", 20) == 0) ||
                      (n == 17 && strncasecmp(ctype, "application/jsonl", 17) == 0));
}
