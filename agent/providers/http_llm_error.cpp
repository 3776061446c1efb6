#include "agent/providers/http_llm_error.h"

#include "agent/llm/ascii_case.h"
#include "engine/system/bounded_json.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <curl/curl.h>

namespace kwb::agent {
namespace {

constexpr std::size_t kMaxQuotedChars = 300;

std::string excerptOf(std::string_view text, std::size_t limit = kMaxQuotedChars) {
    std::string out;
    for (char c : text.substr(0, limit))
        out.push_back(std::isprint(static_cast<unsigned char>(c)) ? c : ' ');
    if (text.size() > limit)
        out += "...";
    return out;
}

std::optional<long long> parseInteger(std::string_view text) {
    long long value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0)
        return std::nullopt;
    return value;
}

// The kinds both APIs' error vocabularies name ("rate_limit_error", "insufficient_quota", ...).
std::optional<LlmErrorKind> kindForApiErrorType(const std::string& type) {
    const std::string t = asciiLowerCase(type);
    if (t.find("auth") != std::string::npos || t.find("permission") != std::string::npos ||
        t.find("api_key") != std::string::npos)
        return LlmErrorKind::Auth;
    if (t.find("rate_limit") != std::string::npos || t == "insufficient_quota")
        return LlmErrorKind::RateLimited;
    if (t.find("overloaded") != std::string::npos || t == "api_error" || t == "server_error")
        return LlmErrorKind::Server;
    if (t.find("timeout") != std::string::npos)
        return LlmErrorKind::Timeout;
    if (t.find("invalid_request") != std::string::npos ||
        t.find("not_found") != std::string::npos || t.find("too_large") != std::string::npos)
        return LlmErrorKind::InvalidRequest;
    return std::nullopt;
}

std::string stringField(const nlohmann::json& object, const char* name) {
    if (object.is_object() && object.contains(name)) {
        const auto& value = object[name];
        if (value.is_string())
            return value.get<std::string>();
        if (value.is_number_integer())
            return std::to_string(value.get<long long>());
    }
    return {};
}

std::string prefixed(std::string_view endpoint, std::string_view text) {
    return endpoint.empty() ? std::string(text) : std::string(endpoint) + ": " + std::string(text);
}

// What the APIs and the common local servers (vLLM, llama.cpp, Ollama's OpenAI endpoint) say when
// a request does not fit the context window; each answers it as a plain 400 (or 413).
bool saysContextTooLong(std::string_view text) {
    const std::string t = asciiLowerCase(text);
    for (const char* phrase : {"context_length_exceeded", "maximum context length",
                               "context window", "prompt is too long", "input is too long",
                               "too many tokens", "exceeds the available context"})
        if (t.find(phrase) != std::string::npos)
            return true;
    return false;
}

bool isTransient(LlmErrorKind kind) {
    return kind == LlmErrorKind::RateLimited || kind == LlmErrorKind::Server ||
           kind == LlmErrorKind::Timeout;
}

} // namespace

std::optional<std::chrono::milliseconds> retryAfterFrom(const HttpResponse& response) {
    // A server can ask for any number; converting seconds to milliseconds overflowed past about
    // 9.2e15 s and wrapped to a short wait. A year is far beyond any wait a client honours, so
    // capping there keeps "wait too long, give up" while the arithmetic stays in range.
    constexpr long long kLongestSeconds = 365LL * 24 * 3600;
    if (auto ms = response.header("retry-after-ms"))
        if (auto value = parseInteger(*ms))
            return std::chrono::milliseconds(std::min(*value, kLongestSeconds * 1000));
    const auto text = response.header("retry-after");
    if (!text)
        return std::nullopt;
    if (auto value = parseInteger(*text))
        return std::chrono::seconds(std::min(*value, kLongestSeconds));
    const time_t when = curl_getdate(text->c_str(), nullptr);
    if (when < 0)
        return std::nullopt;
    const time_t now = std::time(nullptr);
    return std::chrono::seconds(when > now ? when - now : 0);
}

