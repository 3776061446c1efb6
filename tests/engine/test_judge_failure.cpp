// A judge that fails after the candidate's code ran scores nothing, so a candidate that would
// get -1 could provoke it instead. The evaluator settles such a failure: the candidate again,
// then the task's reference in its place; the candidate is charged when the control passes.
#include "engine/evaluation/judge_failure.h"
#include "tests/engine/evaluation_fixture.h"

#include <csignal>

namespace kwb::test {
namespace {

class JudgeFailureTest : public EvaluationTest {};

TEST_F(JudgeFailureTest, ACandidateThatInterruptsItsJudgeIsChargedWithTheFailure) {
    // The candidate's process is the judge's child: it interrupts its parent while verify asks it
    // for outputs. A judge process of its own turns the interrupt into its internal error.
    const fs::path ws = makePythonWorkspace(
        kTinyTask, tinyCandidate("        os.kill(os.getppid(), signal.SIGINT)\n"
                                 "        time.sleep(5)\n"
                                 "        return x * self.weight * self.factor",
                                 "import os, signal, time\n"));
    EvaluationOptions options = cpuOptions();
    options.warmWorker = false;
    const EvaluationResult r = evaluateWorkspace(ws, options);
    EXPECT_EQ(r.failureKind, "judge_failed_on_candidate") << describe(r);
    EXPECT_EQ(r.reward, -1) << describe(r);
    EXPECT_NE(r.failureMessage.find("internal"), std::string::npos) << r.failureMessage;
    EXPECT_NE(r.failureMessage.find("verify"), std::string::npos) << r.failureMessage;
    EXPECT_FALSE(judgeFailedAfterCandidateCode(r)) << "settled: no longer the evaluator's";

    // The honest candidate in the same workspace is judged as usual, with no control run.
    writeText(ws / "model_new.py", tinyCandidate("        return x * self.weight * self.factor"));
    const EvaluationResult honest = evaluateWorkspace(ws, options);
    EXPECT_TRUE(honest.correct) << describe(honest);
}

// The settling itself, on results as the evaluator records them.
StageRecord stageRecord(const std::string& name, StageStatus status) {
    StageRecord record;
    record.name = name;
    record.status = status;
    return record;
}

EvaluationResult failedIn(const std::string& stage, const std::string& kind) {
    EvaluationResult r;
    r.compiled = true;
    r.stages.push_back(stageRecord("inspect", StageStatus::Passed));
    r.stages.push_back(stageRecord(stage, StageStatus::Failed));
    r.failureKind = kind;
    r.failureMessage = "harness failure: KeyboardInterrupt";
    return r;
}

TEST(JudgeFailure, OnlyAJudgeFailureAfterCandidateCodeInBuildOrVerifyNeedsSettling) {
    EXPECT_TRUE(judgeFailedAfterCandidateCode(failedIn("verify", "internal")));
    EXPECT_TRUE(judgeFailedAfterCandidateCode(failedIn("compile", "harness_failed")));
    EXPECT_TRUE(judgeFailedAfterCandidateCode(failedIn("verify", "task_out_of_memory")));
    EXPECT_FALSE(judgeFailedAfterCandidateCode(failedIn("inspect", "internal")))
        << "inspect runs the reference alone";
    EXPECT_FALSE(judgeFailedAfterCandidateCode(failedIn("verify", "numerical_mismatch")))
        << "already the candidate's";
    EXPECT_FALSE(judgeFailedAfterCandidateCode(failedIn("verify", "cancelled")));
}

TEST(JudgeFailure, TheControlDecidesWhoseFailureItIs) {
    EvaluationResult passed;
    passed.stages.push_back(stageRecord("verify", StageStatus::Passed));
    EvaluationResult charged = failedIn("verify", "internal");
    settleJudgeFailure(charged, passed);
    EXPECT_EQ(charged.failureKind, "judge_failed_on_candidate");

    EvaluationResult alsoFailed = failedIn("verify", "internal");
    EvaluationResult kept = failedIn("verify", "internal");
    settleJudgeFailure(kept, alsoFailed);
    EXPECT_EQ(kept.failureKind, "internal") << "the judge fails on the reference too";
    EXPECT_NE(kept.failureMessage.find("failed in verify too"), std::string::npos);

    EvaluationResult notReached = failedIn("inspect", "python_missing");
    EvaluationResult unsettled = failedIn("verify", "internal");
    settleJudgeFailure(unsettled, notReached);
    EXPECT_EQ(unsettled.failureKind, "internal") << "no evidence against the candidate";
    EXPECT_NE(unsettled.failureMessage.find("did not reach verify"), std::string::npos);
}

} // namespace
} // namespace kwb::test
