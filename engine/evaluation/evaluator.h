#pragma once

#include "engine/evaluation/cpu_shares.h"
#include "engine/evaluation/evaluation_profile.h"
#include "engine/evaluation/evaluation_result.h"
#include "engine/evaluation/ncu_collection.h"
#include "engine/evaluation/reward_policy.h"

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <stop_token>
#include <string>

namespace kwb {

class GpuLanes;
class ReferenceDescriptions;
class WarmWorkerPool;

// What an evaluator shares with the other evaluations of its owner (the evaluation service):
// its warm workers and the GPUs' lanes. Null members: the process-wide warm-worker pool, and
// timed stages that do not wait for a lane. The lanes must outlive the pool's standby
// preparations, which hold them (WarmWorkerPool::standBy): declared before the pool, or the
// pool shut down first. With lanes but the process-wide pool, no standby preparation is made.
struct EvaluationResources {
    WarmWorkerPool* warmWorkers = nullptr;
    GpuLanes* gpuLanes = nullptr;
    // One lane for timed stages that run on the CPU: two of them at once would share the cores
    // and time each other.
    GpuLanes* cpuTimingLane = nullptr;
    // How the cores are shared (CpuShares): the owner's build slots (how many builds at once,
    // with how many jobs each) and how many of its evaluations run now. Without them (a
    // one-shot evaluation) a stage may use the whole machine.
    BuildSlots* buildSlots = nullptr;
    std::function<unsigned()> runningEvaluations;
    // The references' descriptions that earlier inspect stages made (ReferenceDescriptions): an
    // evaluation of a reference described before skips the reference's run on the device and
    // takes no GPU lane for inspect. Null: every inspect describes afresh.
    ReferenceDescriptions* referenceDescriptions = nullptr;
};

enum class DeviceChoice { Auto, Cpu, Cuda };
DeviceChoice deviceChoiceFrom(const std::string& text); // "auto" | "cpu" | "cuda"
std::string deviceChoiceName(DeviceChoice device);      // the inverse

// What to evaluate: a workspace folder, or a plain KernelBench pair (reference file plus a
// candidate file that builds its own extension with load_inline).
struct EvaluationTarget {
    std::string workspace;
    std::string referencePath;
    std::string candidatePath;

