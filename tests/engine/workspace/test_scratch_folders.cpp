#include "engine/workspace/scratch_folders.h"
#include "tests/test_files.h"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <stdexcept>
#include <sys/stat.h>
#include <unistd.h>

using namespace kwb;
namespace fs = std::filesystem;

namespace {

class ScratchFoldersTest : public ::testing::Test {
protected:
    test::ScopedTestFolder folder_{std::string("scratch-") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name()};
    const fs::path runs_ = folder_.path() / "runs";
    fs::path workspace_ = runs_ / "ws-0123456789abcdef";

    static void write(const fs::path& path, std::size_t bytes) {
        test::writeText(path, std::string(bytes, 'x'));
    }

    ScratchFolder claim(const std::string& id) {
        std::string error;
        std::optional<ScratchFolder> folder = ScratchFolder::claim(workspace_, id, &error);
        if (!folder)
            throw std::runtime_error("no scratch folder: " + error); // gtest fails the test
        return std::move(*folder);
    }

    static bool removedName(const ScratchTidy& tidy, const std::string& name) {
        return std::find(tidy.removed.begin(), tidy.removed.end(), name) != tidy.removed.end();
    }

    static void makeOld(const fs::path& path) {
        const struct timespec times[2] = {{0, UTIME_OMIT},
                                          {std::time(nullptr) - 10 * 24 * 3600, 0}};
        ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
    }
};

} // namespace

TEST_F(ScratchFoldersTest, AClaimedFolderExistsWhileHeldAndIsGoneAfter) {
    std::string path;
    {
        ScratchFolder folder = claim("run-1");
        path = folder.path();
        EXPECT_EQ(path, (workspace_ / "run-1").string());
        write(fs::path(path) / "harness-request.json", 10);
        fs::create_directory_symlink("/", fs::path(path) / "root-link");
        ScratchFolder moved = std::move(folder);
        EXPECT_TRUE(fs::is_directory(path)) << "a move keeps the folder";
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(fs::is_directory(workspace_));
    EXPECT_TRUE(fs::exists("/etc")) << "the link was not followed";
}

TEST_F(ScratchFoldersTest, ATidyRemovesWhatNoEvaluationHoldsAndKeepsTheCaches) {
    ScratchFolder other = claim("run-other");
    write(workspace_ / "run-dead/harness-result.json", 10); // an evaluation that died
    write(workspace_ / "escape-disk-1.bin", 4096);          // a candidate's leftovers
    write(workspace_ / "sub/deep/file", 10);
    fs::create_directory_symlink(folder_.path(), workspace_ / "link-out");
    write(workspace_ / "torch_extensions/ext/ext.so", 1000);
    write(workspace_ / "tmp/torchinductor_root/pch.gch", 1000);
    write(workspace_ / ".triton/cache/k.cubin", 1000);
    write(workspace_ / ".cache", 10); // a cache's name on a file: not a cache

    ScratchFolder mine = claim("run-mine");
    const ScratchTidy tidy = mine.tidyWorkspaceRuns(1 << 20);
    EXPECT_TRUE(tidy.complete);
    EXPECT_FALSE(tidy.cachesCleared);
    for (const char* gone : {"run-dead", "escape-disk-1.bin", "sub", "link-out", ".cache"}) {
        EXPECT_TRUE(removedName(tidy, gone)) << gone;
        EXPECT_FALSE(fs::exists(fs::symlink_status(workspace_ / gone))) << gone;
    }
    EXPECT_GE(tidy.bytesFreed, 4096u);
    EXPECT_TRUE(fs::is_directory(other.path())) << "another evaluation's folder is held";
    EXPECT_TRUE(fs::is_directory(mine.path()));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / "torch_extensions/ext/ext.so"));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / "tmp/torchinductor_root/pch.gch"));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / ".triton/cache/k.cubin"));
    EXPECT_TRUE(fs::exists(folder_.path())) << "the link out was not followed";
}

