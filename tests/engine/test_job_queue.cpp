#include "engine/process/job_queue.h"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

using namespace kwb;
using namespace std::chrono_literals;

TEST(JobQueue, RunsJobsInOrderOnOneThread) {
    JobQueue queue;
    std::mutex mutex;
    std::vector<int> order;
    std::set<std::thread::id> threads;
    for (int i = 0; i < 20; ++i)
        queue.submit("", [&, i](std::stop_token) {
            std::lock_guard lock(mutex);
            order.push_back(i);
            threads.insert(std::this_thread::get_id());
        });
    queue.waitIdle();
    ASSERT_EQ(order.size(), 20u);
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(order[static_cast<size_t>(i)], i);
    EXPECT_EQ(threads.size(), 1u);
    EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u);
}

TEST(JobQueue, NewerJobWithSameTagReplacesWaitingOneAndStopsRunningOne) {
    JobQueue queue;
    std::atomic<bool> firstStarted{false}, firstSawStop{false};
    std::atomic<int> ran{0};
    std::mutex mutex;
    std::vector<int> hoverResults;
    queue.submit("hover", [&](std::stop_token stop) {
        firstStarted = true;
        for (int i = 0; i < 500 && !stop.stop_requested(); ++i)
            std::this_thread::sleep_for(2ms);
        firstSawStop = stop.stop_requested();
    });
    while (!firstStarted)
        std::this_thread::sleep_for(1ms);
    std::size_t replaced = 99;
    for (int i = 0; i < 5; ++i) {
        queue.submit(
            "hover",
            [&, i](std::stop_token) {
                ++ran;
                std::lock_guard lock(mutex);
                hoverResults.push_back(i);
            },
            &replaced);
        EXPECT_EQ(replaced, i == 0 ? 0u : 1u);
    }
    queue.waitIdle();
    EXPECT_TRUE(firstSawStop);
    EXPECT_EQ(ran.load(), 1);
    ASSERT_EQ(hoverResults.size(), 1u);
    EXPECT_EQ(hoverResults[0], 4);
}

TEST(JobQueue, IdsIncreaseAndOtherTagsAreKept) {
    JobQueue queue;
    std::atomic<int> ran{0};
    std::atomic<bool> release{false}, blocking{false};
    queue.submit("block", [&](std::stop_token) {
        blocking = true;
        while (!release)
            std::this_thread::sleep_for(1ms);
    });
    while (!blocking)
        std::this_thread::sleep_for(1ms);
    auto a = queue.submit("a", [&](std::stop_token) { ++ran; });
    auto b = queue.submit("b", [&](std::stop_token) { ++ran; });
    EXPECT_LT(a, b);
    EXPECT_EQ(queue.pendingCount(), 2u);
    release = true;
    queue.waitIdle();
    EXPECT_EQ(ran.load(), 2);
}
