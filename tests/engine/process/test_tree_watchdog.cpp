// The whole-tree budget of untrusted children (TreeWatchdog through runProcess), without
// bubblewrap: what holds on a GPU host that has none, and for root.
#include "engine/process/process_runner.h"
#include "engine/process/process_table.h"
#include "engine/process/tree_watchdog.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace kwb;

namespace {

ProcessResult runShell(const std::string& script, const TreeBudget& budget) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.timeout = std::chrono::seconds(60);
    spec.treeBudget = budget;
    return runProcess(spec);
}

// Pids of live processes whose command line holds `marker`.
std::vector<int> processesWith(const std::string& marker) {
    std::vector<int> found;
    for (const auto& process : readProcessTable()) {
        std::ifstream cmdline("/proc/" + std::to_string(process.pid) + "/cmdline");
        std::string text((std::istreambuf_iterator<char>(cmdline)), {});
        if (process.state != 'Z' && text.find(marker) != std::string::npos)
            found.push_back(process.pid);
    }
    return found;
}

std::string uniqueSuffix() {
    return std::to_string(std::random_device{}() % 100000);
}

} // namespace

TEST(TreeWatchdog, MemoryOfAllProcessesTogetherIsLimited) {
    // Three children of 150 MiB each: every one far under any per-process limit, together over
    // the 300 MiB budget.
    TreeBudget budget;
    budget.memoryBytes = 300ULL << 20;
    const std::string hog = "python3 -c 'import time; b = bytearray(150 << 20); time.sleep(30)'";
    ProcessResult r = runShell(hog + " & " + hog + " & " + hog + " & wait", budget);
    EXPECT_FALSE(r.succeeded());
    EXPECT_NE(r.limitExceeded.find("memory limit (300 MiB"), std::string::npos) << r.statusText();
    EXPECT_LT(r.elapsed.count(), 20000);
}

TEST(TreeWatchdog, DiskWrittenByTheTreeIsLimited) {
    const fs::path dir = fs::temp_directory_path() / ("kwb-watchdog-disk-" + uniqueSuffix());
    fs::create_directories(dir);
    TreeBudget budget;
    budget.diskBytes = 64ULL << 20;
    budget.diskPaths = {dir.string()};
    // 1 GiB in 8 MiB pieces, each flushed, so the free space shrinks as it writes.
    ProcessResult r = runShell("for i in $(seq 128); do head -c 8388608 /dev/zero > " +
                                   (dir / "fill").string() + ".$i; sync; done",
                               budget);
    EXPECT_FALSE(r.succeeded());
    EXPECT_NE(r.limitExceeded.find("disk limit (64 MiB"), std::string::npos) << r.statusText();
    std::uintmax_t written = 0;
    for (const auto& entry : fs::directory_iterator(dir))
        written += entry.file_size();
    EXPECT_LT(written, 512ULL << 20) << "stopped long before the whole flood";
    fs::remove_all(dir);
}

// Concurrent evaluations share file systems: a flood written by another process (here the test
// itself, into a folder beside the tree's) shrinks the free space, but is not this tree's.
TEST(TreeWatchdog, AnotherWritersFloodOnTheSameFileSystemIsNotBlamedOnTheTree) {
    const fs::path dir = fs::temp_directory_path() / ("kwb-watchdog-mine-" + uniqueSuffix());
    const fs::path other = fs::temp_directory_path() / ("kwb-watchdog-other-" + uniqueSuffix());
    fs::create_directories(dir);
    fs::create_directories(other);
    TreeBudget budget;
    budget.diskBytes = 64ULL << 20;
    budget.diskPaths = {dir.string()};
    std::thread flood([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        const std::string piece(8 << 20, 'x');
        for (int i = 0; i < 32; ++i) { // 256 MiB
            std::ofstream out(other / ("fill." + std::to_string(i)), std::ios::binary);
            out << piece;
            out.flush();
            ::sync();
        }
    });
    ProcessResult r =
        runShell("head -c 1048576 /dev/zero > " + (dir / "small").string() + "; sleep 3", budget);
    flood.join();
    EXPECT_TRUE(r.succeeded()) << r.statusText() << " " << r.limitExceeded;
    fs::remove_all(dir);
    fs::remove_all(other);
}

