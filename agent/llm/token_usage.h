#pragma once

#include <cstdint>
#include <optional>

namespace kwb::agent {

// Tokens one completion cost, normalised across APIs: inputTokens counts every prompt token,
// cached or not (OpenAI's prompt_tokens; Anthropic's input_tokens plus its cache reads and
// writes), so costs and context use compare across providers.
//
// The counts come from the server, so they are kept sane wherever they enter or add up: a count
// is never negative and never above kMaxTokens (no real total comes near it), so sums cannot
// overflow and a cost cannot turn negative.
struct TokenUsage {
    static constexpr std::int64_t kMaxTokens = 1'000'000'000'000'000; // 1e15

    // `count` limited to [0, kMaxTokens].
    static std::int64_t clamped(std::int64_t count);
    // Every count clamped, and the cached part no more than the whole input.
    TokenUsage clamped() const;

    std::int64_t inputTokens = 0;
    std::int64_t outputTokens = 0;
    std::optional<std::int64_t> cachedInputTokens; // prompt tokens read from a cache, if reported

    // What one reply can have cost: output no more than the reply's own limit (`maxOutput`, or
    // kMaxReplyOutput when none was asked for), input no more than kMaxPrompt. A server that
    // said 10^12 output tokens for a line of text turned a run's cost into millions.
    static constexpr std::int64_t kMaxReplyOutput = 1 << 21; // above any model's longest reply
    static constexpr std::int64_t kMaxPrompt = 1 << 24;      // above any model's context
    TokenUsage plausibleForOneReply(std::optional<std::int64_t> maxOutput) const;

    TokenUsage& operator+=(const TokenUsage& other);
    bool operator==(const TokenUsage&) const = default;
};

} // namespace kwb::agent
