#pragma once

#include <string>

namespace kwb::diagnostics {

// Per-block limits of one architecture, from the CUDA programming guide's table of compute
// capabilities.
struct ArchLimits {
    int computeCapability = 90;        // 90 for sm_90
    int registersPerBlock = 64 * 1024; // every arch since sm_50
    int registerAllocationUnit = 256;  // registers are handed out per warp in these chunks
    // The register file is split among 4 SM sub-partitions and a block's warps spread over all
    // of them, so the warps that fit are counted in fours.
    int warpAllocationGranularity = 4;
    int maxThreadsPerBlock = 1024;
    long maxSharedPerBlockOptInBytes =
        48 * 1024;      // with cudaFuncAttributeMaxDynamicSharedMemorySize
    bool known = false; // false: an arch the table does not list (the limits are sm_50's)
};

// "sm_90", "sm_90a", "compute_80" -> limits; unknown or malformed archs get the conservative
// 48 KB shared memory limit and `known == false`.
ArchLimits limitsForArch(const std::string& arch);

// Most threads a block can have when each thread needs `registers` registers: registers are
// allocated per warp in units of 256, the block may use 64K of them in whole groups of 4 warps,
// and no block exceeds 1024 threads. What cudaFuncGetAttributes reports as maxThreadsPerBlock
// without __launch_bounds__.
int maxThreadsForRegisters(int registers, const ArchLimits& limits);

} // namespace kwb::diagnostics
