/*
 * stream.c — mn_http_post_stream (stream.h) over libcurl: the body goes to the caller's
 * callback chunk by chunk; a progress callback gives it ticks so that it can stop a silent
 * transfer (Ctrl-C while the model thinks). Silence is bounded with curl's low-speed limit.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "http/stream.h"
#include "util/buf.h"
#include "util/err.h"
#include "util/banned.h"

#define ERR_BODY_MAX ((size_t)64 << 10)

struct stream {
    CURL *c;
    mn_http_chunk_fn fn;
    void *user;
    struct mn_buf err;
    int stopped;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct stream *s = user;
    size_t n = size * nmemb;
    long status = 0;
    curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) { /* an error answer: kept for the message */
        if (s->err.len + n <= ERR_BODY_MAX && mn_buf_add(&s->err, ptr, n) != MN_OK)
            return 0;
        return n;
    }
    if (s->fn(s->user, ptr, n)) {
        s->stopped = 1;
        return 0;
    }
    return n;
}

static int on_progress(void *user, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct stream *s = user;
    if (s->fn(s->user, "", 0)) {
        s->stopped = 1;
        return 1;
    }
    return 0;
}

mn_status mn_http_post_stream(const mn_http_req *req, mn_http_chunk_fn fn, void *user, long *status,
                              char **err_body, int *stopped)
{
    *status = 0;
    *err_body = NULL;
    *stopped = 0;
    if (!req->url || !*req->url)
        return mn__err(MN_INVALID, "http: the URL is empty");
    struct stream s = {curl_easy_init(), fn, user, MN_BUF_INIT, 0};
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json"), *h;
    struct mn_buf auth = MN_BUF_INIT;
    mn_status rc = s.c && headers ? MN_OK : mn__nomem();
    if (!rc && req->bearer && *req->bearer) {
        if ((rc = mn_buf_addf(&auth, "Authorization: Bearer %s", req->bearer)))
            goto out;
        if (!(h = curl_slist_append(headers, auth.data))) {
            rc = mn__nomem();
            goto out;
        }
        headers = h;
    }
    if (rc)
        goto out;
    long silence_s = req->timeout_ms > 1000 ? (long)(req->timeout_ms / 1000) : 1;
    curl_easy_setopt(s.c, CURLOPT_URL, req->url);
    curl_easy_setopt(s.c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s.c, CURLOPT_POSTFIELDS, req->body);
    curl_easy_setopt(s.c, CURLOPT_POSTFIELDSIZE, (long)strlen(req->body));
    curl_easy_setopt(s.c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(s.c, CURLOPT_CONNECTTIMEOUT_MS, (long)req->timeout_ms);
    curl_easy_setopt(s.c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(s.c, CURLOPT_LOW_SPEED_TIME, silence_s);
    curl_easy_setopt(s.c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(s.c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(s.c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(s.c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(s.c, CURLOPT_XFERINFODATA, &s);
    curl_easy_setopt(s.c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(s.c, CURLOPT_USERAGENT, "mnemo/" MN_VERSION_STRING);
    CURLcode cr = curl_easy_perform(s.c);
    curl_easy_getinfo(s.c, CURLINFO_RESPONSE_CODE, status);
    if (s.stopped) {
        *stopped = 1;
        goto out;
    }
    if (cr == CURLE_OPERATION_TIMEDOUT)
        rc = mn__err(MN_UNAVAILABLE, "http: %s sent nothing for %ld s", req->url, silence_s);
    else if (cr == CURLE_URL_MALFORMAT || cr == CURLE_UNSUPPORTED_PROTOCOL)
        rc = mn__err(MN_INVALID, "http: bad URL '%s': %s", req->url, curl_easy_strerror(cr));
    else if (cr != CURLE_OK)
        rc = mn__err(MN_UNAVAILABLE, "http: %s: %s", req->url, curl_easy_strerror(cr));
    else if (*status != 200 && !(*err_body = mn_buf_detach(&s.err, NULL)))
        rc = mn__nomem();
out:
    mn_buf_release(&s.err);
    mn_buf_release(&auth);
    curl_slist_free_all(headers);
    if (s.c)
        curl_easy_cleanup(s.c);
    return rc;
}