std::string serverErrorText(std::string_view body) {
    const auto json = parseBoundedJson(body);
    if (json.is_object()) {
        const auto& error = json.contains("error") ? json["error"] : json;
        if (error.is_string())
            return excerptOf(error.get<std::string>());
        for (const char* field : {"message", "detail"}) {
            std::string text = stringField(error, field);
            if (!text.empty())
                return excerptOf(text);
        }
        if (json.contains("detail") && !json["detail"].is_string())
            return excerptOf(json["detail"].dump());
    }
    return excerptOf(body);
}

LlmError llmErrorFromHttp(const HttpResponse& response, std::string_view endpoint) {
    const std::string where(endpoint);
    LlmError error;
    switch (response.failure) {
    case HttpFailure::None:
        break;
    case HttpFailure::Cancelled:
        return {LlmErrorKind::Cancelled, "cancelled"};
    case HttpFailure::TimedOut:
        return {LlmErrorKind::Timeout, where + ": timed out: " + response.error,
                /*retryable=*/true};
    case HttpFailure::CouldNotConnect:
        // Usually a wrong base URL or a server that is not running: retrying will not help.
        return {LlmErrorKind::Network, where + ": cannot connect: " + response.error};
    case HttpFailure::Interrupted:
        return {LlmErrorKind::Network,
                where +
                    ": the connection broke before the response was complete: " + response.error,
                /*retryable=*/true};
    case HttpFailure::StoppedByReceiver:
    case HttpFailure::Other:
        return {LlmErrorKind::Network, where + ": " + response.error};
    }

    const long status = response.status;
    const std::string quoted = serverErrorText(response.body);
    error.httpStatus = status;
    error.message = where + ": HTTP " + std::to_string(status);
    if (!quoted.empty())
        error.message += ": " + quoted;
    if (status == 401 || status == 403) {
        error.kind = LlmErrorKind::Auth;
    } else if (status == 429) {
        error.kind = LlmErrorKind::RateLimited;
        error.retryAfter = retryAfterFrom(response);
        // Out of credits also answers 429, but no amount of waiting fixes it.
        error.retryable = response.body.find("insufficient_quota") == std::string::npos;
    } else if (status == 408) {
        error.kind = LlmErrorKind::Timeout;
        error.retryable = true;
    } else if (status >= 500) {
        error.kind = LlmErrorKind::Server;
        error.retryAfter = retryAfterFrom(response);
        error.retryable = true;
    } else if ((status == 400 || status == 413) && saysContextTooLong(response.body)) {
        error.kind = LlmErrorKind::ContextTooLong;
    } else {
        error.kind = LlmErrorKind::InvalidRequest;
        if (status == 404)
            error.message += " (check the base URL and the model name)";
    }
    return error;
}

LlmError llmErrorFromApiError(const nlohmann::json& error, std::string_view endpoint) {
    std::string type = stringField(error, "type");
    std::string code = stringField(error, "code");
    std::string message = stringField(error, "message");
    if (message.empty())
        message = excerptOf(error.dump());
    auto kind = kindForApiErrorType(type);
    if (!kind)
        kind = kindForApiErrorType(code);
    if (code == "context_length_exceeded" || saysContextTooLong(message))
        kind = LlmErrorKind::ContextTooLong;
    LlmError result{kind.value_or(LlmErrorKind::Server),
                    prefixed(endpoint, (type.empty() ? "" : type + ": ") + excerptOf(message))};
    result.retryable =
        isTransient(result.kind) && type != "insufficient_quota" && code != "insufficient_quota";
    return result;
}

LlmError malformedResponse(std::string_view endpoint, std::string_view detail,
                           std::string_view excerpt) {
    LlmError error{LlmErrorKind::MalformedResponse,
                   prefixed(endpoint, "malformed response: " + std::string(detail))};
    if (!excerpt.empty())
        error.message += " in \"" + excerptOf(excerpt, 120) + "\"";
    return error;
}

} // namespace kwb::agent
