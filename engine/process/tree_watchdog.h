#pragma once

#include "engine/process/judge_keeper.h"
#include "engine/process/process_table.h"
#include "engine/process/tree_budget.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kwb {

// Watches a process tree against a TreeBudget and remembers every process it saw in it, so the
// tree can be ended completely: also the members that left its process group (setsid) and were
// orphaned (reparented above the tree's root). Polled by the owner's wait loop; not thread-safe.
class TreeWatchdog {
public:
    TreeWatchdog(int rootPid, TreeBudget budget);

    // Checks the tree (at most every 100 ms); returns "" or what was
    // exceeded, in words: "process limit (512)", "memory limit (4.0 GiB: 4.3 GiB in 7
    // processes)". Watches nothing when the budget is empty (a trusted child).
    std::string check();

    // SIGKILL to every process seen in the tree that still runs as the same process (its start
    // time unchanged: a pid reused by an unrelated process is left alone). The root is included.
    // Only for a budgeted (untrusted) tree.
    void killAll();

    // Private memory of the tree at the last check.
    std::uint64_t lastMemoryBytes() const { return lastMemory_; }

    // kwb's own processes at the top of the tree found stopped and continued (TreeBudget::
    // ownLevels), checked with the tree.
    const JudgeKeeper& judgeKeeper() const { return keeper_; }

private:
    struct Mount {
        std::string path;
        std::uint64_t availableAtStart = 0;
    };

    std::string checkDisk(const std::vector<ProcessEntry>& tree);
    // What this tree wrote: growth of its folders since the start, plus files its processes hold
    // open after deleting them (space the folders no longer show).
    std::uint64_t bytesWrittenByTree(const std::vector<ProcessEntry>& tree) const;

    int root_;
    TreeBudget budget_;
    JudgeKeeper keeper_;
    std::vector<Mount> mounts_; // one per file system of budget_.diskPaths
    std::uint64_t folderBytesAtStart_ = 0;
    std::int64_t startSeconds_ = 0; // wall clock, for the files of shared folders
    std::chrono::steady_clock::time_point nextFolderCheck_{};
    std::map<int, std::uint64_t> seen_; // pid -> start time (clock ticks since boot)
    std::uint64_t lastMemory_ = 0;
    std::chrono::steady_clock::time_point nextTreeCheck_{};
};

// Private memory of one process: its proportional share (Pss_Anon + Pss_Shmem from
// smaps_rollup), where the kernel has it; 0 if the process is gone.
std::uint64_t privateMemoryBytes(int pid);
// Resident private pages (RssAnon + RssShmem): cheaper, and never less than the share above.
std::uint64_t residentPrivateBytes(int pid);

// "1.5 GiB", "300 MiB".
std::string byteSize(std::uint64_t bytes);

} // namespace kwb
