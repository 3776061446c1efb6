// The evaluation pipeline in CUDA mode: runs on a GPU host (`ctest -L gpu`), skips elsewhere.
#include "../engine/evaluation_fixture.h"
#include "engine/cuda/gpu_inventory.h"

using namespace kwb;
using namespace kwb::test;

namespace {
EvaluationOptions gpuOptions() {
    EvaluationOptions options;
    options.device = DeviceChoice::Cuda;
    options.checks = 3;
    options.iterations = 20;
    options.stageTimeout = std::chrono::seconds(300);
    return options;
}
} // namespace

class GpuEvaluation : public EvaluationTest {
protected:
    void SetUp() override {
        if (!detectGpus().hasGpu())
            GTEST_SKIP() << detectGpus().status;
        EvaluationTest::SetUp();
    }
};

TEST_F(GpuEvaluation, ReferenceSolutionIsCorrectAndTimedWithCudaEvents) {
    const fs::path ws = makeWorkspace("07_scale_residual_add", true);
    EvaluationResult r = evaluateWorkspace(ws, gpuOptions());
    ASSERT_TRUE(r.correct) << describe(r);
    EXPECT_GE(r.reward, 1);
    EXPECT_FALSE(r.cpuMode);
    EXPECT_EQ(r.environment.device, "cuda");
    EXPECT_EQ(r.candidate.method, "cuda-events");
}

TEST_F(GpuEvaluation, OutOfBoundsKernelIsACudaErrorAndTheNextEvaluationWorks) {
    const fs::path ws = makeWorkspace("01_gelu", true);
    const std::string original = readText(ws / "kernels" / "gelu.cu");
    // Every thread writes far past the end of the output.
    patchFile(ws / "kernels" / "gelu.cu", "y[i] = gelu_tanh(x[i]);",
              "y[i + (1ll << 34)] = gelu_tanh(x[i]);");
    patchFile(ws / "kernels" / "gelu.cu", "y[i] = v;", "y[i + (1ll << 34)] = v;");
    EvaluationResult r = evaluateWorkspace(ws, gpuOptions());
    EXPECT_EQ(r.reward, -1);
    EXPECT_TRUE(r.failureKind == "cuda_error" || r.failureKind == "crashed") << describe(r);

    writeText(ws / "kernels" / "gelu.cu", original);
    EvaluationResult fixed = evaluateWorkspace(ws, gpuOptions());
    EXPECT_GE(fixed.reward, 1) << describe(fixed);
}

TEST_F(GpuEvaluation, GpuInfiniteLoopTimesOutAndTheGpuStaysUsable) {
    const fs::path ws = makeWorkspace("01_gelu", true);
    const std::string original = readText(ws / "kernels" / "gelu.cu");
    // A kernel that never finishes (clock64 is volatile, so the loop cannot be optimised away):
    // the stage must be killed at its timeout.
    patchFile(ws / "kernels" / "gelu.cu", "y[i] = v;", "while (clock64() >= 0) { } y[i] = v;");
    patchFile(ws / "kernels" / "gelu.cu", "y[i] = gelu_tanh(x[i]);",
              "while (clock64() >= 0) { } y[i] = x[i];");
    EvaluationOptions options = gpuOptions();
    options.stageTimeout = std::chrono::seconds(60);
    EvaluationResult hung = evaluateWorkspace(ws, options);
    EXPECT_EQ(hung.reward, -1);
    EXPECT_EQ(hung.failureKind, "timeout") << describe(hung);

    writeText(ws / "kernels" / "gelu.cu", original);
    EvaluationResult fixed = evaluateWorkspace(ws, gpuOptions());
    EXPECT_GE(fixed.reward, 1) << describe(fixed);
}
