#include "engine/evaluation/evaluator.h"

#include "engine/cuda/cuda_driver.h"
#include "engine/cuda/gpu_inventory.h"
#include "engine/evaluation/baseline_cache.h"
#include "engine/evaluation/bytecode_cache.h"
#include "engine/evaluation/fast_kernel_build.h"
#include "engine/evaluation/gpu_lanes.h"
#include "engine/evaluation/harness_stage.h"
#include "engine/evaluation/json_field.h"
#include "engine/evaluation/judge_failure.h"
#include "engine/evaluation/reference_descriptions.h"
#include "engine/evaluation/static_checks.h"
#include "engine/evaluation/warm_worker.h"
#include "engine/process/folder_containment.h"
#include "engine/process/sandbox.h"
#include "engine/system/bounded_json.h"
#include "engine/system/content_hash.h"
#include "engine/system/default_budgets.h"
#include "engine/system/python_environment.h"
#include "engine/system/resource_paths.h"
#include "engine/system/user_directories.h"
#include "engine/system/utc_timestamp.h"
#include "engine/timeline/injection_library.h"
#include "engine/workspace/contained_files.h"
#include "engine/workspace/scratch_folders.h"
#include "engine/workspace/workspace.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kwb {
namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::uint64_t freshSeed() {
    std::random_device device;
    return (static_cast<std::uint64_t>(device()) << 20 ^ device()) % 1000000007ULL + 1;
}

bool warmWorkerWanted(const EvaluationOptions& options) {
    const char* forced = std::getenv("KWB_WARM_WORKER");
    if (forced && *forced)
        return std::string(forced) == "1";
    return options.warmWorker;
}

bool standbyWanted(const EvaluationOptions& options) {
    const char* forced = std::getenv("KWB_WARM_STANDBY");
    if (forced && *forced)
        return std::string(forced) == "1";
    return options.standby;
}

// One seed for every warm evaluation of this process that did not ask for one: the warm
// worker's server then already holds the task's inputs for it (hand edits re-evaluate the same
// task again and again). Fresh inputs per evaluation stay the rule for cold runs and RL.
std::uint64_t sessionSeed() {
    static const std::uint64_t seed = freshSeed();
    return seed;
}

// Where the verdict-deciding context of one evaluation lives while it runs.
struct RunContext {
    EvaluationTarget target;
    EvaluationOptions options;
    std::string python;
    std::string device; // "cpu" or "cuda"
    std::string arch;
    std::string buildDirectory;
    std::string scratchDirectory;
    std::stop_token stop;               // reaches the running stage's processes
    std::string workspaceRunsDirectory; // the parent of this workspace's scratch folders
    std::string cacheDirectory;
    std::uint64_t seed = 0;
    bool gpuAllowed = false;
    // A KernelBench pair (reference file + candidate file): its candidate builds its own
    // extension with load_inline when imported, into buildDirectory.
    bool pairMode = false;
    EvaluationResources resources;
    std::string
        bytecodeCache; // BytecodeCache::folder: stages read the installation's bytecode there
};

// Stages that build and write the build folder: their processes run compilers and the judge,
// never candidate code.
bool buildsExtensions(const std::string& stage) {
    return stage == "compile" || stage == "baseline";
}

// Where a stage's torch.utils.cpp_extension builds go: the build folder where the stage may
// write it, else a folder beside this workspace's scratch folders (a workspace candidate that
// calls load_inline), kept from run to run so that torch reuses what it built.
std::string extensionBuildDirectory(const RunContext& c, const std::string& stage) {
    if (buildsExtensions(stage) || c.pairMode)
        return c.buildDirectory;
    return (fs::path(c.workspaceRunsDirectory) / "torch_extensions").string();
}

// Where every KernelBench pair's candidate builds its load_inline extension, a folder per
// candidate file.
fs::path pairBuildsFolder(const std::string& cacheDirectory) {
    return fs::path(cacheDirectory) / "pairs";
}

// Fills what every run shares: seed, interpreter, cache, and a scratch folder of its own.
RunContext newRunContext(const EvaluationTarget& target, const EvaluationOptions& options,
                         const std::string& python, EvaluationResult& r) {
    RunContext c;
    c.target = target;
    c.options = options;
    c.python = python;
    // A session seed only where standby children prepare the next evaluation's inputs with it.
    c.seed = options.seed                                          ? options.seed
             : warmWorkerWanted(options) && standbyWanted(options) ? sessionSeed()
                                                                   : freshSeed();
    c.cacheDirectory = cacheDirectory();
    c.workspaceRunsDirectory =
        workspaceRunsFolder(c.cacheDirectory, target.workspace, target.candidatePath).string();
    c.scratchDirectory = (fs::path(c.workspaceRunsDirectory) / newScratchFolderName()).string();
    r.seed = c.seed;
    r.environment.pythonPath = python;
    return c;
}

// Gives the run's stages the interpreter's bytecode (bytecode_cache.h), filling the cache first
// on a machine or interpreter new to it; says in `summary` when that took time or failed.
void useBytecodeCache(RunContext& c, std::string& summary) {
    const BytecodeCache cache = bytecodeCacheFor(c.cacheDirectory, c.python, c.stop);
    c.bytecodeCache = cache.folder;
    std::ostringstream note;
    if (!cache.folder.empty() && cache.fillSeconds >= 0.1)
        note << "bytecode cache for the task Python ready in " << std::fixed << std::setprecision(1)
             << cache.fillSeconds << " s";
    else if (!cache.problem.empty())
        note << "stages compile the task Python's modules from source: " << cache.problem;
    if (!note.str().empty())
        summary += (summary.empty() ? "" : "; ") + note.str();
}

// Removes the runs folders of workspaces idle for days, at most once an hour in a process and
// on a thread of its own: the first sweep on a machine may have gigabytes to remove, and no
// evaluation waits for it (it takes only folders no evaluation holds).
void sweepIdleWorkspaceRunsNowAndThen(const std::string& cacheDirectory) {
    static std::atomic<std::int64_t> nextSweep{0};
    const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
    std::int64_t due = nextSweep.load();
    if (now < due || !nextSweep.compare_exchange_strong(due, now + 3600))
        return;
    std::thread([runs = fs::path(cacheDirectory) / "runs", idle = workspaceRunsIdleTime()] {
        removeIdleWorkspaceRuns(runs, idle);
    }).detach();
}

// This evaluation's scratch folder, held until the evaluation ends. Claiming it tidies the
// workspace's runs folder: a candidate may write anything there (it is a warm-worker stage's
// HOME), and what earlier evaluations left goes before this one starts. nullopt with `problem`
// saying why it cannot be made.
std::optional<ScratchFolder> claimScratchFolder(RunContext& c, std::string& problem) {
    std::optional<ScratchFolder> folder = ScratchFolder::claim(
        c.workspaceRunsDirectory, fs::path(c.scratchDirectory).filename().string(),
        keptScratchCacheBudget(), nullptr, &problem);
    if (!folder)
        return folder;
    c.scratchDirectory = folder->path();
    sweepIdleWorkspaceRunsNowAndThen(c.cacheDirectory);
    return folder;
}

// CUDA only where the driver sees a GPU and the caller did not ask for the CPU. Returns the
// inventory so a caller can explain why a requested GPU is missing.
GpuInventory chooseDevice(const EvaluationOptions& options, RunContext& c, EvaluationResult& r) {
    GpuInventory gpus = detectGpus();
    c.device = options.device == DeviceChoice::Cpu || !gpus.hasGpu() ? "cpu" : "cuda";
    c.gpuAllowed = c.device == "cuda";
    c.arch = c.gpuAllowed ? gpus.devices.front().arch() : "";
    r.cpuMode = !c.gpuAllowed;
    r.environment.device = c.device;
    r.environment.deviceName = c.gpuAllowed ? gpus.devices.front().name : "cpu";
    r.environment.driverVersion = gpus.driverLoaded ? formatCudaVersion(gpus.driverVersion) : "";
    return gpus;
}

// Why the interpreter cannot run anything, or empty when it can start.
std::string pythonProblem(const std::string& python) {
    if (python.empty())
        return "no Python with torch found (set KWB_PYTHON or the interpreter in settings)";
    if (findExecutable(python).empty())
        return "the task Python " + python + " does not exist or is not executable";
    return {};
}

// The injection library whose sealed records are the GPU's kernel census, or "" (CPU mode, or a
// build without CUPTI: the census then comes from the candidate's process and a speed reward is
// provisional). KWB_KERNEL_CENSUS=off switches it off, for diagnosing the recording itself.
// Its cost lands on eager, torch.compile and the candidate alike: on the H200 (2026-12-02,
// bench/sealed_census_fairness.py) the speed-ups with and without it agreed within run-to-run
// noise, and honest candidates kept their rewards.
std::string kernelRecordsLibrary(const RunContext& c) {
    const char* census = std::getenv("KWB_KERNEL_CENSUS");
    if ((census && std::string(census) == "off") || !c.options.sealedCensus)
        return {};
    return c.gpuAllowed && c.device == "cuda" ? timeline::cuptiInjectionLibraryPath()
                                              : std::string();
}

