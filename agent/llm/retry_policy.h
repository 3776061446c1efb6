#pragma once

#include "agent/llm/llm_error.h"

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>

namespace kwb::agent {

struct RetryPolicy {
    int maxAttempts = 4; // the first try included; 1 turns retries off
    std::chrono::milliseconds initialDelay{1000};
    double multiplier = 2.0;
    std::chrono::milliseconds maxDelay{30000};
    // Each delay is drawn from [delay * (1 - jitter), delay], so clients that failed together
    // do not all come back in the same instant.
    double jitter = 0.25;
    // A Retry-After up to this long is waited out (the wait is shown through the sink's
    // onRetry, and a stop ends it at once): giving up after a minute ended rollout episodes
    // whose provider asked for two. Longer means the quota is gone for the day: give up.
    std::chrono::milliseconds maxRetryAfter{15 * 60 * 1000};
};

// The wait before attempt `failedAttempt + 1`; `unitRandom` in [0, 1) draws the jitter. A
// Retry-After from the server is a floor: waiting less would only earn another 429.
std::chrono::milliseconds backoffDelay(const RetryPolicy& policy, int failedAttempt,
                                       std::optional<std::chrono::milliseconds> retryAfter,
                                       double unitRandom);

// Waits `duration` unless `stop` fires first; returns false when stopped. Injectable so tests
// neither wait for real nor lose the cancellation path.
using Sleeper = std::function<bool(std::chrono::milliseconds duration, std::stop_token stop)>;

// The real one: a condition-variable wait that a stop request interrupts at once.
bool sleepUnlessStopped(std::chrono::milliseconds duration, std::stop_token stop);

} // namespace kwb::agent
