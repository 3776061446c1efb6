#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kwb::agent {

struct HttpRequest {
    std::string method = "GET"; // GET or POST
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    std::chrono::milliseconds timeout{60000}; // the whole transfer
    std::chrono::milliseconds connectTimeout{10000};
    // A stream may rightly last minutes, so streams bound the silence between bytes instead of
    // (or as well as) the total; zero means no idle limit. Whole seconds (libcurl's resolution).
    std::chrono::seconds idleTimeout{0};
};

// Why no complete response arrived.
enum class HttpFailure {
    None,
    Cancelled,         // the stop token fired
    TimedOut,          // `timeout` or `idleTimeout` ran out
    CouldNotConnect,   // refused, unreachable, or the host name did not resolve
    Interrupted,       // the connection broke or closed before the response was complete
    StoppedByReceiver, // the chunk handler returned false
    Other,
};

struct HttpResponse {
    long status = 0; // 0 when no response arrived
    // Names lower-cased; only the final response's headers (not a 100 Continue's).
    std::vector<std::pair<std::string, std::string>> headers;
    // The whole body from send(). From stream(), only a non-2xx body (the error text), capped.
    std::string body;
    std::string error; // transport failure ("connection refused", "timed out"), empty on success
    HttpFailure failure = HttpFailure::None;

    bool ok() const { return error.empty() && status >= 200 && status < 300; }
    std::optional<std::string> header(std::string_view name) const; // case-insensitive
};

// Receives each piece of a 2xx body as it arrives; returning false ends the transfer.
using HttpChunkHandler = std::function<bool(std::string_view chunk)>;

// An HTTP client over libcurl. The LLM providers build on it; it never logs headers, because
// they carry API keys. One transfer at a time per client.
class HttpClient {
public:
    HttpClient();
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // Blocks until the whole response is in.
    HttpResponse send(const HttpRequest& request);

    // Hands a 2xx body to `onChunk` as it arrives (server-sent events). A stop request ends the
    // transfer at once, even while the server is silent, with HttpFailure::Cancelled.
    HttpResponse stream(const HttpRequest& request, const HttpChunkHandler& onChunk,
                        std::stop_token stop = {});

private:
    HttpResponse perform(const HttpRequest& request, const HttpChunkHandler* onChunk,
                         std::stop_token stop);

    void* curl_;  // CURL*, kept so connections are reused across requests
    void* multi_; // CURLM*, so a stop request can wake a transfer that waits on the network
};

// "libcurl 7.88.1 (OpenSSL/3.0.x)"
std::string curlVersionText();

} // namespace kwb::agent
