// The paper's rollout metrics over episode records, against a table computed by hand, and
// GRPO's group-normalised advantages.
#include "agent/rollout/group_advantages.h"
#include "agent/rollout/rollout_metrics.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace kwb::agent;
using nlohmann::json;

namespace {

struct Row {
    const char* task;
    EpisodeStatus status;
    const char* cause;
    std::optional<double> reward;
    std::optional<double> vsEager;
    std::optional<double> vsCompile;
    bool strict;
    int turns;
    std::int64_t tokens;
    double cost;
    const char* device; // "" : no final evaluation
};

EpisodeRecord recordOf(const Row& row) {
    EpisodeRecord r;
    r.task = row.task;
    r.status = row.status;
    r.endCause = row.cause;
    r.reward = row.reward;
    r.turns = row.turns;
    r.usage.inputTokens = row.tokens * 3 / 4;
    r.usage.outputTokens = row.tokens - r.usage.inputTokens;
    r.costUsd = row.cost;
    if (std::string(row.device).empty())
        return r;
    json speedup = json::object();
    if (row.vsEager)
        speedup["vs_eager"] = *row.vsEager;
    if (row.vsCompile)
        speedup["vs_compile"] = *row.vsCompile;
    json flags = json::array({{{"code", "timing_unstable"}, {"severity", "warning"}}});
    if (row.strict)
        flags.push_back({{"code", "timing_mismatch"}, {"severity", "strict"}});
    r.finalEvaluation = {{"correct", row.reward.value_or(-1) >= 1 || row.strict},
                         {"speedup", speedup},
                         {"flags", flags},
                         {"environment", {{"device", row.device}}},
                         {"stages",
                          {{{"name", "compile"}, {"seconds", 20.0}},
                           {{"name", "verify"}, {"seconds", 1.5}},
                           {{"name", "profile"}, {"seconds", 3.25}, {"lane_wait_seconds", 0.75}}}}};
    return r;
}

std::vector<RolloutEpisode> table() {
    const Row rows[] = {
        {"/kb/level1/1_A.py", EpisodeStatus::Finished, "model_stopped", 3, 2.5, 1.2, false, 10,
         1000, 0.10, "cpu"},
        {"/kb/level1/2_B.py", EpisodeStatus::Finished, "model_stopped", 1, 0.8, 0.5, false, 20,
         3000, 0.30, "cpu"},
        // Correct but rejected by an integrity finding: not a pass, its speed-up not counted.
        {"/kb/level1/3_C.py", EpisodeStatus::Finished, "model_stopped", -1, 4.0, 3.0, true, 6, 600,
         0.06, "cpu"},
        // The provider failed: not the policy's outcome, but its turns and cost count.
        {"/kb/level1/4_D.py",
         EpisodeStatus::InfrastructureError,
         "provider_server",
         {},
         {},
         {},
         false,
         2,
         200,
         0.02,
         ""},
        {"/kb/level2/1_E.py", EpisodeStatus::Finished, "turn_limit", 2, 1.6, 0.9, false, 12, 2000,
         0.20, "cuda"},
        // The task could not be judged here: not the policy's outcome, but its turns and cost
        // count.
        {"/kb/level2/2_F.py",
         EpisodeStatus::Failed,
         "task_too_large",
         {},
         {},
         {},
         false,
         4,
         400,
         0.04,
         ""},
        {"/kb/level2/3_G.py",
         EpisodeStatus::Stopped,
         "user_stop",
         {},
         {},
         {},
         false,
         3,
         300,
         0.03,
         ""},
        {"/kb/level2/4_H.py", EpisodeStatus::Running, "", {}, {}, {}, false, 1, 100, 0.01, ""},
    };
    std::vector<RolloutEpisode> out;
    for (const Row& row : rows)
        out.push_back(RolloutEpisode::fromRecord(recordOf(row)));
    return out;
}

} // namespace

