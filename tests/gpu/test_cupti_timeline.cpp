// CUPTI timelines end to end on a GPU host (`ctest -L gpu`): the injection library inside a
// torch process, and `collectTimeline` through the evaluation pipeline. Skips without a GPU.
#include "../engine/evaluation_fixture.h"
#include "engine/cuda/gpu_inventory.h"
#include "engine/process/process_runner.h"
#include "engine/timeline/injection_library.h"
#include "engine/timeline/timeline_builder.h"

#include <iostream>
#include <set>

using namespace kwb;
using namespace kwb::test;
using namespace kwb::timeline;

namespace {

struct LoadedRecords {
    TimelineSnapshot timeline;
    bool header = false;
    bool end = false;
    std::vector<std::string> errors;
};

LoadedRecords load(const fs::path& file) {
    TimelineBuilder builder;
    std::istringstream in(readText(file));
    for (std::string line; std::getline(in, line);)
        builder.addLine(line);
    return {builder.finish(), builder.sawHeader(), builder.sawEnd(), builder.errors()};
}

std::set<std::string> rangeNames(const KernelTimeline& t) {
    std::set<std::string> names;
    for (const auto& lane : t.ranges)
        for (const auto& e : lane.events)
            names.insert(t.displayName(e.nameId));
    return names;
}

void printSummary(const KernelTimeline& t) {
    std::cout << "[gpu] " << t.kernelCount << " kernels on " << t.streams.size() << " lanes, "
              << t.ranges.size() << " NVTX lanes, dropped " << t.dropped.total() << "\n";
    for (std::size_t i = 0; i < t.kernelStatistics.size() && i < 5; ++i) {
        const auto& s = t.kernelStatistics[i];
        std::cout << "[gpu]   " << s.count << " x " << t.displayName(s.nameId).substr(0, 80)
                  << " mean " << s.meanNs << " ns\n";
    }
}

const char* kTorchScript = R"PY(
import torch
x = torch.randn(1 << 20, device="cuda")
w = torch.randn(512, 512, device="cuda")
torch.cuda.nvtx.range_push("kwb-gpu-test")
for i in range(3):
    torch.cuda.nvtx.range_push(f"iteration {i}")
    y = torch.nn.functional.gelu(x)
    z = w @ w
    torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
print("sum", float(y.sum().cpu()) + float(z.sum().cpu()))
)PY";

class CuptiTimeline : public EvaluationTest {
protected:
    void SetUp() override {
        const GpuInventory gpus = detectGpus();
        if (!gpus.hasGpu())
            GTEST_SKIP() << "SKIPPED: no CUDA device (" << gpus.status << ")";
        library_ = cuptiInjectionLibraryPath();
        ASSERT_FALSE(library_.empty()) << "libkwb_cupti_inject.so was not built";
        EvaluationTest::SetUp();
    }
    std::string library_;
};

} // namespace

TEST_F(CuptiTimeline, TorchKernelsWithLaunchDetailsAndNvtxRangesArrive) {
    const std::string python = evaluator_.python();
    ASSERT_FALSE(python.empty()) << "no task Python";
    const fs::path script = root_ / "tiny.py";
    const fs::path records = root_ / "records.jsonl";
    writeText(script, kTorchScript);
    ProcessSpec spec;
    spec.argv = {python, script.string()};
    spec.environmentOverrides = timelineEnvironment(library_, records.string());
    spec.timeout = std::chrono::seconds(300);
    const ProcessResult run = runProcess(spec);
    ASSERT_TRUE(run.succeeded()) << run.statusText() << "\n" << run.out.text << run.err.text;
    EXPECT_NE(run.out.text.find("sum"), std::string::npos);

    const LoadedRecords loaded = load(records);
    ASSERT_TRUE(loaded.header) << "no header: the library was not injected\n" << run.err.text;
    EXPECT_TRUE(loaded.end) << "no end record: the atexit flush did not run";
    for (const auto& e : loaded.errors)
        std::cout << "[gpu] injection library said: " << e << "\n";
    const KernelTimeline& t = *loaded.timeline;
    printSummary(t);
    ASSERT_GE(t.kernelCount, 6u); // 3 x (gelu + gemm), plus randn
    bool sawLaunchDetails = false;
    for (const auto& k : t.launches)
        sawLaunchDetails |= k.grid[0] > 0 && k.block[0] > 1 && k.registersPerThread > 0;
    EXPECT_TRUE(sawLaunchDetails);
    bool sawCopy = false;
    for (const auto& lane : t.streams)
        for (const auto& e : lane.events)
            sawCopy |= e.kind == EventKind::Memcpy;
    EXPECT_TRUE(sawCopy) << "the .cpu() copies are missing";
    const auto ranges = rangeNames(t);
    EXPECT_TRUE(ranges.count("kwb-gpu-test")) << "NVTX ranges did not reach CUPTI";
    EXPECT_TRUE(ranges.count("iteration 2"));
    for (const auto& lane : t.ranges)
        EXPECT_GE(lane.maxDepth, 1u);
    EXPECT_EQ(t.dropped.malformed, 0u);
}

TEST_F(CuptiTimeline, EvaluationRecordsTheProfileStagePhases) {
    const fs::path ws = makeWorkspace("07_scale_residual_add", true);
    EvaluationOptions options;
    options.device = DeviceChoice::Cuda;
    options.checks = 2;
    options.iterations = 10;
    options.maxRounds = 5;
    options.stageTimeout = std::chrono::seconds(300);
    options.collectTimeline = true;
    options.timelineRecordPath = (root_ / "timeline" / "profile.jsonl").string();
    const EvaluationResult r = evaluateWorkspace(ws, options);
    ASSERT_TRUE(r.correct) << describe(r);
    ASSERT_EQ(r.timelineRecordPath, options.timelineRecordPath);
    for (const auto& f : r.flags)
        EXPECT_NE(f.code, "timeline_unavailable") << f.reason;

    const LoadedRecords loaded = load(r.timelineRecordPath);
    ASSERT_TRUE(loaded.header) << describe(r);
    EXPECT_TRUE(loaded.end) << "the harness did not call kwbCuptiFinish before exiting";
    const KernelTimeline& t = *loaded.timeline;
    printSummary(t);
    EXPECT_GT(t.kernelCount, 0u);
    const auto ranges = rangeNames(t);
    for (const char* phase : {"eager", "candidate", "iteration 0", "warmup candidate"})
        EXPECT_TRUE(ranges.count(phase)) << phase;
    // The timeline's baselines were timed under the profiler and must not reach the cache.
    EXPECT_FALSE(r.baselinesFromCache);
}