    static EvaluationTarget forWorkspace(const std::string& directory);
    static EvaluationTarget forPair(const std::string& reference, const std::string& candidate);
};

// The defaults are CUDA Agent's (EvaluationProfile::CudaAgent); applyEvaluationProfile sets
// another profile's.
struct EvaluationOptions {
    EvaluationProfile evaluationProfile = EvaluationProfile::CudaAgent; // recorded in the result
    // Some of the profile's values were changed (explicit options, the instant loop's quick
    // timing): the result says so, so that it is not taken for the profile's own rules.
    bool profileModified = false;
    DeviceChoice device = DeviceChoice::Auto;
    int checks = 5;
    double atol = 1e-2;
    double rtol = 1e-2;
    // Per output dtype ("float32" -> 1e-4): that value as both atol and rtol for outputs of the
    // dtype; outputs of other dtypes use atol and rtol.
    std::map<std::string, double> dtypeTolerances;
    bool profile = true;
    bool stopAfterCompile = false; // compile only (the agent's Compile tool): no verify, no reward
    bool refreshBaselines = false; // re-time eager and torch.compile even if cached
    // Whether a candidate a strict finding has already given reward -1 is still timed: someone
    // editing by hand wants to see how it performs. The rl profile turns it off: a rollout
    // spends no GPU time on a candidate whose reward no timing can change.
    bool profileFlagged = true;
    // On a GPU, whether the candidate's timed calls record its kernels through CUPTI, sealed for
    // the judge (the kernel census that catches work hidden from the timer). The recording costs
    // each launch a few microseconds that KernelBench's method does not pay: on kernels of
    // 50-80 us the candidate's time came out 2-8 % longer (H100, 2026-12-06). The kernelbench
    // profile, which must agree with KernelBench's timings, turns it off: its census then comes
    // from untimed calls in the candidate's process, as on a build without CUPTI (provisional).
    // KWB_KERNEL_CENSUS=off turns it off everywhere.
    bool sealedCensus = true;
    int warmup = 3;
    int iterations = 30;
    int rounds = 5;
    // Repeat-until-stable timing: more rounds (up to maxRounds, or timingBudget of timed
    // work) while the per-round medians of any variant vary by more than targetCv.
    double targetCv = 0.03;
    int maxRounds = 15;
    std::chrono::seconds timingBudget{20};
    bool l2Flush = true;
    // GPU time (a spin kernel) queued after the L2 flush, before each timed call's start event,
    // so that the host's way to the call's first kernel is not timed (timing/timers.py). The
    // candidate's confined process takes longer to get there than an in-process harness. 0: none.
    double headStartMicroseconds = 0.0;
    std::chrono::seconds stageTimeout{600};
    // What one stage's whole process tree may use (TreeBudget), watched from outside so it holds
    // without bubblewrap and for root. 0: the defaults (memory: 16 GiB, at most 3/4 of the
    // machine's; disk: 8 GiB, at most half of the free space when the stage starts).
    std::uint64_t memoryLimitBytes = 0;
    std::uint64_t diskLimitBytes = 0;
    // Run the Python stages in a warm worker (WarmWorkerPool: torch imported once, one forked
    // child per stage) instead of a fresh interpreter each. Also on when KWB_WARM_WORKER=1.
    bool warmWorker = false;
    // With the warm worker: once an evaluation is over, the worker forks standby children that
    // prepare the next inspect, verify and profile (CUDA context, task, reference outputs, input
    // pools) while the user edits; the next evaluation of the same workspace and settings then
    // only imports and runs the candidate. Under lanes (EvaluationResources) the preparation
    // holds its device's lane shared until it is made, and a stage of the same workspace that
    // comes meanwhile waits for it (its preparationWaitSeconds). KWB_WARM_STANDBY=0/1 overrides.
    bool standby = true;
    std::uint64_t seed = 0; // 0: a fresh random seed per evaluation
    // Record a CUPTI timeline of the profile stage (GPU only): the injection library writes
    // kwb-cupti/1 records into timelineRecordPath (empty: <build>/timelines/<time>.kwbtl.jsonl).
    // Baselines timed under the profiler run afresh and are not cached: it slows them.
    bool collectTimeline = false;
    std::string timelineRecordPath;
    // Collect hardware counters (GPU only): the profile stage runs under Nsight Compute
    // (ncu_collection.h), in a process of its own, and the result names the report and its CSV
    // pages. Its timings are the profiler's, so no speed-up is reported and none is cached.
    std::optional<CounterCollection> counters;
    RewardPolicy reward;
};

// Runs static checks -> compile -> verify -> profile -> reward, each untrusted step in a
// sandboxed child of the task Python, and returns one EvaluationResult. Never throws: every
// failure, including a missing Python, is a result with a reason. Safe to call from several
// threads at once (each call has its own scratch folder; caches are written atomically).
class Evaluator {
public:
    using Progress = std::function<void(const std::string& stage)>;

    explicit Evaluator(std::string pythonPath = {},
                       EvaluationResources resources = {}); // empty path: auto-detect
    EvaluationResult evaluate(const EvaluationTarget& target, const EvaluationOptions& options,
                              const Progress& progress = {}, std::stop_token stop = {}) const;

    // Times eager and torch.compile for a task alone (`kwb baseline`).
    EvaluationResult baseline(const std::string& taskPath, const EvaluationOptions& options) const;

    const std::string& python() const { return python_; }

private:
    // One evaluation, a stage result kwb cannot read included (a failed evaluation).
    EvaluationResult evaluateOnce(const EvaluationTarget& target, const EvaluationOptions& options,
                                  const Progress& progress, std::stop_token stop) const;
    EvaluationResult evaluateStages(const EvaluationTarget& target,
                                    const EvaluationOptions& options, const Progress& progress,
                                    std::stop_token stop) const;

    std::string python_;
    EvaluationResources resources_;
};

} // namespace kwb
