#include "agent/llm/retrying_provider.h"

#include <algorithm>

namespace kwb::agent {
namespace {

// Forwards to the caller's sink and remembers whether any output went through.
class OutputWatchingSink final : public StreamSink {
public:
    explicit OutputWatchingSink(StreamSink& target) : target_(target) {}

    void onTextDelta(std::string_view text) override {
        delivered_ = true;
        target_.onTextDelta(text);
    }
    void onToolCallStart(int index, const std::string& id, const std::string& name) override {
        delivered_ = true;
        target_.onToolCallStart(index, id, name);
    }
    void onToolCallArgumentsDelta(int index, std::string_view fragment) override {
        delivered_ = true;
        target_.onToolCallArgumentsDelta(index, fragment);
    }
    void onRetry(int nextAttempt, std::chrono::milliseconds delay,
                 const LlmError& reason) override {
        target_.onRetry(nextAttempt, delay, reason);
    }
    bool delivered() const { return delivered_; }

private:
    StreamSink& target_;
    bool delivered_ = false;
};

std::string seconds(std::chrono::milliseconds duration) {
    const auto tenths = (duration.count() + 50) / 100;
    return std::to_string(tenths / 10) + (tenths % 10 ? "." + std::to_string(tenths % 10) : "") +
           " s";
}

LlmError cancelled(int attempts) {
    LlmError error{LlmErrorKind::Cancelled, "cancelled"};
    error.attempts = attempts;
    return error;
}

} // namespace

RetryingProvider::RetryingProvider(std::unique_ptr<LlmProvider> inner, RetryPolicy policy,
                                   Sleeper sleeper)
    : inner_(std::move(inner)), policy_(policy), sleeper_(std::move(sleeper)),
      random_(std::random_device{}()) {}

CompletionOutcome RetryingProvider::complete(const CompletionRequest& request, StreamSink& sink,
                                             std::stop_token stop) {
    const int maxAttempts = std::max(1, policy_.maxAttempts);
    for (int attempt = 1;; ++attempt) {
        OutputWatchingSink watched(sink);
        CompletionOutcome outcome = inner_->complete(request, watched, stop);
        if (outcome.ok()) {
            outcome.result().attempts = attempt;
            return outcome;
        }
        LlmError& error = outcome.error();
        error.attempts = attempt;
        error.afterOutput = watched.delivered();
        if (!error.retryable || error.afterOutput || stop.stop_requested())
            return outcome;
        if (attempt >= maxAttempts) {
            if (maxAttempts > 1)
                error.message = "gave up after " + std::to_string(attempt) +
                                " attempts; the last one failed: " + error.message;
            return outcome;
        }
        if (error.retryAfter && *error.retryAfter > policy_.maxRetryAfter) {
            error.message += " (the server asks to wait " + seconds(*error.retryAfter) +
                             ", longer than the " + seconds(policy_.maxRetryAfter) +
                             " this client waits)";
            return outcome;
        }
        double unitRandom = 0;
        {
            std::lock_guard lock(randomMutex_);
            unitRandom = std::uniform_real_distribution<double>(0.0, 1.0)(random_);
        }
        const auto delay = backoffDelay(policy_, attempt, error.retryAfter, unitRandom);
        sink.onRetry(attempt + 1, delay, error);
        if (!sleeper_(delay, stop))
            return cancelled(attempt);
    }
}

} // namespace kwb::agent
