// Cached eager / torch.compile timings: an entry comes back as stored, and an entry without
// torch.compile's timing is not reused (a reward would otherwise be measured against eager alone
// for as long as the cache lives, whatever made compile fail that once).
#include "engine/evaluation/baseline_cache.h"
#include "engine/evaluation/evaluator.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>

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

} // namespace
} // namespace kwb::test
