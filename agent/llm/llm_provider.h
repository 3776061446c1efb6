#pragma once

#include "agent/llm/completion.h"
#include "agent/llm/completion_outcome.h"
#include "agent/llm/stream_sink.h"

#include <stop_token>
#include <string>

namespace kwb::agent {

// Anything that turns a conversation into the next assistant message: a remote API over HTTP
// today, an in-process local model later. Nothing here assumes HTTP, so a local model only has
// to stream its tokens into the sink, watch the stop token and report its own errors.
class LlmProvider {
public:
    virtual ~LlmProvider() = default;

    // Blocks until the completion ends, fails or `stop` fires; returns promptly (well under a
    // second) after a stop with LlmErrorKind::Cancelled. Deltas reach `sink` before the call
    // returns. Never throws. One call at a time per provider: concurrent calls wait.
    virtual CompletionOutcome complete(const CompletionRequest& request, StreamSink& sink,
                                       std::stop_token stop) = 0;

    // "openai-compatible http://127.0.0.1:8000/v1 (qwen2.5-coder)": for logs and trajectories;
    // never holds the API key.
    virtual std::string describe() const = 0;
};

} // namespace kwb::agent
