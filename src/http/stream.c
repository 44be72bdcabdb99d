/*
 * stream.c — mn__http_post_stream (stream.h) over libcurl's multi interface: the body goes to the
 * caller's callback chunk by chunk, and the loop that drives the transfer gives it ticks so that
 * it can stop a silent transfer (Ctrl-C while the model thinks). The loop bounds silence itself,
 * to the millisecond: curl's low-speed limit averages the speed over about five seconds and
 * counts the request sent, so a 1 s limit fired some 6 s late.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "http/stream.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/url.h"
#include "util/banned.h"

#define ERR_BODY_MAX ((size_t)64 << 10)
#define TICK_MS 1000 /* the longest wait between ticks */

struct stream {
    CURL *c;
    mn_http_chunk_fn fn;
    void *user;
    struct mn_buf err;
    int stopped;
    int64_t heard_ms; /* when the server last sent a byte (or the transfer began) */
};

static int64_t now_ms(void) { return mn__clock_mono_ns() / 1000000; }

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct stream *s = user;
    size_t n = size * nmemb;
    long status = 0;
    s->heard_ms = now_ms();
    curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) { /* an error answer: kept for the message */
        if (s->err.len + n <= ERR_BODY_MAX && mn__buf_add(&s->err, ptr, n) != MN_OK)
            return 0;
        return n;
    }
    if (s->fn(s->user, ptr, n)) {
        s->stopped = 1;
        return 0;
    }
    return n;
}

/* Headers end a silence too: a server may answer at once, then think before the body. */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *user)
{
    (void)ptr;
    struct stream *s = user;
    s->heard_ms = now_ms();
    return size * nmemb;
}

/* Runs the transfer until it ends (its result), fn stops it (s->stopped), or the server has sent
 * nothing for silence_ms since it began or since its last byte (*silent). fn gets a tick after
 * each wait, and a wait lasts at most TICK_MS: a signal (Ctrl-C) ends it early. */
static CURLcode drive(CURLM *m, struct stream *s, int64_t silence_ms, int *silent)
{
    *silent = 0;
    s->heard_ms = now_ms();
    for (;;) {
        int running = 0;
        if (curl_multi_perform(m, &running) != CURLM_OK)
            return CURLE_OUT_OF_MEMORY;
        if (!running) {
            int left;
            CURLMsg *msg = curl_multi_info_read(m, &left);
            return msg && msg->msg == CURLMSG_DONE ? msg->data.result : CURLE_OK;
        }
        if (!s->stopped && s->fn(s->user, "", 0)) /* a tick: may the transfer go on? */
            s->stopped = 1;
        if (s->stopped)
            return CURLE_ABORTED_BY_CALLBACK;
        int64_t quiet = now_ms() - s->heard_ms;
        if (quiet >= silence_ms) {
            *silent = 1;
            return CURLE_OPERATION_TIMEDOUT;
        }
        int64_t wait = silence_ms - quiet < TICK_MS ? silence_ms - quiet : TICK_MS;
        if (curl_multi_poll(m, NULL, 0, (int)wait, NULL) != CURLM_OK)
            return CURLE_OUT_OF_MEMORY;
    }
}

mn_status mn__http_post_stream(const mn_http_req *req, mn_http_chunk_fn fn, void *user, long *status,
                              char **err_body, int *stopped)
{
    *status = 0;
    *err_body = NULL;
    *stopped = 0;
    if (!req->url || !*req->url)
        return mn__err(MN_INVALID, "http: the URL is empty");
    struct stream s = {curl_easy_init(), fn, user, MN_BUF_INIT, 0, 0};
    CURLM *m = curl_multi_init();
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json"), *h;
    struct mn_buf auth = MN_BUF_INIT;
    int added = 0;
    mn_status rc = s.c && m && headers ? MN_OK : mn__nomem();
    if (!rc && req->bearer && *req->bearer) {
        if ((rc = mn__buf_addf(&auth, "Authorization: Bearer %s", req->bearer)))
            goto out;
        if (!(h = curl_slist_append(headers, auth.data))) {
            rc = mn__nomem();
            goto out;
        }
        headers = h;
    }
    if (rc)
        goto out;
    int64_t silence_ms = req->timeout_ms > 0 ? req->timeout_ms : 1;
    curl_easy_setopt(s.c, CURLOPT_URL, req->url);
    curl_easy_setopt(s.c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(s.c, CURLOPT_POSTFIELDS, req->body);
    curl_easy_setopt(s.c, CURLOPT_POSTFIELDSIZE, (long)strlen(req->body));
    curl_easy_setopt(s.c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(s.c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(s.c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(s.c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(s.c, CURLOPT_HEADERDATA, &s);
    curl_easy_setopt(s.c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(s.c, CURLOPT_USERAGENT, "mnemo/" MN_VERSION_STRING);
    if (curl_multi_add_handle(m, s.c) != CURLM_OK) {
        rc = mn__nomem();
        goto out;
    }
    added = 1;
    int silent;
    CURLcode cr = drive(m, &s, silence_ms, &silent);
    char shown[512];
    mn__url_shown(req->url, shown, sizeof shown); /* no password or token in a message */
    curl_easy_getinfo(s.c, CURLINFO_RESPONSE_CODE, status);
    if (s.stopped) {
        *stopped = 1;
        goto out;
    }
    if (silent)
        rc = mn__err(MN_UNAVAILABLE, "http: %s sent nothing for %lld ms", shown, (long long)silence_ms);
    else if (cr == CURLE_URL_MALFORMAT || cr == CURLE_UNSUPPORTED_PROTOCOL)
        rc = mn__err(MN_INVALID, "http: bad URL '%s': %s", shown, curl_easy_strerror(cr));
    else if (cr == CURLE_OUT_OF_MEMORY)
        rc = mn__nomem();
    else if (cr != CURLE_OK)
        rc = mn__err(MN_UNAVAILABLE, "http: %s: %s", shown, curl_easy_strerror(cr));
    else if (*status != 200 && !(*err_body = mn__buf_detach(&s.err, NULL)))
        rc = mn__nomem();
out:
    if (added)
        curl_multi_remove_handle(m, s.c);
    if (m)
        curl_multi_cleanup(m);
    mn__buf_release(&s.err);
    mn__buf_release(&auth);
    curl_slist_free_all(headers);
    if (s.c)
        curl_easy_cleanup(s.c);
    return rc;
}
