#pragma once

#include <cstdint>
#include <string>

namespace kwb::timeline {

// Per-SM resource limits of one architecture. The defaults are Hopper (sm_90) as published in
// the CUDA programming guide's compute capability table.
struct SmLimits {
    std::uint32_t registersPerSm = 64 * 1024;
    std::uint32_t registerAllocationUnit = 256; // registers, allocated per warp
    std::uint32_t maxRegistersPerThread = 255;
    std::uint32_t sharedBytesPerSm = 228 * 1024;
    std::uint32_t maxSharedBytesPerBlock = 227 * 1024;
    std::uint32_t sharedAllocationUnit = 128;
    std::uint32_t reservedSharedBytesPerBlock = 1024; // the driver's per-block reservation
    std::uint32_t maxThreadsPerSm = 2048;
    std::uint32_t maxThreadsPerBlock = 1024;
    std::uint32_t maxBlocksPerSm = 32;
    std::uint32_t warpSize = 32;
};

// Which resource caps the resident blocks per SM.
enum class OccupancyLimiter { Warps, Blocks, Registers, SharedMemory, DoesNotFit };
std::string toString(OccupancyLimiter limiter);

struct OccupancyEstimate {
    std::uint32_t blocksPerSm = 0;
    std::uint32_t activeWarpsPerSm = 0;
    std::uint32_t maxWarpsPerSm = 0;
    double occupancy = 0.0; // active warps / maximum warps, 0..1
    OccupancyLimiter limiter = OccupancyLimiter::DoesNotFit;
};

// Theoretical occupancy from a launch's configuration, the way the CUDA occupancy calculator
// counts it: warps, the block slot limit, registers rounded up per warp, and shared memory
// (static + dynamic + the per-block reservation) rounded up to the allocation unit. It ignores
// the carveout between L1 and shared memory, so it is an upper bound when a kernel runs with a
// smaller carveout.
OccupancyEstimate estimateOccupancy(std::uint32_t threadsPerBlock, std::uint32_t registersPerThread,
                                    std::uint32_t sharedBytesPerBlock,
                                    const SmLimits& limits = SmLimits{});

} // namespace kwb::timeline
