/*
 * url.c — loopback checks for URLs that configuration names, and their shown form (url.h).
 */
#include "util/url.h"

#include <stdio.h>
#include <string.h>

#include "util/banned.h"

int mn__url_is_loopback(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t host_len = strcspn(p, ":/?#");
    if (memchr(p, '@', strcspn(p, "/?#")))
        return 0; /* userinfo: "http://127.0.0.1@elsewhere" goes elsewhere */
    if (strncmp(p, "[::1]", 5) == 0)
        return p[5] == '\0' || p[5] == ':' || p[5] == '/';
    if (host_len == 9 && strncmp(p, "localhost", 9) == 0)
        return 1;
    /* 127.a.b.c, digits and dots only */
    if (host_len < 7 || strncmp(p, "127.", 4) != 0)
        return 0;
    for (size_t i = 4; i < host_len; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || p[i] == '.'))
            return 0;
    return 1;
}

void mn__url_shown(const char *url, char *out, size_t cap)
{
    if (!cap)
        return;
    const char *scheme = strstr(url, "://");
    const char *auth = scheme ? scheme + 3 : url;
    size_t auth_len = strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *q = auth; q < auth + auth_len; q++)
        if (*q == '@')
            at = q; /* the last '@' of the authority ends the userinfo */
    const char *host = at ? at + 1 : auth;
    size_t rest_len = strcspn(host, "?#");
    snprintf(out, cap, "%.*s%s%.*s%s", (int)(auth - url), url, at ? "***@" : "", (int)rest_len, host,
             host[rest_len] == '?' ? "?***" : "");
}
