#pragma once

#include "engine/process/process_table.h"

#include <string>
#include <vector>

namespace kwb {

// kwb's own processes at the top of a stage's tree: the root and, below the sandbox's wrappers
// (bubblewrap's processes, named "bwrap", which count as no level), `levels` levels of processes:
// 1 for a stage run as a process of its own (the judge), 2 for a warm server (the server and
// the stage and standby children it forks) or a stage under a profiler. `tree` is
// descendants(root.pid). Below them run the candidate's processes, which the judge stops on
// purpose while it times the baselines.
std::vector<ProcessEntry> ownProcessesAtTheTop(const ProcessEntry& root,
                                               const std::vector<ProcessEntry>& tree, int levels);

// Keeps kwb's own processes at the top of a stage's tree running. Nothing of kwb's stops them,
// but the candidate's processes run as the same user and can: the judge is their parent, or
// their grandparent's parent. A judge stopped for a moment while it times is seen by its own
// SIGCONT handler (kwb_harness/integrity/judge_watch.py). One that nobody continues (its
// stoppers stopped as well, by the judge itself in the same instant) would hang its stage until
// the timeout, and the verdict would name no finding (an adversarial suite's run in a fresh
// clone, 2026-12-06: "correct; not profiled" after 600 s). Polled with the tree by
// TreeWatchdog; each process found stopped is continued and remembered for the verdict.
class JudgeKeeper {
public:
    JudgeKeeper(int rootPid, int levels);

    void check(const std::vector<ProcessEntry>& tree);

    // "" when none was found stopped; otherwise the finding (how many times, which processes),
    // in words, for the evaluation's flag.
    std::string finding() const;

private:
    int root_;
    int levels_;
    int continued_ = 0;
    std::vector<std::string> names_; // "python3 (pid 123)", each process once
};

} // namespace kwb