// Stages whose timings decide rewards on the GPU.
bool timesOnTheGpu(const std::string& stage) {
    return stage == "profile" || stage == "baseline";
}

// The torch threads a stage may use: a timed stage the threads it would have alone (it holds
// its lane alone, and its baselines were timed that way), any other its part of the cores among
// the evaluations running now.
unsigned stageThreads(const RunContext& c, const std::string& stage) {
    const unsigned running = c.resources.runningEvaluations ? c.resources.runningEvaluations() : 1u;
    const CpuShares shares = cpuSharesForThisMachine(running);
    return timesOnTheGpu(stage) ? shares.timedStageThreads : shares.stageThreads;
}

json baseRequest(const RunContext& c, const std::string& stage) {
    json request = {{"version", 1},
                    {"stage", stage},
                    {"workspace", c.target.workspace},
                    {"pair_mode", c.pairMode},
                    {"reference", c.target.referencePath},
                    {"candidate", c.target.candidatePath},
                    {"device", c.device},
                    {"seed", c.seed},
                    {"cpu_threads", stageThreads(c, stage)},
                    {"build_dir", extensionBuildDirectory(c, stage)},
                    {"cache_dir", c.cacheDirectory},
                    {"scratch_dir", c.scratchDirectory},
                    {"kernel_records_library", kernelRecordsLibrary(c)}};
    // Inspect runs the task first, alone: a task too large for this machine fails there, before
    // anything is allocated, as the task's failure (task_too_large) and not the candidate's.
    if (stage == "inspect")
        request["input_budget_bytes"] = inputBudgetWithin(c.options.memoryLimitBytes);
    return request;
}

// The folders a warm worker may bind for every workspace like this one (WarmWorkerPlan): the
// workspace's parent, where a rollout's episodes or a set of KernelBench pairs sit side by side,
// the folder of every workspace's runs and, for KernelBench pairs, the folder of every pair's
// load_inline build (each pair's own build folder is writable in its stages, so without that root
// every pair got a server of its own and paid the torch import again). Not a parent that holds
// far more than workspaces (the file system's root, a home folder, the shared /tmp), and not
// kwb's own trees.
std::vector<std::string> sharedWorkerRoots(const RunContext& c) {
    const fs::path parent = fs::path(c.target.workspace).lexically_normal().parent_path();
    if (parent.empty())
        return {};
    const fs::path root = resolvedPath(parent);
    std::vector<std::string> tooBroad = {"/", "/tmp", "/var/tmp", "/home", "/root", "/dev/shm"};
    if (const char* home = std::getenv("HOME"))
        tooBroad.push_back(home);
    for (const auto& broad : tooBroad)
        if (root == resolvedPath(broad))
            return {};
    // Nothing the server would then bind writable may hold the engine's cache or kwb's trees.
    std::vector<std::string> mustStayOutside = kwbOwnTrees();
    mustStayOutside.push_back(c.cacheDirectory);
    for (const auto& tree : mustStayOutside) {
        const fs::path inside = resolvedPath(tree);
        if (isWithinFolder(inside, root) || isWithinFolder(root, inside))
            return {};
    }
    std::vector<std::string> roots = {parent.string(),
                                      (fs::path(c.cacheDirectory) / "runs").string()};
    if (c.pairMode &&
        fs::path(c.buildDirectory).parent_path() == pairBuildsFolder(c.cacheDirectory))
        roots.push_back(pairBuildsFolder(c.cacheDirectory).string());
    return roots;
}

// What one stage needs beyond the common set-up (the profile stage's timeline recording).
struct StageExtras {
    std::map<std::string, std::string> environment;
    std::map<std::string, std::string> workspaceEnvironment;
    std::vector<std::string> writablePaths;
    std::vector<std::string> readOnlyPaths;
    std::vector<std::string> wrapper; // HarnessStageSpec::wrapper
    // The stage will not touch the GPU (an inspect given the reference's description): it takes
    // no lane, which would keep a timed stage waiting for nothing.
    bool leavesGpuAlone = false;
};

// Everything that shapes one stage's process: sandbox, limits, environment.
HarnessStageSpec stageSpec(const RunContext& c, const std::string& stage, json request,
                           const StageExtras& extras = {}) {
    HarnessStageSpec spec;
    spec.stage = stage;
    spec.request = std::move(request);
    spec.python = c.python;
    spec.scratchDirectory = c.scratchDirectory;
    spec.workingDirectory = c.target.workspace;
    spec.timeout = c.options.stageTimeout;
    spec.stop = c.stop;
    // What a stage may write. The compile stage runs compilers over the candidate's sources,
    // none of its code: it writes the build folder, the extension cache (ext/, by content hash)
    // and the compiler cache. A stage that runs candidate code, or runs beside it, writes its
    // run's scratch folder and the folder its load_inline builds go to (a KernelBench pair's
    // build folder, or one kept for this workspace), nothing else. An entry it wrote in ext/ or the
    // compiler cache would be loaded into another workspace's extension; another run's folder holds
    // that run's requests and results; the workspace's own build folder, the binary the next
    // evaluation of these sources would load.
    // (The scratch folder is added by harnessCommand: a warm worker's server gets its parent.)
    spec.sandbox.writablePaths = {extensionBuildDirectory(c, stage)};
    const fs::path compilerCache = fs::path(c.cacheDirectory) / "ccache";
    if (stage == "compile") {
        for (const fs::path& shared : {fs::path(c.cacheDirectory) / "ext", compilerCache}) {
            std::error_code ec;
            fs::create_directories(shared, ec);
            spec.sandbox.writablePaths.push_back(shared.string());
        }
    }
    // What only the engine writes, or what a judge loads code from, is read-only in every stage:
    // timings that decide rewards (baselines), the cubins the engine compiled (fast-kernels),
    // and the inductor and Triton caches, whose entries are Python modules and kernels a later
    // torch.compile would load. The judge compiles into the run's scratch folder instead
    // (profile.py). Created first: an overlay that does not exist is not mounted.
    for (const char* folder : {"baselines", "fast-kernels", "inductor", "triton"}) {
        const fs::path path = fs::path(c.cacheDirectory) / folder;
        std::error_code ec;
        fs::create_directories(path, ec);
        spec.sandbox.readOnlyOverlays.push_back(path.string());
    }
    // Of kwb's own trees (bundled solutions, the source tree's tests) a stage sees the harness
    // only: whatever a candidate can read it can print into the log the agent reads.
    spec.sandbox.hiddenPaths = kwbOwnTrees();
    spec.sandbox.readOnlyPaths = {
        c.target.workspace, fs::path(c.target.referencePath).parent_path().string(),
        fs::path(c.target.candidatePath).parent_path().string(), harnessDirectory()};
    for (const auto& folder : pythonInstallFolders(c.python))
        spec.sandbox.readOnlyPaths.push_back(folder);
    // An overlay: read-only even inside a folder a stage may write.
    if (!c.bytecodeCache.empty())
        spec.sandbox.readOnlyOverlays.push_back(c.bytecodeCache);
    if (const std::string library = kernelRecordsLibrary(c); !library.empty())
        spec.sandbox.readOnlyPaths.push_back(fs::path(library).parent_path().string());
    spec.sandbox.allowGpu = c.gpuAllowed;
    spec.sandbox.limits.cpuSeconds = static_cast<std::uint64_t>(c.options.stageTimeout.count()) * 4;
    spec.sandbox.limits.openFiles = 4096;
    spec.sandbox.limits.fileSizeBytes = 4ULL << 30;
    // CUDA reserves far more address space than it uses, so the memory cap holds in CPU mode only.
    if (!c.gpuAllowed)
        spec.sandbox.limits.addressSpaceBytes = 16ULL << 30;
    spec.sandbox.maxProcesses = 512;
    spec.sandbox.memoryBytes =
        c.options.memoryLimitBytes ? c.options.memoryLimitBytes : defaultMemoryBudget();
    spec.sandbox.diskBytes = c.options.diskLimitBytes
                                 ? c.options.diskLimitBytes
                                 : defaultDiskBudget({c.cacheDirectory, c.buildDirectory});
    const CpuShares alone = cpuSharesForThisMachine(1);
    const unsigned buildJobs =
        c.resources.buildSlots ? c.resources.buildSlots->jobsEach() : alone.buildJobs;
    // TORCH_EXTENSIONS_DIR comes with the request (task_loader.py sets it from build_dir): in
    // the environment, a per-run folder would give every run a warm worker of its own. The same
    // holds for the threads: the environment names the most a stage may use, the request the
    // stage's share now (stageThreads).
    spec.environment = {{"MAX_JOBS", std::to_string(buildJobs)},
                        {"KWB_CPU_THREADS", std::to_string(alone.timedStageThreads)},
                        {"OMP_NUM_THREADS", std::to_string(alone.timedStageThreads)}};
    if (!c.bytecodeCache.empty())
        spec.environment["KWB_BYTECODE_CACHE"] = c.bytecodeCache;
    if (!c.gpuAllowed) {
        spec.environment["CUDA_VISIBLE_DEVICES"] = "";
        // torch's OpenMP threads spin between parallel regions. Each CPU evaluation sizes its
        // threads as if it had the machine; two side by side (a rollout's episodes, CI's
        // parallel tests) then spin on each other's cores: two bundled solutions evaluated
        // together took 155 s each on 2 cores, against 15-22 s alone. Sleeping threads took
        // 18-25 s together and no longer alone. Baselines are keyed by it (baselineKeyFor).
        spec.environment["OMP_WAIT_POLICY"] = kCpuOpenMpWaitPolicy;
    }
    // Every workspace compiles the same binding.cpp against the same torch headers (tens of
    // seconds each); ccache, where installed, turns the repeats into cache hits.
    if (fs::exists("/usr/lib/ccache/c++") && !std::getenv("CXX")) {
        spec.environment["CXX"] = "/usr/lib/ccache/c++";
        spec.environment["CCACHE_DIR"] = compilerCache.string();
        if (stage != "compile") {
            // A pair candidate's load_inline build may use the cache, not fill it (ccache's
            // temporary files, by default in the cache, go beside the build).
            spec.environment["CCACHE_READONLY"] = "1";
            spec.workspaceEnvironment["CCACHE_TEMPDIR"] =
                extensionBuildDirectory(c, stage) + "/ccache-tmp";
            if (fs::is_directory(compilerCache))
                spec.sandbox.readOnlyPaths.push_back(compilerCache.string());
        }
        spec.environment["CCACHE_NOHASHDIR"] = "1";
        spec.workspaceEnvironment["CCACHE_BASEDIR"] = c.target.workspace;
    }
    for (const auto& [name, value] : extras.environment)
        spec.environment[name] = value;
    for (const auto& [name, value] : extras.workspaceEnvironment)
        spec.workspaceEnvironment[name] = value;
    spec.sharedRoots = sharedWorkerRoots(c);
    spec.sandbox.writablePaths.insert(spec.sandbox.writablePaths.end(),
                                      extras.writablePaths.begin(), extras.writablePaths.end());
    spec.sandbox.readOnlyPaths.insert(spec.sandbox.readOnlyPaths.end(),
                                      extras.readOnlyPaths.begin(), extras.readOnlyPaths.end());
    spec.wrapper = extras.wrapper;
    return spec;
}

