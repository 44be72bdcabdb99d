/*
 * url.h — small checks on URLs from configuration: whether one names this machine.
 */
#ifndef MN_UTIL_URL_H
#define MN_UTIL_URL_H

/* True when url's host is exactly loopback: 127.a.b.c, localhost or [::1], with no userinfo
 * ("http://127.0.0.1@elsewhere" goes elsewhere) and no look-alike ("localhost.example"). */
int mn_url_is_loopback(const char *url);

#endif
