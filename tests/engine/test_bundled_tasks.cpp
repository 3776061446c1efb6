// Every bundled task must be a working KernelBench task for the configured Python: it imports,
// both functions run, and the reference model produces an output.
#include "engine/process/process_runner.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"
#include "engine/workspace/task_catalog.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace kwb;

namespace {
constexpr const char* kCheckScript = R"PY(
import importlib.util, json, sys, torch
torch.manual_seed(0)
for path in sys.argv[1:]:
    report = {"path": path}
    try:
        spec = importlib.util.spec_from_file_location("task", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        init = module.get_init_inputs()
        inputs = module.get_inputs()
        model = module.Model(*init)
        with torch.no_grad():
            out = model(*inputs)
        outs = out if isinstance(out, (tuple, list)) else [out]
        report["ok"] = all(isinstance(o, torch.Tensor) and o.numel() > 0 for o in outs)
        report["finite"] = all(bool(torch.isfinite(o).all()) for o in outs)
        report["inputs"] = len(inputs)
        report["std"] = float(outs[0].float().std())
    except Exception as exc:
        report["ok"] = False
        report["error"] = "%s: %s" % (type(exc).__name__, exc)
    print(json.dumps(report), flush=True)
)PY";
} // namespace

TEST(BundledTasks, EveryTaskRunsInTheConfiguredPython) {
    PythonProbe python = detectPython("");
    ASSERT_TRUE(python.usable()) << python.error;
    std::vector<TaskInfo> tasks = listTasks(bundledTasksDirectory());
    ASSERT_GE(tasks.size(), 8u);

    ProcessSpec spec;
    spec.argv = {python.path, "-c", kCheckScript};
    for (const auto& task : tasks)
        spec.argv.push_back(task.path);
    spec.timeout = std::chrono::minutes(5);
    spec.environmentOverrides["OMP_NUM_THREADS"] = "2";
    ProcessResult run = runProcess(spec);
    ASSERT_TRUE(run.succeeded()) << run.statusText() << "\n" << run.err.text;

    std::istringstream lines(run.out.text);
    std::string line;
    size_t reported = 0;
    while (std::getline(lines, line)) {
        auto report = nlohmann::json::parse(line);
        ++reported;
        EXPECT_TRUE(report.value("ok", false)) << report.dump();
        EXPECT_TRUE(report.value("finite", false)) << report.dump();
        EXPECT_GE(report.value("inputs", 0), 1) << report.dump();
        // A constant output would make every candidate trivially "correct".
        EXPECT_GT(report.value("std", 0.0), 0.0) << report.dump();
    }
    EXPECT_EQ(reported, tasks.size());
}