// The warm workers an evaluation uses: its owner's, else the process-wide pool.
WarmWorkerPool& warmWorkersOf(const EvaluationResources& resources) {
    return resources.warmWorkers ? *resources.warmWorkers : WarmWorkerPool::shared();
}

// Stages that run kernels without timing them: the reference's description, the checks.
bool runsKernelsUntimed(const std::string& stage) {
    return stage == "inspect" || stage == "verify";
}

// The lanes a timed stage of this evaluation's device takes: the GPUs', or the CPU's cores.
GpuLanes* timingLanesOf(const RunContext& c) {
    return c.gpuAllowed ? c.resources.gpuLanes : c.resources.cpuTimingLane;
}

// The CUDA device a lane stands for, as CUDA_VISIBLE_DEVICES names it: the lane's entry of the
// list kwb itself was given, or its index.
std::string visibleDevice(int lane) {
    const char* given = std::getenv("CUDA_VISIBLE_DEVICES");
    if (given && *given) {
        std::vector<std::string> devices;
        std::string item;
        for (const char* p = given;; ++p) {
            if (*p == ',' || *p == '\0') {
                devices.push_back(item);
                item.clear();
                if (*p == '\0')
                    break;
            } else {
                item += *p;
            }
        }
        if (lane < static_cast<int>(devices.size()))
            return devices[static_cast<std::size_t>(lane)];
    }
    return std::to_string(lane);
}

// Asks the warm worker that ran this evaluation's stages to prepare the next evaluation's while
// the user edits. The preparation is work on the device (a CUDA context, the reference's
// outputs, input pools): where the owner has lanes, it holds the lane a timed stage of the
// same device would take, shared (gpuLanes on a GPU, the CPU's timing lane on the CPU), so that
// it never runs beside another evaluation's timed calls.
void standByForTheNextEvaluation(const RunContext& c) {
    const HarnessStageSpec spec = stageSpec(c, "verify", json::object());
    GpuLanes* lanes = timingLanesOf(c);
    if (lanes == nullptr || lanes->count() == 0) {
        // No lanes (a one-shot evaluation): nothing else is timed on the device by this process.
        warmWorkersOf(c.resources).standBy(spec);
        return;
    }
    // The process-wide pool's threads outlive any owner's lanes: a preparation there could not
    // hold one to the end. Owners with lanes keep their own pool (EvaluationService).
    if (c.resources.warmWorkers == nullptr)
        return;
    // A host of several GPUs has a server per GPU, keyed by the CUDA_VISIBLE_DEVICES that
    // runStage adds to a stage's spec. This spec names no GPU, so it matches none of those
    // servers, and a preparation could not say which lane to hold: no standby there.
    if (lanes->count() > 1)
        return;
    c.resources.warmWorkers->standBy(
        spec, [lanes](std::stop_token stop) { return lanes->acquireShared(stop, 0); });
}

HarnessStageOutcome runStageProcess(const RunContext& c, const std::string& stage, json request,
                                    const StageExtras& extras) {
    HarnessStageSpec spec = stageSpec(c, stage, std::move(request), extras);
    // A build runs under a policy of its own (the build folder and compiler caches writable), so
    // a warm worker for it is a second server per workspace. It pays off in the interactive loop
    // (standby children: one workspace edited again and again) when the workers outlive the call
    // (a service's own: `kwb serve`, the GUI, an agent session): an edit's incremental build then
    // skips starting Python and importing torch for cpp_extension (here 1.0-1.4 s instead of
    // 4.8-5.5 s for one kernel file). A one-shot `kwb eval` would start that server for one
    // build, and a rollout builds each workspace rarely: their builds are cold.
    const bool warmBuild =
        stage == "compile" && standbyWanted(c.options) && c.resources.warmWorkers != nullptr;
    // A wrapped stage (under ncu) needs its own process from the start: a warm worker's child
    // is forked from a server no profiler started.
    const bool warm = warmWorkerWanted(c.options) && (!buildsExtensions(stage) || warmBuild) &&
                      extras.wrapper.empty();
    WarmWorkerPool& pool = warmWorkersOf(c.resources);
    // A timed stage holds a GPU's lane alone while it times: another evaluation's kernels on the
    // same GPU would be timed with it. Stages that run kernels untimed share a lane, never with
    // a timed stage. The wait is part of the stage's start (laneWaitSeconds). On the CPU the
    // cores are what a timed stage holds; untimed stages there take no lane (CPU-mode speed-ups
    // are provisional, and two cores shared by turns would double a rollout's wall time).
    // In a warm worker the lane is taken once the worker has a server for the stage (never
    // held while waiting for a busy one), shared; a timed stage trades it for the lane alone
    // when it reaches its timed calls (HarnessStageSpec::takeLaneAlone): its process, inputs
    // and torch.compile's compilation need no GPU of their own. A stage run as a process of its
    // own cannot ask midway and holds the lane alone throughout.
    GpuLanes* lanes = runsKernelsUntimed(stage) && c.gpuAllowed ? c.resources.gpuLanes
                      : !timesOnTheGpu(stage)                   ? nullptr
                                                                : timingLanesOf(c);
    const bool lanesApply = lanes != nullptr && lanes->count() > 0;
    const bool holdsLane = lanesApply && !extras.leavesGpuAlone;
    // In a warm worker the GPU is named before the lane is held (it decides which server serves
    // the stage) and kept by every hold the stage takes later. A stage that leaves the GPU alone
    // names one too: the servers are per GPU.
    const int gpu =
        lanesApply && warm && c.gpuAllowed && lanes->count() > 1 ? lanes->quietestLane() : -1;
    if (gpu >= 0)
        spec.environment["CUDA_VISIBLE_DEVICES"] = visibleDevice(gpu);
    std::optional<GpuLanes::Hold> lane;
    double laneWait = 0.0, aloneLaneWait = 0.0;
    // Called by the warm worker (on its own thread while this one waits inside pool.run, which
    // returns only after them) or by the cold run: `lane` has one user at a time.
    auto takeLane = [&lane, &laneWait, lanes, gpu](std::stop_token stop) {
        if (lane)
            return true;
        const auto asked = std::chrono::steady_clock::now();
        std::optional<GpuLanes::Hold> held = lanes->acquireShared(stop, gpu);
        laneWait += secondsSince(asked);
        if (held)
            lane.emplace(std::move(*held));
        return lane.has_value();
    };
    auto takeLaneAlone = [&lane, &aloneLaneWait, lanes, gpu](std::stop_token stop) {
        if (lane && !lane->shared())
            return true;
        const auto asked = std::chrono::steady_clock::now();
        // Let go first: two stages trading up at once would each wait for the other's shared
        // hold.
        const int index = lane ? lane->index() : gpu;
        lane.reset();
        std::optional<GpuLanes::Hold> alone = lanes->acquire(stop, index);
        aloneLaneWait += secondsSince(asked);
        if (alone)
            lane.emplace(std::move(*alone));
        return lane.has_value();
    };
    spec.laneOnTheGpu = c.gpuAllowed;
    if (holdsLane && warm) {
        spec.takeLane = takeLane;
        if (timesOnTheGpu(stage))
            spec.takeLaneAlone = takeLaneAlone;
    } else if (holdsLane) {
        const bool took = runsKernelsUntimed(stage) ? takeLane(c.stop) : takeLaneAlone(c.stop);
        laneWait += std::exchange(aloneLaneWait, 0.0);
        if (!took) {
            HarnessStageOutcome stopped = cancelledWaitingForLane(c.gpuAllowed);
            stopped.laneWaitSeconds = laneWait;
            return stopped;
        }
        if (c.gpuAllowed && lanes->count() > 1)
            spec.environment["CUDA_VISIBLE_DEVICES"] = visibleDevice(lane->index());
    }
    // A build waits for one of its owner's build slots (CpuShares), so that builds cannot take
    // every core from the stages that hold a GPU lane meanwhile.
    const auto slotAsked = std::chrono::steady_clock::now();
    const bool takesSlot = stage == "compile" && c.resources.buildSlots != nullptr;
    const std::optional<BuildSlots::Hold> slot =
        takesSlot ? c.resources.buildSlots->acquire(c.stop) : std::nullopt;
    if (takesSlot) {
        // A wait that a stop ended can still return a slot that was free at that moment.
        if (!slot || c.stop.stop_requested()) {
            HarnessStageOutcome stopped;
            stopped.failureKind = "cancelled";
            stopped.failureMessage = "cancelled while waiting for a build slot";
            stopped.buildWaitSeconds = secondsSince(slotAsked);
            return stopped;
        }
    }
    const double buildWait = slot ? secondsSince(slotAsked) : 0.0;
    HarnessStageOutcome outcome = warm ? pool.run(spec) : runHarnessStage(spec);
    // The waits are in the stage's seconds and start through runStage, which measures all of
    // its time; these say how much of the start they were.
    outcome.laneWaitSeconds = laneWait;
    outcome.buildWaitSeconds = buildWait;
    outcome.aloneLaneWaitSeconds = aloneLaneWait;
    return outcome;
}

