#pragma once

#include "engine/evaluation/gpu_lanes.h"
#include "engine/evaluation/harness_stage.h"
#include "engine/process/tree_watchdog.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace kwb {

class LineProcess;
struct WarmWorkerPlan;

// A warm evaluation worker: `python -m kwb_harness.fork_server` with torch imported, forking one
// child per stage. Each child is the process a cold stage would be (fresh CUDA context, the
// candidate imported after the trusted state is captured, the same guards); only Python's
// start-up and the torch import are shared. Workers are keyed by everything that shapes the
// server (interpreter, sandbox, environment, limits), so a request never runs under another
// request's policy; where the kernel lets a stage child confine itself, one server serves every
// workspace below the same shared roots (WarmWorkerPlan says how).
class WarmWorkerPool {
public:
    explicit WarmWorkerPool(std::size_t capacity = 3);
    ~WarmWorkerPool();
    WarmWorkerPool(const WarmWorkerPool&) = delete;
    WarmWorkerPool& operator=(const WarmWorkerPool&) = delete;

    // The process-wide pool the evaluator uses.
    static WarmWorkerPool& shared();

    // Runs one stage in a warm worker, starting one when none matches. A worker that cannot
    // start or dies is replaced by a cold stage run, so the caller always gets an outcome. Its
    // seconds are the wall-clock of the whole call, a server's start included (startSeconds).
    HarnessStageOutcome run(const HarnessStageSpec& spec);

    // Takes the lane of the device a standby preparation uses, shared; nullopt when its stop
    // token was requested first.
    using SharedLaneTaker = std::function<std::optional<GpuLanes::Hold>(std::stop_token)>;

    // Tells the worker that serves `spec`'s stages that an evaluation is over, so that it can
    // prepare the next one's stages ahead of their requests. Starts no worker; skipped when the
    // worker is busy with another evaluation, which will say so itself when it ends.
    //
    // The preparation runs on the device. With `takeSharedLane`, a thread of the pool holds the
    // worker and that lane from before the server forks the standby children until each has
    // prepared, exited or been killed for taking longer than the stage's timeout; a request of
    // the same workspace waits for it meanwhile (its children are that request's, made ready).
    // The lanes must outlive the pool's threads: shutdown() ends and joins them. Without it the
    // line has no reply and holds nothing (an owner without lanes coordinates no timing).
    void standBy(const HarnessStageSpec& spec, SharedLaneTaker takeSharedLane = {});

    // Ends the standby preparations (their servers go with them) and the workers.
    void shutdown();
    std::size_t workers() const;
    int workersStarted() const;

private:
    struct Worker;
    // A server for one stage, its `busy` lock held: an idle matching server, a new one while
    // the matching ones are busy and the pool has room, else the wait for a busy one.
    struct Lease {
        std::shared_ptr<Worker> worker;
        std::unique_lock<std::mutex> busy;
    };
    // A standby preparation's thread; `finished` is its last write.
    struct Preparation {
        std::shared_ptr<std::atomic<bool>> finished;
        std::jthread thread;
    };
    HarnessStageOutcome runOnWorker(const HarnessStageSpec& spec, bool& workerStarted,
                                    double& preparationWait);
    // A stop during a new server's start ends that server; one during the wait for this
    // workspace's server while it makes its standby preparation ends the wait (error
    // "cancelled" both). That wait goes to `preparationWait` (StageRecord::
    // preparationWaitSeconds).
    Lease workerFor(const WarmWorkerPlan& plan, const std::string& workspace, std::string& error,
                    bool& started, double& preparationWait, std::stop_token stop);
    void prepareStandby(const std::shared_ptr<Worker>& worker,
                        const SharedLaneTaker& takeSharedLane, std::chrono::seconds timeout,
                        std::stop_token stop);
    void endPreparations();
    static std::optional<std::string>
    awaitReply(Worker& worker, long long id, std::chrono::milliseconds timeout,
               TreeWatchdog& watchdog, std::string& limitExceeded, std::stop_token stop,
               bool& cancelSent, bool& cancelledHard,
               const std::function<bool(std::stop_token)>& takeLaneAlone);

    std::size_t capacity_;
    mutable std::mutex mutex_;
    std::vector<std::shared_ptr<Worker>> workers_; // most recently used last
    int started_ = 0;
    // Notified when a worker's standby preparation ends (Worker::preparing, under mutex_).
    std::condition_variable_any preparationEnded_;
    std::mutex preparationsMutex_;
    std::vector<Preparation> preparations_;
};

} // namespace kwb
