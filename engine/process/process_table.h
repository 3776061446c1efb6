#pragma once

#include <string>
#include <vector>

namespace kwb {

// One live process as /proc/<pid>/stat describes it.
struct ProcessEntry {
    int pid = 0;
    int parentPid = 0;
    char state = 0;   // 'R', 'S', 'Z', ...
    std::string name; // the command name (may hold spaces and parentheses)
};

// Every process /proc lists now; processes that end while it is read are left out.
std::vector<ProcessEntry> readProcessTable();

// Pids of every live descendant of `root` (children, grandchildren, ...); zombies excluded.
std::vector<int> descendantPids(int root);

} // namespace kwb
