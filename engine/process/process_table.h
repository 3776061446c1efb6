#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kwb {

// One live process as /proc/<pid>/stat describes it.
struct ProcessEntry {
    int pid = 0;
    int parentPid = 0;
    char state = 0;   // 'R', 'S', 'Z', ...
    std::string name; // the command name (may hold spaces and parentheses)
    // Clock ticks after boot when it started: with the pid, names one process for good.
    std::uint64_t startTime = 0;
};

// Every process /proc lists now; processes that end while it is read are left out.
std::vector<ProcessEntry> readProcessTable();

// Every live descendant of `root` (children, grandchildren, ...); zombies excluded.
std::vector<ProcessEntry> descendants(int root);
std::vector<int> descendantPids(int root);

// The start time of `pid` (ProcessEntry::startTime), 0 when it is gone.
std::uint64_t processStartTime(int pid);

// One process's entry (its parent, state and name), nullopt when it is gone.
std::optional<ProcessEntry> readProcess(int pid);

} // namespace kwb
