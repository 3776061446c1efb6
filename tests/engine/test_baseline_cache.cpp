// Cached eager / torch.compile timings: an entry comes back as stored, and an entry without
// torch.compile's timing is not reused (a reward would otherwise be measured against eager alone
// for as long as the cache lives, whatever made compile fail that once).
#include "engine/evaluation/baseline_cache.h"
#include "engine/evaluation/evaluator.h"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <gtest/gtest.h>
#include <random>
#include <thread>

namespace kwb::test {
namespace {

namespace fs = std::filesystem;

TimingStats timed(double medianMs) {
    TimingStats stats;
    stats.available = true;
    stats.medianMs = medianMs;
    stats.samples = 30;
    stats.rounds = 3;
    stats.method = "wall-clock";
    stats.roundMediansMs = {medianMs, medianMs * 1.01, medianMs * 0.99};
    return stats;
}

class BaselineCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() /
                ("kwb-baseline-cache-" + std::to_string(std::random_device{}()));
        fs::create_directories(root_);
        if (const char* old = std::getenv("KWB_CACHE_DIR"))
            saved_ = old;
        ::setenv("KWB_CACHE_DIR", (root_ / "cache").c_str(), 1);
        task_ = root_ / "task.py";
        std::ofstream(task_) << "import torch\n";
    }
    void TearDown() override {
        if (saved_)
            ::setenv("KWB_CACHE_DIR", saved_->c_str(), 1);
        else
            ::unsetenv("KWB_CACHE_DIR");
        std::error_code ec;
        fs::remove_all(root_, ec);
    }
    BaselineKey key() const {
        return baselineKeyFor(task_.string(), "cpu", "", "2.11.0", EvaluationOptions{});
    }

    fs::path root_, task_;
    std::optional<std::string> saved_;
};

TEST_F(BaselineCacheTest, AStoredEntryComesBack) {
    storeBaseline(key(), {timed(2.0), timed(1.5)});
    const auto loaded = loadBaseline(key());
    ASSERT_TRUE(loaded.has_value());
    EXPECT_DOUBLE_EQ(loaded->eager.medianMs, 2.0);
    EXPECT_DOUBLE_EQ(loaded->compiled.medianMs, 1.5);
    EXPECT_EQ(loaded->compiled.roundMediansMs.size(), 3u);
}

TEST_F(BaselineCacheTest, AnEntryWithoutTorchCompilesTimingIsTimedAgain) {
    TimingStats failed;
    failed.unavailableReason = "InductorError: File size limit exceeded";
    storeBaseline(key(), {timed(2.0), failed});
    EXPECT_FALSE(loadBaseline(key()).has_value());
}

// A baseline whose judge thread still waited on a busy host after its rounds were timed again
// would inflate every later candidate's speed-up: the next evaluation times it again instead.
TEST_F(BaselineCacheTest, BaselinesTimedOnABusyHostAreNotWorthCaching) {
    TimingStats waited = timed(3.0);
    waited.hostDisturbed = true;
    waited.roundsRetimed = 2;
    waited.hostWaitMs = 1.4;
    EXPECT_TRUE(worthCaching({timed(2.0), timed(1.5)}));
    EXPECT_FALSE(worthCaching({waited, timed(1.5)}));
    EXPECT_FALSE(worthCaching({timed(2.0), waited}));
    EXPECT_FALSE(worthCaching({TimingStats{}, timed(1.5)})) << "eager was not timed";

    // A round timed again that then ran undisturbed is fit, and its record comes back whole.
    TimingStats retimed = timed(2.0);
    retimed.roundsRetimed = 1;
    retimed.hostWaitMs = 0.1;
    ASSERT_TRUE(worthCaching({retimed, timed(1.5)}));
    storeBaseline(key(), {retimed, timed(1.5)});
    const auto loaded = loadBaseline(key());
    ASSERT_TRUE(loaded.has_value());
    EXPECT_EQ(loaded->eager.roundsRetimed, 1);
    EXPECT_DOUBLE_EQ(loaded->eager.hostWaitMs, 0.1);
    EXPECT_FALSE(loaded->eager.hostDisturbed);
}

// Evaluations of one task side by side: the second waits for the first's entry instead of timing
// the baselines again; another task's key does not wait; a stop ends the wait.
TEST_F(BaselineCacheTest, OneEvaluationAtATimeHasATasksTurnToTimeItsBaselines) {
    auto first = BaselineTurn::take(key(), {});
    ASSERT_TRUE(first.has_value());
    std::atomic<bool> secondHasTurn{false};
    std::thread second([&] {
        auto turn = BaselineTurn::take(key(), {});
        secondHasTurn = turn.has_value();
        EXPECT_TRUE(loadBaseline(key()).has_value()) << "the first stored before it let go";
    });
    const BaselineKey other =
        baselineKeyFor(task_.string(), "cpu", "", "2.12.0", EvaluationOptions{});
    EXPECT_TRUE(BaselineTurn::take(other, {}).has_value()) << "another key never waits";
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(secondHasTurn.load());
    storeBaseline(key(), {timed(2.0), timed(1.5)});
    first.reset();
    second.join();
    EXPECT_TRUE(secondHasTurn.load());

    auto held = BaselineTurn::take(key(), {});
    ASSERT_TRUE(held.has_value());
    std::stop_source stop;
    auto waiting =
        std::async(std::launch::async, [&] { return BaselineTurn::take(key(), stop.get_token()); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    stop.request_stop();
    EXPECT_FALSE(waiting.get().has_value());
}

} // namespace
} // namespace kwb::test