// Space held by a file the tree deleted but keeps open shows in no folder, and still counts.
TEST(TreeWatchdog, AFileDeletedButHeldOpenStillCounts) {
    const fs::path dir = fs::temp_directory_path() / ("kwb-watchdog-held-" + uniqueSuffix());
    fs::create_directories(dir);
    TreeBudget budget;
    budget.diskBytes = 64ULL << 20;
    budget.diskPaths = {dir.string()};
    const std::string file = (dir / "hidden").string();
    ProcessResult r = runShell("exec 3>" + file + "; rm " + file +
                                   "; for i in $(seq 64); do head -c 8388608 /dev/zero >&3; sync; "
                                   "done; sleep 5",
                               budget);
    EXPECT_FALSE(r.succeeded());
    EXPECT_NE(r.limitExceeded.find("disk limit (64 MiB"), std::string::npos) << r.statusText();
    fs::remove_all(dir);
}

TEST(TreeWatchdog, NothingTheTreeStartedOutlivesIt) {
    // A daemon: a new session, its parent gone at once, so it is neither in the child's process
    // group nor below it when the child exits.
    const std::string marker = "31." + uniqueSuffix();
    TreeBudget budget;
    budget.maxProcesses = 64;
    ProcessResult r = runShell("setsid sh -c 'sleep " + marker + "' & sleep 0.3; exit 0", budget);
    EXPECT_TRUE(r.succeeded()) << r.statusText();
    std::vector<int> left = processesWith("sleep " + marker);
    for (int i = 0; i < 50 && !left.empty(); ++i) { // SIGKILL is sent; reaping takes a moment
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        left = processesWith("sleep " + marker);
    }
    EXPECT_TRUE(left.empty()) << "a process the child started is still running";
}

TEST(TreeWatchdog, ATrustedChildIsNotWatched) {
    // Without a budget nothing is tracked: a helper a trusted tool leaves behind on purpose
    // (a compiler server, a daemon the user started) is not the runner's to end.
    const std::string marker = "32." + uniqueSuffix();
    ProcessResult r = runShell("setsid sh -c 'sleep " + marker + "' & sleep 0.3; exit 0", {});
    EXPECT_TRUE(r.succeeded()) << r.statusText();
    std::vector<int> left = processesWith("sleep " + marker);
    EXPECT_FALSE(left.empty());
    for (int pid : left)
        kill(pid, SIGKILL);
}

TEST(TreeWatchdog, PrivateMemoryOfThisProcessIsReadAndSizesAreWords) {
    EXPECT_GT(privateMemoryBytes(getpid()), 0u);
    EXPECT_EQ(privateMemoryBytes(-5), 0u);
    EXPECT_EQ(byteSize(300ULL << 20), "300 MiB");
    EXPECT_EQ(byteSize(3ULL << 29), "1.5 GiB");
}

TEST(TreeWatchdog, ANewlineInTheCommandNameDoesNotHideAProcess) {
    // /proc/PID/stat prints the name as it is; a reader that stops at the first newline loses
    // the process and everything below it.
    TreeBudget budget;
    budget.maxProcesses = 4;
    ProcessResult r = runShell("python3 -c 'import ctypes, os, time\n"
                               "ctypes.CDLL(None).prctl(15, b\"x\\n\", 0, 0, 0)\n"
                               "[os.fork() == 0 and time.sleep(30) for _ in range(6)]\n"
                               "time.sleep(30)'",
                               budget);
    EXPECT_NE(r.limitExceeded.find("process limit (4)"), std::string::npos) << r.statusText();
    EXPECT_LT(r.elapsed.count(), 20000);
}

TEST(TreeWatchdog, ADaemonThatLeftTheTreeAtOnceIsStillEnded) {
    // A double fork whose middle process exits at once: the root is a child subreaper, so the
    // daemon stays below it however fast its parent went, and is ended with the tree.
    const std::string marker = "33." + uniqueSuffix();
    TreeBudget budget;
    budget.maxProcesses = 64;
    ProcessResult r = runShell("(setsid sleep " + marker + " &) ; sleep 0.2; exit 0", budget);
    EXPECT_TRUE(r.succeeded()) << r.statusText();
    std::vector<int> left = processesWith("sleep " + marker);
    for (int i = 0; i < 50 && !left.empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        left = processesWith("sleep " + marker);
    }
    EXPECT_TRUE(left.empty()) << "the daemon outlived its tree";
}
