#pragma once

#include "agent/llm/llm_error.h"
#include "agent/providers/http_client.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kwb::agent {

// How failed HTTP exchanges read as LlmErrors; shared by the HTTP providers. The messages name
// the endpoint (left out when empty) and quote the server, but are not yet redacted: the
// providers do that.

// A transport failure or a non-2xx status.
LlmError llmErrorFromHttp(const HttpResponse& response, std::string_view endpoint);

// Retry-After as delta seconds or an HTTP date, or the retry-after-ms some APIs send.
std::optional<std::chrono::milliseconds> retryAfterFrom(const HttpResponse& response);

// The human part of an error body: {"error": {"message": ...}}, {"error": "..."},
// {"message": ...} or {"detail": ...}; else the start of the body text.
std::string serverErrorText(std::string_view body);

// An error object inside a 200 reply or a stream ({"type": "overloaded_error", "message": ...}
// or OpenAI's {"message", "type", "code"}), classified by its type or code.
LlmError llmErrorFromApiError(const nlohmann::json& error, std::string_view endpoint);

// A reply that is not the API's format; `detail` says what was wrong.
LlmError malformedResponse(std::string_view endpoint, std::string_view detail,
                           std::string_view excerpt);

} // namespace kwb::agent
