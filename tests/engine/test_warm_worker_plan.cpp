// Which server serves a stage: one per workspace, or one for every workspace below the same
// shared roots with the stage child confined to its own folders (WarmWorkerPlan).
#include "engine/evaluation/warm_worker_plan.h"
#include "engine/process/landlock.h"
#include "engine/process/sandbox.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>

namespace fs = std::filesystem;

namespace kwb::test {
namespace {

class WarmWorkerPlanTest : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("kwb-plan-" + std::to_string(std::random_device{}()));
        for (const char* folder :
             {"workspaces/a", "workspaces/b", "runs/ws-a/r1", "runs/ws-b/r2", "elsewhere/c"})
            fs::create_directories(root_ / folder);
        unsetenv("KWB_SHARED_WORKERS");
    }
    void TearDown() override {
        unsetenv("KWB_SHARED_WORKERS");
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    // A stage of workspace `name` as the evaluator describes it.
    HarnessStageSpec stage(const std::string& name, const std::string& runs) const {
        HarnessStageSpec spec;
        spec.stage = "verify";
        spec.python = "/usr/bin/python3";
        spec.workingDirectory = (root_ / "workspaces" / name).string();
        spec.scratchDirectory = (root_ / "runs" / runs).string();
        spec.sandbox.readOnlyPaths = {spec.workingDirectory};
        spec.sandbox.writablePaths = {(root_ / "workspaces" / name / "build").string()};
        spec.environment = {{"OMP_NUM_THREADS", "2"}};
        spec.workspaceEnvironment = {{"CCACHE_BASEDIR", spec.workingDirectory}};
        spec.sharedRoots = {(root_ / "workspaces").string(), (root_ / "runs").string()};
        return spec;
    }

    // The folder the server starts in: bubblewrap's --chdir, or the process's own.
    static std::string serverFolder(const WarmWorkerPlan& plan) {
        const auto& argv = plan.server.spec.argv;
        const auto chdir = std::find(argv.begin(), argv.end(), "--chdir");
        return chdir != argv.end() && std::next(chdir) != argv.end()
                   ? *std::next(chdir)
                   : plan.server.spec.workingDirectory;
    }

    static bool sharingPossible() { return landlockAbi() >= 1 && bubblewrapUsable(); }

    fs::path root_;
};

TEST_F(WarmWorkerPlanTest, WorkspacesBelowOneRootShareAServerWhereTheKernelConfines) {
    const WarmWorkerPlan a = planWarmWorker(stage("a", "ws-a/r1"));
    const WarmWorkerPlan b = planWarmWorker(stage("b", "ws-b/r2"));
    EXPECT_EQ(a.shared, sharingPossible());
    EXPECT_EQ(a.server.spec.argv == b.server.spec.argv, sharingPossible());
    EXPECT_EQ(serverFolder(a) == serverFolder(b), sharingPossible());
    EXPECT_EQ(a.confinement["landlock"].get<bool>(), a.shared);
    if (a.shared) {
        EXPECT_EQ(serverFolder(a), (root_ / "workspaces").string());
    }
}

TEST_F(WarmWorkerPlanTest, TheChildIsGivenExactlyItsOwnStagesFoldersAndVariables) {
    const HarnessStageSpec spec = stage("a", "ws-a/r1");
    const WarmWorkerPlan plan = planWarmWorker(spec);
    const nlohmann::json& confine = plan.confinement;
    EXPECT_EQ(confine["cwd"], spec.workingDirectory);
    const auto writable = confine["writable"].get<std::vector<std::string>>();
    EXPECT_EQ(writable, (std::vector<std::string>{spec.sandbox.writablePaths[0],
                                                  (root_ / "runs" / "ws-a").string()}));
    EXPECT_EQ(confine["environment"]["HOME"], (root_ / "runs" / "ws-a").string());
    EXPECT_EQ(confine["environment"]["CCACHE_BASEDIR"], spec.workingDirectory);
    // The workspace's variables are the child's to set: they do not key (or reach) the server.
    EXPECT_EQ(plan.server.spec.environmentOverrides.count("CCACHE_BASEDIR"), 0u);
    EXPECT_EQ(plan.server.spec.environmentOverrides.at("OMP_NUM_THREADS"), "2");
}

TEST_F(WarmWorkerPlanTest, TheInterpretersFolderComesFirstOnThePath) {
    // Tools installed beside a venv's python (pip's ninja for torch's extension builds) are found
    // without the venv being activated.
    HarnessStageSpec spec = stage("a", "ws-a/r1");
    spec.python = "/opt/venvs/task/bin/python3";
    const SandboxedCommand command =
        harnessCommand(spec, {"-m", "kwb_harness"}, spec.scratchDirectory);
    const std::string path = command.spec.environmentOverrides.at("PATH");
    EXPECT_EQ(path.rfind("/opt/venvs/task/bin:", 0), 0u) << path;
    EXPECT_NE(path.find("/usr/bin"), std::string::npos) << path;
}

TEST_F(WarmWorkerPlanTest, AWorkspaceOutsideTheRootsOrSharingSwitchedOffKeepsItsOwnServer) {
    HarnessStageSpec outside = stage("a", "ws-a/r1");
    outside.workingDirectory = (root_ / "elsewhere" / "c").string();
    const WarmWorkerPlan lone = planWarmWorker(outside);
    EXPECT_FALSE(lone.shared);
    EXPECT_FALSE(lone.confinement["landlock"].get<bool>());
    EXPECT_EQ(serverFolder(lone), outside.workingDirectory);

    HarnessStageSpec noRoots = stage("a", "ws-a/r1");
    noRoots.sharedRoots.clear();
    EXPECT_FALSE(planWarmWorker(noRoots).shared);

    setenv("KWB_SHARED_WORKERS", "off", 1);
    const WarmWorkerPlan a = planWarmWorker(stage("a", "ws-a/r1"));
    const WarmWorkerPlan b = planWarmWorker(stage("b", "ws-b/r2"));
    EXPECT_FALSE(a.shared);
    EXPECT_NE(serverFolder(a), serverFolder(b));
}

TEST_F(WarmWorkerPlanTest, AFolderNamedLikeTheRootIsNotBelowIt) {
    // /x/workspaces-other is not inside /x/workspaces.
    fs::create_directories(root_ / "workspaces-other" / "d");
    HarnessStageSpec spec = stage("a", "ws-a/r1");
    spec.workingDirectory = (root_ / "workspaces-other" / "d").string();
    EXPECT_FALSE(planWarmWorker(spec).shared);
}

} // namespace
} // namespace kwb::test
