// The fast-path flavour without a GPU: PTX signatures, the NVRTC module build with its manifest
// and cache, and the evaluator's compile stage choosing it (then stopping with a clear reason).
#include "engine/evaluation/fast_kernel_build.h"
#include "engine/evaluation/ptx_signature.h"
#include "tests/engine/evaluation_fixture.h"

#include <nlohmann/json.hpp>

namespace kwb::test {
namespace {

const char* kPtx = R"(
.version 9.0
.target sm_90
.address_size 64

.visible .entry saxpy(
	.param .u64 .ptr .global .align 4 saxpy_param_0,
	.param .u64 saxpy_param_1,
	.param .f32 saxpy_param_2,
	.param .u32 saxpy_param_3
)
.maxntid 128, 2, 1
{
	ret;
}

.visible .entry _Z7reducerIfEvPKT_PS0_(
	.param .align 8 .b8 _Z7reducerIfEvPKT_PS0__param_0[24],
	.param .s64 _Z7reducerIfEvPKT_PS0__param_1
)
{
	ret;
}
)";

TEST(PtxSignature, ReadsEntriesParametersAndLaunchBounds) {
    const auto entries = parsePtxEntries(kPtx);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].symbol, "saxpy");
    ASSERT_EQ(entries[0].parameters.size(), 4u);
    EXPECT_EQ(entries[0].parameters[0].type, "u64");
    EXPECT_EQ(entries[0].parameters[2].type, "f32");
    EXPECT_EQ(entries[0].parameters[3].sizeBytes, 4);
    EXPECT_EQ(entries[0].maxThreadsPerBlock, 256);
    ASSERT_EQ(entries[1].parameters.size(), 2u);
    EXPECT_EQ(entries[1].parameters[0].type, "b8");
    EXPECT_EQ(entries[1].parameters[0].sizeBytes, 24);
    EXPECT_EQ(entries[1].parameters[1].type, "s64");
    EXPECT_EQ(entries[1].maxThreadsPerBlock, 0);
}

TEST(PtxSignature, BaseNamesOfMangledKernels) {
    EXPECT_EQ(kernelBaseName("saxpy"), "saxpy");
    EXPECT_EQ(kernelBaseName("_Z11gelu_kernelPKfPfl"), "gelu_kernel");
    EXPECT_EQ(kernelBaseName("_Z7reducerIfEvPKT_PS0_"), "reducer");
    EXPECT_EQ(kernelBaseName("_ZN2ns6scaledEPf"), "scaled");
    EXPECT_EQ(kernelBaseName("_Znot_valid"), "_Znot_valid");
}

class FastPathTest : public EvaluationTest {
protected:
    fs::path fastWorkspace(const std::string& taskId) {
        WorkspaceInitOptions options;
        options.solutionDirectory =
            (fs::path(bundledSolutionsDirectory()).parent_path() / "solutions_fast" / taskId)
                .string();
        WorkspaceInitResult init =
            initWorkspace(task(taskId).string(), (root_ / taskId).string(), options);
        EXPECT_TRUE(init.ok) << init.error;
        return root_ / taskId;
    }
};

TEST_F(FastPathTest, BuildsCubinsWithManifestsAndCachesThem) {
    const fs::path ws = fastWorkspace("01_gelu");
    EXPECT_TRUE(usesFastKernels((ws / "model_new.py").string()));
    EXPECT_TRUE(fs::exists(ws / "utils" / "kwb_kernels" / "launcher.py"));
    FastKernelBuildRequest request{ws.string(), "sm_90", (ws / "build" / "kwb_kernels").string(),
                                   (root_ / "cache").string()};
    FastKernelBuildResult first = buildFastKernels(request);
    ASSERT_TRUE(first.ok) << first.summary << first.log;
    EXPECT_EQ(first.filesCompiled, 1);
    EXPECT_EQ(first.filesCached, 0);
    EXPECT_NE(first.log.find("kernels/gelu.cu: NVRTC "), std::string::npos) << first.log;
    const fs::path out = ws / "build" / "kwb_kernels";
    EXPECT_GT(fs::file_size(out / "gelu.cubin"), 1000u);
    EXPECT_NE(readText(out / "gelu.ptx").find(".entry gelu_vec4"), std::string::npos);
    const auto manifest = nlohmann::json::parse(readText(out / "gelu.json"));
    EXPECT_EQ(manifest["version"], 1);
    EXPECT_EQ(manifest["source"], "kernels/gelu.cu");
    ASSERT_EQ(manifest["kernels"].size(), 2u);
    EXPECT_EQ(manifest["kernels"][0]["name"], "gelu_vec4");
    EXPECT_EQ(manifest["kernels"][0]["params"].size(), 3u);
    EXPECT_EQ(manifest["kernels"][0]["params"][2]["type"], "u64");

    FastKernelBuildResult second = buildFastKernels(request);
    ASSERT_TRUE(second.ok);
    EXPECT_EQ(second.filesCompiled, 0);
    EXPECT_EQ(second.filesCached, 1);
    EXPECT_EQ(readText(out / "gelu.json"), manifest.dump(1));
}

