// How an evaluation service shares the cores between the evaluations it runs at once, and the
// build slots that keep extension builds from taking them all.
#include "engine/evaluation/cpu_shares.h"

#include <atomic>
#include <chrono>
#include <future>
#include <gtest/gtest.h>
#include <thread>

namespace kwb::test {
namespace {

using namespace std::chrono_literals;

TEST(CpuShares, ADozenEvaluationsOnSixteenCoresGetAThreadEachAndBuildTwoJobsInEightSlots) {
    const CpuShares shares = cpuSharesFor(16, 12);
    EXPECT_EQ(shares.stageThreads, 1u);
    EXPECT_EQ(shares.timedStageThreads, 8u) << "a timed stage keeps what it had alone";
    EXPECT_EQ(shares.buildSlots, 8u);
    EXPECT_EQ(shares.buildJobs, 2u);
    const BuildSlots slots(shares); // as the evaluation service makes them
    EXPECT_EQ(slots.count(), 8u);
    EXPECT_EQ(slots.jobsEach(), 2u);
}

TEST(CpuShares, OneEvaluationAloneGetsTheWholeMachine) {
    const CpuShares alone = cpuSharesFor(16, 1);
    EXPECT_EQ(alone.stageThreads, 8u);
    EXPECT_EQ(alone.buildSlots, 1u);
    EXPECT_EQ(alone.buildJobs, 16u);
    const CpuShares twoCores = cpuSharesFor(2, 1);
    EXPECT_EQ(twoCores.stageThreads, 2u);
    EXPECT_EQ(twoCores.timedStageThreads, 2u);
    EXPECT_EQ(twoCores.buildSlots, 1u);
    EXPECT_EQ(twoCores.buildJobs, 2u);
}

TEST(CpuShares, SharesNeverExceedTheCoresAndNeverReachZero) {
    for (unsigned cores : {0u, 1u, 2u, 3u, 7u, 16u, 64u, 128u})
        for (unsigned running : {0u, 1u, 2u, 3u, 4u, 12u, 100u}) {
            const CpuShares s = cpuSharesFor(cores, running);
            const unsigned machine = cores == 0 ? 1 : cores;
            const unsigned evaluations = running == 0 ? 1 : running;
            SCOPED_TRACE(testing::Message() << cores << " cores, " << running << " running");
            EXPECT_GE(s.stageThreads, 1u);
            EXPECT_GE(s.timedStageThreads, s.stageThreads);
            EXPECT_GE(s.buildSlots, 1u);
            EXPECT_LE(s.buildSlots, evaluations) << "no more slots than builds at once";
            EXPECT_GE(s.buildJobs, 1u);
            EXPECT_LE(s.buildSlots * s.buildJobs, std::max(machine, 1u));
            if (evaluations <= machine) {
                EXPECT_LE(s.stageThreads * evaluations, machine);
            }
        }
}

TEST(BuildSlots, ABuildBeyondTheSlotsWaitsUntilOneIsGivenBack) {
    BuildSlots slots(2);
    auto a = slots.acquire({});
    auto b = slots.acquire({});
    ASSERT_TRUE(a && b);
    EXPECT_EQ(slots.taken(), 2u);
    std::atomic<bool> third{false};
    std::thread waiter([&] {
        auto hold = slots.acquire({});
        third = hold.has_value();
    });
    std::this_thread::sleep_for(100ms);
    EXPECT_FALSE(third.load()) << "both slots were taken";
    a.reset();
    waiter.join();
    EXPECT_TRUE(third.load());
    EXPECT_EQ(slots.taken(), 1u) << "the third build's slot went back when it ended";
}

TEST(BuildSlots, AStopEndsTheWaitAndZeroSlotsMeansOne) {
    BuildSlots slots(0);
    EXPECT_EQ(slots.count(), 1u);
    EXPECT_EQ(slots.jobsEach(), 1u);
    auto held = slots.acquire({});
    ASSERT_TRUE(held);
    std::stop_source stop;
    auto pending = std::async(std::launch::async, [&] { return slots.acquire(stop.get_token()); });
    std::this_thread::sleep_for(50ms);
    stop.request_stop();
    EXPECT_FALSE(pending.get().has_value());
    EXPECT_EQ(slots.taken(), 1u);
}

} // namespace
} // namespace kwb::test