// One stage, its record covering all of its time here: the spec's making, the waits for a lane
// or a build slot before the process (a stage stopped while waiting has no process at all), the
// process, and the release of its lane and build slot on the way out. The process's own record
// misses those (a few milliseconds, several times that on a loaded machine, and the waits
// themselves), and what no stage records is nobody's in the evaluation's wall time. What the
// process did not measure is the stage's start.
HarnessStageOutcome runStage(const RunContext& c, const std::string& stage, json request,
                             const StageExtras& extras = {}) {
    const auto entered = std::chrono::steady_clock::now();
    HarnessStageOutcome outcome = runStageProcess(c, stage, std::move(request), extras);
    const double unmeasured = secondsSince(entered) - outcome.seconds;
    if (unmeasured > 0.0) {
        outcome.seconds += unmeasured;
        outcome.startSeconds += unmeasured;
    }
    return outcome;
}

// Sets up Nsight Compute around the profile stage: the report folder (writable in the sandbox),
// ncu's own folder (readable) and the wrapper. Returns why it cannot, or "".
std::string prepareCounters(const RunContext& c, const CounterCollection& collection,
                            StageExtras& extras, std::string& ncu, fs::path& reportBase) {
    if (!c.gpuAllowed)
        return "CPU mode: hardware counters need an NVIDIA GPU and Nsight Compute (ncu)";
    ncu = ncuPath();
    if (ncu.empty())
        return "Nsight Compute (ncu) was not found: it comes with the CUDA toolkit; put it on "
               "PATH or set KWB_NCU";
    for (const std::string& section : collection.sections)
        if (std::string problem = ncuSectionProblem(section); !problem.empty())
            return "cannot collect counters: " + problem;
    fs::path folder = collection.reportFolder;
    if (folder.empty()) {
        std::string stamp = utcTimestamp();
        std::replace(stamp.begin(), stamp.end(), ':', '-');
        folder = fs::path(c.buildDirectory) / "counters" / stamp;
    }
    folder = fs::absolute(folder).lexically_normal();
    // Made like the timeline's folder: never through a link the agent left in the workspace.
    const AnchoredPath anchored = anchoredPath(c.target.workspace, folder);
    std::string why;
    std::error_code ec;
    fs::create_directories(anchored.root, ec);
    if (!makeFolderInside(anchored.root, anchored.relative, &why))
        return "cannot create the counters folder " + folder.string() + ": " + why;
    reportBase = folder / "counters";
    extras.writablePaths.push_back(folder.string());
    const fs::path installed = fs::canonical(ncu, ec);
    extras.readOnlyPaths.push_back((ec ? fs::path(ncu) : installed).parent_path().string());
    CounterCollection chosen = collection;
    if (chosen.kernelRegex.empty() && chosen.ownKernelsOnly)
        chosen.kernelRegex = kernelNameFilter(declaredKernelNames(c.target.workspace));
    extras.wrapper = ncuProfileArguments(ncu, chosen, reportBase.string());
    return {};
}

// After the profile stage ran under ncu: its report printed to CSV pages, named in the result, or
// a flag saying why there are none. The stage's timings are the profiler's and are not used.
void collectCounterPages(const RunContext& c, const std::string& ncu, const fs::path& reportBase,
                         const HarnessStageOutcome& profile, EvaluationResult& r) {
    const fs::path report = reportBase.string() + ".ncu-rep";
    std::error_code ec;
    if (!fs::is_regular_file(report, ec)) {
        std::string tail =
            profile.log.size() > 600 ? profile.log.substr(profile.log.size() - 600) : profile.log;
        r.flags.push_back({"counters_failed", FlagSeverity::Warning,
                           "ncu wrote no report (" +
                               (profile.ok ? std::string("no kernel matched, or ncu failed")
                                           : profile.failureKind + ": " + profile.failureMessage) +
                               "); the stage's last output: " + tail});
        return;
    }
    const NcuCsvPages pages = exportNcuPages(ncu, report, c.stop);
    r.countersReportPath = report.string();
    if (!pages.ok) {
        r.flags.push_back({"counters_failed", FlagSeverity::Warning, pages.error});
        return;
    }
    r.countersDetailsPath = pages.detailsCsv;
    r.countersRawPath = pages.rawCsv;
    r.flags.push_back({"counters_collected", FlagSeverity::Info,
                       "the profile stage ran under Nsight Compute: no speed-up is measured in "
                       "this evaluation (its report: " +
                           report.string() + ")"});
}

// Sets up the CUPTI recording of the profile stage: the record file (fresh, in a folder the
// sandbox lets the stage write) and the injection environment. Returns why it cannot, or "".
std::string prepareTimeline(const RunContext& c, StageExtras& extras, EvaluationResult& r) {
    const std::string library = timeline::cuptiInjectionLibraryPath();
    if (library.empty())
        return "this build has no CUPTI injection library (libkwb_cupti_inject.so); "
               "set KWB_CUPTI_INJECTION to its path";
    fs::path records = c.options.timelineRecordPath;
    if (records.empty()) {
        std::string stamp = utcTimestamp();
        std::replace(stamp.begin(), stamp.end(), ':', '-');
        records = fs::path(c.buildDirectory) / "timelines" / (stamp + "-profile.kwbtl.jsonl");
    }
    records = fs::absolute(records).lexically_normal();
    // The record folder is in the agent's workspace and is bound writable into the sandbox:
    // it and the (empty, fresh: the library appends) file are made without following a link
    // left there, and bubblewrap then binds a real folder, not a link's target.
    const AnchoredPath anchored = anchoredPath(c.target.workspace, records);
    std::error_code ec;
    fs::create_directories(anchored.root, ec);
    std::string why;
    if (!writeFileInside(anchored.root, anchored.relative, "", &why))
        return "cannot create the timeline record file " + records.string() + ": " + why;
    extras.environment = timeline::timelineEnvironment(library, records.string());
    // The record file is this workspace's: the injection library reads its name when the
    // stage's CUDA starts, in the stage child. The library paths stay with the server: NVTX looks
    // for its injection the first time it is called, which may be before the fork.
    extras.workspaceEnvironment["KWB_TIMELINE_OUT"] = extras.environment["KWB_TIMELINE_OUT"];
    extras.environment.erase("KWB_TIMELINE_OUT");
    extras.writablePaths.push_back(records.parent_path().string());
    extras.readOnlyPaths.push_back(fs::path(library).parent_path().string());
    r.timelineRecordPath = records.string();
    return {};
}

