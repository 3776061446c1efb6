#pragma once

// Shared set-up for end-to-end evaluation tests: workspaces from bundled tasks and solutions in a
// temporary folder, evaluated in CPU mode with small check and timing counts.
#include "engine/evaluation/evaluator.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/task_catalog.h"
#include "engine/workspace/workspace.h"
#include "tests/test_files.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>
#include <thread>

namespace kwb::test {

namespace fs = std::filesystem;

// Replaces the first occurrence of `from` (which must exist) in a file.
inline void patchFile(const fs::path& path, const std::string& from, const std::string& to) {
    std::string text = readText(path);
    const auto at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from << " not in " << path;
    text.replace(at, from.size(), to);
    writeText(path, text);
}

class EvaluationTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::random_device device;
        root_ = fs::temp_directory_path() / ("kwb-eval-" + std::to_string(device()));
        fs::create_directories(root_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    fs::path task(const std::string& id) const {
        return fs::path(bundledTasksDirectory()) / (id + ".py");
    }

    fs::path makeWorkspace(const std::string& taskId, bool withSolution,
                           const std::string& name = "ws") {
        WorkspaceInitOptions options;
        if (withSolution)
            options.solutionDirectory = (fs::path(bundledSolutionsDirectory()) / taskId).string();
        WorkspaceInitResult init =
            initWorkspace(task(taskId).string(), (root_ / name).string(), options);
        EXPECT_TRUE(init.ok) << init.error;
        return root_ / name;
    }

    // A workspace whose task and candidate are written by the test (no kernels: the compile
    // stage has nothing to build, so these cases run in seconds).
    fs::path makePythonWorkspace(const std::string& modelPy, const std::string& modelNewPy,
                                 const std::string& name = "pyws") {
        const fs::path taskFile = root_ / (name + "_task.py");
        writeText(taskFile, modelPy);
        WorkspaceInitResult init = initWorkspace(taskFile.string(), (root_ / name).string());
        EXPECT_TRUE(init.ok) << init.error;
        writeText(root_ / name / "model_new.py", modelNewPy);
        return root_ / name;
    }

    static EvaluationOptions cpuOptions() {
        EvaluationOptions options;
        options.device = DeviceChoice::Cpu;
        options.checks = 2;
        options.warmup = 1;
        options.iterations = 4;
        options.rounds = 2;
        // CPU timing in CI is noisy; repeating rounds until stable would only cost time.
        options.maxRounds = 2;
        options.stageTimeout = std::chrono::seconds(600);
        return options;
    }

    EvaluationResult evaluateWorkspace(const fs::path& dir,
                                       const EvaluationOptions& options = cpuOptions()) {
        return evaluator_.evaluate(EvaluationTarget::forWorkspace(dir.string()), options);
    }

    // Evaluates with a stop request `delay` after `stage` began: the stage is running then.
    EvaluationResult evaluateAndStopDuring(const fs::path& dir, const EvaluationOptions& options,
                                           const std::string& stage,
                                           std::chrono::milliseconds delay) {
        std::stop_source stop;
        std::atomic<bool> reached{false};
        std::jthread canceller([&](std::stop_token done) {
            while (!reached && !done.stop_requested())
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
            std::this_thread::sleep_for(delay);
            stop.request_stop();
        });
        return evaluator_.evaluate(
            EvaluationTarget::forWorkspace(dir.string()), options,
            [&](const std::string& name) { reached = reached || name == stage; }, stop.get_token());
    }

    static std::string describe(const EvaluationResult& r) {
        std::string text = "reward " + std::to_string(r.reward) + " (" + r.rewardReason + "), " +
                           r.verdict() + "\n";
        for (const auto& s : r.stages)
            text += "  " + s.name + ": " + toString(s.status) + " " + s.summary + "\n" +
                    (s.status == StageStatus::Failed ? s.log.substr(0, 3000) + "\n" : "");
        return text;
    }

    fs::path root_;
    Evaluator evaluator_;
};

// A minimal valid task, and a pure-Python candidate template for the bad-input cases.
inline const char* kTinyTask = R"PY("""Tiny scale task for tests
Category: elementwise
"""
import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(16))
        self.factor = factor

    def forward(self, x):
        return x * self.weight * self.factor

def get_inputs():
    return [torch.randn(8, 16)]

def get_init_inputs():
    return [2.0]
)PY";

inline std::string tinyCandidate(const std::string& forwardBody, const std::string& header = "",
                                 const std::string& signature = "factor") {
    return "import torch\nimport torch.nn as nn\n" + header +
           "\nclass ModelNew(nn.Module):\n    def __init__(self, " + signature +
           "):\n        super().__init__()\n        self.weight = nn.Parameter(torch.randn(16))\n"
           "        self.factor = 2.0\n\n    def forward(self, x):\n" +
           forwardBody + "\n";
}

} // namespace kwb::test
