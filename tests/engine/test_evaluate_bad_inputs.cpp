// Bad input must give a clear failure record, never a crash, and the next evaluation must work.
#include "engine/system/user_directories.h"
#include "engine/workspace/scratch_folders.h"
#include "evaluation_fixture.h"
#include "tests/test_files.h"

using namespace kwb;
using namespace kwb::test;

namespace {
const std::string kGoodForward = "        return x * self.weight * self.factor";
} // namespace

TEST_F(EvaluationTest, PurePyTorchCandidateIsCorrectButFlaggedAsTorchFallback) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_TRUE(r.correct) << describe(r);
    ASSERT_NE(r.stage("compile"), nullptr);
    EXPECT_EQ(r.stage("compile")->status, StageStatus::Skipped);
    // It computes with aten.mul, not with kernels of its own: caught at the dispatcher.
    EXPECT_EQ(r.reward, -1);
    bool flagged = false;
    for (const auto& flag : r.flags)
        flagged |= flag.code == "torch_fallback" && flag.severity == FlagSeverity::Strict &&
                   flag.reason.find("aten.mul") != std::string::npos;
    EXPECT_TRUE(flagged) << describe(r);
}

TEST_F(EvaluationTest, TheRlProfileDoesNotTimeACandidateAStrictFindingHasRejected) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    EvaluationOptions rl = cpuOptions();
    applyEvaluationProfile(rl, EvaluationProfile::Rl);
    EXPECT_FALSE(rl.profileFlagged);
    rl.checks = 2;
    rl.warmWorker = false; // the cold stages: this test is about the evaluator's order
    const EvaluationResult skipped = evaluateWorkspace(ws, rl);
    EXPECT_EQ(skipped.reward, -1);
    ASSERT_NE(skipped.stage("profile"), nullptr);
    EXPECT_EQ(skipped.stage("profile")->status, StageStatus::Skipped) << describe(skipped);
    EXPECT_FALSE(skipped.eager.available);

    // The default (someone editing by hand) times it, and it still earns nothing.
    const EvaluationResult timed = evaluateWorkspace(ws);
    ASSERT_NE(timed.stage("profile"), nullptr);
    EXPECT_EQ(timed.stage("profile")->status, StageStatus::Passed) << describe(timed);
    EXPECT_TRUE(timed.eager.available) << describe(timed);
    EXPECT_EQ(timed.reward, -1);
}

TEST_F(EvaluationTest, KernelBenchProfileRejectsAPrecisionBugThatCudaAgentsTolerancePasses) {
    // A bfloat16 round trip of a float32 result: errors near 4e-3, inside CUDA Agent's 1e-2 and
    // far outside KernelBench's 1e-4 for float32. The profile's rules reach the verdict.
    const fs::path ws = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        return (x * self.weight * self.factor).bfloat16().float()"));
    EvaluationOptions agent = cpuOptions();
    agent.profile = false;
    const EvaluationResult lenient = evaluateWorkspace(ws, agent);
    EXPECT_TRUE(lenient.correct) << describe(lenient);
    EXPECT_EQ(lenient.evaluationProfile, "cuda-agent");
    EXPECT_EQ(lenient.atol, 1e-2);

    EvaluationOptions kernelBench = cpuOptions();
    applyEvaluationProfile(kernelBench, EvaluationProfile::KernelBench);
    kernelBench.checks = 2;
    kernelBench.profile = false;
    const EvaluationResult strict = evaluateWorkspace(ws, kernelBench);
    EXPECT_FALSE(strict.correct) << describe(strict);
    EXPECT_EQ(strict.failureKind, "numerical_mismatch");
    EXPECT_NE(strict.failureMessage.find("atol=0.0001, rtol=0.0001"), std::string::npos)
        << strict.failureMessage;
    EXPECT_EQ(strict.evaluationProfile, "kernelbench");
    EXPECT_EQ(strict.dtypeTolerances.at("float32"), 1e-4);
}

TEST_F(EvaluationTest, AStopEndsTheRunningStageNotOnlyTheNextOne) {
    // The candidate never returns; without the stop reaching its process the stage would run
    // to its timeout (failure "timeout" after 300 s).
    const fs::path ws =
        makePythonWorkspace(kTinyTask, tinyCandidate("        while True:\n            pass"));
    EvaluationOptions options = cpuOptions();
    options.stageTimeout = std::chrono::seconds(300);
    const EvaluationResult r =
        evaluateAndStopDuring(ws, options, "verify", std::chrono::milliseconds(1500));
    EXPECT_EQ(r.failureKind, "cancelled") << describe(r);
    EXPECT_NE(r.failureMessage.find("while verify ran"), std::string::npos) << r.failureMessage;
    EXPECT_EQ(r.reward, -1);

    writeText(ws / "model_new.py", tinyCandidate(kGoodForward));
    EvaluationOptions quick = cpuOptions();
    quick.profile = false;
    EXPECT_TRUE(evaluateWorkspace(ws, quick).correct) << "the next evaluation is unaffected";
}

