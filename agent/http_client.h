#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace kwb::agent {

struct HttpRequest {
    std::string method = "GET"; // GET or POST
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::chrono::milliseconds timeout{60000};
    std::chrono::milliseconds connectTimeout{10000};
};

struct HttpResponse {
    long status = 0; // 0 when no response arrived
    std::string body;
    std::string error; // transport failure ("connection refused", "timed out"), empty on success

    bool ok() const { return error.empty() && status >= 200 && status < 300; }
};

// A blocking HTTP client over libcurl. The LLM providers build on it; it never logs headers,
// because they carry API keys.
class HttpClient {
public:
    HttpClient();
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    HttpResponse send(const HttpRequest& request);

private:
    void* curl_; // CURL*, kept so connections are reused across requests
};

// "libcurl 7.88.1 (OpenSSL/3.0.x)"
std::string curlVersionText();

} // namespace kwb::agent
