// The stage's request and result files live in the run's scratch folder, which the candidate's
// code can write (it is its HOME): kwb writes and reads them from outside the sandbox, so a link
// or an odd file planted there must never lead kwb's own rights elsewhere.
#include "engine/evaluation/failure_kinds.h"
#include "engine/evaluation/harness_stage.h"
#include "engine/system/bounded_json.h"
#include "tests/test_files.h"

#include <chrono>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kwb;
using namespace kwb::test;
namespace fs = std::filesystem;

namespace {

class StageFiles : public ::testing::Test {
protected:
    void SetUp() override {
        base_ = fs::temp_directory_path() /
                ("kwb-stage-files-" + std::to_string(getpid()) + "-" +
                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(base_);
        spec_.stage = "verify";
        spec_.scratchDirectory = (base_ / "runs" / "run-1").string();
        spec_.request = {{"version", 1}, {"stage", "verify"}};
        fs::create_directories(spec_.scratchDirectory);
        fs::create_directories(base_ / "outside");
    }
    void TearDown() override { fs::remove_all(base_); }

    fs::path scratch(const std::string& name) const {
        return fs::path(spec_.scratchDirectory) / name;
    }

    // How the judge ends when it wrote its result: exit code 0.
    static ProcessResult judgeExitedNormally() {
        ProcessResult process;
        process.started = true;
        process.exitedNormally = true;
        process.exitCode = 0;
        return process;
    }

    fs::path base_;
    HarnessStageSpec spec_;
};

} // namespace

TEST_F(StageFiles, ALinkAtTheRequestPathIsReplacedNotFollowed) {
    const fs::path target = base_ / "outside" / "config.json";
    writeText(target, "untouched");
    const fs::path dangling = base_ / "outside" / "not-there-yet.json";
    for (const fs::path& linkTarget : {target, dangling}) {
        fs::create_symlink(linkTarget, scratch("harness-request.json"));
        fs::path requestFile, resultFile;
        std::string error;
        ASSERT_TRUE(writeStageRequest(spec_, requestFile, resultFile, error)) << error;
        EXPECT_EQ(requestFile, scratch("harness-request.json"));
        EXPECT_EQ(fs::symlink_status(requestFile).type(), fs::file_type::regular);
        EXPECT_EQ(parseBoundedJson(readText(requestFile)), spec_.request);
        EXPECT_EQ(readText(target), "untouched");
        EXPECT_FALSE(fs::exists(dangling));
        fs::remove(requestFile);
    }
    // Nothing but the request is left in the scratch folder (no temporary beside it).
    fs::path requestFile, resultFile;
    std::string error;
    ASSERT_TRUE(writeStageRequest(spec_, requestFile, resultFile, error)) << error;
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(spec_.scratchDirectory))
        names.push_back(entry.path().filename().string());
    EXPECT_EQ(names, std::vector<std::string>{"harness-request.json"});
}

TEST_F(StageFiles, AHardLinkAtTheRequestPathKeepsItsOtherName) {
    const fs::path target = base_ / "outside" / "config.json";
    writeText(target, "untouched");
    std::error_code ec;
    fs::create_hard_link(target, scratch("harness-request.json"), ec);
    if (ec)
        GTEST_SKIP() << "no hard links here: " << ec.message();
    fs::path requestFile, resultFile;
    std::string error;
    ASSERT_TRUE(writeStageRequest(spec_, requestFile, resultFile, error)) << error;
    EXPECT_EQ(readText(target), "untouched");
    EXPECT_EQ(parseBoundedJson(readText(requestFile)), spec_.request);
}

// The scratch folder itself swapped for a link (a warm worker's server may write its parent):
// the request goes into a real folder in its place, not into the link's target.
TEST_F(StageFiles, ALinkInPlaceOfTheScratchFolderIsNotFollowed) {
    fs::remove_all(spec_.scratchDirectory);
    fs::create_directory_symlink(base_ / "outside", spec_.scratchDirectory);
    fs::path requestFile, resultFile;
    std::string error;
    ASSERT_TRUE(writeStageRequest(spec_, requestFile, resultFile, error)) << error;
    EXPECT_FALSE(fs::exists(base_ / "outside" / "harness-request.json"));
    EXPECT_FALSE(fs::is_symlink(spec_.scratchDirectory));
    EXPECT_EQ(fs::symlink_status(requestFile).type(), fs::file_type::regular);
}

