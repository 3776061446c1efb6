#include "engine/timeline/occupancy_estimate.h"

#include <cmath>
#include <gtest/gtest.h>

using kwb::timeline::estimateOccupancy;
using kwb::timeline::OccupancyLimiter;

namespace {
// QCOMPARE prints through toString(), which for this enum is the engine's own (a std::string).
int limiter(const kwb::timeline::OccupancyEstimate& e) {
    return static_cast<int>(e.limiter);
}
} // namespace

// Expected numbers worked out by hand from the sm_90 limits (64 warps, 32 blocks, 64K registers
// in 256-register units per warp, 228 KiB shared memory with 1 KiB reserved per block).
TEST(KernelOccupancy, fullOccupancyWhenNothingLimits) {
    const auto e = estimateOccupancy(256, 32, 0);
    EXPECT_EQ(e.blocksPerSm, 8u);
    EXPECT_EQ(e.activeWarpsPerSm, 64u);
    EXPECT_EQ(e.maxWarpsPerSm, 64u);
    EXPECT_EQ(e.occupancy, 1.0);
    EXPECT_EQ(limiter(e), static_cast<int>(OccupancyLimiter::Warps));
}

TEST(KernelOccupancy, registersLimit) {
    // 64 regs x 32 threads = 2048 per warp: 32 warps fit, 4 blocks of 8 warps.
    const auto e = estimateOccupancy(256, 64, 0);
    EXPECT_EQ(e.blocksPerSm, 4u);
    EXPECT_EQ(e.occupancy, 0.5);
    EXPECT_EQ(limiter(e), static_cast<int>(OccupancyLimiter::Registers));
    // 168 regs: 5376 per warp (already a multiple of 256), 12 warps, one block of 8.
    const auto heavy = estimateOccupancy(256, 168, 98304);
    EXPECT_EQ(heavy.blocksPerSm, 1u);
    EXPECT_EQ(heavy.activeWarpsPerSm, 8u);
    EXPECT_EQ(heavy.occupancy, 0.125);
    // 33 regs round up to 1280 per warp: 51 warps, 6 blocks of 8 = 48 warps.
    const auto rounded = estimateOccupancy(256, 33, 0);
    EXPECT_EQ(rounded.blocksPerSm, 6u);
    EXPECT_EQ(rounded.occupancy, 0.75);
}

TEST(KernelOccupancy, sharedMemoryLimit) {
    // 48 KiB + 1 KiB reserved = 50176 bytes: 4 blocks in 228 KiB; 4 warps each.
    const auto e = estimateOccupancy(128, 0, 48 * 1024);
    EXPECT_EQ(e.blocksPerSm, 4u);
    EXPECT_EQ(e.activeWarpsPerSm, 16u);
    EXPECT_EQ(e.occupancy, 0.25);
    EXPECT_EQ(limiter(e), static_cast<int>(OccupancyLimiter::SharedMemory));
}

TEST(KernelOccupancy, blockSlotLimit) {
    // One warp per block: the 32 block slots fill half the warps.
    const auto e = estimateOccupancy(32, 16, 0);
    EXPECT_EQ(e.blocksPerSm, 32u);
    EXPECT_EQ(e.occupancy, 0.5);
    EXPECT_EQ(limiter(e), static_cast<int>(OccupancyLimiter::Blocks));
    // A partial warp still takes a whole warp.
    EXPECT_EQ(estimateOccupancy(48, 16, 0).activeWarpsPerSm, 64u);
}

TEST(KernelOccupancy, namesTheLimiter) {
    EXPECT_EQ(toString(OccupancyLimiter::SharedMemory), "shared memory");
}

TEST(KernelOccupancy, launchesThatCannotRun) {
    const auto tooManyRegisters = estimateOccupancy(1024, 255, 0);
    EXPECT_EQ(tooManyRegisters.blocksPerSm, 0u);
    EXPECT_EQ(tooManyRegisters.occupancy, 0.0);
    EXPECT_EQ(limiter(tooManyRegisters), static_cast<int>(OccupancyLimiter::Registers));
    EXPECT_EQ(limiter(estimateOccupancy(2048, 16, 0)),
              static_cast<int>(OccupancyLimiter::DoesNotFit));
    EXPECT_EQ(limiter(estimateOccupancy(0, 16, 0)), static_cast<int>(OccupancyLimiter::DoesNotFit));
    EXPECT_EQ(limiter(estimateOccupancy(128, 16, 228 * 1024)),
              static_cast<int>(OccupancyLimiter::DoesNotFit));
}
