#include "engine/diagnostics/demangle.h"
#include "engine/diagnostics/gpu_arch_limits.h"

#include <gtest/gtest.h>

using namespace kwb::diagnostics;

TEST(GpuArchLimits, SharedMemoryOptInPerArch) {
    EXPECT_EQ(limitsForArch("sm_90").maxSharedPerBlockOptInBytes, 232448);
    EXPECT_EQ(limitsForArch("sm_90a").maxSharedPerBlockOptInBytes, 232448);
    EXPECT_EQ(limitsForArch("sm_80").maxSharedPerBlockOptInBytes, 166912);
    EXPECT_EQ(limitsForArch("compute_86").maxSharedPerBlockOptInBytes, 101376);
    EXPECT_TRUE(limitsForArch("sm_100").known);
    ArchLimits unknown = limitsForArch("sm_999");
    EXPECT_FALSE(unknown.known);
    EXPECT_EQ(unknown.maxSharedPerBlockOptInBytes, 48 * 1024);
    EXPECT_FALSE(limitsForArch("gfx90a").known);
}

TEST(GpuArchLimits, MaxThreadsFromRegisters) {
    const ArchLimits sm90 = limitsForArch("sm_90");
    EXPECT_EQ(maxThreadsForRegisters(32, sm90), 1024);
    EXPECT_EQ(maxThreadsForRegisters(64, sm90), 1024);
    EXPECT_EQ(maxThreadsForRegisters(72, sm90), 896); // 2304 regs per warp -> 28 warps
    EXPECT_EQ(maxThreadsForRegisters(65, sm90), 896); // 2080 rounds up to 2304 per warp too
    EXPECT_EQ(maxThreadsForRegisters(80, sm90), 768); // 2560 per warp: 25 warps, in fours 24
    EXPECT_EQ(maxThreadsForRegisters(128, sm90), 512);
    EXPECT_EQ(maxThreadsForRegisters(255, sm90), 256); // 8160 -> 8192 per warp -> 8 warps
    EXPECT_EQ(maxThreadsForRegisters(0, sm90), 1024);
}

TEST(Demangle, CppAndExternC) {
    EXPECT_EQ(demangleSymbol("_Z11tile_kernelPfPKf"), "tile_kernel(float*, float const*)");
    EXPECT_EQ(demangleSymbol("_Z14dynamic_kernelILi4EEvPf"), "void dynamic_kernel<4>(float*)");
    EXPECT_EQ(demangleSymbol("calls_gather"), "calls_gather");
    EXPECT_EQ(demangleSymbol("_Znot_a_symbol"), "_Znot_a_symbol");
}
