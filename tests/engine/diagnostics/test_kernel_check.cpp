#include "engine/diagnostics/gpu_arch_limits.h"
#include "engine/diagnostics/kernel_check.h"
#include "engine/diagnostics/scratch_directory.h"
#include "tests/engine/diagnostics/diagnostics_test_data.h"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>

using namespace kwb;
using namespace kwb::diagnostics;
namespace fs = std::filesystem;

namespace {

KernelCheckRequest request(const std::string& path, const std::string& text) {
    KernelCheckRequest r;
    r.path = path;
    r.text = text;
    r.arch = "sm_90";
    return r;
}

const ResourceUsage* kernelNamed(const KernelCheckResult& r, const std::string& prefix) {
    for (const auto& k : r.kernels)
        if (k.name.rfind(prefix, 0) == 0)
            return &k;
    return nullptr;
}

} // namespace

TEST(KernelCheck, GoodDeviceKernelThroughNvrtc) {
    auto r = checkKernelSource(request("ws/kernels/scale.cu",
                                       "extern \"C\" __global__ void scale(float* x, float a) {\n"
                                       "    x[threadIdx.x] *= a;\n"
                                       "}\n"));
    ASSERT_TRUE(r.success) << r.log;
    EXPECT_EQ(r.compilePath, CompilePath::Nvrtc);
    EXPECT_EQ(r.pathReason, "device code only");
    EXPECT_EQ(r.errorCount(), 0);
    EXPECT_NE(r.ptx.find(".entry scale"), std::string::npos);
    ASSERT_EQ(r.kernels.size(), 1u);
    EXPECT_EQ(r.kernels[0].name, "scale");
    EXPECT_GT(r.kernels[0].registers, 0);
    EXPECT_GT(r.compileMs, 0);
}

TEST(KernelCheck, BrokenKernelHasExactLineAndColumnOnTheWorkspacePath) {
    auto r = checkKernelSource(request("ws/kernels/broken.cu", "__global__ void k(float* x) {\n"
                                                               "    int i = threadIdx.x;\n"
                                                               "\tx[i] = 2.0f * missing_scale;\n"
                                                               "}\n"));
    EXPECT_FALSE(r.success);
    ASSERT_EQ(r.errorCount(), 1) << r.log;
    const Diagnostic& d = r.diagnostics.front();
    EXPECT_EQ(d.file, "ws/kernels/broken.cu");
    EXPECT_EQ(d.line, 3);
    EXPECT_EQ(d.column, 16); // a tab and "x[i] = 2.0f * " (14) come before the name
    EXPECT_NE(d.message.find("missing_scale"), std::string::npos) << d.message;
    EXPECT_TRUE(r.kernels.empty());
}

TEST(KernelCheck, ResourceUsageOfTheSampleKernels) {
    auto r = checkKernelSource(
        request("kernels/resource_sample.cu", test::diagnosticsText("resource_sample.cu")));
    ASSERT_TRUE(r.success) << r.log;
    ASSERT_EQ(r.kernels.size(), 4u);

    const ResourceUsage* tile = kernelNamed(r, "tile_kernel");
    ASSERT_NE(tile, nullptr);
    EXPECT_EQ(tile->mangledName, "_Z11tile_kernelPfPKf");
    EXPECT_GT(tile->registers, 0);
    EXPECT_EQ(tile->staticSharedBytes, 256 * 4); // __shared__ float tile[256]
    EXPECT_EQ(tile->barriers, 1);
    EXPECT_EQ(tile->maxThreadsPerBlock, 128); // __launch_bounds__(128)
    EXPECT_TRUE(tile->maxThreadsFromLaunchBounds);
    EXPECT_FALSE(tile->usesDynamicShared);
    EXPECT_EQ(tile->dynamicSharedAvailableBytes, 227 * 1024 - 1024);

    const ResourceUsage* stack = kernelNamed(r, "stack_kernel");
    ASSERT_NE(stack, nullptr);
    EXPECT_EQ(stack->localBytes, 64 * 4); // float local[64], dynamically indexed
    EXPECT_FALSE(stack->maxThreadsFromLaunchBounds);
    EXPECT_EQ(stack->maxThreadsPerBlock, 1024);

    const ResourceUsage* dynamic = kernelNamed(r, "void dynamic_kernel<4>");
    ASSERT_NE(dynamic, nullptr);
    EXPECT_TRUE(dynamic->usesDynamicShared);
    EXPECT_EQ(dynamic->staticSharedBytes, 0);
    EXPECT_EQ(dynamic->dynamicSharedAvailableBytes, 227 * 1024);

    const ResourceUsage* calls = kernelNamed(r, "calls_gather");
    ASSERT_NE(calls, nullptr);
    EXPECT_EQ(calls->cumulativeStackBytes, 32 * 4); // gather's float a[32]
}

