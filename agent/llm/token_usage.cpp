#include "agent/llm/token_usage.h"

namespace kwb::agent {

TokenUsage& TokenUsage::operator+=(const TokenUsage& other) {
    inputTokens += other.inputTokens;
    outputTokens += other.outputTokens;
    // A total stays "not reported" only while no completion reported it.
    if (other.cachedInputTokens)
        cachedInputTokens = cachedInputTokens.value_or(0) + *other.cachedInputTokens;
    return *this;
}

} // namespace kwb::agent
