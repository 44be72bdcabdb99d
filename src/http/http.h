/*
 * http.h — the HTTP client model providers use (summarisers today, embedders later): one JSON
 * POST with a total timeout, retried with exponential backoff on 429 and 5xx (honouring
 * Retry-After). Only src/http/ includes curl.
 */
#ifndef MN_HTTP_H
#define MN_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "mnemo.h"

#define MN_HTTP_MAX_BODY ((size_t)8 << 20) /* responses larger than this fail with MN_TOOBIG */

typedef struct mn_http_req {
    const char *url;
    const char *body;          /* JSON text */
    const char *bearer;        /* NULL: no Authorization header */
    int64_t timeout_ms;        /* per attempt, whole transfer */
    int retries;               /* extra attempts after a 429 or 5xx */
    int64_t backoff_ms;        /* first wait; doubles each retry; capped at 30 s */
} mn_http_req;

typedef struct mn_http_resp {
    long status;   /* HTTP status of the last attempt */
    char *body;    /* malloc'd, NUL-terminated; caller frees */
    size_t len;
    int attempts;  /* attempts made */
} mn_http_resp;

/* POSTs req->body as application/json. MN_OK whenever a response arrived (any status: the
 * caller judges it; 429/5xx only after the retries are spent). Errors: MN_UNAVAILABLE (could not
 * connect, timed out — the message names the URL and the limit), MN_TOOBIG (response over
 * MN_HTTP_MAX_BODY), MN_INVALID (bad URL), MN_NOMEM. Thread-safe. */
mn_status mn__http_post_json(const mn_http_req *req, mn_http_resp *out);
void mn__http_resp_release(mn_http_resp *r);

#endif
