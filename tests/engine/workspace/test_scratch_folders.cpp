#include "engine/workspace/scratch_folders.h"
#include "tests/test_files.h"
#include "tests/unprivileged_child.h"

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <stdexcept>
#include <sys/file.h>
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
    ScratchTidy lastTidy_;

    static void write(const fs::path& path, std::size_t bytes) {
        test::writeText(path, std::string(bytes, 'x'));
    }

    ScratchFolder claim(const std::string& id, ScratchCacheBudget budget = {}) {
        std::string error;
        std::optional<ScratchFolder> folder =
            ScratchFolder::claim(workspace_, id, budget, &lastTidy_, &error);
        if (!folder)
            throw std::runtime_error("no scratch folder: " + error); // gtest fails the test
        return std::move(*folder);
    }

    static bool removedName(const ScratchTidy& tidy, const std::string& name) {
        return std::find(tidy.removed.begin(), tidy.removed.end(), name) != tidy.removed.end();
    }

    // Whether some process could take the runs folder's lock exclusively now.
    bool runsFolderFree() const {
        const int fd = ::open(workspace_.c_str(), O_RDONLY | O_DIRECTORY);
        const bool free = fd >= 0 && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
        if (fd >= 0)
            ::close(fd);
        return free;
    }
};

} // namespace

TEST_F(ScratchFoldersTest, AClaimedFolderExistsWhileHeldAndIsGoneAfter) {
    write(folder_.path() / "outside/keep.txt", 10);
    std::string path;
    {
        ScratchFolder folder = claim("100-1");
        path = folder.path();
        EXPECT_EQ(path, (workspace_ / "100-1").string());
        write(fs::path(path) / "harness-request.json", 10);
        fs::create_directory_symlink(folder_.path() / "outside", fs::path(path) / "link-out");
        ScratchFolder moved = std::move(folder);
        EXPECT_TRUE(folder.path().empty()) << "a moved-from folder holds nothing";
        EXPECT_EQ(moved.path(), path);
        EXPECT_TRUE(fs::is_directory(path));
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_TRUE(fs::is_directory(workspace_));
    EXPECT_TRUE(fs::is_regular_file(folder_.path() / "outside/keep.txt"))
        << "the link was removed, not followed";
}

TEST_F(ScratchFoldersTest, AClaimAloneRemovesEverythingButTheKeptCaches) {
    write(workspace_ / "200-1/harness-result.json", 10); // an evaluation that died
    write(workspace_ / "escape-disk-1.bin", 4096);       // a candidate's leftovers
    write(workspace_ / "sub/deep/file", 10);
    write(folder_.path() / "outside/keep.txt", 10);
    fs::create_directory_symlink(folder_.path() / "outside", workspace_ / "link-out");
    write(workspace_ / "torch_extensions/ext/ext.so", 1000);
    write(workspace_ / "tmp/torchinductor_root/pch.gch", 1000);
    write(workspace_ / ".triton/cache/k.cubin", 1000);
    write(workspace_ / ".cache", 10); // a cache's name on a file: not a cache

    ScratchFolder mine = claim("300-1");
    EXPECT_TRUE(lastTidy_.alone);
    EXPECT_TRUE(lastTidy_.complete);
    EXPECT_FALSE(lastTidy_.cachesCleared);
    for (const char* gone : {"200-1", "escape-disk-1.bin", "sub", "link-out", ".cache"}) {
        EXPECT_TRUE(removedName(lastTidy_, gone)) << gone;
        EXPECT_FALSE(fs::exists(fs::symlink_status(workspace_ / gone))) << gone;
    }
    EXPECT_GE(lastTidy_.bytesFreed, 4096u);
    EXPECT_TRUE(fs::is_directory(mine.path()));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / "torch_extensions/ext/ext.so"));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / "tmp/torchinductor_root/pch.gch"));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / ".triton/cache/k.cubin"));
    EXPECT_TRUE(fs::is_regular_file(folder_.path() / "outside/keep.txt"));
    std::vector<std::string> left;
    for (const auto& entry : fs::directory_iterator(workspace_))
        left.push_back(entry.path().filename().string());
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<std::string>{".triton", "300-1", "tmp", "torch_extensions"}))
        << "nothing set aside was left behind";
}

