#include "engine/evaluation/evaluation_result.h"
#include "engine/evaluation/reward_policy.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace kwb;

namespace {
TimingStats timing(double median) {
    TimingStats t;
    t.available = true;
    t.medianMs = median;
    t.samples = 10;
    t.method = "cuda-events";
    return t;
}

EvaluationResult profiledResult(double eager, double compiled, double candidate) {
    EvaluationResult r;
    r.compiled = r.correct = true;
    r.eager = timing(eager);
    r.compiledBaseline = timing(compiled);
    r.candidate = timing(candidate);
    r.speedupVsEager = eager / candidate;
    r.speedupVsCompile = compiled / candidate;
    return r;
}
} // namespace

TEST(RewardPolicy, MilestonesFollowCudaAgent) {
    EvaluationResult failed;
    EXPECT_EQ(decideReward(failed).reward, -1);
    EvaluationResult wrong;
    wrong.compiled = true;
    wrong.failureMessage = "output 0 differs";
    RewardDecision d = decideReward(wrong);
    EXPECT_EQ(d.reward, -1);
    EXPECT_NE(d.reason.find("output 0 differs"), std::string::npos);

    EXPECT_EQ(decideReward(profiledResult(1.0, 0.8, 0.97)).reward, 1);  // 3% faster: not enough
    EXPECT_EQ(decideReward(profiledResult(1.0, 0.5, 0.90)).reward, 2);  // faster than eager only
    EXPECT_EQ(decideReward(profiledResult(1.0, 0.95, 0.80)).reward, 3); // faster than both
    EXPECT_EQ(decideReward(profiledResult(1.0, 0.95, 0.80), {1.5}).reward, 1); // custom threshold

    EvaluationResult noCompile = profiledResult(1.0, 1.0, 0.5);
    noCompile.compiledBaseline = {};
    noCompile.compiledBaseline.unavailableReason = "no inductor";
    noCompile.speedupVsCompile = 0;
    RewardDecision capped = decideReward(noCompile);
    EXPECT_EQ(capped.reward, 2);
    EXPECT_NE(capped.reason.find("no inductor"), std::string::npos);
}

TEST(RewardPolicy, AMilestoneCountsOnlyWhenItsWholeIntervalClearsTheThreshold) {
    EvaluationResult r = profiledResult(1.0, 0.95, 0.93); // 1.075x vs eager, 1.02x vs compile
    r.candidate.rounds = 4;
    r.intervalLevel = 0.9;
    r.intervalVsEager = {true, 1.02, 1.12}; // straddles 1.05
    const RewardDecision undecided = decideReward(r);
    EXPECT_EQ(undecided.reward, 1);
    EXPECT_NE(undecided.reason.find("90% interval 1.020x-1.120x reaches below 1.050x"),
              std::string::npos)
        << undecided.reason;
    r.intervalVsEager = {true, 1.06, 1.09};
    EXPECT_EQ(decideReward(r).reward, 2);

    // The point estimate decides where the policy says so (KernelBench's way) or where one
    // round was timed; rounds without an interval (a batch that reported zero times) pay nothing.
    r.intervalVsEager = {true, 1.02, 1.12};
    RewardPolicy pointEstimate;
    pointEstimate.decideOnInterval = false;
    EXPECT_EQ(decideReward(r, pointEstimate).reward, 2);
    r.intervalVsEager = {};
    const RewardDecision noInterval = decideReward(r);
    EXPECT_EQ(noInterval.reward, 1);
    EXPECT_NE(noInterval.reason.find("no interval over the 4 rounds"), std::string::npos)
        << noInterval.reason;
    r.candidate.rounds = 1;
    EXPECT_EQ(decideReward(r).reward, 2);

    // torch.compile's interval decides the third milestone.
    EvaluationResult both = profiledResult(1.0, 0.95, 0.80); // 1.25x and 1.19x
    both.candidate.rounds = 4;
    both.intervalLevel = 0.9;
    both.intervalVsEager = {true, 1.2, 1.3};
    both.intervalVsCompile = {true, 1.04, 1.3};
    EXPECT_EQ(decideReward(both).reward, 2);
    both.intervalVsCompile = {true, 1.1, 1.3};
    EXPECT_EQ(decideReward(both).reward, 3);
}

TEST(RewardPolicy, StrictFlagOverridesEverything) {
    EvaluationResult r = profiledResult(1.0, 1.0, 0.1);
    r.flags.push_back({"protected_file_modified", FlagSeverity::Strict, "model.py changed"});
    RewardDecision d = decideReward(r);
    EXPECT_EQ(d.reward, -1);
    EXPECT_NE(d.reason.find("protected_file_modified"), std::string::npos);
    r.flags.front().severity = FlagSeverity::Warning;
    EXPECT_EQ(decideReward(r).reward, 3);
}