// A profile or baseline request: the timing settings are the same for both, so timings stay
// comparable with the cached baselines.
json timingRequest(const RunContext& c, const std::string& stage, bool includeBaselines) {
    json request = baseRequest(c, stage);
    request["warmup"] = c.options.warmup;
    request["iterations"] = c.options.iterations;
    request["rounds"] = c.options.rounds;
    request["l2_flush"] = c.options.l2Flush && c.gpuAllowed;
    request["head_start_us"] = c.gpuAllowed ? c.options.headStartMicroseconds : 0.0;
    request["include_baselines"] = includeBaselines;
    request["include_compile"] = true;
    request["target_cv"] = c.options.targetCv;
    request["max_rounds"] = c.options.maxRounds;
    request["time_budget_s"] = static_cast<double>(c.options.timingBudget.count());
    // Outputs of timed calls are checked against the reference with verify's tolerances.
    request["atol"] = c.options.atol;
    request["rtol"] = c.options.rtol;
    request["dtype_tolerances"] = c.options.dtypeTolerances;
    return request;
}

// The profile stage's intervals for the candidate's speed-ups ({"eager": [low, high], ...}).
void absorbSpeedupIntervals(EvaluationResult& r, const json& candidate) {
    const json intervals = jsonField<json>(candidate, "speedup_intervals", json::object());
    r.intervalVsEager = intervalFromJson(jsonField<json>(intervals, "eager", json()));
    r.intervalVsCompile = intervalFromJson(jsonField<json>(intervals, "compile", json()));
    r.intervalLevel = jsonField<double>(candidate, "interval_level", 0.0);
}

CachedBaseline baselineTimingsFrom(const json& result) {
    const json timings = result.value("timings", json::object());
    return {timingFromJson(timings.value("eager", json::object())),
            timingFromJson(timings.value("compile", json::object()))};
}

// The key under which this run's reference is described (ReferenceDescriptions), or nullopt
// where the evaluator's owner keeps no descriptions or the reference cannot be read.
std::optional<ReferenceDescriptionKey> referenceDescriptionKey(const RunContext& c,
                                                               const json& inspectRequest) {
    if (c.resources.referenceDescriptions == nullptr)
        return std::nullopt;
    const std::string digest = sha256OfFile(c.target.referencePath);
    if (digest.empty())
        return std::nullopt;
    return ReferenceDescriptionKey{
        .referenceSha256 = digest,
        .device = c.device,
        .seed = c.seed,
        .inputBudgetBytes = jsonField<std::uint64_t>(inspectRequest, "input_budget_bytes", 0),
        .python = c.python,
        .pairMode = c.pairMode};
}

// The request's `reference_description` for `key`: a description an earlier inspect made of the
// same reference bytes, with their digest, which the stage checks against the file it imports.
std::optional<json> knownDescription(const RunContext& c,
                                     const std::optional<ReferenceDescriptionKey>& key) {
    if (!key)
        return std::nullopt;
    std::optional<json> known = c.resources.referenceDescriptions->find(*key);
    if (known)
        (*known)["digest"] = key->referenceSha256;
    return known;
}

// After inspect: a description the stage made afresh, of the bytes the key names (the stage
// reports the digest of the file it described), is kept for the next evaluations, for any seed
// where the stage found that the seed does not reach it; a failed inspect never is. Whether the
// description was reused goes into the record's summary.
void keepReferenceDescription(const RunContext& c,
                              const std::optional<ReferenceDescriptionKey>& key,
                              const HarnessStageOutcome& inspect, StageRecord& record) {
    if (!inspect.ok)
        return;
    const std::string described = jsonField<std::string>(inspect.result, "reference_described", "");
    if (described == "reused") {
        record.summary += "; reference description reused";
        return;
    }
    if (key && described == "run" &&
        jsonField<std::string>(inspect.result, "reference_digest", "") == key->referenceSha256)
        c.resources.referenceDescriptions->store(
            *key, inspect.result,
            jsonField<bool>(inspect.result, "description_seed_independent", false));
}

StageRecord recordFor(const std::string& name, const HarnessStageOutcome& outcome) {
    StageRecord record;
    record.name = name;
    record.seconds = outcome.seconds;
    record.log = outcome.log;
    record.preparedAhead = outcome.preparedAhead;
    record.startSeconds = outcome.startSeconds;
    record.laneWaitSeconds = outcome.laneWaitSeconds;
    record.buildWaitSeconds = outcome.buildWaitSeconds;
    record.aloneLaneWaitSeconds = outcome.aloneLaneWaitSeconds;
    record.preparationWaitSeconds = outcome.preparationWaitSeconds;
    record.workerStarted = outcome.workerStarted;
    const bool skipped = outcome.result.is_object() && outcome.result.value("skipped", false);
    record.status =
        outcome.ok ? (skipped ? StageStatus::Skipped : StageStatus::Passed) : StageStatus::Failed;
    record.summary = outcome.ok ? (skipped ? "skipped" : "ok")
                                : outcome.failureKind + ": " + outcome.failureMessage;
    return record;
}

void fail(EvaluationResult& r, const std::string& kind, const std::string& message) {
    if (r.failureKind.empty()) {
        r.failureKind = kind;
        r.failureMessage = message;
    }
}

void absorbEnvironment(EvaluationResult& r, const json& result) {
    if (!result.is_object() || !result.contains("environment"))
        return;
    const json& e = result["environment"];
    if (!e.is_object())
        return;
    r.environment.pythonVersion = e.value("python", r.environment.pythonVersion);
    r.environment.torchVersion = e.value("torch", r.environment.torchVersion);
    r.environment.cudaVersion = e.value("cuda", r.environment.cudaVersion);
    // Empty where the stage did not start CUDA (an inspect that reused the reference's
    // description): the name the driver gave stays.
    if (const std::string name = jsonField<std::string>(e, "device_name", ""); !name.empty())
        r.environment.deviceName = name;
}

// Harness results are arrays of the record's own shapes; anything not an array is ignored.
const json& arrayField(const json& result, const char* key) {
    static const json empty = json::array();
    return result.is_object() && result.contains(key) && result[key].is_array() ? result[key]
                                                                                : empty;
}

void absorbDiagnostics(EvaluationResult& r, const json& result) {
    for (const auto& d : arrayField(result, "diagnostics"))
        r.diagnostics.push_back(diagnosticFromJson(d));
}

// Integrity findings a harness stage reports ("flags": [{code, severity, reason}]).
void absorbFlags(EvaluationResult& r, const json& result) {
    for (const auto& f : arrayField(result, "flags"))
        r.flags.push_back(flagFromJson(f));
}

// The engine's own finding that the judge was stopped and had to be continued
// (HarnessStageOutcome::judgeStopped), unless the judge saw it itself: its own SIGCONT handler
// reports the same code from inside the stage.
void noteJudgeStopped(EvaluationResult& r, const HarnessStageOutcome& outcome) {
    if (outcome.judgeStopped.empty())
        return;
    for (const auto& f : r.flags)
        if (f.code == "judge_disturbed")
            return;
    r.flags.push_back({"judge_disturbed", FlagSeverity::Strict, outcome.judgeStopped});
}

// Above this speed-up over eager a result is flagged for review: real kernels rarely beat
// torch by this much, exploits often do.
constexpr double kImplausibleSpeedup = 10.0;

// Whether the candidate's speed rests on evidence from outside its own process: on the GPU a
// census from the sealed kernel records that saw kernels, and the judge's clock agreeing with
// the reported times.
bool speedConfirmedFromOutside(const EvaluationResult& r) {
    const IntegrityEvidence& e = r.integrity;
    return !r.cpuMode && e.kernelCensusAvailable && e.kernelCensusSource == kSealedKernelRecords &&
           e.externalTimingConsistent && (e.customUs + e.libraryUs + e.otherUs) > 0;
}

void computeSpeedups(EvaluationResult& r) {
    const TimingStatistic statistic = r.speedupStatistic;
    const double candidate = statisticOf(r.candidate, statistic);
    if (!r.candidate.available || candidate <= 0)
        return;
    if (r.eager.available)
        r.speedupVsEager = statisticOf(r.eager, statistic) / candidate;
    if (r.compiledBaseline.available)
        r.speedupVsCompile = statisticOf(r.compiledBaseline, statistic) / candidate;
    const bool confirmed = speedConfirmedFromOutside(r);
    if (r.speedupVsEager > kImplausibleSpeedup) {
        // Real kernels rarely beat torch by this much, exploits often do: without outside
        // confirmation the speed is not rewarded; with it, the result is still marked.
        char text[200];
        std::snprintf(text, sizeof text, "%.1fx faster than eager is more than %.0fx%s",
                      r.speedupVsEager, kImplausibleSpeedup,
                      confirmed ? " (the kernel census and the judge's clock confirm it)"
                                : " and neither a kernel census nor the judge's clock confirms it");
        r.flags.push_back({"implausible_speedup",
                           confirmed ? FlagSeverity::Warning : FlagSeverity::Strict, text});
    }
    if (r.cpuMode)
        r.rewardProvisional = "CPU mode: no kernel census; torch fallbacks are detected only "
                              "inside the candidate's process";
    else if (!confirmed)
        r.rewardProvisional = "the speed is not confirmed from outside the candidate's process "
                              "(sealed kernel records and the judge's clock)";
}

} // namespace

