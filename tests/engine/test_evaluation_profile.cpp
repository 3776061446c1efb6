// Evaluation profiles: whose rules an evaluation follows, and that the rules reach the verdict.
#include "engine/evaluation/evaluation_profile.h"
#include "engine/evaluation/evaluator.h"

#include <gtest/gtest.h>

using namespace kwb;

TEST(EvaluationProfile, NamesRoundTripAndUnknownNamesAreRefused) {
    for (EvaluationProfile p :
         {EvaluationProfile::CudaAgent, EvaluationProfile::KernelBench, EvaluationProfile::Rl})
        EXPECT_EQ(evaluationProfileFrom(toString(p)), p);
    EXPECT_FALSE(evaluationProfileFrom("KernelBench").has_value());
    EXPECT_FALSE(evaluationProfileFrom("").has_value());
}

TEST(EvaluationProfile, KernelBenchTakesItsTolerancePerPrecisionAndTrialCounts) {
    EvaluationOptions options;
    applyEvaluationProfile(options, EvaluationProfile::KernelBench);
    EXPECT_EQ(options.evaluationProfile, EvaluationProfile::KernelBench);
    EXPECT_EQ(options.dtypeTolerances.at("float32"), 1e-4);
    EXPECT_EQ(options.dtypeTolerances.at("float16"), 1e-2);
    EXPECT_EQ(options.dtypeTolerances.at("bfloat16"), 1e-2);
    EXPECT_EQ(options.checks, 5);
    EXPECT_EQ(options.iterations * options.maxRounds, 100);
    EXPECT_TRUE(options.l2Flush);
    // KernelBench's runtime is the mean of its trials.
    EXPECT_EQ(options.reward.statistic, TimingStatistic::Mean);
    // Its timed trials record nothing; the profiles whose rewards train or guide keep the
    // sealed census in theirs.
    EXPECT_FALSE(options.sealedCensus);
    applyEvaluationProfile(options, EvaluationProfile::Rl);
    EXPECT_TRUE(options.sealedCensus);
    applyEvaluationProfile(options, EvaluationProfile::CudaAgent);
    EXPECT_TRUE(options.sealedCensus);
}

TEST(EvaluationProfile, SwitchingProfilesLeavesNothingOfThePreviousOne) {
    EvaluationOptions options;
    applyEvaluationProfile(options, EvaluationProfile::KernelBench);
    applyEvaluationProfile(options, EvaluationProfile::CudaAgent);
    const EvaluationOptions defaults;
    EXPECT_TRUE(options.dtypeTolerances.empty());
    EXPECT_EQ(options.atol, 1e-2);
    EXPECT_EQ(options.rtol, 1e-2);
    EXPECT_EQ(options.iterations, defaults.iterations);
    EXPECT_EQ(options.maxRounds, defaults.maxRounds);
    EXPECT_EQ(options.reward.statistic, TimingStatistic::Median);
}

TEST(EvaluationProfile, RlKeepsTheVerdictRulesWithASmallerTimingBudget) {
    EvaluationOptions agent, rl;
    applyEvaluationProfile(rl, EvaluationProfile::Rl);
    EXPECT_EQ(rl.atol, agent.atol);
    EXPECT_EQ(rl.rtol, agent.rtol);
    EXPECT_TRUE(rl.dtypeTolerances.empty());
    EXPECT_LT(rl.checks, agent.checks);
    EXPECT_LT(rl.iterations * rl.maxRounds, agent.iterations * agent.maxRounds);
    EXPECT_LT(rl.timingBudget, agent.timingBudget);
    // Warm workers without standby children, as for KernelBench's batches of pairs; the
    // cuda-agent profile starts each stage cold unless asked (--fast).
    EXPECT_TRUE(rl.warmWorker);
    EXPECT_FALSE(rl.standby);
    EXPECT_FALSE(agent.warmWorker);
    EvaluationOptions pairs;
    applyEvaluationProfile(pairs, EvaluationProfile::KernelBench);
    EXPECT_TRUE(pairs.warmWorker);
    EXPECT_FALSE(pairs.standby);
    applyEvaluationProfile(pairs, EvaluationProfile::CudaAgent);
    EXPECT_FALSE(pairs.warmWorker);
    EXPECT_TRUE(pairs.standby);
}

TEST(EvaluationProfile, QuickFeedbackShortensTimingAndKeepsWhatTheCallerSet) {
    EvaluationOptions quick;
    applyQuickFeedback(quick);
    const EvaluationOptions defaults;
    EXPECT_EQ(quick.checks, 3);
    EXPECT_EQ(quick.maxRounds, 5);
    EXPECT_EQ(quick.timingBudget, std::chrono::seconds(3));
    EXPECT_EQ(quick.targetCv, 0.05);
    EXPECT_TRUE(quick.warmWorker);
    EXPECT_TRUE(quick.profileModified);
    // The verdict rules stay the profile's.
    EXPECT_EQ(quick.atol, defaults.atol);
    EXPECT_EQ(quick.rtol, defaults.rtol);

    EvaluationOptions kept;
    kept.checks = 7;
    kept.targetCv = 0.01;
    applyQuickFeedback(kept, {.checks = true, .targetCv = true});
    EXPECT_EQ(kept.checks, 7);
    EXPECT_EQ(kept.targetCv, 0.01);
    EXPECT_EQ(kept.maxRounds, 5);

    // Never more than a profile already asks for, nor fewer rounds than it times.
    EvaluationOptions pairs;
    applyEvaluationProfile(pairs, EvaluationProfile::KernelBench);
    applyQuickFeedback(pairs);
    EXPECT_EQ(pairs.maxRounds, 1);
    EXPECT_EQ(pairs.checks, 3);
    EvaluationOptions manyRounds;
    manyRounds.rounds = 8;
    applyQuickFeedback(manyRounds);
    EXPECT_EQ(manyRounds.maxRounds, 8);
}