TEST_F(EvaluationTest, TorchOpsHiddenBehindEarlyImportsAndTensorMethodsAreCaught) {
    // Names bound before any guard existed, Tensor methods and torch.ops.aten all reach the
    // dispatcher, where the guard sees them.
    const fs::path ws = makePythonWorkspace(
        kTinyTask, tinyCandidate("        y = mul_alias(x, self.weight)\n"
                                 "        y = y.mul(self.factor)\n"
                                 "        return torch.ops.aten.relu(y) - torch.ops.aten.relu(-y)",
                                 "from torch import mul as mul_alias\n"));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_TRUE(r.correct) << describe(r);
    EXPECT_EQ(r.reward, -1);
    std::string reasons;
    for (const auto& flag : r.flags)
        reasons += flag.reason;
    EXPECT_NE(reasons.find("aten.mul"), std::string::npos) << reasons;
    EXPECT_NE(reasons.find("aten.relu"), std::string::npos) << reasons;
}

TEST_F(EvaluationTest, TaskWithSyntaxError) {
    const fs::path ws =
        makePythonWorkspace("class Model(:\n    pass\n", tinyCandidate(kGoodForward));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "task_import") << describe(r);
    EXPECT_NE(r.failureMessage.find("SyntaxError"), std::string::npos) << r.failureMessage;
}

TEST_F(EvaluationTest, TaskWithoutGetInputs) {
    std::string task = kTinyTask;
    task.replace(task.find("def get_inputs"), 14, "def make_inputs");
    const fs::path ws = makePythonWorkspace(task, tinyCandidate(kGoodForward));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.failureKind, "task_missing_function") << describe(r);
    EXPECT_NE(r.failureMessage.find("get_inputs"), std::string::npos);
}

TEST_F(EvaluationTest, InitInputsThatAreJunk) {
    std::string task = kTinyTask;
    task.replace(task.find("return [2.0]"), 12, "return 42");
    const fs::path ws = makePythonWorkspace(task, tinyCandidate(kGoodForward));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.failureKind, "task_bad_init_inputs") << describe(r);
}

TEST_F(EvaluationTest, CandidateWithADifferentSignature) {
    const fs::path ws =
        makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward, "", "factor, extra"));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "candidate_init") << describe(r);
}

TEST_F(EvaluationTest, CandidateWithDifferentParameterNames) {
    std::string candidate = tinyCandidate("        return x * self.w * self.factor");
    candidate.replace(candidate.find("self.weight ="), 13, "self.w =");
    const fs::path ws = makePythonWorkspace(kTinyTask, candidate);
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.failureKind, "state_dict_mismatch") << describe(r);
    EXPECT_NE(r.failureMessage.find("weight"), std::string::npos) << r.failureMessage;
}

TEST_F(EvaluationTest, CandidateWithoutModelNewFailsStaticChecks) {
    const fs::path ws = makePythonWorkspace(kTinyTask, "import torch\nclass Model2:\n    pass\n");
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.failureKind, "static_check") << describe(r);
    EXPECT_NE(r.failureMessage.find("ModelNew"), std::string::npos);
}

TEST_F(EvaluationTest, SegfaultingCandidateIsACrashRecord) {
    const fs::path ws = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        ctypes.string_at(0)\n        return x", "import ctypes\n"));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "crashed") << describe(r);
    EXPECT_NE(r.failureMessage.find("SIGSEGV"), std::string::npos) << r.failureMessage;
    // The next evaluation on the same machine works.
    writeText(ws / "model_new.py", tinyCandidate(kGoodForward));
    EXPECT_TRUE(evaluateWorkspace(ws).correct);
}

TEST_F(EvaluationTest, InfiniteLoopIsKilledAtTheTimeout) {
    const fs::path ws =
        makePythonWorkspace(kTinyTask, tinyCandidate("        while True:\n            pass"));
    EvaluationOptions options = cpuOptions();
    options.stageTimeout = std::chrono::seconds(20);
    const auto start = std::chrono::steady_clock::now();
    EvaluationResult r = evaluateWorkspace(ws, options);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(90));
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "timeout") << describe(r);
    EXPECT_NE(r.failureMessage.find("verify"), std::string::npos);
}