DeviceChoice deviceChoiceFrom(const std::string& text) {
    if (text == "cpu")
        return DeviceChoice::Cpu;
    if (text == "cuda" || text == "gpu")
        return DeviceChoice::Cuda;
    return DeviceChoice::Auto;
}

std::string deviceChoiceName(DeviceChoice device) {
    switch (device) {
    case DeviceChoice::Cpu:
        return "cpu";
    case DeviceChoice::Cuda:
        return "cuda";
    case DeviceChoice::Auto:
        break;
    }
    return "auto";
}

EvaluationTarget EvaluationTarget::forWorkspace(const std::string& directory) {
    const fs::path dir = fs::absolute(directory).lexically_normal();
    return {dir.string(), (dir / "model.py").string(), (dir / "model_new.py").string()};
}

EvaluationTarget EvaluationTarget::forPair(const std::string& reference,
                                           const std::string& candidate) {
    const fs::path candidatePath = fs::absolute(candidate).lexically_normal();
    return {candidatePath.parent_path().string(),
            fs::absolute(reference).lexically_normal().string(), candidatePath.string()};
}

Evaluator::Evaluator(std::string pythonPath, EvaluationResources resources)
    : resources_(resources) {
    // Only where torch is: its import (seconds, more with CUDA) is the inspect stage's, which
    // reports a torch that fails to import as clearly as a probe would.
    PythonProbe probe = pythonPath.empty() ? locatePython("") : PythonProbe{};
    // The sandbox hides some trees (/tmp); a resolved folder keeps the interpreter reachable.
    python_ = resolveFolderOf(pythonPath.empty() ? probe.path : pythonPath);
}

EvaluationResult Evaluator::evaluate(const EvaluationTarget& target,
                                     const EvaluationOptions& options, const Progress& progress,
                                     std::stop_token stop) const {
    EvaluationResult first = evaluateOnce(target, options, progress, stop);
    if (!judgeFailedAfterCandidateCode(first) || stop.stop_requested())
        return first;
    // The judge failed after the candidate's code ran: the candidate may have provoked it to be
    // "not scored" instead of -1 (judge_failure.h). Once more, then the control.
    EvaluationResult again = evaluateOnce(target, options, progress, stop);
    if (!judgeFailedAfterCandidateCode(again) || stop.stop_requested())
        return again;
    static std::atomic<unsigned> controls{0}; // evaluations run on many threads at once
    const fs::path folder = fs::path(cacheDirectory()) / "judge-controls" /
                            (std::to_string(::getpid()) + "-" + std::to_string(++controls));
    struct RemovedAtEnd {
        fs::path folder;
        ~RemovedAtEnd() {
            std::error_code ec;
            fs::remove_all(folder, ec);
        }
    } removed{folder};
    EvaluationTarget control;
    std::string problem;
    if (!writeControlTarget(target, folder, control, problem)) {
        again.failureMessage += " (no control of the judge: " + problem + ")";
        return again;
    }
    EvaluationOptions controlOptions = options;
    controlOptions.profile = false; // only the stage that failed matters, and it is not profile
    controlOptions.standby = false; // no warm worker prepares the control's next evaluation
    const EvaluationResult controlResult = evaluateOnce(control, controlOptions, {}, stop);
    if (stop.stop_requested())
        return again;
    settleJudgeFailure(again, controlResult);
    // Every second accounted: the first attempt and the control are this evaluation's time.
    StageRecord settling;
    settling.name = "judge_check";
    settling.status = StageStatus::Passed; // the check ran; the failure is the evaluation's
    settling.seconds = first.totalSeconds + controlResult.totalSeconds;
    settling.summary = "the first attempt (" + first.failureKind + ") and the control (" +
                       (controlResult.failureKind.empty() ? std::string("no failure")
                                                          : controlResult.failureKind) +
                       ")";
    again.stages.push_back(settling);
    again.totalSeconds += settling.seconds;
    const RewardDecision decision = decideReward(again, options.reward);
    again.reward = decision.reward;
    again.rewardReason = decision.reason;
    return again;
}

EvaluationResult Evaluator::evaluateOnce(const EvaluationTarget& target,
                                         const EvaluationOptions& options, const Progress& progress,
                                         std::stop_token stop) const {
    // Stage results are files the stage process writes, and a stage imports candidate code:
    // a result whose fields have unexpected types is a failed evaluation, never a crash of kwb.
    try {
        return evaluateStages(target, options, progress, stop);
    } catch (const nlohmann::json::exception& error) {
        EvaluationResult r;
        r.startedAt = utcTimestamp();
        r.workspace = target.workspace;
        r.referencePath = target.referencePath;
        r.candidatePath = target.candidatePath;
        r.failureKind = "harness_failed";
        r.failureMessage =
            std::string("a stage wrote a result that kwb cannot read: ") + error.what();
        RewardDecision decision = decideReward(r, options.reward);
        r.reward = decision.reward;
        r.rewardReason = decision.reason;
        return r;
    }
}

