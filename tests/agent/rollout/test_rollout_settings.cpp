#include "agent/rollout/rollout_runner.h"

#include <cstdlib>
#include <gtest/gtest.h>

namespace kwb::agent {
namespace {

TEST(RolloutSettings, RolloutsEvaluateByTheRlProfileUnlessTold) {
    const RolloutConfig fresh;
    EXPECT_EQ(fresh.evaluation.evaluationProfile, EvaluationProfile::Rl);
    EXPECT_TRUE(fresh.evaluation.warmWorker);
    EXPECT_LT(fresh.evaluation.checks, EvaluationOptions{}.checks);
}

TEST(RolloutSettings, AResumedRunKeepsItsProfileAndDevice) {
    RolloutConfig config;
    applyEvaluationProfile(config.evaluation, EvaluationProfile::KernelBench);
    config.evaluation.device = DeviceChoice::Cpu;
    config.concurrency = 3;
    const RolloutConfig back = rolloutSettingsFromJson(rolloutSettingsToJson(config));
    EXPECT_EQ(back.evaluation.evaluationProfile, EvaluationProfile::KernelBench);
    EXPECT_EQ(back.evaluation.dtypeTolerances, config.evaluation.dtypeTolerances);
    EXPECT_EQ(back.evaluation.device, DeviceChoice::Cpu);
    EXPECT_EQ(back.concurrency, 3);
}

// The runs table never holds a key from the base URL; a resume in the same environment gets it
// back.
TEST(RolloutSettings, AKeyInTheBaseUrlIsStoredAsItsVariable) {
    ::setenv("KWB_TEST_ROLLOUT_API_KEY", "gsk_GROQSECRETVALUE123456789", 1);
    RolloutConfig config;
    config.provider.baseUrl = "http://user:gsk_GROQSECRETVALUE123456789@127.0.0.1:9/v1";
    const nlohmann::json stored = rolloutSettingsToJson(config);
    EXPECT_EQ(stored.dump().find("gsk_GROQSECRETVALUE123456789"), std::string::npos)
        << stored.dump();
    EXPECT_EQ(stored["base_url"], "http://user:${KWB_TEST_ROLLOUT_API_KEY}@127.0.0.1:9/v1");
    EXPECT_EQ(rolloutSettingsFromJson(stored).provider.baseUrl, config.provider.baseUrl);
    ::unsetenv("KWB_TEST_ROLLOUT_API_KEY");
}

TEST(RolloutSettings, ARunStoredBeforeProfilesKeepsTheDefaultsItRanWith) {
    const RolloutConfig old = rolloutSettingsFromJson({{"device", "cpu"}, {"concurrency", 2}});
    EXPECT_EQ(old.evaluation.evaluationProfile, EvaluationProfile::CudaAgent);
    EXPECT_EQ(old.evaluation.checks, EvaluationOptions{}.checks);
    EXPECT_FALSE(old.evaluation.warmWorker);
    // An unknown name (a newer kwb's profile) falls back the same way.
    const RolloutConfig unknown = rolloutSettingsFromJson({{"evaluation_profile", "future"}});
    EXPECT_EQ(unknown.evaluation.evaluationProfile, EvaluationProfile::CudaAgent);
}

TEST(RolloutSettings, TheRunsSeedIsKeptAndEachSampleDrawsItsOwn) {
    RolloutConfig config;
    config.seed = 0xfedcba9876543210ULL;
    EXPECT_EQ(rolloutSettingsFromJson(rolloutSettingsToJson(config)).seed, config.seed);
    EXPECT_EQ(rolloutSettingsFromJson({{"concurrency", 2}}).seed, 0u)
        << "a run stored before seeds";
    // A group's samples differ, as do tasks; the same (seed, task, sample) always gives the same
    // seed, on any build (FNV-1a and splitmix64: the value below is the function's, fixed).
    const std::uint64_t s0 = episodeSeed(config.seed, "level1/1_relu", 0);
    EXPECT_NE(s0, episodeSeed(config.seed, "level1/1_relu", 1));
    EXPECT_NE(s0, episodeSeed(config.seed, "level1/2_gelu", 0));
    EXPECT_NE(s0, episodeSeed(config.seed + 1, "level1/1_relu", 0));
    EXPECT_EQ(s0, episodeSeed(config.seed, "level1/1_relu", 0));
    EXPECT_EQ(episodeSeed(1, "a", 0), 0x8097ca68b9cc797bULL);
}

TEST(RolloutRunDirectory, TwoStoresInOneFolderNeverShareARunFolder) {
    // Both stores' first run is run 1: one folder for both let their locks, task snapshots and
    // workspaces collide (an outside test, 2026-12-05).
    const auto a = runDirectory("/data/rollouts/a.db", 1);
    const auto b = runDirectory("/data/rollouts/b.db", 1);
    EXPECT_NE(a, b);
    EXPECT_EQ(a, std::filesystem::path("/data/rollouts/runs/a.db/run-1"));
    EXPECT_NE(runDirectory("/data/rollouts/a.db", 2), a);
}

} // namespace
} // namespace kwb::agent
