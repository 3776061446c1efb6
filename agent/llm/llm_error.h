#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kwb::agent {

enum class LlmErrorKind {
    Auth,              // the key is missing, wrong or lacks permission
    RateLimited,       // 429: too many requests or tokens
    Server,            // 5xx, overloaded, or an error event in the stream
    Timeout,           // no answer, or the answer stalled, within the limit
    MalformedResponse, // the reply was not the API's format
    Cancelled,         // the caller's stop token fired
    Network,           // could not connect, or the connection broke mid-answer
    InvalidRequest,    // other 4xx: unknown model, wrong base URL
    ContextTooLong,    // the conversation no longer fits the model's context window
};

std::string_view errorKindName(LlmErrorKind kind); // "auth", "rate_limited", ...

// A failed completion. The message is written for the user and never holds the API key: the
// providers redact it before an error leaves them.
struct LlmError {
    LlmError() = default;
    LlmError(LlmErrorKind kind, std::string message, bool retryable = false)
        : kind(kind), message(std::move(message)), retryable(retryable) {}

    LlmErrorKind kind = LlmErrorKind::Network;
    std::string message;
    std::optional<long> httpStatus;
    std::optional<std::chrono::milliseconds> retryAfter; // the server's Retry-After, if any
    // Worth another attempt: the same request may well succeed later (429, 5xx, timeouts, a
    // stream cut off). Set by the provider, which knows how the failure came about.
    bool retryable = false;
    // Part of the answer had already reached the stream sink when it failed, so the retry layer
    // passed the failure up rather than repeat output someone may have seen; the caller may
    // still ask again, once it has dropped the partial answer.
    bool afterOutput = false;
    int attempts = 1;

    std::string describe() const; // "rate_limited: ..."
};

} // namespace kwb::agent