TEST_F(FastPathTest, CompileErrorsNameTheWorkspaceFileAndLine) {
    const fs::path ws = fastWorkspace("01_gelu");
    patchFile(ws / "kernels" / "gelu.cu", "v.y = gelu_tanh(v.y);", "v.y = gelu_tanh(v.q);");
    writeText(ws / "kernels" / "stale.cu", "extern \"C\" __global__ void k() {}\n");
    FastKernelBuildRequest request{ws.string(), "sm_90", (ws / "build" / "kwb_kernels").string(),
                                   ""};
    FastKernelBuildResult result = buildFastKernels(request);
    EXPECT_FALSE(result.ok);
    ASSERT_FALSE(result.diagnostics.empty());
    const Diagnostic& d = result.diagnostics.front();
    EXPECT_EQ(d.file, "kernels/gelu.cu");
    EXPECT_EQ(d.line, 20);
    EXPECT_EQ(d.severity, Severity::Error);
    EXPECT_NE(d.message.find("q"), std::string::npos) << d.message;
    EXPECT_NE(result.summary.find("kernels/gelu.cu:20"), std::string::npos) << result.summary;

    // Removing a source removes its module, so it cannot be launched by mistake.
    fs::remove(ws / "kernels" / "stale.cu");
    patchFile(ws / "kernels" / "gelu.cu", "gelu_tanh(v.q)", "gelu_tanh(v.y)");
    ASSERT_TRUE(buildFastKernels(request).ok);
    EXPECT_FALSE(fs::exists(ws / "build" / "kwb_kernels" / "stale.json"));
    EXPECT_TRUE(fs::exists(ws / "build" / "kwb_kernels" / "gelu.json"));
}

TEST_F(FastPathTest, EvaluatorCompilesWithNvrtcAndNeedsAGpuToVerify) {
    const fs::path ws = fastWorkspace("07_scale_residual_add");
    EvaluationOptions options;
    options.device = DeviceChoice::Cpu;
    options.checks = 1;
    EvaluationResult r = Evaluator().evaluate(EvaluationTarget::forWorkspace(ws.string()), options);
    const StageRecord* compile = r.stage("compile");
    ASSERT_NE(compile, nullptr);
    EXPECT_EQ(compile->status, StageStatus::Passed) << compile->summary;
    EXPECT_NE(compile->summary.find("NVRTC sm_90"), std::string::npos) << compile->summary;
    EXPECT_TRUE(r.compiled);
    EXPECT_EQ(r.failureKind, "no_gpu");
    EXPECT_NE(r.failureMessage.find("run only on a CUDA GPU"), std::string::npos);
    EXPECT_EQ(r.reward, -1);
    EXPECT_TRUE(fs::exists(ws / "build" / "kwb_kernels" / "scale_residual.cubin"));

    options.stopAfterCompile = true;
    patchFile(ws / "kernels" / "scale_residual.cu", "const float v", "const floaty v");
    EvaluationResult broken =
        Evaluator().evaluate(EvaluationTarget::forWorkspace(ws.string()), options);
    EXPECT_EQ(broken.failureKind, "compile_error");
    ASSERT_FALSE(broken.diagnostics.empty());
    EXPECT_EQ(broken.diagnostics.front().file, "kernels/scale_residual.cu");
    EXPECT_EQ(broken.diagnostics.front().line, 10);
}

} // namespace
} // namespace kwb::test
