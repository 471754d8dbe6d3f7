#ifndef TRACKHUB_CCURL_SHIM_H
#define TRACKHUB_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic: they do not
 * import into Swift. The few calls the webhook client makes are spelled out here. */

/* The answer's body is not wanted: only its status counts (PROTOCOL 12). */
static size_t trackhub_curl_discard(char *data, size_t size, size_t count, void *user) {
    (void)data; (void)user;
    return size * count;
}

/* Sets up one POST of `body` (copied by libcurl) with `headers`, answered within
 * `timeout_ms` or failed; no signals (curl runs on a thread of its own), http and https only,
 * no redirects followed (a 3xx is not a delivery). Returns the first failing option's code. */
static inline CURLcode trackhub_curl_setup_post(CURL *easy, const char *url, const char *body, long body_len,
                                                struct curl_slist *headers, long timeout_ms, long connect_timeout_ms) {
    CURLcode rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_URL, url)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https")) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, body_len)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, body)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, trackhub_curl_discard)) != CURLE_OK) return rc;
    if ((rc = curl_easy_setopt(easy, CURLOPT_USERAGENT, "trackhub-webhooks")) != CURLE_OK) return rc;
    return CURLE_OK;
}

/* CURL_GLOBAL_DEFAULT is a macro expression. */
static inline CURLcode trackhub_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

/* The HTTP status of a finished transfer (0: no answer). */
static inline long trackhub_curl_status(CURL *easy) {
    long status = 0;
    if (curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK) return 0;
    return status;
}

/* At most `per_host` connections to one host, `total` in all, kept alive between requests. */
static inline CURLMcode trackhub_curl_multi_limits(CURLM *multi, long per_host, long total) {
    CURLMcode rc;
    if ((rc = curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, per_host)) != CURLM_OK) return rc;
    if ((rc = curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, total)) != CURLM_OK) return rc;
    return CURLM_OK;
}

/* The next finished transfer: 1 with `*easy` and `*result` set, 0 when none is left. */
static inline int trackhub_curl_multi_next_done(CURLM *multi, CURL **easy, CURLcode *result) {
    int left = 0;
    CURLMsg *message;
    while ((message = curl_multi_info_read(multi, &left)) != NULL) {
        if (message->msg == CURLMSG_DONE) {
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
#endif
