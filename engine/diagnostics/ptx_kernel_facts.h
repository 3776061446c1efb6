#pragma once

#include <string>
#include <vector>

namespace kwb::diagnostics {

// What a kernel's PTX says that ptxas -v does not.
struct PtxKernelFacts {
    std::string mangledName;
    int launchBoundThreads = 0; // product of .maxntid (or .reqntid), 0 when not declared
    // Reads or writes an `extern __shared__` array (an `.extern .shared` symbol, declared at
    // module scope or in the body), directly or through a called .func.
    bool usesDynamicShared = false;
};

// One entry per `.entry` in the module, in order.
std::vector<PtxKernelFacts> scanPtxKernels(const std::string& ptx);

} // namespace kwb::diagnostics
