#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kwb {

// The default TreeBudget figures for an untrusted process tree (an evaluation's stage, the
// agent's shell): what it may take from the host unless the caller says otherwise.

// Memory, all its processes together: 16 GiB, and at most 3/4 of what this process may use,
// physical memory or its cgroup's limit (the rest is the host's: the GUI, the engine, other
// evaluations, the page cache).
std::uint64_t defaultMemoryBudget();

// The most a task's inputs may take under a memory budget (0: defaultMemoryBudget()): a quarter of
// it, which the reference's and the candidate's copies, their outputs and the comparison share.
// The evaluation refuses a larger task as task_too_large, the task filter skips it.
std::uint64_t inputBudgetWithin(std::uint64_t memoryBudget);

// Disk: 8 GiB, and at most half of what is free on the file systems of `writablePaths` (a path
// not created yet counts by its nearest existing parent); never under 256 MiB.
std::uint64_t defaultDiskBudget(const std::vector<std::string>& writablePaths);

} // namespace kwb
