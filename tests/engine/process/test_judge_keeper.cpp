// JudgeKeeper: kwb's own processes at the top of a stage's tree are continued when something
// stopped them; the candidate's processes below, which the judge stops on purpose, are not.
#include "engine/process/judge_keeper.h"
#include "engine/process/process_runner.h"

#include <algorithm>
#include <gtest/gtest.h>

using namespace kwb;

namespace {

ProcessEntry entry(int pid, int parent, const std::string& name) {
    ProcessEntry process;
    process.pid = pid;
    process.parentPid = parent;
    process.name = name;
    process.state = 'S';
    return process;
}

std::vector<int> pidsOf(const std::vector<ProcessEntry>& processes) {
    std::vector<int> pids;
    for (const auto& process : processes)
        pids.push_back(process.pid);
    std::sort(pids.begin(), pids.end());
    return pids;
}

ProcessResult runShell(const std::string& script, int ownLevels) {
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", script};
    spec.timeout = std::chrono::seconds(20);
    spec.treeBudget.ownLevels = ownLevels;
    return runProcess(spec);
}

} // namespace

TEST(JudgeKeeper, OwnProcessesAreTheLevelsBelowTheSandboxWrappers) {
    // bubblewrap, its init, the warm server, a stage child and a standby child, the candidate's
    // process below the stage child, and a helper of the candidate's that calls itself bwrap.
    const ProcessEntry root = entry(10, 1, "bwrap");
    const std::vector<ProcessEntry> tree = {entry(11, 10, "bwrap"),   entry(12, 11, "python3"),
                                            entry(13, 12, "python3"), entry(14, 12, "python3"),
                                            entry(15, 13, "python3"), entry(16, 15, "bwrap"),
                                            entry(17, 16, "python3")};
    EXPECT_EQ(pidsOf(ownProcessesAtTheTop(root, tree, 2)), (std::vector<int>{10, 11, 12, 13, 14}));
    EXPECT_EQ(pidsOf(ownProcessesAtTheTop(root, tree, 1)), (std::vector<int>{10, 11, 12}));
    // Without a sandbox the stage's process is the root, and the judge.
    const ProcessEntry judge = entry(20, 1, "python3");
    const std::vector<ProcessEntry> below = {entry(21, 20, "python3"), entry(22, 21, "bwrap")};
    EXPECT_EQ(pidsOf(ownProcessesAtTheTop(judge, below, 1)), (std::vector<int>{20}));
    EXPECT_TRUE(ownProcessesAtTheTop(judge, below, 0).empty());
}

TEST(JudgeKeeper, AStoppedJudgeIsContinuedAndNamed) {
    // The root stops itself, as a candidate's process would stop its judge: without the keeper it
    // would wait, stopped, for the 20 s timeout.
    const ProcessResult r = runShell("kill -STOP $$; echo continued", 1);
    EXPECT_TRUE(r.succeeded()) << r.statusText();
    EXPECT_EQ(r.out.text, "continued\n");
    EXPECT_NE(r.ownProcessesStopped.find("stopped (SIGSTOP) 1 time(s) and continued them (sh (pid"),
              std::string::npos)
        << r.ownProcessesStopped;
}

TEST(JudgeKeeper, TheCandidatesStoppedProcessesAreLeftStopped) {
    // A child of the judge stopped (by the judge, timing the baselines) stays stopped for the
    // judge to continue: it is not one of kwb's own.
    const ProcessResult r = runShell("sleep 30 & child=$!; kill -STOP $child; sleep 0.6; "
                                     "cut -d' ' -f3 /proc/$child/stat; kill -9 $child",
                                     1);
    EXPECT_TRUE(r.succeeded()) << r.statusText();
    EXPECT_EQ(r.out.text, "T\n");
    EXPECT_EQ(r.ownProcessesStopped, "");
}

TEST(JudgeKeeper, WithoutOwnLevelsNothingIsContinued) {
    // A tree with no judge at its top (a trusted tool's) is not watched: the stop holds until the
    // test continues it from outside.
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", "kill -STOP $$; echo continued"};
    spec.timeout = std::chrono::seconds(2);
    spec.treeBudget.memoryBytes = 1ULL << 40; // watched, but for memory alone
    const ProcessResult r = runProcess(spec);
    EXPECT_TRUE(r.timedOut) << r.statusText();
    EXPECT_EQ(r.ownProcessesStopped, "");
}