TEST(RolloutMetrics, OverallMatchesTheHandComputedTable) {
    const MetricsGroup g = computeMetrics(table()).overall;
    EXPECT_EQ(g.episodes, 7); // the running one is not ended
    EXPECT_EQ(g.scored, 4);   // A B C E
    EXPECT_EQ(g.infrastructureErrors, 1);
    EXPECT_EQ(g.taskFailures, 1);
    EXPECT_DOUBLE_EQ(g.passRate, 3.0 / 4);            // A B E
    EXPECT_DOUBLE_EQ(g.fasterThanEagerRate, 2.0 / 4); // A E
    EXPECT_DOUBLE_EQ(g.fasterThanCompileRate, 1.0 / 4);
    ASSERT_TRUE(g.geomeanVsEager);
    EXPECT_NEAR(*g.geomeanVsEager, std::cbrt(2.5 * 0.8 * 1.6), 1e-12);
    EXPECT_NEAR(*g.geomeanVsCompile, std::cbrt(1.2 * 0.5 * 0.9), 1e-12);
    EXPECT_DOUBLE_EQ(g.fastPVsEager.at(1.0), 0.5);
    EXPECT_DOUBLE_EQ(g.fastPVsEager.at(1.05), 0.5);
    EXPECT_DOUBLE_EQ(g.fastPVsEager.at(1.5), 0.5);
    EXPECT_DOUBLE_EQ(g.fastPVsEager.at(2.0), 0.25);
    EXPECT_DOUBLE_EQ(g.fastPVsCompile.at(1.0), 0.25);
    EXPECT_DOUBLE_EQ(g.fastPVsCompile.at(1.5), 0.0);
    EXPECT_DOUBLE_EQ(g.meanReward, (3 + 1 - 1 + 2) / 4.0);
    EXPECT_EQ(g.rewardCounts, (std::map<int, int>{{-1, 1}, {1, 1}, {2, 1}, {3, 1}}));
    EXPECT_DOUBLE_EQ(g.hackFlagRate, 1.0 / 4);
    EXPECT_DOUBLE_EQ(g.meanTurns, 57.0 / 7);
    EXPECT_DOUBLE_EQ(g.meanTokens, 7500.0 / 7);
    EXPECT_NEAR(g.meanCostUsd, 0.75 / 7, 1e-12);
    // E only: verify 1.5 + profile 3.25 of which 0.75 waiting for another evaluation's GPU time
    ASSERT_TRUE(g.gpuSecondsPerEvaluation);
    EXPECT_DOUBLE_EQ(*g.gpuSecondsPerEvaluation, 4.0);
}

TEST(RolloutMetrics, EachLevelIsSummarisedOnItsOwn) {
    const RolloutMetrics m = computeMetrics(table());
    ASSERT_EQ(m.byLevel.size(), 2u);
    const MetricsGroup& one = m.byLevel.at(1);
    EXPECT_EQ(one.scored, 3);
    EXPECT_DOUBLE_EQ(one.passRate, 2.0 / 3);
    EXPECT_DOUBLE_EQ(one.fasterThanEagerRate, 1.0 / 3);
    EXPECT_NEAR(*one.geomeanVsEager, std::sqrt(2.5 * 0.8), 1e-12);
    EXPECT_FALSE(one.gpuSecondsPerEvaluation); // CPU mode only
    const MetricsGroup& two = m.byLevel.at(2);
    EXPECT_EQ(two.episodes, 3);
    EXPECT_EQ(two.scored, 1);
    EXPECT_DOUBLE_EQ(two.passRate, 1.0);
    EXPECT_DOUBLE_EQ(two.meanReward, 2.0);
}

TEST(RolloutMetrics, NothingScoredIsZerosAndNoGeomeanNotANan) {
    const MetricsGroup g = computeMetrics({}).overall;
    EXPECT_EQ(g.episodes, 0);
    EXPECT_EQ(g.passRate, 0.0);
    EXPECT_FALSE(g.geomeanVsEager);
    const json j = toJson(computeMetrics({}));
    EXPECT_TRUE(j["overall"]["geomean_speedup_vs_eager"].is_null());
    EXPECT_TRUE(j["by_level"].empty());
}

TEST(RolloutMetrics, TheJsonNamesEveryMetric) {
    const json j = toJson(computeMetrics(table()));
    const json& overall = j["overall"];
    for (const char* key :
         {"pass_rate", "faster_than_eager_rate", "faster_than_compile_rate",
          "geomean_speedup_vs_eager", "geomean_speedup_vs_compile", "fast_p_vs_eager",
          "fast_p_vs_compile", "mean_reward", "reward_counts", "hack_flag_rate", "mean_turns",
          "mean_tokens", "mean_cost_usd", "gpu_seconds_per_evaluation"})
        EXPECT_TRUE(overall.contains(key)) << key;
    EXPECT_DOUBLE_EQ(overall["fast_p_vs_eager"]["2.00"].get<double>(), 0.25);
    EXPECT_EQ(overall["reward_counts"]["-1"], 1);
    EXPECT_EQ(overall["task_failures"], 1);
    EXPECT_TRUE(j["by_level"].contains("1"));
    EXPECT_TRUE(j["by_level"].contains("2"));
}

TEST(RolloutMetrics, ALevelFromTheTaskSetWinsOverThePath) {
    EpisodeRecord r;
    r.task = "/somewhere/19_ReLU.py";
    EXPECT_EQ(RolloutEpisode::fromRecord(r).level, 0);
    EXPECT_EQ(RolloutEpisode::fromRecord(r, 3).level, 3);
    r.task = "/data/KernelBench/level12/x.py";
    EXPECT_EQ(RolloutEpisode::fromRecord(r).level, 12);
    r.task = "/data/notlevel1/x.py"; // only a folder named exactly level<N>
    EXPECT_EQ(RolloutEpisode::fromRecord(r).level, 0);
}

