#pragma once

#include "agent/llm/llm_error.h"

#include <chrono>
#include <string>
#include <string_view>

namespace kwb::agent {

// Receives a completion as it is generated. Calls come on the thread that runs complete(), in
// order. Tool calls are numbered 0, 1, ... in the order they appear in the result, whatever
// index the API used on the wire.
class StreamSink {
public:
    virtual ~StreamSink() = default;

    virtual void onTextDelta(std::string_view text) {}
    virtual void onToolCallStart(int index, const std::string& id, const std::string& name) {}
    virtual void onToolCallArgumentsDelta(int index, std::string_view jsonFragment) {}
    // Not output: a failed attempt is about to be retried after `delay`.
    virtual void onRetry(int nextAttempt, std::chrono::milliseconds delay, const LlmError& reason) {
    }
};

// For callers that only want the final result.
class NullStreamSink final : public StreamSink {};

} // namespace kwb::agent
