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
    // How much the tree may write into `diskPaths` (the writable folders). Watched cheaply as the
    // shrinking free space of their file systems; when that passes the budget, the folders'
    // own growth (and files the tree deleted but holds open) decides, so that another writer on
    // the same file system (a concurrent evaluation's flood) is not blamed on this tree.
    std::uint64_t diskBytes = 0;
    std::vector<std::string> diskPaths;
    // Writable folders shared with other processes (the host's /tmp and /dev/shm without
    // bubblewrap): watched too, but only files created there after the tree started count.
    std::vector<std::string> sharedDiskPaths;
    // False: the free space alone decides (the warm worker's server, whose stage children write
    // into folders of the server's sandbox that the stage's own list does not name).
    bool attributeDiskToTree = true;

    // How many levels of processes at the top of the tree, below the sandbox's wrappers, are
    // kwb's own (JudgeKeeper: continued whenever found stopped). 0: none watched.
    int ownLevels = 0;

    bool any() const {
        return maxProcesses > 0 || memoryBytes > 0 || diskBytes > 0 || ownLevels > 0;
    }
};

} // namespace kwb
