#include "agent/http_client.h"

#include <curl/curl.h>
#include <mutex>

namespace kwb::agent {
namespace {

void ensureGlobalInit() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t appendBody(char* data, size_t size, size_t count, void* user) {
    static_cast<std::string*>(user)->append(data, size * count);
    return size * count;
}

} // namespace

HttpClient::HttpClient() {
    ensureGlobalInit();
    curl_ = curl_easy_init();
}

HttpClient::~HttpClient() {
    if (curl_)
        curl_easy_cleanup(static_cast<CURL*>(curl_));
}

HttpResponse HttpClient::send(const HttpRequest& request) {
    HttpResponse response;
    CURL* curl = static_cast<CURL*>(curl_);
    if (!curl) {
        response.error = "libcurl could not be initialised";
        return response;
    }
    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.connectTimeout.count()));
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, appendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
    if (request.method == "POST") {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size()));
    }
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers)
        headers = curl_slist_append(headers, (name + ": " + value).c_str());
    if (headers)
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

    CURLcode rc = curl_easy_perform(curl);
    if (headers)
        curl_slist_free_all(headers);
    if (rc != CURLE_OK) {
        // curl's own text names the host and the failure, never the headers.
        response.error = curl_easy_strerror(rc);
        return response;
    }
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
    return response;
}

std::string curlVersionText() {
    const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
    std::string text = std::string("libcurl ") + info->version;
    if (info->ssl_version)
        text += std::string(" (") + info->ssl_version + ")";
    return text;
}

} // namespace kwb::agent
