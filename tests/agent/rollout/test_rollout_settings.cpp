#include "agent/rollout/rollout_runner.h"

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

TEST(RolloutSettings, ARunStoredBeforeProfilesKeepsTheDefaultsItRanWith) {
    const RolloutConfig old = rolloutSettingsFromJson({{"device", "cpu"}, {"concurrency", 2}});
    EXPECT_EQ(old.evaluation.evaluationProfile, EvaluationProfile::CudaAgent);
    EXPECT_EQ(old.evaluation.checks, EvaluationOptions{}.checks);
    EXPECT_FALSE(old.evaluation.warmWorker);
    // An unknown name (a newer kwb's profile) falls back the same way.
    const RolloutConfig unknown = rolloutSettingsFromJson({{"evaluation_profile", "future"}});
    EXPECT_EQ(unknown.evaluation.evaluationProfile, EvaluationProfile::CudaAgent);
}

} // namespace
} // namespace kwb::agent
