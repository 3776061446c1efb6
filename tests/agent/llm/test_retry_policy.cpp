#include "agent/llm/retry_policy.h"
#include "agent/llm/retrying_provider.h"
#include "tests/agent/recording_sink.h"

#include <chrono>
#include <deque>
#include <gtest/gtest.h>
#include <thread>

using namespace kwb::agent;
using namespace std::chrono_literals;
using kwb::agent::test_support::RecordingSink;

namespace {

// Plays back a list of outcomes, optionally streaming some text first.
class FakeProvider final : public LlmProvider {
public:
    struct Step {
        CompletionOutcome outcome;
        std::string streamedFirst;
    };
    explicit FakeProvider(std::deque<Step> steps, int* calls)
        : steps_(std::move(steps)), calls_(calls) {}

    CompletionOutcome complete(const CompletionRequest&, StreamSink& sink,
                               std::stop_token) override {
        ++*calls_;
        Step step = std::move(steps_.front());
        steps_.pop_front();
        if (!step.streamedFirst.empty())
            sink.onTextDelta(step.streamedFirst);
        return step.outcome;
    }
    std::string describe() const override { return "fake"; }

private:
    std::deque<Step> steps_;
    int* calls_;
};

CompletionResult answer(const std::string& text) {
    CompletionResult result;
    result.text = text;
    return result;
}

LlmError transient(LlmErrorKind kind = LlmErrorKind::Server) {
    return LlmError(kind, "boom", /*retryable=*/true);
}

RetryPolicy fastPolicy(int attempts) {
    RetryPolicy policy;
    policy.maxAttempts = attempts;
    policy.initialDelay = 100ms;
    policy.maxDelay = 1000ms;
    policy.jitter = 0.0;
    return policy;
}

struct RecordingSleeper {
    std::vector<std::chrono::milliseconds>* delays;
    bool operator()(std::chrono::milliseconds d, std::stop_token) const {
        delays->push_back(d);
        return true;
    }
};

} // namespace

TEST(RetryPolicy, BackoffGrowsExponentiallyUpToTheCap) {
    RetryPolicy policy = fastPolicy(10);
    EXPECT_EQ(backoffDelay(policy, 1, std::nullopt, 0.0), 100ms);
    EXPECT_EQ(backoffDelay(policy, 2, std::nullopt, 0.0), 200ms);
    EXPECT_EQ(backoffDelay(policy, 3, std::nullopt, 0.0), 400ms);
    EXPECT_EQ(backoffDelay(policy, 5, std::nullopt, 0.0), 1000ms);
    EXPECT_EQ(backoffDelay(policy, 50, std::nullopt, 0.0), 1000ms);
}

TEST(RetryPolicy, JitterOnlyShortensWithinItsFraction) {
    RetryPolicy policy = fastPolicy(10);
    policy.jitter = 0.5;
    EXPECT_EQ(backoffDelay(policy, 2, std::nullopt, 0.0), 200ms);
    EXPECT_EQ(backoffDelay(policy, 2, std::nullopt, 0.5), 150ms);
    EXPECT_EQ(backoffDelay(policy, 2, std::nullopt, 0.999), 100ms);
}

TEST(RetryPolicy, RetryAfterIsAFloor) {
    RetryPolicy policy = fastPolicy(10);
    EXPECT_EQ(backoffDelay(policy, 1, 7000ms, 0.0), 7000ms);
    EXPECT_EQ(backoffDelay(policy, 3, 10ms, 0.0), 400ms);
}

TEST(RetryPolicy, RealSleepEndsAtOnceWhenStopped) {
    std::stop_source source;
    std::jthread stopper([&] {
        std::this_thread::sleep_for(50ms);
        source.request_stop();
    });
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(sleepUnlessStopped(10s, source.get_token()));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
    EXPECT_TRUE(sleepUnlessStopped(1ms, std::stop_token()));
}

