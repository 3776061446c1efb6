#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kwb::diagnostics {

// The resources one kernel needs, as ptxas and the PTX tell them; what a user checks before a
// launch fails with "too many resources requested" or an occupancy cliff.
struct ResourceUsage {
    std::string mangledName;
    std::string name; // demangled
    std::string arch;
    int registers = 0;
    int barriers = 0;
    long staticSharedBytes = 0;
    std::optional<long> constantBytes; // ptxas prints cmem only for some archs
    long localBytes = 0;               // the stack frame: local arrays and spills, per thread
    long spillStoreBytes = 0;
    long spillLoadBytes = 0;
    long cumulativeStackBytes = 0;
    int maxThreadsPerBlock = 0;
    bool maxThreadsFromLaunchBounds = false; // else computed from registers for the arch
    bool usesDynamicShared = false;
    // What a launch may still ask for as dynamic shared memory: the arch's opt-in maximum per
    // block minus the static shared memory (above 48 KB needs cudaFuncSetAttribute).
    long dynamicSharedAvailableBytes = 0;
};

// Joins ptxas -v's per-function lines with the PTX's launch bounds and dynamic shared memory use,
// one entry per kernel in ptxas's order. `ptx` may be empty (then no launch bounds are known).
std::vector<ResourceUsage> collectResourceUsage(const std::string& ptxasLog, const std::string& ptx,
                                                const std::string& arch);

} // namespace kwb::diagnostics
