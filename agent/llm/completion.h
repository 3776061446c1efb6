#pragma once

#include "agent/llm/conversation.h"
#include "agent/llm/token_usage.h"
#include "agent/llm/tool_schema.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kwb::agent {

struct CompletionRequest {
    std::string model; // empty: the provider's configured model
    std::vector<Message> messages;
    std::vector<ToolSchema> tools;
    std::optional<int> maxTokens; // Anthropic requires one; its provider supplies a default
    std::optional<double> temperature;
    std::vector<std::string> stop;
    // Asks for deltas as they are generated. Without it the sink still receives the whole text
    // and tool calls, once, so callers handle both modes the same way.
    bool stream = true;
    // Asks for every sampled token with its log-probability (OpenAI-compatible servers), and
    // with `tokenIds` for the tokens as ids (vLLM's return_tokens_as_token_ids): what PPO needs
    // of the model's own output, without re-tokenizing it.
    bool logprobs = false;
    bool tokenIds = false;
    // The sampler's seed where the server takes one (OpenAI-compatible servers, vLLM, the local
    // model; Anthropic's API has none): a rollout's group of samples of one task is then drawn
    // reproducibly. Unset: the server's own randomness.
    std::optional<std::uint64_t> seed;
};

// One sampled token as the server reported it.
struct SampledToken {
    std::string token; // the token's text, or "token_id:<n>" as vLLM sends ids
    double logprob = 0.0;
    std::optional<std::int64_t> id; // when the server sent the token as an id
};

enum class StopReason { EndTurn, ToolUse, MaxTokens, StopSequence, ContentFilter, Unknown };

std::string_view stopReasonName(StopReason reason); // "end_turn", "tool_use", ...

struct CompletionResult {
    std::string text;
    std::vector<ToolCall> toolCalls;
    StopReason stopReason = StopReason::Unknown;
    std::string rawStopReason;        // as the API named it ("stop", "end_turn", ...)
    std::optional<TokenUsage> usage;  // empty when the server did not report it
    std::string model;                // the model that answered, as the server reports it
    int attempts = 1;                 // requests it took, retries included
    std::vector<SampledToken> tokens; // with request.logprobs, when the server gave them
};

} // namespace kwb::agent
