#include "agent/providers/http_client.h"

#include "agent/llm/ascii_case.h"

#include <algorithm>
#include <curl/curl.h>
#include <mutex>

namespace kwb::agent {
namespace {

// An error page is for a message to the user; a misbehaving server must not fill memory.
constexpr std::size_t kMaxErrorBodyBytes = 64 * 1024;

void ensureGlobalInit() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string_view trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos)
        return {};
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

// State the libcurl callbacks share with perform(); they must not throw into C code.
struct Transfer {
    CURL* curl = nullptr;
    HttpResponse* response = nullptr;
    const HttpChunkHandler* onChunk = nullptr;
    std::stop_token stop;
    bool stoppedByReceiver = false;
};

size_t onBody(char* data, size_t size, size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    const size_t bytes = size * count;
    if (t.stop.stop_requested())
        return 0; // aborts with CURLE_WRITE_ERROR
    if (!t.onChunk) {
        t.response->body.append(data, bytes);
        return bytes;
    }
    long status = 0;
    curl_easy_getinfo(t.curl, CURLINFO_RESPONSE_CODE, &status);
    if (status < 200 || status >= 300) {
        auto& body = t.response->body;
        body.append(
            data, std::min(bytes, kMaxErrorBodyBytes - std::min(body.size(), kMaxErrorBodyBytes)));
        return bytes;
    }
    try {
        if ((*t.onChunk)(std::string_view(data, bytes)))
            return bytes;
    } catch (...) {
    }
    t.stoppedByReceiver = true;
    return 0;
}

size_t onHeader(char* data, size_t size, size_t count, void* user) {
    auto& t = *static_cast<Transfer*>(user);
    const std::string_view line(data, size * count);
    try {
        if (line.rfind("HTTP/", 0) == 0) {
            t.response->headers.clear(); // a new response (after 100 Continue or a redirect)
        } else if (const auto colon = line.find(':'); colon != std::string_view::npos) {
            t.response->headers.emplace_back(asciiLowerCase(trimmed(line.substr(0, colon))),
                                             std::string(trimmed(line.substr(colon + 1))));
        }
    } catch (...) {
        return 0;
    }
    return size * count;
}

// Also polled while the connection is silent, so a stop takes effect between bytes.
int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<Transfer*>(user)->stop.stop_requested() ? 1 : 0;
}

HttpFailure failureFor(CURLcode rc, const Transfer& t) {
    if (rc == CURLE_OK)
        return HttpFailure::None;
    if (t.stop.stop_requested())
        return HttpFailure::Cancelled;
    if (t.stoppedByReceiver)
        return HttpFailure::StoppedByReceiver;
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
        return HttpFailure::TimedOut;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return HttpFailure::CouldNotConnect;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return HttpFailure::Interrupted;
    default:
        return HttpFailure::Other;
    }
}

} // namespace

std::optional<std::string> HttpResponse::header(std::string_view name) const {
    const std::string wanted = asciiLowerCase(name);
    for (const auto& [key, value] : headers)
        if (key == wanted)
            return value;
    return std::nullopt;
}

HttpClient::HttpClient() {
    ensureGlobalInit();
    curl_ = curl_easy_init();
    multi_ = curl_multi_init();
}

HttpClient::~HttpClient() {
    if (multi_)
        curl_multi_cleanup(static_cast<CURLM*>(multi_));
    if (curl_)
        curl_easy_cleanup(static_cast<CURL*>(curl_));
}

HttpResponse HttpClient::send(const HttpRequest& request) {
    return perform(request, nullptr, {});
}

HttpResponse HttpClient::stream(const HttpRequest& request, const HttpChunkHandler& onChunk,
                                std::stop_token stop) {
    return perform(request, &onChunk, std::move(stop));
}

HttpResponse HttpClient::perform(const HttpRequest& request, const HttpChunkHandler* onChunk,
                                 std::stop_token stop) {
    HttpResponse response;
    CURL* curl = static_cast<CURL*>(curl_);
    CURLM* multi = static_cast<CURLM*>(multi_);
    if (!curl || !multi) {
        response.error = "libcurl could not be initialised";
        response.failure = HttpFailure::Other;
        return response;
    }
    if (stop.stop_requested()) {
        response.error = "cancelled";
        response.failure = HttpFailure::Cancelled;
        return response;
    }
    Transfer transfer{curl, &response, onChunk, stop};
    char errorText[CURL_ERROR_SIZE] = {};

    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errorText);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(request.connectTimeout.count()));
    if (request.idleTimeout.count() > 0) {
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                         static_cast<long>(request.idleTimeout.count()));
    }
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &transfer);
    if (request.method == "POST") {
        curl_easy_setopt(curl, CURLOPT_POST, 1L);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.c_str());
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size()));
    }
    curl_slist* headers = nullptr;
    for (const auto& [name, value] : request.headers) {
        // A line break in a configured value would start a header of its own.
        std::string line = name + ": " + value;
        std::erase_if(line, [](char c) { return c == '\r' || c == '\n'; });
        headers = curl_slist_append(headers, line.c_str());
    }
    // libcurl asks for "100 Continue" before bodies over 1 KiB and waits a second for servers
    // that never answer it; LLM APIs gain nothing from the round trip.
    headers = curl_slist_append(headers, "Expect:");
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

    // The multi interface rather than curl_easy_perform: its poll can be woken from the thread
    // that requests the stop, where easy_perform would notice only at its next progress tick.
    curl_multi_add_handle(multi, curl);
    CURLcode rc = CURLE_OK;
    {
        std::stop_callback wake(stop, [multi] { curl_multi_wakeup(multi); });
        int running = 1;
        while (running) {
            if (curl_multi_perform(multi, &running) != CURLM_OK) {
                rc = CURLE_FAILED_INIT;
                break;
            }
            if (!running)
                break;
            if (stop.stop_requested()) {
                rc = CURLE_ABORTED_BY_CALLBACK;
                break;
            }
            curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
        }
        int queued = 0;
        while (CURLMsg* msg = curl_multi_info_read(multi, &queued))
            if (msg->msg == CURLMSG_DONE && msg->easy_handle == curl)
                rc = msg->data.result;
    }
    curl_multi_remove_handle(multi, curl);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr); // it lives on this stack frame
    curl_slist_free_all(headers);

    response.failure = failureFor(rc, transfer);
    if (response.failure == HttpFailure::Cancelled) {
        response.error = "cancelled";
    } else if (response.failure == HttpFailure::StoppedByReceiver) {
        response.error = "stopped by the receiver";
    } else if (rc != CURLE_OK) {
        // curl's own text names the host and the failure, never the headers.
        response.error = errorText[0] ? errorText : curl_easy_strerror(rc);
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
