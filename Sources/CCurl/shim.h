/* libcurl for the CurlClient module only (the one Swift importer), with non-variadic wrappers below. */
#include <curl/curl.h>

/* curl_easy_setopt / curl_easy_getinfo are variadic; Swift cannot call them. */
typedef size_t (*wb_curl_write_cb)(char *, size_t, size_t, void *);
static inline CURLcode wb_curl_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode wb_curl_setopt_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode wb_curl_setopt_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode wb_curl_setopt_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode wb_curl_setopt_write_callback(CURL *h, CURLoption o, wb_curl_write_cb cb) { return curl_easy_setopt(h, o, cb); }
/* Progress callback (CURLOPT_XFERINFOFUNCTION): a non-zero return aborts the transfer (CURLE_ABORTED_BY_CALLBACK). */
typedef int (*wb_curl_xferinfo_cb)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
static inline CURLcode wb_curl_setopt_xferinfo_callback(CURL *h, wb_curl_xferinfo_cb cb) { return curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, cb); }
static inline CURLcode wb_curl_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
/* AWS Signature Version 4 (curl >= 7.75): CURLOPT_AWS_SIGV4 takes "aws:amz:REGION:SERVICE"; the key pair goes
 * in as user name and password (CURLOPT_USERNAME/CURLOPT_PASSWORD: the same as CURLOPT_USERPWD "KEY:SECRET", but a
 * colon in either half cannot split it wrongly). */
static inline CURLcode wb_curl_setopt_aws_sigv4(CURL *h, const char *provider, const char *key, const char *secret) {
    CURLcode code = curl_easy_setopt(h, CURLOPT_AWS_SIGV4, provider);
    if (code != CURLE_OK) return code;
    code = curl_easy_setopt(h, CURLOPT_USERNAME, key);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(h, CURLOPT_PASSWORD, secret);
}
/* The multi interface (CurlMultiplexer): curl_multi_setopt is variadic too. */
static inline CURLMcode wb_curl_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }
/* A CA bundle held in memory (CURLOPT_CAINFO_BLOB, curl >= 7.77): not copied, so it must outlive every transfer. */
static inline CURLcode wb_curl_setopt_cainfo_blob(CURL *h, void *data, size_t length) {
    struct curl_blob blob = { data, length, CURL_BLOB_NOCOPY };
    return curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
}
static inline CURLcode wb_curl_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
/* CURLMsg's result lives in a union. */
static inline CURLcode wb_curl_msg_result(const CURLMsg *m) { return m->data.result; }
