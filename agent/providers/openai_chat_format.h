#pragma once

#include "agent/llm/completion.h"
#include "agent/llm/completion_outcome.h"
#include "agent/llm/stream_sink.h"
#include "agent/providers/stream_decoder.h"

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kwb::agent {

// The OpenAI Chat Completions wire format, as OpenAI, vLLM, SGLang, llama.cpp server and Ollama
// speak it.

nlohmann::json openAiChatRequestBody(const CompletionRequest& request, const std::string& model);

// "stop" -> EndTurn, "tool_calls" -> ToolUse, "length" -> MaxTokens, ...; servers that answer
// "stop" after emitting tool calls get ToolUse, which is what they meant.
StopReason openAiStopReason(std::string_view finishReason, bool hasToolCalls);

// A whole (non-streamed) chat.completion body.
CompletionOutcome parseOpenAiChatResponse(std::string_view body);

// chat.completion.chunk events: text deltas, and tool-call deltas that carry an index, with
// the id and name in the first one and the arguments spread over the rest.
class OpenAiChatStreamDecoder final : public StreamDecoder {
public:
    explicit OpenAiChatStreamDecoder(StreamSink& sink) : sink_(sink) {}

    bool onEvent(const SseEvent& event) override;
    bool finished() const override { return done_ || !finishReason_.empty(); }
    const std::optional<LlmError>& failure() const override { return failure_; }
    CompletionResult takeResult() override;

private:
    bool handleEvent(const SseEvent& event);
    void onToolCallDelta(const nlohmann::json& delta);

    StreamSink& sink_;
    CompletionResult result_;
    std::map<long long, int> ordinalByWireIndex_;
    std::string finishReason_;
    bool done_ = false;
    std::optional<LlmError> failure_;
};

} // namespace kwb::agent
