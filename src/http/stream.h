/*
 * stream.h — a streamed JSON POST for chat replies: the body is handed to a callback as it
 * arrives (server-sent events or NDJSON), and the callback can stop the transfer. No retries:
 * what was shown of a reply cannot be taken back; the caller retries the turn.
 */
#ifndef MN_HTTP_STREAM_H
#define MN_HTTP_STREAM_H

#include <stddef.h>

#include "http/http.h"

/* Receives len bytes of a 200 response body as they arrive; len 0 is a tick (at least once a
 * second, and at once when a signal such as SIGINT interrupts the wait) so that the caller may
 * stop a silent transfer. Returns 0 to go on, non-zero to stop. */
typedef int (*mn_http_chunk_fn)(void *user, const char *data, size_t len);

/* POSTs req->body as application/json; req->timeout_ms, in milliseconds, bounds the connection
 * and any silence (no byte for that long, measured from the start and from each byte), not the
 * whole reply; retries and backoff are ignored. A 200 body goes
 * to fn; any other status's body (at most 64 KiB) is returned in *err_body (malloc'd, caller
 * frees) with *status. *stopped is 1 when fn stopped the transfer (MN_OK then). Errors:
 * MN_UNAVAILABLE (could not connect, silent too long), MN_INVALID (bad URL), MN_NOMEM. */
mn_status mn__http_post_stream(const mn_http_req *req, mn_http_chunk_fn fn, void *user, long *status,
                              char **err_body, int *stopped);

#endif
