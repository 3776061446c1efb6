#include "engine/diagnostics/compile_path_choice.h"
#include "engine/diagnostics/cuda_toolkit.h"
#include "tests/engine/diagnostics/diagnostics_test_data.h"

#include <gtest/gtest.h>

using namespace kwb;
using namespace kwb::diagnostics;

namespace {
std::vector<std::string> toolkitIncludes() {
    return locateCudaToolkit().includeDirs;
}
} // namespace

TEST(CompilePathChoice, DeviceOnlyCodeGoesToNvrtc) {
    auto choice = chooseCompilePath("#include <cuda_fp16.h>\n#include <cuda/std/cstdint>\n"
                                    "#include \"common.cuh\"\n"
                                    "__global__ void k(__half* x) { x[0] = __float2half(1.f); }\n",
                                    toolkitIncludes());
    EXPECT_EQ(choice.path, CompilePath::Nvrtc) << choice.reason;
    EXPECT_EQ(choice.reason, "device code only");
}

TEST(CompilePathChoice, LaunchOutsideCommentsAndStringsGoesToNvcc) {
    auto choice = chooseCompilePath("__global__ void k() {}\n"
                                    "// k<<<1, 1>>>() in a comment\n"
                                    "/* k<<<2, 2>>>();\n   still a comment */\n"
                                    "const char* s = \"k<<<3, 3>>>()\";\n"
                                    "void launch() { k<<<1, 32>>>(); }\n",
                                    toolkitIncludes());
    EXPECT_EQ(choice.path, CompilePath::Nvcc);
    EXPECT_EQ(choice.line, 6);
    EXPECT_EQ(choice.reason, "host code: a kernel launch '<<<' at line 6");
}

TEST(CompilePathChoice, LaunchOnlyInCommentsOrStringsStaysOnNvrtc) {
    auto choice = chooseCompilePath("// launch with k<<<g, b>>>(x)\n"
                                    "const char* usage = R\"(k<<<1, 1>>>())\";\n"
                                    "__device__ char c = '<';\n"
                                    "__global__ void k(int* x) { x[0] = 1'000 << 2; }\n",
                                    toolkitIncludes());
    EXPECT_EQ(choice.path, CompilePath::Nvrtc) << choice.reason;
}

TEST(CompilePathChoice, HostHeadersGoToNvcc) {
    auto torch = chooseCompilePath("#include <torch/extension.h>\n", toolkitIncludes());
    EXPECT_EQ(torch.path, CompilePath::Nvcc);
    EXPECT_EQ(torch.reason, "includes the torch header <torch/extension.h> at line 1");
    auto runtime = chooseCompilePath("// device helpers\n#include <cuda_runtime.h>\n"
                                     "__global__ void k() {}\n",
                                     toolkitIncludes());
    EXPECT_EQ(runtime.path, CompilePath::Nvcc);
    EXPECT_EQ(runtime.line, 2);
    auto standard = chooseCompilePath("  #  include <cstdint>\n", toolkitIncludes());
    EXPECT_EQ(standard.path, CompilePath::Nvcc);
    EXPECT_EQ(standard.reason, "includes <cstdint> at line 1, a host header NVRTC cannot open");
    auto commented =
        chooseCompilePath("// #include <vector>\n__global__ void k() {}\n", toolkitIncludes());
    EXPECT_EQ(commented.path, CompilePath::Nvrtc);
}

TEST(CompilePathChoice, BundledCudaAgentKernelIsNvcc) {
    auto choice = chooseCompilePath(test::diagnosticsText("cuda_agent_layout/kernels/gelu.cu"),
                                    toolkitIncludes());
    EXPECT_EQ(choice.path, CompilePath::Nvcc);
    // The launch rule is checked first, so it names the first launch, not <cstdint> on line 3.
    EXPECT_EQ(choice.line, 63) << choice.reason;
}

TEST(CompilePathChoice, BlankingKeepsLinesAndOffsets) {
    const std::string source = "a /* b\nc */ d // e\n\"f\" 'g'\n";
    const std::string blank = blankCommentsAndLiterals(source, false);
    EXPECT_EQ(blank.size(), source.size());
    EXPECT_EQ(blank, "a     \n     d     \n       \n");
    EXPECT_EQ(blankCommentsAndLiterals(source, true), "a     \n     d     \n\"f\" 'g'\n");
}
