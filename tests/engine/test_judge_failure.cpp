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
    const StageRecord* check = r.stage("judge_check");
    ASSERT_NE(check, nullptr) << describe(r);
    EXPECT_GT(check->seconds, 0.0) << "the first attempt and the control are the evaluation's time";
    EXPECT_GE(r.stageSeconds(), check->seconds);

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

// The candidate's second result once the control's is known.
EvaluationResult settled(EvaluationResult again, const EvaluationResult& control) {
    settleJudgeFailure(again, control);
    return again;
}

EvaluationResult withStage(const std::string& name, StageStatus status) {
    EvaluationResult r;
    r.stages.push_back(stageRecord(name, status));
    return r;
}

EvaluationResult unreadable() {
    EvaluationResult r; // a stage wrote a result kwb could not read: no stage kept
    r.failureKind = "harness_failed";
    return r;
}

TEST(JudgeFailure, OnlyAJudgeFailureAfterCandidateCodeInBuildOrVerifyNeedsSettling) {
    EXPECT_TRUE(judgeFailedAfterCandidateCode(failedIn("verify", "internal")));
    EXPECT_TRUE(judgeFailedAfterCandidateCode(failedIn("compile", "harness_failed")));
    EXPECT_FALSE(judgeFailedAfterCandidateCode(failedIn("verify", "task_out_of_memory")))
        << "verify's references ran before the candidate's import: other evaluations' memory";
    EXPECT_TRUE(judgeFailedAfterCandidateCode(unreadable()))
        << "the compile stage's child, where the candidate's extension runs, can write it";
    EXPECT_FALSE(judgeFailedAfterCandidateCode(failedIn("inspect", "internal")))
        << "inspect runs the reference alone";
    EXPECT_FALSE(judgeFailedAfterCandidateCode(failedIn("verify", "numerical_mismatch")))
        << "already the candidate's";
    EXPECT_FALSE(judgeFailedAfterCandidateCode(failedIn("verify", "cancelled")));
}

TEST(JudgeFailure, TheControlDecidesWhoseFailureItIs) {
    const EvaluationResult passed = withStage("verify", StageStatus::Passed);
    EXPECT_EQ(settled(failedIn("verify", "internal"), passed).failureKind,
              "judge_failed_on_candidate");

    const EvaluationResult kept =
        settled(failedIn("verify", "internal"), failedIn("verify", "internal"));
    EXPECT_EQ(kept.failureKind, "internal") << "the judge fails on the reference too";
    EXPECT_NE(kept.failureMessage.find("failed in verify too"), std::string::npos);

    // The control has nothing to build: its compile stage is skipped, which passes it.
    EXPECT_EQ(
        settled(failedIn("compile", "harness_failed"), withStage("compile", StageStatus::Skipped))
            .failureKind,
        "judge_failed_on_candidate");

    // Which stage failed is not known: the control's own evaluation decides.
    EXPECT_EQ(settled(unreadable(), passed).failureKind, "judge_failed_on_candidate");
    EXPECT_EQ(settled(unreadable(), unreadable()).failureKind, "harness_failed");

    const EvaluationResult unsettled =
        settled(failedIn("verify", "internal"), failedIn("inspect", "python_missing"));
    EXPECT_EQ(unsettled.failureKind, "internal") << "no evidence against the candidate";
    EXPECT_NE(unsettled.failureMessage.find("did not reach verify"), std::string::npos);
}

} // namespace
} // namespace kwb::test