TEST_F(EvaluationTest, OutputFloodIsTruncated) {
    const fs::path ws = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        sys.stdout.write('spam ' * 2000000)\n        sys.stdout.flush()\n" +
                          kGoodForward,
                      "import sys\n"));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_TRUE(r.correct) << describe(r);
    for (const auto& stage : r.stages)
        EXPECT_LT(stage.log.size(), 300u * 1024) << stage.name;
}

TEST_F(EvaluationTest, ForkBombIsStopped) {
    // Each process forks until the watchdog kills the tree; bounded so it never threatens the host.
    const fs::path ws = makePythonWorkspace(
        kTinyTask, tinyCandidate("        for _ in range(2000):\n            if os.fork() == 0:\n  "
                                 "              time.sleep(30)\n"
                                 "                os._exit(0)\n" +
                                     kGoodForward,
                                 "import os, time\n"));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "resource_limit") << describe(r);
    EXPECT_NE(r.failureMessage.find("process limit"), std::string::npos) << r.failureMessage;
}

TEST_F(EvaluationTest, MemoryExhaustionIsAnErrorNotAHang) {
    const fs::path ws = makePythonWorkspace(
        kTinyTask, tinyCandidate("        hog = torch.empty(64 * 1024**3, dtype=torch.uint8)\n" +
                                 kGoodForward));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "candidate_run") << describe(r);
}

TEST_F(EvaluationTest, MissingPythonIsAClearFailure) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    Evaluator broken("/nonexistent/python3");
    EvaluationResult r = broken.evaluate(EvaluationTarget::forWorkspace(ws.string()), cpuOptions());
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "python_missing") << describe(r);
    EXPECT_NE(r.failureMessage.find("/nonexistent/python3"), std::string::npos) << r.failureMessage;
}

// The runs folder is tidied when the evaluation claims its scratch folder, before any stage:
// even an evaluation that cannot start a Python removes what a candidate left there.
TEST_F(EvaluationTest, WhatACandidateLeftInItsRunsFolderGoesAtTheNextEvaluation) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    const EvaluationTarget target = EvaluationTarget::forWorkspace(ws.string());
    const fs::path runs =
        workspaceRunsFolder(cacheDirectory(), target.workspace, target.candidatePath);
    writeText(runs / "escape-disk-1.bin", std::string(4096, 'x'));
    writeText(runs / "12-34/harness-request.json", "{}");
    writeText(runs / "torch_extensions/ext/ext.so", "kept");
    Evaluator broken("/nonexistent/python3");
    EvaluationResult r = broken.evaluate(target, cpuOptions());
    EXPECT_EQ(r.failureKind, "python_missing") << describe(r);
    EXPECT_FALSE(fs::exists(runs / "escape-disk-1.bin"));
    EXPECT_FALSE(fs::exists(runs / "12-34"));
    EXPECT_TRUE(fs::is_regular_file(runs / "torch_extensions/ext/ext.so"));
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(runs))
        ++entries;
    EXPECT_EQ(entries, 1u) << "the evaluation's own scratch folder went with it";
}

TEST_F(EvaluationTest, ACandidateThatLittersItsScratchFolderStillHasEverySecondAccounted) {
    // HOME is the stage's scratch folder. Twenty thousand files there make its removal, when the
    // evaluation ends, take a quarter of a second here: a part of the wall time that the stages
    // must still cover. The evaluator's own keeping between stages is a few milliseconds.
    const std::string litter = "        import os\n"
                               "        folder = os.path.join(os.environ['HOME'], 'litter')\n"
                               "        if not os.path.isdir(folder):\n"
                               "            os.makedirs(folder)\n"
                               "            for i in range(20000):\n"
                               "                open(os.path.join(folder, str(i)), 'w').close()\n";
    const fs::path ws =
        makePythonWorkspace(kTinyTask, tinyCandidate(litter + std::string(kGoodForward)));
    EvaluationOptions options = cpuOptions();
    options.profile = false;
    const EvaluationResult r = evaluateWorkspace(ws, options);
    EXPECT_TRUE(r.correct) << describe(r);
    EXPECT_LT(r.totalSeconds - r.stageSeconds(), 0.1)
        << "stages " << r.stageSeconds() << " s of " << r.totalSeconds << " s";
}