TEST(RetryingProvider, RetriesTransientFailuresThenSucceeds) {
    int calls = 0;
    std::vector<std::chrono::milliseconds> delays;
    std::deque<FakeProvider::Step> steps;
    steps.push_back({transient(), ""});
    steps.push_back({transient(LlmErrorKind::Timeout), ""});
    steps.push_back({answer("ok"), ""});
    RetryingProvider provider(std::make_unique<FakeProvider>(std::move(steps), &calls),
                              fastPolicy(4), RecordingSleeper{&delays});
    RecordingSink sink;
    auto outcome = provider.complete({}, sink, {});
    ASSERT_TRUE(outcome.ok()) << outcome.error().describe();
    EXPECT_EQ(outcome.result().attempts, 3);
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(delays, (std::vector<std::chrono::milliseconds>{100ms, 200ms}));
    ASSERT_EQ(sink.retries.size(), 2u);
    EXPECT_EQ(sink.retries[0].nextAttempt, 2);
    EXPECT_EQ(sink.retries[1].reason.kind, LlmErrorKind::Timeout);
}

TEST(RetryingProvider, DoesNotRetryPermanentFailures) {
    int calls = 0;
    std::vector<std::chrono::milliseconds> delays;
    std::deque<FakeProvider::Step> steps;
    steps.push_back({LlmError(LlmErrorKind::Auth, "bad key"), ""});
    RetryingProvider provider(std::make_unique<FakeProvider>(std::move(steps), &calls),
                              fastPolicy(4), RecordingSleeper{&delays});
    NullStreamSink sink;
    auto outcome = provider.complete({}, sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::Auth);
    EXPECT_EQ(outcome.error().attempts, 1);
    EXPECT_EQ(calls, 1);
    EXPECT_TRUE(delays.empty());
}

TEST(RetryingProvider, NoRetryOnceOutputReachedTheSink) {
    int calls = 0;
    std::vector<std::chrono::milliseconds> delays;
    std::deque<FakeProvider::Step> steps;
    steps.push_back({transient(), "half an answ"});
    steps.push_back({answer("never asked for"), ""});
    RetryingProvider provider(std::make_unique<FakeProvider>(std::move(steps), &calls),
                              fastPolicy(4), RecordingSleeper{&delays});
    RecordingSink sink;
    auto outcome = provider.complete({}, sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(sink.text, "half an answ");
}

TEST(RetryingProvider, GivesUpAfterMaxAttemptsWithAClearMessage) {
    int calls = 0;
    std::vector<std::chrono::milliseconds> delays;
    std::deque<FakeProvider::Step> steps;
    for (int i = 0; i < 3; ++i)
        steps.push_back({transient(), ""});
    RetryingProvider provider(std::make_unique<FakeProvider>(std::move(steps), &calls),
                              fastPolicy(3), RecordingSleeper{&delays});
    NullStreamSink sink;
    auto outcome = provider.complete({}, sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(outcome.error().attempts, 3);
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::Server);
    EXPECT_NE(outcome.error().message.find("gave up after 3 attempts"), std::string::npos)
        << outcome.error().message;
}

TEST(RetryingProvider, ARetryAfterBeyondTheLimitIsNotWaitedFor) {
    int calls = 0;
    std::vector<std::chrono::milliseconds> delays;
    LlmError limited = transient(LlmErrorKind::RateLimited);
    limited.retryAfter = 3600s;
    std::deque<FakeProvider::Step> steps;
    steps.push_back({limited, ""});
    RetryingProvider provider(std::make_unique<FakeProvider>(std::move(steps), &calls),
                              fastPolicy(4), RecordingSleeper{&delays});
    NullStreamSink sink;
    auto outcome = provider.complete({}, sink, {});
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::RateLimited);
    EXPECT_TRUE(delays.empty());
    EXPECT_NE(outcome.error().message.find("3600 s"), std::string::npos) << outcome.error().message;
}

TEST(RetryingProvider, AStopDuringTheWaitCancels) {
    int calls = 0;
    std::deque<FakeProvider::Step> steps;
    steps.push_back({transient(), ""});
    steps.push_back({answer("too late"), ""});
    RetryPolicy policy = fastPolicy(4);
    policy.initialDelay = 30s;
    RetryingProvider provider(std::make_unique<FakeProvider>(std::move(steps), &calls), policy);
    std::stop_source source;
    RecordingSink sink;
    std::jthread stopper([&] {
        sink.waitForRetry(5s);
        source.request_stop();
    });
    const auto start = std::chrono::steady_clock::now();
    auto outcome = provider.complete({}, sink, source.get_token());
    ASSERT_FALSE(outcome.ok());
    EXPECT_EQ(outcome.error().kind, LlmErrorKind::Cancelled);
    EXPECT_EQ(calls, 1);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}
