#pragma once

#include <cstdint>
#include <optional>

namespace kwb::agent {

// Tokens one completion cost, normalised across APIs: inputTokens counts every prompt token,
// cached or not (OpenAI's prompt_tokens; Anthropic's input_tokens plus its cache reads and
// writes), so costs and context use compare across providers.
struct TokenUsage {
    std::int64_t inputTokens = 0;
    std::int64_t outputTokens = 0;
    std::optional<std::int64_t> cachedInputTokens; // prompt tokens read from a cache, if reported

    TokenUsage& operator+=(const TokenUsage& other);
    bool operator==(const TokenUsage&) const = default;
};

} // namespace kwb::agent
