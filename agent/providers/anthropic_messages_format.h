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

// The Anthropic Messages wire format (anthropic-version 2023-06-01).

// System messages become the top-level `system`; tool results become tool_result blocks in a
// user message, and consecutive messages of one role merge, because the API wants user and
// assistant turns to alternate. The API requires max_tokens, hence the default.
nlohmann::json anthropicMessagesRequestBody(const CompletionRequest& request,
                                            const std::string& model, int defaultMaxTokens);

StopReason anthropicStopReason(std::string_view stopReason);

// A whole (non-streamed) message body.
CompletionOutcome parseAnthropicMessagesResponse(std::string_view body);

// message_start, content_block_start/_delta/_stop (text_delta, input_json_delta),
// message_delta (stop_reason, usage), message_stop, ping and error events.
class AnthropicMessagesStreamDecoder final : public StreamDecoder {
public:
    explicit AnthropicMessagesStreamDecoder(StreamSink& sink) : sink_(sink) {}

    bool onEvent(const SseEvent& event) override;
    // message_delta's stop_reason comes after the last content: a stream cut between it and
    // message_stop lost nothing of the answer.
    bool finished() const override { return stopped_ || !result_.rawStopReason.empty(); }
    const std::optional<LlmError>& failure() const override { return failure_; }
    CompletionResult takeResult() override;

private:
    bool handleEvent(const SseEvent& event);
    void readUsage(const nlohmann::json& usage);

    StreamSink& sink_;
    CompletionResult result_;
    std::map<long long, int> toolOrdinalByBlock_; // content-block index -> tool call number
    std::int64_t uncachedInput_ = 0;
    std::optional<std::int64_t> cacheRead_;
    std::int64_t cacheWrite_ = 0;
    std::int64_t output_ = 0;
    bool sawUsage_ = false;
    bool stopped_ = false;
    std::optional<LlmError> failure_;
};

} // namespace kwb::agent
