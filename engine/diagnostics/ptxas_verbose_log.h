#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kwb::diagnostics {

// What ptxas -v says about one function. NVRTC and nvcc print the same lines; NVRTC prefixes the
// properties line with "ptxas         .", nvcc indents it.
struct PtxasFunctionReport {
    std::string mangledName;
    std::string arch;     // "sm_90"; empty for non-entry functions
    bool isEntry = false; // a kernel ("Compiling entry function"), not a __device__ function
    int registers = 0;
    int barriers = 0;
    long sharedBytes = 0;              // static shared memory ("N bytes smem")
    std::optional<long> constantBytes; // sum of "N bytes cmem[k]"; newer archs omit it
    long stackFrameBytes = 0;
    long spillStoreBytes = 0;
    long spillLoadBytes = 0;
    long cumulativeStackBytes = 0;
    std::optional<double> compileMs;
};

struct PtxasReport {
    std::vector<PtxasFunctionReport> functions; // in log order
    long globalBytes = 0;                       // "N bytes gmem" (module scope)
    std::optional<long> moduleConstantBytes;    // module-scope cmem, e.g. __constant__ arrays

    const PtxasFunctionReport* find(const std::string& mangledName) const;
};

// Parses the "ptxas info" lines of a compiler log; other lines are ignored, so the whole log can
// be passed.
PtxasReport parsePtxasVerbose(const std::string& log);

} // namespace kwb::diagnostics
