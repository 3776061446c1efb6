#pragma once

#include "agent/llm/llm_provider.h"
#include "agent/llm/retry_policy.h"

#include <memory>
#include <mutex>
#include <random>

namespace kwb::agent {

// Wraps any provider and repeats a failed completion while the failure is transient (the error
// says retryable: 429, 5xx, timeouts, cut-off streams) and nothing has reached the caller's
// sink yet: text already shown cannot be taken back, so a failure after output is final.
class RetryingProvider final : public LlmProvider {
public:
    RetryingProvider(std::unique_ptr<LlmProvider> inner, RetryPolicy policy,
                     Sleeper sleeper = sleepUnlessStopped);

    CompletionOutcome complete(const CompletionRequest& request, StreamSink& sink,
                               std::stop_token stop) override;
    std::string describe() const override { return inner_->describe(); }

private:
    std::unique_ptr<LlmProvider> inner_;
    RetryPolicy policy_;
    Sleeper sleeper_;
    std::mutex randomMutex_;
    std::mt19937_64 random_;
};

} // namespace kwb::agent