TEST(KernelCheck, ManyRegistersLowerMaxThreads) {
    // 96 accumulators live across the loop keep the register count high.
    std::string source =
        "__global__ void heavy(const float* in, float* out, int n) {\n"
        "    float acc[96];\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 96; ++j) acc[j] = in[j * n + threadIdx.x];\n"
        "    for (int i = 0; i < n; ++i) {\n"
        "#pragma unroll\n"
        "        for (int j = 0; j < 96; ++j) acc[j] = acc[j] * acc[(j + 1) % 96] + in[i];\n"
        "    }\n"
        "    float s = 0;\n"
        "#pragma unroll\n"
        "    for (int j = 0; j < 96; ++j) s += acc[j];\n"
        "    out[threadIdx.x] = s;\n"
        "}\n";
    auto r = checkKernelSource(request("heavy.cu", source));
    ASSERT_TRUE(r.success) << r.log;
    ASSERT_EQ(r.kernels.size(), 1u);
    const ResourceUsage& k = r.kernels[0];
    EXPECT_GT(k.registers, 64) << "the kernel no longer needs many registers";
    EXPECT_FALSE(k.maxThreadsFromLaunchBounds);
    EXPECT_EQ(k.maxThreadsPerBlock, maxThreadsForRegisters(k.registers, limitsForArch("sm_90")));
    EXPECT_LT(k.maxThreadsPerBlock, 1024);
}

TEST(KernelCheck, CudaAgentLayoutTakesNvccWithErrorsAtTheRightLine) {
    const fs::path gelu = test::diagnosticsData("cuda_agent_layout/kernels/gelu.cu");
    std::string text = test::readText(gelu);
    auto good = checkKernelSource(request(gelu.string(), text));
    ASSERT_TRUE(good.success) << good.log;
    EXPECT_EQ(good.compilePath, CompilePath::Nvcc);
    EXPECT_NE(good.pathReason.find("'<<<' at line 63"), std::string::npos) << good.pathReason;
    EXPECT_NE(good.ptx.find(".entry"), std::string::npos);
    ASSERT_EQ(good.kernels.size(), 2u);
    EXPECT_NE(kernelNamed(good, "(anonymous namespace)::gelu_vec4_kernel"), nullptr);

    // Break line 28 (v.x = gelu_tanh(v.x);) inside the kernel: the editor's text, not the file.
    const std::string original = "        v.x = gelu_tanh(v.x);\n";
    const std::size_t at = text.find(original);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, original.size(), "        v.x = gelu_tanh(v.x) + not_declared;\n");
    auto broken = checkKernelSource(request(gelu.string(), text));
    EXPECT_FALSE(broken.success);
    EXPECT_EQ(broken.compilePath, CompilePath::Nvcc);
    ASSERT_GE(broken.errorCount(), 1) << broken.log;
    const Diagnostic& d = broken.diagnostics.front();
    EXPECT_EQ(d.file, gelu.string()); // not nvcc's temporary copy
    EXPECT_EQ(d.line, 28);
    EXPECT_EQ(d.column, 32);
    EXPECT_NE(d.message.find("not_declared"), std::string::npos) << d.message;
}

TEST(KernelCheck, QuotedHeaderFromTheKernelsFolder) {
    ScratchDirectory ws;
    ASSERT_TRUE(ws.ok());
    const fs::path kernels = fs::path(ws.path()) / "kernels";
    test::writeText(kernels / "common.cuh",
                    "__device__ inline float twice(float x) { return 2 * x; }\n");
    auto r = checkKernelSource(request((kernels / "k.cu").string(),
                                       "#include \"common.cuh\"\n"
                                       "__global__ void k(float* x) { x[0] = twice(x[0]); }\n"));
    EXPECT_TRUE(r.success) << r.log;
    EXPECT_EQ(r.compilePath, CompilePath::Nvrtc);
}

