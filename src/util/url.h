/*
 * url.h — small checks on URLs from configuration: whether one names this machine, and the
 * form of one that messages and logs may show.
 */
#ifndef MN_UTIL_URL_H
#define MN_UTIL_URL_H

#include <stddef.h>

/* True when url's host is exactly loopback: 127.a.b.c, localhost or [::1], with no userinfo
 * ("http://127.0.0.1@elsewhere" goes elsewhere) and no look-alike ("localhost.example"). */
int mn__url_is_loopback(const char *url);

/* url as an error message or a log line may show it: a userinfo becomes "***@" and a query
 * "?***" (either may hold a password or a token); truncated to cap - 1 bytes. */
void mn__url_shown(const char *url, char *out, size_t cap);

#endif
