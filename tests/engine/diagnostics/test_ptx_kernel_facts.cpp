#include "engine/diagnostics/ptx_kernel_facts.h"
#include "tests/engine/diagnostics/diagnostics_test_data.h"

#include <gtest/gtest.h>

using namespace kwb;
using namespace kwb::diagnostics;

TEST(PtxKernelFacts, LaunchBoundsAndDynamicSharedFromCapturedPtx) {
    auto kernels = scanPtxKernels(test::diagnosticsText("resource_sample_sm90.ptx"));
    ASSERT_EQ(kernels.size(), 4u);
    EXPECT_EQ(kernels[0].mangledName, "_Z11tile_kernelPfPKf");
    EXPECT_EQ(kernels[0].launchBoundThreads, 128);
    EXPECT_FALSE(kernels[0].usesDynamicShared);
    EXPECT_EQ(kernels[1].mangledName, "_Z12stack_kernelPfi");
    EXPECT_EQ(kernels[1].launchBoundThreads, 0);
    EXPECT_EQ(kernels[2].mangledName, "_Z14dynamic_kernelILi4EEvPf");
    EXPECT_TRUE(kernels[2].usesDynamicShared);
    EXPECT_EQ(kernels[3].mangledName, "calls_gather");
    EXPECT_FALSE(kernels[3].usesDynamicShared);
}

TEST(PtxKernelFacts, DynamicSharedThroughACalledFunctionAndPrototypes) {
    const std::string ptx = R"(.version 9.0
.target sm_90
.extern .shared .align 16 .b8 smem_buf[];
.func  (.param .b32 func_retval0) _Z4readi
(
	.param .b32 _Z4readi_param_0
)
;
.visible .entry outer(
	.param .u64 outer_param_0
)
.reqntid 16, 8, 1
{
	call.uni (retval0), _Z4readi, (param0);
	ret;
}
.func  (.param .b32 func_retval0) _Z4readi(
	.param .b32 _Z4readi_param_0
)
{
	mov.u64 	%rd1, smem_buf;
	ret;
}
.visible .entry unrelated(
	.param .u64 unrelated_param_0
)
{
	mov.u64 	%rd1, smem_buffer_other;
	ret;
}
)";
    auto kernels = scanPtxKernels(ptx);
    ASSERT_EQ(kernels.size(), 2u);
    EXPECT_EQ(kernels[0].mangledName, "outer");
    EXPECT_EQ(kernels[0].launchBoundThreads, 128);
    EXPECT_TRUE(kernels[0].usesDynamicShared);
    EXPECT_EQ(kernels[1].mangledName, "unrelated");
    EXPECT_FALSE(kernels[1].usesDynamicShared); // a longer name is not the symbol
}
