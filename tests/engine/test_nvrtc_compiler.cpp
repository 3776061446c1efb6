#include "engine/cuda/nvrtc_library.h"
#include "engine/diagnostics/nvrtc_compiler.h"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace kwb;

namespace {
const char* kGood = R"(
extern "C" __global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
)";
} // namespace

TEST(NvrtcCompiler, CompilesToPtxAndCubinWithoutAGpu) {
    NvrtcResult r = compileWithNvrtc({kGood, "scale.cu", "sm_90", {}, {}});
    ASSERT_TRUE(r.success) << r.log;
    EXPECT_NE(r.ptx.find(".entry scale"), std::string::npos);
    EXPECT_NE(r.ptx.find(".target sm_90"), std::string::npos);
    ASSERT_GT(r.cubin.size(), 4u);
    EXPECT_EQ(r.cubin.substr(1, 3), "ELF");
    EXPECT_TRUE(r.diagnostics.empty());
}

TEST(NvrtcCompiler, VirtualArchGivesPtxOnly) {
    NvrtcResult r = compileWithNvrtc({kGood, "scale.cu", "compute_80", {}, {}});
    ASSERT_TRUE(r.success) << r.log;
    EXPECT_FALSE(r.ptx.empty());
    EXPECT_TRUE(r.cubin.empty());
}

TEST(NvrtcCompiler, ErrorsBecomeDiagnosticsWithLines) {
    const char* broken = "extern \"C\" __global__ void k(float* x) {\n"
                         "    int i = threadIdx.x;\n"
                         "    x[i] = undefined_name;\n"
                         "}\n";
    NvrtcResult r = compileWithNvrtc({broken, "kernels/broken.cu", "sm_90", {}, {}});
    EXPECT_FALSE(r.success);
    ASSERT_FALSE(r.diagnostics.empty()) << r.log;
    const Diagnostic& d = r.diagnostics.front();
    EXPECT_EQ(d.file, "kernels/broken.cu");
    EXPECT_EQ(d.line, 3);
    EXPECT_EQ(d.column, 12); // from the caret under the echoed source line
    EXPECT_EQ(d.severity, Severity::Error);
    EXPECT_NE(d.message.find("undefined_name"), std::string::npos) << d.message;
    EXPECT_EQ(formatDiagnostic(d).rfind("kernels/broken.cu:3:12: error: ", 0), 0u)
        << formatDiagnostic(d);
}

TEST(NvrtcCompiler, LowersTemplateNames) {
    const char* source =
        "template <typename T> __global__ void fill(T* x, T v) { x[threadIdx.x] = v; }\n";
    NvrtcResult r = compileWithNvrtc({source, "fill.cu", "sm_90", {}, {"fill<float>"}});
    ASSERT_TRUE(r.success) << r.log;
    ASSERT_EQ(r.lowered.size(), 1u);
    EXPECT_EQ(r.lowered[0].first, "fill<float>");
    EXPECT_EQ(r.lowered[0].second.rfind("_Z", 0), 0u);
}

TEST(NvrtcCompiler, ParsesWarningsAndSkipsOtherLines) {
    const std::string log =
        "k.cu(7): warning #177-D: variable \"t\" was declared but never referenced\n"
        "Remark: The warnings can be suppressed with \"-diag-suppress <warning-number>\"\n"
        "k.cu(9): error: expected a \";\"\n"
        "1 error detected in the compilation of \"k.cu\".\n";
    auto diagnostics = parseNvrtcLog(log);
    ASSERT_EQ(diagnostics.size(), 2u);
    EXPECT_EQ(diagnostics[0].severity, Severity::Warning);
    EXPECT_EQ(diagnostics[0].line, 7);
    EXPECT_EQ(diagnostics[1].severity, Severity::Error);
    EXPECT_EQ(diagnostics[1].message, "expected a \";\"");
}

// NVRTC is dlopen'ed (engine/cuda/nvrtc_library), so a machine without the toolkit starts and
// says what is missing; these load it afresh, beside the copy the compiler uses.
class NvrtcLibraryTest : public ::testing::Test {
protected:
    void TearDown() override { ::unsetenv("KWB_NVRTC_LIBRARY"); }
};

TEST_F(NvrtcLibraryTest, loadsTheToolkitsLibraryAndSaysWhichFile) {
    ::unsetenv("KWB_NVRTC_LIBRARY");
    const NvrtcLibrary library = NvrtcLibrary::load({"/nonexistent-toolkit"});
    ASSERT_TRUE(library.loaded()) << library.loadError();
    EXPECT_NE(library.path().find("libnvrtc.so."), std::string::npos) << library.path();
    int major = 0, minor = 0;
    ASSERT_EQ(library.version(&major, &minor), NVRTC_SUCCESS);
    EXPECT_EQ(nvrtcSoname(), "libnvrtc.so." + std::to_string(major));
    EXPECT_TRUE(nvrtcAvailable());
    EXPECT_NE(nvrtcVersion(), "not found");
}

TEST_F(NvrtcLibraryTest, aMissingLibrarySaysWhatToInstallAndWhereItLooked) {
    ::setenv("KWB_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so.13", 1);
    const NvrtcLibrary library = NvrtcLibrary::load({});
    EXPECT_FALSE(library.loaded());
    EXPECT_EQ(library.version, nullptr);
    EXPECT_NE(library.loadError().find("NVRTC not found"), std::string::npos);
    EXPECT_NE(library.loadError().find("install the CUDA toolkit"), std::string::npos);
    EXPECT_NE(library.loadError().find("/nonexistent/libnvrtc.so.13"), std::string::npos);
}

TEST_F(NvrtcLibraryTest, aLibraryThatIsNotNvrtcIsNamedAsSuch) {
    ::setenv("KWB_NVRTC_LIBRARY", "libm.so.6", 1);
    const NvrtcLibrary library = NvrtcLibrary::load({});
    EXPECT_FALSE(library.loaded());
    EXPECT_EQ(library.compileProgram, nullptr);
    EXPECT_NE(library.loadError().find("lacks nvrtcVersion"), std::string::npos)
        << library.loadError();
}