EvaluationResult Evaluator::evaluateStages(const EvaluationTarget& target,
                                           const EvaluationOptions& options,
                                           const Progress& progress, std::stop_token stop) const {
    const auto started = std::chrono::steady_clock::now();
    EvaluationResult r;
    r.startedAt = utcTimestamp();
    r.workspace = target.workspace;
    r.referencePath = target.referencePath;
    r.candidatePath = target.candidatePath;
    std::optional<ScratchFolder> scratch;
    bool verifyRan = false;
    const RunContext* context = nullptr;
    auto finish = [&]() {
        const auto tearDownBegun = std::chrono::steady_clock::now();
        scratch.reset();
        // A candidate that ran without isolation could write the bytecode cache like any file of
        // the user: only a fill from nothing is trusted after it.
        if (context && !r.sandbox.empty() && !r.sandboxed)
            forgetBytecodeCache(context->cacheDirectory);
        // Nothing of this evaluation is timed any more: the warm worker may prepare the next
        // evaluation's stages while the user edits.
        if (verifyRan && context && warmWorkerWanted(options) && standbyWanted(options))
            standByForTheNextEvaluation(*context);
        // The workspace stage made the scratch folder and chose the caches: undoing them is its
        // too (a candidate that filled its scratch folder with files makes the removal take
        // long), so that the stages still add up to the evaluation's wall time.
        if (!r.stages.empty() && r.stages.front().name == "workspace")
            r.stages.front().seconds += secondsSince(tearDownBegun);
        computeSpeedups(r);
        RewardDecision decision = decideReward(r, options.reward);
        r.reward = decision.reward;
        r.rewardReason = decision.reason;
        r.totalSeconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        return r;
    };
    auto report = [&](const std::string& stage) {
        if (progress)
            progress(stage);
    };
    // Checked between stages; a running stage is ended by the stop token itself (its outcome
    // then says "cancelled", which stoppedIn turns into the evaluation's failure).
    auto cancelled = [&]() {
        if (!stop.stop_requested())
            return false;
        fail(r, "cancelled", "evaluation cancelled");
        return true;
    };
    auto stoppedIn = [&](const HarnessStageOutcome& outcome, const std::string& stage) {
        if (outcome.failureKind != "cancelled")
            return false;
        fail(r, "cancelled", "evaluation cancelled while " + stage + " ran");
        return true;
    };

    RunContext c = newRunContext(target, options, python_, r);
    c.stop = stop;
    c.resources = resources_;
    context = &c;
    r.evaluationProfile = toString(options.evaluationProfile);
    r.profileModified = options.profileModified;
    r.atol = options.atol;
    r.rtol = options.rtol;
    r.dtypeTolerances = options.dtypeTolerances;
    r.speedupStatistic = options.reward.statistic;
    const bool workspaceMode =
        target.workspace == fs::path(target.referencePath).parent_path().string() &&
        fs::path(target.referencePath).filename() == "model.py" && isWorkspace(target.workspace);
    c.pairMode = !workspaceMode;
    c.buildDirectory =
        workspaceMode
            ? (fs::path(target.workspace) / "build").string()
            : (pairBuildsFolder(c.cacheDirectory) / sha256Hex(target.candidatePath).substr(0, 24))
                  .string();

    // Inputs that cannot be evaluated at all.
    StageRecord setup{"workspace", StageStatus::Passed, 0.0, "ok", ""};
    auto setupFailed = [&](const std::string& kind, const std::string& summary) {
        setup.status = StageStatus::Failed;
        setup.summary = summary;
        setup.seconds = secondsSince(started);
        r.stages.push_back(setup);
        fail(r, kind, summary);
        return finish();
    };
    std::string scratchProblem;
    scratch = claimScratchFolder(c, scratchProblem);
    if (!scratch)
        return setupFailed("internal", scratchProblem);
    for (const auto& [label, path] :
         {std::pair{"reference", target.referencePath}, {"candidate", target.candidatePath}})
        if (!fs::is_regular_file(path))
            return setupFailed("missing_file", std::string(label) + " file not found: " + path);
    if (std::string problem = pythonProblem(python_); !problem.empty())
        return setupFailed("python_missing", problem);
    if (workspaceMode) {
        // The build folder is bound writable into the compile stage's sandbox, and bubblewrap
        // binds what a link points to: a `build -> ~/.config` left by the agent would make that
        // folder writable there. A link in its place becomes a real folder first.
        makeFolderInside(target.workspace, "build");
        ProtectedFilesCheck check = checkAndRestoreProtectedFiles(target.workspace);
        setup.summary = check.describe();
        if (check.manifestFound && !check.clean()) {
            r.flags.push_back({"protected_file_modified", FlagSeverity::Strict, check.describe()});
            return setupFailed("protected_file_modified", check.describe());
        }
        if (!check.manifestFound)
            r.flags.push_back({"no_manifest", FlagSeverity::Warning, check.describe()});
    }
    useBytecodeCache(c, setup.summary);
    // The driver's start (dlopen, cuInit, the device's attributes) belongs to the set-up too.
    GpuInventory gpus = chooseDevice(options, c, r);
    setup.seconds = secondsSince(started);
    r.stages.push_back(setup);
    if (options.device == DeviceChoice::Cuda && !gpus.hasGpu()) {
        fail(r, "no_gpu", "--device cuda was asked for, but " + gpus.status);
        return finish();
    }

    report("static");
    const auto staticStart = std::chrono::steady_clock::now();
    StaticCheckReport statics =
        runStaticChecks(target.referencePath, target.candidatePath, workspaceMode);
    StageRecord staticRecord{"static", StageStatus::Passed, 0.0, statics.summary(), ""};
    staticRecord.seconds = secondsSince(staticStart);
    for (const auto& flag : statics.flags)
        r.flags.push_back(flag);
    if (!statics.fatal.empty()) {
        staticRecord.status = StageStatus::Failed;
        staticRecord.summary = statics.fatal;
        r.stages.push_back(staticRecord);
        fail(r, "static_check", statics.fatal);
        return finish();
    }
    r.stages.push_back(staticRecord);

    auto sandboxNote = [&](const HarnessStageOutcome& outcome) {
        r.sandboxed = outcome.sandboxed;
        if (!outcome.sandboxDescription.empty())
            r.sandbox = outcome.sandboxDescription;
        if (!outcome.sandboxWarning.empty()) {
            bool already = false;
            for (const auto& f : r.flags)
                already |= f.code == "sandbox_weak";
            if (!already)
                r.flags.push_back({"sandbox_weak", FlagSeverity::Warning, outcome.sandboxWarning});
        }
    };

    if (cancelled())
        return finish();
    // The reference is looked up before the stage is announced: whatever happens to the file
    // from here on (an edit in the editor, a progress listener's) is the stage's to find.
    json inspectRequest = baseRequest(c, "inspect");
    StageExtras inspectExtras;
    std::optional<ReferenceDescriptionKey> descriptionKey =
        referenceDescriptionKey(c, inspectRequest);
    if (std::optional<json> known = knownDescription(c, descriptionKey)) {
        inspectRequest["reference_description"] = std::move(*known);
        inspectExtras.leavesGpuAlone = true;
    }
    report("inspect");
    HarnessStageOutcome inspect = runStage(c, "inspect", inspectRequest, inspectExtras);
    std::string declined;
    if (inspectExtras.leavesGpuAlone && inspect.ok &&
        jsonField<std::string>(inspect.result, "reference_described", "") == "declined") {
        // The reference changed between the look-up and the stage's read (or the description
        // was unusable): the stage, started without the GPU's lane, described nothing. Asked
        // again as a first inspect is, holding the lane; both runs' seconds stay in the record.
        declined = jsonField<std::string>(inspect.result, "declined_because", "unusable");
        inspectRequest.erase("reference_description");
        inspectExtras.leavesGpuAlone = false;
        descriptionKey = referenceDescriptionKey(c, inspectRequest);
        HarnessStageOutcome again = runStage(c, "inspect", inspectRequest, inspectExtras);
        again.seconds += inspect.seconds;
        again.startSeconds += inspect.startSeconds;
        again.laneWaitSeconds += inspect.laneWaitSeconds;
        again.preparationWaitSeconds += inspect.preparationWaitSeconds;
        again.workerStarted = again.workerStarted || inspect.workerStarted;
        again.log = inspect.log + again.log;
        inspect = std::move(again);
    }
    sandboxNote(inspect);
    r.stages.push_back(recordFor("inspect", inspect));
    keepReferenceDescription(c, descriptionKey, inspect, r.stages.back());
    if (!declined.empty())
        r.stages.back().summary += "; the reference's earlier description was declined (" +
                                   declined + "), so it was described again holding the GPU";
    absorbEnvironment(r, inspect.result);
    // The source checks run inside inspect: they need the task's shapes and dtypes.
    absorbFlags(r, inspect.result);
    noteJudgeStopped(r, inspect);
    if (stoppedIn(inspect, "inspect"))
        return finish();
    if (!inspect.ok) {
        fail(r, inspect.failureKind, "reference task: " + inspect.failureMessage);
        return finish();
    }

    if (cancelled())
        return finish();
    report("compile");
    // Two ways to compile, one way on: the fast path's NVRTC modules (in-process) or the torch
    // extension (a harness stage). Each leaves its record, diagnostics and what verify loads.
    const bool fastPath = workspaceMode && usesFastKernels(target.candidatePath);
    json kernelsDirectory = nullptr;
    json extensionPath = nullptr;
    std::string compileFailureKind, compileFailureMessage;
    if (fastPath) {
        FastKernelBuildRequest build;
        build.workspace = target.workspace;
        build.arch = c.arch.empty() ? "sm_90" : c.arch;
        build.outputDirectory = (fs::path(c.buildDirectory) / "kwb_kernels").string();
        build.cacheDirectory = (fs::path(c.cacheDirectory) / "fast-kernels").string();
        const auto buildStarted = std::chrono::steady_clock::now();
        const FastKernelBuildResult built = buildFastKernels(build);
        StageRecord record{"compile", built.ok ? StageStatus::Passed : StageStatus::Failed, 0.0,
                           built.summary, built.log};
        record.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - buildStarted).count();
        r.stages.push_back(record);
        for (const Diagnostic& d : built.diagnostics)
            r.diagnostics.push_back(d);
        if (built.ok)
            kernelsDirectory = build.outputDirectory;
        else
            compileFailureKind = "compile_error", compileFailureMessage = built.summary;
    } else {
        json compileRequest = baseRequest(c, "compile");
        compileRequest["arch"] = c.arch;
        compileRequest["extra_cflags"] = json::array();
        compileRequest["extra_cuda_cflags"] = json::array();
        HarnessStageOutcome compile = runStage(c, "compile", compileRequest);
        r.stages.push_back(recordFor("compile", compile));
        absorbDiagnostics(r, compile.result);
        if (stoppedIn(compile, "compile"))
            return finish();
        if (!compile.ok) {
            compileFailureKind =
                compile.failureKind.empty() ? "compile_error" : compile.failureKind;
            compileFailureMessage = compile.failureMessage;
        }
        // A skipped compile (no sources: the candidate builds its own extension) reports "".
        if (compile.result.is_object() && compile.result.contains("extension_path") &&
            compile.result["extension_path"].is_string() &&
            !compile.result["extension_path"].get<std::string>().empty())
            extensionPath = compile.result["extension_path"];
    }
    if (!compileFailureKind.empty()) {
        fail(r, compileFailureKind, compileFailureMessage);
        return finish();
    }
    r.compiled = true;
    if (options.stopAfterCompile) {
        r.stages.push_back({"verify", StageStatus::Skipped, 0.0, "compile only", ""});
        return finish();
    }
    if (fastPath && !c.gpuAllowed) {
        // Without a GPU the cubins cannot run; NVRTC's diagnostics above are what is left.
        fail(r, "no_gpu",
             "fast-path kernels (kwb_kernels) run only on a CUDA GPU; they compiled for sm_90, "
             "but verification needs a GPU (" +
                 gpus.status + ")");
        return finish();
    }

    if (cancelled())
        return finish();
    report("verify");
    json verifyRequest = baseRequest(c, "verify");
    verifyRequest["checks"] = options.checks;
    verifyRequest["atol"] = options.atol;
    verifyRequest["rtol"] = options.rtol;
    verifyRequest["dtype_tolerances"] = options.dtypeTolerances;
    verifyRequest["extension_path"] = extensionPath;
    verifyRequest["kernels_dir"] = kernelsDirectory;
    HarnessStageOutcome verify = runStage(c, "verify", verifyRequest);
    verifyRan = true;
    r.stages.push_back(recordFor("verify", verify));
    if (stoppedIn(verify, "verify"))
        return finish();
    absorbEnvironment(r, verify.result);
    if (verify.result.is_object()) {
        r.checksRun = intOr(verify.result, "checks_run", 0);
        r.checksPassed = intOr(verify.result, "checks_passed", 0);
        for (const auto& o : arrayField(verify.result, "outputs"))
            r.outputErrors.push_back(outputErrorFromJson(o));
    }
    absorbFlags(r, verify.result);
    noteJudgeStopped(r, verify);
    absorbVerifyEvidence(r.integrity, verify.result);
    r.correct = verify.ok && verify.result.is_object() && verify.result.value("correct", false);
    if (!r.correct) {
        fail(r, verify.failureKind.empty() ? "numerical_mismatch" : verify.failureKind,
             verify.failureMessage);
        return finish();
    }

    if (!options.profile)
        return finish();
    // Counters asked for are read, not scored: they are collected for a flagged candidate too.
    if (r.hasStrictFlag() && !options.profileFlagged && !options.counters) {
        r.stages.push_back({"profile", StageStatus::Skipped, 0.0,
                            "not timed: a strict rule was broken, so the reward is -1 whatever "
                            "the timing (--profile-flagged on times it anyway)",
                            ""});
        return finish();
    }
    if (cancelled())
        return finish();
    report("profile");
    const auto profileBegun = std::chrono::steady_clock::now();
    BaselineKey key = baselineKeyFor(target.referencePath, c.device, r.environment.deviceName,
                                     r.environment.torchVersion, options);
    StageExtras profileExtras;
    bool timeline = false;
    // ncu and the CUPTI injection library cannot both own CUPTI in one process: counters win.
    if (options.collectTimeline && !options.counters) {
        std::string problem = c.gpuAllowed ? prepareTimeline(c, profileExtras, r)
                                           : "CPU mode: CUPTI timelines need a CUDA GPU";
        timeline = problem.empty();
        if (!timeline)
            r.flags.push_back({"timeline_unavailable", FlagSeverity::Warning, problem});
    }
    std::string ncu;
    fs::path counterReport;
    if (options.counters) {
        const std::string problem =
            prepareCounters(c, *options.counters, profileExtras, ncu, counterReport);
        if (!problem.empty())
            r.flags.push_back({"counters_unavailable", FlagSeverity::Warning, problem});
    }
    const bool counters = !counterReport.empty();
    // Under the profiler the baselines run too (the timeline shows all three phases), and their
    // times, slowed by it, stay out of the cache.
    std::optional<CachedBaseline> cached;
    std::optional<BaselineTurn> baselineTurn;
    // Under ncu nothing is timed for a reward: the baselines are neither run nor cached.
    if (!options.refreshBaselines && !timeline && !counters) {
        baselineTurn = BaselineTurn::take(key, c.stop);
        if (!baselineTurn) {
            cancelled();
            return finish();
        }
        cached = loadBaseline(key);
        if (cached)
            baselineTurn.reset(); // nothing to time: the next evaluation of the task may go on
    }
    json profileRequest = timingRequest(c, "profile", !cached.has_value() && !counters);
    if (options.reward.decideOnInterval && !counters) {
        // Timing goes on while a milestone's interval straddles the threshold, against the
        // cached baselines' rounds when they are not timed again.
        profileRequest["milestone_threshold"] = options.reward.speedupThreshold;
        if (cached) {
            json rounds = json::object();
            for (const auto& [name, stats] :
                 {std::pair{"eager", &cached->eager}, {"compile", &cached->compiled}})
                if (stats->available && !stats->roundMediansMs.empty())
                    rounds[name] = stats->roundMediansMs;
            profileRequest["baseline_rounds"] = rounds;
        }
    }
    // Under ncu the kernel census (the same CUPTI injection) stays off: ncu injects its own.
    if (counters) {
        profileRequest["kernel_records_library"] = "";
        profileRequest["counters_run"] = true;
    }
    profileRequest["extension_path"] = extensionPath;
    profileRequest["kernels_dir"] = kernelsDirectory;
    HarnessStageOutcome profile = runStage(c, "profile", profileRequest, profileExtras);
    StageRecord profileRecord = recordFor("profile", profile);
    if (stoppedIn(profile, "profile")) {
        r.stages.push_back(profileRecord);
        return finish();
    }
    absorbFlags(r, profile.result);
    noteJudgeStopped(r, profile);
    absorbProfileEvidence(r.integrity, profile.result);
    if (counters) {
        collectCounterPages(c, ncu, counterReport, profile, r);
        profileRecord.seconds = secondsSince(profileBegun);
        r.stages.push_back(profileRecord);
        return finish();
    }
    if (profile.ok && profile.result.is_object()) {
        const json timings = profile.result.value("timings", json::object());
        r.candidate = timingFromJson(timings.value("candidate", json::object()));
        absorbSpeedupIntervals(r, timings.value("candidate", json::object()));
        if (cached) {
            r.eager = cached->eager;
            r.compiledBaseline = cached->compiled;
            r.baselinesFromCache = true;
        } else {
            const CachedBaseline measured = baselineTimingsFrom(profile.result);
            r.eager = measured.eager;
            r.compiledBaseline = measured.compiled;
            // Not from an evaluation that broke a strict rule (the profile stage's flags are in
            // by now): its candidate may have slowed the judge while it timed these
            // (judge_disturbed), and a later honest evaluation would be measured against them.
            if (worthCaching(measured) && !timeline && !r.hasStrictFlag())
                storeBaseline(key, measured);
        }
        baselineTurn.reset(); // the entry is stored (or cannot be): the next one reads or times
        if (r.cpuMode)
            profileRecord.summary = "CPU mode: wall-clock timing";
    } else {
        // A correct candidate that cannot be timed still earns "correct", never a speed reward.
        r.flags.push_back({"profile_failed", FlagSeverity::Warning,
                           profile.failureKind + ": " + profile.failureMessage});
    }
    // The baseline cache's look-up and store and the timeline's set-up are the stage's too.
    profileRecord.seconds = secondsSince(profileBegun);
    profileRecord.startSeconds += std::max(0.0, profileRecord.seconds - profile.seconds);
    r.stages.push_back(profileRecord);
    return finish();
}