TEST_F(ScratchFoldersTest, BesideAnotherEvaluationOnlyEndedScratchFoldersGo) {
    ScratchFolder running = claim("400-1");
    write(fs::path(running.path()) / "inputs.pt", 10);
    write(workspace_ / "400-2/harness-log.txt", 10); // ended: nobody holds it
    write(workspace_ / ".config/matplotlib/rc", 10); // the running one's HOME may use it
    write(workspace_ / "escape-disk-1.bin", 10);

    ScratchFolder second = claim("400-3");
    EXPECT_FALSE(lastTidy_.alone);
    EXPECT_TRUE(removedName(lastTidy_, "400-2"));
    EXPECT_FALSE(fs::exists(workspace_ / "400-2"));
    EXPECT_TRUE(fs::is_regular_file(fs::path(running.path()) / "inputs.pt"));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / ".config/matplotlib/rc"));
    EXPECT_TRUE(fs::is_regular_file(workspace_ / "escape-disk-1.bin"));

    { ScratchFolder ended = std::move(running); }
    { ScratchFolder ended = std::move(second); }
    ScratchFolder alone = claim("400-4");
    EXPECT_TRUE(lastTidy_.alone);
    EXPECT_FALSE(fs::exists(workspace_ / ".config"));
    EXPECT_FALSE(fs::exists(workspace_ / "escape-disk-1.bin"));
}

TEST_F(ScratchFoldersTest, WhileAnyEvaluationRunsNoOtherProcessHoldsTheRunsFolderAlone) {
    std::optional<ScratchFolder> first = claim("500-1");
    EXPECT_FALSE(runsFolderFree());
    std::optional<ScratchFolder> second = claim("500-2");
    EXPECT_FALSE(lastTidy_.alone);
    EXPECT_FALSE(runsFolderFree());
    first.reset();
    EXPECT_FALSE(runsFolderFree()) << "the second still holds it";
    second.reset();
    EXPECT_TRUE(runsFolderFree());
}

TEST_F(ScratchFoldersTest, CachesOverTheirBudgetAreEmptiedOnlyWhenNoOtherEvaluationRuns) {
    write(workspace_ / "torch_extensions/ext/ext.so", 64 * 1024);
    write(workspace_ / "tmp/torchinductor_root/pch.gch", 64 * 1024);
    const ScratchCacheBudget small{16 * 1024, 1000};
    {
        ScratchFolder other = claim("600-1");
        ScratchFolder mine = claim("600-2", small);
        EXPECT_FALSE(lastTidy_.cachesCleared) << "another evaluation may be reading them";
        EXPECT_TRUE(fs::is_regular_file(workspace_ / "torch_extensions/ext/ext.so"));
    }
    {
        ScratchFolder mine = claim("600-3", small);
        EXPECT_TRUE(lastTidy_.cachesCleared);
        EXPECT_GE(lastTidy_.bytesFreed, 128u * 1024);
        EXPECT_TRUE(fs::is_directory(workspace_ / "tmp")) << "emptied, not removed";
        EXPECT_EQ(fs::status(workspace_ / "tmp").permissions() & fs::perms::all,
                  fs::perms::owner_all);
        EXPECT_TRUE(fs::is_empty(workspace_ / "tmp"));
        EXPECT_TRUE(fs::is_empty(workspace_ / "torch_extensions"));
    }
    // Empty files take no blocks: the entry count has a budget of its own.
    for (int i = 0; i < 50; ++i)
        write(workspace_ / ".cache" / ("f" + std::to_string(i)), 0);
    {
        ScratchFolder mine = claim("600-4", ScratchCacheBudget{1ULL << 30, 20});
        EXPECT_TRUE(lastTidy_.cachesCleared);
        EXPECT_TRUE(fs::is_empty(workspace_ / ".cache"));
    }
    // Within budget, the caches stay.
    write(workspace_ / "torch_extensions/ext/ext.so", 1000);
    ScratchFolder mine = claim("600-5");
    EXPECT_FALSE(lastTidy_.cachesCleared);
    EXPECT_TRUE(fs::is_regular_file(workspace_ / "torch_extensions/ext/ext.so"));
}