TEST_F(StageFiles, AResultThatIsALinkOrNotAFileIsNoResult) {
    fs::path requestFile, resultFile;
    std::string error;
    ASSERT_TRUE(writeStageRequest(spec_, requestFile, resultFile, error)) << error;
    const fs::path forged = base_ / "outside" / "forged.json";
    writeText(forged, R"({"ok": true, "correct": true, "log": "forged"})");

    fs::create_symlink(forged, resultFile);
    HarnessStageOutcome linked = interpretStageRun(spec_, judgeExitedNormally(), resultFile, {});
    EXPECT_TRUE(linked.result.is_null());
    EXPECT_FALSE(linked.ok);
    EXPECT_EQ(linked.failureKind, "harness_failed");
    fs::remove(resultFile);

    // A FIFO would block a reader that waits for a writer: it is refused at once.
    ASSERT_EQ(::mkfifo(resultFile.c_str(), 0600), 0);
    const auto started = std::chrono::steady_clock::now();
    HarnessStageOutcome fifo = interpretStageRun(spec_, judgeExitedNormally(), resultFile, {});
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
    EXPECT_TRUE(fifo.result.is_null());
    fs::remove(resultFile);

    // The judge's own result, a regular file, is read as before.
    fs::copy_file(forged, resultFile);
    HarnessStageOutcome real = interpretStageRun(spec_, judgeExitedNormally(), resultFile, {});
    EXPECT_TRUE(real.ok);
    EXPECT_EQ(real.log, "forged");
}

// A stage killed from outside (the OOM killer, an operator) while it ran only the reference task
// is the evaluator's failure, not a reward of -1; a stage running candidate code that dies by a
// signal stays the candidate's crash, since the candidate can kill itself the same way.
TEST_F(StageFiles, AKilledStageIsInfrastructureOnlyWhereNoCandidateCodeRuns) {
    ProcessResult killed;
    killed.started = true;
    killed.exitedNormally = false;
    killed.terminatingSignal = 9;
    const fs::path resultFile = scratch("harness-result.json");
    for (const char* stage : {"inspect", "baseline"}) {
        spec_.stage = stage;
        const HarnessStageOutcome outcome = interpretStageRun(spec_, killed, resultFile, {});
        EXPECT_EQ(outcome.failureKind, "harness_failed") << stage;
        EXPECT_TRUE(isInfrastructureFailure(outcome.failureKind));
        EXPECT_NE(outcome.failureMessage.find("SIGKILL"), std::string::npos)
            << outcome.failureMessage;
    }
    for (const char* stage : {"compile", "verify", "profile"}) {
        spec_.stage = stage;
        const HarnessStageOutcome outcome = interpretStageRun(spec_, killed, resultFile, {});
        EXPECT_EQ(outcome.failureKind, "crashed") << stage;
        EXPECT_FALSE(isInfrastructureFailure(outcome.failureKind));
    }
    // A limit kwb itself enforced is the candidate's, whatever the stage.
    ProcessResult overBudget = killed;
    overBudget.limitExceeded = "memory limit (1 GiB: 2 GiB)";
    spec_.stage = "verify";
    EXPECT_EQ(interpretStageRun(spec_, overBudget, resultFile, {}).failureKind, "resource_limit");
}

// The wall time the engine saw, split: the stage's own time in its process (the harness's
// elapsed_s), the rest before and after it, and of that rest the wait for a standby child's
// preparation, which the child reports and which can never exceed the rest.
TEST(StageWallTime, TheStandbysPreparationWaitIsPartOfTheTimeOutsideTheStage) {
    HarnessStageOutcome outcome;
    outcome.result = {{"elapsed_s", 0.5}, {"prepared", {{"request_waited_seconds", 0.75}}}};
    recordStageWallTime(outcome, 1.5);
    EXPECT_DOUBLE_EQ(outcome.seconds, 1.5);
    EXPECT_DOUBLE_EQ(outcome.startSeconds, 1.0);
    EXPECT_DOUBLE_EQ(outcome.preparationWaitSeconds, 0.75);

    outcome.result["prepared"]["request_waited_seconds"] = 30.0;
    recordStageWallTime(outcome, 1.5);
    EXPECT_DOUBLE_EQ(outcome.preparationWaitSeconds, 1.0) << "at most the time outside the stage";

    for (const nlohmann::json& prepared :
         {nlohmann::json{{"ahead_of_request", false}}, nlohmann::json("text"),
          nlohmann::json{{"request_waited_seconds", -2.0}}}) {
        outcome.result["prepared"] = prepared;
        recordStageWallTime(outcome, 1.5);
        EXPECT_DOUBLE_EQ(outcome.preparationWaitSeconds, 0.0) << prepared.dump();
    }
}
