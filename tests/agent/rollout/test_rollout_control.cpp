#include "agent/rollout/rollout_control.h"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <thread>

namespace kwb::agent {
namespace {

using namespace std::chrono_literals;

TEST(RolloutControl, APausedRunStartsNothingUntilItContinues) {
    RolloutControl control;
    control.pause();
    std::atomic<bool> passed{false};
    std::stop_source stop;
    std::jthread worker([&] { passed = control.waitWhilePaused(stop.get_token()); });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(passed.load()); // still waiting
    control.resume();
    worker.join();
    EXPECT_TRUE(passed.load());
    EXPECT_FALSE(control.paused());
}

TEST(RolloutControl, AStopEndsTheWaitOfAPausedRun) {
    RolloutControl control;
    control.pause();
    std::stop_source stop;
    std::atomic<int> result{-1};
    std::jthread worker([&] { result = control.waitWhilePaused(stop.get_token()) ? 1 : 0; });
    std::this_thread::sleep_for(50ms);
    stop.request_stop();
    worker.join();
    EXPECT_EQ(result.load(), 0);
    EXPECT_TRUE(control.paused()); // stopping is not continuing
}

TEST(RolloutControl, RunningEpisodesPauseAndContinueWithTheRun) {
    RolloutControl control;
    auto first = std::make_shared<SteeringController>();
    auto second = std::make_shared<SteeringController>();
    {
        const RolloutControl::Attachment a(&control, first);
        const RolloutControl::Attachment b(&control, second);
        control.pause();
        EXPECT_TRUE(first->pauseRequested());
        EXPECT_TRUE(second->pauseRequested());
        control.resume();
        EXPECT_FALSE(first->pauseRequested());
        EXPECT_FALSE(second->pauseRequested());
    }
    // Detached: an ended episode's steering is no longer touched.
    control.pause();
    EXPECT_FALSE(first->pauseRequested());
}

TEST(RolloutControl, AnEpisodeAttachedDuringAPauseStartsPaused) {
    RolloutControl control;
    control.pause();
    auto steering = std::make_shared<SteeringController>();
    const RolloutControl::Attachment attached(&control, steering);
    EXPECT_TRUE(steering->pauseRequested());
}

TEST(RolloutControl, WithoutAControlAnAttachmentDoesNothing) {
    auto steering = std::make_shared<SteeringController>();
    const RolloutControl::Attachment attached(nullptr, steering);
    EXPECT_FALSE(steering->pauseRequested());
}

} // namespace
} // namespace kwb::agent
