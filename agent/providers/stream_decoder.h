#pragma once

#include "agent/llm/completion.h"
#include "agent/llm/llm_error.h"
#include "agent/providers/sse_parser.h"

#include <optional>

namespace kwb::agent {

// Reads one API's streamed events into a CompletionResult, passing deltas on to the sink as
// they arrive. One decoder per response.
class StreamDecoder {
public:
    virtual ~StreamDecoder() = default;

    // Returns false once nothing more is wanted: the stream ended or broke.
    virtual bool onEvent(const SseEvent& event) = 0;
    // The API's own end marker arrived; without it the stream was cut off.
    virtual bool finished() const = 0;
    // A malformed event or an error event; its message lacks the endpoint, which the caller
    // adds.
    virtual const std::optional<LlmError>& failure() const = 0;
    virtual CompletionResult takeResult() = 0;
};

} // namespace kwb::agent
