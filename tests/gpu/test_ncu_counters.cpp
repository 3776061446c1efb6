// Hardware counters on demand on a GPU host (`ctest -L gpu`): an evaluation with
// EvaluationOptions::counters runs the profile stage under Nsight Compute, and its report's CSV
// pages read back as kernels with Speed-of-Light numbers and a roofline place. Skips without a
// GPU or ncu.
#include "../engine/evaluation_fixture.h"
#include "engine/counters/ncu_files.h"
#include "engine/counters/ncu_report.h"
#include "engine/cuda/gpu_inventory.h"
#include "engine/evaluation/ncu_collection.h"

#include <iostream>

using namespace kwb;
using namespace kwb::test;

namespace {

class NcuCounters : public EvaluationTest {
protected:
    void SetUp() override {
        const GpuInventory gpus = detectGpus();
        if (!gpus.hasGpu())
            GTEST_SKIP() << "SKIPPED: no CUDA device (" << gpus.status << ")";
        if (ncuPath().empty())
            GTEST_SKIP() << "SKIPPED: no Nsight Compute (ncu) on this host";
        EvaluationTest::SetUp();
    }
};

} // namespace

TEST_F(NcuCounters, AnEvaluationCollectsTheCandidatesCountersAsCsvPages) {
    const fs::path ws = makeWorkspace("01_gelu", true);
    EvaluationOptions options;
    options.device = DeviceChoice::Cuda;
    options.checks = 2;
    options.iterations = 10;
    options.maxRounds = 3;
    options.stageTimeout = std::chrono::seconds(300);
    CounterCollection collection;
    collection.launchCount = 2;
    collection.reportFolder = (root_ / "counters").string();
    options.counters = collection;
    const EvaluationResult r = evaluateWorkspace(ws, options);
    ASSERT_TRUE(r.correct) << describe(r);
    bool collected = false;
    for (const auto& f : r.flags) {
        EXPECT_NE(f.code, "counters_unavailable") << f.reason;
        EXPECT_NE(f.code, "counters_failed") << f.reason;
        collected = collected || f.code == "counters_collected";
    }
    EXPECT_TRUE(collected) << describe(r);
    // Timings under the profiler are no speed-ups, and the reward says only "correct".
    EXPECT_EQ(r.speedupVsEager, 0.0);
    EXPECT_EQ(r.reward, 1) << describe(r);
    ASSERT_TRUE(fs::is_regular_file(r.countersReportPath)) << r.countersReportPath;
    EXPECT_EQ(fs::path(r.countersReportPath).parent_path(), fs::path(collection.reportFolder));

    std::string details, raw, error;
    ASSERT_TRUE(counters::readNcuFile(r.countersDetailsPath, &details, &error)) << error;
    ASSERT_TRUE(counters::readNcuFile(r.countersRawPath, &raw, &error)) << error;
    auto report = counters::parseNcuDetails(details, &error);
    ASSERT_TRUE(report) << error << "\n" << details.substr(0, 2000);
    ASSERT_TRUE(counters::addNcuRawPage(*report, raw, &error)) << error;
    ASSERT_FALSE(report->kernels.empty());
    EXPECT_LE(report->kernels.size(), 2u); // --launch-count 2
    // Only the candidate's timed calls are profiled (its NVTX range): the solution's own GELU
    // kernel, not the inputs' random fill or the baselines'.
    for (const auto& kernel : report->kernels) {
        std::cout << "[gpu] " << counters::kernelHeadName(kernel.kernelName) << "\n";
        EXPECT_NE(kernel.kernelName.find("gelu"), std::string::npos) << kernel.kernelName;
        EXPECT_FALSE(kernel.metrics.empty());
        EXPECT_FALSE(kernel.raw.empty());
    }
}
