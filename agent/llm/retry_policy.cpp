#include "agent/llm/retry_policy.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>

namespace kwb::agent {

std::chrono::milliseconds backoffDelay(const RetryPolicy& policy, int failedAttempt,
                                       std::optional<std::chrono::milliseconds> retryAfter,
                                       double unitRandom) {
    const double exponent = std::max(0, failedAttempt - 1);
    double delay = static_cast<double>(policy.initialDelay.count()) *
                   std::pow(std::max(1.0, policy.multiplier), exponent);
    delay = std::min(delay, static_cast<double>(policy.maxDelay.count()));
    const double jitter = std::clamp(policy.jitter, 0.0, 1.0);
    delay *= 1.0 - jitter * std::clamp(unitRandom, 0.0, 1.0);
    auto wait = std::chrono::milliseconds(static_cast<long long>(std::llround(delay)));
    if (retryAfter)
        wait = std::max(wait, *retryAfter);
    return wait;
}

bool sleepUnlessStopped(std::chrono::milliseconds duration, std::stop_token stop) {
    std::mutex mutex;
    std::condition_variable_any woken;
    std::unique_lock lock(mutex);
    woken.wait_for(lock, stop, duration, [] { return false; });
    return !stop.stop_requested();
}

} // namespace kwb::agent