TEST_F(EvaluationTest, KernelBenchPairWithLoadInline) {
    const fs::path reference = root_ / "ref.py";
    writeText(reference, kTinyTask);
    const fs::path candidate = root_ / "new.py";
    writeText(candidate, R"PY(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_source = """
#include <torch/extension.h>
torch::Tensor scale(torch::Tensor x, torch::Tensor w, double f) {
    auto out = torch::empty_like(x);
    auto xa = x.contiguous(); auto wa = w.contiguous();
    const float* xp = xa.data_ptr<float>(); const float* wp = wa.data_ptr<float>();
    float* op = out.data_ptr<float>();
    int64_t cols = w.numel();
    for (int64_t i = 0; i < x.numel(); ++i) op[i] = xp[i] * wp[i % cols] * static_cast<float>(f);
    return out;
}
"""
ext = load_inline(name="kwb_pair_scale", cpp_sources=_source, functions=["scale"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(16))
        self.factor = factor

    def forward(self, x):
        return ext.scale(x, self.weight, self.factor)
)PY");
    EvaluationResult r = evaluator_.evaluate(
        EvaluationTarget::forPair(reference.string(), candidate.string()), cpuOptions());
    EXPECT_TRUE(r.correct) << describe(r);
    EXPECT_GE(r.reward, 1) << describe(r);
}

TEST_F(EvaluationTest, PythonWithoutTorchIsAClearFailure) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    // -S hides site-packages, so this interpreter runs but cannot import torch.
    const fs::path wrapper = root_ / "bin" / "python3";
    writeText(wrapper, std::string("#!/bin/sh\nexec ") + KWB_TEST_EXPECTED_PYTHON + " -S \"$@\"\n");
    fs::permissions(wrapper, fs::perms::owner_all);
    Evaluator noTorch(wrapper.string());
    EvaluationResult r =
        noTorch.evaluate(EvaluationTarget::forWorkspace(ws.string()), cpuOptions());
    EXPECT_EQ(r.reward, -1);
    EXPECT_EQ(r.failureKind, "python_missing") << describe(r);
    EXPECT_NE(r.failureMessage.find("torch"), std::string::npos) << r.failureMessage;
}

TEST_F(EvaluationTest, CandidateCannotWriteOutsideTheWorkspaceOrReachTheNetwork) {
    // The workspace folder is visible but read-only; only build/ and the caches are writable.
    const fs::path ws = makePythonWorkspace(kTinyTask, "");
    const fs::path marker = ws / "escape.txt";
    writeText(ws / "model_new.py", tinyCandidate("        open('" + marker.string() +
                                                 "', 'w').write('escaped')\n" + kGoodForward));
    EvaluationResult r = evaluateWorkspace(ws);
    EXPECT_EQ(r.failureKind, "candidate_run") << describe(r);
    EXPECT_NE(r.failureMessage.find("Read-only file system"), std::string::npos)
        << r.failureMessage;
    EXPECT_FALSE(fs::exists(marker));

    writeText(ws / "model_new.py",
              tinyCandidate("        socket.create_connection(('127.0.0.1', 22), timeout=2)\n" +
                                kGoodForward,
                            "import socket\n"));
    EvaluationResult network = evaluateWorkspace(ws);
    EXPECT_EQ(network.failureKind, "candidate_run") << describe(network);
    EXPECT_TRUE(network.failureMessage.find("unreachable") != std::string::npos ||
                network.failureMessage.find("refused") != std::string::npos ||
                network.failureMessage.find("Network") != std::string::npos)
        << network.failureMessage;
}

TEST_F(EvaluationTest, WithoutBubblewrapTheResultCarriesALoudWarning) {
    const fs::path ws = makePythonWorkspace(kTinyTask, tinyCandidate(kGoodForward));
    // A cache of its own, holding what an isolated run left: a bytecode cache, which this run's
    // candidate could have written, so the evaluation removes it.
    const char* savedCache = std::getenv("KWB_CACHE_DIR");
    const std::string keptCache = savedCache ? savedCache : "";
    setenv("KWB_CACHE_DIR", (root_ / "cache").c_str(), 1);
    fs::create_directories(root_ / "cache" / "bytecode" / "0123456789abcdef");
    writeText(root_ / "cache" / "bytecode" / "0123456789abcdef" / "kwb-fill.txt", "python x\n");
    setenv("KWB_SANDBOX", "rlimits-only", 1);
    EvaluationResult r = evaluateWorkspace(ws);
    unsetenv("KWB_SANDBOX");
    if (savedCache)
        setenv("KWB_CACHE_DIR", keptCache.c_str(), 1);
    else
        unsetenv("KWB_CACHE_DIR");
    EXPECT_FALSE(fs::exists(root_ / "cache" / "bytecode"))
        << "a bytecode cache outlived a candidate that ran without isolation";
    EXPECT_TRUE(r.correct) << describe(r);
    EXPECT_FALSE(r.sandboxed);
    bool warned = false;
    for (const auto& flag : r.flags)
        warned |= flag.code == "sandbox_weak" && flag.severity == FlagSeverity::Warning &&
                  flag.reason.find("no filesystem, network or PID isolation") != std::string::npos;
    EXPECT_TRUE(warned) << describe(r);
}