EvaluationResult Evaluator::baseline(const std::string& taskPath,
                                     const EvaluationOptions& options) const {
    EvaluationResult r;
    r.startedAt = utcTimestamp();
    r.referencePath = fs::absolute(taskPath).lexically_normal().string();
    const auto started = std::chrono::steady_clock::now();
    RunContext c =
        newRunContext({fs::path(r.referencePath).parent_path().string(), r.referencePath, ""},
                      options, python_, r);
    c.buildDirectory = (fs::path(c.cacheDirectory) / "baseline-build").string();
    chooseDevice(options, c, r);
    std::string scratchProblem;
    std::optional<ScratchFolder> scratch = claimScratchFolder(c, scratchProblem);
    if (!scratch) {
        fail(r, "internal", scratchProblem);
        return r;
    }
    if (!fs::is_regular_file(r.referencePath)) {
        fail(r, "missing_file", "task file not found: " + taskPath);
        return r;
    }
    if (std::string problem = pythonProblem(python_); !problem.empty()) {
        fail(r, "python_missing", problem);
        return r;
    }
    StageRecord setup{"workspace", StageStatus::Passed, 0.0, "ok", ""};
    useBytecodeCache(c, setup.summary);
    setup.seconds = secondsSince(started);
    r.stages.push_back(setup);
    HarnessStageOutcome outcome = runStage(c, "baseline", timingRequest(c, "baseline", true));
    r.stages.push_back(recordFor("baseline", outcome));
    r.sandboxed = outcome.sandboxed;
    absorbEnvironment(r, outcome.result);
    if (!outcome.ok) {
        fail(r, outcome.failureKind, outcome.failureMessage);
    } else {
        const CachedBaseline measured = baselineTimingsFrom(outcome.result);
        r.eager = measured.eager;
        r.compiledBaseline = measured.compiled;
        if (worthCaching(measured))
            storeBaseline(baselineKeyFor(r.referencePath, c.device, r.environment.deviceName,
                                         r.environment.torchVersion, options),
                          measured);
    }
    r.totalSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    r.rewardReason = "baseline only";
    return r;
}

} // namespace kwb