TEST_F(ScratchFoldersTest, FoldersACandidateClosedToItsOwnUserAreOpenedAgain) {
    write(workspace_ / "stash/junk.bin", 4096);
    write(workspace_ / "torch_extensions/ext.so", 10);
    const fs::path ws = workspace_;
    const int status = test::runAsUnprivileged(folder_.path(), [ws]() {
        // What a candidate of this user does to its HOME.
        if (::chmod((ws / "stash").c_str(), 0) != 0 || ::chmod(ws.c_str(), 0) != 0)
            return 10;
        ScratchTidy tidy;
        std::string error;
        auto folder = ScratchFolder::claim(ws, "700-1", ScratchCacheBudget{}, &tidy, &error);
        if (!folder)
            return 11;
        if (!tidy.alone || !tidy.complete)
            return 12;
        if (::access((ws / "stash").c_str(), F_OK) == 0)
            return 13;
        if (::access((ws / "torch_extensions/ext.so").c_str(), F_OK) != 0)
            return 14;
        return 0;
    });
    EXPECT_EQ(status, 0) << "10: chmod failed, 11: no claim, 12: tidy not alone or incomplete, "
                            "13: the closed folder stayed, 14: the cache went";
}

TEST_F(ScratchFoldersTest, IdleWorkspacesAreRemovedUnlessAnEvaluationHoldsThem) {
    write(runs_ / "ws-idle/torch_extensions/ext.so", 1000);
    write(runs_ / "not-a-workspace/file", 10);
    workspace_ = runs_ / "ws-held";
    std::optional<ScratchFolder> held = claim("800-1");

    EXPECT_TRUE(removeIdleWorkspaceRuns(runs_, std::chrono::hours(1)).removed.empty())
        << "all were used within the hour";
    const ScratchTidy tidy = removeIdleWorkspaceRuns(runs_, std::chrono::seconds(0));
    EXPECT_TRUE(removedName(tidy, "ws-idle"));
    EXPECT_FALSE(fs::exists(runs_ / "ws-idle"));
    EXPECT_TRUE(fs::is_directory(held->path())) << "an evaluation holds it";
    EXPECT_TRUE(fs::exists(runs_ / "not-a-workspace/file")) << "only workspaces' runs folders";

    held.reset();
    EXPECT_TRUE(removedName(removeIdleWorkspaceRuns(runs_, std::chrono::seconds(0)), "ws-held"));
    EXPECT_FALSE(fs::exists(workspace_));
    ScratchFolder again = claim("800-2");
    EXPECT_TRUE(fs::is_directory(again.path())) << "a claim makes the runs folder again";
}

TEST(ScratchFolderNames, NewNamesAreRecognisedAndOthersAreNot) {
    const std::string name = newScratchFolderName();
    EXPECT_TRUE(isScratchFolderName(name)) << name;
    EXPECT_NE(newScratchFolderName(), name);
    EXPECT_TRUE(isScratchFolderName(name + "-2"));
    for (const char* other : {"", "tmp", "12", "12-", "-12", "1-2-3-4", "1-a", ".kwb-new-1-2",
                              "torch_extensions", "12--3"})
        EXPECT_FALSE(isScratchFolderName(other)) << other;
}

TEST(ScratchFolderBudgets, TheEnvironmentSetsThemAndNonsenseFallsBack) {
    ::setenv("KWB_RUNS_CACHE_MIB", "5", 1);
    ::setenv("KWB_RUNS_IDLE_HOURS", "2", 1);
    EXPECT_EQ(keptScratchCacheBudget().bytes, 5u << 20);
    EXPECT_EQ(workspaceRunsIdleTime(), std::chrono::hours(2));
    for (const char* nonsense : {"-3", " 5", "soon", "5 "}) {
        ::setenv("KWB_RUNS_CACHE_MIB", nonsense, 1);
        ::setenv("KWB_RUNS_IDLE_HOURS", nonsense, 1);
        EXPECT_EQ(keptScratchCacheBudget().bytes, 1024u << 20) << nonsense;
        EXPECT_EQ(workspaceRunsIdleTime(), std::chrono::hours(72)) << nonsense;
    }
    // Too large for the arithmetic: held to the largest value taken, never wrapped to little.
    ::setenv("KWB_RUNS_CACHE_MIB", "99999999999999999999", 1);
    ::setenv("KWB_RUNS_IDLE_HOURS", "5124095576030432", 1);
    EXPECT_EQ(keptScratchCacheBudget().bytes, (1ULL << 24) << 20);
    EXPECT_EQ(workspaceRunsIdleTime(), std::chrono::hours(24 * 365 * 10));
    ::unsetenv("KWB_RUNS_CACHE_MIB");
    ::unsetenv("KWB_RUNS_IDLE_HOURS");
}
