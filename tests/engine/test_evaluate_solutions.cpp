// The real pipeline in CPU mode on bundled tasks: C++ CPU extension builds, verification on
// fresh inputs, wall-clock profiling against eager and torch.compile, and the reward.
#include "evaluation_fixture.h"

#include <nlohmann/json.hpp>

using namespace kwb;
using namespace kwb::test;

class SolutionEvaluation : public EvaluationTest,
                           public ::testing::WithParamInterface<std::string> {};

TEST_P(SolutionEvaluation, CorrectSolutionEarnsAtLeastOneInCpuMode) {
    const fs::path ws = makeWorkspace(GetParam(), true);
    EvaluationResult r = evaluateWorkspace(ws);
    ASSERT_TRUE(r.correct) << describe(r);
    EXPECT_TRUE(r.compiled);
    EXPECT_TRUE(r.cpuMode);
    EXPECT_GE(r.reward, 1) << describe(r);
    EXPECT_EQ(r.checksRun, 2);
    EXPECT_EQ(r.checksPassed, 2);
    ASSERT_FALSE(r.outputErrors.empty());
    EXPECT_LT(r.outputErrors[0].maxAbsError, 1e-2);
    for (const char* stage : {"workspace", "static", "inspect", "compile", "verify", "profile"}) {
        ASSERT_NE(r.stage(stage), nullptr) << stage;
        EXPECT_EQ(r.stage(stage)->status, StageStatus::Passed)
            << stage << ": " << r.stage(stage)->summary;
    }
    EXPECT_TRUE(r.candidate.available);
    EXPECT_EQ(r.candidate.method, "wall-clock");
    EXPECT_TRUE(r.eager.available);
    EXPECT_GT(r.speedupVsEager, 0.0);
    // The speed-up's interval over the timing rounds, which the milestones are decided on.
    EXPECT_EQ(r.candidate.roundMediansMs.size(), static_cast<std::size_t>(r.candidate.rounds));
    EXPECT_EQ(r.intervalLevel, 0.9);
    ASSERT_TRUE(r.intervalVsEager.available);
    EXPECT_LE(r.intervalVsEager.low, r.intervalVsEager.high);
    EXPECT_FALSE(r.environment.torchVersion.empty());
    EXPECT_EQ(r.environment.device, "cpu");
    // Honest solutions are not flagged: only warnings about the run itself may appear.
    for (const auto& f : r.flags)
        EXPECT_TRUE(f.code == "timing_unstable" || f.code == "timing_disturbed" ||
                    f.code == "sandbox_weak")
            << "honest solution flagged: " << f.code << ": " << f.reason;
    EXPECT_GT(r.integrity.timedOutputsChecked, 0);
    // Every second accounted: a cold stage's process start is inside its record.
    EXPECT_GE(r.stageSeconds(), 0.95 * r.totalSeconds)
        << "stages " << r.stageSeconds() << " s of " << r.totalSeconds << " s";
    for (const char* stage : {"inspect", "verify", "profile"}) {
        EXPECT_GT(r.stage(stage)->startSeconds, 0.0) << stage;
        EXPECT_LT(r.stage(stage)->startSeconds, r.stage(stage)->seconds) << stage;
    }
    EXPECT_FALSE(r.integrity.extensionCalls.empty()) << "the extension's calls are counted";

    // A second evaluation reuses the built extension and the cached baselines. Neither depends on
    // the task, so one task shows it (the warm worker's tests show it on their path).
    if (GetParam() != "07_scale_residual_add")
        return;
    EvaluationResult again = evaluateWorkspace(ws);
    EXPECT_GE(again.reward, 1) << describe(again);
    EXPECT_TRUE(again.baselinesFromCache);
    // Cached baselines keep their rounds, so the interval is there without timing them again.
    EXPECT_FALSE(again.eager.roundMediansMs.empty());
    EXPECT_TRUE(again.intervalVsEager.available);
    EXPECT_NE(again.seed, r.seed) << "each evaluation draws fresh inputs";
}

INSTANTIATE_TEST_SUITE_P(Bundled, SolutionEvaluation,
                         ::testing::Values("01_gelu", "02_sum_reduction", "03_softmax",
                                           "04_layernorm", "05_gemm_bias_relu", "06_conv2d_relu",
                                           "07_scale_residual_add", "08_rmsnorm_silu"));

