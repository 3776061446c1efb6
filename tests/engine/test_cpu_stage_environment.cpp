// What a CPU-mode stage's process is given besides its request: conditions that decide how its
// timings and its neighbours' come out.
#include "evaluation_fixture.h"

using namespace kwb;
using namespace kwb::test;

// Evaluations side by side each size their torch threads as if they had the machine; spinning
// OpenMP threads then take each other's cores (two bundled solutions evaluated together on two
// cores took seven times as long as one after the other). The candidate's output is right only
// where its process was started with sleeping OpenMP threads, so the verdict says which it was.
TEST_F(EvaluationTest, CpuStagesLetTorchThreadsSleepBetweenParallelRegions) {
    const fs::path ws = makePythonWorkspace(
        kTinyTask,
        tinyCandidate("        return x * self.weight * (self.factor if _sleeping else 3.0)",
                      "import os\n_sleeping = os.environ.get('OMP_WAIT_POLICY') == 'PASSIVE'\n"));
    EvaluationOptions options = cpuOptions();
    options.profile = false;
    const EvaluationResult r = evaluateWorkspace(ws, options);
    EXPECT_TRUE(r.correct) << describe(r);
    EXPECT_EQ(r.checksPassed, r.checksRun) << describe(r);
}
