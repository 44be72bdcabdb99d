/*
 * web.c — the web page of `mnemo serve` at GET /: app/server/web/index.html, compiled into the
 * binary by cmake/embed.cmake, sent with a Content-Security-Policy that admits its one inline
 * style element and its one inline script element by their SHA-256 (computed here from the
 * embedded bytes, so the policy cannot drift from the page) and lets it talk to this origin only.
 * The page holds no data (it reads the REST API with the user's key), so it needs no key itself;
 * nor does its icon at GET /favicon.ico (app/server/web/favicon.svg, embedded the same way).
 * Notes: docs/http-api.md ("The web page"), docs/web.md.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <microhttpd.h>
#include <openssl/evp.h>

#include "server/server.h"

extern const unsigned char srv_web_index[]; /* generated: build/…/generated/web_index.c */
extern const size_t srv_web_index_len;
extern const unsigned char srv_web_favicon[]; /* generated: build/…/generated/web_favicon.c */
extern const size_t srv_web_favicon_len;

static char csp[512];
static pthread_once_t csp_once = PTHREAD_ONCE_INIT;

/* "'sha256-<base64>'" of the bytes between the first `open` tag and the `close` tag after it;
 * "'none'" when the page has no such element. */
static void element_hash(const char *page, const char *open, const char *close, char *out, size_t cap)
{
    const char *a = strstr(page, open), *b = a ? strstr(a + strlen(open), close) : NULL;
    unsigned char md[EVP_MAX_MD_SIZE], b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
    unsigned n = 0;
    if (!b || EVP_Digest(a + strlen(open), (size_t)(b - a - strlen(open)), md, &n, EVP_sha256(), NULL) != 1) {
        snprintf(out, cap, "'none'");
        return;
    }
    EVP_EncodeBlock(b64, md, (int)n);
    snprintf(out, cap, "'sha256-%s'", (const char *)b64);
}

/* The policy, decided here: nothing is allowed by default ('none' rather than 'self': the page
 * loads no files, so no same-origin script or style may be slipped in either); the inline style
 * and script by hash, not 'unsafe-inline', so injected markup could not run even if a bug let
 * some through; fetch only to this origin (connect-src 'self'); no base, no form posts, no
 * framing (clickjacking); images only from here (the browser's /favicon.ico probe). */
static void make_csp(void)
{
    const char *page = (const char *)srv_web_index;
    char script[128], style[128]; /* room for any digest EVP could give */
    element_hash(page, "<script>", "</script>", script, sizeof script);
    element_hash(page, "<style>", "</style>", style, sizeof style);
    snprintf(csp, sizeof csp,
             "default-src 'none'; script-src %s; style-src %s; connect-src 'self'; img-src 'self'; "
             "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
             script, style);
}

const char *srv_web_csp(void)
{
    pthread_once(&csp_once, make_csp);
    return csp;
}

/* Queues body (static bytes) as a 200 with the headers both files carry: no sniffing into
 * another type, no framing, no referrer. */
static int send_static(struct MHD_Connection *mc, const unsigned char *body, size_t len, const char *ctype,
                       const char *policy, const char *cache, int *status)
{
    *status = 200;
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
    MHD_add_response_header(r, "Content-Security-Policy", policy);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Frame-Options", "DENY");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, cache);
    enum MHD_Result ret = MHD_queue_response(mc, (unsigned)*status, r);
    MHD_destroy_response(r);
    return ret;
}

/* no-cache: a new build's page is seen at once (its CSP hashes change with it) */
int srv_web_send(struct MHD_Connection *mc, int *status)
{
    return send_static(mc, srv_web_index, srv_web_index_len, "text/html; charset=utf-8", srv_web_csp(), "no-cache",
                       status);
}

/* An SVG, served at the name browsers probe (/favicon.ico) and that the page's <link rel="icon">
 * names with its type, so Chromium neither logs a 404 on first load nor needs a second route.
 * Opened as a document, an SVG could run script: its policy allows nothing. It changes only
 * with a new build, so a day in any cache is harmless and spares a request per page load. */
int srv_web_icon_send(struct MHD_Connection *mc, int *status)
{
    return send_static(mc, srv_web_favicon, srv_web_favicon_len, "image/svg+xml",
                       "default-src 'none'; frame-ancestors 'none'", "public, max-age=86400", status);
}
