#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kwb {

// What one untrusted process tree (a stage with everything it starts) may use together. Kernel
// limits are per process (RLIMIT_AS) or per user (RLIMIT_NPROC, not even that for root); these
// hold for the whole tree, with or without bubblewrap. Zero means unlimited.
struct TreeBudget {
    std::size_t maxProcesses = 0;
    // Private memory (anonymous and shared-memory pages) of all the tree's processes together.
    std::uint64_t memoryBytes = 0;
    // How much the free space of the file systems holding `diskPaths` (the writable folders) may
    // shrink while the tree runs. Another writer on the same file system counts too; the budget
    // is large enough that only a flood trips it.
    std::uint64_t diskBytes = 0;
    std::vector<std::string> diskPaths;

    bool any() const { return maxProcesses > 0 || memoryBytes > 0 || diskBytes > 0; }
};

} // namespace kwb
