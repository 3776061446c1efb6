#include "engine/diagnostics/compiler_log.h"
#include "engine/diagnostics/ptxas_verbose_log.h"
#include "tests/engine/diagnostics/diagnostics_test_data.h"

#include <gtest/gtest.h>

using namespace kwb;
using namespace kwb::diagnostics;

namespace {

// The same resource_sample.cu, so NVRTC's "ptxas         ." prefix and nvcc's indentation
// must give the same numbers.
void expectSampleOnSm90(const PtxasReport& r) {
    ASSERT_EQ(r.functions.size(), 5u);
    const auto* tile = r.find("_Z11tile_kernelPfPKf");
    ASSERT_NE(tile, nullptr);
    EXPECT_TRUE(tile->isEntry);
    EXPECT_EQ(tile->arch, "sm_90");
    EXPECT_EQ(tile->registers, 12);
    EXPECT_EQ(tile->barriers, 1);
    EXPECT_EQ(tile->sharedBytes, 1024);
    EXPECT_FALSE(tile->constantBytes.has_value()); // sm_90 prints no cmem
    const auto* stack = r.find("_Z12stack_kernelPfi");
    ASSERT_NE(stack, nullptr);
    EXPECT_EQ(stack->stackFrameBytes, 256);
    EXPECT_EQ(stack->cumulativeStackBytes, 256);
    EXPECT_EQ(stack->registers, 10);
    const auto* calls = r.find("calls_gather");
    ASSERT_NE(calls, nullptr);
    EXPECT_EQ(calls->registers, 40);
    EXPECT_EQ(calls->cumulativeStackBytes, 128);
    const auto* gather = r.find("_Z6gatherPKfi");
    ASSERT_NE(gather, nullptr);
    EXPECT_FALSE(gather->isEntry);
    EXPECT_EQ(gather->registers, 0);
    EXPECT_EQ(r.globalBytes, 0);
}

} // namespace

TEST(PtxasVerboseLog, NvrtcCapture) {
    PtxasReport r = parsePtxasVerbose(test::diagnosticsText("nvrtc_sm90_ptxas_v.log"));
    expectSampleOnSm90(r);
    ASSERT_TRUE(r.find("_Z14dynamic_kernelILi4EEvPf"));
    EXPECT_TRUE(r.find("calls_gather")->compileMs.has_value());
}

TEST(PtxasVerboseLog, NvccCaptureMatchesNvrtc) {
    expectSampleOnSm90(parsePtxasVerbose(test::diagnosticsText("nvcc_sm90_ptxas_v.log")));
}

TEST(PtxasVerboseLog, ConstantBanksOnSm80) {
    PtxasReport r = parsePtxasVerbose(test::diagnosticsText("nvcc_sm80_ptxas_v.log"));
    ASSERT_TRUE(r.moduleConstantBytes.has_value());
    EXPECT_EQ(*r.moduleConstantBytes, 64); // __constant__ float coeffs[16]
    const auto* tile = r.find("_Z11tile_kernelPfPKf");
    ASSERT_NE(tile, nullptr);
    EXPECT_EQ(tile->arch, "sm_80");
    EXPECT_EQ(tile->registers, 14);
    EXPECT_EQ(tile->sharedBytes, 1024);
    ASSERT_TRUE(tile->constantBytes.has_value());
    EXPECT_EQ(*tile->constantBytes, 368);
}

TEST(PtxasVerboseLog, SpillsFromAnUnrolledKernel) {
    PtxasReport r = parsePtxasVerbose(test::diagnosticsText("nvrtc_sm90_spills.log"));
    ASSERT_EQ(r.functions.size(), 1u);
    const auto& k = r.functions[0];
    EXPECT_EQ(k.mangledName, "slow_kernel");
    EXPECT_EQ(k.registers, 255);
    EXPECT_EQ(k.stackFrameBytes, 1080);
    EXPECT_EQ(k.spillStoreBytes, 1088);
    EXPECT_EQ(k.spillLoadBytes, 1088);
}

// ptxas reports the size, then (after a NUL in NVRTC's log) the error about it.
TEST(PtxasVerboseLog, SharedMemoryTooLarge) {
    const std::string log = test::diagnosticsText("nvrtc_sm90_shared_too_large.log");
    PtxasReport r = parsePtxasVerbose(log);
    ASSERT_EQ(r.functions.size(), 1u);
    EXPECT_EQ(r.functions[0].sharedBytes, 280000);
    auto d = parseCompilerLog(log);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].severity, Severity::Error);
    EXPECT_EQ(d[0].message, "ptxas: Entry function '_Z8big_smemPf' uses too much shared data "
                            "(0x445c0 bytes, 0xc000 max)");
}

TEST(PtxasVerboseLog, NothingInAnErrorOnlyLog) {
    EXPECT_TRUE(parsePtxasVerbose(test::diagnosticsText("nvrtc_errors.log")).functions.empty());
}
