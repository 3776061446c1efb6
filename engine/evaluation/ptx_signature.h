#pragma once

#include <string>
#include <vector>

namespace kwb {

// One kernel parameter as PTX declares it: ".param .u64 name" or, for a struct passed by
// value, ".param .align 8 .b8 name[24]" (type "b8", sizeBytes 24).
struct PtxParameter {
    std::string type; // u8..u64, s8..s64, b8..b64, f16, f32, f64
    int sizeBytes = 0;
};

struct PtxEntry {
    std::string symbol; // the entry's (possibly mangled) name
    std::vector<PtxParameter> parameters;
    int maxThreadsPerBlock = 0; // from .maxntid (__launch_bounds__), 0 when not declared
};

// The kernels (.entry) a PTX module defines, in order. The fast-path runtime converts launch
// arguments by these types, so a mismatched call fails before it reaches the GPU.
std::vector<PtxEntry> parsePtxEntries(const std::string& ptx);

// "_Z11gelu_kernelPKfPfl" -> "gelu_kernel"; unmangled names come back unchanged.
std::string kernelBaseName(const std::string& symbol);

} // namespace kwb