TEST(EvaluationResult, RoundTripsThroughJson) {
    EvaluationResult r = profiledResult(2.0, 1.5, 1.0);
    r.workspace = "/ws";
    r.seed = 42;
    r.cpuMode = true;
    r.stages.push_back({"compile", StageStatus::Passed, 1.5, "ok", "log text"});
    r.stages.back().buildWaitSeconds = 0.5;
    r.stages.push_back({"verify", StageStatus::Passed, 4.25, "ok", "", true, 3.5, true, 0.25});
    r.stages.back().preparationWaitSeconds = 0.125;
    r.diagnostics.push_back({"kernels/a.cu", 3, 7, Severity::Warning, "unused"});
    r.outputErrors.push_back({0, 1e-4, 2e-3, {8, 16}, "float32"});
    r.flags.push_back({"sandbox_weak", FlagSeverity::Warning, "no bwrap"});
    r.environment.torchVersion = "2.11.0";
    r.timelineRecordPath = "/ws/build/timelines/run.kwbtl.jsonl";
    r.sandbox = "bubblewrap (/usr/bin/bwrap)";
    r.integrity.externalTimingChecked = true;
    r.integrity.externalWallMs = 12.5;
    r.integrity.externalUnexplainedMs = 4.0;
    r.integrity.externalAllowedMs = 3.5;
    r.integrity.externalBatches = 6;
    r.integrity.externalInconsistentBatches = 1;
    r.integrity.externalWaitingMs = 2.25;
    r.integrity.externalExcusedWaitMs = 0.75;
    r.reward = 3;
    r.candidate.roundMediansMs = {1.0, 0.98, 1.01};
    r.intervalLevel = 0.9;
    r.intervalVsEager = {true, 1.9, 2.1};
    r.speedupStatistic = TimingStatistic::Mean;
    nlohmann::json j = toJson(r);
    EvaluationResult back;
    std::string error;
    ASSERT_TRUE(fromJson(nlohmann::json::parse(j.dump()), back, &error)) << error;
    EXPECT_EQ(toJson(back), j);
    EXPECT_EQ(back.stage("compile")->seconds, 1.5);
    EXPECT_EQ(back.stage("verify")->startSeconds, 3.5);
    EXPECT_TRUE(back.stage("verify")->workerStarted);
    EXPECT_EQ(back.stage("verify")->laneWaitSeconds, 0.25);
    EXPECT_EQ(back.stage("compile")->buildWaitSeconds, 0.5);
    EXPECT_EQ(back.stage("verify")->preparationWaitSeconds, 0.125);
    EXPECT_EQ(back.stageSeconds(), 5.75);
    EXPECT_EQ(back.candidate.roundMediansMs, (std::vector<double>{1.0, 0.98, 1.01}));
    EXPECT_TRUE(back.intervalVsEager.available);
    EXPECT_EQ(back.intervalVsEager.high, 2.1);
    EXPECT_FALSE(back.intervalVsCompile.available);
    EXPECT_EQ(back.outputErrors[0].shape, (std::vector<std::int64_t>{8, 16}));
    EXPECT_EQ(back.diagnostics[0].severity, Severity::Warning);
    EXPECT_EQ(back.timelineRecordPath, "/ws/build/timelines/run.kwbtl.jsonl");
    EXPECT_EQ(back.sandbox, "bubblewrap (/usr/bin/bwrap)");
    EXPECT_EQ(back.integrity.externalBatches, 6);
    EXPECT_EQ(back.integrity.externalInconsistentBatches, 1);
    EXPECT_EQ(back.integrity.externalAllowedMs, 3.5);
    EXPECT_EQ(back.integrity.externalWaitingMs, 2.25);
    EXPECT_EQ(back.integrity.externalExcusedWaitMs, 0.75);
    EXPECT_EQ(back.speedupStatistic, TimingStatistic::Mean);
    EXPECT_EQ(j["version"], EvaluationResult::kFormatVersion);
}

TEST(EvaluationResult, RecordsWithoutATimelineReadBackWithAnEmptyPath) {
    nlohmann::json j = toJson(EvaluationResult{});
    EXPECT_EQ(j["timeline_records"], "");
    j.erase("timeline_records"); // a record written before timelines existed
    EvaluationResult back;
    back.timelineRecordPath = "stale";
    ASSERT_TRUE(fromJson(j, back));
    EXPECT_TRUE(back.timelineRecordPath.empty());
}

TEST(EvaluationResult, RejectsForeignAndNewerDocuments) {
    EvaluationResult r;
    std::string error;
    EXPECT_FALSE(fromJson(nlohmann::json{{"hello", 1}}, r, &error));
    EXPECT_NE(error.find("not a kwb evaluation"), std::string::npos);
    EXPECT_FALSE(
        fromJson(nlohmann::json{{"format", "kwb-evaluation"}, {"version", 99}}, r, &error));
    EXPECT_NE(error.find("99"), std::string::npos);
    EXPECT_FALSE(
        fromJson(nlohmann::json{{"format", "kwb-evaluation"}, {"version", 1}, {"stages", "junk"}},
                 r, &error));
}

TEST(EvaluationResult, PartReadersTolerateMistypedFields) {
    Diagnostic d = diagnosticFromJson(nlohmann::json{
        {"file", "kernels/a.cu"}, {"line", "twelve"}, {"severity", "warning"}, {"message", "m"}});
    EXPECT_EQ(d.file, "kernels/a.cu");
    EXPECT_EQ(d.line, 0);
    EXPECT_EQ(d.severity, Severity::Warning);
    OutputError o = outputErrorFromJson(
        nlohmann::json{{"index", 2}, {"shape", "junk"}, {"max_abs_error", 0.5}});
    EXPECT_EQ(o.index, 2);
    EXPECT_TRUE(o.shape.empty());
    EXPECT_EQ(o.maxAbsError, 0.5);
    IntegrityFlag f =
        flagFromJson(nlohmann::json{{"code", "torch_fallback"}, {"severity", "strict"}});
    EXPECT_EQ(f.severity, FlagSeverity::Strict);
    EXPECT_EQ(flagFromJson(nlohmann::json("not an object")).code, "unknown");
}
