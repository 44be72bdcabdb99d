/*
 * http.c — JSON POST over libcurl for model providers: per-attempt timeouts, retries with
 * exponential backoff on 429 and 5xx (Retry-After in seconds honoured, capped), a bounded
 * response body. No signals (CURLOPT_NOSIGNAL), so it is safe from any thread.
 */
#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/url.h"
#include "util/banned.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static CURLcode init_rc = CURLE_OK;

static void global_init(void) { init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

struct sink {
    struct mn_buf buf;
    int too_big;
};

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct sink *s = user;
    size_t n = size * nmemb;
    if (s->buf.len + n > MN_HTTP_MAX_BODY) {
        s->too_big = 1;
        return 0;
    }
    return mn__buf_add(&s->buf, ptr, n) == MN_OK ? n : 0;
}

struct retry_after {
    int64_t ms;
};

static size_t on_header(char *ptr, size_t size, size_t nmemb, void *user)
{
    struct retry_after *ra = user;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    if (n > sizeof name - 1 && strncasecmp(ptr, name, sizeof name - 1) == 0) {
        char tmp[32];
        size_t k = n - (sizeof name - 1);
        if (k >= sizeof tmp)
            k = sizeof tmp - 1;
        memcpy(tmp, ptr + sizeof name - 1, k);
        tmp[k] = '\0';
        char *end;
        long long secs = strtoll(tmp, &end, 10);
        if (end != tmp && secs >= 0 && secs < 3600)
            ra->ms = secs * 1000;
    }
    return n;
}

void mn__http_resp_release(mn_http_resp *r)
{
    if (!r)
        return;
    free(r->body);
    memset(r, 0, sizeof *r);
}

static mn_status attempt(const mn_http_req *req, struct curl_slist *headers, mn_http_resp *out, int64_t *retry_ms)
{
    CURL *c = curl_easy_init();
    if (!c)
        return mn__err(MN_NOMEM, "http: cannot create a transfer");
    struct sink s;
    mn__buf_init(&s.buf, MN_HTTP_MAX_BODY + 1);
    s.too_big = 0;
    struct retry_after ra = {-1};
    curl_easy_setopt(c, CURLOPT_URL, req->url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req->body);
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(req->body));
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)req->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)req->timeout_ms);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &ra);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "mnemo/" MN_VERSION_STRING);
    CURLcode cr = curl_easy_perform(c);
    mn_status rc = MN_OK;
    char shown[512];
    mn__url_shown(req->url, shown, sizeof shown); /* no password or token in a message */
    if (s.too_big)
        rc = mn__err(MN_TOOBIG, "http: the response of %s is larger than %zu bytes", shown, MN_HTTP_MAX_BODY);
    else if (cr == CURLE_OPERATION_TIMEDOUT)
        rc = mn__err(MN_UNAVAILABLE, "http: %s timed out after %lld ms", shown, (long long)req->timeout_ms);
    else if (cr == CURLE_URL_MALFORMAT || cr == CURLE_UNSUPPORTED_PROTOCOL)
        rc = mn__err(MN_INVALID, "http: bad URL '%s': %s", shown, curl_easy_strerror(cr));
    else if (cr != CURLE_OK)
        rc = mn__err(MN_UNAVAILABLE, "http: %s: %s", shown, curl_easy_strerror(cr));
    if (!rc) {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
        free(out->body);
        out->body = mn__buf_detach(&s.buf, &out->len);
        if (!out->body)
            rc = mn__nomem();
        *retry_ms = ra.ms;
    }
    mn__buf_release(&s.buf);
    curl_easy_cleanup(c);
    return rc;
}

mn_status mn__http_post_json(const mn_http_req *req, mn_http_resp *out)
{
    memset(out, 0, sizeof *out);
    pthread_once(&init_once, global_init);
    if (init_rc != CURLE_OK)
        return mn__err(MN_UNAVAILABLE, "http: libcurl failed to initialise: %s", curl_easy_strerror(init_rc));
    if (!req->url || !*req->url)
        return mn__err(MN_INVALID, "http: the URL is empty");
    struct curl_slist *headers = NULL, *h;
    struct mn_buf auth = MN_BUF_INIT;
    mn_status rc = MN_OK;
    if (!(h = curl_slist_append(headers, "Content-Type: application/json")))
        return mn__nomem();
    headers = h;
    if (req->bearer && *req->bearer) {
        if ((rc = mn__buf_addf(&auth, "Authorization: Bearer %s", req->bearer)) ||
            !(h = curl_slist_append(headers, auth.data))) {
            curl_slist_free_all(headers);
            mn__buf_release(&auth);
            return rc ? rc : mn__nomem();
        }
        headers = h;
    }
    int64_t wait = req->backoff_ms > 0 ? req->backoff_ms : 1;
    for (int i = 0;; i++) {
        int64_t retry_ms = -1;
        out->attempts = i + 1;
        rc = attempt(req, headers, out, &retry_ms);
        if (rc)
            break;
        int retryable = out->status == 429 || out->status >= 500;
        if (!retryable || i >= req->retries)
            break;
        int64_t ms = retry_ms >= 0 ? retry_ms : wait;
        if (ms > 30000)
            ms = 30000;
        char shown[512];
        mn__url_shown(req->url, shown, sizeof shown);
        mn__log(MN_LOG_INFO, "http: %s answered %ld; retrying in %lld ms", shown, out->status, (long long)ms);
        mn__clock_sleep_ms(ms);
        wait = wait > 15000 ? 30000 : wait * 2;
    }
    curl_slist_free_all(headers);
    mn__buf_release(&auth);
    if (rc) {
        free(out->body);
        out->body = NULL;
        out->len = 0;
    }
    return rc;
}