TEST_F(ScratchFoldersTest, CachesOverTheirBudgetAreEmptiedOnlyWhenNoOtherEvaluationRuns) {
    write(workspace_ / "torch_extensions/ext/ext.so", 64 * 1024);
    write(workspace_ / "tmp/torchinductor_root/pch.gch", 64 * 1024);
    {
        ScratchFolder other = claim("run-other");
        ScratchFolder mine = claim("run-mine");
        const ScratchTidy tidy = mine.tidyWorkspaceRuns(16 * 1024);
        EXPECT_FALSE(tidy.cachesCleared) << "another evaluation may be reading them";
        EXPECT_TRUE(fs::is_regular_file(workspace_ / "torch_extensions/ext/ext.so"));
    }
    ScratchFolder mine = claim("run-alone");
    const ScratchTidy tidy = mine.tidyWorkspaceRuns(16 * 1024);
    EXPECT_TRUE(tidy.cachesCleared);
    EXPECT_GE(tidy.bytesFreed, 128u * 1024);
    EXPECT_TRUE(fs::is_directory(workspace_ / "tmp")) << "emptied, not removed";
    EXPECT_TRUE(fs::is_empty(workspace_ / "tmp"));
    EXPECT_TRUE(fs::is_empty(workspace_ / "torch_extensions"));
    EXPECT_TRUE(fs::is_directory(mine.path()));

    // Within budget, the same caches stay.
    write(workspace_ / "torch_extensions/ext/ext.so", 1000);
    EXPECT_FALSE(mine.tidyWorkspaceRuns(1 << 20).cachesCleared);
    EXPECT_TRUE(fs::is_regular_file(workspace_ / "torch_extensions/ext/ext.so"));
}

TEST_F(ScratchFoldersTest, IdleWorkspacesAreRemovedUnlessAnEvaluationHoldsThem) {
    const fs::path idle = runs_ / "ws-idle";
    const fs::path recent = runs_ / "ws-recent";
    write(idle / "torch_extensions/ext.so", 1000);
    write(recent / "torch_extensions/ext.so", 1000);
    write(runs_ / "not-a-workspace/file", 10);
    makeOld(idle);

    workspace_ = runs_ / "ws-held";
    std::optional<ScratchFolder> held = claim("run-1");
    makeOld(workspace_);

    const ScratchTidy tidy = removeIdleWorkspaceRuns(runs_, std::chrono::hours(72));
    EXPECT_TRUE(removedName(tidy, "ws-idle"));
    EXPECT_FALSE(fs::exists(idle));
    EXPECT_TRUE(fs::is_directory(recent));
    EXPECT_TRUE(fs::is_directory(held->path())) << "an evaluation holds it";
    EXPECT_TRUE(fs::exists(runs_ / "not-a-workspace/file")) << "only workspaces' runs folders";

    held.reset();
    makeOld(workspace_);
    EXPECT_TRUE(removedName(removeIdleWorkspaceRuns(runs_, std::chrono::hours(72)), "ws-held"));
    EXPECT_FALSE(fs::exists(workspace_));
}

TEST_F(ScratchFoldersTest, AClaimAfterASweepRemovedTheWorkspaceFolderMakesItAgain) {
    { ScratchFolder first = claim("run-1"); }
    makeOld(workspace_);
    removeIdleWorkspaceRuns(runs_, std::chrono::hours(1));
    ASSERT_FALSE(fs::exists(workspace_));
    ScratchFolder again = claim("run-2");
    EXPECT_TRUE(fs::is_directory(again.path()));
}

TEST(ScratchFolderBudgets, TheEnvironmentSetsThemAndNonsenseFallsBack) {
    ::setenv("KWB_RUNS_CACHE_MIB", "5", 1);
    ::setenv("KWB_RUNS_IDLE_HOURS", "2", 1);
    EXPECT_EQ(keptScratchCacheBudget(), 5u << 20);
    EXPECT_EQ(workspaceRunsIdleTime(), std::chrono::hours(2));
    ::setenv("KWB_RUNS_CACHE_MIB", "-3", 1);
    ::setenv("KWB_RUNS_IDLE_HOURS", "soon", 1);
    EXPECT_EQ(keptScratchCacheBudget(), 1024u << 20);
    EXPECT_EQ(workspaceRunsIdleTime(), std::chrono::hours(72));
    ::unsetenv("KWB_RUNS_CACHE_MIB");
    ::unsetenv("KWB_RUNS_IDLE_HOURS");
}
