#include "engine/timeline/occupancy_estimate.h"

#include <algorithm>

namespace kwb::timeline {

std::string toString(OccupancyLimiter limiter) {
    switch (limiter) {
    case OccupancyLimiter::Warps:
        return "warps";
    case OccupancyLimiter::Blocks:
        return "blocks per SM";
    case OccupancyLimiter::Registers:
        return "registers";
    case OccupancyLimiter::SharedMemory:
        return "shared memory";
    case OccupancyLimiter::DoesNotFit:
        return "does not fit on an SM";
    }
    return "unknown";
}

namespace {
std::uint64_t roundUp(std::uint64_t value, std::uint64_t unit) {
    return unit == 0 ? value : (value + unit - 1) / unit * unit;
}
} // namespace

OccupancyEstimate estimateOccupancy(std::uint32_t threadsPerBlock, std::uint32_t registersPerThread,
                                    std::uint32_t sharedBytesPerBlock, const SmLimits& limits) {
    OccupancyEstimate estimate;
    estimate.maxWarpsPerSm = limits.maxThreadsPerSm / limits.warpSize;
    if (threadsPerBlock == 0 || threadsPerBlock > limits.maxThreadsPerBlock ||
        registersPerThread > limits.maxRegistersPerThread ||
        sharedBytesPerBlock > limits.maxSharedBytesPerBlock)
        return estimate;

    const std::uint64_t warpsPerBlock = roundUp(threadsPerBlock, limits.warpSize) / limits.warpSize;
    const std::uint64_t byWarps = estimate.maxWarpsPerSm / warpsPerBlock;
    const std::uint64_t byBlocks = limits.maxBlocksPerSm;

    std::uint64_t byRegisters = byBlocks;
    if (registersPerThread > 0) {
        const std::uint64_t registersPerWarp = roundUp(
            std::uint64_t{registersPerThread} * limits.warpSize, limits.registerAllocationUnit);
        byRegisters = (limits.registersPerSm / registersPerWarp) / warpsPerBlock;
    }

    const std::uint64_t sharedPerBlock =
        roundUp(std::uint64_t{sharedBytesPerBlock} + limits.reservedSharedBytesPerBlock,
                limits.sharedAllocationUnit);
    const std::uint64_t byShared = limits.sharedBytesPerSm / sharedPerBlock;

    // The smallest limit names the limiter (ties go to the more basic resource). A limit of zero
    // blocks keeps its name: "registers" tells the user more than "does not fit".
    const std::uint64_t blocks = std::min({byWarps, byBlocks, byRegisters, byShared});
    if (blocks == byWarps)
        estimate.limiter = OccupancyLimiter::Warps;
    else if (blocks == byBlocks)
        estimate.limiter = OccupancyLimiter::Blocks;
    else if (blocks == byRegisters)
        estimate.limiter = OccupancyLimiter::Registers;
    else
        estimate.limiter = OccupancyLimiter::SharedMemory;
    estimate.blocksPerSm = static_cast<std::uint32_t>(blocks);
    estimate.activeWarpsPerSm = static_cast<std::uint32_t>(blocks * warpsPerBlock);
    estimate.occupancy = static_cast<double>(estimate.activeWarpsPerSm) /
                         static_cast<double>(estimate.maxWarpsPerSm);
    return estimate;
}

} // namespace kwb::timeline