TEST(RolloutMetrics, AnEpisodeTheLoopStoppedAsStuckIsThePolicysOutcomeAUserStopIsNot) {
    // One definition serves the metrics, the rollout's resume and the exports.
    EXPECT_TRUE(isScoredOutcome(EpisodeStatus::Finished, "model_stopped"));
    EXPECT_FALSE(isScoredOutcome(EpisodeStatus::Failed, "task_too_large"));
    EXPECT_FALSE(isScoredOutcome(EpisodeStatus::Cancelled, "cancelled"));
    EXPECT_TRUE(isScoredOutcome(EpisodeStatus::Stopped, "stuck"));
    EXPECT_FALSE(isScoredOutcome(EpisodeStatus::Stopped, "user_stop"));
    EXPECT_FALSE(isScoredOutcome(EpisodeStatus::Stopped, "stopped_in_final_evaluation"));
    EXPECT_FALSE(isScoredOutcome(EpisodeStatus::InfrastructureError, "abandoned"));
    EXPECT_FALSE(isScoredOutcome(EpisodeStatus::Cancelled, ""));
    EXPECT_FALSE(isScoredOutcome(EpisodeStatus::Running, ""));
}

// A resume reruns a killed (abandoned) episode whatever --retries says: only the model server's or
// the evaluator's failures use up retries.
TEST(RolloutMetrics, OnlyRealInfrastructureFailuresUseUpRetriesAbandonedEpisodesDoNot) {
    EXPECT_FALSE(usesUpARetry(EpisodeStatus::InfrastructureError, "abandoned"));
    EXPECT_TRUE(usesUpARetry(EpisodeStatus::InfrastructureError, "provider_server"));
    EXPECT_TRUE(usesUpARetry(EpisodeStatus::InfrastructureError, "evaluator_harness_failed"));
    EXPECT_FALSE(usesUpARetry(EpisodeStatus::Stopped, "user_stop"));
    EXPECT_FALSE(usesUpARetry(EpisodeStatus::Finished, "model_stopped"));
}

TEST(GroupAdvantages, AreNormalisedWithinEachGroupInInputOrder) {
    const auto a = groupAdvantages({{"a", 3}, {"b", 1}, {"a", 1}, {"a", -1}, {"b", 1}, {"a", 1}});
    ASSERT_EQ(a.size(), 6u);
    const double s = std::sqrt(2.0); // group a: mean 1, population variance 2
    EXPECT_NEAR(a[0], 2 / s, 1e-12);
    EXPECT_EQ(a[1], 0.0); // group b: all equal, nothing to learn
    EXPECT_NEAR(a[2], 0.0, 1e-12);
    EXPECT_NEAR(a[3], -2 / s, 1e-12);
    EXPECT_EQ(a[4], 0.0);
    EXPECT_NEAR(a[5], 0.0, 1e-12);
    EXPECT_TRUE(groupAdvantages({}).empty());
}

TEST(TurnReturns, WithoutACriticTheFinalRewardFlowsBackDiscountedByGammaLambda) {
    const TurnReturns r = turnReturns({0, 0, 3});
    EXPECT_EQ(r.returns, (std::vector<double>{3, 3, 3})); // gamma 1: every turn's reward-to-go
    EXPECT_DOUBLE_EQ(r.advantages[2], 3.0);
    EXPECT_DOUBLE_EQ(r.advantages[1], 0.95 * 3.0);
    EXPECT_DOUBLE_EQ(r.advantages[0], 0.95 * 0.95 * 3.0);
    EXPECT_TRUE(turnReturns({}).returns.empty());
}

TEST(TurnReturns, ACriticsValuesAreSubtractedAndBootstrapFromTheNextTurn) {
    // By hand: deltas (0 + 0.5*2 - 1, 0 + 0.5*0.5 - 2, 4 - 0.5) = (0, -1.75, 3.5) with gamma 0.5;
    // advantages from the end with gamma*lambda 0.25: 3.5, -1.75 + 0.875, 0 + 0.25 * -0.875.
    const TurnReturns r = turnReturns({0, 0, 4}, {1, 2, 0.5}, 0.5, 0.5);
    EXPECT_DOUBLE_EQ(r.returns[0], 1.0);
    EXPECT_DOUBLE_EQ(r.returns[1], 2.0);
    EXPECT_DOUBLE_EQ(r.advantages[2], 3.5);
    EXPECT_DOUBLE_EQ(r.advantages[1], -0.875);
    EXPECT_DOUBLE_EQ(r.advantages[0], -0.21875);
}
