#include "agent/llm/token_usage.h"

#include <algorithm>

namespace kwb::agent {

namespace {

// Both operands are in [0, kMaxTokens] and 2 * kMaxTokens fits int64, so the sum cannot wrap.
std::int64_t saturatingSum(std::int64_t a, std::int64_t b) {
    return TokenUsage::clamped(TokenUsage::clamped(a) + TokenUsage::clamped(b));
}

} // namespace

std::int64_t TokenUsage::clamped(std::int64_t count) {
    return std::clamp<std::int64_t>(count, 0, kMaxTokens);
}

TokenUsage TokenUsage::clamped() const {
    TokenUsage out;
    out.inputTokens = clamped(inputTokens);
    out.outputTokens = clamped(outputTokens);
    if (cachedInputTokens)
        out.cachedInputTokens = std::min(clamped(*cachedInputTokens), out.inputTokens);
    return out;
}

TokenUsage TokenUsage::plausibleForOneReply(std::optional<std::int64_t> maxOutput) const {
    TokenUsage out = clamped();
    out.outputTokens = std::min(out.outputTokens, maxOutput ? std::max<std::int64_t>(*maxOutput, 0)
                                                            : kMaxReplyOutput);
    out.inputTokens = std::min(out.inputTokens, kMaxPrompt);
    if (out.cachedInputTokens)
        out.cachedInputTokens = std::min(*out.cachedInputTokens, out.inputTokens);
    return out;
}

TokenUsage& TokenUsage::operator+=(const TokenUsage& other) {
    inputTokens = saturatingSum(inputTokens, other.inputTokens);
    outputTokens = saturatingSum(outputTokens, other.outputTokens);
    // A total stays "not reported" only while no completion reported it.
    if (other.cachedInputTokens)
        cachedInputTokens = saturatingSum(cachedInputTokens.value_or(0), *other.cachedInputTokens);
    return *this;
}

} // namespace kwb::agent