TEST(KernelCheck, NvrtcRetriesWithNvccWhenAHeaderNeedsHostIncludes) {
    ScratchDirectory ws;
    ASSERT_TRUE(ws.ok());
    const fs::path kernels = fs::path(ws.path()) / "kernels";
    test::writeText(kernels / "types.cuh", "#include <cstdint>\nusing index_t = int64_t;\n");
    auto r = checkKernelSource(request((kernels / "k.cu").string(),
                                       "#include \"types.cuh\"\n"
                                       "__global__ void k(float* x, index_t n) { x[n] = 1; }\n"));
    EXPECT_TRUE(r.success) << r.log;
    EXPECT_EQ(r.compilePath, CompilePath::Nvcc);
    EXPECT_NE(r.pathReason.find("retried with nvcc"), std::string::npos) << r.pathReason;
    EXPECT_EQ(r.kernels.size(), 1u);
}

TEST(KernelCheck, PtxasSharedMemoryErrorNamesTheFile) {
    auto r = checkKernelSource(request("ws/big.cu", "__global__ void big(float* x) {\n"
                                                    "    __shared__ float b[20000];\n"
                                                    "    b[threadIdx.x] = x[threadIdx.x];\n"
                                                    "    __syncthreads();\n"
                                                    "    x[threadIdx.x] = b[threadIdx.x + 1];\n"
                                                    "}\n"));
    EXPECT_FALSE(r.success);
    ASSERT_EQ(r.errorCount(), 1) << r.log;
    EXPECT_EQ(r.diagnostics[0].file, "ws/big.cu");
    EXPECT_EQ(r.diagnostics[0].message,
              "ptxas: Entry function '_Z3bigPf' uses too much shared data (0x13880 bytes, 0xc000 "
              "max)");
}

// No disassembler is installed on CI machines, so a script stands in for cuobjdump; it prints
// what cuobjdump -sass prints for a cubin and records its arguments.
TEST(KernelCheck, SassThroughCuobjdumpOnPath) {
    ScratchDirectory bin;
    ASSERT_TRUE(bin.ok());
    const fs::path tool = fs::path(bin.path()) / "cuobjdump";
    test::writeText(tool, "#!/bin/sh\n"
                          "echo \"$@\" > \"$(dirname \"$0\")/args\"\n"
                          "test -s \"$2\" || exit 3\n"
                          "cat <<'SASS'\n"
                          "\n\tcode for sm_90\n"
                          "\t\tFunction : scale\n"
                          "\t.headerflags\t@\"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)\"\n"
                          "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
                          "        /*0010*/                   EXIT ;\n"
                          "\t\t..........\n"
                          "\n\t\tFunction : other\n"
                          "        /*0000*/                   EXIT ;\n"
                          "SASS\n");
    fs::permissions(tool, fs::perms::owner_all);
    const std::string oldPath = std::getenv("PATH") ? std::getenv("PATH") : "";
    setenv("PATH", (bin.path() + ":" + oldPath).c_str(), 1);
    KernelCheckRequest req =
        request("scale.cu", "extern \"C\" __global__ void scale(float* x) { x[0] = 1; }\n");
    req.wantSass = true;
    auto r = checkKernelSource(req);
    setenv("PATH", oldPath.c_str(), 1);

    ASSERT_TRUE(r.success) << r.log;
    ASSERT_TRUE(r.sass.available) << r.sass.error;
    EXPECT_EQ(r.sass.tool, tool.string());
    EXPECT_EQ(test::readText(fs::path(bin.path()) / "args").rfind("-sass ", 0), 0u);
    ASSERT_EQ(r.sass.functions.size(), 2u);
    EXPECT_EQ(r.sass.functions[0].first, "scale");
    EXPECT_NE(r.sass.functions[0].second.find("LDC R1"), std::string::npos);
    EXPECT_EQ(r.sass.functions[0].second.find(".........."), std::string::npos);
    EXPECT_EQ(r.sass.functions[1].first, "other");
}

TEST(KernelCheck, SassSplitsNvdisasmLabels) {
    auto functions =
        splitSassFunctions("\t.section\t.text._Z1kPf,\"ax\",@progbits\n"
                           ".text._Z1kPf:\n"
                           "        /*0000*/                   MOV R1, c[0x0][0x28] ;\n"
                           ".text.plain:\n"
                           "        /*0000*/                   EXIT ;\n");
    ASSERT_EQ(functions.size(), 2u);
    EXPECT_EQ(functions[0].first, "_Z1kPf");
    EXPECT_NE(functions[0].second.find("MOV R1"), std::string::npos);
    EXPECT_EQ(functions[1].first, "plain");
}

TEST(KernelCheck, StopBeforeTheStartCancels) {
    std::stop_source stop;
    stop.request_stop();
    auto r = checkKernelSource(request("k.cu", "__global__ void k() {}\n"), stop.get_token());
    EXPECT_TRUE(r.cancelled);
    EXPECT_TRUE(r.diagnostics.empty());
}