TEST_F(EvaluationTest, CompileErrorIsReportedWithFileAndLine) {
    const fs::path ws = makeWorkspace("01_gelu", true);
    patchFile(ws / "kernels" / "gelu_cpu.cpp", "extern \"C\"", "this is not C++;\nextern \"C\"");
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1);
    EXPECT_FALSE(r.compiled);
    EXPECT_EQ(r.failureKind, "compile_error") << describe(r);
    ASSERT_FALSE(r.diagnostics.empty()) << describe(r);
    bool found = false;
    for (const auto& d : r.diagnostics)
        found |= d.file == "kernels/gelu_cpu.cpp" && d.line > 0 && d.severity == Severity::Error;
    EXPECT_TRUE(found) << formatDiagnostic(r.diagnostics.front());
    EXPECT_EQ(r.stage("verify"), nullptr);

    // The next evaluation of the repaired workspace works.
    patchFile(ws / "kernels" / "gelu_cpu.cpp", "this is not C++;\n", "");
    EvaluationResult fixed = evaluateWorkspace(ws);
    EXPECT_GE(fixed.reward, 1) << describe(fixed);
}

TEST_F(EvaluationTest, WrongKernelEarnsMinusOneWithTheError) {
    const fs::path ws = makeWorkspace("07_scale_residual_add", true);
    // Corrupt the CPU launcher's arithmetic: the result is off by a constant.
    std::string source = readText(ws / "kernels" / "scale_residual_cpu.cpp");
    const auto at = source.find("= ");
    ASSERT_NE(at, std::string::npos);
    patchFile(ws / "kernels" / "scale_residual_cpu.cpp", "1.0f", "1.5f");
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1) << describe(r);
    EXPECT_TRUE(r.compiled);
    EXPECT_FALSE(r.correct);
    EXPECT_EQ(r.failureKind, "numerical_mismatch") << describe(r);
    ASSERT_FALSE(r.outputErrors.empty());
    EXPECT_GT(r.outputErrors[0].maxAbsError, 1e-2);
}

TEST_F(EvaluationTest, ProtectedFileChangeIsDetectedRestoredAndNamed) {
    const fs::path ws = makeWorkspace("01_gelu", true);
    const std::string original = readText(ws / "model.py");
    writeText(ws / "model.py", original + "\n# agent was here\n");
    writeText(ws / "utils" / "extra.py", "print('hack')\n");
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "protected_file_modified");
    EXPECT_NE(r.failureMessage.find("model.py"), std::string::npos) << r.failureMessage;
    EXPECT_NE(r.failureMessage.find("utils/extra.py"), std::string::npos) << r.failureMessage;
    ASSERT_FALSE(r.flags.empty());
    EXPECT_EQ(r.flags.front().severity, FlagSeverity::Strict);
    EXPECT_EQ(readText(ws / "model.py"), original);
    EXPECT_FALSE(fs::exists(ws / "utils" / "extra.py"));
}

TEST_F(EvaluationTest, WorkspaceInitCreatesTheCudaAgentLayout) {
    const fs::path ws = makeWorkspace("03_softmax", false);
    for (const char* file :
         {"model.py", "model_new.py", "binding.cpp", "binding_registry.h", "SKILL.md",
          "utils/compile.sh", "utils/verification.py", "utils/profiling.py"})
        EXPECT_TRUE(fs::exists(ws / file)) << file;
    EXPECT_TRUE(fs::is_directory(ws / "kernels"));
    EXPECT_EQ(readText(ws / "model.py"), readText(task("03_softmax")));
    EXPECT_TRUE(checkAndRestoreProtectedFiles(ws.string()).clean());
    // A second init into the same folder refuses to overwrite.
    WorkspaceInitResult again = initWorkspace(task("03_softmax").string(), ws.string());
    EXPECT_FALSE(again.ok);
    EXPECT_NE(again.error.find("not empty"), std::string::npos);
    // The starter candidate is valid Python but not a solution: it fails verification cleanly.
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1) << describe(r);
    EXPECT_FALSE(r.correct);
}
