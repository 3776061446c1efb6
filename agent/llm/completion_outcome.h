#pragma once

#include "agent/llm/completion.h"
#include "agent/llm/llm_error.h"

#include <utility>
#include <variant>

namespace kwb::agent {

// What complete() returns: a result or an error, never an exception (C++20 has no
// std::expected).
class CompletionOutcome {
public:
    CompletionOutcome(CompletionResult result) : value_(std::move(result)) {}
    CompletionOutcome(LlmError error) : value_(std::move(error)) {}

    bool ok() const { return std::holds_alternative<CompletionResult>(value_); }
    explicit operator bool() const { return ok(); }

    // Calling the wrong one throws std::bad_variant_access.
    const CompletionResult& result() const { return std::get<CompletionResult>(value_); }
    CompletionResult& result() { return std::get<CompletionResult>(value_); }
    const LlmError& error() const { return std::get<LlmError>(value_); }
    LlmError& error() { return std::get<LlmError>(value_); }

private:
    std::variant<CompletionResult, LlmError> value_;
};

} // namespace kwb::agent
