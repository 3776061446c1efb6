#pragma once

#include "engine/tasks/task_set.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

namespace kwb {

// What the harness's `screen` stage measured of one task (stages/screen_task.py). Fields it did
// not reach stay unset; `error` says where it stopped.
struct TaskScreen {
    std::string step; // how far it got: "import", "size", "eager", ..., "done"
    std::optional<std::uint64_t> inputBytes;
    std::string inputBytesFrom; // "meta" (sized without allocating) or "allocated"
    bool eagerRuns = false;
    std::optional<bool> compileRuns, compileAgrees, deterministic, constantOutput, inputDependent,
        finite;
    std::optional<double> eagerMs;
    std::string error;
};

// CUDA Agent's Ops-6K filters, as thresholds. A task is kept when it runs eager (and compiled,
// agreeing with eager, unless compile is not required), is deterministic, has finite outputs that
// are not constant and change with the inputs, takes an eager time inside the window, and is no
// near-duplicate of an earlier task of the set or of a task in `decontaminateAgainst`.
struct TaskFilterSettings {
    std::string device = "cpu"; // where the tasks run: "cpu" or "cuda"
    bool requireCompile = true;
    double minEagerMs = 0.0; // 0: no lower bound (Ops-6K: 1 ms on its GPUs)
    double maxEagerMs = 0.0; // 0: no upper bound (Ops-6K: 100 ms)
    // Inputs larger than this are not run, a skip with its reason; 0: a quarter of an
    // evaluation's memory budget (defaultMemoryBudget), so at most 4 GiB.
    std::uint64_t memoryBudgetBytes = 0;
    double maxSimilarity = 0.9; // normalized-AST similarity at or above which a task is a copy
    std::vector<std::string> decontaminateAgainst; // task sets whose tasks must not be copied
    int timedCalls = 10;                           // eager calls timed
    std::chrono::seconds timeout{300};             // per task
};

struct TaskVerdict {
    std::string id;
    bool kept = false;
    // Not run at all because its inputs do not fit (a skip, not a failure of the task).
    bool skipped = false;
    std::vector<std::string> reasons; // why it was dropped or skipped, one line each
    TaskScreen screen;
    bool fromCache = false;
};

struct TaskFilterReport {
    std::vector<TaskVerdict> verdicts; // in the set's order
    std::size_t kept = 0;
    std::string error; // the filter could not run at all (no Python, the harness missing)
};

// Screens every task of `set` in the sandboxed task Python, one `screen` stage per task, cached
// under `cacheDirectory` by the task's content hash and the settings that change a measurement
// (device, budget, calls, compile); then one `similar` stage over the whole set. Thresholds are
// applied to the measurements afterwards, so changing a window re-reads the cache.
class TaskFilter {
public:
    using Progress = std::function<void(std::size_t done, std::size_t total, const TaskVerdict&)>;

    TaskFilter(std::string python, std::string cacheDirectory);

    TaskFilterReport run(const TaskSet& set, const TaskFilterSettings& settings,
                         const Progress& progress = {}, std::stop_token stop = {}) const;

private:
    std::string python_;
    std::string cacheDirectory_;
};

// The reasons `screen` fails `settings` (empty: it passes); `skipped` is set when the task was
// not run because its inputs do not fit.
std::vector<std::string> filterReasons(const TaskScreen& screen, const TaskFilterSettings& settings,
                                       std::uint64_t memoryBudget, bool& skipped);

} // namespace kwb
