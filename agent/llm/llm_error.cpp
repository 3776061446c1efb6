#include "agent/llm/llm_error.h"

namespace kwb::agent {

std::string_view errorKindName(LlmErrorKind kind) {
    switch (kind) {
    case LlmErrorKind::Auth:
        return "auth";
    case LlmErrorKind::RateLimited:
        return "rate_limited";
    case LlmErrorKind::Server:
        return "server";
    case LlmErrorKind::Timeout:
        return "timeout";
    case LlmErrorKind::MalformedResponse:
        return "malformed_response";
    case LlmErrorKind::Cancelled:
        return "cancelled";
    case LlmErrorKind::Network:
        return "network";
    case LlmErrorKind::InvalidRequest:
        return "invalid_request";
    case LlmErrorKind::ContextTooLong:
        return "context_too_long";
    }
    return "network";
}

std::string LlmError::describe() const {
    return std::string(errorKindName(kind)) + ": " + message;
}

} // namespace kwb::agent
